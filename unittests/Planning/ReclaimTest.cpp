//===- ReclaimTest.cpp - Spending a plan's unused budget ------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// reclaimBudget on a hand-built step whose plans are worked out below (a
// recompute of three nodes, a swap, the arena's alignment), and on generated
// steps, where what it returns must stay a valid plan within the budget.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/ArenaLayout.h"
#include "lethe/Planning/GraphGenerators.h"
#include "lethe/Planning/Schedule.h"
#include "lethe/Planning/Strategies.h"

#include "HandBuiltGraphs.h"

#include <gtest/gtest.h>

#include <limits>

using namespace lethe::planning;

namespace {

/// x (100 B, input) -> f0 -> a -> f1 -> b -> f2 -> c (100 B each) -> loss ->
/// l (4 B, output) and dc (100 B); h reads dc and writes t (1000 B); g1
/// reads t and writes u (4 B); g reads u, c and x and writes dx (100 B,
/// output). The peak is at h, where c waits for g: keeping c costs 100 B
/// there, recomputing it costs f0 + f1 + f2 = 6 s. Host link: 100 B/s each
/// way, no latency.
PlanningProblem makeProblemWithTail() {
  PlanningProblem problem;
  TrainingGraph &graph = problem.graph;
  addValue(graph, "x", 100, -1, ValueKind::Input);     // 0
  addValue(graph, "a", 100, 0, ValueKind::Activation); // 1
  addValue(graph, "b", 100, 1, ValueKind::Activation); // 2
  addValue(graph, "c", 100, 2, ValueKind::Activation); // 3
  addValue(graph, "l", 4, 3, ValueKind::Temporary);    // 4
  addValue(graph, "dc", 100, 3, ValueKind::Gradient);  // 5
  addValue(graph, "t", 1000, 4, ValueKind::Temporary); // 6
  addValue(graph, "u", 4, 5, ValueKind::Temporary);    // 7
  addValue(graph, "dx", 100, 6, ValueKind::Gradient);  // 8
  graph.values[4].isOutput = true;
  graph.values[8].isOutput = true;
  addNode(graph, "f0", 1, NodeRole::Forward, {0}, {1});
  addNode(graph, "f1", 2, NodeRole::Forward, {1}, {2});
  addNode(graph, "f2", 3, NodeRole::Forward, {2}, {3});
  addNode(graph, "loss", 1, NodeRole::Forward, {3}, {4, 5});
  addNode(graph, "h", 1, NodeRole::Backward, {5}, {6});
  addNode(graph, "g1", 1, NodeRole::Backward, {6}, {7});
  addNode(graph, "g", 1, NodeRole::Backward, {7, 3, 0}, {8});
  graph.computeUsers();
  problem.link = {100, 100, 0};
  return problem;
}

/// The plan that recomputes c for g, simulated on `problem`.
PlanResult makeRecomputePlan(const PlanningProblem &problem) {
  PlanResult result;
  result.plan.strategy = "test";
  result.plan.schedule = {Step::compute(0), Step::compute(1), Step::compute(2),
                          Step::compute(3), Step::compute(4), Step::compute(5),
                          Step::compute(0), Step::compute(1), Step::compute(2),
                          Step::compute(6)};
  result.simulation = simulate(problem, result.plan.schedule);
  return result;
}

TEST(ReclaimTest, TheRecomputesThatFedOneGoWithIt) {
  PlanningProblem problem = makeProblemWithTail();
  std::string error;
  ASSERT_TRUE(problem.graph.verify(error)) << error;
  Schedule unplanned = makeUnplannedSchedule(problem.graph);
  SimulationResult keep = simulate(problem, unplanned);
  PlanResult result = makeRecomputePlan(problem);
  ASSERT_TRUE(result.simulation.valid) << result.simulation.error;
  // At h: x c l dc t (1304 B) unplanned, x l dc t (1204 B) planned.
  ASSERT_EQ(keep.peakBytes, 1304);
  ASSERT_EQ(result.simulation.peakBytes, 1204);
  EXPECT_DOUBLE_EQ(result.simulation.seconds, keep.seconds + 6);

  // Where the unplanned step fits, the recompute of f2 goes first (the
  // dearest), and the recomputes of f1 and f0, which only fed it, with it.
  // (Without a time limit: `time-limit=inf` is a valid pass option.)
  problem.budgetBytes = 1304;
  EXPECT_EQ(reclaimBudget(problem, 0, std::numeric_limits<double>::infinity(),
                          result),
            3);
  EXPECT_EQ(result.plan.schedule, unplanned);
  EXPECT_EQ(result.plan.strategy, "test");
  EXPECT_EQ(result.simulation.peakBytes, 1304);
  EXPECT_DOUBLE_EQ(result.simulation.seconds, keep.seconds);
}

TEST(ReclaimTest, NothingGoesWithoutRoom) {
  PlanningProblem problem = makeProblemWithTail();
  PlanResult result = makeRecomputePlan(problem);
  Schedule planned = result.plan.schedule;
  problem.budgetBytes = 1303;
  EXPECT_EQ(reclaimBudget(problem, 0, 10, result), 0);
  EXPECT_EQ(result.plan.schedule, planned);
  EXPECT_EQ(result.simulation.peakBytes, 1204);
}

// The arena counts too: in blocks of 256 B, the plan's arena is 1792 B (x l
// dc t at h: 3 blocks and 4) and keeping anything for g (c, or b or a to
// recompute it from) adds a block at h: 2048 B. The simulated peaks, 1204
// and 1304 B, are well under that.
TEST(ReclaimTest, TheArenaMustFitTheBudget) {
  PlanningProblem problem = makeProblemWithTail();
  Schedule unplanned = makeUnplannedSchedule(problem.graph);
  PlanResult result = makeRecomputePlan(problem);
  ASSERT_EQ(
      layOutArena(getScheduleBuffers(problem, result.plan.schedule).device, 256,
                  /*search=*/false)
          .arenaBytes,
      1792);
  problem.budgetBytes = 2047;
  PlanResult arenaBound = result;
  EXPECT_EQ(reclaimBudget(problem, 256, 10, arenaBound), 0);
  EXPECT_EQ(arenaBound.plan.schedule, result.plan.schedule);
  // Without the arena, the simulated peak fits.
  EXPECT_EQ(reclaimBudget(problem, 0, 10, result), 3);
  problem.budgetBytes = 2048;
  EXPECT_EQ(reclaimBudget(problem, 256, 10, arenaBound), 3);
  EXPECT_EQ(arenaBound.plan.schedule, unplanned);
}

TEST(ReclaimTest, SwapsGoWhenTheyStallAndWhenTheyHide) {
  for (double bytesPerSecond : {10.0, 1e12}) {
    SCOPED_TRACE(bytesPerSecond);
    PlanningProblem problem = makeProblemWithTail();
    problem.link = {bytesPerSecond, bytesPerSecond, 0};
    PlanResult result;
    result.plan.schedule = {
        Step::compute(0), Step::compute(1), Step::compute(2), Step::compute(3),
        Step::offload(3), Step::compute(4), Step::release(3), Step::prefetch(3),
        Step::compute(5), Step::compute(6)};
    result.simulation = simulate(problem, result.plan.schedule);
    ASSERT_TRUE(result.simulation.valid) << result.simulation.error;
    SimulationResult keep =
        simulate(problem, makeUnplannedSchedule(problem.graph));
    // Over 10 B/s the copies (10 s each) stall the step, and the swap goes
    // to make it faster; over a fast link they hide under compute (h and g1,
    // 1 s each), and it goes because it costs no time.
    if (bytesPerSecond < 1e6)
      EXPECT_GT(result.simulation.seconds, keep.seconds);
    else
      EXPECT_DOUBLE_EQ(result.simulation.seconds, keep.seconds);
    problem.budgetBytes = 1304;
    EXPECT_EQ(reclaimBudget(problem, 0, 10, result), 3);
    EXPECT_EQ(result.plan.schedule, makeUnplannedSchedule(problem.graph));
    EXPECT_EQ(result.simulation.offloadedBytes, 0);
  }
}

/// Whether `part` is `whole` with some steps left out.
bool isSubsequence(const Schedule &part, const Schedule &whole) {
  size_t at = 0;
  for (const Step &step : whole)
    if (at < part.size() && part[at] == step)
      ++at;
  return at == part.size();
}

// On generated steps with workspace, greedy's plans at 60% of the unplanned
// peak, reclaimed with the arena at budgets from there up: the result is a
// valid plan within the budget and its arena, no slower, made of the plan's
// steps. At the unplanned peak, every recompute and swap goes (on these
// steps; an order of removals could pass through a peak above it). Over the
// generators' link (25 GB/s) greedy swaps, and the copies hide under
// compute; over 100 kB/s, it recomputes, and reclaiming wins time.
TEST(ReclaimTest, GeneratedPlansStayValidWithinTheBudget) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    TrainingGraph graph = addRandomWorkspace(
        seed % 2 ? makeRandomChain(12, seed) : makeRandomTrainingDag(30, seed),
        seed);
    PlanningProblem problem = makeProblem(graph, 0.6);
    if (seed > 4)
      problem.link = {1e5, 1e5, 1e-5};
    PlanOptions options;
    options.timeLimitSeconds = 1;
    PlanResult planned;
    std::string error;
    ASSERT_TRUE(planGreedy(problem, options, planned.plan, error)) << error;
    planned.simulation = simulate(problem, planned.plan.schedule);
    Schedule unplanned = makeUnplannedSchedule(problem.graph);
    int64_t keepAll = simulate(problem, unplanned).peakBytes;
    for (double share : {0.0, 0.25, 0.5, 1.0}) {
      SCOPED_TRACE(share);
      PlanningProblem room = problem;
      room.budgetBytes =
          problem.budgetBytes +
          static_cast<int64_t>(share * (keepAll - problem.budgetBytes));
      PlanResult result = planned;
      int64_t alignment = share < 1 ? 256 : 0;
      int removed = reclaimBudget(room, alignment, 10, result);
      ASSERT_TRUE(result.simulation.valid) << result.simulation.error;
      SimulationResult check = simulate(room, result.plan.schedule);
      EXPECT_EQ(check.peakBytes, result.simulation.peakBytes);
      EXPECT_DOUBLE_EQ(check.seconds, result.simulation.seconds);
      EXPECT_LE(result.simulation.peakBytes, room.budgetBytes);
      if (alignment > 0 && removed > 0) {
        EXPECT_TRUE(
            fitsInArena(getScheduleBuffers(room, result.plan.schedule).device,
                        alignment, room.budgetBytes));
      }
      EXPECT_LE(result.simulation.seconds, planned.simulation.seconds);
      EXPECT_EQ(result.plan.schedule.size() + removed,
                planned.plan.schedule.size());
      EXPECT_TRUE(isSubsequence(result.plan.schedule, planned.plan.schedule));
      if (share == 1.0) {
        EXPECT_EQ(result.plan.schedule, unplanned);
      }
      // Over the slow link, half the room buys back recomputes.
      if (seed > 4 && share >= 0.5) {
        EXPECT_LT(result.simulation.seconds, planned.simulation.seconds);
      }
    }
  }
}

} // namespace
