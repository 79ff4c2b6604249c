//===- Resize.cpp - ONNX Resize on the CPU backend ------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_resize: nearest, N-linear and N-cubic sampling with ONNX's
// coordinate transformations. The sampling is separable: each output index
// of a dim reads a few input indices of that dim with weights (the "taps"),
// computed once per dim. Nearest copies one element per output element, so
// it works for every dtype; linear and cubic resize one dim at a time in
// double, which keeps the result within rounding of ONNX's reference (which
// interpolates in float64) and the same bits on every run. The gradient is
// the adjoint of those passes, in double as well.
//
// Coordinates follow ONNX's reference implementation: the resized length
// that the transformations divide by is `input length * scale`, which need
// not be an integer, and points outside the input repeat the edge (or, with
// exclude_outside, get weight 0).
//
//===----------------------------------------------------------------------===//

#include "CpuRuntime.h"
#include "KernelUtils.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

using namespace lethe::rt;

namespace {

constexpr const char *kKernel = "lethe_rt_resize";

/// The input coordinate that output index `i` of one dim maps to, or none
/// when a tf_crop_and_resize coordinate falls outside the input.
std::optional<double> originalCoordinate(lethe_rt_coordinate_mode mode,
                                         int64_t i, double scale,
                                         int64_t inLength, int64_t outLength,
                                         double roiStart, double roiEnd) {
  double resizedLength = static_cast<double>(inLength) * scale;
  double last = static_cast<double>(inLength - 1);
  switch (mode) {
  case LETHE_RT_HALF_PIXEL:
    return (i + 0.5) / scale - 0.5;
  case LETHE_RT_PYTORCH_HALF_PIXEL:
    return outLength > 1 ? (i + 0.5) / scale - 0.5 : 0.0;
  case LETHE_RT_ALIGN_CORNERS:
    return resizedLength == 1 ? 0.0 : i * last / (resizedLength - 1);
  case LETHE_RT_ASYMMETRIC:
    return i / scale;
  case LETHE_RT_TF_HALF_PIXEL_FOR_NN:
    return (i + 0.5) / scale;
  case LETHE_RT_TF_CROP_AND_RESIZE: {
    double x = resizedLength == 1
                   ? (roiEnd - roiStart) * last / 2
                   : i * (roiEnd - roiStart) * last / (resizedLength - 1);
    x += roiStart * last;
    if (x < 0 || x > last)
      return std::nullopt;
    return x;
  }
  }
  return 0.0; // Unreachable: the mode was checked.
}

/// The input index that mode nearest reads for coordinate `x`.
int64_t nearestIndex(lethe_rt_nearest_mode mode, double x, int64_t inLength) {
  double rounded;
  double fraction = x - std::floor(x);
  switch (mode) {
  case LETHE_RT_ROUND_PREFER_CEIL:
    rounded = fraction == 0.5 ? std::ceil(x) : std::round(x);
    break;
  case LETHE_RT_FLOOR:
    rounded = std::floor(x);
    break;
  case LETHE_RT_CEIL:
    rounded = std::ceil(x);
    break;
  case LETHE_RT_ROUND_PREFER_FLOOR:
  default:
    rounded = fraction == 0.5 ? std::floor(x) : std::round(x);
    break;
  }
  return std::clamp<int64_t>(static_cast<int64_t>(rounded), 0, inLength - 1);
}

/// What output index i of one dim reads: `count` input indices with their
/// weights, or the extrapolation value when `outside`.
struct Taps {
  int64_t index[4];
  double weight[4];
  int count;
  bool outside;
};

/// Linear or cubic taps around coordinate `x`. The first point is chosen so
/// that the fraction lies in (0, 1]: an integer x takes its left neighbours,
/// as ONNX's reference does.
Taps interpolationTaps(const lethe_rt_resize_options &options, double x,
                       int64_t inLength) {
  Taps taps{};
  double base = std::ceil(x) - 1;
  double r = x - base;
  if (options.mode == LETHE_RT_RESIZE_LINEAR) {
    taps.count = 2;
    taps.weight[0] = 1 - r;
    taps.weight[1] = r;
  } else {
    // Keys' cubic convolution kernel with parameter a, at distances 1 + r,
    // r, 1 - r and 2 - r.
    double a = options.cubic_coeff_a;
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
    if (options.exclude_outside && !inside)
      taps.weight[k] = 0;
    sum += taps.weight[k];
    taps.index[k] = std::clamp<int64_t>(index, 0, inLength - 1);
  }
  if (options.exclude_outside && sum != 0)
    for (int k = 0; k < taps.count; ++k)
      taps.weight[k] /= sum;
  return taps;
}

/// The taps of every output index of dim `dim`.
std::vector<Taps> tapsOfDim(const lethe_rt_resize_options &options,
                            const lethe_rt_tensor &x,
                            const lethe_rt_tensor &out, const double *scales,
                            int32_t dim) {
  int64_t inLength = x.shape[dim], outLength = out.shape[dim];
  double roiStart = 0, roiEnd = 1;
  if (options.coordinates == LETHE_RT_TF_CROP_AND_RESIZE) {
    roiStart = options.roi[dim];
    roiEnd = options.roi[x.rank + dim];
  }
  std::vector<Taps> result(outLength);
  for (int64_t i = 0; i < outLength; ++i) {
    std::optional<double> coordinate =
        originalCoordinate(options.coordinates, i, scales[dim], inLength,
                           outLength, roiStart, roiEnd);
    Taps &taps = result[i];
    if (!coordinate) {
      taps.outside = true;
    } else if (options.mode == LETHE_RT_RESIZE_NEAREST) {
      taps.count = 1;
      taps.index[0] = nearestIndex(options.nearest, *coordinate, inLength);
      taps.weight[0] = 1;
    } else {
      taps = interpolationTaps(options, *coordinate, inLength);
    }
  }
  return result;
}

/// Whether `taps` read each input index with weight 1 into the same output
/// index, so that the dim needs no pass.
bool isIdentity(const std::vector<Taps> &taps, int64_t inLength) {
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

/// Nearest: out[i0, i1, ...] = x[tap(i0), tap(i1), ...], as bytes.
void resizeNearest(const lethe_rt_tensor &x, const lethe_rt_tensor &out,
                   const std::vector<std::vector<Taps>> &taps,
                   double extrapolationValue) {
  size_t size = lethe_rt_dtype_size(x.dtype);
  // The extrapolation value in x's dtype (tf_crop_and_resize).
  std::vector<char> extrapolated(size);
  dispatchAny(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    store<T>(extrapolated.data(), 0, extrapolationValue);
  });
  std::vector<int64_t> strides = stridesOf(x);
  const char *source = static_cast<const char *>(x.data);
  char *destination = static_cast<char *>(out.data);
  std::vector<int64_t> index(out.rank, 0);
  for (int64_t linear = 0, total = numElements(out); linear < total; ++linear) {
    int64_t offset = 0;
    bool outside = false;
    for (int32_t dim = 0; dim < out.rank; ++dim) {
      const Taps &t = taps[dim][index[dim]];
      outside |= t.outside;
      offset += t.outside ? 0 : t.index[0] * strides[dim];
    }
    std::memcpy(destination + linear * size,
                outside ? extrapolated.data() : source + offset * size, size);
    for (int32_t dim = out.rank; dim-- > 0;) {
      if (++index[dim] < out.shape[dim])
        break;
      index[dim] = 0;
    }
  }
}

/// Linear or cubic: one weighted pass per dim that is not the identity, in
/// double.
template <typename T>
void resizeInterpolated(const lethe_rt_tensor &x, const lethe_rt_tensor &out,
                        const std::vector<std::vector<Taps>> &taps,
                        double extrapolationValue) {
  std::vector<int64_t> shape(x.shape, x.shape + x.rank);
  std::vector<double> current(numElements(x));
  for (size_t i = 0; i < current.size(); ++i)
    current[i] = static_cast<double>(load<T>(x.data, i));
  std::vector<double> next;
  for (int32_t dim = 0; dim < x.rank; ++dim) {
    int64_t inLength = shape[dim], outLength = out.shape[dim];
    if (isIdentity(taps[dim], inLength))
      continue;
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < dim; ++d)
      outer *= shape[d];
    for (int32_t d = dim + 1; d < x.rank; ++d)
      inner *= shape[d];
    next.assign(outer * outLength * inner, 0.0);
    for (int64_t o = 0; o < outer; ++o) {
      const double *source = current.data() + o * inLength * inner;
      for (int64_t i = 0; i < outLength; ++i) {
        double *destination = next.data() + (o * outLength + i) * inner;
        const Taps &t = taps[dim][i];
        if (t.outside) {
          std::fill(destination, destination + inner, extrapolationValue);
          continue;
        }
        for (int k = 0; k < t.count; ++k) {
          const double *row = source + t.index[k] * inner;
          double weight = t.weight[k];
          for (int64_t j = 0; j < inner; ++j)
            destination[j] += weight * row[j];
        }
      }
    }
    current.swap(next);
    shape[dim] = outLength;
  }
  for (size_t i = 0; i < current.size(); ++i)
    store<T>(out.data, i, current[i]);
}

