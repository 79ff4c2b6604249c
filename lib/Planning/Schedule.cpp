//===- Schedule.cpp - Plans as schedules, and their simulation ------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/Schedule.h"

#include "JsonUtils.h"
#include "ScheduleReplay.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

using namespace lethe::planning;
using namespace lethe::planning::json_utils;
using namespace lethe::planning::detail;

namespace {

const char *const kStepNames[] = {"compute", "offload", "release", "prefetch"};

/// One device copy of a value, from the step that makes it to the step that
/// frees it.
struct Version {
  int value = 0;
  int64_t allocStep = 0;
  int64_t lastRead = -1;
  bool offloaded = false;
  bool released = false;
  int64_t releaseStep = -1;
  /// When its contents are on the device (prefetches arrive late).
  double readyTime = 0;
  /// When its offload finishes.
  double offloadEnd = 0;
};

std::string describeValue(const TrainingGraph &graph, int value) {
  return "value " + std::to_string(value) + " (" + graph.values[value].name +
         ")";
}

/// A fingerprint of the graph's structure and sizes, so that a plan file is
/// not applied to a different training step.
uint64_t fingerprint(const TrainingGraph &graph) {
  uint64_t hash = 1469598103934665603ull; // FNV-1a
  auto mix = [&](uint64_t word) {
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= (word >> (8 * byte)) & 0xff;
      hash *= 1099511628211ull;
    }
  };
  for (const GraphNode &node : graph.nodes) {
    for (char c : node.name)
      mix(static_cast<unsigned char>(c));
    mix(node.inputs.size());
    for (int input : node.inputs)
      mix(input);
    mix(node.outputs.size());
    for (int output : node.outputs)
      mix(output);
    // Mixed only when there is some, so that steps without workspace keep
    // the fingerprints they had before it was modelled.
    if (node.workspaceBytes > 0)
      mix(static_cast<uint64_t>(node.workspaceBytes));
  }
  for (const GraphValue &value : graph.values)
    mix(static_cast<uint64_t>(value.bytes));
  return hash;
}

std::string hex(uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof(buffer), "%016" PRIx64, value);
  return buffer;
}

} // namespace

std::string lethe::planning::getGraphFingerprint(const TrainingGraph &graph) {
  return hex(fingerprint(graph));
}

const char *lethe::planning::stringifyStepKind(StepKind kind) {
  return kStepNames[static_cast<int>(kind)];
}

Schedule lethe::planning::makeUnplannedSchedule(const TrainingGraph &graph) {
  Schedule schedule;
  schedule.reserve(graph.nodes.size());
  for (int node = 0; node < static_cast<int>(graph.nodes.size()); ++node)
    schedule.push_back(Step::compute(node));
  return schedule;
}

