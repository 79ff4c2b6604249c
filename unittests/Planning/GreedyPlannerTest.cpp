//===- GreedyPlannerTest.cpp - The greedy eviction strategy ---------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The `greedy` strategy on random chains and training DAGs (seeded): every
// plan is valid and within its budget over a sweep from the unplanned peak
// down to the smallest budget it meets, planned peaks never rise as the
// budget falls, it swaps when the link is fast and recomputes when it is
// slow, and it fails cleanly below its minimum.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/GraphGenerators.h"
#include "lethe/Planning/Schedule.h"
#include "lethe/Planning/Strategies.h"

#include <gtest/gtest.h>

using namespace lethe::planning;

namespace {

/// Plans `problem` at `steps` budgets from its unplanned peak down to zero
/// and checks each plan; returns the number of budgets that had one.
int sweepBudgets(PlanningProblem problem, int steps, const std::string &what) {
  SimulationResult unplanned =
      simulate(problem, makeUnplannedSchedule(problem.graph));
  EXPECT_TRUE(unplanned.valid) << what << ": " << unplanned.error;
  int64_t previousPeak = unplanned.peakBytes;
  bool failedBefore = false;
  int planned = 0;
  for (int step = 0; step <= steps; ++step) {
    problem.budgetBytes = unplanned.peakBytes - unplanned.peakBytes *
                                                    static_cast<int64_t>(step) /
                                                    static_cast<int64_t>(steps);
    Plan plan;
    std::string error;
    bool found = planGreedy(problem, PlanOptions(), plan, error);
    std::string where =
        what + ", budget " + std::to_string(problem.budgetBytes);
    if (!found) {
      EXPECT_FALSE(error.empty()) << where;
      failedBefore = true;
      continue;
    }
    // Feasibility is monotone too: nothing fits below a budget that failed.
    EXPECT_FALSE(failedBefore) << where << ": a plan below a failed budget";
    ++planned;
    SimulationResult result = simulate(problem, plan.schedule);
    EXPECT_TRUE(result.valid) << where << ": " << result.error;
    if (!result.valid)
      continue;
    EXPECT_LE(result.peakBytes, problem.budgetBytes) << where;
    EXPECT_LE(result.peakBytes, previousPeak)
        << where << ": the peak rose as the budget fell";
    previousPeak = result.peakBytes;
    // The first computation of every node keeps the unplanned order.
    int nextFirst = 0;
    for (const Step &s : plan.schedule)
      if (s.kind == StepKind::Compute && s.id >= nextFirst) {
        EXPECT_EQ(s.id, nextFirst) << where << ": first computes out of order";
        nextFirst = s.id + 1;
      }
    EXPECT_EQ(nextFirst, static_cast<int>(problem.graph.nodes.size())) << where;
    // Only recomputable forward nodes run twice.
    std::vector<int> runs(problem.graph.nodes.size(), 0);
    for (const Step &s : plan.schedule)
      if (s.kind == StepKind::Compute && runs[s.id]++ > 0) {
        EXPECT_EQ(problem.graph.nodes[s.id].role, NodeRole::Forward) << where;
        EXPECT_TRUE(problem.graph.nodes[s.id].recomputable) << where;
      }
  }
  return planned;
}

TEST(GreedyPlannerTest, RandomChainsOverBudgetSweeps) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    PlanningProblem problem =
        makeProblem(makeRandomChain(8 + static_cast<int>(seed) * 3, seed), 1);
    int planned =
        sweepBudgets(problem, 40, "chain seed " + std::to_string(seed));
    // It saves memory: budgets well under the peak have plans.
    EXPECT_GT(planned, 10) << "chain seed " << seed;
  }
}

TEST(GreedyPlannerTest, RandomTrainingDagsOverBudgetSweeps) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    PlanningProblem problem = makeProblem(
        makeRandomTrainingDag(10 + static_cast<int>(seed) * 4, seed), 1);
    int planned = sweepBudgets(problem, 40, "dag seed " + std::to_string(seed));
    EXPECT_GT(planned, 10) << "dag seed " << seed;
  }
}

TEST(GreedyPlannerTest, WorkspaceOverBudgetSweeps) {
  // Nodes holding a workspace while they run: plans stay valid, within the
  // budget (which counts every workspace of every compute), and monotone.
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    TrainingGraph graph =
        seed % 2 ? makeRandomChain(10 + static_cast<int>(seed) * 2, seed)
                 : makeRandomTrainingDag(10 + static_cast<int>(seed) * 3, seed);
    PlanningProblem problem =
        makeProblem(addRandomWorkspace(std::move(graph), seed + 20), 1);
    int planned =
        sweepBudgets(problem, 30, "workspace seed " + std::to_string(seed));
    EXPECT_GT(planned, 5) << "workspace seed " << seed;
  }
}

