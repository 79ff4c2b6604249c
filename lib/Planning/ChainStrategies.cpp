//===- ChainStrategies.cpp - The sqrt, chain and chain-offload strategies -===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The strategies that plan on the chain of stages of a training step: sqrt
// (Chen et al.), chain (the dynamic programme of ChainProgramme.h) and
// chain-offload (the programme with offloading, and chain plans with swaps
// added, ChainProgramme.h). Each one
// checks its plan with the simulator: the chain model is exact on most
// training steps but conservative on some (ChainReduction.h), and a plan is
// cheap to check.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/ChainProgramme.h"
#include "lethe/Planning/Strategies.h"

#include <algorithm>
#include <cmath>
#include <exception>

using namespace lethe::planning;

namespace {

/// Chains longer than this are merged into this many blocks, which keeps the
/// programme near a second (its work grows as stages^3 * slots).
constexpr int kMaxProgrammeStages = 100;
/// Times the chain strategy tightens the programme's budget when a plan
/// simulates over the budget.
constexpr int kMaxTightenings = 8;

/// Simulates `schedule` and says whether it is valid and within the budget.
bool fits(const PlanningProblem &problem, const Schedule &schedule,
          SimulationResult &simulation) {
  simulation = simulate(problem, schedule);
  return simulation.valid && simulation.peakBytes <= problem.budgetBytes;
}

/// Whether (seconds, peak) is better than the best so far: faster, or as
/// fast with a lower peak.
bool isBetter(const SimulationResult &candidate, const SimulationResult *best) {
  if (!best)
    return true;
  double epsilon = 1e-9 * std::max(best->seconds, 1e-300);
  if (candidate.seconds < best->seconds - epsilon)
    return true;
  return candidate.seconds <= best->seconds + epsilon &&
         candidate.peakBytes < best->peakBytes;
}

/// `schedule` with every release moved later and every prefetch earlier,
/// past computes, until the compute in between covers the copy (from the
/// offload to its release, from a prefetch to the first compute that reads
/// its value), so that the copies hide under compute rather than stall it.
/// A release never moves past a read of its value or a step that is not a
/// compute, nor a prefetch before one.
Schedule spreadCopies(const PlanningProblem &problem, Schedule schedule) {
  const TrainingGraph &graph = problem.graph;
  auto movable = [&](const Step &step, int value) {
    if (step.kind != StepKind::Compute)
      return false;
    const std::vector<int> &inputs = graph.nodes[step.id].inputs;
    return std::find(inputs.begin(), inputs.end(), value) == inputs.end();
  };
  // Releases from the last, so that each moves past steps already placed.
  for (size_t index = schedule.size(); index-- > 0;) {
    if (schedule[index].kind != StepKind::Release)
      continue;
    int value = schedule[index].id;
    double copy = problem.link.copySeconds(graph.values[value].bytes, false);
    double covered = 0;
    for (size_t at = index; at + 1 < schedule.size() && covered < copy &&
                            movable(schedule[at + 1], value);
         ++at) {
      covered += graph.nodes[schedule[at + 1].id].seconds;
      std::swap(schedule[at], schedule[at + 1]);
    }
  }
  for (size_t index = 0; index < schedule.size(); ++index) {
    if (schedule[index].kind != StepKind::Prefetch)
      continue;
    int value = schedule[index].id;
    double copy = problem.link.copySeconds(graph.values[value].bytes, true);
    double covered = 0;
    for (size_t at = index;
         at > 0 && covered < copy && movable(schedule[at - 1], value); --at) {
      covered += graph.nodes[schedule[at - 1].id].seconds;
      std::swap(schedule[at], schedule[at - 1]);
    }
  }
  return schedule;
}

/// The programme's settings for a strategy run with `options`: its table in
/// the scratch the driver passes (PlanOptions::chainScratch), else in `own`.
ChainProgrammeOptions programmeOptions(const PlanOptions &options,
                                       ChainProgrammeScratch &own) {
  ChainProgrammeOptions programme;
  programme.scratch = options.chainScratch ? options.chainScratch : &own;
  return programme;
}

/// The chain programme's plan at `problem`'s budget, tightening the
/// programme's budget while the simulated peak exceeds the real one.
bool planChainSchedule(const PlanningProblem &problem,
                       const ChainReduction &chain, Schedule &schedule,
                       SimulationResult &simulation,
                       const ChainProgrammeOptions &options) {
  int64_t budget = problem.budgetBytes;
  for (int attempt = 0; attempt <= kMaxTightenings && budget >= 0; ++attempt) {
    ChainProgrammeResult solution;
    if (!solveChainProgramme(chain, budget, options, solution))
      return false;
    Schedule candidate =
        translateOperations(chain, expandStrategy(solution.strategy));
    SimulationResult result;
    if (options.offloadLink) {
      // As translated, a release waits for its offload and a prefetch
      // arrives late; spread out, the copies hide under compute but hold
      // their values longer. Keep the faster that fits.
      Schedule spread = spreadCopies(problem, candidate);
      SimulationResult spreadResult;
      if (fits(problem, spread, spreadResult) &&
          (!fits(problem, candidate, result) ||
           spreadResult.seconds < result.seconds)) {
        candidate = std::move(spread);
        result = std::move(spreadResult);
      }
    }
    if (fits(problem, candidate, result)) {
      schedule = std::move(candidate);
      simulation = std::move(result);
      return true;
    }
    if (!result.valid)
      return false;
    budget -= std::max<int64_t>(result.peakBytes - problem.budgetBytes, 1);
  }
  return false;
}

/// Whether the chain strategies should return the unplanned schedule: when
/// it fits, it is the fastest plan there is (every plan runs every node at
/// least once, and it has no stall), whatever the chain model estimates;
/// and a step without a forward node has no chain, so it is the only plan.
bool useUnplanned(const PlanningProblem &problem) {
  bool hasForward = false;
  for (const GraphNode &node : problem.graph.nodes)
    hasForward |= node.role == NodeRole::Forward;
  if (!hasForward)
    return true;
  SimulationResult unplanned;
  return fits(problem, makeUnplannedSchedule(problem.graph), unplanned);
}

} // namespace

