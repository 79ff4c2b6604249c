//===- IndexMaps.h - Where each output element reads from -------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The index arithmetic of the kernels that move elements or add them up by
// index: for an element of the output, the element (or the elements, in
// order) of an input that it reads. The maps are plain structs passed to
// CUDA kernels by value, their per-element functions LETHE_HOST_DEVICE: the
// CUDA backend's kernels run them on the GPU, and host tests run the very
// same functions over whole index spaces against the CPU backend's results
// (unittests/Runtime/IndexMapsTest.cpp). Building a map is host code.
//
// Every map computes an element's position from its linear index alone, so
// that any thread may take any element; the gradients that add several
// elements (gather_grad) read their sources grouped by target, each
// target's in the order the CPU backend adds them, so that the sums have its
// bits without atomics.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_COMMON_INDEXMAPS_H
#define LETHE_RUNTIME_COMMON_INDEXMAPS_H

#include "common/ElementTypes.h"
#include "common/Tensor.h"
#include "lethe_rt.h"

#include <cstdint>
#include <vector>

namespace lethe::rt {

//===----------------------------------------------------------------------===//
// Strided and broadcast reads
//===----------------------------------------------------------------------===//

/// The most dims a map may have once the dims that every operand walks
/// contiguously are merged and dims of size 1 dropped (ONNX models stay far
/// below).
constexpr int maxBroadcastRank = 12;

/// Where each of `Operands` inputs is read at each element of a contiguous
/// output: the output's (merged) shape and each input's strides over it, 0
/// where the input broadcasts. Serves broadcasts, transposes and slices
/// alike (a slice adds the offset of its first element).
template <int Operands> struct BroadcastMap {
  int32_t rank = 0;
  /// Whether every output index fits in 32 bits (the output has at most
  /// 2^32 elements): its divisions can then be 32-bit ones, which a GPU
  /// does in a fraction of the instructions of a 64-bit division.
  bool narrow = false;
  int64_t shape[maxBroadcastRank] = {};
  int64_t strides[Operands][maxBroadcastRank] = {};

  /// The element offset of each input at output element `linear` (in [0,
  /// the output's element count)).
  LETHE_HOST_DEVICE void offsetsAt(int64_t linear,
                                   int64_t (&offsets)[Operands]) const {
    if (narrow)
      walk(static_cast<uint32_t>(linear), offsets);
    else
      walk(linear, offsets);
  }

private:
  /// Splits `linear` into the dims' indices, innermost first, in Index
  /// arithmetic. The outermost dim takes what is left without a division:
  /// `linear` is below the element count, so that is its index already (a
  /// map of one dim, the most common, divides nothing).
  template <typename Index>
  LETHE_HOST_DEVICE void walk(Index linear,
                              int64_t (&offsets)[Operands]) const {
    for (int k = 0; k < Operands; ++k)
      offsets[k] = 0;
    if (rank == 0)
      return;
    for (int32_t dim = rank - 1; dim > 0; --dim) {
      Index extent = static_cast<Index>(shape[dim]);
      Index index = linear % extent;
      linear /= extent;
      for (int k = 0; k < Operands; ++k)
        offsets[k] += static_cast<int64_t>(index) * strides[k][dim];
    }
    for (int k = 0; k < Operands; ++k)
      offsets[k] += static_cast<int64_t>(linear) * strides[k][0];
  }
};

/// Builds the map for an output of `shape` read through per-operand
/// `strides` (one vector per operand, of shape.size() entries): drops size-1
/// dims and merges adjacent dims that every operand walks contiguously.
/// False when more than maxBroadcastRank dims remain.
template <int Operands>
bool makeBroadcastMap(const std::vector<int64_t> &shape,
                      const std::vector<std::vector<int64_t>> &strides,
                      BroadcastMap<Operands> &map) {
  map.rank = 0;
  for (size_t dim = 0; dim < shape.size(); ++dim) {
    if (shape[dim] == 1)
      continue;
    bool contiguous = map.rank > 0;
    for (int k = 0; contiguous && k < Operands; ++k)
      contiguous = map.strides[k][map.rank - 1] == strides[k][dim] * shape[dim];
    if (contiguous) {
      map.shape[map.rank - 1] *= shape[dim];
      for (int k = 0; k < Operands; ++k)
        map.strides[k][map.rank - 1] = strides[k][dim];
      continue;
    }
    if (map.rank == maxBroadcastRank)
      return false;
    map.shape[map.rank] = shape[dim];
    for (int k = 0; k < Operands; ++k)
      map.strides[k][map.rank] = strides[k][dim];
    ++map.rank;
  }
  uint64_t elements = 1;
  map.narrow = true;
  for (int32_t dim = 0; dim < map.rank && map.narrow; ++dim) {
    elements *= static_cast<uint64_t>(map.shape[dim]);
    map.narrow = elements <= (uint64_t(1) << 32);
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Concat and split
//===----------------------------------------------------------------------===//

/// Where one part of a concat (an input) or a split (an output) lies in the
/// whole: the whole is `outer` rows, each the parts' rows side by side along
/// the axis, so part element i is whole element wholeOffset(i).
struct PartMap {
  /// Elements of one row of the part (its axis length times the inner dims),
  /// of one row of the whole, and where the part's row starts in the
  /// whole's.
  int64_t partRow = 1, wholeRow = 1, rowOffset = 0;

  LETHE_HOST_DEVICE int64_t wholeOffset(int64_t partLinear) const {
    return partLinear / partRow * wholeRow + rowOffset + partLinear % partRow;
  }
};

/// The map of each of the `count` parts of `whole` along `axis` (checked by
/// partsError).
inline std::vector<PartMap> makePartMaps(const lethe_rt_tensor &whole,
                                         const lethe_rt_tensor *const *parts,
                                         int64_t count, int64_t axis) {
  int64_t inner = 1;
  for (int32_t dim = static_cast<int32_t>(axis) + 1; dim < whole.rank; ++dim)
    inner *= whole.shape[dim];
  std::vector<PartMap> maps(count);
  int64_t offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    maps[i].partRow = parts[i]->shape[axis] * inner;
    maps[i].wholeRow = whole.shape[axis] * inner;
    maps[i].rowOffset = offset;
    offset += maps[i].partRow;
  }
  return maps;
}

//===----------------------------------------------------------------------===//
// Slice gradient
//===----------------------------------------------------------------------===//

/// Which element of dy (a slice of dx's shape: starts, steps, counts per
/// dim) each element of dx receives, or none (0): a gather from dy rather
/// than a scatter into dx, so that each dx element is written once.
struct SliceGradMap {
  /// dy has no elements: every dx element is 0.
  bool empty = false;
  /// dx's dims but those of size 1 (which the slice reads at 0).
  int32_t rank = 0;
  int64_t dxShape[maxBroadcastRank] = {}, starts[maxBroadcastRank] = {},
          steps[maxBroadcastRank] = {}, counts[maxBroadcastRank] = {},
          dyStrides[maxBroadcastRank] = {};

  /// The dy element that dx element `dxLinear` receives, or -1.
  LETHE_HOST_DEVICE int64_t sourceAt(int64_t dxLinear) const {
    if (empty)
      return -1;
    int64_t source = 0;
    for (int32_t dim = rank; dim-- > 0;) {
      int64_t index = dxLinear % dxShape[dim];
      dxLinear /= dxShape[dim];
      // index = starts + q * steps for some q in [0, counts).
      int64_t delta = index - starts[dim];
      if (delta % steps[dim] != 0)
        return -1;
      int64_t q = delta / steps[dim];
      if (q < 0 || q >= counts[dim])
        return -1;
      source += q * dyStrides[dim];
    }
    return source;
  }
};

/// Builds the map of the slice of `dx` (from `starts` in steps of `steps`,
/// checked by sliceGeometryError) of dy's shape. False when more than
/// maxBroadcastRank dims of dx are not 1.
inline bool makeSliceGradMap(const lethe_rt_tensor &dx,
                             const lethe_rt_tensor &dy, const int64_t *starts,
                             const int64_t *steps, SliceGradMap &map) {
  map.empty = numElements(dy) == 0;
  map.rank = 0;
  if (map.empty)
    return true;
  std::vector<int64_t> dyStrides = stridesOf(dy);
  for (int32_t dim = 0; dim < dx.rank; ++dim) {
    if (dx.shape[dim] == 1)
      continue;
    if (map.rank == maxBroadcastRank)
      return false;
    map.dxShape[map.rank] = dx.shape[dim];
    map.starts[map.rank] = starts[dim];
    map.steps[map.rank] = steps[dim];
    map.counts[map.rank] = dy.shape[dim];
    map.dyStrides[map.rank] = dyStrides[dim];
    ++map.rank;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Gather and its gradient
//===----------------------------------------------------------------------===//

/// Gather along an axis: data is outer x `dim` x `inner` (the dims before
/// the axis, along it, after it), out is outer x `count` x inner (count
/// being the number of indices), and out[o, i, j] = data[o, indices[i], j].
struct GatherMap {
  /// The indices, i32 or i64 (`wide`), not yet checked to lie in [-dim,
  /// dim).
  const void *indices = nullptr;
  bool wide = false;
  int64_t count = 0, dim = 0, inner = 1;

  /// Index `i` as given (negative ones count from the end).
  LETHE_HOST_DEVICE int64_t rawIndexAt(int64_t i) const {
    return wide ? static_cast<const int64_t *>(indices)[i]
                : static_cast<const int32_t *>(indices)[i];
  }
  /// Whether index `i` lies in [-dim, dim).
  LETHE_HOST_DEVICE bool inRange(int64_t i) const {
    int64_t index = rawIndexAt(i);
    return index >= -dim && index < dim;
  }
  /// Index `i` in [0, dim) (it must be in range).
  LETHE_HOST_DEVICE int64_t indexAt(int64_t i) const {
    int64_t index = rawIndexAt(i);
    return index < 0 ? index + dim : index;
  }
  /// The data element that out element `outLinear` reads.
  LETHE_HOST_DEVICE int64_t sourceAt(int64_t outLinear) const {
    int64_t j = outLinear % inner, rest = outLinear / inner;
    int64_t i = rest % count, block = rest / count;
    return (block * dim + indexAt(i)) * inner + j;
  }
};

/// The map of a gather along `axis` (checked by gatherError) from `data`
/// with `indices`.
inline GatherMap makeGatherMap(const lethe_rt_tensor &data,
                               const lethe_rt_tensor &indices, int64_t axis) {
  GatherMap map;
  map.indices = indices.data;
  map.wide = indices.dtype == LETHE_RT_I64;
  map.count = numElements(indices);
  map.dim = data.shape[axis];
  for (int32_t dim = static_cast<int32_t>(axis) + 1; dim < data.rank; ++dim)
    map.inner *= data.shape[dim];
  return map;
}

/// The first of `count` sorted `keys` that is not below `key` (count when
/// none).
LETHE_HOST_DEVICE inline int64_t lowerBound(const uint64_t *keys, int64_t count,
                                            uint64_t key) {
  int64_t low = 0, high = count;
  while (low < high) {
    int64_t middle = low + (high - low) / 2;
    if (keys[middle] < key)
      low = middle + 1;
    else
      high = middle;
  }
  return low;
}

/// Sources grouped by the target they add into: target t's sources are
/// sources[offsets[t]] .. sources[offsets[t + 1] - 1], in increasing order.
/// (The CUDA backend builds them by a stable sort of the sources by target;
/// offsets[t] is then lowerBound of t in the sorted targets.)
struct SourceGroups {
  const int64_t *offsets = nullptr;
  const int64_t *sources = nullptr;
};

/// lethe_rt_gather_grad's element `dxLinear` of dx (outer x dim x inner) in
/// the compute type of storage type T: dy's elements gathered from it,
/// `groups` giving for each index of the axis the positions i in indices
/// that name it (the GatherMap's `indexAt`), added from 0 in increasing i,
/// as the CPU backend adds them.
template <typename T>
LETHE_HOST_DEVICE ComputeType<T>
gatherGradAt(const GatherMap &map, const SourceGroups &groups, const void *dy,
             int64_t dxLinear) {
  int64_t j = dxLinear % map.inner, rest = dxLinear / map.inner;
  int64_t target = rest % map.dim, block = rest / map.dim;
  ComputeType<T> sum(0);
  for (int64_t s = groups.offsets[target]; s < groups.offsets[target + 1]; ++s)
    sum += load<T>(dy, (block * map.count + groups.sources[s]) * map.inner + j);
  return sum;
}

} // namespace lethe::rt

#endif // LETHE_RUNTIME_COMMON_INDEXMAPS_H
