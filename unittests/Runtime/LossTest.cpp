//===- LossTest.cpp - Loss kernels ----------------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "TypedTensor.h"

#include <limits>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using LossTest = RuntimeTest;

/// Expects `status` to be an error whose message is `message`.
void expectError(lethe_rt_context *context, lethe_rt_status status,
                 const char *message) {
  EXPECT_EQ(status, LETHE_RT_ERROR);
  EXPECT_STREQ(lethe_rt_last_error(context), message);
}

/// Log-softmax of scores (N, C, D...) along dim 1, in double.
std::vector<double> referenceLogSoftmax(const TypedTensor &scores) {
  int64_t classes = scores.shape[1], spatial = 1;
  for (size_t dim = 2; dim < scores.shape.size(); ++dim)
    spatial *= scores.shape[dim];
  std::vector<double> result(scores.size());
  for (int64_t n = 0; n < scores.shape[0]; ++n)
    for (int64_t d = 0; d < spatial; ++d) {
      auto at = [&](int64_t c) { return (n * classes + c) * spatial + d; };
      double max = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t c = 0; c < classes; ++c)
        max = std::max(max, scores.get(at(c)));
      for (int64_t c = 0; c < classes; ++c)
        sum += std::exp(scores.get(at(c)) - max);
      for (int64_t c = 0; c < classes; ++c)
        result[at(c)] = scores.get(at(c)) - max - std::log(sum);
    }
  return result;
}

/// The ONNX loss (none: per element; sum; mean: divided by the summed
/// weights of the counted elements) from log-probabilities.
std::vector<double> referenceLoss(const std::vector<double> &logProb,
                                  const std::vector<int64_t> &shape,
                                  const TypedTensor &labels,
                                  const TypedTensor *weights,
                                  lethe_rt_reduction reduction,
                                  const int64_t *ignoreIndex) {
  int64_t classes = shape[1], spatial = 1;
  for (size_t dim = 2; dim < shape.size(); ++dim)
    spatial *= shape[dim];
  std::vector<double> elements(labels.size());
  double total = 0, weightTotal = 0;
  for (int64_t i = 0; i < labels.size(); ++i) {
    int64_t label = static_cast<int64_t>(labels.get(i));
    if (ignoreIndex && label == *ignoreIndex)
      continue;
    double weight = weights ? weights->get(label) : 1;
    int64_t n = i / spatial, d = i % spatial;
    elements[i] = -logProb[(n * classes + label) * spatial + d] * weight;
    total += elements[i];
    weightTotal += weight;
  }
  if (reduction == LETHE_RT_REDUCTION_NONE)
    return elements;
  return {reduction == LETHE_RT_REDUCTION_SUM ? total : total / weightTotal};
}

struct ClassCase {
  std::vector<int64_t> shape;
  bool weights;
  bool hasIgnore;
  int64_t ignoreIndex;
};

const std::vector<ClassCase> &classCases() {
  static const std::vector<ClassCase> cases{
      {{3, 5}, false, false, 0},      {{3, 5}, true, false, 0},
      {{2, 4, 3}, true, true, 1},     {{2, 4, 3}, false, true, 2},
      {{2, 3, 2, 2}, true, true, -1}, {{4, 3, 5}, false, true, 10},
      {{6, 2}, true, true, 0},
  };
  return cases;
}

/// Random labels in [0, classes), with about a quarter replaced by
/// `ignoreIndex` when there is one.
TypedTensor randomLabels(const std::vector<int64_t> &shape,
                         lethe_rt_dtype dtype, int64_t classes,
                         const ClassCase &loss, uint64_t seed) {
  TypedTensor labels(shape, dtype);
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < labels.size(); ++i) {
    int64_t label = static_cast<int64_t>(rng() % classes);
    if (loss.hasIgnore && rng() % 4 == 0)
      label = loss.ignoreIndex;
    labels.set(i, static_cast<double>(label));
  }
  return labels;
}

