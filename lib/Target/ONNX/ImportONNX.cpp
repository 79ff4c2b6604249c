//===- ImportONNX.cpp - ONNX to the lethe dialect -------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The model- and graph-level part of the importer: parsing the file, types,
// tensors (initializers, external data), the value map, and the
// `--import-onnx` translation. The per-op handlers are in NodeHandlers.cpp.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "lethe/Interpreter/Interpreter.h"
#include "lethe/Target/ONNX/TensorProtoIO.h"

#include "Schemas.h"
#include "TextFormat.h"

#include "lethe/Dialect/Lethe/IR/LetheDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::lethe;
using namespace mlir::lethe::onnx_import;

/// Where the list of supported ops lives, for diagnostics.
static constexpr const char *kSupportedOpsDoc = "docs/ONNX.md";

/// The versions of the default ONNX domain the importer handles. Handlers
/// read the attributes that later versions moved to inputs both ways.
static constexpr int64_t kMinimumOpset = 6;
static constexpr int64_t kMaximumOpset = 17;

/// The largest result (in elements) that import-time folding computes: shape
/// computations are tiny, and folding a large tensor would only move its
/// bytes from the run into the IR.
static constexpr int64_t kMaximumFoldedElements = 4096;

namespace mlir::lethe::onnx_import {

//===----------------------------------------------------------------------===//
// Importer
//===----------------------------------------------------------------------===//

class Importer {
public:
  Importer(MLIRContext *context, const ImportONNXOptions &options,
           StringRef modelPath)
      : context(context), options(options), modelPath(modelPath.str()),
        builder(context) {}

  OwningOpRef<ModuleOp> importModel(const onnx::ModelProto &model);
  /// Imports the model's training step (its TrainingInfoProto) into
  /// `module` as the function `name`.
  LogicalResult importTrainingStep(const onnx::ModelProto &model,
                                   ModuleOp module, StringRef name);

  /// An error at the model's location ("<file>: error: ...").
  InFlightDiagnostic emitError() {
    return mlir::emitError(FileLineColLoc::get(context, modelPath, 0, 0));
  }

  /// The tensor value named `name`, materializing a known constant; fails
  /// when nothing defined it.
  FailureOr<Value> lookupValue(StringRef name, Location loc);
  std::optional<DenseElementsAttr> lookupConstant(StringRef name) const {
    auto it = constants.find(name);
    if (it == constants.end())
      return std::nullopt;
    return it->second;
  }
  void defineValue(StringRef name, Value value) { values[name] = value; }
  void defineConstant(StringRef name, DenseElementsAttr value) {
    constants[name] = value;
  }
  bool isUsed(StringRef name) const { return usedNames.contains(name); }

  /// The value of `tensor`: a dense resource blob when `asResource` (for
  /// parameters, so that large weights stay out of the printed IR), else a
  /// DenseElementsAttr.
  FailureOr<ElementsAttr> convertTensor(const onnx::TensorProto &tensor,
                                        bool asResource);

private:
  /// Reads the model's opset imports and checks them against the nodes of
  /// `graph` (the model's, or its training graph).
  LogicalResult importOpsets(const onnx::ModelProto &model,
                             const onnx::GraphProto &graph);
  LogicalResult importGraph(const onnx::GraphProto &graph);
  /// Creates the function `name` at the end of `module` and imports `graph`
  /// into it.
  LogicalResult importFunction(const onnx::GraphProto &graph, ModuleOp module,
                               StringRef name);
  FailureOr<RankedTensorType> convertInputType(const onnx::ValueInfoProto &);
  LogicalResult importNode(const onnx::NodeProto &node);
  /// Adds an argument for the float initializer `name` on first use.
  Value addParameter(StringRef name);
  /// Reads data input `index` (`name`, of `type`) from
  /// `options.inputValuesDirectory` as a known value.
  LogicalResult readInputValue(StringRef name, int64_t index,
                               RankedTensorType type);
  /// Folds the ops from `begin` to the end of the body whose operands are
  /// all constants (never parameters, which are arguments) into constants,
  /// by running them with the interpreter's kernels; this is how shape
  /// computations (Shape, Gather, Concat, ... on constants) become the
  /// static attributes of the ops that use them.
  void foldConstants(Block::iterator begin);
  /// Removes the constants that folding left without uses.
  void eraseDeadConstants();
  /// Fails with the "not supported" diagnostic of the first node whose
  /// domain or op type the importer does not handle.
  LogicalResult checkSupported(const onnx::GraphProto &graph);
  /// Fails naming the first node output that is also an initializer, a
  /// graph input or another node's output (ONNX names each value once).
  LogicalResult checkNamedOnce(const onnx::GraphProto &graph);
  /// The version of the node's domain that the model imports.
  int64_t opsetOf(const onnx::NodeProto &node) const;
  /// Records the initializers that are state rather than trainable
  /// parameters: BatchNormalization's running mean and variance.
  void findNonTrainable(const onnx::GraphProto &graph);

