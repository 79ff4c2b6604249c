//===- PlanningBench.cpp - Time the planning strategies -------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Runs every registered strategy (but auto, which only combines the others)
// on generated training steps of growing size: random chains and random
// training DAGs (GraphGenerators.h) of about 100 to 20000 nodes, at budgets
// that are fractions of the unplanned peak. For each run it prints the solve
// time, the overhead of the plan (its simulated time over the unplanned
// time), and the arena the plan needs once laid out (ArenaLayout.h) over its
// liveness peak. Strategies are found by name in the strategy table, so a
// new one shows up here without a change.
//
// A strategy that takes longer than --max-seconds at one size is not run at
// larger sizes of the same kind of graph; the cap is also its time limit.
//
// With --problems=a.json,b.json the steps are planning problems written by
// --lethe-plan-memory's problem-out= (the test models: see
// bench/planning-models.sh) instead of generated ones.
//
// With --pass, each strategy plans as --lethe-plan-memory runs it
// (runStrategy with the arena check: planned again below the budget until
// the arena fits, then the room left reclaimed, Reclaim.cpp) instead of on
// its own; the solve time then includes that.
//
// Usage: lethe-bench-planning [--sizes=100,1000,5000,20000]
//          [--budgets=0.8,0.5] [--max-seconds=60] [--kinds=chain,dag]
//          [--strategies=a,b,...] [--seed=1] [--no-arena] [--pass]
//          [--problems=a.json,...]
//
//===----------------------------------------------------------------------===//

#include "BenchOptions.h"
#include "lethe/Planning/ArenaLayout.h"
#include "lethe/Planning/GraphGenerators.h"
#include "lethe/Planning/Strategies.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace lethe::planning;

namespace {

struct Options {
  std::vector<int> sizes = {100, 1000, 5000, 20000};
  std::vector<double> budgets = {0.8, 0.5};
  double maxSeconds = 60;
  std::vector<std::string> kinds = {"chain", "dag"};
  std::vector<std::string> strategies; // empty: all but auto
  uint64_t seed = 1;
  bool arena = true;
  bool pass = false;
  std::vector<std::string> problems;
};

bool parseOptions(int argc, char **argv, Options &options) {
  using namespace lethe::bench;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    std::vector<double> numbers;
    if (const char *text = flagValue(arg, "--sizes")) {
      if (!parseIntegerList(text, options.sizes, 4, 1 << 24))
        return false;
    } else if (const char *text = flagValue(arg, "--budgets")) {
      if (!parseNumberList(text, numbers, 1e-9, 1))
        return false;
      options.budgets = numbers;
    } else if (const char *text = flagValue(arg, "--max-seconds")) {
      if (!parseNumberList(text, numbers, 1e-9, 1e9) || numbers.size() != 1)
        return false;
      options.maxSeconds = numbers[0];
    } else if (const char *text = flagValue(arg, "--kinds")) {
      options.kinds = splitList(text);
      if (options.kinds.empty())
        return false;
      for (const std::string &kind : options.kinds)
        if (kind != "chain" && kind != "dag")
          return false;
    } else if (const char *text = flagValue(arg, "--strategies")) {
      options.strategies = splitList(text);
      if (options.strategies.empty())
        return false;
    } else if (const char *text = flagValue(arg, "--seed")) {
      std::vector<int> seed;
      if (!parseIntegerList(text, seed, 0, 1 << 30) || seed.size() != 1)
        return false;
      options.seed = static_cast<uint64_t>(seed[0]);
    } else if (const char *text = flagValue(arg, "--problems")) {
      options.problems = splitList(text);
      if (options.problems.empty())
        return false;
    } else if (std::strcmp(arg, "--no-arena") == 0) {
      options.arena = false;
    } else if (std::strcmp(arg, "--pass") == 0) {
      options.pass = true;
    } else {
      return false;
    }
  }
  return true;
}

