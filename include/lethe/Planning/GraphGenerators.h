//===- GraphGenerators.h - Synthetic planning problems ----------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Random training graphs with the shapes the strategies meet, for tests
// (optimality against exhaustive search) and benchmarks (solve time against
// size). Deterministic in their seed.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_PLANNING_GRAPHGENERATORS_H
#define LETHE_PLANNING_GRAPHGENERATORS_H

#include "lethe/Planning/TrainingGraph.h"

#include <cstdint>

namespace lethe::planning {

/// The training step of a chain of `stages` layers with random sizes and
/// times: forward node i reads activation a(i-1) and parameter p(i) and
/// writes a(i); the loss reads a(n); backward node i reads the gradient of
/// a(i), a(i-1) and a(i), and writes the gradient of a(i-1) (except the
/// first) and of p(i); an optimizer node updates p(i) right after. Sizes are
/// whole multiples of 1 KiB in [1, 16] KiB, times in [1, 10] ms.
TrainingGraph makeRandomChain(int stages, uint64_t seed);

/// The training step of a random forward DAG of `forwardNodes` nodes (each
/// reads one to three earlier values, mostly recent ones, so that the graph
/// has long-range skips and articulation points), its loss, the backward
/// nodes that reverse-mode autodiff makes (one per forward node, plus adds
/// that sum the gradients of values read more than once) and one optimizer
/// node per parameter. Sizes and times as in makeRandomChain.
TrainingGraph makeRandomTrainingDag(int forwardNodes, uint64_t seed);

/// Gives about a third of the non-optimizer nodes of `graph` a workspace (as
/// a convolution's column buffer) of a whole number of KiB in [1, 16], drawn
/// from `seed`, and returns it.
TrainingGraph addRandomWorkspace(TrainingGraph graph, uint64_t seed);

/// A planning problem around `graph` with the budget set to `fraction` of
/// its unplanned peak and a host link of 25 GB/s each way and 10 us latency.
PlanningProblem makeProblem(TrainingGraph graph, double fraction);

} // namespace lethe::planning

#endif // LETHE_PLANNING_GRAPHGENERATORS_H
