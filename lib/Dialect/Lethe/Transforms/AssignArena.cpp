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
#include "llvm/Support/MathExtras.h"

namespace mlir::lethe {
#define GEN_PASS_DEF_ASSIGNARENAPASS
#include "lethe/Dialect/Lethe/Transforms/Passes.h.inc"
} // namespace mlir::lethe

using namespace mlir;
using namespace mlir::lethe;

namespace {

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
    planning::ArenaLayout device =
        planning::layOutArena(buffers.device, alignment);
    planning::ArenaLayout host = planning::layOutArena(buffers.host, alignment);

    // The device buffers come in the order their tensors are made: the
    // arguments, then the results of each op in order; then the workspaces,
    // by step. Host buffers come in the order of each value's first offload.
    Builder builder(&getContext());
    size_t next = 0;
    auto takeOffset = [&](Value value, int64_t step) -> FailureOr<int64_t> {
      if (next >= buffers.device.size() ||
          buffers.device[next].value != extracted->valueIds.lookup(value) ||
          buffers.device[next].firstStep != step)
        return emitError(value.getLoc(), "lethe-assign-arena: internal "
                                         "error: the tensors and the "
                                         "buffers of the schedule differ");
      return device.offsets[next++];
    };
    Block &block = func.getBody().front();
    for (BlockArgument argument : block.getArguments()) {
      FailureOr<int64_t> offset = takeOffset(argument, 0);
      if (failed(offset))
        return signalPassFailure();
      func.setArgAttr(argument.getArgNumber(), kOffsetAttr,
                      builder.getI64IntegerAttr(*offset));
    }
    llvm::DenseMap<int64_t, int64_t> workspaceOffsets;
    for (auto [index, buffer] : llvm::enumerate(buffers.device))
      if (buffer.node >= 0)
        workspaceOffsets[buffer.firstStep] = device.offsets[index];
    llvm::DenseMap<int, int64_t> hostOffsets;
    for (auto [index, buffer] : llvm::enumerate(buffers.host))
      hostOffsets[buffer.value] = host.offsets[index];
    int64_t step = 0;
    for (Operation &op : block.without_terminator()) {
      if (auto offload = dyn_cast<OffloadOp>(op)) {
        op.setAttr(kHostOffsetAttr,
                   builder.getI64IntegerAttr(hostOffsets.lookup(
                       extracted->valueIds.lookup(offload.getInput()))));
      } else if (op.getNumResults() > 0) {
        SmallVector<int64_t> offsets;
        for (Value result : op.getResults()) {
          FailureOr<int64_t> offset = takeOffset(result, step);
          if (failed(offset))
            return signalPassFailure();
          offsets.push_back(*offset);
        }
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
