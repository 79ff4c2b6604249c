//===- OptimizerTest.cpp - Optimizer update kernels -----------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Each optimizer update against values worked out from ONNX's formulas
// (ai.onnx.preview.training Momentum, Adagrad, Adam; the first cases are
// ONNX's own node tests), the reduction of momentum without momentum to
// plain SGD, updates in place, the low-precision dtypes against f64, and the
// argument errors.
//
//===----------------------------------------------------------------------===//

#include "TypedTensor.h"

#include <functional>
#include <string>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using OptimizerTest = RuntimeTest;

/// Tolerance of f64 results against the hand-computed values (which are
/// rounded to about 16 digits).
constexpr double exact = 1e-12;

/// Expects `status` to be an error whose message is `message`.
void expectError(lethe_rt_context *context, lethe_rt_status status,
                 const std::string &message) {
  EXPECT_EQ(status, LETHE_RT_ERROR);
  EXPECT_EQ(std::string(lethe_rt_last_error(context)), message);
}

TypedTensor scalar(double value, lethe_rt_dtype dtype = LETHE_RT_F64) {
  return TypedTensor({}, dtype, {value});
}

TypedTensor stepCount(int64_t step) {
  return TypedTensor({}, LETHE_RT_I64, {static_cast<double>(step)});
}

TypedTensor tensorOf(std::vector<double> values,
                     lethe_rt_dtype dtype = LETHE_RT_F64) {
  std::vector<int64_t> shape{static_cast<int64_t>(values.size())};
  return TypedTensor(shape, dtype, values);
}

TypedTensor like(const TypedTensor &tensor) {
  return TypedTensor(tensor.shape, tensor.dtype);
}

//===----------------------------------------------------------------------===//
// Values from the formulas
//===----------------------------------------------------------------------===//

TEST_F(OptimizerTest, SgdStepsAgainstTheRegularizedGradient) {
  TypedTensor lr = scalar(0.1), x = tensorOf({1, -2}),
              g = tensorOf({0.5, 0.25});
  TypedTensor out = like(x);
  lethe_rt_tensor lrView = lr.view(), xView = x.view(), gView = g.view(),
                  outView = out.view();
  ASSERT_EQ(lethe_rt_sgd_update(context, &lrView, &xView, &gView, 0, &outView),
            LETHE_RT_OK)
      << lastError();
  // x - 0.1 g.
  expectAllNear(out.values(), {0.95, -2.025}, exact);
  // g + 0.1 x = (0.6, 0.05).
  ASSERT_EQ(
      lethe_rt_sgd_update(context, &lrView, &xView, &gView, 0.1, &outView),
      LETHE_RT_OK);
  expectAllNear(out.values(), {0.94, -2.005}, exact);
}

/// Momentum's operands of ONNX's test_momentum and test_nesterov_momentum.
struct MomentumCase {
  TypedTensor x = tensorOf({1.2, 2.8}), g = tensorOf({-0.94, -2.5}),
              v = tensorOf({1.7, 3.6});
};

TEST_F(OptimizerTest, MomentumTakesTheWholeGradientAtStepZero) {
  MomentumCase c;
  TypedTensor lr = scalar(0.1), xNew = like(c.x), vNew = like(c.v);
  auto run = [&](int64_t step, double beta) {
    TypedTensor t = stepCount(step);
    lethe_rt_tensor views[] = {lr.view(),  t.view(),    c.x.view(), c.g.view(),
                               c.v.view(), xNew.view(), vNew.view()};
    return lethe_rt_momentum_update(context, &views[0], &views[1], &views[2],
                                    &views[3], &views[4], 0.95, beta, 0.001,
                                    /*nesterov=*/0, &views[5], &views[6]);
  };
  // gr = 0.001 x + g = (-0.9388, -2.4972); v_new = 0.95 v + gr (beta is
  // ignored at step 0); x_new = x - 0.1 v_new.
  ASSERT_EQ(run(0, 0.1), LETHE_RT_OK) << lastError();
  expectAllNear(vNew.values(), {0.6762, 0.9228}, exact);
  expectAllNear(xNew.values(), {1.13238, 2.70772}, exact);
  // At step 1 the gradient is scaled by beta: v_new = 0.95 v + 0.1 gr.
  ASSERT_EQ(run(1, 0.1), LETHE_RT_OK) << lastError();
  expectAllNear(vNew.values(), {1.52112, 3.17028}, exact);
  expectAllNear(xNew.values(), {1.047888, 2.482972}, exact);
}

