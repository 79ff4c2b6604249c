//===- GreedyPlanner.cpp - Offline eviction with recompute and swap -------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The `greedy` strategy: a fast heuristic for graphs too large for the MILP.
// It replays the unplanned order and, whenever the next compute would not
// fit the budget, evicts the resident value with the lowest score
//
//     restore cost / (bytes x time until it is needed again),
//
// in the spirit of DTR (Kirisame et al. 2021), but offline: the planner
// knows every value's next use. A victim is either dropped (freed after its
// last read, and recomputed, its evicted inputs first, when it is needed
// again) or swapped (offloaded after its last read, released at the
// eviction, prefetched as early as memory allows before its next use), as
// Capuchin (Peng et al. 2020) does where the copy hides under compute. The
// restore cost of a swap is the stall that the copies are expected to
// cause, given the host link and the compute time between the events.
//
// One run tracks memory per compute ("slot") in a segment tree, so that a
// prefetch can be moved back over earlier slots without a scan, and keeps
// the candidates in a lazily updated heap (O(n log n) for n steps, plus the
// recomputes). A value needed only to recompute a dropped one is kept (or
// kept restorable) until that one's last use.
//
// One run's peak can lie well under its budget, and a slightly tighter
// budget can then give a higher peak. planGreedy therefore runs a ladder of
// budgets that does not depend on the one asked for (see there) and keeps
// the lowest peak that fits: the planned peak never rises as the budget
// falls. On large graphs the ladder is cut short (kWalkNodeRuns) and that
// holds nearly always rather than surely.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/Strategies.h"

#include <algorithm>
#include <limits>
#include <queue>

using namespace lethe::planning;

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// planGreedy walks down from the unplanned peak with at most this many
/// nodes times runs of the planner ...
constexpr int64_t kWalkNodeRuns = 200000;
/// ... and beyond that also plans at this many looser budgets (+1/2, +1/4,
/// ... of the budget), to carry a lower peak over.
constexpr int kCarriedBudgets = 8;

/// Range add and range maximum over the slots' memory.
class MaxTree {
public:
  explicit MaxTree(int size) : size(std::max(size, 1)) {
    maximum.assign(4 * this->size, 0);
    pending.assign(4 * this->size, 0);
  }
  int capacity() const { return size; }
  void add(int first, int last, int64_t delta) {
    if (first <= last)
      add(1, 0, size - 1, first, last, delta);
  }
  int64_t max(int first, int last) {
    if (first > last)
      return std::numeric_limits<int64_t>::min();
    return max(1, 0, size - 1, first, last);
  }

private:
  void add(int node, int low, int high, int first, int last, int64_t delta) {
    if (last < low || high < first)
      return;
    if (first <= low && high <= last) {
      maximum[node] += delta;
      pending[node] += delta;
      return;
    }
    int middle = (low + high) / 2;
    add(2 * node, low, middle, first, last, delta);
    add(2 * node + 1, middle + 1, high, first, last, delta);
    maximum[node] =
        pending[node] + std::max(maximum[2 * node], maximum[2 * node + 1]);
  }
  int64_t max(int node, int low, int high, int first, int last) {
    if (first <= low && high <= last)
      return maximum[node];
    int middle = (low + high) / 2;
    int64_t best = std::numeric_limits<int64_t>::min();
    if (first <= middle)
      best = std::max(best, max(2 * node, low, middle, first, last));
    if (last > middle)
      best = std::max(best, max(2 * node + 1, middle + 1, high, first, last));
    return best + pending[node];
  }
  int size;
  std::vector<int64_t> maximum, pending;
};

enum class State { Resident, Swapped, Gone };

/// Why planning stopped; caught in planGreedy.
struct GreedyFailure {
  std::string reason;
};

class GreedyPlanner {
public:
  GreedyPlanner(const PlanningProblem &problem, int64_t budget)
      : problem(problem), graph(problem.graph), budget(budget),
        numNodes(static_cast<int>(graph.nodes.size())),
        numValues(static_cast<int>(graph.values.size())),
        slotLimit(8 * numNodes + 64), tree(slotLimit + 1) {}

