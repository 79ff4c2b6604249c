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

using namespace mlir;
using namespace mlir::lethe;

//===----------------------------------------------------------------------===//
// GeluOp
//===----------------------------------------------------------------------===//

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("approximate must be \"none\" or \"tanh\", got \"")
           << getApproximate() << "\"";
  return success();
}

//===----------------------------------------------------------------------===//
// ClipOp
//===----------------------------------------------------------------------===//

LogicalResult ClipOp::verify() {
  std::optional<APFloat> min = getMin(), max = getMax();
  if (min && max && min->convertToDouble() > max->convertToDouble())
    return emitOpError("min (")
           << min->convertToDouble() << ") is greater than max ("
           << max->convertToDouble() << ")";
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
    return emitInferenceError(location, getOperationName(),
                              "operands have different element types (",
                              lhs.getElementType(), " and ",
                              rhs.getElementType(), ")");
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(
      {condition.getShape(), lhs.getShape(), rhs.getShape()});
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