TEST_F(OptimizerTest, NesterovStepsAlongGradientAndMomentum) {
  MomentumCase c;
  TypedTensor lr = scalar(0.1), xNew = like(c.x), vNew = like(c.v);
  auto run = [&](int64_t step, double beta) {
    TypedTensor t = stepCount(step);
    lethe_rt_tensor views[] = {lr.view(),  t.view(),    c.x.view(), c.g.view(),
                               c.v.view(), xNew.view(), vNew.view()};
    return lethe_rt_momentum_update(context, &views[0], &views[1], &views[2],
                                    &views[3], &views[4], 0.95, beta, 0.01,
                                    /*nesterov=*/1, &views[5], &views[6]);
  };
  // gr = 0.01 x + g = (-0.928, -2.472); v_new = 0.95 v + gr = (0.687,
  // 0.948); x_new = x - 0.1 (gr + 0.95 v_new).
  ASSERT_EQ(run(0, 1.0), LETHE_RT_OK) << lastError();
  expectAllNear(vNew.values(), {0.687, 0.948}, exact);
  expectAllNear(xNew.values(), {1.227535, 2.95714}, exact);
  // Step 2, beta 0.5: v_new = 0.95 v + 0.5 gr = (1.151, 2.184).
  ASSERT_EQ(run(2, 0.5), LETHE_RT_OK) << lastError();
  expectAllNear(vNew.values(), {1.151, 2.184}, exact);
  expectAllNear(xNew.values(), {1.183455, 2.83972}, exact);
}

TEST_F(OptimizerTest, MomentumWithoutMomentumIsPlainSgd) {
  // alpha = 0, beta = 1: v_new = 0 v + gr = g, x_new = x - lr g, the same
  // bits as sgd_update (which needs no momentum tensor) and as computing
  // x - lr g directly in f32, at every step.
  TypedTensor x = randomTensor({64}, LETHE_RT_F32, 1);
  TypedTensor g = randomTensor({64}, LETHE_RT_F32, 2);
  TypedTensor v = randomTensor({64}, LETHE_RT_F32, 3);
  TypedTensor lr = scalar(0.03), viaMomentum = like(x), vNew = like(x),
              viaSgd = like(x);
  lethe_rt_tensor lrView = lr.view(), xView = x.view(), gView = g.view(),
                  vView = v.view(), momentumOut = viaMomentum.view(),
                  vOut = vNew.view(), sgdOut = viaSgd.view();
  ASSERT_EQ(lethe_rt_sgd_update(context, &lrView, &xView, &gView, 0, &sgdOut),
            LETHE_RT_OK);
  for (int64_t step : {0, 1, 7}) {
    TypedTensor t = stepCount(step);
    lethe_rt_tensor tView = t.view();
    ASSERT_EQ(lethe_rt_momentum_update(context, &lrView, &tView, &xView, &gView,
                                       &vView, 0.0, 1.0, 0.0, 0, &momentumOut,
                                       &vOut),
              LETHE_RT_OK)
        << lastError();
    EXPECT_EQ(viaMomentum.bytes, viaSgd.bytes) << "step " << step;
    EXPECT_EQ(vNew.bytes, g.bytes) << "step " << step;
  }
  const float *xs = reinterpret_cast<const float *>(x.bytes.data());
  const float *gs = reinterpret_cast<const float *>(g.bytes.data());
  const float *out = reinterpret_cast<const float *>(viaSgd.bytes.data());
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(out[i], xs[i] - 0.03f * gs[i]) << "element " << i;
}

TEST_F(OptimizerTest, AdagradDecaysTheRateWithTheStep) {
  // ONNX's test_adagrad_multiple operands: norm_coefficient 0.001, epsilon
  // 1e-5, decay_factor 0.1.
  TypedTensor x = tensorOf({1, 2}), g = tensorOf({-1, -3}),
              h = tensorOf({2, 1});
  TypedTensor lr = scalar(0.1), xNew = like(x), hNew = like(h);
  auto run = [&](int64_t step) {
    TypedTensor t = stepCount(step);
    lethe_rt_tensor views[] = {lr.view(), t.view(),    x.view(),   g.view(),
                               h.view(),  xNew.view(), hNew.view()};
    return lethe_rt_adagrad_update(context, &views[0], &views[1], &views[2],
                                   &views[3], &views[4], 0.1, 1e-5, 0.001,
                                   &views[5], &views[6]);
  };
  // gr = (-0.999, -2.998); h_new = h + gr^2 = (2.998001, 9.988004);
  // x_new = x - r gr / (sqrt(h_new) + 1e-5) with r = 0.1 / (1 + 0.1 t).
  ASSERT_EQ(run(0), LETHE_RT_OK) << lastError();
  expectAllNear(hNew.values(), {2.998001, 9.988004}, exact);
  expectAllNear(xNew.values(), {1.0576961844316204, 2.0948616993940785}, exact);
  ASSERT_EQ(run(2), LETHE_RT_OK) << lastError();
  expectAllNear(hNew.values(), {2.998001, 9.988004}, exact);
  expectAllNear(xNew.values(), {1.0480801536930169, 2.0790514161617324}, exact);
}

