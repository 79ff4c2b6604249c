//===- NodeHandlers.cpp - ONNX importers of elementwise ops and constants -===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// One handler per ONNX op type of the default domain (opsets 7-17). Each maps
// the node's inputs and attributes onto a `lethe` op whose shape inference
// checks the operands, so handlers only translate and resolve what ONNX
// leaves to run time (constant inputs become attributes). This file holds the
// elementwise ops, matrix products, constants and the handler table; the
// other categories are in NeuralNetworkHandlers.cpp and TensorHandlers.cpp.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

using namespace mlir;
using namespace mlir::lethe;
using namespace mlir::lethe::onnx_import;

FailureOr<SmallVector<Value>>
onnx_import::getInputs(NodeImporter &node, int count, ArrayRef<int> optional) {
  SmallVector<Value> inputs;
  for (int index = 0; index < count; ++index) {
    FailureOr<Value> input = llvm::is_contained(optional, index)
                                 ? node.optionalInput(index)
                                 : node.input(index);
    if (failed(input))
      return failure();
    if (*input)
      inputs.push_back(*input);
  }
  return inputs;
}

namespace {

/// Fails with "unsupported" unless `value` is a floating-point tensor (the
/// activation ops of the dialect are defined on floats only).
LogicalResult requireFloat(NodeImporter &node, Value value) {
  Type elementType = cast<RankedTensorType>(value.getType()).getElementType();
  if (isa<FloatType>(elementType))
    return success();
  std::string name;
  llvm::raw_string_ostream os(name);
  os << elementType;
  return node.unsupported("Lethe implements it for floating-point tensors "
                          "only, the input is " +
                          name);
}

/// A unary op with no attributes.
template <typename OpT> LogicalResult importUnary(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  if (failed(input) || failed(requireFloat(node, *input)))
    return failure();
  auto op = OpT::create(node.builder, node.loc, *input);
  return node.setOutputs(op->getResults());
}

/// A broadcasting binary op; Pow's exponent is cast to the base's type.
template <typename OpT> LogicalResult importBinary(NodeImporter &node) {
  FailureOr<Value> lhs = node.input(0), rhs = node.input(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  auto lhsType = cast<RankedTensorType>(lhs->getType());
  auto rhsType = cast<RankedTensorType>(rhs->getType());
  // Opset 6 broadcasts only with `broadcast = 1`, aligning the right operand
  // at `axis` (at the end by default): pad its shape with trailing ones so
  // that numpy broadcasting does the same.
  if (node.opset < 7 && node.getInt("broadcast", 0) && node.attribute("axis")) {
    int64_t axis = node.getInt("axis", 0);
    if (axis < 0)
      axis += lhsType.getRank();
    int64_t trailing = lhsType.getRank() - axis - rhsType.getRank();
    if (axis < 0 || trailing < 0)
      return node.emitError()
             << "axis " << node.getInt("axis", 0)
             << " does not place operand B (rank " << rhsType.getRank()
             << ") inside A (rank " << lhsType.getRank() << ")";
    SmallVector<int64_t> shape(rhsType.getShape());
    shape.append(trailing, 1);
    ReshapeOp aligned = buildInferred<ReshapeOp>(
        node, *rhs,
        {node.builder.getNamedAttr("shape",
                                   node.builder.getDenseI64ArrayAttr(shape))});
    if (!aligned)
      return failure();
    rhs = aligned.getResult();
    rhsType = aligned.getType();
  }
  if (std::is_same_v<OpT, PowOp> &&
      lhsType.getElementType() != rhsType.getElementType())
    rhs = CastOp::create(node.builder, node.loc, *rhs,
                         TypeAttr::get(lhsType.getElementType()))
              .getResult();
  return buildAndDefine<OpT>(node, {*lhs, *rhs});
}

LogicalResult importLeakyRelu(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  if (failed(input) || failed(requireFloat(node, *input)))
    return failure();
  auto op = LeakyReluOp::create(
      node.builder, node.loc, *input,
      node.builder.getF32FloatAttr(node.getFloat("alpha", 0.01f)));
  return node.setOutputs(op->getResults());
}

/// Appends a Clip bound to `diagnostic` as the model gives it: an integer
/// or a float.
InFlightDiagnostic &appendClipBound(InFlightDiagnostic &diagnostic,
                                    Attribute bound) {
  if (auto integer = dyn_cast<IntegerAttr>(bound))
    return diagnostic << integer.getInt();
  return diagnostic << ClipOp::getBoundValue(bound);
}

LogicalResult importClip(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  if (failed(input))
    return failure();
  Type element = cast<RankedTensorType>(input->getType()).getElementType();
  if (element.isInteger(1))
    return node.unsupported("Clip needs numbers, the input is i1");
  bool isFloat = isa<FloatType>(element);
  Builder &builder = node.builder;
  Attribute bounds[2];
  if (node.opset < 11) {
    // Before opset 11, min and max are float attributes (of float inputs).
    const char *names[] = {"min", "max"};
    for (int index : {0, 1})
      if (node.attribute(names[index]))
        bounds[index] =
            builder.getF64FloatAttr(node.getFloat(names[index], 0.0f));
  }
  // From opset 11, min and max are optional constant scalar inputs of the
  // input's type.
  for (int index : {1, 2}) {
    if (!node.hasInput(index))
      continue;
    size_t count;
    if (isFloat) {
      FailureOr<SmallVector<double>> value = node.constantFloats(index);
      if (failed(value))
        return failure();
      count = value->size();
      if (count == 1)
        bounds[index - 1] = builder.getF64FloatAttr((*value)[0]);
    } else {
      FailureOr<SmallVector<int64_t>> value = node.constantInts(index);
      if (failed(value))
        return failure();
      count = value->size();
      if (count == 1)
        bounds[index - 1] = builder.getI64IntegerAttr((*value)[0]);
    }
    if (count != 1)
      return node.emitError()
             << "input " << index << " must be a scalar, it has " << count
             << " elements";
  }
  if (ClipOp::areBoundsReversed(bounds[0], bounds[1])) {
    InFlightDiagnostic diagnostic = node.emitError() << "min (";
    appendClipBound(diagnostic, bounds[0]) << ") is greater than max (";
    appendClipBound(diagnostic, bounds[1]) << ")";
    return diagnostic;
  }
  auto op = ClipOp::create(node.builder, node.loc, input->getType(), *input,
                           bounds[0], bounds[1]);
  return node.setOutputs(op->getResults());
}

LogicalResult importWhere(NodeImporter &node) {
  FailureOr<Value> condition = node.input(0), lhs = node.input(1),
                   rhs = node.input(2);
  if (failed(condition) || failed(lhs) || failed(rhs))
    return failure();
  return buildAndDefine<WhereOp>(node, {*condition, *lhs, *rhs});
}

LogicalResult importCast(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  if (failed(input))
    return failure();
  int64_t to = node.getInt("to", 0);
  Type elementType = getElementTypeOfONNX(to, node.builder.getContext());
  if (!elementType)
    return node.unsupported("Lethe has no data type " +
                            getONNXDataTypeName(to).str() + " to cast to");
  auto op = CastOp::create(node.builder, node.loc, *input,
                           TypeAttr::get(elementType));
  return node.setOutputs(op->getResults());
}

/// CastLike (opset 15): a Cast to the element type of input 1, whose values
/// are not read.
LogicalResult importCastLike(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  if (failed(input))
    return failure();
  Type elementType;
  if (std::optional<DenseElementsAttr> like = node.constantInput(1)) {
    elementType = like->getElementType();
  } else {
    FailureOr<Value> target = node.input(1);
    if (failed(target))
      return failure();
    elementType = cast<RankedTensorType>(target->getType()).getElementType();
  }
  auto op = CastOp::create(node.builder, node.loc, *input,
                           TypeAttr::get(elementType));
  return node.setOutputs(op->getResults());
}

LogicalResult importMatMul(NodeImporter &node) {
  FailureOr<Value> lhs = node.input(0), rhs = node.input(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  return buildAndDefine<MatMulOp>(node, {*lhs, *rhs});
}

LogicalResult importGemm(NodeImporter &node) {
  FailureOr<SmallVector<Value>> inputs = getInputs(node, 3, /*optional=*/{2});
  if (failed(inputs))
    return failure();
  Builder &builder = node.builder;
  SmallVector<NamedAttribute> attributes = {
      builder.getNamedAttr("alpha",
                           builder.getF32FloatAttr(node.getFloat("alpha", 1))),
      builder.getNamedAttr("beta",
                           builder.getF32FloatAttr(node.getFloat("beta", 1)))};
  if (node.getInt("transA", 0))
    attributes.push_back(
        builder.getNamedAttr("trans_a", builder.getUnitAttr()));
  if (node.getInt("transB", 0))
    attributes.push_back(
        builder.getNamedAttr("trans_b", builder.getUnitAttr()));
  return buildAndDefine<GemmOp>(node, *inputs, attributes);
}

//===----------------------------------------------------------------------===//
// Values known at import time
//===----------------------------------------------------------------------===//

LogicalResult importIdentity(NodeImporter &node) {
  if (std::optional<DenseElementsAttr> constant = node.constantInput(0)) {
    node.setConstantOutput(0, *constant);
    return success();
  }
  FailureOr<Value> input = node.input(0);
  if (failed(input))
    return failure();
  return node.setOutputs(*input);
}

LogicalResult importConstant(NodeImporter &node) {
  Builder &builder = node.builder;
  DenseElementsAttr value;
  if (const onnx::AttributeProto *attribute = node.attribute("value")) {
    FailureOr<DenseElementsAttr> tensor = node.convertTensor(attribute->t());
    if (failed(tensor))
      return failure();
    value = *tensor;
  } else if (const onnx::AttributeProto *attribute =
                 node.attribute("value_float")) {
    value = DenseElementsAttr::get(
        RankedTensorType::get({}, builder.getF32Type()), attribute->f());
  } else if (const onnx::AttributeProto *attribute =
                 node.attribute("value_floats")) {
    SmallVector<float> floats(attribute->floats().begin(),
                              attribute->floats().end());
    value = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(floats.size())},
                              builder.getF32Type()),
        ArrayRef<float>(floats));
  } else if (const onnx::AttributeProto *attribute =
                 node.attribute("value_int")) {
    value =
        DenseElementsAttr::get(RankedTensorType::get({}, builder.getI64Type()),
                               static_cast<int64_t>(attribute->i()));
  } else if (const onnx::AttributeProto *attribute =
                 node.attribute("value_ints")) {
    SmallVector<int64_t> ints(attribute->ints().begin(),
                              attribute->ints().end());
    value = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(ints.size())},
                              builder.getI64Type()),
        ArrayRef<int64_t>(ints));
  } else {
    return node.unsupported(
        "Lethe reads only its value, value_float(s) and value_int(s) "
        "attributes");
  }
  node.setConstantOutput(0, value);
  return success();
}