  MLIRContext *context;
  const ImportONNXOptions &options;
  std::string modelPath;
  OpBuilder builder;
  func::FuncOp function;
  int64_t defaultOpset = 0;
  /// The version of the training domain the model imports (0 if none).
  int64_t trainingOpset = 0;

  llvm::StringMap<Value> values;
  llvm::StringMap<DenseElementsAttr> constants;
  /// Float initializers not yet turned into arguments, with their values.
  llvm::StringMap<ElementsAttr> pendingParameters;
  llvm::StringSet<> usedNames;
  llvm::StringSet<> nonTrainable;
  /// Runs the ops that foldConstants() folds.
  Interpreter folder;
  SmallVector<DictionaryAttr> argumentAttributes;
  /// A training step's update_binding: the initializer each bound graph
  /// output replaces in the next step, by output name. Those initializers
  /// are arguments whatever their type, and not marked trainable (the step
  /// updates them itself).
  llvm::StringMap<std::string> updateBinding;
  /// Initializers that become arguments whatever their type or rank: those
  /// update_binding updates and those a Gradient differentiates.
  llvm::StringSet<> forcedParameters;
  /// The output of a training step that is its loss (marked lethe.loss):
  /// the tensor its first Gradient differentiates.
  std::string lossName;
};

} // namespace mlir::lethe::onnx_import

/// "node 'NAME'", or "the node producing 'OUTPUT'" for an unnamed node.
static std::string describeNode(const onnx::NodeProto &node) {
  if (!node.name().empty())
    return "node '" + node.name() + "'";
  if (node.output_size() > 0)
    return "the node producing '" + node.output(0) + "'";
  return "an unnamed node";
}

