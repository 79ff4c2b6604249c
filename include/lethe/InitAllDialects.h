//===- InitAllDialects.h - Register every dialect Lethe uses ----*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The dialects that Lethe's tools load: `lethe` and the upstream dialects its
// IR mixes with.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_INITALLDIALECTS_H
#define LETHE_INITALLDIALECTS_H

#include "lethe/Dialect/Lethe/IR/LetheDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir::lethe {

/// Adds every dialect that Lethe's tools accept to `registry`.
inline void registerAllDialects(DialectRegistry &registry) {
  registry.insert<LetheDialect, arith::ArithDialect, func::FuncDialect,
                  LLVM::LLVMDialect, tensor::TensorDialect>();
}

} // namespace mlir::lethe

#endif // LETHE_INITALLDIALECTS_H
