//===- PassUtils.h - Helpers shared by the Lethe passes ---------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// How a pass finds the model function (the attributes the passes put on it
// are in lethe/Dialect/Lethe/Transforms/Attributes.h).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_LIB_DIALECT_LETHE_TRANSFORMS_PASSUTILS_H
#define LETHE_LIB_DIALECT_LETHE_TRANSFORMS_PASSUTILS_H

#include "lethe/Dialect/Lethe/Transforms/Attributes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace mlir::lethe {

/// The model function a pass works on: the function named `name` if it is
/// given, else @main, else the module's only function with a body. Emits an
/// error prefixed with `passName` and fails when there is none.
FailureOr<func::FuncOp> findModelFunction(ModuleOp module, StringRef name,
                                          StringRef passName);

/// The training step a pass plans or lays out: the function named `name` if
/// it is given, else @train_step (the step --lethe-autodiff makes, and the
/// training graph of an imported ONNX model, which keeps its inference graph
/// as @main beside it), else @main, else the module's only function with a
/// body. Emits an error prefixed with `passName` and fails when there is
/// none.
FailureOr<func::FuncOp> findTrainingStep(ModuleOp module, StringRef name,
                                         StringRef passName);

/// The argument of `func` marked `lethe.step`, added (a tensor<i64> named
/// "step", appended to the arguments) when there is none.
BlockArgument getOrAddStepArgument(func::FuncOp func);

/// The index of the argument of `func` marked `lethe.step`, if any.
std::optional<unsigned> findStepArgument(func::FuncOp func);

} // namespace mlir::lethe

#endif // LETHE_LIB_DIALECT_LETHE_TRANSFORMS_PASSUTILS_H
