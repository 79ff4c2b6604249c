//===- Passes.h - Lethe dialect passes --------------------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Declares the passes on the `lethe` dialect and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_TRANSFORMS_PASSES_H
#define LETHE_DIALECT_LETHE_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::lethe {

#define GEN_PASS_DECL
#include "lethe/Dialect/Lethe/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lethe/Dialect/Lethe/Transforms/Passes.h.inc"

} // namespace mlir::lethe

#endif // LETHE_DIALECT_LETHE_TRANSFORMS_PASSES_H
