//===- ConvolutionOps.cpp - Convolution ops
//---------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers, result-type inference and costs of the ops in
// LetheConvolutionOps.td.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheOps.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::lethe;

/// Checks what conv and conv_transpose share: `input` (N, C, D1..Dn) with n
/// from 1 to 3, `weight` of the same rank and element type, `group` >= 1
/// dividing `groupedChannels`, and a `bias` vector of `outputChannels`.
static LogicalResult verifyConvolutionOperands(std::optional<Location> location,
                                               StringRef opName,
                                               RankedTensorType input,
                                               RankedTensorType weight,
                                               Value bias, int64_t group) {
  if (input.getRank() < 3 || input.getRank() > 5)
    return emitInferenceError(location, opName,
                              "input must have rank 3 to 5 (N, C and 1 to 3 "
                              "spatial dims), got ",
                              input);
  if (weight.getRank() != input.getRank())
    return emitInferenceError(location, opName, "weight ", weight,
                              " must have the input's rank ", input.getRank());
  if (weight.getElementType() != input.getElementType())
    return emitInferenceError(
        location, opName, "operands have different element types (",
        input.getElementType(), " and ", weight.getElementType(), ")");
  if (group < 1)
    return emitInferenceError(location, opName, "group must be positive, got ",
                              group);
  if (bias) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (biasType.getRank() != 1 ||
        biasType.getElementType() != input.getElementType())
      return emitInferenceError(location, opName, "bias ", biasType,
                                " must be a vector of ",
                                input.getElementType());
  }
  return success();
}

/// Checks that `bias` (if any) has `channels` elements.
static LogicalResult verifyBiasLength(std::optional<Location> location,
                                      StringRef opName, Value bias,
                                      int64_t channels) {
  if (bias && cast<RankedTensorType>(bias.getType()).getDimSize(0) != channels)
    return emitInferenceError(
        location, opName, "bias has ",
        cast<RankedTensorType>(bias.getType()).getDimSize(0),
        " elements, expected one per output channel (", channels, ")");
  return success();
}

/// The product of `values`.
static int64_t product(ArrayRef<int64_t> values) {
  int64_t result = 1;
  for (int64_t value : values)
    result *= value;
  return result;
}

//===----------------------------------------------------------------------===//
// ConvOp
//===----------------------------------------------------------------------===//

/// The output type of a convolution of `input` with `weight` (and `bias`,
/// if any), after checking them.
static FailureOr<RankedTensorType>
inferConvType(std::optional<Location> location, StringRef opName,
              RankedTensorType input, RankedTensorType weight, Value bias,
              ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
              ArrayRef<int64_t> dilations, int64_t group) {
  if (failed(verifyConvolutionOperands(location, opName, input, weight, bias,
                                       group)))
    return failure();
  int64_t channels = input.getDimSize(1), filters = weight.getDimSize(0);
  if (channels % group != 0 || weight.getDimSize(1) * group != channels) {
    (void)emitInferenceError(
        location, opName, "weight has ", weight.getDimSize(1),
        " input channels per group, but the input has ", channels,
        " channels and group is ", group, " (expected ", channels / group,
        channels % group ? ", and group must divide the channels)" : ")");
    return failure();
  }
  if (filters % group != 0) {
    (void)emitInferenceError(location, opName, "weight has ", filters,
                             " filters, which group ", group,
                             " does not divide");
    return failure();
  }
  if (failed(verifyBiasLength(location, opName, bias, filters)))
    return failure();
  FailureOr<SmallVector<int64_t>> spatial = inferWindowShape(
      location, opName, input.getShape().drop_front(2),
      weight.getShape().drop_front(2), strides, pads, dilations,
      /*ceilMode=*/false);
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> shape = {input.getDimSize(0), filters};
  shape.append(spatial->begin(), spatial->end());
  return RankedTensorType::get(shape, input.getElementType());
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> type =
      inferConvType(location, getOperationName(),
                    cast<RankedTensorType>(adaptor.getInput().getType()),
                    cast<RankedTensorType>(adaptor.getWeight().getType()),
                    adaptor.getBias(), adaptor.getStrides(), adaptor.getPads(),
                    adaptor.getDilations(), adaptor.getGroup());
  if (failed(type))
    return failure();
  types.push_back(*type);
  return success();
}

int64_t ConvOp::getFlops() {
  // One multiply-add per output element and weight of its group, plus the
  // bias.
  RankedTensorType weight = getWeight().getType();
  int64_t perOutput = 2 * product(weight.getShape().drop_front(1));
  int64_t outputs = getNumElements(getType());
  return outputs * perOutput + (getBias() ? outputs : 0);
}

int64_t ConvOp::getWorkspaceBytes() {
  // The cost model assumes im2col + GEMM: a column buffer of (C/group) *
  // prod(kernel) rows and prod(output spatial) columns, for one image and one
  // group at a time.
  RankedTensorType weight = getWeight().getType(), output = getType();
  return product(weight.getShape().drop_front(1)) *
         product(output.getShape().drop_front(2)) *
         getElementSizeInBytes(output.getElementType());
}

//===----------------------------------------------------------------------===//
// ConvTransposeOp
//===----------------------------------------------------------------------===//

