//===- PlanMemory.cpp - Plan recompute and offload for a budget -----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The --lethe-plan-memory pass: a thin adapter between the IR and the
// plain-C++ planner (lethe/Planning). It extracts the planning problem, reads
// the budget, runs the strategy (or reads a plan file), and records the plan
// on the function.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/Transforms/Passes.h"

#include "FileIO.h"
#include "PassUtils.h"

#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "lethe/Dialect/Lethe/Transforms/PlanningProblem.h"
#include "lethe/Planning/ArenaLayout.h"
#include "lethe/Planning/MeasuredProfile.h"
#include "lethe/Planning/Strategies.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace mlir::lethe {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "lethe/Dialect/Lethe/Transforms/Passes.h.inc"
} // namespace mlir::lethe

using namespace mlir;
using namespace mlir::lethe;

namespace {

struct PlanMemoryPass
    : public mlir::lethe::impl::PlanMemoryPassBase<PlanMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> found =
        findTrainingStep(getOperation(), function, "lethe-plan-memory");
    if (failed(found))
      return signalPassFailure();
    func::FuncOp func = *found;
    if (func->hasAttr(kPlanAttr)) {
      emitError(func.getLoc(), "lethe-plan-memory: ")
          << ("@") << func.getName()
          << " is already planned (it has a lethe.plan "
             "attribute); plan the unplanned step";
      return signalPassFailure();
    }
    if (budget.empty()) {
      emitError(func.getLoc(), "lethe-plan-memory: ")
          << ("give the budget: budget=6GiB, or "
              "budget=0.5 for half of the unplanned peak");
      return signalPassFailure();
    }
    planning::DeviceProfile deviceProfile;
    std::string error;
    if (!planning::loadDeviceProfile(profile, deviceProfile, error)) {
      emitError(func.getLoc(), "lethe-plan-memory: ") << (error);
      return signalPassFailure();
    }
    if (!(timeLimit > 0)) {
      emitError(func.getLoc(), "lethe-plan-memory: ")
          << ("time-limit must be a positive number of seconds");
      return signalPassFailure();
    }

    // A recompute is identified by the op it repeats, which must be the
    // only one computing its value (marked before the step is read, so a
    // step that is planned already must be refused first).
    for (Operation &op : func.getBody().front())
      if (isa<OffloadOp, PrefetchOp, ReleaseOp>(op) ||
          op.hasAttr(kRecomputeAttr)) {
        emitError(func.getLoc(), "lethe-plan-memory: ")
            << ("@") << func.getName()
            << " already has memory operations; plan the "
               "unplanned step";
        return signalPassFailure();
      }
    markRepeatedOps(func);
    FailureOr<FunctionPlanningProblem> extracted =
        extractPlanningProblem(func, deviceProfile, 0);
    if (failed(extracted))
      return signalPassFailure();
    planning::PlanningProblem &problem = extracted->problem;
    if (!measured.empty()) {
      auto file = llvm::MemoryBuffer::getFile(measured, /*IsText=*/true);
      if (!file) {
        emitError(func.getLoc(), "lethe-plan-memory: ")
            << "cannot read the measured profile '" << measured
            << "': " << file.getError().message();
        return signalPassFailure();
      }
      planning::MeasuredNodes nodes;
      if (!planning::applyMeasuredProfile((*file)->getBuffer(), measured,
                                          problem, nodes, error)) {
        emitError(func.getLoc(), "lethe-plan-memory: ") << error;
        return signalPassFailure();
      }
      // The workspace a backend asked for is the op's from now on: the
      // arena gives it that block and the lowering passes it.
      Builder builder(func.getContext());
      for (int node : nodes.widened)
        extracted->nodeOps[node]->setAttr(
            kWorkspaceBytesAttr, builder.getI64IntegerAttr(
                                     problem.graph.nodes[node].workspaceBytes));
    }
    planning::SimulationResult unplanned =
        planning::simulate(problem, extracted->schedule);
    if (!unplanned.valid) {
      emitError(func.getLoc(), "lethe-plan-memory: ")
          << ("internal error: the unplanned step does not simulate: ")
          << unplanned.error;
      return signalPassFailure();
    }
    FailureOr<int64_t> budgetBytes =
        parseBudget(budget, unplanned.peakBytes, error);
    if (failed(budgetBytes)) {
      emitError(func.getLoc(), "lethe-plan-memory: ") << (error);
      return signalPassFailure();
    }
    problem.budgetBytes = *budgetBytes;
    // A plan for more memory than the device has would not run there.
    if (problem.budgetBytes > deviceProfile.memoryBytes) {
      emitError(func.getLoc(), "lethe-plan-memory: ")
          << "the budget of " << planning::formatBytes(problem.budgetBytes)
          << " is more than the memory of the " << deviceProfile.name << ", "
          << planning::formatBytes(deviceProfile.memoryBytes)
          << ": give a budget of at most that, or the profile of the "
             "device the step runs on (profile=cpu for the host)";
      return signalPassFailure();
    }

