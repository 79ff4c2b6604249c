//===- ResizeTest.cpp - ONNX Resize on CUDA -------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_resize and lethe_rt_resize_grad on the CUDA backend: bit for bit
// against the CPU backend's algorithm, written out here (one pass per dim
// that is not the identity, in double, over the taps of
// common/ResizeSampling.h, which the CPU backend uses), for each mode,
// coordinate transformation, rounding and float dtype, nearest for integer
// and i1 elements too; against ONNX's reference values; the gradient as the
// adjoint of the resize; the same bits on every run; and the errors, with
// the CPU backend's words.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"
#include "ResizeCases.h"
#include "StorageValues.h"
#include "common/ResizeSampling.h"

#include <cstring>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using ResizeTest = CudaRuntimeTest;

/// The CPU backend's resize of `values` (x's shape `in`) into `out`'s shape
/// in double: for each dim whose taps are not the identity, a pass in which
/// each output row is 0 plus each tap's weight times the input row it reads,
/// in tap order (or the extrapolation value). With `adjoint`, the
/// gradient's passes instead, from `values` of out's shape to x's: each
/// output row, times each tap's weight, added to the input row the tap
/// reads, rows in order.
std::vector<double>
resizePasses(std::vector<double> values, const std::vector<int64_t> &in,
             const std::vector<int64_t> &out, const double *scales,
             const lethe_rt_resize_options &options, bool adjoint) {
  lethe_rt_tensor x{nullptr, LETHE_RT_F64, static_cast<int32_t>(in.size()),
                    const_cast<int64_t *>(in.data())};
  lethe_rt_tensor y{nullptr, LETHE_RT_F64, static_cast<int32_t>(out.size()),
                    const_cast<int64_t *>(out.data())};
  std::vector<int64_t> shape = adjoint ? out : in;
  ResizeSampling sampling = resizeSamplingOf(options);
  for (size_t dim = 0; dim < in.size(); ++dim) {
    std::vector<Taps> taps =
        tapsOfDim(sampling, resizeDimOf(options, x, y, scales, dim));
    if (isIdentity(taps, in[dim]))
      continue;
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < dim; ++d)
      outer *= shape[d];
    for (size_t d = dim + 1; d < shape.size(); ++d)
      inner *= shape[d];
    int64_t from = shape[dim], to = adjoint ? in[dim] : out[dim];
    std::vector<double> next(outer * to * inner, 0.0);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < out[dim]; ++i) {
        const Taps &t = taps[i];
        double *outRow = adjoint ? nullptr : &next[(o * to + i) * inner];
        if (t.outside) {
          if (!adjoint)
            std::fill(outRow, outRow + inner, options.extrapolation_value);
          continue;
        }
        for (int k = 0; k < t.count; ++k) {
          double *target =
              adjoint ? &next[(o * to + t.index[k]) * inner] : outRow;
          const double *source =
              &values[(o * from + (adjoint ? i : t.index[k])) * inner];
          for (int64_t j = 0; j < inner; ++j)
            target[j] += t.weight[k] * source[j];
        }
      }
    values.swap(next);
    shape[dim] = to;
  }
  return values;
}

