//===- NormalizationTest.cpp - Batch and layer norm on CUDA ---------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_batch_norm, lethe_rt_batch_norm_train, lethe_rt_batch_norm_grad,
// lethe_rt_layer_norm and lethe_rt_layer_norm_grad on the CUDA backend, for
// every float dtype and parameters of other dtypes: against double-precision
// references computed here; bit for bit against NormalizationGroups.h's
// arithmetic run on the host with one lane (which unittests/Runtime shows to
// give the CPU backend's bits) where the kernels fold a group in one thread
// (groups shorter than minBlockGroup, batch norm inference, layer norm's
// dscale and dbias); the same bits from a second call and from a call in
// place; and the errors, with the CPU backend's words.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"
#include "StorageValues.h"
#include "cuda/NormalizationGroups.h"

#include <functional>
#include <string>
#include <utility>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using NormalizationTest = CudaRuntimeTest;

/// A tensor in the arena and its values on the host: the inputs the kernel
/// reads, or what the host computes for an output.
template <typename T> struct Tensor {
  std::vector<T> host;
  lethe_rt_tensor device;

  FloatValues hostValues() { return FloatValues{host.data(), dtypeOf<T>()}; }
};

int64_t product(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

/// A tensor of seeded random values in [low, high).
template <typename T>
Tensor<T> randomTensor(NormalizationTest &test, std::vector<int64_t> shape,
                       uint64_t seed, double low = -1, double high = 1) {
  Tensor<T> tensor;
  tensor.host = randomStorage<T>(product(shape), seed, low, high);
  tensor.device = test.place<T>(std::move(shape), dtypeOf<T>(), tensor.host);
  return tensor;
}

/// A tensor for an output: the arena's bytes as they are, zeros on the host.
template <typename T>
Tensor<T> outputTensor(NormalizationTest &test, std::vector<int64_t> shape) {
  Tensor<T> tensor;
  tensor.host.resize(product(shape));
  tensor.device = test.place<T>(std::move(shape), dtypeOf<T>());
  return tensor;
}

/// Expects the kernel's `tensor` to hold what the host computed, bit for
/// bit.
template <typename T>
void expectHostBits(NormalizationTest &test, const Tensor<T> &tensor,
                    const std::string &what) {
  expectSameBits(test.read<T>(tensor.device), tensor.host, what);
}

/// Expects the kernel's `tensor` within T's tolerance of `expected`.
template <typename T>
void expectReference(NormalizationTest &test, const Tensor<T> &tensor,
                     const std::vector<double> &expected,
                     const std::string &what) {
  expectClose(test.read<T>(tensor.device), expected, 4 * storageTolerance<T>(),
              what);
}

ChannelLayout channelLayout(const std::vector<int64_t> &shape) {
  return ChannelLayout::of(shape.data(), shape.size());
}

/// Whether the kernels fold groups of `size` elements in one thread each
/// (fewer than minBlockGroup, runtime/cuda/DeviceElements.cuh).
bool foldsInOneThread(int64_t size) { return size < 64; }

//===----------------------------------------------------------------------===//
// Batch normalization
//===----------------------------------------------------------------------===//

/// Inference over x of storage type T with parameters of storage type P.
template <typename T, typename P>
void checkBatchNorm(NormalizationTest &test,
                    const std::vector<int64_t> &shape) {
  int64_t channels = shape[1];
  double epsilon = 1e-3;
  auto x = randomTensor<T>(test, shape, 1, -3, 3);
  auto scale = randomTensor<P>(test, {channels}, 2);
  auto bias = randomTensor<P>(test, {channels}, 3);
  auto mean = randomTensor<P>(test, {channels}, 4);
  auto var = randomTensor<P>(test, {channels}, 5, 0.1, 2);
  auto y = outputTensor<T>(test, shape);
  ASSERT_EQ(lethe_rt_batch_norm(test.context, &x.device, &scale.device,
                                &bias.device, &mean.device, &var.device,
                                epsilon, &y.device),
            LETHE_RT_OK)
      << test.lastError();

  BatchNormInference inference;
  inference.x = x.host.data();
  inference.y = y.host.data();
  inference.scale = scale.hostValues();
  inference.bias = bias.hostValues();
  inference.mean = mean.hostValues();
  inference.var = var.hostValues();
  inference.epsilon = epsilon;
  inference.layout = channelLayout(shape);
  for (int64_t i = 0; i < product(shape); ++i)
    inference.element<T>(i);
  expectHostBits(test, y, "y");

  std::vector<double> xs = doublesOf(x.host), scales = doublesOf(scale.host),
                      biases = doublesOf(bias.host),
                      means = doublesOf(mean.host), vars = doublesOf(var.host);
  std::vector<double> expected(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    int64_t c = inference.layout.channelOf(i);
    expected[i] =
        scales[c] * (xs[i] - means[c]) / std::sqrt(vars[c] + epsilon) +
        biases[c];
  }
  expectReference(test, y, expected, "y");
}

TEST_F(NormalizationTest, BatchNormEveryDtype) {
  checkBatchNorm<Half, float>(*this, {3, 4, 5, 6});
  checkBatchNorm<BFloat16, double>(*this, {3, 4, 5, 6});
  checkBatchNorm<float, float>(*this, {3, 4, 5, 6});
  checkBatchNorm<float, Half>(*this, {2, 7});
  checkBatchNorm<double, double>(*this, {3, 4, 5, 6});
}

/// The per-channel means and population variances of x (N, C, ...).
void channelStatistics(const std::vector<double> &x,
                       const ChannelLayout &layout, std::vector<double> &mean,
                       std::vector<double> &variance) {
  int64_t count = layout.count();
  mean.assign(layout.channels, 0);
  variance.assign(layout.channels, 0);
  for (size_t i = 0; i < x.size(); ++i)
    mean[layout.channelOf(i)] += x[i] / count;
  for (size_t i = 0; i < x.size(); ++i) {
    double deviation = x[i] - mean[layout.channelOf(i)];
    variance[layout.channelOf(i)] += deviation * deviation / count;
  }
}

/// Training over x of storage type T with scale and bias of storage type P,
/// running statistics in f32 and saved statistics in T.
template <typename T, typename P>
void checkBatchNormTrain(NormalizationTest &test,
                         const std::vector<int64_t> &shape) {
  int64_t channels = shape[1];
  double epsilon = 1e-5, momentum = 0.9;
  ChannelLayout layout = channelLayout(shape);
  auto x = randomTensor<T>(test, shape, 11, -2, 4);
  auto scale = randomTensor<P>(test, {channels}, 12);
  auto bias = randomTensor<P>(test, {channels}, 13);
  auto runningMean = randomTensor<float>(test, {channels}, 14);
  auto runningVar = randomTensor<float>(test, {channels}, 15, 0.5, 2);
  auto y = outputTensor<T>(test, shape);
  auto meanOut = outputTensor<float>(test, {channels});
  auto varOut = outputTensor<float>(test, {channels});
  auto savedMean = outputTensor<T>(test, {channels});
  auto savedInvStd = outputTensor<T>(test, {channels});
  auto call = [&] {
    return lethe_rt_batch_norm_train(test.context, &x.device, &scale.device,
                                     &bias.device, &runningMean.device,
                                     &runningVar.device, epsilon, momentum,
                                     &y.device, &meanOut.device, &varOut.device,
                                     &savedMean.device, &savedInvStd.device);
  };
  ASSERT_EQ(call(), LETHE_RT_OK) << test.lastError();

  if (foldsInOneThread(layout.count())) {
    BatchNormTraining training;
    training.x = x.host.data();
    training.y = y.host.data();
    training.scale = scale.hostValues();
    training.bias = bias.hostValues();
    training.runningMean = runningMean.hostValues();
    training.runningVar = runningVar.hostValues();
    training.runningMeanOut = meanOut.hostValues();
    training.runningVarOut = varOut.hostValues();
    training.savedMean = savedMean.hostValues();
    training.savedInvStd = savedInvStd.hostValues();
    training.epsilon = epsilon;
    training.momentum = momentum;
    training.layout = layout;
    for (int64_t c = 0; c < channels; ++c)
      training.group<T>(c, 0, 1, SingleLane());
    expectHostBits(test, y, "y");
    expectHostBits(test, meanOut, "running_mean_out");
    expectHostBits(test, varOut, "running_var_out");
    expectHostBits(test, savedMean, "saved_mean");
    expectHostBits(test, savedInvStd, "saved_inv_std");
  }

  std::vector<double> xs = doublesOf(x.host), mean, var;
  channelStatistics(xs, layout, mean, var);
  std::vector<double> scales = doublesOf(scale.host),
                      biases = doublesOf(bias.host),
                      oldMean = doublesOf(runningMean.host),
                      oldVar = doublesOf(runningVar.host);
  std::vector<double> expectedY(xs.size()), invStd(channels),
      expectedMean(channels), expectedVar(channels);
  for (int64_t c = 0; c < channels; ++c) {
    invStd[c] = 1 / std::sqrt(var[c] + epsilon);
    expectedMean[c] = oldMean[c] * momentum + mean[c] * (1 - momentum);
    expectedVar[c] = oldVar[c] * momentum + var[c] * (1 - momentum);
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    int64_t c = layout.channelOf(i);
    expectedY[i] = (xs[i] - mean[c]) * invStd[c] * scales[c] + biases[c];
  }
  expectReference(test, y, expectedY, "y");
  expectReference(test, meanOut, expectedMean, "running_mean_out");
  expectReference(test, varOut, expectedVar, "running_var_out");
  expectReference(test, savedMean, mean, "saved_mean");
  expectReference(test, savedInvStd, invStd, "saved_inv_std");

  // The same call gives the same bits.
  std::vector<T> first = test.read<T>(y.device);
  std::vector<T> firstInvStd = test.read<T>(savedInvStd.device);
  ASSERT_EQ(call(), LETHE_RT_OK) << test.lastError();
  expectSameBits(test.read<T>(y.device), first, "y again");
  expectSameBits(test.read<T>(savedInvStd.device), firstInvStd,
                 "saved_inv_std again");
}

// Channels of 10 elements, folded in one thread each.
TEST_F(NormalizationTest, BatchNormTrainShortChannels) {
  checkBatchNormTrain<Half, float>(*this, {2, 3, 5});
  checkBatchNormTrain<BFloat16, BFloat16>(*this, {2, 3, 5});
  checkBatchNormTrain<float, double>(*this, {2, 3, 5});
  checkBatchNormTrain<double, double>(*this, {2, 3, 5});
  checkBatchNormTrain<float, float>(*this, {5, 4});
}

// Channels of 504 and 1000 elements, folded in one block each.
TEST_F(NormalizationTest, BatchNormTrainLongChannels) {
  checkBatchNormTrain<Half, float>(*this, {8, 3, 7, 9});
  checkBatchNormTrain<float, float>(*this, {8, 3, 7, 9});
  checkBatchNormTrain<double, Half>(*this, {8, 3, 7, 9});
  checkBatchNormTrain<float, float>(*this, {1000, 2});
}

// Channels of 20,480 elements in runs of 10,240 and of 16,384 in runs of 32,
// split into chunks (three and two): the chunks' sums pass between kernels.
TEST_F(NormalizationTest, BatchNormTrainSplitChannels) {
  checkBatchNormTrain<float, float>(*this, {2, 2, 128, 80});
  checkBatchNormTrain<double, Half>(*this, {512, 3, 32});
}

/// The gradient over x and dy of storage type T with scale and saved
/// statistics of storage type P; dscale in T, dbias in P.
template <typename T, typename P>
void checkBatchNormGrad(NormalizationTest &test,
                        const std::vector<int64_t> &shape) {
  int64_t channels = shape[1];
  ChannelLayout layout = channelLayout(shape);
  auto dy = randomTensor<T>(test, shape, 21);
  auto x = randomTensor<T>(test, shape, 22, -2, 2);
  auto scale = randomTensor<P>(test, {channels}, 23);
  auto mean = randomTensor<P>(test, {channels}, 24, -0.5, 0.5);
  auto invStd = randomTensor<P>(test, {channels}, 25, 0.5, 2);
  auto dx = outputTensor<T>(test, shape);
  auto dscale = outputTensor<T>(test, {channels});
  auto dbias = outputTensor<P>(test, {channels});
  ASSERT_EQ(lethe_rt_batch_norm_grad(test.context, &dy.device, &x.device,
                                     &scale.device, &mean.device,
                                     &invStd.device, &dx.device, &dscale.device,
                                     &dbias.device),
            LETHE_RT_OK)
      << test.lastError();

  if (foldsInOneThread(layout.count())) {
    BatchNormGradient gradient;
    gradient.dy = dy.host.data();
    gradient.x = x.host.data();
    gradient.dx = dx.host.data();
    gradient.scale = scale.hostValues();
    gradient.savedMean = mean.hostValues();
    gradient.savedInvStd = invStd.hostValues();
    gradient.dscale = dscale.hostValues();
    gradient.dbias = dbias.hostValues();
    gradient.layout = layout;
    for (int64_t c = 0; c < channels; ++c)
      gradient.group<T>(c, 0, 1, SingleLane());
    expectHostBits(test, dx, "dx");
    expectHostBits(test, dscale, "dscale");
    expectHostBits(test, dbias, "dbias");
  }

  std::vector<double> dys = doublesOf(dy.host), xs = doublesOf(x.host),
                      scales = doublesOf(scale.host),
                      means = doublesOf(mean.host),
                      invStds = doublesOf(invStd.host);
  std::vector<double> sumDy(channels, 0), sumDyXhat(channels, 0),
      expectedDx(xs.size());
  auto xhat = [&](size_t i) {
    int64_t c = layout.channelOf(i);
    return (xs[i] - means[c]) * invStds[c];
  };
  for (size_t i = 0; i < xs.size(); ++i) {
    sumDy[layout.channelOf(i)] += dys[i];
    sumDyXhat[layout.channelOf(i)] += dys[i] * xhat(i);
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    int64_t c = layout.channelOf(i);
    expectedDx[i] = scales[c] * invStds[c] *
                    (dys[i] - (sumDy[c] + xhat(i) * sumDyXhat[c]) /
                                  static_cast<double>(layout.count()));
  }
  expectReference(test, dx, expectedDx, "dx");
  expectReference(test, dscale, sumDyXhat, "dscale");
  expectReference(test, dbias, sumDy, "dbias");
}

TEST_F(NormalizationTest, BatchNormGradShortChannels) {
  checkBatchNormGrad<Half, Half>(*this, {2, 3, 5});
  checkBatchNormGrad<BFloat16, float>(*this, {2, 3, 5});
  checkBatchNormGrad<float, float>(*this, {2, 3, 5});
  checkBatchNormGrad<double, float>(*this, {3, 4});
}

TEST_F(NormalizationTest, BatchNormGradSplitChannels) {
  checkBatchNormGrad<float, float>(*this, {2, 2, 128, 80});
  checkBatchNormGrad<double, float>(*this, {512, 3, 32});
}

TEST_F(NormalizationTest, BatchNormGradLongChannels) {
  checkBatchNormGrad<float, float>(*this, {8, 3, 7, 9});
  checkBatchNormGrad<double, double>(*this, {8, 3, 7, 9});
  checkBatchNormGrad<BFloat16, float>(*this, {300, 2});
}

//===----------------------------------------------------------------------===//
// Layer normalization
//===----------------------------------------------------------------------===//

/// Scale and bias of the normalized shape itself: element k at offset k.
struct DirectOffsets {
  void offsetsAt(int64_t k, int64_t (&offsets)[2]) const {
    offsets[0] = offsets[1] = k;
  }
};

/// The offset in `shape` (right-aligned, broadcasting dims of 1) of element
/// k of `normalized`.
int64_t broadcastOffset(int64_t k, const std::vector<int64_t> &normalized,
                        const std::vector<int64_t> &shape) {
  int64_t offset = 0, stride = 1;
  size_t lead = normalized.size() - shape.size();
  for (size_t dim = normalized.size(); dim-- > lead;) {
    int64_t index = k % normalized[dim];
    k /= normalized[dim];
    int64_t size = shape[dim - lead];
    offset += (size == 1 ? 0 : index) * stride;
    stride *= size;
  }
  return offset;
}

/// x's shape with the dims from `axis` on set to 1.
std::vector<int64_t> statisticsShape(std::vector<int64_t> shape, int64_t axis) {
  std::fill(shape.begin() + axis, shape.end(), 1);
  return shape;
}

/// Layer norm over x (storage type T) from `axis` on, with scale and bias
/// (unless `hasBias` is false) of `scaleShape` and storage type P; mean in
/// f32, inv_std_dev in T.
template <typename T, typename P>
void checkLayerNorm(NormalizationTest &test, const std::vector<int64_t> &shape,
                    int64_t axis, const std::vector<int64_t> &scaleShape,
                    bool hasBias) {
  double epsilon = 1e-5;
  std::vector<int64_t> normalized(shape.begin() + axis, shape.end());
  std::vector<int64_t> statShape = statisticsShape(shape, axis);
  int64_t size = product(normalized), rows = product(statShape);
  auto x = randomTensor<T>(test, shape, 31, -2, 3);
  auto scale = randomTensor<P>(test, scaleShape, 32);
  auto bias = randomTensor<P>(test, scaleShape, 33);
  auto y = outputTensor<T>(test, shape);
  auto mean = outputTensor<float>(test, statShape);
  auto invStd = outputTensor<T>(test, statShape);
  ASSERT_EQ(lethe_rt_layer_norm(test.context, &x.device, &scale.device,
                                hasBias ? &bias.device : nullptr, axis, epsilon,
                                &y.device, &mean.device, &invStd.device),
            LETHE_RT_OK)
      << test.lastError();

  if (foldsInOneThread(size) && scaleShape == normalized) {
    LayerNormForward<DirectOffsets> forward;
    forward.x = x.host.data();
    forward.y = y.host.data();
    forward.scale = scale.hostValues();
    if (hasBias)
      forward.bias = bias.hostValues();
    forward.mean = mean.hostValues();
    forward.invStdDev = invStd.hostValues();
    forward.size = size;
    forward.epsilon = epsilon;
    for (int64_t r = 0; r < rows; ++r)
      forward.group<T>(r, 0, 1, SingleLane());
    expectHostBits(test, y, "y");
    expectHostBits(test, mean, "mean");
    expectHostBits(test, invStd, "inv_std_dev");
  }

  std::vector<double> xs = doublesOf(x.host), scales = doublesOf(scale.host),
                      biases = doublesOf(bias.host);
  std::vector<double> expectedY(xs.size()), expectedMean(rows),
      expectedInvStd(rows);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, squares = 0;
    for (int64_t k = 0; k < size; ++k)
      sum += xs[r * size + k];
    double m = sum / size;
    for (int64_t k = 0; k < size; ++k)
      squares += (xs[r * size + k] - m) * (xs[r * size + k] - m);
    double s = 1 / std::sqrt(squares / size + epsilon);
    expectedMean[r] = m;
    expectedInvStd[r] = s;
    for (int64_t k = 0; k < size; ++k) {
      int64_t p = broadcastOffset(k, normalized, scaleShape);
      expectedY[r * size + k] =
          (xs[r * size + k] - m) * s * scales[p] + (hasBias ? biases[p] : 0);
    }
  }
  expectReference(test, y, expectedY, "y");
  expectReference(test, mean, expectedMean, "mean");
  expectReference(test, invStd, expectedInvStd, "inv_std_dev");
}

