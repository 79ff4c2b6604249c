//===- Importer.h - Internals of the ONNX importer --------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The importer walks an ONNX graph in node order, keeping a map from ONNX
// value names to MLIR values (or to constants known at import time), and
// calls one handler per op type. Handlers see a node through NodeImporter:
// its inputs, attributes, constant inputs and the means to define outputs.
//
// Constants: initializers of integer type and the outputs of Constant, Shape,
// ConstantOfShape and of integer arithmetic on constants are kept as
// DenseElementsAttr values and only materialized as `lethe.constant` when a
// handler needs them as tensors. Handlers that need a constant operand as an
// attribute (Reshape's shape, Slice's starts, ...) read it directly, so
// shape computations fold away at import and every shape is static.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_LIB_TARGET_ONNX_IMPORTER_H
#define LETHE_LIB_TARGET_ONNX_IMPORTER_H

#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "lethe/Target/ONNX/ImportONNX.h"
#include "lethe/Target/ONNX/TensorProtoIO.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>

namespace mlir::lethe::onnx_import {

class Importer;

/// One ONNX node being imported.
class NodeImporter {
public:
  NodeImporter(Importer &importer, const onnx::NodeProto &node,
               OpBuilder &builder, Location loc, int64_t opset);

  const onnx::NodeProto &node;
  OpBuilder &builder;
  /// The location of the node's ops: its name (or first output) in the file.
  Location loc;
  /// The version of the node's domain the model imports.
  int64_t opset;

  //===--------------------------------------------------------------------===//
  // Inputs
  //===--------------------------------------------------------------------===//

  /// Whether input `index` is given (present and not the empty name).
  bool hasInput(int index) const;
  /// Input `index` as a tensor value (a known constant is materialized);
  /// fails with a diagnostic when it is missing (only the node's first
  /// missing input is reported: handlers fetch several before checking).
  FailureOr<Value> input(int index);
  /// Input `index` as a tensor value, or null when it is not given.
  FailureOr<Value> optionalInput(int index);
  /// The value of input `index` when it is known at import time.
  std::optional<DenseElementsAttr> constantInput(int index) const;
  /// Input `index` as integers; fails with a diagnostic saying that it must
  /// be a constant when it is not known at import time.
  FailureOr<SmallVector<int64_t>> constantInts(int index);
  /// Input `index` as doubles; same diagnostics.
  FailureOr<SmallVector<double>> constantFloats(int index);
  /// The value of the tensor named `name` (an input, an initializer or an
  /// earlier node's output), or failure without a diagnostic when there is
  /// none.
  FailureOr<Value> valueNamed(StringRef name);

  //===--------------------------------------------------------------------===//
  // Attributes
  //===--------------------------------------------------------------------===//

  const onnx::AttributeProto *attribute(StringRef name) const;
  int64_t getInt(StringRef name, int64_t defaultValue) const;
  float getFloat(StringRef name, float defaultValue) const;
  std::string getString(StringRef name, StringRef defaultValue) const;
  SmallVector<int64_t> getInts(StringRef name,
                               ArrayRef<int64_t> defaultValue = {}) const;
  SmallVector<float> getFloats(StringRef name) const;

  //===--------------------------------------------------------------------===//
  // Outputs and diagnostics
  //===--------------------------------------------------------------------===//

  /// Defines the node's outputs as `values`, in order. An ONNX output with no
  /// corresponding value must be unused (the empty name or never read).
  LogicalResult setOutputs(ValueRange values);
  /// Defines output `index` as a constant known at import time.
  void setConstantOutput(int index, DenseElementsAttr value);

  /// "node 'NAME'", or "the node producing 'OUTPUT'" for an unnamed node.
  std::string describe() const;
  /// Emits "<describe()> (OpType, opset N): " followed by the message.
  InFlightDiagnostic emitError();
  /// Fails with "... is not supported: <why>" and a pointer to the list of
  /// supported ops.
  LogicalResult unsupported(const Twine &why);

  /// The value of an ONNX tensor (a Constant's `value`, ...).
  FailureOr<DenseElementsAttr> convertTensor(const onnx::TensorProto &tensor);

  /// Whether output `index` is read by a later node or the graph outputs.
  bool isOutputUsed(int index) const;

private:
  Importer &importer;
  /// Whether input() has reported an input of this node.
  bool reportedInput = false;
};

/// Imports one ONNX node; emits a diagnostic and fails on bad input.
using NodeHandler = LogicalResult (*)(NodeImporter &);

/// The handlers of the default ONNX domain, by op type.
const llvm::StringMap<NodeHandler> &getNodeHandlers();

/// The domain of ONNX's training operators, and the one version of it that
/// the importer handles.
inline constexpr const char *kTrainingDomain = "ai.onnx.preview.training";
inline constexpr int64_t kTrainingDomainVersion = 1;

/// The handlers of the training domain (the optimizers), by op type
/// (TrainingHandlers.cpp).
const llvm::StringMap<NodeHandler> &getTrainingHandlers();

/// Adds the handlers of one category to `handlers` (one per file).
void addElementwiseHandlers(llvm::StringMap<NodeHandler> &handlers);
void addNeuralNetworkHandlers(llvm::StringMap<NodeHandler> &handlers);
void addTensorHandlers(llvm::StringMap<NodeHandler> &handlers);

/// Builds `OpT` from `operands` and `attributes` with inferred result types.
/// A shape error found by inference becomes the node's error (never the
/// fatal error of the generated inferring builders). Returns null after a
/// diagnostic.
template <typename OpT>
OpT buildInferred(NodeImporter &node, ValueRange operands,
                  ArrayRef<NamedAttribute> attributes = {}) {
  MLIRContext *context = node.builder.getContext();
  DictionaryAttr dictionary = DictionaryAttr::get(context, attributes);
  typename OpT::Properties properties;
  if constexpr (!std::is_same_v<typename OpT::Properties, EmptyProperties>) {
    if (failed(OpT::setPropertiesFromAttr(properties, dictionary,
                                          [&] { return node.emitError(); })))
      return nullptr;
  }
  SmallVector<Type> types;
  std::string message;
  LogicalResult inferred = failure();
  {
    ScopedDiagnosticHandler capture(context, [&](Diagnostic &diagnostic) {
      message = diagnostic.str();
      return success();
    });
    inferred = OpT::inferReturnTypes(context, node.loc, operands, dictionary,
                                     OpaqueProperties(&properties),
                                     RegionRange(), types);
  }
  if (failed(inferred)) {
    node.emitError() << message;
    return nullptr;
  }
  return OpT::create(node.builder, node.loc, types, operands, attributes);
}

/// Builds an op like buildInferred and defines the node's outputs as its
/// results.
template <typename OpT>
LogicalResult buildAndDefine(NodeImporter &node, ValueRange operands,
                             ArrayRef<NamedAttribute> attributes = {}) {
  OpT op = buildInferred<OpT>(node, operands, attributes);
  if (!op)
    return failure();
  return node.setOutputs(op->getResults());
}

/// Inputs 0 .. count-1 of `node` as values; the inputs listed in `optional`
/// are left out when they are not given (Lethe's ops have at most one
/// optional operand, their last). Fails after a diagnostic.
FailureOr<SmallVector<Value>> getInputs(NodeImporter &node, int count,
                                        ArrayRef<int> optional = {});

} // namespace mlir::lethe::onnx_import

#endif // LETHE_LIB_TARGET_ONNX_IMPORTER_H
