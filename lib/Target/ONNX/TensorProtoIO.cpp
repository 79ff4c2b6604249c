//===- TensorProtoIO.cpp - Read and write ONNX TensorProto data -----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Target/ONNX/TensorProtoIO.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>

using namespace mlir;

Type lethe::getElementTypeOfONNX(int32_t dataType, MLIRContext *context) {
  Builder builder(context);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return builder.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return builder.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return builder.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return builder.getBF16Type();
  case onnx::TensorProto::BOOL:
    return builder.getI1Type();
  case onnx::TensorProto::INT8:
    return builder.getIntegerType(8);
  case onnx::TensorProto::INT16:
    return builder.getIntegerType(16);
  case onnx::TensorProto::INT32:
    return builder.getI32Type();
  case onnx::TensorProto::INT64:
    return builder.getI64Type();
  case onnx::TensorProto::UINT8:
    return builder.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::UINT16:
    return builder.getIntegerType(16, /*isSigned=*/false);
  case onnx::TensorProto::UINT32:
    return builder.getIntegerType(32, /*isSigned=*/false);
  case onnx::TensorProto::UINT64:
    return builder.getIntegerType(64, /*isSigned=*/false);
  default:
    return {};
  }
}

int32_t lethe::getONNXDataType(Type elementType) {
  if (elementType.isF32())
    return onnx::TensorProto::FLOAT;
  if (elementType.isF64())
    return onnx::TensorProto::DOUBLE;
  if (elementType.isF16())
    return onnx::TensorProto::FLOAT16;
  if (elementType.isBF16())
    return onnx::TensorProto::BFLOAT16;
  auto integer = dyn_cast<IntegerType>(elementType);
  if (!integer || integer.isSigned())
    return onnx::TensorProto::UNDEFINED;
  bool isUnsigned = integer.isUnsigned();
  switch (integer.getWidth()) {
  case 1:
    return isUnsigned ? onnx::TensorProto::UNDEFINED : onnx::TensorProto::BOOL;
  case 8:
    return isUnsigned ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
  case 16:
    return isUnsigned ? onnx::TensorProto::UINT16 : onnx::TensorProto::INT16;
  case 32:
    return isUnsigned ? onnx::TensorProto::UINT32 : onnx::TensorProto::INT32;
  case 64:
    return isUnsigned ? onnx::TensorProto::UINT64 : onnx::TensorProto::INT64;
  default:
    return onnx::TensorProto::UNDEFINED;
  }
}

llvm::StringRef lethe::getONNXDataTypeName(int32_t dataType) {
  if (onnx::TensorProto::DataType_IsValid(dataType))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dataType));
  return "<invalid>";
}

/// The dims of `tensor`, as "2x3x4".
static std::string formatDims(const onnx::TensorProto &tensor) {
  std::string text;
  for (int64_t dim : tensor.dims())
    text += (text.empty() ? "" : "x") + std::to_string(dim);
  return text;
}

/// Reads the external data of `tensor` into `bytes`.
static std::string readExternalData(const onnx::TensorProto &tensor,
                                    llvm::StringRef baseDirectory,
                                    std::string &bytes) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset")
      offset = std::strtoll(entry.value().c_str(), nullptr, 10);
    else if (entry.key() == "length")
      length = std::strtoll(entry.value().c_str(), nullptr, 10);
  }
  if (location.empty())
    return "it stores its data externally but names no file (no "
           "'location' entry); export the model again";
  llvm::SmallString<256> path(baseDirectory);
  llvm::sys::path::append(path, location);
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return "its data is in external file '" + path.str().str() +
           "', which cannot be read (" + file.getError().message() +
           "); keep the data file next to the model";
  llvm::StringRef contents = (*file)->getBuffer();
  int64_t size = contents.size();
  // Compared without adding, so that no offset or length in the file can
  // overflow.
  if (offset < 0 || offset > size || (length >= 0 && length > size - offset))
    return "external file '" + path.str().str() + "' is too short (" +
           std::to_string(size) + " bytes; the data is " +
           (length < 0 ? std::string("from")
                       : std::to_string(length) + " bytes at") +
           " offset " + std::to_string(offset) +
           "); keep the data file that was exported with the model";
  if (length < 0)
    length = size - offset;
  bytes = contents.substr(offset, length).str();
  return "";
}

std::string lethe::readTensorBytes(const onnx::TensorProto &tensor,
                                   llvm::StringRef baseDirectory,
                                   int64_t elementSize, std::string &bytes) {
  // The element count and byte size, checked before anything is allocated
  // for them: a corrupt file can name any dims.
  int64_t count = 1, byteCount = 0;
  bool overflow = false;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0)
      return "it has a negative dimension " + std::to_string(dim) +
             "; the file is corrupt, export the model again";
    // In order, as the tensor type's element count is taken: dims that
    // overflow before a 0 are refused too.
    overflow |= llvm::MulOverflow(count, dim, count);
  }
  if (overflow || llvm::MulOverflow(count, elementSize, byteCount))
    return "its dims (" + formatDims(tensor) +
           ") hold more bytes than fit in 64 bits; the file is corrupt, "
           "export the model again";
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string message = readExternalData(tensor, baseDirectory, bytes);
    if (!message.empty())
      return message;
  } else if (tensor.has_raw_data()) {
    bytes = tensor.raw_data();
  } else {
    auto copyFrom = [&](const auto &field) -> std::string {
      if (field.size() != count)
        return "it has " + std::to_string(field.size()) + " values for " +
               std::to_string(count) + " elements (dims " + formatDims(tensor) +
               "); the file is corrupt, export the model again";
      bytes.assign(byteCount, 0);
      for (int64_t i = 0; i < count; ++i) {
        // int32_data also holds INT8, INT16, UINT8, UINT16, BOOL and the
        // bits of FLOAT16 and BFLOAT16, and uint64_data holds UINT32: keep
        // the low `elementSize` bytes (little-endian host).
        auto value = field.Get(i);
        std::memcpy(bytes.data() + i * elementSize, &value, elementSize);
      }
      return "";
    };
    std::string message;
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      message = copyFrom(tensor.float_data());
      break;
    case onnx::TensorProto::DOUBLE:
      message = copyFrom(tensor.double_data());
      break;
    case onnx::TensorProto::INT64:
      message = copyFrom(tensor.int64_data());
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      message = copyFrom(tensor.uint64_data());
      break;
    default:
      message = copyFrom(tensor.int32_data());
      break;
    }
    if (!message.empty())
      return message;
  }
  if (static_cast<int64_t>(bytes.size()) != byteCount)
    return "it has " + std::to_string(bytes.size()) + " bytes of data for " +
           std::to_string(count) + " elements of " +
           std::to_string(elementSize) + " bytes (dims " + formatDims(tensor) +
           "); the file is corrupt, export the model again";
  return "";
}
