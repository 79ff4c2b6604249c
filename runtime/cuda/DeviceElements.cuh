//===- DeviceElements.cuh - Element types and launches on the GPU -*- C++
//-*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// What the CUDA backend's kernels share: storage types for f16, bf16 and i1,
// device-side loads and stores in the compute type (f32 for f16 and bf16,
// int for i1) with the CPU backend's roundings (round to nearest even, NaN
// kept quiet), dispatch on the element type, broadcast indexing and a
// grid-stride launch on the context's compute stream.
//
// The f16/bf16 conversions are written out rather than taken from cuda_fp16.h
// so that they give the CPU backend's bits (runtime/cpu/Context.cpp),
// including its canonical NaNs.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_CUDA_DEVICEELEMENTS_CUH
#define LETHE_RUNTIME_CUDA_DEVICEELEMENTS_CUH

#include "CudaRuntime.h"

#include <cstdint>
#include <type_traits>
#include <utility>

namespace lethe::rt {

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

__device__ inline float halfToFloat(Half value) {
  uint32_t sign = static_cast<uint32_t>(value.bits & 0x8000) << 16;
  uint32_t exponent = (value.bits >> 10) & 0x1f;
  uint32_t mantissa = value.bits & 0x3ff;
  if (exponent == 0x1f) // infinity or NaN
    return __uint_as_float(sign | 0x7f800000 | (mantissa << 13));
  if (exponent != 0) // normal
    return __uint_as_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: value = mantissa * 2^-24, exact in float.
  float magnitude = ldexpf(static_cast<float>(mantissa), -24);
  return sign ? -magnitude : magnitude;
}

/// Rounds to nearest even.
__device__ inline Half floatToHalf(float value) {
  uint32_t bits = __float_as_uint(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude >= 0x7f800000) { // infinity or NaN (keep NaN quiet)
    uint16_t nan = magnitude > 0x7f800000 ? 0x200 : 0;
    return Half{static_cast<uint16_t>(sign | 0x7c00 | nan)};
  }
  if (magnitude >= 0x477ff000) // rounds to >= 65520: overflow to infinity
    return Half{static_cast<uint16_t>(sign | 0x7c00)};
  if (magnitude < 0x38800000) { // below the smallest normal half: subnormal
    // One half-subnormal unit (2^-24) scaled to one integer unit; rintf
    // rounds half to even.
    float scaled = ldexpf(fabsf(value), 24);
    return Half{
        static_cast<uint16_t>(sign | static_cast<uint16_t>(rintf(scaled)))};
  }
  // Normal: rebias the exponent and round the mantissa to nearest even.
  uint32_t rebased = magnitude - (112u << 23);
  uint32_t roundBit = 1u << 12, lowerMask = (1u << 13) - 1;
  uint32_t result = rebased >> 13;
  uint32_t remainder = rebased & lowerMask;
  if (remainder > roundBit || (remainder == roundBit && (result & 1)))
    ++result;
  return Half{static_cast<uint16_t>(sign | result)};
}

__device__ inline float bfloat16ToFloat(BFloat16 value) {
  return __uint_as_float(static_cast<uint32_t>(value.bits) << 16);
}

/// Rounds to nearest even.
__device__ inline BFloat16 floatToBFloat16(float value) {
  uint32_t bits = __float_as_uint(value);
  if ((bits & 0x7fffffff) > 0x7f800000) // NaN: keep it quiet
    return BFloat16{static_cast<uint16_t>((bits >> 16) | 0x40)};
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return BFloat16{static_cast<uint16_t>((bits + rounding) >> 16)};
}

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

template <typename T> constexpr bool isFloatStorage() {
  return std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> ||
         std::is_same_v<T, float> || std::is_same_v<T, double>;
}

/// Reads element `index` of storage type T as its compute type.
template <typename T>
__device__ inline ComputeType<T> load(const void *data, int64_t index) {
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
__device__ inline void store(void *data, int64_t index, V value) {
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

//===----------------------------------------------------------------------===//
// Dispatch (on the host): each calls `function(T{})` with T the storage type
// of `dtype`, and returns false (without calling) for a dtype outside its set.
//===----------------------------------------------------------------------===//

/// f16, bf16, f32, f64.
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

/// The integers but i1 (i8 as int8_t, ui8 as uint8_t, ...).
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

/// Every dtype (i1 as Bool).
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
// Broadcast indexing
//===----------------------------------------------------------------------===//

/// The most dims a broadcast iteration may have once the dims every operand
/// walks contiguously are merged (ONNX models stay far below).
constexpr int maxBroadcastRank = 12;

/// Where each of `Operands` inputs is read at each element of a contiguous
/// output: the output's (merged) shape and each input's strides over it, 0
/// where the input broadcasts. Passed to kernels by value.
template <int Operands> struct BroadcastMap {
  int32_t rank = 0;
  int64_t shape[maxBroadcastRank] = {};
  int64_t strides[Operands][maxBroadcastRank] = {};

  /// The element offset of each input at output element `linear`.
  __device__ void offsetsAt(int64_t linear,
                            int64_t (&offsets)[Operands]) const {
    for (int k = 0; k < Operands; ++k)
      offsets[k] = 0;
    for (int32_t dim = rank; dim-- > 0;) {
      int64_t index = linear % shape[dim];
      linear /= shape[dim];
      for (int k = 0; k < Operands; ++k)
        offsets[k] += index * strides[k][dim];
    }
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
  return true;
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

/// Threads per block of the elementwise kernels.
constexpr int threadsPerBlock = 256;

/// Grid-stride loop bounds: kernels loop `for (i = first; i < count; i +=
/// stride)`, so any grid covers any count.
#define LETHE_GRID_STRIDE_LOOP(index, count)                                   \
  for (int64_t index =                                                         \
           static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;        \
       index < (count); index += static_cast<int64_t>(blockDim.x) * gridDim.x)

/// Launches `kernel(arguments...)` over `count` elements on the context's
/// compute stream; records an error naming `call` and `kernelName` when the
/// launch fails. Nothing is launched for 0 elements.
template <typename... Parameters, typename... Arguments>
bool launchElementwise(lethe_rt_context *context, const char *call,
                       const char *kernelName, int64_t count,
                       void (*kernel)(Parameters...),
                       Arguments &&...arguments) {
  if (count == 0)
    return true;
  // Enough blocks to fill an H100 many times over; the loop covers the rest.
  int64_t blocks = (count + threadsPerBlock - 1) / threadsPerBlock;
  if (blocks > (int64_t(1) << 16))
    blocks = int64_t(1) << 16;
  // Clears the error an earlier failed call left (say, a cudaMalloc out of
  // memory, which the caller has already been told about), so that
  // checkLaunch reports this launch's alone.
  (void)cudaGetLastError();
  kernel<<<static_cast<unsigned>(blocks), threadsPerBlock, 0,
           context->compute>>>(std::forward<Arguments>(arguments)...);
  return checkLaunch(context, call, kernelName);
}

} // namespace lethe::rt

#endif // LETHE_RUNTIME_CUDA_DEVICEELEMENTS_CUH
