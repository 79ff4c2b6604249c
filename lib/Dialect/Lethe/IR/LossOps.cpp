//===- LossOps.cpp - Loss ops ---------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers, result-type inference and costs of the ops in
// LetheLossOps.td.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheOps.h"

using namespace mlir;
using namespace mlir::lethe;

/// Checks `reduction` and returns the loss type for per-element losses of
/// `elementShape`: a scalar unless the reduction is "none".
static FailureOr<RankedTensorType> getLossType(std::optional<Location> location,
                                               StringRef opName,
                                               StringRef reduction,
                                               ArrayRef<int64_t> elementShape,
                                               Type elementType) {
  if (reduction != "mean" && reduction != "sum" && reduction != "none") {
    (void)emitInferenceError(location, opName,
                             "reduction must be \"mean\", \"sum\" or "
                             "\"none\", got \"",
                             reduction, "\"");
    return failure();
  }
  if (reduction == "none")
    return RankedTensorType::get(elementShape, elementType);
  return RankedTensorType::get({}, elementType);
}

/// Checks the operands shared by the class-index losses: `input` (N, C,
/// D...) and `labels` (N, D...), and an optional `weights` (C). Returns the
/// shape of the per-element loss, (N, D...).
static FailureOr<SmallVector<int64_t>>
verifyClassLoss(std::optional<Location> location, StringRef opName,
                StringRef inputName, RankedTensorType input,
                StringRef labelsName, RankedTensorType labels, Value weights) {
  if (input.getRank() < 2) {
    (void)emitInferenceError(location, opName, inputName,
                             " must have rank 2 or more (N, C, ...), got ",
                             input);
    return failure();
  }
  SmallVector<int64_t> elementShape(input.getShape());
  int64_t classes = elementShape[1];
  elementShape.erase(elementShape.begin() + 1);
  if (labels.getShape() != ArrayRef<int64_t>(elementShape)) {
    (void)emitInferenceError(
        location, opName, labelsName, " of type ", labels,
        " must have the shape of ", inputName, " without its class axis 1 (",
        RankedTensorType::get(elementShape, labels.getElementType()), ")");
    return failure();
  }
  if (weights) {
    auto weightType = cast<RankedTensorType>(weights.getType());
    if (weightType.getRank() != 1 || weightType.getDimSize(0) != classes ||
        weightType.getElementType() != input.getElementType()) {
      (void)emitInferenceError(location, opName, "weights of type ", weightType,
                               " must be a vector of the ", classes,
                               " classes of ", input.getElementType());
      return failure();
    }
  }
  return elementShape;
}

//===----------------------------------------------------------------------===//
// SoftmaxCrossEntropyOp
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxCrossEntropyOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto scores = cast<RankedTensorType>(adaptor.getScores().getType());
  auto labels = cast<RankedTensorType>(adaptor.getLabels().getType());
  FailureOr<SmallVector<int64_t>> elementShape =
      verifyClassLoss(location, getOperationName(), "scores", scores, "labels",
                      labels, adaptor.getWeights());
  if (failed(elementShape))
    return failure();
  FailureOr<RankedTensorType> loss =
      getLossType(location, getOperationName(), adaptor.getReduction(),
                  *elementShape, scores.getElementType());
  if (failed(loss))
    return failure();
  types.push_back(*loss);
  types.push_back(scores);
  return success();
}

int64_t SoftmaxCrossEntropyOp::getFlops() {
  // log-softmax: max, subtract, exp, sum, log, subtract (about 5 per score);
  // then a weighted pick and the reduction.
  return 5 * getNumElements(getScores().getType()) +
         3 * getNumElements(getLabels().getType());
}

//===----------------------------------------------------------------------===//
// SoftmaxCrossEntropyGradOp
//===----------------------------------------------------------------------===//

/// Checks that `lossGrad` has the type of the loss the forward computed,
/// `expected`.
static LogicalResult verifyLossGradType(std::optional<Location> location,
                                        StringRef opName, Type lossGrad,
                                        RankedTensorType expected) {
  if (lossGrad == expected)
    return success();
  return emitInferenceError(location, opName, "loss_grad of type ", lossGrad,
                            " must have the type of the loss, ", expected);
}

LogicalResult SoftmaxCrossEntropyGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto logProb = cast<RankedTensorType>(adaptor.getLogProb().getType());
  auto labels = cast<RankedTensorType>(adaptor.getLabels().getType());
  FailureOr<SmallVector<int64_t>> elementShape =
      verifyClassLoss(location, getOperationName(), "log_prob", logProb,
                      "labels", labels, adaptor.getWeights());
  if (failed(elementShape))
    return failure();
  FailureOr<RankedTensorType> loss =
      getLossType(location, getOperationName(), adaptor.getReduction(),
                  *elementShape, logProb.getElementType());
  if (failed(loss) ||
      failed(verifyLossGradType(location, getOperationName(),
                                adaptor.getLossGrad().getType(), *loss)))
    return failure();
  types.push_back(logProb);
  return success();
}

int64_t SoftmaxCrossEntropyGradOp::getFlops() {
  // exp, subtract the one-hot, scale: about 3 per score.
  return 3 * getNumElements(getLogProb().getType());
}

//===----------------------------------------------------------------------===//
// NllGradOp
//===----------------------------------------------------------------------===//

LogicalResult NllGradOp::verify() {
  RankedTensorType input = getInputGrad().getType();
  FailureOr<SmallVector<int64_t>> elementShape =
      verifyClassLoss(getLoc(), getOperationName(), "input_grad", input,
                      "target", getTarget().getType(), getWeight());
  if (failed(elementShape))
    return failure();
  FailureOr<RankedTensorType> loss =
      getLossType(getLoc(), getOperationName(), getReduction(), *elementShape,
                  input.getElementType());
  if (failed(loss) ||
      failed(verifyLossGradType(getLoc(), getOperationName(),
                                getLossGrad().getType(), *loss)))
    return failure();
  return success();
}

int64_t NllGradOp::getFlops() {
  // A weighted scale per element; the rest of the result is zero.
  return 2 * getNumElements(getTarget().getType());
}

//===----------------------------------------------------------------------===//
// NllOp
//===----------------------------------------------------------------------===//

LogicalResult NllOp::inferReturnTypes(MLIRContext *context,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto target = cast<RankedTensorType>(adaptor.getTarget().getType());
  FailureOr<SmallVector<int64_t>> elementShape =
      verifyClassLoss(location, getOperationName(), "input", input, "target",
                      target, adaptor.getWeight());
  if (failed(elementShape))
    return failure();
  FailureOr<RankedTensorType> loss =
      getLossType(location, getOperationName(), adaptor.getReduction(),
                  *elementShape, input.getElementType());
  if (failed(loss))
    return failure();
  types.push_back(*loss);
  return success();
}

int64_t NllOp::getFlops() {
  // A weighted pick per element and the reduction.
  return 3 * getNumElements(getTarget().getType());
}

int64_t NllOp::getBytesRead() {
  // One log-probability per element (not the whole input), the targets and
  // the weights.
  int64_t elementBytes =
      getElementSizeInBytes(getInput().getType().getElementType());
  int64_t bytes = getNumElements(getTarget().getType()) * elementBytes +
                  *getSizeInBytes(getTarget().getType());
  if (Value weight = getWeight())
    bytes += *getSizeInBytes(weight.getType());
  return bytes;
}

//===----------------------------------------------------------------------===//
// MseOp
//===----------------------------------------------------------------------===//

LogicalResult MseOp::inferReturnTypes(MLIRContext *context,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  auto predictions = cast<RankedTensorType>(adaptor.getPredictions().getType());
  auto targets = cast<RankedTensorType>(adaptor.getTargets().getType());
  if (predictions != targets)
    return emitInferenceError(location, getOperationName(), "predictions ",
                              predictions, " and targets ", targets,
                              " must have the same type");
  FailureOr<RankedTensorType> loss =
      getLossType(location, getOperationName(), adaptor.getReduction(),
                  predictions.getShape(), predictions.getElementType());
  if (failed(loss))
    return failure();
  types.push_back(*loss);
  return success();
}

int64_t MseOp::getFlops() {
  // Subtract, square, accumulate.
  return 3 * getNumElements(getPredictions().getType());
}
