//===- StorageValues.h - Host values of every float dtype -------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Host-side values of a storage type (Half, BFloat16, float, double, as the
// runtime stores f16, bf16, f32 and f64: runtime/common/ElementTypes.h) for
// tests of the CUDA backend over every float dtype: seeded random values,
// conversions to double, and the comparisons of a kernel's result with the
// bits of a host computation or within a dtype's tolerance of a
// double-precision reference.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_UNITTESTS_RUNTIMECUDA_STORAGEVALUES_H
#define LETHE_UNITTESTS_RUNTIMECUDA_STORAGEVALUES_H

#include "common/ElementTypes.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace lethe::rt::testing {

/// The dtype stored as T.
template <typename T> constexpr lethe_rt_dtype dtypeOf() {
  if constexpr (std::is_same_v<T, Half>)
    return LETHE_RT_F16;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return LETHE_RT_BF16;
  else if constexpr (std::is_same_v<T, float>)
    return LETHE_RT_F32;
  else
    return LETHE_RT_F64;
}

/// Seeded uniform values in [low, high), rounded to storage type T.
template <typename T>
std::vector<T> randomStorage(size_t count, uint64_t seed, double low = -1,
                             double high = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> distribution(low, high);
  std::vector<T> values(count);
  for (size_t i = 0; i < count; ++i)
    store<T>(values.data(), i, distribution(rng));
  return values;
}

/// The values of storage type T as doubles.
template <typename T>
std::vector<double> doublesOf(const std::vector<T> &values) {
  std::vector<double> result(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    result[i] = load<T>(values.data(), i);
  return result;
}

/// The relative tolerance of results of storage type T against a double
/// reference, for kernels that compute in T's compute type and round once
/// or a few times.
template <typename T> constexpr double storageTolerance() {
  if constexpr (std::is_same_v<T, Half>)
    return 4e-3;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return 3e-2;
  else if constexpr (std::is_same_v<T, float>)
    return 1e-5;
  else
    return 1e-12;
}

/// Expects `got` to hold the very bits of `expected`, naming the first
/// element that differs.
template <typename T>
void expectSameBits(const std::vector<T> &got, const std::vector<T> &expected,
                    const std::string &what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(std::memcmp(&got[i], &expected[i], sizeof(T)), 0)
        << what << " element " << i << ": got "
        << static_cast<double>(load<T>(got.data(), i)) << ", expected "
        << static_cast<double>(load<T>(expected.data(), i));
}

/// Expects `got` within `tolerance` of `expected`, relative to max(1,
/// |expected|); NaN matches NaN.
template <typename T>
void expectClose(const std::vector<T> &got, const std::vector<double> &expected,
                 double tolerance, const std::string &what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    double value = load<T>(got.data(), i);
    if (std::isnan(expected[i])) {
      ASSERT_TRUE(std::isnan(value)) << what << " element " << i;
      continue;
    }
    ASSERT_NEAR(value, expected[i],
                tolerance * std::max(1.0, std::fabs(expected[i])))
        << what << " element " << i;
  }
}

} // namespace lethe::rt::testing

#endif // LETHE_UNITTESTS_RUNTIMECUDA_STORAGEVALUES_H
