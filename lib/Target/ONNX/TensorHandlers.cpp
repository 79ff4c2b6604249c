//===- TensorHandlers.cpp - ONNX importers of shape ops and reductions ----===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Shape and data-movement ops and reductions. The inputs that ONNX allows to
// be computed at run time (shapes, axes, starts/ends, split sizes, scales)
// must be known at import time: they become attributes, so that every shape
// is static. Versions differ on whether those are attributes or inputs
// (Squeeze, Unsqueeze, Split and ReduceSum moved them to inputs in opset 13);
// the handlers read both.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

using namespace mlir;
using namespace mlir::lethe;
using namespace mlir::lethe::onnx_import;

namespace {

NamedAttribute arrayAttribute(Builder &builder, StringRef name,
                              ArrayRef<int64_t> values) {
  return builder.getNamedAttr(name, builder.getDenseI64ArrayAttr(values));
}

NamedAttribute intAttribute(Builder &builder, StringRef name, int64_t value) {
  return builder.getNamedAttr(name, builder.getI64IntegerAttr(value));
}

/// Integers given by the attribute `name` in opsets before `inputOpset` and
/// by input `index` from it on; `std::nullopt` when neither is given.
FailureOr<std::optional<SmallVector<int64_t>>>
getIntsFromAttributeOrInput(NodeImporter &node, StringRef name, int index,
                            int64_t inputOpset) {
  if (node.opset < inputOpset) {
    if (!node.attribute(name))
      return std::optional<SmallVector<int64_t>>();
    return std::optional<SmallVector<int64_t>>(node.getInts(name));
  }
  if (!node.hasInput(index))
    return std::optional<SmallVector<int64_t>>();
  FailureOr<SmallVector<int64_t>> values = node.constantInts(index);
  if (failed(values))
    return failure();
  return std::optional<SmallVector<int64_t>>(std::move(*values));
}

int64_t rankOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getRank();
}

LogicalResult importReshape(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  FailureOr<SmallVector<int64_t>> shape = node.constantInts(1);
  if (failed(input) || failed(shape))
    return failure();
  Builder &builder = node.builder;
  SmallVector<NamedAttribute> attributes = {
      arrayAttribute(builder, "shape", *shape)};
  if (node.getInt("allowzero", 0))
    attributes.push_back(
        builder.getNamedAttr("allowzero", builder.getUnitAttr()));
  return buildAndDefine<ReshapeOp>(node, *input, attributes);
}

LogicalResult importFlatten(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  if (failed(input))
    return failure();
  return buildAndDefine<FlattenOp>(
      node, *input,
      {intAttribute(node.builder, "axis", node.getInt("axis", 1))});
}

LogicalResult importTranspose(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  if (failed(input))
    return failure();
  // The default permutation reverses the dims.
  SmallVector<int64_t> reversed;
  for (int64_t dim = rankOf(*input); dim-- > 0;)
    reversed.push_back(dim);
  return buildAndDefine<TransposeOp>(
      node, *input,
      {arrayAttribute(node.builder, "perm", node.getInts("perm", reversed))});
}

LogicalResult importConcat(NodeImporter &node) {
  FailureOr<SmallVector<Value>> inputs =
      getInputs(node, node.node.input_size());
  if (failed(inputs))
    return failure();
  if (!node.attribute("axis"))
    return node.emitError() << "the axis attribute is required";
  return buildAndDefine<ConcatOp>(
      node, *inputs,
      {intAttribute(node.builder, "axis", node.getInt("axis", 0))});
}

LogicalResult importSplit(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  if (failed(input))
    return failure();
  int64_t axis = node.getInt("axis", 0), rank = rankOf(*input);
  if (axis < -rank || axis >= rank)
    return node.emitError()
           << "axis " << axis << " is out of range for rank " << rank;
  FailureOr<std::optional<SmallVector<int64_t>>> sizes =
      getIntsFromAttributeOrInput(node, "split", 1, /*inputOpset=*/13);
  if (failed(sizes))
    return failure();
  SmallVector<int64_t> split;
  if (*sizes) {
    split = **sizes;
  } else {
    // Equal parts, one per output.
    int64_t parts = node.node.output_size();
    int64_t dim = cast<RankedTensorType>(input->getType())
                      .getDimSize(axis < 0 ? axis + rank : axis);
    if (parts == 0 || dim % parts != 0)
      return node.emitError() << "cannot split dimension " << dim << " into "
                              << parts << " equal parts";
    split.assign(parts, dim / parts);
  }
  return buildAndDefine<SplitOp>(
      node, *input,
      {intAttribute(node.builder, "axis", axis),
       arrayAttribute(node.builder, "split", split)});
}