TEST_F(LossTest, SoftmaxCrossEntropyMatchesReference) {
  uint64_t seed = 1;
  for (lethe_rt_dtype dtype : floatDtypes()) {
    for (const ClassCase &loss : classCases()) {
      for (lethe_rt_reduction reduction :
           {LETHE_RT_REDUCTION_NONE, LETHE_RT_REDUCTION_SUM,
            LETHE_RT_REDUCTION_MEAN}) {
        SCOPED_TRACE(std::string(dtypeName(dtype)) + " reduction " +
                     std::to_string(reduction) + " case " +
                     std::to_string(seed));
        std::vector<int64_t> labelShape = loss.shape;
        labelShape.erase(labelShape.begin() + 1);
        int64_t classes = loss.shape[1];
        TypedTensor scores = randomTensor(loss.shape, dtype, seed++, -3, 3);
        TypedTensor labels =
            randomLabels(labelShape, seed % 2 ? LETHE_RT_I64 : LETHE_RT_I32,
                         classes, loss, seed);
        ++seed;
        TypedTensor weights = randomTensor({classes}, dtype, seed++, 0.2, 2);
        TypedTensor out(reduction == LETHE_RT_REDUCTION_NONE
                            ? labelShape
                            : std::vector<int64_t>{},
                        dtype);
        TypedTensor logProb(loss.shape, dtype);
        lethe_rt_tensor sv = scores.view(), lv = labels.view(),
                        wv = weights.view(), ov = out.view(),
                        pv = logProb.view();
        ASSERT_EQ(lethe_rt_softmax_cross_entropy(
                      context, &sv, &lv, loss.weights ? &wv : nullptr,
                      reduction, loss.hasIgnore, loss.ignoreIndex, &ov, &pv),
                  LETHE_RT_OK)
            << lastError();
        std::vector<double> expectedLogProb = referenceLogSoftmax(scores);
        double tolerance = toleranceFor(dtype) * 4;
        expectAllNear(logProb.values(), expectedLogProb, tolerance);
        expectAllNear(
            out.values(),
            referenceLoss(expectedLogProb, loss.shape, labels,
                          loss.weights ? &weights : nullptr, reduction,
                          loss.hasIgnore ? &loss.ignoreIndex : nullptr),
            tolerance);
      }
    }
  }
}

TEST_F(LossTest, NegativeLogLikelihoodMatchesReference) {
  uint64_t seed = 500;
  for (lethe_rt_dtype dtype : floatDtypes()) {
    for (const ClassCase &loss : classCases()) {
      for (lethe_rt_reduction reduction :
           {LETHE_RT_REDUCTION_NONE, LETHE_RT_REDUCTION_SUM,
            LETHE_RT_REDUCTION_MEAN}) {
        SCOPED_TRACE(std::string(dtypeName(dtype)) + " reduction " +
                     std::to_string(reduction) + " case " +
                     std::to_string(seed));
        std::vector<int64_t> labelShape = loss.shape;
        labelShape.erase(labelShape.begin() + 1);
        int64_t classes = loss.shape[1];
        TypedTensor input = randomTensor(loss.shape, dtype, seed++, -4, 0);
        TypedTensor target =
            randomLabels(labelShape, seed % 2 ? LETHE_RT_I64 : LETHE_RT_I32,
                         classes, loss, seed);
        ++seed;
        TypedTensor weight = randomTensor({classes}, dtype, seed++, 0.2, 2);
        TypedTensor out(reduction == LETHE_RT_REDUCTION_NONE
                            ? labelShape
                            : std::vector<int64_t>{},
                        dtype);
        lethe_rt_tensor iv = input.view(), tv = target.view(),
                        wv = weight.view(), ov = out.view();
        ASSERT_EQ(lethe_rt_nll(context, &iv, &tv, loss.weights ? &wv : nullptr,
                               reduction, loss.hasIgnore, loss.ignoreIndex,
                               &ov),
                  LETHE_RT_OK)
            << lastError();
        expectAllNear(
            out.values(),
            referenceLoss(input.values(), loss.shape, target,
                          loss.weights ? &weight : nullptr, reduction,
                          loss.hasIgnore ? &loss.ignoreIndex : nullptr),
            toleranceFor(dtype) * 2);
      }
    }
  }
}

