//===- ChainTest.cpp - The chain reduction and the chain strategies -------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The chain reduction on hand-built and random graphs; the chain programme
// against an exhaustive search over the schedules it optimises over (built
// here from node names, independently of the programme, and judged by the
// simulator); its memory model against the simulator on every strategy;
// validity, budgets and monotonicity of sqrt, chain and chain-offload on
// random chains and training DAGs; and all of that on the planning problems
// of the bundled models (Inputs/, in LETHE_PLANNING_INPUTS). Seeded.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/ChainProgramme.h"
#include "lethe/Planning/ChainReduction.h"
#include "lethe/Planning/GraphGenerators.h"
#include "lethe/Planning/Strategies.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

using namespace lethe::planning;

namespace {

int64_t unplannedPeak(const PlanningProblem &problem) {
  return simulate(problem, makeUnplannedSchedule(problem.graph)).peakBytes;
}

/// Runs strategy `name`; on success returns the checked simulation.
bool plan(const std::string &name, const PlanningProblem &problem,
          SimulationResult &simulation) {
  PlanResult result;
  std::string error;
  if (!runStrategy(name, problem, PlanOptions(), result, error))
    return false;
  simulation = result.simulation;
  return true;
}

/// x -> f0 -> a0 -> f1 -> a1; f2 reads a0 and a1 (a skip) -> a2 -> f3 ->
/// a3 -> loss; one backward node per forward node.
TrainingGraph makeSkipGraph() {
  TrainingGraph graph;
  auto value = [&](const char *name, int producer) {
    GraphValue v;
    v.name = name;
    v.bytes = 1024;
    v.producer = producer;
    v.kind = producer < 0 ? ValueKind::Input : ValueKind::Activation;
    graph.values.push_back(v);
    return static_cast<int>(graph.values.size()) - 1;
  };
  auto node = [&](const char *name, NodeRole role, std::vector<int> inputs) {
    GraphNode n;
    n.name = name;
    n.seconds = 1;
    n.role = role;
    n.inputs = std::move(inputs);
    graph.nodes.push_back(n);
    return static_cast<int>(graph.nodes.size()) - 1;
  };
  auto output = [&](int producer, const char *name) {
    int v = value(name, producer);
    graph.nodes[producer].outputs.push_back(v);
    return v;
  };
  int x = value("x", -1);
  int a0 = output(node("f0", NodeRole::Forward, {x}), "a0");
  int a1 = output(node("f1", NodeRole::Forward, {a0}), "a1");
  int a2 = output(node("f2", NodeRole::Forward, {a0, a1}), "a2");
  int a3 = output(node("f3", NodeRole::Forward, {a2}), "a3");
  int loss = node("loss", NodeRole::Forward, {a3});
  int l = output(loss, "l");
  graph.values[l].isOutput = true;
  int d3 = output(loss, "d3");
  int d2 = output(node("b3", NodeRole::Backward, {d3, a2, a3}), "d2");
  int d1 = output(node("b2", NodeRole::Backward, {d2, a0, a1, a2}), "d1");
  int d0 = output(node("b1", NodeRole::Backward, {d1, a0, a1}), "d0");
  int dx = output(node("b0", NodeRole::Backward, {d0, x, a0}), "dx");
  graph.values[dx].isOutput = true;
  graph.computeUsers();
  return graph;
}

TEST(ChainReductionTest, ChainGivesOneStagePerLayer) {
  for (int layers : {1, 2, 5, 17}) {
    TrainingGraph graph = makeRandomChain(layers, 40 + layers);
    ChainReduction chain;
    std::string error;
    ASSERT_TRUE(reduceToChain(graph, chain, error)) << error;
    ASSERT_EQ(chain.stages.size(), static_cast<size_t>(layers));
    for (int k = 0; k < layers; ++k) {
      const ChainStage &stage = chain.stages[k];
      // Layer k (and the loss in the last stage); its backward and update.
      EXPECT_EQ(stage.forwardNodes.front(), k);
      EXPECT_EQ(stage.forwardNodes.size(), k + 1 == layers ? 2u : 1u);
      ASSERT_EQ(stage.backwardNodes.size(), 2u);
      EXPECT_EQ(graph.nodes[stage.backwardNodes[0]].name,
                "b" + std::to_string(k));
      EXPECT_EQ(graph.nodes[stage.backwardNodes[1]].name,
                "update" + std::to_string(k));
      if (k + 1 < layers) {
        EXPECT_EQ(graph.values[stage.outputValue].name,
                  "a" + std::to_string(k));
        EXPECT_EQ(stage.outputBytes, graph.values[stage.outputValue].bytes);
      }
      EXPECT_EQ(stage.inputValue,
                k == 0 ? -1 : chain.stages[k - 1].outputValue);
    }
  }
}

TEST(ChainReductionTest, SkipConnectionsMakeBiggerBlocks) {
  TrainingGraph graph = makeSkipGraph();
  std::string error;
  ASSERT_TRUE(graph.verify(error)) << error;
  ChainReduction chain;
  ASSERT_TRUE(reduceToChain(graph, chain, error)) << error;
  // Cuts after f0 (a0 alone crosses) and after f2 (a2); a0 and a1 both
  // cross between f1 and f2; the loss ends the last block.
  ASSERT_EQ(chain.stages.size(), 3u);
  EXPECT_EQ(chain.stages[0].forwardNodes, (std::vector<int>{0}));
  EXPECT_EQ(chain.stages[1].forwardNodes, (std::vector<int>{1, 2}));
  EXPECT_EQ(chain.stages[2].forwardNodes, (std::vector<int>{3, 4}));
  // b3 -> stage 2; b2, b1 read a1 -> stage 1; b0 reads a0 only -> 0.
  EXPECT_EQ(chain.stages[2].backwardNodes, (std::vector<int>{5}));
  EXPECT_EQ(chain.stages[1].backwardNodes, (std::vector<int>{6, 7}));
  EXPECT_EQ(chain.stages[0].backwardNodes, (std::vector<int>{8}));
  // Stage 1 keeps a1 and a2 (what b2 and b1 read of it); a0 is its input.
  EXPECT_EQ(chain.stages[1].keptValues, (std::vector<int>{2, 3}));
  EXPECT_EQ(chain.stages[1].inputValue, 1);
  EXPECT_EQ(chain.stages[1].outputValue, 3);
}

TEST(ChainReductionTest, RandomDagsGiveOrderedBlocks) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    TrainingGraph graph = makeRandomTrainingDag(30, seed);
    ChainReduction chain;
    std::string error;
    ASSERT_TRUE(reduceToChain(graph, chain, error)) << error;
    EXPECT_LT(chain.stages.size(), 31u);
    int next = 0;
    for (const ChainStage &stage : chain.stages)
      for (int node : stage.forwardNodes)
        EXPECT_EQ(node, next++);
    // The backward blocks come in reverse stage order.
    int previous = static_cast<int>(chain.stages.size());
    for (int node = next; node < static_cast<int>(graph.nodes.size()); ++node) {
      EXPECT_LE(chain.stageOfNode[node], previous);
      previous = chain.stageOfNode[node];
    }
    ChainReduction merged;
    ASSERT_TRUE(reduceToChain(graph, merged, error, 3)) << error;
    EXPECT_LE(merged.stages.size(), 3u);
  }
}

