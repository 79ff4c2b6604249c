//===- ShapeInference.cpp - Shared result-type inference helpers ----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/ShapeInference.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::lethe;

FailureOr<SmallVector<int64_t>>
lethe::broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> shape : shapes)
    rank = std::max(rank, shape.size());
  SmallVector<int64_t> result(rank, 1);
  for (ArrayRef<int64_t> shape : shapes) {
    size_t offset = rank - shape.size();
    for (auto [index, dim] : llvm::enumerate(shape)) {
      int64_t &out = result[offset + index];
      if (dim == out || dim == 1)
        continue;
      if (out != 1)
        return failure();
      out = dim;
    }
  }
  return result;
}

LogicalResult lethe::inferBroadcastType(std::optional<Location> location,
                                        StringRef opName, Type lhs, Type rhs,
                                        SmallVectorImpl<Type> &types) {
  auto lhsType = cast<RankedTensorType>(lhs);
  auto rhsType = cast<RankedTensorType>(rhs);
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitInferenceError(location, opName,
                              "operands have different element types (",
                              lhsType.getElementType(), " and ",
                              rhsType.getElementType(), ")");
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes({lhsType.getShape(), rhsType.getShape()});
  if (failed(shape))
    return emitInferenceError(location, opName, "operand shapes ", lhs,
                              " and ", rhs, " do not broadcast");
  types.push_back(RankedTensorType::get(*shape, lhsType.getElementType()));
  return success();
}

FailureOr<int64_t> lethe::normalizeAxis(std::optional<Location> location,
                                        StringRef opName, StringRef what,
                                        int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    (void)emitInferenceError(location, opName, what, " ", axis,
                             " is out of range for rank ", rank);
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}