// Rows of 1 to 40 elements, folded in one thread each.
TEST_F(NormalizationTest, LayerNormShortRows) {
  checkLayerNorm<Half, Half>(*this, {6, 5, 7}, 2, {7}, true);
  checkLayerNorm<BFloat16, float>(*this, {6, 5, 7}, 2, {7}, false);
  checkLayerNorm<float, double>(*this, {2, 3, 4}, 1, {3, 4}, true);
  checkLayerNorm<float, float>(*this, {2, 3, 4}, 1, {3, 1}, true);
  checkLayerNorm<double, float>(*this, {2, 3, 4}, 0, {4}, false);
  checkLayerNorm<float, float>(*this, {3, 1}, 1, {1}, true);
}

// Rows of 120 to 1000 elements, folded in one block each.
TEST_F(NormalizationTest, LayerNormLongRows) {
  checkLayerNorm<float, float>(*this, {4, 1000}, 1, {1000}, true);
  checkLayerNorm<double, double>(*this, {4, 1000}, 1, {1000}, false);
  checkLayerNorm<Half, float>(*this, {4, 1000}, 1, {1000}, true);
  checkLayerNorm<float, BFloat16>(*this, {2, 3, 40}, 1, {3, 1}, true);
  checkLayerNorm<float, float>(*this, {2, 3, 40}, 1, {40}, false);
}