/// `graph` with a first forward node that makes a scalar from a new
/// optimizer-state input (as Adam's bias corrections come from the step
/// counter), which every optimizer node reads.
TrainingGraph addStepScalar(const TrainingGraph &graph) {
  TrainingGraph result;
  result.values = graph.values;
  for (GraphValue &value : result.values)
    if (value.producer >= 0)
      ++value.producer;
  GraphValue counter;
  counter.name = "step";
  counter.bytes = 8;
  counter.kind = ValueKind::OptimizerState;
  result.values.push_back(counter);
  GraphValue scalar;
  scalar.name = "correction";
  scalar.bytes = 8;
  scalar.producer = 0;
  result.values.push_back(scalar);
  int scalarId = static_cast<int>(result.values.size()) - 1;
  GraphNode correction;
  correction.name = "bias_correction";
  correction.seconds = 1e-4;
  correction.inputs = {scalarId - 1};
  correction.outputs = {scalarId};
  result.nodes.push_back(correction);
  for (GraphNode node : graph.nodes) {
    if (node.role == NodeRole::Optimizer)
      node.inputs.push_back(scalarId);
    result.nodes.push_back(node);
  }
  result.computeUsers();
  return result;
}

/// Calls `visit` with every strategy of the programme's family on
/// `numStages` stages.
void forEachStrategy(int numStages,
                     const std::function<void(const ChainStrategy &)> &visit) {
  ChainStrategy strategy(numStages);
  // The sub-problems still to choose for.
  std::function<void(std::vector<std::pair<int, int>>)> search =
      [&](std::vector<std::pair<int, int>> pending) {
        if (pending.empty()) {
          visit(strategy);
          return;
        }
        auto [first, last] = pending.back();
        pending.pop_back();
        for (int choice = first; choice <= last; ++choice) {
          std::vector<std::pair<int, int>> next = pending;
          strategy.choice(first, last) = choice == first ? 0 : choice;
          if (choice > first) {
            next.push_back({first, choice - 1});
            next.push_back({choice, last});
          } else if (first < last) {
            next.push_back({first + 1, last});
          }
          search(next);
        }
      };
  if (numStages > 0)
    search({{0, numStages - 1}});
}