static bool isDefaultDomain(const onnx::NodeProto &node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

static bool isTrainingDomain(const onnx::NodeProto &node) {
  return node.domain() == kTrainingDomain;
}

int64_t Importer::opsetOf(const onnx::NodeProto &node) const {
  return isTrainingDomain(node) ? trainingOpset : defaultOpset;
}

/// The handlers of the node's domain, or null for a domain the importer does
/// not handle.
static const llvm::StringMap<NodeHandler> *
getDomainHandlers(const onnx::NodeProto &node) {
  if (isDefaultDomain(node))
    return &getNodeHandlers();
  if (isTrainingDomain(node))
    return &getTrainingHandlers();
  return nullptr;
}

LogicalResult Importer::importOpsets(const onnx::ModelProto &model,
                                     const onnx::GraphProto &graph) {
  for (const onnx::OperatorSetIdProto &opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      defaultOpset = opset.version();
    else if (opset.domain() == kTrainingDomain)
      trainingOpset = opset.version();
  }
  if (llvm::any_of(graph.node(), isTrainingDomain) &&
      trainingOpset != kTrainingDomainVersion)
    return emitError() << "the model uses version " << trainingOpset
                       << " of the domain " << kTrainingDomain
                       << " (opset_import); Lethe supports version "
                       << kTrainingDomainVersion;
  bool usesDefaultDomain = llvm::any_of(graph.node(), isDefaultDomain);
  if (!usesDefaultDomain)
    return success();
  if (defaultOpset == 0)
    return emitError() << "the model imports no version of the default ONNX "
                          "domain (opset_import); re-export it with an opset "
                          "between "
                       << kMinimumOpset << " and " << kMaximumOpset;
  if (defaultOpset < 1 || defaultOpset > kMaximumOpset)
    return emitError() << "the model uses opset " << defaultOpset
                       << " of the default ONNX domain; Lethe supports "
                          "opsets "
                       << kMinimumOpset << " to " << kMaximumOpset
                       << " (convert it with onnx.version_converter)";
  if (defaultOpset >= kMinimumOpset)
    return success();
  // An older model imports as opset kMinimumOpset when none of its ops
  // changed in between: ONNX's schemas say which version of each op is in
  // force at either opset. (Ops that ONNX does not know are left to the node
  // importers, which report them as unsupported.)
  for (const onnx::NodeProto &node : graph.node()) {
    if (!isDefaultDomain(node))
      continue;
    int64_t version = getOperatorVersion(node.op_type(), defaultOpset);
    int64_t current = getOperatorVersion(node.op_type(), kMinimumOpset);
    if (version != 0 && version != current)
      return emitError() << "the model uses opset " << defaultOpset
                         << " of the default ONNX domain, in which "
                         << describeNode(node) << " (" << node.op_type()
                         << ") follows version " << version
                         << " of the op, which opset " << current
                         << " changed; Lethe supports opsets " << kMinimumOpset
                         << " to " << kMaximumOpset
                         << " (convert it with onnx.version_converter)";
  }
  defaultOpset = kMinimumOpset;
  return success();
}

OwningOpRef<ModuleOp> Importer::importModel(const onnx::ModelProto &model) {
  if (!model.has_graph()) {
    emitError() << "the model has no graph: the file is not an ONNX model "
                   "or it is truncated";
    return nullptr;
  }
  if (failed(importOpsets(model, model.graph())))
    return nullptr;

  OwningOpRef<ModuleOp> module =
      ModuleOp::create(FileLineColLoc::get(context, modelPath, 0, 0));
  if (failed(importFunction(model.graph(), *module, "main")))
    return nullptr;
  if (model.training_info_size() > 0) {
    // A fresh importer: the training step has values of its own.
    Importer trainer(context, options, modelPath);
    if (failed(trainer.importTrainingStep(model, *module, "train_step")))
      return nullptr;
  }
  return module;
}

LogicalResult Importer::importFunction(const onnx::GraphProto &graph,
                                       ModuleOp module, StringRef name) {
  builder.setInsertionPointToEnd(module.getBody());
  function = func::FuncOp::create(builder, module.getLoc(), name,
                                  builder.getFunctionType({}, {}));
  builder.setInsertionPointToStart(function.addEntryBlock());
  return importGraph(graph);
}

LogicalResult Importer::importTrainingStep(const onnx::ModelProto &model,
                                           ModuleOp module, StringRef name) {
  if (model.training_info_size() > 1)
    return emitError() << "the model has " << model.training_info_size()
                       << " training_info entries; Lethe imports a model "
                          "with one training step";
  const onnx::TrainingInfoProto &info = model.training_info(0);
  if (info.initialization_binding_size() > 0)
    return emitError() << "training_info's initialization graph (which "
                          "recomputes initializers before training) is not "
                          "supported; give the initial values as the "
                          "initializers";
  if (!info.has_algorithm())
    return emitError() << "training_info has no algorithm graph";
  // ONNX's training graph: the inference graph's inputs, initializers,
  // nodes and outputs, then the algorithm's.
  onnx::GraphProto combined = model.graph();
  const onnx::GraphProto &algorithm = info.algorithm();
  combined.mutable_input()->MergeFrom(algorithm.input());
  combined.mutable_initializer()->MergeFrom(algorithm.initializer());
  combined.mutable_node()->MergeFrom(algorithm.node());
  combined.mutable_output()->MergeFrom(algorithm.output());
  if (failed(importOpsets(model, combined)))
    return failure();
  llvm::StringSet<> initializers, outputs;
  for (const onnx::TensorProto &tensor : combined.initializer())
    initializers.insert(tensor.name());
  for (const onnx::ValueInfoProto &output : combined.output())
    outputs.insert(output.name());
  for (const onnx::StringStringEntryProto &binding : info.update_binding()) {
    if (!initializers.contains(binding.key()))
      return emitError() << "training_info's update_binding updates '"
                         << binding.key()
                         << "', which is not an initializer of the model";
    if (!outputs.contains(binding.value()))
      return emitError() << "training_info's update_binding binds '"
                         << binding.key() << "' to '" << binding.value()
                         << "', which is not an output of the training graph";
    if (!updateBinding.try_emplace(binding.value(), binding.key()).second)
      return emitError() << "training_info's update_binding binds '"
                         << binding.value() << "' twice";
    nonTrainable.insert(binding.key());
    forcedParameters.insert(binding.key());
  }
  for (const onnx::NodeProto &node : algorithm.node())
    if (isTrainingDomain(node) && node.op_type() == "Gradient") {
      for (const onnx::AttributeProto &attribute : node.attribute())
        if (attribute.name() == "y")
          lossName = attribute.s();
      break;
    }
  return importFunction(combined, module, name);
}

FailureOr<RankedTensorType>
Importer::convertInputType(const onnx::ValueInfoProto &info) {
  const std::string &name = info.name();
  if (!info.type().has_tensor_type())
    return emitError() << "input '" << name << "' "
                       << (info.has_type() ? "is not a tensor" : "has no type")
                       << ": Lethe takes tensor inputs only (no sequences, "
                          "maps or optionals); export the model with tensor "
                          "inputs";
  const onnx::TypeProto::Tensor &tensorType = info.type().tensor_type();
  Type elementType = getElementTypeOfONNX(tensorType.elem_type(), context);
  if (!elementType)
    return emitError() << "input '" << name << "' has data type "
                       << getONNXDataTypeName(tensorType.elem_type())
                       << ", which Lethe does not support (supported: "
                       << kSupportedONNXDataTypes << ")";
  auto given = options.inputShapes.find(name);
  if (!tensorType.has_shape() && given == options.inputShapes.end())
    return emitError() << "input '" << name
                       << "' has no shape: give it with --input-shape " << name
                       << "=D0xD1x...";
  SmallVector<int64_t> shape;
  if (given != options.inputShapes.end()) {
    shape = given->second;
    if (tensorType.has_shape()) {
      const onnx::TensorShapeProto &declared = tensorType.shape();
      if (declared.dim_size() != static_cast<int>(shape.size()))
        return emitError() << "--input-shape gives input '" << name << "' "
                           << shape.size() << " dimensions, but the model "
                           << "declares " << declared.dim_size();
      for (auto [index, dim] : llvm::enumerate(declared.dim()))
        if (dim.has_dim_value() && dim.dim_value() != shape[index])
          return emitError()
                 << "--input-shape gives dimension " << index << " of input '"
                 << name << "' the size " << shape[index]
                 << ", but the model fixes it to " << dim.dim_value();
    }
  } else {
    for (auto [index, dim] : llvm::enumerate(tensorType.shape().dim())) {
      if (!dim.has_dim_value() || dim.dim_value() < 0) {
        std::string dimName =
            dim.has_dim_param() ? "'" + dim.dim_param() + "'" : "unnamed";
        return emitError() << "input '" << name << "' has a dynamic "
                           << "dimension " << index << " (" << dimName
                           << "); fix it with --input-shape " << name
                           << "=D0xD1x...";
      }
      shape.push_back(dim.dim_value());
    }
  }
  return RankedTensorType::get(shape, elementType);
}

FailureOr<ElementsAttr> Importer::convertTensor(const onnx::TensorProto &tensor,
                                                bool asResource) {
  Type elementType = getElementTypeOfONNX(tensor.data_type(), context);
  if (!elementType)
    return emitError() << "tensor '" << tensor.name() << "' has data type "
                       << getONNXDataTypeName(tensor.data_type())
                       << ", which Lethe does not support";
  // The bytes first: they check the dims before the type is built on them.
  int64_t elementSize = getElementSizeInBytes(elementType);
  std::string bytes;
  std::string message = readTensorBytes(
      tensor, llvm::sys::path::parent_path(modelPath), elementSize, bytes);
  if (!message.empty())
    return emitError() << "tensor '" << tensor.name() << "': " << message;
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  auto type = RankedTensorType::get(shape, elementType);
  int64_t count = type.getNumElements();

  if (elementType.isInteger(1)) {
    SmallVector<bool> bits(count);
    for (int64_t i = 0; i < count; ++i)
      bits[i] = bytes[i] != 0;
    return cast<ElementsAttr>(DenseElementsAttr::get(type, bits));
  }
  ArrayRef<char> raw(bytes.data(), bytes.size());
  if (asResource) {
    std::string blobName = tensor.name().empty() ? "tensor" : tensor.name();
    return cast<ElementsAttr>(DenseResourceElementsAttr::get(
        type, blobName,
        HeapAsmResourceBlob::allocateAndCopyWithAlign(raw, alignof(double))));
  }
  return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(type, raw));
}

