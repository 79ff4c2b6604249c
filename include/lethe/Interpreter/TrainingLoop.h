//===- TrainingLoop.h - Run a training step for several steps ---*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// A training step (as --lethe-add-optimizer leaves it) computes one step: it
// takes the parameters and the optimizer state as arguments and returns
// their next values as results marked `lethe.updates = INDEX`. TrainingLoop
// runs it step after step with the interpreter, as a training driver does:
// each such result becomes argument INDEX of the next step, the argument
// marked `lethe.step` holds the step's number (0, 1, ...), and the caller
// gives the other arguments (data inputs, labels) at every step.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_INTERPRETER_TRAININGLOOP_H
#define LETHE_INTERPRETER_TRAININGLOOP_H

#include "lethe/Interpreter/Interpreter.h"

#include "WeightsFile.h"

#include <memory>
#include <optional>
#include <vector>

namespace mlir::lethe {

/// Runs a training-step function for several steps (see the file comment).
class TrainingLoop {
public:
  /// Checks that `function` is a training step: one result marked
  /// `lethe.loss` holding one floating-point element, at least one result
  /// marked `lethe.updates` (each naming a different argument of the
  /// result's type), and, if an argument is marked `lethe.step`, a
  /// tensor<i64> step argument. Emits one error at the function and fails
  /// otherwise.
  static FailureOr<std::unique_ptr<TrainingLoop>> create(func::FuncOp function);

  /// Whether the caller must give argument `index` for the next step: data
  /// inputs and labels at every step, and, at the first step only, updated
  /// arguments without a `lethe.initializer`. The step argument, arguments
  /// with an initializer that no result updates (frozen parameters), and
  /// updated arguments after the first step are the loop's.
  bool needsArgument(unsigned index) const;

  /// Runs the next step. `arguments` has one entry per argument of the
  /// function; the entries the loop provides (see needsArgument) are ignored
  /// and may be null tensors. Returns the loss. Emits an error at the
  /// failing op and fails on a runtime error.
  FailureOr<double> step(std::vector<HostTensor> arguments);

  /// The number of steps run so far (the number of the next step).
  int64_t getStepNumber() const { return stepNumber; }
  /// The largest peak of tensor bytes held over the steps run.
  int64_t getPeakBytes() const { return peakBytes; }
  /// The results of the last step.
  ArrayRef<HostTensor> getResults() const { return results; }
  /// The index of the loss result.
  unsigned getLossResult() const { return lossResult; }

private:
  explicit TrainingLoop(func::FuncOp function) : function(function) {}

  func::FuncOp function;
  Interpreter interpreter;
  unsigned lossResult = 0;
  /// The argument each result updates, if any.
  std::vector<std::optional<unsigned>> updatedArgument;
  /// The next value of each updated argument (null before the first step).
  std::vector<HostTensor> state;
  std::vector<bool> isUpdated, hasInitializer;
  std::optional<unsigned> stepArgument;
  std::vector<HostTensor> results;
  int64_t stepNumber = 0;
  int64_t peakBytes = 0;
};

/// The number of classes of `argument` when a classification loss (or its
/// gradient) reads it, or a prefetched copy of it, as class indices: the
/// class dimension 1 of the scores. Drivers draw random labels below it.
std::optional<int64_t> getClassCount(BlockArgument argument);

/// The `ignore_index` of the classification loss (or its gradient) that
/// reads `argument` as class indices, where it has one: a label of that
/// value counts for nothing rather than naming a class.
std::optional<int64_t> getIgnoreIndex(BlockArgument argument);

/// The parameters and optimizer state of the training step `function`, as
/// the weights file of planned executables holds them
/// (runtime/driver/WeightsFile.h): every argument with an initializer but
/// the step counter, in argument order, under its `lethe.name`, with the
/// value the result that updates it has in `results` (the results of a
/// step), or its initializer when `results` is empty or none updates it.
/// Fails with `error` set to one line when an initializer cannot be read.
bool collectWeights(func::FuncOp function, ArrayRef<HostTensor> results,
                    std::vector<::lethe::driver::WeightsTensor> &weights,
                    std::string &error);

} // namespace mlir::lethe

#endif // LETHE_INTERPRETER_TRAININGLOOP_H
