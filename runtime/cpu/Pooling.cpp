//===- Pooling.cpp - Pooling kernels of the CPU backend -------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// max_pool, avg_pool and global_avg_pool on N, C, D1..Dn tensors (n = 1 to
// 3). A window position maps to input index `o * stride - pad_begin + k *
// dilation`; positions outside the input are padding. ceil_mode is already
// in the output's shape: windows that run past the padded input are clipped.
// The gradients walk the same windows: max_pool_grad finds each window's
// winner again and adds the output gradient to it; avg_pool_grad spreads
// each output gradient over its window with the forward's divisor.
//
//===----------------------------------------------------------------------===//

#include "CpuRuntime.h"

#include <cmath>
#include <limits>
#include <utility>

using namespace lethe::rt;

namespace {

/// The spatial geometry of a pooling call, checked against the tensors.
struct Window {
  int32_t rank = 0; // spatial dims
  std::vector<int64_t> input, output, kernel, strides, padBegin, padEnd,
      dilations;
  int64_t planes = 0; // N * C
};

/// Checks x and out (x of a float dtype, or with `integers` also of an
/// integer dtype) and the window attributes, and describes the window.
bool getWindow(lethe_rt_context *context, const char *kernelName,
               const lethe_rt_tensor *x, const lethe_rt_tensor *out,
               const int64_t *kernel, const int64_t *strides,
               const int64_t *pads, const int64_t *dilations, bool integers,
               Window &window) {
  if (integers) {
    if (!checkTensor(context, kernelName, "x", x))
      return false;
    if (x->dtype == LETHE_RT_I1) {
      fail(context, kernelName, "x must be numeric, got i1");
      return false;
    }
  } else if (!checkFloatTensor(context, kernelName, "x", x)) {
    return false;
  }
  if (!checkDtype(context, kernelName, "out", out, x->dtype))
    return false;
  if (x->rank < 3 || x->rank > 5 || out->rank != x->rank ||
      out->shape[0] != x->shape[0] || out->shape[1] != x->shape[1]) {
    fail(context, kernelName,
         "x (%s) and out (%s) must be N, C and 1 to 3 spatial dims",
         shapeString(*x).c_str(), shapeString(*out).c_str());
    return false;
  }
  if (!kernel || !strides || !pads) {
    fail(context, kernelName, "kernel_shape, strides or pads is missing");
    return false;
  }
  window.rank = x->rank - 2;
  window.planes = x->shape[0] * x->shape[1];
  for (int32_t dim = 0; dim < window.rank; ++dim) {
    int64_t dilation = dilations ? dilations[dim] : 1;
    if (kernel[dim] <= 0 || strides[dim] <= 0 || dilation <= 0 ||
        pads[dim] < 0 || pads[dim + window.rank] < 0) {
      fail(context, kernelName,
           "spatial dim %d: kernel, stride and dilation must be positive and "
           "pads non-negative",
           dim);
      return false;
    }
    window.input.push_back(x->shape[dim + 2]);
    window.output.push_back(out->shape[dim + 2]);
    window.kernel.push_back(kernel[dim]);
    window.strides.push_back(strides[dim]);
    window.padBegin.push_back(pads[dim]);
    window.padEnd.push_back(pads[dim + window.rank]);
    window.dilations.push_back(dilation);
    // The last window must start inside the input or its padding.
    if (window.output.back() > 0 &&
        (window.output.back() - 1) * strides[dim] >=
            window.input.back() + pads[dim] + pads[dim + window.rank]) {
      fail(context, kernelName,
           "out's spatial dim %d (%lld) is too large for x's (%lld)", dim,
           static_cast<long long>(window.output.back()),
           static_cast<long long>(window.input.back()));
      return false;
    }
  }
  return true;
}

/// Calls `visit(outputOffset, positions, count, paddedCount)` for every
/// output position of one plane, where `positions` holds the `count` input
/// offsets of its window that lie inside the input and `paddedCount` the
/// number of window positions inside the padded input.
template <typename Visit>
void forEachWindow(const Window &window, Visit &&visit) {
  int32_t rank = window.rank;
  std::vector<int64_t> inputStrides(rank, 1);
  for (int32_t dim = rank - 1; dim > 0; --dim)
    inputStrides[dim - 1] = inputStrides[dim] * window.input[dim];
  int64_t outputs = 1, kernelSize = 1;
  for (int32_t dim = 0; dim < rank; ++dim) {
    outputs *= window.output[dim];
    kernelSize *= window.kernel[dim];
  }
  std::vector<int64_t> outputIndex(rank, 0), positions;
  positions.reserve(kernelSize);
  for (int64_t output = 0; output < outputs; ++output) {
    positions.clear();
    int64_t padded = 0;
    std::vector<int64_t> kernelIndex(rank, 0);
    for (int64_t k = 0; k < kernelSize; ++k) {
      bool inside = true, insidePadded = true;
      int64_t offset = 0;
      for (int32_t dim = 0; dim < rank; ++dim) {
        int64_t position = outputIndex[dim] * window.strides[dim] -
                           window.padBegin[dim] +
                           kernelIndex[dim] * window.dilations[dim];
        if (position < 0 || position >= window.input[dim])
          inside = false;
        if (position < -window.padBegin[dim] ||
            position >= window.input[dim] + window.padEnd[dim])
          insidePadded = false;
        offset += position * inputStrides[dim];
      }
      if (inside)
        positions.push_back(offset);
      padded += insidePadded;
      for (int32_t dim = rank; dim-- > 0;) {
        if (++kernelIndex[dim] < window.kernel[dim])
          break;
        kernelIndex[dim] = 0;
      }
    }
    visit(output, positions, padded);
    for (int32_t dim = rank; dim-- > 0;) {
      if (++outputIndex[dim] < window.output[dim])
        break;
      outputIndex[dim] = 0;
    }
  }
}

int64_t spatialSize(const std::vector<int64_t> &dims) {
  int64_t size = 1;
  for (int64_t dim : dims)
    size *= dim;
  return size;
}

/// The column-major offset, within a plane of spatial dims `input`, of the
/// row-major offset `position`.
int64_t columnMajor(const std::vector<int64_t> &input, int64_t position) {
  int64_t result = 0, stride = 1;
  // Row-major digits from the last dim; column-major weights from the first.
  std::vector<int64_t> digits(input.size());
  for (size_t dim = input.size(); dim-- > 0;) {
    digits[dim] = position % input[dim];
    position /= input[dim];
  }
  for (size_t dim = 0; dim < input.size(); ++dim) {
    result += digits[dim] * stride;
    stride *= input[dim];
  }
  return result;
}

/// The maximum of the window elements at `positions` (offsets from `base`)
/// and where it is: the first maximum, NaN winning over numbers; the lowest
/// value (and offset 0) for an empty window, which is all padding.
template <typename T>
std::pair<ComputeType<T>, int64_t>
windowMax(const void *data, int64_t base,
          const std::vector<int64_t> &positions) {
  using C = ComputeType<T>;
  C best = std::numeric_limits<C>::has_infinity
               ? -std::numeric_limits<C>::infinity()
               : std::numeric_limits<C>::lowest();
  int64_t where = positions.empty() ? 0 : positions.front();
  for (int64_t position : positions) {
    C value = load<T>(data, base + position);
    if (value > best || (value != value && best == best)) {
      best = value;
      where = position;
    }
  }
  return {best, where};
}

} // namespace

