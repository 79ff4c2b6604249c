//===- AutoStrategy.cpp - The fastest plan of every strategy --------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// `auto` runs every other strategy that fits the graph (the MILP with the
// time the others leave), keeps the plan with the shortest simulated step
// time (then the lowest peak), and reports the best lower bound any of them
// proved, or the unplanned compute time, which no plan can beat: every plan
// runs every node at least once.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/Strategies.h"

#include <algorithm>
#include <chrono>

using namespace lethe::planning;

namespace {

/// The MILP grows with the square of the graph; above this many nodes auto
/// leaves it out (it would not finish, and the heuristics do well there).
constexpr size_t kMilpMaxNodes = 400;

} // namespace

bool lethe::planning::planAuto(const PlanningProblem &problem,
                               const PlanOptions &options, Plan &plan,
                               std::string &error) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  auto secondsLeft = [&]() {
    return options.timeLimitSeconds -
           std::chrono::duration<double>(Clock::now() - start).count();
  };

  double lowerBound = 0;
  for (const GraphNode &node : problem.graph.nodes)
    lowerBound += node.seconds;

  // Fast strategies first; the MILP last, with whatever time is left.
  std::vector<std::string> names;
  for (const std::string &name : getStrategyNames())
    if (name != "auto" && name != "milp")
      names.push_back(name);
  if (lookupStrategy("milp") && problem.graph.nodes.size() <= kMilpMaxNodes)
    names.push_back("milp");

  bool found = false;
  SimulationResult best;
  std::string tried;
  for (const std::string &name : names) {
    // The fast strategies run whatever the limit (they take it as a cap at
    // most); the MILP only with time left.
    if (name == "milp" && secondsLeft() <= 0)
      break;
    tried += (tried.empty() ? "" : ", ") + name;
    PlanOptions remaining = options;
    remaining.timeLimitSeconds = secondsLeft();
    // The MILP need only look for plans faster than the best so far: with
    // that cutoff CBC often proves at its root that none is, rather than
    // searching until the time limit.
    if (found)
      remaining.toBeatSeconds = best.seconds;
    Plan candidate;
    std::string why;
    if (!lookupStrategy(name)(problem, remaining, candidate, why))
      continue;
    SimulationResult simulation = simulate(problem, candidate.schedule);
    if (!simulation.valid || simulation.peakBytes > problem.budgetBytes)
      continue;
    if (candidate.lowerBoundCoversOffloading)
      lowerBound = std::max(lowerBound, candidate.lowerBoundSeconds);
    if (!found || simulation.seconds < best.seconds ||
        (simulation.seconds == best.seconds &&
         simulation.peakBytes < best.peakBytes)) {
      found = true;
      best = simulation;
      plan.schedule = std::move(candidate.schedule);
      plan.strategy = "auto (" + name + ")";
    }
  }
  if (!found) {
    error = "none of " + tried + " finds a plan";
    return false;
  }
  plan.lowerBoundSeconds = lowerBound;
  return true;
}