/// Runs lethe_rt_nll on the hand-made (3, 2) log-probabilities below.
double handNll(lethe_rt_context *context, const std::vector<double> &weights,
               lethe_rt_reduction reduction, bool hasIgnore) {
  TypedTensor input({3, 2}, LETHE_RT_F64, {-1, -2, -3, -4, -5, -6});
  TypedTensor target({3}, LETHE_RT_I64, {0, 1, 1});
  TypedTensor weight({2}, LETHE_RT_F64,
                     weights.empty() ? std::vector<double>{0, 0} : weights);
  TypedTensor loss({}, LETHE_RT_F64);
  lethe_rt_tensor iv = input.view(), tv = target.view(), wv = weight.view(),
                  lv = loss.view();
  EXPECT_EQ(lethe_rt_nll(context, &iv, &tv, weights.empty() ? nullptr : &wv,
                         reduction, hasIgnore, 0, &lv),
            LETHE_RT_OK)
      << lethe_rt_last_error(context);
  return loss.get(0);
}

// Element losses are 1, 4 and 6 (weighted 1, 8 and 12 with weights (1, 2));
// the mean divides by the weights of the counted elements only.
TEST_F(LossTest, WeightedMeanDividesByTheCountedWeights) {
  EXPECT_EQ(handNll(context, {1, 2}, LETHE_RT_REDUCTION_SUM, false), 21);
  EXPECT_EQ(handNll(context, {1, 2}, LETHE_RT_REDUCTION_MEAN, false), 21 / 5.0);
  // Ignoring class 0 drops the first element and its weight.
  EXPECT_EQ(handNll(context, {1, 2}, LETHE_RT_REDUCTION_MEAN, true), 5);
  EXPECT_EQ(handNll(context, {}, LETHE_RT_REDUCTION_MEAN, true), 5);
  EXPECT_EQ(handNll(context, {}, LETHE_RT_REDUCTION_MEAN, false), 11 / 3.0);
  // Nothing counted: the mean is 0 / 0.
  EXPECT_TRUE(
      std::isnan(handNll(context, {0, 0}, LETHE_RT_REDUCTION_MEAN, false)));
}

