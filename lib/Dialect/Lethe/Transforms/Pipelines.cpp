//===- Pipelines.cpp - Lethe's named pass pipelines -----------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/Transforms/Pipelines.h"

#include "lethe/Dialect/Lethe/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::lethe;

void mlir::lethe::buildTrainingPipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  AddLossPassOptions loss;
  loss.output = options.lossOutput;
  loss.use = options.lossUse;
  loss.kind = options.lossUse.empty() ? std::string(options.loss) : "";
  pm.addNestedPass<func::FuncOp>(createFuseGeluPass());
  pm.addPass(createAddLossPass(loss));
  pm.addPass(createAutodiffPass());
  if (!options.optimizer.empty()) {
    AddOptimizerPassOptions optimizer;
    optimizer.kind = options.optimizer;
    optimizer.learningRate = options.learningRate;
    pm.addPass(createAddOptimizerPass(optimizer));
  }
  if (!options.budget.empty()) {
    PlanMemoryPassOptions plan;
    plan.function = "train_step";
    plan.budget = options.budget;
    plan.strategy = options.strategy;
    plan.profile = options.profile;
    plan.timeLimit = options.timeLimit;
    plan.planOut = options.planOut;
    pm.addPass(createPlanMemoryPass(plan));
    pm.addNestedPass<func::FuncOp>(createMaterializePlanPass());
    pm.addNestedPass<func::FuncOp>(createVerifyPlanPass());
  }
  pm.addNestedPass<func::FuncOp>(createAssignArenaPass());
}

void mlir::lethe::registerTrainingPipeline() {
  PassPipelineRegistration<TrainingPipelineOptions>(
      "lethe-training-pipeline",
      "From an imported model to a planned training step in one arena: "
      "GELU fusion, loss, autodiff, optimizer, memory plan, materialization, "
      "verification, arena layout",
      buildTrainingPipeline);
}
