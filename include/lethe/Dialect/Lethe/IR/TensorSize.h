//===- TensorSize.h - Element counts and byte sizes of tensors --*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// How many elements and bytes a statically shaped tensor occupies. Every
// figure of memory in Lethe (costs, memory profiles, plans, arena layout)
// goes through these functions, so that they agree with one another.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_TENSORSIZE_H
#define LETHE_DIALECT_LETHE_IR_TENSORSIZE_H

#include "mlir/IR/TypeRange.h"
#include "mlir/IR/Types.h"

#include <cstdint>
#include <optional>

namespace mlir::lethe {

/// Bytes one element of `elementType` occupies in memory: its bit width
/// rounded up to whole bytes (an `i1` takes one byte).
int64_t getElementSizeInBytes(Type elementType);

/// Number of elements of a statically shaped tensor type; 1 for any other
/// type (a scalar).
int64_t getNumElements(Type type);

/// Bytes a value of `type` occupies in device memory, or std::nullopt when the
/// type has no static size (a dynamically shaped or unranked tensor). Types
/// that are neither tensors nor scalars (tokens, functions) occupy 0 bytes.
std::optional<int64_t> getSizeInBytes(Type type);

/// Sum of getSizeInBytes over `types`, counting sizeless types as 0.
int64_t getTotalSizeInBytes(TypeRange types);

} // namespace mlir::lethe

#endif // LETHE_DIALECT_LETHE_IR_TENSORSIZE_H
