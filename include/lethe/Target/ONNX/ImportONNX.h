//===- ImportONNX.h - ONNX to the lethe dialect -----------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Imports an ONNX model (binary protobuf or the ONNX text format) as one
// `func.func` of `lethe` ops with static shapes. Graph inputs become function
// arguments; initializers become arguments too, marked `lethe.parameter`
// (floating-point ones also `lethe.trainable`) and carrying their values as
// dense resource blobs in `lethe.initializer`; graph outputs become results.
// Every argument, result and op keeps its ONNX name (`lethe.name` and the op
// location), so later passes and users can refer to them.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_TARGET_ONNX_IMPORTONNX_H
#define LETHE_TARGET_ONNX_IMPORTONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir::lethe {

/// Options of the ONNX importer.
struct ImportONNXOptions {
  /// Static shapes for graph inputs, by input name: they fix the free
  /// dimensions of those inputs (and must agree with the fixed ones).
  llvm::StringMap<SmallVector<int64_t>> inputShapes;
  /// A directory of `input_K.pb` files (ONNX's test data layout): when set,
  /// the values of the graph's data inputs are known at import time, so that
  /// inputs ONNX allows to be computed at run time (a Reshape's shape, a
  /// Slice's starts, ...) can become attributes. The inputs stay arguments;
  /// the imported function is specialized to these values wherever it
  /// folds one.
  std::string inputValuesDirectory;
};

/// Imports the ONNX model in the main buffer of `sourceMgr`. Returns null
/// after emitting an error (at an unknown location, naming the node and what
/// to do) when the model is malformed or uses what Lethe does not support.
OwningOpRef<ModuleOp> importONNX(llvm::SourceMgr &sourceMgr,
                                 MLIRContext *context,
                                 const ImportONNXOptions &options = {});

/// Parses an `--input-shape` value, `NAME=D0xD1x...` (a scalar: `NAME=`),
/// into `options`; returns an error message, or "" on success.
std::string parseInputShape(StringRef text, ImportONNXOptions &options);

/// Registers `--import-onnx` (with `--input-shape`) with mlir-translate.
void registerImportONNXTranslation();

} // namespace mlir::lethe

#endif // LETHE_TARGET_ONNX_IMPORTONNX_H
