//===- GreedyPlannerBench.cpp - Solve time and overhead of `greedy` -------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Prints, for random training DAGs of growing size, the greedy strategy's
// solve time and its overhead (simulated time over unplanned time) at
// budgets of 0.8, 0.6 and 0.4 of the unplanned peak. Not a test.
//
// Usage: lethe-bench-greedy [--forward=100,1000,5000,10000]
//          [--budgets=0.8,0.6,0.4] [--link=BYTES_PER_SECOND] [--chain]
// (--link: both ways, default 25e9; --chain: random chains instead of
// random training DAGs).
//
//===----------------------------------------------------------------------===//

#include "BenchOptions.h"
#include "lethe/Planning/GraphGenerators.h"
#include "lethe/Planning/Schedule.h"
#include "lethe/Planning/Strategies.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace lethe::planning;

int main(int argc, char **argv) {
  using namespace lethe::bench;
  std::vector<int> sizes = {100, 1000, 5000, 10000};
  std::vector<double> fractions = {0.8, 0.6, 0.4};
  std::vector<double> link = {25e9};
  bool chain = false;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    const char *text = nullptr;
    bool parsed = false;
    if ((text = flagValue(arg, "--forward")))
      parsed = parseIntegerList(text, sizes, 1, 1 << 24);
    else if ((text = flagValue(arg, "--budgets")))
      parsed = parseNumberList(text, fractions, 1e-9, 1);
    else if ((text = flagValue(arg, "--link")))
      parsed = parseNumberList(text, link, 1, 1e15) && link.size() == 1;
    else if (std::strcmp(arg, "--chain") == 0)
      parsed = chain = true;
    if (!parsed) {
      std::fprintf(stderr,
                   "usage: %s [--forward=100,1000,5000,10000] "
                   "[--budgets=0.8,0.6,0.4] [--link=BYTES_PER_SECOND] "
                   "[--chain]\n",
                   argv[0]);
      return 2;
    }
  }
  std::printf("link %.3g B/s, %s\n", link[0],
              chain ? "chains" : "training DAGs");
  std::printf("%8s %8s %6s %10s %10s %9s %12s %12s\n", "forward", "nodes",
              "budget", "solve_s", "overhead", "recomp_s", "offload_MiB",
              "peak/budget");
  for (int forward : sizes) {
    for (double fraction : fractions) {
      PlanningProblem problem =
          makeProblem(chain ? makeRandomChain(forward, 42)
                            : makeRandomTrainingDag(forward, 42),
                      fraction);
      problem.link = {link[0], link[0], 10e-6};
      SimulationResult unplanned =
          simulate(problem, makeUnplannedSchedule(problem.graph));
      Plan plan;
      std::string error;
      auto start = std::chrono::steady_clock::now();
      bool found = planGreedy(problem, PlanOptions(), plan, error);
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      if (!found) {
        std::printf("%8d %8zu %6.1f %10.3f  no plan: %s\n", forward,
                    problem.graph.nodes.size(), fraction, seconds,
                    error.c_str());
        continue;
      }
      SimulationResult result = simulate(problem, plan.schedule);
      std::printf("%8d %8zu %6.1f %10.3f %10.3f %9.3f %12.2f %12.3f%s\n",
                  forward, problem.graph.nodes.size(), fraction, seconds,
                  result.seconds / unplanned.seconds, result.recomputeSeconds,
                  result.offloadedBytes / 1048576.0,
                  static_cast<double>(result.peakBytes) /
                      static_cast<double>(problem.budgetBytes),
                  result.valid ? "" : "  INVALID");
      if (!result.valid || result.peakBytes > problem.budgetBytes)
        return 1; // a broken plan is a bug in Lethe
    }
  }
  return 0;
}
