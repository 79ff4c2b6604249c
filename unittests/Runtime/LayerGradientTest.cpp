//===- LayerGradientTest.cpp - Gradient kernels of the layer ops ----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The gradient kernels of convolution, pooling, normalization, resize, slice
// and gather through the C ABI: the cases their finite-difference checks
// (unittests/Autodiff, in f64) do not reach — which of equal maxima gets
// max pooling's gradient, repeated gather indices, the low-precision dtypes
// against f64 — and the argument errors.
//
//===----------------------------------------------------------------------===//

#include "TypedTensor.h"

#include <cmath>
#include <string>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using LayerGradientTest = RuntimeTest;

void expectError(lethe_rt_context *context, lethe_rt_status status,
                 const std::string &message) {
  EXPECT_EQ(status, LETHE_RT_ERROR);
  EXPECT_EQ(std::string(lethe_rt_last_error(context)), message);
}

const int64_t kOnes[] = {1, 1, 1, 1};
const int64_t kZeros[] = {0, 0, 0, 0, 0, 0};

TEST_F(LayerGradientTest, MaxPoolGradGoesToTheFirstMaximumAndAccumulates) {
  // One 2x2 window with two equal maxima: the first (row-major) wins.
  TypedTensor x({1, 1, 2, 2}, LETHE_RT_F32, {1, 3, 3, 2});
  TypedTensor dy({1, 1, 1, 1}, LETHE_RT_F32, {5});
  TypedTensor dx({1, 1, 2, 2}, LETHE_RT_F32);
  lethe_rt_tensor xv = x.view(), dyv = dy.view(), dxv = dx.view();
  const int64_t kernel[] = {2, 2};
  ASSERT_EQ(lethe_rt_max_pool_grad(context, &dyv, &xv, kernel, kOnes, kZeros,
                                   kOnes, &dxv),
            LETHE_RT_OK);
  EXPECT_EQ(dx.values(), (std::vector<double>{0, 5, 0, 0}));

  // Overlapping windows that share their maximum add their gradients.
  TypedTensor row({1, 1, 1, 3}, LETHE_RT_F32, {1, 4, 2});
  TypedTensor drow({1, 1, 1, 2}, LETHE_RT_F32, {0.5, 0.25});
  TypedTensor dxrow({1, 1, 1, 3}, LETHE_RT_F32);
  lethe_rt_tensor rv = row.view(), drv = drow.view(), dxrv = dxrow.view();
  const int64_t pair[] = {1, 2};
  ASSERT_EQ(lethe_rt_max_pool_grad(context, &drv, &rv, pair, kOnes, kZeros,
                                   kOnes, &dxrv),
            LETHE_RT_OK);
  EXPECT_EQ(dxrow.values(), (std::vector<double>{0, 0.75, 0}));
}

TEST_F(LayerGradientTest, GatherGradSumsRepeatedIndices) {
  for (lethe_rt_dtype dtype : floatDtypes()) {
    SCOPED_TRACE(dtypeName(dtype));
    TypedTensor dy({4, 2}, dtype, {1, 2, 3, 4, 5, 6, 7, 8});
    TypedTensor indices({4}, LETHE_RT_I64, {2, 0, 2, -1});
    TypedTensor dx({3, 2}, dtype);
    lethe_rt_tensor dyv = dy.view(), iv = indices.view(), dxv = dx.view();
    ASSERT_EQ(lethe_rt_gather_grad(context, &dyv, &iv, 0, &dxv), LETHE_RT_OK);
    // Row 2 is gathered at positions 0, 2 and 3 (-1).
    EXPECT_EQ(dx.values(), (std::vector<double>{3, 4, 0, 0, 13, 16}));
  }
}

TEST_F(LayerGradientTest, ClipGradPassesAtTheBoundsAndNotNaN) {
  TypedTensor x({5}, LETHE_RT_F32, {-1, 0, 0.5, 1, 2});
  x.set(4, NAN);
  TypedTensor dy({5}, LETHE_RT_F32, {1, 2, 3, 4, 5}), dx({5}, LETHE_RT_F32);
  lethe_rt_tensor xv = x.view(), dyv = dy.view(), dxv = dx.view();
  ASSERT_EQ(lethe_rt_clip_grad(context, &dyv, &xv, 0, 1, &dxv), LETHE_RT_OK);
  EXPECT_EQ(dx.values(), (std::vector<double>{0, 2, 3, 4, 0}));
  ASSERT_EQ(lethe_rt_clip_grad(context, &dyv, &xv, -INFINITY, 0.5, &dxv),
            LETHE_RT_OK);
  EXPECT_EQ(dx.values(), (std::vector<double>{1, 2, 3, 0, 0}));
}

