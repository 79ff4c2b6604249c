//===- TrainingGraph.cpp - The planner's view of a training step ----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/TrainingGraph.h"

#include "JsonUtils.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace lethe::planning;
using namespace lethe::planning::json_utils;

namespace {

const char *const kRoleNames[] = {"forward", "backward", "optimizer"};
const char *const kKindNames[] = {"input",      "parameter", "optimizer_state",
                                  "activation", "gradient",  "temporary"};

template <typename Enum, size_t N>
Enum parseEnum(const json &value, const char *const (&names)[N],
               const std::string &what) {
  std::string name = getString(value, what);
  for (size_t i = 0; i < N; ++i)
    if (name == names[i])
      return static_cast<Enum>(i);
  std::string expected;
  for (size_t i = 0; i < N; ++i)
    expected += std::string(i ? ", " : "") + names[i];
  throw SchemaError(what + " must be one of " + expected + ", got '" + name +
                    "'");
}

std::vector<int> parseIds(const json &value, const std::string &what,
                          int count) {
  if (!value.is_array())
    throw SchemaError(what + " must be an array of ids");
  std::vector<int> ids;
  for (const json &element : value)
    ids.push_back(static_cast<int>(
        getInteger(element, "an id in " + what, 0, count - 1)));
  return ids;
}

} // namespace

const char *lethe::planning::stringifyNodeRole(NodeRole role) {
  return kRoleNames[static_cast<int>(role)];
}

const char *lethe::planning::stringifyValueKind(ValueKind kind) {
  return kKindNames[static_cast<int>(kind)];
}

double HostLink::copySeconds(int64_t bytes, bool toDevice) const {
  double bandwidth =
      toDevice ? hostToDeviceBytesPerSecond : deviceToHostBytesPerSecond;
  if (bandwidth <= 0)
    return std::numeric_limits<double>::infinity();
  return latencySeconds + static_cast<double>(bytes) / bandwidth;
}

void TrainingGraph::computeUsers() {
  for (GraphValue &value : values)
    value.users.clear();
  for (int node = 0; node < static_cast<int>(nodes.size()); ++node)
    for (int input : nodes[node].inputs) {
      std::vector<int> &users = values[input].users;
      if (users.empty() || users.back() != node)
        users.push_back(node);
    }
}

