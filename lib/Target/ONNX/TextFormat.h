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

/// Where the text format went wrong: the parser's message and its position
/// (1-based; 0 when the parser named none).
struct TextParseError {
  std::string message;
  unsigned line = 0, column = 0;
};

/// Parses `text` (the ONNX text format) into `model`. Returns false, with a
/// one-line message and its position in `error`, when the text is not a
/// model.
bool parseONNXText(std::string_view text, onnx::ModelProto &model,
                   TextParseError &error);

} // namespace mlir::lethe::onnx_import

#endif // LETHE_LIB_TARGET_ONNX_TEXTFORMAT_H