TEST_F(LayerGradientTest, ReduceMaxGradSharesAmongTies) {
  // Rows [1 3 3] and [2 0 1]: the first has two maxima.
  TypedTensor x({2, 3}, LETHE_RT_F32, {1, 3, 3, 2, 0, 1});
  TypedTensor y({2}, LETHE_RT_F32, {3, 2}), dy({2}, LETHE_RT_F32, {4, 5});
  TypedTensor dx({2, 3}, LETHE_RT_F32);
  lethe_rt_tensor xv = x.view(), yv = y.view(), dyv = dy.view(),
                  dxv = dx.view();
  const int64_t axis[] = {1};
  ASSERT_EQ(lethe_rt_reduce_max_grad(context, &dyv, &xv, &yv, axis, 1, &dxv),
            LETHE_RT_OK);
  EXPECT_EQ(dx.values(), (std::vector<double>{0, 2, 2, 5, 0, 0}));
  const int64_t bad[] = {2};
  expectError(context,
              lethe_rt_reduce_max_grad(context, &dyv, &xv, &yv, bad, 1, &dxv),
              "lethe_rt_reduce_max_grad: axis 2 is out of range for x (2x3)");
}

TEST_F(LayerGradientTest, SliceGradScattersIntoZeros) {
  TypedTensor dy({2}, LETHE_RT_F64, {7, 9});
  TypedTensor dx({5}, LETHE_RT_F64);
  dx.set(0, 1); // overwritten
  lethe_rt_tensor dyv = dy.view(), dxv = dx.view();
  const int64_t start[] = {4}, step[] = {-3};
  ASSERT_EQ(lethe_rt_slice_grad(context, &dyv, start, step, &dxv), LETHE_RT_OK);
  EXPECT_EQ(dx.values(), (std::vector<double>{0, 9, 0, 0, 7}));
}

TEST_F(LayerGradientTest, LowPrecisionMatchesF64) {
  // Each kernel on rounded copies of the same inputs: the result within
  // the dtype's tolerance of the f64 one.
  const int64_t strides[] = {2, 2}, pads[] = {1, 0, 1, 1};
  for (lethe_rt_dtype dtype : {LETHE_RT_F16, LETHE_RT_BF16, LETHE_RT_F32}) {
    SCOPED_TRACE(dtypeName(dtype));
    auto run = [&](lethe_rt_dtype as) {
      TypedTensor x = randomTensor({2, 4, 6, 6}, as, 1);
      TypedTensor dy = randomTensor({2, 4, 3, 3}, as, 2);
      TypedTensor dw({4, 2, 3, 3}, as);
      lethe_rt_tensor xv = x.view(), dyv = dy.view(), dwv = dw.view();
      EXPECT_EQ(lethe_rt_conv_grad_weight(context, &xv, &dyv, strides, pads,
                                          kOnes, 2, &dwv, nullptr),
                LETHE_RT_OK);
      TypedTensor scale = randomTensor({4}, as, 3);
      TypedTensor mean = randomTensor({4}, as, 4, -0.5, 0.5);
      TypedTensor inv = randomTensor({4}, as, 5, 0.5, 2);
      TypedTensor dyn = randomTensor({2, 4, 6, 6}, as, 6);
      TypedTensor dx({2, 4, 6, 6}, as), ds({4}, as), db({4}, as);
      lethe_rt_tensor sv = scale.view(), mv = mean.view(), iv = inv.view(),
                      dynv = dyn.view(), dxv = dx.view(), dsv = ds.view(),
                      dbv = db.view();
      EXPECT_EQ(lethe_rt_batch_norm_grad(context, &dynv, &xv, &sv, &mv, &iv,
                                         &dxv, &dsv, &dbv),
                LETHE_RT_OK);
      TypedTensor probabilities = randomTensor({3, 5}, as, 7, 0, 1);
      TypedTensor dsm = randomTensor({3, 5}, as, 8), dsx({3, 5}, as);
      lethe_rt_tensor pv = probabilities.view(), dsmv = dsm.view(),
                      dsxv = dsx.view();
      EXPECT_EQ(lethe_rt_softmax_grad(context, &dsmv, &pv, 1, 0, &dsxv),
                LETHE_RT_OK);
      std::vector<double> all = dw.values();
      for (double v : dsx.values())
        all.push_back(v);
      for (const TypedTensor *t : {&dx, &ds, &db})
        for (double v : t->values())
          all.push_back(v);
      return all;
    };
    std::vector<double> expected = run(LETHE_RT_F64);
    expectAllNear(run(dtype), expected, toleranceFor(dtype) * 10);
  }
}

