//===- Strategies.h - Recompute and offload planners ------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The strategies that turn a planning problem into a plan (a schedule, see
// Schedule.h) whose simulated peak is within the budget, and the driver that
// runs one by name, checks its plan and, when no plan fits, finds the
// smallest budget for which the strategy finds one.
//
// Every strategy is deterministic, keeps the unplanned order of the first
// computation of every node, and never recomputes a node that is not
// recomputable. They differ in what they may do and how hard they look:
//
//   none           keep everything (the baseline)
//   sqrt           Chen et al. 2016: about sqrt(n) checkpoints on the chain
//                  of blocks between articulation points; segments are
//                  recomputed once
//   chain          the optimal dynamic programme for heterogeneous chains
//                  (Beaumont, Herrmann et al.) on the same chain of blocks
//   chain-offload  the programme extended with offloading stage inputs and
//                  checkpoints (after POFO, Beaumont et al. 2021)
//   milp           Checkmate (Jain et al. 2020) on the general graph, solved
//                  with CBC under the time limit; reports its bound
//   greedy         offline eviction in the spirit of DTR, offloading where the
//                  copy hides under compute (as Capuchin does)
//   auto           every strategy that fits the graph and the time limit; the
//                  fastest plan wins
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_PLANNING_STRATEGIES_H
#define LETHE_PLANNING_STRATEGIES_H

#include "lethe/Planning/Schedule.h"

#include <limits>
#include <string>
#include <vector>

