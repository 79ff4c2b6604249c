//===- Timeline.cpp - A schedule's memory timeline, for people ------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The timeline is one replay of the schedule (ScheduleReplay.h, the one the
// simulator and the arena layout share), so its numbers are the planner's:
// the peak is simulate()'s, the tensors are the arena's buffers. The memory
// curve holds a step's live bytes from the time the compute stream issues
// it to the time it issues the next step.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/Timeline.h"
#include "lethe/Planning/Strategies.h"

#include "JsonUtils.h"
#include "ScheduleReplay.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>

using namespace lethe::planning;
using json_utils::json;

namespace {

using ordered_json = nlohmann::ordered_json;

/// The JSON names of the value kinds, in ValueKind order, as
/// categories_at_peak spells them.
const char *const kCategoryNames[kNumValueKinds] = {
    "input",      "parameter", "optimizer_state",
    "activation", "gradient",  "temporary"};

/// Seconds for people: "12.30 us", "1.234 ms", "2.500 s".
std::string shortSeconds(double seconds) {
  char buffer[48];
  if (seconds < 1e-3)
    std::snprintf(buffer, sizeof(buffer), "%.2f us", seconds * 1e6);
  else if (seconds < 1)
    std::snprintf(buffer, sizeof(buffer), "%.3f ms", seconds * 1e3);
  else
    std::snprintf(buffer, sizeof(buffer), "%.3f s", seconds);
  return buffer;
}

/// `part` as a percentage of `whole`: "12.5%".
std::string percent(double part, double whole) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f%%",
                whole > 0 ? 100 * part / whole : 0.0);
  return buffer;
}

/// What a step is called in tables and traces: the op of a compute, the
/// kind and value name of a memory step.
std::string describeStep(const PlanningProblem &problem,
                         const TimelineStep &step) {
  const TrainingGraph &graph = problem.graph;
  if (step.step.kind == StepKind::Compute)
    return graph.nodes[step.step.id].name;
  return std::string(stringifyStepKind(step.step.kind)) + " " +
         graph.values[step.step.id].name;
}

/// The kind column of the JSON and the table: a compute is a "recompute"
/// when its node ran before.
const char *stepKindName(const TimelineStep &step) {
  if (step.step.kind == StepKind::Compute && step.recompute)
    return "recompute";
  return stringifyStepKind(step.step.kind);
}

} // namespace

const char *lethe::planning::stringifyStream(Stream stream) {
  switch (stream) {
  case Stream::Compute:
    return "compute";
  case Stream::DeviceToHost:
    return "d2h";
  case Stream::HostToDevice:
    return "h2d";
  }
  return "compute";
}

const char *lethe::planning::stringifyTensorOrigin(TensorOrigin origin) {
  switch (origin) {
  case TensorOrigin::Input:
    return "input";
  case TensorOrigin::Compute:
    return "compute";
  case TensorOrigin::Recompute:
    return "recompute";
  case TensorOrigin::Prefetch:
    return "prefetch";
  }
  return "compute";
}

