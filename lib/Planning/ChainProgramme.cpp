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
/// A peak that no budget allows (a stage that cannot be recomputed).
constexpr int64_t kNever = std::numeric_limits<int64_t>::max() / 4;
/// The peak of an operation that runs no node: it measures nothing.
constexpr int64_t kNoStep = std::numeric_limits<int64_t>::min() / 4;

void expand(const ChainStrategy &strategy, int first, int last,
            std::vector<ChainOperation> &operations) {
  int lastStage = strategy.numStages - 1;
  bool firstPass = last == lastStage;
  int choice = strategy.choice(first, last);
  auto forward = [&](int stage, ForwardMode mode) {
    operations.push_back({false, stage, mode, firstPass});
  };
  auto copy = [&](ChainOperation::Copy kind) {
    ChainOperation operation;
    operation.stage = first;
    operation.copy = kind;
    operations.push_back(operation);
  };
  if (choice <= first) {
    bool offloaded = choice == kAllInputOffloaded;
    forward(first, first < last || firstPass ? ForwardMode::All
                                             : ForwardMode::AllWithoutOutput);
    if (offloaded)
      copy(ChainOperation::Copy::Offload);
    if (first < last)
      expand(strategy, first + 1, last, operations);
    if (offloaded)
      copy(ChainOperation::Copy::Prefetch);
    operations.push_back({true, first, ForwardMode::All, false});
    return;
  }
  int split = strategy.splitOf(choice);
  bool offloaded = choice != split;
  forward(first, ForwardMode::Checkpoint);
  if (offloaded)
    copy(ChainOperation::Copy::Offload);
  for (int stage = first + 1; stage < split; ++stage)
    forward(stage, ForwardMode::NoKeep);
  expand(strategy, split, last, operations);
  if (offloaded)
    copy(ChainOperation::Copy::Prefetch);
  expand(strategy, first, split - 1, operations);
}

/// The terms of the memory model of sub-problem (first, last), shared by the
/// programme and modelStrategyPeak. Peaks are relative to what enclosing
/// sub-problems hold. `owns` says whether the sub-problem owns the input of
/// `first` (frees it after its last read there) or a caller holds it past
/// the sub-problem: the caller that ran stage first - 1 keeping everything,
/// when the backward block of first - 1 reads that output. A sub-problem
/// that recomputes holds the forward-only values of its stages from its
/// start (the output's ones of `last` excepted: nothing in it makes that
/// output).
class ChainModel {
public:
  explicit ChainModel(const ChainReduction &chain)
      : stages(chain.stages), lastStage(static_cast<int>(stages.size()) - 1),
        forwardOnlyBefore(stages.size() + 1, 0),
        outputForwardOnlyBefore(stages.size() + 1, 0) {
    for (size_t stage = 0; stage < stages.size(); ++stage) {
      forwardOnlyBefore[stage + 1] =
          forwardOnlyBefore[stage] + stages[stage].forwardOnlyBytes;
      outputForwardOnlyBefore[stage + 1] =
          outputForwardOnlyBefore[stage] + stages[stage].outputForwardOnlyBytes;
    }
  }

  /// Bytes of the two kinds of forward-only values of stages first to last.
  int64_t forwardOnlyBytes(int first, int last) const {
    return sum(forwardOnlyBefore, first, last);
  }
  int64_t outputForwardOnlyBytes(int first, int last) const {
    return sum(outputForwardOnlyBefore, first, last);
  }

  ForwardMode allMode(int first, int last) const {
    return first < last || last == lastStage ? ForwardMode::All
                                             : ForwardMode::AllWithoutOutput;
  }

  /// Whether the input of `first` stays resident after its run keeping
  /// everything and counts in this sub-problem (its backward reads it).
  bool keepsInput(int first, bool owns) const {
    return owns && stages[first].backwardReadsInput;
  }

  /// Time of a forward block: nothing for a first computation.
  double forwardSeconds(int index, ForwardMode mode, int last) const {
    return last == lastStage
               ? 0
               : stages[index].recomputeSeconds[static_cast<int>(mode)];
  }

  /// Running `first` keeping everything, at front `last`.
  int64_t allForwardPeak(int first, int last, bool owns) const {
    const ChainStage &stage = stages[first];
    InputUse use =
        owns && !stage.backwardReadsInput ? InputUse::Freed : InputUse::Held;
    int64_t extra = keepsInput(first, owns) ? stage.inputBytes : 0;
    if (last != lastStage)
      extra += heldForwardOnly(first + 1, last);
    return plus(stagePeak(first, allMode(first, last), use, false, last),
                extra);
  }

