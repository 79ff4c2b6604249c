//===- MaterializePlan.cpp - Carry out a memory plan ----------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The --lethe-materialize-plan and --lethe-verify-plan passes. Both read the
// function back as the planner sees it (PlanningProblem.h): materializing
// rewrites it into the plan's schedule, verifying replays what it runs in
// the memory simulator.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/Transforms/Passes.h"

#include "lethe/Dialect/Lethe/Transforms/PlanningProblem.h"
#include "lethe/Planning/Strategies.h"

namespace mlir::lethe {
#define GEN_PASS_DEF_MATERIALIZEPLANPASS
#define GEN_PASS_DEF_VERIFYPLANPASS
#include "lethe/Dialect/Lethe/Transforms/Passes.h.inc"
} // namespace mlir::lethe

using namespace mlir;
using namespace mlir::lethe;

namespace {

struct MaterializePlanPass
    : public mlir::lethe::impl::MaterializePlanPassBase<MaterializePlanPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    StringRef passName = getArgument();
    auto plan = func->getAttrOfType<DictionaryAttr>(kPlanAttr);
    if (!plan || !plan.get("steps"))
      return markAllAnalysesPreserved();
    FailureOr<PlannedFunction> planned = readPlannedFunction(func, passName);
    if (failed(planned))
      return signalPassFailure();
    for (const planning::Step &step : planned->extracted.schedule)
      if (step.kind != planning::StepKind::Compute) {
        emitError(func.getLoc(), passName)
            << ": " << ("@") << func.getName()
            << " already has memory operations, yet its plan "
               "has steps; plan the unplanned step";
        return signalPassFailure();
      }
    const planning::PlanningProblem &problem = planned->extracted.problem;
    FailureOr<planning::Schedule> schedule =
        readPlanSteps(func, plan, problem.graph, passName);
    if (failed(schedule))
      return signalPassFailure();
    planning::SimulationResult simulation =
        planning::simulate(problem, *schedule);
    if (!simulation.valid) {
      emitError(func.getLoc(), passName)
          << ": " << ("the plan of @") << func.getName()
          << " does not run: " << simulation.error;
      return signalPassFailure();
    }
    materializeSchedule(func, planned->extracted, *schedule);
    NamedAttrList fields(plan);
    fields.erase("steps");
    func->setAttr(kPlanAttr, fields.getDictionary(&getContext()));
  }
};

struct VerifyPlanPass
    : public mlir::lethe::impl::VerifyPlanPassBase<VerifyPlanPass> {
  void runOnOperation() override {
    markAllAnalysesPreserved();
    func::FuncOp func = getOperation();
    StringRef passName = getArgument();
    if (!func->hasAttr(kPlanAttr))
      return;
    FailureOr<PlannedFunction> planned = readPlannedFunction(func, passName);
    if (failed(planned))
      return signalPassFailure();
    const planning::PlanningProblem &problem = planned->extracted.problem;
    planning::Schedule schedule = planned->extracted.schedule;
    if (planned->plan.get("steps")) {
      FailureOr<planning::Schedule> steps =
          readPlanSteps(func, planned->plan, problem.graph, passName);
      if (failed(steps))
        return signalPassFailure();
      schedule = std::move(*steps);
    }
    planning::SimulationResult simulation =
        planning::simulate(problem, schedule);
    if (!simulation.valid) {
      emitError(func.getLoc(), passName)
          << ": " << ("plan verification failed for @") << func.getName()
          << ": " << simulation.error;
      return signalPassFailure();
    }
    if (simulation.peakBytes > problem.budgetBytes) {
      emitError(func.getLoc(), passName)
          << ": " << ("plan verification failed for @") << func.getName()
          << ": it peaks at " << planning::formatBytes(simulation.peakBytes)
          << " at step " << simulation.peakStep << ", over its budget of "
          << planning::formatBytes(problem.budgetBytes);
      return signalPassFailure();
    }
  }
};

} // namespace
