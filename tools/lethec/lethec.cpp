//===- lethec.cpp - Compile a model into a planned training executable ----===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
//   lethec MODEL.onnx|MODEL.onnxtxt|MODEL.mlir
//          [--loss "output=logits kind=..."]
//          [--optimizer "kind=adam lr=0.01"] [--budget 6GiB|0.5]
//          [--strategy auto] [--profile h100] [--time-limit 60]
//          [--measured PROFILE.json] [--target cpu|cuda]
//          [--input-shape NAME=D0xD1x...] [--save-temps] -o NAME
//
// Import, training step (loss, autodiff, optimizer), memory plan
// (plan, materialize, verify), static arena, lowering to runtime calls
// (--convert-lethe-to-runtime) and LLVM IR, object code emitted in-process
// by the host's TargetMachine, and a link with the executable's driver and
// the runtime backend of --target (cpu, or cuda where lethec was built with
// LETHE_ENABLE_CUDA): NAME, with its weights in NAME.weights. A step that
// calls an entry point the backend does not define (yet) is refused, naming
// them, before it is planned. The plan is for --profile's device (h100 by
// default, whatever the target). --loss and --optimizer take the option
// strings of --lethe-add-loss and --lethe-add-optimizer, --budget and
// --strategy the values of --lethe-plan-memory; --measured plans with the op
// times an executable of the same step measured (its --profile), and the
// workspace its ops asked for;
// `--optimizer none` and `--budget none` are the same as leaving them out.
// --input-shape fixes an ONNX input's free dimensions (a dynamic batch);
// ONNX models are binary (.onnx) or in ONNX's text format (.onnxtxt). A
// .mlir input that already is a training step (a result marked lethe.loss)
// skips the loss, autodiff and optimizer.
// --save-temps keeps every stage: NAME.import.mlir, NAME.train.mlir,
// NAME.planned.mlir, NAME.llvm.mlir, NAME.ll, NAME.o and NAME.manifest.json.
// Errors are one line, exit 1, and leave no output files.
//
//===----------------------------------------------------------------------===//

#include "LethecConfig.h"
#include "LethecEntryPointsCpu.h"
#if LETHEC_HAVE_CUDA
#include "LethecEntryPointsCuda.h"
#endif

#include "DType.h"
#include "WeightsFile.h"
#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "lethe/Dialect/Lethe/Transforms/Attributes.h"
#include "lethe/Dialect/Lethe/Transforms/PlanningProblem.h"
#include "lethe/InitAllDialects.h"
#include "lethe/InitAllPasses.h"
#include "lethe/Interpreter/Interpreter.h"
#include "lethe/Interpreter/TrainingLoop.h"
#include "lethe/Planning/MeasuredProfile.h"
#include "lethe/Planning/Strategies.h"
#include "lethe/Planning/Timeline.h"
#include "lethe/Target/ONNX/ImportONNX.h"
#include "lethe/Tools/CommandLine.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/ModuleToObject.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

using namespace mlir;
using namespace mlir::lethe;
namespace cl = llvm::cl;
namespace planning = ::lethe::planning;

