//===- CpuRuntime.h - Shared internals of the CPU backend -------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// What every kernel of the CPU backend shares: the context (with its memory,
// copy streams and events), argument checks and broadcast indexing, on top of
// what the backends share (runtime/common: error messages and checks, tensor
// helpers, f16/bf16 storage and dispatch on the element type). Not part of
// the ABI (runtime/include/lethe_rt.h).
//
// Kernels are deterministic: each output element is computed by one fixed
// sequence of operations, whatever the machine or the thread count, so a
// recomputed tensor has the same bits as the original.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_CPU_CPURUNTIME_H
#define LETHE_RUNTIME_CPU_CPURUNTIME_H

#include "common/Checks.h"
#include "common/Context.h"
#include "common/ElementTypes.h"
#include "common/Tensor.h"
#include "lethe_rt.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

namespace lethe::rt {

//===----------------------------------------------------------------------===//
// Memory and streams (Memory.cpp)
//===----------------------------------------------------------------------===//

/// The alignment of the arena's and the host pool's first bytes.
constexpr size_t memoryAlignment = 256;

/// Frees memory allocated with `memoryAlignment`.
struct AlignedDeleter {
  void operator()(uint8_t *memory) const {
    ::operator delete[](memory, std::align_val_t(memoryAlignment));
  }
};
using AlignedBuffer = std::unique_ptr<uint8_t[], AlignedDeleter>;

/// An operation issued to a copy stream and not yet run.
struct StreamOperation {
  enum class Kind : uint8_t {
    Offload,  ///< arena to host pool
    Prefetch, ///< host pool to arena
    Wait,     ///< run `waitStream` up to `waitPosition` first
  };
  Kind kind;
  /// When it was issued, counting the operations of both copy streams: when
  /// nothing orders two operations, the later runs first.
  uint64_t issue;
  uint64_t arenaOffset, hostOffset, bytes;
  lethe_rt_stream waitStream;
  uint64_t waitPosition;
};

/// A copy stream: a FIFO of operations that run only when something forces
/// them. Positions count the operations issued to the stream (1 is the
/// first); the stream has run those up to `completed`.
struct CopyStream {
  /// The pending operations are queue[head..]; the queue empties (keeping its
  /// capacity) whenever the stream catches up.
  std::vector<StreamOperation> queue;
  size_t head = 0;
  uint64_t issued = 0;
  uint64_t completed = 0;
};

/// Runs every pending copy and forgets the context's events, before the
/// context is deleted (which frees the memory).
void finishMemory(lethe_rt_context &context);

} // namespace lethe::rt

/// A mark in a stream: on a copy stream, the position of the last operation
/// issued when it was recorded (complete once the stream has run that far);
/// on the compute stream, complete.
struct lethe_rt_event {
  bool recorded = false;
  lethe_rt_stream stream = LETHE_RT_STREAM_COMPUTE;
  uint64_t position = 0;
};

struct lethe_rt_context : lethe::rt::ContextBase {
  /// Whether lethe_rt_memory_init has run (successfully).
  bool memoryInitialized = false;
  lethe::rt::AlignedBuffer arena, hostPool;
  uint64_t arenaBytes = 0, hostPoolBytes = 0;
  /// The copy streams (the compute stream runs each kernel when called).
  lethe::rt::CopyStream deviceToHost, hostToDevice;
  /// Operations issued to the copy streams so far.
  uint64_t issuedOperations = 0;
  /// The live events of this context, which owns them.
  std::unordered_map<const lethe_rt_event *, std::unique_ptr<lethe_rt_event>>
      events;
  /// Copies issued so far (lethe_rt_get_memory_stats).
  uint64_t offloadedBytes = 0, prefetchedBytes = 0, offloads = 0,
           prefetches = 0;
};

namespace lethe::rt {

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

/// Calls `function(outputIndex, offsets)` for every element of a tensor of
/// `shape` in row-major order, where offsets[k] is the running sum of index
/// times strides[k][dim] (one stride vector per operand). Linear in the
/// number of elements.
template <typename Function>
void forEachIndex(const std::vector<int64_t> &shape,
                  const std::vector<std::vector<int64_t>> &strides,
                  Function &&function) {
  size_t rank = shape.size(), operands = strides.size();
  int64_t total = 1;
  for (int64_t dim : shape)
    total *= dim;
  if (total == 0)
    return;
  std::vector<int64_t> index(rank, 0), offsets(operands, 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    function(linear, offsets.data());
    // Increment the multi-index, updating the offsets incrementally.
    for (size_t dim = rank; dim-- > 0;) {
      if (++index[dim] < shape[dim]) {
        for (size_t k = 0; k < operands; ++k)
          offsets[k] += strides[k][dim];
        break;
      }
      index[dim] = 0;
      for (size_t k = 0; k < operands; ++k)
        offsets[k] -= strides[k][dim] * (shape[dim] - 1);
    }
  }
}

} // namespace lethe::rt

#endif // LETHE_RUNTIME_CPU_CPURUNTIME_H
