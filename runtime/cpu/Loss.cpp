//===- Loss.cpp - Loss kernels of the CPU backend -------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_softmax_cross_entropy, lethe_rt_nll and lethe_rt_mse, with ONNX
// reduction semantics. The per-element loss of class-indexed losses is
// -log_prob[n, label, d...] * weight[label] (weight 1 without weights, 0 for
// an ignored element); sum adds them, and mean divides that sum by the sum of
// the weights of the counted elements (their number without weights), so
// that a mean over nothing is NaN. Per-element values and sums are computed
// in f64, in row-major order of the labels, and rounded once to the loss
// type.
//
//===----------------------------------------------------------------------===//

#include "ClassLoss.h"

using namespace lethe::rt;

namespace {

/// Writes the loss of `arguments` from log-probabilities `logProb` (input's
/// shape and dtype).
void computeLoss(const ClassLoss &arguments, const lethe_rt_tensor &logProb,
                 lethe_rt_reduction reduction, const lethe_rt_tensor &loss) {
  std::vector<double> weightValues = arguments.weightValues();
  int64_t classes = arguments.classes, spatial = arguments.spatial;
  dispatchFloat(logProb.dtype, [&](auto tag) {
    using T = decltype(tag);
    double total = 0, weightTotal = 0;
    for (int64_t n = 0; n < arguments.batch; ++n) {
      for (int64_t d = 0; d < spatial; ++d) {
        int64_t index = n * spatial + d, value = arguments.label(index);
        double weight = 0, element = 0;
        if (!arguments.ignored(value)) {
          weight = arguments.weights ? weightValues[value] : 1;
          double logP =
              load<T>(logProb.data, (n * classes + value) * spatial + d);
          element = -logP * weight;
        }
        if (reduction == LETHE_RT_REDUCTION_NONE)
          store<T>(loss.data, index, element);
        total += element;
        weightTotal += weight;
      }
    }
    if (reduction == LETHE_RT_REDUCTION_SUM)
      store<T>(loss.data, 0, total);
    else if (reduction == LETHE_RT_REDUCTION_MEAN)
      store<T>(loss.data, 0, total / weightTotal);
  });
}

} // namespace

extern "C" lethe_rt_status lethe_rt_softmax_cross_entropy(
    lethe_rt_context *context, const lethe_rt_tensor *scores,
    const lethe_rt_tensor *labels, const lethe_rt_tensor *weights,
    lethe_rt_reduction reduction, int has_ignore_index, int64_t ignore_index,
    const lethe_rt_tensor *loss, const lethe_rt_tensor *log_prob) {
  const char *kernel = "lethe_rt_softmax_cross_entropy";
  ClassLoss arguments{scores, labels, weights, has_ignore_index != 0,
                      ignore_index};
  if (!arguments.check(context, kernel, "scores", "labels", "weights") ||
      !checkLoss(context, kernel, "loss", reduction, loss, scores->dtype,
                 shapeOf(*labels)) ||
      !checkTensor(context, kernel, "log_prob", log_prob) ||
      !report(context, kernel,
              logProbError(*scores, *labels, weights, *log_prob)))
    return LETHE_RT_ERROR;
  if (lethe_rt_softmax(context, scores, 1, 1, log_prob) != LETHE_RT_OK)
    return LETHE_RT_ERROR;
  computeLoss(arguments, *log_prob, reduction, *loss);
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status
lethe_rt_nll(lethe_rt_context *context, const lethe_rt_tensor *input,
             const lethe_rt_tensor *target, const lethe_rt_tensor *weight,
             lethe_rt_reduction reduction, int has_ignore_index,
             int64_t ignore_index, const lethe_rt_tensor *loss) {
  const char *kernel = "lethe_rt_nll";
  ClassLoss arguments{input, target, weight, has_ignore_index != 0,
                      ignore_index};
  if (!arguments.check(context, kernel, "input", "target", "weight") ||
      !checkLoss(context, kernel, "loss", reduction, loss, input->dtype,
                 shapeOf(*target)))
    return LETHE_RT_ERROR;
  computeLoss(arguments, *input, reduction, *loss);
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_mse(lethe_rt_context *context,
                                        const lethe_rt_tensor *a,
                                        const lethe_rt_tensor *b,
                                        lethe_rt_reduction reduction,
                                        const lethe_rt_tensor *loss) {
  const char *kernel = "lethe_rt_mse";
  if (!checkFloatTensor(context, kernel, "a", a) ||
      !checkDtype(context, kernel, "b", b, a->dtype) ||
      !checkSameShape(context, kernel, "a", *a, "b", *b) ||
      !checkLoss(context, kernel, "loss", reduction, loss, a->dtype,
                 shapeOf(*a)))
    return LETHE_RT_ERROR;
  int64_t count = numElements(*a);
  dispatchFloat(a->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    double total = 0;
    for (int64_t i = 0; i < count; ++i) {
      C difference = load<T>(a->data, i) - load<T>(b->data, i);
      C square = difference * difference;
      if (reduction == LETHE_RT_REDUCTION_NONE)
        store<T>(loss->data, i, square);
      total += square;
    }
    if (reduction == LETHE_RT_REDUCTION_SUM)
      store<T>(loss->data, 0, total);
    else if (reduction == LETHE_RT_REDUCTION_MEAN)
      store<T>(loss->data, 0, total / static_cast<double>(count));
  });
  return LETHE_RT_OK;
}