/// Runs lethe_rt_adam_update on f64 vectors with an f64 learning rate.
struct AdamRun {
  TypedTensor x, g, v, h;
  TypedTensor xNew = like(x), vNew = like(v), hNew = like(h);

  lethe_rt_status run(lethe_rt_context *context, double lr, int64_t step,
                      double alpha, double beta, double epsilon, double norm,
                      double normPost, double weightDecay) {
    TypedTensor rate = scalar(lr, LETHE_RT_F64), t = stepCount(step);
    lethe_rt_tensor views[] = {rate.view(), t.view(),    x.view(),
                               g.view(),    v.view(),    h.view(),
                               xNew.view(), vNew.view(), hNew.view()};
    return lethe_rt_adam_update(context, &views[0], &views[1], &views[2],
                                &views[3], &views[4], &views[5], alpha, beta,
                                epsilon, norm, normPost, weightDecay, &views[6],
                                &views[7], &views[8]);
  }
};

TEST_F(OptimizerTest, AdamWithoutBiasCorrectionAtStepZero) {
  // ONNX's test_adam: alpha 0.95, beta 0.1, epsilon 1e-7, norm 0.001.
  AdamRun adam{tensorOf({1.2, 2.8}), tensorOf({-0.94, -2.5}),
               tensorOf({1.7, 3.6}), tensorOf({0.1, 0.1})};
  ASSERT_EQ(adam.run(context, 0.1, 0, 0.95, 0.1, 1e-7, 0.001, 0, 0),
            LETHE_RT_OK)
      << lastError();
  // gr = (-0.9388, -2.4972); v_new = 0.95 v + 0.05 gr; h_new = 0.1 h + 0.9
  // gr^2; x_new = x - 0.1 v_new / (sqrt(h_new) + 1e-7).
  expectAllNear(adam.vNew.values(), {1.56806, 3.29514}, exact);
  expectAllNear(adam.hNew.values(), {0.803210896, 5.622407056}, exact);
  expectAllNear(adam.xNew.values(), {1.0250363491167394, 2.6610326709788175},
                exact);
}

TEST_F(OptimizerTest, AdamCorrectsBiasFromStepOneAndScalesAfter) {
  AdamRun adam{tensorOf({1.2, 2.8}), tensorOf({-0.94, -2.5}),
               tensorOf({1.7, 3.6}), tensorOf({0.1, 0.1})};
  // Step 3: the rate is 0.1 sqrt(1 - 0.999^3) / (1 - 0.9^3); the result is
  // then scaled by 1 - norm_coefficient_post = 0.98.
  ASSERT_EQ(adam.run(context, 0.1, 3, 0.9, 0.999, 1e-6, 0.001, 0.02, 0),
            LETHE_RT_OK)
      << lastError();
  expectAllNear(adam.vNew.values(), {1.43612, 2.99028}, exact);
  expectAllNear(adam.hNew.values(), {0.10078134544, 0.10613600784}, exact);
  expectAllNear(adam.xNew.values(), {1.0864430045146312, 2.5622897701598664},
                exact);
}

TEST_F(OptimizerTest, AdamWDecaysTheTensorBeforeTheStep) {
  // PyTorch's AdamW at its first step from zero moments: x (1 - lr wd) - lr
  // m_hat / (sqrt(v_hat) + eps), where m_hat / sqrt(v_hat) = sign(g): with
  // lr 0.01 and wd 0.1, x_new = 0.999 x + 0.01 (up to epsilon).
  AdamRun adam{tensorOf({1.2, 2.8}), tensorOf({-0.94, -2.5}), tensorOf({0, 0}),
               tensorOf({0, 0})};
  ASSERT_EQ(adam.run(context, 0.01, 1, 0.9, 0.999, 1e-8, 0, 0, 0.1),
            LETHE_RT_OK)
      << lastError();
  expectAllNear(adam.xNew.values(), {1.2087999966358758, 2.8071999987350886},
                exact);
  expectAllNear(adam.xNew.values(), {1.1988 + 0.01, 2.7972 + 0.01}, 1e-8);
}

//===----------------------------------------------------------------------===//
// In place, dtypes
//===----------------------------------------------------------------------===//

