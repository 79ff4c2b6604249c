//===- PassUtils.h - Helpers shared by the Lethe passes ---------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The argument and result attributes the importer and the training passes
// put on the model function, and how a pass finds that function.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_LIB_DIALECT_LETHE_TRANSFORMS_PASSUTILS_H
#define LETHE_LIB_DIALECT_LETHE_TRANSFORMS_PASSUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace mlir::lethe {

/// The ONNX name of an argument or result.
inline constexpr StringLiteral kNameAttr = "lethe.name";
/// An argument that holds a model parameter (an ONNX initializer).
inline constexpr StringLiteral kParameterAttr = "lethe.parameter";
/// A parameter that training updates.
inline constexpr StringLiteral kTrainableAttr = "lethe.trainable";
/// The initial value of an argument (a parameter's ONNX initializer, an
/// optimizer state's zeros): what a driver passes when it is given none.
inline constexpr StringLiteral kInitializerAttr = "lethe.initializer";
/// The label argument --lethe-add-loss adds.
inline constexpr StringLiteral kLabelAttr = "lethe.label";
/// The result that is the loss.
inline constexpr StringLiteral kLossAttr = "lethe.loss";
/// A result that is the gradient of the argument at the given index.
inline constexpr StringLiteral kGradientOfAttr = "lethe.gradient_of";
/// A result that is the next value of the argument at the given index (an
/// updated parameter, optimizer state or running statistic): a driver that
/// runs several steps feeds it back into that argument.
inline constexpr StringLiteral kUpdatesAttr = "lethe.updates";
/// The argument that holds the training step's number (a tensor<i64>,
/// counting from 0): dropout masks and optimizer schedules depend on it.
inline constexpr StringLiteral kStepAttr = "lethe.step";

/// The model function a pass works on: the function named `name` if it is
/// given, else @main, else the module's only function with a body. Emits an
/// error prefixed with `passName` and fails when there is none.
FailureOr<func::FuncOp> findModelFunction(ModuleOp module, StringRef name,
                                          StringRef passName);

/// The argument of `func` marked `lethe.step`, added (a tensor<i64> named
/// "step", appended to the arguments) when there is none.
BlockArgument getOrAddStepArgument(func::FuncOp func);

/// The index of the argument of `func` marked `lethe.step`, if any.
std::optional<unsigned> findStepArgument(func::FuncOp func);

} // namespace mlir::lethe

#endif // LETHE_LIB_DIALECT_LETHE_TRANSFORMS_PASSUTILS_H