namespace {

cl::OptionCategory lethecCategory("lethec options");

// Neither is cl::Required, whose messages take two or three lines: main
// says what is missing in one.
cl::opt<std::string>
    inputPath(cl::Positional,
              cl::desc("<MODEL.onnx, MODEL.onnxtxt or MODEL.mlir>"),
              cl::cat(lethecCategory));
cl::opt<std::string> outputName("o", cl::desc("The executable to write"),
                                cl::value_desc("NAME"),
                                cl::cat(lethecCategory));
cl::opt<std::string>
    lossOption("loss",
               cl::desc("The loss, as --lethe-add-loss's options: "
                        "\"output=logits kind=softmax_cross_entropy\""),
               cl::cat(lethecCategory));
cl::opt<std::string>
    optimizerOption("optimizer",
                    cl::desc("The optimizer, as --lethe-add-optimizer's "
                             "options: \"kind=adam lr=0.001\"; none: the "
                             "step computes gradients only"),
                    cl::cat(lethecCategory));
cl::opt<std::string> budgetOption(
    "budget",
    cl::desc("Device memory budget: bytes (6GiB, 500MB) or a fraction of the "
             "unplanned peak (0.5); none: no memory plan"),
    cl::cat(lethecCategory));
cl::opt<std::string> strategyOption("strategy", cl::init("auto"),
                                    cl::desc("The planning strategy"),
                                    cl::cat(lethecCategory));
cl::opt<std::string> profileOption(
    "profile", cl::init("h100"),
    cl::desc("The device profile planned for: h100, h200, a100, v100, cpu or "
             "a profile JSON file (default h100, whatever the target)"),
    cl::cat(lethecCategory));
cl::opt<double> timeLimitOption("time-limit", cl::init(60),
                                cl::desc("Seconds the strategy may spend"),
                                cl::cat(lethecCategory));
cl::opt<std::string> measuredOption(
    "measured",
    cl::desc("Plan with the op times a planned executable of the same step "
             "measured (its --profile JSON) instead of the profile's "
             "roofline, and the workspace its ops asked for"),
    cl::value_desc("PROFILE.json"), cl::cat(lethecCategory));
cl::opt<std::string> targetOption(
    "target", cl::init("cpu"),
    cl::desc("The runtime backend the executable links: cpu (the host), or "
             "cuda (one NVIDIA GPU; where lethec was built with "
             "LETHE_ENABLE_CUDA)"),
    cl::cat(lethecCategory));
cl::list<std::string> inputShapeOption(
    "input-shape",
    cl::desc("Fixes the free dimensions of an ONNX input (a dynamic batch, "
             "say), as lethe-translate's: NAME=D0xD1x... (repeatable)"),
    cl::value_desc("NAME=D0xD1x..."), cl::cat(lethecCategory));
cl::opt<bool> saveTemps("save-temps",
                        cl::desc("Keep every stage's output beside NAME"),
                        cl::cat(lethecCategory));

/// A runtime backend an executable can link (--target).
struct Target {
  StringRef name;
  /// The backend's name in messages.
  StringRef title;
  /// What the executable links after the step's object, in order
  /// (LethecConfig.h).
  ArrayRef<const char *> linkArguments;
  /// The runtime entry points the backend defines (LethecEntryPoints*.h).
  ArrayRef<const char *> entryPoints;
};

/// The backends built with this lethec.
const Target kTargets[] = {
    {"cpu", "CPU", kCpuLinkArguments, kCpuEntryPoints},
#if LETHEC_HAVE_CUDA
    {"cuda", "CUDA", kCudaLinkArguments, kCudaEntryPoints},
#endif
};

/// The backend --target `name` names, or null with a one-line `error`.
const Target *findTarget(StringRef name, std::string &error) {
  for (const Target &target : kTargets)
    if (target.name == name)
      return &target;
  if (name == "cuda")
    error = "--target cuda: this lethec was built without the CUDA backend; "
            "configure Lethe with -DLETHE_ENABLE_CUDA=ON (it needs the CUDA "
            "toolkit, nvcc and cuDNN 9) and rebuild";
  else
    error =
        "unknown --target '" + name.str() + "' (the targets are cpu and cuda)";
  return nullptr;
}

/// Whether `target`'s backend defines every runtime entry point the lowered
/// `module` calls; if not, `error` names the missing ones.
bool checkEntryPoints(ModuleOp module, const Target &target,
                      std::string &error) {
  std::vector<std::string> missing;
  for (auto function : module.getOps<LLVM::LLVMFuncOp>()) {
    StringRef name = function.getName();
    if (function.isExternal() && name.starts_with("lethe_rt_") &&
        llvm::none_of(target.entryPoints,
                      [&](const char *defined) { return name == defined; }))
      missing.push_back(name.str());
  }
  if (missing.empty())
    return true;
  llvm::sort(missing);
  error = "--target " + target.name.str() + ": the " + target.title.str() +
          " backend has no kernel for " + llvm::join(missing, ", ") + " yet" +
          (target.name == "cpu" ? "" : " (use --target cpu)");
  return false;
}

int fail(const llvm::Twine &message) {
  llvm::errs() << "lethec: error: " << message << "\n";
  return 1;
}

/// The files this run writes, removed again when it fails: when it returns
/// an error, and when it stops on a signal or an LLVM fatal or out-of-memory
/// error (which exit without unwinding: each file is registered with
/// RemoveFileOnSignal, whose handlers they run).
struct Outputs {
  std::vector<std::string> paths;
  bool keep = false;
  void add(const std::string &path) {
    paths.push_back(path);
    llvm::sys::RemoveFileOnSignal(path);
  }
  /// Keeps the files: the run succeeded.
  void commit() {
    keep = true;
    for (const std::string &path : paths)
      llvm::sys::DontRemoveFileOnSignal(path);
  }
  ~Outputs() {
    if (keep)
      return;
    for (const std::string &path : paths) {
      llvm::sys::DontRemoveFileOnSignal(path);
      llvm::sys::fs::remove(path);
    }
  }
};

bool writeFile(StringRef path, StringRef contents, Outputs &outputs,
               std::string &error) {
  std::error_code code;
  llvm::raw_fd_ostream os(path, code, llvm::sys::fs::OF_None);
  if (code) {
    error = "cannot write '" + path.str() + "': " + code.message();
    return false;
  }
  outputs.add(path.str());
  os << contents;
  os.close();
  if (os.has_error()) {
    error = "cannot write '" + path.str() + "': " + os.error().message();
    os.clear_error();
    return false;
  }
  return true;
}

bool writeModule(ModuleOp module, StringRef path, Outputs &outputs,
                 std::string &error) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return writeFile(path, text, outputs, error);
}

