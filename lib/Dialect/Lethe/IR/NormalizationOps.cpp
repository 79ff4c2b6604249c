//===- NormalizationOps.cpp - Normalization ops
//---------------------------------===//
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

/// Checks that each of `values` (null ones skipped) has type `expected`.
static LogicalResult verifyTypes(std::optional<Location> location,
                                 StringRef opName, ArrayRef<StringRef> names,
                                 ArrayRef<Value> values, Type expected,
                                 StringRef what) {
  for (auto [name, value] : llvm::zip(names, values))
    if (value && value.getType() != expected)
      return emitInferenceError(location, opName, name, " has type ",
                                value.getType(), ", expected ", expected, " (",
                                what, ")");
  return success();
}

/// Checks a batch normalization's momentum, the weight of the old running
/// statistics.
static LogicalResult verifyMomentum(std::optional<Location> location,
                                    StringRef opName, double momentum) {
  if (!(momentum >= 0 && momentum <= 1))
    return emitInferenceError(location, opName,
                              "momentum must be in [0, 1], got ", momentum);
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
  if (failed(
          verifyChannelVectors(location, getOperationName(), input,
                               {"scale", "bias", "mean", "variance"},
                               {adaptor.getScale(), adaptor.getBias(),
                                adaptor.getMean(), adaptor.getVariance()})) ||
      failed(verifyMomentum(location, getOperationName(),
                            adaptor.getMomentum().convertToDouble())))
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
           adaptor.getRunningVariance()})) ||
      failed(verifyMomentum(location, getOperationName(),
                            adaptor.getMomentum().convertToDouble())))
    return failure();
  auto vector =
      RankedTensorType::get({input.getDimSize(1)}, input.getElementType());
  types.append({input, vector, vector, vector, vector});
  return success();
}

int64_t BatchNormTrainOp::getFlops() {
  // Mean, variance (two passes) and normalization.
  return 7 * getNumElements(getInput().getType());
}

LogicalResult BatchNormGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  StringRef opName = getOperationName();
  if (failed(verifyTypes(location, opName, {"output_grad"},
                         {adaptor.getOutputGrad()}, input, "the input's")) ||
      failed(verifyChannelVectors(location, opName, input,
                                  {"scale", "saved_mean", "saved_inv_std"},
                                  {adaptor.getScale(), adaptor.getSavedMean(),
                                   adaptor.getSavedInvStd()})))
    return failure();
  auto vector =
      RankedTensorType::get({input.getDimSize(1)}, input.getElementType());
  types.append({input, vector, vector});
  return success();
}

int64_t BatchNormGradOp::getFlops() {
  // xhat, the two channel sums and the input gradient.
  return 8 * getNumElements(getInput().getType());
}

//===----------------------------------------------------------------------===//
// LayerNormOp
//===----------------------------------------------------------------------===//

namespace {
/// The types layer normalization of an input works with: the normalized
/// dims (the type of scale and bias) and the statistics (the input's shape
/// with the normalized dims set to 1).
struct LayerNormTypes {
  RankedTensorType normalized, statistics;
};
} // namespace

static FailureOr<LayerNormTypes>
getLayerNormTypes(std::optional<Location> location, StringRef opName,
                  RankedTensorType input, int64_t axisAttr) {
  FailureOr<int64_t> axis =
      normalizeAxis(location, opName, "axis", axisAttr, input.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> statisticsShape(input.getShape());
  for (int64_t dim = *axis; dim < input.getRank(); ++dim)
    statisticsShape[dim] = 1;
  return LayerNormTypes{input.clone(input.getShape().drop_front(*axis)),
                        input.clone(statisticsShape)};
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  FailureOr<LayerNormTypes> layerNorm =
      getLayerNormTypes(location, getOperationName(), input, adaptor.getAxis());
  if (failed(layerNorm) ||
      failed(verifyTypes(location, getOperationName(), {"scale", "bias"},
                         {adaptor.getScale(), adaptor.getBias()},
                         layerNorm->normalized, "the normalized dims")))
    return failure();
  types.append({input, layerNorm->statistics, layerNorm->statistics});
  return success();
}

int64_t LayerNormOp::getFlops() {
  // Mean, variance, normalization, scale and shift.
  return 8 * getNumElements(getInput().getType());
}

LogicalResult LayerNormGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  StringRef opName = getOperationName();
  FailureOr<LayerNormTypes> layerNorm =
      getLayerNormTypes(location, opName, input, adaptor.getAxis());
  if (failed(layerNorm) ||
      failed(verifyTypes(location, opName, {"output_grad"},
                         {adaptor.getOutputGrad()}, input, "the input's")) ||
      failed(verifyTypes(location, opName, {"scale"}, {adaptor.getScale()},
                         layerNorm->normalized, "the normalized dims")) ||
      failed(verifyTypes(location, opName, {"mean", "inv_std_dev"},
                         {adaptor.getMean(), adaptor.getInvStdDev()},
                         layerNorm->statistics, "the statistics")))
    return failure();
  types.append({input, layerNorm->normalized, layerNorm->normalized});
  return success();
}

int64_t LayerNormGradOp::getFlops() {
  // xhat, the two row sums, the input gradient and the two parameter sums.
  return 10 * getNumElements(getInput().getType());
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
