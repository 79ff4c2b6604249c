//===- Attributes.h - The attributes of a Lethe training step --*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The argument, result and op attributes the importer and the passes put on
// a model function, which drivers (lethe-run, lethec) read.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_TRANSFORMS_ATTRIBUTES_H
#define LETHE_DIALECT_LETHE_TRANSFORMS_ATTRIBUTES_H

#include "llvm/ADT/StringRef.h"

namespace mlir::lethe {

using llvm::StringLiteral;

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

/// Where --lethe-assign-arena put a value: an argument's offset in the
/// arena, each result's (an array on the op), the op's workspace (on an op
/// whose cost interface reports workspace: a block of that many bytes held
/// while the op runs), an offload's slot in the host pool, and the
/// function's arena (size, host_size, alignment, liveness_peak).
inline constexpr StringLiteral kOffsetAttr = "lethe.offset";
inline constexpr StringLiteral kOffsetsAttr = "lethe.offsets";
inline constexpr StringLiteral kWorkspaceOffsetAttr = "lethe.workspace_offset";
inline constexpr StringLiteral kHostOffsetAttr = "lethe.host_offset";
inline constexpr StringLiteral kArenaAttr = "lethe.arena";

} // namespace mlir::lethe

#endif // LETHE_DIALECT_LETHE_TRANSFORMS_ATTRIBUTES_H
