//===- MemoryProfile.h - Memory of the unplanned schedule -------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The memory profile of a function: for every tensor value, its size in bytes
// and its live range in op order, and the workspace of every op that needs
// one (the cost interface's getWorkspaceBytes), and from those the bytes live
// at each op and their peak. This is the memory the function needs when it runs
// its ops in the order they are written and frees each tensor after its last
// use (the unplanned schedule); the memory planner starts from it.
//
// Conventions:
//  - Ops of the function's single block are numbered 0, 1, ... in order, the
//    terminator included. An op with regions counts as one op: a use inside
//    its regions is a use at its position.
//  - A function argument is live from op 0 to its last use (the caller may
//    free it after that); an op result from its op to its last use. A value
//    without uses is live at its defining op only. A value returned by the
//    function is live up to the terminator.
//  - An op's operands and results are live together at that op: a kernel
//    reads its inputs while it writes its outputs. So is its workspace, which
//    is live at that op only.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_ANALYSIS_MEMORYPROFILE_H
#define LETHE_ANALYSIS_MEMORYPROFILE_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <vector>

namespace mlir::lethe {

/// A buffer of `sizeInBytes` live from step `begin` to step `end`, both
/// included. Plain data, so that the liveness arithmetic can be tested and
/// reused (by the planner) without IR.
struct LiveInterval {
  int64_t sizeInBytes = 0;
  int64_t begin = 0;
  int64_t end = 0;
};

/// Bytes live at each of the steps 0 .. numSteps-1 when the buffers
/// `intervals` are allocated at their begin and freed after their end.
/// Intervals must lie within [0, numSteps).
std::vector<int64_t> computeLiveBytes(ArrayRef<LiveInterval> intervals,
                                      int64_t numSteps);

/// The highest value of a live-bytes curve and the first step at which it is
/// reached; {0, -1} for an empty curve.
struct Peak {
  int64_t bytes = 0;
  int64_t step = -1;
};
Peak findPeak(ArrayRef<int64_t> liveBytes);

/// The memory profile of one function (see the file comment). Construct it,
/// call run(), then query or print it.
class MemoryProfile {
public:
  /// One tensor value of the function and its lifetime.
  struct ValueInfo {
    Value value;
    LiveInterval interval;
  };
  /// The workspace of one op, live at that op only.
  struct WorkspaceInfo {
    Operation *op;
    LiveInterval interval;
  };

  /// Profiles `funcOp`, a function-like op (`func.func`). Nothing is computed
  /// until run().
  explicit MemoryProfile(Operation *funcOp);

  /// Computes the profile. Fails, with a diagnostic on the offending op or
  /// value, when the function has more than one block or a tensor without a
  /// static shape. A declaration (no body) has an empty profile.
  LogicalResult run();

  /// The profiled function.
  Operation *getFunction() const { return funcOp; }
  /// The ops of the function body in schedule order.
  ArrayRef<Operation *> getOps() const { return ops; }
  /// Every tensor value: the arguments first, then op results in order.
  ArrayRef<ValueInfo> getValues() const { return values; }
  /// Every op with workspace, in order.
  ArrayRef<WorkspaceInfo> getWorkspaces() const { return workspaces; }
  /// Bytes live at each op (indexed like getOps()).
  ArrayRef<int64_t> getLiveBytes() const { return liveBytes; }
  /// The peak of live bytes; its step indexes getOps().
  Peak getPeak() const { return peak; }
  /// The op at which the peak first occurs, or null for an empty body.
  Operation *getPeakOp() const {
    return peak.step < 0 ? nullptr : ops[peak.step];
  }

  /// Prints the values with sizes and live ranges, the workspaces, the live
  /// bytes at each op and the peak, in a stable textual form that tests
  /// check.
  void print(raw_ostream &os) const;

private:
  Operation *funcOp;
  SmallVector<Operation *> ops;
  SmallVector<ValueInfo> values;
  SmallVector<WorkspaceInfo> workspaces;
  std::vector<int64_t> liveBytes;
  Peak peak;
};

} // namespace mlir::lethe

#endif // LETHE_ANALYSIS_MEMORYPROFILE_H
