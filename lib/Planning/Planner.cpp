//===- Planner.cpp - The strategy table and driver ------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/Strategies.h"

#include "lethe/Planning/ArenaLayout.h"
#include "lethe/Planning/ChainProgramme.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>

using namespace lethe::planning;

namespace {

struct StrategyEntry {
  const char *name;
  StrategyFunction function;
};

const StrategyEntry kStrategies[] = {
    {"none", planNone},   {"sqrt", planSqrt},
    {"chain", planChain}, {"chain-offload", planChainOffload},
    {"milp", planMilp},   {"greedy", planGreedy},
    {"auto", planAuto},
};

/// How often the driver plans again below the budget for the arena to fit,
/// and of those, how often once a plan fits, for a faster one.
constexpr int kArenaAttempts = 12;
constexpr int kArenaRefinements = 4;

/// Once the room left is reclaimed, a strategy's plan for a slightly lower
/// budget can be faster than its plan for the budget itself (greedy returns
/// the lowest peak of its ladder, which recomputes more than it must). When
/// the first plan fits, the driver also plans at the budget less these
/// shares of it (1/64, 1/32, 1/16), and keeps the fastest once reclaimed.
constexpr int kProbeShifts[] = {6, 5, 4};

bool tryStrategyOnce(StrategyFunction function, const char *name,
                     const PlanningProblem &problem, const PlanOptions &options,
                     PlanResult &result, std::string &why);

/// How long reclaiming may run after it first starts, past a time limit of
/// `limit` that the strategy used (milp, auto use all of it): a tenth of
/// it, or a second. (On the test models it takes milliseconds.)
double getReclaimGrace(double limit) { return std::max(limit / 10, 1.0); }

/// Runs `function` and checks its plan; `why` says what went wrong. With
/// options.arenaAlignment, plans below the budget until the plan's arena
/// fits in it (a search over the budget the strategy is given, below), then
/// between the highest budget that gave a plan that fits and the lowest
/// that did not, for a faster one. With `reclaim`, each plan that fits gets
/// the room left in the budget reclaimed (reclaimBudget) before plans are
/// compared, and a first plan that fits is compared with those planned a
/// little below the budget (kProbeShifts).
bool tryStrategy(StrategyFunction function, const char *name,
                 const PlanningProblem &problem, const PlanOptions &options,
                 PlanResult &result, std::string &why, bool reclaim) {
  if (options.arenaAlignment <= 0)
    return tryStrategyOnce(function, name, problem, options, result, why);
  PlanningProblem trial = problem;
  std::string arenaWhy;
  // What the budgets tried gave: the fastest plan that fits, planned at
  // `fits` at most; the lowest budget whose plan did not fit (`misses`);
  // the highest at which the strategy found no plan (`fails`, below
  // `misses`).
  bool found = false;
  PlanResult best;
  int64_t fits = 0, misses = problem.budgetBytes + 1, fails = -1;
  int refinements = 0;
  int64_t lastArena = std::numeric_limits<int64_t>::max(),
          descent = options.arenaAlignment;
  // The attempts share the time limit.
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  // Every plan reclaimed shares one deadline: the time limit, or the grace
  // after the first plan to reclaim if that is later.
  double reclaimUntil = -1;
  auto reclaimRoom = [&](PlanResult &plan) {
    if (reclaimUntil < 0)
      reclaimUntil =
          std::max(options.timeLimitSeconds,
                   elapsed() + getReclaimGrace(options.timeLimitSeconds));
    reclaimBudget(problem, options.arenaAlignment,
                  std::max(0.0, reclaimUntil - elapsed()), plan);
  };
  PlanOptions remaining = options;
  double bound = -1;
  bool boundCoversOffloading = true;
  // Plans at the budgets of kProbeShifts, for `result` (reclaimed); false
  // only when a strategy breaks a rule (`why` then says so).
  auto probeBelow = [&] {
    // Only first computes left: nothing is faster.
    if (result.plan.schedule.size() == problem.graph.nodes.size())
      return true;
    for (int shift : kProbeShifts) {
      if ((problem.budgetBytes >> shift) == 0)
        continue;
      trial.budgetBytes = problem.budgetBytes - (problem.budgetBytes >> shift);
      remaining.timeLimitSeconds =
          std::max(0.0, options.timeLimitSeconds - elapsed());
      PlanResult probe;
      std::string probeWhy;
      if (!tryStrategyOnce(function, name, trial, remaining, probe, probeWhy)) {
        if (probeWhy.rfind("internal error", 0) == 0) {
          why = probeWhy;
          return false;
        }
        break;
      }
      if (!fitsInArena(getScheduleBuffers(problem, probe.plan.schedule).device,
                       options.arenaAlignment, problem.budgetBytes))
        continue;
      reclaimRoom(probe);
      if (probe.simulation.seconds < result.simulation.seconds)
        result = std::move(probe);
    }
    return true;
  };
  for (int attempt = 0; attempt < kArenaAttempts; ++attempt) {
    // An attempt out of time still runs: milp and auto then return the
    // fast strategies' plans, which may lay out within the budget.
    remaining.timeLimitSeconds =
        std::max(0.0, options.timeLimitSeconds - elapsed());
    if (!tryStrategyOnce(function, name, trial, remaining, result, why)) {
      if (attempt == 0 || why.rfind("internal error", 0) == 0)
        return false;
      // Above a plan that fits, a budget with none is no better than one
      // whose plan missed.
      if (found)
        misses = std::min(misses, trial.budgetBytes);
      else
        fails = std::max(fails, trial.budgetBytes);
    } else {
      // A strategy's lower bound holds for the budget it planned for: the
      // first attempt's is the one to return, whichever plan wins (those
      // planned lower can be faster than their own bound once reclaimed).
      if (attempt == 0) {
        bound = result.plan.lowerBoundSeconds;
        boundCoversOffloading = result.plan.lowerBoundCoversOffloading;
      }
      ScheduleBuffers buffers =
          getScheduleBuffers(problem, result.plan.schedule);
      // The greedy starts only: the full layout (--lethe-assign-arena) is
      // no larger.
      ArenaLayout layout = layOutArena(buffers.device, options.arenaAlignment,
                                       /*search=*/false);
      if (layout.arenaBytes <= problem.budgetBytes) {
        if (attempt == 0) {
          if (!reclaim)
            return true;
          reclaimRoom(result);
          bool probed = probeBelow();
          result.plan.lowerBoundSeconds = bound;
          result.plan.lowerBoundCoversOffloading = boundCoversOffloading;
          return probed;
        }
        // Plans compare as they will be returned, with their room reclaimed
        // (one that recomputes more can reclaim further).
        if (reclaim)
          reclaimRoom(result);
        if (!found || result.simulation.seconds < best.simulation.seconds)
          best = std::move(result);
        found = true;
        fits = std::max(fits, trial.budgetBytes);
      } else {
        misses = std::min(misses, trial.budgetBytes);
        if (!found && fails < 0) {
          int64_t peak = result.simulation.peakBytes;
          arenaWhy = "a plan with a peak of " + formatBytes(peak) +
                     " lays out in an arena of " +
                     formatBytes(layout.arenaBytes) +
                     ", and none below it fits";
          // Plan again below this plan's peak (a strategy asked for a
          // budget at or above it may well return the same plan), where a
          // plan that wastes as large a share of its arena would fit: at
          // budget x peak / arena, and at least `descent` lower than the
          // last attempt. Peaks and layouts do not fall in step: while the
          // arena does not shrink, the descent doubles.
          descent = layout.arenaBytes < lastArena ? options.arenaAlignment
                                                  : 2 * descent;
          lastArena = layout.arenaBytes;
          int64_t next =
              static_cast<int64_t>(static_cast<double>(problem.budgetBytes) *
                                   static_cast<double>(peak) /
                                   static_cast<double>(layout.arenaBytes));
          trial.budgetBytes = std::min({next, peak - options.arenaAlignment,
                                        trial.budgetBytes - descent});
          if (trial.budgetBytes <= 0)
            break;
          continue;
        }
      }
    }
    // Bisect: between the budgets whose plans fit and missed, for a plan
    // that recomputes or offloads less (a few times at most: each costs a
    // plan); or, none fitting yet, between where the strategy failed and
    // the lowest miss, whose plans the last jump stepped over.
    int64_t low = found ? fits : fails;
    if (found && refinements++ == kArenaRefinements)
      break;
    int64_t next = alignBytes(low + (misses - low) / 2, options.arenaAlignment);
    if (next <= low || next >= misses)
      break;
    trial.budgetBytes = next;
  }
  if (!found) {
    // The first plan missed (a first attempt without a plan returned above).
    why = arenaWhy;
    return false;
  }
  result = std::move(best);
  result.plan.lowerBoundSeconds = bound;
  result.plan.lowerBoundCoversOffloading = boundCoversOffloading;
  return true;
}

bool tryStrategyOnce(StrategyFunction function, const char *name,
                     const PlanningProblem &problem, const PlanOptions &options,
                     PlanResult &result, std::string &why) {
  Plan plan;
  if (!function(problem, options, plan, why))
    return false;
  // A strategy may name what it chose ("auto (chain)").
  if (plan.strategy.empty())
    plan.strategy = name;
  SimulationResult simulation = simulate(problem, plan.schedule);
  if (!simulation.valid) {
    // A strategy that returns a broken plan is a bug in Lethe, not an input
    // problem; say so rather than pretend the budget is too small.
    why = std::string("internal error: strategy '") + name +
          "' made an invalid plan: " + simulation.error;
    return false;
  }
  if (simulation.peakBytes > problem.budgetBytes) {
    why = std::string("internal error: strategy '") + name +
          "' made a plan with peak " + std::to_string(simulation.peakBytes) +
          " bytes over the budget of " + std::to_string(problem.budgetBytes);
    return false;
  }
  result.plan = std::move(plan);
  result.simulation = std::move(simulation);
  return true;
}

/// `options`, with `scratch` for the chain programme's table unless it
/// names one already: the many runs of a budget search then share it.
PlanOptions withChainScratch(const PlanOptions &options,
                             ChainProgrammeScratch &scratch) {
  PlanOptions shared = options;
  if (!shared.chainScratch)
    shared.chainScratch = &scratch;
  return shared;
}

} // namespace

