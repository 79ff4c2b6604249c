//===- GradientTest.cpp - Activation and clip gradients on CUDA -----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_activation_grad and lethe_rt_clip_grad on the CUDA backend, each
// against a double-precision reference computed here, and the errors that
// name the kernel.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"

#include <limits>

using namespace lethe::rt::testing;

namespace {

using GradientTest = CudaRuntimeTest;

/// The derivative of each activation at `saved`, in double.
double derivative(lethe_rt_activation_grad_kind kind, double alpha,
                  double saved) {
  switch (kind) {
  case LETHE_RT_RELU_GRAD:
    return saved > 0 ? 1 : 0;
  case LETHE_RT_LEAKY_RELU_GRAD:
    return saved > 0 ? 1 : alpha;
  case LETHE_RT_GELU_GRAD:
    return 0.5 * (1 + std::erf(saved / std::sqrt(2.0))) +
           saved * std::exp(-0.5 * saved * saved) / std::sqrt(2 * M_PI);
  case LETHE_RT_GELU_TANH_GRAD: {
    double c = std::sqrt(2 / M_PI);
    double t = std::tanh(c * (saved + 0.044715 * saved * saved * saved));
    return 0.5 * (1 + t) +
           0.5 * saved * (1 - t * t) * c * (1 + 3 * 0.044715 * saved * saved);
  }
  }
  return 0;
}

template <typename T>
void checkActivationGrad(GradientTest &test, lethe_rt_dtype dtype) {
  std::vector<T> dyValues = randomValues<T>(3 * 173, 1, -2, 2);
  std::vector<T> savedValues = randomValues<T>(3 * 173, 2, -4, 4);
  lethe_rt_tensor dy = test.place<T>({3, 173}, dtype, dyValues);
  lethe_rt_tensor saved = test.place<T>({3, 173}, dtype, savedValues);
  for (int kind = LETHE_RT_RELU_GRAD; kind <= LETHE_RT_GELU_TANH_GRAD; ++kind) {
    auto gradKind = static_cast<lethe_rt_activation_grad_kind>(kind);
    lethe_rt_tensor dx = test.place<T>({3, 173}, dtype);
    ASSERT_EQ(
        lethe_rt_activation_grad(test.context, gradKind, 0.1, &dy, &saved, &dx),
        LETHE_RT_OK)
        << test.lastError();
    std::vector<double> expected;
    for (size_t i = 0; i < dyValues.size(); ++i)
      expected.push_back(
          static_cast<double>(dyValues[i]) *
          derivative(gradKind, static_cast<double>(T(0.1)), savedValues[i]));
    expectNear(test.read<T>(dx), expected,
               "activation gradient kind " + std::to_string(kind));
  }
}

TEST_F(GradientTest, ActivationGradF32) {
  checkActivationGrad<float>(*this, LETHE_RT_F32);
}
TEST_F(GradientTest, ActivationGradF64) {
  checkActivationGrad<double>(*this, LETHE_RT_F64);
}

TEST_F(GradientTest, ClipGradPassesWithinBoundsInPlace) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  lethe_rt_tensor dy = place<float>({6}, LETHE_RT_F32, {1, 2, 3, 4, 5, 6});
  lethe_rt_tensor x =
      place<float>({6}, LETHE_RT_F32, {-2, -1, 0, 1, 1.5f, nan});
  // dx is dy itself.
  ASSERT_EQ(lethe_rt_clip_grad(context, &dy, &x, -1, 1, &dy), LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(read<float>(dy), (std::vector<float>{0, 2, 3, 4, 0, 0}));
  lethe_rt_tensor wideDy = place<double>({3}, LETHE_RT_F64, {1, 2, 3});
  lethe_rt_tensor wideX = place<double>({3}, LETHE_RT_F64, {-1e300, 0, 1e300});
  lethe_rt_tensor wideDx = place<double>({3}, LETHE_RT_F64);
  ASSERT_EQ(lethe_rt_clip_grad(context, &wideDy, &wideX, -INFINITY, 0, &wideDx),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(read<double>(wideDx), (std::vector<double>{1, 2, 0}));
}

TEST_F(GradientTest, InvalidArgumentsNameTheKernel) {
  lethe_rt_tensor dy = place<float>({2, 3}, LETHE_RT_F32);
  lethe_rt_tensor saved = place<double>({2, 3}, LETHE_RT_F64);
  lethe_rt_tensor dx = place<float>({3, 2}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_activation_grad(context, LETHE_RT_RELU_GRAD, 0, &dy,
                                     &saved, &dy),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_activation_grad: saved must be f32, got f64");
  EXPECT_EQ(lethe_rt_activation_grad(
                context, static_cast<lethe_rt_activation_grad_kind>(42), 0, &dy,
                &dy, &dy),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_activation_grad: unknown activation gradient kind 42");
  EXPECT_EQ(lethe_rt_clip_grad(context, &dy, &dy, 0, 1, &dx), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_clip_grad: dy (2x3) and dx (3x2) must have "
                         "the same shape");
  EXPECT_EQ(lethe_rt_clip_grad(context, &dy, &dy, 1, 0, &dy), LETHE_RT_ERROR);
  EXPECT_EQ(
      lastError(),
      "lethe_rt_clip_grad: the bounds must be ordered numbers, got [1, 0]");
}

} // namespace