bool lethe::planning::buildTimeline(const PlanningProblem &problem,
                                    const Schedule &schedule,
                                    const TimelineInfo &info,
                                    MemoryTimeline &timeline,
                                    std::string &error) {
  const TrainingGraph &graph = problem.graph;
  timeline = MemoryTimeline();
  timeline.info = info;
  timeline.simulation = simulate(problem, schedule);
  if (!timeline.simulation.valid) {
    error = "the schedule does not run: " + timeline.simulation.error;
    return false;
  }
  SimulationResult unplanned =
      simulate(problem, makeUnplannedSchedule(problem.graph));
  if (!unplanned.valid) {
    error = "the unplanned step does not run: " + unplanned.error;
    return false;
  }
  timeline.unplannedPeakBytes = unplanned.peakBytes;
  timeline.unplannedSeconds = unplanned.seconds;

  detail::ScheduleReplay replay =
      detail::replaySchedule(problem, schedule, /*withTimings=*/true);
  int64_t numSteps = static_cast<int64_t>(schedule.size());
  std::vector<bool> computed(graph.nodes.size(), false);
  timeline.steps.reserve(schedule.size());
  for (int64_t index = 0; index < numSteps; ++index) {
    const detail::ReplayTiming &timing = replay.timings[index];
    TimelineStep step;
    step.step = schedule[index];
    step.stream = static_cast<Stream>(timing.stream);
    step.issue = timing.issue;
    step.start = timing.start;
    step.end = timing.end;
    step.liveBytes = timeline.simulation.memory[index];
    switch (step.step.kind) {
    case StepKind::Compute:
      step.workspaceBytes = graph.nodes[step.step.id].workspaceBytes;
      step.recompute = computed[step.step.id];
      computed[step.step.id] = true;
      if (step.recompute) {
        ++timeline.recomputes;
        for (int output : graph.nodes[step.step.id].outputs)
          timeline.recomputedBytes += graph.values[output].bytes;
      }
      break;
    case StepKind::Offload:
      ++timeline.offloads;
      break;
    case StepKind::Prefetch:
      ++timeline.prefetches;
      break;
    case StepKind::Release:
      ++timeline.releases;
      break;
    }
    timeline.steps.push_back(step);
  }

  // A step's memory lasts until the next step is issued; the last one's
  // until the compute stream finishes.
  auto issueAfter = [&](int64_t step) {
    return step + 1 < numSteps ? timeline.steps[step + 1].issue
                               : timeline.simulation.seconds;
  };
  timeline.tensors.reserve(replay.versions.size());
  for (const detail::VersionLifetime &version : replay.versions) {
    TimelineTensor tensor;
    tensor.value = version.value;
    tensor.firstStep = version.firstStep;
    tensor.lastStep = version.lastStep;
    const Step *maker =
        version.firstStep < numSteps ? &schedule[version.firstStep] : nullptr;
    bool prefetched = maker && maker->kind == StepKind::Prefetch &&
                      maker->id == version.value;
    if (prefetched)
      tensor.origin = TensorOrigin::Prefetch;
    else if (graph.values[version.value].producer < 0)
      tensor.origin = TensorOrigin::Input;
    else if (timeline.steps[version.firstStep].recompute)
      tensor.origin = TensorOrigin::Recompute;
    else
      tensor.origin = TensorOrigin::Compute;
    tensor.start = tensor.origin == TensorOrigin::Input
                       ? 0
                       : timeline.steps[version.firstStep].issue;
    tensor.end = version.lastStep >= numSteps ? timeline.simulation.seconds
                                              : issueAfter(version.lastStep);
    timeline.tensors.push_back(tensor);
  }

  // What is live at the peak.
  int64_t peakStep = timeline.simulation.peakStep;
  if (peakStep < numSteps)
    timeline.workspaceAtPeak = timeline.steps[peakStep].workspaceBytes;
  std::vector<int> live;
  for (int index = 0; index < static_cast<int>(timeline.tensors.size());
       ++index) {
    const TimelineTensor &tensor = timeline.tensors[index];
    if (tensor.firstStep > peakStep || tensor.lastStep < peakStep)
      continue;
    const GraphValue &value = graph.values[tensor.value];
    timeline.bytesAtPeak[static_cast<int>(value.kind)] += value.bytes;
    live.push_back(index);
  }
  std::stable_sort(live.begin(), live.end(), [&](int a, int b) {
    return graph.values[timeline.tensors[a].value].bytes >
           graph.values[timeline.tensors[b].value].bytes;
  });
  live.resize(std::min<size_t>(live.size(), 10));
  timeline.largestAtPeak = std::move(live);

  if (info.arenaBytes >= 0 && info.livenessPeakBytes >= 0) {
    timeline.livenessPeakBytes = info.livenessPeakBytes;
    timeline.arenaBytes = info.arenaBytes;
    return true;
  }
  ScheduleBuffers buffers = getScheduleBuffers(problem, schedule);
  ArenaLayout layout = layOutArena(buffers.device, info.alignment);
  timeline.livenessPeakBytes = layout.peakBytes;
  timeline.arenaBytes = layout.arenaBytes;
  return true;
}

