//===- TrainingHandlers.cpp - ONNX importers of the training domain -------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The handlers of the `ai.onnx.preview.training` domain (version 1):
// Gradient, which --lethe-autodiff's reverse sweep builds, and the
// optimizers Adagrad, Momentum and Adam. Each ONNX node updates any number
// of tensors at once: its inputs are R, T and then one group per role (all
// the X, then all the G, then each state), its outputs all the new X and
// then each new state, group by group. The importer builds one `lethe`
// update op per tensor and defines the outputs in ONNX's order.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "lethe/Dialect/Lethe/Transforms/Autodiff.h"

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

/// ONNX's Gradient: the gradients of the tensor named `y` (of the sum of
/// its elements, for a y of several) with respect to the tensors named in
/// `xs`, built by the autodiff's reverse sweep over the ops imported so far.
/// The node's inputs are the xs, then the zs (inputs y depends on that are
/// not differentiated); its outputs the gradients, in the order of xs.
LogicalResult importGradient(NodeImporter &node) {
  for (const onnx::AttributeProto &attribute : node.node.attribute())
    if (!llvm::is_contained({"xs", "zs", "y"}, attribute.name()))
      return node.unsupported("attribute '" + attribute.name() +
                              "' is not one of ONNX's for this op");
  const onnx::AttributeProto *xs = node.attribute("xs");
  const onnx::AttributeProto *zs = node.attribute("zs");
  const onnx::AttributeProto *y = node.attribute("y");
  if (!xs || xs->type() != onnx::AttributeProto::STRINGS ||
      xs->strings_size() == 0)
    return node.emitError() << "needs the attribute 'xs': the names of the "
                               "tensors to differentiate with respect to";
  if (zs && zs->type() != onnx::AttributeProto::STRINGS)
    return node.emitError() << "the attribute 'zs' must be a list of names";
  if (!y || y->type() != onnx::AttributeProto::STRING || y->s().empty())
    return node.emitError()
           << "needs the attribute 'y': the name of the tensor to "
              "differentiate";
  SmallVector<std::string> names(xs->strings().begin(), xs->strings().end());
  if (zs)
    names.append(zs->strings().begin(), zs->strings().end());
  if (node.node.input_size() != static_cast<int>(names.size()))
    return node.emitError()
           << "has " << node.node.input_size() << " inputs, but xs and zs name "
           << names.size() << " tensors (the inputs are the xs, then the zs)";
  SmallVector<Value> variables;
  for (auto [index, name] : llvm::enumerate(names)) {
    if (node.node.input(index) != name)
      return node.emitError()
             << "input " << index << " is '" << node.node.input(index)
             << "', but xs and zs name '" << name
             << "' there (the inputs are the xs, then the zs)";
    if (index >= static_cast<size_t>(xs->strings_size()))
      continue;
    FailureOr<Value> value = node.input(index);
    if (failed(value))
      return failure();
    Type type = value->getType();
    if (!isa<FloatType>(cast<RankedTensorType>(type).getElementType()))
      return node.emitError()
             << "xs names '" << name << "', a " << typeText(type)
             << ", which has no gradient (not "
                "floating-point)";
    variables.push_back(*value);
  }
  FailureOr<Value> target = node.valueNamed(y->s());
  if (failed(target))
    return node.emitError() << "y names '" << y->s()
                            << "', which is not defined before the node";
  if (!isa<FloatType>(
          cast<RankedTensorType>(target->getType()).getElementType()))
    return node.emitError()
           << "y names '" << y->s() << "', a " << typeText(target->getType())
           << ", which has no gradient (not "
              "floating-point)";
  if (node.node.output_size() > xs->strings_size())
    return node.emitError()
           << "has " << node.node.output_size()
           << " outputs, but xs names only " << xs->strings_size()
           << (xs->strings_size() == 1 ? " tensor" : " tensors")
           << ": give one output per tensor of xs";
  // The sweep's diagnostic (an op without a gradient rule) becomes the
  // node's.
  std::string message;
  FailureOr<SmallVector<Value>> gradients = failure();
  {
    ScopedDiagnosticHandler capture(node.builder.getContext(),
                                    [&](Diagnostic &diagnostic) {
                                      message = diagnostic.str();
                                      return success();
                                    });
    gradients = buildGradients(node.builder, *target, variables);
  }
  if (failed(gradients)) {
    StringRef why(message);
    why.consume_front("lethe-autodiff: ");
    return node.emitError()
           << "cannot differentiate '" << y->s() << "': " << why;
  }
  return node.setOutputs(
      ArrayRef<Value>(*gradients).take_front(node.node.output_size()));
}

} // namespace

const llvm::StringMap<NodeHandler> &onnx_import::getTrainingHandlers() {
  static const llvm::StringMap<NodeHandler> handlers = {
      {"Gradient", importGradient},
      {"Adagrad", importAdagrad},
      {"Momentum", importMomentum},
      {"Adam", importAdam},
  };
  return handlers;
}
