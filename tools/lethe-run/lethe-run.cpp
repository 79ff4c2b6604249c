//===- lethe-run.cpp - Run lethe IR on the CPU ----------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The reference interpreter's driver:
//
//   lethe-run FILE.mlir [--entry NAME] [--inputs-from DIR] [--expect-from DIR]
//             [--rtol R] [--atol A] [--random-inputs SEED]
//             [--dump-outputs DIR] [--steps N [--fresh-inputs]
//             [--save-weights FILE]]
//
// Data inputs (arguments without a `lethe.initializer`) come from
// DIR/input_K.pb (ONNX TensorProto, K counting data inputs in argument
// order) or are random (integers that a classification loss reads as class
// indices are drawn below its number of classes); parameters take their
// initial values; the argument marked `lethe.step` is 0. Results are
// compared with DIR/output_K.pb (|actual - expected| <= atol + rtol *
// |expected| for every float element; integers and booleans must be equal),
// printing one line per output; the exit code
// is 0 only when all match. The peak of tensor bytes held is printed last.
//
// With --steps N the function is a training step (TrainingLoop.h) run N
// times: each result marked `lethe.updates = I` becomes argument I of the
// next step, the step argument counts 0 to N-1, and the loss of each step is
// printed. The data inputs are the same at every step (one batch, which the
// model should fit: the usual check that training works), unless
// --fresh-inputs draws new random ones at every step. --dump-outputs writes
// the last step's results; --save-weights the trained parameters and
// optimizer state in the weights format of planned executables
// (docs/Executables.md), as their --save-weights does, so that the two can
// be compared byte for byte.
//
//===----------------------------------------------------------------------===//

#include "lethe/Interpreter/Interpreter.h"
#include "lethe/Interpreter/TrainingLoop.h"

#include "FileIO.h"
#include "WeightsFile.h"
#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "lethe/Dialect/Lethe/IR/TensorSize.h"
#include "lethe/Dialect/Lethe/Transforms/Attributes.h"
#include "lethe/InitAllDialects.h"
#include "lethe/Target/ONNX/TensorProtoIO.h"
#include "lethe/Tools/CommandLine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/APInt.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
using namespace mlir::lethe;
namespace cl = llvm::cl;

