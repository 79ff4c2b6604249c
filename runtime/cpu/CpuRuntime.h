//===- CpuRuntime.h - Shared internals of the CPU backend -------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// What every kernel of the CPU backend shares: the context (with its memory,
// copy streams and events), error reporting, f16/bf16 storage, dispatch on the
// element type, argument checks and broadcast indexing. Not part of the ABI
// (runtime/include/lethe_rt.h).
//
// Kernels are deterministic: each output element is computed by one fixed
// sequence of operations, whatever the machine or the thread count, so a
// recomputed tensor has the same bits as the original.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_CPU_CPURUNTIME_H
#define LETHE_RUNTIME_CPU_CPURUNTIME_H

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

struct lethe_rt_context {
  /// The message of the last failed call.
  std::string lastError;

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
  /// What lethe_rt_op_begin calls (lethe_rt_set_op_hook).
  lethe_rt_op_hook opHook = nullptr;
  void *opHookData = nullptr;
};

namespace lethe::rt {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// Records "<kernel>: <printf-formatted message>" as the context's last error
/// and returns LETHE_RT_ERROR.
lethe_rt_status fail(lethe_rt_context *context, const char *kernel,
                     const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/// The name of a dtype as in MLIR ("f32", "i64", ...).
const char *dtypeName(lethe_rt_dtype dtype);

/// "2x3x4" for a tensor's shape ("scalar" for rank 0).
std::string shapeString(const lethe_rt_tensor &tensor);

//===----------------------------------------------------------------------===//
// Argument checks: each records an error naming `kernel` and `what` (the
// argument, e.g. "x") and returns false when the check fails.
//===----------------------------------------------------------------------===//

/// `tensor` is non-null, has data (unless it has no elements) and a valid
/// dtype and rank.
bool checkTensor(lethe_rt_context *context, const char *kernel,
                 const char *what, const lethe_rt_tensor *tensor);
/// `tensor` is valid and of a float dtype (f16, bf16, f32, f64).
bool checkFloatTensor(lethe_rt_context *context, const char *kernel,
                      const char *what, const lethe_rt_tensor *tensor);
/// `tensor` is valid and has exactly `dtype`.
bool checkDtype(lethe_rt_context *context, const char *kernel, const char *what,
                const lethe_rt_tensor *tensor, lethe_rt_dtype dtype);
/// `a` and `b` have the same shape.
bool checkSameShape(lethe_rt_context *context, const char *kernel,
                    const char *whatA, const lethe_rt_tensor &a,
                    const char *whatB, const lethe_rt_tensor &b);
/// `tensor` has rank `rank`.
bool checkRank(lethe_rt_context *context, const char *kernel, const char *what,
               const lethe_rt_tensor &tensor, int32_t rank);

inline bool isFloat(lethe_rt_dtype dtype) {
  return dtype == LETHE_RT_F16 || dtype == LETHE_RT_BF16 ||
         dtype == LETHE_RT_F32 || dtype == LETHE_RT_F64;
}

inline int64_t numElements(const lethe_rt_tensor &tensor) {
  int64_t count = 1;
  for (int32_t i = 0; i < tensor.rank; ++i)
    count *= tensor.shape[i];
  return count;
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// IEEE half-precision storage.
struct Half {
  uint16_t bits;
};
/// bfloat16 storage.
struct BFloat16 {
  uint16_t bits;
};
/// Boolean storage: one byte, 0 or 1.
struct Bool {
  uint8_t value;
};

float halfToFloat(Half value);
Half floatToHalf(float value); // round to nearest even
float bfloat16ToFloat(BFloat16 value);
BFloat16 floatToBFloat16(float value); // round to nearest even

/// The type a storage type computes in: float for f16, bf16 and f32; itself
/// otherwise (double, integers; int for Bool).
template <typename T> struct ComputeTypeOf {
  using type = T;
};
template <> struct ComputeTypeOf<Half> {
  using type = float;
};
template <> struct ComputeTypeOf<BFloat16> {
  using type = float;
};
template <> struct ComputeTypeOf<Bool> {
  using type = int;
};
template <typename T> using ComputeType = typename ComputeTypeOf<T>::type;

/// Reads element `index` of storage type T as its compute type.
template <typename T>
inline ComputeType<T> load(const void *data, int64_t index) {
  const T &value = static_cast<const T *>(data)[index];
  if constexpr (std::is_same_v<T, Half>)
    return halfToFloat(value);
  else if constexpr (std::is_same_v<T, BFloat16>)
    return bfloat16ToFloat(value);
  else if constexpr (std::is_same_v<T, Bool>)
    return value.value != 0;
  else
    return value;
}

/// Writes `value` (a compute-type value) to element `index` of storage type T.
template <typename T, typename V>
inline void store(void *data, int64_t index, V value) {
  T &slot = static_cast<T *>(data)[index];
  if constexpr (std::is_same_v<T, Half>)
    slot = floatToHalf(static_cast<float>(value));
  else if constexpr (std::is_same_v<T, BFloat16>)
    slot = floatToBFloat16(static_cast<float>(value));
  else if constexpr (std::is_same_v<T, Bool>)
    slot.value = value != 0;
  else
    slot = static_cast<T>(value);
}

/// Calls `function(T{})` with T the storage type of `dtype`, for float dtypes;
/// returns false (without calling) for others.
template <typename Function>
bool dispatchFloat(lethe_rt_dtype dtype, Function &&function) {
  switch (dtype) {
  case LETHE_RT_F16:
    function(Half{});
    return true;
  case LETHE_RT_BF16:
    function(BFloat16{});
    return true;
  case LETHE_RT_F32:
    function(float{});
    return true;
  case LETHE_RT_F64:
    function(double{});
    return true;
  default:
    return false;
  }
}

/// Like dispatchFloat, for integer dtypes (i8 as int8_t, ui8 as uint8_t, ...;
/// not i1).
template <typename Function>
bool dispatchInteger(lethe_rt_dtype dtype, Function &&function) {
  switch (dtype) {
  case LETHE_RT_I8:
    function(int8_t{});
    return true;
  case LETHE_RT_I16:
    function(int16_t{});
    return true;
  case LETHE_RT_I32:
    function(int32_t{});
    return true;
  case LETHE_RT_I64:
    function(int64_t{});
    return true;
  case LETHE_RT_U8:
    function(uint8_t{});
    return true;
  case LETHE_RT_U16:
    function(uint16_t{});
    return true;
  case LETHE_RT_U32:
    function(uint32_t{});
    return true;
  case LETHE_RT_U64:
    function(uint64_t{});
    return true;
  default:
    return false;
  }
}

/// Like dispatchFloat, for every dtype (i1 as Bool, integers as in
/// dispatchInteger).
template <typename Function>
bool dispatchAny(lethe_rt_dtype dtype, Function &&function) {
  if (dtype == LETHE_RT_I1) {
    function(Bool{});
    return true;
  }
  return dispatchInteger(dtype, function) ||
         dispatchFloat(dtype, std::forward<Function>(function));
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

/// Row-major strides (in elements) of `tensor`.
std::vector<int64_t> stridesOf(const lethe_rt_tensor &tensor);

/// Strides with which to read `input` at the indices of `output` when input
/// broadcasts to output (ONNX multidirectional rule, input right-aligned):
/// broadcast dims get stride 0. Has output.rank entries. Fails (returns false)
/// when input does not broadcast to output.
bool broadcastStrides(const lethe_rt_tensor &input,
                      const lethe_rt_tensor &output,
                      std::vector<int64_t> &strides);

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

/// The shape of `tensor` as a vector.
inline std::vector<int64_t> shapeOf(const lethe_rt_tensor &tensor) {
  return std::vector<int64_t>(tensor.shape, tensor.shape + tensor.rank);
}

} // namespace lethe::rt

#endif // LETHE_RUNTIME_CPU_CPURUNTIME_H