/// The gradient over x and dy of storage type T from `axis` on, with scale
/// and statistics of storage type P; dscale in T, dbias in f64.
template <typename T, typename P>
void checkLayerNormGrad(NormalizationTest &test,
                        const std::vector<int64_t> &shape, int64_t axis) {
  std::vector<int64_t> normalized(shape.begin() + axis, shape.end());
  std::vector<int64_t> statShape = statisticsShape(shape, axis);
  int64_t size = product(normalized), rows = product(statShape);
  auto dy = randomTensor<T>(test, shape, 41);
  auto x = randomTensor<T>(test, shape, 42, -2, 3);
  auto scale = randomTensor<P>(test, normalized, 43);
  auto mean = randomTensor<P>(test, statShape, 44, -0.5, 0.5);
  auto invStd = randomTensor<P>(test, statShape, 45, 0.5, 2);
  auto dx = outputTensor<T>(test, shape);
  auto dscale = outputTensor<T>(test, normalized);
  auto dbias = outputTensor<double>(test, normalized);
  ASSERT_EQ(lethe_rt_layer_norm_grad(test.context, &dy.device, &x.device,
                                     &scale.device, &mean.device,
                                     &invStd.device, axis, &dx.device,
                                     &dscale.device, &dbias.device),
            LETHE_RT_OK)
      << test.lastError();

  LayerNormGradient gradient;
  gradient.dy = dy.host.data();
  gradient.x = x.host.data();
  gradient.dx = dx.host.data();
  gradient.scale = scale.hostValues();
  gradient.mean = mean.hostValues();
  gradient.invStdDev = invStd.hostValues();
  gradient.dscale = dscale.hostValues();
  gradient.dbias = dbias.hostValues();
  gradient.rows = rows;
  gradient.size = size;
  // dscale and dbias: the rows shared out among the lanes the column kernel
  // gives them (one, in order, for fewer than 64 rows), in the chunks it
  // cuts them into (tiles of 32 elements), bit for bit.
  int64_t lanes = rows < 64 ? 1 : 32;
  ColumnSplit split = ColumnSplit::of(rows, (size + 31) / 32);
  for (int64_t k = 0; k < size; ++k)
    gradient.column<T>(k, lanes, split);
  expectHostBits(test, dscale, "dscale");
  expectHostBits(test, dbias, "dbias");
  if (foldsInOneThread(size)) {
    for (int64_t r = 0; r < rows; ++r)
      gradient.group<T>(r, 0, 1, SingleLane());
    expectHostBits(test, dx, "dx");
  }

  std::vector<double> dys = doublesOf(dy.host), xs = doublesOf(x.host),
                      scales = doublesOf(scale.host),
                      means = doublesOf(mean.host),
                      invStds = doublesOf(invStd.host);
  std::vector<double> expectedDx(xs.size()), expectedDscale(size, 0),
      expectedDbias(size, 0);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, dot = 0;
    auto xhat = [&](int64_t k) {
      return (xs[r * size + k] - means[r]) * invStds[r];
    };
    for (int64_t k = 0; k < size; ++k) {
      double g = dys[r * size + k];
      sum += g * scales[k];
      dot += g * scales[k] * xhat(k);
      expectedDscale[k] += g * xhat(k);
      expectedDbias[k] += g;
    }
    for (int64_t k = 0; k < size; ++k)
      expectedDx[r * size + k] = invStds[r] * (dys[r * size + k] * scales[k] -
                                               (sum + xhat(k) * dot) / size);
  }
  expectReference(test, dx, expectedDx, "dx");
  expectReference(test, dscale, expectedDscale, "dscale");
  expectReference(test, dbias, expectedDbias, "dbias");
}

