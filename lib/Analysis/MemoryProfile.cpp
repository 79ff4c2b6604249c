//===- MemoryProfile.cpp - Memory of the unplanned schedule ---------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Analysis/MemoryProfile.h"

#include "lethe/Dialect/Lethe/IR/LetheInterfaces.h"
#include "lethe/Dialect/Lethe/IR/TensorSize.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cassert>

using namespace mlir;
using namespace mlir::lethe;

std::vector<int64_t> lethe::computeLiveBytes(ArrayRef<LiveInterval> intervals,
                                             int64_t numSteps) {
  // Difference array: +size at begin, -size after end, then a prefix sum.
  std::vector<int64_t> delta(numSteps + 1, 0);
  for (const LiveInterval &interval : intervals) {
    assert(0 <= interval.begin && interval.begin <= interval.end &&
           interval.end < numSteps && "interval outside the schedule");
    delta[interval.begin] += interval.sizeInBytes;
    delta[interval.end + 1] -= interval.sizeInBytes;
  }
  std::vector<int64_t> live(numSteps, 0);
  int64_t running = 0;
  for (int64_t step = 0; step < numSteps; ++step) {
    running += delta[step];
    live[step] = running;
  }
  return live;
}

Peak lethe::findPeak(ArrayRef<int64_t> liveBytes) {
  Peak peak;
  for (auto [step, bytes] : llvm::enumerate(liveBytes)) {
    if (peak.step < 0 || bytes > peak.bytes) {
      peak.bytes = bytes;
      peak.step = static_cast<int64_t>(step);
    }
  }
  return peak;
}

MemoryProfile::MemoryProfile(Operation *funcOp) : funcOp(funcOp) {}

LogicalResult MemoryProfile::run() {
  ops.clear();
  values.clear();
  workspaces.clear();
  liveBytes.clear();
  peak = Peak();

  Region &body = funcOp->getRegion(0);
  if (body.empty())
    return success();
  if (!body.hasOneBlock())
    return funcOp->emitError("memory profile needs a function with a single "
                             "block, this one has ")
           << body.getBlocks().size();
  Block &block = body.front();

  llvm::DenseMap<Operation *, int64_t> position;
  for (Operation &op : block) {
    position[&op] = static_cast<int64_t>(ops.size());
    ops.push_back(&op);
  }

  // Records `value`, defined at step `begin`, with a live range ending at its
  // last use (a use nested in a region counts at its top-level ancestor).
  auto addValue = [&](Value value, int64_t begin) -> LogicalResult {
    auto tensorType = dyn_cast<TensorType>(value.getType());
    if (!tensorType)
      return success();
    std::optional<int64_t> size = getSizeInBytes(tensorType);
    if (!size)
      return emitError(value.getLoc(), "memory profile needs static shapes, "
                                       "but a value has type ")
             << tensorType;
    int64_t end = begin;
    for (Operation *user : value.getUsers()) {
      Operation *ancestor = block.findAncestorOpInBlock(*user);
      if (ancestor)
        end = std::max(end, position.lookup(ancestor));
    }
    values.push_back({value, LiveInterval{*size, begin, end}});
    return success();
  };

  for (BlockArgument argument : block.getArguments())
    if (failed(addValue(argument, 0)))
      return failure();
  for (auto [index, op] : llvm::enumerate(ops))
    for (Value result : op->getResults())
      if (failed(addValue(result, static_cast<int64_t>(index))))
        return failure();

  for (auto [index, op] : llvm::enumerate(ops))
    if (int64_t bytes = getPlannedWorkspaceBytes(op); bytes > 0)
      workspaces.push_back({op, LiveInterval{bytes, static_cast<int64_t>(index),
                                             static_cast<int64_t>(index)}});

  SmallVector<LiveInterval> intervals;
  intervals.reserve(values.size() + workspaces.size());
  for (const ValueInfo &info : values)
    intervals.push_back(info.interval);
  for (const WorkspaceInfo &info : workspaces)
    intervals.push_back(info.interval);
  liveBytes = computeLiveBytes(intervals, static_cast<int64_t>(ops.size()));
  peak = findPeak(liveBytes);
  return success();
}

void MemoryProfile::print(raw_ostream &os) const {
  StringRef name = "<anonymous>";
  if (auto function = dyn_cast<FunctionOpInterface>(funcOp))
    name = function.getName();
  os << "memory profile of @" << name << ": " << values.size() << " tensors, "
     << ops.size() << " ops\n";

  AsmState state(funcOp);
  os << "  values:\n";
  for (const ValueInfo &info : values) {
    std::string valueName;
    llvm::raw_string_ostream nameStream(valueName);
    info.value.printAsOperand(nameStream, state);
    std::string typeName;
    llvm::raw_string_ostream typeStream(typeName);
    info.value.getType().print(typeStream);
    os << llvm::formatv("    {0,-8} {1,-28} {2,12} bytes  live {3}..{4}\n",
                        valueName, typeName, info.interval.sizeInBytes,
                        info.interval.begin, info.interval.end);
  }
  if (!workspaces.empty()) {
    os << "  workspace:\n";
    for (const WorkspaceInfo &info : workspaces)
      os << llvm::formatv(
          "    #{0,-4} {1,-31} {2,12} bytes  live {3}..{4}\n",
          info.interval.begin, info.op->getName().getStringRef(),
          info.interval.sizeInBytes, info.interval.begin, info.interval.end);
  }
  os << "  live bytes by op:\n";
  for (auto [index, op] : llvm::enumerate(ops))
    os << llvm::formatv("    #{0,-4} {1,-28} {2,12} bytes\n", index,
                        op->getName().getStringRef(), liveBytes[index]);
  if (Operation *peakOp = getPeakOp())
    os << "  peak: " << peak.bytes << " bytes at op #" << peak.step << " ("
       << peakOp->getName().getStringRef() << ")\n";
  else
    os << "  peak: 0 bytes (empty function)\n";
}
