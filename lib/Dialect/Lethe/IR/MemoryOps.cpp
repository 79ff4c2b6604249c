//===- MemoryOps.cpp - Memory operations ----------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Costs and verifiers of offload, prefetch and release (LetheMemoryOps.td).
// A copy reads its input once and writes its result once, which the default
// cost methods already say; release moves nothing.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheOps.h"

using namespace mlir;
using namespace mlir::lethe;

int64_t ReleaseOp::getBytesRead() { return 0; }
int64_t ReleaseOp::getBytesWritten() { return 0; }

int64_t OffloadOp::getBytesRead() {
  return getSizeInBytes(getInput().getType()).value_or(0);
}
int64_t OffloadOp::getBytesWritten() { return 0; }

int64_t PrefetchOp::getBytesRead() { return 0; }
int64_t PrefetchOp::getBytesWritten() {
  return getSizeInBytes(getOutput().getType()).value_or(0);
}

LogicalResult ReleaseOp::verify() {
  // The memory is freed once the offload's copy is done, so there must be
  // one before, and nothing may read the tensor afterwards.
  Operation *self = getOperation();
  bool offloaded = false;
  for (Operation *user : getInput().getUsers()) {
    if (user == self || user->getBlock() != self->getBlock())
      continue;
    if (isa<OffloadOp>(user) && user->isBeforeInBlock(self))
      offloaded = true;
    else if (self->isBeforeInBlock(user))
      return emitOpError("releases a tensor that '")
             << user->getName() << "' uses afterwards";
  }
  if (!offloaded)
    return emitOpError("releases a tensor that no earlier lethe.offload "
                       "copies to the host; only offloaded tensors are "
                       "released");
  return success();
}