//===----------------------------------------------------------------------===//
// Summary and table
//===----------------------------------------------------------------------===//

std::string lethe::planning::formatLowerBound(const MemoryTimeline &timeline) {
  const TimelineInfo &info = timeline.info;
  double bound = info.lowerBoundSeconds;
  double seconds = info.plannedSeconds >= 0 ? info.plannedSeconds
                                            : timeline.simulation.seconds;
  double unplanned = info.plannedUnplannedSeconds >= 0
                         ? info.plannedUnplannedSeconds
                         : timeline.unplannedSeconds;
  std::string text = "lower bound: ";
  char number[128];
  if (unplanned > 0) {
    std::snprintf(number, sizeof(number), "%.3fx the unplanned step time",
                  bound / unplanned);
    text += number;
  } else {
    text += shortSeconds(bound);
  }
  text += info.lowerBoundRecomputeOnly ? ", on any plan that only recomputes"
                                       : ", on any plan within the budget";
  if (info.lowerBoundRecomputeOnly && timeline.offloads > 0)
    return text + " (this plan offloads)";
  if (bound <= 0)
    return text;
  // The bound is the plan's own time where the strategy proved it optimal
  // (up to the rounding of a solver's objective). A plan faster than its
  // bound can only come from a hand-written file.
  if (seconds < bound * (1 - 1e-9)) {
    std::snprintf(number, sizeof(number),
                  "; this plan is %.2f%% below it: the bound is not for "
                  "its budget and times",
                  100 * (1 - seconds / bound));
    return text + number;
  }
  if (seconds <= bound * (1 + 1e-9))
    return text + std::string("; this plan meets it (optimal") +
           (info.lowerBoundRecomputeOnly ? " among them)" : ")");
  std::snprintf(number, sizeof(number), "; this plan is %.2f%% above it",
                100 * (seconds / bound - 1));
  return text + number;
}

