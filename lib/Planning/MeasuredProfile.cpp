//===- MeasuredProfile.cpp - What a planned executable measured ----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/MeasuredProfile.h"

#include "lethe/Planning/ArenaLayout.h"

#include "JsonUtils.h"

#include <algorithm>
#include <limits>
#include <vector>

using namespace lethe::planning;
using namespace lethe::planning::json_utils;

namespace {
/// The most workspace a profile may ask for (1 PiB): far beyond any device,
/// and far from overflowing the planner's sums.
constexpr int64_t kMaxWorkspaceBytes = int64_t{1} << 50;
} // namespace

bool lethe::planning::applyMeasuredProfile(std::string_view text,
                                           std::string_view origin,
                                           PlanningProblem &problem,
                                           MeasuredNodes &measured,
                                           std::string &error) {
  TrainingGraph &graph = problem.graph;
  std::vector<double> sums(graph.nodes.size(), 0);
  std::vector<int> counts(graph.nodes.size(), 0);
  std::vector<int64_t> workspaces(graph.nodes.size(), 0);
  try {
    json document = parseDocument(text);
    if (!document.is_object())
      throw SchemaError("the profile must be a JSON object");
    if (getString(getMember(document, "format", "the profile"), "format") !=
        "lethe-program-profile")
      throw SchemaError("format is not \"lethe-program-profile\" (write it "
                        "with a planned executable's --profile)");
    getInteger(getMember(document, "version", "the profile"), "version", 1, 1);
    const json &ops = getMember(document, "ops", "the profile");
    if (!ops.is_array())
      throw SchemaError("ops must be an array");
    for (size_t index = 0; index < ops.size(); ++index) {
      const json &op = ops[index];
      std::string where = "ops[" + std::to_string(index) + "]";
      if (!op.is_object())
        throw SchemaError(where + " must be an object");
      std::string kind =
          getString(getMember(op, "kind", where), where + ".kind");
      if (kind == "offload" || kind == "prefetch" || kind == "release")
        continue; // copies are timed by the link's bandwidth
      if (kind != "compute" && kind != "recompute")
        throw SchemaError(where +
                          ".kind must be compute, recompute, offload, "
                          "prefetch or release, got '" +
                          kind + "'");
      int64_t node = getInteger(getMember(op, "node", where), where + ".node",
                                0, std::numeric_limits<int>::max());
      if (node >= static_cast<int64_t>(graph.nodes.size()))
        throw SchemaError(where + " measures node " + std::to_string(node) +
                          ", but the training step has " +
                          std::to_string(graph.nodes.size()) +
                          " nodes: the profile is of another step");
      std::string name = getString(getMember(op, "op", where), where + ".op");
      if (name != graph.nodes[node].name)
        throw SchemaError(where + " measures node " + std::to_string(node) +
                          " as " + name + ", but it is " +
                          graph.nodes[node].name +
                          ": the profile is of another step");
      sums[node] +=
          getNonNegative(getMember(op, "seconds", where), where + ".seconds");
      ++counts[node];
      if (op.contains("workspace_bytes"))
        workspaces[node] =
            std::max(workspaces[node], getInteger(op["workspace_bytes"],
                                                  where + ".workspace_bytes", 0,
                                                  kMaxWorkspaceBytes));
    }
  } catch (const SchemaError &schemaError) {
    error =
        "measured profile " + std::string(origin) + ": " + schemaError.what();
    return false;
  }
  measured = MeasuredNodes();
  for (size_t node = 0; node < graph.nodes.size(); ++node) {
    GraphNode &info = graph.nodes[node];
    if (counts[node]) {
      info.seconds = sums[node] / counts[node];
      ++measured.timed;
    }
    int64_t workspace = alignBytes(workspaces[node], kDefaultArenaAlignment);
    if (workspace > info.workspaceBytes) {
      info.workspaceBytes = workspace;
      measured.widened.push_back(static_cast<int>(node));
    }
  }
  return true;
}