  int64_t allBackwardPeak(int first, bool owns) const {
    return stages[first].backwardPeakBytes[static_cast<int>(
        keepsInput(first, owns) ? InputUse::Freed : InputUse::Held)];
  }

  /// What the run keeping everything holds for the rest of the sub-problem.
  int64_t allChildHeld(int first, bool owns) const {
    return stages[first].heldAllBytes +
           (keepsInput(first, owns) ? stages[first].inputBytes : 0);
  }

  /// Whether (first + 1, last) owns its input after the run keeping
  /// everything.
  bool childOwnsInput(int first) const {
    return !stages[first].backwardReadsOutput;
  }

  /// Stage `index` of the forward run of a split of (first, last): a
  /// checkpoint at first, then stages that keep nothing.
  ForwardMode splitMode(int first, int index) const {
    return index == first ? ForwardMode::Checkpoint : ForwardMode::NoKeep;
  }

  /// Whether a split of (first, last) at `split` keeps the input of `first`
  /// through its right part: when it owns it and the left part reads it
  /// again (a left part of one stage only runs it without its output).
  bool holdsCheckpoint(int first, int split, bool owns) const {
    const ChainStage &stage = stages[first];
    auto reads = [&](ForwardMode mode) {
      return stage.recomputeReadsInput[static_cast<int>(mode)];
    };
    return owns && (stage.backwardReadsInput ||
                    (split - 1 > first ? reads(ForwardMode::Checkpoint) ||
                                             reads(ForwardMode::All)
                                       : reads(ForwardMode::AllWithoutOutput)));
  }

  /// Stage `index` in the forward run of a split of (first, last) at
  /// `split`.
  int64_t splitRunPeak(int first, int last, bool owns, int index,
                       int split) const {
    bool holds = holdsCheckpoint(first, split, owns);
    InputUse use = index == first && owns && !holds ? InputUse::Freed
                   : index == first                 ? InputUse::Held
                                                    : InputUse::Freed;
    int64_t extra = holds ? stages[first].inputBytes : 0;
    // The forward-only values of the stages run before stay resident for
    // their recomputes; in a recompute, those of the whole sub-problem.
    extra += last == lastStage ? forwardOnlyBytes(first, index - 1) +
                                     outputForwardOnlyBytes(first, index - 1)
                               : heldForwardOnly(first, last) -
                                     stages[index].forwardOnlyBytes -
                                     stages[index].outputForwardOnlyBytes;
    return plus(stagePeak(index, splitMode(first, index), use,
                          index == split - 1, last),
                extra);
  }

  /// The input of `first` that a run keeping everything may offload for
  /// the rest of the sub-problem: when its backward block needs it back
  /// and something holds it meanwhile (a caller, or the sub-problem).
  int64_t offloadableInputBytes(int first, bool owns) const {
    const ChainStage &stage = stages[first];
    return stage.inputValue >= 0 && (!owns || keepsInput(first, owns))
               ? stage.inputBytes
               : 0;
  }

  /// The checkpoint a split may offload during its right part: the input
  /// of `first`, when the split holds it.
  int64_t offloadedCheckpointBytes(int first, int split, bool owns) const {
    return stages[first].inputValue >= 0 && holdsCheckpoint(first, split, owns)
               ? stages[first].inputBytes
               : 0;
  }

  /// What the right part (split, last) runs with: the checkpoint, and the
  /// forward-only values the left part (first, split - 1) reads.
  int64_t splitRightHeld(int first, int split, bool owns) const {
    return (holdsCheckpoint(first, split, owns) ? stages[first].inputBytes
                                                : 0) +
           heldForwardOnly(first, split - 1);
  }

  /// The forward-only values a recomputing sub-problem (first, last) holds
  /// from its start.
  int64_t heldForwardOnly(int first, int last) const {
    return forwardOnlyBytes(first, last) +
           outputForwardOnlyBytes(first, last - 1);
  }

  static int64_t plus(int64_t peak, int64_t extra) {
    return peak == kNoStep || peak >= kNever ? peak : peak + extra;
  }

private:
  static int64_t sum(const std::vector<int64_t> &before, int first, int last) {
    return last < first ? 0 : before[last + 1] - before[first];
  }

  /// The peak of stage `index` run in `mode` at front `last` (a first
  /// computation when last is the last stage, else a recompute before the
  /// backward block of `last`), memory outside the chain included.
  int64_t stagePeak(int index, ForwardMode mode, InputUse use, bool endsRun,
                    int last) const {
    const ChainStage &stage = stages[index];
    int m = static_cast<int>(mode), u = static_cast<int>(use);
    if (last == lastStage)
      return stage.firstPeakBytes[m][u][endsRun];
    if (!stage.canRecompute[m])
      return kNever;
    return plus(stage.recomputePeakBytes[m][u][endsRun], stages[last].gapBytes);
  }