/// A strategy's simulated time and peak, and its modelled peak.
struct StrategyOutcome {
  double seconds = 0;
  int64_t peak = 0;
  int64_t modelled = 0;
};

/// Simulates and models every strategy of the family on `chain`.
std::vector<StrategyOutcome>
simulateEveryStrategy(const PlanningProblem &problem,
                      const ChainReduction &chain) {
  std::vector<StrategyOutcome> outcomes;
  forEachStrategy(
      static_cast<int>(chain.stages.size()),
      [&](const ChainStrategy &strategy) {
        SimulationResult simulation = simulate(
            problem, translateOperations(chain, expandStrategy(strategy)));
        EXPECT_TRUE(simulation.valid) << simulation.error;
        outcomes.push_back({simulation.seconds, simulation.peakBytes,
                            modelStrategyPeak(chain, strategy)});
      });
  return outcomes;
}

/// How many of `outcomes` the model gets wrong.
int countMismatches(const std::vector<StrategyOutcome> &outcomes) {
  return static_cast<int>(std::count_if(
      outcomes.begin(), outcomes.end(), [](const StrategyOutcome &outcome) {
        return outcome.modelled != outcome.peak;
      }));
}

/// Checks the programme against `all` (every strategy's outcome) at budgets
/// from the lowest peak to the highest: the fastest within the budget, with
/// the simulated peak it predicts.
void expectOptimal(const PlanningProblem &problem, const ChainReduction &chain,
                   const std::vector<StrategyOutcome> &all,
                   const std::string &name) {
  int64_t lowest = all.front().peak, highest = all.front().peak;
  for (const StrategyOutcome &outcome : all) {
    lowest = std::min(lowest, outcome.peak);
    highest = std::max(highest, outcome.peak);
  }
  for (int step = 0; step <= 8; ++step) {
    int64_t budget = lowest + (highest - lowest) * step / 8;
    double best = -1;
    for (const StrategyOutcome &outcome : all)
      if (outcome.peak <= budget && (best < 0 || outcome.seconds < best))
        best = outcome.seconds;
    ChainProgrammeResult solution;
    ASSERT_TRUE(
        solveChainProgramme(chain, budget, ChainProgrammeOptions(), solution))
        << name << ", budget " << budget;
    SimulationResult simulation = simulate(
        problem, translateOperations(chain, expandStrategy(solution.strategy)));
    EXPECT_EQ(simulation.peakBytes, solution.peakBytes) << name;
    EXPECT_LE(simulation.peakBytes, budget) << name;
    EXPECT_NEAR(simulation.seconds, best, 1e-9 * best)
        << name << ", budget " << budget;
  }
  ChainProgrammeResult solution;
  EXPECT_FALSE(
      solveChainProgramme(chain, lowest - 1, ChainProgrammeOptions(), solution))
      << name;
}

TEST(ChainReductionTest, ValuesNotDependingOnTheDataStayOutsideTheChain) {
  // A scalar every update reads would otherwise tie all backward nodes to
  // the first stage.
  PlanningProblem problem =
      makeProblem(addStepScalar(makeRandomChain(6, 3)), 1.0);
  const TrainingGraph &graph = problem.graph;
  std::string error;
  ASSERT_TRUE(graph.verify(error)) << error;
  ChainReduction chain;
  ASSERT_TRUE(reduceToChain(graph, chain, error)) << error;
  ASSERT_EQ(chain.stages.size(), 6u);
  for (int k = 0; k < 6; ++k) {
    const ChainStage &stage = chain.stages[k];
    ASSERT_EQ(stage.backwardNodes.size(), 2u);
    EXPECT_EQ(graph.nodes[stage.backwardNodes[0]].name,
              "b" + std::to_string(k));
    EXPECT_EQ(graph.nodes[stage.backwardNodes[1]].name,
              "update" + std::to_string(k));
    // Its node is never recomputed: the scalar stays resident.
    for (const std::vector<int> &nodes : stage.recomputeNodes)
      EXPECT_EQ(std::count(nodes.begin(), nodes.end(), 0), 0);
  }
  std::vector<StrategyOutcome> all = simulateEveryStrategy(problem, chain);
  EXPECT_EQ(countMismatches(all), 0);
  expectOptimal(problem, chain, all, "step scalar");
}