TEST_F(NormalizationTest, LayerNormGradShortRows) {
  checkLayerNormGrad<Half, float>(*this, {6, 5, 7}, 2);
  checkLayerNormGrad<BFloat16, BFloat16>(*this, {6, 5, 7}, 1);
  checkLayerNormGrad<float, float>(*this, {2, 3, 4}, 1);
  checkLayerNormGrad<double, Half>(*this, {2, 3, 4}, 0);
}

TEST_F(NormalizationTest, LayerNormGradLongRows) {
  checkLayerNormGrad<float, float>(*this, {4, 1000}, 1);
  checkLayerNormGrad<double, double>(*this, {3, 5, 60}, 1);
  checkLayerNormGrad<Half, double>(*this, {4, 1000}, 1);
}

// 64 rows and more: dscale and dbias in 32 lanes, over elements of the
// normalized shape that fill one tile of 32 and part of the next.
TEST_F(NormalizationTest, LayerNormGradManyRows) {
  checkLayerNormGrad<float, float>(*this, {100, 40}, 1);
  checkLayerNormGrad<double, double>(*this, {5, 13, 33}, 2);
  checkLayerNormGrad<BFloat16, float>(*this, {64, 7}, 1);
}

// 4,096 rows and more over few elements: dscale and dbias in a block per
// chunk of rows (ColumnSplit), the chunks added in order; with a last chunk
// shorter than the others, and several tiles. The shapes fit the test
// arena (4 MiB) together.
TEST_F(NormalizationTest, LayerNormGradSplitRows) {
  checkLayerNormGrad<float, float>(*this, {4500, 40}, 1);
  checkLayerNormGrad<double, double>(*this, {2, 2100, 8}, 2);
  checkLayerNormGrad<Half, float>(*this, {4100, 20}, 1);
}