bool lethe::planning::planChain(const PlanningProblem &problem,
                                const PlanOptions &options, Plan &plan,
                                std::string &error) {
  if (useUnplanned(problem))
    return planNone(problem, options, plan, error);
  try {
    ChainReduction chain;
    if (!reduceToChain(problem.graph, chain, error, kMaxProgrammeStages))
      return false;
    ChainProgrammeScratch own;
    ChainProgrammeOptions programme = programmeOptions(options, own);
    SimulationResult simulation;
    if (!planChainSchedule(problem, chain, plan.schedule, simulation,
                           programme)) {
      error = "the chain programme finds no schedule within the budget";
      return false;
    }
    return true;
  } catch (const std::exception &exception) {
    error = std::string("the chain programme failed: ") + exception.what();
    return false;
  }
}

bool lethe::planning::planSqrt(const PlanningProblem &problem,
                               const PlanOptions &options, Plan &plan,
                               std::string &error) {
  if (useUnplanned(problem))
    return planNone(problem, options, plan, error);
  try {
    ChainReduction chain;
    if (!reduceToChain(problem.graph, chain, error))
      return false;
    int numStages = static_cast<int>(chain.stages.size());
    double root = std::sqrt(static_cast<double>(numStages));
    int lowest = std::max(1, static_cast<int>(std::floor(root / 2)));
    int highest = std::min(numStages, static_cast<int>(std::ceil(2 * root)));
    SimulationResult best;
    bool found = false;
    for (int segments = lowest; segments <= highest; ++segments) {
      Schedule schedule = translateOperations(
          chain, expandStrategy(makeSegmentStrategy(numStages, segments)));
      SimulationResult simulation;
      if (!fits(problem, schedule, simulation) ||
          !isBetter(simulation, found ? &best : nullptr))
        continue;
      best = std::move(simulation);
      plan.schedule = std::move(schedule);
      found = true;
    }
    if (!found) {
      error = "no segment count near sqrt(" + std::to_string(numStages) +
              " stages) fits the budget";
      return false;
    }
    return true;
  } catch (const std::exception &exception) {
    error = std::string("the sqrt strategy failed: ") + exception.what();
    return false;
  }
}

