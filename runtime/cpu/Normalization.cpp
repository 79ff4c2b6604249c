//===- Normalization.cpp - Normalization and softmax kernels --------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_batch_norm (inference), lethe_rt_batch_norm_train,
// lethe_rt_layer_norm and lethe_rt_softmax (and log-softmax), and their
// gradients.
//
// Statistics (means, variances, softmax denominators) accumulate in f64 in
// a fixed sequential order; variances take two passes (the mean, then the
// mean squared deviation). Per-element results are then computed in the
// compute type of x: y = (x - mean) * a + b with a and b per channel (batch
// norm), y = (x - mean) * inv_std * scale + bias (layer norm), e = exp(x -
// max) (softmax, which then writes e / sum in f64; log-softmax writes x - max
// - log(sum) in f64). Parameter tensors (scale, bias, running statistics,
// saved statistics) may have any float dtype. The gradients of batch and
// layer normalization compute in f64.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace lethe::rt;

namespace {

/// Reads the elements of a float tensor as doubles.
std::vector<double> readDoubles(const lethe_rt_tensor &tensor) {
  std::vector<double> values(numElements(tensor));
  dispatchFloat(tensor.dtype, [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = load<T>(tensor.data, i);
  });
  return values;
}

/// Writes doubles into a float tensor of as many elements.
void writeDoubles(const std::vector<double> &values,
                  const lethe_rt_tensor &tensor) {
  dispatchFloat(tensor.dtype, [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < values.size(); ++i)
      store<T>(tensor.data, i, values[i]);
  });
}

/// The number of elements per (batch, channel) of x (N, C, ...).
int64_t spatialSize(const lethe_rt_tensor &x) {
  int64_t size = 1;
  for (int32_t dim = 2; dim < x.rank; ++dim)
    size *= x.shape[dim];
  return size;
}

/// y = (x - mean[c]) * factor[c] + offset[c] over the channels c (dim 1) of
/// x, in x's compute type.
template <typename T>
void normalizeChannels(const lethe_rt_tensor &x,
                       const std::vector<double> &mean,
                       const std::vector<double> &factor,
                       const std::vector<double> &offset,
                       const lethe_rt_tensor &y) {
  using C = ComputeType<T>;
  int64_t batch = x.shape[0], channels = x.shape[1];
  int64_t spatial = spatialSize(x);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      C m = static_cast<C>(mean[c]), a = static_cast<C>(factor[c]),
        b = static_cast<C>(offset[c]);
      int64_t base = (n * channels + c) * spatial;
      for (int64_t s = 0; s < spatial; ++s)
        store<T>(y.data, base + s, (load<T>(x.data, base + s) - m) * a + b);
    }
  }
}

/// The per-channel mean and population variance of x (N, C, ...).
template <typename T>
void channelStatistics(const lethe_rt_tensor &x, std::vector<double> &mean,
                       std::vector<double> &variance) {
  int64_t batch = x.shape[0], channels = x.shape[1];
  int64_t spatial = spatialSize(x);
  double count = static_cast<double>(batch * spatial);
  mean.assign(channels, 0);
  variance.assign(channels, 0);
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0;
    for (int64_t n = 0; n < batch; ++n) {
      int64_t base = (n * channels + c) * spatial;
      for (int64_t s = 0; s < spatial; ++s)
        sum += load<T>(x.data, base + s);
    }
    mean[c] = sum / count;
    double squares = 0;
    for (int64_t n = 0; n < batch; ++n) {
      int64_t base = (n * channels + c) * spatial;
      for (int64_t s = 0; s < spatial; ++s) {
        double deviation = load<T>(x.data, base + s) - mean[c];
        squares += deviation * deviation;
      }
    }
    variance[c] = squares / count;
  }
}

/// Reads `tensor` broadcast (unidirectionally) to `shape` in compute type C.
template <typename C>
std::vector<C> broadcastValues(const lethe_rt_tensor &tensor,
                               const std::vector<int64_t> &strides,
                               const std::vector<int64_t> &shape) {
  std::vector<C> values;
  dispatchFloat(tensor.dtype, [&](auto tag) {
    using T = decltype(tag);
    forEachIndex(shape, {strides}, [&](int64_t, const int64_t *offsets) {
      values.push_back(static_cast<C>(load<T>(tensor.data, offsets[0])));
    });
  });
  return values;
}