//===----------------------------------------------------------------------===//
// In place, errors
//===----------------------------------------------------------------------===//

/// Batch norm training with y = x and the running statistics updated in
/// place, and its gradient with dx = dy, against separate outputs, on x of
/// `shape` (3 channels).
void checkBatchNormInPlace(NormalizationTest &test,
                           const std::vector<int64_t> &shape) {
  lethe_rt_context *context = test.context;
  auto x = randomTensor<float>(test, shape, 51, -2, 4);
  auto scale = randomTensor<float>(test, {3}, 52);
  auto bias = randomTensor<float>(test, {3}, 53);
  // The running statistics, once to read and once to update in place.
  auto mean = randomTensor<float>(test, {3}, 54);
  auto var = randomTensor<float>(test, {3}, 55, 0.5, 2);
  auto meanInPlace = randomTensor<float>(test, {3}, 54);
  auto varInPlace = randomTensor<float>(test, {3}, 55, 0.5, 2);
  auto y = outputTensor<float>(test, shape);
  auto meanOut = outputTensor<float>(test, {3});
  auto varOut = outputTensor<float>(test, {3});
  auto savedMean = outputTensor<float>(test, {3});
  auto savedInvStd = outputTensor<float>(test, {3});
  ASSERT_EQ(lethe_rt_batch_norm_train(
                context, &x.device, &scale.device, &bias.device, &mean.device,
                &var.device, 1e-5, 0.9, &y.device, &meanOut.device,
                &varOut.device, &savedMean.device, &savedInvStd.device),
            LETHE_RT_OK)
      << test.lastError();
  std::vector<float> separateY = test.read<float>(y.device);
  // The gradient, with dx separate and in place of dy, from the statistics
  // just saved and x before it is overwritten.
  auto dy = randomTensor<float>(test, shape, 56);
  auto dyInPlace = randomTensor<float>(test, shape, 56);
  auto dx = outputTensor<float>(test, shape);
  auto dscale = outputTensor<float>(test, {3});
  auto dbias = outputTensor<float>(test, {3});
  ASSERT_EQ(lethe_rt_batch_norm_grad(context, &dy.device, &x.device,
                                     &scale.device, &savedMean.device,
                                     &savedInvStd.device, &dx.device,
                                     &dscale.device, &dbias.device),
            LETHE_RT_OK)
      << test.lastError();
  ASSERT_EQ(lethe_rt_batch_norm_grad(context, &dyInPlace.device, &x.device,
                                     &scale.device, &savedMean.device,
                                     &savedInvStd.device, &dyInPlace.device,
                                     &dscale.device, &dbias.device),
            LETHE_RT_OK)
      << test.lastError();
  expectSameBits(test.read<float>(dyInPlace.device),
                 test.read<float>(dx.device), "batch norm dx");
  ASSERT_EQ(lethe_rt_batch_norm_train(context, &x.device, &scale.device,
                                      &bias.device, &meanInPlace.device,
                                      &varInPlace.device, 1e-5, 0.9, &x.device,
                                      &meanInPlace.device, &varInPlace.device,
                                      &savedMean.device, &savedInvStd.device),
            LETHE_RT_OK)
      << test.lastError();
  expectSameBits(test.read<float>(x.device), separateY, "y");
  expectSameBits(test.read<float>(meanInPlace.device),
                 test.read<float>(meanOut.device), "running_mean_out");
  expectSameBits(test.read<float>(varInPlace.device),
                 test.read<float>(varOut.device), "running_var_out");
}

