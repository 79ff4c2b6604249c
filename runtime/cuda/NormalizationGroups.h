//===- NormalizationGroups.h - Normalization per channel and row -*- C++
//-*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The arithmetic of the CUDA backend's normalization kernels
// (Normalization.cu), per group of elements that share statistics (a
// channel of a batch norm, a row of a layer norm), written as plain C++ with
// LETHE_HOST_DEVICE functions so that host tests can run it too
// (unittests/Runtime/NormalizationGroupsTest.cpp, without a GPU).
//
// A group is folded by `lanes` threads together: lane l visits the elements
// l, l + lanes, ... of the group, and `sum` combines the lanes' partial f64
// sums (every lane must call it, as often as the others). With one lane and
// a `sum` that returns its argument (SingleLane), each function performs the
// CPU backend's sequence of operations (runtime/cpu/Normalization.cpp) and
// gives its bits: its statistics add in the CPU's order, and every other
// operation is an IEEE one, correctly rounded on host and device alike (the
// CUDA backend is built without FMA contraction). With a block's lanes and
// blockReduce as `sum`, only the statistics' order of addition differs.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_CUDA_NORMALIZATIONGROUPS_H
#define LETHE_RUNTIME_CUDA_NORMALIZATIONGROUPS_H

#include "SplitFold.h"
#include "common/ElementTypes.h"

#include <cmath>
#include <cstdint>

namespace lethe::rt {

/// The sqrt of `value`, correctly rounded on host and device.
LETHE_HOST_DEVICE inline double squareRoot(double value) {
#ifdef __CUDA_ARCH__
  return sqrt(value);
#else
  return std::sqrt(value);
#endif
}

/// A parameter or statistics tensor of any float dtype, read and written in
/// f64 as the CPU backend reads and writes them (a value rounds to f32
/// first, then to f16 or bf16).
struct FloatValues {
  void *data = nullptr;
  lethe_rt_dtype dtype = LETHE_RT_F32;

  LETHE_HOST_DEVICE double get(int64_t index) const {
    switch (dtype) {
    case LETHE_RT_F16:
      return load<Half>(data, index);
    case LETHE_RT_BF16:
      return load<BFloat16>(data, index);
    case LETHE_RT_F32:
      return load<float>(data, index);
    default:
      return load<double>(data, index);
    }
  }
  LETHE_HOST_DEVICE void set(int64_t index, double value) const {
    switch (dtype) {
    case LETHE_RT_F16:
      return store<Half>(data, index, value);
    case LETHE_RT_BF16:
      return store<BFloat16>(data, index, value);
    case LETHE_RT_F32:
      return store<float>(data, index, value);
    default:
      return store<double>(data, index, value);
    }
  }
};

/// The sum over one lane: the lane's own partial sum.
struct SingleLane {
  LETHE_HOST_DEVICE double operator()(double value) const { return value; }
};

//===----------------------------------------------------------------------===//
// Batch normalization: a group is a channel
//===----------------------------------------------------------------------===//

/// Where the elements of each channel lie in a batch norm's x (N, C, ...):
/// `batch` runs of `spatial` contiguous elements, channels * spatial apart.
struct ChannelLayout {
  int64_t batch = 0, channels = 0, spatial = 1;

  /// The elements of one channel.
  LETHE_HOST_DEVICE int64_t count() const { return batch * spatial; }
  /// The offset in x of element `member` (in row-major order) of channel c.
  LETHE_HOST_DEVICE int64_t offset(int64_t c, int64_t member) const {
    return (member / spatial * channels + c) * spatial + member % spatial;
  }
  /// The channel of element `index` of x.
  LETHE_HOST_DEVICE int64_t channelOf(int64_t index) const {
    return index / spatial % channels;
  }

  /// The layout of an x of shape `shape` (`rank` >= 2 dims).
  static ChannelLayout of(const int64_t *shape, size_t rank) {
    ChannelLayout layout;
    layout.batch = shape[0];
    layout.channels = shape[1];
    for (size_t dim = 2; dim < rank; ++dim)
      layout.spatial *= shape[dim];
    return layout;
  }
};

/// lethe_rt_batch_norm: y = (x - mean) * (scale / sqrt(var + epsilon)) +
/// bias, the factor in f64, the rest in x's compute type.
struct BatchNormInference {
  const void *x = nullptr;
  void *y = nullptr;
  FloatValues scale, bias, mean, var;
  double epsilon = 0;
  ChannelLayout layout;

