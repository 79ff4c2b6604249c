//===- NeuralNetworkHandlers.cpp - ONNX importers of NN layers ------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Convolution, pooling, normalization, softmax, dropout and losses. ONNX's
// implicit choices are made explicit here: auto_pad becomes pads, a missing
// kernel_shape comes from the weight, ConvTranspose's output_shape becomes
// pads, a Softmax before opset 13 (which flattens to 2-D) becomes reshapes
// around a one-axis softmax, and a Dropout without a seed gets one derived
// from its name.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/ADT/Hashing.h"

using namespace mlir;
using namespace mlir::lethe;
using namespace mlir::lethe::onnx_import;

namespace {

/// The window attributes of a convolution or pooling node with `spatialRank`
/// spatial dims, defaults filled in and auto_pad resolved into pads.
struct Window {
  SmallVector<int64_t> kernel, strides, pads, dilations;
};

FailureOr<Window> getWindow(NodeImporter &node, ArrayRef<int64_t> inputShape,
                            ArrayRef<int64_t> kernel, bool hasDilations) {
  int64_t rank = kernel.size();
  Window window;
  window.kernel.assign(kernel.begin(), kernel.end());
  window.strides = node.getInts("strides", SmallVector<int64_t>(rank, 1));
  window.dilations =
      hasDilations ? node.getInts("dilations", SmallVector<int64_t>(rank, 1))
                   : SmallVector<int64_t>(rank, 1);
  window.pads = node.getInts("pads", SmallVector<int64_t>(2 * rank, 0));
  if (static_cast<int64_t>(window.strides.size()) != rank ||
      static_cast<int64_t>(window.dilations.size()) != rank ||
      static_cast<int64_t>(window.pads.size()) != 2 * rank)
    return node.emitError()
           << "strides, dilations and pads must have " << rank << ", " << rank
           << " and " << 2 * rank << " entries for a " << rank
           << "-D window (kernel_shape)";
  std::string autoPad = node.getString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET")
    return window;
  if (autoPad == "VALID") {
    window.pads.assign(2 * rank, 0);
    return window;
  }
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return node.emitError() << "unknown auto_pad '" << autoPad
                            << "' (NOTSET, VALID, SAME_UPPER or SAME_LOWER)";
  // SAME: output = ceil(input / stride); the padding needed for that is
  // split evenly, the odd one at the end (UPPER) or the beginning (LOWER).
  for (int64_t dim = 0; dim < rank; ++dim) {
    int64_t input = inputShape[dim], stride = window.strides[dim];
    if (stride <= 0)
      return node.emitError() << "strides must be positive, got " << stride
                              << " in dimension " << dim;
    int64_t output = (input + stride - 1) / stride;
    int64_t extent = (window.kernel[dim] - 1) * window.dilations[dim] + 1;
    int64_t total =
        std::max<int64_t>(0, (output - 1) * stride + extent - input);
    int64_t small = total / 2, large = total - small;
    window.pads[dim] = autoPad == "SAME_UPPER" ? small : large;
    window.pads[dim + rank] = autoPad == "SAME_UPPER" ? large : small;
  }
  return window;
}

/// The spatial dims of an N, C, D... tensor; fails unless it has 1 to 3.
FailureOr<ArrayRef<int64_t>> spatialShape(NodeImporter &node, Value value) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(value.getType()).getShape();
  if (shape.size() < 3 || shape.size() > 5)
    return node.emitError() << "input must have rank 3 to 5 (N, C and 1 to 3 "
                               "spatial dims), it has rank "
                            << shape.size();
  return shape.drop_front(2);
}

NamedAttribute arrayAttribute(Builder &builder, StringRef name,
                              ArrayRef<int64_t> values) {
  return builder.getNamedAttr(name, builder.getDenseI64ArrayAttr(values));
}

LogicalResult importConv(NodeImporter &node) {
  FailureOr<SmallVector<Value>> inputs = getInputs(node, 3, /*optional=*/{2});
  if (failed(inputs))
    return failure();
  FailureOr<ArrayRef<int64_t>> spatial = spatialShape(node, (*inputs)[0]);
  if (failed(spatial))
    return failure();
  ArrayRef<int64_t> weightShape =
      cast<RankedTensorType>((*inputs)[1].getType()).getShape();
  if (weightShape.size() != spatial->size() + 2)
    return node.emitError() << "weight must have rank " << spatial->size() + 2
                            << ", it has rank " << weightShape.size();
  FailureOr<Window> window = getWindow(
      node, *spatial, node.getInts("kernel_shape", weightShape.drop_front(2)),
      /*hasDilations=*/true);
  if (failed(window))
    return failure();
  Builder &builder = node.builder;
  return buildAndDefine<ConvOp>(
      node, *inputs,
      {arrayAttribute(builder, "strides", window->strides),
       arrayAttribute(builder, "pads", window->pads),
       arrayAttribute(builder, "dilations", window->dilations),
       builder.getNamedAttr(
           "group", builder.getI64IntegerAttr(node.getInt("group", 1)))});
}

