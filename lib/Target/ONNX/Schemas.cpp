//===- Schemas.cpp - ONNX's operator schemas ------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "Schemas.h"

#include "onnx/defs/schema.h"

using namespace mlir::lethe::onnx_import;

int64_t mlir::lethe::onnx_import::getOperatorVersion(const std::string &opType,
                                                     int64_t opset) {
  try {
    const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
        opType, static_cast<int>(opset), onnx::ONNX_DOMAIN);
    return schema ? schema->SinceVersion() : 0;
  } catch (...) {
    return 0;
  }
}
