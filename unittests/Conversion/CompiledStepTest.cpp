//===- CompiledStepTest.cpp - Compiled steps compute the interpreter's bits
//===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The guarantee of --convert-lethe-to-runtime: on the test models
// (python/lethe/onnx_models.py: the MLP, the CNN, the transformer block and
// the U-Net, tiny and in f64), a training step planned at the smallest budget
// a strategy meets (greedy offloads and recomputes there; chain recomputes),
// laid out in the arena, lowered to runtime calls and JIT-compiled computes
// bit for bit what the reference interpreter computes on the same planned
// IR: the loss and gradients of one step, and the loss, updated parameters
// and optimizer state of an Adam step. The CPU backend runs copies as late as
// the events allow, so a missing wait shows as wrong values: deleting one
// emitted wait must change the result.
//
// The models are written by `python3 -m lethe.onnx_models --tiny --float64`
// into the directory in LETHE_TEST_MODELS (ctest sets it up).
//
//===----------------------------------------------------------------------===//

#include "TestModels.h"
#include "lethe/Conversion/Passes.h"
#include "lethe/Dialect/Lethe/IR/LetheDialect.h"
#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "lethe/Dialect/Lethe/Transforms/Passes.h"
#include "lethe/Dialect/Lethe/Transforms/PlanningProblem.h"
#include "lethe/Interpreter/Interpreter.h"
#include "lethe/Planning/ArenaLayout.h"
#include "lethe/Planning/Strategies.h"
#include "lethe/Target/ONNX/ImportONNX.h"
#include "lethe_program.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <string>

using namespace mlir;
using namespace mlir::lethe;

namespace {

struct CompiledCase {
  std::string model;
  std::string output;
  std::string loss;
  std::string strategy;
};

void PrintTo(const CompiledCase &c, std::ostream *os) {
  *os << c.model << "/" << c.strategy;
}

/// Where a planned step's arguments and results live in the arena.
struct Layout {
  int64_t arenaBytes = 0, hostBytes = 0;
  std::vector<int64_t> argumentOffsets, resultOffsets, resultBytes;
};

using StepFunction = int32_t (*)(lethe_rt_context *);

class CompiledStep : public ::testing::TestWithParam<CompiledCase> {
protected:
  CompiledStep() : context(makeRegistry()) {
    context.loadAllAvailableDialects();
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  }

  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registry.insert<LetheDialect, func::FuncDialect, LLVM::LLVMDialect>();
    registerBuiltinDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    return registry;
  }

  /// The model's training step, planned at the strategy's smallest budget
  /// and laid out in the arena.
  OwningOpRef<ModuleOp> buildPlannedStep(bool optimizer) {
    const CompiledCase &c = GetParam();
    OwningOpRef<ModuleOp> module = ::lethe::testing::buildTestModelStep(
        context, c.model, c.output, c.loss, optimizer);
    if (!module)
      return nullptr;

    planning::DeviceProfile profile;
    std::string error;
    EXPECT_TRUE(planning::loadDeviceProfile("h100", profile, error)) << error;
    FailureOr<FunctionPlanningProblem> extracted =
        extractPlanningProblem(getStep(*module), profile, 0);
    EXPECT_TRUE(succeeded(extracted));
    if (failed(extracted))
      return nullptr;
    planning::PlanOptions options;
    options.timeLimitSeconds = 1;
    // What --lethe-plan-memory asks for: an arena within the budget.
    options.arenaAlignment = planning::kDefaultArenaAlignment;
    int64_t budget = planning::findMinimumBudget(
        c.strategy, extracted->problem, options, 0,
        planning::getUnplannedBudget(extracted->problem, options));
    EXPECT_GT(budget, 0);

    PassManager planning(&context);
    PlanMemoryPassOptions planOptions;
    planOptions.budget = std::to_string(budget);
    planOptions.strategy = c.strategy;
    planOptions.timeLimit = 1;
    planning.addPass(createPlanMemoryPass(planOptions));
    planning.addNestedPass<func::FuncOp>(createMaterializePlanPass());
    planning.addNestedPass<func::FuncOp>(createVerifyPlanPass());
    planning.addNestedPass<func::FuncOp>(createAssignArenaPass());
    EXPECT_TRUE(succeeded(planning.run(*module)));
    return module;
  }

