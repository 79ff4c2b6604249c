//===- SourceGroups.h - Sources grouped by target on the GPU ----*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The gradients that add several elements into one (gather_grad,
// resize_grad) compute each target by reading its sources in the order the
// CPU backend adds them, rather than scattering with floating-point atomics
// (whose order, and so whose bits, would vary from run to run). This builds
// the grouping (SourceGroups, common/IndexMaps.h) on the compute stream: a
// kernel of the caller writes each source's target as its key (a key at or
// past the number of targets drops the source) and the source's own number,
// CUB's radix sort orders the sources by key, stably, so that each target's
// keep their increasing order, and a kernel finds where each target's
// sources begin. The memory this takes (a few words per source, and CUB's
// temporary storage) is allocated and freed on the compute stream, outside
// the arena.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_CUDA_SOURCEGROUPS_H
#define LETHE_RUNTIME_CUDA_SOURCEGROUPS_H

#include "CudaRuntime.h"
#include "common/IndexMaps.h"

#include <cstddef>
#include <cstdint>

namespace lethe::rt {

/// Device memory for one call's intermediate results, in one allocation on
/// the compute stream (cudaMallocAsync): buffers are reserved first, then
/// allocated together, and given back on the stream (after the kernels
/// launched before, which use them) by `release` or, on an error path, when
/// the object dies.
class StreamScratch {
public:
  StreamScratch(lethe_rt_context *context, const char *call)
      : context(context), call(call) {}
  StreamScratch(const StreamScratch &) = delete;
  StreamScratch &operator=(const StreamScratch &) = delete;
  ~StreamScratch();

  /// Reserves room for `count` elements of T (256-byte aligned) and returns
  /// its offset, for `at` once allocated.
  template <typename T> size_t reserve(size_t count) {
    size_t offset = (bytes + 255) / 256 * 256;
    bytes = offset + count * sizeof(T);
    return offset;
  }
  /// Allocates what was reserved; records an error naming the call when
  /// that fails.
  bool allocate();
  /// The buffer reserved at `offset`.
  template <typename T> T *at(size_t offset) const {
    return reinterpret_cast<T *>(static_cast<uint8_t *>(memory) + offset);
  }
  /// Frees the memory on the compute stream; records an error when that
  /// fails.
  bool release();

private:
  lethe_rt_context *context;
  const char *call;
  size_t bytes = 0;
  void *memory = nullptr;
};

/// Where the buffers of one grouping of `sources` sources over `targets`
/// targets lie in a StreamScratch (offsets for StreamScratch::at): the keys
/// (uint64_t, one per source: its target) and source numbers (int64_t) that
/// the caller's kernel writes, their sorted copies, the targets' offsets
/// (targets + 1 of them) and CUB's temporary storage.
struct SourceGrouping {
  int64_t sources = 0, targets = 0;
  size_t keys = 0, numbers = 0, sortedKeys = 0, sortedNumbers = 0, offsets = 0,
         temporary = 0, temporaryBytes = 0;
  /// The key bits the sort looks at: enough for every key up to `targets`.
  int keyBits = 1;
};

/// Reserves the buffers of a grouping of `sources` sources over `targets`
/// targets in `scratch`; records an error naming `call` when CUB cannot
/// size its storage.
bool reserveSourceGrouping(lethe_rt_context *context, const char *call,
                           StreamScratch &scratch, int64_t sources,
                           int64_t targets, SourceGrouping &grouping);

/// Once the caller's kernel has written the keys and source numbers on the
/// compute stream: sorts them and finds each target's first source, on the
/// compute stream, and sets `groups` to the result (in `scratch`).
bool groupSources(lethe_rt_context *context, const char *call,
                  const StreamScratch &scratch, const SourceGrouping &grouping,
                  SourceGroups &groups);

} // namespace lethe::rt

#endif // LETHE_RUNTIME_CUDA_SOURCEGROUPS_H
