//===- RuntimeTestUtils.h - Helpers for CPU runtime tests -------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Owning tensors for tests of the runtime ABI, and a fixture holding a
// context.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_UNITTESTS_RUNTIME_RUNTIMETESTUTILS_H
#define LETHE_UNITTESTS_RUNTIME_RUNTIMETESTUTILS_H

#include "lethe_rt.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace lethe::rt::testing {

/// A tensor that owns its shape and data; `view()` gives the ABI descriptor.
template <typename T> struct OwnedTensor {
  OwnedTensor(std::vector<int64_t> shape, lethe_rt_dtype dtype,
              std::vector<T> values = {})
      : shape(std::move(shape)), dtype(dtype), values(std::move(values)) {
    int64_t count = 1;
    for (int64_t dim : this->shape)
      count *= dim;
    this->values.resize(count);
  }

  lethe_rt_tensor view() {
    return lethe_rt_tensor{values.data(), dtype,
                           static_cast<int32_t>(shape.size()), shape.data()};
  }

  std::vector<int64_t> shape;
  lethe_rt_dtype dtype;
  std::vector<T> values;
};

/// Uniform random values in [low, high) from a seeded generator.
inline std::vector<float> randomFloats(size_t count, uint64_t seed,
                                       float low = -1, float high = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  std::vector<float> values(count);
  for (float &value : values)
    value = distribution(rng);
  return values;
}

/// A fixture owning a runtime context.
class RuntimeTest : public ::testing::Test {
protected:
  RuntimeTest() : context(lethe_rt_context_create()) {}
  ~RuntimeTest() override { lethe_rt_context_destroy(context); }

  /// The context's last error, for failure messages.
  std::string lastError() const { return lethe_rt_last_error(context); }

  lethe_rt_context *context;
};

} // namespace lethe::rt::testing

#endif // LETHE_UNITTESTS_RUNTIME_RUNTIMETESTUTILS_H
