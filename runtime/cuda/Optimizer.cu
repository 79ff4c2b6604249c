//===- Optimizer.cu - Optimizer update kernels of the CUDA backend --------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_sgd_update, lethe_rt_momentum_update, lethe_rt_adagrad_update and
// lethe_rt_adam_update on the compute stream, with the CPU backend's
// semantics (runtime/cpu/Optimizer.cpp): ONNX's operations in ONNX's order,
// per element in the compute type (f32 for f16, bf16 and f32), each output
// rounded once on store, and the scalars that depend only on the learning
// rate and the step (Adam's bias correction, Adagrad's decayed rate) in f64.
//
// lr and step are tensors in the arena, which an earlier kernel (a schedule,
// the step counter's increment) may write on the same stream: every thread
// reads them on the device when its kernel runs, never the host when the
// call is made. One thread per element (grid-stride); each output element
// depends on the same element of the inputs only, so an output may be the
// very tensor of an input (an update in place).
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"

#include <initializer_list>
#include <utility>

using namespace lethe::rt;

namespace {

/// Where an update's scalars lie in device memory, read by its kernel.
struct DeviceScalars {
  /// lr, a scalar of f32 (lrIsDouble false) or f64.
  const void *lr = nullptr;
  bool lrIsDouble = false;
  /// step, a scalar i64, or null for an update without one.
  const int64_t *step = nullptr;

