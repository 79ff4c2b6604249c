//===- ChainReduction.h - A training step as a chain of stages --*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The chain strategies (sqrt, chain, chain-offload) plan on a chain of
// stages rather than on the graph. The forward nodes, in order, are cut into
// blocks at articulation points of the forward data flow: positions where
// exactly one value made by an earlier forward node is read by a later one
// (step inputs and parameters do not count). The last block ends at the loss
// (no cut right before the last forward node). Every other node (backward,
// optimizer) is attributed to the stage whose activations it reads, the
// attribution made non-increasing along the unplanned order, so that the
// backward pass is a run of blocks B(L-1), ..., B(0).
//
// For each stage the reduction derives the chain model the dynamic
// programme needs, in the simulator's terms (Schedule.h): times, the size of
// the boundary output and of what its backward reads, and the peak of each
// way of running its forward part (first computation or recompute; keeping
// its input or not; keeping only its output or everything its backward
// reads), of its backward part, and the memory held by everything outside
// the chain (inputs, parameters, gradients, outputs) between backward
// blocks. The numbers are exact for chains whose non-activation values keep
// the lifetimes they have in the unplanned step (true of makeRandomChain and
// makeRandomTrainingDag); elsewhere they are estimates and the strategies
// check their plans with the simulator.
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

/// One block of the chain and its model.
struct ChainStage {
  /// Forward nodes, in order; non-forward nodes attributed to it, in order.
  std::vector<int> forwardNodes;
  std::vector<int> backwardNodes;
  /// The one value that crosses into the stage (-1 for the first stage) and
  /// out of it (-1 for the last).
  int inputValue = -1;
  int outputValue = -1;
  /// Values made by the stage that its backward block reads.
  std::vector<int> keptValues;
  /// Forward nodes a recompute runs in each mode (Checkpoint and NoKeep run
  /// the same nodes), in order.
  std::vector<int> recomputeNodes[kNumForwardModes];
  /// Whether every node of that list may be recomputed.
  bool canRecompute[kNumForwardModes] = {};
  double forwardSeconds = 0;
  double backwardSeconds = 0;
  double recomputeSeconds[kNumForwardModes] = {};
  int64_t outputBytes = 0;
  /// Bytes of the kept values and the output together (each value once).
  int64_t heldAllBytes = 0;
  /// Peak of the first computation (all forward nodes) in each mode,
  /// everything outside the chain included. Checkpoint and All leave the
  /// input out (the caller holds it); AllWithoutOutput is unused.
  int64_t firstPeakBytes[kNumForwardModes] = {};
  /// Peak of a recompute in each mode, stage values only (add the memory
  /// outside the chain at that point, gapBytes of the caller's front).
  int64_t recomputePeakBytes[kNumForwardModes] = {};
  /// Peak of the backward block with the kept values resident at its start,
  /// everything outside the chain included, the input left out.
  int64_t backwardPeakBytes = 0;
  /// Memory outside the chain between the previous backward block (stage
  /// + 1) and this one: what recomputes before this block see.
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
