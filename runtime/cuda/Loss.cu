//===- Loss.cu - Loss kernels of the CUDA backend -------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_mse on the compute stream, with the CPU backend's semantics
// (runtime/cpu/Loss.cpp): each squared difference in the compute type (f32
// for f16 and bf16), rounded once on store for reduction none; for sum and
// mean, their sum in f64 rounded once to the loss type (a mean over nothing
// is NaN). A sum over fewer than minBlockGroup elements adds in order and
// gives the CPU backend's bits; a longer one adds in one block's tree,
// within rounding of them.
//
// The class-indexed losses (softmax cross entropy, nll) are still to come:
// the CPU backend checks every label against the classes on the host, and
// on the device that check needs a device-side scan and a synchronization,
// as integer division's divisor check has.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"

using namespace lethe::rt;

namespace {

/// (a - b)^2 in the compute type of T.
template <typename T>
__device__ ComputeType<T> squaredDifference(const void *a, const void *b,
                                            int64_t i) {
  ComputeType<T> difference = load<T>(a, i) - load<T>(b, i);
  return difference * difference;
}

/// Reduction none: loss[i] = (a[i] - b[i])^2.
template <typename T>
__global__ void squaredErrorKernel(const void *a, const void *b, void *loss,
                                   int64_t count) {
  LETHE_GRID_STRIDE_LOOP(i, count) {
    store<T>(loss, i, squaredDifference<T>(a, b, i));
  }
}

/// Sum or mean: one block writes the scalar loss.
template <typename T>
__global__ void summedErrorKernel(const void *a, const void *b, void *loss,
                                  int64_t count, bool mean) {
  __shared__ double scratch[32];
  double total = 0;
  if (count < minBlockGroup) {
    if (threadIdx.x == 0)
      for (int64_t i = 0; i < count; ++i)
        total += squaredDifference<T>(a, b, i);
  } else {
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x)
      total += squaredDifference<T>(a, b, i);
    total =
        blockReduce(total, [](double x, double y) { return x + y; }, scratch);
  }
  if (threadIdx.x == 0)
    store<T>(loss, 0, mean ? total / static_cast<double>(count) : total);
}

/// Checks `reduction` and that `loss` has `dtype` and the shape the
/// reduction implies (`unreduced` for none, a scalar otherwise), with the
/// CPU backend's messages.
bool checkLoss(lethe_rt_context *context, const char *kernel,
               lethe_rt_reduction reduction, const lethe_rt_tensor *loss,
               lethe_rt_dtype dtype, const std::vector<int64_t> &unreduced) {
  if (reduction != LETHE_RT_REDUCTION_NONE &&
      reduction != LETHE_RT_REDUCTION_SUM &&
      reduction != LETHE_RT_REDUCTION_MEAN) {
    fail(context, kernel, "unknown reduction %d", static_cast<int>(reduction));
    return false;
  }
  if (!checkDtype(context, kernel, "loss", loss, dtype))
    return false;
  bool none = reduction == LETHE_RT_REDUCTION_NONE;
  std::vector<int64_t> expected = none ? unreduced : std::vector<int64_t>{};
  if (shapeOf(*loss) != expected) {
    fail(context, kernel, "loss (%s) must be %s for reduction %s",
         shapeString(*loss).c_str(), shapeText(expected).c_str(),
         none                                  ? "none"
         : reduction == LETHE_RT_REDUCTION_SUM ? "sum"
                                               : "mean");
    return false;
  }
  return true;
}

} // namespace

extern "C" lethe_rt_status lethe_rt_mse(lethe_rt_context *context,
                                        const lethe_rt_tensor *a,
                                        const lethe_rt_tensor *b,
                                        lethe_rt_reduction reduction,
                                        const lethe_rt_tensor *loss) {
  const char *kernel = "lethe_rt_mse";
  if (!context || !checkDevice(context, kernel) ||
      !checkFloatTensor(context, kernel, "a", a) ||
      !checkDtype(context, kernel, "b", b, a->dtype) ||
      !checkSameShape(context, kernel, "a", *a, "b", *b) ||
      !checkLoss(context, kernel, reduction, loss, a->dtype, shapeOf(*a)))
    return LETHE_RT_ERROR;
  int64_t count = numElements(*a);
  return launchForFloat(a->dtype, [&](auto tag) {
    using T = decltype(tag);
    if (reduction == LETHE_RT_REDUCTION_NONE)
      return launchElementwise(context, kernel, "squaredErrorKernel", count,
                               squaredErrorKernel<T>, a->data, b->data,
                               loss->data, count);
    // One block, which writes the loss even over no elements.
    return launchRows(context, kernel, "summedErrorKernel", 1,
                      summedErrorKernel<T>, a->data, b->data, loss->data, count,
                      reduction == LETHE_RT_REDUCTION_MEAN);
  });
}
