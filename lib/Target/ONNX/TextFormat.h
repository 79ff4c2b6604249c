//===- TextFormat.h - Parse the ONNX text format ----------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// A wall around ONNX's OnnxParser: it may throw, while the rest of Lethe is
// built without exceptions, so it lives in a library of its own that catches
// everything and reports a message.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_LIB_TARGET_ONNX_TEXTFORMAT_H
#define LETHE_LIB_TARGET_ONNX_TEXTFORMAT_H

#include "onnx/onnx_pb.h"

#include <string>
#include <string_view>

namespace mlir::lethe::onnx_import {

/// Parses `text` (the ONNX text format) into `model`; returns "" on success,
/// otherwise a one-line message saying what is wrong.
std::string parseONNXText(std::string_view text, onnx::ModelProto &model);

} // namespace mlir::lethe::onnx_import

#endif // LETHE_LIB_TARGET_ONNX_TEXTFORMAT_H
