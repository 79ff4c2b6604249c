//===- ElementTypes.h - Storage types shared by the backends ----*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The element types of the runtime as every backend stores them: f16 and
// bf16 as their 16 bits (computed in f32, converted with round to nearest
// even and quiet NaNs kept quiet), i1 as one byte; loads and stores in the
// compute type, and dispatch on a dtype. Header only, for g++ and nvcc alike:
// the conversions, loads and stores are LETHE_HOST_DEVICE (host and device
// functions under nvcc), and give the same bits on both (the CUDA backend's
// device code uses CUDA's bit casts and rounding, the host code the C++
// library's, which agree in the default rounding mode).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_COMMON_ELEMENTTYPES_H
#define LETHE_RUNTIME_COMMON_ELEMENTTYPES_H

#include "lethe_rt.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

/// Marks a function usable from host and device code under nvcc; nothing
/// for a host compiler.
#ifdef __CUDACC__
#define LETHE_HOST_DEVICE __host__ __device__
#else
#define LETHE_HOST_DEVICE
#endif

namespace lethe::rt {

//===----------------------------------------------------------------------===//
// Storage types
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

namespace detail {

LETHE_HOST_DEVICE inline float floatFromBits(uint32_t bits) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
#endif
}

LETHE_HOST_DEVICE inline uint32_t bitsOfFloat(float value) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(value);
#else
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
#endif
}

/// value * 2^exponent.
LETHE_HOST_DEVICE inline float scaleByPowerOfTwo(float value, int exponent) {
#ifdef __CUDA_ARCH__
  return ldexpf(value, exponent);
#else
  return std::ldexp(value, exponent);
#endif
}

/// |value| rounded to an integer, half to even (the default rounding mode).
LETHE_HOST_DEVICE inline float roundMagnitudeToEven(float value) {
#ifdef __CUDA_ARCH__
  return rintf(fabsf(value));
#else
  return std::nearbyint(std::fabs(value));
#endif
}

} // namespace detail

//===----------------------------------------------------------------------===//
// f16 and bf16
//===----------------------------------------------------------------------===//

LETHE_HOST_DEVICE inline float halfToFloat(Half value) {
  uint32_t sign = static_cast<uint32_t>(value.bits & 0x8000) << 16;
  uint32_t exponent = (value.bits >> 10) & 0x1f;
  uint32_t mantissa = value.bits & 0x3ff;
  if (exponent == 0x1f) // infinity or NaN
    return detail::floatFromBits(sign | 0x7f800000 | (mantissa << 13));
  if (exponent != 0) // normal
    return detail::floatFromBits(sign | ((exponent + 112) << 23) |
                                 (mantissa << 13));
  if (mantissa == 0) // zero
    return detail::floatFromBits(sign);
  // Subnormal: value = mantissa * 2^-24, exact in float.
  float magnitude =
      detail::scaleByPowerOfTwo(static_cast<float>(mantissa), -24);
  return sign ? -magnitude : magnitude;
}