  Schedule run();
  /// The highest memory the planner counted at a compute.
  int64_t countedPeak() const { return runningPeak; }

private:
  struct Candidate {
    double score;
    int value;
    uint64_t stamp;
    bool operator<(const Candidate &other) const {
      // std::priority_queue is a max-heap: invert for the lowest score, and
      // break ties by value id so that the plan is deterministic.
      if (score != other.score)
        return score > other.score;
      return value > other.value;
    }
  };
  struct Insertion {
    int slot;
    int rank; // offload 0, release 1, prefetch 2
    int64_t sequence;
    Step step;
  };

  bool isRestorableForward(int node) const {
    return node >= 0 && graph.nodes[node].recomputable &&
           graph.nodes[node].role == NodeRole::Forward;
  }
  /// The first original user of `value` at or after node `time`, or
  /// numNodes.
  int nextUse(int value, int time);
  /// The last node index at which `value` may still be needed (numNodes for
  /// outputs), or -1.
  int lastNeed(int value);
  bool isNeeded(int value, int time) {
    return nextUse(value, time) < numNodes || neededUntil[value] >= time ||
           graph.values[value].isOutput;
  }
  double timeUntil(int node) const {
    return startTime[std::min(node, numNodes)] - startTime[now];
  }
  double recomputeCost(int value) const;
  double swapCost(int value, double until) const;
  /// The score of evicting `value` now, and whether it would be swapped.
  double score(int value, bool &swap);
  void push(int value);
  /// Whether `value`, once gone, can be recomputed until node `target`; if
  /// `commit`, extends its inputs' lifetimes accordingly.
  bool canRecompute(int value, int target, bool commit);
  void evictOne();
  void ensureRoom(int64_t extra);
  void restore(int value);
  void prefetch(int value);
  void computeSlot(int node);
  void freeValue(int value);
  void freeIfUnneeded(int value, int time);
  /// The compute stream's time when the steps before slot `slot` are issued.
  double groupTime(int slot) const {
    if (slot <= 0)
      return 0;
    if (slot - 1 < static_cast<int>(clockAfter.size()))
      return clockAfter[slot - 1];
    return clock;
  }
  void insert(int slot, int rank, Step step) {
    insertions.push_back({slot, rank, sequence++, step});
  }

  const PlanningProblem &problem;
  const TrainingGraph &graph;
  /// The budget of this run (planGreedy runs several).
  int64_t budget;
  int numNodes, numValues;
  int slotLimit;
  MaxTree tree;

  // Per value.
  std::vector<State> state;
  std::vector<size_t> usePointer;
  std::vector<int> neededUntil;
  std::vector<int> lastReadSlot;
  std::vector<int> releaseSlot;
  std::vector<int> pins;
  std::vector<uint64_t> stamps;
  std::vector<double> restoreCostOf;
  std::vector<double> readyTime; // when a prefetched copy arrives
  std::vector<int> checkMark;
  int checkEpoch = 0;
  std::vector<std::vector<int>> recheck; // by node index

  // Per slot: the compute stream's time after its compute.
  std::vector<double> clockAfter;
  std::vector<int> slotNode;
  std::vector<Insertion> insertions;
  int64_t sequence = 0;

  std::vector<double> startTime; // of each node in the unplanned order
  std::priority_queue<Candidate> heap;
  int now = 0; // the node being planned
  int64_t current = 0;
  int64_t runningPeak = 0;
  double clock = 0, deviceToHostFree = 0, hostToDeviceFree = 0;
  int lastOffloadSlot = 0, lastPrefetchSlot = 0;
};

int GreedyPlanner::nextUse(int value, int time) {
  const std::vector<int> &users = graph.values[value].users;
  size_t &pointer = usePointer[value];
  while (pointer < users.size() && users[pointer] < time)
    ++pointer;
  return pointer < users.size() ? users[pointer] : numNodes;
}

int GreedyPlanner::lastNeed(int value) {
  int last = neededUntil[value];
  const std::vector<int> &users = graph.values[value].users;
  if (!users.empty() && users.back() >= now)
    last = std::max(last, users.back());
  if (graph.values[value].isOutput)
    last = numNodes;
  return last;
}

