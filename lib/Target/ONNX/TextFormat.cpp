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

#include <cstdio>
#include <exception>

namespace {

using mlir::lethe::onnx_import::TextParseError;

/// OnnxParser's messages read "[ParseError at position (line: L column: C)]",
/// a line "Error context: " with the text around the position, and a line
/// saying what is wrong. Takes the position out (the caller's diagnostic
/// carries it) and keeps what is wrong, on one line.
void splitParserMessage(const std::string &message, TextParseError &error) {
  std::string rest = message;
  unsigned line = 0, column = 0;
  if (std::sscanf(message.c_str(),
                  "[ParseError at position (line: %u column: %u)]", &line,
                  &column) == 2) {
    error.line = line;
    error.column = column;
    // What is wrong follows the context line.
    size_t context = message.find("\nError context:");
    size_t what = context == std::string::npos
                      ? context
                      : message.find('\n', context + 1);
    if (what != std::string::npos)
      rest = message.substr(what + 1);
  }
  for (char &c : rest)
    if (c == '\n')
      c = ' ';
  while (!rest.empty() && rest.back() == ' ')
    rest.pop_back();
  error.message = rest.empty() ? "syntax error" : rest;
}

} // namespace

bool mlir::lethe::onnx_import::parseONNXText(std::string_view text,
                                             onnx::ModelProto &model,
                                             TextParseError &error) {
  std::string copy(text); // the parser needs a null-terminated string
  try {
    onnx::Status status = onnx::OnnxParser::Parse(model, copy.c_str());
    if (!status.IsOK()) {
      splitParserMessage(status.ErrorMessage(), error);
      return false;
    }
    return true;
  } catch (const std::exception &exception) {
    error.message = std::string("syntax error: ") + exception.what();
  } catch (...) {
    error.message = "syntax error";
  }
  return false;
}
