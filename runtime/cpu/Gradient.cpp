//===- Gradient.cpp - Gradient kernels of the CPU backend -----------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_activation_grad, lethe_rt_clip_grad,
// lethe_rt_softmax_cross_entropy_grad and lethe_rt_nll_grad. Activation
// gradients are computed in the compute type (f32 for f16 and bf16) with one
// rounding on store, as the forward activations are. Loss gradients are
// computed in f64 like the forward losses: the factor g(n, d...) * w(label) of
// each element of the labels, then each class of that element, rounded once to
// the gradient's type. For mean, the sum of the counted weights is accumulated
// in row-major order of the labels (as the forward does); when it is 0, nothing
// counts and the gradient is all zeros rather than 0 / 0.
//
//===----------------------------------------------------------------------===//

#include "ClassLoss.h"

#include <cmath>

using namespace lethe::rt;

namespace {

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

/// dx[i] = dy[i] * op(saved[i]) in the compute type of T.
template <typename T, typename Op>
void gradLoop(const void *dy, const void *saved, void *dx, int64_t count,
              Op op) {
  for (int64_t i = 0; i < count; ++i)
    store<T>(dx, i, load<T>(dy, i) * op(load<T>(saved, i)));
}

/// Applies the gradient of activation `kind` with compute type C =
/// ComputeType<T>; false for an unknown kind.
template <typename T>
bool runActivationGrad(lethe_rt_activation_grad_kind kind, double alpha,
                       const void *dy, const void *saved, void *dx,
                       int64_t count) {
  using C = ComputeType<T>;
  const C half = C(0.5), one = C(1);
  switch (kind) {
  case LETHE_RT_RELU_GRAD:
    // saved is y = relu(x): y > 0 exactly where x > 0 (NaN gives 0).
    gradLoop<T>(dy, saved, dx, count, [=](C y) { return y > 0 ? one : C(0); });
    return true;
  case LETHE_RT_LEAKY_RELU_GRAD: {
    C slope = static_cast<C>(alpha);
    gradLoop<T>(dy, saved, dx, count, [=](C x) { return x > 0 ? one : slope; });
    return true;
  }
  case LETHE_RT_GELU_GRAD: {
    // gelu(x) = x Phi(x): gelu'(x) = Phi(x) + x phi(x).
    const C invSqrt2 = static_cast<C>(0.70710678118654752440);
    const C invSqrt2Pi = static_cast<C>(0.39894228040143267794);
    gradLoop<T>(dy, saved, dx, count, [=](C x) {
      return half * (one + std::erf(x * invSqrt2)) +
             x * std::exp(-half * x * x) * invSqrt2Pi;
    });
    return true;
  }
  case LETHE_RT_GELU_TANH_GRAD: {
    // gelu(x) = x (1 + tanh u) / 2 with u = sqrt(2 / pi) (x + 0.044715 x^3).
    const C sqrt2OverPi = static_cast<C>(0.79788456080286535588);
    const C cubic = static_cast<C>(0.044715);
    const C cubicSlope = static_cast<C>(3 * 0.044715);
    gradLoop<T>(dy, saved, dx, count, [=](C x) {
      C t = std::tanh(sqrt2OverPi * (x + cubic * x * x * x));
      return half * (one + t) + half * x * (one - t * t) * sqrt2OverPi *
                                    (one + cubicSlope * x * x);
    });
    return true;
  }
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// Calls `element(n, d, label, factor)` for every element (n, d) of the
/// labels, in row-major order, with factor = g(n, d) * w(label) in f64 (0 for
/// an ignored element): g is `dloss` (of storage type T) for sum, dloss over
/// the summed weights of the counted elements for mean (0 when that sum is
/// 0), and dloss[n, d] for none.
template <typename T, typename Function>
void forEachFactor(const ClassLoss &arguments, const lethe_rt_tensor &dloss,
                   lethe_rt_reduction reduction, Function &&element) {
  std::vector<double> weightValues = arguments.weightValues();
  auto weightOf = [&](int64_t label) {
    return arguments.weights ? weightValues[label] : 1.0;
  };
  int64_t count = arguments.batch * arguments.spatial;
  double scale = 0;
  if (reduction == LETHE_RT_REDUCTION_SUM) {
    scale = load<T>(dloss.data, 0);
  } else if (reduction == LETHE_RT_REDUCTION_MEAN) {
    double weightTotal = 0;
    for (int64_t i = 0; i < count; ++i) {
      int64_t label = arguments.label(i);
      if (!arguments.ignored(label))
        weightTotal += weightOf(label);
    }
    if (weightTotal != 0)
      scale = load<T>(dloss.data, 0) / weightTotal;
  }
  for (int64_t n = 0; n < arguments.batch; ++n) {
    for (int64_t d = 0; d < arguments.spatial; ++d) {
      int64_t index = n * arguments.spatial + d;
      int64_t label = arguments.label(index);
      double factor = 0;
      if (!arguments.ignored(label)) {
        double g = reduction == LETHE_RT_REDUCTION_NONE
                       ? static_cast<double>(load<T>(dloss.data, index))
                       : scale;
        factor = g * weightOf(label);
      }
      element(n, d, label, factor);
    }
  }
}

} // namespace

extern "C" lethe_rt_status lethe_rt_activation_grad(
    lethe_rt_context *context, lethe_rt_activation_grad_kind kind, double alpha,
    const lethe_rt_tensor *dy, const lethe_rt_tensor *saved,
    const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_activation_grad";
  if (!checkFloatTensor(context, kernel, "dy", dy) ||
      !checkDtype(context, kernel, "saved", saved, dy->dtype) ||
      !checkDtype(context, kernel, "dx", dx, dy->dtype) ||
      !checkSameShape(context, kernel, "dy", *dy, "saved", *saved) ||
      !checkSameShape(context, kernel, "dy", *dy, "dx", *dx))
    return LETHE_RT_ERROR;
  bool known = true;
  dispatchFloat(dy->dtype, [&](auto tag) {
    known = runActivationGrad<decltype(tag)>(kind, alpha, dy->data, saved->data,
                                             dx->data, numElements(*dy));
  });
  if (!known)
    return fail(context, kernel, "unknown activation gradient kind %d",
                static_cast<int>(kind));
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_clip_grad(lethe_rt_context *context,
                                              const lethe_rt_tensor *dy,
                                              const lethe_rt_tensor *x,
                                              double min, double max,
                                              const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_clip_grad";
  if (!checkFloatTensor(context, kernel, "dy", dy) ||
      !checkDtype(context, kernel, "x", x, dy->dtype) ||
      !checkDtype(context, kernel, "dx", dx, dy->dtype) ||
      !checkSameShape(context, kernel, "dy", *dy, "x", *x) ||
      !checkSameShape(context, kernel, "dy", *dy, "dx", *dx))
    return LETHE_RT_ERROR;
  if (std::isnan(min) || std::isnan(max) || min > max)
    return fail(context, kernel,
                "the bounds must be ordered numbers, got [%g, %g]", min, max);
  dispatchFloat(dy->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    // In the compute type, as the forward compares (NaN passes nothing).
    C low = static_cast<C>(min), high = static_cast<C>(max);
    gradLoop<T>(dy->data, x->data, dx->data, numElements(*dy), [=](C value) {
      return value >= low && value <= high ? C(1) : C(0);
    });
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_softmax_cross_entropy_grad(
    lethe_rt_context *context, const lethe_rt_tensor *dloss,
    const lethe_rt_tensor *log_prob, const lethe_rt_tensor *labels,
    const lethe_rt_tensor *weights, lethe_rt_reduction reduction,
    int has_ignore_index, int64_t ignore_index,
    const lethe_rt_tensor *dscores) {
  const char *kernel = "lethe_rt_softmax_cross_entropy_grad";
  ClassLoss arguments{log_prob, labels, weights, has_ignore_index != 0,
                      ignore_index};
  if (!arguments.check(context, kernel, "log_prob", "labels", "weights") ||
      !checkLoss(context, kernel, "dloss", reduction, dloss, log_prob->dtype,
                 shapeOf(*labels)) ||
      !checkTensor(context, kernel, "dscores", dscores) ||
      !report(context, kernel,
              dscoresError(*log_prob, *dloss, *labels, weights, *dscores)))
    return LETHE_RT_ERROR;
  int64_t classes = arguments.classes, spatial = arguments.spatial;
  dispatchFloat(log_prob->dtype, [&](auto tag) {
    using T = decltype(tag);
    forEachFactor<T>(arguments, *dloss, reduction,
                     [&](int64_t n, int64_t d, int64_t label, double factor) {
                       bool ignored = arguments.ignored(label);
                       for (int64_t c = 0; c < classes; ++c) {
                         int64_t offset = (n * classes + c) * spatial + d;
                         double value = 0;
                         if (!ignored) {
                           double probability = std::exp(static_cast<double>(
                               load<T>(log_prob->data, offset)));
                           value = factor *
                                   (probability - (c == label ? 1.0 : 0.0));
                         }
                         store<T>(dscores->data, offset, value);
                       }
                     });
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status
lethe_rt_nll_grad(lethe_rt_context *context, const lethe_rt_tensor *dloss,
                  const lethe_rt_tensor *target, const lethe_rt_tensor *weight,
                  lethe_rt_reduction reduction, int has_ignore_index,
                  int64_t ignore_index, const lethe_rt_tensor *dinput) {
  const char *kernel = "lethe_rt_nll_grad";
  ClassLoss arguments{dinput, target, weight, has_ignore_index != 0,
                      ignore_index};
  if (!arguments.check(context, kernel, "dinput", "target", "weight") ||
      !checkLoss(context, kernel, "dloss", reduction, dloss, dinput->dtype,
                 shapeOf(*target)) ||
      !report(context, kernel, dinputError(*dinput, *dloss, *target, weight)))
    return LETHE_RT_ERROR;
  int64_t classes = arguments.classes, spatial = arguments.spatial;
  dispatchFloat(dinput->dtype, [&](auto tag) {
    using T = decltype(tag);
    forEachFactor<T>(arguments, *dloss, reduction,
                     [&](int64_t n, int64_t d, int64_t label, double factor) {
                       bool ignored = arguments.ignored(label);
                       for (int64_t c = 0; c < classes; ++c)
                         store<T>(dinput->data, (n * classes + c) * spatial + d,
                                  !ignored && c == label ? -factor : 0.0);
                     });
  });
  return LETHE_RT_OK;
}