double GreedyPlanner::recomputeCost(int value) const {
  int producer = graph.values[value].producer;
  if (!isRestorableForward(producer))
    return kInfinity;
  double cost = graph.nodes[producer].seconds;
  for (int input : graph.nodes[producer].inputs)
    if (state[input] != State::Resident)
      cost += restoreCostOf[input];
  return cost;
}

double GreedyPlanner::swapCost(int value, double until) const {
  if (!problem.link.canSwap())
    return kInfinity;
  int64_t bytes = graph.values[value].bytes;
  double out = problem.link.copySeconds(bytes, false);
  double in = problem.link.copySeconds(bytes, true);
  double issued = groupTime(std::max(lastReadSlot[value] + 1, lastOffloadSlot));
  double offloadEnd = std::max(deviceToHostFree, issued) + out;
  double releaseStall = std::max(0.0, offloadEnd - clock);
  double prefetchStall = std::max(0.0, in - until);
  // A small charge for the traffic itself prefers fewer, larger copies.
  return releaseStall + prefetchStall + 1e-3 * (in + out);
}

double GreedyPlanner::score(int value, bool &swap) {
  int next = nextUse(value, now);
  int need = next < numNodes ? next : lastNeed(value);
  double until = std::max(timeUntil(need), 0.0) + 1e-9;
  double recompute = recomputeCost(value);
  double swapping = swapCost(value, until);
  swap = swapping < recompute;
  double cost = std::min(recompute, swapping);
  return cost / (static_cast<double>(graph.values[value].bytes + 1) * until);
}

void GreedyPlanner::push(int value) {
  bool swap;
  ++stamps[value];
  heap.push({score(value, swap), value, stamps[value]});
}

bool GreedyPlanner::canRecompute(int value, int target, bool commit) {
  int producer = graph.values[value].producer;
  if (!isRestorableForward(producer))
    return false;
  for (int input : graph.nodes[producer].inputs) {
    if (state[input] == State::Swapped)
      continue;
    if (state[input] == State::Resident) {
      if (commit && neededUntil[input] < target) {
        neededUntil[input] = target;
        recheck[std::min(target, numNodes)].push_back(input);
      }
      continue;
    }
    // Gone: it must be recomputable in turn. Lifetimes already extended to
    // the target cover it.
    if (neededUntil[input] >= target)
      continue;
    if (!commit) {
      if (checkMark[input] == checkEpoch)
        continue;
      checkMark[input] = checkEpoch;
    }
    if (!canRecompute(input, target, commit))
      return false;
    if (commit)
      neededUntil[input] = target;
  }
  return true;
}

void GreedyPlanner::evictOne() {
  std::vector<Candidate> pinned;
  int retries = 0;
  while (true) {
    if (heap.empty()) {
      for (const Candidate &candidate : pinned)
        heap.push(candidate);
      throw GreedyFailure{"nothing is left to evict before node " +
                          std::to_string(now)};
    }
    Candidate top = heap.top();
    heap.pop();
    int value = top.value;
    if (top.stamp != stamps[value] || state[value] != State::Resident)
      continue;
    if (pins[value] > 0) {
      pinned.push_back(top);
      continue;
    }
    bool swap;
    double fresh = score(value, swap);
    // Scores only grow as time passes (the next use comes closer), so a
    // stale key is a lower bound: re-rank until the top is current.
    if (fresh > top.score && !heap.empty() && retries < 64 &&
        fresh > heap.top().score) {
      ++retries;
      heap.push({fresh, value, stamps[value]});
      continue;
    }
    if (fresh == kInfinity) {
      // Neither restorable nor swappable: not a candidate while it is
      // resident.
      pinned.push_back({fresh, value, stamps[value]});
      continue;
    }
    int target = lastNeed(value);
    if (!swap) {
      ++checkEpoch;
      if (!canRecompute(value, target, false)) {
        if (swapCost(value, 1e-9) == kInfinity) {
          pinned.push_back({kInfinity, value, stamps[value]});
          continue;
        }
        swap = true;
      } else {
        canRecompute(value, target, true);
      }
    }
    for (const Candidate &candidate : pinned)
      heap.push(candidate);
    int slot = static_cast<int>(slotNode.size());
    int64_t bytes = graph.values[value].bytes;
    if (swap) {
      int after = std::max(lastReadSlot[value] + 1, lastOffloadSlot);
      double issued = groupTime(after);
      double offloadEnd = std::max(deviceToHostFree, issued) +
                          problem.link.copySeconds(bytes, false);
      deviceToHostFree = offloadEnd;
      lastOffloadSlot = after;
      insert(after, 0, Step::offload(value));
      insert(slot, 1, Step::release(value));
      clock = std::max(clock, offloadEnd);
      state[value] = State::Swapped;
      releaseSlot[value] = slot;
      readyTime[value] = offloadEnd; // when the host copy is complete
      restoreCostOf[value] = problem.link.copySeconds(bytes, true);
    } else {
      restoreCostOf[value] = recomputeCost(value);
      state[value] = State::Gone;
    }
    ++stamps[value];
    current -= bytes;
    return;
  }
}