LogicalResult ConvTransposeOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  int64_t group = adaptor.getGroup();
  if (failed(verifyConvolutionOperands(location, getOperationName(), input,
                                       weight, adaptor.getBias(), group)))
    return failure();
  int64_t channels = input.getDimSize(1);
  if (weight.getDimSize(0) != channels)
    return emitInferenceError(
        location, getOperationName(), "weight has ", weight.getDimSize(0),
        " input channels (dim 0), but the input has ", channels);
  if (channels % group != 0)
    return emitInferenceError(location, getOperationName(), "group ", group,
                              " does not divide the ", channels,
                              " input channels");
  int64_t filters = weight.getDimSize(1) * group;
  if (failed(verifyBiasLength(location, getOperationName(), adaptor.getBias(),
                              filters)))
    return failure();

  ArrayRef<int64_t> spatial = input.getShape().drop_front(2);
  ArrayRef<int64_t> kernel = weight.getShape().drop_front(2);
  ArrayRef<int64_t> strides = adaptor.getStrides(), pads = adaptor.getPads(),
                    dilations = adaptor.getDilations(),
                    outputPadding = adaptor.getOutputPadding();
  size_t rank = spatial.size();
  if (strides.size() != rank || dilations.size() != rank ||
      outputPadding.size() != rank || pads.size() != 2 * rank)
    return emitInferenceError(location, getOperationName(),
                              "strides, dilations and output_padding "
                              "must have ",
                              rank, " entries and pads ", 2 * rank, ", got ",
                              strides.size(), ", ", dilations.size(), ", ",
                              outputPadding.size(), " and ", pads.size());
  SmallVector<int64_t> shape = {input.getDimSize(0), filters};
  for (size_t dim = 0; dim < rank; ++dim) {
    if (strides[dim] <= 0 || dilations[dim] <= 0 || pads[dim] < 0 ||
        pads[dim + rank] < 0 || outputPadding[dim] < 0)
      return emitInferenceError(location, getOperationName(),
                                "strides and dilations must be positive and "
                                "pads and output_padding non-negative (spatial "
                                "dim ",
                                dim, ")");
    if (outputPadding[dim] >= strides[dim] &&
        outputPadding[dim] >= dilations[dim])
      return emitInferenceError(
          location, getOperationName(), "output_padding ", outputPadding[dim],
          " of spatial dim ", dim, " must be smaller than its stride (",
          strides[dim], ") or dilation (", dilations[dim], ")");
    int64_t size = strides[dim] * (spatial[dim] - 1) + outputPadding[dim] +
                   dilations[dim] * (kernel[dim] - 1) + 1 - pads[dim] -
                   pads[dim + rank];
    if (size < 1)
      return emitInferenceError(location, getOperationName(), "spatial dim ",
                                dim, " of the output would have size ", size,
                                " (the pads are larger than the output)");
    shape.push_back(size);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

int64_t ConvTransposeOp::getFlops() {
  // Every input element meets every weight of its group once.
  RankedTensorType weight = getWeight().getType();
  int64_t perInput = 2 * product(weight.getShape().drop_front(1));
  return getNumElements(getInput().getType()) * perInput +
         (getBias() ? getNumElements(getType()) : 0);
}

int64_t ConvTransposeOp::getWorkspaceBytes() {
  // A GEMM into a column buffer of (M/group) * prod(kernel) rows and
  // prod(input spatial) columns, then col2im, for one image and one group.
  // The columns are the GEMM's products, kept in its compute precision (f32
  // for f16 and bf16) for col2im to sum.
  RankedTensorType weight = getWeight().getType(), input = getInput().getType();
  return product(weight.getShape().drop_front(1)) *
         product(input.getShape().drop_front(2)) *
         std::max<int64_t>(getElementSizeInBytes(input.getElementType()), 4);
}

//===----------------------------------------------------------------------===//
// ConvGradWeightOp
//===----------------------------------------------------------------------===//

LogicalResult ConvGradWeightOp::verify() {
  FailureOr<RankedTensorType> output =
      inferConvType(getLoc(), getOperationName(), getInput().getType(),
                    getWeightGrad().getType(), /*bias=*/Value(), getStrides(),
                    getPads(), getDilations(), getGroup());
  if (failed(output))
    return failure();
  if (*output != getOutputGrad().getType())
    return emitOpError("output_grad ")
           << getOutputGrad().getType()
           << " is not the type of the convolution's output (" << *output
           << ")";
  return success();
}

int64_t ConvGradWeightOp::getFlops() {
  // One multiply-add per output element and weight of its group, as the
  // forward.
  RankedTensorType weight = getWeightGrad().getType();
  return 2 * getNumElements(getOutputGrad().getType()) *
         product(weight.getShape().drop_front(1));
}

int64_t ConvGradWeightOp::getWorkspaceBytes() {
  // The forward's column buffer (one image and one group at a time).
  RankedTensorType weight = getWeightGrad().getType(),
                   output = getOutputGrad().getType();
  return product(weight.getShape().drop_front(1)) *
         product(output.getShape().drop_front(2)) *
         getElementSizeInBytes(output.getElementType());
}
