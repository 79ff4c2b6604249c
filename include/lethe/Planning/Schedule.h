//===- Schedule.h - Plans as schedules, and their simulation ----*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// A plan is a schedule: the sequence of steps the planned training step runs.
// Every strategy produces one, the simulator replays one, plan files hold
// one, and --lethe-materialize-plan turns one into IR. The steps are:
//
//  - compute N:  run node N. Every input must be resident; its outputs become
//                resident (a new version of each: later reads see it). The
//                first compute of a node is the original op, any later one a
//                recompute.
//  - offload V:  start copying the resident value V to host memory on the
//                device-to-host stream. The device copy stays resident until
//                a `release V`.
//  - release V:  free the device copy of V that was offloaded. The compute
//                stream waits for the offload to finish first.
//  - prefetch V: allocate V on the device and start copying it back from the
//                host on the host-to-device stream; V is resident from here,
//                and a compute that reads it waits for the copy to arrive.
//
// A version of a value is freed right after the last step that reads it
// (before the next version is made), or right after it is made when nothing
// reads it, unless it is offloaded (freed by its release) or an output of the
// step (kept to the end). This is how the interpreter and the memory profile
// free tensors, so the simulated peak of the unplanned schedule is the
// profile's peak.
//
// Memory is measured at every step: a compute holds its inputs, its outputs,
// its node's workspace (for that step only) and everything else resident; a
// prefetch holds its destination. The curve has one more entry for the end
// of the step, where only outputs remain.
//
// Time: the compute stream runs computes in order, each starting when the
// previous one ends and its prefetched inputs have arrived. Each copy stream
// runs its copies in order; an offload starts when it is issued, a prefetch
// when it is issued and its value's offload has finished. A release waits on
// the compute stream for its offload. Times of steps other than computes are
// not charged to the compute stream.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_PLANNING_SCHEDULE_H
#define LETHE_PLANNING_SCHEDULE_H

#include "lethe/Planning/TrainingGraph.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lethe::planning {

enum class StepKind { Compute, Offload, Release, Prefetch };

const char *stringifyStepKind(StepKind kind);

struct Step {
  StepKind kind = StepKind::Compute;
  /// A node for Compute, a value otherwise.
  int id = 0;

  static Step compute(int node) { return {StepKind::Compute, node}; }
  static Step offload(int value) { return {StepKind::Offload, value}; }
  static Step release(int value) { return {StepKind::Release, value}; }
  static Step prefetch(int value) { return {StepKind::Prefetch, value}; }
  bool operator==(const Step &other) const {
    return kind == other.kind && id == other.id;
  }
};

using Schedule = std::vector<Step>;

/// The unplanned schedule: every node once, in order.
Schedule makeUnplannedSchedule(const TrainingGraph &graph);

/// What the simulator found.
struct SimulationResult {
  /// False when the schedule breaks a rule; `error` then names the first
  /// broken rule in one line and the other fields are meaningless.
  bool valid = false;
  std::string error;
  /// Device bytes at each step, and at the end (size = steps + 1).
  std::vector<int64_t> memory;
  int64_t peakBytes = 0;
  /// The first step at which the peak is reached (== steps for the end).
  int64_t peakStep = 0;
  /// The most bytes held on the host at once.
  int64_t hostPeakBytes = 0;
  /// Estimated time of the step: when the compute stream finishes.
  double seconds = 0;
  /// Parts of it: time of recomputes, and time the compute stream waited
  /// for copies.
  double recomputeSeconds = 0;
  double stallSeconds = 0;
  /// Bytes copied in each direction.
  int64_t offloadedBytes = 0;
  int64_t prefetchedBytes = 0;
};

/// Replays `schedule` on `problem` (see the file comment). The budget is not
/// checked here: compare peakBytes with it.
SimulationResult simulate(const PlanningProblem &problem,
                          const Schedule &schedule);

/// A plan: a schedule and what produced it.
struct Plan {
  std::string strategy;
  Schedule schedule;
  /// A lower bound on the step time of any plan within the budget that the
  /// strategy proved (the LP bound of the MILP, for instance), or a negative
  /// number when it has none.
  double lowerBoundSeconds = -1;
  /// Whether that bound holds for every plan, or only for the plans that
  /// recompute and never offload (the MILP's: Checkmate's model has no
  /// offloading, and a plan that offloads may beat it).
  bool lowerBoundCoversOffloading = true;
};

/// A fingerprint of the graph's structure and sizes (16 hex digits), so
/// that a plan is not applied to a different training step.
std::string getGraphFingerprint(const TrainingGraph &graph);

/// Serializes a plan for `problem` as JSON, with its simulated peak and time
/// (schema in docs/Planning.md).
std::string writePlanJson(const PlanningProblem &problem, const Plan &plan);

/// Parses a plan file for `problem`. Fails, setting `error` to one line, on
/// malformed JSON, a different graph (node and value counts and names must
/// match), or a step naming a node or value that does not exist.
bool parsePlanJson(std::string_view text, std::string_view origin,
                   const PlanningProblem &problem, Plan &plan,
                   std::string &error);

} // namespace lethe::planning

#endif // LETHE_PLANNING_SCHEDULE_H