  static func::FuncOp getStep(ModuleOp module) {
    return ::lethe::testing::getStep(module);
  }

  static Layout getLayout(func::FuncOp function) {
    Layout layout;
    auto arena = function->getAttrOfType<DictionaryAttr>("lethe.arena");
    layout.arenaBytes = arena.getAs<IntegerAttr>("size").getInt();
    layout.hostBytes = arena.getAs<IntegerAttr>("host_size").getInt();
    for (unsigned index = 0; index < function.getNumArguments(); ++index)
      layout.argumentOffsets.push_back(
          function.getArgAttrOfType<IntegerAttr>(index, "lethe.offset")
              .getInt());
    Operation *terminator = function.getBody().front().getTerminator();
    for (Value result : terminator->getOperands()) {
      if (auto argument = dyn_cast<BlockArgument>(result)) {
        layout.resultOffsets.push_back(
            layout.argumentOffsets[argument.getArgNumber()]);
      } else {
        auto offsets = result.getDefiningOp()->getAttrOfType<DenseI64ArrayAttr>(
            "lethe.offsets");
        layout.resultOffsets.push_back(
            offsets[cast<OpResult>(result).getResultNumber()]);
      }
      layout.resultBytes.push_back(*getSizeInBytes(result.getType()));
    }
    return layout;
  }

  /// Random data inputs for `function` (those without an initializer), as
  /// PlannedStepTest makes them.
  static std::vector<HostTensor> makeInputs(func::FuncOp function,
                                            uint32_t seed) {
    std::mt19937 generator(seed);
    std::vector<HostTensor> arguments;
    for (auto [index, type] : llvm::enumerate(function.getArgumentTypes())) {
      if (function.getArgAttr(index, "lethe.initializer")) {
        arguments.emplace_back();
        continue;
      }
      HostTensor tensor(cast<RankedTensorType>(type));
      if (function.getArgAttr(index, "lethe.step")) {
        // The step counter (an i64 scalar): the first step, as the training
        // loop numbers them, so that Adam corrects its bias.
        int64_t step = 1;
        std::memcpy(tensor.data(), &step, sizeof(step));
        arguments.push_back(std::move(tensor));
        continue;
      }
      tensor =
          ::lethe::testing::randomData(cast<RankedTensorType>(type), generator);
      arguments.push_back(std::move(tensor));
    }
    return arguments;
  }

  /// The arguments' bytes: the given tensors, else the initializers.
  static std::vector<HostTensor>
  completeArguments(func::FuncOp function, std::vector<HostTensor> inputs) {
    for (auto [index, tensor] : llvm::enumerate(inputs)) {
      if (tensor.getType())
        continue;
      auto initializer =
          function.getArgAttrOfType<ElementsAttr>(index, "lethe.initializer");
      EXPECT_TRUE(initializer) << "argument " << index;
      if (initializer)
        tensor = *tensorFromAttribute(initializer);
    }
    return inputs;
  }

  /// Lowers `module` (erasing its step function) and JIT-compiles it.
  std::unique_ptr<ExecutionEngine> compile(ModuleOp module) {
    PassManager passes(&context);
    passes.addPass(createConvertLetheToRuntimePass());
    if (failed(passes.run(module)))
      return nullptr;
    auto engine = ExecutionEngine::create(module);
    if (!engine) {
      ADD_FAILURE() << llvm::toString(engine.takeError());
      return nullptr;
    }
    return std::move(*engine);
  }

