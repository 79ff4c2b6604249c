//===- PoolingOps.cpp - Pooling ops ---------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers, result-type inference and costs of the ops in
// LethePoolingOps.td.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheOps.h"

using namespace mlir;
using namespace mlir::lethe;

/// Checks that `input` is (N, C, D1..Dn) with n from 1 to 3.
static LogicalResult verifyPoolingInput(std::optional<Location> location,
                                        StringRef opName,
                                        RankedTensorType input) {
  if (input.getRank() < 3 || input.getRank() > 5)
    return emitInferenceError(location, opName,
                              "input must have rank 3 to 5 (N, C and 1 to 3 "
                              "spatial dims), got ",
                              input);
  return success();
}

/// The result type of a pooling op: (N, C) and the window's output sizes.
static LogicalResult inferPoolType(
    std::optional<Location> location, StringRef opName, RankedTensorType input,
    ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
    ArrayRef<int64_t> dilations, bool ceilMode, SmallVectorImpl<Type> &types) {
  if (failed(verifyPoolingInput(location, opName, input)))
    return failure();
  FailureOr<SmallVector<int64_t>> spatial =
      inferWindowShape(location, opName, input.getShape().drop_front(2), kernel,
                       strides, pads, dilations, ceilMode);
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> shape(input.getShape().take_front(2));
  shape.append(spatial->begin(), spatial->end());
  types.push_back(input.clone(shape));
  return success();
}

/// Elements of `kernel`'s window.
static int64_t windowSize(ArrayRef<int64_t> kernel) {
  int64_t size = 1;
  for (int64_t dim : kernel)
    size *= dim;
  return size;
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferPoolType(location, getOperationName(),
                       cast<RankedTensorType>(adaptor.getInput().getType()),
                       adaptor.getKernelShape(), adaptor.getStrides(),
                       adaptor.getPads(), adaptor.getDilations(),
                       adaptor.getCeilMode(), types);
}

int64_t MaxPoolOp::getFlops() {
  // One comparison per window element.
  return getNumElements(getType()) * windowSize(getKernelShape());
}

LogicalResult MaxPoolWithIndicesOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(inferPoolType(location, getOperationName(),
                           cast<RankedTensorType>(adaptor.getInput().getType()),
                           adaptor.getKernelShape(), adaptor.getStrides(),
                           adaptor.getPads(), adaptor.getDilations(),
                           adaptor.getCeilMode(), types)))
    return failure();
  auto output = cast<RankedTensorType>(types.front());
  types.push_back(output.clone(IntegerType::get(context, 64)));
  return success();
}

LogicalResult MaxPoolWithIndicesOp::verify() {
  uint64_t order = getStorageOrder();
  if (order > 1)
    return emitOpError("storage_order must be 0 (row-major) or 1 "
                       "(column-major), got ")
           << order;
  return success();
}

int64_t MaxPoolWithIndicesOp::getFlops() {
  return getNumElements(getOutput().getType()) * windowSize(getKernelShape());
}

LogicalResult AvgPoolOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  SmallVector<int64_t> dilations(adaptor.getKernelShape().size(), 1);
  return inferPoolType(location, getOperationName(),
                       cast<RankedTensorType>(adaptor.getInput().getType()),
                       adaptor.getKernelShape(), adaptor.getStrides(),
                       adaptor.getPads(), dilations, adaptor.getCeilMode(),
                       types);
}

int64_t AvgPoolOp::getFlops() {
  // One addition per window element and a division.
  return getNumElements(getType()) * (windowSize(getKernelShape()) + 1);
}

LogicalResult GlobalAvgPoolOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (failed(verifyPoolingInput(location, getOperationName(), input)))
    return failure();
  SmallVector<int64_t> shape(input.getShape().take_front(2));
  shape.append(input.getRank() - 2, 1);
  types.push_back(input.clone(shape));
  return success();
}

int64_t GlobalAvgPoolOp::getFlops() {
  return getNumElements(getInput().getType()) + getNumElements(getType());
}

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

/// Checks that pooling `input` with these attributes gives `outputGrad`'s
/// type: the gradient ops' operands must come from one forward op.
static LogicalResult
verifyPoolGradShape(std::optional<Location> location, StringRef opName,
                    RankedTensorType input, RankedTensorType outputGrad,
                    ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                    ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
                    bool ceilMode) {
  SmallVector<Type> types;
  if (failed(inferPoolType(location, opName, input, kernel, strides, pads,
                           dilations, ceilMode, types)))
    return failure();
  if (types.front() != outputGrad)
    return emitInferenceError(location, opName, "output_grad ", outputGrad,
                              " is not the type of the pooling's output (",
                              types.front(), ")");
  return success();
}

LogicalResult MaxPoolGradOp::inferReturnTypes(MLIRContext *context,
                                              std::optional<Location> location,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (failed(verifyPoolGradShape(
          location, getOperationName(), input,
          cast<RankedTensorType>(adaptor.getOutputGrad().getType()),
          adaptor.getKernelShape(), adaptor.getStrides(), adaptor.getPads(),
          adaptor.getDilations(), adaptor.getCeilMode())))
    return failure();
  types.push_back(input);
  return success();
}

int64_t MaxPoolGradOp::getFlops() {
  // The forward's comparisons again, and an addition per output element.
  return getNumElements(getOutputGrad().getType()) *
         (windowSize(getKernelShape()) + 1);
}

LogicalResult AvgPoolGradOp::verify() {
  SmallVector<int64_t> dilations(getKernelShape().size(), 1);
  return verifyPoolGradShape(getLoc(), getOperationName(),
                             getInputGrad().getType(),
                             getOutputGrad().getType(), getKernelShape(),
                             getStrides(), getPads(), dilations, getCeilMode());
}

int64_t AvgPoolGradOp::getFlops() {
  // A division per output element and an addition per window element.
  return getNumElements(getOutputGrad().getType()) *
         (windowSize(getKernelShape()) + 1);
}
