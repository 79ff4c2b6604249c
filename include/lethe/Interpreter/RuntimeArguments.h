//===- RuntimeArguments.h - Op attributes as runtime arguments --*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// How a `lethe` op's attributes become the arguments of its runtime call
// (runtime/include/lethe_rt.h). The interpreter makes the calls and
// --convert-lethe-to-runtime emits them; both read the attributes here, so
// that the two compute the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_INTERPRETER_RUNTIMEARGUMENTS_H
#define LETHE_INTERPRETER_RUNTIMEARGUMENTS_H

#include "lethe/Interpreter/Interpreter.h"
#include "lethe_rt.h"

namespace mlir::lethe {

/// `axis` (negative: from the end) in [0, rank).
inline int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

lethe_rt_resize_mode getResizeMode(StringRef mode);
lethe_rt_coordinate_mode getCoordinateMode(StringRef mode);
lethe_rt_nearest_mode getNearestMode(StringRef mode);
lethe_rt_reduction getReduction(StringRef reduction);

/// The runtime options of resize or resize_grad; `roi` points into the op's
/// attribute (null when it has none).
template <typename ResizeLikeOp>
lethe_rt_resize_options getResizeOptions(ResizeLikeOp resize) {
  lethe_rt_resize_options options{};
  options.mode = getResizeMode(resize.getMode());
  options.coordinates =
      getCoordinateMode(resize.getCoordinateTransformationMode());
  options.nearest = getNearestMode(resize.getNearestMode());
  options.cubic_coeff_a = resize.getCubicCoeffA().convertToDouble();
  options.exclude_outside = resize.getExcludeOutside();
  std::optional<ArrayRef<double>> roi = resize.getRoi();
  options.roi = roi ? roi->data() : nullptr;
  options.extrapolation_value =
      resize.getExtrapolationValue().convertToDouble();
  return options;
}

/// `value` (an integer or float attribute) as a one-element tensor of type
/// `element`: clip's bounds.
FailureOr<HostTensor> scalarOfType(Attribute value, Type element);

} // namespace mlir::lethe

#endif // LETHE_INTERPRETER_RUNTIMEARGUMENTS_H