void GreedyPlanner::ensureRoom(int64_t extra) {
  while (current + extra > budget)
    evictOne();
}

void GreedyPlanner::prefetch(int value) {
  int64_t bytes = graph.values[value].bytes;
  ensureRoom(bytes);
  int slot = static_cast<int>(slotNode.size());
  double copy = problem.link.copySeconds(bytes, true);
  double hostReady = readyTime[value];
  int low = std::max(releaseSlot[value], lastPrefetchSlot);
  // The latest slot from which the copy arrives before this slot's compute.
  auto arrival = [&](int at) {
    double issued = groupTime(at);
    return std::max({hostToDeviceFree, issued, hostReady}) + copy;
  };
  int first = low, last = slot;
  while (first < last) {
    int middle = first + (last - first + 1) / 2;
    if (arrival(middle) <= clock)
      first = middle;
    else
      last = middle - 1;
  }
  int at = first;
  // Then the earliest slot from there on whose memory leaves room: moving a
  // prefetch back never raises the peak reached so far.
  int64_t limit = std::min(budget, runningPeak);
  if (tree.max(at, slot - 1) + bytes > limit) {
    int lowSlot = at, highSlot = slot;
    while (lowSlot < highSlot) {
      int middle = lowSlot + (highSlot - lowSlot) / 2;
      if (tree.max(middle, slot - 1) + bytes <= limit)
        highSlot = middle;
      else
        lowSlot = middle + 1;
    }
    at = lowSlot;
  }
  tree.add(at, slot - 1, bytes);
  insert(at, 2, Step::prefetch(value));
  lastPrefetchSlot = at;
  readyTime[value] = arrival(at);
  hostToDeviceFree = readyTime[value];
  state[value] = State::Resident;
  current += bytes;
  runningPeak = std::max(runningPeak, current);
  lastReadSlot[value] = at;
  push(value);
}

void GreedyPlanner::restore(int value) {
  if (state[value] == State::Swapped) {
    prefetch(value);
    return;
  }
  int producer = graph.values[value].producer;
  if (!isRestorableForward(producer))
    throw GreedyFailure{"value " + graph.values[value].name +
                        " cannot be restored"};
  computeSlot(producer);
}

void GreedyPlanner::freeValue(int value) {
  current -= graph.values[value].bytes;
  state[value] = State::Gone;
  ++stamps[value];
  restoreCostOf[value] = recomputeCost(value);
}

void GreedyPlanner::freeIfUnneeded(int value, int time) {
  if (state[value] == State::Resident && pins[value] == 0 &&
      !isNeeded(value, time))
    freeValue(value);
}

