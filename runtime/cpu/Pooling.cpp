//===- Pooling.cpp - Pooling kernels of the CPU backend -------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// max_pool, avg_pool and global_avg_pool on N, C, D1..Dn tensors (n = 1 to
// 3), over the windows of common/PoolingWindow.h (which the CUDA backend's
// kernels share, with these bits). The gradients walk the same windows: for
// each output in order, max_pool_grad adds the output gradient to its
// window's winner (found again as the forward finds it), avg_pool_grad
// spreads it over its window with the forward's divisor.
//
//===----------------------------------------------------------------------===//

#include "CpuRuntime.h"
#include "common/PoolingWindow.h"

#include <vector>

using namespace lethe::rt;

extern "C" lethe_rt_status
lethe_rt_max_pool(lethe_rt_context *context, const lethe_rt_tensor *x,
                  const int64_t *kernel_shape, const int64_t *strides,
                  const int64_t *pads, const int64_t *dilations,
                  int64_t storage_order, const lethe_rt_tensor *out,
                  const lethe_rt_tensor *indices) {
  const char *kernel = "lethe_rt_max_pool";
  PoolingWindow window;
  if (!checkPoolingWindow(context, kernel, x, out, kernel_shape, strides, pads,
                          dilations, /*integers=*/true, window))
    return LETHE_RT_ERROR;
  if (!checkMaxPoolIndices(context, kernel, *out, indices, storage_order))
    return LETHE_RT_ERROR;
  int64_t *indexData =
      indices ? static_cast<int64_t *>(indices->data) : nullptr;
  int64_t outputs = window.planes * window.outputPlane;
  dispatchAny(x->dtype, [&](auto tag) {
    for (int64_t element = 0; element < outputs; ++element)
      maxPoolElement<decltype(tag)>(window, x->data, out->data, indexData,
                                    storage_order, element);
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status
lethe_rt_avg_pool(lethe_rt_context *context, const lethe_rt_tensor *x,
                  const int64_t *kernel_shape, const int64_t *strides,
                  const int64_t *pads, int count_include_pad,
                  const lethe_rt_tensor *out) {
  PoolingWindow window;
  if (!checkPoolingWindow(context, "lethe_rt_avg_pool", x, out, kernel_shape,
                          strides, pads, nullptr, /*integers=*/false, window))
    return LETHE_RT_ERROR;
  int64_t outputs = window.planes * window.outputPlane;
  dispatchFloat(x->dtype, [&](auto tag) {
    for (int64_t element = 0; element < outputs; ++element)
      avgPoolElement<decltype(tag)>(window, x->data, out->data,
                                    count_include_pad != 0, element);
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status
lethe_rt_global_avg_pool(lethe_rt_context *context, const lethe_rt_tensor *x,
                         const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_global_avg_pool";
  if (!checkFloatTensor(context, kernel, "x", x) ||
      !checkDtype(context, kernel, "out", out, x->dtype) ||
      !report(context, kernel, globalPoolingError(*x, *out)))
    return LETHE_RT_ERROR;
  int64_t planes = x->shape[0] * x->shape[1];
  int64_t plane = planes ? numElements(*x) / planes : 0;
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t p = 0; p < planes; ++p)
      store<T>(out->data, p, planeAverage<T>(x->data, p * plane, plane));
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status
lethe_rt_max_pool_grad(lethe_rt_context *context, const lethe_rt_tensor *dy,
                       const lethe_rt_tensor *x, const int64_t *kernel_shape,
                       const int64_t *strides, const int64_t *pads,
                       const int64_t *dilations, const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_max_pool_grad";
  PoolingWindow window;
  if (!checkPoolingWindow(context, kernel, x, dy, kernel_shape, strides, pads,
                          dilations, /*integers=*/false, window) ||
      !checkDtype(context, kernel, "dx", dx, x->dtype) ||
      !checkSameShape(context, kernel, "x", *x, "dx", *dx))
    return LETHE_RT_ERROR;
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    // Summed in the compute type, and stored once all outputs have added
    // theirs (in increasing order, as maxPoolGradAt gathers them).
    std::vector<C> sum(window.planes * window.inputPlane, C(0));
    for (int64_t plane = 0; plane < window.planes; ++plane) {
      int64_t inBase = plane * window.inputPlane,
              outBase = plane * window.outputPlane;
      for (int64_t output = 0; output < window.outputPlane; ++output) {
        // A window all padding has no winner.
        if (windowCount(window, output, /*includePadding=*/false) == 0)
          continue;
        int64_t where = windowMax<T>(window, x->data, inBase, output).where;
        sum[inBase + where] += load<T>(dy->data, outBase + output);
      }
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
  PoolingWindow window;
  if (!checkPoolingWindow(context, "lethe_rt_avg_pool_grad", dx, dy,
                          kernel_shape, strides, pads, nullptr,
                          /*integers=*/false, window))
    return LETHE_RT_ERROR;
  dispatchFloat(dx->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    // As max_pool_grad: in increasing output order, as avgPoolGradAt.
    std::vector<C> sum(window.planes * window.inputPlane, C(0));
    for (int64_t plane = 0; plane < window.planes; ++plane) {
      int64_t inBase = plane * window.inputPlane,
              outBase = plane * window.outputPlane;
      for (int64_t output = 0; output < window.outputPlane; ++output) {
        int64_t count = windowCount(window, output, count_include_pad != 0);
        if (count == 0)
          continue;
        C share = load<T>(dy->data, outBase + output) / static_cast<C>(count);
        forEachWindowElement(window, output, [&](int64_t position) {
          sum[inBase + position] += share;
        });
      }
    }
    for (size_t i = 0; i < sum.size(); ++i)
      store<T>(dx->data, i, sum[i]);
  });
  return LETHE_RT_OK;
}
