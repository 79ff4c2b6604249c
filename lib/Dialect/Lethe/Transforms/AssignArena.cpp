//===- AssignArena.cpp - Static offsets in one device arena ---------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The --lethe-assign-arena pass: the function read as a schedule
// (PlanningProblem.h), the lifetime of every device tensor, op workspace and
// host copy from the same replay the simulator does (getScheduleBuffers), the
// layout from the plain-C++ layOutArena, and the offsets written back as
// attributes.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/Transforms/Passes.h"

#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "lethe/Dialect/Lethe/Transforms/Attributes.h"
#include "lethe/Dialect/Lethe/Transforms/PlanningProblem.h"
#include "lethe/Planning/ArenaLayout.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace mlir::lethe {
#define GEN_PASS_DEF_ASSIGNARENAPASS
#include "lethe/Dialect/Lethe/Transforms/Passes.h.inc"
} // namespace mlir::lethe

using namespace mlir;
using namespace mlir::lethe;

namespace {

/// The input a state update's `result` is the next value of, or null for
/// any other op: an optimizer update's x for x_new and each state for its
/// own, batch normalization's running mean and variance for theirs.
Value getUpdatedInput(OpResult result) {
  unsigned number = result.getResultNumber();
  return llvm::TypeSwitch<Operation *, Value>(result.getOwner())
      .Case([](SgdUpdateOp update) { return update.getX(); })
      .Case([&](MomentumUpdateOp update) {
        return number == 0 ? update.getX() : update.getMomentum();
      })
      .Case([&](AdagradUpdateOp update) {
        return number == 0 ? update.getX() : update.getSquaredSum();
      })
      .Case([&](AdamUpdateOp update) {
        return number == 0   ? update.getX()
               : number == 1 ? update.getFirstMoment()
                             : update.getSecondMoment();
      })
      .Case([&](BatchNormTrainOp norm) {
        return number == 1   ? norm.getRunningMean()
               : number == 2 ? norm.getRunningVariance()
                             : Value();
      })
      .Default([](Operation *) { return Value(); });
}

/// The device buffers of a step with some views sharing their input's
/// bytes: each group of buffers that share bytes becomes one buffer, held
/// from the first step of any of its members to the last (contiguous, since
/// an input is held at its view).
struct SharedBuffers {
  std::vector<planning::ArenaBuffer> groups;
  /// The group of each buffer.
  std::vector<size_t> groupOf;
};

/// Merges each view in `tensors` (the values of the first buffers; the
/// rest are workspaces) for which `wanted(input, view)` holds, given their
/// buffer indices, with its input; then each optimizer update's result with
/// the argument it replaces, where nothing holds that argument's bytes after
/// the update. Otherwise two results of the function, or a result and an
/// argument, never share bytes: the driver reads the one and writes the
/// other.
SharedBuffers
shareViews(const std::vector<planning::ArenaBuffer> &buffers,
           ArrayRef<Value> tensors, func::FuncOp function,
           llvm::function_ref<bool(size_t input, size_t view)> wanted) {
  Block &block = function.getBody().front();
  OperandRange results = block.getTerminator()->getOperands();
  llvm::DenseMap<Value, size_t> indexOf;
  for (auto [index, tensor] : llvm::enumerate(tensors))
    indexOf[tensor] = index;
  // Union-find over the buffers, with what each group holds.
  std::vector<size_t> parent(buffers.size());
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<bool> holdsArgument(buffers.size()), holdsResult(buffers.size());
  for (auto [index, tensor] : llvm::enumerate(tensors))
    holdsArgument[index] = isa<BlockArgument>(tensor);
  for (Value result : results) {
    auto found = indexOf.find(result);
    if (found != indexOf.end())
      holdsResult[found->second] = true;
  }
  std::vector<int64_t> lastStep(buffers.size());
  for (size_t index = 0; index < buffers.size(); ++index)
    lastStep[index] = buffers[index].lastStep;
  auto find = [&](size_t index) {
    while (parent[index] != index)
      index = parent[index] = parent[parent[index]];
    return index;
  };
  // Joins the group of root `other` into that of root `root`.
  auto join = [&](size_t root, size_t other) {
    parent[other] = root;
    holdsArgument[root] = holdsArgument[root] || holdsArgument[other];
    holdsResult[root] = holdsResult[root] || holdsResult[other];
    lastStep[root] = std::max(lastStep[root], lastStep[other]);
  };
  for (auto [index, tensor] : llvm::enumerate(tensors)) {
    Operation *op = tensor.getDefiningOp();
    if (!op || !isView(op))
      continue;
    size_t inputBuffer = indexOf.lookup(op->getOperand(0));
    if (!wanted(inputBuffer, index))
      continue;
    size_t input = find(inputBuffer), view = find(index);
    if (buffers[input].bytes != buffers[view].bytes ||
        (holdsResult[input] && (holdsResult[view] || holdsArgument[view])) ||
        (holdsResult[view] && holdsArgument[input]))
      continue;
    join(input, view);
  }
  // A state update in place (an optimizer's, or batch normalization's
  // running statistics): a result that is the next value of an argument,
  // where nothing reads the argument's bytes after the update (no view of
  // it either), takes those bytes. The runtime updates in place, and the
  // driver has nothing to copy between steps.
  for (auto [position, result] : llvm::enumerate(results)) {
    auto target = function.getResultAttrOfType<IntegerAttr>(
        static_cast<unsigned>(position), kUpdatesAttr);
    Operation *op = result.getDefiningOp();
    if (!target || !op || target.getInt() < 0 ||
        target.getInt() >= block.getNumArguments())
      continue;
    Value argument = block.getArgument(target.getInt());
    if (getUpdatedInput(cast<OpResult>(result)) != argument)
      continue;
    size_t state = find(indexOf.lookup(argument));
    size_t next = find(indexOf.lookup(result));
    if (state == next || buffers[state].bytes != buffers[next].bytes ||
        holdsResult[state] || holdsArgument[next] ||
        lastStep[state] > buffers[indexOf.lookup(result)].firstStep)
      continue;
    // The op must read those bytes through the replaced operand alone (not
    // also as, say, batch norm's bias, or through a view): the runtime lets
    // an output be an input, but not overlap another.
    auto readsState = [&](Value operand) {
      auto found = indexOf.find(operand);
      return found != indexOf.end() && find(found->second) == state;
    };
    if (llvm::count_if(op->getOperands(), readsState) != 1)
      continue;
    join(state, next);
  }
  SharedBuffers shared;
  shared.groupOf.resize(buffers.size());
  for (size_t index = 0; index < buffers.size(); ++index) {
    if (find(index) != index)
      continue;
    shared.groupOf[index] = shared.groups.size();
    shared.groups.push_back(buffers[index]);
  }
  for (size_t index = 0; index < buffers.size(); ++index) {
    size_t group = shared.groupOf[find(index)];
    shared.groupOf[index] = group;
    planning::ArenaBuffer &merged = shared.groups[group];
    merged.firstStep = std::min(merged.firstStep, buffers[index].firstStep);
    merged.lastStep = std::max(merged.lastStep, buffers[index].lastStep);
  }
  return shared;
}

/// Lays out the device buffers, the first `tensors.size()` of which hold
/// `tensors` (the rest are workspaces), with views sharing their input's
/// bytes where that does not make the arena larger (isView; the lowering
/// copies nothing for them) and state updates in place. Four layouts are
/// tried: nothing shared, which is the layout the planner checked against
/// the budget; the updates in place; those and the views whose input is not
/// used after them (neither holds a byte longer than before); and those and
/// every view. The smallest arena wins; of equal arenas, the one closest to
/// its own liveness peak (the layout's promise), then the one sharing more.
planning::ArenaLayout
layOutWithViews(const std::vector<planning::ArenaBuffer> &buffers,
                ArrayRef<Value> tensors, func::FuncOp function,
                int64_t alignment) {
  planning::ArenaLayout best = planning::layOutArena(buffers, alignment);
  size_t bestGroups = buffers.size();
  auto consider = [&](const SharedBuffers &shared) {
    if (shared.groups.size() >= bestGroups)
      return;
    planning::ArenaLayout layout =
        planning::layOutArena(shared.groups, alignment);
    if (std::make_pair(layout.arenaBytes,
                       layout.arenaBytes - layout.peakBytes) >
        std::make_pair(best.arenaBytes, best.arenaBytes - best.peakBytes))
      return;
    best.arenaBytes = layout.arenaBytes;
    best.peakBytes = layout.peakBytes;
    for (size_t index = 0; index < buffers.size(); ++index)
      best.offsets[index] = layout.offsets[shared.groupOf[index]];
    bestGroups = shared.groups.size();
  };
  SharedBuffers updates = shareViews(buffers, tensors, function,
                                     [](size_t, size_t) { return false; });
  SharedBuffers dying =
      shareViews(buffers, tensors, function, [&](size_t input, size_t view) {
        return buffers[input].lastStep <= buffers[view].firstStep;
      });
  SharedBuffers every = shareViews(buffers, tensors, function,
                                   [](size_t, size_t) { return true; });
  consider(updates);
  consider(dying);
  consider(every);
  return best;
}

struct AssignArenaPass
    : public mlir::lethe::impl::AssignArenaPassBase<AssignArenaPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return markAllAnalysesPreserved();
    if (alignment <= 0 || !llvm::isPowerOf2_64(alignment)) {
      emitError(func.getLoc(), "lethe-assign-arena: alignment must be a "
                               "power of two, got ")
          << static_cast<int64_t>(alignment);
      return signalPassFailure();
    }
    // Times play no part in lifetimes; any profile will do.
    planning::DeviceProfile profile;
    std::string error;
    if (!planning::loadDeviceProfile("cpu", profile, error)) {
      emitError(func.getLoc(), "lethe-assign-arena: ") << error;
      return signalPassFailure();
    }
    FailureOr<FunctionPlanningProblem> extracted =
        extractPlanningProblem(func, profile, 0);
    if (failed(extracted))
      return signalPassFailure();
    planning::ScheduleBuffers buffers =
        planning::getScheduleBuffers(extracted->problem, extracted->schedule);
    if (!buffers.valid) {
      emitError(func.getLoc(), "lethe-assign-arena: @")
          << func.getName() << " does not run as written: " << buffers.error;
      return signalPassFailure();
    }
    planning::ArenaLayout host = planning::layOutArena(buffers.host, alignment);

