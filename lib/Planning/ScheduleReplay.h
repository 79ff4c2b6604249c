//===- ScheduleReplay.h - One replay of a schedule, shared ------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The replay behind simulate() and getScheduleBuffers(): it checks every rule
// of a schedule, times it, and finds every device version of a value and the
// steps it is held by the freeing rule of Schedule.h, every workspace (held
// by the compute that needs it, for that step only), and every host copy.
// The simulator sums the lifetimes into the memory curve; the arena layout
// gives each of them an address. Keeping one routine keeps the two in
// agreement: the arena holds exactly what the simulator counts.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_LIB_PLANNING_SCHEDULEREPLAY_H
#define LETHE_LIB_PLANNING_SCHEDULEREPLAY_H

#include "lethe/Planning/Schedule.h"

#include <cstdint>
#include <vector>

namespace lethe::planning::detail {

/// A device copy of a value, held from `firstStep` to `lastStep` inclusive.
/// Steps are schedule indices; the number of steps stands for the end of the
/// training step (where outputs and unreleased offloads are still held).
struct VersionLifetime {
  int value = 0;
  int64_t firstStep = 0;
  int64_t lastStep = 0;
};

/// The workspace of one compute of a node with workspace, held at that step
/// only.
struct WorkspaceUse {
  int node = 0;
  int64_t step = 0;
};

/// The host copy of a value, made by its first offload and kept to the end
/// (later offloads of the value overwrite it in place).
struct HostCopy {
  int value = 0;
  int64_t firstStep = 0;
};

/// Where and when a step runs: `issue` is when the compute stream reaches
/// it, `start` and `end` when it runs on its stream (see StepTiming in
/// Timeline.h, which this fills).
struct ReplayTiming {
  int stream = 0; // 0 compute, 1 device-to-host, 2 host-to-device
  double issue = 0;
  double start = 0;
  double end = 0;
};

/// What a replay found.
struct ScheduleReplay {
  /// Validity, error, time, stalls, recompute time, copied bytes and the host
  /// peak; `memory`, `peakBytes` and `peakStep` are left for the caller.
  SimulationResult result;
  /// Every device version, in the order they are made (inputs of the step
  /// first); empty when the schedule is invalid.
  std::vector<VersionLifetime> versions;
  /// Every compute of a node with workspace, in schedule order; empty when
  /// the schedule is invalid.
  std::vector<WorkspaceUse> workspaces;
  /// Every offloaded value's host copy, in the order of first offloads.
  std::vector<HostCopy> hostCopies;
  /// The timing of every step, when the replay is asked for it.
  std::vector<ReplayTiming> timings;
};

/// Replays `schedule` on `problem` (the rules and time model of Schedule.h),
/// recording every step's timing when `withTimings` is set.
ScheduleReplay replaySchedule(const PlanningProblem &problem,
                              const Schedule &schedule,
                              bool withTimings = false);

} // namespace lethe::planning::detail

#endif // LETHE_LIB_PLANNING_SCHEDULEREPLAY_H
