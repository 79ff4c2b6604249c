//===- ResizeSampling.h - Where ONNX Resize samples its input ---*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_resize's sampling, shared by the backends: each output index of a
// dim reads a few input indices of that dim with weights (its "taps"), from
// ONNX's coordinate transformations, nearest rounding and linear or Keys'
// cubic weights. The CPU backend computes each dim's taps once and resizes
// one dim at a time in double (runtime/cpu/Resize.cpp); the CUDA backend
// computes them per element on the GPU and evaluates, for each element, the
// same sums in the same order (resizeInterpolatedAt, resizeGradAt), so that
// both give the same bits. The per-index functions are LETHE_HOST_DEVICE,
// and avoid the C++ library where CUDA lacks it (std::optional,
// std::clamp); host tests run them against the CPU backend
// (unittests/Runtime/ResizeSamplingTest.cpp).
//
// Coordinates follow ONNX's reference implementation: the resized length
// that the transformations divide by is `input length * scale`, which need
// not be an integer, and points outside the input repeat the edge (or, with
// exclude_outside, get weight 0).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_COMMON_RESIZESAMPLING_H
#define LETHE_RUNTIME_COMMON_RESIZESAMPLING_H

#include "common/ElementTypes.h"
#include "common/IndexMaps.h"
#include "common/Tensor.h"
#include "lethe_rt.h"

#include <cstdint>
#include <cstring>
#include <math.h>
#include <vector>

namespace lethe::rt {

//===----------------------------------------------------------------------===//
// Taps of one dim
//===----------------------------------------------------------------------===//

/// The most taps an output index reads (cubic).
constexpr int maxResizeTaps = 4;

/// One dim of a resize: its input and output lengths, scale and (for
/// tf_crop_and_resize) region of interest, normalized.
struct ResizeDim {
  int64_t inLength = 0, outLength = 0;
  double scale = 1, roiStart = 0, roiEnd = 1;
};

/// lethe_rt_resize_options without the pointer to the roi (which ResizeDim
/// holds per dim), for device code.
struct ResizeSampling {
  lethe_rt_resize_mode mode = LETHE_RT_RESIZE_NEAREST;
  lethe_rt_coordinate_mode coordinates = LETHE_RT_HALF_PIXEL;
  lethe_rt_nearest_mode nearest = LETHE_RT_ROUND_PREFER_FLOOR;
  double cubicCoeffA = -0.75;
  bool excludeOutside = false;