TEST_F(LossTest, MeanSquaredErrorMatchesReference) {
  uint64_t seed = 900;
  for (lethe_rt_dtype dtype : floatDtypes()) {
    for (const std::vector<int64_t> &shape :
         std::vector<std::vector<int64_t>>{{2, 3}, {}, {4, 5, 6}, {0}}) {
      for (lethe_rt_reduction reduction :
           {LETHE_RT_REDUCTION_NONE, LETHE_RT_REDUCTION_SUM,
            LETHE_RT_REDUCTION_MEAN}) {
        SCOPED_TRACE(std::string(dtypeName(dtype)) + " reduction " +
                     std::to_string(reduction) + " case " +
                     std::to_string(seed));
        TypedTensor a = randomTensor(shape, dtype, seed++);
        TypedTensor b = randomTensor(shape, dtype, seed++);
        bool none = reduction == LETHE_RT_REDUCTION_NONE;
        TypedTensor loss(none ? shape : std::vector<int64_t>{}, dtype);
        std::vector<double> squares(a.size());
        double total = 0;
        for (int64_t i = 0; i < a.size(); ++i) {
          squares[i] = std::pow(a.get(i) - b.get(i), 2);
          total += squares[i];
        }
        std::vector<double> expected =
            none ? squares
                 : std::vector<double>{reduction == LETHE_RT_REDUCTION_SUM
                                           ? total
                                           : total / a.size()};
        lethe_rt_tensor av = a.view(), bv = b.view(), lv = loss.view();
        ASSERT_EQ(lethe_rt_mse(context, &av, &bv, reduction, &lv), LETHE_RT_OK)
            << lastError();
        expectAllNear(loss.values(), expected, toleranceFor(dtype) * 4);
      }
    }
  }
  TypedTensor a({3}, LETHE_RT_F32, {1, 2, 3}), b({3}, LETHE_RT_F32, {1, 0, 0});
  TypedTensor loss({}, LETHE_RT_F32);
  lethe_rt_tensor av = a.view(), bv = b.view(), lv = loss.view();
  ASSERT_EQ(lethe_rt_mse(context, &av, &bv, LETHE_RT_REDUCTION_MEAN, &lv),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(loss.get(0), static_cast<float>(13 / 3.0));
}

TEST_F(LossTest, RejectsBadArguments) {
  TypedTensor scores({2, 5}, LETHE_RT_F32), labels({2}, LETHE_RT_I64),
      badLabels({2}, LETHE_RT_I64, {1, 7}), floatLabels({2}, LETHE_RT_F32),
      labels3({3}, LETHE_RT_I64), loss2({2}, LETHE_RT_F32),
      scalar({}, LETHE_RT_F32), logProb({5, 2}, LETHE_RT_F32),
      rank1({5}, LETHE_RT_F32), weights3({3}, LETHE_RT_F32),
      a23({2, 3}, LETHE_RT_F32), a32({3, 2}, LETHE_RT_F32);
  lethe_rt_tensor sv = scores.view(), lv = labels.view(),
                  blv = badLabels.view(), flv = floatLabels.view(),
                  l3v = labels3.view(), loss2v = loss2.view(),
                  scalarv = scalar.view(), pv = logProb.view(),
                  r1v = rank1.view(), w3v = weights3.view(), a23v = a23.view(),
                  a32v = a32.view();
  const char *sce = "lethe_rt_softmax_cross_entropy";
  auto message = [](const char *kernel, const char *text) {
    return std::string(kernel) + ": " + text;
  };
  expectError(context,
              lethe_rt_nll(context, &sv, &blv, nullptr, LETHE_RT_REDUCTION_MEAN,
                           0, 0, &scalarv),
              "lethe_rt_nll: target element 1 is 7, outside [0, 5)");
  expectError(context,
              lethe_rt_softmax_cross_entropy(context, &sv, &flv, nullptr,
                                             LETHE_RT_REDUCTION_MEAN, 0, 0,
                                             &scalarv, &sv),
              message(sce, "labels must be i32 or i64, got f32").c_str());
  expectError(context,
              lethe_rt_softmax_cross_entropy(context, &sv, &l3v, nullptr,
                                             LETHE_RT_REDUCTION_MEAN, 0, 0,
                                             &scalarv, &sv),
              message(sce, "labels (3) must be 2 for scores (2x5)").c_str());
  expectError(
      context,
      lethe_rt_softmax_cross_entropy(context, &sv, &lv, nullptr,
                                     LETHE_RT_REDUCTION_MEAN, 0, 0, &loss2v,
                                     &sv),
      message(sce, "loss (2) must be scalar for reduction mean").c_str());
  expectError(context,
              lethe_rt_softmax_cross_entropy(context, &sv, &lv, nullptr,
                                             LETHE_RT_REDUCTION_NONE, 0, 0,
                                             &loss2v, &pv),
              message(sce, "scores (2x5) and log_prob (5x2) must have the "
                           "same shape")
                  .c_str());
  expectError(
      context,
      lethe_rt_softmax_cross_entropy(context, &r1v, &lv, nullptr,
                                     LETHE_RT_REDUCTION_NONE, 0, 0, &loss2v,
                                     &r1v),
      message(sce, "scores must have rank >= 2 (N, C, ...), got 5").c_str());
  expectError(context,
              lethe_rt_nll(context, &sv, &lv, &w3v, LETHE_RT_REDUCTION_SUM, 0,
                           0, &scalarv),
              "lethe_rt_nll: weight (3) must have shape 5, the classes of "
              "input (2x5)");
  expectError(context,
              lethe_rt_mse(context, &a23v, &a23v,
                           static_cast<lethe_rt_reduction>(5), &scalarv),
              "lethe_rt_mse: unknown reduction 5");
  expectError(
      context,
      lethe_rt_mse(context, &a23v, &a32v, LETHE_RT_REDUCTION_SUM, &scalarv),
      "lethe_rt_mse: a (2x3) and b (3x2) must have the same shape");
}

} // namespace
