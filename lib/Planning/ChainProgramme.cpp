//===- ChainProgramme.cpp - Checkpointing strategies on a chain -----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/ChainProgramme.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

using namespace lethe::planning;

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr int64_t kNever = std::numeric_limits<int64_t>::max() / 4;

void expand(const ChainStrategy &strategy, int first, int last,
            std::vector<ChainOperation> &operations) {
  int lastStage = strategy.numStages - 1;
  bool firstPass = last == lastStage;
  int choice = strategy.choice(first, last);
  auto forward = [&](int stage, ForwardMode mode) {
    operations.push_back({false, stage, mode, firstPass});
  };
  if (choice <= first) {
    forward(first, first < last || firstPass ? ForwardMode::All
                                             : ForwardMode::AllWithoutOutput);
    if (first < last)
      expand(strategy, first + 1, last, operations);
    operations.push_back({true, first, ForwardMode::All, false});
    return;
  }
  forward(first, ForwardMode::Checkpoint);
  for (int stage = first + 1; stage < choice; ++stage)
    forward(stage, ForwardMode::NoKeep);
  expand(strategy, choice, last, operations);
  expand(strategy, first, choice - 1, operations);
}

/// A cell of the programme: the best strategy of a sub-problem with some
/// memory held outside it.
struct Cell {
  double seconds = kInfinity;
  int64_t peak = kNever;
  int choice = -1;
};

} // namespace

std::vector<ChainOperation>
lethe::planning::expandStrategy(const ChainStrategy &strategy) {
  std::vector<ChainOperation> operations;
  if (strategy.numStages > 0)
    expand(strategy, 0, strategy.numStages - 1, operations);
  return operations;
}

Schedule lethe::planning::translateOperations(
    const ChainReduction &chain,
    const std::vector<ChainOperation> &operations) {
  Schedule schedule;
  for (const ChainOperation &operation : operations) {
    const ChainStage &stage = chain.stages[operation.stage];
    const std::vector<int> &nodes =
        operation.backward ? stage.backwardNodes
        : operation.first
            ? stage.forwardNodes
            : stage.recomputeNodes[static_cast<int>(operation.mode)];
    for (int node : nodes)
      schedule.push_back(Step::compute(node));
  }
  return schedule;
}

ChainStrategy lethe::planning::makeSegmentStrategy(int numStages,
                                                   int segments) {
  ChainStrategy strategy(numStages);
  if (numStages == 0)
    return strategy;
  segments = std::max(1, std::min(segments, numStages));
  std::vector<int> starts;
  for (int segment = 0; segment <= segments; ++segment)
    starts.push_back(
        static_cast<int>(static_cast<int64_t>(segment) * numStages / segments));
  int last = numStages - 1;
  for (int segment = 0; segment < segments; ++segment) {
    int begin = starts[segment], end = starts[segment + 1] - 1;
    // (begin, last) splits at the next segment; the last segment and each
    // (begin, end) keep everything.
    if (segment + 1 < segments)
      strategy.choice(begin, last) = end + 1;
    for (int stage = begin; stage <= end; ++stage) {
      strategy.choice(stage, end) = 0;
      if (segment + 1 == segments)
        strategy.choice(stage, last) = 0;
    }
  }
  return strategy;
}

