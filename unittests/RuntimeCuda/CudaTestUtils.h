//===- CudaTestUtils.h - Helpers for CUDA runtime tests ---------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// A fixture that skips without a GPU and otherwise holds a context with
// initialized memory, places tensors in its arena (kernels on the cuda
// backend read and write only the arena) and reads them back; random data
// and the comparisons against double-precision references.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_UNITTESTS_RUNTIMECUDA_CUDATESTUTILS_H
#define LETHE_UNITTESTS_RUNTIMECUDA_CUDATESTUTILS_H

#include "lethe_rt.h"

#include "gtest/gtest.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

namespace lethe::rt::testing {

/// Why there is no usable GPU ("" when there is one).
inline std::string missingDevice() {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess)
    return cudaGetErrorString(status);
  return count == 0 ? "no CUDA device" : "";
}

/// The number of elements of a tensor of `shape`.
inline int64_t countOf(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

/// The multi-index of row-major element `linear` of `shape`.
inline std::vector<int64_t> unravel(int64_t linear,
                                    const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t dim = shape.size(); dim-- > 0;) {
    index[dim] = linear % shape[dim];
    linear /= shape[dim];
  }
  return index;
}

/// The bytes of an arena and a host pool big enough for every test.
constexpr uint64_t testArenaBytes = 1 << 22, testHostPoolBytes = 1 << 16;

/// Public, so that the tests' shared checks (templates taking the fixture)
/// use it too.
class CudaRuntimeTest : public ::testing::Test {
public:
  void SetUp() override {
    std::string missing = missingDevice();
    if (!missing.empty())
      GTEST_SKIP() << "needs a GPU: " << missing;
    context = lethe_rt_context_create();
    ASSERT_NE(context, nullptr);
    ASSERT_EQ(lethe_rt_memory_init(context, testArenaBytes, testHostPoolBytes),
              LETHE_RT_OK)
        << lastError();
    arena = static_cast<uint8_t *>(lethe_rt_arena_base(context));
  }
  void TearDown() override { lethe_rt_context_destroy(context); }

  std::string lastError() const { return lethe_rt_last_error(context); }

  /// A tensor of `shape` and `dtype` at the next free (256-aligned) arena
  /// offset, holding `values` (T is the dtype's storage type) or, with none,
  /// whatever the arena holds.
  template <typename T>
  lethe_rt_tensor place(std::vector<int64_t> shape, lethe_rt_dtype dtype,
                        const std::vector<T> &values = {}) {
    int64_t count = countOf(shape);
    uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    EXPECT_LE(nextOffset + bytes, testArenaBytes) << "the test arena is full";
    shapes.push_back(std::move(shape));
    lethe_rt_tensor tensor{arena + nextOffset, dtype,
                           static_cast<int32_t>(shapes.back().size()),
                           shapes.back().data()};
    if (!values.empty()) {
      EXPECT_EQ(values.size(), static_cast<size_t>(count));
      EXPECT_EQ(
          lethe_rt_copy_to_arena(context, nextOffset, values.data(), bytes),
          LETHE_RT_OK)
          << lastError();
    }
    nextOffset += (bytes + 255) / 256 * 256;
    return tensor;
  }

  /// The values of `tensor` (of storage type T), after every stream's work.
  template <typename T> std::vector<T> read(const lethe_rt_tensor &tensor) {
    int64_t count = lethe_rt_num_elements(&tensor);
    std::vector<T> values(count);
    uint64_t offset = static_cast<uint8_t *>(tensor.data) - arena;
    EXPECT_EQ(lethe_rt_copy_from_arena(context, values.data(), offset,
                                       count * sizeof(T)),
              LETHE_RT_OK)
        << lastError();
    return values;
  }

  lethe_rt_context *context = nullptr;
  uint8_t *arena = nullptr;
  uint64_t nextOffset = 0;
  /// The shapes the descriptors point to (a deque never moves them).
  std::deque<std::vector<int64_t>> shapes;
};

/// Uniform random values in [low, high) of type T from a seeded generator.
template <typename T>
std::vector<T> randomValues(size_t count, uint64_t seed, double low = -1,
                            double high = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> distribution(low, high);
  std::vector<T> values(count);
  for (T &value : values)
    value = static_cast<T>(distribution(rng));
  return values;
}

/// The relative tolerance of a dtype's kernels against a double reference.
template <typename T> constexpr double tolerance() {
  return sizeof(T) == 4 ? 1e-5 : 1e-12;
}

/// Expects `got` to match the double-precision `expected` within T's
/// tolerance, relative to max(1, |expected|); NaN matches NaN.
template <typename T>
void expectNear(const std::vector<T> &got, const std::vector<double> &expected,
                const std::string &what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(static_cast<double>(got[i])))
          << what << " element " << i;
      continue;
    }
    double bound = tolerance<T>() * std::max(1.0, std::fabs(expected[i]));
    EXPECT_NEAR(static_cast<double>(got[i]), expected[i], bound)
        << what << " element " << i;
  }
}

} // namespace lethe::rt::testing

#endif // LETHE_UNITTESTS_RUNTIMECUDA_CUDATESTUTILS_H