// Outputs that are inputs (y = x, the running statistics updated in place,
// dx = dy) give the bits of separate outputs: each group reads what it
// overwrites first, and layer norm's dscale and dbias read dy before dx is
// written. Batch norm over channels of 504 elements (a block each) and of
// 20,480 (split into chunks).
TEST_F(NormalizationTest, InPlaceGivesTheSameBits) {
  checkBatchNormInPlace(*this, {8, 3, 7, 9});
  checkBatchNormInPlace(*this, {2, 3, 128, 80});

  std::vector<int64_t> rows{4, 1000}, columns{1000}, stats{4, 1};
  auto dy = randomTensor<float>(*this, rows, 54);
  auto dyCopy = randomTensor<float>(*this, rows, 54);
  auto lx = randomTensor<float>(*this, rows, 55);
  auto lscale = randomTensor<float>(*this, columns, 56);
  auto rowMean = randomTensor<float>(*this, stats, 57);
  auto invStd = randomTensor<float>(*this, stats, 58, 0.5, 2);
  auto dx = outputTensor<float>(*this, rows);
  auto dscale = outputTensor<float>(*this, columns);
  auto dbias = outputTensor<float>(*this, columns);
  auto dscaleInPlace = outputTensor<float>(*this, columns);
  auto dbiasInPlace = outputTensor<float>(*this, columns);
  ASSERT_EQ(lethe_rt_layer_norm_grad(context, &dy.device, &lx.device,
                                     &lscale.device, &rowMean.device,
                                     &invStd.device, 1, &dx.device,
                                     &dscale.device, &dbias.device),
            LETHE_RT_OK)
      << lastError();
  ASSERT_EQ(lethe_rt_layer_norm_grad(
                context, &dyCopy.device, &lx.device, &lscale.device,
                &rowMean.device, &invStd.device, 1, &dyCopy.device,
                &dscaleInPlace.device, &dbiasInPlace.device),
            LETHE_RT_OK)
      << lastError();
  expectSameBits(read<float>(dyCopy.device), read<float>(dx.device), "dx");
  expectSameBits(read<float>(dscaleInPlace.device), read<float>(dscale.device),
                 "dscale");
  expectSameBits(read<float>(dbiasInPlace.device), read<float>(dbias.device),
                 "dbias");
}