  /// Element `index` of y (of storage type T).
  template <typename T> LETHE_HOST_DEVICE void element(int64_t index) const {
    using C = ComputeType<T>;
    int64_t c = layout.channelOf(index);
    double factor = scale.get(c) / squareRoot(var.get(c) + epsilon);
    store<T>(y, index,
             (load<T>(x, index) - static_cast<C>(mean.get(c))) *
                     static_cast<C>(factor) +
                 static_cast<C>(bias.get(c)));
  }
};

/// lethe_rt_batch_norm_train: the channel's mean and population variance
/// (two passes, in f64), then y as in BatchNormInference with them, and the
/// channel's running statistics and saved statistics. `group` does a whole
/// channel, `splitPass` the passes of a split fold over chunks of it.
struct BatchNormTraining {
  const void *x = nullptr;
  void *y = nullptr;
  FloatValues scale, bias, runningMean, runningVar, runningMeanOut,
      runningVarOut, savedMean, savedInvStd;
  double epsilon = 0, momentum = 0;
  ChannelLayout layout;

  /// The sum of x over members [first, end) of channel c, by `lane` of
  /// `lanes` (each adding its members in order, then `sum`).
  template <typename T, typename Sum>
  LETHE_HOST_DEVICE double sumOf(int64_t c, int64_t first, int64_t end,
                                 int64_t lane, int64_t lanes, Sum &&sum) const {
    double partial = 0;
    for (int64_t m = first + lane; m < end; m += lanes)
      partial += load<T>(x, layout.offset(c, m));
    return sum(partial);
  }

  /// The sum of (x - mean)^2 over members [first, end) of channel c.
  template <typename T, typename Sum>
  LETHE_HOST_DEVICE double squaresOf(int64_t c, double mean, int64_t first,
                                     int64_t end, int64_t lane, int64_t lanes,
                                     Sum &&sum) const {
    double partial = 0;
    for (int64_t m = first + lane; m < end; m += lanes) {
      double deviation = load<T>(x, layout.offset(c, m)) - mean;
      partial += deviation * deviation;
    }
    return sum(partial);
  }

  /// The inverse standard deviation of `variance`.
  LETHE_HOST_DEVICE double invStdOf(double variance) const {
    return 1 / squareRoot(variance + epsilon);
  }

  /// y over members [first, end) of channel c.
  template <typename T>
  LETHE_HOST_DEVICE void normalize(int64_t c, double mean, double invStd,
                                   int64_t first, int64_t end, int64_t lane,
                                   int64_t lanes) const {
    using C = ComputeType<T>;
    C m0 = static_cast<C>(mean), a = static_cast<C>(scale.get(c) * invStd),
      b = static_cast<C>(bias.get(c));
    for (int64_t m = first + lane; m < end; m += lanes) {
      int64_t at = layout.offset(c, m);
      store<T>(y, at, (load<T>(x, at) - m0) * a + b);
    }
  }

  /// The running and saved statistics of channel c, by one thread: it reads
  /// the running statistics before it writes them (an update in place
  /// gives running_mean_out = running_mean), and no other thread reads them.
  LETHE_HOST_DEVICE void setStatistics(int64_t c, double mean, double variance,
                                       double invStd) const {
    double oldMean = runningMean.get(c), oldVar = runningVar.get(c);
    runningMeanOut.set(c, oldMean * momentum + mean * (1 - momentum));
    runningVarOut.set(c, oldVar * momentum + variance * (1 - momentum));
    savedMean.set(c, mean);
    savedInvStd.set(c, invStd);
  }

  /// The passes of a split fold (SplitFold.h) over the chunks of channels.
  static constexpr int kSplitPasses = 3;

