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
#include <string>

using namespace lethe::planning;

int main(int argc, char **argv) {
  // Arguments: forward node counts, `link=BYTES_PER_SECOND` (both ways,
  // default 25e9), `chain` for random chains instead of DAGs, and
  // `budgets=a,b,...` as fractions of the unplanned peak.
  std::vector<int> sizes;
  std::vector<double> fractions = {0.8, 0.6, 0.4};
  double link = 25e9;
  bool chain = false;
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    if (argument.rfind("link=", 0) == 0)
      link = std::atof(argument.c_str() + 5);
    else if (argument == "chain")
      chain = true;
    else if (argument.rfind("budgets=", 0) == 0) {
      fractions.clear();
      for (size_t at = 8; at < argument.size();) {
        size_t comma = argument.find(',', at);
        if (comma == std::string::npos)
          comma = argument.size();
        fractions.push_back(std::atof(argument.substr(at, comma - at).c_str()));
        at = comma + 1;
      }
    } else
      sizes.push_back(std::atoi(argument.c_str()));
  }
  if (sizes.empty())
    sizes = {100, 1000, 5000, 10000};
  std::printf("link %.3g B/s, %s\n", link, chain ? "chains" : "training DAGs");
  std::printf("%8s %8s %6s %10s %10s %9s %12s %12s\n", "forward", "nodes",
              "budget", "solve_s", "overhead", "recomp_s", "offload_MiB",
              "peak/budget");
  for (int forward : sizes) {
    for (double fraction : fractions) {
      PlanningProblem problem =
          makeProblem(chain ? makeRandomChain(forward, 42)
                            : makeRandomTrainingDag(forward, 42),
                      fraction);
      problem.link = {link, link, 10e-6};
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