/// Runs `pipeline` (a textual pass pipeline on the module, written here:
/// what users give goes through setPassOptions).
LogicalResult runPipeline(ModuleOp module, StringRef pipeline) {
  PassManager passes(module.getContext());
  std::string message;
  llvm::raw_string_ostream errors(message);
  if (failed(parsePassPipeline(pipeline, passes, errors))) {
    llvm::errs() << "lethec: error: " << message << "\n";
    return failure();
  }
  return passes.run(module);
}

/// Sets `pass`'s options from `text`, the option string the user gave with
/// `flag`; false with a one-line `error` when they do not parse. MLIR's
/// option parser prints some complaints itself, over several lines: they
/// are caught from stderr and folded into the error.
bool setPassOptions(Pass &pass, StringRef flag, StringRef text,
                    std::string &error) {
  auto reject = [&](StringRef why) {
    error = flag.str() + " '" + text.str() + "': " + why.str() + "; give " +
            pass.getArgument().str() +
            "'s options as NAME=VALUE separated by spaces (lethe-opt "
            "--help lists them)";
    return false;
  };
  // A brace or quote would end or nest the option string in a pipeline.
  if (text.find_first_of("{}'\"") != StringRef::npos)
    return reject("braces and quotes are not allowed");
  std::string handled;
  llvm::errs().flush();
  std::FILE *capture = std::tmpfile();
  int saved = capture ? dup(STDERR_FILENO) : -1;
  if (saved >= 0)
    dup2(fileno(capture), STDERR_FILENO);
  LogicalResult parsed =
      pass.initializeOptions(text, [&](const llvm::Twine &message) {
        handled = message.str();
        return failure();
      });
  std::string printed;
  if (saved >= 0) {
    llvm::errs().flush();
    dup2(saved, STDERR_FILENO);
    close(saved);
    std::rewind(capture);
    char chunk[512];
    while (size_t length = std::fread(chunk, 1, sizeof(chunk), capture))
      printed.append(chunk, length);
  }
  if (capture)
    std::fclose(capture);
  if (succeeded(parsed))
    return true;
  // One clause per line said, without the parsers' own prefixes.
  std::string said = printed + "\n" + handled;
  SmallVector<StringRef> lines, clauses;
  StringRef(said).split(lines, '\n');
  for (StringRef line : lines) {
    line = line.trim();
    for (StringRef prefix : {"lethec:", "<Pass-Options-Parser>:"})
      line.consume_front(prefix);
    line = line.trim().rtrim('!');
    if (!line.empty() && !line.starts_with("failed to add"))
      clauses.push_back(line);
  }
  return reject(clauses.empty() ? "the options do not parse"
                                : llvm::join(clauses, "; "));
}

/// Prints `diagnostic` on one line: its file position, if it has one, its
/// severity and message, and its notes after it.
void printDiagnostic(Diagnostic &diagnostic) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto position =
          diagnostic.getLocation()->findInstanceOf<FileLineColLoc>()) {
    // Line 0: the file as a whole (a binary model has no lines).
    os << position.getFilename().getValue();
    if (position.getLine() != 0)
      os << ":" << position.getLine() << ":" << position.getColumn();
    os << ": ";
  } else
    os << "lethec: ";
  switch (diagnostic.getSeverity()) {
  case DiagnosticSeverity::Error:
    os << "error: ";
    break;
  case DiagnosticSeverity::Warning:
    os << "warning: ";
    break;
  case DiagnosticSeverity::Note:
    os << "note: ";
    break;
  case DiagnosticSeverity::Remark:
    os << "remark: ";
    break;
  }
  os << diagnostic;
  for (Diagnostic &note : diagnostic.getNotes())
    os << " (note: " << note << ")";
  // A message of several lines (a parser's) stays one line.
  std::replace(text.begin(), text.end(), '\n', ' ');
  llvm::errs() << text << "\n";
}

/// The runtime's name of an element type ("" if it has none).
std::string getDtypeName(Type type) {
  FailureOr<lethe_rt_dtype> dtype = getRuntimeDtype(type);
  return succeeded(dtype) ? ::lethe::driver::getDTypeName(*dtype) : "";
}

int64_t getTensorBytes(RankedTensorType type) {
  FailureOr<lethe_rt_dtype> dtype = getRuntimeDtype(type.getElementType());
  return succeeded(dtype)
             ? type.getNumElements() *
                   static_cast<int64_t>(lethe_rt_dtype_size(*dtype))
             : 0;
}

/// The arena offset a value of the planned step lives at.
FailureOr<int64_t> getOffset(func::FuncOp function, Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    auto offset = function.getArgAttrOfType<IntegerAttr>(
        argument.getArgNumber(), kOffsetAttr);
    if (!offset)
      return failure();
    return offset.getInt();
  }
  auto result = cast<OpResult>(value);
  auto offsets =
      result.getOwner()->getAttrOfType<DenseI64ArrayAttr>(kOffsetsAttr);
  if (!offsets ||
      static_cast<int64_t>(result.getResultNumber()) >= offsets.size())
    return failure();
  return offsets[result.getResultNumber()];
}