/// Every schedule of the programme's family on a chain from
/// makeRandomChain, built from node names, with its simulated time and peak.
std::vector<std::pair<double, int64_t>>
enumerateChainSchedules(const PlanningProblem &problem, int layers) {
  const TrainingGraph &graph = problem.graph;
  std::map<std::string, int> byName;
  for (int node = 0; node < static_cast<int>(graph.nodes.size()); ++node)
    byName[graph.nodes[node].name] = node;
  auto forward = [&](int layer) {
    std::vector<int> nodes = {byName.at("f" + std::to_string(layer))};
    if (layer + 1 == layers)
      nodes.push_back(byName.at("loss"));
    return nodes;
  };
  auto backward = [&](int layer) {
    return std::vector<int>{byName.at("b" + std::to_string(layer)),
                            byName.at("update" + std::to_string(layer))};
  };
  // A task: nodes to run, or a sub-problem (first, last) to solve.
  struct Task {
    std::vector<int> nodes;
    int first = -1, last = -1;
  };
  std::vector<std::pair<double, int64_t>> found;
  Schedule schedule;
  std::function<void(std::vector<Task>)> search = [&](std::vector<Task> stack) {
    if (stack.empty()) {
      SimulationResult result = simulate(problem, schedule);
      EXPECT_TRUE(result.valid) << result.error;
      found.push_back({result.seconds, result.peakBytes});
      return;
    }
    Task task = stack.back();
    stack.pop_back();
    size_t mark = schedule.size();
    if (task.first < 0) {
      for (int node : task.nodes)
        schedule.push_back(Step::compute(node));
      search(stack);
      schedule.resize(mark);
      return;
    }
    int s = task.first, t = task.last;
    // Keep everything of layer s, solve (s + 1, t), its backward.
    {
      std::vector<Task> next = stack;
      next.push_back({backward(s)});
      if (s < t)
        next.push_back({{}, s + 1, t});
      for (int node : forward(s))
        schedule.push_back(Step::compute(node));
      search(next);
      schedule.resize(mark);
    }
    // Checkpoint s, run to split - 1, solve (split, t), then (s, split - 1).
    for (int split = s + 1; split <= t; ++split) {
      std::vector<Task> next = stack;
      next.push_back({{}, s, split - 1});
      next.push_back({{}, split, t});
      for (int layer = s; layer < split; ++layer)
        for (int node : forward(layer))
          schedule.push_back(Step::compute(node));
      search(next);
      schedule.resize(mark);
    }
  };
  search({{{}, 0, layers - 1}});
  return found;
}

TEST(ChainProgrammeTest, EqualsExhaustiveSearchOnChains) {
  // Large Schroeder numbers: the family's size for 1..10 stages.
  const size_t familySize[] = {0,   1,    2,    6,     22,    90,
                               394, 1806, 8558, 41586, 206098};
  struct Case {
    int layers;
    uint64_t seed;
  };
  std::vector<Case> cases;
  for (int layers = 1; layers <= 8; ++layers)
    for (uint64_t seed = 1; seed <= 3; ++seed)
      cases.push_back({layers, 100 * layers + seed});
  cases.push_back({9, 7});
  cases.push_back({10, 11});
  for (const Case &c : cases) {
    PlanningProblem problem =
        makeProblem(makeRandomChain(c.layers, c.seed), 1.0);
    std::vector<std::pair<double, int64_t>> all =
        enumerateChainSchedules(problem, c.layers);
    ASSERT_EQ(all.size(), familySize[c.layers]);
    int64_t lowest = all.front().second;
    for (const auto &entry : all)
      lowest = std::min(lowest, entry.second);
    int64_t highest = unplannedPeak(problem);
    for (int step = 0; step <= 6; ++step) {
      problem.budgetBytes = lowest + (highest - lowest) * step / 6;
      double best = -1;
      for (const auto &entry : all)
        if (entry.second <= problem.budgetBytes &&
            (best < 0 || entry.first < best))
          best = entry.first;
      ASSERT_GE(best, 0);
      SimulationResult simulation;
      ASSERT_TRUE(plan("chain", problem, simulation))
          << c.layers << " layers, seed " << c.seed << ", budget "
          << problem.budgetBytes;
      EXPECT_NEAR(simulation.seconds, best, 1e-9 * best)
          << c.layers << " layers, seed " << c.seed << ", budget "
          << problem.budgetBytes;
    }
    // Below the smallest peak of the family there is no plan.
    problem.budgetBytes = lowest - 1;
    SimulationResult simulation;
    EXPECT_FALSE(plan("chain", problem, simulation));
  }
}

TEST(ChainProgrammeTest, ModelIsExactOnChains) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    PlanningProblem problem = makeProblem(makeRandomChain(12, seed), 1.0);
    ChainReduction chain;
    std::string error;
    ASSERT_TRUE(reduceToChain(problem.graph, chain, error)) << error;
    int64_t high = unplannedPeak(problem);
    double base =
        simulate(problem, makeUnplannedSchedule(problem.graph)).seconds;
    for (int step = 0; step <= 10; ++step) {
      int64_t budget = high - high * step / 20;
      ChainProgrammeResult solution;
      if (!solveChainProgramme(chain, budget, ChainProgrammeOptions(),
                               solution))
        break;
      SimulationResult simulation = simulate(
          problem,
          translateOperations(chain, expandStrategy(solution.strategy)));
      ASSERT_TRUE(simulation.valid) << simulation.error;
      EXPECT_EQ(simulation.peakBytes, solution.peakBytes) << seed;
      EXPECT_NEAR(simulation.seconds, base + solution.recomputeSeconds,
                  1e-9 * base);
    }
  }
}

