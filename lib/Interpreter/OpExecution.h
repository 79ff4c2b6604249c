//===- OpExecution.h - Run one lethe op with the runtime --------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_LIB_INTERPRETER_OPEXECUTION_H
#define LETHE_LIB_INTERPRETER_OPEXECUTION_H

#include "lethe/Interpreter/Interpreter.h"

namespace mlir::lethe {

/// Executes `op` with the CPU runtime, reading `operands` and writing the
/// already allocated `results`. Emits an error at `op` and fails when the op
/// is not supported or the runtime reports an error.
LogicalResult executeOp(lethe_rt_context *context, Operation &op,
                        ArrayRef<HostTensor *> operands,
                        MutableArrayRef<HostTensor> results);

} // namespace mlir::lethe

#endif // LETHE_LIB_INTERPRETER_OPEXECUTION_H