ScheduleReplay detail::replaySchedule(const PlanningProblem &problem,
                                      const Schedule &schedule,
                                      bool withTimings) {
  const TrainingGraph &graph = problem.graph;
  int numValues = static_cast<int>(graph.values.size());
  int numNodes = static_cast<int>(graph.nodes.size());
  int64_t numSteps = static_cast<int64_t>(schedule.size());
  ScheduleReplay replay;
  SimulationResult &result = replay.result;
  auto fail = [&](int64_t step, const std::string &message) {
    replay = ScheduleReplay();
    replay.result.error = "step " + std::to_string(step) + " (" +
                          stringifyStepKind(schedule[step].kind) + " " +
                          std::to_string(schedule[step].id) + "): " + message;
    return std::move(replay);
  };

  std::vector<Version> versions;
  // The current device version of each value, or -1.
  std::vector<int> current(numValues, -1);
  // When each value's host copy is complete, or a negative number.
  std::vector<double> hostReady(numValues, -1);
  std::vector<int> timesComputed(numNodes, 0);
  auto makeVersion = [&](int value, int64_t step) {
    Version version;
    version.value = value;
    version.allocStep = step;
    current[value] = static_cast<int>(versions.size());
    versions.push_back(version);
  };
  auto isResident = [&](int value) {
    return current[value] >= 0 && !versions[current[value]].released;
  };
  for (int value = 0; value < numValues; ++value)
    if (graph.values[value].producer < 0)
      makeVersion(value, 0);

  double computeTime = 0, deviceToHostFree = 0, hostToDeviceFree = 0;
  int64_t hostBytes = 0;
  if (withTimings)
    replay.timings.reserve(numSteps);
  auto time = [&](int stream, double issue, double start, double end) {
    if (withTimings)
      replay.timings.push_back({stream, issue, start, end});
  };
  for (int64_t step = 0; step < numSteps; ++step) {
    const Step &s = schedule[step];
    if (s.kind == StepKind::Compute) {
      if (s.id < 0 || s.id >= numNodes)
        return fail(step, "there is no such node");
      const GraphNode &node = graph.nodes[s.id];
      if (timesComputed[s.id] > 0 && !node.recomputable)
        return fail(step, "node " + node.name + " cannot be recomputed");
      double start = computeTime;
      for (int input : node.inputs) {
        if (!isResident(input))
          return fail(step, "reads " + describeValue(graph, input) +
                                ", which is not resident");
        Version &version = versions[current[input]];
        version.lastRead = step;
        start = std::max(start, version.readyTime);
      }
      result.stallSeconds += start - computeTime;
      time(0, computeTime, start, start + node.seconds);
      computeTime = start + node.seconds;
      if (timesComputed[s.id]++ > 0)
        result.recomputeSeconds += node.seconds;
      for (int output : node.outputs)
        makeVersion(output, step);
      if (node.workspaceBytes > 0)
        replay.workspaces.push_back({s.id, step});
      continue;
    }
    if (s.id < 0 || s.id >= numValues)
      return fail(step, "there is no such value");
    int64_t bytes = graph.values[s.id].bytes;
    switch (s.kind) {
    case StepKind::Offload: {
      if (!isResident(s.id))
        return fail(step, "offloads " + describeValue(graph, s.id) +
                              ", which is not resident");
      Version &version = versions[current[s.id]];
      if (version.offloaded)
        return fail(step, "offloads " + describeValue(graph, s.id) +
                              " a second time");
      version.offloaded = true;
      version.lastRead = step;
      double start = std::max(deviceToHostFree, computeTime);
      version.offloadEnd = start + problem.link.copySeconds(bytes, false);
      deviceToHostFree = version.offloadEnd;
      time(1, computeTime, start, version.offloadEnd);
      if (hostReady[s.id] < 0) {
        hostBytes += bytes;
        replay.hostCopies.push_back({s.id, step});
      }
      hostReady[s.id] = version.offloadEnd;
      result.hostPeakBytes = std::max(result.hostPeakBytes, hostBytes);
      result.offloadedBytes += bytes;
      break;
    }
    case StepKind::Release: {
      if (current[s.id] < 0 || !versions[current[s.id]].offloaded ||
          versions[current[s.id]].released)
        return fail(step, "releases " + describeValue(graph, s.id) +
                              ", which is not an offloaded resident value");
      Version &version = versions[current[s.id]];
      version.released = true;
      version.releaseStep = step;
      double issue = computeTime;
      if (version.offloadEnd > computeTime) {
        result.stallSeconds += version.offloadEnd - computeTime;
        computeTime = version.offloadEnd;
      }
      time(0, issue, computeTime, computeTime);
      break;
    }
    case StepKind::Prefetch: {
      if (hostReady[s.id] < 0)
        return fail(step, "prefetches " + describeValue(graph, s.id) +
                              ", which was never offloaded");
      if (isResident(s.id))
        return fail(step, "prefetches " + describeValue(graph, s.id) +
                              ", which is already resident");
      makeVersion(s.id, step);
      double start = std::max({hostToDeviceFree, computeTime, hostReady[s.id]});
      versions[current[s.id]].readyTime =
          start + problem.link.copySeconds(bytes, true);
      hostToDeviceFree = versions[current[s.id]].readyTime;
      time(2, computeTime, start, hostToDeviceFree);
      result.prefetchedBytes += bytes;
      break;
    }
    case StepKind::Compute:
      break;
    }
  }
  for (int value = 0; value < numValues; ++value)
    if (graph.values[value].isOutput && !isResident(value)) {
      replay = ScheduleReplay();
      replay.result.error = "the step ends without " +
                            describeValue(graph, value) +
                            ", an output, resident";
      return replay;
    }

  // Each version is held from the step that makes it to the step that frees
  // it: its release, the end for outputs and unreleased offloads, else its
  // last read.
  replay.versions.reserve(versions.size());
  for (size_t index = 0; index < versions.size(); ++index) {
    const Version &version = versions[index];
    int64_t freeStep;
    if (version.released)
      freeStep = version.releaseStep;
    else if (version.offloaded ||
             (graph.values[version.value].isOutput &&
              current[version.value] == static_cast<int>(index)))
      freeStep = numSteps;
    else
      freeStep = std::max(version.allocStep, version.lastRead);
    replay.versions.push_back({version.value, version.allocStep, freeStep});
  }
  result.seconds = computeTime;
  result.valid = true;
  return replay;
}