// Solves that share a scratch table find what solves of their own do,
// whatever the earlier solves left in it: budgets falling (tables
// shrinking), then rising (growing), with and without offloading.
TEST(ChainProgrammeTest, ScratchSharedBetweenSolvesChangesNothing) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    PlanningProblem problem =
        makeProblem(makeRandomTrainingDag(14, 70 + seed), 1.0);
    ChainReduction chain;
    std::string error;
    ASSERT_TRUE(reduceToChain(problem.graph, chain, error)) << error;
    int64_t high = unplannedPeak(problem);
    std::vector<int64_t> budgets;
    for (int step = 0; step <= 8; ++step)
      budgets.push_back(high - high * step / 16);
    for (int step = 8; step >= 0; --step)
      budgets.push_back(high - high * step / 16);
    ChainProgrammeScratch scratch;
    int solved = 0;
    for (bool offload : {false, true})
      for (int64_t budget : budgets) {
        ChainProgrammeOptions own, shared;
        if (offload)
          own.offloadLink = shared.offloadLink = &problem.link;
        shared.scratch = &scratch;
        ChainProgrammeResult alone, together;
        bool found = solveChainProgramme(chain, budget, own, alone);
        ASSERT_EQ(solveChainProgramme(chain, budget, shared, together), found)
            << seed << ", budget " << budget;
        if (!found)
          continue;
        ++solved;
        EXPECT_EQ(together.strategy.choices, alone.strategy.choices)
            << seed << ", budget " << budget;
        EXPECT_EQ(together.peakBytes, alone.peakBytes);
        EXPECT_EQ(together.recomputeSeconds, alone.recomputeSeconds);
      }
    EXPECT_GT(solved, 0) << seed;
  }
}

TEST(ChainProgrammeTest, ModelIsExactOnEveryStrategy) {
  // Training DAGs (blocks merged where a backward node reads an older value,
  // and to at most 6 blocks), and chains with a forward-only input and
  // layers that cannot be recomputed.
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    PlanningProblem problem = makeProblem(
        makeRandomTrainingDag(8 + static_cast<int>(seed), seed), 1.0);
    ChainReduction chain;
    std::string error;
    ASSERT_TRUE(reduceToChain(problem.graph, chain, error, 6)) << error;
    std::vector<StrategyOutcome> all = simulateEveryStrategy(problem, chain);
    EXPECT_EQ(countMismatches(all), 0) << "seed " << seed;
    expectOptimal(problem, chain, all, "dag " + std::to_string(seed));
  }
}

TEST(ChainProgrammeTest, ModelIsExactWithWorkspace) {
  // Nodes that hold a workspace while they run (in their first computation
  // and in every recompute): the model's peak is still the simulated one on
  // every strategy, and the programme still equals exhaustive search, on
  // chains and training DAGs.
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    for (bool dag : {false, true}) {
      TrainingGraph graph =
          dag ? makeRandomTrainingDag(8 + static_cast<int>(seed), seed)
              : makeRandomChain(6, seed);
      PlanningProblem problem =
          makeProblem(addRandomWorkspace(std::move(graph), 50 + seed), 1.0);
      ChainReduction chain;
      std::string error;
      ASSERT_TRUE(reduceToChain(problem.graph, chain, error, 6)) << error;
      std::vector<StrategyOutcome> all = simulateEveryStrategy(problem, chain);
      std::string name = (dag ? "dag " : "chain ") + std::to_string(seed);
      EXPECT_EQ(countMismatches(all), 0) << name;
      expectOptimal(problem, chain, all, name);
    }
  }
  // With offloading too.
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    PlanningProblem problem = makeProblem(
        addRandomWorkspace(makeRandomChain(10, seed), 70 + seed), 1.0);
    ChainReduction chain;
    std::string error;
    ASSERT_TRUE(reduceToChain(problem.graph, chain, error)) << error;
    int64_t high = unplannedPeak(problem);
    for (int step = 0; step <= 6; ++step) {
      problem.budgetBytes = high - high * step / 10;
      ChainProgrammeOptions options;
      options.offloadLink = &problem.link;
      ChainProgrammeResult result;
      if (!solveChainProgramme(chain, problem.budgetBytes, options, result))
        break;
      SimulationResult simulated = simulate(
          problem, translateOperations(chain, expandStrategy(result.strategy)));
      ASSERT_TRUE(simulated.valid) << simulated.error;
      EXPECT_EQ(result.peakBytes, simulated.peakBytes) << "seed " << seed;
      EXPECT_LE(simulated.peakBytes, problem.budgetBytes);
    }
  }
}