std::string
lethe::planning::writeTimelineSummary(const PlanningProblem &problem,
                                      const MemoryTimeline &timeline) {
  const TrainingGraph &graph = problem.graph;
  const SimulationResult &simulation = timeline.simulation;
  const TimelineInfo &info = timeline.info;
  std::string out;
  auto line = [&](const std::string &text) { out += text + "\n"; };

  std::string header = "@" + info.function + ": ";
  if (info.strategy.empty())
    header += "unplanned";
  else
    header += "planned with " + info.strategy;
  if (info.budgetBytes >= 0)
    header += " for a budget of " + formatBytesShort(info.budgetBytes);
  header += info.profile.empty()
                ? ", times from the problem file"
                : ", times from the " + info.profile + " profile";
  line(header);

  // Where the peak is.
  int64_t peakStep = simulation.peakStep;
  std::string where = "the end of the step";
  if (peakStep < static_cast<int64_t>(timeline.steps.size())) {
    const TimelineStep &step = timeline.steps[peakStep];
    where = "step " + std::to_string(peakStep) + " (" +
            describeStep(problem, step) + ", at " + shortSeconds(step.issue) +
            ")";
  }
  std::string peak = "peak: " + formatBytesShort(simulation.peakBytes) + " (" +
                     std::to_string(simulation.peakBytes) + " bytes) at " +
                     where;
  if (info.budgetBytes > 0)
    peak += ", " +
            percent(static_cast<double>(simulation.peakBytes),
                    static_cast<double>(info.budgetBytes)) +
            " of the budget";
  if (!info.strategy.empty())
    peak += "; unplanned " + formatBytesShort(timeline.unplannedPeakBytes);
  line(peak);
  if (info.budgetBytes >= 0 && simulation.peakBytes > info.budgetBytes)
    line("over the budget by " +
         formatBytesShort(simulation.peakBytes - info.budgetBytes) +
         (info.strategy.empty()
              ? ": plan the step for it with --lethe-plan-memory=\"budget=" +
                    std::to_string(info.budgetBytes) + "\""
              : ""));
  auto category = [&](const char *name, int64_t bytes) {
    char row[128];
    std::snprintf(row, sizeof(row), "  %-16s %12s  %6s", name,
                  formatBytesShort(bytes).c_str(),
                  percent(static_cast<double>(bytes),
                          static_cast<double>(simulation.peakBytes))
                      .c_str());
    line(row);
  };
  const int order[] = {1, 2, 3, 4, 0, 5};
  for (int kind : order)
    category(kCategoryNames[kind], timeline.bytesAtPeak[kind]);
  category("workspace", timeline.workspaceAtPeak);

  line("largest tensors live at the peak:");
  for (size_t rank = 0; rank < timeline.largestAtPeak.size(); ++rank) {
    const TimelineTensor &tensor =
        timeline.tensors[timeline.largestAtPeak[rank]];
    const GraphValue &value = graph.values[tensor.value];
    std::string maker = value.producer >= 0 ? graph.nodes[value.producer].name
                                            : std::string("argument");
    char row[256];
    std::snprintf(row, sizeof(row), "  %2zu. %12s  %-15s %s (%s, %s)", rank + 1,
                  formatBytesShort(value.bytes).c_str(),
                  stringifyValueKind(value.kind), value.name.c_str(),
                  maker.c_str(), stringifyTensorOrigin(tensor.origin));
    line(row);
  }

  line("recomputes: " + std::to_string(timeline.recomputes) + " ops (" +
       formatBytesShort(timeline.recomputedBytes) + ", " +
       shortSeconds(simulation.recomputeSeconds) + ")");
  line("swaps: " + std::to_string(timeline.offloads) + " offloads (" +
       formatBytesShort(simulation.offloadedBytes) + "), " +
       std::to_string(timeline.prefetches) + " prefetches (" +
       formatBytesShort(simulation.prefetchedBytes) + "), " +
       std::to_string(timeline.releases) + " releases; host peak " +
       formatBytesShort(simulation.hostPeakBytes) + "; stalls " +
       shortSeconds(simulation.stallSeconds));
  double overhead = timeline.unplannedSeconds > 0
                        ? simulation.seconds / timeline.unplannedSeconds - 1
                        : 0;
  char time[160];
  std::snprintf(
      time, sizeof(time), "step time: %s against %s unplanned (%+.1f%%)",
      shortSeconds(simulation.seconds).c_str(),
      shortSeconds(timeline.unplannedSeconds).c_str(), 100 * overhead);
  line(time);
  if (info.lowerBoundSeconds >= 0)
    line(formatLowerBound(timeline));
  line("arena: " + formatBytesShort(timeline.arenaBytes) +
       " against a liveness peak of " +
       formatBytesShort(timeline.livenessPeakBytes) + " (" +
       percent(static_cast<double>(timeline.arenaBytes -
                                   timeline.livenessPeakBytes),
               static_cast<double>(timeline.livenessPeakBytes)) +
       " above; sizes rounded to " + std::to_string(info.alignment) +
       " bytes)");
  return out;
}

