//===- RandomDataTest.cpp - The driver draws lethe-run's random inputs ----===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// referenceRandomTensor is a copy of randomTensor in
// tools/lethe-run/lethe-run.cpp (with a byte buffer for its HostTensor), so
// that a change to either generator fails here; the pinned values fix the
// sequence itself.
//
//===----------------------------------------------------------------------===//

#include "RandomData.h"
#include "DType.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace lethe::driver;

namespace {

/// lethe-run's randomTensor, verbatim but for the tensor type.
std::string referenceRandomTensor(lethe_rt_dtype elementType,
                                  std::vector<int64_t> shape,
                                  std::mt19937_64 &rng, int64_t integerBound) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  std::string tensor(count * getDTypeSize(elementType), '\0');
  lethe_rt_tensor view{tensor.data(), elementType,
                       static_cast<int32_t>(shape.size()), shape.data()};
  // Generate in f64 and let the runtime's cast round to the element type.
  std::vector<double> values(count);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  for (double &value : values) {
    if (isFloatDType(elementType))
      value = real(rng);
    else if (elementType == LETHE_RT_I1)
      value = rng() & 1;
    else
      value = static_cast<double>(rng() % integerBound);
  }
  int64_t rank = shape.size();
  lethe_rt_tensor source{values.data(), LETHE_RT_F64,
                         static_cast<int32_t>(rank), shape.data()};
  lethe_rt_context *context = lethe_rt_context_create();
  lethe_rt_cast(context, &source, &view);
  lethe_rt_context_destroy(context);
  return tensor;
}

TEST(RandomDataTest, MatchesLetheRunForEveryDTypeInOrder) {
  struct Input {
    lethe_rt_dtype dtype;
    std::vector<int64_t> shape;
    int64_t bound;
  };
  std::vector<Input> inputs = {
      {LETHE_RT_F32, {4, 3}, 10}, {LETHE_RT_I64, {5}, 7},
      {LETHE_RT_I1, {2, 3}, 10},  {LETHE_RT_F16, {3}, 10},
      {LETHE_RT_BF16, {3}, 10},   {LETHE_RT_F64, {}, 10},
      {LETHE_RT_I32, {4}, 3},     {LETHE_RT_U8, {6}, 10},
      {LETHE_RT_F32, {0, 2}, 10},
  };
  for (uint64_t seed : {0u, 1u, 42u}) {
    std::mt19937_64 reference(seed), driver(seed);
    for (const Input &input : inputs) {
      std::string expected = referenceRandomTensor(input.dtype, input.shape,
                                                   reference, input.bound);
      std::string actual, error;
      ASSERT_TRUE(drawRandomTensor(driver, input.dtype, input.shape,
                                   input.bound, actual, error))
          << error;
      EXPECT_EQ(actual, expected)
          << getDTypeName(input.dtype) << " with seed " << seed;
    }
  }
}

TEST(RandomDataTest, PinnedSequence) {
  // Seed 0: the first floats and class indices; a change here changes what
  // every executable and lethe-run train on.
  std::mt19937_64 rng(0);
  std::string data, error;
  ASSERT_TRUE(drawRandomTensor(rng, LETHE_RT_F64, {3}, 10, data, error));
  double values[3];
  std::memcpy(values, data.data(), sizeof(values));
  EXPECT_EQ(values[0], -0x1.5c5f20e8d2f89p-1);
  EXPECT_EQ(values[1], 0x1.f7f4e9f0f903ep-1);
  EXPECT_EQ(values[2], -0x1.d77b37a03f346p-1);
  ASSERT_TRUE(drawRandomTensor(rng, LETHE_RT_I32, {4}, 3, data, error));
  int32_t classes[4];
  std::memcpy(classes, data.data(), sizeof(classes));
  EXPECT_EQ(std::vector<int32_t>(classes, classes + 4),
            (std::vector<int32_t>{0, 1, 2, 1}));
}

} // namespace
