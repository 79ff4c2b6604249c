//===- TypedTensor.h - Tensors of any dtype for kernel tests ----*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// A tensor of any dtype whose elements tests set and read as doubles (through
// the runtime's own load/store, so f16 and bf16 round to nearest even), and
// comparison helpers against double-precision references.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_UNITTESTS_RUNTIME_TYPEDTENSOR_H
#define LETHE_UNITTESTS_RUNTIME_TYPEDTENSOR_H

#include "CpuRuntime.h"
#include "RuntimeTestUtils.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace lethe::rt::testing {

/// The integer dtypes (not i1), signed then unsigned.
inline const std::vector<lethe_rt_dtype> &integerDtypes() {
  static const std::vector<lethe_rt_dtype> dtypes{
      LETHE_RT_I8, LETHE_RT_I16, LETHE_RT_I32, LETHE_RT_I64,
      LETHE_RT_U8, LETHE_RT_U16, LETHE_RT_U32, LETHE_RT_U64};
  return dtypes;
}

inline bool isUnsigned(lethe_rt_dtype dtype) {
  return dtype == LETHE_RT_U8 || dtype == LETHE_RT_U16 ||
         dtype == LETHE_RT_U32 || dtype == LETHE_RT_U64;
}

/// The integer of dtype `dtype` whose two's-complement bits are the low bits
/// of `bits` (what a wrapping computation stores), as a double.
inline double wrapInteger(lethe_rt_dtype dtype, uint64_t bits) {
  double value = static_cast<double>(static_cast<int64_t>(bits));
  dispatchInteger(dtype, [&](auto tag) {
    value = static_cast<double>(static_cast<decltype(tag)>(bits));
  });
  return value;
}

/// The lowest and the largest value of integer dtype `dtype`, as doubles.
inline std::pair<double, double> integerRange(lethe_rt_dtype dtype) {
  std::pair<double, double> range{0, 0};
  dispatchInteger(dtype, [&](auto tag) {
    using Limits = std::numeric_limits<decltype(tag)>;
    range = {static_cast<double>(Limits::lowest()),
             static_cast<double>(Limits::max())};
  });
  return range;
}

/// A tensor owning its shape and data, of any dtype.
struct TypedTensor {
  TypedTensor(std::vector<int64_t> shape, lethe_rt_dtype dtype)
      : shape(std::move(shape)), dtype(dtype) {
    bytes.resize(size() * lethe_rt_dtype_size(dtype));
  }

  TypedTensor(std::vector<int64_t> shape, lethe_rt_dtype dtype,
              const std::vector<double> &values)
      : TypedTensor(std::move(shape), dtype) {
    for (int64_t i = 0; i < size(); ++i)
      set(i, values.at(i));
  }

  int64_t size() const {
    int64_t count = 1;
    for (int64_t dim : shape)
      count *= dim;
    return count;
  }

  /// Element i converted to double.
  double get(int64_t i) const {
    double value = 0;
    dispatchAny(dtype, [&](auto tag) {
      value = static_cast<double>(load<decltype(tag)>(bytes.data(), i));
    });
    return value;
  }

  /// Sets element i to `value` converted to the dtype.
  void set(int64_t i, double value) {
    dispatchAny(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>)
        store<T>(bytes.data(), i, static_cast<int64_t>(value));
      else
        store<T>(bytes.data(), i, value);
    });
  }

  /// All elements as doubles.
  std::vector<double> values() const {
    std::vector<double> result(size());
    for (int64_t i = 0; i < size(); ++i)
      result[i] = get(i);
    return result;
  }

  lethe_rt_tensor view() {
    return lethe_rt_tensor{bytes.data(), dtype,
                           static_cast<int32_t>(shape.size()), shape.data()};
  }

  std::vector<int64_t> shape;
  lethe_rt_dtype dtype;
  std::vector<uint8_t> bytes;
};

/// A tensor of `shape` and `dtype` filled with seeded uniform values in
/// [low, high) (rounded to the dtype).
inline TypedTensor randomTensor(std::vector<int64_t> shape,
                                lethe_rt_dtype dtype, uint64_t seed,
                                double low = -1, double high = 1) {
  TypedTensor tensor(std::move(shape), dtype);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> distribution(low, high);
  for (int64_t i = 0; i < tensor.size(); ++i)
    tensor.set(i, distribution(rng));
  return tensor;
}

/// A relative tolerance for results stored as `dtype` after computing in
/// its compute type.
inline double toleranceFor(lethe_rt_dtype dtype) {
  switch (dtype) {
  case LETHE_RT_F16:
    return 2e-3;
  case LETHE_RT_BF16:
    return 1e-2;
  case LETHE_RT_F32:
    return 2e-5;
  default:
    return 1e-11;
  }
}

/// Expects |actual - expected| <= tolerance * max(1, |expected|) for every
/// element (NaNs must match NaNs), reporting the first mismatch.
inline void expectAllNear(const std::vector<double> &actual,
                          const std::vector<double> &expected,
                          double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(expected[i])) {
      ASSERT_TRUE(std::isnan(actual[i])) << "element " << i;
      continue;
    }
    if (std::isinf(expected[i])) {
      ASSERT_EQ(actual[i], expected[i]) << "element " << i;
      continue;
    }
    double bound = tolerance * std::max(1.0, std::fabs(expected[i]));
    ASSERT_NEAR(actual[i], expected[i], bound) << "element " << i;
  }
}

/// Row-major strides of `shape`.
inline std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

/// The multi-index of linear index `linear` in `shape`.
inline std::vector<int64_t> unravel(int64_t linear,
                                    const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    index[i] = shape[i] ? linear % shape[i] : 0;
    linear = shape[i] ? linear / shape[i] : 0;
  }
  return index;
}

/// The linear index in `shape` of `index` (right-aligned, broadcasting: dims
/// of size 1 read index 0).
inline int64_t broadcastIndex(const std::vector<int64_t> &index,
                              const std::vector<int64_t> &shape) {
  int64_t linear = 0;
  size_t offset = index.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    linear = linear * shape[i] + (shape[i] == 1 ? 0 : index[offset + i]);
  return linear;
}

/// The float dtypes, for tests over all of them.
inline const std::vector<lethe_rt_dtype> &floatDtypes() {
  static const std::vector<lethe_rt_dtype> dtypes{LETHE_RT_F16, LETHE_RT_BF16,
                                                  LETHE_RT_F32, LETHE_RT_F64};
  return dtypes;
}

} // namespace lethe::rt::testing

#endif // LETHE_UNITTESTS_RUNTIME_TYPEDTENSOR_H
