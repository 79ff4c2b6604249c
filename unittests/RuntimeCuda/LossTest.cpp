//===- LossTest.cpp - Losses on CUDA --------------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_mse on the CUDA backend with each reduction, over few elements
// (added in order) and many (added by a block), against double-precision
// references computed here; and the errors that name the kernel.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"

using namespace lethe::rt::testing;

namespace {

using LossTest = CudaRuntimeTest;

template <typename T>
void checkMse(LossTest &test, lethe_rt_dtype dtype,
              const std::vector<int64_t> &shape) {
  size_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  std::vector<T> aValues = randomValues<T>(count, 21);
  std::vector<T> bValues = randomValues<T>(count, 22);
  lethe_rt_tensor a = test.place<T>(shape, dtype, aValues);
  lethe_rt_tensor b = test.place<T>(shape, dtype, bValues);
  std::vector<double> squares;
  double total = 0;
  for (size_t i = 0; i < count; ++i) {
    double difference = static_cast<double>(aValues[i]) - bValues[i];
    squares.push_back(difference * difference);
    total += squares.back();
  }
  std::string what = "mse of " + std::to_string(count);
  lethe_rt_tensor none = test.place<T>(shape, dtype);
  ASSERT_EQ(lethe_rt_mse(test.context, &a, &b, LETHE_RT_REDUCTION_NONE, &none),
            LETHE_RT_OK)
      << test.lastError();
  expectNear(test.read<T>(none), squares, what + " none");
  lethe_rt_tensor sum = test.place<T>({}, dtype);
  ASSERT_EQ(lethe_rt_mse(test.context, &a, &b, LETHE_RT_REDUCTION_SUM, &sum),
            LETHE_RT_OK)
      << test.lastError();
  expectNear(test.read<T>(sum), {total}, what + " sum");
  lethe_rt_tensor mean = test.place<T>({}, dtype);
  ASSERT_EQ(lethe_rt_mse(test.context, &a, &b, LETHE_RT_REDUCTION_MEAN, &mean),
            LETHE_RT_OK)
      << test.lastError();
  expectNear(test.read<T>(mean), {total / count}, what + " mean");
}

TEST_F(LossTest, MseF32) {
  checkMse<float>(*this, LETHE_RT_F32, {3, 7});
  checkMse<float>(*this, LETHE_RT_F32, {17, 301});
}
TEST_F(LossTest, MseF64) {
  checkMse<double>(*this, LETHE_RT_F64, {3, 7});
  checkMse<double>(*this, LETHE_RT_F64, {17, 301});
}

TEST_F(LossTest, MseOfNothingIsNaN) {
  lethe_rt_tensor a = place<float>({0, 4}, LETHE_RT_F32);
  lethe_rt_tensor loss = place<float>({}, LETHE_RT_F32, {1});
  ASSERT_EQ(lethe_rt_mse(context, &a, &a, LETHE_RT_REDUCTION_MEAN, &loss),
            LETHE_RT_OK)
      << lastError();
  EXPECT_TRUE(std::isnan(read<float>(loss)[0]));
  ASSERT_EQ(lethe_rt_mse(context, &a, &a, LETHE_RT_REDUCTION_SUM, &loss),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(read<float>(loss), (std::vector<float>{0}));
}

TEST_F(LossTest, InvalidArgumentsNameTheKernel) {
  lethe_rt_tensor a = place<float>({2, 3}, LETHE_RT_F32);
  lethe_rt_tensor loss = place<float>({}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_mse(context, &a, &a, LETHE_RT_REDUCTION_NONE, &loss),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_mse: loss (scalar) must be 2x3 for reduction none");
  EXPECT_EQ(
      lethe_rt_mse(context, &a, &a, static_cast<lethe_rt_reduction>(9), &loss),
      LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_mse: unknown reduction 9");
  lethe_rt_tensor b = place<double>({2, 3}, LETHE_RT_F64);
  EXPECT_EQ(lethe_rt_mse(context, &a, &b, LETHE_RT_REDUCTION_SUM, &loss),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_mse: b must be f32, got f64");
}

} // namespace
