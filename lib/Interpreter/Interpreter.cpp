//===- Interpreter.cpp - Reference interpreter of lethe IR ----------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The run loop (allocation, freeing after the last use, peak accounting) and
// tensors. The mapping of each op onto runtime kernels is in OpExecution.cpp.
//
//===----------------------------------------------------------------------===//

#include "lethe/Interpreter/Interpreter.h"

#include "OpExecution.h"

#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"

#include <cstring>

using namespace mlir;
using namespace mlir::lethe;

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

HostTensor::HostTensor(RankedTensorType type)
    : type(type), bytes(lethe::getSizeInBytes(type).value_or(0), 0) {}

FailureOr<lethe_rt_dtype> lethe::getRuntimeDtype(Type elementType) {
  if (elementType.isF16())
    return LETHE_RT_F16;
  if (elementType.isBF16())
    return LETHE_RT_BF16;
  if (elementType.isF32())
    return LETHE_RT_F32;
  if (elementType.isF64())
    return LETHE_RT_F64;
  auto integer = dyn_cast<IntegerType>(elementType);
  if (!integer || integer.isSigned())
    return failure();
  if (integer.isUnsigned()) {
    switch (integer.getWidth()) {
    case 8:
      return LETHE_RT_U8;
    case 16:
      return LETHE_RT_U16;
    case 32:
      return LETHE_RT_U32;
    case 64:
      return LETHE_RT_U64;
    default:
      return failure();
    }
  }
  switch (integer.getWidth()) {
  case 1:
    return LETHE_RT_I1;
  case 8:
    return LETHE_RT_I8;
  case 16:
    return LETHE_RT_I16;
  case 32:
    return LETHE_RT_I32;
  case 64:
    return LETHE_RT_I64;
  default:
    return failure();
  }
}

lethe_rt_tensor HostTensor::view() {
  return lethe_rt_tensor{bytes.data(), *getRuntimeDtype(type.getElementType()),
                         static_cast<int32_t>(type.getRank()),
                         type.getShape().data()};
}

double HostTensor::getAsDouble(int64_t index) const {
  Type elementType = type.getElementType();
  const char *element =
      bytes.data() + index * getElementSizeInBytes(elementType);
  auto read = [&](auto value) {
    std::memcpy(&value, element, sizeof(value));
    return value;
  };
  if (elementType.isF32())
    return read(float{});
  if (elementType.isF64())
    return read(double{});
  if (elementType.isF16() || elementType.isBF16()) {
    uint16_t bits = read(uint16_t{});
    const llvm::fltSemantics &semantics =
        cast<FloatType>(elementType).getFloatSemantics();
    return APFloat(semantics, APInt(16, bits)).convertToDouble();
  }
  switch (*getRuntimeDtype(elementType)) {
  case LETHE_RT_I1:
  case LETHE_RT_U8:
    return read(uint8_t{});
  case LETHE_RT_I8:
    return read(int8_t{});
  case LETHE_RT_I16:
    return read(int16_t{});
  case LETHE_RT_U16:
    return read(uint16_t{});
  case LETHE_RT_I32:
    return read(int32_t{});
  case LETHE_RT_U32:
    return read(uint32_t{});
  case LETHE_RT_U64:
    return static_cast<double>(read(uint64_t{}));
  default:
    return static_cast<double>(read(int64_t{}));
  }
}

FailureOr<HostTensor> lethe::tensorFromAttribute(ElementsAttr attribute) {
  auto type = dyn_cast<RankedTensorType>(attribute.getShapedType());
  if (!type || !type.hasStaticShape() ||
      failed(getRuntimeDtype(type.getElementType())))
    return failure();
  HostTensor tensor(type);
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attribute)) {
    ArrayRef<char> data = resource.getData();
    if (static_cast<int64_t>(data.size()) != tensor.getSizeInBytes())
      return failure();
    std::memcpy(tensor.data(), data.data(), data.size());
    return tensor;
  }
  auto dense = dyn_cast<DenseElementsAttr>(attribute);
  if (!dense)
    return failure();
  if (type.getElementType().isInteger(1)) {
    for (auto [index, value] : llvm::enumerate(dense.getValues<bool>()))
      tensor.data()[index] = value;
    return tensor;
  }
  ArrayRef<char> raw = dense.getRawData();
  int64_t elementSize = getElementSizeInBytes(type.getElementType());
  if (dense.isSplat()) {
    for (int64_t offset = 0; offset < tensor.getSizeInBytes();
         offset += elementSize)
      std::memcpy(tensor.data() + offset, raw.data(), elementSize);
    return tensor;
  }
  if (static_cast<int64_t>(raw.size()) != tensor.getSizeInBytes())
    return failure();
  std::memcpy(tensor.data(), raw.data(), raw.size());
  return tensor;
}

