//===- ChainProgramme.h - Checkpointing strategies on a chain ---*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Schedules over a chain of stages (ChainReduction.h) and the dynamic
// programme that finds the fastest one within a budget, after Beaumont,
// Herrmann, Pallez and Shilova, "Optimal checkpointing for heterogeneous
// chains" (2019), in its variant with three ways of running a forward block
// (keep all it makes, keep only its input as a checkpoint, keep nothing) and
// any number of recomputations.
//
// A strategy solves the sub-problem (s, t) -- the input of stage s is
// resident, the backward blocks after t are done; run the backward blocks t
// down to s -- in one of two ways:
//   - all: run stage s keeping everything its backward reads, solve
//     (s + 1, t), run backward block s;
//   - split at s' in (s, t]: run stage s keeping its input, stages s + 1 to
//     s' - 1 keeping nothing, solve (s', t) with the output of s' - 1 held,
//     then solve (s, s' - 1) from the input of s again.
// The whole step is (0, L - 1); forward blocks of sub-problems with
// t = L - 1 are first computations, all others recomputes. The schedule runs
// the nodes of each block in their unplanned order, so the first computation
// of every node keeps it; the simulator frees each value after its last
// read, which is what "keeping" means in the schedule.
//
// The memory of a sub-problem is what enclosing ones hold plus its own. A
// sub-problem owns the input of s -- counts it until its last read there --
// unless its caller ran stage s - 1 keeping everything and backward block
// s - 1 reads that output; the right part of a split always owns its input
// (the left part makes it again). A split keeps its checkpoint through the
// right part only if the left part reads it again: a left part of stage s
// alone runs it without its output, which may not read its input. Stage
// inputs and outputs are thus held exactly as long as the simulator keeps
// them. A sub-problem that recomputes holds the forward-only values of its
// stages from its start to their last read in it (ChainReduction.h).
//
// With a host link (chain-offload), two more choices keep the input of s
// on the host instead of the device while the rest runs: "all, input
// offloaded" (from stage s's run to its backward block) and "split,
// checkpoint offloaded" (from the forward run to the left part); their
// copies are costed in full, as the translated schedule runs them.
//
// The programme indexes memory by the bytes held by enclosing sub-problems,
// in slots: exact when those sizes are multiples of the slot (the greatest
// common divisor of the sizes, unless that needs more than `maxSlots`
// slots; sizes are then rounded up, which is safe).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_PLANNING_CHAINPROGRAMME_H
#define LETHE_PLANNING_CHAINPROGRAMME_H

#include "lethe/Planning/ChainReduction.h"
#include "lethe/Planning/Schedule.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace lethe::planning {

/// The choice "all, input offloaded": as "all", but the input of s, which a
/// caller or the sub-problem holds for a backward block, is offloaded after
/// stage s runs and prefetched before its backward block, so that the rest
/// of the sub-problem runs without it on the device (chain-offload only).
constexpr int kAllInputOffloaded = -2;

/// A strategy on a chain of `numStages` stages: the choice for each
/// sub-problem (s, t) it visits, 0 for "all", kAllInputOffloaded, s' for a
/// split at s', and
/// s' + numStages for a split at s' whose checkpoint (the input of s) is
/// offloaded after the forward run and prefetched before the left part, so
/// that the right part runs without it on the device (chain-offload only).
struct ChainStrategy {
  int numStages = 0;
  std::vector<int> choices;

  explicit ChainStrategy(int stages = 0)
      : numStages(stages), choices(static_cast<size_t>(stages) * stages, -1) {}
  int &choice(int first, int last) {
    return choices[static_cast<size_t>(first) * numStages + last];
  }
  int choice(int first, int last) const {
    return choices[static_cast<size_t>(first) * numStages + last];
  }
  /// The split point of a split choice, offloaded or not.
  int splitOf(int choice) const {
    return choice >= numStages ? choice - numStages : choice;
  }
};