  /// Deletes the `number`th wait of the compute stream (its status becomes
  /// 0); false if there is none.
  static bool deleteWait(ModuleOp module, int number) {
    SmallVector<LLVM::CallOp> waits;
    module.walk([&](LLVM::CallOp call) {
      if (call.getCallee() != "lethe_rt_stream_wait_event")
        return;
      auto stream = call.getOperand(1).getDefiningOp<LLVM::ConstantOp>();
      if (stream && cast<IntegerAttr>(stream.getValue()).getInt() ==
                        LETHE_RT_STREAM_COMPUTE)
        waits.push_back(call);
    });
    if (number >= static_cast<int>(waits.size()))
      return false;
    LLVM::CallOp call = waits[number];
    OpBuilder builder(call);
    Value zero =
        LLVM::ConstantOp::create(builder, call.getLoc(), builder.getI32Type(),
                                 builder.getI32IntegerAttr(0));
    call.getResult().replaceAllUsesWith(zero);
    call.erase();
    return true;
  }

  /// Runs the compiled step on `arguments` in a fresh context, `repeat`
  /// times (copying the arguments in before each), and returns the results
  /// of every run, in order. `prepare`, when given, sees the context once
  /// its memory exists. With `mayFail`, a step that returns an error (a
  /// kernel that checks what it read, such as the labels) ends the runs with
  /// one that has no results instead of failing the test.
  static std::vector<std::vector<std::string>>
  runCompiled(ExecutionEngine &engine, const Layout &layout,
              ArrayRef<HostTensor> arguments, int repeat,
              const std::function<void(lethe_rt_context *)> &prepare = {},
              bool mayFail = false) {
    auto symbol = engine.lookup("lethe_program_step");
    if (!symbol) {
      ADD_FAILURE() << llvm::toString(symbol.takeError());
      return {};
    }
    auto step = reinterpret_cast<StepFunction>(*symbol);
    lethe_rt_context *runtime = lethe_rt_context_create();
    EXPECT_EQ(
        lethe_rt_memory_init(runtime, layout.arenaBytes, layout.hostBytes),
        LETHE_RT_OK);
    if (prepare)
      prepare(runtime);
    std::vector<std::vector<std::string>> runs;
    for (int run = 0; run < repeat; ++run) {
      for (auto [index, argument] : llvm::enumerate(arguments))
        EXPECT_EQ(lethe_rt_copy_to_arena(runtime, layout.argumentOffsets[index],
                                         argument.data(),
                                         argument.getSizeInBytes()),
                  LETHE_RT_OK);
      int status = step(runtime);
      std::vector<std::string> &results = runs.emplace_back();
      if (mayFail && status != LETHE_RT_OK)
        break;
      EXPECT_EQ(status, LETHE_RT_OK) << lethe_rt_last_error(runtime);
      for (auto [offset, bytes] :
           llvm::zip(layout.resultOffsets, layout.resultBytes)) {
        std::string data(bytes, '\0');
        EXPECT_EQ(lethe_rt_copy_from_arena(runtime, data.data(), offset, bytes),
                  LETHE_RT_OK);
        results.push_back(std::move(data));
      }
    }
    lethe_rt_context_destroy(runtime);
    return runs;
  }

  /// The results of one run of the compiled step (see runCompiled).
  static std::vector<std::string>
  runCompiledOnce(ExecutionEngine &engine, const Layout &layout,
                  ArrayRef<HostTensor> arguments, bool mayFail = false) {
    std::vector<std::vector<std::string>> runs =
        runCompiled(engine, layout, arguments, /*repeat=*/1, {}, mayFail);
    return runs.empty() ? std::vector<std::string>() : std::move(runs.front());
  }

  static bool sameBits(ArrayRef<HostTensor> expected,
                       ArrayRef<std::string> actual) {
    if (expected.size() != actual.size())
      return false;
    for (size_t index = 0; index < expected.size(); ++index)
      if (static_cast<int64_t>(actual[index].size()) !=
              expected[index].getSizeInBytes() ||
          std::memcmp(expected[index].data(), actual[index].data(),
                      actual[index].size()) != 0)
        return false;
    return true;
  }

