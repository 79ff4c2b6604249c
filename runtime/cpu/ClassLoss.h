//===- ClassLoss.h - Arguments of class-indexed losses ----------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Argument checks shared by the class-indexed losses (Loss.cpp) and their
// gradients (Gradient.cpp): a float tensor (N, C, D...), labels (N, D...) of
// i32 or i64 within [0, C) unless ignored, optional weights (C), and a loss
// (or loss gradient) whose shape the reduction implies (checkLoss, in
// common/Checks.h).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_CPU_CLASSLOSS_H
#define LETHE_RUNTIME_CPU_CLASSLOSS_H

#include "KernelUtils.h"

#include <vector>

namespace lethe::rt {

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
    if (!report(context, kernel,
                classArgumentsError(inputName, *input, labelsName, *labels,
                                    weightsName, weights, batch, classes,
                                    spatial)))
      return false;
    int64_t count = numElements(*labels);
    for (int64_t i = 0; i < count; ++i) {
      int64_t value = label(i);
      if (!ignored(value) && (value < 0 || value >= classes)) {
        report(context, kernel, labelRangeError(labelsName, i, value, classes));
        return false;
      }
    }
    return true;
  }
};

} // namespace lethe::rt

#endif // LETHE_RUNTIME_CPU_CLASSLOSS_H
