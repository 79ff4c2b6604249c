//===- TrainingGraph.h - The planner's view of a training step --*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The planning problem in plain C++: the ops of a training step (nodes) in
// the order the unplanned step runs them, the tensors they read and write
// (values) with their sizes, each node's estimated time, what every value is
// (parameter, activation, gradient, optimizer state, ...), and the budget and
// host-link model the plan must respect. It is extracted from the IR once
// (lethe/Planning/GraphExtraction.h) or read from JSON (docs/Planning.md is
// the schema), and every strategy, the simulator and the benchmarks work on
// it without MLIR.
//
// Conventions:
//  - Nodes are numbered in the unplanned order, which is topological.
//  - A value with producer -1 is an input of the step (a function argument):
//    it is resident on the device when the step starts.
//  - `users` lists each reading node once, in increasing order.
//  - A value with `isOutput` set is returned by the step: it must be resident
//    when the step ends.
//  - A node's workspace is scratch memory the op holds while it runs, and
//    only then: every compute of the node (the first and each recompute)
//    holds its own, and it counts against the budget like a tensor.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_PLANNING_TRAININGGRAPH_H
#define LETHE_PLANNING_TRAININGGRAPH_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lethe::planning {

/// The part of the step a node belongs to.
enum class NodeRole { Forward, Backward, Optimizer };

/// What a value is. Activations (forward values read by the backward pass)
/// are what the strategies keep, recompute or offload.
enum class ValueKind {
  Input,          // a data input or label of the step
  Parameter,      // a trained parameter (an argument that is updated)
  OptimizerState, // a moment, a step counter, a running statistic
  Activation,     // produced in the forward pass and read by the backward
  Gradient,       // produced in the backward pass
  Temporary,      // any other intermediate value
};

const char *stringifyNodeRole(NodeRole role);
const char *stringifyValueKind(ValueKind kind);

struct GraphValue {
  std::string name;
  int64_t bytes = 0;
  /// The node that computes it, or -1 for an input of the step.
  int producer = -1;
  /// The nodes that read it, each once, in increasing order.
  std::vector<int> users;
  ValueKind kind = ValueKind::Temporary;
  /// Returned by the step: resident at its end.
  bool isOutput = false;
};

struct GraphNode {
  /// The op's name, e.g. "lethe.conv".
  std::string name;
  /// Estimated time on the device, launch overhead included.
  double seconds = 0;
  /// The values it reads (in operand order, repeats allowed) and writes.
  std::vector<int> inputs;
  std::vector<int> outputs;
  NodeRole role = NodeRole::Forward;
  /// Whether a plan may run it again (pure and deterministic).
  bool recomputable = true;
  /// Device scratch bytes it holds while it runs (the cost interface's
  /// workspace, at the size it takes in the arena); 0 for most ops.
  int64_t workspaceBytes = 0;
};

/// The host link as the planner models it: a copy of `bytes` in one direction
/// takes latency + bytes / bandwidth, on a stream of its own per direction.
struct HostLink {
  double hostToDeviceBytesPerSecond = 0;
  double deviceToHostBytesPerSecond = 0;
  double latencySeconds = 0;

  double copySeconds(int64_t bytes, bool toDevice) const;
  /// Whether a value can go to the host and come back: both directions
  /// have bandwidth (a copy without takes forever).
  bool canSwap() const {
    return hostToDeviceBytesPerSecond > 0 && deviceToHostBytesPerSecond > 0;
  }
};

struct TrainingGraph {
  std::vector<GraphNode> nodes;
  std::vector<GraphValue> values;

  /// Fills every value's `users` from the nodes' inputs.
  void computeUsers();

  /// Checks the invariants above (ids in range, a value produced by the node
  /// that lists it as output, users consistent with inputs, topological
  /// order, non-negative sizes and times). Sets `error` to one line on
  /// failure.
  bool verify(std::string &error) const;
};

/// A planning problem: the graph, the device budget (everything resident on
/// the device counts against it) and the host link.
struct PlanningProblem {
  TrainingGraph graph;
  int64_t budgetBytes = 0;
  HostLink link;
};

/// Serializes `problem` as JSON (schema in docs/Planning.md).
std::string writeProblemJson(const PlanningProblem &problem);

/// Parses a problem written by writeProblemJson (or by hand). On failure
/// returns false and sets `error` to one line naming the problem; `origin`
/// names the input in it.
bool parseProblemJson(std::string_view text, std::string_view origin,
                      PlanningProblem &problem, std::string &error);

} // namespace lethe::planning

#endif // LETHE_PLANNING_TRAININGGRAPH_H