extern "C" lethe_rt_status
lethe_rt_max_pool(lethe_rt_context *context, const lethe_rt_tensor *x,
                  const int64_t *kernel_shape, const int64_t *strides,
                  const int64_t *pads, const int64_t *dilations,
                  int64_t storage_order, const lethe_rt_tensor *out,
                  const lethe_rt_tensor *indices) {
  const char *kernel = "lethe_rt_max_pool";
  Window window;
  if (!getWindow(context, kernel, x, out, kernel_shape, strides, pads,
                 dilations, /*integers=*/true, window))
    return LETHE_RT_ERROR;
  if (indices &&
      (!checkDtype(context, kernel, "indices", indices, LETHE_RT_I64) ||
       !checkSameShape(context, kernel, "out", *out, "indices", *indices)))
    return LETHE_RT_ERROR;
  if (storage_order != 0 && storage_order != 1)
    return fail(context, kernel, "storage_order must be 0 or 1, not %lld",
                static_cast<long long>(storage_order));
  int64_t inPlane = spatialSize(window.input),
          outPlane = spatialSize(window.output);
  int64_t *indexData =
      indices ? static_cast<int64_t *>(indices->data) : nullptr;
  dispatchAny(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t plane = 0; plane < window.planes; ++plane) {
      int64_t inBase = plane * inPlane, outBase = plane * outPlane;
      forEachWindow(
          window,
          [&](int64_t output, const std::vector<int64_t> &positions, int64_t) {
            auto [best, where] = windowMax<T>(x->data, inBase, positions);
            store<T>(out->data, outBase + output, best);
            if (indexData)
              indexData[outBase + output] =
                  inBase +
                  (storage_order ? columnMajor(window.input, where) : where);
          });
    }
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status
lethe_rt_avg_pool(lethe_rt_context *context, const lethe_rt_tensor *x,
                  const int64_t *kernel_shape, const int64_t *strides,
                  const int64_t *pads, int count_include_pad,
                  const lethe_rt_tensor *out) {
  Window window;
  if (!getWindow(context, "lethe_rt_avg_pool", x, out, kernel_shape, strides,
                 pads, nullptr, /*integers=*/false, window))
    return LETHE_RT_ERROR;
  int64_t inPlane = spatialSize(window.input),
          outPlane = spatialSize(window.output);
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t plane = 0; plane < window.planes; ++plane) {
      int64_t inBase = plane * inPlane, outBase = plane * outPlane;
      forEachWindow(window, [&](int64_t output,
                                const std::vector<int64_t> &positions,
                                int64_t padded) {
        ComputeType<T> sum = 0;
        for (int64_t position : positions)
          sum += load<T>(x->data, inBase + position);
        int64_t count =
            count_include_pad ? padded : static_cast<int64_t>(positions.size());
        store<T>(out->data, outBase + output,
                 count > 0 ? sum / static_cast<ComputeType<T>>(count) : 0);
      });
    }
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status
lethe_rt_global_avg_pool(lethe_rt_context *context, const lethe_rt_tensor *x,
                         const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_global_avg_pool";
  if (!checkFloatTensor(context, kernel, "x", x) ||
      !checkDtype(context, kernel, "out", out, x->dtype))
    return LETHE_RT_ERROR;
  if (x->rank < 3 || out->rank != x->rank)
    return fail(context, kernel, "x (%s) must be N, C and spatial dims",
                shapeString(*x).c_str());
  int64_t planes = x->shape[0] * x->shape[1];
  if (numElements(*out) != planes)
    return fail(context, kernel, "out (%s) must hold one value per plane",
                shapeString(*out).c_str());
  int64_t plane = planes ? numElements(*x) / planes : 0;
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t p = 0; p < planes; ++p) {
      ComputeType<T> sum = 0;
      for (int64_t i = 0; i < plane; ++i)
        sum += load<T>(x->data, p * plane + i);
      store<T>(out->data, p, plane ? sum / plane : 0);
    }
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status
lethe_rt_max_pool_grad(lethe_rt_context *context, const lethe_rt_tensor *dy,
                       const lethe_rt_tensor *x, const int64_t *kernel_shape,
                       const int64_t *strides, const int64_t *pads,
                       const int64_t *dilations, const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_max_pool_grad";
  Window window;
  if (!getWindow(context, kernel, x, dy, kernel_shape, strides, pads, dilations,
                 /*integers=*/false, window) ||
      !checkDtype(context, kernel, "dx", dx, x->dtype) ||
      !checkSameShape(context, kernel, "x", *x, "dx", *dx))
    return LETHE_RT_ERROR;
  int64_t inPlane = spatialSize(window.input),
          outPlane = spatialSize(window.output);
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    std::vector<C> sum(window.planes * inPlane, C(0));
    for (int64_t plane = 0; plane < window.planes; ++plane) {
      int64_t inBase = plane * inPlane, outBase = plane * outPlane;
      forEachWindow(
          window,
          [&](int64_t output, const std::vector<int64_t> &positions, int64_t) {
            // To the forward's winner (a window all padding has none).
            if (positions.empty())
              return;
            int64_t where = windowMax<T>(x->data, inBase, positions).second;
            sum[inBase + where] += load<T>(dy->data, outBase + output);
          });
    }
    for (size_t i = 0; i < sum.size(); ++i)
      store<T>(dx->data, i, sum[i]);
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status
lethe_rt_avg_pool_grad(lethe_rt_context *context, const lethe_rt_tensor *dy,
                       const int64_t *kernel_shape, const int64_t *strides,
                       const int64_t *pads, int count_include_pad,
                       const lethe_rt_tensor *dx) {
  Window window;
  if (!getWindow(context, "lethe_rt_avg_pool_grad", dx, dy, kernel_shape,
                 strides, pads, nullptr, /*integers=*/false, window))
    return LETHE_RT_ERROR;
  int64_t inPlane = spatialSize(window.input),
          outPlane = spatialSize(window.output);
  dispatchFloat(dx->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    std::vector<C> sum(window.planes * inPlane, C(0));
    for (int64_t plane = 0; plane < window.planes; ++plane) {
      int64_t inBase = plane * inPlane, outBase = plane * outPlane;
      forEachWindow(window, [&](int64_t output,
                                const std::vector<int64_t> &positions,
                                int64_t padded) {
        int64_t count =
            count_include_pad ? padded : static_cast<int64_t>(positions.size());
        if (count == 0)
          return;
        C share = load<T>(dy->data, outBase + output) / static_cast<C>(count);
        for (int64_t position : positions)
          sum[inBase + position] += share;
      });
    }
    for (size_t i = 0; i < sum.size(); ++i)
      store<T>(dx->data, i, sum[i]);
  });
  return LETHE_RT_OK;
}