TEST(GreedyPlannerTest, SlowAndFastLinksOverBudgetSweeps) {
  // No link and slow links make it recompute, middling ones mix recompute
  // and swap, fast ones swap.
  for (uint64_t seed = 1; seed <= 5; ++seed)
    for (double bandwidth : {0.0, 1e3, 1e6, 1e12}) {
      PlanningProblem problem =
          makeProblem(makeRandomTrainingDag(30, seed + 100), 1);
      problem.link = {bandwidth, bandwidth, 0};
      sweepBudgets(problem, 25,
                   "dag seed " + std::to_string(seed) + ", link " +
                       std::to_string(bandwidth));
    }
}

TEST(GreedyPlannerTest, LargeGraphsWithinBudget) {
  // 2,000 forward nodes (about 5,900 in all): the walk down from the
  // unplanned peak is cut short here; the plan still fits.
  for (double bandwidth : {25e9, 1e3}) {
    PlanningProblem problem = makeProblem(makeRandomTrainingDag(2000, 9), 0.5);
    problem.link = {bandwidth, bandwidth, 10e-6};
    Plan plan;
    std::string error;
    ASSERT_TRUE(planGreedy(problem, PlanOptions(), plan, error)) << error;
    SimulationResult result = simulate(problem, plan.schedule);
    ASSERT_TRUE(result.valid) << result.error;
    EXPECT_LE(result.peakBytes, problem.budgetBytes);
    SimulationResult unplanned =
        simulate(problem, makeUnplannedSchedule(problem.graph));
    EXPECT_LT(result.seconds, 2 * unplanned.seconds);
  }
}

TEST(GreedyPlannerTest, KeepsTheUnplannedScheduleWhenItFits) {
  PlanningProblem problem = makeProblem(makeRandomTrainingDag(40, 3), 1);
  Plan plan;
  std::string error;
  ASSERT_TRUE(planGreedy(problem, PlanOptions(), plan, error)) << error;
  EXPECT_EQ(plan.schedule, makeUnplannedSchedule(problem.graph));
}

TEST(GreedyPlannerTest, SwapsWhenTheLinkIsFastAndComputeLong) {
  // 16 KiB at 1 TB/s takes 16 ns against milliseconds of compute.
  PlanningProblem problem = makeProblem(makeRandomChain(30, 7), 0.5);
  problem.link = {1e12, 1e12, 0};
  Plan plan;
  std::string error;
  ASSERT_TRUE(planGreedy(problem, PlanOptions(), plan, error)) << error;
  SimulationResult result = simulate(problem, plan.schedule);
  ASSERT_TRUE(result.valid) << result.error;
  EXPECT_LE(result.peakBytes, problem.budgetBytes);
  EXPECT_GT(result.offloadedBytes, 0);
  EXPECT_EQ(result.recomputeSeconds, 0);
  SimulationResult unplanned =
      simulate(problem, makeUnplannedSchedule(problem.graph));
  // The copies hide under compute.
  EXPECT_LT(result.seconds, unplanned.seconds * 1.001);
}

TEST(GreedyPlannerTest, RecomputesWhenTheLinkIsVerySlow) {
  // 1 KB/s: a copy of one activation takes seconds, a recompute milliseconds.
  PlanningProblem problem = makeProblem(makeRandomChain(30, 7), 0.5);
  problem.link = {1e3, 1e3, 0};
  Plan plan;
  std::string error;
  ASSERT_TRUE(planGreedy(problem, PlanOptions(), plan, error)) << error;
  SimulationResult result = simulate(problem, plan.schedule);
  ASSERT_TRUE(result.valid) << result.error;
  EXPECT_LE(result.peakBytes, problem.budgetBytes);
  EXPECT_EQ(result.offloadedBytes, 0);
  EXPECT_GT(result.recomputeSeconds, 0);
}

TEST(GreedyPlannerTest, FailsCleanlyBelowItsMinimum) {
  PlanningProblem problem = makeProblem(makeRandomTrainingDag(40, 5), 0);
  Plan plan;
  std::string error;
  EXPECT_FALSE(planGreedy(problem, PlanOptions(), plan, error));
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(error.find('\n'), std::string::npos);

  // The driver finds the smallest budget, which then has a plan.
  PlanResult result;
  int64_t minimum = -1;
  EXPECT_FALSE(
      runStrategy("greedy", problem, PlanOptions(), result, error, &minimum));
  ASSERT_GT(minimum, 0) << error;
  EXPECT_NE(error.find("smallest budget"), std::string::npos) << error;
  problem.budgetBytes = minimum;
  ASSERT_TRUE(runStrategy("greedy", problem, PlanOptions(), result, error))
      << error;
  EXPECT_LE(result.simulation.peakBytes, minimum);
  problem.budgetBytes = minimum - 1;
  EXPECT_FALSE(planGreedy(problem, PlanOptions(), plan, error));
}

TEST(GreedyPlannerTest, IsRegisteredAndDeterministic) {
  ASSERT_NE(lookupStrategy("greedy"), nullptr);
  PlanningProblem problem = makeProblem(makeRandomTrainingDag(200, 11), 0.5);
  Plan first, second;
  std::string error;
  ASSERT_TRUE(planGreedy(problem, PlanOptions(), first, error)) << error;
  ASSERT_TRUE(planGreedy(problem, PlanOptions(), second, error)) << error;
  EXPECT_EQ(first.schedule, second.schedule);
}

} // namespace
