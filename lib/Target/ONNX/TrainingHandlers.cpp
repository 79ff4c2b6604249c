//===- TrainingHandlers.cpp - ONNX importers of the training domain -------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The handlers of the `ai.onnx.preview.training` domain (version 1): the
// optimizers Adagrad, Momentum and Adam. Each ONNX node updates any number
// of tensors at once: its inputs are R, T and then one group per role (all
// the X, then all the G, then each state), its outputs all the new X and
// then each new state, group by group. The importer builds one `lethe`
// update op per tensor and defines the outputs in ONNX's order.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

using namespace mlir;
using namespace mlir::lethe;
using namespace mlir::lethe::onnx_import;

namespace {

/// One optimizer's ONNX interface: its attributes (all optional unless
/// listed in `required`) and the number of tensors per updated tensor
/// (X, G and the states).
struct OptimizerSignature {
  ArrayRef<StringRef> attributes;
  ArrayRef<StringRef> required;
  int groups;
};

/// The text of `type`, for diagnostics.
std::string typeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// Checks the node's attributes and the shape of its inputs against
/// `signature`; reads R, T and the groups of tensors (`tensors[k][i]` is
/// tensor i of group k). Fails after a one-line diagnostic.
LogicalResult readOptimizerNode(NodeImporter &node,
                                const OptimizerSignature &signature,
                                Value &rate, Value &step,
                                SmallVector<SmallVector<Value>> &tensors) {
  for (const onnx::AttributeProto &attribute : node.node.attribute()) {
    if (!llvm::is_contained(signature.attributes, attribute.name()))
      return node.unsupported("attribute '" + attribute.name() +
                              "' is not one of ONNX's for this op");
    // Every attribute is a float but Momentum's mode, a string.
    bool isMode = attribute.name() == "mode";
    auto expected =
        isMode ? onnx::AttributeProto::STRING : onnx::AttributeProto::FLOAT;
    if (attribute.type() != expected)
      return node.emitError()
             << "the attribute '" << attribute.name() << "' must be a "
             << (isMode ? "string" : "float");
  }
  for (StringRef name : signature.required)
    if (!node.attribute(name))
      return node.emitError() << "the attribute '" << name << "' is required";

  int count = node.node.input_size() - 2;
  if (count <= 0 || count % signature.groups != 0)
    return node.emitError()
           << "expects the inputs R, T and then " << signature.groups
           << " groups of as many tensors each (X, G and the state), got "
           << node.node.input_size() << " inputs";
  FailureOr<Value> r = node.input(0), t = node.input(1);
  if (failed(r) || failed(t))
    return failure();
  auto rateType = cast<RankedTensorType>(r->getType());
  if (rateType.getRank() != 0 ||
      !(rateType.getElementType().isF32() || rateType.getElementType().isF64()))
    return node.emitError() << "input R (the learning rate) must be a scalar "
                               "of float or double, got "
                            << rateType;
  auto stepType = cast<RankedTensorType>(t->getType());
  if (stepType.getRank() != 0 ||
      !stepType.getElementType().isSignlessInteger(64))
    return node.emitError()
           << "input T (the update count) must be a scalar of int64, got "
           << stepType;
  rate = *r;
  step = *t;

  int perGroup = count / signature.groups;
  tensors.assign(signature.groups, {});
  for (int group = 0; group < signature.groups; ++group) {
    for (int i = 0; i < perGroup; ++i) {
      FailureOr<Value> value = node.input(2 + group * perGroup + i);
      if (failed(value))
        return failure();
      Type elementType =
          cast<RankedTensorType>(value->getType()).getElementType();
      if (!isa<FloatType>(elementType))
        return node.unsupported("Lethe updates floating-point tensors only, "
                                "input " +
                                Twine(2 + group * perGroup + i) + " is " +
                                typeText(value->getType()));
      tensors[group].push_back(*value);
    }
  }
  return success();
}

/// Defines the node's outputs from one op per updated tensor: `results[i]`
/// are the results of tensor i's op (new X, then the new states); ONNX
/// lists all the new X first, then each state's group.
LogicalResult defineGroupedOutputs(NodeImporter &node,
                                   ArrayRef<SmallVector<Value>> results) {
  SmallVector<Value> outputs;
  size_t perTensor = results.front().size();
  for (size_t role = 0; role < perTensor; ++role)
    for (const SmallVector<Value> &tensorResults : results)
      outputs.push_back(tensorResults[role]);
  return node.setOutputs(outputs);
}

/// A float attribute as an MLIR f32 attribute (ONNX's attributes are f32).
NamedAttribute floatAttribute(NodeImporter &node, StringRef name,
                              float defaultValue) {
  return node.builder.getNamedAttr(
      name, node.builder.getF32FloatAttr(node.getFloat(name, defaultValue)));
}

LogicalResult importAdagrad(NodeImporter &node) {
  static const StringRef attributes[] = {"decay_factor", "epsilon",
                                         "norm_coefficient"};
  Value rate, step;
  SmallVector<SmallVector<Value>> tensors;
  if (failed(readOptimizerNode(node, {attributes, {}, 3}, rate, step, tensors)))
    return failure();
  SmallVector<NamedAttribute> attrs{
      floatAttribute(node, "decay_factor", 0.0f),
      floatAttribute(node, "epsilon", 1e-6f),
      floatAttribute(node, "norm_coefficient", 0.0f)};
  SmallVector<SmallVector<Value>> results;
  for (size_t i = 0; i < tensors[0].size(); ++i) {
    auto op = buildInferred<AdagradUpdateOp>(
        node, {rate, step, tensors[0][i], tensors[1][i], tensors[2][i]}, attrs);
    if (!op)
      return failure();
    results.push_back(SmallVector<Value>(op->getResults()));
  }
  return defineGroupedOutputs(node, results);
}

LogicalResult importMomentum(NodeImporter &node) {
  static const StringRef attributes[] = {"alpha", "beta", "mode",
                                         "norm_coefficient"};
  Value rate, step;
  SmallVector<SmallVector<Value>> tensors;
  if (failed(readOptimizerNode(node, {attributes, attributes, 3}, rate, step,
                               tensors)))
    return failure();
  std::string mode = node.getString("mode", "standard");
  if (mode != "standard" && mode != "nesterov")
    return node.emitError() << "mode must be \"standard\" or \"nesterov\", "
                               "got \""
                            << mode << "\"";
  SmallVector<NamedAttribute> attrs{
      floatAttribute(node, "alpha", 0.0f), floatAttribute(node, "beta", 0.0f),
      floatAttribute(node, "norm_coefficient", 0.0f),
      node.builder.getNamedAttr("mode", node.builder.getStringAttr(mode))};
  SmallVector<SmallVector<Value>> results;
  for (size_t i = 0; i < tensors[0].size(); ++i) {
    auto op = buildInferred<MomentumUpdateOp>(
        node, {rate, step, tensors[0][i], tensors[1][i], tensors[2][i]}, attrs);
    if (!op)
      return failure();
    results.push_back(SmallVector<Value>(op->getResults()));
  }
  return defineGroupedOutputs(node, results);
}

LogicalResult importAdam(NodeImporter &node) {
  static const StringRef attributes[] = {
      "alpha", "beta", "epsilon", "norm_coefficient", "norm_coefficient_post"};
  Value rate, step;
  SmallVector<SmallVector<Value>> tensors;
  if (failed(readOptimizerNode(node, {attributes, {}, 4}, rate, step, tensors)))
    return failure();
  SmallVector<NamedAttribute> attrs{
      floatAttribute(node, "alpha", 0.9f), floatAttribute(node, "beta", 0.999f),
      floatAttribute(node, "epsilon", 1e-6f),
      floatAttribute(node, "norm_coefficient", 0.0f),
      floatAttribute(node, "norm_coefficient_post", 0.0f)};
  SmallVector<SmallVector<Value>> results;
  for (size_t i = 0; i < tensors[0].size(); ++i) {
    auto op =
        buildInferred<AdamUpdateOp>(node,
                                    {rate, step, tensors[0][i], tensors[1][i],
                                     tensors[2][i], tensors[3][i]},
                                    attrs);
    if (!op)
      return failure();
    results.push_back(SmallVector<Value>(op->getResults()));
  }
  return defineGroupedOutputs(node, results);
}

} // namespace

const llvm::StringMap<NodeHandler> &onnx_import::getTrainingHandlers() {
  static const llvm::StringMap<NodeHandler> handlers = {
      {"Adagrad", importAdagrad},
      {"Momentum", importMomentum},
      {"Adam", importAdam},
  };
  return handlers;
}
