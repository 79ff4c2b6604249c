//===- Pooling.cu - Pooling kernels of the CUDA backend -------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_max_pool, lethe_rt_max_pool_grad, lethe_rt_avg_pool,
// lethe_rt_avg_pool_grad and lethe_rt_global_avg_pool on the compute stream,
// with the CPU backend's semantics and checks (runtime/cpu/Pooling.cpp).
//
// One thread per output element, or per input-gradient element, running the
// per-element functions of common/PoolingWindow.h that the CPU backend runs
// too (unittests/Runtime/PoolingWindowTest.cpp checks them against it on the
// host): max pool, avg pool and both gradients give the CPU backend's bits.
// The gradients gather: each dx element adds, in increasing output order,
// what the windows that hold it give it (the order in which the CPU backend
// scatters them), so no two threads write one element and no atomics are
// needed. max_pool_grad finds each of those windows' maximum again rather
// than keep the forward's indices (the ABI passes none).
//
// global_avg_pool sums a plane of fewer than minBlockGroup elements in one
// thread, in order, with the CPU backend's bits; a longer plane in one
// block's tree (blockReduce), in the compute type: within rounding of the
// CPU's sum, and the same bits for the same call on the same GPU.
//
// Threads read the inputs while others write the outputs: an output that
// overlaps an input is refused (the CPU backend, which computes in order,
// accepts one).
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"
#include "common/PoolingWindow.h"

#include <initializer_list>
#include <type_traits>

using namespace lethe::rt;

namespace {

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void maxPoolKernel(PoolingWindow window, const void *x, void *out,
                              int64_t *indices, int64_t storageOrder,
                              int64_t count) {
  LETHE_GRID_STRIDE_LOOP(element, count) {
    maxPoolElement<T>(window, x, out, indices, storageOrder, element);
  }
}

template <typename T>
__global__ void avgPoolKernel(PoolingWindow window, const void *x, void *out,
                              bool countIncludePad, int64_t count) {
  LETHE_GRID_STRIDE_LOOP(element, count) {
    avgPoolElement<T>(window, x, out, countIncludePad, element);
  }
}

template <typename T>
__global__ void maxPoolGradKernel(PoolingWindow window, const void *dy,
                                  const void *x, void *dx, int64_t count) {
  LETHE_GRID_STRIDE_LOOP(element, count) {
    maxPoolGradElement<T>(window, dy, x, dx, element);
  }
}

template <typename T>
__global__ void avgPoolGradKernel(PoolingWindow window, const void *dy,
                                  void *dx, bool countIncludePad,
                                  int64_t count) {
  LETHE_GRID_STRIDE_LOOP(element, count) {
    avgPoolGradElement<T>(window, dy, dx, countIncludePad, element);
  }
}

/// One plane (of `plane` elements) per thread, summed in order.
template <typename T>
__global__ void globalAvgPoolThreadKernel(const void *x, void *out,
                                          int64_t planes, int64_t plane) {
  LETHE_GRID_STRIDE_LOOP(p, planes) {
    store<T>(out, p, planeAverage<T>(x, p * plane, plane));
  }
}

/// One plane (of `plane` elements, at least one) per block, its threads
/// summing strided elements, then blockReduce's tree.
template <typename T>
__global__ void globalAvgPoolBlockKernel(const void *x, void *out,
                                         int64_t planes, int64_t plane) {
  using C = ComputeType<T>;
  __shared__ C scratch[32];
  for (int64_t p = blockIdx.x; p < planes; p += gridDim.x) {
    C sum = 0;
    for (int64_t i = threadIdx.x; i < plane; i += blockDim.x)
      sum += load<T>(x, p * plane + i);
    sum = blockReduce(sum, [](C a, C b) { return a + b; }, scratch);
    if (threadIdx.x == 0)
      store<T>(out, p, sum / static_cast<C>(plane));
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

extern "C" lethe_rt_status
lethe_rt_max_pool(lethe_rt_context *context, const lethe_rt_tensor *x,
                  const int64_t *kernel_shape, const int64_t *strides,
                  const int64_t *pads, const int64_t *dilations,
                  int64_t storage_order, const lethe_rt_tensor *out,
                  const lethe_rt_tensor *indices) {
  const char *kernel = "lethe_rt_max_pool";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  PoolingWindow window;
  if (!checkPoolingWindow(context, kernel, x, out, kernel_shape, strides, pads,
                          dilations, /*integers=*/true, window))
    return LETHE_RT_ERROR;
  if (!checkMaxPoolIndices(context, kernel, *out, indices, storage_order) ||
      !checkNoOverlap(context, kernel, "out", *out, {{"x", x}}, "pool") ||
      (indices && !checkNoOverlap(context, kernel, "indices", *indices,
                                  {{"x", x}, {"out", out}}, "pool")))
    return LETHE_RT_ERROR;
  int64_t *indexData =
      indices ? static_cast<int64_t *>(indices->data) : nullptr;
  int64_t count = window.planes * window.outputPlane;
  bool launched = false;
  dispatchAny(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, Bool>) // refused above
      launched = launchElementwise(context, kernel, "maxPoolKernel", count,
                                   maxPoolKernel<T>, window, x->data, out->data,
                                   indexData, storage_order, count);
  });
  return launched ? LETHE_RT_OK : LETHE_RT_ERROR;
}

extern "C" lethe_rt_status
lethe_rt_avg_pool(lethe_rt_context *context, const lethe_rt_tensor *x,
                  const int64_t *kernel_shape, const int64_t *strides,
                  const int64_t *pads, int count_include_pad,
                  const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_avg_pool";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  PoolingWindow window;
  if (!checkPoolingWindow(context, kernel, x, out, kernel_shape, strides, pads,
                          nullptr, /*integers=*/false, window) ||
      !checkNoOverlap(context, kernel, "out", *out, {{"x", x}}, "pool"))
    return LETHE_RT_ERROR;
  int64_t count = window.planes * window.outputPlane;
  return launchForFloat(x->dtype, [&](auto tag) {
    return launchElementwise(context, kernel, "avgPoolKernel", count,
                             avgPoolKernel<decltype(tag)>, window, x->data,
                             out->data, count_include_pad != 0, count);
  });
}

extern "C" lethe_rt_status
lethe_rt_global_avg_pool(lethe_rt_context *context, const lethe_rt_tensor *x,
                         const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_global_avg_pool";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  if (!checkFloatTensor(context, kernel, "x", x) ||
      !checkDtype(context, kernel, "out", out, x->dtype) ||
      !report(context, kernel, globalPoolingError(*x, *out)) ||
      !checkNoOverlap(context, kernel, "out", *out, {{"x", x}}, "pool"))
    return LETHE_RT_ERROR;
  int64_t planes = x->shape[0] * x->shape[1];
  int64_t plane = planes ? numElements(*x) / planes : 0;
  return launchForFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    if (plane >= minBlockGroup)
      return launchRows(context, kernel, "globalAvgPoolBlockKernel", planes,
                        globalAvgPoolBlockKernel<T>, x->data, out->data, planes,
                        plane);
    return launchElementwise(context, kernel, "globalAvgPoolThreadKernel",
                             planes, globalAvgPoolThreadKernel<T>, x->data,
                             out->data, planes, plane);
  });
}

