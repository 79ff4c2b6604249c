//===- Optimizer.cpp - Optimizer update kernels of the CPU backend --------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_sgd_update, lethe_rt_momentum_update, lethe_rt_adagrad_update and
// lethe_rt_adam_update: one optimizer step on one tensor, following the
// pseudo code of ONNX's ai.onnx.preview.training ops operation for operation
// (and in ONNX's order, which fixes the roundings). Scalars that depend only
// on the learning rate and the step (Adam's bias correction, Adagrad's
// decayed rate) are computed once in f64; the per-element arithmetic is done
// in the compute type of the tensors (f32 for f16, bf16 and f32), as ONNX's
// reference implementation does in numpy, and each output element is
// rounded once on store.
//
// Every element of every output is computed from the same element of the
// inputs only, so an output may be the very tensor of an input: an update in
// place reads each element before writing it.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>
#include <utility>

using namespace lethe::rt;

namespace {

/// The scalars an update reads from its tensor arguments.
struct UpdateScalars {
  double learningRate = 0;
  int64_t step = 0;
};

/// Checks the arguments of an update (updateError) and reads the scalars
/// into `scalars`.
bool checkUpdate(lethe_rt_context *context, const char *kernel,
                 const lethe_rt_tensor *lr, const lethe_rt_tensor *step,
                 std::initializer_list<NamedTensor> inputs,
                 std::initializer_list<NamedTensor> outputs,
                 UpdateScalars &scalars) {
  if (!report(context, kernel,
              updateError(tensorError, lr, step, inputs, outputs)))
    return false;
  scalars.learningRate = lr->dtype == LETHE_RT_F32
                             ? static_cast<double>(load<float>(lr->data, 0))
                             : load<double>(lr->data, 0);
  if (step)
    scalars.step = load<int64_t>(step->data, 0);
  return true;
}

} // namespace

