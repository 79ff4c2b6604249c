//===- NormalizationTest.cpp - Normalization and softmax kernels ----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "TypedTensor.h"

#include <limits>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using NormalizationTest = RuntimeTest;

constexpr double inf = std::numeric_limits<double>::infinity();

/// Expects `status` to be an error whose message is `message`.
void expectError(lethe_rt_context *context, lethe_rt_status status,
                 const char *message) {
  EXPECT_EQ(status, LETHE_RT_ERROR);
  EXPECT_STREQ(lethe_rt_last_error(context), message);
}

/// Spatial size (dims from 2 on) of a batch-norm input shape.
int64_t spatialOf(const std::vector<int64_t> &shape) {
  int64_t size = 1;
  for (size_t dim = 2; dim < shape.size(); ++dim)
    size *= shape[dim];
  return size;
}

/// y = scale * (x - mean) / sqrt(var + epsilon) + bias per channel.
std::vector<double> referenceBatchNorm(const TypedTensor &x,
                                       const std::vector<double> &scale,
                                       const std::vector<double> &bias,
                                       const std::vector<double> &mean,
                                       const std::vector<double> &var,
                                       double epsilon) {
  int64_t channels = x.shape[1], spatial = spatialOf(x.shape);
  std::vector<double> y(x.size());
  for (int64_t i = 0; i < x.size(); ++i) {
    int64_t c = (i / spatial) % channels;
    y[i] =
        scale[c] * (x.get(i) - mean[c]) / std::sqrt(var[c] + epsilon) + bias[c];
  }
  return y;
}

TEST_F(NormalizationTest, BatchNormMatchesReference) {
  uint64_t seed = 1;
  for (lethe_rt_dtype dtype : floatDtypes()) {
    for (const std::vector<int64_t> &shape : std::vector<std::vector<int64_t>>{
             {2, 3}, {2, 3, 4, 5}, {1, 4, 7}, {0, 3, 2}}) {
      // Parameters in x's dtype, and in f64 (ONNX allows other types).
      for (lethe_rt_dtype paramType : {dtype, LETHE_RT_F64}) {
        SCOPED_TRACE(std::string(dtypeName(dtype)) + " params " +
                     dtypeName(paramType) + " case " + std::to_string(seed));
        int64_t channels = shape[1];
        TypedTensor x = randomTensor(shape, dtype, seed++, -3, 3);
        TypedTensor scale = randomTensor({channels}, paramType, seed++);
        TypedTensor bias = randomTensor({channels}, paramType, seed++);
        TypedTensor mean = randomTensor({channels}, paramType, seed++);
        TypedTensor var = randomTensor({channels}, paramType, seed++, 0.1, 2);
        TypedTensor y(shape, dtype);
        lethe_rt_tensor xv = x.view(), sv = scale.view(), bv = bias.view(),
                        mv = mean.view(), vv = var.view(), yv = y.view();
        ASSERT_EQ(
            lethe_rt_batch_norm(context, &xv, &sv, &bv, &mv, &vv, 1e-3, &yv),
            LETHE_RT_OK)
            << lastError();
        expectAllNear(y.values(),
                      referenceBatchNorm(x, scale.values(), bias.values(),
                                         mean.values(), var.values(), 1e-3),
                      toleranceFor(dtype) * 4);
      }
    }
  }
}