  /// Plans the step, runs it in the interpreter and compiled, and compares.
  /// `prepare`, when given, sees the planned function and the compiled
  /// step's context before it runs.
  void checkStep(bool optimizer,
                 const std::function<void(func::FuncOp, lethe_rt_context *)>
                     &prepare = {}) {
    OwningOpRef<ModuleOp> planned = buildPlannedStep(optimizer);
    ASSERT_TRUE(planned);
    func::FuncOp function = getStep(*planned);
    Layout layout = getLayout(function);
    std::vector<HostTensor> inputs = makeInputs(function, 1);
    std::vector<HostTensor> arguments = completeArguments(function, inputs);

    Interpreter interpreter;
    FailureOr<std::vector<HostTensor>> expected =
        interpreter.run(function, inputs);
    ASSERT_TRUE(succeeded(expected));

    OwningOpRef<ModuleOp> lowered = planned->clone();
    std::unique_ptr<ExecutionEngine> engine = compile(*lowered);
    ASSERT_TRUE(engine);
    // Twice in one context, each run compared: the first on fresh memory
    // (which the CPU runtime fills with NaNs, so that a read before a write
    // shows), the second after it (the step leaves nothing behind that
    // changes the next one).
    std::vector<std::vector<std::string>> runs =
        runCompiled(*engine, layout, arguments, /*repeat=*/2,
                    [&](lethe_rt_context *runtime) {
                      if (prepare)
                        prepare(function, runtime);
                    });
    ASSERT_EQ(runs.size(), 2u);
    for (auto [run, actual] : llvm::enumerate(runs)) {
      ASSERT_EQ(actual.size(), expected->size()) << "run " << run;
      for (size_t index = 0; index < actual.size(); ++index) {
        ASSERT_EQ(static_cast<int64_t>(actual[index].size()),
                  (*expected)[index].getSizeInBytes());
        EXPECT_EQ(std::memcmp((*expected)[index].data(), actual[index].data(),
                              actual[index].size()),
                  0)
            << "run " << run << ": result " << index << " differs";
      }
    }
  }

  MLIRContext context;
};

TEST_P(CompiledStep, GradientsMatchTheInterpreter) { checkStep(false); }

TEST_P(CompiledStep, AdamStepMatchesTheInterpreter) { checkStep(true); }

// The waits are needed: without one of the compute stream's waits, the step
// computes other bits (a kernel reads a prefetch's destination before the
// copy, or overwrites an offload's source before it is copied). A deleted
// wait can be harmless when the slot already held the same bytes (a value
// prefetched back where it was), so the test asks that at least one of the
// first few bites, and that the waits exist where the plan copies.
TEST_P(CompiledStep, DeletingAWaitChangesTheResult) {
  OwningOpRef<ModuleOp> planned = buildPlannedStep(/*optimizer=*/false);
  ASSERT_TRUE(planned);
  func::FuncOp function = getStep(*planned);
  bool copies = false;
  function.walk([&](PrefetchOp) { copies = true; });
  if (!copies)
    GTEST_SKIP() << "the plan copies nothing";
  Layout layout = getLayout(function);
  std::vector<HostTensor> inputs = makeInputs(function, 1);
  std::vector<HostTensor> arguments = completeArguments(function, inputs);
  Interpreter interpreter;
  FailureOr<std::vector<HostTensor>> expected =
      interpreter.run(function, inputs);
  ASSERT_TRUE(succeeded(expected));

  int tried = 0, changed = 0;
  for (int wait = 0; wait < 4; ++wait) {
    OwningOpRef<ModuleOp> lowered = planned->clone();
    PassManager passes(&context);
    passes.addPass(createConvertLetheToRuntimePass());
    ASSERT_TRUE(succeeded(passes.run(*lowered)));
    if (!deleteWait(*lowered, wait))
      break;
    auto engine = ExecutionEngine::create(*lowered);
    ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());
    ++tried;
    // A step that reads a tensor before its copy arrived computes from
    // stale bytes, or stops where a kernel checks them (labels out of
    // range): either changes the result.
    if (!sameBits(*expected, runCompiledOnce(**engine, layout, arguments,
                                             /*mayFail=*/true)))
      ++changed;
  }
  EXPECT_GT(tried, 0) << "no compute-stream wait in a plan that prefetches";
  EXPECT_GT(changed, 0) << "none of " << tried << " deleted waits mattered";
  std::cout << "deleting one of the first " << tried
            << " compute-stream waits changed the result " << changed
            << " times\n";
}