/// Checks the options and scales of a resize of `x` into `out` (of the same
/// rank).
bool checkOptions(lethe_rt_context *context, const char *kernel,
                  const lethe_rt_tensor &x, const lethe_rt_tensor &out,
                  const double *scales,
                  const lethe_rt_resize_options *options) {
  if (!options) {
    fail(context, kernel, "options is missing");
    return false;
  }
  if (x.rank > 0 && !scales) {
    fail(context, kernel, "scales is missing");
    return false;
  }
  if (options->mode != LETHE_RT_RESIZE_NEAREST &&
      options->mode != LETHE_RT_RESIZE_LINEAR &&
      options->mode != LETHE_RT_RESIZE_CUBIC) {
    fail(context, kernel, "unknown mode %d", static_cast<int>(options->mode));
    return false;
  }
  if (options->coordinates < LETHE_RT_HALF_PIXEL ||
      options->coordinates > LETHE_RT_TF_CROP_AND_RESIZE) {
    fail(context, kernel, "unknown coordinate mode %d",
         static_cast<int>(options->coordinates));
    return false;
  }
  if (options->nearest < LETHE_RT_ROUND_PREFER_FLOOR ||
      options->nearest > LETHE_RT_CEIL) {
    fail(context, kernel, "unknown nearest mode %d",
         static_cast<int>(options->nearest));
    return false;
  }
  if (options->coordinates == LETHE_RT_TF_CROP_AND_RESIZE && !options->roi) {
    fail(context, kernel,
         "tf_crop_and_resize needs a region of interest (roi)");
    return false;
  }
  for (int32_t dim = 0; dim < x.rank; ++dim) {
    if (!(scales[dim] > 0) || !std::isfinite(scales[dim])) {
      fail(context, kernel, "scale %g of dim %d is not positive", scales[dim],
           dim);
      return false;
    }
    if (x.shape[dim] == 0 && out.shape[dim] != 0) {
      fail(context, kernel, "dim %d of x is empty", dim);
      return false;
    }
  }
  return true;
}

} // namespace

