//===- LetheInterfaces.h - Lethe op interfaces ------------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Declares `CostOpInterface`, which every Lethe op implements.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHEINTERFACES_H
#define LETHE_DIALECT_LETHE_IR_LETHEINTERFACES_H

#include "lethe/Dialect/Lethe/IR/TensorSize.h"
#include "mlir/IR/OpDefinition.h"

#include "lethe/Dialect/Lethe/IR/LetheInterfaces.h.inc"

#endif // LETHE_DIALECT_LETHE_IR_LETHEINTERFACES_H