/// Budgets from the unplanned peak down, in `steps` steps to `fraction` of
/// it.
std::vector<int64_t> sweep(const PlanningProblem &problem, int steps,
                           double fraction) {
  int64_t high = unplannedPeak(problem);
  std::vector<int64_t> budgets;
  for (int step = 0; step <= steps; ++step)
    budgets.push_back(high - static_cast<int64_t>((1 - fraction) * high) *
                                 step / steps);
  return budgets;
}

TEST(ChainStrategiesTest, PeakNeverRisesAsTheBudgetTightens) {
  for (uint64_t seed = 1; seed <= 6; ++seed)
    for (bool dag : {false, true}) {
      PlanningProblem problem = makeProblem(
          dag ? makeRandomTrainingDag(25, seed) : makeRandomChain(20, seed),
          1.0);
      for (const char *name : {"chain", "sqrt", "chain-offload"}) {
        int64_t previous = -1;
        for (int64_t budget : sweep(problem, 30, 0.2)) {
          problem.budgetBytes = budget;
          SimulationResult simulation;
          if (!plan(name, problem, simulation))
            break;
          if (previous >= 0) {
            EXPECT_LE(simulation.peakBytes, previous)
                << name << " seed " << seed << (dag ? " dag" : " chain");
          }
          previous = simulation.peakBytes;
        }
      }
    }
}

TEST(ChainStrategiesTest, ValidWithinBudgetOnRandomDags) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    PlanningProblem problem =
        makeProblem(makeRandomTrainingDag(10 + 3 * seed, seed), 1.0);
    for (int64_t budget : sweep(problem, 8, 0.3)) {
      problem.budgetBytes = budget;
      SimulationResult chain, offload, sqrtResult;
      // runStrategy checks validity and the budget of every plan it returns.
      bool chainFound = plan("chain", problem, chain);
      bool offloadFound = plan("chain-offload", problem, offload);
      bool sqrtFound = plan("sqrt", problem, sqrtResult);
      if (budget == unplannedPeak(problem)) {
        EXPECT_TRUE(chainFound && offloadFound && sqrtFound) << seed;
      }
      if (chainFound) {
        ASSERT_TRUE(offloadFound) << seed;
        EXPECT_LE(offload.seconds, chain.seconds * (1 + 1e-9)) << seed;
      }
    }
  }
}

/// The offloading programme's plan at `problem`'s budget, as translated
/// (each release right after its offload, each prefetch right before the
/// block that reads it back).
bool solveOffloading(const PlanningProblem &problem,
                     const ChainReduction &chain, ChainProgrammeResult &result,
                     SimulationResult &simulated) {
  ChainProgrammeOptions options;
  options.offloadLink = &problem.link;
  if (!solveChainProgramme(chain, problem.budgetBytes, options, result))
    return false;
  simulated = simulate(
      problem, translateOperations(chain, expandStrategy(result.strategy)));
  return true;
}

int countOffloads(const ChainStrategy &strategy) {
  return static_cast<int>(std::count_if(
      strategy.choices.begin(), strategy.choices.end(), [&](int choice) {
        return choice == kAllInputOffloaded || choice >= strategy.numStages;
      }));
}

TEST(ChainProgrammeTest, OffloadingProgrammeIsExactAndPays) {
  // With a link on which copies are cheaper than recomputes, the programme
  // offloads instead of recomputing: its plans run as modelled, peak and
  // time (translated, a value is off the device from its release to its
  // prefetch, and the compute stream waits for both copies), within the
  // budget, and never slower than without.
  int offloading = 0, faster = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    PlanningProblem problem = makeProblem(makeRandomChain(12, seed), 1.0);
    ChainReduction chain;
    std::string error;
    ASSERT_TRUE(reduceToChain(problem.graph, chain, error)) << error;
    for (int64_t budget : sweep(problem, 8, 0.3)) {
      problem.budgetBytes = budget;
      ChainProgrammeResult result;
      SimulationResult simulated;
      if (!solveOffloading(problem, chain, result, simulated))
        continue;
      ASSERT_TRUE(simulated.valid) << simulated.error;
      EXPECT_EQ(modelStrategyPeak(chain, result.strategy), simulated.peakBytes)
          << "seed " << seed << ", budget " << budget;
      EXPECT_LE(simulated.peakBytes, budget);
      // Its time too: the unplanned compute, the recomputes and the copies.
      double unplanned =
          simulate(problem, makeUnplannedSchedule(problem.graph)).seconds;
      EXPECT_NEAR(simulated.seconds, unplanned + result.recomputeSeconds,
                  1e-9 * unplanned);
      offloading += countOffloads(result.strategy) > 0;
      ChainProgrammeResult plain;
      if (!solveChainProgramme(chain, budget, ChainProgrammeOptions(), plain))
        continue;
      double plainSeconds =
          simulate(problem,
                   translateOperations(chain, expandStrategy(plain.strategy)))
              .seconds;
      EXPECT_LE(simulated.seconds, plainSeconds * (1 + 1e-9));
      faster += simulated.seconds < plainSeconds * (1 - 1e-9);
    }
  }
  EXPECT_GT(offloading, 0);
  EXPECT_GT(faster, 0);
}

