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
//===----------------------------------------------------------------------===//

#include "lethe/Planning/GraphGenerators.h"
#include "lethe/Planning/Schedule.h"
#include "lethe/Planning/Strategies.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace lethe::planning;

int main(int argc, char **argv) {
  std::vector<int> sizes = {100, 1000, 5000, 10000};
  if (argc > 1) {
    sizes.clear();
    for (int i = 1; i < argc; ++i)
      sizes.push_back(std::atoi(argv[i]));
  }
  std::printf("%8s %8s %6s %10s %10s %9s %12s %12s\n", "forward", "nodes",
              "budget", "solve_s", "overhead", "recomp_s", "offload_MiB",
              "peak/budget");
  for (int forward : sizes) {
    for (double fraction : {0.8, 0.6, 0.4}) {
      PlanningProblem problem =
          makeProblem(makeRandomTrainingDag(forward, 42), fraction);
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
    }
  }
  return 0;
}