//===----------------------------------------------------------------------===//
// Interpreter
//===----------------------------------------------------------------------===//

Interpreter::Interpreter() : context(lethe_rt_context_create()) {}

Interpreter::~Interpreter() { lethe_rt_context_destroy(context); }

LogicalResult Interpreter::executeOne(Operation &op,
                                      ArrayRef<HostTensor *> operands,
                                      MutableArrayRef<HostTensor> results) {
  return executeOp(context, op, operands, results);
}

FailureOr<std::vector<HostTensor>>
Interpreter::run(func::FuncOp function, std::vector<HostTensor> arguments) {
  peakBytes = 0;
  if (function.isExternal())
    return function.emitError("cannot run a function without a body");
  if (!function.getBody().hasOneBlock())
    return function.emitError("cannot run a function with several blocks");
  Block &block = function.getBody().front();
  if (arguments.size() != block.getNumArguments())
    return function.emitError("expected ")
           << block.getNumArguments() << " arguments, got " << arguments.size();

  llvm::DenseMap<Value, HostTensor> tensors;
  llvm::DenseMap<Value, int64_t> remainingUses;
  // Device bytes: host copies (!lethe.host values) do not count.
  int64_t liveBytes = 0;
  auto deviceBytes = [](Value value, const HostTensor &tensor) -> int64_t {
    return isa<HostTensorType>(value.getType()) ? 0 : tensor.getSizeInBytes();
  };
  auto define = [&](Value value, HostTensor tensor) {
    liveBytes += deviceBytes(value, tensor);
    remainingUses[value] =
        std::distance(value.getUses().begin(), value.getUses().end());
    tensors[value] = std::move(tensor);
  };
  auto release = [&](Value value) {
    auto it = tensors.find(value);
    liveBytes -= deviceBytes(value, it->second);
    tensors.erase(it);
  };

  for (auto [index, argument] : llvm::enumerate(block.getArguments())) {
    HostTensor tensor = std::move(arguments[index]);
    if (!tensor.getType()) {
      auto initializer =
          function.getArgAttrOfType<ElementsAttr>(index, "lethe.initializer");
      FailureOr<HostTensor> initial = failure();
      if (initializer)
        initial = tensorFromAttribute(initializer);
      if (failed(initial))
        return function.emitError("argument ")
               << index << " is not given and has no usable initializer";
      tensor = std::move(*initial);
    }
    if (tensor.getType() != argument.getType())
      return function.emitError("argument ")
             << index << " has type " << tensor.getType() << ", expected "
             << argument.getType();
    define(argument, std::move(tensor));
  }
  peakBytes = liveBytes;

  for (Operation &op : block) {
    if (auto returnOp = dyn_cast<func::ReturnOp>(op)) {
      std::vector<HostTensor> results;
      for (Value operand : returnOp.getOperands())
        results.push_back(tensors.find(operand)->second);
      return results;
    }
    SmallVector<HostTensor *> operands;
    for (Value operand : op.getOperands()) {
      auto it = tensors.find(operand);
      if (it == tensors.end())
        return op.emitError("operand is not a tensor the interpreter holds");
      operands.push_back(&it->second);
    }
    SmallVector<HostTensor> results;
    for (Type type : op.getResultTypes()) {
      if (auto host = dyn_cast<HostTensorType>(type))
        type = host.getTensorType();
      auto tensorType = dyn_cast<RankedTensorType>(type);
      if (!tensorType || !tensorType.hasStaticShape())
        return op.emitError("the interpreter needs statically shaped tensor "
                            "results, got ")
               << type;
      results.emplace_back(tensorType);
    }
    if (failed(executeOp(context, op, operands, results)))
      return failure();
    for (auto [result, tensor] : llvm::zip(op.getResults(), results))
      define(result, std::move(tensor));
    // The op's workspace (executeOp passes it one) is held while it runs.
    peakBytes = std::max(peakBytes, liveBytes + getPlannedWorkspaceBytes(&op));

    // Free what this op used for the last time, and results nobody reads.
    for (Value operand : op.getOperands())
      if (--remainingUses[operand] == 0)
        release(operand);
    for (Value result : op.getResults())
      if (result.use_empty())
        release(result);
  }
  return function.emitError("function body has no func.return");
}