TEST(ChainProgrammeTest, OffloadingProgrammeAvoidsASlowLink) {
  // Copies that take longer than the whole step never pay: the programme
  // with offloading finds the plans of the one without.
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    PlanningProblem problem = makeProblem(makeRandomChain(10, seed), 1.0);
    problem.link = {1, 1, 0};
    ChainReduction chain;
    std::string error;
    ASSERT_TRUE(reduceToChain(problem.graph, chain, error)) << error;
    for (int64_t budget : sweep(problem, 6, 0.3)) {
      problem.budgetBytes = budget;
      ChainProgrammeResult result, plain;
      SimulationResult simulated;
      bool found = solveOffloading(problem, chain, result, simulated);
      ASSERT_EQ(found, solveChainProgramme(chain, budget,
                                           ChainProgrammeOptions(), plain));
      if (!found)
        continue;
      EXPECT_EQ(countOffloads(result.strategy), 0);
      EXPECT_DOUBLE_EQ(result.recomputeSeconds, plain.recomputeSeconds);
    }
  }
}

TEST(ChainStrategiesTest, SqrtAndOffloadOnChains) {
  int fasterWithOffload = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    PlanningProblem problem = makeProblem(makeRandomChain(16, seed), 1.0);
    // A link fast enough for swaps to hide under compute.
    problem.link = {1e8, 1e8, 0};
    int sqrtPlans = 0;
    for (int64_t budget : sweep(problem, 10, 0.3)) {
      problem.budgetBytes = budget;
      SimulationResult chain, offload, sqrtResult;
      bool chainFound = plan("chain", problem, chain);
      if (plan("sqrt", problem, sqrtResult)) {
        ++sqrtPlans;
        // sqrt's strategies are in the programme's family.
        ASSERT_TRUE(chainFound);
        EXPECT_GE(sqrtResult.seconds, chain.seconds * (1 - 1e-9));
      }
      if (chainFound) {
        ASSERT_TRUE(plan("chain-offload", problem, offload));
        EXPECT_LE(offload.seconds, chain.seconds * (1 + 1e-9));
        if (offload.seconds < chain.seconds * (1 - 1e-9))
          ++fasterWithOffload;
      }
    }
    EXPECT_GT(sqrtPlans, 0);
  }
  // Swapping checkpoints instead of recomputing them pays on this link.
  EXPECT_GT(fasterWithOffload, 0);
}

/// Adds a step input of `bytes` (a mask) read by the forward nodes
/// `readers` of `graph`.
void addMask(TrainingGraph &graph, int64_t bytes,
             const std::vector<int> &readers) {
  GraphValue mask;
  mask.name = "mask";
  mask.bytes = bytes;
  mask.kind = ValueKind::Input;
  graph.values.push_back(mask);
  for (int node : readers)
    graph.nodes[node].inputs.push_back(static_cast<int>(graph.values.size()) -
                                       1);
  graph.computeUsers();
}

/// Runs the chain strategy on budgets from the unplanned peak down to
/// `fraction` of it; returns how many it plans. runStrategy rejects invalid
/// and over-budget plans as internal errors, which fail the test.
int countChainPlans(PlanningProblem problem, double fraction) {
  int plans = 0;
  for (int64_t budget : sweep(problem, 12, fraction)) {
    problem.budgetBytes = budget;
    PlanResult result;
    std::string error;
    if (runStrategy("chain", problem, PlanOptions(), result, error)) {
      ++plans;
      continue;
    }
    EXPECT_EQ(error.find("internal error"), std::string::npos) << error;
  }
  return plans;
}

TEST(ChainStrategiesTest, ModelMismatchIsCheckedAndTightened) {
  // An extra step input read only by f2: a recompute of f2 keeps it alive
  // longer than the unplanned step does (the model counts it as a
  // forward-only value of f2's stage). Layers 4 and 5 cannot be recomputed.
  // Whatever the model says, the strategy must return only valid plans
  // within the budget.
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    TrainingGraph graph = makeRandomChain(10, seed);
    addMask(graph, 8 * 1024, {2});
    graph.nodes[4].recomputable = false;
    graph.nodes[5].recomputable = false;
    EXPECT_GT(countChainPlans(makeProblem(graph, 1.0), 0.4), 1);
  }
}

TEST(ChainStrategiesTest, LongChainsAreMerged) {
  PlanningProblem problem = makeProblem(makeRandomChain(400, 3), 0.5);
  SimulationResult chain;
  ASSERT_TRUE(plan("chain", problem, chain));
  EXPECT_GT(chain.recomputeSeconds, 0);
}

