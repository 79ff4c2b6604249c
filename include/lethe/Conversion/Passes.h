//===- Passes.h - Lethe conversion passes -----------------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Declares the conversions out of the `lethe` dialect and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_CONVERSION_PASSES_H
#define LETHE_CONVERSION_PASSES_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::lethe {

#define GEN_PASS_DECL
#include "lethe/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lethe/Conversion/Passes.h.inc"

} // namespace mlir::lethe

#endif // LETHE_CONVERSION_PASSES_H
