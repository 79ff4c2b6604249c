//===- ScheduleTest.cpp - Training graphs, schedules, the simulator -------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The simulator on a small hand-built step whose memory and time are worked
// out below, every rule a schedule can break, and the problem and plan files
// (round trips and their errors).
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/Schedule.h"
#include "lethe/Planning/ArenaLayout.h"
#include "lethe/Planning/GraphGenerators.h"
#include "lethe/Planning/Strategies.h"

#include "HandBuiltGraphs.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace lethe::planning;

namespace {

/// x (100 B, input) -> f0 -> a (200 B) -> f1 -> b (300 B) -> loss -> l (4 B,
/// output) and db (300 B); b1 reads db and a, writes da (200 B); b0 reads da
/// and x, writes dx (100 B, output). Times: f0 1 s, f1 2 s, loss 1 s, b1 4 s,
/// b0 2 s. Host link: 100 B/s each way, no latency.
PlanningProblem makeSmallProblem() {
  PlanningProblem problem;
  TrainingGraph &graph = problem.graph;
  addValue(graph, "x", 100, -1, ValueKind::Input);     // 0
  addValue(graph, "a", 200, 0, ValueKind::Activation); // 1
  addValue(graph, "b", 300, 1, ValueKind::Activation); // 2
  addValue(graph, "l", 4, 2, ValueKind::Temporary);    // 3
  addValue(graph, "db", 300, 2, ValueKind::Gradient);  // 4
  addValue(graph, "da", 200, 3, ValueKind::Gradient);  // 5
  addValue(graph, "dx", 100, 4, ValueKind::Gradient);  // 6
  graph.values[3].isOutput = true;
  graph.values[6].isOutput = true;
  addNode(graph, "f0", 1, NodeRole::Forward, {0}, {1});
  addNode(graph, "f1", 2, NodeRole::Forward, {1}, {2});
  addNode(graph, "loss", 1, NodeRole::Forward, {2}, {3, 4});
  addNode(graph, "b1", 4, NodeRole::Backward, {4, 1}, {5});
  addNode(graph, "b0", 2, NodeRole::Backward, {5, 0}, {6});
  graph.computeUsers();
  problem.budgetBytes = 1 << 20;
  problem.link = {100, 100, 0};
  return problem;
}

TEST(ScheduleTest, UnplannedMemoryAndTime) {
  PlanningProblem problem = makeSmallProblem();
  std::string error;
  ASSERT_TRUE(problem.graph.verify(error)) << error;
  SimulationResult result =
      simulate(problem, makeUnplannedSchedule(problem.graph));
  ASSERT_TRUE(result.valid) << result.error;
  // f0: x a; f1: x a b; loss: x a b l db; b1: x a l db da (b freed after
  // the loss); b0: x l da dx; end: l dx.
  EXPECT_EQ(result.memory,
            (std::vector<int64_t>{300, 600, 904, 804, 404, 104}));
  EXPECT_EQ(result.peakBytes, 904);
  EXPECT_EQ(result.peakStep, 2);
  EXPECT_DOUBLE_EQ(result.seconds, 10);
  EXPECT_DOUBLE_EQ(result.recomputeSeconds, 0);
  EXPECT_DOUBLE_EQ(result.stallSeconds, 0);
}

TEST(ScheduleTest, RecomputeFreesAndCharges) {
  PlanningProblem problem = makeSmallProblem();
  // Recompute a for b1 from x: the first a dies after f1.
  Schedule schedule = {Step::compute(0), Step::compute(1), Step::compute(2),
                       Step::compute(0), Step::compute(3), Step::compute(4)};
  SimulationResult result = simulate(problem, schedule);
  ASSERT_TRUE(result.valid) << result.error;
  // f0: x a; f1: x a b; loss: x b l db; f0 again: x l db a; b1: x l db a da;
  // b0: x l da dx; end: l dx.
  EXPECT_EQ(result.memory,
            (std::vector<int64_t>{300, 600, 704, 604, 804, 404, 104}));
  EXPECT_EQ(result.peakBytes, 804);
  EXPECT_DOUBLE_EQ(result.seconds, 11);
  EXPECT_DOUBLE_EQ(result.recomputeSeconds, 1);
}

TEST(ScheduleTest, OffloadReleasePrefetchAndStalls) {
  PlanningProblem problem = makeSmallProblem();
  // Offload a (200 B: 2 s) after f1, release it before the loss, prefetch
  // it before b1.
  Schedule schedule = {Step::compute(0), Step::compute(1), Step::offload(1),
                       Step::release(1), Step::compute(2), Step::prefetch(1),
                       Step::compute(3), Step::compute(4)};
  SimulationResult result = simulate(problem, schedule);
  ASSERT_TRUE(result.valid) << result.error;
  // Time: f0 0-1, f1 1-3; the offload runs 3-5 and the release waits for it
  // (2 s stall); loss 5-6; the prefetch runs 6-8 and b1 waits for it (2 s
  // stall), 8-12; b0 12-14.
  EXPECT_DOUBLE_EQ(result.seconds, 14);
  EXPECT_DOUBLE_EQ(result.stallSeconds, 4);
  EXPECT_EQ(result.offloadedBytes, 200);
  EXPECT_EQ(result.prefetchedBytes, 200);
  EXPECT_EQ(result.hostPeakBytes, 200);
  // f0 300; f1 600; offload 600; release 600 (freed after it); loss x b l db
  // 704; prefetch x l db a 604; b1 804; b0 404; end 104.
  EXPECT_EQ(result.memory, (std::vector<int64_t>{300, 600, 600, 600, 704, 604,
                                                 804, 404, 104}));
}

TEST(ScheduleTest, WorkspaceIsHeldByEachComputeOnly) {
  // f1 needs 1000 B of workspace, b1 50 B: each compute of them holds it at
  // its step only, and a recompute holds its own.
  PlanningProblem problem = makeSmallProblem();
  problem.graph.nodes[1].workspaceBytes = 1000;
  problem.graph.nodes[3].workspaceBytes = 50;
  std::string error;
  ASSERT_TRUE(problem.graph.verify(error)) << error;
  SimulationResult unplanned =
      simulate(problem, makeUnplannedSchedule(problem.graph));
  ASSERT_TRUE(unplanned.valid) << unplanned.error;
  // As UnplannedMemoryAndTime, f1 and b1 with their workspace.
  EXPECT_EQ(unplanned.memory,
            (std::vector<int64_t>{300, 1600, 904, 854, 404, 104}));
  EXPECT_EQ(unplanned.peakBytes, 1600);
  EXPECT_EQ(unplanned.peakStep, 1);
  // Recomputing b (f1 again) holds f1's workspace a second time.
  Schedule schedule = {Step::compute(0), Step::compute(1), Step::compute(2),
                       Step::compute(1), Step::compute(3), Step::compute(4)};
  SimulationResult recomputed = simulate(problem, schedule);
  ASSERT_TRUE(recomputed.valid) << recomputed.error;
  // f0: x a; f1: x a b +1000; loss: x a b l db; f1 again: x a l db and a
  // new b that nothing reads (the first was freed after the loss) +1000; b1:
  // x a l db da +50; b0: x l da dx; end: l dx.
  EXPECT_EQ(recomputed.memory,
            (std::vector<int64_t>{300, 1600, 904, 1904, 854, 404, 104}));
  // A negative workspace is refused.
  problem.graph.nodes[1].workspaceBytes = -1;
  EXPECT_FALSE(problem.graph.verify(error));
  EXPECT_EQ(error, "node 1 (f1) has a negative workspace");
}

TEST(ScheduleTest, BrokenSchedulesNameTheRule) {
  PlanningProblem problem = makeSmallProblem();
  auto errorOf = [&](Schedule schedule) {
    SimulationResult result = simulate(problem, schedule);
    EXPECT_FALSE(result.valid);
    return result.error;
  };
  EXPECT_EQ(errorOf({Step::compute(1)}),
            "step 0 (compute 1): reads value 1 (a), which is not resident");
  EXPECT_EQ(errorOf({Step::compute(9)}),
            "step 0 (compute 9): there is no such node");
  EXPECT_EQ(errorOf({Step::release(0)}),
            "step 0 (release 0): releases value 0 (x), which is not an "
            "offloaded resident value");
  EXPECT_EQ(errorOf({Step::prefetch(0)}),
            "step 0 (prefetch 0): prefetches value 0 (x), which was never "
            "offloaded");
  EXPECT_EQ(errorOf({Step::offload(0), Step::prefetch(0)}),
            "step 1 (prefetch 0): prefetches value 0 (x), which is already "
            "resident");
  EXPECT_EQ(errorOf({Step::offload(0), Step::offload(0)}),
            "step 1 (offload 0): offloads value 0 (x) a second time");
  EXPECT_EQ(errorOf({Step::offload(7)}),
            "step 0 (offload 7): there is no such value");
  EXPECT_EQ(errorOf({Step::compute(0)}),
            "the step ends without value 3 (l), an output, resident");
  problem.graph.nodes[0].recomputable = false;
  EXPECT_EQ(errorOf({Step::compute(0), Step::compute(0)}),
            "step 1 (compute 0): node f0 cannot be recomputed");
}

TEST(ScheduleTest, GraphVerifierCatchesInconsistencies) {
  PlanningProblem problem = makeSmallProblem();
  std::string error;
  problem.graph.nodes[1].inputs = {2};
  EXPECT_FALSE(problem.graph.verify(error));
  EXPECT_EQ(error, "node 1 (f1) reads value 2 before its producer runs");
  problem = makeSmallProblem();
  problem.graph.values[1].users.clear();
  EXPECT_FALSE(problem.graph.verify(error));
  EXPECT_EQ(error, "value 1 (a) lists users that differ from the nodes "
                   "reading it (call computeUsers)");
}

TEST(ScheduleTest, ProblemFileRoundTripsAndRejectsBadFiles) {
  PlanningProblem problem = makeProblem(makeRandomTrainingDag(12, 7), 0.5);
  std::string text = writeProblemJson(problem);
  PlanningProblem parsed;
  std::string error;
  ASSERT_TRUE(parseProblemJson(text, "p.json", parsed, error)) << error;
  EXPECT_EQ(writeProblemJson(parsed), text);

  auto errorOf = [&](const std::string &bad) {
    PlanningProblem ignored;
    std::string message;
    EXPECT_FALSE(parseProblemJson(bad, "p.json", ignored, message));
    return message;
  };
  EXPECT_EQ(errorOf("{"),
            "planning problem p.json: invalid JSON: parse error at line 1, "
            "column 2: syntax error while parsing object key - unexpected "
            "end of input; expected string literal");
  EXPECT_EQ(errorOf(R"({"format": "lethe-plan"})"),
            "planning problem p.json: 'format' must be \"lethe-problem\"");
  // A number beyond a double's range was an uncaught exception (abort).
  std::string huge = text;
  huge.replace(huge.find("\"budget_bytes\": ") + 16, 1, "1e999, \"x\": ");
  EXPECT_EQ(errorOf(huge), "planning problem p.json: invalid JSON: number "
                           "overflow parsing '1e999'");
  // A field named twice, in any object, is refused (nlohmann kept the last).
  std::string twice = text;
  twice.replace(twice.find("\"budget_bytes\""), 0, "\"budget_bytes\": 1, ");
  EXPECT_EQ(errorOf(twice), "planning problem p.json: invalid JSON: an object "
                            "names the field 'budget_bytes' twice");
  std::string nested = text;
  nested.replace(nested.find("\"bytes\": "), 0, "\"bytes\": 1, ");
  EXPECT_EQ(errorOf(nested), "planning problem p.json: invalid JSON: an object "
                             "names the field 'bytes' twice");
  std::string misspelt = text;
  misspelt.replace(misspelt.find("\"budget_bytes\""), 14, "\"budget_byte\"");
  EXPECT_EQ(errorOf(misspelt),
            "planning problem p.json: unknown field 'budget_byte' in the "
            "problem");
  std::string negative = text;
  negative.replace(negative.find("\"bytes\": ") + 9, 1, "-");
  EXPECT_NE(errorOf(negative).find("value 0 bytes must be in [0, "),
            std::string::npos);
}

TEST(ScheduleTest, ProblemFileCarriesWorkspace) {
  PlanningProblem problem =
      makeProblem(addRandomWorkspace(makeRandomTrainingDag(12, 7), 3), 0.5);
  int withWorkspace = 0;
  for (const GraphNode &node : problem.graph.nodes)
    withWorkspace += node.workspaceBytes > 0;
  ASSERT_GT(withWorkspace, 0);
  std::string text = writeProblemJson(problem);
  PlanningProblem parsed;
  std::string error;
  ASSERT_TRUE(parseProblemJson(text, "p.json", parsed, error)) << error;
  for (size_t node = 0; node < problem.graph.nodes.size(); ++node)
    EXPECT_EQ(parsed.graph.nodes[node].workspaceBytes,
              problem.graph.nodes[node].workspaceBytes);
  // Problems written before workspace was modelled have no field: none.
  std::string old = text;
  for (size_t at;
       (at = old.find(",\n   \"workspace_bytes\": ")) != std::string::npos;)
    old.erase(at, old.find('\n', at + 2) - at);
  ASSERT_EQ(old.find("workspace_bytes"), std::string::npos);
  ASSERT_TRUE(parseProblemJson(old, "old.json", parsed, error)) << error;
  for (const GraphNode &node : parsed.graph.nodes)
    EXPECT_EQ(node.workspaceBytes, 0);
  // Workspace is part of the graph a plan was made for.
  EXPECT_NE(getGraphFingerprint(parsed.graph),
            getGraphFingerprint(problem.graph));
}

TEST(ScheduleTest, PlanFileRoundTripsAndRejectsOtherGraphs) {
  PlanningProblem problem = makeSmallProblem();
  Plan plan;
  plan.strategy = "by-hand";
  plan.schedule = {Step::compute(0), Step::compute(1), Step::compute(2),
                   Step::compute(0), Step::compute(3), Step::compute(4)};
  std::string text = writePlanJson(problem, plan);
  EXPECT_NE(text.find("\"peak_bytes\": 804"), std::string::npos);
  Plan parsed;
  std::string error;
  ASSERT_TRUE(parsePlanJson(text, "plan.json", problem, parsed, error))
      << error;
  EXPECT_EQ(parsed.strategy, "by-hand");
  EXPECT_EQ(parsed.schedule, plan.schedule);
  EXPECT_LT(parsed.lowerBoundSeconds, 0); // none written, none read

  // A bound, and whether it holds for recompute-only plans only, round-trip.
  for (bool coversOffloading : {true, false}) {
    Plan bounded = plan;
    bounded.lowerBoundSeconds = 0.25;
    bounded.lowerBoundCoversOffloading = coversOffloading;
    std::string boundedText = writePlanJson(problem, bounded);
    EXPECT_EQ(boundedText.find("lower_bound_recompute_only") ==
                  std::string::npos,
              coversOffloading);
    ASSERT_TRUE(parsePlanJson(boundedText, "plan.json", problem, parsed, error))
        << error;
    EXPECT_EQ(parsed.lowerBoundSeconds, 0.25);
    EXPECT_EQ(parsed.lowerBoundCoversOffloading, coversOffloading);
    // Read for another budget, or with other times, the plan keeps its
    // schedule but not the bound proved for the one it was made for.
    PlanningProblem otherBudget = problem;
    otherBudget.budgetBytes += 256;
    ASSERT_TRUE(
        parsePlanJson(boundedText, "plan.json", otherBudget, parsed, error))
        << error;
    EXPECT_EQ(parsed.schedule, plan.schedule);
    EXPECT_LT(parsed.lowerBoundSeconds, 0);
    EXPECT_TRUE(parsed.lowerBoundCoversOffloading);
    PlanningProblem otherTimes = problem;
    otherTimes.graph.nodes[1].seconds *= 2;
    ASSERT_TRUE(
        parsePlanJson(boundedText, "plan.json", otherTimes, parsed, error))
        << error;
    EXPECT_LT(parsed.lowerBoundSeconds, 0);
    if (coversOffloading)
      continue;
    std::string badFlag = boundedText;
    size_t flag = badFlag.find("true");
    ASSERT_NE(flag, std::string::npos);
    badFlag.replace(flag, 4, "\"yes\"");
    EXPECT_FALSE(parsePlanJson(badFlag, "plan.json", problem, parsed, error));
    EXPECT_EQ(error, "plan plan.json: 'lower_bound_recompute_only' must be "
                     "true or false, got \"yes\"");
  }

  PlanningProblem other = makeSmallProblem();
  other.graph.values[2].bytes = 301;
  EXPECT_FALSE(parsePlanJson(text, "plan.json", other, parsed, error));
  EXPECT_NE(error.find("plan plan.json: it was made for a different training "
                       "step, or other sizes of it (this one has 5 nodes, 7 "
                       "values, fingerprint "),
            std::string::npos)
      << error;
  std::string badStep = text;
  badStep.replace(badStep.find("\"compute\""), 9, "\"recompute\"");
  EXPECT_FALSE(parsePlanJson(badStep, "plan.json", problem, parsed, error));
  EXPECT_EQ(error, "plan plan.json: step 0 has kind 'recompute'; expected "
                   "compute, offload, release or prefetch");
  // The optional numbers are checked whether or not a bound uses them.
  for (auto [field, bad, message] :
       {std::tuple("budget_bytes", "1e30",
                   "'budget_bytes' must be a whole number, got 1e+30"),
        std::tuple("peak_bytes", "-5",
                   "'peak_bytes' must be in [0, 9223372036854775807], got -5"),
        std::tuple("seconds", "\"1 s\"",
                   "'seconds' must be a number, got \"1 s\"")}) {
    std::string badNumber = text;
    size_t at = badNumber.find(std::string("\"") + field + "\": ");
    ASSERT_NE(at, std::string::npos) << field;
    at += std::string(field).size() + 4;
    badNumber.replace(at, badNumber.find_first_of(",\n", at) - at, bad);
    EXPECT_FALSE(parsePlanJson(badNumber, "plan.json", problem, parsed, error))
        << field;
    EXPECT_EQ(error, std::string("plan plan.json: ") + message);
  }
}

TEST(ScheduleTest, NoneStrategyAndMinimumBudget) {
  PlanningProblem problem = makeSmallProblem();
  problem.budgetBytes = 900;
  PlanResult result;
  std::string error;
  int64_t minimum = 0;
  EXPECT_FALSE(
      runStrategy("none", problem, PlanOptions(), result, error, &minimum));
  EXPECT_EQ(minimum, 904);
  EXPECT_EQ(error, "no plan fits the budget of 900 bytes with strategy "
                   "'none' (keeping everything needs 904 bytes); the "
                   "smallest budget it can meet is 904 bytes, so raise "
                   "budget= to at least that");
  problem.budgetBytes = 904;
  ASSERT_TRUE(runStrategy("none", problem, PlanOptions(), result, error))
      << error;
  EXPECT_EQ(result.simulation.peakBytes, 904);
  EXPECT_FALSE(runStrategy("nope", problem, PlanOptions(), result, error));
  EXPECT_EQ(error.rfind("unknown strategy 'nope'; expected one of none", 0),
            0u);
}

TEST(ScheduleTest, GeneratorsMakeValidGraphs) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    for (const TrainingGraph &graph :
         {makeRandomChain(10, seed), makeRandomTrainingDag(30, seed)}) {
      std::string error;
      ASSERT_TRUE(graph.verify(error)) << error;
      PlanningProblem problem = makeProblem(graph, 1.0);
      SimulationResult result =
          simulate(problem, makeUnplannedSchedule(problem.graph));
      ASSERT_TRUE(result.valid) << result.error;
      EXPECT_EQ(result.peakBytes, problem.budgetBytes);
    }
  }
  // A chain of n stages: n forward nodes, the loss, n backward nodes and n
  // optimizer nodes.
  EXPECT_EQ(makeRandomChain(10, 1).nodes.size(), 31u);
}

