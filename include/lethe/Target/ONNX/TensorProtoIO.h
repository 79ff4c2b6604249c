//===- TensorProtoIO.h - Read and write ONNX TensorProto data ---*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The bytes of ONNX TensorProto messages, shared by the importer (initializers
// and constants) and lethe-run (the input_K.pb / output_K.pb files of ONNX's
// test data).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_TARGET_ONNX_TENSORPROTOIO_H
#define LETHE_TARGET_ONNX_TENSORPROTOIO_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/StringRef.h"

#include "onnx/onnx_pb.h"

#include <string>

namespace mlir::lethe {

/// The ONNX data types Lethe supports, for messages.
inline constexpr const char *kSupportedONNXDataTypes =
    "FLOAT, DOUBLE, FLOAT16, BFLOAT16, BOOL, INT8, INT16, INT32, INT64, UINT8, "
    "UINT16, UINT32, UINT64";

/// The MLIR element type of an ONNX TensorProto data type (signless integers
/// for INT*, unsigned ones for UINT*), or null when Lethe does not support it
/// (see kSupportedONNXDataTypes).
Type getElementTypeOfONNX(int32_t dataType, MLIRContext *context);

/// The ONNX data type of an MLIR element type, or 0 (UNDEFINED).
int32_t getONNXDataType(Type elementType);

/// The name of an ONNX data type ("FLOAT", "UINT8", ...).
llvm::StringRef getONNXDataTypeName(int32_t dataType);

/// Reads the elements of `tensor` as little-endian bytes, `elementSize` per
/// element (one per bool), from raw_data, the typed fields or external data
/// (a file relative to `baseDirectory`). Returns "" on success, else a
/// one-line message saying what is wrong.
std::string readTensorBytes(const onnx::TensorProto &tensor,
                            llvm::StringRef baseDirectory, int64_t elementSize,
                            std::string &bytes);

} // namespace mlir::lethe

#endif // LETHE_TARGET_ONNX_TENSORPROTOIO_H
