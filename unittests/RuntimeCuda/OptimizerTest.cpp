//===- OptimizerTest.cpp - Optimizer updates on CUDA ----------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_sgd_update, momentum_update, adagrad_update and adam_update on
// the CUDA backend against double-precision references of ONNX's formulas
// (runtime/include/lethe_rt.h), in place and apart, with lr and step read on
// the device after earlier work on the compute stream wrote them; and the
// errors that name the kernel.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"

using namespace lethe::rt::testing;

namespace {

using OptimizerTest = CudaRuntimeTest;

enum class Update { Sgd, Momentum, Nesterov, Adagrad, Adam };

/// The hyperparameters every test passes (each update reads its own).
constexpr double alpha = 0.9, beta = 0.999, epsilon = 1e-6, norm = 0.01,
                 normPost = 0.001, weightDecay = 0.02, decayFactor = 0.1;

/// One element of an update in double: x, g and the state (v for momentum,
/// v then h for Adam, h for Adagrad) in, the new x and state out.
void reference(Update update, double lr, int64_t step, double &x, double g,
               double &v, double &h) {
  double regularized = norm * x + g;
  switch (update) {
  case Update::Sgd:
    x -= lr * regularized;
    return;
  case Update::Momentum:
  case Update::Nesterov:
    v = alpha * v + (step > 0 ? beta : 1.0) * regularized;
    x -= lr * (update == Update::Nesterov ? regularized + alpha * v : v);
    return;
  case Update::Adagrad:
    h += regularized * regularized;
    x -= lr / (1 + step * decayFactor) * regularized / (std::sqrt(h) + epsilon);
    return;
  case Update::Adam: {
    v = alpha * v + (1 - alpha) * regularized;
    h = beta * h + (1 - beta) * regularized * regularized;
    double rate = step > 0 ? lr * std::sqrt(1 - std::pow(beta, step)) /
                                 (1 - std::pow(alpha, step))
                           : lr;
    x = (1 - normPost) *
        (x * (1 - lr * weightDecay) - rate * (v / (std::sqrt(h) + epsilon)));
    return;
  }
  }
}

/// Runs `update` on x, g, v, h of dtype (storage type T) with lr of
/// `lrDtype` (storage type L) and step `stepValue`, the outputs in place or
/// apart; lr and step are copied into place on the compute stream just
/// before, so that an update reading them anywhere but in its kernel fails.
template <typename T, typename L>
void checkUpdate(OptimizerTest &test, lethe_rt_dtype dtype,
                 lethe_rt_dtype lrDtype, Update update, int64_t stepValue,
                 bool inPlace) {
  const std::vector<int64_t> shape{7, 131};
  size_t count = 7 * 131;
  std::vector<T> xValues = randomValues<T>(count, 1);
  std::vector<T> gValues = randomValues<T>(count, 2);
  std::vector<T> vValues = randomValues<T>(count, 3);
  std::vector<T> hValues = randomValues<T>(count, 4, 0, 1);
  const double learningRate = 0.05;
  lethe_rt_tensor lrStaged =
      test.place<L>({}, lrDtype, {static_cast<L>(learningRate)});
  lethe_rt_tensor stepStaged =
      test.place<int64_t>({}, LETHE_RT_I64, {stepValue});
  // Garbage until the copies on the compute stream fill them.
  lethe_rt_tensor lr = test.place<L>({}, lrDtype, {L(-1)});
  lethe_rt_tensor step = test.place<int64_t>({}, LETHE_RT_I64, {-7});
  ASSERT_EQ(lethe_rt_copy(test.context, &lrStaged, &lr), LETHE_RT_OK)
      << test.lastError();
  ASSERT_EQ(lethe_rt_copy(test.context, &stepStaged, &step), LETHE_RT_OK)
      << test.lastError();

  lethe_rt_tensor x = test.place<T>(shape, dtype, xValues);
  lethe_rt_tensor g = test.place<T>(shape, dtype, gValues);
  lethe_rt_tensor v = test.place<T>(shape, dtype, vValues);
  lethe_rt_tensor h = test.place<T>(shape, dtype, hValues);
  lethe_rt_tensor xNew = inPlace ? x : test.place<T>(shape, dtype);
  lethe_rt_tensor vNew = inPlace ? v : test.place<T>(shape, dtype);
  lethe_rt_tensor hNew = inPlace ? h : test.place<T>(shape, dtype);
  lethe_rt_status status = LETHE_RT_ERROR;
  switch (update) {
  case Update::Sgd:
    status = lethe_rt_sgd_update(test.context, &lr, &x, &g, norm, &xNew);
    break;
  case Update::Momentum:
  case Update::Nesterov:
    status = lethe_rt_momentum_update(test.context, &lr, &step, &x, &g, &v,
                                      alpha, beta, norm,
                                      update == Update::Nesterov, &xNew, &vNew);
    break;
  case Update::Adagrad:
    status = lethe_rt_adagrad_update(test.context, &lr, &step, &x, &g, &h,
                                     decayFactor, epsilon, norm, &xNew, &hNew);
    break;
  case Update::Adam:
    status = lethe_rt_adam_update(test.context, &lr, &step, &x, &g, &v, &h,
                                  alpha, beta, epsilon, norm, normPost,
                                  weightDecay, &xNew, &vNew, &hNew);
    break;
  }
  ASSERT_EQ(status, LETHE_RT_OK) << test.lastError();

  std::vector<double> xExpected, vExpected, hExpected;
  for (size_t i = 0; i < count; ++i) {
    double xi = xValues[i], vi = vValues[i], hi = hValues[i];
    reference(update, static_cast<double>(static_cast<L>(learningRate)),
              stepValue, xi, gValues[i], vi, hi);
    xExpected.push_back(xi);
    vExpected.push_back(vi);
    hExpected.push_back(hi);
  }
  std::string what = "update " + std::to_string(static_cast<int>(update)) +
                     " step " + std::to_string(stepValue);
  expectNear(test.read<T>(xNew), xExpected, what + " x_new");
  if (update == Update::Momentum || update == Update::Nesterov ||
      update == Update::Adam)
    expectNear(test.read<T>(vNew), vExpected, what + " v_new");
  if (update == Update::Adagrad || update == Update::Adam)
    expectNear(test.read<T>(hNew), hExpected, what + " h_new");
}

template <typename T, typename L>
void checkEveryUpdate(OptimizerTest &test, lethe_rt_dtype dtype,
                      lethe_rt_dtype lrDtype) {
  for (Update update : {Update::Sgd, Update::Momentum, Update::Nesterov,
                        Update::Adagrad, Update::Adam})
    for (int64_t step : {0, 1, 5})
      for (bool inPlace : {false, true})
        checkUpdate<T, L>(test, dtype, lrDtype, update, step, inPlace);
}

TEST_F(OptimizerTest, UpdatesF32) {
  checkEveryUpdate<float, float>(*this, LETHE_RT_F32, LETHE_RT_F32);
}
TEST_F(OptimizerTest, UpdatesF64) {
  checkEveryUpdate<double, double>(*this, LETHE_RT_F64, LETHE_RT_F64);
}
TEST_F(OptimizerTest, UpdatesF32WithF64Rate) {
  checkEveryUpdate<float, double>(*this, LETHE_RT_F32, LETHE_RT_F64);
}

TEST_F(OptimizerTest, InvalidArgumentsNameTheKernel) {
  lethe_rt_tensor lr = place<float>({}, LETHE_RT_F32, {0.1f});
  lethe_rt_tensor step = place<int64_t>({}, LETHE_RT_I64, {1});
  lethe_rt_tensor x = place<float>({4}, LETHE_RT_F32);
  lethe_rt_tensor g = place<float>({4}, LETHE_RT_F32);
  lethe_rt_tensor v = place<float>({4}, LETHE_RT_F32);
  lethe_rt_tensor h = place<float>({4}, LETHE_RT_F32);
  lethe_rt_tensor wide = place<float>({5}, LETHE_RT_F32);
  lethe_rt_tensor integerLr = place<int64_t>({}, LETHE_RT_I64, {1});
  EXPECT_EQ(lethe_rt_sgd_update(context, &integerLr, &x, &g, 0, &x),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_sgd_update: lr must be f32 or f64, got i64");
  EXPECT_EQ(lethe_rt_momentum_update(context, &lr, &step, &x, &g, &v, 0.9, 1, 0,
                                     0, &wide, &v),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_momentum_update: x (4) and x_new (5) must "
                         "have the same shape");
  EXPECT_EQ(lethe_rt_adagrad_update(context, &lr, &lr, &x, &g, &h, 0, 1e-6, 0,
                                    &x, &h),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_adagrad_update: step must be i64, got f32");
  // An output may be exactly an input, but not part of one.
  lethe_rt_tensor shifted = g;
  shifted.data = static_cast<float *>(g.data) + 1;
  EXPECT_EQ(lethe_rt_adam_update(context, &lr, &step, &x, &g, &v, &h, 0.9,
                                 0.999, 1e-8, 0, 0, 0, &x, &shifted, &h),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_adam_update: v_new overlaps part of g (an "
                         "output must be exactly an input or apart from all "
                         "of them)");
  // lr must lie in the arena, as every tensor.
  float hostRate = 0.1f;
  lethe_rt_tensor hostLr = lr;
  hostLr.data = &hostRate;
  EXPECT_EQ(lethe_rt_sgd_update(context, &hostLr, &x, &g, 0, &x),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError().rfind(
                "lethe_rt_sgd_update: lr (scalar, 4 bytes) does not lie in "
                "the arena",
                0),
            0u)
      << lastError();
}

} // namespace