std::string
lethe::planning::writeTimelineTable(const PlanningProblem &problem,
                                    const MemoryTimeline &timeline) {
  const TrainingGraph &graph = problem.graph;
  size_t numSteps = timeline.steps.size();
  // Copies end asynchronously: list each under the step during which the
  // compute stream reaches its end.
  std::vector<std::string> events(numSteps);
  for (size_t index = 0; index < numSteps; ++index) {
    const TimelineStep &step = timeline.steps[index];
    if (step.stream == Stream::Compute)
      continue;
    size_t at = index;
    while (at + 1 < numSteps && timeline.steps[at + 1].issue <= step.end)
      ++at;
    std::string &text = events[at];
    text += text.empty() ? "" : ", ";
    text += std::string(step.step.kind == StepKind::Offload ? "offload"
                                                            : "prefetch") +
            " of " + graph.values[step.step.id].name + " done";
  }

  std::string out;
  char row[512];
  std::snprintf(row, sizeof(row), "%6s %12s %-8s %-10s %-32s %14s  %s\n",
                "step", "issue", "stream", "kind", "op or value", "live bytes",
                "events");
  out += row;
  for (size_t index = 0; index < numSteps; ++index) {
    const TimelineStep &step = timeline.steps[index];
    std::string what = step.step.kind == StepKind::Compute
                           ? graph.nodes[step.step.id].name
                           : graph.values[step.step.id].name;
    std::string notes;
    auto note = [&](const std::string &text) {
      notes += notes.empty() ? text : ", " + text;
    };
    if (step.recompute)
      note("recompute");
    if (step.step.kind == StepKind::Offload ||
        step.step.kind == StepKind::Prefetch)
      note(std::string(stringifyStepKind(step.step.kind)) + " starts at " +
           shortSeconds(step.start));
    if (step.step.kind == StepKind::Release)
      note("release");
    if (step.workspaceBytes > 0)
      note("workspace " + formatBytesShort(step.workspaceBytes));
    if (step.stream == Stream::Compute && step.start > step.issue)
      note("waits " + shortSeconds(step.start - step.issue));
    if (static_cast<int64_t>(index) == timeline.simulation.peakStep)
      note("peak");
    if (!events[index].empty())
      note(events[index]);
    std::snprintf(
        row, sizeof(row), "%6zu %12s %-8s %-10s %-32s %14" PRId64 "  %s\n",
        index, shortSeconds(step.issue).c_str(), stringifyStream(step.stream),
        stepKindName(step), what.c_str(), step.liveBytes, notes.c_str());
    out += row;
  }
  std::snprintf(row, sizeof(row), "%6s %12s %-8s %-10s %-32s %14" PRId64 "\n",
                "end", shortSeconds(timeline.simulation.seconds).c_str(), "",
                "", "", timeline.simulation.memory.back());
  out += row;
  return out;
}

//===----------------------------------------------------------------------===//
// JSON and Chrome trace
//===----------------------------------------------------------------------===//