void GreedyPlanner::computeSlot(int node) {
  const GraphNode &op = graph.nodes[node];
  std::vector<int> inputs = op.inputs;
  std::sort(inputs.begin(), inputs.end());
  inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
  for (int input : inputs) {
    // Pinned first, so that restoring it (and its own inputs) keeps it.
    ++pins[input];
    if (state[input] != State::Resident)
      restore(input);
  }
  int64_t extra = 0;
  for (int output : op.outputs)
    if (state[output] != State::Resident)
      extra += graph.values[output].bytes;
  for (int output : op.outputs)
    ++pins[output];
  // The workspace is held during this compute only: it needs room now, but
  // `current` (what stays after the slot) leaves it out.
  ensureRoom(extra + op.workspaceBytes);
  for (int output : op.outputs)
    --pins[output];
  int slot = static_cast<int>(slotNode.size());
  if (slot >= slotLimit)
    throw GreedyFailure{"it recomputes too much"};
  current += extra;
  tree.add(slot, slot, current + op.workspaceBytes);
  runningPeak = std::max(runningPeak, current + op.workspaceBytes);
  double start = clock;
  for (int input : inputs)
    start = std::max(start, readyTime[input]);
  clock = start + op.seconds;
  clockAfter.push_back(clock);
  slotNode.push_back(node);
  for (int input : inputs) {
    --pins[input];
    lastReadSlot[input] = slot;
  }
  bool original = node == now;
  int time = original ? now + 1 : now;
  for (int output : op.outputs) {
    state[output] = State::Resident;
    readyTime[output] = 0;
    lastReadSlot[output] = slot;
  }
  for (int input : inputs) {
    freeIfUnneeded(input, time);
    if (state[input] == State::Resident)
      push(input);
  }
  for (int output : op.outputs) {
    freeIfUnneeded(output, time);
    if (state[output] == State::Resident)
      push(output);
  }
}

Schedule GreedyPlanner::run() {
  state.assign(numValues, State::Gone);
  usePointer.assign(numValues, 0);
  neededUntil.assign(numValues, -1);
  lastReadSlot.assign(numValues, -1);
  releaseSlot.assign(numValues, 0);
  pins.assign(numValues, 0);
  stamps.assign(numValues, 0);
  restoreCostOf.assign(numValues, kInfinity);
  readyTime.assign(numValues, 0);
  checkMark.assign(numValues, 0);
  recheck.assign(numNodes + 1, {});
  startTime.assign(numNodes + 1, 0);
  for (int node = 0; node < numNodes; ++node)
    startTime[node + 1] = startTime[node] + graph.nodes[node].seconds;

  for (int value = 0; value < numValues; ++value)
    if (graph.values[value].producer < 0) {
      state[value] = State::Resident;
      current += graph.values[value].bytes;
    }
  // Every input is resident at the first step, whatever the plan.
  if (current > budget)
    throw GreedyFailure{"the step's inputs alone exceed the budget"};
  runningPeak = current;
  for (int value = 0; value < numValues; ++value)
    if (graph.values[value].producer < 0) {
      if (!isNeeded(value, 0))
        // Read by nothing: freed after the first step, which counts it.
        recheck[0].push_back(value);
      else
        push(value);
    }
  for (now = 0; now < numNodes; ++now) {
    computeSlot(now);
    for (int value : recheck[now])
      freeIfUnneeded(value, now + 1);
    recheck[now].clear();
  }
  // Only outputs remain at the end, and they must be resident.
  for (int value = 0; value < numValues; ++value)
    if (state[value] == State::Resident) {
      if (graph.values[value].isOutput)
        ++pins[value];
      else
        freeValue(value);
    }
  for (int value = 0; value < numValues; ++value)
    if (graph.values[value].isOutput && state[value] != State::Resident) {
      if (state[value] != State::Swapped)
        throw GreedyFailure{"output " + graph.values[value].name +
                            " cannot be restored"};
      ++pins[value];
      prefetch(value);
    }

  std::stable_sort(insertions.begin(), insertions.end(),
                   [](const Insertion &a, const Insertion &b) {
                     if (a.slot != b.slot)
                       return a.slot < b.slot;
                     if (a.rank != b.rank)
                       return a.rank < b.rank;
                     return a.sequence < b.sequence;
                   });
  Schedule schedule;
  schedule.reserve(slotNode.size() + insertions.size());
  size_t next = 0;
  for (size_t slot = 0; slot <= slotNode.size(); ++slot) {
    while (next < insertions.size() &&
           insertions[next].slot == static_cast<int>(slot))
      schedule.push_back(insertions[next++].step);
    if (slot < slotNode.size())
      schedule.push_back(Step::compute(slotNode[slot]));
  }
  return schedule;
}

} // namespace

