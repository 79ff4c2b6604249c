//===- ResizeSamplingTest.cpp - The CUDA resize's arithmetic on the host --===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA backend's resize computes each output element on its own
// (resizeNearestSource, resizeInterpolatedAt) and each input-gradient
// element from the forward's taps grouped by the input index they read
// (resizeTapSlot, SourceGroups, resizeGradAt), where the CPU backend resizes
// one dim at a time. These tests run those functions on the host, with the
// geometry the CUDA entry points build, over every element of many resizes
// (each mode, coordinate transformation, nearest rounding, exclude_outside
// and cubic coefficient; up, down and non-integer scales, lengths of 1,
// regions of interest reaching outside the input, 1 to 3 resized dims) and
// expect the CPU backend's bits.
//
//===----------------------------------------------------------------------===//

#include "common/ResizeSampling.h"
#include "HostSourceGroups.h"
#include "ResizeCases.h"
#include "TypedTensor.h"

#include <cstring>
#include <string>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

/// lethe_rt_resize's out as the CUDA kernels compute it.
std::vector<uint8_t> resizeOnHost(const ResizeGeometry &geometry,
                                  const TypedTensor &x, const TypedTensor &out,
                                  const lethe_rt_resize_options &options) {
  std::vector<uint8_t> bytes(out.bytes.size());
  size_t size = lethe_rt_dtype_size(x.dtype);
  if (options.mode == LETHE_RT_RESIZE_NEAREST) {
    uint64_t extrapolated =
        extrapolationElement(x.dtype, options.extrapolation_value);
    for (int64_t i = 0; i < out.size(); ++i) {
      int64_t source = resizeNearestSource(geometry, i);
      std::memcpy(bytes.data() + i * size,
                  source < 0 ? reinterpret_cast<const uint8_t *>(&extrapolated)
                             : x.bytes.data() + source * size,
                  size);
    }
    return bytes;
  }
  dispatchFloat(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < out.size(); ++i)
      store<T>(bytes.data(), i,
               resizeInterpolatedAt<T>(geometry, x.bytes.data(), i));
  });
  return bytes;
}

/// lethe_rt_resize_grad's dx as the CUDA kernels compute it, `geometry`
/// being that of dx (the forward's input) into dy.
std::vector<uint8_t> resizeGradOnHost(const ResizeGeometry &geometry,
                                      const TypedTensor &dy,
                                      const TypedTensor &dx) {
  // Per level, the taps grouped by the input index they read.
  std::vector<HostSourceGroups> groups;
  std::vector<std::vector<double>> weights;
  std::vector<ResizeGradLevel> levels;
  int perIndex = geometry.sampling.tapsPerIndex();
  for (int32_t l = 0; l < geometry.levels; ++l) {
    const ResizeDim &dim = geometry.dims[geometry.levelDims[l]];
    std::vector<uint64_t> keys(dim.outLength * perIndex);
    weights.emplace_back(keys.size());
    for (size_t slot = 0; slot < keys.size(); ++slot)
      resizeTapSlot(geometry.sampling, dim, slot, keys[slot],
                    weights.back()[slot]);
    groups.emplace_back(keys, dim.inLength);
  }
  for (int32_t l = 0; l < geometry.levels; ++l)
    levels.push_back({weights[l].data(), groups[l].view()});
  std::vector<uint8_t> bytes(dx.bytes.size());
  dispatchFloat(dx.dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < dx.size(); ++i)
      store<T>(bytes.data(), i,
               resizeGradAt<T>(geometry, levels.data(), dy.bytes.data(), i));
  });
  return bytes;
}

/// Runs every case and option of `mode` in each of `dtypes` through the CPU
/// backend and the host-side CUDA arithmetic; returns how many resizes had
/// at least two dims that are not the identity.
int checkMode(lethe_rt_context *context, lethe_rt_resize_mode mode,
              const std::vector<lethe_rt_dtype> &dtypes) {
  int multiLevel = 0;
  uint64_t seed = 1;
  for (const ResizeCase &c : resizeCases()) {
    std::vector<double> roi = regionOfInterest(c.in.size());
    for (const lethe_rt_resize_options &options :
         resizeOptionsFor(mode, roi.data())) {
      for (lethe_rt_dtype dtype : dtypes) {
        std::string what = describeResize(c, options, dtype);
        TypedTensor x = randomTensor(c.in, dtype, seed++, -4, 4);
        TypedTensor out(c.out, dtype);
        lethe_rt_tensor xv = x.view(), ov = out.view();
        EXPECT_EQ(lethe_rt_resize(context, &xv, c.scales.data(), &options, &ov),
                  LETHE_RT_OK)
            << lethe_rt_last_error(context);
        ResizeGeometry geometry;
        EXPECT_TRUE(
            makeResizeGeometry(options, xv, ov, c.scales.data(), geometry));
        multiLevel += geometry.levels >= 2;
        EXPECT_EQ(resizeOnHost(geometry, x, out, options), out.bytes) << what;
        if (!isFloat(dtype))
          continue;

        TypedTensor dy = randomTensor(c.out, dtype, seed++, -4, 4);
        TypedTensor dx(c.in, dtype);
        lethe_rt_tensor dyv = dy.view(), dxv = dx.view();
        EXPECT_EQ(lethe_rt_resize_grad(context, &dyv, c.scales.data(), &options,
                                       &dxv),
                  LETHE_RT_OK)
            << lethe_rt_last_error(context);
        ResizeGeometry gradGeometry;
        EXPECT_TRUE(makeResizeGeometry(options, dxv, dyv, c.scales.data(),
                                       gradGeometry));
        EXPECT_EQ(resizeGradOnHost(gradGeometry, dy, dx), dx.bytes)
            << what << " (gradient)";
      }
    }
  }
  return multiLevel;
}

