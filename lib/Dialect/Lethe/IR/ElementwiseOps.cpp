//===- ElementwiseOps.cpp - Elementwise ops -------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers, result-type inference and costs of the elementwise ops that
// their TableGen classes do not already provide.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::lethe;

//===----------------------------------------------------------------------===//
// GeluOp
//===----------------------------------------------------------------------===//

/// Checks GELU's `approximate` attribute.
static LogicalResult verifyGeluApproximation(Operation *op,
                                             StringRef approximate) {
  if (approximate != "none" && approximate != "tanh")
    return op->emitOpError("approximate must be \"none\" or \"tanh\", got \"")
           << approximate << "\"";
  return success();
}

LogicalResult GeluOp::verify() {
  return verifyGeluApproximation(*this, getApproximate());
}

LogicalResult GeluGradOp::verify() {
  return verifyGeluApproximation(*this, getApproximate());
}

//===----------------------------------------------------------------------===//
// ClipOp
//===----------------------------------------------------------------------===//

double ClipOp::getBoundValue(Attribute bound) {
  if (auto integer = dyn_cast<IntegerAttr>(bound))
    return static_cast<double>(integer.getInt());
  return cast<FloatAttr>(bound).getValueAsDouble();
}

bool ClipOp::areBoundsReversed(Attribute min, Attribute max) {
  if (!min || !max)
    return false;
  auto minInteger = dyn_cast<IntegerAttr>(min);
  auto maxInteger = dyn_cast<IntegerAttr>(max);
  if (minInteger && maxInteger)
    return minInteger.getInt() > maxInteger.getInt();
  return getBoundValue(min) > getBoundValue(max);
}

LogicalResult ClipOp::verify() {
  Type element = getType().getElementType();
  Attribute bounds[] = {getMinAttr(), getMaxAttr()};
  const char *names[] = {"min", "max"};
  for (auto [bound, name] : llvm::zip(bounds, names)) {
    if (!bound)
      continue;
    if (isa<FloatType>(element) != isa<FloatAttr>(bound))
      return emitOpError() << name << " must be "
                           << (isa<FloatType>(element) ? "an f64" : "an i64")
                           << " attribute for elements of type " << element
                           << ", got " << bound;
    if (auto integer = dyn_cast<IntegerAttr>(bound)) {
      // The element type's range, as far as an i64 bound reaches.
      unsigned width = element.getIntOrFloatBitWidth();
      bool isUnsigned = element.isUnsignedInteger();
      unsigned valueBits = isUnsigned ? width : width - 1;
      int64_t value = integer.getInt();
      int64_t high = valueBits >= 63 ? std::numeric_limits<int64_t>::max()
                                     : (int64_t(1) << valueBits) - 1;
      int64_t low = isUnsigned ? 0 : -high - 1;
      if (value < low || value > high)
        return emitOpError() << name << " (" << value
                             << ") is outside the range of " << element;
    }
  }
  if (areBoundsReversed(bounds[0], bounds[1]))
    return emitOpError("min (")
           << bounds[0] << ") is greater than max (" << bounds[1] << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// WhereOp
//===----------------------------------------------------------------------===//

LogicalResult WhereOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto condition = cast<RankedTensorType>(adaptor.getCondition().getType());
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (lhs.getElementType() != rhs.getElementType())
    return emitInferenceError(
        location, getOperationName(), "operands have different element types (",
        lhs.getElementType(), " and ", rhs.getElementType(), ")");
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes({condition.getShape(), lhs.getShape(), rhs.getShape()});
  if (failed(shape))
    return emitInferenceError(location, getOperationName(), "operand shapes ",
                              condition, ", ", lhs, " and ", rhs,
                              " do not broadcast");
  types.push_back(RankedTensorType::get(*shape, lhs.getElementType()));
  return success();
}

int64_t WhereOp::getFlops() { return getNumElements(getType()); }

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

LogicalResult CastOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  types.push_back(input.clone(adaptor.getTo()));
  return success();
}

int64_t CastOp::getFlops() { return getNumElements(getType()); }

LogicalResult ClipGradOp::verify() {
  if (ClipOp::areBoundsReversed(getMinAttr(), getMaxAttr()))
    return emitOpError("min (")
           << getMinAttr().getValueAsDouble() << ") is greater than max ("
           << getMaxAttr().getValueAsDouble() << ")";
  return success();
}
