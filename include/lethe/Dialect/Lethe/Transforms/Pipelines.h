//===- Pipelines.h - Lethe's named pass pipelines ---------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// --lethe-training-pipeline: from an imported model to a planned training
// step laid out in one arena, in one named pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_TRANSFORMS_PIPELINES_H
#define LETHE_DIALECT_LETHE_TRANSFORMS_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::lethe {

struct TrainingPipelineOptions
    : public PassPipelineOptions<TrainingPipelineOptions> {
  Option<std::string> lossOutput{
      *this, "loss-output",
      llvm::cl::desc("The model output the loss is computed from (skip the "
                     "loss when the model has one: see loss-use)")};
  Option<std::string> loss{
      *this, "loss",
      llvm::cl::desc("The loss: softmax_cross_entropy, nll or mse"),
      llvm::cl::init("softmax_cross_entropy")};
  Option<std::string> lossUse{
      *this, "loss-use",
      llvm::cl::desc("A model output that already is the loss")};
  Option<std::string> optimizer{
      *this, "optimizer",
      llvm::cl::desc("sgd, momentum, nesterov, adagrad, adam or adamw; "
                     "empty: the step returns the gradients")};
  Option<double> learningRate{*this, "lr",
                              llvm::cl::desc("The optimizer's learning rate"),
                              llvm::cl::init(0.01)};
  Option<std::string> budget{
      *this, "budget",
      llvm::cl::desc("Device memory budget (6GiB, or 0.5 of the unplanned "
                     "peak); empty: no planning")};
  Option<std::string> strategy{*this, "strategy",
                               llvm::cl::desc("The planning strategy"),
                               llvm::cl::init("auto")};
  Option<std::string> profile{*this, "profile",
                              llvm::cl::desc("The device profile"),
                              llvm::cl::init("h100")};
  Option<double> timeLimit{*this, "time-limit",
                           llvm::cl::desc("Seconds the strategy may spend"),
                           llvm::cl::init(60)};
  Option<std::string> planOut{*this, "plan-out",
                              llvm::cl::desc("Write the plan to this file")};
};

/// Adds the training pipeline to `pm` (on a module): --lethe-add-loss,
/// --lethe-autodiff, --lethe-add-optimizer (when an optimizer is given),
/// then, with a budget, --lethe-plan-memory, --lethe-materialize-plan and
/// --lethe-verify-plan, and last --lethe-assign-arena.
void buildTrainingPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options);

/// Registers --lethe-training-pipeline.
void registerTrainingPipeline();

} // namespace mlir::lethe

#endif // LETHE_DIALECT_LETHE_TRANSFORMS_PIPELINES_H