LogicalResult Importer::readInputValue(StringRef name, int64_t index,
                                       RankedTensorType type) {
  SmallString<256> path(options.inputValuesDirectory);
  llvm::sys::path::append(path, "input_" + std::to_string(index) + ".pb");
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return emitError() << "--input-values-from: cannot read '" << path
                       << "' for input '" << name
                       << "': " << file.getError().message();
  onnx::TensorProto tensor;
  StringRef contents = (*file)->getBuffer();
  if (!tensor.ParseFromArray(contents.data(),
                             static_cast<int>(contents.size())))
    return emitError() << "--input-values-from: '" << path
                       << "' is not an ONNX TensorProto";
  tensor.set_name(name.str());
  // ONNX's own test data stores bfloat16 tensors as UINT16 bit patterns.
  if (tensor.data_type() == onnx::TensorProto::UINT16 &&
      type.getElementType().isBF16())
    tensor.set_data_type(onnx::TensorProto::BFLOAT16);
  FailureOr<ElementsAttr> value = convertTensor(tensor, /*asResource=*/false);
  if (failed(value))
    return failure();
  if (value->getShapedType() != type)
    return emitError() << "--input-values-from: '" << path << "' holds "
                       << value->getShapedType() << ", but input '" << name
                       << "' has type " << type;
  constants[name] = cast<DenseElementsAttr>(*value);
  return success();
}

Value Importer::addParameter(StringRef name) {
  ElementsAttr initial = pendingParameters.lookup(name);
  pendingParameters.erase(name);
  Block &entry = function.getBody().front();
  Value argument = entry.addArgument(
      initial.getShapedType(), FileLineColLoc::get(context, modelPath, 0, 0));
  NamedAttrList attributes;
  attributes.set("lethe.name", builder.getStringAttr(name));
  attributes.set("lethe.parameter", builder.getUnitAttr());
  if (!nonTrainable.contains(name))
    attributes.set("lethe.trainable", builder.getUnitAttr());
  attributes.set("lethe.initializer", initial);
  argumentAttributes.push_back(attributes.getDictionary(context));
  values[name] = argument;
  return argument;
}

FailureOr<Value> Importer::lookupValue(StringRef name, Location loc) {
  if (Value value = values.lookup(name))
    return value;
  if (pendingParameters.count(name))
    return addParameter(name);
  if (std::optional<DenseElementsAttr> constant = lookupConstant(name)) {
    Value value =
        ConstantOp::create(builder, loc, constant->getType(), *constant);
    values[name] = value;
    return value;
  }
  return failure();
}