LogicalResult importSlice(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  if (failed(input))
    return failure();
  SmallVector<int64_t> axes, steps;
  FailureOr<SmallVector<int64_t>> starts = SmallVector<int64_t>(),
                                  ends = SmallVector<int64_t>();
  if (node.opset < 10) {
    // Before opset 10, starts, ends and axes are attributes, steps are 1.
    starts = node.getInts("starts");
    ends = node.getInts("ends");
    axes = node.getInts("axes");
  } else {
    starts = node.constantInts(1);
    ends = node.constantInts(2);
    if (failed(starts) || failed(ends))
      return failure();
  }
  if (!axes.empty()) {
    // Given as an attribute.
  } else if (node.opset >= 10 && node.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> given = node.constantInts(3);
    if (failed(given))
      return failure();
    axes = *given;
  } else {
    for (int64_t axis = 0; axis < static_cast<int64_t>(starts->size()); ++axis)
      axes.push_back(axis);
  }
  if (node.opset >= 10 && node.hasInput(4)) {
    FailureOr<SmallVector<int64_t>> given = node.constantInts(4);
    if (failed(given))
      return failure();
    steps = *given;
  } else {
    steps.assign(starts->size(), 1);
  }
  Builder &builder = node.builder;
  return buildAndDefine<SliceOp>(node, *input,
                                 {arrayAttribute(builder, "starts", *starts),
                                  arrayAttribute(builder, "ends", *ends),
                                  arrayAttribute(builder, "axes", axes),
                                  arrayAttribute(builder, "steps", steps)});
}

LogicalResult importGather(NodeImporter &node) {
  FailureOr<SmallVector<Value>> inputs = getInputs(node, 2);
  if (failed(inputs))
    return failure();
  return buildAndDefine<GatherOp>(
      node, *inputs,
      {intAttribute(node.builder, "axis", node.getInt("axis", 0))});
}

LogicalResult importSqueeze(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      getIntsFromAttributeOrInput(node, "axes", 1, /*inputOpset=*/13);
  if (failed(input) || failed(axes))
    return failure();
  return buildAndDefine<SqueezeOp>(
      node, *input,
      {arrayAttribute(node.builder, "axes",
                      axes->value_or(SmallVector<int64_t>()))});
}

LogicalResult importUnsqueeze(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      getIntsFromAttributeOrInput(node, "axes", 1, /*inputOpset=*/13);
  if (failed(input) || failed(axes))
    return failure();
  if (!*axes)
    return node.emitError() << "axes are required";
  return buildAndDefine<UnsqueezeOp>(
      node, *input, {arrayAttribute(node.builder, "axes", **axes)});
}

LogicalResult importExpand(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  FailureOr<SmallVector<int64_t>> shape = node.constantInts(1);
  if (failed(input) || failed(shape))
    return failure();
  return buildAndDefine<ExpandOp>(
      node, *input, {arrayAttribute(node.builder, "shape", *shape)});
}

