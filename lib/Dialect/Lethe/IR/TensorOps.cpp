//===- TensorOps.cpp - Constants, shape and data movement -----------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Result-type inference, verifiers and folders of the ops in
// LetheTensorOps.td. Inference follows ONNX's shape inference for each
// operator (opsets 11 to 17); it is also the ops' verifier, so its
// diagnostics say what is wrong with the operands and attributes.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::lethe;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Maps the ONNX axes `axes` of a tensor of rank `rank` to [0, rank) and
/// checks that no two of them name the same dimension. `what` names one axis
/// in the out-of-range diagnostic.
static FailureOr<SmallVector<int64_t>>
normalizeDistinctAxes(std::optional<Location> location, StringRef opName,
                      StringRef what, ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> normalized;
  for (int64_t axis : axes) {
    FailureOr<int64_t> dim = normalizeAxis(location, opName, what, axis, rank);
    if (failed(dim))
      return failure();
    if (llvm::is_contained(normalized, *dim)) {
      (void)emitInferenceError(location, opName, "axes [", axes,
                               "] name dimension ", *dim, " twice");
      return failure();
    }
    normalized.push_back(*dim);
  }
  return normalized;
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *context,
                                           std::optional<Location> location,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getValue().getType());
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor adaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> shape = adaptor.getShape();
  bool allowZero = adaptor.getAllowzero();

  // Resolve the 0 entries and find the -1 one.
  SmallVector<int64_t> resultShape;
  std::optional<size_t> inferredIndex;
  bool hasZero = false;
  for (auto [index, dim] : llvm::enumerate(shape)) {
    if (dim == -1) {
      if (inferredIndex)
        return emitInferenceError(location, getOperationName(), "shape [",
                                  shape, "] has more than one -1");
      inferredIndex = index;
      resultShape.push_back(dim);
      continue;
    }
    if (dim < -1)
      return emitInferenceError(location, getOperationName(), "shape[", index,
                                "] is ", dim,
                                ", but dimensions must be >= 0 or -1");
    if (dim == 0 && !allowZero) {
      if (static_cast<int64_t>(index) >= input.getRank())
        return emitInferenceError(
            location, getOperationName(), "shape[", index,
            "] is 0, which copies the input dimension at that index, but "
            "the input ",
            input, " has rank ", input.getRank());
      resultShape.push_back(input.getDimSize(index));
      continue;
    }
    hasZero |= dim == 0;
    resultShape.push_back(dim);
  }
  if (hasZero && inferredIndex)
    return emitInferenceError(location, getOperationName(), "shape [", shape,
                              "] has both 0 and -1, which allowzero forbids");

  int64_t numElements = input.getNumElements();
  int64_t knownElements = 1;
  for (auto [index, dim] : llvm::enumerate(resultShape)) {
    if (index == inferredIndex)
      continue;
    std::optional<int64_t> product = llvm::checkedMul(knownElements, dim);
    if (!product)
      return emitInferenceError(location, getOperationName(), "shape [", shape,
                                "] has more elements than int64 can count");
    knownElements = *product;
  }
  if (inferredIndex) {
    if (knownElements == 0)
      return emitInferenceError(location, getOperationName(),
                                "cannot infer the -1 in shape [", shape,
                                "]: the other dimensions have 0 elements");
    if (numElements % knownElements != 0)
      return emitInferenceError(location, getOperationName(),
                                "cannot infer the -1 in shape [", shape,
                                "]: the input ", input, " has ", numElements,
                                " elements, not a multiple of ", knownElements,
                                " (the product of the other dimensions)");
    resultShape[*inferredIndex] = numElements / knownElements;
  } else if (knownElements != numElements) {
    return emitInferenceError(
        location, getOperationName(), "shape [", shape, "] has ", knownElements,
        " elements, but the input ", input, " has ", numElements);
  }
  types.push_back(input.clone(resultShape));
  return success();
}