/// lethe-run's own options; --help lists only these (and the generic ones).
static cl::OptionCategory runCategory("lethe-run options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                                      cl::Required, cl::cat(runCategory));
static cl::opt<std::string>
    entryName("entry",
              cl::desc("Function to run (default: the only one, or "
                       "@main)"),
              cl::cat(runCategory));
static cl::opt<std::string>
    inputsFrom("inputs-from", cl::desc("Read data inputs from DIR/input_K.pb"),
               cl::value_desc("DIR"), cl::cat(runCategory));
static cl::opt<std::string>
    expectFrom("expect-from", cl::desc("Compare results with DIR/output_K.pb"),
               cl::value_desc("DIR"), cl::cat(runCategory));
static cl::opt<double> relativeTolerance("rtol", cl::desc("Relative tolerance"),
                                         cl::init(1e-4), cl::cat(runCategory));
static cl::opt<double> absoluteTolerance("atol", cl::desc("Absolute tolerance"),
                                         cl::init(1e-5), cl::cat(runCategory));
static cl::opt<int64_t>
    randomInputs("random-inputs",
                 cl::desc("Fill data inputs with random values from SEED"),
                 cl::value_desc("SEED"), cl::init(-1), cl::cat(runCategory));
static cl::opt<std::string>
    dumpOutputs("dump-outputs", cl::desc("Write results to DIR/output_K.pb"),
                cl::value_desc("DIR"), cl::cat(runCategory));
static cl::opt<int64_t>
    steps("steps",
          cl::desc("Run a training step N times, feeding each result marked "
                   "lethe.updates back into its argument, and print the loss "
                   "of each step"),
          cl::value_desc("N"), cl::init(0), cl::cat(runCategory));
static cl::opt<std::string> saveWeights(
    "save-weights",
    cl::desc("With --steps: write the trained parameters and optimizer state "
             "to FILE in the executables' weights format"),
    cl::value_desc("FILE"), cl::cat(runCategory));
static cl::opt<bool> freshInputs(
    "fresh-inputs",
    cl::desc("With --steps and --random-inputs: draw new data inputs at every "
             "step (default: the same inputs at every step)"),
    cl::cat(runCategory));

/// Prints "lethe-run: error: <message>" and returns the failure exit code.
static int fail(const llvm::Twine &message) {
  llvm::errs() << "lethe-run: error: " << message << "\n";
  return 1;
}

/// Reads DIR/NAME as a TensorProto of `type`.
static FailureOr<HostTensor> readTensor(StringRef path, RankedTensorType type,
                                        std::string &error) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file) {
    error = "cannot read '" + path.str() + "': " + file.getError().message();
    return failure();
  }
  onnx::TensorProto proto;
  StringRef contents = (*file)->getBuffer();
  if (!proto.ParseFromArray(contents.data(),
                            static_cast<int>(contents.size()))) {
    error = "'" + path.str() + "' is not an ONNX TensorProto";
    return failure();
  }
  // ONNX's own test data stores bfloat16 tensors as UINT16 bit patterns.
  if (proto.data_type() == onnx::TensorProto::UINT16 &&
      type.getElementType().isBF16())
    proto.set_data_type(onnx::TensorProto::BFLOAT16);
  Type elementType = getElementTypeOfONNX(proto.data_type(), type.getContext());
  SmallVector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  if (elementType != type.getElementType() ||
      ArrayRef<int64_t>(shape) != type.getShape()) {
    std::string given;
    llvm::raw_string_ostream os(given);
    os << getONNXDataTypeName(proto.data_type()) << " [";
    llvm::interleave(shape, os, "x");
    os << "]";
    error = "'" + path.str() + "' holds " + given + ", expected " +
            llvm::formatv("{0}", type).str();
    return failure();
  }
  std::string bytes;
  std::string message =
      readTensorBytes(proto, llvm::sys::path::parent_path(path),
                      getElementSizeInBytes(elementType), bytes);
  if (!message.empty()) {
    error = "'" + path.str() + "': " + message;
    return failure();
  }
  HostTensor tensor(type);
  std::memcpy(tensor.data(), bytes.data(), bytes.size());
  return tensor;
}

/// `tensor` as a serialized TensorProto (raw data).
/// Element `index` of an integer tensor of element type `type`, exactly
/// (signless integers read as signed, as the dialect computes them).
static std::string formatInteger(const HostTensor &tensor, IntegerType type,
                                 int64_t index) {
  unsigned width = type.getWidth();
  size_t bytes = getElementSizeInBytes(type);
  uint64_t raw = 0;
  std::memcpy(&raw, tensor.data() + index * bytes, bytes); // little-endian
  llvm::APInt value(width,
                    width < 64 ? raw & ((uint64_t(1) << width) - 1) : raw);
  return llvm::toString(value, 10, /*Signed=*/!type.isUnsigned() && width > 1);
}

static std::string serializeTensor(const HostTensor &tensor) {
  onnx::TensorProto proto;
  for (int64_t dim : tensor.getType().getShape())
    proto.add_dims(dim);
  proto.set_data_type(getONNXDataType(tensor.getType().getElementType()));
  proto.set_raw_data(std::string(tensor.data(), tensor.getSizeInBytes()));
  std::string serialized;
  proto.SerializeToString(&serialized);
  return serialized;
}

/// Writes the parameters and optimizer state after the steps whose last
/// `results` are given, as an executable's --save-weights does.
static bool writeTrainedWeights(func::FuncOp function,
                                ArrayRef<HostTensor> results, StringRef path,
                                std::string &error) {
  std::vector<::lethe::driver::WeightsTensor> tensors;
  return collectWeights(function, results, tensors, error) &&
         ::lethe::driver::writeWeightsFile(path.str(), tensors, error);
}