LogicalResult importShape(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  if (failed(input))
    return failure();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(input->getType()).getShape();
  // Opset 15 selects dims [start, end), negative values counting from the end.
  int64_t rank = shape.size();
  auto clampDim = [&](int64_t dim) {
    if (dim < 0)
      dim += rank;
    return std::clamp<int64_t>(dim, 0, rank);
  };
  int64_t start = clampDim(node.getInt("start", 0));
  int64_t end = clampDim(node.getInt("end", rank));
  SmallVector<int64_t> dims(shape.begin() + start,
                            shape.begin() + std::max(start, end));
  node.setConstantOutput(
      0, DenseElementsAttr::get(
             RankedTensorType::get({static_cast<int64_t>(dims.size())},
                                   node.builder.getI64Type()),
             ArrayRef<int64_t>(dims)));
  return success();
}

LogicalResult importSize(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  if (failed(input))
    return failure();
  int64_t size = cast<RankedTensorType>(input->getType()).getNumElements();
  node.setConstantOutput(
      0, DenseElementsAttr::get(
             RankedTensorType::get({}, node.builder.getI64Type()), size));
  return success();
}

LogicalResult importConstantOfShape(NodeImporter &node) {
  FailureOr<SmallVector<int64_t>> shape = node.constantInts(0);
  if (failed(shape))
    return failure();
  for (int64_t dim : *shape)
    if (dim < 0)
      return node.emitError() << "the shape has a negative dimension " << dim;
  DenseElementsAttr fill = DenseElementsAttr::get(
      RankedTensorType::get({}, node.builder.getF32Type()), 0.0f);
  if (const onnx::AttributeProto *value = node.attribute("value")) {
    FailureOr<DenseElementsAttr> tensor = node.convertTensor(value->t());
    if (failed(tensor))
      return failure();
    if (tensor->getNumElements() != 1)
      return node.emitError() << "value must have one element, it has "
                              << tensor->getNumElements();
    fill = *tensor;
  }
  auto type = RankedTensorType::get(*shape, fill.getElementType());
  node.setConstantOutput(
      0, DenseElementsAttr::get(type, *fill.value_begin<Attribute>()));
  return success();
}

} // namespace