TEST_F(OptimizerTest, UpdatesInPlaceGiveTheSameValues) {
  for (lethe_rt_dtype dtype : floatDtypes()) {
    SCOPED_TRACE(dtypeName(dtype));
    std::vector<int64_t> shape{3, 5};
    TypedTensor x = randomTensor(shape, dtype, 11);
    TypedTensor g = randomTensor(shape, dtype, 12);
    TypedTensor v = randomTensor(shape, dtype, 13);
    TypedTensor h = randomTensor(shape, dtype, 14, 0, 1);
    TypedTensor lr = scalar(0.05), t = stepCount(4);
    TypedTensor xNew = like(x), vNew = like(v), hNew = like(h);
    lethe_rt_tensor lrView = lr.view(), tView = t.view(), xView = x.view(),
                    gView = g.view(), vView = v.view(), hView = h.view(),
                    xOut = xNew.view(), vOut = vNew.view(), hOut = hNew.view();
    ASSERT_EQ(lethe_rt_adam_update(context, &lrView, &tView, &xView, &gView,
                                   &vView, &hView, 0.9, 0.99, 1e-6, 0.01, 0.01,
                                   0.1, &xOut, &vOut, &hOut),
              LETHE_RT_OK)
        << lastError();
    ASSERT_EQ(lethe_rt_adam_update(context, &lrView, &tView, &xView, &gView,
                                   &vView, &hView, 0.9, 0.99, 1e-6, 0.01, 0.01,
                                   0.1, &xView, &vView, &hView),
              LETHE_RT_OK)
        << lastError();
    EXPECT_EQ(x.bytes, xNew.bytes);
    EXPECT_EQ(v.bytes, vNew.bytes);
    EXPECT_EQ(h.bytes, hNew.bytes);
  }
}