// The CPU backend's checks and words (unittests/Runtime NormalizationTest
// and LayerGradientTest), and the arena's.
TEST_F(NormalizationTest, InvalidArgumentsNameTheKernel) {
  auto x5 = outputTensor<float>(*this, {5});
  auto x23 = outputTensor<float>(*this, {2, 3});
  auto y32 = outputTensor<float>(*this, {3, 2});
  auto c3 = outputTensor<float>(*this, {3});
  auto c4 = outputTensor<float>(*this, {4});
  auto c2 = outputTensor<float>(*this, {2});
  auto stat = outputTensor<float>(*this, {2, 1});
  auto wide = outputTensor<double>(*this, {2, 3});
  lethe_rt_tensor i3 = place<int32_t>({3}, LETHE_RT_I32);
  lethe_rt_tensor *v5 = &x5.device, *v23 = &x23.device, *v32 = &y32.device,
                  *v3 = &c3.device, *v4 = &c4.device, *v2 = &c2.device,
                  *vs = &stat.device, *vw = &wide.device;
  auto expectError = [&](lethe_rt_status status, const std::string &message) {
    EXPECT_EQ(status, LETHE_RT_ERROR);
    EXPECT_EQ(lastError(), message);
  };
  expectError(lethe_rt_batch_norm(context, v5, v3, v3, v3, v3, 1e-5, v5),
              "lethe_rt_batch_norm: x must have rank >= 2 (N, C, ...), got 5");
  expectError(lethe_rt_batch_norm(context, v23, v4, v3, v3, v3, 1e-5, v23),
              "lethe_rt_batch_norm: scale (4) must have shape 3, the channels "
              "of x (2x3)");
  expectError(lethe_rt_batch_norm(context, v23, v3, v3, v3, v3, 1e-5, v32),
              "lethe_rt_batch_norm: x (2x3) and y (3x2) must have the same "
              "shape");
  expectError(lethe_rt_batch_norm(context, v23, v3, v3, &i3, v3, 1e-5, v23),
              "lethe_rt_batch_norm: mean must be f16, bf16, f32 or f64, got "
              "i32");
  expectError(lethe_rt_batch_norm_train(context, v23, v3, v3, v3, v3, 1e-5, 0.9,
                                        v23, v3, v3, v3, v2),
              "lethe_rt_batch_norm_train: saved_inv_std (2) must have shape "
              "3, the channels of x (2x3)");
  expectError(lethe_rt_batch_norm_train(context, v23, v3, v3, v3, v3, 1e-5, 0.9,
                                        v23, v3, nullptr, v3, v3),
              "lethe_rt_batch_norm_train: running_var_out is missing (null "
              "descriptor)");
  expectError(
      lethe_rt_batch_norm_grad(context, v23, v23, v3, v3, v3, vw, v3, v3),
      "lethe_rt_batch_norm_grad: dx must be f32, got f64");
  expectError(
      lethe_rt_batch_norm_grad(context, v23, v23, v4, v3, v3, v23, v3, v3),
      "lethe_rt_batch_norm_grad: scale (4) must have shape 3, the "
      "channels of x (2x3)");
  expectError(
      lethe_rt_layer_norm(context, v23, v3, nullptr, 2, 1e-5, v23, vs, vs),
      "lethe_rt_layer_norm: axis 2 is out of range for x (2x3)");
  expectError(
      lethe_rt_layer_norm(context, v23, v4, nullptr, 1, 1e-5, v23, vs, vs),
      "lethe_rt_layer_norm: scale (4) does not broadcast to the normalized "
      "shape 3");
  expectError(lethe_rt_layer_norm(context, v23, v3, v2, 1, 1e-5, v23, vs, vs),
              "lethe_rt_layer_norm: bias (2) does not broadcast to the "
              "normalized shape 3");
  expectError(
      lethe_rt_layer_norm(context, v23, v3, nullptr, 1, 1e-5, v23, v2, vs),
      "lethe_rt_layer_norm: mean (2) must be 2x1 for x (2x3), axis 1");
  expectError(
      lethe_rt_layer_norm_grad(context, v23, v23, v3, vs, vs, 1, v23, v4, v3),
      "lethe_rt_layer_norm_grad: dscale (4) must have the normalized "
      "shape 3");
  expectError(
      lethe_rt_layer_norm_grad(context, v23, v23, v3, vs, vs, -1, v23, v3, v3),
      "lethe_rt_layer_norm_grad: axis -1 is out of range for x (2x3)");
  float host[6] = {};
  lethe_rt_tensor onHost{host, LETHE_RT_F32, 2, x23.device.shape};
  expectError(
      lethe_rt_layer_norm(context, &onHost, v3, nullptr, 1, 1e-5, v23, vs, vs),
      "lethe_rt_layer_norm: x (2x3, 24 bytes) does not lie in the "
      "arena (on the cuda backend, tensors live in the device arena "
      "of lethe_rt_memory_init)");
}

