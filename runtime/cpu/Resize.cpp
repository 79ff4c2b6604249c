//===- Resize.cpp - ONNX Resize on the CPU backend ------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_resize: nearest, N-linear and N-cubic sampling with ONNX's
// coordinate transformations. The sampling is separable: each output index
// of a dim reads a few input indices of that dim with weights (the "taps",
// common/ResizeSampling.h, which the CUDA backend shares), computed once per
// dim. Nearest copies one element per output element, so it works for every
// dtype; linear and cubic resize one dim at a time in double, which keeps
// the result within rounding of ONNX's reference (which interpolates in
// float64) and the same bits on every run. The gradient is the adjoint of
// those passes, in double as well.
//
//===----------------------------------------------------------------------===//

#include "CpuRuntime.h"
#include "KernelUtils.h"
#include "common/ResizeSampling.h"

#include <algorithm>
#include <cstring>

using namespace lethe::rt;

namespace {

constexpr const char *kKernel = "lethe_rt_resize";

/// The taps of every output index of every dim of the resize of `x` into
/// `out`.
std::vector<std::vector<Taps>>
tapsOfDims(const lethe_rt_resize_options &options, const lethe_rt_tensor &x,
           const lethe_rt_tensor &out, const double *scales) {
  ResizeSampling sampling = resizeSamplingOf(options);
  std::vector<std::vector<Taps>> taps;
  for (int32_t dim = 0; dim < x.rank; ++dim)
    taps.push_back(
        tapsOfDim(sampling, resizeDimOf(options, x, out, scales, dim)));
  return taps;
}

/// Nearest: out[i0, i1, ...] = x[tap(i0), tap(i1), ...], as bytes.
void resizeNearest(const lethe_rt_tensor &x, const lethe_rt_tensor &out,
                   const std::vector<std::vector<Taps>> &taps,
                   double extrapolationValue) {
  size_t size = lethe_rt_dtype_size(x.dtype);
  // The extrapolation value in x's dtype (tf_crop_and_resize).
  uint64_t extrapolated = extrapolationElement(x.dtype, extrapolationValue);
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
                outside ? reinterpret_cast<const char *>(&extrapolated)
                        : source + offset * size,
                size);
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

} // namespace

extern "C" lethe_rt_status
lethe_rt_resize(lethe_rt_context *context, const lethe_rt_tensor *x,
                const double *scales, const lethe_rt_resize_options *options,
                const lethe_rt_tensor *out) {
  if (!checkResize(context, kKernel, /*gradient=*/false, x, scales, options,
                   out))
    return LETHE_RT_ERROR;
  if (numElements(*out) == 0)
    return LETHE_RT_OK;
  if (!report(context, kKernel, overlapError("out", *out, "x", *x)))
    return LETHE_RT_ERROR;

  std::vector<std::vector<Taps>> taps = tapsOfDims(*options, *x, *out, scales);
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
  if (!checkResize(context, kernel, /*gradient=*/true, dy, scales, options, dx))
    return LETHE_RT_ERROR;
  if (numElements(*dx) == 0)
    return LETHE_RT_OK;
  if (!report(context, kernel, overlapError("dx", *dx, "dy", *dy)))
    return LETHE_RT_ERROR;
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
  std::vector<std::vector<Taps>> tapsOfEachDim =
      tapsOfDims(*options, *dx, *dy, scales);
  std::vector<double> next;
  for (int32_t dim = 0; dim < dy->rank; ++dim) {
    const std::vector<Taps> &taps = tapsOfEachDim[dim];
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