/// The tensor fields of a manifest entry.
bool describeTensor(nlohmann::json &entry, Type type, std::string &error) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  std::string dtype = tensor ? getDtypeName(tensor.getElementType()) : "";
  if (!tensor || !tensor.hasStaticShape() || dtype.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    error = "the step has a value of type " + text +
            "; executables take statically shaped tensors of the runtime's "
            "element types";
    return false;
  }
  entry["dtype"] = dtype;
  entry["shape"] =
      std::vector<int64_t>(tensor.getShape().begin(), tensor.getShape().end());
  entry["bytes"] = getTensorBytes(tensor);
  return true;
}

/// What the executable's driver needs to know of the planned `function`
/// (runtime/include/lethe_program.h).
bool buildManifest(func::FuncOp function, nlohmann::json &manifest,
                   planning::MemoryTimeline &timeline, std::string &error) {
  auto arena = function->getAttrOfType<DictionaryAttr>(kArenaAttr);
  if (!arena) {
    error = "@" + function.getName().str() +
            " has no arena (internal error: --lethe-assign-arena did not run)";
    return false;
  }
  auto getArena = [&](StringRef key) {
    auto value = arena.getAs<IntegerAttr>(key);
    return value ? value.getInt() : 0;
  };
  manifest["format"] = "lethe-program";
  manifest["version"] = 1;
  manifest["function"] = function.getName().str();
  manifest["arena_bytes"] = getArena("size");
  manifest["host_pool_bytes"] = getArena("host_size");
  manifest["alignment"] = getArena("alignment");

  nlohmann::json arguments = nlohmann::json::array();
  for (BlockArgument argument : function.getArguments()) {
    unsigned index = argument.getArgNumber();
    nlohmann::json entry;
    entry["index"] = index;
    auto name = function.getArgAttrOfType<StringAttr>(index, kNameAttr);
    entry["name"] = name ? name.str() : "arg" + std::to_string(index);
    std::string kind = "data";
    if (function.getArgAttr(index, kStepAttr))
      kind = "step";
    else if (function.getArgAttr(index, kInitializerAttr))
      kind = function.getArgAttr(index, kParameterAttr) ||
                     function.getArgAttr(index, kTrainableAttr)
                 ? "parameter"
                 : "state";
    else if (std::optional<int64_t> classes = getClassCount(argument)) {
      kind = "label";
      entry["integer_bound"] = *classes;
      if (std::optional<int64_t> ignore = getIgnoreIndex(argument))
        entry["ignore_index"] = *ignore;
    }
    entry["kind"] = kind;
    if (!describeTensor(entry, argument.getType(), error))
      return false;
    FailureOr<int64_t> offset = getOffset(function, argument);
    if (failed(offset)) {
      error = "argument " + std::to_string(index) + " has no arena offset";
      return false;
    }
    entry["offset"] = *offset;
    arguments.push_back(std::move(entry));
  }
  manifest["arguments"] = std::move(arguments);

  nlohmann::json results = nlohmann::json::array();
  Operation *terminator = function.getBody().front().getTerminator();
  for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
    nlohmann::json entry;
    entry["index"] = index;
    auto name = function.getResultAttrOfType<StringAttr>(index, kNameAttr);
    entry["name"] = name ? name.str() : "result" + std::to_string(index);
    entry["loss"] = static_cast<bool>(function.getResultAttr(index, kLossAttr));
    auto updates =
        function.getResultAttrOfType<IntegerAttr>(index, kUpdatesAttr);
    entry["updates"] = updates ? updates.getInt() : -1;
    if (!describeTensor(entry, value.getType(), error))
      return false;
    FailureOr<int64_t> offset = getOffset(function, value);
    if (failed(offset)) {
      error = "result " + std::to_string(index) + " has no arena offset";
      return false;
    }
    entry["offset"] = *offset;
    results.push_back(std::move(entry));
  }
  manifest["results"] = std::move(results);

  // The plan and the steps, from the planner's view of the step as it is.
  planning::DeviceProfile profile;
  auto plan = function->getAttrOfType<DictionaryAttr>(kPlanAttr);
  std::string profileName = plan && plan.getAs<StringAttr>("profile")
                                ? plan.getAs<StringAttr>("profile").str()
                                : profileOption.getValue();
  if (!planning::loadDeviceProfile(profileName, profile, error))
    return false;
  FailureOr<FunctionPlanningProblem> extracted =
      extractPlanningProblem(function, profile, 0);
  if (failed(extracted)) {
    error = "cannot read the planned step back (see above)";
    return false;
  }
  // Planned from measured times, the prediction is made from them too, as
  // the pass made its plan (the roofline's would not be comparable with
  // what the executable measures).
  if (!measuredOption.empty()) {
    auto file = llvm::MemoryBuffer::getFile(measuredOption, /*IsText=*/true);
    if (!file) {
      error = "cannot read the measured profile '" + measuredOption +
              "': " + file.getError().message();
      return false;
    }
    planning::MeasuredNodes nodes;
    if (!planning::applyMeasuredProfile((*file)->getBuffer(), measuredOption,
                                        extracted->problem, nodes, error))
      return false;
  }
  planning::TimelineInfo info;
  info.function = function.getName().str();
  info.profile = profileName;
  if (plan) {
    if (auto strategy = plan.getAs<StringAttr>("strategy"))
      info.strategy = strategy.str();
    if (auto budget = plan.getAs<IntegerAttr>("budget"))
      info.budgetBytes = budget.getInt();
    planning::Plan bound;
    readPlanLowerBound(plan, bound);
    info.lowerBoundSeconds = bound.lowerBoundSeconds;
    info.lowerBoundRecomputeOnly = !bound.lowerBoundCoversOffloading;
  }
  info.alignment = getArena("alignment");
  info.arenaBytes = getArena("size");
  info.livenessPeakBytes = getArena("liveness_peak");
  if (!planning::buildTimeline(extracted->problem, extracted->schedule, info,
                               timeline, error))
    return false;
  nlohmann::json planEntry;
  planEntry["strategy"] = info.strategy.empty() ? "none" : info.strategy;
  planEntry["profile"] = profileName;
  // No budget (no --budget, or a step planned without one) is null, which
  // the driver's manifest reader takes as absent; -1 would be corrupt.
  planEntry["budget_bytes"] =
      info.budgetBytes >= 0 ? nlohmann::json(info.budgetBytes) : nullptr;
  planEntry["peak_bytes"] = timeline.simulation.peakBytes;
  planEntry["seconds"] = timeline.simulation.seconds;
  planEntry["unplanned_peak_bytes"] = timeline.unplannedPeakBytes;
  planEntry["unplanned_seconds"] = timeline.unplannedSeconds;
  planEntry["liveness_peak_bytes"] = getArena("liveness_peak");
  manifest["plan"] = std::move(planEntry);

  // The ops lethe_program_step marks with lethe_rt_op_begin: every step of
  // the schedule but releases, in order.
  const planning::TrainingGraph &graph = extracted->problem.graph;
  nlohmann::json ops = nlohmann::json::array();
  for (const planning::TimelineStep &step : timeline.steps) {
    if (step.step.kind == planning::StepKind::Release)
      continue;
    nlohmann::json entry;
    entry["index"] = ops.size();
    if (step.step.kind == planning::StepKind::Compute) {
      entry["kind"] = step.recompute ? "recompute" : "compute";
      entry["op"] = graph.nodes[step.step.id].name;
      entry["node"] = step.step.id;
    } else {
      entry["kind"] = step.step.kind == planning::StepKind::Offload
                          ? "offload"
                          : "prefetch";
      entry["value"] = step.step.id;
      entry["name"] = graph.values[step.step.id].name;
    }
    entry["live_bytes"] = step.liveBytes;
    entry["predicted_seconds"] = step.end - step.start;
    ops.push_back(std::move(entry));
  }
  manifest["ops"] = std::move(ops);
  return true;
}

