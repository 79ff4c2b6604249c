//===- GraphGenerators.cpp - Synthetic planning problems ------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/GraphGenerators.h"

#include "lethe/Planning/Schedule.h"
#include "lethe/Planning/SplitMix64.h"

#include <algorithm>
#include <string>

using namespace lethe::planning;

namespace {

using Random = SplitMix64;

struct Builder {
  TrainingGraph graph;
  int addValue(std::string name, int64_t bytes, int producer, ValueKind kind) {
    GraphValue value;
    value.name = std::move(name);
    value.bytes = bytes;
    value.producer = producer;
    value.kind = kind;
    graph.values.push_back(std::move(value));
    return static_cast<int>(graph.values.size()) - 1;
  }
  int addNode(std::string name, double seconds, NodeRole role,
              std::vector<int> inputs) {
    GraphNode node;
    node.name = std::move(name);
    node.seconds = seconds;
    node.role = role;
    node.recomputable = role != NodeRole::Optimizer;
    node.inputs = std::move(inputs);
    graph.nodes.push_back(std::move(node));
    return static_cast<int>(graph.nodes.size()) - 1;
  }
  int addOutput(int node, std::string name, int64_t bytes, ValueKind kind) {
    int value = addValue(std::move(name), bytes, node, kind);
    graph.nodes[node].outputs.push_back(value);
    return value;
  }
};

/// See makeRandomTrainingDag; `skipChance` is the probability that a forward
/// node reads a second (and, at half of it, a third) earlier value, and
/// `parameterChance` that it has a parameter.
TrainingGraph makeTraining(int forwardNodes, uint64_t seed, double skipChance,
                           double parameterChance) {
  Random random{seed};
  Builder b;
  auto kib = [&](int64_t low, int64_t high) {
    return random.range(low, high) * 1024;
  };
  auto millis = [&](int64_t low, int64_t high) {
    return static_cast<double>(random.range(low, high)) * 1e-3;
  };
  int input = b.addValue("x", kib(1, 16), -1, ValueKind::Input);
  int label = b.addValue("label", 1024, -1, ValueKind::Input);

  // Forward: node j reads the previous value and maybe earlier ones.
  std::vector<int> forwardValues = {input};
  std::vector<std::vector<int>> forwardInputs(forwardNodes);
  std::vector<int> parameters(forwardNodes, -1);
  std::vector<int> outputs(forwardNodes);
  std::vector<double> forwardSeconds(forwardNodes);
  std::vector<int> forwardUses(forwardNodes + 2, 0);
  for (int j = 0; j < forwardNodes; ++j) {
    std::vector<int> inputs = {forwardValues.back()};
    for (double chance : {skipChance, skipChance / 2})
      if (forwardValues.size() > 1 && random.chance(chance)) {
        int earlier = forwardValues[random.range(
            0, static_cast<int64_t>(forwardValues.size()) - 2)];
        if (std::find(inputs.begin(), inputs.end(), earlier) == inputs.end())
          inputs.push_back(earlier);
      }
    forwardInputs[j] = inputs;
    if (random.chance(parameterChance)) {
      parameters[j] = b.addValue("p" + std::to_string(j), kib(1, 4), -1,
                                 ValueKind::Parameter);
      inputs.push_back(parameters[j]);
    }
    forwardSeconds[j] = millis(1, 10);
    int node = b.addNode("f" + std::to_string(j), forwardSeconds[j],
                         NodeRole::Forward, inputs);
    outputs[j] = b.addOutput(node, "a" + std::to_string(j), kib(1, 16),
                             ValueKind::Activation);
    forwardValues.push_back(outputs[j]);
  }

  // Which forward values are read by a later forward node.
  std::vector<bool> readForward(b.graph.values.size(), false);
  for (const std::vector<int> &inputs : forwardInputs)
    for (int value : inputs)
      readForward[value] = true;

  // The loss reads the sinks and seeds their gradients.
  std::vector<int> lossInputs;
  for (int j = 0; j < forwardNodes; ++j)
    if (!readForward[outputs[j]])
      lossInputs.push_back(outputs[j]);
  lossInputs.push_back(label);
  int lossNode = b.addNode("loss", 1e-3, NodeRole::Forward, lossInputs);
  int loss = b.addOutput(lossNode, "loss", 4, ValueKind::Temporary);
  b.graph.values[loss].isOutput = true;
  // contributions[v]: the gradient pieces of value v, to be summed.
  std::vector<std::vector<int>> contributions(b.graph.values.size());
  for (int value : lossInputs)
    if (value != label)
      contributions[value].push_back(
          b.addOutput(lossNode, "d" + b.graph.values[value].name,
                      b.graph.values[value].bytes, ValueKind::Gradient));

  // Backward, in reverse: sum the pieces, then differentiate node j.
  for (int j = forwardNodes - 1; j >= 0; --j) {
    std::vector<int> &pieces = contributions[outputs[j]];
    int gradient = pieces.front();
    for (size_t k = 1; k < pieces.size(); ++k) {
      int add =
          b.addNode("add", 0.5e-3, NodeRole::Backward, {gradient, pieces[k]});
      gradient =
          b.addOutput(add, "d" + b.graph.values[outputs[j]].name,
                      b.graph.values[outputs[j]].bytes, ValueKind::Gradient);
    }
    std::vector<int> inputs = {gradient};
    for (int value : forwardInputs[j])
      inputs.push_back(value);
    inputs.push_back(outputs[j]);
    if (parameters[j] >= 0)
      inputs.push_back(parameters[j]);
    int node = b.addNode("b" + std::to_string(j), 2 * forwardSeconds[j],
                         NodeRole::Backward, inputs);
    for (int value : forwardInputs[j])
      if (value != input)
        contributions[value].push_back(
            b.addOutput(node, "d" + b.graph.values[value].name,
                        b.graph.values[value].bytes, ValueKind::Gradient));
    if (parameters[j] >= 0) {
      int parameterGradient =
          b.addOutput(node, "dp" + std::to_string(j),
                      b.graph.values[parameters[j]].bytes, ValueKind::Gradient);
      int update =
          b.addNode("update" + std::to_string(j), 0.5e-3, NodeRole::Optimizer,
                    {parameters[j], parameterGradient});
      int updated = b.addOutput(update, "p" + std::to_string(j) + "_new",
                                b.graph.values[parameters[j]].bytes,
                                ValueKind::Parameter);
      b.graph.values[updated].isOutput = true;
    }
  }
  b.graph.computeUsers();
  return std::move(b.graph);
}

} // namespace