void onnx_import::addElementwiseHandlers(
    llvm::StringMap<NodeHandler> &handlers) {
  handlers["Neg"] = importUnary<NegOp>;
  handlers["Relu"] = importUnary<ReluOp>;
  handlers["LeakyRelu"] = importLeakyRelu;
  handlers["Sigmoid"] = importUnary<SigmoidOp>;
  handlers["Tanh"] = importUnary<TanhOp>;
  handlers["Erf"] = importUnary<ErfOp>;
  handlers["Exp"] = importUnary<ExpOp>;
  handlers["Log"] = importUnary<LogOp>;
  handlers["Sqrt"] = importUnary<SqrtOp>;
  handlers["Clip"] = importClip;
  handlers["Add"] = importBinary<AddOp>;
  handlers["Sub"] = importBinary<SubOp>;
  handlers["Mul"] = importBinary<MulOp>;
  handlers["Div"] = importBinary<DivOp>;
  handlers["Pow"] = importBinary<PowOp>;
  handlers["Where"] = importWhere;
  handlers["Cast"] = importCast;
  handlers["CastLike"] = importCastLike;
  handlers["MatMul"] = importMatMul;
  handlers["Gemm"] = importGemm;
  handlers["Identity"] = importIdentity;
  handlers["Constant"] = importConstant;
  handlers["Shape"] = importShape;
  handlers["Size"] = importSize;
  handlers["ConstantOfShape"] = importConstantOfShape;
}

const llvm::StringMap<NodeHandler> &onnx_import::getNodeHandlers() {
  static const llvm::StringMap<NodeHandler> handlers = [] {
    llvm::StringMap<NodeHandler> all;
    addElementwiseHandlers(all);
    addNeuralNetworkHandlers(all);
    addTensorHandlers(all);
    return all;
  }();
  return handlers;
}