/// `values` rounded to storage type T, as the kernels store them.
template <typename T> std::vector<T> stored(const std::vector<double> &values) {
  std::vector<T> result(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    store<T>(result.data(), i, values[i]);
  return result;
}

/// Linear or cubic resizes and their gradients of float storage type T, for
/// every case and option, against the CPU backend's passes, bit for bit.
template <typename T>
void checkInterpolation(ResizeTest &test, lethe_rt_dtype dtype,
                        lethe_rt_resize_mode mode) {
  uint64_t seed = 10;
  for (const ResizeCase &c : resizeCases()) {
    std::vector<double> roi = regionOfInterest(c.in.size());
    for (const lethe_rt_resize_options &options :
         resizeOptionsFor(mode, roi.data())) {
      std::string what = describeResize(c, options, dtype);
      uint64_t saved = test.nextOffset;
      std::vector<T> xValues = randomStorage<T>(countOf(c.in), seed++, -4, 4);
      std::vector<T> dyValues = randomStorage<T>(countOf(c.out), seed++, -4, 4);
      lethe_rt_tensor x = test.place<T>(c.in, dtype, xValues);
      lethe_rt_tensor out = test.place<T>(c.out, dtype);
      lethe_rt_tensor dy = test.place<T>(c.out, dtype, dyValues);
      lethe_rt_tensor dx = test.place<T>(c.in, dtype);
      ASSERT_EQ(
          lethe_rt_resize(test.context, &x, c.scales.data(), &options, &out),
          LETHE_RT_OK)
          << test.lastError();
      expectSameBits(test.read<T>(out),
                     stored<T>(resizePasses(doublesOf(xValues), c.in, c.out,
                                            c.scales.data(), options,
                                            /*adjoint=*/false)),
                     what);
      ASSERT_EQ(lethe_rt_resize_grad(test.context, &dy, c.scales.data(),
                                     &options, &dx),
                LETHE_RT_OK)
          << test.lastError();
      expectSameBits(test.read<T>(dx),
                     stored<T>(resizePasses(doublesOf(dyValues), c.in, c.out,
                                            c.scales.data(), options,
                                            /*adjoint=*/true)),
                     what + " (gradient)");
      test.nextOffset = saved;
    }
  }
}

TEST_F(ResizeTest, LinearF32) {
  checkInterpolation<float>(*this, LETHE_RT_F32, LETHE_RT_RESIZE_LINEAR);
}
TEST_F(ResizeTest, LinearF64) {
  checkInterpolation<double>(*this, LETHE_RT_F64, LETHE_RT_RESIZE_LINEAR);
}
TEST_F(ResizeTest, LinearF16) {
  checkInterpolation<Half>(*this, LETHE_RT_F16, LETHE_RT_RESIZE_LINEAR);
}
TEST_F(ResizeTest, CubicF32) {
  checkInterpolation<float>(*this, LETHE_RT_F32, LETHE_RT_RESIZE_CUBIC);
}
TEST_F(ResizeTest, CubicF64) {
  checkInterpolation<double>(*this, LETHE_RT_F64, LETHE_RT_RESIZE_CUBIC);
}
TEST_F(ResizeTest, CubicBF16) {
  checkInterpolation<BFloat16>(*this, LETHE_RT_BF16, LETHE_RT_RESIZE_CUBIC);
}
TEST_F(ResizeTest, NearestGradientF32) {
  checkInterpolation<float>(*this, LETHE_RT_F32, LETHE_RT_RESIZE_NEAREST);
}

/// Nearest resizes of storage type T (copied as words), against the CPU
/// backend's taps.
template <typename T>
void checkNearest(ResizeTest &test, lethe_rt_dtype dtype) {
  for (const ResizeCase &c : resizeCases()) {
    std::vector<double> roi = regionOfInterest(c.in.size());
    for (const lethe_rt_resize_options &options :
         resizeOptionsFor(LETHE_RT_RESIZE_NEAREST, roi.data())) {
      uint64_t saved = test.nextOffset;
      std::vector<T> xValues(countOf(c.in));
      for (size_t i = 0; i < xValues.size(); ++i)
        xValues[i] = static_cast<T>(dtype == LETHE_RT_I1 ? i % 2 : i + 1);
      lethe_rt_tensor x = test.place<T>(c.in, dtype, xValues);
      lethe_rt_tensor out = test.place<T>(c.out, dtype);
      ASSERT_EQ(
          lethe_rt_resize(test.context, &x, c.scales.data(), &options, &out),
          LETHE_RT_OK)
          << test.lastError();
      lethe_rt_tensor xv{nullptr, dtype, x.rank, x.shape};
      ResizeSampling sampling = resizeSamplingOf(options);
      std::vector<std::vector<Taps>> taps;
      for (int32_t dim = 0; dim < x.rank; ++dim)
        taps.push_back(tapsOfDim(
            sampling, resizeDimOf(options, xv, out, c.scales.data(), dim)));
      T extrapolated;
      uint64_t element =
          extrapolationElement(dtype, options.extrapolation_value);
      std::memcpy(&extrapolated, &element, sizeof(T));
      std::vector<T> expected;
      for (int64_t i = 0; i < countOf(c.out); ++i) {
        int64_t rest = i, source = 0, stride = 1;
        bool outside = false;
        for (size_t dim = c.out.size(); dim-- > 0;) {
          const Taps &t = taps[dim][rest % c.out[dim]];
          rest /= c.out[dim];
          outside |= t.outside;
          source += t.outside ? 0 : t.index[0] * stride;
          stride *= c.in[dim];
        }
        expected.push_back(outside ? extrapolated : xValues[source]);
      }
      EXPECT_EQ(test.read<T>(out), expected)
          << describeResize(c, options, dtype);
      test.nextOffset = saved;
    }
  }
}

TEST_F(ResizeTest, NearestI1) { checkNearest<uint8_t>(*this, LETHE_RT_I1); }
TEST_F(ResizeTest, NearestI8) { checkNearest<int8_t>(*this, LETHE_RT_I8); }
TEST_F(ResizeTest, NearestI32) { checkNearest<int32_t>(*this, LETHE_RT_I32); }
TEST_F(ResizeTest, NearestF64) { checkNearest<double>(*this, LETHE_RT_F64); }

TEST_F(ResizeTest, CubicMatchesOnnx) {
  // onnx/backend/test/case/node/resize.py (interpolate_nd), as the CPU
  // backend's test expects.
  lethe_rt_tensor x =
      place<float>({2, 4}, LETHE_RT_F32, {1, 2, 4, 8, 3, 0, -1, 5});
  lethe_rt_tensor out = place<float>({2, 6}, LETHE_RT_F32);
  std::vector<double> scales{1, 1.5};
  lethe_rt_resize_options cubic{};
  cubic.mode = LETHE_RT_RESIZE_CUBIC;
  cubic.coordinates = LETHE_RT_HALF_PIXEL;
  cubic.cubic_coeff_a = -0.75;
  ASSERT_EQ(lethe_rt_resize(context, &x, scales.data(), &cubic, &out),
            LETHE_RT_OK)
      << lastError();
  expectNear(read<float>(out),
             {0.913194444444444, 1.3125, 2.3043981481481413, 3.3831018518518503,
              6.1875, 8.347222222222225, 3.260416666666664, 1.59375,
              -0.5081018518518561, -1.4293981481481484, 1.90625,
              5.520833333333335},
             "cubic");
}

TEST_F(ResizeTest, GradientIsTheAdjointAndRepeatsItsBits) {
  // <resize(x), dy> = <x, resize_grad(dy)>, for a large 2-d cubic upsample
  // (many blocks, many taps per input element).
  std::vector<int64_t> in{2, 3, 24, 20}, out{2, 3, 48, 50};
  std::vector<double> scales{1, 1, 2, 2.5};
  lethe_rt_resize_options cubic{};
  cubic.mode = LETHE_RT_RESIZE_CUBIC;
  cubic.coordinates = LETHE_RT_PYTORCH_HALF_PIXEL;
  cubic.cubic_coeff_a = -0.75;
  std::vector<double> xValues = randomValues<double>(countOf(in), 1);
  std::vector<double> dyValues = randomValues<double>(countOf(out), 2);
  lethe_rt_tensor x = place<double>(in, LETHE_RT_F64, xValues);
  lethe_rt_tensor y = place<double>(out, LETHE_RT_F64);
  lethe_rt_tensor dy = place<double>(out, LETHE_RT_F64, dyValues);
  lethe_rt_tensor dx = place<double>(in, LETHE_RT_F64);
  ASSERT_EQ(lethe_rt_resize(context, &x, scales.data(), &cubic, &y),
            LETHE_RT_OK)
      << lastError();
  ASSERT_EQ(lethe_rt_resize_grad(context, &dy, scales.data(), &cubic, &dx),
            LETHE_RT_OK)
      << lastError();
  std::vector<double> yValues = read<double>(y), dxValues = read<double>(dx);
  double forward = 0, backward = 0;
  for (size_t i = 0; i < yValues.size(); ++i)
    forward += yValues[i] * dyValues[i];
  for (size_t i = 0; i < dxValues.size(); ++i)
    backward += xValues[i] * dxValues[i];
  EXPECT_NEAR(forward, backward, 1e-9 * std::max(1.0, std::fabs(forward)));
  EXPECT_EQ(dxValues, resizePasses(dyValues, in, out, scales.data(), cubic,
                                   /*adjoint=*/true));
  ASSERT_EQ(lethe_rt_resize_grad(context, &dy, scales.data(), &cubic, &dx),
            LETHE_RT_OK)
      << lastError();
  expectSameBits(read<double>(dx), dxValues, "resize_grad run 2");
}

TEST_F(ResizeTest, InvalidArgumentsNameTheKernel) {
  lethe_rt_tensor x = place<int64_t>({2}, LETHE_RT_I64, {1, 2});
  lethe_rt_tensor out = place<int64_t>({4}, LETHE_RT_I64);
  std::vector<double> scales{2};
  lethe_rt_resize_options linear{};
  linear.mode = LETHE_RT_RESIZE_LINEAR;
  EXPECT_EQ(lethe_rt_resize(context, &x, scales.data(), &linear, &out),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_resize: linear and cubic resize need a "
                         "float dtype, x is i64");
  lethe_rt_resize_options crop{};
  crop.coordinates = LETHE_RT_TF_CROP_AND_RESIZE;
  EXPECT_EQ(lethe_rt_resize(context, &x, scales.data(), &crop, &out),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_resize: tf_crop_and_resize needs a region "
                         "of interest (roi)");
  EXPECT_EQ(lethe_rt_resize(context, &x, scales.data(), nullptr, &out),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_resize: options is missing");
  std::vector<double> negative{-1};
  lethe_rt_resize_options nearest{};
  EXPECT_EQ(lethe_rt_resize(context, &x, negative.data(), &nearest, &out),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_resize: scale -1 of dim 0 is not positive");
  lethe_rt_tensor alias = out;
  alias.shape = x.shape;
  EXPECT_EQ(lethe_rt_resize(context, &out, scales.data(), &nearest, &alias),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_resize: out overlaps x");
  lethe_rt_tensor dy = place<float>({4}, LETHE_RT_F32);
  lethe_rt_tensor dx = place<float>({2}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_resize_grad(context, &dy, scales.data(), nullptr, &dx),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_resize_grad: options is missing");
  EXPECT_EQ(lethe_rt_resize_grad(context, &out, scales.data(), &linear, &x),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_resize_grad: dy must be f16, bf16, f32 or "
                         "f64, got i64");
}

} // namespace
