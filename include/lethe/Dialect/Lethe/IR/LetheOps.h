//===- LetheOps.h - Lethe operations ----------------------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Declares the operations of the `lethe` dialect (generated from LetheOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHEOPS_H
#define LETHE_DIALECT_LETHE_IR_LETHEOPS_H

#include "lethe/Dialect/Lethe/IR/LetheDialect.h"
#include "lethe/Dialect/Lethe/IR/LetheInterfaces.h"
#include "lethe/Dialect/Lethe/IR/LetheTraits.h"
#include "lethe/Dialect/Lethe/IR/LetheTypes.h"
#include "lethe/Dialect/Lethe/IR/ShapeInference.h"
#include "lethe/Dialect/Lethe/IR/TensorSize.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "lethe/Dialect/Lethe/IR/LetheOps.h.inc"

namespace mlir::lethe {

/// Whether `op` is a view: it gives its input's elements, in order, another
/// shape (reshape, flatten, squeeze, unsqueeze), so that its result can be
/// its input's bytes (--lethe-assign-arena shares them where it pays).
bool isView(Operation *op);

/// Whether `op` is an optimizer update (sgd, momentum, adagrad, adam): its
/// results are the next values of its parameter and state, elementwise, so
/// that each may take the bytes of the input it replaces.
bool isOptimizerUpdate(Operation *op);

} // namespace mlir::lethe

#endif // LETHE_DIALECT_LETHE_IR_LETHEOPS_H
