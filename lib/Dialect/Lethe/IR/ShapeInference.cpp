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

FailureOr<SmallVector<int64_t>>
lethe::inferWindowShape(std::optional<Location> location, StringRef opName,
                        ArrayRef<int64_t> spatialShape, ArrayRef<int64_t> kernel,
                        ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                        ArrayRef<int64_t> dilations, bool ceilMode) {
  size_t rank = spatialShape.size();
  auto fail = [&](auto &&...args) -> FailureOr<SmallVector<int64_t>> {
    (void)emitInferenceError(location, opName, args...);
    return failure();
  };
  if (kernel.size() != rank)
    return fail("the kernel has ", kernel.size(), " dims, expected ", rank,
                " (the input's spatial dims)");
  if (strides.size() != rank || dilations.size() != rank)
    return fail("strides and dilations must have ", rank, " entries, got ",
                strides.size(), " and ", dilations.size());
  if (pads.size() != 2 * rank)
    return fail("pads must have ", 2 * rank,
                " entries (all begins, then all ends), got ", pads.size());
  SmallVector<int64_t> output;
  for (size_t dim = 0; dim < rank; ++dim) {
    if (kernel[dim] <= 0 || strides[dim] <= 0 || dilations[dim] <= 0)
      return fail("kernel sizes, strides and dilations must be positive, "
                  "got ",
                  kernel[dim], ", ", strides[dim], " and ", dilations[dim],
                  " for spatial dim ", dim);
    int64_t padBegin = pads[dim], padEnd = pads[dim + rank];
    if (padBegin < 0 || padEnd < 0)
      return fail("pads must not be negative, got ", padBegin, " and ",
                  padEnd, " for spatial dim ", dim);
    int64_t extent = dilations[dim] * (kernel[dim] - 1) + 1;
    int64_t span = spatialShape[dim] + padBegin + padEnd - extent;
    if (span < 0)
      return fail("the window (extent ", extent, ") is larger than spatial "
                  "dim ", dim, " (", spatialShape[dim], " plus padding ",
                  padBegin + padEnd, ")");
    int64_t size = span / strides[dim] + 1;
    if (ceilMode) {
      size = (span + strides[dim] - 1) / strides[dim] + 1;
      if ((size - 1) * strides[dim] >= spatialShape[dim] + padBegin)
        --size;
    }
    output.push_back(size);
  }
  return output;
}
