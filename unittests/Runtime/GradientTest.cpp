//===- GradientTest.cpp - Gradient kernels --------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Each gradient kernel against central finite differences of its forward
// kernel in f64, the low-precision dtypes against the f64 gradient, and the
// argument errors.
//
//===----------------------------------------------------------------------===//

#include "TypedTensor.h"

#include <functional>
#include <string>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using GradientTest = RuntimeTest;

/// The step of the central differences, and the relative error they must
/// meet.
constexpr double step = 1e-5;
constexpr double finiteDifferenceTolerance = 1e-6;

const std::vector<lethe_rt_reduction> reductions{
    LETHE_RT_REDUCTION_NONE, LETHE_RT_REDUCTION_SUM, LETHE_RT_REDUCTION_MEAN};

/// Expects `status` to be an error whose message is `message`.
void expectError(lethe_rt_context *context, lethe_rt_status status,
                 const std::string &message) {
  EXPECT_EQ(status, LETHE_RT_ERROR);
  EXPECT_EQ(std::string(lethe_rt_last_error(context)), message);
}

/// The gradient of `objective` at `x` by central differences, one element at
/// a time.
std::vector<double> finiteDifferences(
    const std::vector<double> &x,
    const std::function<double(const std::vector<double> &)> &objective) {
  std::vector<double> gradient(x.size()), shifted = x;
  for (size_t i = 0; i < x.size(); ++i) {
    shifted[i] = x[i] + step;
    double above = objective(shifted);
    shifted[i] = x[i] - step;
    double below = objective(shifted);
    shifted[i] = x[i];
    gradient[i] = (above - below) / (2 * step);
  }
  return gradient;
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

struct ActivationCase {
  const char *name;
  lethe_rt_activation_grad_kind grad;
  lethe_rt_unary_kind forward;
  double alpha;
  /// Whether the gradient takes the forward's output (else its input).
  bool savesOutput;
  /// Whether the derivative jumps at 0 (inputs are then kept away from it).
  bool kinkAtZero;
};

const std::vector<ActivationCase> &activationCases() {
  static const std::vector<ActivationCase> cases{
      {"relu", LETHE_RT_RELU_GRAD, LETHE_RT_RELU, 0, true, true},
      {"leaky_relu", LETHE_RT_LEAKY_RELU_GRAD, LETHE_RT_LEAKY_RELU, 0.1, false,
       true},
      {"leaky_relu_negative_slope", LETHE_RT_LEAKY_RELU_GRAD,
       LETHE_RT_LEAKY_RELU, -0.7, false, true},
      {"gelu", LETHE_RT_GELU_GRAD, LETHE_RT_GELU, 0, false, false},
      {"gelu_tanh", LETHE_RT_GELU_TANH_GRAD, LETHE_RT_GELU_TANH, 0, false,
       false},
  };
  return cases;
}

/// Seeded inputs in (-5, 5), at least 0.1 away from 0 when `awayFromZero`.
std::vector<double> activationInputs(int64_t count, uint64_t seed,
                                     bool awayFromZero) {
  std::vector<double> x =
      randomTensor({count}, LETHE_RT_F64, seed, -5, 5).values();
  if (awayFromZero)
    for (double &value : x)
      value = std::copysign(0.1 + std::fabs(value) * 0.98, value);
  return x;
}

/// lethe_rt_unary(kind) of `x` in `dtype`, as doubles.
std::vector<double> runUnary(lethe_rt_context *context,
                             lethe_rt_unary_kind kind, double alpha,
                             const std::vector<int64_t> &shape,
                             lethe_rt_dtype dtype,
                             const std::vector<double> &x) {
  TypedTensor in(shape, dtype, x), out(shape, dtype);
  lethe_rt_tensor iv = in.view(), ov = out.view();
  EXPECT_EQ(lethe_rt_unary(context, kind, alpha, 0, &iv, &ov), LETHE_RT_OK)
      << lethe_rt_last_error(context);
  return out.values();
}

/// lethe_rt_activation_grad for `activation` in `dtype` at the forward input
/// `x` (its output is computed first when the gradient saves it).
std::vector<double>
runActivationGrad(lethe_rt_context *context, const ActivationCase &activation,
                  const std::vector<int64_t> &shape, lethe_rt_dtype dtype,
                  const std::vector<double> &x, const std::vector<double> &dy) {
  std::vector<double> saved = activation.savesOutput
                                  ? runUnary(context, activation.forward,
                                             activation.alpha, shape, dtype, x)
                                  : x;
  TypedTensor dyTensor(shape, dtype, dy), savedTensor(shape, dtype, saved),
      dx(shape, dtype);
  lethe_rt_tensor dyv = dyTensor.view(), sv = savedTensor.view(),
                  dxv = dx.view();
  EXPECT_EQ(lethe_rt_activation_grad(context, activation.grad, activation.alpha,
                                     &dyv, &sv, &dxv),
            LETHE_RT_OK)
      << lethe_rt_last_error(context);
  return dx.values();
}

TEST_F(GradientTest, ActivationGradMatchesFiniteDifferences) {
  std::vector<int64_t> shape{4, 3, 5};
  int64_t count = 60;
  uint64_t seed = 10;
  for (const ActivationCase &activation : activationCases()) {
    SCOPED_TRACE(activation.name);
    std::vector<double> x =
        activationInputs(count, seed++, activation.kinkAtZero);
    std::vector<double> dy =
        randomTensor(shape, LETHE_RT_F64, seed++, -2, 2).values();
    std::vector<double> dx =
        runActivationGrad(context, activation, shape, LETHE_RT_F64, x, dy);
    // The activation is elementwise: shifting every element at once gives
    // each element's derivative.
    std::vector<double> above = x, below = x;
    for (int64_t i = 0; i < count; ++i) {
      above[i] += step;
      below[i] -= step;
    }
    std::vector<double> yAbove = runUnary(context, activation.forward,
                                          activation.alpha, shape, LETHE_RT_F64,
                                          above),
                        yBelow = runUnary(context, activation.forward,
                                          activation.alpha, shape, LETHE_RT_F64,
                                          below);
    std::vector<double> expected(count);
    for (int64_t i = 0; i < count; ++i)
      expected[i] = dy[i] * (yAbove[i] - yBelow[i]) / (2 * step);
    expectAllNear(dx, expected, finiteDifferenceTolerance);
  }
}

TEST_F(GradientTest, ActivationGradIsExactAtTheKinks) {
  // ReLU's y is 0 for x <= 0: no gradient there; LeakyRelu's x = 0 takes
  // the negative slope.
  std::vector<int64_t> shape{4};
  std::vector<double> saved{-1, 0, 2, 0.5}, dy{3, 5, 7, -11};
  TypedTensor dyTensor(shape, LETHE_RT_F64, dy),
      savedTensor(shape, LETHE_RT_F64, saved), dx(shape, LETHE_RT_F64);
  lethe_rt_tensor dyv = dyTensor.view(), sv = savedTensor.view(),
                  dxv = dx.view();
  ASSERT_EQ(
      lethe_rt_activation_grad(context, LETHE_RT_RELU_GRAD, 0, &dyv, &sv, &dxv),
      LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(dx.values(), (std::vector<double>{0, 0, 7, -11}));
  ASSERT_EQ(lethe_rt_activation_grad(context, LETHE_RT_LEAKY_RELU_GRAD, 0.25,
                                     &dyv, &sv, &dxv),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(dx.values(), (std::vector<double>{0.75, 1.25, 7, -11}));
  // In place: dx may be dy.
  ASSERT_EQ(lethe_rt_activation_grad(context, LETHE_RT_LEAKY_RELU_GRAD, 0.25,
                                     &dyv, &sv, &dyv),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(dyTensor.values(), (std::vector<double>{0.75, 1.25, 7, -11}));
}

TEST_F(GradientTest, ActivationGradLowPrecisionMatchesF64) {
  std::vector<int64_t> shape{3, 20};
  uint64_t seed = 100;
  for (lethe_rt_dtype dtype : {LETHE_RT_F32, LETHE_RT_F16, LETHE_RT_BF16}) {
    for (const ActivationCase &activation : activationCases()) {
      SCOPED_TRACE(std::string(dtypeName(dtype)) + " " + activation.name);
      // The same (rounded) inputs for both precisions.
      TypedTensor x(shape, dtype,
                    activationInputs(60, seed++, activation.kinkAtZero));
      TypedTensor dy = randomTensor(shape, dtype, seed++, -2, 2);
      std::vector<double> actual = runActivationGrad(
          context, activation, shape, dtype, x.values(), dy.values());
      std::vector<double> expected = runActivationGrad(
          context, activation, shape, LETHE_RT_F64, x.values(), dy.values());
      expectAllNear(actual, expected, toleranceFor(dtype) * 4);
    }
  }
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

struct LossCase {
  std::vector<int64_t> shape;
  bool weights;
  bool hasIgnore;
  int64_t ignoreIndex;
};

const std::vector<LossCase> &lossCases() {
  static const std::vector<LossCase> cases{
      {{3, 5}, false, false, 0},      {{3, 5}, true, false, 0},
      {{2, 4, 3}, true, true, 1},     {{2, 4, 3}, false, true, 2},
      {{2, 3, 2, 2}, true, true, -1}, {{4, 3, 5}, false, true, 10},
      {{5, 2}, true, true, 0},
  };
  return cases;
}

std::string traceOf(const LossCase &loss, lethe_rt_reduction reduction,
                    lethe_rt_dtype dtype) {
  std::string text = dtypeName(dtype);
  for (int64_t dim : loss.shape)
    text += " " + std::to_string(dim);
  return text + (loss.weights ? " weighted" : "") +
         (loss.hasIgnore ? " ignore " + std::to_string(loss.ignoreIndex) : "") +
         " reduction " + std::to_string(reduction);
}

/// The labels' shape (N, D...) of an input (N, C, D...).
std::vector<int64_t> labelShapeOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> labelShape = shape;
  labelShape.erase(labelShape.begin() + 1);
  return labelShape;
}

/// Random labels in [0, classes); with an ignore index, the first and about
/// a quarter of the others are ignored.
TypedTensor randomLabels(const LossCase &loss, lethe_rt_dtype dtype,
                         uint64_t seed) {
  TypedTensor labels(labelShapeOf(loss.shape), dtype);
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < labels.size(); ++i) {
    int64_t label = static_cast<int64_t>(rng() % loss.shape[1]);
    if (loss.hasIgnore && (i == 0 || rng() % 4 == 0))
      label = loss.ignoreIndex;
    labels.set(i, static_cast<double>(label));
  }
  return labels;
}

/// The inputs of one loss gradient test: the forward's input, labels,
/// weights and the incoming gradient dloss (a scalar, or per element for
/// reduction none).
struct LossInputs {
  TypedTensor input;
  TypedTensor labels;
  TypedTensor weights;
  TypedTensor dloss;
};

LossInputs randomLossInputs(const LossCase &loss, lethe_rt_reduction reduction,
                            lethe_rt_dtype dtype, double low, double high,
                            uint64_t seed) {
  std::vector<int64_t> lossShape = reduction == LETHE_RT_REDUCTION_NONE
                                       ? labelShapeOf(loss.shape)
                                       : std::vector<int64_t>{};
  return {randomTensor(loss.shape, dtype, seed, low, high),
          randomLabels(loss, seed % 2 ? LETHE_RT_I64 : LETHE_RT_I32, seed + 1),
          randomTensor({loss.shape[1]}, dtype, seed + 2, 0.2, 2),
          randomTensor(lossShape, dtype, seed + 3, -2, 2)};
}

/// Which forward loss (and its gradient) a test runs.
enum class LossKind { SoftmaxCrossEntropy, NegativeLogLikelihood };

/// Runs the forward loss on `input` (of the inputs' shape and dtype); writes
/// log_prob for softmax cross-entropy. Returns the loss values.
std::vector<double> runLoss(lethe_rt_context *context, LossKind kind,
                            const LossCase &loss, lethe_rt_reduction reduction,
                            LossInputs &inputs,
                            const std::vector<double> &input,
                            TypedTensor *logProb = nullptr) {
  TypedTensor in(inputs.input.shape, inputs.input.dtype, input);
  TypedTensor out(inputs.dloss.shape, inputs.dloss.dtype);
  TypedTensor scratch(inputs.input.shape, inputs.input.dtype);
  lethe_rt_tensor iv = in.view(), lv = inputs.labels.view(),
                  wv = inputs.weights.view(), ov = out.view(),
                  pv = (logProb ? *logProb : scratch).view();
  const lethe_rt_tensor *weights = loss.weights ? &wv : nullptr;
  lethe_rt_status status =
      kind == LossKind::SoftmaxCrossEntropy
          ? lethe_rt_softmax_cross_entropy(context, &iv, &lv, weights,
                                           reduction, loss.hasIgnore,
                                           loss.ignoreIndex, &ov, &pv)
          : lethe_rt_nll(context, &iv, &lv, weights, reduction, loss.hasIgnore,
                         loss.ignoreIndex, &ov);
  EXPECT_EQ(status, LETHE_RT_OK) << lethe_rt_last_error(context);
  return out.values();
}

/// The gradient kernel of `kind` at the inputs, in their dtype.
std::vector<double> runLossGrad(lethe_rt_context *context, LossKind kind,
                                const LossCase &loss,
                                lethe_rt_reduction reduction,
                                LossInputs &inputs) {
  TypedTensor gradient(inputs.input.shape, inputs.input.dtype);
  lethe_rt_tensor dlv = inputs.dloss.view(), lv = inputs.labels.view(),
                  wv = inputs.weights.view(), gv = gradient.view();
  const lethe_rt_tensor *weights = loss.weights ? &wv : nullptr;
  lethe_rt_status status;
  if (kind == LossKind::SoftmaxCrossEntropy) {
    TypedTensor logProb(inputs.input.shape, inputs.input.dtype);
    runLoss(context, kind, loss, reduction, inputs, inputs.input.values(),
            &logProb);
    lethe_rt_tensor pv = logProb.view();
    status = lethe_rt_softmax_cross_entropy_grad(
        context, &dlv, &pv, &lv, weights, reduction, loss.hasIgnore,
        loss.ignoreIndex, &gv);
  } else {
    status = lethe_rt_nll_grad(context, &dlv, &lv, weights, reduction,
                               loss.hasIgnore, loss.ignoreIndex, &gv);
  }
  EXPECT_EQ(status, LETHE_RT_OK) << lethe_rt_last_error(context);
  return gradient.values();
}

/// Compares the gradient of `kind` with central differences of
/// sum(dloss * loss) for every case and reduction, in f64.
void expectLossGradMatchesFiniteDifferences(lethe_rt_context *context,
                                            LossKind kind, double low,
                                            double high, uint64_t seed) {
  for (const LossCase &loss : lossCases()) {
    for (lethe_rt_reduction reduction : reductions) {
      SCOPED_TRACE(traceOf(loss, reduction, LETHE_RT_F64));
      LossInputs inputs =
          randomLossInputs(loss, reduction, LETHE_RT_F64, low, high, seed);
      seed += 4;
      std::vector<double> dloss = inputs.dloss.values();
      auto objective = [&](const std::vector<double> &input) {
        std::vector<double> values =
            runLoss(context, kind, loss, reduction, inputs, input);
        double total = 0;
        for (size_t i = 0; i < values.size(); ++i)
          total += dloss[i] * values[i];
        return total;
      };
      std::vector<double> gradient =
          runLossGrad(context, kind, loss, reduction, inputs);
      expectAllNear(gradient,
                    finiteDifferences(inputs.input.values(), objective),
                    finiteDifferenceTolerance);
      // An ignored element gets 0 in every class.
      int64_t classes = loss.shape[1],
              spatial = inputs.labels.size() / loss.shape[0];
      for (int64_t i = 0; i < inputs.labels.size(); ++i) {
        if (!loss.hasIgnore || inputs.labels.get(i) != loss.ignoreIndex)
          continue;
        int64_t n = i / spatial, d = i % spatial;
        for (int64_t c = 0; c < classes; ++c)
          EXPECT_EQ(gradient[(n * classes + c) * spatial + d], 0)
              << "element " << i << " class " << c;
      }
    }
  }
}

TEST_F(GradientTest, SoftmaxCrossEntropyGradMatchesFiniteDifferences) {
  expectLossGradMatchesFiniteDifferences(context, LossKind::SoftmaxCrossEntropy,
                                         -3, 3, 1000);
}

TEST_F(GradientTest, NllGradMatchesFiniteDifferences) {
  expectLossGradMatchesFiniteDifferences(
      context, LossKind::NegativeLogLikelihood, -4, 0, 2000);
}

TEST_F(GradientTest, LossGradLowPrecisionMatchesF64) {
  uint64_t seed = 3000;
  for (lethe_rt_dtype dtype : {LETHE_RT_F32, LETHE_RT_F16, LETHE_RT_BF16}) {
    for (LossKind kind :
         {LossKind::SoftmaxCrossEntropy, LossKind::NegativeLogLikelihood}) {
      for (const LossCase &loss : lossCases()) {
        for (lethe_rt_reduction reduction : reductions) {
          SCOPED_TRACE(
              traceOf(loss, reduction, dtype) +
              (kind == LossKind::SoftmaxCrossEntropy ? " sce" : " nll"));
          LossInputs inputs =
              randomLossInputs(loss, reduction, dtype, -3, 3, seed);
          seed += 4;
          // The same (rounded) values in f64.
          LossInputs reference{TypedTensor(inputs.input.shape, LETHE_RT_F64,
                                           inputs.input.values()),
                               inputs.labels,
                               TypedTensor(inputs.weights.shape, LETHE_RT_F64,
                                           inputs.weights.values()),
                               TypedTensor(inputs.dloss.shape, LETHE_RT_F64,
                                           inputs.dloss.values())};
          // f32 keeps log_prob to ~1e-7; f16 and bf16 lose more of it.
          double tolerance =
              toleranceFor(dtype) * (dtype == LETHE_RT_F32 ? 4 : 10);
          expectAllNear(runLossGrad(context, kind, loss, reduction, inputs),
                        runLossGrad(context, kind, loss, reduction, reference),
                        tolerance);
        }
      }
    }
  }
}

TEST_F(GradientTest, MeanOverNothingGivesZeros) {
  // Every element ignored, or every counted weight 0: the forward mean is
  // 0 / 0, but the gradient is 0 everywhere.
  std::vector<int64_t> shape{3, 4};
  TypedTensor dloss({}, LETHE_RT_F64, {1.5});
  TypedTensor logProb = randomTensor(shape, LETHE_RT_F64, 7, -3, -0.1);
  TypedTensor ignoredLabels({3}, LETHE_RT_I32, {2, 2, 2}),
      labels({3}, LETHE_RT_I64, {0, 3, 0}),
      zeroWeights({4}, LETHE_RT_F64, {0, 1, 1, 0});
  TypedTensor gradient(shape, LETHE_RT_F64);
  lethe_rt_tensor dlv = dloss.view(), pv = logProb.view(),
                  ilv = ignoredLabels.view(), lv = labels.view(),
                  wv = zeroWeights.view(), gv = gradient.view();
  std::vector<double> zeros(12, 0);
  for (bool ignoring : {true, false}) {
    SCOPED_TRACE(ignoring ? "ignored" : "zero weights");
    const lethe_rt_tensor *target = ignoring ? &ilv : &lv;
    const lethe_rt_tensor *weights = ignoring ? nullptr : &wv;
    gradient.set(0, 42);
    ASSERT_EQ(lethe_rt_softmax_cross_entropy_grad(
                  context, &dlv, &pv, target, weights, LETHE_RT_REDUCTION_MEAN,
                  ignoring, 2, &gv),
              LETHE_RT_OK)
        << lastError();
    EXPECT_EQ(gradient.values(), zeros);
    gradient.set(0, 42);
    ASSERT_EQ(lethe_rt_nll_grad(context, &dlv, target, weights,
                                LETHE_RT_REDUCTION_MEAN, ignoring, 2, &gv),
              LETHE_RT_OK)
        << lastError();
    EXPECT_EQ(gradient.values(), zeros);
  }
}

TEST_F(GradientTest, SoftmaxCrossEntropyGradInPlace) {
  // dscores may be log_prob itself; the result is the same.
  LossCase loss{{2, 3, 4}, true, true, 1};
  LossInputs inputs =
      randomLossInputs(loss, LETHE_RT_REDUCTION_MEAN, LETHE_RT_F32, -3, 3, 5);
  std::vector<double> expected =
      runLossGrad(context, LossKind::SoftmaxCrossEntropy, loss,
                  LETHE_RT_REDUCTION_MEAN, inputs);
  TypedTensor logProb(loss.shape, LETHE_RT_F32);
  runLoss(context, LossKind::SoftmaxCrossEntropy, loss, LETHE_RT_REDUCTION_MEAN,
          inputs, inputs.input.values(), &logProb);
  lethe_rt_tensor dlv = inputs.dloss.view(), pv = logProb.view(),
                  lv = inputs.labels.view(), wv = inputs.weights.view();
  ASSERT_EQ(lethe_rt_softmax_cross_entropy_grad(context, &dlv, &pv, &lv, &wv,
                                                LETHE_RT_REDUCTION_MEAN, 1, 1,
                                                &pv),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(logProb.values(), expected);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(GradientTest, ActivationGradRejectsBadArguments) {
  TypedTensor a23({2, 3}, LETHE_RT_F32), b23({2, 3}, LETHE_RT_F32),
      a32({3, 2}, LETHE_RT_F32), a6({6}, LETHE_RT_F32),
      d23({2, 3}, LETHE_RT_F64), i23({2, 3}, LETHE_RT_I32);
  lethe_rt_tensor av = a23.view(), bv = b23.view(), a32v = a32.view(),
                  a6v = a6.view(), dv = d23.view(), iv = i23.view();
  std::string kernel = "lethe_rt_activation_grad: ";
  expectError(
      context,
      lethe_rt_activation_grad(context, LETHE_RT_GELU_GRAD, 0, &av, &a32v, &bv),
      kernel + "dy (2x3) and saved (3x2) must have the same shape");
  expectError(
      context,
      lethe_rt_activation_grad(context, LETHE_RT_RELU_GRAD, 0, &av, &bv, &a6v),
      kernel + "dy (2x3) and dx (6) must have the same shape");
  expectError(
      context,
      lethe_rt_activation_grad(context, LETHE_RT_RELU_GRAD, 0, &iv, &iv, &iv),
      kernel + "dy must be f16, bf16, f32 or f64, got i32");
  expectError(context,
              lethe_rt_activation_grad(context, LETHE_RT_GELU_TANH_GRAD, 0, &av,
                                       &dv, &bv),
              kernel + "saved must be f32, got f64");
  expectError(context,
              lethe_rt_activation_grad(context, LETHE_RT_GELU_TANH_GRAD, 0, &av,
                                       &bv, &iv),
              kernel + "dx must be f32, got i32");
  expectError(context,
              lethe_rt_activation_grad(context, LETHE_RT_RELU_GRAD, 0, nullptr,
                                       &bv, &av),
              kernel + "dy is missing (null descriptor)");
  expectError(context,
              lethe_rt_activation_grad(
                  context, static_cast<lethe_rt_activation_grad_kind>(9), 0,
                  &av, &bv, &av),
              kernel + "unknown activation gradient kind 9");
}

TEST_F(GradientTest, SoftmaxCrossEntropyGradRejectsBadArguments) {
  TypedTensor logProb({2, 5}, LETHE_RT_F32), dscores({2, 5}, LETHE_RT_F32),
      transposed({5, 2}, LETHE_RT_F32), intScores({2, 5}, LETHE_RT_I64),
      labels({2}, LETHE_RT_I64, {1, 4}), badLabels({2}, LETHE_RT_I32, {1, 7}),
      negativeLabels({2}, LETHE_RT_I64, {-1, 2}),
      floatLabels({2}, LETHE_RT_F32), scalar({}, LETHE_RT_F32),
      scalar64({}, LETHE_RT_F64), loss2({2}, LETHE_RT_F32),
      weights3({3}, LETHE_RT_F32);
  lethe_rt_tensor pv = logProb.view(), gv = dscores.view(),
                  tv = transposed.view(), isv = intScores.view(),
                  lv = labels.view(), blv = badLabels.view(),
                  nlv = negativeLabels.view(), flv = floatLabels.view(),
                  sv = scalar.view(), s64v = scalar64.view(),
                  l2v = loss2.view(), w3v = weights3.view();
  std::string kernel = "lethe_rt_softmax_cross_entropy_grad: ";
  auto grad = [&](const lethe_rt_tensor *dloss, const lethe_rt_tensor *logP,
                  const lethe_rt_tensor *target, const lethe_rt_tensor *weights,
                  lethe_rt_reduction reduction, int hasIgnore,
                  const lethe_rt_tensor *out) {
    return lethe_rt_softmax_cross_entropy_grad(
        context, dloss, logP, target, weights, reduction, hasIgnore, 4, out);
  };
  expectError(context,
              grad(&sv, &pv, &blv, nullptr, LETHE_RT_REDUCTION_SUM, 0, &gv),
              kernel + "labels element 1 is 7, outside [0, 5)");
  // The ignore index (4) does not cover other values out of range.
  expectError(context,
              grad(&sv, &pv, &nlv, nullptr, LETHE_RT_REDUCTION_MEAN, 1, &gv),
              kernel + "labels element 0 is -1, outside [0, 5)");
  expectError(context,
              grad(&l2v, &pv, &lv, nullptr, LETHE_RT_REDUCTION_SUM, 0, &gv),
              kernel + "dloss (2) must be scalar for reduction sum");
  expectError(context,
              grad(&sv, &pv, &lv, nullptr, LETHE_RT_REDUCTION_NONE, 0, &gv),
              kernel + "dloss (scalar) must be 2 for reduction none");
  expectError(context,
              grad(&s64v, &pv, &lv, nullptr, LETHE_RT_REDUCTION_MEAN, 0, &gv),
              kernel + "dloss must be f32, got f64");
  expectError(
      context, grad(&sv, &pv, &lv, nullptr, LETHE_RT_REDUCTION_MEAN, 0, &tv),
      kernel + "log_prob (2x5) and dscores (5x2) must have the same shape");
  expectError(context,
              grad(&sv, &isv, &lv, nullptr, LETHE_RT_REDUCTION_MEAN, 0, &gv),
              kernel + "log_prob must be f16, bf16, f32 or f64, got i64");
  expectError(context,
              grad(&sv, &pv, &flv, nullptr, LETHE_RT_REDUCTION_MEAN, 0, &gv),
              kernel + "labels must be i32 or i64, got f32");
  expectError(context,
              grad(&sv, &pv, &lv, &w3v, LETHE_RT_REDUCTION_MEAN, 0, &gv),
              kernel + "weights (3) must have shape 5, the classes of "
                       "log_prob (2x5)");
  expectError(
      context,
      grad(&sv, &pv, &lv, nullptr, static_cast<lethe_rt_reduction>(7), 0, &gv),
      kernel + "unknown reduction 7");
  // dloss inside dscores.
  lethe_rt_tensor inside{dscores.bytes.data(), LETHE_RT_F32, 0, nullptr};
  expectError(
      context, grad(&inside, &pv, &lv, nullptr, LETHE_RT_REDUCTION_SUM, 0, &gv),
      kernel + "dscores overlaps dloss, labels, weights or part of log_prob");
}

TEST_F(GradientTest, NllGradRejectsBadArguments) {
  TypedTensor dinput({2, 5}, LETHE_RT_F32), intInput({2, 5}, LETHE_RT_I64),
      rank1({5}, LETHE_RT_F32), target({2}, LETHE_RT_I64, {0, 3}),
      badTarget({2}, LETHE_RT_I64, {2, 7}), target3({3}, LETHE_RT_I64),
      scalar({}, LETHE_RT_F32), loss2({2}, LETHE_RT_F32),
      weights3({3}, LETHE_RT_F32);
  lethe_rt_tensor dv = dinput.view(), iv = intInput.view(), r1v = rank1.view(),
                  tv = target.view(), btv = badTarget.view(),
                  t3v = target3.view(), sv = scalar.view(), l2v = loss2.view(),
                  w3v = weights3.view();
  std::string kernel = "lethe_rt_nll_grad: ";
  auto grad = [&](const lethe_rt_tensor *dloss, const lethe_rt_tensor *labels,
                  const lethe_rt_tensor *weight, lethe_rt_reduction reduction,
                  const lethe_rt_tensor *out) {
    return lethe_rt_nll_grad(context, dloss, labels, weight, reduction, 0, 0,
                             out);
  };
  expectError(context, grad(&sv, &btv, nullptr, LETHE_RT_REDUCTION_SUM, &dv),
              kernel + "target element 1 is 7, outside [0, 5)");
  expectError(context, grad(&l2v, &tv, nullptr, LETHE_RT_REDUCTION_MEAN, &dv),
              kernel + "dloss (2) must be scalar for reduction mean");
  expectError(context, grad(&sv, &tv, nullptr, LETHE_RT_REDUCTION_NONE, &dv),
              kernel + "dloss (scalar) must be 2 for reduction none");
  expectError(context, grad(&sv, &tv, nullptr, LETHE_RT_REDUCTION_SUM, &iv),
              kernel + "dinput must be f16, bf16, f32 or f64, got i64");
  expectError(context, grad(&sv, &t3v, nullptr, LETHE_RT_REDUCTION_SUM, &dv),
              kernel + "target (3) must be 2 for dinput (2x5)");
  expectError(context, grad(&sv, &tv, &w3v, LETHE_RT_REDUCTION_SUM, &dv),
              kernel + "weight (3) must have shape 5, the classes of dinput "
                       "(2x5)");
  expectError(context, grad(&sv, &tv, nullptr, LETHE_RT_REDUCTION_SUM, &r1v),
              kernel + "dinput must have rank >= 2 (N, C, ...), got 5");
  lethe_rt_tensor inside{dinput.bytes.data(), LETHE_RT_F32, 0, nullptr};
  expectError(context, grad(&inside, &tv, nullptr, LETHE_RT_REDUCTION_SUM, &dv),
              kernel + "dinput overlaps dloss, target or weight");
}

} // namespace