/// ModuleToObject (translation to LLVM IR and its optimization), emitting a
/// position-independent host object file instead of bitcode.
class HostObjectEmitter : public LLVM::ModuleToObject {
public:
  HostObjectEmitter(Operation &module, StringRef triple,
                    function_ref<void(llvm::Module &)> optimizedCallback)
      : ModuleToObject(module, triple, "generic", "", /*optLevel=*/2, {}, {},
                       optimizedCallback) {}

protected:
  FailureOr<SmallVector<char, 0>>
  moduleToObject(llvm::Module &llvmModule) override {
    std::string error;
    llvm::Triple targetTriple(triple);
    const llvm::Target *target =
        llvm::TargetRegistry::lookupTarget(targetTriple, error);
    if (!target)
      return getOperation().emitError("no target for ")
             << triple << ": " << error;
    std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
        targetTriple, "generic", "", llvm::TargetOptions(), llvm::Reloc::PIC_));
    if (!machine)
      return getOperation().emitError("cannot create a target machine for ")
             << triple;
    llvmModule.setDataLayout(machine->createDataLayout());
    llvmModule.setTargetTriple(targetTriple);
    SmallVector<char, 0> object;
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager passes;
    if (machine->addPassesToEmitFile(passes, os, nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return getOperation().emitError("the target cannot emit object files");
    passes.run(llvmModule);
    return object;
  }
};

/// Adds the manifest to the lowered module as lethe_program_manifest.
void addManifestGlobal(ModuleOp module, StringRef text) {
  OpBuilder builder(module.getBodyRegion());
  builder.setInsertionPointToStart(module.getBody());
  std::string contents = text.str();
  contents.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(builder.getI8Type(), contents.size());
  LLVM::GlobalOp::create(builder, module.getLoc(), type, /*isConstant=*/true,
                         LLVM::Linkage::External, "lethe_program_manifest",
                         builder.getStringAttr(contents));
}

