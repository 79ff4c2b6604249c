//===- ReductionOps.cpp - Reduction ops ---------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers, result-type inference and costs of the ops in
// LetheReductionOps.td.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheOps.h"

using namespace mlir;
using namespace mlir::lethe;

LogicalResult lethe::inferReductionType(std::optional<Location> location,
                                        StringRef opName, Type inputType,
                                        ArrayRef<int64_t> axes, bool keepdims,
                                        SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(inputType);
  int64_t rank = input.getRank();
  SmallVector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes) {
    FailureOr<int64_t> dim =
        normalizeAxis(location, opName, "axis", axis, rank);
    if (failed(dim))
      return failure();
    if (reduced[*dim])
      return emitInferenceError(location, opName, "axes name dimension ", *dim,
                                " twice");
    reduced[*dim] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (!reduced[dim])
      shape.push_back(input.getDimSize(dim));
    else if (keepdims)
      shape.push_back(1);
  }
  types.push_back(input.clone(shape));
  return success();
}

SmallVector<int64_t> lethe::getReducedDims(int64_t rank,
                                           ArrayRef<int64_t> axes) {
  SmallVector<int64_t> dims;
  if (axes.empty()) {
    for (int64_t dim = 0; dim < rank; ++dim)
      dims.push_back(dim);
    return dims;
  }
  for (int64_t axis : axes)
    dims.push_back(axis < 0 ? axis + rank : axis);
  llvm::sort(dims);
  return dims;
}

LogicalResult ReduceMaxGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  Type input = adaptor.getInput().getType();
  SmallVector<Type> reduced;
  if (failed(inferReductionType(location, getOperationName(), input,
                                adaptor.getAxes(), adaptor.getKeepdims(),
                                reduced)))
    return failure();
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"output", adaptor.getOutput()},
        {"output_grad", adaptor.getOutputGrad()}})
    if (value.getType() != reduced.front())
      return emitInferenceError(location, getOperationName(), name,
                                " has type ", value.getType(),
                                ", expected the reduction's ", reduced.front());
  types.push_back(input);
  return success();
}
