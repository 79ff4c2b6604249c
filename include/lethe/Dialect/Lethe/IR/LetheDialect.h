//===- LetheDialect.h - The lethe dialect -----------------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Declares the `lethe` dialect class.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHEDIALECT_H
#define LETHE_DIALECT_LETHE_IR_LETHEDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "lethe/Dialect/Lethe/IR/LetheDialect.h.inc"

#endif // LETHE_DIALECT_LETHE_IR_LETHEDIALECT_H