LogicalResult importResize(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  if (failed(input))
    return failure();
  std::string mode = node.getString("mode", "nearest");
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, mode))
    return node.emitError()
           << "mode '" << mode << "' is not one of nearest, linear or cubic";
  auto type = cast<RankedTensorType>(input->getType());
  // Opset 10 takes (X, scales) and maps coordinates asymmetrically, rounding
  // down in mode nearest; later opsets take (X, roi, scales, sizes) and the
  // attributes below.
  bool opset10 = node.opset < 11;
  int scalesIndex = opset10 ? 1 : 2;
  SmallVector<double> scales;
  if (node.hasInput(scalesIndex)) {
    FailureOr<SmallVector<double>> given = node.constantFloats(scalesIndex);
    if (failed(given))
      return failure();
    scales = *given;
  }
  if (scales.empty() && opset10)
    return node.emitError() << "scales (input 1) are required";
  if (scales.empty()) {
    if (!node.hasInput(3))
      return node.emitError() << "either scales (input 2) or sizes (input 3) "
                                 "must be given";
    FailureOr<SmallVector<int64_t>> sizes = node.constantInts(3);
    if (failed(sizes))
      return failure();
    if (static_cast<int64_t>(sizes->size()) != type.getRank())
      return node.emitError() << "sizes must have " << type.getRank()
                              << " entries, it has " << sizes->size();
    for (auto [size, dim] : llvm::zip(*sizes, type.getShape()))
      scales.push_back(static_cast<double>(size) / static_cast<double>(dim));
  }
  std::string transformation =
      opset10 ? "asymmetric"
              : node.getString("coordinate_transformation_mode", "half_pixel");
  Builder &builder = node.builder;
  SmallVector<NamedAttribute> attributes = {
      builder.getNamedAttr("scales", builder.getDenseF64ArrayAttr(scales)),
      builder.getNamedAttr("mode", builder.getStringAttr(mode)),
      builder.getNamedAttr("coordinate_transformation_mode",
                           builder.getStringAttr(transformation)),
      builder.getNamedAttr(
          "nearest_mode",
          builder.getStringAttr(
              opset10 ? "floor"
                      : node.getString("nearest_mode", "round_prefer_floor"))),
      builder.getNamedAttr(
          "cubic_coeff_a",
          builder.getF64FloatAttr(node.getFloat("cubic_coeff_a", -0.75f))),
      builder.getNamedAttr(
          "exclude_outside",
          builder.getBoolAttr(node.getInt("exclude_outside", 0) != 0)),
      builder.getNamedAttr(
          "extrapolation_value",
          builder.getF64FloatAttr(node.getFloat("extrapolation_value", 0.0f)))};
  if (transformation == "tf_crop_and_resize") {
    if (!node.hasInput(1))
      return node.emitError() << "coordinate_transformation_mode "
                                 "tf_crop_and_resize needs roi (input 1)";
    FailureOr<SmallVector<double>> roi = node.constantFloats(1);
    if (failed(roi))
      return failure();
    attributes.push_back(
        builder.getNamedAttr("roi", builder.getDenseF64ArrayAttr(*roi)));
  }
  return buildAndDefine<ResizeOp>(node, *input, attributes);
}

/// ReduceSum takes its axes as input 1 from opset 13; ReduceMean and
/// ReduceMax keep the attribute up to opset 17.
template <typename ReduceOp, int64_t axesInputOpset>
LogicalResult importReduce(NodeImporter &node) {
  FailureOr<Value> input = node.input(0);
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      getIntsFromAttributeOrInput(node, "axes", 1, axesInputOpset);
  if (failed(input) || failed(axes))
    return failure();
  SmallVector<int64_t> reduced = axes->value_or(SmallVector<int64_t>());
  if (reduced.empty() && node.getInt("noop_with_empty_axes", 0))
    return node.setOutputs(*input);
  Builder &builder = node.builder;
  return buildAndDefine<ReduceOp>(
      node, *input,
      {arrayAttribute(builder, "axes", reduced),
       builder.getNamedAttr("keepdims",
                            builder.getBoolAttr(node.getInt("keepdims", 1)))});
}

} // namespace

void onnx_import::addTensorHandlers(llvm::StringMap<NodeHandler> &handlers) {
  handlers["Reshape"] = importReshape;
  handlers["Flatten"] = importFlatten;
  handlers["Transpose"] = importTranspose;
  handlers["Concat"] = importConcat;
  handlers["Split"] = importSplit;
  handlers["Slice"] = importSlice;
  handlers["Gather"] = importGather;
  handlers["Squeeze"] = importSqueeze;
  handlers["Unsqueeze"] = importUnsqueeze;
  handlers["Expand"] = importExpand;
  handlers["Resize"] = importResize;
  handlers["ReduceSum"] = importReduce<ReduceSumOp, 13>;
  handlers["ReduceMean"] = importReduce<ReduceMeanOp, 18>;
  handlers["ReduceMax"] = importReduce<ReduceMaxOp, 18>;
}