  const std::vector<ChainStage> &stages;
  int lastStage;
  std::vector<int64_t> forwardOnlyBefore, outputForwardOnlyBefore;
};

/// Walks `strategy` like expand, adding up the model's memory; false when it
/// recomputes a stage that cannot be.
bool modelPeaks(const ChainModel &model, const ChainStrategy &strategy,
                int first, int last, bool owns, int64_t held,
                std::vector<int64_t> &peaks) {
  auto record = [&](int64_t peak) {
    if (peak >= kNever)
      return false;
    peaks.push_back(peak == kNoStep ? 0 : held + peak);
    return true;
  };
  int choice = strategy.choice(first, last);
  if (choice <= first) {
    if (!record(model.allForwardPeak(first, last, owns)))
      return false;
    int64_t childHeld = model.allChildHeld(first, owns);
    if (choice == kAllInputOffloaded)
      childHeld -= model.offloadableInputBytes(first, owns);
    if (first < last &&
        !modelPeaks(model, strategy, first + 1, last,
                    model.childOwnsInput(first), held + childHeld, peaks))
      return false;
    return record(model.allBackwardPeak(first, owns));
  }
  int split = strategy.splitOf(choice);
  for (int index = first; index < split; ++index)
    if (!record(model.splitRunPeak(first, last, owns, index, split)))
      return false;
  int64_t rightHeld = model.splitRightHeld(first, split, owns);
  if (choice != split)
    rightHeld -= model.offloadedCheckpointBytes(first, split, owns);
  return modelPeaks(model, strategy, split, last, true, held + rightHeld,
                    peaks) &&
         modelPeaks(model, strategy, first, split - 1, owns, held, peaks);
}

/// A cell of the programme: the best strategy of a sub-problem with some
/// memory held outside it.
struct Cell {
  double seconds = kInfinity;
  int64_t peak = kNever;
  int choice = -1;
};

} // namespace

struct lethe::planning::ChainProgrammeScratch::Table {
  std::vector<Cell> cells;
};

ChainProgrammeScratch::ChainProgrammeScratch() : table(new Table) {}
ChainProgrammeScratch::~ChainProgrammeScratch() = default;

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
    if (operation.copy == ChainOperation::Copy::Offload) {
      schedule.push_back(Step::offload(stage.inputValue));
      schedule.push_back(Step::release(stage.inputValue));
      continue;
    }
    if (operation.copy == ChainOperation::Copy::Prefetch) {
      schedule.push_back(Step::prefetch(stage.inputValue));
      continue;
    }
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