void Importer::findNonTrainable(const onnx::GraphProto &graph) {
  for (const onnx::NodeProto &node : graph.node())
    if (node.op_type() == "BatchNormalization" && node.domain().empty())
      for (int index : {3, 4})
        if (index < node.input_size())
          nonTrainable.insert(node.input(index));
}

LogicalResult Importer::checkSupported(const onnx::GraphProto &graph) {
  for (const onnx::NodeProto &node : graph.node()) {
    const llvm::StringMap<NodeHandler> *handlers = getDomainHandlers(node);
    NodeImporter importer(*this, node, builder, function.getLoc(),
                          opsetOf(node));
    if (!handlers)
      return importer.unsupported("domain '" + node.domain() +
                                  "' is not supported");
    if (!handlers->count(node.op_type()))
      return importer.unsupported("Lethe has no importer for this op");
  }
  return success();
}

LogicalResult Importer::checkNamedOnce(const onnx::GraphProto &graph) {
  llvm::StringMap<const char *> definedBy;
  for (const onnx::TensorProto &tensor : graph.initializer())
    definedBy.try_emplace(tensor.name(), "an initializer");
  for (const onnx::ValueInfoProto &input : graph.input())
    definedBy.try_emplace(input.name(), "a graph input");
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &output : node.output()) {
      if (output.empty())
        continue;
      auto [found, inserted] = definedBy.try_emplace(output, "another node");
      if (!inserted)
        return NodeImporter(*this, node, builder, function.getLoc(),
                            opsetOf(node))
                   .emitError()
               << "its output '" << output << "' is also " << found->second
               << "'s; ONNX names every value once, so the model is "
                  "malformed: export it again";
    }
  }
  return success();
}

LogicalResult Importer::importGraph(const onnx::GraphProto &graph) {
  // Report an op Lethe cannot import before anything else about the model.
  if (failed(checkSupported(graph)) || failed(checkNamedOnce(graph)))
    return failure();
  findNonTrainable(graph);
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &input : node.input())
      usedNames.insert(input);
  for (const onnx::ValueInfoProto &output : graph.output())
    usedNames.insert(output.name());

  // What a Gradient differentiates must be an argument, or folding would
  // cut it from y.
  for (const onnx::NodeProto &node : graph.node())
    if (isTrainingDomain(node) && node.op_type() == "Gradient")
      for (const onnx::AttributeProto &attribute : node.attribute())
        if (attribute.name() == "xs")
          for (const std::string &name : attribute.strings())
            forcedParameters.insert(name);

  // Initializers: floating-point tensors of rank 1 or more are trainable
  // parameters (arguments, added on first use); the rest are constants.
  llvm::StringSet<> initializerNames;
  for (const onnx::TensorProto &tensor : graph.initializer()) {
    initializerNames.insert(tensor.name());
    Type elementType = getElementTypeOfONNX(tensor.data_type(), context);
    bool isParameter =
        forcedParameters.contains(tensor.name()) ||
        (elementType && isa<FloatType>(elementType) && tensor.dims_size() > 0);
    FailureOr<ElementsAttr> value = convertTensor(tensor, isParameter);
    if (failed(value))
      return failure();
    if (isParameter) {
      pendingParameters[tensor.name()] = *value;
      // Parameters are also known constants, for handlers that fold them
      // into attributes (Resize scales, Clip bounds, ...).
      if (auto dense = dyn_cast<DenseElementsAttr>(*value))
        constants[tensor.name()] = dense;
      else
        constants[tensor.name()] = DenseElementsAttr::getFromRawBuffer(
            value->getShapedType(),
            cast<DenseResourceElementsAttr>(*value).getData());
    } else {
      constants[tensor.name()] = cast<DenseElementsAttr>(*value);
    }
  }

  // Graph inputs that are not initializers are the function's data inputs.
  Block &entry = function.getBody().front();
  int64_t dataIndex = 0;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializerNames.contains(input.name()))
      continue;
    FailureOr<RankedTensorType> type = convertInputType(input);
    if (failed(type))
      return failure();
    if (!options.inputValuesDirectory.empty() &&
        failed(readInputValue(input.name(), dataIndex, *type)))
      return failure();
    ++dataIndex;
    Value argument =
        entry.addArgument(*type, FileLineColLoc::get(context, modelPath, 0, 0));
    values[input.name()] = argument;
    argumentAttributes.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
        "lethe.name", builder.getStringAttr(input.name()))));
  }
  for (const auto &entry : options.inputShapes)
    if (!values.count(entry.getKey()))
      return emitError() << "--input-shape names '" << entry.getKey()
                         << "', which is not an input of the graph";

  for (const onnx::NodeProto &node : graph.node())
    if (failed(importNode(node)))
      return failure();

  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttributes;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    FailureOr<Value> value = lookupValue(
        output.name(), NameLoc::get(builder.getStringAttr(output.name())));
    if (failed(value))
      return emitError() << "graph output '" << output.name()
                         << "' is not computed by any node";
    results.push_back(*value);
    NamedAttrList attributes;
    attributes.set("lethe.name", builder.getStringAttr(output.name()));
    if (!lossName.empty() && output.name() == lossName)
      attributes.set("lethe.loss", builder.getUnitAttr());
    auto bound = updateBinding.find(output.name());
    if (bound != updateBinding.end()) {
      // The initializer it replaces, made an argument if no node read it.
      FailureOr<Value> target =
          lookupValue(bound->getValue(), function.getLoc());
      if (failed(target))
        return emitError() << "update_binding names '" << bound->getValue()
                           << "', which is not an initializer";
      auto argument = dyn_cast<BlockArgument>(*target);
      if (!argument)
        return emitError() << "update_binding updates '" << bound->getValue()
                           << "', which a node of the graph redefines";
      attributes.set("lethe.updates",
                     builder.getI64IntegerAttr(argument.getArgNumber()));
    }
    resultAttributes.push_back(attributes.getDictionary(context));
  }
  func::ReturnOp::create(builder, function.getLoc(), results);
  eraseDeadConstants();
  function.setType(builder.getFunctionType(entry.getArgumentTypes(),
                                           ValueRange(results).getTypes()));
  function.setAllArgAttrs(argumentAttributes);
  function.setAllResultAttrs(resultAttributes);
  return success();
}