bool lethe::planning::solveChainProgramme(const ChainReduction &chain,
                                          int64_t budgetBytes,
                                          const ChainProgrammeOptions &options,
                                          ChainProgrammeResult &result) {
  const std::vector<ChainStage> &stages = chain.stages;
  int numStages = static_cast<int>(stages.size());
  if (numStages == 0 || budgetBytes < 0)
    return false;
  int lastStage = numStages - 1;

  // Slots: the common divisor of what sub-problems hold, unless too fine.
  int64_t divisor = 0, totalHeld = 0;
  double totalSeconds = 0;
  for (const ChainStage &stage : stages) {
    divisor = std::gcd(divisor, stage.heldAllBytes);
    divisor = std::gcd(divisor, stage.outputBytes);
    totalHeld += stage.heldAllBytes;
    totalSeconds += stage.forwardSeconds + stage.backwardSeconds;
  }
  int64_t slot = std::max<int64_t>(divisor, 1);
  int64_t maxSlots = std::max<int64_t>(options.maxSlots, 1);
  // A coarser slot stays a multiple of the divisor, so that sizes round up
  // by less than a slot. It does not depend on the budget: the same model at
  // every budget keeps the peak from rising as the budget tightens.
  if (totalHeld / slot > maxSlots)
    slot *= (totalHeld / slot + maxSlots - 1) / maxSlots;
  auto slotsOf = [&](int64_t bytes) { return (bytes + slot - 1) / slot; };
  int64_t heldSlots = 0;
  for (const ChainStage &stage : stages)
    heldSlots += slotsOf(stage.heldAllBytes);
  int numHeld = static_cast<int>(std::min(heldSlots, budgetBytes / slot) + 1);
  double epsilon = 1e-9 * std::max(totalSeconds, 1e-300);

  // The peak of a forward block run at front `last` (first computations
  // when last is the last stage, recomputes otherwise), and its time.
  auto forwardPeak = [&](int index, ForwardMode mode, int last) -> int64_t {
    const ChainStage &stage = stages[index];
    int m = static_cast<int>(mode);
    if (last == lastStage)
      return stage.firstPeakBytes[m == 3 ? 2 : m];
    if (!stage.canRecompute[m])
      return kNever;
    return stages[last].gapBytes + stage.recomputePeakBytes[m];
  };
  auto forwardSeconds = [&](int index, ForwardMode mode, int last) {
    return last == lastStage
               ? 0.0
               : stages[index].recomputeSeconds[static_cast<int>(mode)];
  };

  // cells[triangle(first, last) * numHeld + held]
  std::vector<size_t> rowStart(numStages);
  size_t cellCount = 0;
  for (int first = 0; first < numStages; ++first) {
    rowStart[first] = cellCount;
    cellCount += static_cast<size_t>(numStages - first) * numHeld;
  }
  std::vector<Cell> cells(cellCount);
  auto cellAt = [&](int first, int last, int64_t held) -> Cell & {
    return cells[rowStart[first] + static_cast<size_t>(last - first) * numHeld +
                 held];
  };
  auto better = [&](double seconds, int64_t peak, const Cell &cell) {
    if (seconds < cell.seconds - epsilon)
      return true;
    return seconds <= cell.seconds + epsilon && peak < cell.peak;
  };

  for (int length = 0; length < numStages; ++length) {
    for (int first = 0; first + length < numStages; ++first) {
      int last = first + length;
      const ChainStage &stage = stages[first];
      ForwardMode allMode = first < last || last == lastStage
                                ? ForwardMode::All
                                : ForwardMode::AllWithoutOutput;
      int64_t allPeak = forwardPeak(first, allMode, last);
      double allSeconds = forwardSeconds(first, allMode, last);
      int64_t childHeld = slotsOf(stage.heldAllBytes);
      Cell *row = &cellAt(first, last, 0);
      // All: run the stage keeping everything, the rest, its backward.
      for (int64_t held = 0; held < numHeld; ++held) {
        int64_t base = held * slot;
        Cell &best = row[held];
        best = Cell();
        if (allPeak >= kNever || base + allPeak > budgetBytes ||
            base + stage.backwardPeakBytes > budgetBytes)
          break;
        double seconds = allSeconds;
        int64_t peak = base + std::max(allPeak, stage.backwardPeakBytes);
        if (first < last) {
          if (held + childHeld >= numHeld)
            break;
          const Cell &child = cellAt(first + 1, last, held + childHeld);
          seconds += child.seconds;
          peak = std::max(peak, child.peak);
        }
        if (seconds < kInfinity) {
          best.seconds = seconds;
          best.peak = peak;
          best.choice = 0;
        }
      }
      // Split at `split`: a checkpoint, forward to split - 1, the right part
      // with the output of split - 1 held, then the left part. The forward
      // run does not depend on the memory held, so it is the outer loop.
      int64_t runPeak = 0;
      double runSeconds = 0;
      for (int split = first + 1; split <= last; ++split) {
        int previous = split - 1;
        ForwardMode mode =
            previous == first ? ForwardMode::Checkpoint : ForwardMode::NoKeep;
        int64_t peak = forwardPeak(previous, mode, last);
        if (peak >= kNever)
          break;
        runPeak = std::max(runPeak, peak);
        runSeconds += forwardSeconds(previous, mode, last);
        if (runPeak > budgetBytes)
          break;
        int64_t outputSlots = slotsOf(stages[previous].outputBytes);
        int64_t heldLimit =
            std::min((budgetBytes - runPeak) / slot + 1, numHeld - outputSlots);
        const Cell *right = &cellAt(split, last, outputSlots);
        const Cell *left = &cellAt(first, previous, 0);
        for (int64_t held = 0; held < heldLimit; ++held) {
          if (right[held].seconds == kInfinity ||
              left[held].seconds == kInfinity)
            break;
          double seconds =
              runSeconds + right[held].seconds + left[held].seconds;
          int64_t total = std::max(
              {held * slot + runPeak, right[held].peak, left[held].peak});
          if (better(seconds, total, row[held])) {
            row[held].seconds = seconds;
            row[held].peak = total;
            row[held].choice = split;
          }
        }
      }
    }
  }

  const Cell &top = cellAt(0, lastStage, 0);
  if (top.seconds == kInfinity)
    return false;
  // Read the strategy back, following the held memory down.
  ChainStrategy strategy(numStages);
  std::vector<std::tuple<int, int, int64_t>> work = {{0, lastStage, 0}};
  while (!work.empty()) {
    auto [first, last, held] = work.back();
    work.pop_back();
    int choice = cellAt(first, last, held).choice;
    strategy.choice(first, last) = choice;
    if (choice == 0) {
      if (first < last)
        work.push_back(
            {first + 1, last, held + slotsOf(stages[first].heldAllBytes)});
    } else {
      work.push_back(
          {choice, last, held + slotsOf(stages[choice - 1].outputBytes)});
      work.push_back({first, choice - 1, held});
    }
  }
  result.strategy = std::move(strategy);
  result.recomputeSeconds = top.seconds;
  result.peakBytes = top.peak;
  result.slotBytes = slot;
  return true;
}
