//===- Interpreter.h - Reference interpreter of lethe IR --------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Executes a `lethe` function on the CPU, op by op in the order written, with
// the CPU backend of the runtime (runtime/include/lethe_rt.h). It is the
// oracle of Lethe's tests: a pass that rewrites a function must leave the
// values this interpreter computes unchanged.
//
// Memory: each op's results are allocated when it runs and every tensor is
// freed right after its last use (arguments included), so the live bytes the
// interpreter holds follow the unplanned schedule; it records their peak.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_INTERPRETER_INTERPRETER_H
#define LETHE_INTERPRETER_INTERPRETER_H

#include "lethe_rt.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <memory>
#include <vector>

namespace mlir::lethe {

/// A tensor the interpreter owns: its type and its bytes (row-major).
class HostTensor {
public:
  HostTensor() = default;
  /// A zero-filled tensor of `type` (a statically shaped ranked tensor).
  explicit HostTensor(RankedTensorType type);

  RankedTensorType getType() const { return type; }
  /// Bytes of the data (the element size times the number of elements).
  int64_t getSizeInBytes() const { return bytes.size(); }
  char *data() { return bytes.data(); }
  const char *data() const { return bytes.data(); }
  /// The runtime's descriptor of this tensor (valid while it lives).
  lethe_rt_tensor view();

  /// Element `index` converted to double (f16/bf16 decoded, i1 as 0/1).
  double getAsDouble(int64_t index) const;

private:
  RankedTensorType type;
  std::vector<char> bytes;
};

/// The runtime dtype of an MLIR element type, or failure if it has none.
FailureOr<lethe_rt_dtype> getRuntimeDtype(Type elementType);

/// Executes functions of a module.
class Interpreter {
public:
  Interpreter();
  ~Interpreter();

  /// Runs `function` on `arguments` (one per function argument, of its type;
  /// moved from). Arguments with a `lethe.initializer` attribute may be given
  /// as null tensors (a default HostTensor): their initial value is used.
  /// Emits an error at the failing op and fails on a runtime error.
  FailureOr<std::vector<HostTensor>> run(func::FuncOp function,
                                         std::vector<HostTensor> arguments);

  /// Peak of the device tensor bytes held during the last run, the workspace
  /// of the op running included (host copies, values of type !lethe.host, do
  /// not count).
  int64_t getPeakBytes() const { return peakBytes; }

  /// Executes the single op `op` on `operands` into the allocated `results`
  /// (one per result, of its type). Emits an error at `op` and fails when
  /// the op is not supported or the runtime reports an error.
  LogicalResult executeOne(Operation &op, ArrayRef<HostTensor *> operands,
                           MutableArrayRef<HostTensor> results);

private:
  lethe_rt_context *context;
  int64_t peakBytes = 0;
};

/// The value of an elements attribute (dense or dense resource) as a tensor.
FailureOr<HostTensor> tensorFromAttribute(ElementsAttr attribute);

} // namespace mlir::lethe

#endif // LETHE_INTERPRETER_INTERPRETER_H