LogicalResult Importer::importNode(const onnx::NodeProto &node) {
  std::string name = node.name();
  if (name.empty() && node.output_size() > 0)
    name = node.output(0);
  Location loc = NameLoc::get(builder.getStringAttr(name),
                              FileLineColLoc::get(context, modelPath, 0, 0));
  NodeImporter nodeImporter(*this, node, builder, loc, opsetOf(node));
  Block *block = builder.getInsertionBlock();
  Operation *last = block->empty() ? nullptr : &block->back();
  // checkSupported() made sure that there is a handler.
  if (failed(getDomainHandlers(node)->lookup(node.op_type())(nodeImporter)))
    return failure();
  foldConstants(last ? std::next(last->getIterator()) : block->begin());
  for (const std::string &output : node.output())
    if (Value value = values.lookup(output))
      if (auto constant = value.getDefiningOp<ConstantOp>())
        if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
          constants[output] = dense;
  return success();
}

void Importer::eraseDeadConstants() {
  for (Operation &op :
       llvm::make_early_inc_range(llvm::reverse(function.getBody().front())))
    if (isa<ConstantOp>(op) && op.use_empty())
      op.erase();
}

/// The value of `tensor` as a DenseElementsAttr of its type.
static DenseElementsAttr toAttribute(HostTensor &tensor) {
  RankedTensorType type = tensor.getType();
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> bits(tensor.getSizeInBytes());
    for (int64_t i = 0; i < tensor.getSizeInBytes(); ++i)
      bits[i] = tensor.data()[i] != 0;
    return DenseElementsAttr::get(type, bits);
  }
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(tensor.data(), tensor.getSizeInBytes()));
}

void Importer::foldConstants(Block::iterator begin) {
  Block *block = builder.getInsertionBlock();
  for (Operation &op :
       llvm::make_early_inc_range(llvm::make_range(begin, block->end()))) {
    if (isa<ConstantOp>(op) || op.getNumOperands() == 0)
      continue;
    SmallVector<HostTensor> inputs;
    bool foldable = true;
    for (Value operand : op.getOperands()) {
      auto constant = operand.getDefiningOp<ConstantOp>();
      FailureOr<HostTensor> tensor = failure();
      if (constant)
        tensor = tensorFromAttribute(constant.getValue());
      if (failed(tensor)) {
        foldable = false;
        break;
      }
      inputs.push_back(std::move(*tensor));
    }
    int64_t elements = 0;
    for (Type type : op.getResultTypes())
      elements += getNumElements(type);
    if (!foldable || elements > kMaximumFoldedElements)
      continue;
    SmallVector<HostTensor *> operands;
    for (HostTensor &input : inputs)
      operands.push_back(&input);
    SmallVector<HostTensor> results;
    for (Type type : op.getResultTypes())
      results.emplace_back(cast<RankedTensorType>(type));
    // An op the kernels reject is left for run time, which reports it.
    ScopedDiagnosticHandler silence(context,
                                    [](Diagnostic &) { return success(); });
    if (failed(folder.executeOne(op, operands, results)))
      continue;
    OpBuilder atOp(&op);
    for (auto [result, tensor] : llvm::zip(op.getResults(), results)) {
      Value constant = ConstantOp::create(atOp, op.getLoc(), result.getType(),
                                          toAttribute(tensor));
      result.replaceAllUsesWith(constant);
      // ONNX names that referred to the folded result now name the constant.
      for (auto &entry : values)
        if (entry.second == result)
          entry.second = constant;
    }
    op.erase();
  }
}

