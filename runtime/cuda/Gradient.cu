//===- Gradient.cu - Activation and clip gradients of the CUDA backend ----===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_activation_grad and lethe_rt_clip_grad on the compute stream,
// with the CPU backend's semantics (runtime/cpu/Gradient.cpp): dx = dy *
// f'(saved) in the compute type (f32 for f16 and bf16), rounded once on
// store. Built without FMA contraction, so relu, leaky relu and clip give
// the CPU backend's bits; the GELU gradients use CUDA's erf, exp and tanh
// (within a few ulps of the CPU's libm).
//
// One thread per element (grid-stride); dx may be dy or saved itself.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"

#include <cmath>

using namespace lethe::rt;

namespace {

/// dx[i] = dy[i] * op(saved[i]) in the compute type of T.
template <typename T, typename Op>
__global__ void gradKernel(const void *dy, const void *saved, void *dx,
                           int64_t count, Op op) {
  LETHE_GRID_STRIDE_LOOP(i, count) {
    store<T>(dx, i, load<T>(dy, i) * op(load<T>(saved, i)));
  }
}

/// Launches gradKernel<T> with `op` over dy's elements.
template <typename T, typename Op>
bool launchGrad(lethe_rt_context *context, const char *call,
                const lethe_rt_tensor &dy, const lethe_rt_tensor &saved,
                const lethe_rt_tensor &dx, Op op) {
  int64_t count = numElements(dy);
  return launchElementwise(context, call, "gradKernel", count,
                           gradKernel<T, Op>, dy.data, saved.data, dx.data,
                           count, op);
}

/// Launches the gradient of activation `kind` with compute type C =
/// ComputeType<T>; false (with an error) for an unknown kind or a failed
/// launch.
template <typename T>
bool runActivationGrad(lethe_rt_context *context,
                       lethe_rt_activation_grad_kind kind, double alpha,
                       const lethe_rt_tensor &dy, const lethe_rt_tensor &saved,
                       const lethe_rt_tensor &dx) {
  using C = ComputeType<T>;
  const char *call = "lethe_rt_activation_grad";
  auto launch = [&](auto op) {
    return launchGrad<T>(context, call, dy, saved, dx, op);
  };
  switch (kind) {
  case LETHE_RT_RELU_GRAD:
    // saved is y = relu(x): y > 0 exactly where x > 0 (NaN gives 0).
    return launch([] __device__(C y) { return y > 0 ? C(1) : C(0); });
  case LETHE_RT_LEAKY_RELU_GRAD: {
    C slope = static_cast<C>(alpha);
    return launch([=] __device__(C x) { return x > 0 ? C(1) : slope; });
  }
  case LETHE_RT_GELU_GRAD:
    // gelu(x) = x Phi(x): gelu'(x) = Phi(x) + x phi(x).
    return launch([] __device__(C x) {
      const C half = C(0.5), one = C(1);
      const C invSqrt2 = static_cast<C>(0.70710678118654752440);
      const C invSqrt2Pi = static_cast<C>(0.39894228040143267794);
      return half * (one + mathErf(x * invSqrt2)) +
             x * mathExp(-half * x * x) * invSqrt2Pi;
    });
  case LETHE_RT_GELU_TANH_GRAD:
    // gelu(x) = x (1 + tanh u) / 2 with u = sqrt(2 / pi) (x + 0.044715 x^3).
    return launch([] __device__(C x) {
      const C half = C(0.5), one = C(1);
      const C sqrt2OverPi = static_cast<C>(0.79788456080286535588);
      const C cubic = static_cast<C>(0.044715);
      const C cubicSlope = static_cast<C>(3 * 0.044715);
      C t = mathTanh(sqrt2OverPi * (x + cubic * x * x * x));
      return half * (one + t) + half * x * (one - t * t) * sqrt2OverPi *
                                    (one + cubicSlope * x * x);
    });
  }
  fail(context, call, "unknown activation gradient kind %d",
       static_cast<int>(kind));
  return false;
}

/// Clip's derivative: 1 within [low, high], else 0 (an extended lambda
/// cannot be defined in the generic lambda of a dtype dispatch).
template <typename C> struct WithinBounds {
  C low, high;
  __device__ C operator()(C value) const {
    return value >= low && value <= high ? C(1) : C(0);
  }
};

/// Checks what both gradients take: dy of a float dtype, and `saved` (named
/// `savedName`) and dx of its dtype and shape.
bool checkGradArguments(lethe_rt_context *context, const char *kernel,
                        const lethe_rt_tensor *dy, const char *savedName,
                        const lethe_rt_tensor *saved,
                        const lethe_rt_tensor *dx) {
  return context && checkDevice(context, kernel) &&
         checkFloatTensor(context, kernel, "dy", dy) &&
         checkDtype(context, kernel, savedName, saved, dy->dtype) &&
         checkDtype(context, kernel, "dx", dx, dy->dtype) &&
         checkSameShape(context, kernel, "dy", *dy, savedName, *saved) &&
         checkSameShape(context, kernel, "dy", *dy, "dx", *dx);
}

} // namespace

extern "C" lethe_rt_status lethe_rt_activation_grad(
    lethe_rt_context *context, lethe_rt_activation_grad_kind kind, double alpha,
    const lethe_rt_tensor *dy, const lethe_rt_tensor *saved,
    const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_activation_grad";
  if (!checkGradArguments(context, kernel, dy, "saved", saved, dx))
    return LETHE_RT_ERROR;
  return launchForFloat(dy->dtype, [&](auto tag) {
    return runActivationGrad<decltype(tag)>(context, kind, alpha, *dy, *saved,
                                            *dx);
  });
}

extern "C" lethe_rt_status lethe_rt_clip_grad(lethe_rt_context *context,
                                              const lethe_rt_tensor *dy,
                                              const lethe_rt_tensor *x,
                                              double min, double max,
                                              const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_clip_grad";
  if (!checkGradArguments(context, kernel, dy, "x", x, dx))
    return LETHE_RT_ERROR;
  if (std::isnan(min) || std::isnan(max) || min > max)
    return fail(context, kernel,
                "the bounds must be ordered numbers, got [%g, %g]", min, max);
  return launchForFloat(dy->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    // In the compute type, as the forward compares (NaN passes nothing).
    C low = static_cast<C>(min), high = static_cast<C>(max);
    return launchGrad<T>(context, kernel, *dy, *x, *dx,
                         WithinBounds<C>{low, high});
  });
}