TEST_F(LayerGradientTest, RejectBadArguments) {
  TypedTensor x({2, 4, 6, 6}, LETHE_RT_F32), dy({2, 4, 3, 3}, LETHE_RT_F32),
      dw({4, 4, 3, 3}, LETHE_RT_F32), small({2, 4, 2, 2}, LETHE_RT_F32),
      dx5({2, 4, 5, 5}, LETHE_RT_F32), c4({4}, LETHE_RT_F32),
      c3({3}, LETHE_RT_F32), ids({2}, LETHE_RT_I64, {0, 7}),
      rows({2, 3}, LETHE_RT_F32), table({5, 3}, LETHE_RT_F32),
      v2({2}, LETHE_RT_F32), v5({5}, LETHE_RT_F32);
  lethe_rt_tensor xv = x.view(), dyv = dy.view(), dwv = dw.view(),
                  sv = small.view(), dx5v = dx5.view(), c4v = c4.view(),
                  c3v = c3.view(), idv = ids.view(), rv = rows.view(),
                  tv = table.view(), v2v = v2.view(), v5v = v5.view();
  const int64_t strides[] = {2, 2}, pads[] = {1, 0, 1, 1}, kernel[] = {2, 2};
  expectError(context,
              lethe_rt_conv_grad_weight(context, &xv, &dyv, strides, pads,
                                        kOnes, 2, &dwv, nullptr),
              "lethe_rt_conv_grad_weight: channels do not match: x (2x4x6x6), "
              "dw (4x4x3x3), dy (2x4x3x3), group 2");
  expectError(context,
              lethe_rt_max_pool_grad(context, &sv, &xv, kernel, strides, kZeros,
                                     kOnes, &dx5v),
              "lethe_rt_max_pool_grad: x (2x4x6x6) and dx (2x4x5x5) must "
              "have the same shape");
  expectError(
      context,
      lethe_rt_avg_pool_grad(context, &dyv, kernel, kOnes, kZeros, 0, &sv),
      "lethe_rt_avg_pool_grad: out's spatial dim 0 (3) is too large "
      "for x's (2)");
  expectError(context,
              lethe_rt_batch_norm_grad(context, &xv, &xv, &c3v, &c4v, &c4v, &xv,
                                       &c4v, &c4v),
              "lethe_rt_batch_norm_grad: scale (3) must have shape 4, the "
              "channels of x (2x4x6x6)");
  expectError(context, lethe_rt_gather_grad(context, &rv, &idv, 0, &tv),
              "lethe_rt_gather_grad: index 7 (element 1) is out of range for "
              "a dimension of 5");
  TypedTensor narrow({3, 2}, LETHE_RT_F32), wide({5, 4}, LETHE_RT_F32),
      three({3}, LETHE_RT_I64, {0, 1, 2});
  lethe_rt_tensor nv = narrow.view(), wv = wide.view(), threev = three.view();
  expectError(context, lethe_rt_gather_grad(context, &nv, &threev, 0, &wv),
              "lethe_rt_gather_grad: dy (3x2) must be 3x4 for dx (5x4), "
              "indices (3)");
  const int64_t start[] = {4}, step[] = {1};
  expectError(context, lethe_rt_slice_grad(context, &v2v, start, step, &v5v),
              "lethe_rt_slice_grad: dim 0: 2 elements from 4 in steps of 1 "
              "leave dx's 5");
  expectError(context, lethe_rt_clip_grad(context, &v5v, &v5v, 1.0, -1.0, &v5v),
              "lethe_rt_clip_grad: the bounds must be ordered numbers, got "
              "[1, -1]");
  expectError(context, lethe_rt_clip_grad(context, &v5v, &v2v, 0, 1, &v5v),
              "lethe_rt_clip_grad: dy (5) and x (2) must have the same shape");
  expectError(context, lethe_rt_softmax_grad(context, &rv, &rv, 2, 0, &rv),
              "lethe_rt_softmax_grad: axis 2 is out of range for y (2x3)");
  const double scales[] = {2.0};
  expectError(context,
              lethe_rt_resize_grad(context, &v5v, scales, nullptr, &v2v),
              "lethe_rt_resize_grad: options is missing");
}

} // namespace