//===----------------------------------------------------------------------===//
// chain-offload
//===----------------------------------------------------------------------===//

namespace {

/// Offloading one value between two of its uses in a base schedule: offload
/// after step `after`, release before step `release`, prefetch before step
/// `prefetch` (indices into the base schedule).
struct Swap {
  int value = 0;
  size_t after = 0, release = 0, prefetch = 0;
};

/// The base schedule with `swaps` inserted; `baseIndex` maps each step to
/// the base step it comes with.
Schedule insertSwaps(const Schedule &base, const std::vector<Swap> &swaps,
                     std::vector<size_t> &baseIndex) {
  // Steps to insert before and after each base step, in the order releases,
  // prefetches (before), offloads (after).
  std::vector<std::vector<Step>> before(base.size()), after(base.size());
  for (const Swap &swap : swaps)
    before[swap.release].push_back(Step::release(swap.value));
  for (const Swap &swap : swaps)
    before[swap.prefetch].push_back(Step::prefetch(swap.value));
  for (const Swap &swap : swaps)
    after[swap.after].push_back(Step::offload(swap.value));
  Schedule schedule;
  baseIndex.clear();
  auto emit = [&](Step step, size_t index) {
    schedule.push_back(step);
    baseIndex.push_back(index);
  };
  for (size_t index = 0; index < base.size(); ++index) {
    for (const Step &step : before[index])
      emit(step, index);
    emit(base[index], index);
    for (const Step &step : after[index])
      emit(step, index);
  }
  return schedule;
}

/// Every swap of an activation that hides its copies under the computes
/// between two uses of one version (its making counts as a use).
std::vector<Swap> findSwaps(const PlanningProblem &problem,
                            const Schedule &base) {
  const TrainingGraph &graph = problem.graph;
  std::vector<double> elapsed(base.size() + 1, 0);
  for (size_t index = 0; index < base.size(); ++index)
    elapsed[index + 1] = elapsed[index] + graph.nodes[base[index].id].seconds;
  // Uses of the current version of each value, in order.
  std::vector<std::vector<size_t>> uses(graph.values.size());
  std::vector<Swap> swaps;
  auto closeVersion = [&](int value) {
    const std::vector<size_t> &at = uses[value];
    int64_t bytes = graph.values[value].bytes;
    double out = problem.link.copySeconds(bytes, false);
    double in = problem.link.copySeconds(bytes, true);
    for (size_t k = 0; k + 1 < at.size(); ++k) {
      size_t release = at[k] + 1;
      while (release < at[k + 1] && elapsed[release] - elapsed[at[k] + 1] < out)
        ++release;
      size_t prefetch = at[k + 1];
      while (prefetch > release && elapsed[at[k + 1]] - elapsed[prefetch] < in)
        --prefetch;
      if (release < prefetch)
        swaps.push_back({value, at[k], release, prefetch});
    }
  };
  for (size_t index = 0; index < base.size(); ++index) {
    const GraphNode &node = graph.nodes[base[index].id];
    for (int value : node.inputs)
      if (uses[value].empty() || uses[value].back() != index)
        uses[value].push_back(index);
    for (int value : node.outputs) {
      const GraphValue &v = graph.values[value];
      if (node.role != NodeRole::Forward || v.isOutput)
        continue;
      closeVersion(value);
      uses[value] = {index};
    }
  }
  for (int value = 0; value < static_cast<int>(graph.values.size()); ++value)
    if (graph.values[value].producer >= 0 &&
        graph.nodes[graph.values[value].producer].role == NodeRole::Forward &&
        !graph.values[value].isOutput)
      closeVersion(value);
  return swaps;
}

/// Adds swaps to `base` until its simulated peak is within the budget:
/// each time the largest swap whose absence covers the peak step.
bool offloadToBudget(const PlanningProblem &problem, const Schedule &base,
                     Schedule &schedule, SimulationResult &simulation) {
  std::vector<Swap> candidates = findSwaps(problem, base);
  std::vector<bool> used(candidates.size(), false);
  std::vector<Swap> chosen;
  // The chosen swaps of each value.
  std::vector<std::vector<size_t>> chosenOf(problem.graph.values.size());
  std::vector<size_t> baseIndex;
  for (;;) {
    Schedule current = insertSwaps(base, chosen, baseIndex);
    SimulationResult result = simulate(problem, current);
    if (!result.valid)
      return false;
    if (result.peakBytes <= problem.budgetBytes) {
      schedule = std::move(current);
      simulation = std::move(result);
      return true;
    }
    if (result.peakStep >= static_cast<int64_t>(current.size()))
      return false;
    size_t peak = baseIndex[result.peakStep];
    int pick = -1;
    for (size_t k = 0; k < candidates.size(); ++k) {
      const Swap &swap = candidates[k];
      if (used[k] || swap.release > peak || peak >= swap.prefetch)
        continue;
      // One swap per version and gap: skip swaps overlapping a chosen one of
      // the same value.
      bool overlaps = false;
      for (size_t other : chosenOf[swap.value])
        if (chosen[other].after < swap.prefetch &&
            swap.after < chosen[other].prefetch)
          overlaps = true;
      if (overlaps)
        continue;
      if (pick < 0 || problem.graph.values[swap.value].bytes >
                          problem.graph.values[candidates[pick].value].bytes)
        pick = static_cast<int>(k);
    }
    if (pick < 0)
      return false;
    used[pick] = true;
    chosenOf[candidates[pick].value].push_back(chosen.size());
    chosen.push_back(candidates[pick]);
  }
}

} // namespace

