//===- Reclaim.cpp - Spend a plan's unused budget on speed ----------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// A strategy plans against the simulated peak, and the driver's arena check
// may then have planned it below the budget (Planner.cpp). Either way the
// plan can leave part of the budget unused, while it still recomputes or
// swaps values that would fit. reclaimBudget takes such work back out of the
// schedule, one unit at a time:
//
//  - a recompute: one compute step of a node that ran before. Without it,
//    the reads after it see the node's previous version, which the freeing
//    rule of simulate() now keeps alive up to them (or, if that version was
//    offloaded and released, the schedule breaks a rule and the unit stays);
//  - a swap: every offload, release and prefetch of one value, which then
//    stays resident from where it is made to its last read.
//
// With a recompute go the recomputes that only fed it. A unit goes when
// the schedule without it is valid, its peak and its arena (the layout's
// greedy starts, as the arena check lays out plans) are within the budget,
// and the step gets faster. Units are tried in order, all of them again
// while some go; then the swaps that are left once more, to go if the step
// gets no slower (a copy hidden under compute costs no time, but link
// bandwidth and host memory). This runs in two orders, the dearest units
// first and the most time per byte first, and the faster result wins.
//
// Values are unchanged: a recompute gives the bits of the version it
// replaces, and so does a prefetch.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/Strategies.h"

#include "lethe/Planning/ArenaLayout.h"

#include <algorithm>
#include <chrono>

using namespace lethe::planning;

namespace {

/// What can be taken out of a schedule: its steps, what it costs (the
/// node's time for a recompute, the copy back for a swap) and the bytes it
/// frees early (the node's outputs, the value).
struct Unit {
  std::vector<size_t> steps;
  double seconds = 0;
  int64_t bytes = 0;
  bool isSwap = false;
};

/// For each step of `schedule`, whether it is the first compute of its node.
std::vector<char> markFirstComputes(const TrainingGraph &graph,
                                    const Schedule &schedule) {
  std::vector<char> first(schedule.size(), 0);
  std::vector<char> computed(graph.nodes.size(), 0);
  for (size_t index = 0; index < schedule.size(); ++index)
    if (schedule[index].kind == StepKind::Compute &&
        !computed[schedule[index].id]) {
      computed[schedule[index].id] = 1;
      first[index] = 1;
    }
  return first;
}

std::vector<Unit> findUnits(const PlanningProblem &problem,
                            const Schedule &schedule,
                            const std::vector<char> &firstCompute) {
  const TrainingGraph &graph = problem.graph;
  std::vector<Unit> units;
  std::vector<int> swapOf(graph.values.size(), -1);
  for (size_t index = 0; index < schedule.size(); ++index) {
    const Step &step = schedule[index];
    if (step.kind == StepKind::Compute) {
      if (firstCompute[index])
        continue;
      const GraphNode &node = graph.nodes[step.id];
      int64_t bytes = 0;
      for (int output : node.outputs)
        bytes += graph.values[output].bytes;
      units.push_back({{index}, node.seconds, bytes, false});
      continue;
    }
    int &unit = swapOf[step.id];
    if (unit < 0) {
      int64_t bytes = graph.values[step.id].bytes;
      unit = static_cast<int>(units.size());
      units.push_back({{},
                       problem.link.copySeconds(bytes, /*toDevice=*/true),
                       bytes,
                       true});
    }
    units[unit].steps.push_back(index);
  }
  return units;
}

using Clock = std::chrono::steady_clock;

/// reclaimBudget in one order of `units`, for about `seconds` (any
/// number, infinity included); returns how many steps went.
int reclaimInOrder(const PlanningProblem &problem, int64_t arenaAlignment,
                   double seconds, const std::vector<Unit> &units,
                   const std::vector<char> &firstCompute, PlanResult &result) {
  Clock::time_point start = Clock::now();
  auto outOfTime = [&] {
    return std::chrono::duration<double>(Clock::now() - start).count() >
           seconds;
  };
  const TrainingGraph &graph = problem.graph;
  const Schedule &original = result.plan.schedule;
  std::vector<char> removed(original.size(), 0);
  auto build = [&] {
    Schedule schedule;
    schedule.reserve(original.size());
    for (size_t index = 0; index < original.size(); ++index)
      if (!removed[index])
        schedule.push_back(original[index]);
    return schedule;
  };
  auto reads = [&](const Step &step, int value) {
    if (step.kind == StepKind::Offload)
      return step.id == value;
    if (step.kind != StepKind::Compute)
      return false;
    const std::vector<int> &inputs = graph.nodes[step.id].inputs;
    return std::find(inputs.begin(), inputs.end(), value) != inputs.end();
  };
  // Whether the compute at `at` makes a version of `value` that a later
  // step reads, or that the step returns.
  auto isRead = [&](size_t at, int value) {
    int node = original[at].id;
    for (size_t index = at + 1; index < original.size(); ++index) {
      if (removed[index])
        continue;
      const Step &step = original[index];
      if (reads(step, value))
        return true;
      if ((step.kind == StepKind::Compute && step.id == node) ||
          (step.kind == StepKind::Prefetch && step.id == value))
        return false;
    }
    return graph.values[value].isOutput;
  };
  // The step before `before` that made the version of `value` a read there
  // sees: the last compute of its producer or prefetch of it (-1: none).
  auto versionOf = [&](size_t before, int value) -> int64_t {
    int producer = graph.values[value].producer;
    for (size_t index = before; index-- > 0;) {
      if (removed[index])
        continue;
      const Step &step = original[index];
      if ((step.kind == StepKind::Compute && step.id == producer) ||
          (step.kind == StepKind::Prefetch && step.id == value))
        return static_cast<int64_t>(index);
    }
    return -1;
  };
  // Removes the steps of `unit` and then every recompute that only fed
  // them; returns the steps removed.
  auto removeUnit = [&](const Unit &unit) {
    std::vector<size_t> gone = unit.steps, work;
    for (size_t index : unit.steps) {
      removed[index] = 1;
      if (original[index].kind == StepKind::Compute)
        work.push_back(index);
    }
    while (!work.empty()) {
      size_t at = work.back();
      work.pop_back();
      for (int input : graph.nodes[original[at].id].inputs) {
        int64_t version = versionOf(at, input);
        if (version < 0 || removed[version] || firstCompute[version] ||
            original[version].kind != StepKind::Compute)
          continue;
        const std::vector<int> &outputs =
            graph.nodes[original[version].id].outputs;
        if (std::any_of(outputs.begin(), outputs.end(),
                        [&](int output) { return isRead(version, output); }))
          continue;
        removed[version] = 1;
        gone.push_back(version);
        work.push_back(version);
      }
    }
    return gone;
  };

  SimulationResult current = result.simulation;
  int count = 0;
  // Takes `unit` out when the step gets faster, or with `noSlower`, when it
  // gets no slower. Returns whether it went.
  auto tryUnit = [&](const Unit &unit, bool noSlower) {
    std::vector<size_t> gone = removeUnit(unit);
    Schedule schedule = build();
    SimulationResult simulation = simulate(problem, schedule);
    bool keep = simulation.valid &&
                simulation.peakBytes <= problem.budgetBytes &&
                (simulation.seconds < current.seconds ||
                 (noSlower && simulation.seconds <= current.seconds)) &&
                (arenaAlignment <= 0 ||
                 fitsInArena(getScheduleBuffers(problem, schedule).device,
                             arenaAlignment, problem.budgetBytes));
    if (!keep) {
      for (size_t index : gone)
        removed[index] = 0;
      return false;
    }
    current = std::move(simulation);
    count += static_cast<int>(gone.size());
    return true;
  };

  // Every unit, and again while some went: a unit can go once others have
  // (a recompute of a value that a swap released, once the swap went; a
  // value that fits once the peak moved). Then the swaps left, if the step
  // is no slower without them.
  for (bool went = true; went;) {
    went = false;
    for (const Unit &unit : units) {
      // A recompute that fed one taken out is already gone.
      if (removed[unit.steps.front()])
        continue;
      if (outOfTime())
        break;
      went |= tryUnit(unit, /*noSlower=*/false);
    }
  }
  for (const Unit &unit : units) {
    if (!unit.isSwap || removed[unit.steps.front()])
      continue;
    if (outOfTime())
      break;
    tryUnit(unit, /*noSlower=*/true);
  }
  if (count > 0) {
    result.plan.schedule = build();
    result.simulation = std::move(current);
  }
  return count;
}

} // namespace