bool lethe::planning::planNone(const PlanningProblem &problem,
                               const PlanOptions &, Plan &plan,
                               std::string &error) {
  plan.schedule = makeUnplannedSchedule(problem.graph);
  SimulationResult simulation = simulate(problem, plan.schedule);
  if (!simulation.valid) {
    error = simulation.error;
    return false;
  }
  if (simulation.peakBytes > problem.budgetBytes) {
    error = "keeping everything needs " + formatBytes(simulation.peakBytes);
    return false;
  }
  return true;
}

StrategyFunction lethe::planning::lookupStrategy(const std::string &name) {
  for (const StrategyEntry &entry : kStrategies)
    if (name == entry.name)
      return entry.function;
  return nullptr;
}

std::vector<std::string> lethe::planning::getStrategyNames() {
  std::vector<std::string> names;
  for (const StrategyEntry &entry : kStrategies)
    names.push_back(entry.name);
  return names;
}

std::string lethe::planning::formatBytesShort(int64_t bytes) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double scaled = static_cast<double>(bytes);
  int unit = 0;
  while (scaled >= 1024 && unit < 4) {
    scaled /= 1024;
    ++unit;
  }
  char buffer[64];
  if (unit == 0)
    std::snprintf(buffer, sizeof(buffer), "%lld bytes",
                  static_cast<long long>(bytes));
  else
    std::snprintf(buffer, sizeof(buffer), "%.2f %s", scaled, units[unit]);
  return buffer;
}