  /// Pass `pass` of a split fold for block item `item` of `chunks` chunks
  /// per channel (SplitItem), by `lane` of `lanes`: 0, the chunk's sum of x
  /// into first[item]; 1, its sum of squared deviations from the mean of
  /// the channel's sums into second[item]; 2, its y with the statistics of
  /// the channel's sums, and from the first chunk's lane 0 the statistics.
  template <typename T, typename Sum>
  LETHE_HOST_DEVICE void splitPass(int pass, int64_t item, int64_t chunks,
                                   int64_t lane, int64_t lanes, Sum &&sum,
                                   double *first, double *second) const {
    SplitItem split = SplitItem::of(item, chunks, layout.count());
    int64_t c = split.group;
    if (pass == 0) {
      double total = sumOf<T>(c, split.first, split.end, lane, lanes, sum);
      if (lane == 0)
        first[item] = total;
      return;
    }
    double count = static_cast<double>(layout.count());
    double mean = sumOfChunks(first + c * chunks, chunks) / count;
    if (pass == 1) {
      double total =
          squaresOf<T>(c, mean, split.first, split.end, lane, lanes, sum);
      if (lane == 0)
        second[item] = total;
      return;
    }
    double variance = sumOfChunks(second + c * chunks, chunks) / count;
    double invStd = invStdOf(variance);
    normalize<T>(c, mean, invStd, split.first, split.end, lane, lanes);
    if (split.chunk == 0 && lane == 0)
      setStatistics(c, mean, variance, invStd);
  }

  /// Channel c, by `lane` of `lanes`.
  template <typename T, typename Sum>
  LETHE_HOST_DEVICE void group(int64_t c, int64_t lane, int64_t lanes,
                               Sum &&sum) const {
    int64_t members = layout.count();
    double count = static_cast<double>(members);
    double mean = sumOf<T>(c, 0, members, lane, lanes, sum) / count;
    double variance =
        squaresOf<T>(c, mean, 0, members, lane, lanes, sum) / count;
    double invStd = invStdOf(variance);
    normalize<T>(c, mean, invStd, 0, members, lane, lanes);
    if (lane == 0)
      setStatistics(c, mean, variance, invStd);
  }
};

/// lethe_rt_batch_norm_grad, in f64: with xhat = (x - mean) * inv_std,
/// dbias = sum(dy), dscale = sum(dy xhat) over the channel, and dx = scale
/// inv_std (dy - (dbias + xhat dscale) / count). `group` does a whole
/// channel, `splitPass` the passes of a split fold over chunks of it.
struct BatchNormGradient {
  const void *dy = nullptr, *x = nullptr;
  void *dx = nullptr;
  FloatValues scale, savedMean, savedInvStd, dscale, dbias;
  ChannelLayout layout;

  /// The sums of dy and of dy xhat over members [first, end) of channel c,
  /// by `lane` of `lanes`.
  template <typename T, typename Sum>
  LETHE_HOST_DEVICE void sumsOf(int64_t c, int64_t first, int64_t end,
                                int64_t lane, int64_t lanes, Sum &&sum,
                                double &sumDy, double &sumDyXhat) const {
    double mean = savedMean.get(c), invStd = savedInvStd.get(c);
    double partialDy = 0, partialDyXhat = 0;
    for (int64_t m = first + lane; m < end; m += lanes) {
      int64_t at = layout.offset(c, m);
      double g = load<T>(dy, at);
      partialDy += g;
      partialDyXhat +=
          g * ((static_cast<double>(load<T>(x, at)) - mean) * invStd);
    }
    sumDy = sum(partialDy);
    sumDyXhat = sum(partialDyXhat);
  }

  /// dx over members [first, end) of channel c, from the channel's sums.
  template <typename T>
  LETHE_HOST_DEVICE void gradients(int64_t c, double sumDy, double sumDyXhat,
                                   int64_t first, int64_t end, int64_t lane,
                                   int64_t lanes) const {
    double mean = savedMean.get(c), invStd = savedInvStd.get(c);
    double count = static_cast<double>(layout.count()),
           a = scale.get(c) * invStd;
    for (int64_t m = first + lane; m < end; m += lanes) {
      int64_t at = layout.offset(c, m);
      double g = load<T>(dy, at);
      double xhat = (static_cast<double>(load<T>(x, at)) - mean) * invStd;
      store<T>(dx, at, a * (g - (sumDy + xhat * sumDyXhat) / count));
    }
  }

  /// dscale and dbias of channel c.
  LETHE_HOST_DEVICE void setParameterGradients(int64_t c, double sumDy,
                                               double sumDyXhat) const {
    dscale.set(c, sumDyXhat);
    dbias.set(c, sumDy);
  }