//===----------------------------------------------------------------------===//
// FlattenOp
//===----------------------------------------------------------------------===//

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t rank = input.getRank();
  int64_t axis = adaptor.getAxis();
  // Unlike most ONNX axes, Flatten's may equal the rank.
  if (axis < -rank || axis > rank)
    return emitInferenceError(location, getOperationName(), "axis ", axis,
                              " is out of range [", -rank, ", ", rank,
                              "] for rank ", rank);
  if (axis < 0)
    axis += rank;
  ArrayRef<int64_t> shape = input.getShape();
  types.push_back(
      input.clone({ShapedType::getNumElements(shape.take_front(axis)),
                   ShapedType::getNumElements(shape.drop_front(axis))}));
  return success();
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  int64_t rank = input.getRank();
  if (static_cast<int64_t>(perm.size()) != rank)
    return emitInferenceError(location, getOperationName(), "perm [", perm,
                              "] has ", perm.size(), " entries, but the input ",
                              input, " has rank ", rank);
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> shape;
  for (int64_t dim : perm) {
    if (dim < 0 || dim >= rank)
      return emitInferenceError(location, getOperationName(), "perm entry ",
                                dim, " is out of range [0, ", rank, ")");
    if (seen[dim])
      return emitInferenceError(location, getOperationName(), "perm [", perm,
                                "] is not a permutation: ", dim,
                                " appears twice");
    seen[dim] = true;
    shape.push_back(input.getDimSize(dim));
  }
  types.push_back(input.clone(shape));
  return success();
}

//===----------------------------------------------------------------------===//
// ConcatOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitInferenceError(location, getOperationName(),
                              "needs at least one input");
  auto first = cast<RankedTensorType>(inputs.front().getType());
  FailureOr<int64_t> axis = normalizeAxis(location, getOperationName(), "axis",
                                          adaptor.getAxis(), first.getRank());
  if (failed(axis))
    return failure();

  SmallVector<int64_t> shape(first.getShape());
  for (auto [index, value] : llvm::enumerate(inputs.drop_front())) {
    auto type = cast<RankedTensorType>(value.getType());
    size_t number = index + 1;
    if (type.getElementType() != first.getElementType())
      return emitInferenceError(location, getOperationName(), "input #", number,
                                " has element type ", type.getElementType(),
                                ", but input #0 has ", first.getElementType());
    if (type.getRank() != first.getRank())
      return emitInferenceError(location, getOperationName(), "input #", number,
                                " ", type, " has rank ", type.getRank(),
                                ", but input #0 ", first, " has rank ",
                                first.getRank());
    for (int64_t dim = 0, rank = first.getRank(); dim < rank; ++dim) {
      if (dim == *axis || type.getDimSize(dim) == first.getDimSize(dim))
        continue;
      return emitInferenceError(
          location, getOperationName(), "input #", number, " ", type,
          " has size ", type.getDimSize(dim), " in dimension ", dim,
          ", but input #0 ", first, " has size ", first.getDimSize(dim),
          " (only the concatenation axis ", *axis, " may differ)");
    }
    shape[*axis] += type.getDimSize(*axis);
  }
  types.push_back(first.clone(shape));
  return success();
}

//===----------------------------------------------------------------------===//
// SplitOp
//===----------------------------------------------------------------------===//

LogicalResult SplitOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  FailureOr<int64_t> axis = normalizeAxis(location, getOperationName(), "axis",
                                          adaptor.getAxis(), input.getRank());
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> split = adaptor.getSplit();
  if (split.empty())
    return emitInferenceError(location, getOperationName(),
                              "split must have at least one size");

  int64_t total = 0;
  for (auto [index, size] : llvm::enumerate(split)) {
    if (size < 0)
      return emitInferenceError(location, getOperationName(), "split[", index,
                                "] is ", size,
                                ", but sizes must be non-negative");
    std::optional<int64_t> sum = llvm::checkedAdd(total, size);
    if (!sum)
      return emitInferenceError(location, getOperationName(), "split sizes [",
                                split, "] sum to more than int64 can count");
    total = *sum;
  }
  int64_t dimSize = input.getDimSize(*axis);
  if (total != dimSize)
    return emitInferenceError(location, getOperationName(), "split sizes [",
                              split, "] sum to ", total, ", but dimension ",
                              *axis, " of the input ", input, " has size ",
                              dimSize);

  SmallVector<int64_t> shape(input.getShape());
  for (int64_t size : split) {
    shape[*axis] = size;
    types.push_back(input.clone(shape));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

/// The slice of a dimension of size `dim` that ONNX's Slice selects going
/// from `start` towards `end` in steps of `step` (non-zero): negative bounds
/// count from the end, then both are clamped into the dimension (for a
/// negative step, to [0, dim - 1] and [-1, dim - 1], -1 meaning "before the
/// first element"). Returns the clamped start and the number of elements.
static std::pair<int64_t, int64_t> clampSlice(int64_t start, int64_t end,
                                              int64_t step, int64_t dim) {
  // Adding `dim` (>= 0) to a negative bound cannot overflow.
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  int64_t distance;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    distance = end - start;
  } else {
    if (dim == 0)
      return {0, 0};
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    distance = start - end;
  }
  if (distance <= 0)
    return {start, 0};
  // ceil(distance / |step|), without overflowing for |step| up to 2^63.
  uint64_t stride =
      step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  return {start, static_cast<int64_t>(
                     (static_cast<uint64_t>(distance) - 1) / stride + 1)};
}