/// One operation on the chain: a forward block run in a mode (a first
/// computation or a recompute), or a backward block.
struct ChainOperation {
  bool backward = false;
  int stage = 0;
  ForwardMode mode = ForwardMode::All;
  bool first = false;
  /// A copy of the stage's input instead of a block: offload (and release)
  /// it, or prefetch it back.
  enum class Copy { None, Offload, Prefetch };
  Copy copy = Copy::None;
};

/// The operations of `strategy`, in order (see the file comment).
std::vector<ChainOperation> expandStrategy(const ChainStrategy &strategy);

/// The schedule that runs `operations` on the graph of `chain`.
Schedule translateOperations(const ChainReduction &chain,
                             const std::vector<ChainOperation> &operations);

/// The peak the programme's memory model predicts for `strategy` on
/// `chain` (the model of ChainReduction.h, in bytes, without slots), or -1
/// when the strategy recomputes a stage that cannot be recomputed. With
/// `operationPeaks`, also the modelled peak of each operation of
/// expandStrategy(strategy), in order (0 for one that runs no node).
int64_t modelStrategyPeak(const ChainReduction &chain,
                          const ChainStrategy &strategy,
                          std::vector<int64_t> *operationPeaks = nullptr);

/// Memory for the programme's table that solves share: the table takes tens
/// of megabytes, and a strategy solves many times (tightening the budget,
/// at several budgets), where fresh pages for every solve cost more than
/// the programme itself (on a tiny ResNet-50's 39 stages, 924 solves of
/// 2.1 million cells for one budget search). It carries nothing from one
/// solve to the next but the memory, and serves one solve at a time.
class ChainProgrammeScratch {
public:
  ChainProgrammeScratch();
  ~ChainProgrammeScratch();
  ChainProgrammeScratch(const ChainProgrammeScratch &) = delete;
  ChainProgrammeScratch &operator=(const ChainProgrammeScratch &) = delete;

  /// The table's memory (ChainProgramme.cpp).
  struct Table;
  Table &getTable() { return *table; }

private:
  std::unique_ptr<Table> table;
};

/// Settings of the programme.
struct ChainProgrammeOptions {
  /// When set, a sub-problem may also offload the input of its first stage
  /// while the rest runs: after the run keeping everything (until the
  /// backward block), or after the checkpoint's run in a split (until the
  /// left part). The rest's memory leaves it out, and the time grows by the
  /// copy out and the copy back over this link: translated, the release
  /// waits for the one and the block that reads the input for the other, so
  /// the model stays exact. The chain-offload strategy then spreads the
  /// copies out to hide them under compute where the budget allows.
  const HostLink *offloadLink = nullptr;
  /// Most memory slots; more means finer sizes and a slower programme. 0
  /// picks from the number of stages: about 2^21 cells, at least 512 and at
  /// most 2^16 slots.
  int64_t maxSlots = 0;
  /// When set, the solve keeps its table there, in the memory an earlier
  /// solve with it left (else in its own).
  ChainProgrammeScratch *scratch = nullptr;
};

/// What the programme found.
struct ChainProgrammeResult {
  ChainStrategy strategy;
  /// Seconds of recomputation, and the peak the model predicts.
  double recomputeSeconds = 0;
  int64_t peakBytes = 0;
  int64_t slotBytes = 0;
};

/// The fastest strategy whose modelled peak is at most `budgetBytes`, the
/// lower peak among equally fast ones. False when there is none.
bool solveChainProgramme(const ChainReduction &chain, int64_t budgetBytes,
                         const ChainProgrammeOptions &options,
                         ChainProgrammeResult &result);

/// The strategy of Chen et al. (2016): `segments` segments of about equal
/// numbers of stages; the first stage of each is a checkpoint, and each
/// segment is recomputed once, keeping everything, for its backward.
ChainStrategy makeSegmentStrategy(int numStages, int segments);

} // namespace lethe::planning

#endif // LETHE_PLANNING_CHAINPROGRAMME_H