//===----------------------------------------------------------------------===//
// NodeImporter
//===----------------------------------------------------------------------===//

NodeImporter::NodeImporter(Importer &importer, const onnx::NodeProto &node,
                           OpBuilder &builder, Location loc, int64_t opset)
    : node(node), builder(builder), loc(loc), opset(opset), importer(importer) {
}

std::string NodeImporter::describe() const { return describeNode(node); }

InFlightDiagnostic NodeImporter::emitError() {
  InFlightDiagnostic diagnostic = importer.emitError();
  diagnostic << describe() << " (" << node.op_type() << ", opset " << opset
             << "): ";
  return diagnostic;
}

LogicalResult NodeImporter::unsupported(const Twine &why) {
  std::string domain = node.domain().empty() ? "ai.onnx" : node.domain();
  return importer.emitError()
         << describe() << " of op type '" << node.op_type() << "' (domain "
         << domain << ", opset " << opset << ") is not supported: " << why
         << "; the supported ops are listed in " << kSupportedOpsDoc;
}

bool NodeImporter::hasInput(int index) const {
  return index < node.input_size() && !node.input(index).empty();
}

FailureOr<Value> NodeImporter::input(int index) {
  bool missing = !hasInput(index);
  FailureOr<Value> value = failure();
  if (!missing)
    value = importer.lookupValue(node.input(index), loc);
  if (succeeded(value))
    return value;
  if (std::exchange(reportedInput, true))
    return failure(); // one error per node
  if (missing)
    return emitError() << "input " << index << " is missing";
  return emitError() << "input " << index << " ('" << node.input(index)
                     << "') is not defined before the node (the graph is "
                        "not topologically sorted or the name is wrong)";
}

FailureOr<Value> NodeImporter::valueNamed(StringRef name) {
  return importer.lookupValue(name, loc);
}

FailureOr<Value> NodeImporter::optionalInput(int index) {
  if (!hasInput(index))
    return Value();
  return input(index);
}

std::optional<DenseElementsAttr> NodeImporter::constantInput(int index) const {
  if (!hasInput(index))
    return std::nullopt;
  return importer.lookupConstant(node.input(index));
}

FailureOr<SmallVector<int64_t>> NodeImporter::constantInts(int index) {
  std::optional<DenseElementsAttr> constant = constantInput(index);
  if (!constant || !constant->getElementType().isInteger())
    return emitError() << "input " << index << " ('"
                       << (hasInput(index) ? node.input(index) : "")
                       << "') must be an integer constant known at import "
                          "time (Lethe needs static shapes)";
  bool isUnsigned = constant->getElementType().isUnsignedInteger();
  SmallVector<int64_t> result;
  for (const APInt &value : constant->getValues<APInt>()) {
    if (isUnsigned && value.isNegative() && value.getBitWidth() == 64)
      return emitError() << "input " << index << " ('" << node.input(index)
                         << "') holds " << value.getZExtValue()
                         << ", beyond the int64 range Lethe reads constants "
                            "in";
    result.push_back(isUnsigned ? static_cast<int64_t>(value.getZExtValue())
                                : value.getSExtValue());
  }
  return result;
}

FailureOr<SmallVector<double>> NodeImporter::constantFloats(int index) {
  std::optional<DenseElementsAttr> constant = constantInput(index);
  if (!constant)
    return emitError() << "input " << index << " ('"
                       << (hasInput(index) ? node.input(index) : "")
                       << "') must be a constant known at import time";
  SmallVector<double> result;
  if (isa<FloatType>(constant->getElementType())) {
    for (const APFloat &value : constant->getValues<APFloat>())
      result.push_back(value.convertToDouble());
  } else {
    for (const APInt &value : constant->getValues<APInt>())
      result.push_back(static_cast<double>(value.getSExtValue()));
  }
  return result;
}

const onnx::AttributeProto *NodeImporter::attribute(StringRef name) const {
  for (const onnx::AttributeProto &attribute : node.attribute())
    if (attribute.name() == name)
      return &attribute;
  return nullptr;
}

int64_t NodeImporter::getInt(StringRef name, int64_t defaultValue) const {
  const onnx::AttributeProto *found = attribute(name);
  return found ? found->i() : defaultValue;
}

float NodeImporter::getFloat(StringRef name, float defaultValue) const {
  const onnx::AttributeProto *found = attribute(name);
  return found ? found->f() : defaultValue;
}

std::string NodeImporter::getString(StringRef name,
                                    StringRef defaultValue) const {
  const onnx::AttributeProto *found = attribute(name);
  return found ? found->s() : defaultValue.str();
}

SmallVector<int64_t>
NodeImporter::getInts(StringRef name, ArrayRef<int64_t> defaultValue) const {
  const onnx::AttributeProto *found = attribute(name);
  if (!found)
    return SmallVector<int64_t>(defaultValue);
  return SmallVector<int64_t>(found->ints().begin(), found->ints().end());
}

