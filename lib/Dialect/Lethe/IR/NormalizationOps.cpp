//===- NormalizationOps.cpp - Normalization ops ---------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers, result-type inference and costs of the ops in
// LetheNormalizationOps.td.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheOps.h"

using namespace mlir;
using namespace mlir::lethe;

/// Checks the per-channel operands of batch normalization: each a vector of
/// the C channels of `input` (N, C, D...) with its element type.
static LogicalResult verifyChannelVectors(std::optional<Location> location,
                                          StringRef opName,
                                          RankedTensorType input,
                                          ArrayRef<StringRef> names,
                                          ValueRange vectors) {
  if (input.getRank() < 2)
    return emitInferenceError(location, opName,
                              "input must have rank 2 or more (N, C, ...), "
                              "got ",
                              input);
  int64_t channels = input.getDimSize(1);
  auto expected = RankedTensorType::get({channels}, input.getElementType());
  for (auto [name, vector] : llvm::zip(names, vectors))
    if (vector.getType() != expected)
      return emitInferenceError(location, opName, name, " has type ",
                                vector.getType(), ", expected ", expected,
                                " (one value per channel)");
  return success();
}

//===----------------------------------------------------------------------===//
// BatchNormOp, BatchNormTrainOp
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (failed(verifyChannelVectors(
          location, getOperationName(), input,
          {"scale", "bias", "mean", "variance"},
          {adaptor.getScale(), adaptor.getBias(), adaptor.getMean(),
           adaptor.getVariance()})))
    return failure();
  types.push_back(input);
  return success();
}

int64_t BatchNormOp::getFlops() {
  // With scale / sqrt(var + eps) folded per channel: a multiply-add each.
  return 2 * getNumElements(getType());
}

LogicalResult BatchNormTrainOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (failed(verifyChannelVectors(
          location, getOperationName(), input,
          {"scale", "bias", "running_mean", "running_variance"},
          {adaptor.getScale(), adaptor.getBias(), adaptor.getRunningMean(),
           adaptor.getRunningVariance()})))
    return failure();
  if (adaptor.getMomentum().convertToDouble() < 0 ||
      adaptor.getMomentum().convertToDouble() > 1)
    return emitInferenceError(location, getOperationName(),
                              "momentum must be in [0, 1], got ",
                              adaptor.getMomentum().convertToDouble());
  auto vector = RankedTensorType::get({input.getDimSize(1)},
                                      input.getElementType());
  types.append({input, vector, vector, vector, vector});
  return success();
}

int64_t BatchNormTrainOp::getFlops() {
  // Mean, variance (two passes) and normalization.
  return 7 * getNumElements(getInput().getType());
}

//===----------------------------------------------------------------------===//
// LayerNormOp
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  FailureOr<int64_t> axis = normalizeAxis(location, getOperationName(), "axis",
                                          adaptor.getAxis(), input.getRank());
  if (failed(axis))
    return failure();
  auto normalized = input.clone(input.getShape().drop_front(*axis));
  for (auto [name, value] : {std::pair<StringRef, Value>{"scale",
                                                         adaptor.getScale()},
                             {"bias", adaptor.getBias()}}) {
    if (value && value.getType() != normalized)
      return emitInferenceError(location, getOperationName(), name,
                                " has type ", value.getType(), ", expected ",
                                normalized, " (the normalized dims)");
  }
  SmallVector<int64_t> statisticsShape(input.getShape());
  for (int64_t dim = *axis; dim < input.getRank(); ++dim)
    statisticsShape[dim] = 1;
  auto statistics = input.clone(statisticsShape);
  types.append({input, statistics, statistics});
  return success();
}

int64_t LayerNormOp::getFlops() {
  // Mean, variance, normalization, scale and shift.
  return 8 * getNumElements(getInput().getType());
}

//===----------------------------------------------------------------------===//
// DropoutOp
//===----------------------------------------------------------------------===//

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  double ratio = adaptor.getRatio().convertToDouble();
  if (!(ratio >= 0 && ratio < 1))
    return emitInferenceError(location, getOperationName(),
                              "ratio must be in [0, 1), got ", ratio);
  types.push_back(input);
  types.push_back(input.clone(IntegerType::get(context, 1)));
  return success();
}

int64_t DropoutOp::getFlops() {
  // A random draw, a comparison and a scale per element.
  return 3 * getNumElements(getInput().getType());
}