TEST_F(NormalizationTest, BatchNormTrainMatchesReference) {
  uint64_t seed = 100;
  double epsilon = 1e-5, momentum = 0.9;
  for (lethe_rt_dtype dtype : floatDtypes()) {
    for (const std::vector<int64_t> &shape :
         std::vector<std::vector<int64_t>>{{2, 3}, {2, 3, 4, 5}, {4, 2, 3}}) {
      SCOPED_TRACE(std::string(dtypeName(dtype)) + " case " +
                   std::to_string(seed));
      int64_t channels = shape[1], spatial = spatialOf(shape);
      int64_t count = shape[0] * spatial;
      TypedTensor x = randomTensor(shape, dtype, seed++, -2, 4);
      TypedTensor scale = randomTensor({channels}, dtype, seed++);
      TypedTensor bias = randomTensor({channels}, dtype, seed++);
      TypedTensor runningMean = randomTensor({channels}, LETHE_RT_F32, seed++);
      TypedTensor runningVar =
          randomTensor({channels}, LETHE_RT_F32, seed++, 0.5, 2);
      TypedTensor y(shape, dtype), meanOut({channels}, LETHE_RT_F32),
          varOut({channels}, LETHE_RT_F32), savedMean({channels}, dtype),
          savedInvStd({channels}, dtype);

      std::vector<double> mean(channels, 0), var(channels, 0);
      for (int64_t i = 0; i < x.size(); ++i)
        mean[(i / spatial) % channels] += x.get(i) / count;
      for (int64_t i = 0; i < x.size(); ++i) {
        double deviation = x.get(i) - mean[(i / spatial) % channels];
        var[(i / spatial) % channels] += deviation * deviation / count;
      }
      std::vector<double> expectedMean(channels), expectedVar(channels),
          invStd(channels);
      for (int64_t c = 0; c < channels; ++c) {
        expectedMean[c] =
            runningMean.get(c) * momentum + mean[c] * (1 - momentum);
        expectedVar[c] = runningVar.get(c) * momentum + var[c] * (1 - momentum);
        invStd[c] = 1 / std::sqrt(var[c] + epsilon);
      }

      lethe_rt_tensor xv = x.view(), sv = scale.view(), bv = bias.view(),
                      rmv = runningMean.view(), rvv = runningVar.view(),
                      yv = y.view(), mov = meanOut.view(), vov = varOut.view(),
                      smv = savedMean.view(), siv = savedInvStd.view();
      ASSERT_EQ(lethe_rt_batch_norm_train(context, &xv, &sv, &bv, &rmv, &rvv,
                                          epsilon, momentum, &yv, &mov, &vov,
                                          &smv, &siv),
                LETHE_RT_OK)
          << lastError();
      double tolerance = toleranceFor(dtype) * 4;
      expectAllNear(y.values(),
                    referenceBatchNorm(x, scale.values(), bias.values(), mean,
                                       var, epsilon),
                    tolerance);
      expectAllNear(meanOut.values(), expectedMean, 1e-6);
      expectAllNear(varOut.values(), expectedVar, 1e-6);
      expectAllNear(savedMean.values(), mean, tolerance);
      expectAllNear(savedInvStd.values(), invStd, tolerance);
    }
  }
}

// A hand-computed case: the channel holds -1 and 2, so its mean is 0.5 and
// its population variance 2.25.
TEST_F(NormalizationTest, BatchNormTrainSmallExample) {
  TypedTensor x({2, 1, 1}, LETHE_RT_F32, {-1, 2});
  TypedTensor scale({1}, LETHE_RT_F32, {2}), bias({1}, LETHE_RT_F32, {1});
  TypedTensor runningMean({1}, LETHE_RT_F32, {1}),
      runningVar({1}, LETHE_RT_F32, {1});
  TypedTensor y({2, 1, 1}, LETHE_RT_F32), meanOut({1}, LETHE_RT_F32),
      varOut({1}, LETHE_RT_F32), savedMean({1}, LETHE_RT_F32),
      savedInvStd({1}, LETHE_RT_F32);
  lethe_rt_tensor xv = x.view(), sv = scale.view(), bv = bias.view(),
                  rmv = runningMean.view(), rvv = runningVar.view(),
                  yv = y.view(), mov = meanOut.view(), vov = varOut.view(),
                  smv = savedMean.view(), siv = savedInvStd.view();
  ASSERT_EQ(lethe_rt_batch_norm_train(context, &xv, &sv, &bv, &rmv, &rvv, 0,
                                      0.5, &yv, &mov, &vov, &smv, &siv),
            LETHE_RT_OK)
      << lastError();
  // (x - 0.5) / 1.5 * 2 + 1.
  expectAllNear(y.values(), {-1, 3}, 1e-6);
  EXPECT_EQ(meanOut.get(0), 0.75); // 1 * 0.5 + 0.5 * 0.5
  EXPECT_EQ(varOut.get(0), 1.625); // 1 * 0.5 + 2.25 * 0.5
  EXPECT_EQ(savedMean.get(0), 0.5);
  EXPECT_FLOAT_EQ(savedInvStd.get(0), 1 / 1.5);
}