SmallVector<float> NodeImporter::getFloats(StringRef name) const {
  const onnx::AttributeProto *found = attribute(name);
  if (!found)
    return {};
  return SmallVector<float>(found->floats().begin(), found->floats().end());
}

bool NodeImporter::isOutputUsed(int index) const {
  return index < node.output_size() && !node.output(index).empty() &&
         importer.isUsed(node.output(index));
}

LogicalResult NodeImporter::setOutputs(ValueRange values) {
  for (int index = 0; index < node.output_size(); ++index) {
    if (index < static_cast<int>(values.size())) {
      if (!node.output(index).empty())
        importer.defineValue(node.output(index), values[index]);
      continue;
    }
    if (isOutputUsed(index))
      return unsupported("output " + Twine(index) + " ('" + node.output(index) +
                         "') is used, but Lethe does "
                         "not compute it");
  }
  return success();
}

FailureOr<DenseElementsAttr>
NodeImporter::convertTensor(const onnx::TensorProto &tensor) {
  FailureOr<ElementsAttr> value =
      importer.convertTensor(tensor, /*asResource=*/false);
  if (failed(value))
    return failure();
  return cast<DenseElementsAttr>(*value);
}

void NodeImporter::setConstantOutput(int index, DenseElementsAttr value) {
  if (index < node.output_size() && !node.output(index).empty())
    importer.defineConstant(node.output(index), value);
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp>
mlir::lethe::importONNX(llvm::SourceMgr &sourceMgr, MLIRContext *context,
                        const ImportONNXOptions &options) {
  context->loadDialect<LetheDialect, func::FuncDialect>();
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  StringRef path = buffer->getBufferIdentifier();
  StringRef contents = buffer->getBuffer();
  Importer importer(context, options, path);

  onnx::ModelProto model;
  bool isText = path.ends_with(".onnxtxt") || contents.ltrim().starts_with("<");
  if (isText) {
    TextParseError error;
    if (!parseONNXText(contents, model, error)) {
      // At the parser's position, where it names one: tools that show the
      // source line show where the text went wrong.
      Location loc =
          FileLineColLoc::get(context, path, error.line, error.column);
      emitError(loc) << "cannot parse the ONNX text format: " << error.message;
      return nullptr;
    }
  } else if (contents.size() > static_cast<size_t>(INT_MAX) ||
             !model.ParseFromArray(contents.data(),
                                   static_cast<int>(contents.size()))) {
    importer.emitError()
        << "cannot parse the file as an ONNX model (binary protobuf): it is "
           "truncated, corrupt or not an ONNX model (the text format needs "
           "the .onnxtxt extension)";
    return nullptr;
  }
  return importer.importModel(model);
}

std::string mlir::lethe::parseInputShape(StringRef text,
                                         ImportONNXOptions &options) {
  auto [name, dims] = text.split('=');
  if (name.empty() || !text.contains('='))
    return "--input-shape expects NAME=D0xD1x..., got '" + text.str() + "'";
  SmallVector<int64_t> shape;
  if (!dims.empty()) {
    SmallVector<StringRef> parts;
    dims.split(parts, 'x');
    for (StringRef part : parts) {
      int64_t dim;
      if (part.getAsInteger(10, dim) || dim < 0)
        return "--input-shape " + text.str() + ": '" + part.str() +
               "' is not a dimension size (a non-negative integer)";
      shape.push_back(dim);
    }
  }
  options.inputShapes[name] = shape;
  return "";
}

void mlir::lethe::registerImportONNXTranslation() {
  static llvm::cl::list<std::string> inputShapes(
      "input-shape",
      llvm::cl::desc("Fix the shape of an ONNX graph input: NAME=D0xD1x... "
                     "(repeatable)"),
      llvm::cl::ZeroOrMore);
  static llvm::cl::opt<std::string> inputValuesFrom(
      "input-values-from",
      llvm::cl::desc("Specialize the model to the input values in "
                     "DIR/input_K.pb, so that run-time shape inputs fold"),
      llvm::cl::value_desc("DIR"));
  TranslateToMLIRRegistration registration(
      "import-onnx", "Import an ONNX model (.onnx, .onnxtxt) into lethe",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        ImportONNXOptions options;
        options.inputValuesDirectory = inputValuesFrom;
        for (const std::string &shape : inputShapes) {
          std::string message = parseInputShape(shape, options);
          if (!message.empty()) {
            // At the model, as the importer's own errors are.
            StringRef model =
                sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
                    ->getBufferIdentifier();
            mlir::emitError(FileLineColLoc::get(context, model, 0, 0))
                << message;
            return nullptr;
          }
        }
        return importONNX(sourceMgr, context, options);
      },
      [](DialectRegistry &registry) {
        registry.insert<LetheDialect, func::FuncDialect>();
      });
}