int lethe::planning::reclaimBudget(const PlanningProblem &problem,
                                   int64_t arenaAlignment,
                                   double timeLimitSeconds,
                                   PlanResult &result) {
  Clock::time_point start = Clock::now();
  // Two orders, the faster result wins: the dearest units first, and the
  // units that cost the most time for the bytes they free first. Neither
  // wins everywhere (the first removal can use up the room that several
  // cheaper ones would have shared).
  std::vector<char> firstCompute =
      markFirstComputes(problem.graph, result.plan.schedule);
  std::vector<Unit> byCost =
      findUnits(problem, result.plan.schedule, firstCompute);
  std::vector<Unit> byCostPerByte = byCost;
  std::stable_sort(
      byCost.begin(), byCost.end(),
      [](const Unit &a, const Unit &b) { return a.seconds > b.seconds; });
  auto perByte = [](const Unit &unit) {
    return unit.seconds / static_cast<double>(std::max<int64_t>(unit.bytes, 1));
  };
  std::stable_sort(
      byCostPerByte.begin(), byCostPerByte.end(),
      [&](const Unit &a, const Unit &b) { return perByte(a) > perByte(b); });
  // Each order gets half the time (the second what the first left).
  PlanResult best = result;
  int bestCount = reclaimInOrder(problem, arenaAlignment, timeLimitSeconds / 2,
                                 byCost, firstCompute, best);
  PlanResult other = result;
  int otherCount = reclaimInOrder(
      problem, arenaAlignment,
      timeLimitSeconds -
          std::chrono::duration<double>(Clock::now() - start).count(),
      byCostPerByte, firstCompute, other);
  if (other.simulation.seconds < best.simulation.seconds) {
    best = std::move(other);
    bestCount = otherCount;
  }
  result = std::move(best);
  return bestCount;
}