/// An op's workspace block in the arena.
struct WorkspaceBlock {
  int64_t offset = 0, bytes = 0;
};

/// The op hook of ConvolutionsKeepTheirColumnsInTheArena: fills the block
/// of the op about to run with a pattern, and at the next op counts whether
/// the pattern was overwritten.
struct WorkspaceWatch {
  const std::map<int32_t, WorkspaceBlock> *blocks;
  lethe_rt_context *runtime = nullptr;
  unsigned char *arena = nullptr;
  int32_t pending = -1;
  int filled = 0, overwritten = 0;
  static constexpr unsigned char kPattern = 0x5a;
  void check() {
    if (pending < 0)
      return;
    const WorkspaceBlock &block = blocks->at(pending);
    overwritten +=
        !std::all_of(arena + block.offset, arena + block.offset + block.bytes,
                     [](unsigned char byte) { return byte == kPattern; });
    pending = -1;
  }
  static void hook(void *data, int32_t op) {
    auto *watch = static_cast<WorkspaceWatch *>(data);
    watch->check();
    auto block = watch->blocks->find(op);
    if (block == watch->blocks->end())
      return;
    // The hook runs before the op's waits: let the copies the op would wait
    // for (an offload still reading the block's bytes) finish first.
    EXPECT_EQ(lethe_rt_synchronize(watch->runtime), LETHE_RT_OK);
    std::memset(watch->arena + block->second.offset, kPattern,
                block->second.bytes);
    watch->pending = op;
    ++watch->filled;
  }
};

// The convolutions keep their im2col columns in the arena block
// --lethe-assign-arena gave each (lethe.workspace_offset), which the arena's
// size and liveness peak count: an op hook fills each block with a pattern
// right before its convolution runs and finds it overwritten right after,
// and the step still computes the bits of the interpreter, whose
// convolutions use buffers of their own.
TEST_P(CompiledStep, ConvolutionsKeepTheirColumnsInTheArena) {
  {
    const CompiledCase &c = GetParam();
    OwningOpRef<ModuleOp> step = ::lethe::testing::buildTestModelStep(
        context, c.model, c.output, c.loss, /*optimizer=*/true);
    ASSERT_TRUE(step);
    bool workspace = false;
    step->walk([&](CostOpInterface op) {
      workspace = workspace || op.getWorkspaceBytes() > 0;
    });
    if (!workspace)
      GTEST_SKIP() << "the model has no op with workspace";
  }
  // The blocks, by the op numbers the step passes to lethe_rt_op_begin
  // (every op but releases).
  std::map<int32_t, WorkspaceBlock> blocks;
  WorkspaceWatch watch{&blocks};
  checkStep(/*optimizer=*/true, [&](func::FuncOp function,
                                    lethe_rt_context *runtime) {
    int32_t number = 0;
    for (Operation &op : function.getBody().front().without_terminator()) {
      if (isa<ReleaseOp>(op))
        continue;
      auto cost = dyn_cast<CostOpInterface>(op);
      if (cost && cost.getWorkspaceBytes() > 0) {
        auto offset = op.getAttrOfType<IntegerAttr>("lethe.workspace_offset");
        ASSERT_TRUE(offset) << "op " << number << " has no workspace block";
        blocks[number] = {offset.getInt(), cost.getWorkspaceBytes()};
      }
      ++number;
    }
    Layout layout = getLayout(function);
    auto arena = function->getAttrOfType<DictionaryAttr>("lethe.arena");
    int64_t livenessPeak = arena.getAs<IntegerAttr>("liveness_peak").getInt();
    for (const auto &[op, block] : blocks) {
      EXPECT_LE(block.offset + block.bytes, layout.arenaBytes) << "op " << op;
      EXPECT_LE(planning::alignBytes(block.bytes, 256), livenessPeak);
    }
    watch.runtime = runtime;
    watch.arena = static_cast<unsigned char *>(lethe_rt_arena_base(runtime));
    ASSERT_EQ(lethe_rt_set_op_hook(runtime, &WorkspaceWatch::hook, &watch),
              LETHE_RT_OK);
  });
  watch.check();
  // checkStep runs the step twice.
  EXPECT_FALSE(blocks.empty());
  EXPECT_EQ(watch.filled, 2 * static_cast<int>(blocks.size()));
  EXPECT_EQ(watch.overwritten, watch.filled);
}