/// A generated step of about `nodes` nodes. Both generators make about
/// three nodes per forward node (forward, backward, optimizer or gradient
/// sums); one correction from the first try's count gets close.
TrainingGraph makeGraph(const std::string &kind, int nodes, uint64_t seed) {
  auto make = [&](int forward) {
    return kind == "chain" ? makeRandomChain(forward, seed)
                           : makeRandomTrainingDag(forward, seed);
  };
  int forward = std::max(1, nodes / 3);
  TrainingGraph graph = make(forward);
  double scale = static_cast<double>(nodes) / graph.nodes.size();
  int corrected = std::max(1, static_cast<int>(forward * scale + 0.5));
  return corrected == forward ? graph : make(corrected);
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parseOptions(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: %s [--sizes=100,1000,5000,20000] [--budgets=0.8,0.5] "
                 "[--max-seconds=60] [--kinds=chain,dag] "
                 "[--strategies=a,b,...] [--seed=1] [--no-arena] [--pass] "
                 "[--problems=a.json,...]\n",
                 argv[0]);
    return 2;
  }
  std::vector<std::string> strategies = options.strategies;
  if (strategies.empty())
    for (const std::string &name : getStrategyNames())
      if (name != "auto")
        strategies.push_back(name);
  for (const std::string &name : strategies)
    if (!lookupStrategy(name)) {
      std::fprintf(stderr, "unknown strategy '%s'\n", name.c_str());
      return 2;
    }

  PlanOptions planOptions;
  planOptions.timeLimitSeconds = options.maxSeconds;
  if (options.pass)
    planOptions.arenaAlignment = kDefaultArenaAlignment;
  std::printf("Planning strategies on generated training steps (seed %llu, "
              "cap %.0f s per run)%s\n",
              static_cast<unsigned long long>(options.seed), options.maxSeconds,
              options.pass ? ", as --lethe-plan-memory plans (arena check, "
                             "room reclaimed)"
                           : "");
  std::printf("overhead: plan time / unplanned time; arena: laid-out arena / "
              "liveness peak of the plan (256-byte alignment); bound: the "
              "lower bound on the overhead the strategy proved\n\n");
  std::printf("%-11s %6s %7s  %-14s %6s %10s %9s %10s %8s %9s  %s\n", "graph",
              "nodes", "values", "strategy", "budget", "solve ms", "overhead",
              "peak KiB", "arena", "layout ms", "note");
  // The steps to plan, in groups (a kind of generated graph, or the problem
  // files); a strategy over the cap in a group is skipped for the rest of it.
  struct Step {
    std::string label;
    PlanningProblem problem;
  };
  std::vector<std::vector<Step>> groups;
  if (!options.problems.empty()) {
    groups.emplace_back();
    for (const std::string &path : options.problems) {
      std::ifstream file(path);
      std::stringstream text;
      text << file.rdbuf();
      Step step;
      std::string error;
      if (!file || !parseProblemJson(text.str(), path, step.problem, error)) {
        std::fprintf(stderr, "%s\n",
                     file ? error.c_str() : ("cannot read " + path).c_str());
        return 2;
      }
      std::string name = path.substr(path.find_last_of('/') + 1);
      step.label = name.substr(0, name.find('.'));
      groups.back().push_back(std::move(step));
    }
  } else {
    for (const std::string &kind : options.kinds) {
      groups.emplace_back();
      for (int size : options.sizes)
        groups.back().push_back(
            {kind, makeProblem(makeGraph(kind, size, options.seed), 1.0)});
    }
  }
  // A plan the simulator rejects is a bug in Lethe: the table says which,
  // and the exit code says that there was one.
  bool broken = false;
  for (std::vector<Step> &group : groups) {
    // Strategies that ran past the cap on a smaller graph of this group.
    std::map<std::string, int> tooSlowAt;
    for (Step &step : group) {
      const std::string &kind = step.label;
      const TrainingGraph &graph = step.problem.graph;
      PlanningProblem base = step.problem;
      Schedule unplannedSchedule = makeUnplannedSchedule(base.graph);
      SimulationResult unplanned = simulate(base, unplannedSchedule);
      base.budgetBytes = unplanned.peakBytes;
      {
        std::printf("%-11s %6zu %7zu  %-14s %6.2f %10s %9.4f %10.1f ",
                    kind.c_str(), graph.nodes.size(), graph.values.size(),
                    "(unplanned)", 1.0, "-", 1.0, unplanned.peakBytes / 1024.0);
        if (options.arena) {
          auto start = std::chrono::steady_clock::now();
          ArenaLayout layout =
              layOutArena(getScheduleBuffers(base, unplannedSchedule).device);
          std::printf(
              "%8.4f %9.1f\n",
              static_cast<double>(layout.arenaBytes) /
                  static_cast<double>(std::max<int64_t>(layout.peakBytes, 1)),
              secondsSince(start) * 1e3);
        } else {
          std::printf("%8s %9s\n", "-", "-");
        }
      }
      for (const std::string &name : strategies) {
        for (double fraction : options.budgets) {
          std::printf("%-11s %6zu %7zu  %-14s %6.2f ", kind.c_str(),
                      graph.nodes.size(), graph.values.size(), name.c_str(),
                      fraction);
          if (tooSlowAt.count(name)) {
            std::printf("%10s %9s %10s %8s %9s  skipped: over the cap at %d "
                        "nodes\n",
                        "-", "-", "-", "-", "-", tooSlowAt[name]);
            continue;
          }
          PlanningProblem problem = base;
          problem.budgetBytes = static_cast<int64_t>(
              fraction * static_cast<double>(unplanned.peakBytes));
          Plan plan;
          std::string error;
          auto start = std::chrono::steady_clock::now();
          bool found;
          if (options.pass) {
            PlanResult result;
            found = runStrategy(name, problem, planOptions, result, error);
            plan = std::move(result.plan);
          } else {
            found = lookupStrategy(name)(problem, planOptions, plan, error);
          }
          double solveSeconds = secondsSince(start);
          if (solveSeconds > options.maxSeconds)
            tooSlowAt.emplace(name, static_cast<int>(graph.nodes.size()));
          if (!found) {
            std::printf("%10.1f %9s %10s %8s %9s  no plan: %s\n",
                        solveSeconds * 1e3, "-", "-", "-", "-", error.c_str());
            continue;
          }
          SimulationResult simulation = simulate(problem, plan.schedule);
          if (!simulation.valid || simulation.peakBytes > problem.budgetBytes) {
            broken = true;
            std::printf("%10.1f %9s %10s %8s %9s  BROKEN PLAN: %s\n",
                        solveSeconds * 1e3, "-", "-", "-", "-",
                        simulation.valid ? "over the budget"
                                         : simulation.error.c_str());
            continue;
          }
          double overhead = simulation.seconds / unplanned.seconds;
          std::printf("%10.1f %9.4f %10.1f ", solveSeconds * 1e3, overhead,
                      simulation.peakBytes / 1024.0);
          // A proven lower bound, as an overhead: the plan is optimal when
          // the two agree.
          std::string note;
          if (plan.lowerBoundSeconds >= 0) {
            char text[64];
            std::snprintf(text, sizeof(text), "bound %.4f (%s)",
                          plan.lowerBoundSeconds / unplanned.seconds,
                          plan.strategy.empty() ? name.c_str()
                                                : plan.strategy.c_str());
            note = text;
          } else if (!plan.strategy.empty() && plan.strategy != name) {
            note = plan.strategy;
          }
          if (!options.arena) {
            std::printf("%8s %9s  %s\n", "-", "-", note.c_str());
            continue;
          }
          start = std::chrono::steady_clock::now();
          ScheduleBuffers buffers = getScheduleBuffers(problem, plan.schedule);
          ArenaLayout layout = layOutArena(buffers.device);
          double layoutSeconds = secondsSince(start);
          std::printf("%8.4f %9.1f  %s\n",
                      layout.peakBytes > 0
                          ? static_cast<double>(layout.arenaBytes) /
                                static_cast<double>(layout.peakBytes)
                          : 1.0,
                      layoutSeconds * 1e3, note.c_str());
        }
        std::fflush(stdout);
      }
    }
  }
  return broken ? 1 : 0;
}
