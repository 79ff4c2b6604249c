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

#include "KernelUtils.h"

using namespace lethe::rt;

namespace {

/// Checks `reduction` and that `loss` has `dtype` and the shape the
/// reduction implies: `unreduced` for none, a scalar otherwise.
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

/// The arguments of a class-indexed loss, checked: input (N, C, D...),
/// labels (N, D...) of i32 or i64 within [0, C) unless ignored, weights (C).
struct ClassLoss {
  const lethe_rt_tensor *input;
  const lethe_rt_tensor *labels;
  const lethe_rt_tensor *weights;
  bool hasIgnoreIndex;
  int64_t ignoreIndex;
  int64_t batch = 0, classes = 0, spatial = 1;

  /// Label of element (n, d) (index n * spatial + d).
  int64_t label(int64_t index) const {
    return labels->dtype == LETHE_RT_I32
               ? static_cast<const int32_t *>(labels->data)[index]
               : static_cast<const int64_t *>(labels->data)[index];
  }

  bool ignored(int64_t label) const {
    return hasIgnoreIndex && label == ignoreIndex;
  }

  /// Checks the arguments (the input being named `inputName`) and fills the
  /// sizes; false with an error recorded otherwise.
  bool check(lethe_rt_context *context, const char *kernel,
             const char *inputName, const char *labelsName,
             const char *weightsName) {
    if (!checkFloatTensor(context, kernel, inputName, input) ||
        !checkTensor(context, kernel, labelsName, labels) ||
        (weights && !checkFloatTensor(context, kernel, weightsName, weights)))
      return false;
    if (input->rank < 2) {
      fail(context, kernel, "%s must have rank >= 2 (N, C, ...), got %s",
           inputName, shapeString(*input).c_str());
      return false;
    }
    if (labels->dtype != LETHE_RT_I32 && labels->dtype != LETHE_RT_I64) {
      fail(context, kernel, "%s must be i32 or i64, got %s", labelsName,
           dtypeName(labels->dtype));
      return false;
    }
    std::vector<int64_t> expected = shapeOf(*input);
    expected.erase(expected.begin() + 1);
    if (shapeOf(*labels) != expected) {
      fail(context, kernel, "%s (%s) must be %s for %s (%s)", labelsName,
           shapeString(*labels).c_str(), shapeText(expected).c_str(), inputName,
           shapeString(*input).c_str());
      return false;
    }
    batch = input->shape[0];
    classes = input->shape[1];
    for (int32_t dim = 2; dim < input->rank; ++dim)
      spatial *= input->shape[dim];
    if (weights && (weights->rank != 1 || weights->shape[0] != classes)) {
      fail(context, kernel,
           "%s (%s) must have shape %lld, the classes of %s "
           "(%s)",
           weightsName, shapeString(*weights).c_str(),
           static_cast<long long>(classes), inputName,
           shapeString(*input).c_str());
      return false;
    }
    int64_t count = numElements(*labels);
    for (int64_t i = 0; i < count; ++i) {
      int64_t value = label(i);
      if (!ignored(value) && (value < 0 || value >= classes)) {
        fail(context, kernel, "%s element %lld is %lld, outside [0, %lld)",
             labelsName, static_cast<long long>(i),
             static_cast<long long>(value), static_cast<long long>(classes));
        return false;
      }
    }
    return true;
  }

  /// Writes the loss from log-probabilities `logProb` (input's shape and
  /// dtype).
  void compute(const lethe_rt_tensor &logProb, lethe_rt_reduction reduction,
               const lethe_rt_tensor &loss) const {
    std::vector<double> weightValues(weights ? classes : 0);
    if (weights) {
      dispatchFloat(weights->dtype, [&](auto tag) {
        using W = decltype(tag);
        for (int64_t c = 0; c < classes; ++c)
          weightValues[c] = load<W>(weights->data, c);
      });
    }
    dispatchFloat(logProb.dtype, [&](auto tag) {
      using T = decltype(tag);
      double total = 0, weightTotal = 0;
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t d = 0; d < spatial; ++d) {
          int64_t index = n * spatial + d, value = label(index);
          double weight = 0, element = 0;
          if (!ignored(value)) {
            weight = weights ? weightValues[value] : 1;
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
};

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
      !checkLoss(context, kernel, reduction, loss, scores->dtype,
                 shapeOf(*labels)) ||
      !checkDtype(context, kernel, "log_prob", log_prob, scores->dtype) ||
      !checkSameShape(context, kernel, "scores", *scores, "log_prob",
                      *log_prob))
    return LETHE_RT_ERROR;
  if (overlaps(*log_prob, *labels) ||
      (weights && overlaps(*log_prob, *weights)))
    return fail(context, kernel, "log_prob overlaps labels or weights");
  if (lethe_rt_softmax(context, scores, 1, 1, log_prob) != LETHE_RT_OK)
    return LETHE_RT_ERROR;
  arguments.compute(*log_prob, reduction, *loss);
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
      !checkLoss(context, kernel, reduction, loss, input->dtype,
                 shapeOf(*target)))
    return LETHE_RT_ERROR;
  arguments.compute(*input, reduction, *loss);
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
      !checkLoss(context, kernel, reduction, loss, a->dtype, shapeOf(*a)))
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
