//===- LossTest.cpp - Losses on CUDA --------------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_mse, lethe_rt_softmax_cross_entropy, lethe_rt_nll and the two
// class-indexed gradients on the CUDA backend with each reduction, over few
// elements (added in order) and many (added by a block), with and without
// weights and with ignored labels, against double-precision references
// computed here; and the errors that name the kernel.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"

#include <algorithm>

using namespace lethe::rt::testing;

namespace {

using LossTest = CudaRuntimeTest;

template <typename T>
void checkMse(LossTest &test, lethe_rt_dtype dtype,
              const std::vector<int64_t> &shape) {
  size_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  std::vector<T> aValues = randomValues<T>(count, 21);
  std::vector<T> bValues = randomValues<T>(count, 22);
  lethe_rt_tensor a = test.place<T>(shape, dtype, aValues);
  lethe_rt_tensor b = test.place<T>(shape, dtype, bValues);
  std::vector<double> squares;
  double total = 0;
  for (size_t i = 0; i < count; ++i) {
    double difference = static_cast<double>(aValues[i]) - bValues[i];
    squares.push_back(difference * difference);
    total += squares.back();
  }
  std::string what = "mse of " + std::to_string(count);
  lethe_rt_tensor none = test.place<T>(shape, dtype);
  ASSERT_EQ(lethe_rt_mse(test.context, &a, &b, LETHE_RT_REDUCTION_NONE, &none),
            LETHE_RT_OK)
      << test.lastError();
  expectNear(test.read<T>(none), squares, what + " none");
  lethe_rt_tensor sum = test.place<T>({}, dtype);
  ASSERT_EQ(lethe_rt_mse(test.context, &a, &b, LETHE_RT_REDUCTION_SUM, &sum),
            LETHE_RT_OK)
      << test.lastError();
  expectNear(test.read<T>(sum), {total}, what + " sum");
  lethe_rt_tensor mean = test.place<T>({}, dtype);
  ASSERT_EQ(lethe_rt_mse(test.context, &a, &b, LETHE_RT_REDUCTION_MEAN, &mean),
            LETHE_RT_OK)
      << test.lastError();
  expectNear(test.read<T>(mean), {total / count}, what + " mean");
}

// Sums of 21 terms (in order), 5,117 (a block's tree) and 20,000 (three
// chunks of a split sum).
TEST_F(LossTest, MseF32) {
  checkMse<float>(*this, LETHE_RT_F32, {3, 7});
  checkMse<float>(*this, LETHE_RT_F32, {17, 301});
  checkMse<float>(*this, LETHE_RT_F32, {20, 1000});
}
TEST_F(LossTest, MseF64) {
  checkMse<double>(*this, LETHE_RT_F64, {3, 7});
  checkMse<double>(*this, LETHE_RT_F64, {17, 301});
  checkMse<double>(*this, LETHE_RT_F64, {20, 1000});
}

TEST_F(LossTest, MseOfNothingIsNaN) {
  lethe_rt_tensor a = place<float>({0, 4}, LETHE_RT_F32);
  lethe_rt_tensor loss = place<float>({}, LETHE_RT_F32, {1});
  ASSERT_EQ(lethe_rt_mse(context, &a, &a, LETHE_RT_REDUCTION_MEAN, &loss),
            LETHE_RT_OK)
      << lastError();
  EXPECT_TRUE(std::isnan(read<float>(loss)[0]));
  ASSERT_EQ(lethe_rt_mse(context, &a, &a, LETHE_RT_REDUCTION_SUM, &loss),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(read<float>(loss), (std::vector<float>{0}));
}

TEST_F(LossTest, InvalidArgumentsNameTheKernel) {
  lethe_rt_tensor a = place<float>({2, 3}, LETHE_RT_F32);
  lethe_rt_tensor loss = place<float>({}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_mse(context, &a, &a, LETHE_RT_REDUCTION_NONE, &loss),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_mse: loss (scalar) must be 2x3 for reduction none");
  EXPECT_EQ(
      lethe_rt_mse(context, &a, &a, static_cast<lethe_rt_reduction>(9), &loss),
      LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_mse: unknown reduction 9");
  lethe_rt_tensor b = place<double>({2, 3}, LETHE_RT_F64);
  EXPECT_EQ(lethe_rt_mse(context, &a, &b, LETHE_RT_REDUCTION_SUM, &loss),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_mse: b must be f32, got f64");
}

} // namespace

namespace {

/// The reference of a class-indexed loss and its gradient over (N, C, D)
/// log-probabilities: labels with ignored elements, weights or none.
struct ClassLossReference {
  int64_t batch, classes, spatial;
  std::vector<int64_t> labels;
  std::vector<double> weights; // empty: none
  int64_t ignoreIndex;

  double weightOf(int64_t label) const {
    return weights.empty() ? 1.0 : weights[label];
  }
  bool ignored(int64_t label) const { return label == ignoreIndex; }
  /// The loss for `reduction` (one value, or one per label element).
  template <typename T>
  std::vector<double> loss(const std::vector<T> &logProb,
                           lethe_rt_reduction reduction) const {
    std::vector<double> elements;
    double total = 0, weightTotal = 0;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t d = 0; d < spatial; ++d) {
        int64_t label = labels[n * spatial + d];
        double element = 0;
        if (!ignored(label)) {
          element = -static_cast<double>(
                        logProb[(n * classes + label) * spatial + d]) *
                    weightOf(label);
          weightTotal += weightOf(label);
        }
        elements.push_back(element);
        total += element;
      }
    if (reduction == LETHE_RT_REDUCTION_NONE)
      return elements;
    return {reduction == LETHE_RT_REDUCTION_SUM ? total : total / weightTotal};
  }
  /// The gradient (nll's when `nll`, else softmax cross entropy's).
  template <typename T>
  std::vector<double> grad(const std::vector<T> &logProb,
                           const std::vector<T> &dloss,
                           lethe_rt_reduction reduction, bool nll) const {
    double weightTotal = 0;
    for (int64_t label : labels)
      if (!ignored(label))
        weightTotal += weightOf(label);
    std::vector<double> out(batch * classes * spatial, 0);
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t d = 0; d < spatial; ++d) {
        int64_t label = labels[n * spatial + d];
        if (ignored(label))
          continue;
        double g = reduction == LETHE_RT_REDUCTION_NONE
                       ? static_cast<double>(dloss[n * spatial + d])
                   : reduction == LETHE_RT_REDUCTION_SUM
                       ? static_cast<double>(dloss[0])
                       : dloss[0] / weightTotal;
        double factor = g * weightOf(label);
        for (int64_t c = 0; c < classes; ++c) {
          int64_t at = (n * classes + c) * spatial + d;
          double hot = c == label ? 1.0 : 0.0;
          out[at] =
              nll ? -factor * hot
                  : factor * (std::exp(static_cast<double>(logProb[at])) - hot);
        }
      }
    return out;
  }
};

/// Softmax cross entropy and nll (T), labels (i64) of which every fifth is
/// ignored, weights of f32 (whatever T), each reduction, and both gradients.
template <typename T>
void checkClassLosses(LossTest &test, lethe_rt_dtype dtype, int64_t batch,
                      int64_t spatial, bool withWeights) {
  const int64_t classes = 5, ignoreIndex = -100;
  ClassLossReference reference{batch, classes, spatial, {}, {}, ignoreIndex};
  std::mt19937_64 rng(31);
  for (int64_t i = 0; i < batch * spatial; ++i)
    reference.labels.push_back(i % 5 == 3 ? ignoreIndex
                                          : static_cast<int64_t>(rng() % 5));
  std::vector<float> weightValues = randomValues<float>(classes, 32, 0.5, 2);
  if (withWeights)
    reference.weights.assign(weightValues.begin(), weightValues.end());
  std::vector<int64_t> shape{batch, classes, spatial},
      labelShape{batch, spatial};
  size_t count = batch * classes * spatial;
  std::vector<T> scoreValues = randomValues<T>(count, 33, -3, 3);
  lethe_rt_tensor scores = test.place<T>(shape, dtype, scoreValues);
  lethe_rt_tensor labels =
      test.place<int64_t>(labelShape, LETHE_RT_I64, reference.labels);
  lethe_rt_tensor weights =
      test.place<float>({classes}, LETHE_RT_F32, weightValues);
  const lethe_rt_tensor *weightsArgument = withWeights ? &weights : nullptr;
  std::string what = "N " + std::to_string(batch) + " D " +
                     std::to_string(spatial) + (withWeights ? " weighted" : "");

  for (lethe_rt_reduction reduction :
       {LETHE_RT_REDUCTION_NONE, LETHE_RT_REDUCTION_SUM,
        LETHE_RT_REDUCTION_MEAN}) {
    std::string name = what + " reduction " + std::to_string(reduction);
    bool none = reduction == LETHE_RT_REDUCTION_NONE;
    std::vector<int64_t> lossShape = none ? labelShape : std::vector<int64_t>{};
    lethe_rt_tensor loss = test.place<T>(lossShape, dtype);
    lethe_rt_tensor logProb = test.place<T>(shape, dtype);
    ASSERT_EQ(lethe_rt_softmax_cross_entropy(test.context, &scores, &labels,
                                             weightsArgument, reduction, 1,
                                             ignoreIndex, &loss, &logProb),
              LETHE_RT_OK)
        << test.lastError();
    std::vector<T> logProbValues = test.read<T>(logProb);
    // log_prob against the log-softmax of the scores along the classes.
    std::vector<double> logProbExpected(count);
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t d = 0; d < spatial; ++d) {
        double maximum = -INFINITY, sum = 0;
        for (int64_t c = 0; c < classes; ++c)
          maximum = std::max<double>(
              maximum, scoreValues[(n * classes + c) * spatial + d]);
        for (int64_t c = 0; c < classes; ++c)
          sum +=
              std::exp(scoreValues[(n * classes + c) * spatial + d] - maximum);
        for (int64_t c = 0; c < classes; ++c) {
          int64_t at = (n * classes + c) * spatial + d;
          logProbExpected[at] = scoreValues[at] - maximum - std::log(sum);
        }
      }
    expectNear(logProbValues, logProbExpected, name + " log_prob");
    std::vector<double> lossExpected = reference.loss(logProbValues, reduction);
    expectNear(test.read<T>(loss), lossExpected, name + " sce loss");

    lethe_rt_tensor nllLoss = test.place<T>(lossShape, dtype);
    ASSERT_EQ(lethe_rt_nll(test.context, &logProb, &labels, weightsArgument,
                           reduction, 1, ignoreIndex, &nllLoss),
              LETHE_RT_OK)
        << test.lastError();
    expectNear(test.read<T>(nllLoss), lossExpected, name + " nll loss");

    std::vector<T> dlossValues =
        randomValues<T>(none ? batch * spatial : 1, 34, 0.5, 2);
    lethe_rt_tensor dloss = test.place<T>(lossShape, dtype, dlossValues);
    lethe_rt_tensor dscores = test.place<T>(shape, dtype);
    ASSERT_EQ(lethe_rt_softmax_cross_entropy_grad(
                  test.context, &dloss, &logProb, &labels, weightsArgument,
                  reduction, 1, ignoreIndex, &dscores),
              LETHE_RT_OK)
        << test.lastError();
    expectNear(test.read<T>(dscores),
               reference.grad(logProbValues, dlossValues, reduction, false),
               name + " sce grad");
    lethe_rt_tensor dinput = test.place<T>(shape, dtype);
    ASSERT_EQ(lethe_rt_nll_grad(test.context, &dloss, &labels, weightsArgument,
                                reduction, 1, ignoreIndex, &dinput),
              LETHE_RT_OK)
        << test.lastError();
    expectNear(test.read<T>(dinput),
               reference.grad(logProbValues, dlossValues, reduction, true),
               name + " nll grad");
  }
}

TEST_F(LossTest, ClassLossesF32) {
  for (bool withWeights : {false, true}) {
    checkClassLosses<float>(*this, LETHE_RT_F32, 3, 4, withWeights);
    checkClassLosses<float>(*this, LETHE_RT_F32, 40, 3, withWeights);
  }
}
TEST_F(LossTest, ClassLossesF64) {
  for (bool withWeights : {false, true}) {
    checkClassLosses<double>(*this, LETHE_RT_F64, 3, 4, withWeights);
    checkClassLosses<double>(*this, LETHE_RT_F64, 40, 3, withWeights);
  }
}

// 17,000 label elements: the loss and the weights' sum are split sums
// (three chunks).
TEST_F(LossTest, ClassLossesSplitSums) {
  checkClassLosses<float>(*this, LETHE_RT_F32, 17000, 1, true);
}

TEST_F(LossTest, ClassLossErrorsNameTheKernel) {
  lethe_rt_tensor input = place<float>({2, 5}, LETHE_RT_F32);
  lethe_rt_tensor target = place<int32_t>({2}, LETHE_RT_I32, {4, 7});
  lethe_rt_tensor loss = place<float>({}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_nll(context, &input, &target, nullptr,
                         LETHE_RT_REDUCTION_SUM, 0, 0, &loss),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_nll: target element 1 is 7, outside [0, 5)");
  // Ignored, 7 counts for nothing.
  EXPECT_EQ(lethe_rt_nll(context, &input, &target, nullptr,
                         LETHE_RT_REDUCTION_SUM, 1, 7, &loss),
            LETHE_RT_OK)
      << lastError();
  lethe_rt_tensor floatLabels = place<float>({2}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_softmax_cross_entropy(context, &input, &floatLabels,
                                           nullptr, LETHE_RT_REDUCTION_MEAN, 0,
                                           0, &loss, &input),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_softmax_cross_entropy: labels must be i32 "
                         "or i64, got f32");
  lethe_rt_tensor dloss = place<float>({2}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_nll_grad(context, &dloss, &target, nullptr,
                              LETHE_RT_REDUCTION_MEAN, 1, 7, &input),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_nll_grad: dloss (2) must be scalar for "
                         "reduction mean");
  lethe_rt_tensor weights = place<float>({4}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_softmax_cross_entropy_grad(
                context, &loss, &input, &target, &weights,
                LETHE_RT_REDUCTION_SUM, 1, 7, &input),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_softmax_cross_entropy_grad: weights (4) "
                         "must have shape 5, the classes of log_prob (2x5)");
}

} // namespace
