//===- Planner.cpp - The strategy table and driver ------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/Strategies.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

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

/// Runs `function` and checks its plan; `why` says what went wrong.
bool tryStrategy(StrategyFunction function, const char *name,
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
  auto fits = [&](int64_t budget) {
    PlanningProblem trial = problem;
    trial.budgetBytes = budget;
    PlanResult result;
    std::string why;
    return tryStrategy(function, name.c_str(), trial, options, result, why);
  };
  if (!fits(high))
    return -1;
  // Invariant: a plan fits at `high`, none is known at `low - 1`.
  while (low < high) {
    int64_t middle = low + (high - low) / 2;
    if (fits(middle))
      high = middle;
    else
      low = middle + 1;
  }
  return high;
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
  std::string why;
  if (tryStrategy(function, name.c_str(), problem, options, result, why))
    return true;
  if (why.rfind("internal error", 0) == 0) {
    error = why;
    return false;
  }
  // No plan at this budget: find the smallest that has one, between the
  // budget and the unplanned peak (which every strategy meets).
  SimulationResult unplanned =
      simulate(problem, makeUnplannedSchedule(problem.graph));
  if (!unplanned.valid) {
    error = "the training step cannot be simulated: " + unplanned.error;
    return false;
  }
  int64_t high = std::max(unplanned.peakBytes, problem.budgetBytes);
  int64_t minimum =
      findMinimumBudget(name, problem, options, problem.budgetBytes + 1, high);
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
