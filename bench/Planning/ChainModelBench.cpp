//===- ChainModelBench.cpp - The chain model against the simulator --------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Compares the chain programme's memory model (ChainReduction.h) with the
// simulator on planning problems (JSON, as --lethe-plan-memory writes them
// with problem-out=). For the strategy keeping every stage (the unplanned
// schedule), sqrt's segment strategies and the programme's plans at budgets
// from the unplanned peak down, it prints the modelled and the simulated
// peak, and for every operation whose modelled peak is not the highest
// memory the simulator measures over its steps, both. Then the smallest
// budget sqrt, chain and chain-offload meet. With --stages, it prints each
// stage's model first.
//
// Usage: lethe-bench-chain-model [--stages] problem.json...
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/ChainProgramme.h"
#include "lethe/Planning/Strategies.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

using namespace lethe::planning;

namespace {

const char *const kModeNames[] = {"checkpoint", "no-keep", "all",
                                  "all-without-output"};

void printStages(const ChainReduction &chain) {
  std::printf("%-5s %-9s %-9s %-6s %-6s %-9s %-9s %-8s %s\n", "stage",
              "forward", "backward", "input", "output", "held_all", "fwd_only",
              "gap", "reads (input, output)");
  for (size_t index = 0; index < chain.stages.size(); ++index) {
    const ChainStage &stage = chain.stages[index];
    std::printf("%-5zu %-9zu %-9zu %-6d %-6d %-9lld %-9lld %-8lld %d %d\n",
                index, stage.forwardNodes.size(), stage.backwardNodes.size(),
                stage.inputValue, stage.outputValue,
                static_cast<long long>(stage.heldAllBytes),
                static_cast<long long>(stage.forwardOnlyBytes +
                                       stage.outputForwardOnlyBytes),
                static_cast<long long>(stage.gapBytes),
                stage.backwardReadsInput, stage.backwardReadsOutput);
  }
}

/// Prints the modelled and simulated peak of `strategy`, and the operations
/// where they differ. Returns whether they all agree.
bool compare(const PlanningProblem &problem, const ChainReduction &chain,
             const ChainStrategy &strategy, const std::string &label) {
  std::vector<int64_t> modelled;
  int64_t model = modelStrategyPeak(chain, strategy, &modelled);
  std::vector<ChainOperation> operations = expandStrategy(strategy);
  // The schedule, and the operation of each step.
  Schedule schedule;
  std::vector<size_t> operationOf;
  for (size_t index = 0; index < operations.size(); ++index)
    for (const Step &step : translateOperations(chain, {operations[index]})) {
      schedule.push_back(step);
      operationOf.push_back(index);
    }
  SimulationResult simulation = simulate(problem, schedule);
  if (!simulation.valid || model < 0) {
    std::printf("  %-24s %s\n", label.c_str(),
                model < 0 ? "recomputes a stage that cannot be"
                          : simulation.error.c_str());
    return false;
  }
  std::vector<int64_t> measured(operations.size(), 0);
  for (size_t step = 0; step < schedule.size(); ++step)
    measured[operationOf[step]] =
        std::max(measured[operationOf[step]], simulation.memory[step]);
  int differing = 0;
  for (size_t index = 0; index < operations.size(); ++index)
    differing += modelled[index] != measured[index];
  std::printf("  %-24s %-10lld %-10lld %d\n", label.c_str(),
              static_cast<long long>(model),
              static_cast<long long>(simulation.peakBytes), differing);
  for (size_t index = 0; index < operations.size(); ++index) {
    if (modelled[index] == measured[index])
      continue;
    const ChainOperation &operation = operations[index];
    std::string what = operation.backward ? "backward " : "forward ";
    what += std::to_string(operation.stage);
    if (!operation.backward)
      what += std::string(" ") + kModeNames[static_cast<int>(operation.mode)] +
              (operation.first ? " (first)" : " (recompute)");
    std::printf("    operation %zu, %s: model %lld, simulated %lld\n", index,
                what.c_str(), static_cast<long long>(modelled[index]),
                static_cast<long long>(measured[index]));
  }
  return differing == 0 && model == simulation.peakBytes;
}

} // namespace

int main(int argc, char **argv) {
  bool stages = false, unknown = false;
  std::vector<std::string> paths;
  for (int arg = 1; arg < argc; ++arg) {
    if (std::strcmp(argv[arg], "--stages") == 0)
      stages = true;
    else if (argv[arg][0] == '-')
      unknown = true;
    else
      paths.push_back(argv[arg]);
  }
  if (unknown || paths.empty()) {
    std::fprintf(stderr,
                 "usage: lethe-bench-chain-model [--stages] problem.json...\n");
    return 2;
  }
  for (const std::string &path : paths) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    PlanningProblem problem;
    std::string error;
    ChainReduction chain;
    if (!file || !parseProblemJson(text.str(), path, problem, error) ||
        !reduceToChain(problem.graph, chain, error, 100)) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(),
                   error.empty() ? "cannot read it" : error.c_str());
      return 1;
    }
    int numStages = static_cast<int>(chain.stages.size());
    int64_t unplanned =
        simulate(problem, makeUnplannedSchedule(problem.graph)).peakBytes;
    std::printf("%s: %d stages, unplanned peak %lld\n", path.c_str(), numStages,
                static_cast<long long>(unplanned));
    if (stages)
      printStages(chain);
    std::printf("  %-24s %-10s %-10s %s\n", "strategy", "model", "simulated",
                "operations_off");
    int agreeing = 0, compared = 0;
    ChainStrategy keepAll(numStages);
    for (int &choice : keepAll.choices)
      choice = 0;
    agreeing += compare(problem, chain, keepAll, "keep every stage");
    ++compared;
    for (int segments = 2; segments <= numStages; ++segments, ++compared)
      agreeing +=
          compare(problem, chain, makeSegmentStrategy(numStages, segments),
                  "segments " + std::to_string(segments));
    for (int percent = 100; percent >= 40; percent -= 10) {
      ChainProgrammeResult solution;
      int64_t budget = unplanned * percent / 100;
      if (!solveChainProgramme(chain, budget, ChainProgrammeOptions(),
                               solution))
        break;
      agreeing += compare(problem, chain, solution.strategy,
                          "chain at " + std::to_string(percent) + "%");
      ++compared;
    }
    std::printf("  model = simulator on %d of %d strategies\n", agreeing,
                compared);
    std::printf("  smallest budget:");
    for (const char *strategy : {"sqrt", "chain", "chain-offload"})
      std::printf(" %s %lld", strategy,
                  static_cast<long long>(findMinimumBudget(
                      strategy, problem, PlanOptions(), 0, unplanned)));
    std::printf("\n");
  }
  return 0;
}