using ResizeSamplingTest = RuntimeTest;

TEST_F(ResizeSamplingTest, NearestMatchesTheCpuBackend) {
  EXPECT_GT(checkMode(context, LETHE_RT_RESIZE_NEAREST,
                      {LETHE_RT_F32, LETHE_RT_F64, LETHE_RT_F16, LETHE_RT_BF16,
                       LETHE_RT_I32, LETHE_RT_I8, LETHE_RT_I1}),
            0);
}

TEST_F(ResizeSamplingTest, LinearMatchesTheCpuBackend) {
  EXPECT_GT(checkMode(context, LETHE_RT_RESIZE_LINEAR, floatDtypes()), 0);
}

TEST_F(ResizeSamplingTest, CubicMatchesTheCpuBackend) {
  EXPECT_GT(checkMode(context, LETHE_RT_RESIZE_CUBIC, floatDtypes()), 0);
}

TEST_F(ResizeSamplingTest, IdentityDimsAreNotLevels) {
  // Scale 1 with half_pixel reads each index with weight 1: no pass, so the
  // batch and channel dims cost nothing and keep every bit (even -0 and NaN).
  lethe_rt_resize_options options{};
  options.mode = LETHE_RT_RESIZE_CUBIC;
  options.cubic_coeff_a = -0.75;
  std::vector<int64_t> in{2, 3, 4, 4}, out{2, 3, 8, 6};
  std::vector<double> scales{1, 1, 2, 1.5};
  TypedTensor x(in, LETHE_RT_F32), y(out, LETHE_RT_F32);
  lethe_rt_tensor xv = x.view(), yv = y.view();
  ResizeGeometry geometry;
  ASSERT_TRUE(makeResizeGeometry(options, xv, yv, scales.data(), geometry));
  EXPECT_EQ(geometry.levels, 2);
  EXPECT_EQ(geometry.levelDims[0], 2);
  EXPECT_EQ(geometry.levelDims[1], 3);
  // A rank past the maps' limit is refused (the CUDA backend says so).
  std::vector<int64_t> deep(maxBroadcastRank + 1, 1);
  std::vector<double> ones(deep.size(), 1);
  TypedTensor wide(deep, LETHE_RT_F32);
  lethe_rt_tensor wv = wide.view();
  EXPECT_FALSE(makeResizeGeometry(options, wv, wv, ones.data(), geometry));
}

TEST_F(ResizeSamplingTest, TapsAgreeWithOnnxOnKnownPoints) {
  // half_pixel, linear, 2 -> 4: coordinates -0.25, 0.25, 0.75, 1.25; an
  // integer coordinate takes its left neighbour (fraction 1).
  ResizeSampling linear;
  linear.mode = LETHE_RT_RESIZE_LINEAR;
  ResizeDim dim;
  dim.inLength = 2;
  dim.outLength = 4;
  dim.scale = 2;
  Taps first = resizeTaps(linear, dim, 0);
  EXPECT_EQ(first.count, 2);
  EXPECT_EQ(first.index[0], 0); // -1 clamped
  EXPECT_EQ(first.index[1], 0);
  EXPECT_EQ(first.weight[0], 0.25);
  EXPECT_EQ(first.weight[1], 0.75);
  linear.coordinates = LETHE_RT_ASYMMETRIC;
  Taps onPoint = resizeTaps(linear, dim, 2); // x = 1
  EXPECT_EQ(onPoint.index[0], 0);
  EXPECT_EQ(onPoint.index[1], 1);
  EXPECT_EQ(onPoint.weight[1], 1.0);
  // tf_crop_and_resize outside [0, length - 1] reads nothing.
  ResizeSampling crop = linear;
  crop.coordinates = LETHE_RT_TF_CROP_AND_RESIZE;
  dim.roiStart = 0.5;
  dim.roiEnd = 1.5;
  dim.inLength = 5;
  dim.outLength = 3;
  dim.scale = 0.6;
  EXPECT_FALSE(resizeTaps(crop, dim, 1).outside); // x = 4
  EXPECT_TRUE(resizeTaps(crop, dim, 2).outside);  // x = 6
  uint64_t key = 0;
  double weight = 1;
  resizeTapSlot(crop, dim, 2 * 2 + 1, key, weight);
  EXPECT_EQ(key, 5u);
  EXPECT_EQ(weight, 0.0);
}

} // namespace