    planning::PlanResult result;
    if (!planIn.empty()) {
      if (failed(readPlan(func, problem, result)))
        return signalPassFailure();
    } else {
      planning::PlanOptions options;
      options.timeLimitSeconds = timeLimit;
      // The budget bounds the arena --lethe-assign-arena lays out.
      options.arenaAlignment = planning::kDefaultArenaAlignment;
      if (!planning::runStrategy(strategy, problem, options, result, error)) {
        emitError(func.getLoc(), "lethe-plan-memory: ") << (error);
        return signalPassFailure();
      }
    }

    std::vector<std::pair<std::string, std::string>> files;
    if (!planOut.empty())
      files.emplace_back(planOut,
                         planning::writePlanJson(problem, result.plan));
    if (!problemOut.empty())
      files.emplace_back(problemOut, planning::writeProblemJson(problem));
    // All or none, symbolic links followed and devices written in place, as
    // the executables write theirs.
    if (!::lethe::driver::writeFilesAtomically(files, error)) {
      emitError(func.getLoc(), "lethe-plan-memory: ") << error;
      return signalPassFailure();
    }

    func->setAttr(kPlanAttr,
                  buildPlanAttr(&getContext(), *extracted, result.plan,
                                result.simulation, unplanned, profile));
    unplannedPeak = unplanned.peakBytes;
    plannedPeak = result.simulation.peakBytes;
    std::vector<int> computed(problem.graph.nodes.size(), 0);
    for (const planning::Step &step : result.plan.schedule) {
      if (step.kind == planning::StepKind::Compute && computed[step.id]++ > 0)
        ++numRecomputes;
      if (step.kind == planning::StepKind::Offload)
        ++numOffloads;
    }
  }

  /// Reads plan-in, and checks that it runs and fits the budget.
  LogicalResult readPlan(func::FuncOp func,
                         const planning::PlanningProblem &problem,
                         planning::PlanResult &result) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(planIn, /*IsText=*/true);
    if (!buffer)
      return emitError(func.getLoc(), "lethe-plan-memory: ")
             << ("cannot read plan ") << planIn << ": "
             << buffer.getError().message();
    std::string error;
    if (!planning::parsePlanJson((*buffer)->getBuffer(), planIn, problem,
                                 result.plan, error))
      return emitError(func.getLoc(), "lethe-plan-memory: ") << (error);
    result.simulation = planning::simulate(problem, result.plan.schedule);
    if (!result.simulation.valid)
      return emitError(func.getLoc(), "lethe-plan-memory: ")
             << ("plan ") << planIn
             << " does not run: " << result.simulation.error;
    if (result.simulation.peakBytes > problem.budgetBytes)
      return emitError(func.getLoc(), "lethe-plan-memory: ")
             << ("plan ") << planIn << " peaks at "
             << planning::formatBytes(result.simulation.peakBytes)
             << ", over the budget of "
             << planning::formatBytes(problem.budgetBytes);
    return success();
  }
};

} // namespace