extern "C" lethe_rt_status
lethe_rt_sgd_update(lethe_rt_context *context, const lethe_rt_tensor *lr,
                    const lethe_rt_tensor *x, const lethe_rt_tensor *g,
                    double norm_coefficient, const lethe_rt_tensor *x_new) {
  const char *kernel = "lethe_rt_sgd_update";
  UpdateScalars scalars;
  if (!checkUpdate(context, kernel, lr, /*step=*/nullptr, {{"x", x}, {"g", g}},
                   {{"x_new", x_new}}, scalars))
    return LETHE_RT_ERROR;
  int64_t count = numElements(*x);
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const C rate = static_cast<C>(scalars.learningRate);
    const C norm = static_cast<C>(norm_coefficient);
    for (int64_t i = 0; i < count; ++i) {
      C xi = load<T>(x->data, i);
      C regularized = norm * xi + load<T>(g->data, i);
      store<T>(x_new->data, i, xi - rate * regularized);
    }
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status
lethe_rt_momentum_update(lethe_rt_context *context, const lethe_rt_tensor *lr,
                         const lethe_rt_tensor *step, const lethe_rt_tensor *x,
                         const lethe_rt_tensor *g, const lethe_rt_tensor *v,
                         double alpha, double beta, double norm_coefficient,
                         int nesterov, const lethe_rt_tensor *x_new,
                         const lethe_rt_tensor *v_new) {
  const char *kernel = "lethe_rt_momentum_update";
  UpdateScalars scalars;
  if (!checkUpdate(context, kernel, lr, step, {{"x", x}, {"g", g}, {"v", v}},
                   {{"x_new", x_new}, {"v_new", v_new}}, scalars))
    return LETHE_RT_ERROR;
  // The first step takes the whole gradient.
  double gradientScale = scalars.step > 0 ? beta : 1.0;
  int64_t count = numElements(*x);
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const C rate = static_cast<C>(scalars.learningRate);
    const C decay = static_cast<C>(alpha);
    const C scale = static_cast<C>(gradientScale);
    const C norm = static_cast<C>(norm_coefficient);
    for (int64_t i = 0; i < count; ++i) {
      C xi = load<T>(x->data, i);
      C regularized = norm * xi + load<T>(g->data, i);
      C momentum = decay * load<T>(v->data, i) + scale * regularized;
      C direction = nesterov ? regularized + decay * momentum : momentum;
      store<T>(x_new->data, i, xi - rate * direction);
      store<T>(v_new->data, i, momentum);
    }
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status
lethe_rt_adagrad_update(lethe_rt_context *context, const lethe_rt_tensor *lr,
                        const lethe_rt_tensor *step, const lethe_rt_tensor *x,
                        const lethe_rt_tensor *g, const lethe_rt_tensor *h,
                        double decay_factor, double epsilon,
                        double norm_coefficient, const lethe_rt_tensor *x_new,
                        const lethe_rt_tensor *h_new) {
  const char *kernel = "lethe_rt_adagrad_update";
  UpdateScalars scalars;
  if (!checkUpdate(context, kernel, lr, step, {{"x", x}, {"g", g}, {"h", h}},
                   {{"x_new", x_new}, {"h_new", h_new}}, scalars))
    return LETHE_RT_ERROR;
  double decayedRate = scalars.learningRate /
                       (1.0 + static_cast<double>(scalars.step) * decay_factor);
  int64_t count = numElements(*x);
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const C rate = static_cast<C>(decayedRate);
    const C eps = static_cast<C>(epsilon);
    const C norm = static_cast<C>(norm_coefficient);
    for (int64_t i = 0; i < count; ++i) {
      C xi = load<T>(x->data, i);
      C regularized = norm * xi + load<T>(g->data, i);
      C squaredSum = load<T>(h->data, i) + regularized * regularized;
      C adaptive = std::sqrt(squaredSum) + eps;
      store<T>(x_new->data, i, xi - rate * regularized / adaptive);
      store<T>(h_new->data, i, squaredSum);
    }
  });
  return LETHE_RT_OK;
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
  UpdateScalars scalars;
  if (!checkUpdate(
          context, kernel, lr, step, {{"x", x}, {"g", g}, {"v", v}, {"h", h}},
          {{"x_new", x_new}, {"v_new", v_new}, {"h_new", h_new}}, scalars))
    return LETHE_RT_ERROR;
  // Bias correction of both moments, from the first update on.
  double adjustedRate = scalars.learningRate;
  if (scalars.step > 0) {
    double t = static_cast<double>(scalars.step);
    adjustedRate = scalars.learningRate * std::sqrt(1.0 - std::pow(beta, t)) /
                   (1.0 - std::pow(alpha, t));
  }
  int64_t count = numElements(*x);
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const C rate = static_cast<C>(adjustedRate);
    const C decayed = static_cast<C>(1.0 - scalars.learningRate * weight_decay);
    const C post = static_cast<C>(1.0 - norm_coefficient_post);
    const C firstDecay = static_cast<C>(alpha);
    const C firstScale = static_cast<C>(1.0 - alpha);
    const C secondDecay = static_cast<C>(beta);
    const C secondScale = static_cast<C>(1.0 - beta);
    const C eps = static_cast<C>(epsilon);
    const C norm = static_cast<C>(norm_coefficient);
    for (int64_t i = 0; i < count; ++i) {
      C xi = load<T>(x->data, i);
      C regularized = norm * xi + load<T>(g->data, i);
      C first = firstDecay * load<T>(v->data, i) + firstScale * regularized;
      C second = secondDecay * load<T>(h->data, i) +
                 secondScale * (regularized * regularized);
      C root = std::sqrt(second) + eps;
      C updated = xi * decayed - rate * (first / root);
      store<T>(x_new->data, i, post * updated);
      store<T>(v_new->data, i, first);
      store<T>(h_new->data, i, second);
    }
  });
  return LETHE_RT_OK;
}
