//===- LetheTypes.h - Lethe types -------------------------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The types of the `lethe` dialect (LetheTypes.td).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHETYPES_H
#define LETHE_DIALECT_LETHE_IR_LETHETYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "lethe/Dialect/Lethe/IR/LetheTypes.h.inc"

#endif // LETHE_DIALECT_LETHE_IR_LETHETYPES_H
