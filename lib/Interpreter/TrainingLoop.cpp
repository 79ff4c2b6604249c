//===- TrainingLoop.cpp - Run a training step for several steps -----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The checks that make a function a training step, and the loop that feeds
// each step's updated values into the next one. The attribute names are the
// conventions the training passes follow (lib/Dialect/Lethe/Transforms/
// PassUtils.h).
//
//===----------------------------------------------------------------------===//

#include "lethe/Interpreter/TrainingLoop.h"

#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "lethe/Dialect/Lethe/Transforms/Attributes.h"

#include <cstring>

using namespace mlir;
using namespace mlir::lethe;

FailureOr<std::unique_ptr<TrainingLoop>>
TrainingLoop::create(func::FuncOp function) {
  std::unique_ptr<TrainingLoop> loop(new TrainingLoop(function));
  StringRef name = function.getSymName();
  unsigned numArguments = function.getNumArguments();
  std::optional<unsigned> loss;
  loop->updatedArgument.resize(function.getNumResults());
  loop->isUpdated.assign(numArguments, false);
  for (unsigned index = 0; index < function.getNumResults(); ++index) {
    if (function.getResultAttr(index, kLossAttr)) {
      if (loss)
        return function.emitError("@")
               << name << " has two results marked lethe.loss (" << *loss
               << " and " << index << ")";
      loss = index;
    }
    auto updates =
        function.getResultAttrOfType<IntegerAttr>(index, kUpdatesAttr);
    if (!updates)
      continue;
    int64_t argument = updates.getInt();
    if (argument < 0 || argument >= static_cast<int64_t>(numArguments))
      return function.emitError("result ")
             << index << " of @" << name
             << " is marked lethe.updates = " << argument
             << ", which is not an argument";
    if (function.getResultTypes()[index] !=
        function.getArgumentTypes()[argument])
      return function.emitError("result ")
             << index << " of @" << name << " updates argument " << argument
             << " but has type " << function.getResultTypes()[index]
             << ", not the argument's "
             << function.getArgumentTypes()[argument];
    if (loop->isUpdated[argument])
      return function.emitError("argument ")
             << argument << " of @" << name
             << " is updated by two results (lethe.updates)";
    loop->isUpdated[argument] = true;
    loop->updatedArgument[index] = argument;
  }
  if (!loss)
    return function.emitError("@")
           << name
           << " is not a training step: no result is marked lethe.loss (add "
              "one with --lethe-add-loss)";
  auto lossType = dyn_cast<RankedTensorType>(function.getResultTypes()[*loss]);
  if (!lossType || !isa<FloatType>(lossType.getElementType()) ||
      !lossType.hasStaticShape() || lossType.getNumElements() != 1)
    return function.emitError("the loss of @")
           << name << " is " << function.getResultTypes()[*loss]
           << ", not one floating-point element";
  if (llvm::none_of(loop->isUpdated, [](bool updated) { return updated; }))
    return function.emitError("@")
           << name
           << " is not a training step: no result is marked lethe.updates "
              "(add an optimizer with --lethe-add-optimizer)";
  for (unsigned index = 0; index < numArguments; ++index) {
    if (!function.getArgAttr(index, kStepAttr))
      continue;
    auto type = dyn_cast<RankedTensorType>(function.getArgumentTypes()[index]);
    if (!type || type.getRank() != 0 || !type.getElementType().isInteger(64))
      return function.emitError("the step argument ")
             << index << " of @" << name << " is "
             << function.getArgumentTypes()[index] << ", not tensor<i64>";
    if (loop->isUpdated[index])
      return function.emitError("the step argument ")
             << index << " of @" << name
             << " is updated by a result; the loop counts the steps itself";
    loop->stepArgument = index;
  }
  loop->lossResult = *loss;
  for (unsigned index = 0; index < numArguments; ++index)
    loop->hasInitializer.push_back(
        static_cast<bool>(function.getArgAttr(index, kInitializerAttr)));
  loop->state.resize(numArguments);
  return loop;
}

bool TrainingLoop::needsArgument(unsigned index) const {
  if (stepArgument == index)
    return false;
  if (isUpdated[index])
    return stepNumber == 0 && !hasInitializer[index];
  return !hasInitializer[index];
}