// With the arena bounded (what --lethe-plan-memory asks), a budget the
// plan's peak meets but its laid-out arena does not is refused, saying so,
// with a smallest budget whose arena fits.
TEST(ScheduleTest, ArenaMustFitTheBudget) {
  PlanningProblem problem = makeProblem(makeRandomChain(6, 3), 1.0);
  // Sizes a byte past a block: the arena's alignment costs a block each.
  for (GraphValue &value : problem.graph.values)
    value.bytes = 256 * (value.bytes / 256) + 1;
  problem.budgetBytes =
      simulate(problem, makeUnplannedSchedule(problem.graph)).peakBytes;
  PlanOptions options;
  PlanResult result;
  std::string error;
  ASSERT_TRUE(runStrategy("none", problem, options, result, error)) << error;
  options.arenaAlignment = 256;
  int64_t minimum = -1;
  EXPECT_FALSE(runStrategy("none", problem, options, result, error, &minimum));
  EXPECT_NE(error.find("with strategy 'none' (a plan with a peak of"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("lays out in an arena of"), std::string::npos) << error;
  ASSERT_GT(minimum, problem.budgetBytes);
  problem.budgetBytes = minimum;
  ASSERT_TRUE(runStrategy("none", problem, options, result, error)) << error;
  ScheduleBuffers buffers = getScheduleBuffers(problem, result.plan.schedule);
  EXPECT_LE(layOutArena(buffers.device, 256, /*search=*/false).arenaBytes,
            minimum);
}

} // namespace