/// Layer norm over rows of `size` elements of x.
template <typename T>
void layerNormRows(const lethe_rt_tensor &x, int64_t rows, int64_t size,
                   const std::vector<ComputeType<T>> &scale,
                   const std::vector<ComputeType<T>> &bias, double epsilon,
                   const lethe_rt_tensor &y, std::vector<double> &means,
                   std::vector<double> &invStdDevs) {
  using C = ComputeType<T>;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t base = row * size;
    double sum = 0;
    for (int64_t i = 0; i < size; ++i)
      sum += load<T>(x.data, base + i);
    double mean = sum / static_cast<double>(size);
    double squares = 0;
    for (int64_t i = 0; i < size; ++i) {
      double deviation = load<T>(x.data, base + i) - mean;
      squares += deviation * deviation;
    }
    double invStdDev =
        1 / std::sqrt(squares / static_cast<double>(size) + epsilon);
    means[row] = mean;
    invStdDevs[row] = invStdDev;
    C m = static_cast<C>(mean), s = static_cast<C>(invStdDev);
    for (int64_t i = 0; i < size; ++i) {
      C normalized = (load<T>(x.data, base + i) - m) * s;
      C value = normalized * scale[i];
      if (!bias.empty())
        value += bias[i];
      store<T>(y.data, base + i, value);
    }
  }
}

/// NaN-propagating maximum.
template <typename C> inline C maxOf(C best, C value) {
  return value > best || value != value ? value : best;
}

/// Softmax (or log-softmax) of contiguous rows of `size` elements: the same
/// sequence of operations per element as softmaxAxis.
template <typename T>
void softmaxRows(const lethe_rt_tensor &x, int64_t rows, int64_t size, bool log,
                 const lethe_rt_tensor &out) {
  using C = ComputeType<T>;
  std::vector<C> exps(size);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t base = row * size;
    // Four running maxima (the maximum does not depend on the order).
    C lanes[4];
    std::fill(lanes, lanes + 4, -std::numeric_limits<C>::infinity());
    for (int64_t k = 0; k < size; ++k)
      lanes[k % 4] = maxOf(lanes[k % 4], load<T>(x.data, base + k));
    C maximum = maxOf(maxOf(lanes[0], lanes[1]), maxOf(lanes[2], lanes[3]));
    double sum = 0;
    for (int64_t k = 0; k < size; ++k) {
      C e = std::exp(load<T>(x.data, base + k) - maximum);
      exps[k] = e;
      sum += e;
    }
    if (log) {
      double logSum = std::log(sum);
      for (int64_t k = 0; k < size; ++k)
        store<T>(out.data, base + k,
                 static_cast<double>(load<T>(x.data, base + k)) -
                     static_cast<double>(maximum) - logSum);
    } else {
      for (int64_t k = 0; k < size; ++k)
        store<T>(out.data, base + k, static_cast<double>(exps[k]) / sum);
    }
  }
}

/// Softmax (or log-softmax) of x along an axis of `size` elements, with
/// `outer` blocks before it and `inner` elements after it (stride).
template <typename T>
void softmaxAxis(const lethe_rt_tensor &x, int64_t outer, int64_t size,
                 int64_t inner, bool log, const lethe_rt_tensor &out) {
  using C = ComputeType<T>;
  if (inner == 1)
    return softmaxRows<T>(x, outer, size, log, out);
  std::vector<C> maxima(inner), exps(size * inner);
  std::vector<double> sums(inner);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t base = o * size * inner;
    std::fill(maxima.begin(), maxima.end(),
              -std::numeric_limits<C>::infinity());
    std::fill(sums.begin(), sums.end(), 0.0);
    for (int64_t k = 0; k < size; ++k)
      for (int64_t j = 0; j < inner; ++j)
        maxima[j] = maxOf(maxima[j], load<T>(x.data, base + k * inner + j));
    for (int64_t k = 0; k < size; ++k) {
      for (int64_t j = 0; j < inner; ++j) {
        C e = std::exp(load<T>(x.data, base + k * inner + j) - maxima[j]);
        exps[k * inner + j] = e;
        sums[j] += e;
      }
    }
    if (log) {
      for (int64_t j = 0; j < inner; ++j)
        sums[j] = std::log(sums[j]);
      for (int64_t k = 0; k < size; ++k)
        for (int64_t j = 0; j < inner; ++j) {
          int64_t index = base + k * inner + j;
          double shifted = static_cast<double>(load<T>(x.data, index)) -
                           static_cast<double>(maxima[j]);
          store<T>(out.data, index, shifted - sums[j]);
        }
    } else {
      for (int64_t k = 0; k < size; ++k)
        for (int64_t j = 0; j < inner; ++j)
          store<T>(out.data, base + k * inner + j,
                   static_cast<double>(exps[k * inner + j]) / sums[j]);
    }
  }
}

} // namespace