TEST_F(NormalizationTest, BatchNormRejectsBadArguments) {
  TypedTensor x5({5}, LETHE_RT_F32), x23({2, 3}, LETHE_RT_F32),
      y32({3, 2}, LETHE_RT_F32), c3({3}, LETHE_RT_F32), c4({4}, LETHE_RT_F32),
      c2({2}, LETHE_RT_F32), i3({3}, LETHE_RT_I32);
  lethe_rt_tensor vx5 = x5.view(), vx23 = x23.view(), vy32 = y32.view(),
                  vc3 = c3.view(), vc4 = c4.view(), vc2 = c2.view(),
                  vi3 = i3.view();
  expectError(
      context,
      lethe_rt_batch_norm(context, &vx5, &vc3, &vc3, &vc3, &vc3, 1e-5, &vx5),
      "lethe_rt_batch_norm: x must have rank >= 2 (N, C, ...), got 5");
  expectError(
      context,
      lethe_rt_batch_norm(context, &vx23, &vc4, &vc3, &vc3, &vc3, 1e-5, &vx23),
      "lethe_rt_batch_norm: scale (4) must have shape 3, the channels "
      "of x (2x3)");
  expectError(
      context,
      lethe_rt_batch_norm(context, &vx23, &vc3, &vc3, &vc3, &vc3, 1e-5, &vy32),
      "lethe_rt_batch_norm: x (2x3) and y (3x2) must have the same "
      "shape");
  expectError(
      context,
      lethe_rt_batch_norm(context, &vx23, &vc3, &vc3, &vi3, &vc3, 1e-5, &vx23),
      "lethe_rt_batch_norm: mean must be f16, bf16, f32 or f64, got "
      "i32");
  expectError(context,
              lethe_rt_batch_norm_train(context, &vx23, &vc3, &vc3, &vc3, &vc3,
                                        1e-5, 0.9, &vx23, &vc3, &vc3, &vc3,
                                        &vc2),
              "lethe_rt_batch_norm_train: saved_inv_std (2) must have shape "
              "3, the channels of x (2x3)");
  expectError(context,
              lethe_rt_batch_norm_train(context, &vx23, &vc3, &vc3, &vc3, &vc3,
                                        1e-5, 0.9, &vx23, &vc3, nullptr, &vc3,
                                        &vc3),
              "lethe_rt_batch_norm_train: running_var_out is missing (null "
              "descriptor)");
}