  /// The taps each output index reads in this mode (but where it falls
  /// outside the input).
  LETHE_HOST_DEVICE int tapsPerIndex() const {
    return mode == LETHE_RT_RESIZE_NEAREST  ? 1
           : mode == LETHE_RT_RESIZE_LINEAR ? 2
                                            : maxResizeTaps;
  }
};

/// What output index i of one dim reads: `count` input indices with their
/// weights, or the extrapolation value when `outside`.
struct Taps {
  int64_t index[maxResizeTaps];
  double weight[maxResizeTaps];
  int count;
  bool outside;
};

namespace detail {

LETHE_HOST_DEVICE inline int64_t clampIndex(int64_t index, int64_t length) {
  return index < 0 ? 0 : index > length - 1 ? length - 1 : index;
}

} // namespace detail

/// The input coordinate that output index `i` of `dim` maps to; false when a
/// tf_crop_and_resize coordinate falls outside the input.
LETHE_HOST_DEVICE inline bool originalCoordinate(lethe_rt_coordinate_mode mode,
                                                 int64_t i,
                                                 const ResizeDim &dim,
                                                 double &x) {
  double scale = dim.scale;
  double resizedLength = static_cast<double>(dim.inLength) * scale;
  double last = static_cast<double>(dim.inLength - 1);
  switch (mode) {
  case LETHE_RT_HALF_PIXEL:
    x = (i + 0.5) / scale - 0.5;
    return true;
  case LETHE_RT_PYTORCH_HALF_PIXEL:
    x = dim.outLength > 1 ? (i + 0.5) / scale - 0.5 : 0.0;
    return true;
  case LETHE_RT_ALIGN_CORNERS:
    x = resizedLength == 1 ? 0.0 : i * last / (resizedLength - 1);
    return true;
  case LETHE_RT_ASYMMETRIC:
    x = i / scale;
    return true;
  case LETHE_RT_TF_HALF_PIXEL_FOR_NN:
    x = (i + 0.5) / scale;
    return true;
  case LETHE_RT_TF_CROP_AND_RESIZE: {
    double roiStart = dim.roiStart, roiEnd = dim.roiEnd;
    x = resizedLength == 1
            ? (roiEnd - roiStart) * last / 2
            : i * (roiEnd - roiStart) * last / (resizedLength - 1);
    x += roiStart * last;
    return !(x < 0 || x > last);
  }
  }
  x = 0.0; // Unreachable: the mode was checked.
  return true;
}

/// The input index that mode nearest reads for coordinate `x`.
LETHE_HOST_DEVICE inline int64_t nearestIndex(lethe_rt_nearest_mode mode,
                                              double x, int64_t inLength) {
  double rounded;
  double fraction = x - ::floor(x);
  switch (mode) {
  case LETHE_RT_ROUND_PREFER_CEIL:
    rounded = fraction == 0.5 ? ::ceil(x) : ::round(x);
    break;
  case LETHE_RT_FLOOR:
    rounded = ::floor(x);
    break;
  case LETHE_RT_CEIL:
    rounded = ::ceil(x);
    break;
  case LETHE_RT_ROUND_PREFER_FLOOR:
  default:
    rounded = fraction == 0.5 ? ::floor(x) : ::round(x);
    break;
  }
  return detail::clampIndex(static_cast<int64_t>(rounded), inLength);
}

/// Linear or cubic taps around coordinate `x`. The first point is chosen so
/// that the fraction lies in (0, 1]: an integer x takes its left neighbours,
/// as ONNX's reference does.
LETHE_HOST_DEVICE inline Taps interpolationTaps(const ResizeSampling &sampling,
                                                double x, int64_t inLength) {
  Taps taps{};
  double base = ::ceil(x) - 1;
  double r = x - base;
  if (sampling.mode == LETHE_RT_RESIZE_LINEAR) {
    taps.count = 2;
    taps.weight[0] = 1 - r;
    taps.weight[1] = r;
  } else {
    // Keys' cubic convolution kernel with parameter a, at distances 1 + r,
    // r, 1 - r and 2 - r.
    double a = sampling.cubicCoeffA;
    double s = 1 - r;
    taps.count = 4;
    taps.weight[0] =
        ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
    taps.weight[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
    taps.weight[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
    taps.weight[3] =
        ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
    base -= 1;
  }
  double sum = 0;
  for (int k = 0; k < taps.count; ++k) {
    int64_t index = static_cast<int64_t>(base) + k;
    bool inside = index >= 0 && index < inLength;
    if (sampling.excludeOutside && !inside)
      taps.weight[k] = 0;
    sum += taps.weight[k];
    taps.index[k] = detail::clampIndex(index, inLength);
  }
  if (sampling.excludeOutside && sum != 0)
    for (int k = 0; k < taps.count; ++k)
      taps.weight[k] /= sum;
  return taps;
}

/// The taps of output index `i` of `dim`.
LETHE_HOST_DEVICE inline Taps resizeTaps(const ResizeSampling &sampling,
                                         const ResizeDim &dim, int64_t i) {
  Taps taps{};
  double x;
  if (!originalCoordinate(sampling.coordinates, i, dim, x)) {
    taps.outside = true;
  } else if (sampling.mode == LETHE_RT_RESIZE_NEAREST) {
    taps.count = 1;
    taps.index[0] = nearestIndex(sampling.nearest, x, dim.inLength);
    taps.weight[0] = 1;
  } else {
    taps = interpolationTaps(sampling, x, dim.inLength);
  }
  return taps;
}

//===----------------------------------------------------------------------===//
// Host side: the dims of a resize of x into out (arguments checked by
// resizeOptionsError)
//===----------------------------------------------------------------------===//

inline ResizeSampling resizeSamplingOf(const lethe_rt_resize_options &options) {
  ResizeSampling sampling;
  sampling.mode = options.mode;
  sampling.coordinates = options.coordinates;
  sampling.nearest = options.nearest;
  sampling.cubicCoeffA = options.cubic_coeff_a;
  sampling.excludeOutside = options.exclude_outside != 0;
  return sampling;
}

/// Dim `dim` of the resize of `x` into `out` by `scales`.
inline ResizeDim resizeDimOf(const lethe_rt_resize_options &options,
                             const lethe_rt_tensor &x,
                             const lethe_rt_tensor &out, const double *scales,
                             int32_t dim) {
  ResizeDim result;
  result.inLength = x.shape[dim];
  result.outLength = out.shape[dim];
  result.scale = scales[dim];
  if (options.coordinates == LETHE_RT_TF_CROP_AND_RESIZE) {
    result.roiStart = options.roi[dim];
    result.roiEnd = options.roi[x.rank + dim];
  }
  return result;
}

/// The taps of every output index of `dim`.
inline std::vector<Taps> tapsOfDim(const ResizeSampling &sampling,
                                   const ResizeDim &dim) {
  std::vector<Taps> result(dim.outLength);
  for (int64_t i = 0; i < dim.outLength; ++i)
    result[i] = resizeTaps(sampling, dim, i);
  return result;
}

/// Whether `taps` read each input index with weight 1 into the same output
/// index, so that the dim needs no pass (and a pass would not keep every
/// bit: it adds 0 times the other taps, and to +0).
inline bool isIdentity(const std::vector<Taps> &taps, int64_t inLength) {
  if (static_cast<int64_t>(taps.size()) != inLength)
    return false;
  for (int64_t i = 0; i < inLength; ++i) {
    const Taps &t = taps[i];
    if (t.outside)
      return false;
    double onI = 0;
    for (int k = 0; k < t.count; ++k) {
      if (t.index[k] == i)
        onI += t.weight[k];
      else if (t.weight[k] != 0)
        return false;
    }
    if (onI != 1.0)
      return false;
  }
  return true;
}

/// `value` (the extrapolation value of tf_crop_and_resize) as an element of
/// `dtype`, in the low bytes of the result.
inline uint64_t extrapolationElement(lethe_rt_dtype dtype, double value) {
  alignas(uint64_t) unsigned char bytes[sizeof(uint64_t)] = {};
  dispatchAny(dtype, [&](auto tag) {
    using T = decltype(tag);
    store<T>(bytes, 0, value);
  });
  uint64_t element;
  std::memcpy(&element, bytes, sizeof(element));
  return element;
}

//===----------------------------------------------------------------------===//
// Per-element evaluation (the CUDA backend's kernels)
//===----------------------------------------------------------------------===//

/// A resize of x into out as the per-element functions take it: every dim,
/// and the dims that are not the identity (the "levels", in dim order: the
/// CPU backend's passes).
struct ResizeGeometry {
  ResizeSampling sampling;
  double extrapolationValue = 0;
  int32_t rank = 0;
  ResizeDim dims[maxBroadcastRank];
  int32_t levels = 0;
  int32_t levelDims[maxBroadcastRank] = {};
};

/// The geometry of the resize of `x` into `out` (checked); false when x has
/// more than maxBroadcastRank dims.
inline bool makeResizeGeometry(const lethe_rt_resize_options &options,
                               const lethe_rt_tensor &x,
                               const lethe_rt_tensor &out, const double *scales,
                               ResizeGeometry &geometry) {
  if (x.rank > maxBroadcastRank)
    return false;
  geometry.sampling = resizeSamplingOf(options);
  geometry.extrapolationValue = options.extrapolation_value;
  geometry.rank = x.rank;
  geometry.levels = 0;
  for (int32_t dim = 0; dim < x.rank; ++dim) {
    geometry.dims[dim] = resizeDimOf(options, x, out, scales, dim);
    if (!isIdentity(tapsOfDim(geometry.sampling, geometry.dims[dim]),
                    x.shape[dim]))
      geometry.levelDims[geometry.levels++] = dim;
  }
  return true;
}

/// The x element that out element `outLinear` of a nearest resize copies,
/// or -1 when it lies outside (tf_crop_and_resize: the extrapolation value).
LETHE_HOST_DEVICE inline int64_t resizeNearestSource(const ResizeGeometry &g,
                                                     int64_t outLinear) {
  int64_t offset = 0, stride = 1;
  bool outside = false;
  for (int32_t dim = g.rank; dim-- > 0;) {
    const ResizeDim &d = g.dims[dim];
    int64_t i = outLinear % d.outLength;
    outLinear /= d.outLength;
    Taps taps = resizeTaps(g.sampling, d, i);
    outside |= taps.outside;
    if (!taps.outside)
      offset += taps.index[0] * stride;
    stride *= d.inLength;
  }
  return outside ? -1 : offset;
}

/// Where element `linear` of out (`ofOut`) or of x lies: its index in each
/// dim, the strides of the tensor it reads (x for an out element, out for
/// an x element, as a gradient reads dy), and the offset there of its dims
/// that are not levels (which read their own index).
LETHE_HOST_DEVICE inline int64_t
readPosition(const ResizeGeometry &g, int64_t linear, bool ofOut,
             int64_t (&index)[maxBroadcastRank],
             int64_t (&strides)[maxBroadcastRank]) {
  int64_t base = 0, stride = 1;
  for (int32_t dim = g.rank; dim-- > 0;) {
    const ResizeDim &d = g.dims[dim];
    int64_t length = ofOut ? d.outLength : d.inLength;
    index[dim] = linear % length;
    linear /= length;
    strides[dim] = stride;
    base += index[dim] * stride;
    stride *= ofOut ? d.inLength : d.outLength;
  }
  for (int32_t l = 0; l < g.levels; ++l)
    base -= index[g.levelDims[l]] * strides[g.levelDims[l]];
  return base;
}

/// Out element `outLinear` of a linear or cubic resize of x (storage type
/// T), in double: the CPU backend's passes evaluated for one element. Level
/// l's value at an index is 0 plus each tap's weight times level l - 1's
/// value at the tap's index, in tap order (or the extrapolation value where
/// the index falls outside); below level 0 is x itself. The levels nest,
/// level 0 innermost, and every value is rounded as the passes round it.
template <typename T>
LETHE_HOST_DEVICE double resizeInterpolatedAt(const ResizeGeometry &g,
                                              const void *x,
                                              int64_t outLinear) {
  int64_t index[maxBroadcastRank], strides[maxBroadcastRank];
  int64_t base = readPosition(g, outLinear, /*ofOut=*/true, index, strides);
  int32_t levels = g.levels;
  Taps taps[maxBroadcastRank];
  for (int32_t l = 0; l < levels; ++l) {
    int32_t dim = g.levelDims[l];
    taps[l] = resizeTaps(g.sampling, g.dims[dim], index[dim]);
  }
  if (levels == 0)
    return static_cast<double>(load<T>(x, base));
  // An explicit stack: for each level, its sum so far, its next tap and the
  // offset of the taps chosen at it and above.
  double sum[maxBroadcastRank];
  int tap[maxBroadcastRank];
  int64_t offset[maxBroadcastRank + 1];
  offset[levels] = base;
  int32_t l = levels - 1;
  sum[l] = 0;
  tap[l] = 0;
  while (true) {
    const Taps &t = taps[l];
    if (t.outside || tap[l] == t.count) {
      double value = t.outside ? g.extrapolationValue : sum[l];
      if (l == levels - 1)
        return value;
      ++l;
      sum[l] += taps[l].weight[tap[l]] * value;
      ++tap[l];
      continue;
    }
    int64_t at = offset[l + 1] + t.index[tap[l]] * strides[g.levelDims[l]];
    if (l == 0) {
      sum[0] += t.weight[tap[0]] * static_cast<double>(load<T>(x, at));
      ++tap[0];
      continue;
    }
    offset[l] = at;
    --l;
    sum[l] = 0;
    tap[l] = 0;
  }
}

/// Slot `slot` of `dim`'s taps, for the gradient (output index slot /
/// tapsPerIndex's tap slot % tapsPerIndex): the input index it reads, as the
/// key it is grouped by, and its weight; where it reads nothing (the output
/// index falls outside the input) the key is dim.inLength, past every input
/// index, and the weight 0.
LETHE_HOST_DEVICE inline void resizeTapSlot(const ResizeSampling &sampling,
                                            const ResizeDim &dim, int64_t slot,
                                            uint64_t &key, double &weight) {
  int perIndex = sampling.tapsPerIndex();
  Taps taps = resizeTaps(sampling, dim, slot / perIndex);
  int k = static_cast<int>(slot % perIndex);
  bool reads = !taps.outside && k < taps.count;
  key = static_cast<uint64_t>(reads ? taps.index[k] : dim.inLength);
  weight = reads ? taps.weight[k] : 0.0;
}

/// For lethe_rt_resize_grad, per level (a dim that is not the identity):
/// the taps of the forward in slots (output index i's tap k in slot i *
/// tapsPerIndex + k), each slot's weight, and the slots grouped by the input
/// index they read (SourceGroups over the slots, in increasing slot order:
/// the CPU backend's order of adding them).
struct ResizeGradLevel {
  const double *weights = nullptr;
  SourceGroups groups;
};

/// Dx element `dxLinear` (x's shape) of the gradient of a resize, from dy
/// (out's shape, storage type T), in double: the adjoint of the CPU
/// backend's passes for one element. Level l's value at input index p is 0
/// plus, for each slot that reads p in slot order, its weight times level l
/// - 1's value at the slot's output index; below level 0 is dy itself.
template <typename T>
LETHE_HOST_DEVICE double resizeGradAt(const ResizeGeometry &g,
                                      const ResizeGradLevel *gradLevels,
                                      const void *dy, int64_t dxLinear) {
  int64_t index[maxBroadcastRank], strides[maxBroadcastRank];
  int64_t base = readPosition(g, dxLinear, /*ofOut=*/false, index, strides);
  int32_t levels = g.levels;
  int64_t next[maxBroadcastRank], end[maxBroadcastRank];
  if (levels == 0)
    return static_cast<double>(load<T>(dy, base));
  int perIndex = g.sampling.tapsPerIndex();
  auto enter = [&](int32_t l) {
    const SourceGroups &groups = gradLevels[l].groups;
    int64_t p = index[g.levelDims[l]];
    next[l] = groups.offsets[p];
    end[l] = groups.offsets[p + 1];
  };
  double sum[maxBroadcastRank];
  int64_t offset[maxBroadcastRank + 1];
  offset[levels] = base;
  int32_t l = levels - 1;
  sum[l] = 0;
  enter(l);
  while (true) {
    if (next[l] == end[l]) {
      double value = sum[l];
      if (l == levels - 1)
        return value;
      ++l;
      int64_t slot = gradLevels[l].groups.sources[next[l]];
      sum[l] += gradLevels[l].weights[slot] * value;
      ++next[l];
      continue;
    }
    int64_t slot = gradLevels[l].groups.sources[next[l]];
    int64_t at = offset[l + 1] + slot / perIndex * strides[g.levelDims[l]];
    if (l == 0) {
      sum[0] +=
          gradLevels[0].weights[slot] * static_cast<double>(load<T>(dy, at));
      ++next[0];
      continue;
    }
    offset[l] = at;
    --l;
    sum[l] = 0;
    enter(l);
  }
}

} // namespace lethe::rt

#endif // LETHE_RUNTIME_COMMON_RESIZESAMPLING_H