int64_t
lethe::planning::modelStrategyPeak(const ChainReduction &chain,
                                   const ChainStrategy &strategy,
                                   std::vector<int64_t> *operationPeaks) {
  if (chain.stages.empty())
    return 0;
  ChainModel model(chain);
  std::vector<int64_t> peaks;
  if (!modelPeaks(model, strategy, 0, strategy.numStages - 1, true, 0, peaks))
    return -1;
  if (operationPeaks)
    *operationPeaks = peaks;
  return *std::max_element(peaks.begin(), peaks.end());
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
  ChainModel model(chain);

  // Slots: the common divisor of what sub-problems hold (nothing holds the
  // last stage's), unless too fine. The scale is what runs keeping
  // everything and forward-only values hold; checkpoints come on top, a few
  // at a time.
  int64_t divisor = 0, totalHeld = 0;
  double totalSeconds = 0;
  for (const ChainStage &stage : stages) {
    if (&stage != &stages.back()) {
      for (int64_t bytes :
           {stage.heldAllBytes, stage.inputBytes, stage.forwardOnlyBytes,
            stage.outputForwardOnlyBytes})
        divisor = std::gcd(divisor, bytes);
      totalHeld += stage.heldAllBytes + stage.forwardOnlyBytes +
                   stage.outputForwardOnlyBytes;
    }
    totalSeconds += stage.forwardSeconds + stage.backwardSeconds;
  }
  int64_t slot = std::max<int64_t>(divisor, 1);
  int64_t maxSlots = options.maxSlots;
  if (maxSlots <= 0) {
    // Rows grow with the stages before them: about stages^2 x slots / 3
    // cells, which this keeps near 2^21.
    int64_t square = static_cast<int64_t>(numStages) * numStages;
    maxSlots = std::clamp<int64_t>((int64_t(3) << 21) / square, 512, 1 << 16);
  }
  // A coarser slot stays a multiple of the divisor, so that sizes round up
  // by less than a slot. It does not depend on the budget: the same model at
  // every budget keeps the peak from rising as the budget tightens.
  if (totalHeld / slot > maxSlots)
    slot *= (totalHeld / slot + maxSlots - 1) / maxSlots;
  auto slotsOf = [&](int64_t bytes) { return (bytes + slot - 1) / slot; };
  // What callers can hold when (first, .) starts: each earlier stage adds at
  // most its kept values, its input and its forward-only values.
  std::vector<int64_t> numHeld(numStages);
  int64_t heldBound = 0;
  for (int first = 0; first < numStages; ++first) {
    numHeld[first] = std::min(heldBound, budgetBytes / slot) + 1;
    const ChainStage &stage = stages[first];
    heldBound += slotsOf(stage.heldAllBytes) + slotsOf(stage.inputBytes) +
                 slotsOf(stage.forwardOnlyBytes) +
                 slotsOf(stage.outputForwardOnlyBytes);
  }
  double epsilon = 1e-9 * std::max(totalSeconds, 1e-300);
  const HostLink *link = options.offloadLink;

  // The cells of (first, last, owns), indexed by the slots held: rows of
  // numHeld[first] cells, by first, then last, then owns.
  std::vector<size_t> firstStart(numStages);
  size_t cellCount = 0;
  for (int first = 0; first < numStages; ++first) {
    firstStart[first] = cellCount;
    cellCount += static_cast<size_t>(numStages - first) * 2 * numHeld[first];
  }
  std::vector<Cell> ownCells;
  std::vector<Cell> &cells =
      options.scratch ? options.scratch->getTable().cells : ownCells;
  cells.assign(cellCount, Cell());
  auto row = [&](int first, int last, bool owns) {
    return &cells[firstStart[first] +
                  (static_cast<size_t>(last - first) * 2 + owns) *
                      numHeld[first]];
  };
  auto better = [&](double seconds, int64_t peak, const Cell &cell) {
    if (seconds < cell.seconds - epsilon)
      return true;
    return seconds <= cell.seconds + epsilon && peak < cell.peak;
  };

  for (int length = 0; length < numStages; ++length) {
    for (int first = 0; first + length < numStages; ++first) {
      int last = first + length;
      for (bool owns : {false, true}) {
        Cell *cell = row(first, last, owns);
        int64_t rowLength = numHeld[first];
        // All: run the stage keeping everything, the rest, its backward.
        int64_t forwardPeak = model.allForwardPeak(first, last, owns);
        int64_t backwardPeak = model.allBackwardPeak(first, owns);
        double allSeconds =
            model.forwardSeconds(first, model.allMode(first, last), last);
        int64_t childHeld = slotsOf(model.allChildHeld(first, owns));
        const Cell *child =
            first < last ? row(first + 1, last, model.childOwnsInput(first))
                         : nullptr;
        for (int64_t held = 0; held < rowLength; ++held) {
          int64_t base = held * slot;
          if (forwardPeak >= kNever || base + forwardPeak > budgetBytes ||
              base + backwardPeak > budgetBytes)
            break;
          double seconds = allSeconds;
          int64_t peak = base + std::max(forwardPeak, backwardPeak);
          if (child) {
            if (held + childHeld >= numHeld[first + 1])
              break;
            seconds += child[held + childHeld].seconds;
            peak = std::max(peak, child[held + childHeld].peak);
          }
          if (seconds == kInfinity)
            break;
          cell[held] = {seconds, peak, 0};
        }
        // All, with the input offloaded while the rest runs. As translated,
        // its release waits for the copy out and the backward block for the
        // copy back: the step is longer by both (the chain-offload strategy
        // may then hide them by spreading the copies out).
        int64_t input =
            link && child ? model.offloadableInputBytes(first, owns) : 0;
        if (input > 0) {
          // The rest holds the stage's values but not the input; slots
          // round up, so that an input a caller holds counts at most once.
          int64_t restHeld = slotsOf(model.allChildHeld(first, owns)) -
                             (input + slot - 1) / slot;
          double copies =
              link->copySeconds(input, false) + link->copySeconds(input, true);
          for (int64_t held = std::max<int64_t>(0, -restHeld); held < rowLength;
               ++held) {
            int64_t base = held * slot;
            if (forwardPeak >= kNever || base + forwardPeak > budgetBytes ||
                base + backwardPeak > budgetBytes ||
                held + restHeld >= numHeld[first + 1])
              break;
            const Cell &rest = child[held + restHeld];
            if (rest.seconds == kInfinity)
              continue;
            double seconds = allSeconds + rest.seconds + copies;
            int64_t peak =
                std::max(base + std::max(forwardPeak, backwardPeak), rest.peak);
            if (better(seconds, peak, cell[held]))
              cell[held] = {seconds, peak, kAllInputOffloaded};
          }
        }
        // Split at `split`: a checkpoint, forward to split - 1, the right
        // part, then the left part. The forward run does not depend on the
        // memory held, so it is the outer loop; `before` is the peak of its
        // stages before split - 1, which does not end it.
        int64_t before = kNoStep;
        double runSeconds = 0;
        for (int split = first + 1; split <= last; ++split) {
          int previous = split - 1;
          int64_t ending =
              model.splitRunPeak(first, last, owns, previous, split);
          if (ending >= kNever)
            break;
          int64_t runPeak = std::max(before, ending);
          before = std::max(before, model.splitRunPeak(first, last, owns,
                                                       previous, split + 1));
          runSeconds += model.forwardSeconds(
              previous, model.splitMode(first, previous), last);
          if (runPeak > budgetBytes) {
            if (before > budgetBytes)
              break;
            continue;
          }
          int64_t rightHeld = slotsOf(model.splitRightHeld(first, split, owns));
          int64_t heldLimit = std::min({(budgetBytes - runPeak) / slot + 1,
                                        rowLength, numHeld[split] - rightHeld});
          if (heldLimit <= 0)
            continue;
          const Cell *right = row(split, last, true) + rightHeld;
          const Cell *left = row(first, previous, owns);
          for (int64_t held = 0; held < heldLimit; ++held) {
            if (right[held].seconds == kInfinity ||
                left[held].seconds == kInfinity)
              break;
            double seconds =
                runSeconds + right[held].seconds + left[held].seconds;
            int64_t total = std::max(
                {held * slot + runPeak, right[held].peak, left[held].peak});
            if (better(seconds, total, cell[held]))
              cell[held] = {seconds, total, split};
          }
          // The same with the checkpoint on the host during the right
          // part, its copies costed in full as for "all" above.
          int64_t checkpoint =
              link ? model.offloadedCheckpointBytes(first, split, owns) : 0;
          if (checkpoint == 0)
            continue;
          int64_t offloadedHeld =
              slotsOf(model.splitRightHeld(first, split, owns) - checkpoint);
          int64_t offloadedLimit =
              std::min({(budgetBytes - runPeak) / slot + 1, rowLength,
                        numHeld[split] - offloadedHeld});
          double copies = link->copySeconds(checkpoint, false) +
                          link->copySeconds(checkpoint, true);
          const Cell *offloadedRight = row(split, last, true) + offloadedHeld;
          for (int64_t held = 0; held < offloadedLimit; ++held) {
            if (offloadedRight[held].seconds == kInfinity ||
                left[held].seconds == kInfinity)
              break;
            double seconds = runSeconds + offloadedRight[held].seconds +
                             left[held].seconds + copies;
            int64_t total =
                std::max({held * slot + runPeak, offloadedRight[held].peak,
                          left[held].peak});
            if (better(seconds, total, cell[held]))
              cell[held] = {seconds, total, split + numStages};
          }
        }
      }
    }
  }

  const Cell &top = row(0, lastStage, true)[0];
  if (top.seconds == kInfinity)
    return false;
  // Read the strategy back, following the held memory down.
  ChainStrategy strategy(numStages);
  std::vector<std::tuple<int, int, bool, int64_t>> work = {
      {0, lastStage, true, 0}};
  while (!work.empty()) {
    auto [first, last, owns, held] = work.back();
    work.pop_back();
    int choice = row(first, last, owns)[held].choice;
    strategy.choice(first, last) = choice;
    if (choice == 0 || choice == kAllInputOffloaded) {
      int64_t childHeld = held + slotsOf(model.allChildHeld(first, owns));
      if (choice == kAllInputOffloaded) {
        int64_t input = model.offloadableInputBytes(first, owns);
        childHeld -= (input + slot - 1) / slot;
      }
      if (first < last)
        work.push_back(
            {first + 1, last, model.childOwnsInput(first), childHeld});
    } else {
      int split = strategy.splitOf(choice);
      int64_t rightHeld = model.splitRightHeld(first, split, owns);
      if (choice != split)
        rightHeld -= model.offloadedCheckpointBytes(first, split, owns);
      work.push_back({split, last, true, held + slotsOf(rightHeld)});
      work.push_back({first, split - 1, owns, held});
    }
  }
  result.strategy = std::move(strategy);
  result.recomputeSeconds = top.seconds;
  result.peakBytes = top.peak;
  result.slotBytes = slot;
  return true;
}