// Runs where there is no GPU (as here in CI): every entry point says why it
// cannot run.
TEST(NormalizationWithoutDeviceTest, EveryCallSaysWhy) {
  if (missingDevice().empty())
    GTEST_SKIP() << "has a GPU: this test is for machines without one";
  lethe_rt_context *context = lethe_rt_context_create();
  ASSERT_NE(context, nullptr);
  lethe_rt_tensor t{nullptr, LETHE_RT_F32, 0, nullptr};
  std::pair<const char *, std::function<lethe_rt_status()>> calls[] = {
      {"lethe_rt_batch_norm",
       [&] {
         return lethe_rt_batch_norm(context, &t, &t, &t, &t, &t, 1e-5, &t);
       }},
      {"lethe_rt_batch_norm_train",
       [&] {
         return lethe_rt_batch_norm_train(context, &t, &t, &t, &t, &t, 1e-5,
                                          0.9, &t, &t, &t, &t, &t);
       }},
      {"lethe_rt_batch_norm_grad",
       [&] {
         return lethe_rt_batch_norm_grad(context, &t, &t, &t, &t, &t, &t, &t,
                                         &t);
       }},
      {"lethe_rt_layer_norm",
       [&] {
         return lethe_rt_layer_norm(context, &t, &t, nullptr, 0, 1e-5, &t, &t,
                                    &t);
       }},
      {"lethe_rt_layer_norm_grad",
       [&] {
         return lethe_rt_layer_norm_grad(context, &t, &t, &t, &t, &t, 0, &t, &t,
                                         &t);
       }},
  };
  for (const auto &[name, call] : calls) {
    EXPECT_EQ(call(), LETHE_RT_ERROR) << name;
    std::string error = lethe_rt_last_error(context);
    EXPECT_EQ(error.rfind(std::string(name) + ": no usable CUDA device (", 0),
              0u)
        << error;
  }
  lethe_rt_context_destroy(context);
}

} // namespace