  __device__ double learningRate() const {
    return lrIsDouble ? load<double>(lr, 0)
                      : static_cast<double>(load<float>(lr, 0));
  }
  __device__ int64_t stepValue() const { return step ? *step : 0; }
};

/// Checks the device, then the arguments of an update (updateError, the
/// tensors in the arena). Sets `scalars` to where lr and step lie.
bool checkUpdate(lethe_rt_context *context, const char *kernel,
                 const lethe_rt_tensor *lr, const lethe_rt_tensor *step,
                 std::initializer_list<NamedTensor> inputs,
                 std::initializer_list<NamedTensor> outputs,
                 DeviceScalars &scalars) {
  if (!context || !checkDevice(context, kernel) ||
      !report(context, kernel,
              updateError(
                  [context](const char *what, const lethe_rt_tensor *tensor) {
                    return arenaTensorError(context, what, tensor);
                  },
                  lr, step, inputs, outputs)))
    return false;
  scalars.lr = lr->data;
  scalars.lrIsDouble = lr->dtype == LETHE_RT_F64;
  if (step)
    scalars.step = static_cast<const int64_t *>(step->data);
  return true;
}

//===----------------------------------------------------------------------===//
// Kernels (storage type T, compute type C)
//===----------------------------------------------------------------------===//

/// x_new = x - lr * (norm * x + g).
template <typename T>
__global__ void sgdKernel(int64_t count, const void *x, const void *g,
                          void *xNew, DeviceScalars scalars,
                          double normCoefficient) {
  using C = ComputeType<T>;
  const C rate = static_cast<C>(scalars.learningRate());
  const C norm = static_cast<C>(normCoefficient);
  LETHE_GRID_STRIDE_LOOP(i, count) {
    C xi = load<T>(x, i);
    C regularized = norm * xi + load<T>(g, i);
    store<T>(xNew, i, xi - rate * regularized);
  }
}

/// ONNX Momentum; the first step (step 0) takes the whole gradient.
template <typename T>
__global__ void momentumKernel(int64_t count, const void *x, const void *g,
                               const void *v, void *xNew, void *vNew,
                               DeviceScalars scalars, double alpha, double beta,
                               double normCoefficient, bool nesterov) {
  using C = ComputeType<T>;
  const C rate = static_cast<C>(scalars.learningRate());
  const C decay = static_cast<C>(alpha);
  const C scale = static_cast<C>(scalars.stepValue() > 0 ? beta : 1.0);
  const C norm = static_cast<C>(normCoefficient);
  LETHE_GRID_STRIDE_LOOP(i, count) {
    C xi = load<T>(x, i);
    C regularized = norm * xi + load<T>(g, i);
    C momentum = decay * load<T>(v, i) + scale * regularized;
    C direction = nesterov ? regularized + decay * momentum : momentum;
    store<T>(xNew, i, xi - rate * direction);
    store<T>(vNew, i, momentum);
  }
}

/// ONNX Adagrad, with the rate decayed by the step in f64.
template <typename T>
__global__ void adagradKernel(int64_t count, const void *x, const void *g,
                              const void *h, void *xNew, void *hNew,
                              DeviceScalars scalars, double decayFactor,
                              double epsilon, double normCoefficient) {
  using C = ComputeType<T>;
  const double decayedRate =
      scalars.learningRate() /
      (1.0 + static_cast<double>(scalars.stepValue()) * decayFactor);
  const C rate = static_cast<C>(decayedRate);
  const C eps = static_cast<C>(epsilon);
  const C norm = static_cast<C>(normCoefficient);
  LETHE_GRID_STRIDE_LOOP(i, count) {
    C xi = load<T>(x, i);
    C regularized = norm * xi + load<T>(g, i);
    C squaredSum = load<T>(h, i) + regularized * regularized;
    C adaptive = mathSqrt(squaredSum) + eps;
    store<T>(xNew, i, xi - rate * regularized / adaptive);
    store<T>(hNew, i, squaredSum);
  }
}

/// Adam's per-call constants, as the CPU backend computes them (in f64).
struct AdamParameters {
  double alpha, beta, epsilon, normCoefficient, normCoefficientPost,
      weightDecay;
};

/// ONNX Adam with decoupled weight decay; both moments bias-corrected in
/// f64 from the first update on.
template <typename T>
__global__ void adamKernel(int64_t count, const void *x, const void *g,
                           const void *v, const void *h, void *xNew, void *vNew,
                           void *hNew, DeviceScalars scalars,
                           AdamParameters parameters) {
  using C = ComputeType<T>;
  const double learningRate = scalars.learningRate();
  const int64_t step = scalars.stepValue();
  double adjustedRate = learningRate;
  if (step > 0) {
    double t = static_cast<double>(step);
    adjustedRate = learningRate * sqrt(1.0 - pow(parameters.beta, t)) /
                   (1.0 - pow(parameters.alpha, t));
  }
  const C rate = static_cast<C>(adjustedRate);
  const C decayed = static_cast<C>(1.0 - learningRate * parameters.weightDecay);
  const C post = static_cast<C>(1.0 - parameters.normCoefficientPost);
  const C firstDecay = static_cast<C>(parameters.alpha);
  const C firstScale = static_cast<C>(1.0 - parameters.alpha);
  const C secondDecay = static_cast<C>(parameters.beta);
  const C secondScale = static_cast<C>(1.0 - parameters.beta);
  const C eps = static_cast<C>(parameters.epsilon);
  const C norm = static_cast<C>(parameters.normCoefficient);
  LETHE_GRID_STRIDE_LOOP(i, count) {
    C xi = load<T>(x, i);
    C regularized = norm * xi + load<T>(g, i);
    C first = firstDecay * load<T>(v, i) + firstScale * regularized;
    C second =
        secondDecay * load<T>(h, i) + secondScale * (regularized * regularized);
    C root = mathSqrt(second) + eps;
    C updated = xi * decayed - rate * (first / root);
    store<T>(xNew, i, post * updated);
    store<T>(vNew, i, first);
    store<T>(hNew, i, second);
  }
}

/// Launches the update kernel `kernelOf(tag)` (its instance for the tag of
/// x's float dtype) over x's elements with `arguments` after the count.
template <typename KernelOf, typename... Arguments>
lethe_rt_status launchUpdate(lethe_rt_context *context, const char *call,
                             const char *kernelName, const lethe_rt_tensor &x,
                             KernelOf kernelOf, Arguments... arguments) {
  int64_t count = numElements(x);
  return launchForFloat(x.dtype, [&](auto tag) {
    return launchElementwise(context, call, kernelName, count, kernelOf(tag),
                             count, arguments...);
  });
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

extern "C" lethe_rt_status
lethe_rt_sgd_update(lethe_rt_context *context, const lethe_rt_tensor *lr,
                    const lethe_rt_tensor *x, const lethe_rt_tensor *g,
                    double norm_coefficient, const lethe_rt_tensor *x_new) {
  const char *kernel = "lethe_rt_sgd_update";
  DeviceScalars scalars;
  if (!checkUpdate(context, kernel, lr, /*step=*/nullptr, {{"x", x}, {"g", g}},
                   {{"x_new", x_new}}, scalars))
    return LETHE_RT_ERROR;
  return launchUpdate(
      context, kernel, "sgdKernel", *x,
      [](auto tag) { return sgdKernel<decltype(tag)>; }, x->data, g->data,
      x_new->data, scalars, norm_coefficient);
}

extern "C" lethe_rt_status
lethe_rt_momentum_update(lethe_rt_context *context, const lethe_rt_tensor *lr,
                         const lethe_rt_tensor *step, const lethe_rt_tensor *x,
                         const lethe_rt_tensor *g, const lethe_rt_tensor *v,
                         double alpha, double beta, double norm_coefficient,
                         int nesterov, const lethe_rt_tensor *x_new,
                         const lethe_rt_tensor *v_new) {
  const char *kernel = "lethe_rt_momentum_update";
  DeviceScalars scalars;
  if (!checkUpdate(context, kernel, lr, step, {{"x", x}, {"g", g}, {"v", v}},
                   {{"x_new", x_new}, {"v_new", v_new}}, scalars))
    return LETHE_RT_ERROR;
  return launchUpdate(
      context, kernel, "momentumKernel", *x,
      [](auto tag) { return momentumKernel<decltype(tag)>; }, x->data, g->data,
      v->data, x_new->data, v_new->data, scalars, alpha, beta, norm_coefficient,
      nesterov != 0);
}

extern "C" lethe_rt_status
lethe_rt_adagrad_update(lethe_rt_context *context, const lethe_rt_tensor *lr,
                        const lethe_rt_tensor *step, const lethe_rt_tensor *x,
                        const lethe_rt_tensor *g, const lethe_rt_tensor *h,
                        double decay_factor, double epsilon,
                        double norm_coefficient, const lethe_rt_tensor *x_new,
                        const lethe_rt_tensor *h_new) {
  const char *kernel = "lethe_rt_adagrad_update";
  DeviceScalars scalars;
  if (!checkUpdate(context, kernel, lr, step, {{"x", x}, {"g", g}, {"h", h}},
                   {{"x_new", x_new}, {"h_new", h_new}}, scalars))
    return LETHE_RT_ERROR;
  return launchUpdate(
      context, kernel, "adagradKernel", *x,
      [](auto tag) { return adagradKernel<decltype(tag)>; }, x->data, g->data,
      h->data, x_new->data, h_new->data, scalars, decay_factor, epsilon,
      norm_coefficient);
}

extern "C" lethe_rt_status
lethe_rt_adam_update(lethe_rt_context *context, const lethe_rt_tensor *lr,
                     const lethe_rt_tensor *step, const lethe_rt_tensor *x,
                     const lethe_rt_tensor *g, const lethe_rt_tensor *v,
                     const lethe_rt_tensor *h, double alpha, double beta,
                     double epsilon, double norm_coefficient,
                     double norm_coefficient_post, double weight_decay,
                     const lethe_rt_tensor *x_new, const lethe_rt_tensor *v_new,
                     const lethe_rt_tensor *h_new) {
  const char *kernel = "lethe_rt_adam_update";
  DeviceScalars scalars;
  if (!checkUpdate(
          context, kernel, lr, step, {{"x", x}, {"g", g}, {"v", v}, {"h", h}},
          {{"x_new", x_new}, {"v_new", v_new}, {"h_new", h_new}}, scalars))
    return LETHE_RT_ERROR;
  AdamParameters parameters{
      alpha,       beta, epsilon, norm_coefficient, norm_coefficient_post,
      weight_decay};
  return launchUpdate(
      context, kernel, "adamKernel", *x,
      [](auto tag) { return adamKernel<decltype(tag)>; }, x->data, g->data,
      v->data, h->data, x_new->data, v_new->data, h_new->data, scalars,
      parameters);
}
