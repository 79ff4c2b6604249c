//===- LetheInterfaces.h - Lethe op interfaces ------------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Declares `CostOpInterface`, which every Lethe op implements, and the
// workspace a planned step gives an op.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHEINTERFACES_H
#define LETHE_DIALECT_LETHE_IR_LETHEINTERFACES_H

#include "lethe/Dialect/Lethe/IR/TensorSize.h"
#include "mlir/IR/OpDefinition.h"

#include "lethe/Dialect/Lethe/IR/LetheInterfaces.h.inc"

namespace mlir::lethe {

/// An op's workspace bytes where a measured profile raised them above its
/// cost interface's (--lethe-plan-memory="measured=..."): a backend's
/// library, such as cuDNN for a convolution, asked for that much to run the
/// op its fast way (docs/Executables.md, `workspace_bytes`).
inline constexpr llvm::StringLiteral kWorkspaceBytesAttr =
    "lethe.workspace_bytes";

/// The workspace bytes a planned step gives `op` while it runs: its
/// `lethe.workspace_bytes` where a measured profile set it, else its cost
/// interface's getWorkspaceBytes(); 0 for an op without the interface.
int64_t getPlannedWorkspaceBytes(Operation *op);

} // namespace mlir::lethe

#endif // LETHE_DIALECT_LETHE_IR_LETHEINTERFACES_H