TEST(ChainStrategiesTest, StrategiesAreRegistered) {
  std::vector<std::string> names = getStrategyNames();
  for (const char *name : {"sqrt", "chain", "chain-offload"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end());
}

TEST(ChainStrategiesTest, StepWithoutForwardNodesIsPlannedUnchanged) {
  PlanningProblem problem;
  GraphValue weight;
  weight.name = "w";
  weight.bytes = 64;
  weight.kind = ValueKind::Parameter;
  weight.isOutput = true;
  problem.graph.values.push_back(weight);
  problem.budgetBytes = 64;
  for (const char *name : {"sqrt", "chain", "chain-offload"}) {
    SimulationResult simulation;
    EXPECT_TRUE(plan(name, problem, simulation)) << name;
  }
}

TEST(ChainStrategiesTest, ConservativeModelStaysValid) {
  // A step input read by the forward of two stages: the model counts it,
  // conservatively, until the backward block of the first, so it never
  // predicts less than the simulator finds.
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    TrainingGraph graph = makeRandomChain(8, seed);
    addMask(graph, 4 * 1024, {2, 5});
    PlanningProblem problem = makeProblem(graph, 1.0);
    ChainReduction chain;
    std::string error;
    ASSERT_TRUE(reduceToChain(graph, chain, error)) << error;
    for (const StrategyOutcome &outcome : simulateEveryStrategy(problem, chain))
      EXPECT_GE(outcome.modelled, outcome.peak) << "seed " << seed;
    EXPECT_GT(countChainPlans(problem, 0.4), 1);
  }
}

//===----------------------------------------------------------------------===//
// The bundled models
//===----------------------------------------------------------------------===//

/// The planning problems of the four tiny test models
/// (python/lethe/onnx_models.py), gradient-only (-grad) and with Adam
/// (-adam), as --lethe-plan-memory writes them with problem-out=; the
/// -workspace ones written since op workspace is modelled (the
/// convolutions' column buffers, and sizes in the arena's 256-byte blocks).
class BundledModelTest : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    std::string path =
        std::string(LETHE_PLANNING_INPUTS) + "/" + GetParam() + ".problem.json";
    std::ifstream file(path);
    ASSERT_TRUE(file) << "cannot read " << path;
    std::stringstream text;
    text << file.rdbuf();
    std::string error;
    ASSERT_TRUE(parseProblemJson(text.str(), path, problem, error)) << error;
    ASSERT_TRUE(reduceToChain(problem.graph, chain, error, 100)) << error;
    unplanned = unplannedPeak(problem);
  }

  PlanningProblem problem;
  ChainReduction chain;
  int64_t unplanned = 0;
};

TEST_P(BundledModelTest, ModelIsExactOnEveryStrategy) {
  std::vector<StrategyOutcome> all = simulateEveryStrategy(problem, chain);
  EXPECT_EQ(countMismatches(all), 0);
  expectOptimal(problem, chain, all, GetParam());
}

TEST_P(BundledModelTest, ChainIsAtLeastAsGoodAsSqrt) {
  ChainProgrammeResult solution;
  EXPECT_TRUE(
      solveChainProgramme(chain, unplanned, ChainProgrammeOptions(), solution));
  // sqrt's plans are in the programme's family, and the model is exact.
  PlanOptions options;
  int64_t chainMinimum =
      findMinimumBudget("chain", problem, options, 0, unplanned);
  int64_t sqrtMinimum =
      findMinimumBudget("sqrt", problem, options, 0, unplanned);
  int64_t offloadMinimum =
      findMinimumBudget("chain-offload", problem, options, 0, unplanned);
  ASSERT_GT(chainMinimum, 0);
  EXPECT_LE(chainMinimum, sqrtMinimum);
  EXPECT_LE(offloadMinimum, chainMinimum);
  for (int step = 0; step <= 4; ++step) {
    problem.budgetBytes = chainMinimum + (unplanned - chainMinimum) * step / 4;
    SimulationResult chainPlan, sqrtPlan;
    // runStrategy checks that the plan is valid and within the budget.
    ASSERT_TRUE(plan("chain", problem, chainPlan))
        << "budget " << problem.budgetBytes;
    if (plan("sqrt", problem, sqrtPlan)) {
      EXPECT_LE(chainPlan.seconds, sqrtPlan.seconds * (1 + 1e-9))
          << "budget " << problem.budgetBytes;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, BundledModelTest,
                         ::testing::Values("mlp-grad", "mlp-adam", "cnn-grad",
                                           "cnn-adam", "transformer-grad",
                                           "transformer-adam", "unet-grad",
                                           "unet-adam", "cnn-adam-workspace",
                                           "unet-grad-workspace"),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

} // namespace
