//===- ResizeTest.cpp - lethe_rt_resize -----------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The linear and cubic expectations are what ONNX's reference implementation
// (onnx/backend/test/case/node/resize.py, interpolate_nd) computes for the
// same inputs.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

using namespace lethe::rt::testing;

namespace {

using ResizeTest = RuntimeTest;

lethe_rt_resize_options options(lethe_rt_resize_mode mode,
                                lethe_rt_coordinate_mode coordinates) {
  lethe_rt_resize_options result{};
  result.mode = mode;
  result.coordinates = coordinates;
  result.nearest = LETHE_RT_ROUND_PREFER_FLOOR;
  result.cubic_coeff_a = -0.75;
  return result;
}

/// Expects `actual` to equal `expected` within float rounding.
void expectNear(const std::vector<float> &actual,
                const std::vector<double> &expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], 1e-6) << "element " << i;
}

TEST_F(ResizeTest, Nearest) {
  // Doubling 1 2 / 3 4 with asymmetric coordinates repeats each element.
  OwnedTensor<float> x({1, 1, 2, 2}, LETHE_RT_F32, {1, 2, 3, 4});
  OwnedTensor<float> out({1, 1, 4, 4}, LETHE_RT_F32);
  std::vector<double> scales = {1, 1, 2, 2};
  lethe_rt_resize_options nearest =
      options(LETHE_RT_RESIZE_NEAREST, LETHE_RT_ASYMMETRIC);
  nearest.nearest = LETHE_RT_FLOOR;
  lethe_rt_tensor xv = x.view(), ov = out.view();
  ASSERT_EQ(lethe_rt_resize(context, &xv, scales.data(), &nearest, &ov),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out.values, (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4,
                                            3, 3, 4, 4}));
  // Downsampling 4 -> 2 with half_pixel: x_orig = (i + 0.5) * 2 - 0.5 =
  // 0.5 and 2.5, rounded (prefer floor) to 0 and 2. Integers work too.
  OwnedTensor<int64_t> row({1, 4}, LETHE_RT_I64, {10, 11, 12, 13});
  OwnedTensor<int64_t> half({1, 2}, LETHE_RT_I64);
  scales = {1, 0.5};
  nearest = options(LETHE_RT_RESIZE_NEAREST, LETHE_RT_HALF_PIXEL);
  lethe_rt_tensor rv = row.view(), hv = half.view();
  ASSERT_EQ(lethe_rt_resize(context, &rv, scales.data(), &nearest, &hv),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(half.values, (std::vector<int64_t>{10, 12}));
}

