//===- OptimizerOps.cpp - Optimizer update ops ----------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers, result-type inference and costs of the ops in
// LetheOptimizerOps.td. Every update returns tensors of the type of X; the
// learning rate and the update count are scalars; the hyper-parameters are
// finite and in their ranges.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheOps.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <optional>
#include <tuple>

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

/// A hyper-parameter's range: at least `low` (above it when `lowOpen`),
/// below `high` when given, and finite.
struct Range {
  double low;
  bool lowOpen = false;
  std::optional<double> high = std::nullopt;
};
static constexpr Range kNonNegative{0.0};
static constexpr Range kFraction{0.0, false, 1.0};

/// Checks the hyper-parameters `values` (attribute name, attribute, range)
/// of an update (an attribute left out has its default, which is valid), as
/// PyTorch's optimizers check theirs: a NaN, an infinity, a negative epsilon,
/// decay or coefficient, or an Adam moment coefficient of 1 or more (a division
/// by zero, or the square root of a negative number, in its bias correction) is
/// an error.
static LogicalResult
checkHyperParameters(std::optional<Location> location, StringRef opName,
                     ArrayRef<std::tuple<StringRef, FloatAttr, Range>> values) {
  for (const auto &[name, attr, range] : values) {
    if (!attr)
      continue;
    double number = attr.getValueAsDouble();
    bool aboveLow = range.lowOpen ? number > range.low : number >= range.low;
    bool belowHigh = !range.high || number < *range.high;
    if (std::isfinite(number) && aboveLow && belowHigh)
      continue;
    auto format = [](double number) {
      return llvm::formatv("{0}", llvm::format("%g", number)).str();
    };
    std::string expected =
        range.high
            ? "in [" + format(range.low) + ", " + format(*range.high) + ")"
            : std::string(range.lowOpen ? "> " : ">= ") + format(range.low) +
                  " and finite";
    return emitInferenceError(location, opName, name, " must be ", expected,
                              ", got ", format(number));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// SgdUpdateOp
//===----------------------------------------------------------------------===//

LogicalResult SgdUpdateOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  if (failed(checkHyperParameters(
          location, getOperationName(),
          {{"norm_coefficient", adaptor.getNormCoefficientAttr(),
            kNonNegative}})))
    return failure();
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
  // An attribute left out (an op built from an OperationState) has its
  // default: the adaptor's value getters would read a null attribute.
  StringAttr modeAttr = adaptor.getModeAttr();
  StringRef mode = modeAttr ? modeAttr.getValue() : "standard";
  if (mode != "standard" && mode != "nesterov")
    return emitInferenceError(location, getOperationName(),
                              "mode must be \"standard\" or \"nesterov\", "
                              "got \"",
                              mode, "\"");
  if (failed(checkHyperParameters(
          location, getOperationName(),
          {{"alpha", adaptor.getAlphaAttr(), kNonNegative},
           {"beta", adaptor.getBetaAttr(), kNonNegative},
           {"norm_coefficient", adaptor.getNormCoefficientAttr(),
            kNonNegative}})))
    return failure();
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
  if (failed(checkHyperParameters(
          location, getOperationName(),
          {{"decay_factor", adaptor.getDecayFactorAttr(), kNonNegative},
           {"epsilon", adaptor.getEpsilonAttr(), kNonNegative},
           {"norm_coefficient", adaptor.getNormCoefficientAttr(),
            kNonNegative}})))
    return failure();
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
  if (failed(checkHyperParameters(
          location, getOperationName(),
          {{"alpha", adaptor.getAlphaAttr(), kFraction},
           {"beta", adaptor.getBetaAttr(), kFraction},
           {"epsilon", adaptor.getEpsilonAttr(), kNonNegative},
           {"norm_coefficient", adaptor.getNormCoefficientAttr(), kNonNegative},
           {"norm_coefficient_post", adaptor.getNormCoefficientPostAttr(),
            kNonNegative},
           {"weight_decay", adaptor.getWeightDecayAttr(), kNonNegative}})))
    return failure();
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