std::string lethe::planning::formatBytes(int64_t bytes) {
  std::string text = formatBytesShort(bytes);
  if (bytes >= 1024 || bytes <= -1024)
    text += " (" + std::to_string(bytes) + " bytes)";
  return text;
}

int64_t lethe::planning::findMinimumBudget(const std::string &name,
                                           const PlanningProblem &problem,
                                           const PlanOptions &options,
                                           int64_t low, int64_t high) {
  StrategyFunction function = lookupStrategy(name);
  if (!function)
    return -1;
  ChainProgrammeScratch scratch;
  PlanOptions shared = withChainScratch(options, scratch);
  // The probes share the time limit: each gets an equal part of what is
  // left among the probes still to come (a bisection over [low, high] makes
  // about log2(high - low) + 1), so that the search as a whole answers
  // within the limit. A probe out of time gets none: the strategies that
  // use the limit (milp, auto) then return their fast plans only.
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  auto probesLeft = [&](int64_t from, int64_t to) {
    int probes = 1;
    for (int64_t width = to - from; width > 0; width /= 2)
      ++probes;
    return probes;
  };
  auto fits = [&](int64_t budget, int probes) {
    PlanningProblem trial = problem;
    trial.budgetBytes = budget;
    PlanOptions share = shared;
    double left = options.timeLimitSeconds -
                  std::chrono::duration<double>(Clock::now() - start).count();
    share.timeLimitSeconds = std::max(0.0, left / probes);
    PlanResult result;
    std::string why;
    // Whether a plan fits does not depend on what reclaiming would add.
    return tryStrategy(function, name.c_str(), trial, share, result, why,
                       /*reclaim=*/false);
  };
  if (!fits(high, probesLeft(low, high) + 1))
    return -1;
  // Invariant: a plan fits at `high`, none is known at `low - 1`.
  while (low < high) {
    int64_t middle = low + (high - low) / 2;
    if (fits(middle, probesLeft(low, high)))
      high = middle;
    else
      low = middle + 1;
  }
  return high;
}