TEST_F(NormalizationTest, LayerNormMatchesReference) {
  struct Case {
    std::vector<int64_t> shape;
    int64_t axis;
    std::vector<int64_t> scaleShape;
    bool bias;
  };
  std::vector<Case> cases{
      {{2, 3, 4}, 0, {2, 3, 4}, true}, {{2, 3, 4}, 1, {3, 4}, true},
      {{2, 3, 4}, 1, {4}, false},      {{2, 3, 4}, 1, {3, 1}, true},
      {{2, 3, 4}, 2, {4}, true},       {{5, 7}, 1, {7}, false},
      {{4, 300}, 1, {300}, true},      {{3, 1}, 1, {1}, true},
  };
  uint64_t seed = 200;
  double epsilon = 1e-5;
  for (lethe_rt_dtype dtype : floatDtypes()) {
    for (const Case &layer : cases) {
      SCOPED_TRACE(std::string(dtypeName(dtype)) + " case " +
                   std::to_string(seed));
      TypedTensor x = randomTensor(layer.shape, dtype, seed++, -2, 3);
      TypedTensor scale = randomTensor(layer.scaleShape, dtype, seed++);
      TypedTensor bias = randomTensor(layer.scaleShape, dtype, seed++);
      std::vector<int64_t> statShape = layer.shape, normalized;
      for (size_t dim = layer.axis; dim < statShape.size(); ++dim) {
        normalized.push_back(statShape[dim]);
        statShape[dim] = 1;
      }
      TypedTensor y(layer.shape, dtype), mean(statShape, LETHE_RT_F32),
          invStd(statShape, LETHE_RT_F32);

      int64_t size = 1;
      for (int64_t dim : normalized)
        size *= dim;
      int64_t rows = x.size() / size;
      std::vector<double> expectedY(x.size()), expectedMean(rows),
          expectedInvStd(rows);
      for (int64_t row = 0; row < rows; ++row) {
        double sum = 0, squares = 0;
        for (int64_t i = 0; i < size; ++i)
          sum += x.get(row * size + i);
        double m = sum / size;
        for (int64_t i = 0; i < size; ++i)
          squares += std::pow(x.get(row * size + i) - m, 2);
        double s = 1 / std::sqrt(squares / size + epsilon);
        expectedMean[row] = m;
        expectedInvStd[row] = s;
        for (int64_t i = 0; i < size; ++i) {
          int64_t p = broadcastIndex(unravel(i, normalized), layer.scaleShape);
          expectedY[row * size + i] =
              (x.get(row * size + i) - m) * s * scale.get(p) +
              (layer.bias ? bias.get(p) : 0);
        }
      }

      lethe_rt_tensor xv = x.view(), sv = scale.view(), bv = bias.view(),
                      yv = y.view(), mv = mean.view(), iv = invStd.view();
      ASSERT_EQ(lethe_rt_layer_norm(context, &xv, &sv,
                                    layer.bias ? &bv : nullptr, layer.axis,
                                    epsilon, &yv, &mv, &iv),
                LETHE_RT_OK)
          << lastError();
      expectAllNear(y.values(), expectedY, toleranceFor(dtype) * 4);
      expectAllNear(mean.values(), expectedMean, 1e-6);
      expectAllNear(invStd.values(), expectedInvStd, 1e-5);
    }
  }
}

TEST_F(NormalizationTest, LayerNormRejectsBadArguments) {
  TypedTensor x({2, 3}, LETHE_RT_F32), s3({3}, LETHE_RT_F32),
      s4({4}, LETHE_RT_F32), s2({2}, LETHE_RT_F32), stat({2, 1}, LETHE_RT_F32);
  lethe_rt_tensor xv = x.view(), v3 = s3.view(), v4 = s4.view(), v2 = s2.view(),
                  vs = stat.view();
  expectError(
      context,
      lethe_rt_layer_norm(context, &xv, &v3, nullptr, 2, 1e-5, &xv, &vs, &vs),
      "lethe_rt_layer_norm: axis 2 is out of range for x (2x3)");
  expectError(
      context,
      lethe_rt_layer_norm(context, &xv, &v4, nullptr, 1, 1e-5, &xv, &vs, &vs),
      "lethe_rt_layer_norm: scale (4) does not broadcast to the "
      "normalized shape 3");
  expectError(
      context,
      lethe_rt_layer_norm(context, &xv, &v3, &v2, 1, 1e-5, &xv, &vs, &vs),
      "lethe_rt_layer_norm: bias (2) does not broadcast to the "
      "normalized shape 3");
  expectError(
      context,
      lethe_rt_layer_norm(context, &xv, &v3, nullptr, 1, 1e-5, &xv, &v2, &vs),
      "lethe_rt_layer_norm: mean (2) must be 2x1 for x (2x3), axis 1");
}