bool TrainingGraph::verify(std::string &error) const {
  int numNodes = static_cast<int>(nodes.size());
  int numValues = static_cast<int>(values.size());
  auto fail = [&](std::string message) {
    error = std::move(message);
    return false;
  };
  std::vector<std::vector<int>> users(numValues);
  for (int n = 0; n < numNodes; ++n) {
    const GraphNode &node = nodes[n];
    std::string where = "node " + std::to_string(n) + " (" + node.name + ")";
    if (!std::isfinite(node.seconds) || node.seconds < 0)
      return fail(where + " has a negative or non-finite time");
    if (node.workspaceBytes < 0)
      return fail(where + " has a negative workspace");
    for (int input : node.inputs) {
      if (input < 0 || input >= numValues)
        return fail(where + " reads value " + std::to_string(input) +
                    ", which does not exist");
      if (values[input].producer >= n)
        return fail(where + " reads value " + std::to_string(input) +
                    " before its producer runs");
      if (users[input].empty() || users[input].back() != n)
        users[input].push_back(n);
    }
    for (int output : node.outputs) {
      if (output < 0 || output >= numValues)
        return fail(where + " writes value " + std::to_string(output) +
                    ", which does not exist");
      if (values[output].producer != n)
        return fail(where + " writes value " + std::to_string(output) +
                    ", whose producer is " +
                    std::to_string(values[output].producer));
    }
  }
  for (int v = 0; v < numValues; ++v) {
    const GraphValue &value = values[v];
    std::string where = "value " + std::to_string(v) + " (" + value.name + ")";
    if (value.bytes < 0)
      return fail(where + " has a negative size");
    if (value.producer < -1 || value.producer >= numNodes)
      return fail(where + " has producer " + std::to_string(value.producer) +
                  ", which does not exist");
    if (value.producer >= 0) {
      const std::vector<int> &outputs = nodes[value.producer].outputs;
      if (std::count(outputs.begin(), outputs.end(), v) != 1)
        return fail(where + " is not an output of its producer");
    }
    if (value.users != users[v])
      return fail(where + " lists users that differ from the nodes reading "
                          "it (call computeUsers)");
  }
  return true;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

std::string lethe::planning::writeProblemJson(const PlanningProblem &problem) {
  json document;
  document["format"] = "lethe-problem";
  document["version"] = 1;
  document["budget_bytes"] = problem.budgetBytes;
  document["host_link"] = {{"host_to_device_bytes_per_second",
                            problem.link.hostToDeviceBytesPerSecond},
                           {"device_to_host_bytes_per_second",
                            problem.link.deviceToHostBytesPerSecond},
                           {"latency_seconds", problem.link.latencySeconds}};
  json values = json::array();
  for (const GraphValue &value : problem.graph.values)
    values.push_back({{"name", value.name},
                      {"bytes", value.bytes},
                      {"producer", value.producer},
                      {"kind", stringifyValueKind(value.kind)},
                      {"output", value.isOutput}});
  json nodes = json::array();
  for (const GraphNode &node : problem.graph.nodes)
    nodes.push_back({{"name", node.name},
                     {"seconds", node.seconds},
                     {"inputs", node.inputs},
                     {"outputs", node.outputs},
                     {"role", stringifyNodeRole(node.role)},
                     {"recomputable", node.recomputable},
                     {"workspace_bytes", node.workspaceBytes}});
  document["values"] = std::move(values);
  document["nodes"] = std::move(nodes);
  return document.dump(1) + "\n";
}

bool lethe::planning::parseProblemJson(std::string_view text,
                                       std::string_view origin,
                                       PlanningProblem &problem,
                                       std::string &error) {
  constexpr int64_t kMaxBytes = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMaxCount = std::numeric_limits<int>::max();
  PlanningProblem parsed;
  try {
    json document = parseDocument(text);
    checkKeys(
        document,
        {"format", "version", "budget_bytes", "host_link", "values", "nodes"},
        "the problem");
    if (getString(getMember(document, "format", "the problem"), "'format'") !=
        "lethe-problem")
      throw SchemaError("'format' must be \"lethe-problem\"");
    if (getInteger(getMember(document, "version", "the problem"), "'version'",
                   0, kMaxCount) != 1)
      throw SchemaError("'version' must be 1, the only version there is");
    parsed.budgetBytes =
        getInteger(getMember(document, "budget_bytes", "the problem"),
                   "'budget_bytes'", 0, kMaxBytes);
    const json &link = getMember(document, "host_link", "the problem");
    checkKeys(link,
              {"host_to_device_bytes_per_second",
               "device_to_host_bytes_per_second", "latency_seconds"},
              "'host_link'");
    parsed.link.hostToDeviceBytesPerSecond = getNonNegative(
        getMember(link, "host_to_device_bytes_per_second", "'host_link'"),
        "'host_to_device_bytes_per_second'");
    parsed.link.deviceToHostBytesPerSecond = getNonNegative(
        getMember(link, "device_to_host_bytes_per_second", "'host_link'"),
        "'device_to_host_bytes_per_second'");
    parsed.link.latencySeconds = getNonNegative(
        getMember(link, "latency_seconds", "'host_link'"), "'latency_seconds'");

    const json &values = getMember(document, "values", "the problem");
    const json &nodes = getMember(document, "nodes", "the problem");
    if (!values.is_array() || !nodes.is_array())
      throw SchemaError("'values' and 'nodes' must be arrays");
    int numValues = static_cast<int>(values.size());
    int numNodes = static_cast<int>(nodes.size());
    for (int v = 0; v < numValues; ++v) {
      std::string where = "value " + std::to_string(v);
      const json &entry = values[v];
      checkKeys(entry, {"name", "bytes", "producer", "kind", "output"}, where);
      GraphValue value;
      value.name = getString(getMember(entry, "name", where), where + " name");
      value.bytes = getInteger(getMember(entry, "bytes", where),
                               where + " bytes", 0, kMaxBytes);
      value.producer =
          static_cast<int>(getInteger(getMember(entry, "producer", where),
                                      where + " producer", -1, numNodes - 1));
      value.kind = parseEnum<ValueKind>(getMember(entry, "kind", where),
                                        kKindNames, where + " kind");
      const json &output = getMember(entry, "output", where);
      if (!output.is_boolean())
        throw SchemaError(where + " output must be true or false");
      value.isOutput = output.get<bool>();
      parsed.graph.values.push_back(std::move(value));
    }
    for (int n = 0; n < numNodes; ++n) {
      std::string where = "node " + std::to_string(n);
      const json &entry = nodes[n];
      checkKeys(entry,
                {"name", "seconds", "inputs", "outputs", "role", "recomputable",
                 "workspace_bytes"},
                where);
      GraphNode node;
      node.name = getString(getMember(entry, "name", where), where + " name");
      node.seconds = getNonNegative(getMember(entry, "seconds", where),
                                    where + " seconds");
      node.inputs = parseIds(getMember(entry, "inputs", where),
                             where + " inputs", numValues);
      node.outputs = parseIds(getMember(entry, "outputs", where),
                              where + " outputs", numValues);
      node.role = parseEnum<NodeRole>(getMember(entry, "role", where),
                                      kRoleNames, where + " role");
      const json &recomputable = getMember(entry, "recomputable", where);
      if (!recomputable.is_boolean())
        throw SchemaError(where + " recomputable must be true or false");
      node.recomputable = recomputable.get<bool>();
      // Optional: problems written before workspace was modelled have none.
      if (entry.contains("workspace_bytes"))
        node.workspaceBytes = getInteger(
            entry["workspace_bytes"], where + " workspace_bytes", 0, kMaxBytes);
      parsed.graph.nodes.push_back(std::move(node));
    }
    parsed.graph.computeUsers();
    std::string why;
    if (!parsed.graph.verify(why))
      throw SchemaError(why);
  } catch (const SchemaError &schemaError) {
    error =
        "planning problem " + std::string(origin) + ": " + schemaError.what();
    return false;
  }
  problem = std::move(parsed);
  return true;
}
