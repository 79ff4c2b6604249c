//===- PlanningProblem.h - The planner's view of a function -----*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Extracts the planning problem (lethe/Planning/TrainingGraph.h) from a
// training-step function, once, with the mapping between the planner's node
// and value ids and the IR; and turns a schedule back into IR. The passes
// --lethe-plan-memory, --lethe-materialize-plan, --lethe-verify-plan and
// --lethe-assign-arena are thin adapters over these two functions and the
// plain-C++ planner.
//
// A function that a plan was already materialized into reads back as the
// same graph and the plan's schedule: an offload, prefetch or release is the
// step of that kind on the value it copies, and an op marked
// `lethe.recompute` is a compute of the node it clones (the original op with
// the same name, attributes and operand values). So extraction and
// materialization are inverse, and verifying a materialized function is
// simulating what it reads back as.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_TRANSFORMS_PLANNINGPROBLEM_H
#define LETHE_DIALECT_LETHE_TRANSFORMS_PLANNINGPROBLEM_H

#include "lethe/Planning/DeviceProfile.h"
#include "lethe/Planning/Schedule.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::lethe {

/// The plain-C++ planner (lethe/Planning), as seen from the passes.
namespace planning = ::lethe::planning;

/// The marker of a recompute: a clone of a forward op that a plan runs again.
inline constexpr StringLiteral kRecomputeAttr = "lethe.recompute";
/// Tells an op apart from earlier identical ones (see markRepeatedOps).
inline constexpr StringLiteral kRepeatAttr = "lethe.repeat";
/// The plan --lethe-plan-memory chose, on the function (a dictionary; see
/// docs/Planning.md).
inline constexpr StringLiteral kPlanAttr = "lethe.plan";

/// A function as the planner sees it.
struct FunctionPlanningProblem {
  planning::PlanningProblem problem;
  /// The schedule the function runs as written: every op once in order for
  /// an unplanned function, the plan for a materialized one.
  planning::Schedule schedule;
  /// The op of each node (the original, never a recompute).
  SmallVector<Operation *> nodeOps;
  /// The first SSA value of each value id (an argument or an op result).
  SmallVector<Value> values;
  /// The value id of every tensor SSA value of the function, recomputed and
  /// prefetched versions and host copies included.
  llvm::DenseMap<Value, int> valueIds;
};

/// Tells apart the ops of `function` that would compute the same value:
/// the second and later ops with the same name, operands and attributes
/// (the planning passes' `lethe.*` annotations aside), such as a model's
/// repeated constants, get `lethe.repeat = N`. A recompute is identified by
/// the op it repeats, which must be the only one computing its value, so
/// --lethe-plan-memory marks a function before it plans it. Returns how
/// many ops it marked.
unsigned markRepeatedOps(func::FuncOp function);

/// Extracts the problem of `function` (a function with one block of lethe
/// ops over statically shaped tensors) with node times from `profile` and
/// the given budget. Emits an error naming the offending op and fails on
/// anything else.
FailureOr<FunctionPlanningProblem>
extractPlanningProblem(func::FuncOp function,
                       const planning::DeviceProfile &profile,
                       int64_t budgetBytes);

/// Rewrites the unplanned `function`, whose problem is `extracted`, to run
/// `schedule`: ops move into schedule order, a recompute is a clone marked
/// `lethe.recompute`, and offload, release and prefetch become the memory
/// ops; every operand reads the version the schedule makes resident. The
/// schedule must be valid for the problem (simulate() says so).
void materializeSchedule(func::FuncOp function,
                         const FunctionPlanningProblem &extracted,
                         const planning::Schedule &schedule);

/// The plan attribute (kPlanAttr) for `plan` on `extracted`'s function:
/// strategy, profile, budget, simulated and unplanned peak and time, the
/// lower bound when there is one, the graph fingerprint, and the steps as
/// strings ("compute 3", "offload 7", ...).
DictionaryAttr buildPlanAttr(MLIRContext *context,
                             const FunctionPlanningProblem &extracted,
                             const planning::Plan &plan,
                             const planning::SimulationResult &planned,
                             const planning::SimulationResult &unplanned,
                             StringRef profileName);

/// Parses `text` as a budget: bytes with an optional unit (6GiB, 512MiB,
/// 2GB, 1000000) or a fraction of `unplannedPeak` (a number with a decimal
/// point and no unit). Sets `error` to one line and fails otherwise.
FailureOr<int64_t> parseBudget(StringRef text, int64_t unplannedPeak,
                               std::string &error);

/// A planned function: its plan attribute and its problem, extracted with
/// the plan's profile and budget.
struct PlannedFunction {
  DictionaryAttr plan;
  FunctionPlanningProblem extracted;
};

/// Reads `function`'s plan attribute (kPlanAttr, which it must have) and
/// extracts its problem. Emits an error at the function prefixed with
/// `passName` and fails when the attribute lacks its profile, budget or
/// fingerprint, names an unknown profile, or was made for a different
/// function body (the fingerprints differ).
FailureOr<PlannedFunction> readPlannedFunction(func::FuncOp function,
                                               StringRef passName);

/// Reads the lower bound a plan attribute records (as buildPlanAttr writes
/// it) into `plan`: lowerBoundSeconds stays negative when it records none.
void readPlanLowerBound(DictionaryAttr attr, planning::Plan &plan);

/// Reads the steps of a plan attribute. Emits an error at `function`
/// prefixed with `passName` and
/// fails on a step that is not "<kind> <id>" or names no node or value of
/// `graph`.
FailureOr<planning::Schedule>
readPlanSteps(func::FuncOp function, DictionaryAttr plan,
              const planning::TrainingGraph &graph, StringRef passName);

} // namespace mlir::lethe

#endif // LETHE_DIALECT_LETHE_TRANSFORMS_PLANNINGPROBLEM_H