TrainingGraph lethe::planning::makeRandomChain(int stages, uint64_t seed) {
  return makeTraining(stages, seed, 0.0, 1.0);
}

TrainingGraph lethe::planning::makeRandomTrainingDag(int forwardNodes,
                                                     uint64_t seed) {
  return makeTraining(forwardNodes, seed, 0.3, 0.5);
}

TrainingGraph lethe::planning::addRandomWorkspace(TrainingGraph graph,
                                                  uint64_t seed) {
  Random random{seed};
  for (GraphNode &node : graph.nodes)
    if (node.role != NodeRole::Optimizer && random.chance(1.0 / 3))
      node.workspaceBytes = random.range(1, 16) * 1024;
  return graph;
}

PlanningProblem lethe::planning::makeProblem(TrainingGraph graph,
                                             double fraction) {
  PlanningProblem problem;
  problem.graph = std::move(graph);
  problem.link.hostToDeviceBytesPerSecond = 25e9;
  problem.link.deviceToHostBytesPerSecond = 25e9;
  problem.link.latencySeconds = 10e-6;
  SimulationResult unplanned =
      simulate(problem, makeUnplannedSchedule(problem.graph));
  problem.budgetBytes =
      static_cast<int64_t>(fraction * static_cast<double>(unplanned.peakBytes));
  return problem;
}
