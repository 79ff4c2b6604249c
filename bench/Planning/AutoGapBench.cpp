//===- AutoGapBench.cpp - auto and the heuristics against milp's optimum --===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Where the MILP proves its plan optimal (its simulated time equals CBC's
// bound), how far from that optimum are `auto` and the best of the fast
// strategies (sqrt, chain, chain-offload, greedy)? On random chains and
// random training DAGs (GraphGenerators.h) small enough for CBC to finish,
// and on planning problems written by --lethe-plan-memory's problem-out=,
// at fractions of the unplanned peak. Prints one row per instance and a
// summary over the instances with a proven optimum. Not a test.
//
// The MILP's optimum is over recompute-only plans (Checkmate's model has no
// offloading); a plan that offloads may beat it, so a gap can be negative.
// Each instance is therefore also planned without a host link (the rows
// marked "no link"), where no strategy can offload and the MILP's optimum
// is the one to meet.
// auto runs the MILP itself on graphs of up to 400 nodes, with the time the
// other strategies leave; the fast strategies' column shows what auto gets
// without it.
//
// Usage: lethe-bench-auto-gap [--forward=5,10,20] [--seeds=4]
//          [--budgets=0.8,0.6,0.5] [--time-limit=60] [--problems=a.json,...]
//          [--link=both|on|off]
//
//===----------------------------------------------------------------------===//

#include "BenchOptions.h"
#include "lethe/Planning/GraphGenerators.h"
#include "lethe/Planning/Strategies.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace lethe::planning;

namespace {

struct Options {
  std::vector<int> forward = {5, 10, 20};
  int seeds = 4;
  std::vector<double> budgets = {0.8, 0.6, 0.5};
  double timeLimit = 60;
  std::vector<std::string> problems;
  /// Plan with the host link, without it, or both.
  bool withLink = true, withoutLink = true;
};

bool parseOptions(int argc, char **argv, Options &options) {
  using namespace lethe::bench;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    std::vector<double> numbers;
    std::vector<int> integers;
    if (const char *text = flagValue(arg, "--forward")) {
      if (!parseIntegerList(text, integers, 1, 1 << 20))
        return false;
      options.forward = integers;
    } else if (const char *text = flagValue(arg, "--seeds")) {
      if (!parseIntegerList(text, integers, 1, 1 << 20) || integers.size() != 1)
        return false;
      options.seeds = integers[0];
    } else if (const char *text = flagValue(arg, "--budgets")) {
      if (!parseNumberList(text, numbers, 1e-9, 1))
        return false;
      options.budgets = numbers;
    } else if (const char *text = flagValue(arg, "--time-limit")) {
      if (!parseNumberList(text, numbers, 1e-9, 1e9) || numbers.size() != 1)
        return false;
      options.timeLimit = numbers[0];
    } else if (const char *text = flagValue(arg, "--link")) {
      if (std::strcmp(text, "both") != 0 && std::strcmp(text, "on") != 0 &&
          std::strcmp(text, "off") != 0)
        return false;
      options.withLink = std::strcmp(text, "off") != 0;
      options.withoutLink = std::strcmp(text, "on") != 0;
    } else if (const char *text = flagValue(arg, "--problems")) {
      options.problems = splitList(text);
      if (options.problems.empty())
        return false;
    } else {
      return false;
    }
  }
  return true;
}

