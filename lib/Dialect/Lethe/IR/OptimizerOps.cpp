//===- OptimizerOps.cpp - Optimizer update ops ----------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers, result-type inference and costs of the ops in
// LetheOptimizerOps.td. Every update returns tensors of the type of X; the
// learning rate and the update count are scalars.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheOps.h"

using namespace mlir;
using namespace mlir::lethe;

/// Checks the operands every update shares: the learning rate (and the
/// update count `step`, when the op has one) are scalars, and each tensor of
/// `sameAsX` (the gradient, then the state, named by `names`) has the type
/// of `x`. Appends x's type to `types` once per result (`numResults`).
static LogicalResult
inferUpdateTypes(std::optional<Location> location, StringRef opName,
                 Value learningRate, Value step, Value x,
                 ArrayRef<Value> sameAsX, ArrayRef<StringRef> names,
                 unsigned numResults, SmallVectorImpl<Type> &types) {
  auto rate = cast<RankedTensorType>(learningRate.getType());
  if (rate.getRank() != 0)
    return emitInferenceError(location, opName,
                              "learning_rate must be a "
                              "scalar (rank 0), got ",
                              rate);
  if (step) {
    auto stepType = cast<RankedTensorType>(step.getType());
    if (stepType.getRank() != 0)
      return emitInferenceError(
          location, opName, "step must be a scalar (rank 0), got ", stepType);
  }
  Type xType = x.getType();
  for (auto [value, name] : llvm::zip_equal(sameAsX, names))
    if (value.getType() != xType)
      return emitInferenceError(location, opName, name, " of type ",
                                value.getType(), " must have the type of x, ",
                                xType);
  types.append(numResults, xType);
  return success();
}

//===----------------------------------------------------------------------===//
// SgdUpdateOp
//===----------------------------------------------------------------------===//

LogicalResult SgdUpdateOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferUpdateTypes(location, getOperationName(),
                          adaptor.getLearningRate(), Value(), adaptor.getX(),
                          {adaptor.getGradient()}, {"gradient"},
                          /*numResults=*/1, types);
}

int64_t SgdUpdateOp::getFlops() {
  // norm_coefficient * x + g, times the rate, subtracted.
  return 4 * getNumElements(getX().getType());
}

//===----------------------------------------------------------------------===//
// MomentumUpdateOp
//===----------------------------------------------------------------------===//

LogicalResult MomentumUpdateOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  StringRef mode = adaptor.getMode();
  if (mode != "standard" && mode != "nesterov")
    return emitInferenceError(location, getOperationName(),
                              "mode must be \"standard\" or \"nesterov\", "
                              "got \"",
                              mode, "\"");
  return inferUpdateTypes(
      location, getOperationName(), adaptor.getLearningRate(),
      adaptor.getStep(), adaptor.getX(),
      {adaptor.getGradient(), adaptor.getMomentum()}, {"gradient", "momentum"},
      /*numResults=*/2, types);
}

int64_t MomentumUpdateOp::getFlops() {
  // Regularize (2), the momentum (3), the step (2); Nesterov adds 2.
  int64_t perElement = getMode() == "nesterov" ? 9 : 7;
  return perElement * getNumElements(getX().getType());
}

//===----------------------------------------------------------------------===//
// AdagradUpdateOp
//===----------------------------------------------------------------------===//

LogicalResult AdagradUpdateOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  return inferUpdateTypes(location, getOperationName(),
                          adaptor.getLearningRate(), adaptor.getStep(),
                          adaptor.getX(),
                          {adaptor.getGradient(), adaptor.getSquaredSum()},
                          {"gradient", "squared_sum"},
                          /*numResults=*/2, types);
}

int64_t AdagradUpdateOp::getFlops() {
  // Regularize (2), accumulate (2), square root and epsilon (2), the step
  // (3).
  return 9 * getNumElements(getX().getType());
}

//===----------------------------------------------------------------------===//
// AdamUpdateOp
//===----------------------------------------------------------------------===//

LogicalResult AdamUpdateOp::inferReturnTypes(MLIRContext *context,
                                             std::optional<Location> location,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  return inferUpdateTypes(location, getOperationName(),
                          adaptor.getLearningRate(), adaptor.getStep(),
                          adaptor.getX(),
                          {adaptor.getGradient(), adaptor.getFirstMoment(),
                           adaptor.getSecondMoment()},
                          {"gradient", "first_moment", "second_moment"},
                          /*numResults=*/3, types);
}

int64_t AdamUpdateOp::getFlops() {
  // Regularize (2), both moments (3 + 4), square root and epsilon (2), the
  // step with decoupled decay (4), the post-update scale (1).
  return 16 * getNumElements(getX().getType());
}

bool mlir::lethe::isOptimizerUpdate(Operation *op) {
  return isa<SgdUpdateOp, MomentumUpdateOp, AdagradUpdateOp, AdamUpdateOp>(op);
}