int64_t lethe::planning::getUnplannedBudget(const PlanningProblem &problem,
                                            const PlanOptions &options) {
  Schedule unplanned = makeUnplannedSchedule(problem.graph);
  int64_t budget = simulate(problem, unplanned).peakBytes;
  // With the arena bounded, the unplanned step needs its arena's size (as
  // tryStrategy lays it out).
  if (options.arenaAlignment > 0)
    budget = std::max(budget,
                      layOutArena(getScheduleBuffers(problem, unplanned).device,
                                  options.arenaAlignment, /*search=*/false)
                          .arenaBytes);
  return budget;
}

bool lethe::planning::runStrategy(const std::string &name,
                                  const PlanningProblem &problem,
                                  const PlanOptions &options,
                                  PlanResult &result, std::string &error,
                                  int64_t *minimumBudget) {
  if (minimumBudget)
    *minimumBudget = -1;
  StrategyFunction function = lookupStrategy(name);
  if (!function) {
    std::string names;
    for (const std::string &known : getStrategyNames())
      names += (names.empty() ? "" : ", ") + known;
    error = "unknown strategy '" + name + "'; expected one of " + names;
    return false;
  }
  ChainProgrammeScratch scratch;
  PlanOptions shared = withChainScratch(options, scratch);
  std::string why;
  if (tryStrategy(function, name.c_str(), problem, shared, result, why,
                  /*reclaim=*/true))
    return true;
  if (why.rfind("internal error", 0) == 0) {
    error = why;
    return false;
  }
  // No plan at this budget: find the smallest that has one, between the
  // budget and what the unplanned step needs (which every strategy meets).
  SimulationResult unplanned =
      simulate(problem, makeUnplannedSchedule(problem.graph));
  if (!unplanned.valid) {
    error = "the training step cannot be simulated: " + unplanned.error;
    return false;
  }
  int64_t high =
      std::max(getUnplannedBudget(problem, options), problem.budgetBytes);
  int64_t minimum =
      findMinimumBudget(name, problem, shared, problem.budgetBytes + 1, high);
  if (minimumBudget)
    *minimumBudget = minimum;
  error = "no plan fits the budget of " + formatBytes(problem.budgetBytes) +
          " with strategy '" + name + "' (" + why + ")";
  if (minimum >= 0)
    error += "; the smallest budget it can meet is " + formatBytes(minimum) +
             ", so raise budget= to at least that";
  else
    error +=
        "; it finds no plan even at the unplanned peak of " + formatBytes(high);
  return false;
}