/// The type of a slice of `input`.
static FailureOr<RankedTensorType>
inferSliceType(std::optional<Location> location, StringRef opName,
               RankedTensorType input, ArrayRef<int64_t> starts,
               ArrayRef<int64_t> ends, ArrayRef<int64_t> axes,
               ArrayRef<int64_t> steps) {
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    (void)emitInferenceError(
        location, opName, "starts, ends, axes and steps have ", starts.size(),
        ", ", ends.size(), ", ", axes.size(), " and ", steps.size(),
        " entries, but they must have the same length");
    return failure();
  }
  FailureOr<SmallVector<int64_t>> dims =
      normalizeDistinctAxes(location, opName, "axis", axes, input.getRank());
  if (failed(dims))
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  for (auto [index, dim] : llvm::enumerate(*dims)) {
    if (steps[index] == 0) {
      (void)emitInferenceError(location, opName, "steps[", index,
                               "] is 0, but steps must be non-zero");
      return failure();
    }
    shape[dim] =
        clampSlice(starts[index], ends[index], steps[index], shape[dim]).second;
  }
  return input.clone(shape);
}

/// For every dim of a slice's input of `shape`, the index of the first
/// element the slice reads and the step between elements.
static void getSliceStartsAndSteps(
    ArrayRef<int64_t> shape, ArrayRef<int64_t> starts, ArrayRef<int64_t> ends,
    ArrayRef<int64_t> axes, ArrayRef<int64_t> steps,
    SmallVectorImpl<int64_t> &dimStarts, SmallVectorImpl<int64_t> &dimSteps) {
  int64_t rank = shape.size();
  dimStarts.assign(rank, 0);
  dimSteps.assign(rank, 1);
  for (auto [index, axis] : llvm::enumerate(axes)) {
    int64_t dim = axis < 0 ? axis + rank : axis;
    dimStarts[dim] =
        clampSlice(starts[index], ends[index], steps[index], shape[dim]).first;
    dimSteps[dim] = steps[index];
  }
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> type = inferSliceType(
      location, getOperationName(),
      cast<RankedTensorType>(adaptor.getInput().getType()), adaptor.getStarts(),
      adaptor.getEnds(), adaptor.getAxes(), adaptor.getSteps());
  if (failed(type))
    return failure();
  types.push_back(*type);
  return success();
}

void SliceOp::getDimStartsAndSteps(SmallVectorImpl<int64_t> &dimStarts,
                                   SmallVectorImpl<int64_t> &dimSteps) {
  getSliceStartsAndSteps(getInput().getType().getShape(), getStarts(),
                         getEnds(), getAxes(), getSteps(), dimStarts, dimSteps);
}

int64_t SliceOp::getBytesRead() {
  // Only the selected elements are read, one for each result element.
  return getBytesWritten();
}

//===----------------------------------------------------------------------===//
// GatherOp
//===----------------------------------------------------------------------===//

/// The type of a gather from `data` at `indices` along `axisAttr`.
static FailureOr<RankedTensorType>
inferGatherType(std::optional<Location> location, StringRef opName,
                RankedTensorType data, RankedTensorType indices,
                int64_t axisAttr) {
  FailureOr<int64_t> axis =
      normalizeAxis(location, opName, "axis", axisAttr, data.getRank());
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> dataShape = data.getShape();
  SmallVector<int64_t> shape(dataShape.take_front(*axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, dataShape.drop_front(*axis + 1));
  return data.clone(shape);
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> type =
      inferGatherType(location, getOperationName(),
                      cast<RankedTensorType>(adaptor.getData().getType()),
                      cast<RankedTensorType>(adaptor.getIndices().getType()),
                      adaptor.getAxis());
  if (failed(type))
    return failure();
  types.push_back(*type);
  return success();
}

int64_t GatherOp::getBytesRead() {
  // The indices, and one element of `data` for each result element (an
  // embedding lookup reads a few rows of a large table).
  return getTotalSizeInBytes(getIndices().getType()) + getBytesWritten();
}

//===----------------------------------------------------------------------===//
// SqueezeOp
//===----------------------------------------------------------------------===//

LogicalResult SqueezeOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> inputShape = input.getShape();
  SmallVector<int64_t> shape;
  if (adaptor.getAxes().empty()) {
    // No axes: remove every unit dimension.
    llvm::copy_if(inputShape, std::back_inserter(shape),
                  [](int64_t dim) { return dim != 1; });
    types.push_back(input.clone(shape));
    return success();
  }

  FailureOr<SmallVector<int64_t>> dims = normalizeDistinctAxes(
      location, getOperationName(), "axis", adaptor.getAxes(), input.getRank());
  if (failed(dims))
    return failure();
  for (int64_t dim : *dims)
    if (inputShape[dim] != 1)
      return emitInferenceError(location, getOperationName(), "dimension ", dim,
                                " of the input ", input, " has size ",
                                inputShape[dim],
                                ", not 1, so it cannot be squeezed");
  for (auto [index, size] : llvm::enumerate(inputShape))
    if (!llvm::is_contained(*dims, static_cast<int64_t>(index)))
      shape.push_back(size);
  types.push_back(input.clone(shape));
  return success();
}

