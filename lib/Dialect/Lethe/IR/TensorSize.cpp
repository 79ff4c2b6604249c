//===- TensorSize.cpp - Element counts and byte sizes of tensors ----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/TensorSize.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

int64_t lethe::getElementSizeInBytes(Type elementType) {
  if (auto complex = dyn_cast<ComplexType>(elementType))
    return 2 * getElementSizeInBytes(complex.getElementType());
  if (elementType.isIndex())
    return 8;
  unsigned bits = elementType.getIntOrFloatBitWidth();
  return (static_cast<int64_t>(bits) + 7) / 8;
}

int64_t lethe::getNumElements(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.hasStaticShape() ? shaped.getNumElements() : 0;
  return 1;
}

std::optional<int64_t> lethe::getSizeInBytes(Type type) {
  if (auto tensor = dyn_cast<TensorType>(type)) {
    if (!tensor.hasStaticShape())
      return std::nullopt;
    return tensor.getNumElements() *
           getElementSizeInBytes(tensor.getElementType());
  }
  if (type.isIntOrIndexOrFloat() || isa<ComplexType>(type))
    return getElementSizeInBytes(type);
  return 0;
}

int64_t lethe::getTotalSizeInBytes(TypeRange types) {
  int64_t total = 0;
  for (Type type : types)
    total += getSizeInBytes(type).value_or(0);
  return total;
}