TEST_F(OptimizerTest, LowPrecisionDtypesMatchF64) {
  std::vector<int64_t> shape{4, 6};
  for (lethe_rt_dtype dtype : floatDtypes()) {
    SCOPED_TRACE(dtypeName(dtype));
    // The same (rounded) operands in the dtype and in f64.
    TypedTensor x = randomTensor(shape, dtype, 21);
    TypedTensor g = randomTensor(shape, dtype, 22);
    TypedTensor v = randomTensor(shape, dtype, 23);
    TypedTensor h = randomTensor(shape, dtype, 24, 0.5, 1);
    TypedTensor x64(shape, LETHE_RT_F64, x.values()),
        g64(shape, LETHE_RT_F64, g.values()),
        v64(shape, LETHE_RT_F64, v.values()),
        h64(shape, LETHE_RT_F64, h.values());
    TypedTensor lr = scalar(0.1, LETHE_RT_F64), t = stepCount(2);
    lethe_rt_tensor lrView = lr.view(), tView = t.view();
    auto outputs = [&](const TypedTensor &of) {
      return std::vector<TypedTensor>{like(of), like(of), like(of)};
    };
    std::vector<TypedTensor> low = outputs(x), high = outputs(x64);
    using Kernel = std::function<lethe_rt_status(TypedTensor &, TypedTensor &,
                                                 TypedTensor &, TypedTensor &,
                                                 std::vector<TypedTensor> &)>;
    std::vector<std::pair<const char *, Kernel>> kernels{
        {"sgd",
         [&](TypedTensor &x, TypedTensor &g, TypedTensor &, TypedTensor &,
             std::vector<TypedTensor> &out) {
           lethe_rt_tensor a = x.view(), b = g.view(), o = out[0].view();
           return lethe_rt_sgd_update(context, &lrView, &a, &b, 0.01, &o);
         }},
        {"nesterov",
         [&](TypedTensor &x, TypedTensor &g, TypedTensor &v, TypedTensor &,
             std::vector<TypedTensor> &out) {
           lethe_rt_tensor a = x.view(), b = g.view(), c = v.view(),
                           o0 = out[0].view(), o1 = out[1].view();
           return lethe_rt_momentum_update(context, &lrView, &tView, &a, &b, &c,
                                           0.9, 0.8, 0.01, 1, &o0, &o1);
         }},
        {"adagrad",
         [&](TypedTensor &x, TypedTensor &g, TypedTensor &, TypedTensor &h,
             std::vector<TypedTensor> &out) {
           lethe_rt_tensor a = x.view(), b = g.view(), c = h.view(),
                           o0 = out[0].view(), o1 = out[1].view();
           return lethe_rt_adagrad_update(context, &lrView, &tView, &a, &b, &c,
                                          0.1, 1e-6, 0.01, &o0, &o1);
         }},
        {"adam",
         [&](TypedTensor &x, TypedTensor &g, TypedTensor &v, TypedTensor &h,
             std::vector<TypedTensor> &out) {
           lethe_rt_tensor a = x.view(), b = g.view(), c = v.view(),
                           d = h.view(), o0 = out[0].view(), o1 = out[1].view(),
                           o2 = out[2].view();
           return lethe_rt_adam_update(context, &lrView, &tView, &a, &b, &c, &d,
                                       0.9, 0.999, 1e-6, 0.01, 0.001, 0.01, &o0,
                                       &o1, &o2);
         }},
    };
    for (auto &[name, kernel] : kernels) {
      SCOPED_TRACE(name);
      ASSERT_EQ(kernel(x, g, v, h, low), LETHE_RT_OK) << lastError();
      ASSERT_EQ(kernel(x64, g64, v64, h64, high), LETHE_RT_OK) << lastError();
      for (size_t k = 0; k < low.size(); ++k)
        expectAllNear(low[k].values(), high[k].values(), toleranceFor(dtype));
    }
  }
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(OptimizerTest, RejectsBadArguments) {
  TypedTensor x = tensorOf({1, 2}, LETHE_RT_F32), g = like(x), v = like(x),
              out = like(x), vOut = like(x);
  TypedTensor lr = scalar(0.1), t = stepCount(0);
  lethe_rt_tensor lrView = lr.view(), tView = t.view(), xView = x.view(),
                  gView = g.view(), vView = v.view(), outView = out.view(),
                  vOutView = vOut.view();

  TypedTensor lrVector = tensorOf({0.1}, LETHE_RT_F32);
  lethe_rt_tensor badLr = lrVector.view();
  expectError(context,
              lethe_rt_sgd_update(context, &badLr, &xView, &gView, 0, &outView),
              "lethe_rt_sgd_update: lr must have rank 0, got 1");
  TypedTensor lrInteger = scalar(1, LETHE_RT_I64);
  badLr = lrInteger.view();
  expectError(context,
              lethe_rt_sgd_update(context, &badLr, &xView, &gView, 0, &outView),
              "lethe_rt_sgd_update: lr must be f32 or f64, got i64");

  TypedTensor floatStep = scalar(0, LETHE_RT_F32);
  lethe_rt_tensor badStep = floatStep.view();
  expectError(context,
              lethe_rt_momentum_update(context, &lrView, &badStep, &xView,
                                       &gView, &vView, 0.9, 1, 0, 0, &outView,
                                       &vOutView),
              "lethe_rt_momentum_update: step must be i64, got f32");

  TypedTensor integers = tensorOf({1, 2}, LETHE_RT_I32);
  lethe_rt_tensor badX = integers.view();
  expectError(context,
              lethe_rt_sgd_update(context, &lrView, &badX, &gView, 0, &outView),
              "lethe_rt_sgd_update: x must be f16, bf16, f32 or f64, got i32");

  TypedTensor longer = tensorOf({1, 2, 3}, LETHE_RT_F32);
  lethe_rt_tensor badG = longer.view();
  expectError(context,
              lethe_rt_sgd_update(context, &lrView, &xView, &badG, 0, &outView),
              "lethe_rt_sgd_update: x (2) and g (3) must have the same shape");

  TypedTensor doubles = tensorOf({1, 2}, LETHE_RT_F64);
  lethe_rt_tensor badV = doubles.view();
  expectError(context,
              lethe_rt_adagrad_update(context, &lrView, &tView, &xView, &gView,
                                      &badV, 0, 1e-6, 0, &outView, &vOutView),
              "lethe_rt_adagrad_update: h must be f32, got f64");

  // An output that overlaps part of an input, or another output.
  TypedTensor wide = tensorOf({1, 2, 3}, LETHE_RT_F32);
  std::vector<int64_t> two{2};
  lethe_rt_tensor shifted{wide.bytes.data() + sizeof(float), LETHE_RT_F32, 1,
                          two.data()};
  lethe_rt_tensor prefix{wide.bytes.data(), LETHE_RT_F32, 1, two.data()};
  expectError(
      context,
      lethe_rt_sgd_update(context, &lrView, &prefix, &gView, 0, &shifted),
      "lethe_rt_sgd_update: x_new overlaps part of x (an output must be "
      "exactly an input or apart from all of them)");
  expectError(context,
              lethe_rt_momentum_update(context, &lrView, &tView, &xView, &gView,
                                       &vView, 0.9, 1, 0, 0, &outView,
                                       &outView),
              "lethe_rt_momentum_update: x_new and v_new overlap");
}

} // namespace