//===----------------------------------------------------------------------===//
// UnsqueezeOp
//===----------------------------------------------------------------------===//

LogicalResult UnsqueezeOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  // The axes index the result, whose rank counts the inserted dimensions.
  int64_t rank = input.getRank() + static_cast<int64_t>(axes.size());
  FailureOr<SmallVector<int64_t>> dims = normalizeDistinctAxes(
      location, getOperationName(), "result axis", axes, rank);
  if (failed(dims))
    return failure();
  SmallVector<int64_t> shape;
  ArrayRef<int64_t> remaining = input.getShape();
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (llvm::is_contained(*dims, dim)) {
      shape.push_back(1);
      continue;
    }
    shape.push_back(remaining.front());
    remaining = remaining.drop_front();
  }
  types.push_back(input.clone(shape));
  return success();
}

//===----------------------------------------------------------------------===//
// ExpandOp
//===----------------------------------------------------------------------===//

LogicalResult ExpandOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> shape = adaptor.getShape();
  for (auto [index, dim] : llvm::enumerate(shape))
    if (dim < 0)
      return emitInferenceError(location, getOperationName(), "shape[", index,
                                "] is ", dim,
                                ", but dimensions must be non-negative");
  FailureOr<SmallVector<int64_t>> broadcast =
      broadcastShapes({input.getShape(), shape});
  if (failed(broadcast))
    return emitInferenceError(location, getOperationName(), "input ", input,
                              " and shape [", shape, "] do not broadcast");
  types.push_back(input.clone(*broadcast));
  return success();
}

//===----------------------------------------------------------------------===//
// ResizeOp
//===----------------------------------------------------------------------===//

/// Added to `input_dim * scale` before rounding down, so that a scale
/// computed as `size / input_dim` gives back `size` (see the op description).
static constexpr double kResizeEpsilon = 1e-9;

/// 2^63: resized dimensions below it fit in an int64_t.
static constexpr double kInt64Bound = 9223372036854775808.0;

/// The type of `input` resized by `scales`.
static FailureOr<RankedTensorType>
inferResizeType(std::optional<Location> location, StringRef opName,
                RankedTensorType input, ArrayRef<double> scales) {
  auto fail = [&](auto &&...args) -> FailureOr<RankedTensorType> {
    (void)emitInferenceError(location, opName, args...);
    return failure();
  };
  if (static_cast<int64_t>(scales.size()) != input.getRank())
    return fail("scales has ", scales.size(), " entries, but the input ", input,
                " has rank ", input.getRank());
  SmallVector<int64_t> shape;
  for (auto [index, scale] : llvm::enumerate(scales)) {
    if (!(scale > 0) || !std::isfinite(scale))
      return fail("scales[", index, "] is ", scale,
                  ", but scales must be positive and finite");
    int64_t inputSize = input.getDimSize(index);
    double size = std::floor(inputSize * scale + kResizeEpsilon);
    if (size < 1)
      return fail("scales[", index, "] = ", scale, " resizes dimension ", index,
                  " of size ", inputSize, " to 0 elements");
    if (size >= kInt64Bound)
      return fail("scales[", index, "] = ", scale, " resizes dimension ", index,
                  " of size ", inputSize, " beyond the range of int64");
    shape.push_back(static_cast<int64_t>(size));
  }
  return input.clone(shape);
}

LogicalResult ResizeOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> type =
      inferResizeType(location, getOperationName(),
                      cast<RankedTensorType>(adaptor.getInput().getType()),
                      adaptor.getScales());
  if (failed(type))
    return failure();
  types.push_back(*type);
  return success();
}

int64_t ResizeOp::getPointsPerDim() {
  return llvm::StringSwitch<int64_t>(getMode())
      .Case("linear", 2)
      .Case("cubic", 4)
      .Default(1);
}