  /// The passes of a split fold (SplitFold.h) over the chunks of channels.
  static constexpr int kSplitPasses = 2;

  /// Pass `pass` of a split fold for block item `item` of `chunks` chunks
  /// per channel (SplitItem), by `lane` of `lanes`: 0, the chunk's sums of
  /// dy and dy xhat into first[item] and second[item]; 1, its dx from the
  /// channel's sums, and from the first chunk's lane 0 dscale and dbias.
  template <typename T, typename Sum>
  LETHE_HOST_DEVICE void splitPass(int pass, int64_t item, int64_t chunks,
                                   int64_t lane, int64_t lanes, Sum &&sum,
                                   double *first, double *second) const {
    SplitItem split = SplitItem::of(item, chunks, layout.count());
    int64_t c = split.group;
    if (pass == 0) {
      double sumDy = 0, sumDyXhat = 0;
      sumsOf<T>(c, split.first, split.end, lane, lanes, sum, sumDy, sumDyXhat);
      if (lane == 0) {
        first[item] = sumDy;
        second[item] = sumDyXhat;
      }
      return;
    }
    double sumDy = sumOfChunks(first + c * chunks, chunks);
    double sumDyXhat = sumOfChunks(second + c * chunks, chunks);
    gradients<T>(c, sumDy, sumDyXhat, split.first, split.end, lane, lanes);
    if (split.chunk == 0 && lane == 0)
      setParameterGradients(c, sumDy, sumDyXhat);
  }

  /// Channel c, by `lane` of `lanes`.
  template <typename T, typename Sum>
  LETHE_HOST_DEVICE void group(int64_t c, int64_t lane, int64_t lanes,
                               Sum &&sum) const {
    int64_t members = layout.count();
    double sumDy = 0, sumDyXhat = 0;
    sumsOf<T>(c, 0, members, lane, lanes, sum, sumDy, sumDyXhat);
    gradients<T>(c, sumDy, sumDyXhat, 0, members, lane, lanes);
    if (lane == 0)
      setParameterGradients(c, sumDy, sumDyXhat);
  }
};

//===----------------------------------------------------------------------===//
// Layer normalization: a group is a row of `size` contiguous elements
//===----------------------------------------------------------------------===//

/// lethe_rt_layer_norm: the row's mean and inverse standard deviation (two
/// passes, in f64), then y = (x - mean) * inv_std * scale (+ bias) in x's
/// compute type. `Offsets` maps an element k of the normalized shape to the
/// offsets of its scale and bias (`offsetsAt(k, int64_t (&)[2])`, as
/// BroadcastMap<2> does on the device).
template <typename Offsets> struct LayerNormForward {
  const void *x = nullptr;
  void *y = nullptr;
  /// bias.data is null without a bias.
  FloatValues scale, bias, mean, invStdDev;
  Offsets offsets;
  int64_t size = 0;
  double epsilon = 0;

  /// Row r, by `lane` of `lanes`.
  template <typename T, typename Sum>
  LETHE_HOST_DEVICE void group(int64_t r, int64_t lane, int64_t lanes,
                               Sum &&sum) const {
    using C = ComputeType<T>;
    int64_t base = r * size;
    double partial = 0;
    for (int64_t k = lane; k < size; k += lanes)
      partial += load<T>(x, base + k);
    double rowMean = sum(partial) / static_cast<double>(size);
    partial = 0;
    for (int64_t k = lane; k < size; k += lanes) {
      double deviation = load<T>(x, base + k) - rowMean;
      partial += deviation * deviation;
    }
    double rowInvStd =
        1 / squareRoot(sum(partial) / static_cast<double>(size) + epsilon);
    C m = static_cast<C>(rowMean), s = static_cast<C>(rowInvStd);
    for (int64_t k = lane; k < size; k += lanes) {
      int64_t at[2];
      offsets.offsetsAt(k, at);
      C value =
          (load<T>(x, base + k) - m) * s * static_cast<C>(scale.get(at[0]));
      if (bias.data)
        value += static_cast<C>(bias.get(at[1]));
      store<T>(y, base + k, value);
    }
    if (lane != 0)
      return;
    mean.set(r, rowMean);
    invStdDev.set(r, rowInvStd);
  }
};

/// lethe_rt_layer_norm_grad, in f64: with xhat = (x - mean) * inv_std and
/// scaled = dy * scale, dx = inv_std (scaled - (sum(scaled) + xhat
/// sum(scaled xhat)) / size) per row (`group`), and dscale = sum(dy xhat),
/// dbias = sum(dy) per element of the normalized shape over the rows
/// (`column`: each of `lanes` lanes adds its rows in order, then the lanes'
/// sums add in lane order; with one lane, the rows in order, the CPU
/// backend's bits).
struct LayerNormGradient {
  const void *dy = nullptr, *x = nullptr;
  void *dx = nullptr;
  FloatValues scale, mean, invStdDev, dscale, dbias;
  int64_t rows = 0, size = 0;

