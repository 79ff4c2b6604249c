//===- lethe-mem.cpp - Inspect a training step's memory schedule ----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
//   lethe-mem FILE [--format summary|table|json|chrome|html] [-o OUT]
//             [--measured TRACE.json] [--func NAME] [--profile NAME]
//             [--budget BUDGET] [--problem PROBLEM.json]
//
// FILE is lethe IR, planned or not (the function's schedule is what it runs:
// a materialized plan, the steps of its lethe.plan, or every op once), or a
// plan file with --problem, the problem it was made for (--lethe-plan-memory
// plan-out= and problem-out=). The timeline is the planner's simulation of
// that schedule (lethe/Planning/Timeline.h); docs/MemoryTimeline.md
// describes the forms and the JSON schema. Errors are one line and leave no
// output file.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/Transforms/Attributes.h"
#include "lethe/Dialect/Lethe/Transforms/PlanningProblem.h"
#include "lethe/InitAllDialects.h"
#include "lethe/Planning/Timeline.h"
#include "lethe/Tools/CommandLine.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <optional>
#include <string>

using namespace mlir;
using namespace mlir::lethe;
namespace cl = llvm::cl;

namespace {

/// The HTML page (tools/lethe-mem/timeline.html), built in.
const char kTimelineHtml[] =
#include "TimelineHtml.inc"
    ;

cl::OptionCategory memCategory("lethe-mem options");

cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                               cl::desc("<lethe IR or plan JSON>"),
                               cl::cat(memCategory));
cl::opt<std::string> format("format", cl::init("summary"),
                            cl::desc("summary, table, json, chrome or html"),
                            cl::cat(memCategory));
cl::opt<std::string> outputPath("o", cl::init("-"),
                                cl::desc("Output file (default: stdout)"),
                                cl::value_desc("file"), cl::cat(memCategory));
cl::opt<std::string>
    measuredPath("measured",
                 cl::desc("A measured timeline to draw over the predicted one "
                          "(html only)"),
                 cl::value_desc("file"), cl::cat(memCategory));
cl::opt<std::string>
    functionName("func",
                 cl::desc("The function (default: the planned one, the only "
                          "one, or train_step)"),
                 cl::value_desc("name"), cl::cat(memCategory));
cl::opt<std::string>
    profileName("profile", cl::init("h100"),
                cl::desc("Device profile for an unplanned function's times "
                         "(a planned one uses its plan's)"),
                cl::value_desc("name"), cl::cat(memCategory));
cl::opt<std::string>
    budgetText("budget",
               cl::desc("A budget to show an unplanned function against: "
                        "bytes (6GiB) or a fraction of its peak (0.8)"),
               cl::value_desc("budget"), cl::cat(memCategory));
cl::opt<std::string>
    problemPath("problem",
                cl::desc("The planning problem a plan file was made for"),
                cl::value_desc("file"), cl::cat(memCategory));

/// Prints "lethe-mem: error: MESSAGE" and returns the failure exit code.
int fail(const llvm::Twine &message) {
  llvm::errs() << "lethe-mem: error: " << message << "\n";
  return 1;
}

/// The contents of `path`, or none after an error naming it.
std::optional<std::string> readFile(StringRef path, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (!buffer) {
    error = "cannot read " + path.str() + ": " + buffer.getError().message();
    return std::nullopt;
  }
  return (*buffer)->getBuffer().str();
}

/// What the timeline is built from.
struct Source {
  planning::PlanningProblem problem;
  planning::Schedule schedule;
  planning::TimelineInfo info;
};