FailureOr<double> TrainingLoop::step(std::vector<HostTensor> arguments) {
  if (arguments.size() != function.getNumArguments())
    return function.emitError("expected ")
           << function.getNumArguments() << " arguments, got "
           << arguments.size();
  for (unsigned index = 0; index < arguments.size(); ++index) {
    if (needsArgument(index))
      continue;
    if (stepArgument == index) {
      HostTensor number(RankedTensorType::get(
          {}, IntegerType::get(function.getContext(), 64)));
      std::memcpy(number.data(), &stepNumber, sizeof(stepNumber));
      arguments[index] = std::move(number);
    } else if (isUpdated[index] && stepNumber > 0) {
      arguments[index] = std::move(state[index]);
    } else {
      // The interpreter uses the initializer.
      arguments[index] = HostTensor();
    }
  }
  FailureOr<std::vector<HostTensor>> outputs =
      interpreter.run(function, std::move(arguments));
  if (failed(outputs))
    return failure();
  peakBytes = std::max(peakBytes, interpreter.getPeakBytes());
  results = std::move(*outputs);
  for (auto [index, argument] : llvm::enumerate(updatedArgument))
    if (argument)
      state[*argument] = results[index];
  ++stepNumber;
  return results[lossResult].getAsDouble(0);
}

/// The ops that read `argument`, or a prefetched copy of it, as the class
/// indices of a classification loss or its gradient, each with the type of
/// the scores it reads them against.
static SmallVector<std::pair<Operation *, Type>>
getLabelReaders(BlockArgument argument) {
  // A planned step may swap the labels out and back: the loss then reads a
  // prefetched copy, reached through the offload's host value.
  SmallVector<Value> copies = {argument};
  SmallVector<OpOperand *> uses;
  while (!copies.empty()) {
    Value value = copies.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      if (isa<OffloadOp, PrefetchOp>(use.getOwner()))
        copies.push_back(use.getOwner()->getResult(0));
      else
        uses.push_back(&use);
    }
  }
  SmallVector<std::pair<Operation *, Type>> readers;
  for (OpOperand *use : uses) {
    Operation *user = use->getOwner();
    unsigned operand = use->getOperandNumber();
    if (isa<SoftmaxCrossEntropyOp, NllOp>(user) && operand == 1)
      readers.push_back({user, user->getOperand(0).getType()});
    else if (isa<SoftmaxCrossEntropyGradOp>(user) && operand == 2)
      readers.push_back({user, user->getOperand(1).getType()});
    else if (isa<NllGradOp>(user) && operand == 1)
      readers.push_back({user, user->getResult(0).getType()});
  }
  return readers;
}

std::optional<int64_t> mlir::lethe::getClassCount(BlockArgument argument) {
  for (auto [reader, scores] : getLabelReaders(argument))
    if (auto type = dyn_cast<RankedTensorType>(scores))
      if (type.getRank() >= 2 && type.getDimSize(1) > 0)
        return type.getDimSize(1);
  return std::nullopt;
}

std::optional<int64_t> mlir::lethe::getIgnoreIndex(BlockArgument argument) {
  for (auto [reader, scores] : getLabelReaders(argument))
    if (auto ignore = reader->getAttrOfType<IntegerAttr>("ignore_index"))
      return ignore.getInt();
  return std::nullopt;
}

bool mlir::lethe::collectWeights(
    func::FuncOp function, ArrayRef<HostTensor> results,
    std::vector<::lethe::driver::WeightsTensor> &weights, std::string &error) {
  std::vector<const HostTensor *> updated(function.getNumArguments());
  if (!results.empty())
    for (unsigned index = 0; index < function.getNumResults(); ++index)
      if (auto target =
              function.getResultAttrOfType<IntegerAttr>(index, kUpdatesAttr))
        updated[target.getInt()] = &results[index];
  for (BlockArgument argument : function.getArguments()) {
    unsigned index = argument.getArgNumber();
    auto initializer =
        function.getArgAttrOfType<ElementsAttr>(index, kInitializerAttr);
    if (!initializer || function.getArgAttr(index, kStepAttr))
      continue;
    auto name = function.getArgAttrOfType<StringAttr>(index, kNameAttr);
    std::string argumentName =
        name ? name.str() : "arg" + std::to_string(index);
    HostTensor value;
    if (updated[index]) {
      value = *updated[index];
    } else {
      FailureOr<HostTensor> initial = tensorFromAttribute(initializer);
      if (failed(initial)) {
        error = "cannot read the initializer of '" + argumentName + "'";
        return false;
      }
      value = std::move(*initial);
    }
    lethe_rt_tensor view = value.view();
    ::lethe::driver::WeightsTensor tensor;
    tensor.name = std::move(argumentName);
    tensor.dtype = view.dtype;
    tensor.shape.assign(view.shape, view.shape + view.rank);
    tensor.data.assign(static_cast<const char *>(view.data),
                       lethe_rt_num_elements(&view) *
                           lethe_rt_dtype_size(view.dtype));
    weights.push_back(std::move(tensor));
  }
  return true;
}
