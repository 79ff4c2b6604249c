//===- RuntimeArguments.cpp - Op attributes as runtime arguments ----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Interpreter/RuntimeArguments.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::lethe;

lethe_rt_resize_mode mlir::lethe::getResizeMode(StringRef mode) {
  return llvm::StringSwitch<lethe_rt_resize_mode>(mode)
      .Case("linear", LETHE_RT_RESIZE_LINEAR)
      .Case("cubic", LETHE_RT_RESIZE_CUBIC)
      .Default(LETHE_RT_RESIZE_NEAREST);
}

lethe_rt_coordinate_mode mlir::lethe::getCoordinateMode(StringRef mode) {
  return llvm::StringSwitch<lethe_rt_coordinate_mode>(mode)
      .Case("asymmetric", LETHE_RT_ASYMMETRIC)
      .Case("align_corners", LETHE_RT_ALIGN_CORNERS)
      .Case("pytorch_half_pixel", LETHE_RT_PYTORCH_HALF_PIXEL)
      .Case("tf_half_pixel_for_nn", LETHE_RT_TF_HALF_PIXEL_FOR_NN)
      .Case("tf_crop_and_resize", LETHE_RT_TF_CROP_AND_RESIZE)
      .Default(LETHE_RT_HALF_PIXEL);
}

lethe_rt_nearest_mode mlir::lethe::getNearestMode(StringRef mode) {
  return llvm::StringSwitch<lethe_rt_nearest_mode>(mode)
      .Case("round_prefer_ceil", LETHE_RT_ROUND_PREFER_CEIL)
      .Case("floor", LETHE_RT_FLOOR)
      .Case("ceil", LETHE_RT_CEIL)
      .Default(LETHE_RT_ROUND_PREFER_FLOOR);
}

lethe_rt_reduction mlir::lethe::getReduction(StringRef reduction) {
  return llvm::StringSwitch<lethe_rt_reduction>(reduction)
      .Case("none", LETHE_RT_REDUCTION_NONE)
      .Case("sum", LETHE_RT_REDUCTION_SUM)
      .Default(LETHE_RT_REDUCTION_MEAN);
}

FailureOr<HostTensor> mlir::lethe::scalarOfType(Attribute value, Type element) {
  auto type = RankedTensorType::get({1}, element);
  if (auto integer = dyn_cast<IntegerAttr>(value)) {
    APInt bits(element.getIntOrFloatBitWidth(), integer.getInt(),
               /*isSigned=*/true);
    return tensorFromAttribute(DenseElementsAttr::get(type, bits));
  }
  APFloat number(cast<FloatAttr>(value).getValueAsDouble());
  bool losesInfo;
  number.convert(cast<FloatType>(element).getFloatSemantics(),
                 APFloat::rmNearestTiesToEven, &losesInfo);
  return tensorFromAttribute(DenseElementsAttr::get(type, number));
}