  /// The normalized value of element k of row r.
  template <typename T>
  LETHE_HOST_DEVICE double xhat(int64_t r, int64_t k) const {
    return (static_cast<double>(load<T>(x, r * size + k)) - mean.get(r)) *
           invStdDev.get(r);
  }

  /// dx of row r, by `lane` of `lanes`.
  template <typename T, typename Sum>
  LETHE_HOST_DEVICE void group(int64_t r, int64_t lane, int64_t lanes,
                               Sum &&sum) const {
    int64_t base = r * size;
    double partialSum = 0, partialDot = 0;
    for (int64_t k = lane; k < size; k += lanes) {
      double scaled = load<T>(dy, base + k) * scale.get(k);
      partialSum += scaled;
      partialDot += scaled * xhat<T>(r, k);
    }
    double rowSum = sum(partialSum), rowDot = sum(partialDot);
    double rowInvStd = invStdDev.get(r);
    for (int64_t k = lane; k < size; k += lanes) {
      double scaled = load<T>(dy, base + k) * scale.get(k);
      store<T>(dx, base + k,
               rowInvStd * (scaled - (rowSum + xhat<T>(r, k) * rowDot) /
                                         static_cast<double>(size)));
    }
  }

  /// Lane `lane` of `lanes`'s sums for dscale and dbias of element k of the
  /// normalized shape over rows [begin, end): rows begin + lane,
  /// begin + lane + lanes, ... in order.
  template <typename T>
  LETHE_HOST_DEVICE void columnLane(int64_t k, int64_t begin, int64_t end,
                                    int64_t lane, int64_t lanes,
                                    double &scaleGrad, double &biasGrad) const {
    scaleGrad = 0;
    biasGrad = 0;
    for (int64_t r = begin + lane; r < end; r += lanes) {
      double g = load<T>(dy, r * size + k);
      scaleGrad += g * xhat<T>(r, k);
      biasGrad += g;
    }
  }

  /// Stores dscale and dbias of element k.
  LETHE_HOST_DEVICE void setColumn(int64_t k, double scaleGrad,
                                   double biasGrad) const {
    dscale.set(k, scaleGrad);
    dbias.set(k, biasGrad);
  }

  /// dscale and dbias of element k as the column kernel folds them: each
  /// chunk of `split`'s rows shared out among `lanes` lanes (the lanes'
  /// sums added in lane order, starting from lane 0's), the chunks' sums
  /// added in chunk order (one chunk: its sums themselves).
  template <typename T>
  LETHE_HOST_DEVICE void column(int64_t k, int64_t lanes,
                                const ColumnSplit &split) const {
    double scaleGrad = 0, biasGrad = 0;
    for (int64_t chunk = 0; chunk < split.chunks; ++chunk) {
      int64_t begin = split.first(chunk), end = split.end(chunk, rows);
      double chunkScale = 0, chunkBias = 0;
      columnLane<T>(k, begin, end, 0, lanes, chunkScale, chunkBias);
      for (int64_t lane = 1; lane < lanes; ++lane) {
        double laneScale = 0, laneBias = 0;
        columnLane<T>(k, begin, end, lane, lanes, laneScale, laneBias);
        chunkScale += laneScale;
        chunkBias += laneBias;
      }
      if (split.chunks == 1) {
        scaleGrad = chunkScale;
        biasGrad = chunkBias;
      } else {
        scaleGrad += chunkScale;
        biasGrad += chunkBias;
      }
    }
    setColumn(k, scaleGrad, biasGrad);
  }
};

} // namespace lethe::rt

#endif // LETHE_RUNTIME_CUDA_NORMALIZATIONGROUPS_H
