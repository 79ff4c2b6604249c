//===- ContractionOps.cpp - Matrix products -------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Result-type inference, verifiers and costs of `matmul` and `gemm`.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheOps.h"

using namespace mlir;
using namespace mlir::lethe;

//===----------------------------------------------------------------------===//
// MatMulOp
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (lhs.getElementType() != rhs.getElementType())
    return emitInferenceError(location, getOperationName(),
                              "operands have different element types (",
                              lhs.getElementType(), " and ",
                              rhs.getElementType(), ")");
  if (lhs.getRank() == 0 || rhs.getRank() == 0)
    return emitInferenceError(location, getOperationName(),
                              "operands must have rank 1 or more, got ", lhs,
                              " and ", rhs);

  // Promote 1-D operands to matrices as numpy does.
  SmallVector<int64_t> lhsShape(lhs.getShape()), rhsShape(rhs.getShape());
  if (lhs.getRank() == 1)
    lhsShape.insert(lhsShape.begin(), 1);
  if (rhs.getRank() == 1)
    rhsShape.push_back(1);

  int64_t k = lhsShape.back(), rhsK = rhsShape[rhsShape.size() - 2];
  if (k != rhsK)
    return emitInferenceError(location, getOperationName(),
                              "contraction dimensions differ: ", lhs, " has ",
                              k, " columns but ", rhs, " has ", rhsK, " rows");

  ArrayRef<int64_t> lhsBatch = ArrayRef<int64_t>(lhsShape).drop_back(2);
  ArrayRef<int64_t> rhsBatch = ArrayRef<int64_t>(rhsShape).drop_back(2);
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes({lhsBatch, rhsBatch});
  if (failed(shape))
    return emitInferenceError(location, getOperationName(),
                              "batch dimensions of ", lhs, " and ", rhs,
                              " do not broadcast");
  if (lhs.getRank() != 1)
    shape->push_back(lhsShape[lhsShape.size() - 2]);
  if (rhs.getRank() != 1)
    shape->push_back(rhsShape.back());
  types.push_back(RankedTensorType::get(*shape, lhs.getElementType()));
  return success();
}

int64_t MatMulOp::getFlops() {
  // Each output element is a dot product of length K: K multiplies and K adds.
  int64_t k = getLhs().getType().getShape().back();
  return 2 * k * getNumElements(getType());
}

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto a = cast<RankedTensorType>(adaptor.getA().getType());
  auto b = cast<RankedTensorType>(adaptor.getB().getType());
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitInferenceError(location, getOperationName(),
                              "operands a and b must be matrices, got ", a,
                              " and ", b);
  if (a.getElementType() != b.getElementType())
    return emitInferenceError(location, getOperationName(),
                              "operands have different element types (",
                              a.getElementType(), " and ", b.getElementType(),
                              ")");
  bool transA = adaptor.getTransA(), transB = adaptor.getTransB();
  int64_t m = a.getDimSize(transA ? 1 : 0), k = a.getDimSize(transA ? 0 : 1);
  int64_t bK = b.getDimSize(transB ? 1 : 0), n = b.getDimSize(transB ? 0 : 1);
  if (k != bK)
    return emitInferenceError(
        location, getOperationName(), "contraction dimensions differ: op(a) is ",
        m, "x", k, " and op(b) is ", bK, "x", n,
        " (after trans_a = ", transA, ", trans_b = ", transB, ")");
  auto result = RankedTensorType::get({m, n}, a.getElementType());
  if (Value cValue = adaptor.getC()) {
    auto c = cast<RankedTensorType>(cValue.getType());
    if (c.getElementType() != a.getElementType())
      return emitInferenceError(location, getOperationName(), "c has element "
                                "type ", c.getElementType(), ", expected ",
                                a.getElementType());
    // Unidirectional broadcasting: c must broadcast to (M, N) without
    // growing the result.
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes({c.getShape(), result.getShape()});
    if (c.getRank() > 2 || failed(shape) ||
        ArrayRef<int64_t>(*shape) != result.getShape())
      return emitInferenceError(location, getOperationName(), "c of type ", c,
                                " does not broadcast to the result ", result);
  }
  types.push_back(result);
  return success();
}

int64_t GemmOp::getFlops() {
  // 2 * M * N * K for the product, then alpha and beta * c: 3 per element.
  int64_t k = getTransA() ? getA().getType().getDimSize(0)
                          : getA().getType().getDimSize(1);
  int64_t elements = getNumElements(getType());
  return 2 * k * elements + (getC() ? 3 : 1) * elements;
}
