//===- ChainBench.cpp - Time the chain programme --------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Times the chain strategy on random chains (makeRandomChain) of growing
// length at a few budgets, and the full programme (no merging of stages,
// 1 KiB slots, exact) where it is affordable, and prints a table: stages,
// budget as a fraction of the unplanned peak, solve time (processor), the
// stages and slots the programme used, and the planned step time over the
// unplanned.
//
// Usage: lethe-bench-chain [--stages=10,100,1000] [--budgets=0.6,0.4]
//
//===----------------------------------------------------------------------===//

#include "BenchOptions.h"
#include "lethe/Planning/ChainProgramme.h"
#include "lethe/Planning/GraphGenerators.h"
#include "lethe/Planning/Strategies.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

using namespace lethe::planning;

namespace {

/// Processor seconds of this process: wall time is unreliable on a shared
/// machine.
double cpuSeconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

} // namespace

int main(int argc, char **argv) {
  using namespace lethe::bench;
  std::vector<int> lengths = {10, 100, 1000};
  std::vector<double> fractions = {0.6, 0.4};
  for (int arg = 1; arg < argc; ++arg) {
    const char *stages = flagValue(argv[arg], "--stages");
    const char *budgets = flagValue(argv[arg], "--budgets");
    if (!(stages && parseIntegerList(stages, lengths, 1, 1 << 20)) &&
        !(budgets && parseNumberList(budgets, fractions, 1e-9, 1))) {
      std::fprintf(stderr,
                   "usage: %s [--stages=10,100,1000] [--budgets=0.6,0.4]\n",
                   argv[0]);
      return 2;
    }
  }
  std::printf("%-8s %-8s %-7s %-12s %-10s %-8s %-8s %s\n", "stages", "mode",
              "budget", "cpu_s", "dp_stages", "slots", "slot_B",
              "time/unplanned");
  for (int stages : lengths) {
    PlanningProblem problem = makeProblem(makeRandomChain(stages, 1), 1.0);
    SimulationResult unplanned =
        simulate(problem, makeUnplannedSchedule(problem.graph));
    for (double fraction : fractions) {
      problem.budgetBytes =
          static_cast<int64_t>(fraction * unplanned.peakBytes);
      // The strategy as the driver runs it (merging long chains).
      double start = cpuSeconds();
      Plan plan;
      std::string error;
      bool found = planChain(problem, PlanOptions(), plan, error);
      double solve = cpuSeconds() - start;
      double ratio = -1;
      if (found) {
        SimulationResult run = simulate(problem, plan.schedule);
        if (!run.valid || run.peakBytes > problem.budgetBytes) {
          std::fprintf(stderr, "BROKEN PLAN from chain at %d stages, %.2f\n",
                       stages, fraction);
          return 1;
        }
        ratio = run.seconds / unplanned.seconds;
      }
      ChainReduction merged;
      reduceToChain(problem.graph, merged, error, 100);
      std::printf("%-8d %-8s %-7.2f %-12.4f %-10zu %-8s %-8s %.4f%s\n", stages,
                  "chain", fraction, solve, merged.stages.size(), "", "", ratio,
                  found ? "" : "  (no plan)");
      // The exact programme on every stage, where it is affordable.
      if (stages > 200)
        continue;
      ChainReduction chain;
      reduceToChain(problem.graph, chain, error);
      ChainProgrammeOptions options;
      options.maxSlots = 1 << 20;
      start = cpuSeconds();
      ChainProgrammeResult result;
      found = solveChainProgramme(chain, problem.budgetBytes, options, result);
      solve = cpuSeconds() - start;
      double exactRatio = found
                              ? (unplanned.seconds + result.recomputeSeconds) /
                                    unplanned.seconds
                              : -1;
      std::printf(
          "%-8d %-8s %-7.2f %-12.4f %-10zu %-8lld %-8lld %.4f\n", stages,
          "exact", fraction, solve, chain.stages.size(),
          static_cast<long long>(problem.budgetBytes /
                                 std::max<int64_t>(result.slotBytes, 1)),
          static_cast<long long>(result.slotBytes), exactRatio);
    }
  }
  return 0;
}