TEST_F(ResizeTest, Linear) {
  // half_pixel: the coordinates -0.25, 0.25, 0.75, 1.25; the outer ones
  // repeat the edge.
  OwnedTensor<float> x({2}, LETHE_RT_F32, {1, 2});
  OwnedTensor<float> out({4}, LETHE_RT_F32);
  std::vector<double> scales = {2};
  lethe_rt_resize_options linear =
      options(LETHE_RT_RESIZE_LINEAR, LETHE_RT_HALF_PIXEL);
  lethe_rt_tensor xv = x.view(), ov = out.view();
  ASSERT_EQ(lethe_rt_resize(context, &xv, scales.data(), &linear, &ov),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out.values, (std::vector<float>{1, 1.25, 1.75, 2}));
  // align_corners keeps the first and last elements in place.
  OwnedTensor<double> y({3}, LETHE_RT_F64, {1, 2, 3});
  OwnedTensor<double> wide({5}, LETHE_RT_F64);
  scales = {5.0 / 3.0};
  linear.coordinates = LETHE_RT_ALIGN_CORNERS;
  lethe_rt_tensor yv = y.view(), wv = wide.view();
  ASSERT_EQ(lethe_rt_resize(context, &yv, scales.data(), &linear, &wv),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(wide.values, (std::vector<double>{1, 1.5, 2, 2.5, 3}));
}

TEST_F(ResizeTest, Cubic) {
  OwnedTensor<float> x({2, 4}, LETHE_RT_F32, {1, 2, 4, 8, 3, 0, -1, 5});
  OwnedTensor<float> out({2, 6}, LETHE_RT_F32);
  std::vector<double> scales = {1, 1.5};
  lethe_rt_resize_options cubic =
      options(LETHE_RT_RESIZE_CUBIC, LETHE_RT_HALF_PIXEL);
  lethe_rt_tensor xv = x.view(), ov = out.view();
  ASSERT_EQ(lethe_rt_resize(context, &xv, scales.data(), &cubic, &ov),
            LETHE_RT_OK)
      << lastError();
  expectNear(out.values, {0.913194444444444, 1.3125, 2.3043981481481413,
                          3.3831018518518503, 6.1875, 8.347222222222225,
                          3.260416666666664, 1.59375, -0.5081018518518561,
                          -1.4293981481481484, 1.90625, 5.520833333333335});
  // a = -0.5 and the points outside the input weigh nothing.
  cubic.cubic_coeff_a = -0.5;
  cubic.exclude_outside = 1;
  ASSERT_EQ(lethe_rt_resize(context, &xv, scales.data(), &cubic, &ov),
            LETHE_RT_OK)
      << lastError();
  expectNear(out.values,
             {0.9342105263157896, 1.3529411764705883, 2.2523148148148184,
              3.5393518518518525, 6.235294117647059, 8.263157894736842,
              3.197368421052631, 1.647058823529412, -0.36342592592592265,
              -1.261574074074078, 2.1176470588235294, 5.394736842105265});
}

TEST_F(ResizeTest, CropAndResizeExtrapolates) {
  // roi [0.5, 1.5] of 5 elements: coordinates 2, 4 and 6, the last outside.
  OwnedTensor<float> x({5}, LETHE_RT_F32, {1, 2, 3, 4, 5});
  OwnedTensor<float> out({3}, LETHE_RT_F32);
  std::vector<double> scales = {3.0 / 5.0}, roi = {0.5, 1.5};
  lethe_rt_resize_options crop =
      options(LETHE_RT_RESIZE_LINEAR, LETHE_RT_TF_CROP_AND_RESIZE);
  crop.roi = roi.data();
  crop.extrapolation_value = 10;
  lethe_rt_tensor xv = x.view(), ov = out.view();
  ASSERT_EQ(lethe_rt_resize(context, &xv, scales.data(), &crop, &ov),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out.values, (std::vector<float>{3, 5, 10}));
  crop.mode = LETHE_RT_RESIZE_NEAREST;
  ASSERT_EQ(lethe_rt_resize(context, &xv, scales.data(), &crop, &ov),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out.values, (std::vector<float>{3, 5, 10}));
}

TEST_F(ResizeTest, RejectsBadOptions) {
  OwnedTensor<int64_t> x({2}, LETHE_RT_I64, {1, 2});
  OwnedTensor<int64_t> out({4}, LETHE_RT_I64);
  std::vector<double> scales = {2};
  lethe_rt_resize_options linear =
      options(LETHE_RT_RESIZE_LINEAR, LETHE_RT_HALF_PIXEL);
  lethe_rt_tensor xv = x.view(), ov = out.view();
  EXPECT_EQ(lethe_rt_resize(context, &xv, scales.data(), &linear, &ov),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_resize: linear and cubic resize need a float dtype, x "
            "is i64");
  lethe_rt_resize_options crop =
      options(LETHE_RT_RESIZE_NEAREST, LETHE_RT_TF_CROP_AND_RESIZE);
  EXPECT_EQ(lethe_rt_resize(context, &xv, scales.data(), &crop, &ov),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_resize: tf_crop_and_resize needs a region "
                         "of interest (roi)");
  EXPECT_EQ(lethe_rt_resize(context, &xv, scales.data(), nullptr, &ov),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_resize: options is missing");
}

} // namespace
