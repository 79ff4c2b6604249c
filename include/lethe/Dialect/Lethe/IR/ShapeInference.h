//===- ShapeInference.h - Shared result-type inference helpers --*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Helpers that several ops' `inferReturnTypes` share: ONNX broadcasting, axis
// normalization and the diagnostics for bad operands. Inference runs both
// when an op is built without result types and when it is verified, so its
// diagnostics are the verifier's diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_SHAPEINFERENCE_H
#define LETHE_DIALECT_LETHE_IR_SHAPEINFERENCE_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::lethe {

/// Emits `'<opName>' op <message>` at `location` when one is given (as an
/// op's verifier would) and returns failure.
template <typename... Args>
LogicalResult emitInferenceError(std::optional<Location> location,
                                 StringRef opName, Args &&...args) {
  return emitOptionalError(location, "'", opName, "' op ",
                           std::forward<Args>(args)...);
}

/// Result type of an elementwise op on `lhs` and `rhs` under ONNX's
/// multidirectional broadcasting: both must have the same element type and
/// broadcast-compatible shapes. Appends it to `types`.
LogicalResult inferBroadcastType(std::optional<Location> location,
                                 StringRef opName, Type lhs, Type rhs,
                                 SmallVectorImpl<Type> &types);

/// Broadcasts `shapes` together with ONNX's multidirectional rule; fails
/// (without a diagnostic) when two dimensions differ and neither is 1.
FailureOr<SmallVector<int64_t>>
broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes);

/// Maps an ONNX axis in [-rank, rank) to [0, rank); emits `'<opName>' op
/// <what> <axis> is out of range for rank <rank>` and fails otherwise.
FailureOr<int64_t> normalizeAxis(std::optional<Location> location,
                                 StringRef opName, StringRef what, int64_t axis,
                                 int64_t rank);

/// Checks the window attributes of a convolution or pooling op over
/// `spatialShape` (n dims: `kernel`, `strides` and `dilations` of n positive
/// sizes, `pads` of 2n non-negative ones, begins then ends) and returns the
/// output's spatial sizes: `floor((D + pad_begin + pad_end - dilation * (k -
/// 1) - 1) / stride) + 1`, or with `ceilMode` the ceiling, minus one when the
/// last window would start in the end padding (ONNX's and PyTorch's rule).
FailureOr<SmallVector<int64_t>>
inferWindowShape(std::optional<Location> location, StringRef opName,
                 ArrayRef<int64_t> spatialShape, ArrayRef<int64_t> kernel,
                 ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                 ArrayRef<int64_t> dilations, bool ceilMode);

/// Result type of a reduction of `inputType` over `axes` (ONNX: negative
/// axes count from the end, none means all, duplicates are an error).
LogicalResult inferReductionType(std::optional<Location> location,
                                 StringRef opName, Type inputType,
                                 ArrayRef<int64_t> axes, bool keepdims,
                                 SmallVectorImpl<Type> &types);

/// The dims a reduction over `axes` reduces, normalized and sorted.
SmallVector<int64_t> getReducedDims(int64_t rank, ArrayRef<int64_t> axes);

} // namespace mlir::lethe

#endif // LETHE_DIALECT_LETHE_IR_SHAPEINFERENCE_H
