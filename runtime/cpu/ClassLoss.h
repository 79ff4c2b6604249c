//===- ClassLoss.h - Arguments of class-indexed losses ----------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Argument checks shared by the class-indexed losses (Loss.cpp) and their
// gradients (Gradient.cpp): a float tensor (N, C, D...), labels (N, D...) of
// i32 or i64 within [0, C) unless ignored, optional weights (C), and a loss
// (or loss gradient) whose shape the reduction implies.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_CPU_CLASSLOSS_H
#define LETHE_RUNTIME_CPU_CLASSLOSS_H

#include "KernelUtils.h"

#include <vector>

namespace lethe::rt {

/// Checks `reduction` and that `loss` (named `what`) has `dtype` and the
/// shape the reduction implies: `unreduced` for none, a scalar otherwise.
inline bool checkLoss(lethe_rt_context *context, const char *kernel,
                      const char *what, lethe_rt_reduction reduction,
                      const lethe_rt_tensor *loss, lethe_rt_dtype dtype,
                      const std::vector<int64_t> &unreduced) {
  if (reduction != LETHE_RT_REDUCTION_NONE &&
      reduction != LETHE_RT_REDUCTION_SUM &&
      reduction != LETHE_RT_REDUCTION_MEAN) {
    fail(context, kernel, "unknown reduction %d", static_cast<int>(reduction));
    return false;
  }
  if (!checkDtype(context, kernel, what, loss, dtype))
    return false;
  bool none = reduction == LETHE_RT_REDUCTION_NONE;
  std::vector<int64_t> expected = none ? unreduced : std::vector<int64_t>{};
  if (shapeOf(*loss) != expected) {
    fail(context, kernel, "%s (%s) must be %s for reduction %s", what,
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

  /// The weights as doubles (empty without weights).
  std::vector<double> weightValues() const {
    std::vector<double> values(weights ? classes : 0);
    if (weights) {
      dispatchFloat(weights->dtype, [&](auto tag) {
        using W = decltype(tag);
        for (int64_t c = 0; c < classes; ++c)
          values[c] = load<W>(weights->data, c);
      });
    }
    return values;
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
};

} // namespace lethe::rt

#endif // LETHE_RUNTIME_CPU_CLASSLOSS_H
