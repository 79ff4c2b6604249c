//===- TextFormat.cpp - Parse the ONNX text format ------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Compiled with exceptions (see CMakeLists.txt): OnnxParser may throw on
// malformed input, and nothing may escape into code built without them.
//
//===----------------------------------------------------------------------===//

#include "TextFormat.h"

#include "onnx/defs/parser.h"

#include <exception>

std::string mlir::lethe::onnx_import::parseONNXText(std::string_view text,
                                                    onnx::ModelProto &model) {
  std::string copy(text); // the parser needs a null-terminated string
  try {
    onnx::Status status = onnx::OnnxParser::Parse(model, copy.c_str());
    if (!status.IsOK()) {
      std::string message = status.ErrorMessage();
      for (char &c : message)
        if (c == '\n')
          c = ' ';
      return message.empty() ? "syntax error" : message;
    }
    return "";
  } catch (const std::exception &error) {
    return std::string("syntax error: ") + error.what();
  } catch (...) {
    return "syntax error";
  }
}