namespace {
/// One run of the planner at `budget`.
bool runOnce(const PlanningProblem &problem, int64_t budget, Schedule &schedule,
             std::string &error) {
  try {
    GreedyPlanner planner(problem, budget);
    schedule = planner.run();
  } catch (const GreedyFailure &failure) {
    error = "greedy eviction: " + failure.reason;
    return false;
  } catch (const std::exception &exception) {
    error = std::string("greedy eviction: ") + exception.what();
    return false;
  }
  return true;
}

/// One run at budget b gives a plan whose peak S(b) <= b fits every budget
/// in [S(b), b]. The peak of one run can lie well under its budget (it
/// counts a dropped value until the overflow that drops it, while the plan
/// frees it after its last read), so a slightly tighter budget can give a
/// higher peak. Instead, walk a fixed ladder of runs from the unplanned
/// peak down, each at the previous one's peak minus one byte: the ladder
/// does not depend on the budget, and some run on it fits every budget.
/// The plan is the lowest peak among the runs at or above the budget that
/// fit it; that never rises as the budget falls. The walk is cut short on
/// large graphs (kWalkNodeRuns).
bool planOnLadder(const PlanningProblem &problem, Plan &plan,
                  std::string &error) {
  SimulationResult unplanned =
      simulate(problem, makeUnplannedSchedule(problem.graph));
  if (!unplanned.valid) {
    error = unplanned.error;
    return false;
  }
  const int64_t budget = problem.budgetBytes;
  int64_t maxRuns = std::max<int64_t>(
      1, kWalkNodeRuns / std::max<int64_t>(1, static_cast<int64_t>(
                                                  problem.graph.nodes.size())));
  bool found = false;
  SimulationResult best;
  auto consider = [&](Schedule &schedule, SimulationResult &result) {
    if (!result.valid || result.peakBytes > budget)
      return;
    if (!found || result.peakBytes < best.peakBytes ||
        (result.peakBytes == best.peakBytes && result.seconds < best.seconds)) {
      found = true;
      best = std::move(result);
      plan.schedule = std::move(schedule);
    }
  };
  int64_t level = std::max(unplanned.peakBytes, budget);
  std::string why;
  bool failed = false;
  for (int64_t runs = 0; level >= budget && runs < maxRuns; ++runs) {
    Schedule schedule;
    if (!runOnce(problem, level, schedule, why)) {
      failed = true;
      break;
    }
    SimulationResult result = simulate(problem, schedule);
    if (!result.valid) {
      why = "greedy eviction made an invalid plan: " + result.error;
      failed = true;
      break;
    }
    level = std::min(level, result.peakBytes) - 1;
    consider(schedule, result);
  }
  if (!failed && level >= budget) {
    // Cut short: plan at the budget itself and at a few slightly looser
    // ones, and keep the lowest peak. Peaks then fall with the budget
    // nearly always, not surely.
    for (int shift = 0; shift <= kCarriedBudgets; ++shift) {
      int64_t trial = budget;
      if (shift > 0) {
        trial = std::min(level, budget + (budget >> shift));
        if (trial <= budget)
          continue;
      }
      Schedule schedule;
      std::string failure;
      if (!runOnce(problem, trial, schedule, failure)) {
        if (shift == 0)
          why = failure;
        continue;
      }
      SimulationResult result = simulate(problem, schedule);
      consider(schedule, result);
    }
  }
  if (!found) {
    error = why.empty() ? "greedy eviction finds no plan" : why;
    return false;
  }
  return true;
}

} // namespace

bool lethe::planning::planGreedy(const PlanningProblem &problem,
                                 const PlanOptions &, Plan &plan,
                                 std::string &error) {
  try {
    return planOnLadder(problem, plan, error);
  } catch (const std::exception &exception) {
    error = std::string("greedy eviction: ") + exception.what();
    return false;
  }
}