/// Links `object` with the driver and `target`'s runtime into `executable`.
bool linkExecutable(StringRef object, StringRef executable,
                    const Target &target, std::string &error) {
  llvm::ErrorOr<std::string> compiler = llvm::sys::findProgramByName("c++");
  if (!compiler) {
    error = "cannot find the C++ compiler driver 'c++' to link with; install "
            "g++ (Debian: apt-get install g++)";
    return false;
  }
  std::vector<std::string> arguments = {*compiler, "-o", executable.str(),
                                        object.str()};
  for (const char *argument : target.linkArguments)
    arguments.push_back(argument);
  arguments.push_back("-lm");
  arguments.push_back("-lpthread");
  std::vector<StringRef> argumentRefs(arguments.begin(), arguments.end());
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*compiler, argumentRefs, std::nullopt,
                                         {}, 0, 0, &message);
  if (status != 0) {
    error = "linking '" + executable.str() + "' failed" +
            (message.empty() ? "" : ": " + message) + " (" + *compiler +
            " exited with " + std::to_string(status) + ")";
    return false;
  }
  return true;
}

std::string formatShort(int64_t bytes) {
  return planning::formatBytesShort(bytes);
}

int64_t countParameters(func::FuncOp function, int64_t &bytes) {
  int64_t count = 0;
  bytes = 0;
  for (BlockArgument argument : function.getArguments()) {
    unsigned index = argument.getArgNumber();
    if (!function.getArgAttr(index, kTrainableAttr))
      continue;
    auto type = cast<RankedTensorType>(argument.getType());
    count += type.getNumElements();
    bytes += getTensorBytes(type);
  }
  return count;
}