extern "C" lethe_rt_status
lethe_rt_batch_norm(lethe_rt_context *context, const lethe_rt_tensor *x,
                    const lethe_rt_tensor *scale, const lethe_rt_tensor *bias,
                    const lethe_rt_tensor *mean, const lethe_rt_tensor *var,
                    double epsilon, const lethe_rt_tensor *y) {
  const char *kernel = "lethe_rt_batch_norm";
  if (!checkBatchNormInference(context, kernel, x, scale, bias, mean, var, y))
    return LETHE_RT_ERROR;
  int64_t channels = x->shape[1];
  if (numElements(*x) == 0)
    return LETHE_RT_OK;
  std::vector<double> factor = readDoubles(*scale), offset = readDoubles(*bias);
  std::vector<double> means = readDoubles(*mean), vars = readDoubles(*var);
  // y = (x - mean) * (scale / sqrt(var + epsilon)) + bias.
  for (int64_t c = 0; c < channels; ++c)
    factor[c] /= std::sqrt(vars[c] + epsilon);
  dispatchFloat(x->dtype, [&](auto tag) {
    normalizeChannels<decltype(tag)>(*x, means, factor, offset, *y);
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_batch_norm_train(
    lethe_rt_context *context, const lethe_rt_tensor *x,
    const lethe_rt_tensor *scale, const lethe_rt_tensor *bias,
    const lethe_rt_tensor *running_mean, const lethe_rt_tensor *running_var,
    double epsilon, double momentum, const lethe_rt_tensor *y,
    const lethe_rt_tensor *running_mean_out,
    const lethe_rt_tensor *running_var_out, const lethe_rt_tensor *saved_mean,
    const lethe_rt_tensor *saved_inv_std) {
  const char *kernel = "lethe_rt_batch_norm_train";
  if (!checkBatchNormTrain(context, kernel, x, scale, bias, running_mean,
                           running_var, y, running_mean_out, running_var_out,
                           saved_mean, saved_inv_std))
    return LETHE_RT_ERROR;
  int64_t channels = x->shape[1];
  std::vector<double> batchMean, batchVar;
  dispatchFloat(x->dtype, [&](auto tag) {
    channelStatistics<decltype(tag)>(*x, batchMean, batchVar);
  });
  std::vector<double> factor = readDoubles(*scale), offset = readDoubles(*bias);
  std::vector<double> runningMean = readDoubles(*running_mean);
  std::vector<double> runningVar = readDoubles(*running_var);
  std::vector<double> invStd(channels);
  for (int64_t c = 0; c < channels; ++c) {
    invStd[c] = 1 / std::sqrt(batchVar[c] + epsilon);
    factor[c] *= invStd[c];
    runningMean[c] = runningMean[c] * momentum + batchMean[c] * (1 - momentum);
    runningVar[c] = runningVar[c] * momentum + batchVar[c] * (1 - momentum);
  }
  if (numElements(*x) > 0) {
    dispatchFloat(x->dtype, [&](auto tag) {
      normalizeChannels<decltype(tag)>(*x, batchMean, factor, offset, *y);
    });
  }
  writeDoubles(runningMean, *running_mean_out);
  writeDoubles(runningVar, *running_var_out);
  writeDoubles(batchMean, *saved_mean);
  writeDoubles(invStd, *saved_inv_std);
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status
lethe_rt_layer_norm(lethe_rt_context *context, const lethe_rt_tensor *x,
                    const lethe_rt_tensor *scale, const lethe_rt_tensor *bias,
                    int64_t axis, double epsilon, const lethe_rt_tensor *y,
                    const lethe_rt_tensor *mean,
                    const lethe_rt_tensor *inv_std_dev) {
  const char *kernel = "lethe_rt_layer_norm";
  std::vector<int64_t> scaleStrides, biasStrides;
  if (!checkLayerNorm(context, kernel, x, scale, bias, axis, y, mean,
                      inv_std_dev, scaleStrides, biasStrides))
    return LETHE_RT_ERROR;

  // Scale and bias broadcast to the normalized shape x.shape[axis:].
  std::vector<int64_t> normalizedShape(x->shape + axis, x->shape + x->rank);
  int64_t size = 1, rows = numElements(*mean);
  for (int64_t dim : normalizedShape)
    size *= dim;
  std::vector<double> means(rows), invStdDevs(rows);
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    std::vector<C> scaleValues =
        broadcastValues<C>(*scale, scaleStrides, normalizedShape);
    std::vector<C> biasValues;
    if (bias)
      biasValues = broadcastValues<C>(*bias, biasStrides, normalizedShape);
    layerNormRows<T>(*x, rows, size, scaleValues, biasValues, epsilon, *y,
                     means, invStdDevs);
  });
  writeDoubles(means, *mean);
  writeDoubles(invStdDevs, *inv_std_dev);
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_softmax(lethe_rt_context *context,
                                            const lethe_rt_tensor *x,
                                            int64_t axis, int log,
                                            const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_softmax";
  if (!checkFloatTensor(context, kernel, "x", x) ||
      !checkDtype(context, kernel, "out", out, x->dtype) ||
      !checkSameShape(context, kernel, "x", *x, "out", *out) ||
      !report(context, kernel, axisRangeError("x", *x, axis)))
    return LETHE_RT_ERROR;
  int64_t outer = 1, inner = 1;
  for (int64_t dim = 0; dim < axis; ++dim)
    outer *= x->shape[dim];
  for (int64_t dim = axis + 1; dim < x->rank; ++dim)
    inner *= x->shape[dim];
  if (numElements(*x) == 0)
    return LETHE_RT_OK;
  dispatchFloat(x->dtype, [&](auto tag) {
    softmaxAxis<decltype(tag)>(*x, outer, x->shape[axis], inner, log != 0,
                               *out);
  });
  return LETHE_RT_OK;
}

//===----------------------------------------------------------------------===//
// Gradients (in f64, sums in a fixed sequential order)
//===----------------------------------------------------------------------===//

extern "C" lethe_rt_status lethe_rt_batch_norm_grad(
    lethe_rt_context *context, const lethe_rt_tensor *dy,
    const lethe_rt_tensor *x, const lethe_rt_tensor *scale,
    const lethe_rt_tensor *saved_mean, const lethe_rt_tensor *saved_inv_std,
    const lethe_rt_tensor *dx, const lethe_rt_tensor *dscale,
    const lethe_rt_tensor *dbias) {
  const char *kernel = "lethe_rt_batch_norm_grad";
  if (!checkBatchNormGrad(context, kernel, dy, x, scale, saved_mean,
                          saved_inv_std, dx, dscale, dbias))
    return LETHE_RT_ERROR;
  int64_t channels = x->shape[1];
  std::vector<double> factor = readDoubles(*scale),
                      mean = readDoubles(*saved_mean),
                      invStd = readDoubles(*saved_inv_std);
  std::vector<double> sumDy(channels, 0), sumDyXhat(channels, 0);
  int64_t batch = x->shape[0], spatial = spatialSize(*x);
  double count = static_cast<double>(batch * spatial);
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    auto xhat = [&](int64_t index, int64_t c) {
      return (static_cast<double>(load<T>(x->data, index)) - mean[c]) *
             invStd[c];
    };
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t n = 0; n < batch; ++n) {
        int64_t base = (n * channels + c) * spatial;
        for (int64_t s = 0; s < spatial; ++s) {
          double g = load<T>(dy->data, base + s);
          sumDy[c] += g;
          sumDyXhat[c] += g * xhat(base + s, c);
        }
      }
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t c = 0; c < channels; ++c) {
        int64_t base = (n * channels + c) * spatial;
        double a = factor[c] * invStd[c];
        for (int64_t s = 0; s < spatial; ++s) {
          double g = load<T>(dy->data, base + s);
          store<T>(
              dx->data, base + s,
              a * (g - (sumDy[c] + xhat(base + s, c) * sumDyXhat[c]) / count));
        }
      }
  });
  writeDoubles(sumDyXhat, *dscale);
  writeDoubles(sumDy, *dbias);
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_layer_norm_grad(
    lethe_rt_context *context, const lethe_rt_tensor *dy,
    const lethe_rt_tensor *x, const lethe_rt_tensor *scale,
    const lethe_rt_tensor *mean, const lethe_rt_tensor *inv_std_dev,
    int64_t axis, const lethe_rt_tensor *dx, const lethe_rt_tensor *dscale,
    const lethe_rt_tensor *dbias) {
  const char *kernel = "lethe_rt_layer_norm_grad";
  if (!checkLayerNormGrad(context, kernel, dy, x, scale, mean, inv_std_dev,
                          axis, dx, dscale, dbias))
    return LETHE_RT_ERROR;

  int64_t size = numElements(*scale), rows = numElements(*mean);
  std::vector<double> factor = readDoubles(*scale), means = readDoubles(*mean),
                      invStd = readDoubles(*inv_std_dev);
  std::vector<double> scaleGrad(size, 0), biasGrad(size, 0);
  std::vector<double> xhat(size), scaled(size);
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t base = r * size;
      double sum = 0, dot = 0;
      for (int64_t k = 0; k < size; ++k) {
        double g = load<T>(dy->data, base + k);
        xhat[k] = (static_cast<double>(load<T>(x->data, base + k)) - means[r]) *
                  invStd[r];
        scaled[k] = g * factor[k];
        sum += scaled[k];
        dot += scaled[k] * xhat[k];
        scaleGrad[k] += g * xhat[k];
        biasGrad[k] += g;
      }
      for (int64_t k = 0; k < size; ++k)
        store<T>(dx->data, base + k,
                 invStd[r] * (scaled[k] - (sum + xhat[k] * dot) /
                                              static_cast<double>(size)));
    }
  });
  writeDoubles(scaleGrad, *dscale);
  writeDoubles(biasGrad, *dbias);
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_softmax_grad(lethe_rt_context *context,
                                                 const lethe_rt_tensor *dy,
                                                 const lethe_rt_tensor *y,
                                                 int64_t axis, int log,
                                                 const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_softmax_grad";
  if (!checkFloatTensor(context, kernel, "y", y) ||
      !checkDtype(context, kernel, "dy", dy, y->dtype) ||
      !checkDtype(context, kernel, "dx", dx, y->dtype) ||
      !checkSameShape(context, kernel, "y", *y, "dy", *dy) ||
      !checkSameShape(context, kernel, "y", *y, "dx", *dx) ||
      !report(context, kernel, axisRangeError("y", *y, axis)))
    return LETHE_RT_ERROR;
  int64_t outer = 1, inner = 1, length = y->shape[axis];
  for (int64_t dim = 0; dim < axis; ++dim)
    outer *= y->shape[dim];
  for (int64_t dim = axis + 1; dim < y->rank; ++dim)
    inner *= y->shape[dim];
  // Per row along the axis, in f64: softmax dx = y (dy - sum(dy y));
  // log-softmax dx = dy - exp(y) sum(dy).
  dispatchFloat(y->dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t base = o * length * inner + i;
        double sum = 0;
        for (int64_t k = 0; k < length; ++k) {
          double g = load<T>(dy->data, base + k * inner);
          sum +=
              log ? g
                  : g * static_cast<double>(load<T>(y->data, base + k * inner));
        }
        for (int64_t k = 0; k < length; ++k) {
          int64_t at = base + k * inner;
          double g = load<T>(dy->data, at), v = load<T>(y->data, at);
          store<T>(dx->data, at, log ? g - std::exp(v) * sum : v * (g - sum));
        }
      }
  });
  return LETHE_RT_OK;
}
