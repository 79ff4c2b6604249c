//===- ChainReduction.h - A training step as a chain of stages --*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The chain strategies (sqrt, chain, chain-offload) plan on a chain of
// stages rather than on the graph.
//
// The chain. Forward values that do not depend on the step's data (made only
// from parameters, optimizer state and constants, such as Adam's bias
// corrections) stay outside it, like the step's inputs: they are computed
// once and never recomputed. The other forward values are the chain values.
// The forward nodes, in order, are cut into blocks at articulation points of
// the chain values: positions where exactly one chain value made by an
// earlier forward node is read by a later one. The last block ends at the
// loss (no cut right before the last forward node). Every other node
// (backward, optimizer) belongs to the latest stage whose chain values it or
// a later node reads (a node that reads none follows the node before it),
// so that the backward pass is a run of blocks B(L-1), ..., B(0) and no
// backward block reads a value after that value's stage is done. A backward
// block may read chain values of its own stage and its stage's input; where
// one reads anything older, the blocks in between are merged.
//
// The model. For each stage the reduction derives, in the simulator's terms
// (Schedule.h), what the dynamic programme (ChainProgramme.h) adds up: times;
// the sizes of the stage's input and output and of what the run keeping
// everything leaves for the backward block; the peak of every way of running
// its forward part (a first computation or a recompute; keeping the input,
// the output or everything the backward reads; the input held by a caller or
// freed after its last read) and its backward part, each node's workspace
// counted while it runs (the only time one is held); and the memory outside
// the chain, which the simulator sees as the unplanned step does except for
// three kinds of value:
//  - step outputs the stage's forward makes (running statistics, the loss):
//    a recompute makes a new version and the last one is returned, so the
//    version of the run keeping everything stays to the end, earlier ones
//    live only while read;
//  - values outside the chain that only the stage's forward reads (a first
//    layer's weight, a normalisation's shift and running statistics): a
//    plan that recomputes the stage keeps them until its last run that
//    reads them (the one keeping everything, or for those only the output
//    needs, the last one making the output);
//  - any other value a recompute may read after its last unplanned read
//    (one the forward of two stages reads, say): counted, conservatively,
//    until the last backward block before which such a recompute may run.
// The model is exact -- the programme's peak equal to the simulated one, for
// every strategy -- on graphs without the last kind whose sizes are
// multiples of the programme's slot (makeRandomChain, makeRandomTrainingDag
// and the training steps of the bundled models, unittests/Planning/Inputs).
// Elsewhere it overestimates; the strategies still check every plan with
// the simulator.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_PLANNING_CHAINREDUCTION_H
#define LETHE_PLANNING_CHAINREDUCTION_H

#include "lethe/Planning/TrainingGraph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lethe::planning {

/// How a forward block is run.
enum class ForwardMode {
  /// Keep the input (a checkpoint held by the caller) and produce only the
  /// output.
  Checkpoint,
  /// Produce only the output; the input is freed after its last read here.
  NoKeep,
  /// Keep the input, produce the output and everything the backward reads.
  All,
  /// As All, but the output is not needed (the stage's backward comes next).
  AllWithoutOutput,
};

constexpr int kNumForwardModes = 4;

/// What becomes of the stage's input after a block reads it.
enum class InputUse {
  /// Something later reads it too: a caller holds it, and the block's peak
  /// leaves it out.
  Held,
  /// Nothing later reads it: the block's peak counts it until its last read
  /// there (from the start for a backward block).
  Freed,
};

constexpr int kNumInputUses = 2;

/// One block of the chain and its model.
struct ChainStage {
  /// Forward nodes, in order; non-forward nodes attributed to it, in order.
  std::vector<int> forwardNodes;
  std::vector<int> backwardNodes;
  /// The one value that crosses into the stage (-1 for the first stage) and
  /// out of it (-1 for the last).
  int inputValue = -1;
  int outputValue = -1;
  /// Chain values made by the stage that its backward block reads.
  std::vector<int> keptValues;
  /// Step outputs made by the stage's forward and read by nothing else.
  std::vector<int> stepOutputValues;
  /// Values outside the chain read by the stage's forward and nothing else
  /// (see the file comment): those the run keeping everything but the output
  /// reads, and those only the nodes making the output read.
  std::vector<int> forwardOnlyValues;
  std::vector<int> outputForwardOnlyValues;
  /// Whether the backward block reads the stage's input, and its output.
  bool backwardReadsInput = false;
  bool backwardReadsOutput = false;
  /// Forward nodes a recompute runs in each mode (Checkpoint and NoKeep run
  /// the same nodes), in order. Nodes making values outside the chain are
  /// never recomputed.
  std::vector<int> recomputeNodes[kNumForwardModes];
  /// Whether every node of that list may be recomputed, and whether one of
  /// them reads the stage's input.
  bool canRecompute[kNumForwardModes] = {};
  bool recomputeReadsInput[kNumForwardModes] = {};
  double forwardSeconds = 0;
  double backwardSeconds = 0;
  double recomputeSeconds[kNumForwardModes] = {};
  int64_t inputBytes = 0;
  int64_t outputBytes = 0;
  /// What the run keeping everything leaves resident until the backward
  /// block: the kept values (the output among them when the backward reads
  /// it) and the step outputs.
  int64_t heldAllBytes = 0;
  /// Bytes of the two kinds of forward-only values.
  int64_t forwardOnlyBytes = 0;
  int64_t outputForwardOnlyBytes = 0;
  /// Peak of the first computation (all forward nodes), indexed by mode, use
  /// of the input and whether the block ends the forward run of a split
  /// (only for Checkpoint and NoKeep: the output's forward-only values are
  /// then freed after their last read). Memory outside the chain is
  /// included but for the held input and what callers hold (forward-only
  /// values and step outputs of earlier stages). AllWithoutOutput is as
  /// All.
  int64_t firstPeakBytes[kNumForwardModes][kNumInputUses][2] = {};
  /// The same for a recompute: stage values, the stage's step outputs and
  /// forward-only values (add gapBytes of the caller's front and what
  /// callers hold).
  int64_t recomputePeakBytes[kNumForwardModes][kNumInputUses][2] = {};
  /// Peak of the backward block with the kept values resident at its start,
  /// memory outside the chain included but for what callers hold.
  int64_t backwardPeakBytes[kNumInputUses] = {};
  /// Memory outside the chain between the previous backward block (stage
  /// + 1) and this one, step outputs of later stages included: what
  /// recomputes before this block see.
  int64_t gapBytes = 0;
};

/// A training step as a chain.
struct ChainReduction {
  std::vector<ChainStage> stages;
  /// The stage of each node.
  std::vector<int> stageOfNode;
};

/// Builds the chain of `graph` (see the file comment). With `maxStages` > 0,
/// merges neighbouring blocks (keeping cuts evenly spread) so that there are
/// at most that many. Fails, with `error` set to one line, when the forward
/// nodes do not all come before the others or the graph has no forward node.
bool reduceToChain(const TrainingGraph &graph, ChainReduction &chain,
                   std::string &error, int maxStages = 0);

} // namespace lethe::planning

#endif // LETHE_PLANNING_CHAINREDUCTION_H