extern "C" lethe_rt_status
lethe_rt_max_pool_grad(lethe_rt_context *context, const lethe_rt_tensor *dy,
                       const lethe_rt_tensor *x, const int64_t *kernel_shape,
                       const int64_t *strides, const int64_t *pads,
                       const int64_t *dilations, const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_max_pool_grad";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  PoolingWindow window;
  if (!checkPoolingWindow(context, kernel, x, dy, kernel_shape, strides, pads,
                          dilations, /*integers=*/false, window) ||
      !checkDtype(context, kernel, "dx", dx, x->dtype) ||
      !checkSameShape(context, kernel, "x", *x, "dx", *dx) ||
      !checkNoOverlap(context, kernel, "dx", *dx, {{"dy", dy}, {"x", x}},
                      "pool"))
    return LETHE_RT_ERROR;
  int64_t count = window.planes * window.inputPlane;
  return launchForFloat(x->dtype, [&](auto tag) {
    return launchElementwise(context, kernel, "maxPoolGradKernel", count,
                             maxPoolGradKernel<decltype(tag)>, window, dy->data,
                             x->data, dx->data, count);
  });
}

extern "C" lethe_rt_status
lethe_rt_avg_pool_grad(lethe_rt_context *context, const lethe_rt_tensor *dy,
                       const int64_t *kernel_shape, const int64_t *strides,
                       const int64_t *pads, int count_include_pad,
                       const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_avg_pool_grad";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  PoolingWindow window;
  if (!checkPoolingWindow(context, kernel, dx, dy, kernel_shape, strides, pads,
                          nullptr, /*integers=*/false, window) ||
      !checkNoOverlap(context, kernel, "dx", *dx, {{"dy", dy}}, "pool"))
    return LETHE_RT_ERROR;
  int64_t count = window.planes * window.inputPlane;
  return launchForFloat(dx->dtype, [&](auto tag) {
    return launchElementwise(context, kernel, "avgPoolGradKernel", count,
                             avgPoolGradKernel<decltype(tag)>, window, dy->data,
                             dx->data, count_include_pad != 0, count);
  });
}