/// A tensor of `type` with seeded random values: floats uniform in [-1, 1),
/// integers in [0, integerBound), booleans fair coins.
static HostTensor randomTensor(RankedTensorType type, std::mt19937_64 &rng,
                               int64_t integerBound) {
  HostTensor tensor(type);
  Type elementType = type.getElementType();
  int64_t count = type.getNumElements();
  lethe_rt_tensor view = tensor.view();
  // Generate in f64 and let the runtime's cast round to the element type.
  SmallVector<double> values(count);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  for (double &value : values) {
    if (isa<FloatType>(elementType))
      value = real(rng);
    else if (elementType.isInteger(1))
      value = rng() & 1;
    else
      value = static_cast<double>(rng() % integerBound);
  }
  int64_t rank = type.getRank();
  lethe_rt_tensor source{values.data(), LETHE_RT_F64,
                         static_cast<int32_t>(rank), type.getShape().data()};
  lethe_rt_context *context = lethe_rt_context_create();
  lethe_rt_cast(context, &source, &view);
  lethe_rt_context_destroy(context);
  return tensor;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(runCategory);
  ::lethe::tools::installFatalErrorHandler(argv[0]);
  if (!::lethe::tools::parseCommandLine(argc, argv,
                                        "Lethe reference interpreter\n"))
    return 1;
  // A negative (or NaN) tolerance fails every comparison, and a negative
  // seed read as "no --random-inputs": both are mistakes to say.
  if (!(relativeTolerance >= 0) || !(absoluteTolerance >= 0))
    return fail(llvm::formatv("--rtol and --atol are tolerances >= 0, not {0}",
                              !(relativeTolerance >= 0)
                                  ? relativeTolerance.getValue()
                                  : absoluteTolerance.getValue()));
  if (randomInputs.getNumOccurrences() && randomInputs < 0)
    return fail("--random-inputs takes a seed >= 0, not " +
                llvm::Twine(static_cast<int64_t>(randomInputs)));

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  // Errors are one line: without the function they were found in.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string errorMessage;
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!buffer)
    return fail("cannot read '" + inputFile +
                "': " + buffer.getError().message());
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  // Find the entry function.
  func::FuncOp function;
  SmallVector<func::FuncOp> candidates;
  for (auto candidate : module->getOps<func::FuncOp>())
    if (!candidate.isExternal())
      candidates.push_back(candidate);
  std::string names;
  for (func::FuncOp candidate : candidates)
    names += (names.empty() ? "@" : ", @") + candidate.getName().str();
  std::string choices =
      names.empty() ? "it has none with a body" : "its functions are " + names;
  if (!entryName.empty()) {
    function = module->lookupSymbol<func::FuncOp>(entryName);
    if (!function)
      return fail("no function @" + entryName + " in '" + inputFile + "'; " +
                  choices);
    if (function.isExternal())
      return fail("@" + entryName + " in '" + inputFile +
                  "' is a declaration, with no body to run; " + choices);
  } else if (candidates.empty()) {
    return fail("'" + inputFile + "' has no function with a body to run");
  } else if (candidates.size() == 1) {
    function = candidates.front();
  } else {
    function = module->lookupSymbol<func::FuncOp>("main");
    if (!function)
      return fail("'" + inputFile +
                  "' has several functions: choose one with --entry");
  }

  // Arguments: data inputs from files or random, parameters from their
  // initializers, the step number 0 (or counted by the training loop).
  std::mt19937_64 rng(randomInputs < 0 ? 0 : randomInputs);
  unsigned numArguments = function.getNumArguments();
  SmallVector<int64_t> dataIndexOf(numArguments, -1);
  std::optional<unsigned> stepArgument;
  int64_t dataCount = 0;
  for (auto [index, argument] : llvm::enumerate(function.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (!type || !type.hasStaticShape())
      return fail(llvm::formatv("argument {0} has type {1}; lethe-run needs "
                                "statically shaped tensors",
                                index, argument.getType())
                      .str());
    if (function.getArgAttr(index, "lethe.step"))
      stepArgument = index;
    else if (!function.getArgAttr(index, "lethe.initializer"))
      dataIndexOf[index] = dataCount++;
  }
  // Data input `index`, from DIR/input_K.pb or random.
  auto makeInput = [&](unsigned index) -> FailureOr<HostTensor> {
    auto type = cast<RankedTensorType>(function.getArgumentTypes()[index]);
    if (!inputsFrom.empty()) {
      SmallString<256> path(inputsFrom.getValue());
      llvm::sys::path::append(
          path, "input_" + std::to_string(dataIndexOf[index]) + ".pb");
      return readTensor(path, type, errorMessage);
    }
    if (randomInputs >= 0)
      return randomTensor(
          type, rng, getClassCount(function.getArgument(index)).value_or(10));
    errorMessage = llvm::formatv("argument {0} is a data input: give "
                                 "--inputs-from DIR or --random-inputs SEED",
                                 index)
                       .str();
    return failure();
  };

  std::vector<HostTensor> results;
  int64_t peakBytes = 0;
  if (steps.getNumOccurrences()) {
    if (steps < 1)
      return fail("--steps must be at least 1, got " + std::to_string(steps));
    if (!expectFrom.empty())
      return fail("--expect-from compares the results of one run; it cannot "
                  "be combined with --steps");
    if (freshInputs && randomInputs < 0)
      return fail("--fresh-inputs draws new random data inputs at every "
                  "step: give --random-inputs SEED");
    FailureOr<std::unique_ptr<TrainingLoop>> loop =
        TrainingLoop::create(function);
    if (failed(loop))
      return 1;
    // Data inputs drawn once, for every step unless --fresh-inputs.
    std::vector<HostTensor> fixedInputs(numArguments);
    for (int64_t number = 0; number < steps; ++number) {
      std::vector<HostTensor> arguments(numArguments);
      for (unsigned index = 0; index < numArguments; ++index) {
        if (!(*loop)->needsArgument(index))
          continue;
        if (!freshInputs && fixedInputs[index].getType()) {
          arguments[index] = fixedInputs[index];
          continue;
        }
        FailureOr<HostTensor> input = makeInput(index);
        if (failed(input))
          return fail(errorMessage);
        if (!freshInputs)
          fixedInputs[index] = *input;
        arguments[index] = std::move(*input);
      }
      FailureOr<double> loss = (*loop)->step(std::move(arguments));
      if (failed(loss))
        return 1;
      llvm::outs() << "step " << number << ": loss "
                   << llvm::format("%.7g", *loss) << "\n";
    }
    results.assign((*loop)->getResults().begin(), (*loop)->getResults().end());
    peakBytes = (*loop)->getPeakBytes();
    if (!saveWeights.empty() &&
        !writeTrainedWeights(function, results, saveWeights, errorMessage))
      return fail(errorMessage);
  } else {
    if (!saveWeights.empty())
      return fail("--save-weights writes what training leaves: give --steps");
    if (freshInputs)
      return fail("--fresh-inputs applies to --steps only");
    std::vector<HostTensor> arguments;
    for (unsigned index = 0; index < numArguments; ++index) {
      if (stepArgument == index) {
        // Step 0: zeros.
        arguments.emplace_back(
            cast<RankedTensorType>(function.getArgumentTypes()[index]));
      } else if (dataIndexOf[index] < 0) {
        arguments.emplace_back(); // the interpreter uses the initializer
      } else {
        FailureOr<HostTensor> input = makeInput(index);
        if (failed(input))
          return fail(errorMessage);
        arguments.push_back(std::move(*input));
      }
    }
    Interpreter interpreter;
    FailureOr<std::vector<HostTensor>> outputs =
        interpreter.run(function, std::move(arguments));
    if (failed(outputs))
      return 1;
    results = std::move(*outputs);
    peakBytes = interpreter.getPeakBytes();
  }

  // Every expected output is read before an output is written, so that a
  // missing one leaves no dumps behind.
  std::vector<HostTensor> expectedOutputs;
  for (auto [index, result] : llvm::enumerate(results)) {
    if (expectFrom.empty())
      break;
    SmallString<256> path(expectFrom.getValue());
    llvm::sys::path::append(path, "output_" + std::to_string(index) + ".pb");
    FailureOr<HostTensor> expected =
        readTensor(path, result.getType(), errorMessage);
    if (failed(expected))
      return fail(errorMessage);
    expectedOutputs.push_back(std::move(*expected));
  }
  // The dumps are written all or none (the directories made for them are
  // removed again when one cannot be written).
  if (!dumpOutputs.empty()) {
    std::vector<std::pair<std::string, std::string>> files;
    for (auto [index, result] : llvm::enumerate(results)) {
      SmallString<256> path(dumpOutputs.getValue());
      llvm::sys::path::append(path, "output_" + std::to_string(index) + ".pb");
      files.emplace_back(path.str().str(), serializeTensor(result));
    }
    // The directories about to be made, deepest first.
    std::vector<std::string> made;
    for (StringRef directory = dumpOutputs.getValue();
         !directory.empty() && !llvm::sys::fs::exists(directory);
         directory = llvm::sys::path::parent_path(directory))
      made.push_back(directory.str());
    llvm::sys::fs::create_directories(dumpOutputs.getValue());
    if (!::lethe::driver::writeFilesAtomically(files, errorMessage)) {
      for (const std::string &directory : made)
        llvm::sys::fs::remove(directory);
      return fail(errorMessage);
    }
  }

  bool allMatch = true;
  for (auto [index, result] : llvm::enumerate(results)) {
    std::string name = "output_" + std::to_string(index);
    if (expectFrom.empty()) {
      if (!steps.getNumOccurrences())
        llvm::outs() << name << ": " << result.getType() << "\n";
      continue;
    }
    const HostTensor *expected = &expectedOutputs[index];
    double maxAbs = 0, maxRel = 0;
    int64_t mismatches = 0, count = result.getType().getNumElements();
    // Integers (and booleans) must match exactly: compare their bits, since
    // a double does not hold every 64-bit integer.
    Type elementType = result.getType().getElementType();
    int64_t integerSize =
        isa<IntegerType>(elementType) ? getElementSizeInBytes(elementType) : 0;
    int64_t firstMismatch = -1;
    for (int64_t i = 0; i < count; ++i) {
      double actual = result.getAsDouble(i), wanted = expected->getAsDouble(i);
      if (integerSize) {
        int64_t offset = i * integerSize;
        if (std::memcmp(result.data() + offset, expected->data() + offset,
                        integerSize) != 0) {
          if (mismatches++ == 0)
            firstMismatch = i;
          maxAbs = std::max(maxAbs, std::fabs(actual - wanted));
          if (wanted != 0)
            maxRel = std::max(maxRel,
                              std::fabs(actual - wanted) / std::fabs(wanted));
        }
        continue;
      }
      if (std::isnan(actual) && std::isnan(wanted))
        continue;
      double error = std::fabs(actual - wanted);
      if (std::isinf(actual) && actual == wanted)
        error = 0;
      maxAbs = std::max(maxAbs, error);
      if (wanted != 0)
        maxRel = std::max(maxRel, error / std::fabs(wanted));
      if (!(error <= absoluteTolerance + relativeTolerance * std::fabs(wanted)))
        ++mismatches;
    }
    allMatch &= mismatches == 0;
    if (firstMismatch >= 0) {
      // The doubles above may not tell 64-bit integers apart: name the
      // first element that differs, exactly.
      auto type = cast<IntegerType>(elementType);
      llvm::outs() << llvm::formatv(
          "{0}: MISMATCH {1} of {2} elements differ (integers compare "
          "exactly); the first is element {3}: {4}, expected {5}\n",
          name, mismatches, count, firstMismatch,
          formatInteger(result, type, firstMismatch),
          formatInteger(*expected, type, firstMismatch));
      continue;
    }
    llvm::outs() << llvm::formatv(
        "{0}: {1} max abs error {2:e3}, max rel error {3:e3}, {4} of {5} "
        "elements outside tolerance\n",
        name, mismatches ? "MISMATCH" : "ok", maxAbs, maxRel, mismatches,
        count);
  }
  llvm::outs() << "peak tensor bytes held: " << peakBytes << "\n";
  return allMatch ? 0 : 1;
}