SimulationResult lethe::planning::simulate(const PlanningProblem &problem,
                                           const Schedule &schedule) {
  ScheduleReplay replay = detail::replaySchedule(problem, schedule);
  SimulationResult result = std::move(replay.result);
  if (!result.valid)
    return result;
  int64_t numSteps = static_cast<int64_t>(schedule.size());
  std::vector<int64_t> delta(numSteps + 2, 0);
  for (const VersionLifetime &version : replay.versions) {
    int64_t bytes = problem.graph.values[version.value].bytes;
    delta[version.firstStep] += bytes;
    delta[version.lastStep + 1] -= bytes;
  }
  for (const WorkspaceUse &use : replay.workspaces) {
    int64_t bytes = problem.graph.nodes[use.node].workspaceBytes;
    delta[use.step] += bytes;
    delta[use.step + 1] -= bytes;
  }
  result.memory.resize(numSteps + 1);
  int64_t running = 0;
  for (int64_t step = 0; step <= numSteps; ++step) {
    running += delta[step];
    result.memory[step] = running;
    if (step == 0 || running > result.peakBytes) {
      result.peakBytes = running;
      result.peakStep = step;
    }
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Plan files
//===----------------------------------------------------------------------===//

std::string lethe::planning::writePlanJson(const PlanningProblem &problem,
                                           const Plan &plan) {
  SimulationResult simulation = simulate(problem, plan.schedule);
  json document;
  document["format"] = "lethe-plan";
  document["version"] = 1;
  document["strategy"] = plan.strategy;
  document["graph"] = {{"nodes", problem.graph.nodes.size()},
                       {"values", problem.graph.values.size()},
                       {"fingerprint", hex(fingerprint(problem.graph))}};
  document["budget_bytes"] = problem.budgetBytes;
  if (simulation.valid) {
    document["peak_bytes"] = simulation.peakBytes;
    document["seconds"] = simulation.seconds;
  }
  if (plan.lowerBoundSeconds >= 0) {
    document["lower_bound_seconds"] = plan.lowerBoundSeconds;
    if (!plan.lowerBoundCoversOffloading)
      document["lower_bound_recompute_only"] = true;
  }
  // One step per line keeps plan files readable and diffable: print the
  // other fields, then splice the steps in before the closing brace.
  std::string text = document.dump(1);
  text.erase(text.rfind('\n'));
  text += ",\n \"steps\": [";
  for (size_t index = 0; index < plan.schedule.size(); ++index) {
    const Step &step = plan.schedule[index];
    text += std::string(index ? "," : "") + "\n  [\"" +
            stringifyStepKind(step.kind) + "\", " + std::to_string(step.id) +
            "]";
  }
  text += plan.schedule.empty() ? "]\n}\n" : "\n ]\n}\n";
  return text;
}

bool lethe::planning::parsePlanJson(std::string_view text,
                                    std::string_view origin,
                                    const PlanningProblem &problem, Plan &plan,
                                    std::string &error) {
  Plan parsed;
  try {
    json document = parseDocument(text);
    checkKeys(document,
              {"format", "version", "strategy", "graph", "budget_bytes",
               "peak_bytes", "seconds", "lower_bound_seconds",
               "lower_bound_recompute_only", "steps"},
              "the plan");
    if (getString(getMember(document, "format", "the plan"), "'format'") !=
        "lethe-plan")
      throw SchemaError("'format' must be \"lethe-plan\"");
    if (getInteger(getMember(document, "version", "the plan"), "'version'", 0,
                   std::numeric_limits<int>::max()) != 1)
      throw SchemaError("'version' must be 1, the only version there is");
    parsed.strategy =
        getString(getMember(document, "strategy", "the plan"), "'strategy'");
    const json &graph = getMember(document, "graph", "the plan");
    checkKeys(graph, {"nodes", "values", "fingerprint"}, "'graph'");
    int64_t numNodes = static_cast<int64_t>(problem.graph.nodes.size());
    int64_t numValues = static_cast<int64_t>(problem.graph.values.size());
    std::string expected = hex(fingerprint(problem.graph));
    if (getInteger(getMember(graph, "nodes", "'graph'"), "'graph.nodes'", 0,
                   std::numeric_limits<int>::max()) != numNodes ||
        getInteger(getMember(graph, "values", "'graph'"), "'graph.values'", 0,
                   std::numeric_limits<int>::max()) != numValues ||
        getString(getMember(graph, "fingerprint", "'graph'"),
                  "'graph.fingerprint'") != expected)
      throw SchemaError(
          "it was made for a different training step, or other sizes of it "
          "(this one has " +
          std::to_string(numNodes) + " nodes, " + std::to_string(numValues) +
          " values, fingerprint " + expected +
          " of their sizes and workspace, which a measured profile can "
          "raise); plan again and write it with plan-out=");
    if (document.contains("lower_bound_seconds"))
      parsed.lowerBoundSeconds = getNonNegative(document["lower_bound_seconds"],
                                                "'lower_bound_seconds'");
    if (document.contains("lower_bound_recompute_only"))
      parsed.lowerBoundCoversOffloading =
          !getBool(document["lower_bound_recompute_only"],
                   "'lower_bound_recompute_only'");
    const json &steps = getMember(document, "steps", "the plan");
    if (!steps.is_array())
      throw SchemaError("'steps' must be an array");
    for (size_t index = 0; index < steps.size(); ++index) {
      const json &entry = steps[index];
      std::string where = "step " + std::to_string(index);
      if (!entry.is_array() || entry.size() != 2)
        throw SchemaError(where + " must be [kind, id], got " + entry.dump());
      std::string kind = getString(entry[0], where + " kind");
      const char *const *found =
          std::find(std::begin(kStepNames), std::end(kStepNames), kind);
      if (found == std::end(kStepNames))
        throw SchemaError(where + " has kind '" + kind +
                          "'; expected compute, offload, release or prefetch");
      Step step;
      step.kind = static_cast<StepKind>(found - std::begin(kStepNames));
      int64_t limit = step.kind == StepKind::Compute ? numNodes : numValues;
      step.id = static_cast<int>(getInteger(
          entry[1],
          where + (step.kind == StepKind::Compute ? " node" : " value"), 0,
          limit - 1));
      parsed.schedule.push_back(step);
    }
    // A bound holds for the budget and the op times it was proved with: a
    // plan read for another budget, or whose step time is not the one
    // written any more (another profile's times, measured ones), keeps its
    // schedule but not its bound.
    // The optional numbers are checked whether or not they are used.
    std::optional<int64_t> budget;
    if (document.contains("budget_bytes"))
      budget = getInteger(document["budget_bytes"], "'budget_bytes'", -1,
                          std::numeric_limits<int64_t>::max());
    if (document.contains("peak_bytes"))
      getInteger(document["peak_bytes"], "'peak_bytes'", 0,
                 std::numeric_limits<int64_t>::max());
    std::optional<double> written;
    if (document.contains("seconds"))
      written = getNonNegative(document["seconds"], "'seconds'");
    if (parsed.lowerBoundSeconds >= 0) {
      bool sameBudget = !budget || *budget == problem.budgetBytes;
      bool sameTimes = true;
      if (written) {
        SimulationResult run = simulate(problem, parsed.schedule);
        sameTimes =
            run.valid && std::abs(run.seconds - *written) <= 1e-9 * *written;
      }
      if (!sameBudget || !sameTimes) {
        parsed.lowerBoundSeconds = -1;
        parsed.lowerBoundCoversOffloading = true;
      }
    }
  } catch (const SchemaError &schemaError) {
    error = "plan " + std::string(origin) + ": " + schemaError.what();
    return false;
  }
  plan = std::move(parsed);
  return true;
}
