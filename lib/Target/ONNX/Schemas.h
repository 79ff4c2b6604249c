//===- Schemas.h - ONNX's operator schemas ----------------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Questions to ONNX's operator schema registry, behind the same wall as the
// text-format parser (see TextFormat.h).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_LIB_TARGET_ONNX_SCHEMAS_H
#define LETHE_LIB_TARGET_ONNX_SCHEMAS_H

#include <cstdint>
#include <string>

namespace mlir::lethe::onnx_import {

/// The version of the default domain's operator `opType` in force at
/// `opset`: the opset that last changed it (its since_version), or 0 when
/// the operator does not exist at that opset.
int64_t getOperatorVersion(const std::string &opType, int64_t opset);

} // namespace mlir::lethe::onnx_import

#endif // LETHE_LIB_TARGET_ONNX_SCHEMAS_H