/// Rounds to nearest even.
LETHE_HOST_DEVICE inline Half floatToHalf(float value) {
  uint32_t bits = detail::bitsOfFloat(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude >= 0x7f800000) { // infinity or NaN (keep NaN quiet)
    uint16_t nan = magnitude > 0x7f800000 ? 0x200 : 0;
    return Half{static_cast<uint16_t>(sign | 0x7c00 | nan)};
  }
  if (magnitude >= 0x477ff000) // rounds to >= 65520: overflow to infinity
    return Half{static_cast<uint16_t>(sign | 0x7c00)};
  if (magnitude < 0x38800000) { // below the smallest normal half: subnormal
    // Scale so that one half-subnormal unit (2^-24) is one integer unit,
    // then round half to even.
    float scaled = detail::scaleByPowerOfTwo(value, 24);
    return Half{static_cast<uint16_t>(
        sign | static_cast<uint16_t>(detail::roundMagnitudeToEven(scaled)))};
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

LETHE_HOST_DEVICE inline float bfloat16ToFloat(BFloat16 value) {
  return detail::floatFromBits(static_cast<uint32_t>(value.bits) << 16);
}

/// Rounds to nearest even.
LETHE_HOST_DEVICE inline BFloat16 floatToBFloat16(float value) {
  uint32_t bits = detail::bitsOfFloat(value);
  if ((bits & 0x7fffffff) > 0x7f800000) // NaN: keep it quiet
    return BFloat16{static_cast<uint16_t>((bits >> 16) | 0x40)};
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return BFloat16{static_cast<uint16_t>((bits + rounding) >> 16)};
}

//===----------------------------------------------------------------------===//
// Compute types, loads and stores
//===----------------------------------------------------------------------===//

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

/// Whether T stores a float dtype (f16, bf16, f32, f64).
template <typename T> constexpr bool isFloatStorage() {
  return std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> ||
         std::is_same_v<T, float> || std::is_same_v<T, double>;
}

/// Reads element `index` of storage type T as its compute type.
template <typename T>
LETHE_HOST_DEVICE inline ComputeType<T> load(const void *data, int64_t index) {
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
LETHE_HOST_DEVICE inline void store(void *data, int64_t index, V value) {
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
// Casts (ONNX Cast): one element from one storage type to another, the same
// bits on the host and on the device
//===----------------------------------------------------------------------===//

namespace detail {

LETHE_HOST_DEVICE inline bool isFinite(double value) {
#ifdef __CUDA_ARCH__
  return isfinite(value);
#else
  return std::isfinite(value);
#endif
}

/// `value` with its lowest mantissa bit set when `inexact` (round to odd),
/// so that a second rounding to f16 or bf16 (at least two bits shorter)
/// rounds as if from the exact value.
LETHE_HOST_DEVICE inline float stickyBit(float truncated, bool inexact) {
  return inexact ? floatFromBits(bitsOfFloat(truncated) | 1) : truncated;
}

/// `value` rounded to float toward zero, then to odd.
LETHE_HOST_DEVICE inline float roundDoubleToOdd(double value) {
  float rounded = static_cast<float>(value);
  if (!isFinite(value) || static_cast<double>(rounded) == value)
    return rounded;
  bool negative = value < 0;
  double wide = static_cast<double>(rounded);
  if (!isFinite(rounded)) { // finite beyond the float range: truncate to max
    float largest = std::numeric_limits<float>::max();
    rounded = negative ? -largest : largest;
  } else if (negative ? wide < value : wide > value) {
    // Rounded away from zero: one step back, to the next float toward zero
    // (the bits of a nonzero float, less one).
    rounded = floatFromBits(bitsOfFloat(rounded) - 1);
  }
  return stickyBit(rounded, true);
}

/// The number of significant bits of `magnitude` (> 0).
LETHE_HOST_DEVICE inline int bitWidth(uint64_t magnitude) {
#ifdef __CUDA_ARCH__
  return 64 - __clzll(static_cast<long long>(magnitude));
#else
  return 64 - __builtin_clzll(magnitude);
#endif
}

/// Integer `value` rounded to float to odd (exact below 2^24).
template <typename I>
LETHE_HOST_DEVICE inline float roundIntegerToOdd(I value) {
  bool negative = false;
  if constexpr (std::is_signed_v<I>)
    negative = value < 0;
  uint64_t magnitude = negative ? uint64_t(0) - static_cast<uint64_t>(value)
                                : static_cast<uint64_t>(value);
  if (magnitude < (uint64_t(1) << 24))
    return static_cast<float>(value);
  int shift = bitWidth(magnitude) - 24;
  uint64_t top = magnitude >> shift;
  bool inexact = (magnitude & ((uint64_t(1) << shift) - 1)) != 0;
  float result =
      stickyBit(scaleByPowerOfTwo(static_cast<float>(top), shift), inexact);
  return negative ? -result : result;
}

} // namespace detail

/// Float `value` truncated toward zero into integer type I, saturating at
/// I's range; NaN gives 0.
template <typename I>
LETHE_HOST_DEVICE inline I truncateToInteger(double value) {
  if (value != value) // NaN
    return 0;
  // One past the maximum is 2^digits, and the minimum is its negation (signed)
  // or 0: exact in double.
  constexpr int digits = std::numeric_limits<I>::digits;
  double high = static_cast<double>(uint64_t(1) << (digits - 1)) * 2;
  double low = std::is_signed_v<I> ? -high : 0.0;
#ifdef __CUDA_ARCH__
  double truncated = trunc(value);
#else
  double truncated = std::trunc(value);
#endif
  if (truncated <= low)
    return std::numeric_limits<I>::min();
  if (truncated >= high)
    return std::numeric_limits<I>::max();
  return static_cast<I>(truncated);
}

/// out[i] = in[i] converted from storage type From to To: floats to integers
/// truncate and saturate (NaN to 0), anything to i1 is `!= 0`, and f64 or a
/// wide integer to f16 or bf16 rounds once, as if from the exact value.
template <typename From, typename To>
LETHE_HOST_DEVICE inline void castElement(const void *in, void *out,
                                          int64_t i) {
  auto value = load<From>(in, i);
  if constexpr (std::is_same_v<To, Bool>) {
    store<To>(out, i, value != 0);
  } else if constexpr (!isFloatStorage<To>()) {
    if constexpr (isFloatStorage<From>())
      store<To>(out, i, truncateToInteger<To>(value));
    else
      store<To>(out, i, static_cast<To>(value));
  } else if constexpr ((std::is_same_v<To, Half> ||
                        std::is_same_v<To, BFloat16>) &&
                       (std::is_same_v<From, double> ||
                        (std::is_integral_v<From> && sizeof(From) >= 4))) {
    // Two roundings (to float, then to 16 bits) must not differ from one.
    if constexpr (std::is_same_v<From, double>)
      store<To>(out, i, detail::roundDoubleToOdd(value));
    else
      store<To>(out, i, detail::roundIntegerToOdd(value));
  } else {
    store<To>(out, i, static_cast<ComputeType<To>>(value));
  }
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

/// Every dtype (i1 as Bool, integers as in dispatchInteger).
template <typename Function>
bool dispatchAny(lethe_rt_dtype dtype, Function &&function) {
  if (dtype == LETHE_RT_I1) {
    function(Bool{});
    return true;
  }
  return dispatchInteger(dtype, function) ||
         dispatchFloat(dtype, std::forward<Function>(function));
}

} // namespace lethe::rt

#endif // LETHE_RUNTIME_COMMON_ELEMENTTYPES_H
