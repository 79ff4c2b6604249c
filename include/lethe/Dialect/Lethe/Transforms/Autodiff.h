//===- Autodiff.h - Reverse-mode differentiation of lethe ops ---*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The reverse sweep behind --lethe-autodiff, for other clients: the ONNX
// importer builds ONNX's `Gradient` operator with it.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_TRANSFORMS_AUTODIFF_H
#define LETHE_DIALECT_LETHE_TRANSFORMS_AUTODIFF_H

#include "mlir/IR/Builders.h"

namespace mlir::lethe {

/// Builds, at `builder`'s insertion point, the gradient of `y` (a float
/// tensor; of the sum of its elements when it has several) with respect to
/// each of `xs` (float tensors: arguments or values of the insertion
/// point's block, taken as independent variables). The ops differentiated
/// are those of that block before the insertion point that lie on a path
/// from an x to y. An x that y does not depend on gets zeros. Fails, after
/// an error at the op, when such an op has no gradient rule.
FailureOr<SmallVector<Value>> buildGradients(OpBuilder &builder, Value y,
                                             ArrayRef<Value> xs);

} // namespace mlir::lethe

#endif // LETHE_DIALECT_LETHE_TRANSFORMS_AUTODIFF_H