std::string lethe::planning::writeTimelineJson(const PlanningProblem &problem,
                                               const MemoryTimeline &timeline) {
  const TrainingGraph &graph = problem.graph;
  const SimulationResult &simulation = timeline.simulation;
  const TimelineInfo &info = timeline.info;
  ordered_json document;
  document["format"] = "lethe-memory-timeline";
  document["version"] = 1;
  document["source"] = "predicted";
  document["function"] = info.function;
  document["profile"] =
      info.profile.empty() ? ordered_json() : ordered_json(info.profile);
  document["strategy"] =
      info.strategy.empty() ? ordered_json() : ordered_json(info.strategy);
  document["budget_bytes"] =
      info.budgetBytes >= 0 ? ordered_json(info.budgetBytes) : ordered_json();
  document["peak_bytes"] = simulation.peakBytes;
  document["peak_step"] = simulation.peakStep;
  document["peak_time"] =
      simulation.peakStep < static_cast<int64_t>(timeline.steps.size())
          ? timeline.steps[simulation.peakStep].issue
          : simulation.seconds;
  document["seconds"] = simulation.seconds;
  document["unplanned_peak_bytes"] = timeline.unplannedPeakBytes;
  document["unplanned_seconds"] = timeline.unplannedSeconds;
  document["liveness_peak_bytes"] = timeline.livenessPeakBytes;
  document["arena_bytes"] = timeline.arenaBytes;
  document["host_peak_bytes"] = simulation.hostPeakBytes;
  ordered_json categories = ordered_json::object();
  for (int kind = 0; kind < kNumValueKinds; ++kind)
    categories[kCategoryNames[kind]] = timeline.bytesAtPeak[kind];
  categories["workspace"] = timeline.workspaceAtPeak;
  document["categories_at_peak"] = categories;
  document["totals"] = {{"recomputes", timeline.recomputes},
                        {"recompute_seconds", simulation.recomputeSeconds},
                        {"recomputed_bytes", timeline.recomputedBytes},
                        {"offloads", timeline.offloads},
                        {"offloaded_bytes", simulation.offloadedBytes},
                        {"prefetches", timeline.prefetches},
                        {"prefetched_bytes", simulation.prefetchedBytes},
                        {"releases", timeline.releases},
                        {"stall_seconds", simulation.stallSeconds}};
  ordered_json steps = ordered_json::array();
  for (size_t index = 0; index < timeline.steps.size(); ++index) {
    const TimelineStep &step = timeline.steps[index];
    ordered_json entry;
    entry["index"] = index;
    entry["kind"] = stepKindName(step);
    if (step.step.kind == StepKind::Compute) {
      entry["op"] = graph.nodes[step.step.id].name;
      entry["node"] = step.step.id;
    } else {
      entry["value"] = step.step.id;
      entry["name"] = graph.values[step.step.id].name;
    }
    entry["stream"] = stringifyStream(step.stream);
    entry["issue"] = step.issue;
    entry["start"] = step.start;
    entry["end"] = step.end;
    entry["live_bytes"] = step.liveBytes;
    if (step.step.kind == StepKind::Compute)
      entry["workspace_bytes"] = step.workspaceBytes;
    steps.push_back(std::move(entry));
  }
  document["steps"] = std::move(steps);
  ordered_json tensors = ordered_json::array();
  for (const TimelineTensor &tensor : timeline.tensors) {
    const GraphValue &value = graph.values[tensor.value];
    tensors.push_back(
        {{"value", tensor.value},
         {"name", value.name},
         {"category", kCategoryNames[static_cast<int>(value.kind)]},
         {"bytes", value.bytes},
         {"producer", value.producer >= 0
                          ? ordered_json(graph.nodes[value.producer].name)
                          : ordered_json()},
         {"origin", stringifyTensorOrigin(tensor.origin)},
         {"first_step", tensor.firstStep},
         {"last_step", tensor.lastStep},
         {"start", tensor.start},
         {"end", tensor.end}});
  }
  document["tensors"] = std::move(tensors);
  document["largest_at_peak"] = timeline.largestAtPeak;
  return document.dump(1) + "\n";
}

std::string lethe::planning::writeChromeTrace(const PlanningProblem &problem,
                                              const MemoryTimeline &timeline) {
  const TrainingGraph &graph = problem.graph;
  constexpr int kProcess = 1;
  // Microseconds, the unit of the format.
  auto micro = [](double seconds) { return seconds * 1e6; };
  ordered_json events = ordered_json::array();
  auto metadata = [&](const char *name, int thread, ordered_json args) {
    ordered_json event = {{"name", name}, {"ph", "M"}, {"pid", kProcess}};
    if (thread > 0)
      event["tid"] = thread;
    event["args"] = std::move(args);
    events.push_back(std::move(event));
  };
  metadata("process_name", 0, {{"name", "lethe @" + timeline.info.function}});
  const char *const threads[] = {"compute", "copy device-to-host",
                                 "copy host-to-device"};
  for (int thread = 1; thread <= 3; ++thread) {
    metadata("thread_name", thread, {{"name", threads[thread - 1]}});
    metadata("thread_sort_index", thread, {{"sort_index", thread}});
  }

  int64_t hostBytes = 0;
  std::vector<bool> onHost(graph.values.size(), false);
  auto counter = [&](double time, int64_t device) {
    events.push_back({{"name", "memory"},
                      {"ph", "C"},
                      {"pid", kProcess},
                      {"ts", micro(time)},
                      {"args", {{"device", device}, {"host", hostBytes}}}});
  };
  for (size_t index = 0; index < timeline.steps.size(); ++index) {
    const TimelineStep &step = timeline.steps[index];
    int thread = static_cast<int>(step.stream) + 1;
    ordered_json args = {{"step", index}, {"live_bytes", step.liveBytes}};
    if (step.step.kind == StepKind::Compute) {
      args["node"] = step.step.id;
    } else {
      args["value"] = step.step.id;
      args["bytes"] = graph.values[step.step.id].bytes;
    }
    if (step.step.kind == StepKind::Offload && !onHost[step.step.id]) {
      onHost[step.step.id] = true;
      hostBytes += graph.values[step.step.id].bytes;
    }
    counter(step.issue, step.liveBytes);
    std::string name = step.recompute
                           ? "recompute " + describeStep(problem, step)
                           : describeStep(problem, step);
    if (step.step.kind == StepKind::Release) {
      events.push_back({{"name", name},
                        {"cat", "release"},
                        {"ph", "i"},
                        {"s", "t"},
                        {"pid", kProcess},
                        {"tid", thread},
                        {"ts", micro(step.start)},
                        {"args", std::move(args)}});
      continue;
    }
    events.push_back({{"name", name},
                      {"cat", stepKindName(step)},
                      {"ph", "X"},
                      {"pid", kProcess},
                      {"tid", thread},
                      {"ts", micro(step.start)},
                      {"dur", micro(std::max(0.0, step.end - step.start))},
                      {"args", std::move(args)}});
  }
  counter(timeline.simulation.seconds, timeline.simulation.memory.back());
  ordered_json document = {{"traceEvents", std::move(events)},
                           {"displayTimeUnit", "ms"}};
  return document.dump() + "\n";
}