/// The "format" a JSON document names (a Lethe file says which it is), or
/// empty.
std::string getJsonFormat(StringRef text) {
  llvm::SmallVector<StringRef> match;
  if (!llvm::Regex(R"re("format"[[:space:]]*:[[:space:]]*"([^"]*)")re")
           .match(text, &match))
    return "";
  return match[1].str();
}

/// A plan file and its problem file.
bool loadPlanFile(StringRef text, Source &source, std::string &error) {
  if (problemPath.empty()) {
    std::string format = getJsonFormat(text);
    if (format == "lethe-problem")
      error = inputPath +
              " is a planning problem, which holds no schedule; "
              "give a plan file and this with --problem " +
              inputPath + ", or the .mlir step";
    else if (format.empty() || format == "lethe-plan")
      error = inputPath + " is a plan file, which holds no graph; give the "
                          "problem it was made for with --problem FILE "
                          "(--lethe-plan-memory problem-out=)";
    else
      error = inputPath + " is a '" + format +
              "' file, not a training step: give a .mlir step, or a plan "
              "file with --problem FILE";
    return false;
  }
  std::optional<std::string> problemText = readFile(problemPath, error);
  if (!problemText)
    return false;
  if (!planning::parseProblemJson(*problemText, problemPath, source.problem,
                                  error))
    return false;
  planning::Plan plan;
  if (!planning::parsePlanJson(text.str(), inputPath, source.problem, plan,
                               error))
    return false;
  source.schedule = std::move(plan.schedule);
  source.info.function = "plan";
  source.info.strategy = plan.strategy;
  source.info.budgetBytes = source.problem.budgetBytes;
  source.info.lowerBoundSeconds = plan.lowerBoundSeconds;
  source.info.lowerBoundRecomputeOnly = !plan.lowerBoundCoversOffloading;
  return true;
}

/// The function to show: --func, the planned one, the only one, or
/// train_step.
func::FuncOp pickFunction(ModuleOp module, std::string &error) {
  SmallVector<func::FuncOp> functions;
  for (auto function : module.getOps<func::FuncOp>())
    if (!function.isExternal())
      functions.push_back(function);
  std::string names;
  for (func::FuncOp function : functions)
    names += (names.empty() ? "@" : ", @") + function.getName().str();
  if (!functionName.empty()) {
    for (func::FuncOp function : functions)
      if (function.getName() == functionName)
        return function;
    error = "no function @" + functionName + " in " + inputPath +
            (names.empty() ? " (it has none)" : "; it has " + names);
    return nullptr;
  }
  SmallVector<func::FuncOp> planned;
  for (func::FuncOp function : functions)
    if (function->hasAttr(kPlanAttr))
      planned.push_back(function);
  if (planned.size() == 1)
    return planned.front();
  if (functions.size() == 1)
    return functions.front();
  for (func::FuncOp function : functions)
    if (function.getName() == "train_step")
      return function;
  error = functions.empty() ? "no function with a body in " + inputPath +
                                  "; give the IR of a step (lethe-translate "
                                  "--import-onnx, then lethe-opt "
                                  "--lethe-training-pipeline)"
                            : "more than one function in " + inputPath + " (" +
                                  names + "); pick one with --func";
  return nullptr;
}

/// Lethe IR: the picked function's problem and the schedule it runs.
/// Diagnostics of the IR are printed by the caller's handler.
LogicalResult loadFunction(ModuleOp module, Source &source,
                           std::string &error) {
  func::FuncOp function = pickFunction(module, error);
  if (!function)
    return failure();
  source.info.function = function.getName().str();
  if (auto arena = function->getAttrOfType<DictionaryAttr>(kArenaAttr)) {
    if (auto alignment = arena.getAs<IntegerAttr>("alignment"))
      source.info.alignment = std::max<int64_t>(alignment.getInt(), 1);
    auto size = arena.getAs<IntegerAttr>("size");
    auto peak = arena.getAs<IntegerAttr>("liveness_peak");
    if (size && peak) {
      source.info.arenaBytes = size.getInt();
      source.info.livenessPeakBytes = peak.getInt();
    }
  }

  auto plan = function->getAttrOfType<DictionaryAttr>(kPlanAttr);
  if (!plan) {
    planning::DeviceProfile profile;
    if (!planning::loadDeviceProfile(profileName, profile, error))
      return failure();
    FailureOr<FunctionPlanningProblem> extracted =
        extractPlanningProblem(function, profile, 0);
    if (failed(extracted))
      return failure();
    source.problem = std::move(extracted->problem);
    source.schedule = std::move(extracted->schedule);
    source.info.profile = profileName;
    if (!budgetText.empty()) {
      planning::SimulationResult unplanned = planning::simulate(
          source.problem,
          planning::makeUnplannedSchedule(source.problem.graph));
      FailureOr<int64_t> budget =
          parseBudget(budgetText, unplanned.peakBytes, error);
      if (failed(budget))
        return failure();
      source.info.budgetBytes = *budget;
    }
    return success();
  }
  if (!budgetText.empty()) {
    error = "@" + source.info.function +
            " is planned for its own budget; --budget is for unplanned "
            "functions";
    return failure();
  }
  FailureOr<PlannedFunction> planned =
      readPlannedFunction(function, "lethe-mem");
  if (failed(planned))
    return failure();
  source.problem = std::move(planned->extracted.problem);
  source.schedule = std::move(planned->extracted.schedule);
  // A plan not materialized yet: its steps are the schedule.
  if (plan.get("steps")) {
    FailureOr<planning::Schedule> steps =
        readPlanSteps(function, plan, source.problem.graph, "lethe-mem");
    if (failed(steps))
      return failure();
    source.schedule = std::move(*steps);
    // An arena laid out before the plan materialized is not this
    // schedule's: lay the schedule out instead.
    source.info.arenaBytes = source.info.livenessPeakBytes = -1;
  }
  source.info.profile = plan.getAs<StringAttr>("profile").str();
  source.info.budgetBytes = source.problem.budgetBytes;
  if (auto strategy = plan.getAs<StringAttr>("strategy"))
    source.info.strategy = strategy.str();
  else
    source.info.strategy = "a plan";
  planning::Plan bound;
  readPlanLowerBound(plan, bound);
  source.info.lowerBoundSeconds = bound.lowerBoundSeconds;
  source.info.lowerBoundRecomputeOnly = !bound.lowerBoundCoversOffloading;
  // The bound is in the times the plan was made with (measured ones,
  // perhaps), as are the plan's own figures; the timeline is the profile's.
  if (auto seconds = plan.getAs<FloatAttr>("seconds"))
    source.info.plannedSeconds = seconds.getValueAsDouble();
  if (auto unplanned = plan.getAs<FloatAttr>("unplanned_seconds"))
    source.info.plannedUnplannedSeconds = unplanned.getValueAsDouble();
  return success();
}

/// `document` as a JavaScript expression inside a <script> element. JSON
/// is one; a "<" can only stand in a string, where "\u003c" means the same
/// and no "</script" or "<!--" can end or confuse the element.
std::string escapeForScript(StringRef document) {
  std::string escaped;
  escaped.reserve(document.size());
  for (char c : document) {
    if (c == '<')
      escaped += "\\u003c";
    else
      escaped += c;
  }
  return escaped;
}

/// The HTML page with the timeline, and the measured one or null, in it.
/// Both placeholders are found before either is filled, so that a document
/// that happens to hold the other's text is not filled into.
std::string renderHtml(StringRef timeline, StringRef measured) {
  std::string page = kTimelineHtml;
  static constexpr StringLiteral kTimeline = "/*LETHE-TIMELINE*/null";
  static constexpr StringLiteral kMeasured = "/*LETHE-MEASURED*/null";
  size_t timelineAt = page.find(kTimeline.str());
  size_t measuredAt = page.find(kMeasured.str());
  assert(timelineAt != std::string::npos && measuredAt != std::string::npos &&
         timelineAt < measuredAt && "timeline.html lost a placeholder");
  page.replace(measuredAt, kMeasured.size(),
               measured.empty() ? "null" : escapeForScript(measured));
  page.replace(timelineAt, kTimeline.size(), escapeForScript(timeline));
  return page;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(memCategory);
  ::lethe::tools::installFatalErrorHandler(argv[0]);
  if (!::lethe::tools::parseCommandLine(
          argc, argv,
          "Lethe memory inspector: where a training step's device memory "
          "goes\n"))
    return 1;

  static const char *const kFormats[] = {"summary", "table", "json", "chrome",
                                         "html"};
  if (llvm::none_of(kFormats,
                    [](const char *known) { return format == known; }))
    return fail("unknown --format '" + format +
                "'; expected summary, table, json, chrome or html");
  if (!measuredPath.empty() && format != "html")
    return fail("--measured draws over the HTML timeline; add --format html");

  std::string error;
  std::optional<std::string> text = readFile(inputPath, error);
  if (!text)
    return fail(error);
  std::string measured;
  if (!measuredPath.empty()) {
    std::optional<std::string> measuredText = readFile(measuredPath, error);
    if (!measuredText)
      return fail(error);
    if (!planning::checkTimelineJson(*measuredText, measuredPath, error))
      return fail(error);
    measured = std::move(*measuredText);
  }

  Source source;
  // JSON (an object, or anything else that is not IR) is a plan file.
  StringRef trimmed = StringRef(*text).ltrim();
  bool isPlanFile = trimmed.starts_with("{") || trimmed.starts_with("[");
  if (isPlanFile) {
    if (!loadPlanFile(*text, source, error))
      return fail(error);
  } else {
    DialectRegistry registry;
    registerAllDialects(registry);
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(*text, inputPath), llvm::SMLoc());
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    OwningOpRef<ModuleOp> module =
        parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return 1;
    if (failed(loadFunction(*module, source, error)))
      return error.empty() ? 1 : fail(error);
  }

  planning::MemoryTimeline timeline;
  if (!planning::buildTimeline(source.problem, source.schedule, source.info,
                               timeline, error))
    return fail(isPlanFile ? "plan " + inputPath + ": " + error +
                                 "; plan again and write it with plan-out="
                           : error);
  std::string output;
  if (format == "summary")
    output = planning::writeTimelineSummary(source.problem, timeline);
  else if (format == "table")
    output = planning::writeTimelineTable(source.problem, timeline);
  else if (format == "json")
    output = planning::writeTimelineJson(source.problem, timeline);
  else if (format == "chrome")
    output = planning::writeChromeTrace(source.problem, timeline);
  else
    output = renderHtml(planning::writeTimelineJson(source.problem, timeline),
                        measured);

  std::unique_ptr<llvm::ToolOutputFile> file =
      openOutputFile(outputPath, &error);
  if (!file)
    return fail(error);
  file->os() << output;
  file->os().flush(); // not close(): "-" is stdout
  if (file->os().has_error()) {
    std::string why = file->os().error().message();
    file->os().clear_error();
    return fail("cannot write '" + outputPath + "': " + why);
  }
  file->keep();
  return 0;
}