/// The simulated time of strategy `name`'s plan, or a negative number when
/// it finds none; `plan` is filled.
double runPlanner(const std::string &name, const PlanningProblem &problem,
                  const PlanOptions &options, Plan &plan) {
  std::string error;
  if (!lookupStrategy(name)(problem, options, plan, error))
    return -1;
  SimulationResult run = simulate(problem, plan.schedule);
  if (!run.valid || run.peakBytes > problem.budgetBytes) {
    std::fprintf(stderr, "BROKEN PLAN from %s\n", name.c_str());
    std::exit(1);
  }
  return run.seconds;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parseOptions(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: %s [--forward=5,10,20] [--seeds=4] "
                 "[--budgets=0.8,0.6,0.5] [--time-limit=60] "
                 "[--problems=a.json,...] [--link=both|on|off]\n",
                 argv[0]);
    return 2;
  }
  struct Instance {
    std::string label;
    PlanningProblem problem;
  };
  std::vector<Instance> instances;
  for (const std::string &path : options.problems) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    Instance instance;
    std::string error;
    if (!file || !parseProblemJson(text.str(), path, instance.problem, error)) {
      std::fprintf(stderr, "%s\n",
                   file ? error.c_str() : ("cannot read " + path).c_str());
      return 2;
    }
    std::string name = path.substr(path.find_last_of('/') + 1);
    instance.label = name.substr(0, name.find('.'));
    instances.push_back(std::move(instance));
  }
  if (options.problems.empty())
    for (int count : options.forward)
      for (int seed = 1; seed <= options.seeds; ++seed)
        for (bool chain : {true, false}) {
          instances.push_back(
              {std::string(chain ? "chain" : "dag") + " s" +
                   std::to_string(seed),
               makeProblem(chain ? makeRandomChain(count, seed)
                                 : makeRandomTrainingDag(count, seed),
                           1.0)});
        }

  // The same instances without a host link: recompute only.
  if (!options.withLink || options.withoutLink) {
    size_t count = instances.size();
    for (size_t i = 0; i < count; ++i) {
      Instance copy = instances[i];
      copy.label += " no link";
      copy.problem.link = HostLink();
      instances.push_back(std::move(copy));
    }
    if (!options.withLink)
      instances.erase(instances.begin(), instances.begin() + count);
  }

  PlanOptions planOptions;
  planOptions.timeLimitSeconds = options.timeLimit;
  std::printf("auto and the fast strategies against the MILP's optimum "
              "(time limit %.0f s each)\n",
              options.timeLimit);
  std::printf("overhead: plan time / unplanned time; gap: overhead / milp's "
              "- 1, where milp is proven optimal (recompute-only)\n\n");
  std::printf("%-20s %5s %6s  %9s %-7s  %9s %7s %-16s  %9s %7s %s\n", "graph",
              "nodes", "budget", "milp", "optimal", "auto", "gap", "(winner)",
              "fast", "gap", "(best)");
  int proven = 0;
  double worstAuto = -1e9, worstFast = -1e9, sumAuto = 0, sumFast = 0;
  for (Instance &instance : instances) {
    PlanningProblem &problem = instance.problem;
    Schedule unplannedSchedule = makeUnplannedSchedule(problem.graph);
    SimulationResult unplanned = simulate(problem, unplannedSchedule);
    for (double fraction : options.budgets) {
      problem.budgetBytes = static_cast<int64_t>(
          fraction * static_cast<double>(unplanned.peakBytes));
      std::printf("%-20s %5zu %6.2f  ", instance.label.c_str(),
                  problem.graph.nodes.size(), fraction);
      Plan milp;
      double milpSeconds = runPlanner("milp", problem, planOptions, milp);
      if (milpSeconds < 0) {
        std::printf("%9s\n", "no plan");
        std::fflush(stdout);
        continue;
      }
      bool optimal = milp.lowerBoundSeconds >= 0 &&
                     milpSeconds <= milp.lowerBoundSeconds * (1 + 1e-6);
      Plan automatic;
      double autoSeconds = runPlanner("auto", problem, planOptions, automatic);
      std::string bestFast;
      double fastSeconds = -1;
      for (const char *name : {"sqrt", "chain", "chain-offload", "greedy"}) {
        Plan plan;
        double seconds = runPlanner(name, problem, planOptions, plan);
        if (seconds >= 0 && (fastSeconds < 0 || seconds < fastSeconds)) {
          fastSeconds = seconds;
          bestFast = name;
        }
      }
      double base = unplanned.seconds;
      std::printf("%9.4f %-7s  ", milpSeconds / base, optimal ? "yes" : "no");
      auto printGap = [&](double seconds, const std::string &who) {
        if (seconds < 0) {
          std::printf("%9s %7s %-16s  ", "no plan", "-", "");
          return;
        }
        std::printf("%9.4f ", seconds / base);
        if (optimal)
          std::printf("%6.2f%% ", 100 * (seconds / milpSeconds - 1));
        else
          std::printf("%7s ", "-");
        std::printf("%-16s  ", ("(" + who + ")").c_str());
      };
      printGap(autoSeconds, automatic.strategy);
      printGap(fastSeconds, bestFast);
      std::printf("\n");
      std::fflush(stdout);
      if (!optimal || autoSeconds < 0)
        continue;
      ++proven;
      double autoGap = autoSeconds / milpSeconds - 1;
      worstAuto = std::max(worstAuto, autoGap);
      sumAuto += autoGap;
      if (fastSeconds >= 0) {
        double fastGap = fastSeconds / milpSeconds - 1;
        worstFast = std::max(worstFast, fastGap);
        sumFast += fastGap;
      }
    }
  }
  if (proven == 0) {
    std::printf("\nno instance with a proven optimum\n");
    return 0;
  }
  std::printf("\n%d instances with a proven optimum: auto's gap at most "
              "%.2f%% (mean %.2f%%); the fast strategies' best at most %.2f%% "
              "(mean %.2f%%)\n",
              proven, 100 * worstAuto, 100 * sumAuto / proven, 100 * worstFast,
              100 * sumFast / proven);
  return 0;
}