bool lethe::planning::checkTimelineJson(std::string_view text,
                                        std::string_view origin,
                                        std::string &error) {
  using namespace json_utils;
  try {
    json document = parseDocument(text);
    if (!document.is_object())
      throw SchemaError("expected a JSON object");
    std::string format =
        getString(getMember(document, "format", "the timeline"), "'format'");
    if (format != "lethe-memory-timeline")
      throw SchemaError("'format' is '" + format +
                        "', not 'lethe-memory-timeline'");
    int64_t version = getInteger(getMember(document, "version", "the timeline"),
                                 "'version'", 0, 1 << 30);
    if (version != 1)
      throw SchemaError("version " + std::to_string(version) +
                        " is not the version this Lethe reads (1)");
    // What the page draws: the summary's peak and time, and the memory
    // curve, each step's live bytes from its issue (which the page searches
    // by time, so issues must not go back).
    getInteger(getMember(document, "peak_bytes", "the timeline"),
               "'peak_bytes'", 0, INT64_MAX);
    getNonNegative(getMember(document, "seconds", "the timeline"), "'seconds'");
    const json &steps = getMember(document, "steps", "the timeline");
    if (!steps.is_array())
      throw SchemaError("'steps' must be an array");
    double lastIssue = 0;
    for (size_t index = 0; index < steps.size(); ++index) {
      std::string where = "steps[" + std::to_string(index) + "]";
      if (!steps[index].is_object())
        throw SchemaError(where + " must be an object");
      double issue = getNonNegative(getMember(steps[index], "issue", where),
                                    where + ".issue");
      if (issue < lastIssue)
        throw SchemaError(where + ".issue goes back in time, to " +
                          shortSeconds(issue) + " after " +
                          shortSeconds(lastIssue));
      lastIssue = issue;
      getInteger(getMember(steps[index], "live_bytes", where),
                 where + ".live_bytes", 0, INT64_MAX);
      // What its tooltip says of it.
      std::string kind =
          getString(getMember(steps[index], "kind", where), where + ".kind");
      if (kind != "compute" && kind != "recompute" && kind != "offload" &&
          kind != "prefetch" && kind != "release")
        throw SchemaError(where +
                          ".kind must be compute, recompute, offload, "
                          "prefetch or release, got '" +
                          kind + "'");
      double start = getNonNegative(getMember(steps[index], "start", where),
                                    where + ".start");
      double end =
          getNonNegative(getMember(steps[index], "end", where), where + ".end");
      if (end < start)
        throw SchemaError(where + " ends before it starts");
    }
  } catch (const SchemaError &schemaError) {
    error = std::string(origin) + ": " + schemaError.what();
    return false;
  }
  return true;
}