/// Softmax (or log-softmax) of x along `axis`, in double.
std::vector<double> referenceSoftmax(const TypedTensor &x, int64_t axis,
                                     bool log) {
  int64_t size = x.shape[axis], inner = 1;
  for (size_t dim = axis + 1; dim < x.shape.size(); ++dim)
    inner *= x.shape[dim];
  std::vector<double> result(x.size());
  for (int64_t base = 0; base < x.size(); ++base) {
    if ((base / inner) % size != 0)
      continue; // visit each lane once, from its first element
    double max = -inf, sum = 0;
    for (int64_t k = 0; k < size; ++k)
      max = std::max(max, x.get(base + k * inner));
    for (int64_t k = 0; k < size; ++k)
      sum += std::exp(x.get(base + k * inner) - max);
    for (int64_t k = 0; k < size; ++k) {
      double shifted = x.get(base + k * inner) - max;
      result[base + k * inner] =
          log ? shifted - std::log(sum) : std::exp(shifted) / sum;
    }
  }
  return result;
}

TEST_F(NormalizationTest, SoftmaxMatchesReferenceAlongEveryAxis) {
  uint64_t seed = 300;
  for (lethe_rt_dtype dtype : floatDtypes()) {
    for (auto [shape, axis] :
         std::vector<std::pair<std::vector<int64_t>, int64_t>>{
             {{2, 3, 4}, 0},
             {{2, 3, 4}, 1},
             {{2, 3, 4}, 2},
             {{5}, 0},
             {{3, 1}, 1},
             {{2, 1000}, 1}}) {
      for (int log : {0, 1}) {
        SCOPED_TRACE(std::string(dtypeName(dtype)) + " case " +
                     std::to_string(seed) + (log ? " log" : ""));
        TypedTensor x = randomTensor(shape, dtype, seed++, -5, 5);
        TypedTensor out(shape, dtype);
        lethe_rt_tensor xv = x.view(), ov = out.view();
        ASSERT_EQ(lethe_rt_softmax(context, &xv, axis, log, &ov), LETHE_RT_OK)
            << lastError();
        expectAllNear(out.values(), referenceSoftmax(x, axis, log),
                      toleranceFor(dtype) * 2);
      }
    }
  }
}

// Large scores do not overflow (the maximum is subtracted first), and -inf
// scores get probability 0.
TEST_F(NormalizationTest, SoftmaxIsNumericallyStable) {
  TypedTensor x({2, 3}, LETHE_RT_F32, {1000, 1001, 1002, 0, -inf, 0});
  TypedTensor out({2, 3}, LETHE_RT_F32);
  lethe_rt_tensor xv = x.view(), ov = out.view();
  ASSERT_EQ(lethe_rt_softmax(context, &xv, 1, 0, &ov), LETHE_RT_OK)
      << lastError();
  expectAllNear(out.values(),
                {0.09003057317038046, 0.24472847105479767, 0.6652409557748219,
                 0.5, 0, 0.5},
                1e-7);
  ASSERT_EQ(lethe_rt_softmax(context, &xv, 1, 1, &ov), LETHE_RT_OK)
      << lastError();
  expectAllNear(out.values(),
                {-2.4076059644443806, -1.4076059644443806, -0.4076059644443806,
                 -std::log(2.0), -inf, -std::log(2.0)},
                1e-6);
}

TEST_F(NormalizationTest, SoftmaxRejectsBadArguments) {
  TypedTensor x({2, 3}, LETHE_RT_F32), y({3, 2}, LETHE_RT_F32),
      i({2, 3}, LETHE_RT_I64);
  lethe_rt_tensor xv = x.view(), yv = y.view(), iv = i.view();
  expectError(context, lethe_rt_softmax(context, &xv, 2, 0, &xv),
              "lethe_rt_softmax: axis 2 is out of range for x (2x3)");
  expectError(context, lethe_rt_softmax(context, &xv, 1, 0, &yv),
              "lethe_rt_softmax: x (2x3) and out (3x2) must have the same "
              "shape");
  expectError(context, lethe_rt_softmax(context, &iv, 1, 0, &iv),
              "lethe_rt_softmax: x must be f16, bf16, f32 or f64, got i64");
}

} // namespace