LogicalResult importConvTranspose(NodeImporter &node) {
  FailureOr<SmallVector<Value>> inputs = getInputs(node, 3, /*optional=*/{2});
  if (failed(inputs))
    return failure();
  FailureOr<ArrayRef<int64_t>> spatial = spatialShape(node, (*inputs)[0]);
  if (failed(spatial))
    return failure();
  int64_t rank = spatial->size();
  ArrayRef<int64_t> weightShape =
      cast<RankedTensorType>((*inputs)[1].getType()).getShape();
  if (static_cast<int64_t>(weightShape.size()) != rank + 2)
    return node.emitError() << "weight must have rank " << rank + 2
                            << ", it has rank " << weightShape.size();
  SmallVector<int64_t> kernel =
      node.getInts("kernel_shape", weightShape.drop_front(2));
  SmallVector<int64_t> strides =
      node.getInts("strides", SmallVector<int64_t>(rank, 1));
  SmallVector<int64_t> dilations =
      node.getInts("dilations", SmallVector<int64_t>(rank, 1));
  SmallVector<int64_t> pads =
      node.getInts("pads", SmallVector<int64_t>(2 * rank, 0));
  SmallVector<int64_t> outputPadding =
      node.getInts("output_padding", SmallVector<int64_t>(rank, 0));
  if (static_cast<int64_t>(kernel.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank ||
      static_cast<int64_t>(dilations.size()) != rank ||
      static_cast<int64_t>(pads.size()) != 2 * rank ||
      static_cast<int64_t>(outputPadding.size()) != rank)
    return node.emitError() << "kernel_shape, strides, dilations, pads and "
                               "output_padding must have "
                            << rank << " entries (" << 2 * rank << " for pads)";
  // output_shape (or SAME auto_pad, whose output is input * stride) fixes
  // the total padding of each dim; ONNX puts the odd unit at the beginning
  // unless auto_pad is SAME_UPPER.
  std::string autoPad = node.getString("auto_pad", "NOTSET");
  SmallVector<int64_t> outputShape = node.getInts("output_shape");
  if (outputShape.size() == static_cast<size_t>(rank + 2))
    outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
  if (outputShape.empty() &&
      (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER"))
    for (int64_t dim = 0; dim < rank; ++dim)
      outputShape.push_back((*spatial)[dim] * strides[dim]);
  if (autoPad == "VALID")
    pads.assign(2 * rank, 0);
  if (!outputShape.empty()) {
    if (static_cast<int64_t>(outputShape.size()) != rank)
      return node.emitError()
             << "output_shape must have " << rank << " spatial entries";
    for (int64_t dim = 0; dim < rank; ++dim) {
      int64_t total = strides[dim] * ((*spatial)[dim] - 1) +
                      outputPadding[dim] + (kernel[dim] - 1) * dilations[dim] +
                      1 - outputShape[dim];
      if (total < 0) {
        // A larger output than the kernel covers: the extra rows and
        // columns at the end are output padding (as ONNX's reference
        // implementation, which pads the end negatively).
        outputPadding[dim] -= total;
        pads[dim] = pads[dim + rank] = 0;
        continue;
      }
      int64_t half = total / 2;
      pads[dim] = autoPad == "SAME_UPPER" ? half : total - half;
      pads[dim + rank] = autoPad == "SAME_UPPER" ? total - half : half;
    }
  }
  Builder &builder = node.builder;
  return buildAndDefine<ConvTransposeOp>(
      node, *inputs,
      {arrayAttribute(builder, "strides", strides),
       arrayAttribute(builder, "pads", pads),
       arrayAttribute(builder, "dilations", dilations),
       arrayAttribute(builder, "output_padding", outputPadding),
       builder.getNamedAttr(
           "group", builder.getI64IntegerAttr(node.getInt("group", 1)))});
}

template <typename PoolOp> LogicalResult importPool(NodeImporter &node) {
  constexpr bool isMax = std::is_same_v<PoolOp, MaxPoolOp>;
  FailureOr<Value> input = node.input(0);
  if (failed(input))
    return failure();
  FailureOr<ArrayRef<int64_t>> spatial = spatialShape(node, *input);
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> kernel = node.getInts("kernel_shape");
  if (kernel.size() != spatial->size())
    return node.emitError() << "kernel_shape must have " << spatial->size()
                            << " entries, it has " << kernel.size();
  FailureOr<Window> window = getWindow(node, *spatial, kernel, isMax);
  if (failed(window))
    return failure();
  Builder &builder = node.builder;
  SmallVector<NamedAttribute> attributes = {
      arrayAttribute(builder, "kernel_shape", window->kernel),
      arrayAttribute(builder, "strides", window->strides),
      arrayAttribute(builder, "pads", window->pads)};
  if (isMax)
    attributes.push_back(
        arrayAttribute(builder, "dilations", window->dilations));
  if (node.getInt("ceil_mode", 0))
    attributes.push_back(
        builder.getNamedAttr("ceil_mode", builder.getUnitAttr()));
  if (!isMax && node.getInt("count_include_pad", 0))
    attributes.push_back(
        builder.getNamedAttr("count_include_pad", builder.getUnitAttr()));
  if constexpr (isMax) {
    // The Indices output, where a model uses it, takes the op that computes
    // it.
    if (node.isOutputUsed(1)) {
      int64_t order = node.getInt("storage_order", 0);
      if (order != 0)
        attributes.push_back(builder.getNamedAttr(
            "storage_order", builder.getI64IntegerAttr(order)));
      return buildAndDefine<MaxPoolWithIndicesOp>(node, *input, attributes);
    }
  }
  return buildAndDefine<PoolOp>(node, *input, attributes);
}

LogicalResult importGlobalAveragePool(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  if (failed(input))
    return failure();
  return buildAndDefine<GlobalAvgPoolOp>(node, *input);
}

LogicalResult importBatchNormalization(NodeImporter &node) {
  FailureOr<SmallVector<Value>> inputs = getInputs(node, 5);
  if (failed(inputs))
    return failure();
  if (node.opset < 9 && node.getInt("spatial", 1) == 0)
    return node.unsupported("Lethe normalizes per channel, not with "
                            "spatial = 0 (per-activation statistics)");
  Builder &builder = node.builder;
  NamedAttribute epsilon = builder.getNamedAttr(
      "epsilon", builder.getF32FloatAttr(node.getFloat("epsilon", 1e-5f)));
  // Opset 14+ says training_mode explicitly; earlier opsets train when the
  // running statistics are asked for.
  bool training = node.opset >= 14
                      ? node.getInt("training_mode", 0) != 0
                      : node.isOutputUsed(1) || node.isOutputUsed(2);
  if (node.opset < 7 && node.getInt("is_test", 0))
    training = false;
  NamedAttribute momentum = builder.getNamedAttr(
      "momentum", builder.getF32FloatAttr(node.getFloat("momentum", 0.9f)));
  if (!training)
    return buildAndDefine<BatchNormOp>(node, *inputs, {epsilon, momentum});
  BatchNormTrainOp op =
      buildInferred<BatchNormTrainOp>(node, *inputs, {epsilon, momentum});
  if (!op)
    return failure();
  // ONNX's outputs are Y, running_mean, running_var (opsets 11-13 add the
  // saved statistics, which Lethe computes as saved_mean and saved_inv_std:
  // a different quantity, so they are not offered).
  return node.setOutputs(op->getResults().take_front(3));
}

LogicalResult importLayerNormalization(NodeImporter &node) {
  FailureOr<SmallVector<Value>> inputs = getInputs(node, 3, /*optional=*/{2});
  if (failed(inputs))
    return failure();
  Builder &builder = node.builder;
  return buildAndDefine<LayerNormOp>(
      node, *inputs,
      {builder.getNamedAttr("axis",
                            builder.getI64IntegerAttr(node.getInt("axis", -1))),
       builder.getNamedAttr("epsilon", builder.getF32FloatAttr(
                                           node.getFloat("epsilon", 1e-5f)))});
}

template <typename SoftmaxLikeOp>
LogicalResult importSoftmax(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  if (failed(input))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  int64_t rank = type.getRank();
  int64_t axis = node.getInt("axis", node.opset >= 13 ? -1 : 1);
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    return node.emitError()
           << "axis " << axis << " is out of range for rank " << rank;
  if (axis < 0)
    axis += rank;
  Builder &builder = node.builder;
  if (node.opset >= 13 || axis == rank - 1) {
    auto op = SoftmaxLikeOp::create(
        node.builder, node.loc, *input,
        builder.getI64IntegerAttr(node.opset >= 13 ? node.getInt("axis", -1)
                                                   : axis));
    return node.setOutputs(op->getResults());
  }
  // Opsets 11-12 coerce the input to 2-D [prod(dims < axis), prod(dims >=
  // axis)] and normalize each row.
  int64_t rows = 1, columns = 1;
  for (int64_t dim = 0; dim < rank; ++dim)
    (dim < axis ? rows : columns) *= type.getDimSize(dim);
  ReshapeOp flat = buildInferred<ReshapeOp>(
      node, *input, {arrayAttribute(builder, "shape", {rows, columns})});
  if (!flat)
    return failure();
  auto softmax = SoftmaxLikeOp::create(node.builder, node.loc, flat,
                                       builder.getI64IntegerAttr(1));
  return buildAndDefine<ReshapeOp>(
      node, softmax->getResult(0),
      {arrayAttribute(builder, "shape", type.getShape())});
}

LogicalResult importDropout(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  if (failed(input))
    return failure();
  float ratio = node.getFloat("ratio", 0.5f);
  if (node.hasInput(1)) {
    FailureOr<SmallVector<double>> value = node.constantFloats(1);
    if (failed(value))
      return failure();
    ratio = (*value)[0];
  }
  // Opset 6 trains unless is_test is set; opsets 7 to 11 are always the
  // identity; from 12 the training_mode input decides.
  bool training = node.opset < 7 && node.getInt("is_test", 0) == 0;
  if (node.hasInput(2)) {
    FailureOr<SmallVector<double>> value = node.constantFloats(2);
    if (failed(value))
      return failure();
    training = (*value)[0] != 0;
  }
  // Lethe needs an explicit seed so that a recompute draws the same mask;
  // without one, the node's output name decides it (stable across imports).
  int64_t seed =
      node.attribute("seed")
          ? node.getInt("seed", 0)
          : static_cast<int64_t>(llvm::hash_value(node.node.output(0)) &
                                 0x7fffffffffffffff);
  Builder &builder = node.builder;
  SmallVector<NamedAttribute> attributes = {
      builder.getNamedAttr("ratio", builder.getF32FloatAttr(ratio)),
      builder.getNamedAttr("seed", builder.getI64IntegerAttr(seed))};
  if (training)
    attributes.push_back(
        builder.getNamedAttr("training", builder.getUnitAttr()));
  return buildAndDefine<DropoutOp>(node, *input, attributes);
}

/// The attributes shared by the two ONNX losses.
SmallVector<NamedAttribute> lossAttributes(NodeImporter &node) {
  Builder &builder = node.builder;
  SmallVector<NamedAttribute> attributes = {builder.getNamedAttr(
      "reduction", builder.getStringAttr(node.getString("reduction", "mean")))};
  if (node.attribute("ignore_index"))
    attributes.push_back(builder.getNamedAttr(
        "ignore_index",
        builder.getI64IntegerAttr(node.getInt("ignore_index", 0))));
  return attributes;
}

LogicalResult importSoftmaxCrossEntropyLoss(NodeImporter &node) {
  FailureOr<SmallVector<Value>> inputs = getInputs(node, 3, /*optional=*/{2});
  if (failed(inputs))
    return failure();
  return buildAndDefine<SoftmaxCrossEntropyOp>(node, *inputs,
                                               lossAttributes(node));
}

LogicalResult importNegativeLogLikelihoodLoss(NodeImporter &node) {
  FailureOr<SmallVector<Value>> inputs = getInputs(node, 3, /*optional=*/{2});
  if (failed(inputs))
    return failure();
  return buildAndDefine<NllOp>(node, *inputs, lossAttributes(node));
}

} // namespace

void onnx_import::addNeuralNetworkHandlers(
    llvm::StringMap<NodeHandler> &handlers) {
  handlers["Conv"] = importConv;
  handlers["ConvTranspose"] = importConvTranspose;
  handlers["MaxPool"] = importPool<MaxPoolOp>;
  handlers["AveragePool"] = importPool<AvgPoolOp>;
  handlers["GlobalAveragePool"] = importGlobalAveragePool;
  handlers["BatchNormalization"] = importBatchNormalization;
  handlers["LayerNormalization"] = importLayerNormalization;
  handlers["Softmax"] = importSoftmax<SoftmaxOp>;
  handlers["LogSoftmax"] = importSoftmax<LogSoftmaxOp>;
  handlers["Dropout"] = importDropout;
  handlers["SoftmaxCrossEntropyLoss"] = importSoftmaxCrossEntropyLoss;
  handlers["NegativeLogLikelihoodLoss"] = importNegativeLogLikelihoodLoss;
}