// Dropout keys its mask by the step counter, a tensor the step reads where
// it lives (the arena): the compiled step drops what the interpreter drops,
// at several steps, and the mask changes with the step.
class CompiledDropout : public CompiledStep {};

TEST_F(CompiledDropout, MasksFollowTheStepCounter) {
  const char *source = R"mlir(
func.func @train_step(%x: tensor<4x16xf64> {lethe.name = "x"},
                      %step: tensor<i64> {lethe.name = "step", lethe.step})
    -> (tensor<4x16xf64>, tensor<4x16xi1>) {
  %d, %mask = lethe.dropout %x, %step {ratio = 0.5 : f32, seed = 3 : i64, training}
      : (tensor<4x16xf64>, tensor<i64>) -> (tensor<4x16xf64>, tensor<4x16xi1>)
  return %d, %mask : tensor<4x16xf64>, tensor<4x16xi1>
}
)mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(module);
  PassManager arena(&context);
  arena.addNestedPass<func::FuncOp>(createAssignArenaPass());
  ASSERT_TRUE(succeeded(arena.run(*module)));
  func::FuncOp function = getStep(*module);
  Layout layout = getLayout(function);
  OwningOpRef<ModuleOp> lowered = module->clone();
  std::unique_ptr<ExecutionEngine> engine = compile(*lowered);
  ASSERT_TRUE(engine);

  std::mt19937 generator(5);
  HostTensor x = ::lethe::testing::randomData(
      cast<RankedTensorType>(function.getArgumentTypes()[0]), generator);
  std::vector<std::string> masks;
  for (int64_t step : {0, 1, 7}) {
    SCOPED_TRACE(step);
    HostTensor counter(cast<RankedTensorType>(function.getArgumentTypes()[1]));
    std::memcpy(counter.data(), &step, sizeof(step));
    std::vector<HostTensor> arguments;
    arguments.push_back(x);
    arguments.push_back(std::move(counter));
    Interpreter interpreter;
    FailureOr<std::vector<HostTensor>> expected =
        interpreter.run(function, arguments);
    ASSERT_TRUE(succeeded(expected));
    std::vector<std::string> actual =
        runCompiledOnce(*engine, layout, arguments);
    EXPECT_TRUE(sameBits(*expected, actual));
    ASSERT_EQ(actual.size(), 2u);
    masks.push_back(actual[1]);
  }
  EXPECT_NE(masks[0], masks[1]);
  EXPECT_NE(masks[1], masks[2]);
}

std::vector<CompiledCase> makeCases() {
  const CompiledCase models[] = {
      {"mlp", "logits", "softmax_cross_entropy", ""},
      {"cnn", "logits", "softmax_cross_entropy", ""},
      {"transformer", "y", "mse", ""},
      {"unet", "y", "mse", ""},
  };
  std::vector<CompiledCase> cases;
  for (const char *strategy : {"greedy", "chain"})
    for (CompiledCase c : models) {
      c.strategy = strategy;
      cases.push_back(c);
    }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    Models, CompiledStep, ::testing::ValuesIn(makeCases()),
    [](const ::testing::TestParamInfo<CompiledCase> &info) {
      return info.param.model + "_" + info.param.strategy;
    });

} // namespace