    // The device buffers come in the order their tensors are made: the
    // arguments, then the results of each op in order; then the workspaces,
    // by step. Host buffers come in the order of each value's first offload.
    SmallVector<Value> tensors;
    auto takeBuffer = [&](Value value, int64_t step) -> LogicalResult {
      size_t next = tensors.size();
      if (next >= buffers.device.size() ||
          buffers.device[next].value != extracted->valueIds.lookup(value) ||
          buffers.device[next].firstStep != step)
        return emitError(value.getLoc(), "lethe-assign-arena: internal "
                                         "error: the tensors and the "
                                         "buffers of the schedule differ");
      tensors.push_back(value);
      return success();
    };
    Block &block = func.getBody().front();
    for (BlockArgument argument : block.getArguments())
      if (failed(takeBuffer(argument, 0)))
        return signalPassFailure();
    int64_t step = 0;
    for (Operation &op : block.without_terminator()) {
      if (!isa<OffloadOp>(op))
        for (Value result : op.getResults())
          if (failed(takeBuffer(result, step)))
            return signalPassFailure();
      ++step;
    }
    planning::ArenaLayout device =
        layOutWithViews(buffers.device, tensors, func, alignment);

    Builder builder(&getContext());
    size_t next = 0;
    auto takeOffset = [&]() { return device.offsets[next++]; };
    for (BlockArgument argument : block.getArguments())
      func.setArgAttr(argument.getArgNumber(), kOffsetAttr,
                      builder.getI64IntegerAttr(takeOffset()));
    llvm::DenseMap<int64_t, int64_t> workspaceOffsets;
    for (auto [index, buffer] : llvm::enumerate(buffers.device))
      if (buffer.node >= 0)
        workspaceOffsets[buffer.firstStep] = device.offsets[index];
    llvm::DenseMap<int, int64_t> hostOffsets;
    for (auto [index, buffer] : llvm::enumerate(buffers.host))
      hostOffsets[buffer.value] = host.offsets[index];
    step = 0;
    for (Operation &op : block.without_terminator()) {
      if (auto offload = dyn_cast<OffloadOp>(op)) {
        op.setAttr(kHostOffsetAttr,
                   builder.getI64IntegerAttr(hostOffsets.lookup(
                       extracted->valueIds.lookup(offload.getInput()))));
      } else if (op.getNumResults() > 0) {
        SmallVector<int64_t> offsets;
        for (size_t i = 0, e = op.getNumResults(); i < e; ++i)
          offsets.push_back(takeOffset());
        op.setAttr(kOffsetsAttr, builder.getDenseI64ArrayAttr(offsets));
      }
      auto workspace = workspaceOffsets.find(step);
      if (workspace != workspaceOffsets.end())
        op.setAttr(kWorkspaceOffsetAttr,
                   builder.getI64IntegerAttr(workspace->second));
      else
        op.removeAttr(kWorkspaceOffsetAttr);
      ++step;
    }
    func->setAttr(
        kArenaAttr,
        builder.getDictionaryAttr(
            {builder.getNamedAttr("size",
                                  builder.getI64IntegerAttr(device.arenaBytes)),
             builder.getNamedAttr("liveness_peak",
                                  builder.getI64IntegerAttr(device.peakBytes)),
             builder.getNamedAttr("alignment",
                                  builder.getI64IntegerAttr(alignment)),
             builder.getNamedAttr(
                 "host_size", builder.getI64IntegerAttr(host.arenaBytes))}));
    arenaBytes = device.arenaBytes;
    livenessPeak = device.peakBytes;
    hostBytes = host.arenaBytes;
  }
};

} // namespace