bool lethe::planning::planChainOffload(const PlanningProblem &problem,
                                       const PlanOptions &options, Plan &plan,
                                       std::string &error) {
  if (useUnplanned(problem))
    return planNone(problem, options, plan, error);
  try {
    ChainReduction chain;
    if (!reduceToChain(problem.graph, chain, error, kMaxProgrammeStages))
      return false;
    SimulationResult best;
    bool found = false;
    auto consider = [&](Schedule &schedule, SimulationResult &simulation) {
      if (!isBetter(simulation, found ? &best : nullptr))
        return;
      best = std::move(simulation);
      plan.schedule = std::move(schedule);
      found = true;
    };
    // The chain plan itself, so that this is never slower than chain. The
    // solves below share one table's memory.
    ChainProgrammeScratch own;
    ChainProgrammeOptions programme = programmeOptions(options, own);
    Schedule schedule;
    SimulationResult simulation;
    if (planChainSchedule(problem, chain, schedule, simulation, programme))
      consider(schedule, simulation);
    // The programme that may also offload the checkpoints of its splits.
    ChainProgrammeOptions offloading = programme;
    offloading.offloadLink = &problem.link;
    if (planChainSchedule(problem, chain, schedule, simulation, offloading))
      consider(schedule, simulation);
    // Plans for larger budgets, brought down to this one by swapping.
    SimulationResult unplanned =
        simulate(problem, makeUnplannedSchedule(problem.graph));
    if (!unplanned.valid) {
      error = unplanned.error;
      return false;
    }
    // From the loosest (the unplanned schedule) down; no plan is faster than
    // the unplanned step, so stop when one is as fast.
    constexpr int kRungs = 6;
    int64_t low = problem.budgetBytes, high = unplanned.peakBytes;
    for (int rung = kRungs; rung >= 1 && low < high; --rung) {
      if (found && best.seconds <= unplanned.seconds * (1 + 1e-12))
        break;
      PlanningProblem looser = problem;
      looser.budgetBytes = low + (high - low) * rung / kRungs;
      Schedule base;
      SimulationResult baseSimulation;
      if (rung == kRungs)
        base = makeUnplannedSchedule(problem.graph);
      else if (!planChainSchedule(looser, chain, base, baseSimulation,
                                  programme))
        continue;
      Schedule swapped;
      SimulationResult swappedSimulation;
      if (offloadToBudget(problem, base, swapped, swappedSimulation))
        consider(swapped, swappedSimulation);
    }
    if (!found) {
      error = "neither the chain programme nor offloading finds a schedule "
              "within the budget";
      return false;
    }
    return true;
  } catch (const std::exception &exception) {
    error =
        std::string("the chain-offload strategy failed: ") + exception.what();
    return false;
  }
}