namespace lethe::planning {

class ChainProgrammeScratch;

struct PlanOptions {
  /// Wall-clock seconds a strategy may spend (the MILP stops at it with its
  /// best plan; auto shares it among the strategies it runs).
  double timeLimitSeconds = 60;
  /// When positive, a plan must also lay out (ArenaLayout.h, blocks of this
  /// alignment) in an arena within the budget: the device memory the step
  /// really takes. The driver then plans again below the budget until a
  /// plan's arena fits (a few times at most; docs/Planning.md says how it
  /// picks the budgets), takes back from each plan that fits the recomputes
  /// and swaps the budget has room for (reclaimBudget), and returns the
  /// fastest, with the lower bound the strategy proved for the budget
  /// itself. Reclaiming runs until the time limit, or until a tenth of it
  /// (at least a second) after it first starts if that is later. Zero: the
  /// simulated peak alone must fit, and the strategy's plan is returned as
  /// it is.
  int64_t arenaAlignment = 0;
  /// When finite, only a plan faster than this step time is of use (auto
  /// has one already): milp then skips its search where its root LP (or
  /// the first runs' time) shows there is none. The other strategies
  /// ignore it.
  double toBeatSeconds = std::numeric_limits<double>::infinity();
  /// When set, the chain strategies keep the chain programme's table there
  /// from one run to the next (ChainProgramme.h), rather than fault in tens
  /// of megabytes per run: runStrategy and findMinimumBudget set one for
  /// the many runs of their budget searches. One run at a time.
  ChainProgrammeScratch *chainScratch = nullptr;
};

/// A strategy: fills `plan` with a schedule whose simulated peak is at most
/// problem.budgetBytes and returns true, or returns false and sets `error`
/// to one line. The driver checks the plan again.
using StrategyFunction = bool (*)(const PlanningProblem &problem,
                                  const PlanOptions &options, Plan &plan,
                                  std::string &error);

/// The unplanned schedule, when it fits.
bool planNone(const PlanningProblem &, const PlanOptions &, Plan &,
              std::string &);
/// Chen et al.: segment counts around sqrt(stages); the fastest that fits.
bool planSqrt(const PlanningProblem &, const PlanOptions &, Plan &,
              std::string &);
/// The optimal checkpointing programme on the chain of blocks.
bool planChain(const PlanningProblem &, const PlanOptions &, Plan &,
               std::string &);
/// The programme that may also offload stage inputs and checkpoints, and
/// chain plans with swaps added; the fastest plan, never slower than
/// planChain.
bool planChainOffload(const PlanningProblem &, const PlanOptions &, Plan &,
                      std::string &);
/// Checkmate's MILP (Jain et al. 2020) on the whole graph, solved with CBC
/// within the time limit: recompute only, optimal among schedules that run
/// each node at most once between two first computations, in order
/// (lib/Planning/MilpPlanner.cpp). Its lower bound is CBC's best bound.
/// Refuses graphs of more than 400 nodes.
bool planMilp(const PlanningProblem &, const PlanOptions &, Plan &,
              std::string &);
/// Every other strategy within the time limit (the MILP on graphs of up to
/// 400 nodes, with the time left); the fastest plan, then the lowest peak.
/// Its lower bound is the best any of them proved, at least the unplanned
/// compute time. Names the winner in plan.strategy: "auto (chain)".
bool planAuto(const PlanningProblem &, const PlanOptions &, Plan &,
              std::string &);

/// Offline eviction in the unplanned order (DTR-like scores with known next
/// uses): drops and recomputes, or swaps where the copies hide under compute
/// (lib/Planning/GreedyPlanner.cpp). Fast on graphs of tens of thousands of
/// nodes; no optimality claim.
bool planGreedy(const PlanningProblem &, const PlanOptions &, Plan &,
                std::string &);

/// The strategy called `name`, or null.
StrategyFunction lookupStrategy(const std::string &name);

/// The names of every strategy, in the order of the table above.
std::vector<std::string> getStrategyNames();

/// What the driver returns.
struct PlanResult {
  Plan plan;
  SimulationResult simulation;
};

/// Runs strategy `name` on `problem` and checks that its plan is valid and
/// within the budget. When the strategy finds no plan, searches for the
/// smallest budget for which it does and says it in `error` ("no plan fits
/// ...; the smallest budget ... is N bytes"); `minimumBudget` is then set to
/// it, or to -1 when even the unplanned peak fails.
bool runStrategy(const std::string &name, const PlanningProblem &problem,
                 const PlanOptions &options, PlanResult &result,
                 std::string &error, int64_t *minimumBudget = nullptr);

/// Takes recomputes and swaps back out of `result`'s plan while the budget
/// has room for what they saved, for a faster step (Reclaim.cpp): a unit goes
/// when the schedule without it is valid, its peak and, with
/// `arenaAlignment` positive, its arena are within problem.budgetBytes, and
/// it runs faster (or, for a swap, no slower). Values are unchanged. Stops
/// after about `timeLimitSeconds`. Updates the plan and its simulation, and
/// returns how many steps it took out.
int reclaimBudget(const PlanningProblem &problem, int64_t arenaAlignment,
                  double timeLimitSeconds, PlanResult &result);

/// The budget every strategy meets with the unplanned schedule: its peak,
/// or with options.arenaAlignment set, the larger of that and its arena's
/// size (the layout's greedy starts, as the arena check lays out plans).
/// The top of the range to search for a strategy's smallest budget.
int64_t getUnplannedBudget(const PlanningProblem &problem,
                           const PlanOptions &options);

/// The smallest budget in [low, high] for which strategy `name` finds a
/// plan, or -1 when it finds none at `high`. Found by bisection, which takes
/// a plan at one budget to mean a plan at every larger one: with the arena
/// check (options.arenaAlignment) that holds nearly always, not surely
/// (layouts do not shrink in step with peaks), so the answer is a budget
/// the strategy meets and, rarely, not the smallest. The probes share
/// options.timeLimitSeconds, so that the search takes about that long at most
/// for milp and auto (the other strategies are fast); a probe's plan is then
/// the one the strategy finds in its share, so the answer may be above what the
/// full limit would reach at each budget.
int64_t findMinimumBudget(const std::string &name,
                          const PlanningProblem &problem,
                          const PlanOptions &options, int64_t low,
                          int64_t high);

/// Formats a byte count for messages: "1.50 GiB (1610612736 bytes)".
std::string formatBytes(int64_t bytes);
/// The same without the exact count: "1.50 GiB", "300 bytes".
std::string formatBytesShort(int64_t bytes);

} // namespace lethe::planning

#endif // LETHE_PLANNING_STRATEGIES_H