/// Checks the sampling attributes that resize and resize_grad share, for
/// an input (of the forward) of type `inputType`.
template <typename ResizeLikeOp>
static LogicalResult verifyResizeAttributes(ResizeLikeOp resize,
                                            RankedTensorType inputType) {
  Operation *op = resize.getOperation();
  StringRef mode = resize.getMode();
  StringRef transformation = resize.getCoordinateTransformationMode();
  StringRef rounding = resize.getNearestMode();
  std::optional<ArrayRef<double>> roi = resize.getRoi();
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, mode))
    return op->emitOpError("mode must be \"nearest\", \"linear\" or \"cubic\", "
                           "got \"")
           << mode << "\"";
  if (mode != "nearest" && !isa<FloatType>(inputType.getElementType()))
    return op->emitOpError("mode \"")
           << mode << "\" needs a floating-point input, got " << inputType;
  if (!llvm::is_contained({"half_pixel", "asymmetric", "align_corners",
                           "pytorch_half_pixel", "tf_half_pixel_for_nn",
                           "tf_crop_and_resize"},
                          transformation))
    return op->emitOpError(
               "coordinate_transformation_mode must be "
               "\"half_pixel\", \"asymmetric\", \"align_corners\", "
               "\"pytorch_half_pixel\", \"tf_half_pixel_for_nn\" or "
               "\"tf_crop_and_resize\", got \"")
           << transformation << "\"";
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          rounding))
    return op->emitOpError(
               "nearest_mode must be \"round_prefer_floor\", "
               "\"round_prefer_ceil\", \"floor\" or \"ceil\", got \"")
           << rounding << "\"";
  bool crop = transformation == "tf_crop_and_resize";
  if (crop && !roi)
    return op->emitOpError("coordinate_transformation_mode "
                           "\"tf_crop_and_resize\" needs a roi");
  if (!crop && roi)
    return op->emitOpError(
               "roi is only used with coordinate_transformation_mode "
               "\"tf_crop_and_resize\", not \"")
           << transformation << "\"";
  int64_t rank = inputType.getRank();
  if (roi && static_cast<int64_t>(roi->size()) != 2 * rank)
    return op->emitOpError("roi has ")
           << roi->size() << " entries, but needs " << 2 * rank
           << " (a start and an end per dimension of the input)";
  if (roi && !llvm::all_of(*roi, [](double v) { return std::isfinite(v); }))
    return op->emitOpError("roi must be finite");
  return success();
}

LogicalResult ResizeOp::verify() {
  return verifyResizeAttributes(*this,
                                cast<RankedTensorType>(getInput().getType()));
}

LogicalResult ResizeGradOp::verify() {
  RankedTensorType input = getInputGrad().getType();
  if (failed(verifyResizeAttributes(*this, input)))
    return failure();
  FailureOr<RankedTensorType> output =
      inferResizeType(getLoc(), getOperationName(), input, getScales());
  if (failed(output))
    return failure();
  if (*output != getOutputGrad().getType())
    return emitOpError("output_grad ")
           << getOutputGrad().getType()
           << " is not the type of the resize's output (" << *output << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// SliceGradOp, GatherGradOp
//===----------------------------------------------------------------------===//

LogicalResult SliceGradOp::verify() {
  FailureOr<RankedTensorType> output =
      inferSliceType(getLoc(), getOperationName(), getInputGrad().getType(),
                     getStarts(), getEnds(), getAxes(), getSteps());
  if (failed(output))
    return failure();
  if (*output != getOutputGrad().getType())
    return emitOpError("output_grad ")
           << getOutputGrad().getType()
           << " is not the type of the slice's output (" << *output << ")";
  return success();
}

void SliceGradOp::getDimStartsAndSteps(SmallVectorImpl<int64_t> &dimStarts,
                                       SmallVectorImpl<int64_t> &dimSteps) {
  getSliceStartsAndSteps(getInputGrad().getType().getShape(), getStarts(),
                         getEnds(), getAxes(), getSteps(), dimStarts, dimSteps);
}

LogicalResult GatherGradOp::verify() {
  FailureOr<RankedTensorType> output =
      inferGatherType(getLoc(), getOperationName(), getInputGrad().getType(),
                      getIndices().getType(), static_cast<int64_t>(getAxis()));
  if (failed(output))
    return failure();
  if (*output != getOutputGrad().getType())
    return emitOpError("output_grad ")
           << getOutputGrad().getType()
           << " is not the type of the gather's output (" << *output << ")";
  return success();
}

bool mlir::lethe::isView(Operation *op) {
  return isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(op);
}
