//===- HandBuiltGraphs.h - Training graphs written out in tests -*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// For the planning tests that write a small step out by hand: values and
// nodes are appended in order, so that their ids are their positions.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_UNITTESTS_PLANNING_HANDBUILTGRAPHS_H
#define LETHE_UNITTESTS_PLANNING_HANDBUILTGRAPHS_H

#include "lethe/Planning/TrainingGraph.h"

#include <utility>
#include <vector>

namespace lethe::planning {

inline void addValue(TrainingGraph &graph, const char *name, int64_t bytes,
                     int producer, ValueKind kind) {
  GraphValue value;
  value.name = name;
  value.bytes = bytes;
  value.producer = producer;
  value.kind = kind;
  graph.values.push_back(std::move(value));
}

inline void addNode(TrainingGraph &graph, const char *name, double seconds,
                    NodeRole role, std::vector<int> inputs,
                    std::vector<int> outputs) {
  GraphNode node;
  node.name = name;
  node.seconds = seconds;
  node.role = role;
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  graph.nodes.push_back(std::move(node));
}

} // namespace lethe::planning

#endif // LETHE_UNITTESTS_PLANNING_HANDBUILTGRAPHS_H