/// The training step of `module` once it is laid out: its first function
/// with an arena, or null.
func::FuncOp findLaidOutStep(ModuleOp module) {
  func::FuncOp step;
  module.walk([&](func::FuncOp function) {
    if (function->hasAttr(kArenaAttr) && !step)
      step = function;
  });
  return step;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerAllPasses();
  cl::HideUnrelatedOptions(lethecCategory);
  ::lethe::tools::installFatalErrorHandler(argv[0]);
  if (!::lethe::tools::parseCommandLine(
          argc, argv,
          "lethec: compile a model into a training executable that fits a "
          "memory budget\n"))
    return 1;
  auto start = std::chrono::steady_clock::now();

  if (inputPath.empty())
    return fail("give the model to compile: lethec "
                "MODEL.onnx|MODEL.onnxtxt|MODEL.mlir "
                "--loss \"...\" -o NAME (see lethec --help)");
  if (outputName.empty())
    return fail("give the executable to write with -o NAME");
  std::string targetError;
  const Target *target = findTarget(targetOption, targetError);
  if (!target)
    return fail(targetError);
  StringRef extension = llvm::sys::path::extension(inputPath);
  bool isONNX = extension == ".onnx" || extension == ".onnxtxt";
  if (!isONNX && extension != ".mlir")
    return fail("'" + inputPath +
                "' is neither an ONNX model (.onnx, or .onnxtxt in the text "
                "format) nor lethe IR (.mlir)");
  ImportONNXOptions importOptions;
  for (const std::string &shape : inputShapeOption) {
    if (!isONNX)
      return fail("--input-shape applies to ONNX models; '" + inputPath +
                  "' is lethe IR, whose shapes are fixed already");
    std::string shapeError = parseInputShape(shape, importOptions);
    if (!shapeError.empty())
      return fail(shapeError);
  }
  // Checked before anything is computed, and before the linker says it
  // in three lines of its own.
  StringRef outputDirectory = llvm::sys::path::parent_path(outputName);
  if (!outputDirectory.empty() && !llvm::sys::fs::is_directory(outputDirectory))
    return fail("cannot write '" + outputName + "': there is no directory '" +
                outputDirectory + "'");
  if (llvm::sys::fs::is_directory(outputName))
    return fail("cannot write '" + outputName +
                "': it is a directory; give -o the executable's path");
  // The profiles too: without --budget they are read only for the
  // manifest's prediction, once the step is built and lowered.
  {
    planning::DeviceProfile profile;
    std::string profileError;
    if (!planning::loadDeviceProfile(profileOption, profile, profileError))
      return fail(profileError);
    if (!measuredOption.empty())
      if (auto file = llvm::MemoryBuffer::getFile(measuredOption); !file)
        return fail("cannot read the measured profile '" + measuredOption +
                    "': " + file.getError().message());
  }
  // "none" turns the optimizer (gradients only) or the plan off.
  bool withOptimizer = !optimizerOption.empty() && optimizerOption != "none";
  bool withPlan = !budgetOption.empty() && budgetOption != "none";

  DialectRegistry registry;
  registerAllDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  // One line per diagnostic (not the source line and caret of mlir-opt's):
  // lethec's errors are one line.
  ScopedDiagnosticHandler diagnostics(&context, [](Diagnostic &diagnostic) {
    printDiagnostic(diagnostic);
    return success();
  });

  auto buffer = llvm::MemoryBuffer::getFile(inputPath, /*IsText=*/false);
  if (!buffer)
    return fail("cannot read '" + inputPath +
                "': " + buffer.getError().message());
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      isONNX ? importONNX(sourceMgr, &context, importOptions)
             : parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  Outputs outputs;
  std::string error;
  auto temp = [&](StringRef suffix) {
    return outputName.getValue() + suffix.str();
  };
  auto save = [&](StringRef suffix) -> bool {
    if (!saveTemps)
      return true;
    if (!writeModule(*module, temp(suffix), outputs, error))
      return false;
    return true;
  };
  if (!save(".import.mlir"))
    return fail(error);

  // The training step, unless the input is one already.
  bool isStep = false;
  module->walk([&](func::FuncOp function) {
    for (unsigned index = 0; index < function.getNumResults(); ++index)
      isStep |= static_cast<bool>(function.getResultAttr(index, kLossAttr));
  });
  if (!isStep) {
    if (lossOption.empty())
      return fail("'" + inputPath +
                  "' is a model, not a training step: give the loss, e.g. "
                  "--loss \"output=logits kind=softmax_cross_entropy\"");
    PassManager passes(&context);
    std::unique_ptr<Pass> addLoss = createAddLossPass();
    if (!setPassOptions(*addLoss, "--loss", lossOption, error))
      return fail(error);
    passes.addNestedPass<func::FuncOp>(createFuseGeluPass());
    passes.addPass(std::move(addLoss));
    passes.addPass(createAutodiffPass());
    if (withOptimizer) {
      std::unique_ptr<Pass> addOptimizer = createAddOptimizerPass();
      if (!setPassOptions(*addOptimizer, "--optimizer", optimizerOption, error))
        return fail(error);
      passes.addPass(std::move(addOptimizer));
    }
    if (failed(passes.run(*module)))
      return 1;
  } else if (!lossOption.empty() || withOptimizer) {
    return fail("'" + inputPath +
                "' already is a training step (it has a lethe.loss result); "
                "drop --loss and --optimizer");
  }
  if (!save(".train.mlir"))
    return fail(error);

  // The kernels the step calls and its weights, before planning spends
  // time on it: lowered as it is, unplanned (a plan adds only copies between
  // the arena and the host pool, and changes no argument). The planned
  // step's calls are checked again below.
  std::vector<::lethe::driver::WeightsTensor> weights;
  {
    OwningOpRef<ModuleOp> unplanned = module->clone();
    if (failed(runPipeline(*unplanned, "func.func(lethe-assign-arena)")))
      return 1;
    func::FuncOp unplannedStep = findLaidOutStep(*unplanned);
    if (unplannedStep && !collectWeights(unplannedStep, {}, weights, error))
      return fail(error);
    if (failed(runPipeline(*unplanned, "convert-lethe-to-runtime")))
      return 1;
    if (!checkEntryPoints(*unplanned, *target, error))
      return fail(error);
  }

  // The memory plan and the arena.
  // The plan's options are set, not written into a pipeline, so that no
  // value (a profile's path with a space, say) can be read as another.
  if (withPlan) {
    PassManager passes(&context);
    PlanMemoryPassOptions options;
    options.budget = budgetOption;
    options.strategy = strategyOption;
    options.profile = profileOption;
    options.timeLimit = timeLimitOption;
    options.measured = measuredOption;
    passes.addPass(createPlanMemoryPass(options));
    if (failed(passes.run(*module)))
      return 1;
  }
  if (failed(runPipeline(*module, withPlan ? "func.func(lethe-materialize-plan,"
                                             "lethe-verify-plan,lethe-assign-"
                                             "arena)"
                                           : "func.func(lethe-assign-arena)")))
    return 1;
  if (!save(".planned.mlir"))
    return fail(error);

  func::FuncOp step = findLaidOutStep(*module);
  if (!step)
    return fail("no function of '" + inputPath + "' has a training step");
  nlohmann::json manifest;
  planning::MemoryTimeline timeline;
  if (!buildManifest(step, manifest, timeline, error))
    return fail(error);
  int64_t parameterBytes = 0;
  int64_t parameters = countParameters(step, parameterBytes);
  std::string stepName = step.getName().str();
  std::string manifestText = manifest.dump();
  if (saveTemps &&
      !writeFile(temp(".manifest.json"), manifest.dump(1), outputs, error))
    return fail(error);

  // Runtime calls, then LLVM IR and object code.
  if (failed(runPipeline(*module, "convert-lethe-to-runtime")))
    return 1;
  if (!checkEntryPoints(*module, *target, error))
    return fail(error);
  addManifestGlobal(*module, manifestText);
  if (!save(".llvm.mlir"))
    return fail(error);
  std::string llvmText;
  auto keepLlvmIr = [&](llvm::Module &llvmModule) {
    if (!saveTemps)
      return;
    llvm::raw_string_ostream os(llvmText);
    llvmModule.print(os, nullptr);
  };
  std::string triple = llvm::sys::getDefaultTargetTriple();
  HostObjectEmitter emitter(*module->getOperation(), triple, keepLlvmIr);
  std::optional<SmallVector<char, 0>> object = emitter.run();
  if (!object)
    return fail("cannot compile the step to object code for " + triple +
                " (see above)");
  if (saveTemps && !writeFile(temp(".ll"), llvmText, outputs, error))
    return fail(error);

  // The executable, and its weights beside it.
  std::string objectPath;
  if (saveTemps) {
    objectPath = temp(".o");
  } else {
    SmallString<128> path;
    int fd;
    if (llvm::sys::fs::createTemporaryFile("lethec", "o", fd, path))
      return fail("cannot create a temporary object file");
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
    objectPath = path.str().str();
    outputs.add(objectPath);
  }
  if (!writeFile(objectPath, StringRef(object->data(), object->size()), outputs,
                 error))
    return fail(error);
  // Both written beside their names and renamed once both are there, so
  // that a failure leaves an existing NAME and NAME.weights alone.
  std::string linked = outputName + ".lethec-link";
  outputs.add(linked);
  if (!linkExecutable(objectPath, linked, *target, error))
    return fail(error);
  if (!saveTemps)
    llvm::sys::fs::remove(objectPath);
  std::string weightsPath = outputName + ".weights";
  std::string weightsWritten = weightsPath + ".lethec-new";
  if (!::lethe::driver::writeWeightsFile(weightsWritten, weights, error))
    return fail(error);
  outputs.add(weightsWritten);
  for (auto [from, to] : {std::pair(weightsWritten, weightsPath),
                          std::pair(linked, outputName.getValue())})
    if (std::error_code code = llvm::sys::fs::rename(from, to))
      return fail("cannot write '" + to + "': " + code.message());
  outputs.commit();

  // The summary.
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  const nlohmann::json &plan = manifest["plan"];
  int64_t unplanned = plan["unplanned_peak_bytes"];
  int64_t peak = plan["peak_bytes"];
  int64_t arena = manifest["arena_bytes"];
  int64_t budget =
      plan["budget_bytes"].is_null() ? -1 : plan["budget_bytes"].get<int64_t>();
  llvm::outs() << "lethec: " << inputPath << " -> " << outputName << " ("
               << target->name << "), @" << stepName << ", "
               << llvm::format("%.1f", seconds) << " s\n";
  llvm::outs() << "  model      " << parameters << " trainable parameters ("
               << formatShort(parameterBytes) << ")"
               << (withOptimizer ? ", " + optimizerOption : "") << "\n";
  if (budget >= 0)
    llvm::outs() << "  budget     " << formatShort(budget) << " ("
                 << budgetOption << ")\n";
  else
    llvm::outs() << "  budget     none (no memory plan; --budget plans one)\n";
  double saved = unplanned > 0 ? 100.0 * (unplanned - peak) / unplanned : 0;
  double unplannedSeconds = plan["unplanned_seconds"].get<double>();
  llvm::outs() << "  plan       " << plan["strategy"].get<std::string>()
               << ": peak " << formatShort(peak) << ", unplanned "
               << formatShort(unplanned) << " (" << llvm::format("%.1f", saved)
               << "% saved); predicted step time "
               << llvm::format("%.3f", unplannedSeconds > 0
                                           ? plan["seconds"].get<double>() /
                                                 unplannedSeconds
                                           : 1.0)
               << "x the unplanned\n";
  // The strategy's lower bound (milp's and auto's), with how far the plan
  // is from it.
  if (timeline.info.lowerBoundSeconds >= 0)
    llvm::outs() << "             " << planning::formatLowerBound(timeline)
                 << "\n";
  llvm::outs() << "             " << timeline.recomputes << " recomputes, "
               << timeline.offloads << " offloads, " << timeline.prefetches
               << " prefetches\n";
  llvm::outs() << "  memory     arena " << formatShort(arena)
               << " on the device (liveness peak "
               << formatShort(plan["liveness_peak_bytes"].get<int64_t>())
               << "), host pool "
               << formatShort(manifest["host_pool_bytes"].get<int64_t>())
               << "\n";
  llvm::outs() << "  wrote      " << outputName << ", " << weightsPath
               << (saveTemps ? " and the stages (--save-temps)" : "") << "\n";
  std::string command = outputName;
  if (!StringRef(command).contains('/'))
    command = "./" + command;
  llvm::outs() << "  run        " << command << " --steps 5\n";
  return 0;
}
