//===- SplitFold.h - Folds of long groups split into chunks -----*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// A long group folded by one block leaves the device idle when there are
// few groups (a reduction to a handful of channels, a batch norm over 64
// channels of a million elements each). A split fold cuts each group into
// chunks of kSplitChunk consecutive members, folds every chunk in a block of
// its own into a partial result, and adds a group's partials in chunk
// order: the order depends on the shape alone, so the same inputs give the
// same bits. Plain C++, so that host tests can walk the same chunks
// (unittests/Runtime/NormalizationGroupsTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_CUDA_SPLITFOLD_H
#define LETHE_RUNTIME_CUDA_SPLITFOLD_H

#include "common/ElementTypes.h"

#include <cstdint>

namespace lethe::rt {

/// The members of a group that one block of a split fold folds.
constexpr int64_t kSplitChunk = 8192;

/// Whether a group of `members` members, in runs of `run` contiguous ones,
/// is worth splitting: two chunks or more, read a warp's width at a time.
LETHE_HOST_DEVICE inline bool isSplit(int64_t members, int64_t run) {
  return members >= 2 * kSplitChunk && run >= 32;
}

/// The chunks of a group of `members` members.
LETHE_HOST_DEVICE inline int64_t splitChunks(int64_t members) {
  return (members + kSplitChunk - 1) / kSplitChunk;
}

/// Block item `item` of a split fold over groups of `members` members in
/// `chunks` chunks (item = group * chunks + chunk): its group, its chunk and
/// the members [first, end) the chunk holds.
struct SplitItem {
  int64_t group = 0, chunk = 0, first = 0, end = 0;

  LETHE_HOST_DEVICE static SplitItem of(int64_t item, int64_t chunks,
                                        int64_t members) {
    SplitItem split;
    split.group = item / chunks;
    split.chunk = item % chunks;
    split.first = split.chunk * kSplitChunk;
    split.end = split.first + kSplitChunk < members ? split.first + kSplitChunk
                                                    : members;
    return split;
  }
};

/// A column kernel's rows in chunks (DeviceElements.cuh): a sum over many
/// rows of few columns (a dense layer's bias gradient at a large batch, 32
/// tiles of 32 columns over 65,536 rows) left most of the device idle in
/// one block per tile. With chunks, a block folds each chunk of each tile,
/// and a second kernel adds each column's chunks in chunk order.
constexpr int64_t kColumnChunk = 2048;
/// Tiles from which the rows are not cut: they fill the device as they are.
constexpr int64_t kColumnSplitTiles = 256;
/// The most chunks (a grid's y dimension).
constexpr int64_t kMaxColumnChunks = 65535;

struct ColumnSplit {
  int64_t chunks = 1, chunkRows = 0;

  /// How `rows` rows of `tiles` tiles are cut: in chunks of kColumnChunk
  /// rows (more where there would be over kMaxColumnChunks of them), or not
  /// at all (one chunk of every row) below two chunks or from
  /// kColumnSplitTiles tiles.
  static ColumnSplit of(int64_t rows, int64_t tiles) {
    ColumnSplit split;
    split.chunkRows = rows;
    if (rows < 2 * kColumnChunk || tiles >= kColumnSplitTiles)
      return split;
    int64_t chunks = (rows + kColumnChunk - 1) / kColumnChunk;
    if (chunks > kMaxColumnChunks)
      chunks = kMaxColumnChunks;
    split.chunkRows = (rows + chunks - 1) / chunks;
    split.chunks = (rows + split.chunkRows - 1) / split.chunkRows;
    return split;
  }
  /// The first row of `chunk`, and the end of its rows among `rows`.
  LETHE_HOST_DEVICE int64_t first(int64_t chunk) const {
    return chunk * chunkRows;
  }
  LETHE_HOST_DEVICE int64_t end(int64_t chunk, int64_t rows) const {
    return first(chunk) + chunkRows < rows ? first(chunk) + chunkRows : rows;
  }
};

/// The sum of a group's `chunks` partials, in chunk order.
LETHE_HOST_DEVICE inline double sumOfChunks(const double *partials,
                                            int64_t chunks) {
  double total = 0;
  for (int64_t chunk = 0; chunk < chunks; ++chunk)
    total += partials[chunk];
  return total;
}

} // namespace lethe::rt

#endif // LETHE_RUNTIME_CUDA_SPLITFOLD_H
