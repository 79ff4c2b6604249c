//===- Timeline.h - A schedule's memory timeline, for people ----*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The memory timeline of a schedule: the simulator's replay (Schedule.h)
// with every step placed on its stream and in time, every device copy of a
// value with its lifetime, what is live at the peak, what the plan
// recomputes and swaps, and the arena it needs. lethe-mem prints it as a
// summary, a table, JSON (docs/MemoryTimeline.md is the schema, which the
// planned executables write too), a Chrome trace, or an HTML page.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_PLANNING_TIMELINE_H
#define LETHE_PLANNING_TIMELINE_H

#include "lethe/Planning/ArenaLayout.h"
#include "lethe/Planning/Schedule.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lethe::planning {

/// The stream a step runs on.
enum class Stream { Compute, DeviceToHost, HostToDevice };

/// "compute", "d2h", "h2d".
const char *stringifyStream(Stream stream);

/// A step of the schedule in time.
struct TimelineStep {
  Step step;
  /// A compute of a node that ran before.
  bool recompute = false;
  Stream stream = Stream::Compute;
  /// When the compute stream reaches the step, and when it runs on its
  /// stream (later when it waits for a copy or its stream is busy).
  double issue = 0;
  double start = 0;
  double end = 0;
  /// Device bytes held while it runs (simulate()'s memory curve), the
  /// workspace of a compute included.
  int64_t liveBytes = 0;
  /// The workspace a compute holds while it runs (0 for other steps).
  int64_t workspaceBytes = 0;
};

/// How a device copy of a value came to be.
enum class TensorOrigin { Input, Compute, Recompute, Prefetch };

/// "input", "compute", "recompute", "prefetch".
const char *stringifyTensorOrigin(TensorOrigin origin);

/// A device copy of a value and its lifetime.
struct TimelineTensor {
  int value = 0;
  TensorOrigin origin = TensorOrigin::Compute;
  /// Held from firstStep to lastStep, both included; lastStep equal to the
  /// number of steps means it lives to the end.
  int64_t firstStep = 0;
  int64_t lastStep = 0;
  double start = 0;
  double end = 0;
};

/// What the caller knows of the schedule beyond the problem.
struct TimelineInfo {
  std::string function;
  std::string profile;
  /// The strategy that made the plan; empty for an unplanned function.
  std::string strategy;
  /// The plan's budget, or a negative number when there is none.
  int64_t budgetBytes = -1;
  /// A lower bound on the step time that the strategy proved (Plan's), or a
  /// negative number when it proved none; whether it holds only for plans
  /// that recompute and never offload (the MILP's).
  double lowerBoundSeconds = -1;
  bool lowerBoundRecomputeOnly = false;
  /// The plan's and the unplanned step's times in the times the bound was
  /// proved in (a plan attribute's `seconds` and `unplanned_seconds`):
  /// those of a plan made with measured times are not the profile's that
  /// the timeline replays. Negative: the timeline's own.
  double plannedSeconds = -1, plannedUnplannedSeconds = -1;
  int64_t alignment = kDefaultArenaAlignment;
  /// The arena the function was laid out in (its lethe.arena size and
  /// liveness peak, where views and in-place updates share bytes), which the
  /// timeline reports instead of laying the schedule out again. Negative:
  /// none.
  int64_t arenaBytes = -1, livenessPeakBytes = -1;
};

constexpr int kNumValueKinds = 6;

struct MemoryTimeline {
  TimelineInfo info;
  /// The schedule's simulation (peak, step time, stalls, copies).
  SimulationResult simulation;
  /// The unplanned schedule's peak and time.
  int64_t unplannedPeakBytes = 0;
  double unplannedSeconds = 0;
  /// The liveness peak of aligned sizes and the arena laid out for it.
  int64_t livenessPeakBytes = 0;
  int64_t arenaBytes = 0;
  std::vector<TimelineStep> steps;
  std::vector<TimelineTensor> tensors;
  /// Bytes live at the peak step by ValueKind, and the workspace held there
  /// (together, the peak).
  std::array<int64_t, kNumValueKinds> bytesAtPeak = {};
  int64_t workspaceAtPeak = 0;
  /// Indices into `tensors` of the largest live at the peak, largest first
  /// (at most ten).
  std::vector<int> largestAtPeak;
  /// Counts of steps of each kind beyond the unplanned ones, and bytes.
  int64_t recomputes = 0;
  int64_t recomputedBytes = 0;
  int64_t offloads = 0;
  int64_t prefetches = 0;
  int64_t releases = 0;
};

/// The timeline of `schedule` on `problem`. Fails, setting `error` to one
/// line, when the schedule does not run (simulate() says why).
bool buildTimeline(const PlanningProblem &problem, const Schedule &schedule,
                   const TimelineInfo &info, MemoryTimeline &timeline,
                   std::string &error);

/// The strategy's lower bound against the plan, as a line of lethe-mem's
/// summary (and lethec's): "lower bound: 1.027x the unplanned step time, on
/// any plan that only recomputes; this plan is 8.08% above it". Needs
/// info.lowerBoundSeconds >= 0.
std::string formatLowerBound(const MemoryTimeline &timeline);

/// The forms lethe-mem prints.
std::string writeTimelineSummary(const PlanningProblem &problem,
                                 const MemoryTimeline &timeline);
std::string writeTimelineTable(const PlanningProblem &problem,
                               const MemoryTimeline &timeline);
/// JSON in the schema of docs/MemoryTimeline.md, `source` "predicted".
std::string writeTimelineJson(const PlanningProblem &problem,
                              const MemoryTimeline &timeline);
/// The Trace Event Format of chrome://tracing and Perfetto: compute and each
/// copy direction as threads, device and host memory as counters.
std::string writeChromeTrace(const PlanningProblem &problem,
                             const MemoryTimeline &timeline);

/// Checks that `text` is a memory-timeline document this version reads (its
/// format and version, and a memory curve in its steps). On failure returns
/// false and sets `error` to one line; `origin` names the input in it.
bool checkTimelineJson(std::string_view text, std::string_view origin,
                       std::string &error);

} // namespace lethe::planning

#endif // LETHE_PLANNING_TIMELINE_H
