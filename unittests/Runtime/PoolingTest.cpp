//===- PoolingTest.cpp - Pooling kernels ----------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The corner cases of ONNX's pooling, with values worked out by hand (and
// checked against ONNX's test data: test_maxpool_2d_ceil,
// test_averagepool_2d_pads, test_averagepool_2d_pads_count_include_pad).
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include <limits>

using namespace lethe::rt::testing;

namespace {

using PoolingTest = RuntimeTest;

/// 1 .. 16 in a 1x1x4x4 tensor.
OwnedTensor<float> counting4x4() {
  OwnedTensor<float> x({1, 1, 4, 4}, LETHE_RT_F32);
  for (size_t i = 0; i < x.values.size(); ++i)
    x.values[i] = static_cast<float>(i + 1);
  return x;
}

TEST_F(PoolingTest, MaxPoolCeilModeClipsTheLastWindow) {
  // kernel 3, stride 2 over 4 with ceil_mode: windows start at 0 and 2; the
  // second runs past the input and is clipped.
  OwnedTensor<float> x = counting4x4(), out({1, 1, 2, 2}, LETHE_RT_F32);
  std::vector<int64_t> kernel = {3, 3}, strides = {2, 2}, pads = {0, 0, 0, 0},
                       dilations = {1, 1};
  lethe_rt_tensor xv = x.view(), ov = out.view();
  ASSERT_EQ(lethe_rt_max_pool(context, &xv, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 0, &ov, nullptr),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out.values, (std::vector<float>{11, 12, 15, 16}));
}

TEST_F(PoolingTest, MaxPoolPaddingNeverWins) {
  OwnedTensor<float> x({1, 1, 1, 2}, LETHE_RT_F32, {-5, -7});
  OwnedTensor<float> out({1, 1, 1, 3}, LETHE_RT_F32);
  std::vector<int64_t> kernel = {1, 2}, strides = {1, 1}, pads = {0, 1, 0, 1},
                       dilations = {1, 1};
  lethe_rt_tensor xv = x.view(), ov = out.view();
  ASSERT_EQ(lethe_rt_max_pool(context, &xv, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 0, &ov, nullptr),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out.values, (std::vector<float>{-5, -5, -7}));
}

TEST_F(PoolingTest, MaxPoolOnIntegers) {
  // Padding never wins, even over the lowest value of the type.
  std::vector<int64_t> kernel = {1, 2}, strides = {1, 1}, pads = {0, 1, 0, 1},
                       dilations = {1, 1};
  OwnedTensor<uint8_t> u8({1, 1, 1, 3}, LETHE_RT_U8, {0, 255, 7});
  OwnedTensor<uint8_t> u8Out({1, 1, 1, 4}, LETHE_RT_U8);
  lethe_rt_tensor xv = u8.view(), ov = u8Out.view();
  ASSERT_EQ(lethe_rt_max_pool(context, &xv, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 0, &ov, nullptr),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(u8Out.values, (std::vector<uint8_t>{0, 255, 255, 7}));
  constexpr int64_t lowest = std::numeric_limits<int64_t>::min();
  OwnedTensor<int64_t> i64({1, 1, 1, 2}, LETHE_RT_I64, {lowest, lowest + 1});
  OwnedTensor<int64_t> i64Out({1, 1, 1, 3}, LETHE_RT_I64);
  xv = i64.view();
  ov = i64Out.view();
  ASSERT_EQ(lethe_rt_max_pool(context, &xv, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 0, &ov, nullptr),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(i64Out.values,
            (std::vector<int64_t>{lowest, lowest + 1, lowest + 1}));
  // Booleans have no max pool, nor integers an average pool.
  OwnedTensor<uint8_t> flags({1, 1, 1, 2}, LETHE_RT_I1, {0, 1});
  OwnedTensor<uint8_t> flagsOut({1, 1, 1, 3}, LETHE_RT_I1);
  xv = flags.view();
  ov = flagsOut.view();
  EXPECT_EQ(lethe_rt_max_pool(context, &xv, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 0, &ov, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_max_pool: x must be numeric, got i1");
  xv = u8.view();
  ov = u8Out.view();
  EXPECT_EQ(lethe_rt_avg_pool(context, &xv, kernel.data(), strides.data(),
                              pads.data(), 0, &ov),
            LETHE_RT_ERROR);
}

TEST_F(PoolingTest, MaxPoolDilation) {
  // Dilation 2, kernel 2 over 4: windows {0, 2} and {1, 3} per dim.
  OwnedTensor<float> x = counting4x4(), out({1, 1, 2, 2}, LETHE_RT_F32);
  std::vector<int64_t> kernel = {2, 2}, strides = {1, 1}, pads = {0, 0, 0, 0},
                       dilations = {2, 2};
  lethe_rt_tensor xv = x.view(), ov = out.view();
  ASSERT_EQ(lethe_rt_max_pool(context, &xv, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 0, &ov, nullptr),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out.values, (std::vector<float>{11, 12, 15, 16}));
}

TEST_F(PoolingTest, MaxPoolIndices) {
  // Two planes of 1..16 (the second negated, so its maxima are the window
  // starts); kernel 2, stride 2. Indices count from the start of x.
  OwnedTensor<float> x({1, 2, 4, 4}, LETHE_RT_F32);
  for (int i = 0; i < 16; ++i) {
    x.values[i] = static_cast<float>(i + 1);
    x.values[16 + i] = -static_cast<float>(i + 1);
  }
  OwnedTensor<float> out({1, 2, 2, 2}, LETHE_RT_F32);
  OwnedTensor<int64_t> indices({1, 2, 2, 2}, LETHE_RT_I64);
  std::vector<int64_t> kernel = {2, 2}, strides = {2, 2}, pads = {0, 0, 0, 0},
                       dilations = {1, 1};
  lethe_rt_tensor xv = x.view(), ov = out.view(), iv = indices.view();
  ASSERT_EQ(lethe_rt_max_pool(context, &xv, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 0, &ov, &iv),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out.values, (std::vector<float>{6, 8, 14, 16, -1, -3, -9, -11}));
  EXPECT_EQ(indices.values,
            (std::vector<int64_t>{5, 7, 13, 15, 16, 18, 24, 26}));
  // Column-major within each plane: (h, w) is at w * 4 + h.
  ASSERT_EQ(lethe_rt_max_pool(context, &xv, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 1, &ov, &iv),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(indices.values,
            (std::vector<int64_t>{5, 13, 7, 15, 16, 24, 18, 26}));
  EXPECT_EQ(lethe_rt_max_pool(context, &xv, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 2, &ov, &iv),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_max_pool: storage_order must be 0 or 1, "
                         "not 2");
}

TEST_F(PoolingTest, AveragePoolDivisors) {
  // kernel 2x2, stride 2, pad 1 on every side over 1..16: the corner window
  // holds only element 1.
  OwnedTensor<float> x = counting4x4(), out({1, 1, 3, 3}, LETHE_RT_F32);
  std::vector<int64_t> kernel = {2, 2}, strides = {2, 2}, pads = {1, 1, 1, 1};
  lethe_rt_tensor xv = x.view(), ov = out.view();
  ASSERT_EQ(lethe_rt_avg_pool(context, &xv, kernel.data(), strides.data(),
                              pads.data(), /*count_include_pad=*/0, &ov),
            LETHE_RT_OK)
      << lastError();
  EXPECT_FLOAT_EQ(out.values[0], 1.0f);           // {1}
  EXPECT_FLOAT_EQ(out.values[1], (2 + 3) / 2.0f); // {2, 3}
  EXPECT_FLOAT_EQ(out.values[4], (6 + 7 + 10 + 11) / 4.0f);
  ASSERT_EQ(lethe_rt_avg_pool(context, &xv, kernel.data(), strides.data(),
                              pads.data(), /*count_include_pad=*/1, &ov),
            LETHE_RT_OK);
  EXPECT_FLOAT_EQ(out.values[0], 1 / 4.0f);
  EXPECT_FLOAT_EQ(out.values[1], (2 + 3) / 4.0f);
}

TEST_F(PoolingTest, GlobalAveragePool) {
  OwnedTensor<double> x({2, 1, 2, 2}, LETHE_RT_F64, {1, 2, 3, 4, 5, 6, 7, 8});
  OwnedTensor<double> out({2, 1, 1, 1}, LETHE_RT_F64);
  lethe_rt_tensor xv = x.view(), ov = out.view();
  ASSERT_EQ(lethe_rt_global_avg_pool(context, &xv, &ov), LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out.values, (std::vector<double>{2.5, 6.5}));
}

TEST_F(PoolingTest, RejectsAnOutputTooLargeForTheInput) {
  OwnedTensor<float> x = counting4x4(), out({1, 1, 4, 4}, LETHE_RT_F32);
  std::vector<int64_t> kernel = {2, 2}, strides = {2, 2}, pads = {0, 0, 0, 0},
                       dilations = {1, 1};
  lethe_rt_tensor xv = x.view(), ov = out.view();
  EXPECT_EQ(lethe_rt_max_pool(context, &xv, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 0, &ov, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_max_pool: out's spatial dim 0 (4) is too "
                         "large for x's (4)");
}

} // namespace
