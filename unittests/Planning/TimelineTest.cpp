//===- TimelineTest.cpp - Memory timelines of schedules -------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The timeline of a schedule agrees with the simulator: one step per
// schedule step with its live bytes, issue times that never decrease, the
// steps on their streams without overlap, tensors whose sizes add up to the
// curve at every step, the categories at the peak adding up to the peak, and
// counts of recomputes and swaps that match the schedule. Its JSON passes
// the reader's check, and the reader rejects other formats and versions.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/Timeline.h"
#include "lethe/Planning/GraphGenerators.h"
#include "lethe/Planning/Strategies.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>

using namespace lethe::planning;

namespace {

/// A greedy plan at half the unplanned peak of a random training DAG (with
/// workspace on some nodes when `workspace` is set), on a fast link so that
/// it swaps as well as recomputes.
PlanningProblem makePlannedProblem(uint64_t seed, Plan &plan,
                                   bool workspace = false) {
  TrainingGraph graph = makeRandomTrainingDag(40, seed);
  if (workspace)
    graph = addRandomWorkspace(std::move(graph), seed);
  PlanningProblem problem = makeProblem(std::move(graph), 0.5);
  problem.link.hostToDeviceBytesPerSecond = 1e12;
  problem.link.deviceToHostBytesPerSecond = 1e12;
  std::string error;
  EXPECT_TRUE(planGreedy(problem, PlanOptions(), plan, error)) << error;
  return problem;
}

TEST(Timeline, AgreesWithTheSimulator) {
  int64_t workspaceSeen = 0;
  for (uint64_t seed = 1; seed <= 7; ++seed) {
    Plan plan;
    // Seeds 6 and 7 with workspace.
    PlanningProblem problem = makePlannedProblem(seed, plan, seed > 5);
    TimelineInfo info;
    info.function = "step";
    info.profile = "h100";
    info.strategy = "greedy";
    info.budgetBytes = problem.budgetBytes;
    MemoryTimeline timeline;
    std::string error;
    ASSERT_TRUE(buildTimeline(problem, plan.schedule, info, timeline, error))
        << error;
    SimulationResult simulation = simulate(problem, plan.schedule);
    ASSERT_EQ(timeline.steps.size(), plan.schedule.size());
    EXPECT_EQ(timeline.simulation.peakBytes, simulation.peakBytes);

    // Live bytes are the simulator's curve, and the tensors and the
    // computes' workspace sum to it.
    std::vector<int64_t> sums(plan.schedule.size() + 1, 0);
    for (const TimelineTensor &tensor : timeline.tensors)
      for (int64_t step = tensor.firstStep; step <= tensor.lastStep; ++step)
        sums[step] += problem.graph.values[tensor.value].bytes;
    for (size_t index = 0; index < timeline.steps.size(); ++index) {
      const TimelineStep &step = timeline.steps[index];
      EXPECT_EQ(step.workspaceBytes,
                step.step.kind == StepKind::Compute
                    ? problem.graph.nodes[step.step.id].workspaceBytes
                    : 0);
      sums[index] += step.workspaceBytes;
      workspaceSeen += step.workspaceBytes;
    }
    int64_t recomputes = 0, offloads = 0, prefetches = 0, releases = 0;
    std::vector<bool> computed(problem.graph.nodes.size(), false);
    double lastIssue = 0;
    double streamFree[3] = {0, 0, 0};
    for (size_t index = 0; index < timeline.steps.size(); ++index) {
      const TimelineStep &step = timeline.steps[index];
      EXPECT_EQ(step.liveBytes, simulation.memory[index]);
      EXPECT_EQ(sums[index], simulation.memory[index]) << "step " << index;
      EXPECT_GE(step.issue, lastIssue);
      EXPECT_GE(step.start, step.issue);
      EXPECT_GE(step.end, step.start);
      // One thing at a time on each stream.
      int stream = static_cast<int>(step.stream);
      EXPECT_GE(step.start, streamFree[stream] - 1e-12) << "step " << index;
      streamFree[stream] = std::max(streamFree[stream], step.end);
      lastIssue = step.issue;
      switch (step.step.kind) {
      case StepKind::Compute:
        EXPECT_EQ(step.stream, Stream::Compute);
        EXPECT_EQ(step.recompute, computed[step.step.id]);
        recomputes += computed[step.step.id];
        computed[step.step.id] = true;
        break;
      case StepKind::Offload:
        EXPECT_EQ(step.stream, Stream::DeviceToHost);
        ++offloads;
        break;
      case StepKind::Prefetch:
        EXPECT_EQ(step.stream, Stream::HostToDevice);
        ++prefetches;
        break;
      case StepKind::Release:
        EXPECT_EQ(step.start, step.end);
        ++releases;
        break;
      }
    }
    EXPECT_EQ(timeline.recomputes, recomputes);
    EXPECT_EQ(timeline.offloads, offloads);
    EXPECT_EQ(timeline.prefetches, prefetches);
    EXPECT_EQ(timeline.releases, releases);
    EXPECT_GT(recomputes + offloads, 0) << "seed " << seed;

    int64_t atPeak = std::accumulate(timeline.bytesAtPeak.begin(),
                                     timeline.bytesAtPeak.end(), int64_t(0));
    EXPECT_EQ(atPeak + timeline.workspaceAtPeak, simulation.peakBytes);
    ASSERT_FALSE(timeline.largestAtPeak.empty());
    for (size_t rank = 1; rank < timeline.largestAtPeak.size(); ++rank)
      EXPECT_GE(
          problem.graph
              .values[timeline.tensors[timeline.largestAtPeak[rank - 1]].value]
              .bytes,
          problem.graph
              .values[timeline.tensors[timeline.largestAtPeak[rank]].value]
              .bytes);
    EXPECT_GE(timeline.arenaBytes, timeline.livenessPeakBytes);

    std::string json = writeTimelineJson(problem, timeline);
    EXPECT_TRUE(checkTimelineJson(json, "timeline", error)) << error;
    EXPECT_NE(writeChromeTrace(problem, timeline).find("\"traceEvents\""),
              std::string::npos);
    EXPECT_NE(writeTimelineSummary(problem, timeline).find("peak: "),
              std::string::npos);
    // A header, one row per step and the end.
    std::string table = writeTimelineTable(problem, timeline);
    EXPECT_EQ(std::count(table.begin(), table.end(), '\n'),
              static_cast<long>(plan.schedule.size()) + 2);
  }
  EXPECT_GT(workspaceSeen, 0);
}

// The summary's line on the strategy's lower bound: as a multiple of the
// unplanned step time, in the plan's own times where they are given, and
// against this plan only where the bound can hold for it.
TEST(Timeline, LowerBoundLine) {
  PlanningProblem problem = makeProblem(makeRandomChain(6, 1), 0.8);
  problem.link = HostLink(); // greedy recomputes only
  Plan plan;
  std::string error;
  ASSERT_TRUE(planGreedy(problem, PlanOptions(), plan, error)) << error;
  MemoryTimeline timeline;
  TimelineInfo info;
  ASSERT_TRUE(buildTimeline(problem, plan.schedule, info, timeline, error))
      << error;
  ASSERT_EQ(timeline.offloads, 0);
  double seconds = timeline.simulation.seconds;
  double unplanned = timeline.unplannedSeconds;
  ASSERT_GT(seconds, unplanned); // it recomputes

  timeline.info.lowerBoundSeconds = unplanned;
  EXPECT_EQ(formatLowerBound(timeline).substr(0, 63),
            "lower bound: 1.000x the unplanned step time, on any plan within");
  timeline.info.lowerBoundRecomputeOnly = true;
  char above[64];
  std::snprintf(above, sizeof(above), "; this plan is %.2f%% above it",
                100 * (seconds / unplanned - 1));
  EXPECT_EQ(formatLowerBound(timeline),
            "lower bound: 1.000x the unplanned step time, on any plan that "
            "only recomputes" +
                std::string(above));
  timeline.info.lowerBoundSeconds = seconds;
  EXPECT_NE(formatLowerBound(timeline).find(
                "; this plan meets it (optimal among them)"),
            std::string::npos);
  timeline.info.lowerBoundSeconds = 2 * seconds;
  EXPECT_NE(formatLowerBound(timeline).find(
                "; this plan is 50.00% below it: the bound is not for its "
                "budget and times"),
            std::string::npos);
  // The plan's own times (measured ones, say) where the timeline replays
  // others: the plan meets a bound proved in its own.
  timeline.info.plannedSeconds = 2 * seconds;
  timeline.info.plannedUnplannedSeconds = 2 * unplanned;
  EXPECT_NE(formatLowerBound(timeline).find("; this plan meets it"),
            std::string::npos);
  // A recompute-only bound says nothing about a plan that offloads.
  timeline.offloads = 1;
  EXPECT_EQ(formatLowerBound(timeline).find("; this plan"), std::string::npos);
  EXPECT_NE(formatLowerBound(timeline).find("(this plan offloads)"),
            std::string::npos);
}

TEST(Timeline, InvalidSchedulesFail) {
  PlanningProblem problem = makeProblem(makeRandomChain(4, 1), 1.0);
  Schedule schedule = makeUnplannedSchedule(problem.graph);
  std::swap(schedule[0], schedule[1]);
  MemoryTimeline timeline;
  std::string error;
  EXPECT_FALSE(
      buildTimeline(problem, schedule, TimelineInfo(), timeline, error));
  EXPECT_EQ(error.rfind("the schedule does not run: step 0", 0), 0u) << error;
}

TEST(Timeline, ReaderChecksFormatAndVersion) {
  std::string error;
  EXPECT_FALSE(checkTimelineJson("{", "t.json", error));
  EXPECT_EQ(error.rfind("t.json: invalid JSON", 0), 0u) << error;
  EXPECT_FALSE(checkTimelineJson(R"({"format": "lethe-plan", "version": 1})",
                                 "t.json", error));
  EXPECT_EQ(error, "t.json: 'format' is 'lethe-plan', not "
                   "'lethe-memory-timeline'");
  EXPECT_FALSE(checkTimelineJson(
      R"({"format": "lethe-memory-timeline", "version": 2, "steps": []})",
      "t.json", error));
  EXPECT_EQ(error, "t.json: version 2 is not the version this Lethe reads (1)");
  EXPECT_FALSE(checkTimelineJson(
      R"({"format": "lethe-memory-timeline", "version": 1, "peak_bytes": 5,
          "seconds": 1, "steps": [{"issue": 0, "kind": "compute", "start": 0, "end": 0}]})",
      "t.json", error));
  EXPECT_EQ(error, "t.json: steps[0] has no 'live_bytes'");
  EXPECT_FALSE(checkTimelineJson(
      R"({"format": "lethe-memory-timeline", "version": 1, "seconds": 1,
          "steps": []})",
      "t.json", error));
  EXPECT_EQ(error, "t.json: the timeline has no 'peak_bytes'");
  EXPECT_FALSE(checkTimelineJson(
      R"({"format": "lethe-memory-timeline", "version": 1, "peak_bytes": 5,
          "seconds": -1, "steps": []})",
      "t.json", error));
  EXPECT_EQ(error.rfind("t.json: 'seconds' must be", 0), 0u) << error;
  // Two steps, the second's fields as given.
  auto twoSteps = [](const std::string &second) {
    return R"({"format": "lethe-memory-timeline", "version": 1,
               "peak_bytes": 5, "seconds": 1, "steps": [
               {"issue": 0.5, "live_bytes": 5, "kind": "compute",
                "start": 0.5, "end": 0.75}, {)" +
           second + "}]}";
  };
  EXPECT_TRUE(checkTimelineJson(twoSteps(R"("issue": 0.5, "live_bytes": 3,
      "kind": "offload", "start": 0.5, "end": 0.5)"),
                                "t.json", error))
      << error;
  // The page finds the level at a time by bisecting the issues.
  EXPECT_FALSE(checkTimelineJson(twoSteps(R"("issue": 0.25, "live_bytes": 3,
      "kind": "compute", "start": 0.75, "end": 1)"),
                                 "t.json", error));
  EXPECT_EQ(error, "t.json: steps[1].issue goes back in time, to 250.000 ms "
                   "after 500.000 ms");
  EXPECT_FALSE(checkTimelineJson(twoSteps(R"("issue": 0.75, "live_bytes": 3,
      "kind": "bogus", "start": 0.75, "end": 1)"),
                                 "t.json", error));
  EXPECT_EQ(error, "t.json: steps[1].kind must be compute, recompute, "
                   "offload, prefetch or release, got 'bogus'");
  EXPECT_FALSE(checkTimelineJson(twoSteps(R"("issue": 0.75, "live_bytes": 3,
      "kind": "compute", "start": 0.75, "end": 0.5)"),
                                 "t.json", error));
  EXPECT_EQ(error, "t.json: steps[1] ends before it starts");
  EXPECT_FALSE(checkTimelineJson(twoSteps(R"("issue": 0.75, "live_bytes": 3,
      "kind": "compute", "start": [0.75], "end": 1)"),
                                 "t.json", error));
  EXPECT_EQ(error.rfind("t.json: steps[1].start must be", 0), 0u) << error;
}

} // namespace