extern "C" lethe_rt_status
lethe_rt_resize(lethe_rt_context *context, const lethe_rt_tensor *x,
                const double *scales, const lethe_rt_resize_options *options,
                const lethe_rt_tensor *out) {
  if (!checkTensor(context, kKernel, "x", x) ||
      !checkDtype(context, kKernel, "out", out, x->dtype) ||
      !checkRank(context, kKernel, "out", *out, x->rank) ||
      !checkOptions(context, kKernel, *x, *out, scales, options))
    return LETHE_RT_ERROR;
  if (options->mode != LETHE_RT_RESIZE_NEAREST && !isFloat(x->dtype))
    return fail(context, kKernel,
                "linear and cubic resize need a float dtype, x is %s",
                dtypeName(x->dtype));
  if (numElements(*out) == 0)
    return LETHE_RT_OK;
  if (overlaps(*x, *out))
    return fail(context, kKernel, "out overlaps x");

  std::vector<std::vector<Taps>> taps;
  for (int32_t dim = 0; dim < x->rank; ++dim)
    taps.push_back(tapsOfDim(*options, *x, *out, scales, dim));
  if (options->mode == LETHE_RT_RESIZE_NEAREST) {
    resizeNearest(*x, *out, taps, options->extrapolation_value);
    return LETHE_RT_OK;
  }
  dispatchFloat(x->dtype, [&](auto tag) {
    resizeInterpolated<decltype(tag)>(*x, *out, taps,
                                      options->extrapolation_value);
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_resize_grad(
    lethe_rt_context *context, const lethe_rt_tensor *dy, const double *scales,
    const lethe_rt_resize_options *options, const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_resize_grad";
  if (!checkFloatTensor(context, kernel, "dy", dy) ||
      !checkDtype(context, kernel, "dx", dx, dy->dtype) ||
      !checkRank(context, kernel, "dx", *dx, dy->rank) ||
      !checkOptions(context, kernel, *dx, *dy, scales, options))
    return LETHE_RT_ERROR;
  if (numElements(*dx) == 0)
    return LETHE_RT_OK;
  if (overlaps(*dx, *dy))
    return fail(context, kernel, "dx overlaps dy");
  // The adjoint of resizeInterpolated's passes (nearest being one tap of
  // weight 1): each pass adds every output row, times its tap weights, into
  // the input rows it was sampled from. The passes act on different dims,
  // so they run in the forward's order.
  std::vector<int64_t> shape(dy->shape, dy->shape + dy->rank);
  std::vector<double> current(numElements(*dy));
  dispatchFloat(dy->dtype, [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < current.size(); ++i)
      current[i] = static_cast<double>(load<T>(dy->data, i));
  });
  std::vector<double> next;
  for (int32_t dim = 0; dim < dy->rank; ++dim) {
    std::vector<Taps> taps = tapsOfDim(*options, *dx, *dy, scales, dim);
    int64_t inLength = dx->shape[dim], outLength = dy->shape[dim];
    if (isIdentity(taps, inLength))
      continue;
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < dim; ++d)
      outer *= shape[d];
    for (int32_t d = dim + 1; d < dy->rank; ++d)
      inner *= shape[d];
    next.assign(outer * inLength * inner, 0.0);
    for (int64_t o = 0; o < outer; ++o) {
      double *destination = next.data() + o * inLength * inner;
      for (int64_t i = 0; i < outLength; ++i) {
        const Taps &t = taps[i];
        if (t.outside)
          continue;
        const double *row = current.data() + (o * outLength + i) * inner;
        for (int k = 0; k < t.count; ++k) {
          double *target = destination + t.index[k] * inner;
          for (int64_t j = 0; j < inner; ++j)
            target[j] += t.weight[k] * row[j];
        }
      }
    }
    current.swap(next);
    shape[dim] = inLength;
  }
  dispatchFloat(dx->dtype, [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < current.size(); ++i)
      store<T>(dx->data, i, current[i]);
  });
  return LETHE_RT_OK;
}
