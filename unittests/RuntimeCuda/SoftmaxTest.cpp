//===- SoftmaxTest.cpp - Softmax and its gradient on CUDA -----------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_softmax (and log-softmax) and lethe_rt_softmax_grad on the CUDA
// backend along an inner axis (strided rows) and the last axis (rows longer
// than a block), against double-precision references computed here; and the
// errors that name the kernel.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"

#include <algorithm>
#include <limits>

using namespace lethe::rt::testing;

namespace {

using SoftmaxTest = CudaRuntimeTest;

/// Calls `row(indices)` with the element indices of each row of `shape`
/// along `axis`.
template <typename Function>
void forEachRow(const std::vector<int64_t> &shape, int64_t axis,
                Function &&row) {
  int64_t outer = 1, inner = 1, size = shape[axis];
  for (int64_t dim = 0; dim < axis; ++dim)
    outer *= shape[dim];
  for (size_t dim = axis + 1; dim < shape.size(); ++dim)
    inner *= shape[dim];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      std::vector<int64_t> indices;
      for (int64_t k = 0; k < size; ++k)
        indices.push_back((o * size + k) * inner + j);
      row(indices);
    }
}

template <typename T>
void checkSoftmax(SoftmaxTest &test, lethe_rt_dtype dtype,
                  const std::vector<int64_t> &shape, int64_t axis) {
  size_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  std::vector<T> xValues = randomValues<T>(count, 5, -6, 6);
  std::vector<T> dyValues = randomValues<T>(count, 6);
  lethe_rt_tensor x = test.place<T>(shape, dtype, xValues);
  lethe_rt_tensor dy = test.place<T>(shape, dtype, dyValues);
  for (int log : {0, 1}) {
    lethe_rt_tensor y = test.place<T>(shape, dtype);
    lethe_rt_tensor dx = test.place<T>(shape, dtype);
    ASSERT_EQ(lethe_rt_softmax(test.context, &x, axis, log, &y), LETHE_RT_OK)
        << test.lastError();
    ASSERT_EQ(lethe_rt_softmax_grad(test.context, &dy, &y, axis, log, &dx),
              LETHE_RT_OK)
        << test.lastError();
    std::vector<T> yValues = test.read<T>(y);
    // The forward from x, the gradient from the y the kernel gave.
    std::vector<double> yExpected(count), dxExpected(count);
    forEachRow(shape, axis, [&](const std::vector<int64_t> &row) {
      double maximum = -INFINITY, sum = 0, gradSum = 0;
      for (int64_t i : row)
        maximum = std::max(maximum, static_cast<double>(xValues[i]));
      for (int64_t i : row)
        sum += std::exp(xValues[i] - maximum);
      for (int64_t i : row) {
        double shifted = xValues[i] - maximum;
        yExpected[i] = log ? shifted - std::log(sum) : std::exp(shifted) / sum;
        gradSum += log ? static_cast<double>(dyValues[i])
                       : static_cast<double>(dyValues[i]) * yValues[i];
      }
      for (int64_t i : row)
        dxExpected[i] = log ? dyValues[i] - std::exp(yValues[i]) * gradSum
                            : yValues[i] * (dyValues[i] - gradSum);
    });
    std::string what =
        "log " + std::to_string(log) + " axis " + std::to_string(axis);
    expectNear(yValues, yExpected, what + " softmax");
    expectNear(test.read<T>(dx), dxExpected, what + " softmax_grad");
  }
}

TEST_F(SoftmaxTest, StridedRowsF32) {
  checkSoftmax<float>(*this, LETHE_RT_F32, {3, 37, 5}, 1);
}
TEST_F(SoftmaxTest, StridedRowsF64) {
  checkSoftmax<double>(*this, LETHE_RT_F64, {3, 37, 5}, 1);
}
TEST_F(SoftmaxTest, LongRowsF32) {
  checkSoftmax<float>(*this, LETHE_RT_F32, {4, 1000}, 1);
}
TEST_F(SoftmaxTest, LongRowsF64) {
  checkSoftmax<double>(*this, LETHE_RT_F64, {4, 1000}, 1);
}

TEST_F(SoftmaxTest, InPlaceAndNaN) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  lethe_rt_tensor x = place<float>({2, 3}, LETHE_RT_F32, {0, 0, 0, 1, nan, 2});
  ASSERT_EQ(lethe_rt_softmax(context, &x, 1, 0, &x), LETHE_RT_OK)
      << lastError();
  std::vector<float> got = read<float>(x);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(got[i], 1.0 / 3, 1e-7) << i;
    EXPECT_TRUE(std::isnan(got[3 + i])) << i;
  }
}

TEST_F(SoftmaxTest, InvalidArgumentsNameTheKernel) {
  lethe_rt_tensor x = place<float>({2, 3}, LETHE_RT_F32);
  lethe_rt_tensor wide = place<double>({2, 3}, LETHE_RT_F64);
  EXPECT_EQ(lethe_rt_softmax(context, &x, 2, 0, &x), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_softmax: axis 2 is out of range for x (2x3)");
  EXPECT_EQ(lethe_rt_softmax_grad(context, &wide, &x, 1, 1, &x),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_softmax_grad: dy must be f32, got f64");
  EXPECT_EQ(lethe_rt_softmax_grad(context, &x, &x, -1, 0, &x), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_softmax_grad: axis -1 is out of range for y (2x3)");
}

} // namespace
