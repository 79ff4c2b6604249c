//===- FuseGelu.cpp - --lethe-fuse-gelu -----------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// GELU written out with erf, as ONNX exporters write it before opset 20,
// becomes one lethe.gelu. The written-out form is the product of three
// factors, x, 0.5 and (1 + erf(x / sqrt(2))), as two lethe.mul in any
// grouping; the pass flattens each product of two muls into its factors and
// recognizes them, so that every grouping and operand order is one case.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/Transforms/Passes.h"

#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <optional>

namespace mlir::lethe {
#define GEN_PASS_DEF_FUSEGELUPASS
#include "lethe/Dialect/Lethe/Transforms/Passes.h.inc"
} // namespace mlir::lethe

using namespace mlir;
using namespace mlir::lethe;

namespace {

/// The value of `value` when it is a lethe.constant whose elements are all
/// one float (a splat), as a double.
std::optional<double> getSplatValue(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto elements = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!elements || !elements.isSplat() ||
      !isa<FloatType>(elements.getElementType()))
    return std::nullopt;
  return elements.getSplatValue<APFloat>().convertToDouble();
}

/// Whether the constant `value` is `expected` within a few units of
/// rounding of `type`, the element type of the tensor it multiplies.
bool isConstant(Value value, double expected, FloatType type) {
  std::optional<double> actual = getSplatValue(value);
  if (!actual)
    return false;
  // Four ulps of the element type at `expected`: an exporter rounds the
  // constant once, perhaps through another precision.
  double epsilon =
      std::ldexp(1.0, -static_cast<int>(type.getFPMantissaWidth()) + 1);
  return std::abs(*actual - expected) <= 4 * epsilon * std::abs(expected);
}

/// Whether `op` may be folded into the fused op: its result has the
/// fused op's type and nothing else reads it.
bool isInner(Operation *op, Type type) {
  return op && op->getNumResults() == 1 && op->getResult(0).getType() == type &&
         op->getResult(0).hasOneUse();
}

/// A GELU found at a product: `input` and the ops it replaces, users
/// first.
struct GeluMatch {
  Value input;
  SmallVector<Operation *> ops;
};

/// The operand of the binary `op` beside a constant equal to `expected`:
/// the first when the second is that constant, or, where `op` commutes,
/// the second when the first is; null otherwise.
Value otherThanConstant(Operation *op, double expected, FloatType type) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  if (isConstant(rhs, expected, type))
    return lhs;
  if (op->hasTrait<mlir::OpTrait::IsCommutative>() &&
      isConstant(lhs, expected, type))
    return rhs;
  return nullptr;
}

/// Matches `1 + erf(x / sqrt(2))` (or `erf(x * (1 / sqrt(2))) + 1`, in any
/// operand order) at `value`; returns x and appends the ops, users first.
Value matchErfTerm(Value value, Type type, FloatType elementType,
                   SmallVectorImpl<Operation *> &ops) {
  auto add = value.getDefiningOp<AddOp>();
  if (!isInner(add, type))
    return nullptr;
  Value erfValue = otherThanConstant(add, 1.0, elementType);
  auto erf = erfValue ? erfValue.getDefiningOp<ErfOp>() : ErfOp();
  if (!isInner(erf, type))
    return nullptr;
  Operation *scale = erf.getInput().getDefiningOp();
  if (!isInner(scale, type))
    return nullptr;
  Value input;
  if (isa<DivOp>(scale))
    input = otherThanConstant(scale, std::sqrt(2.0), elementType);
  else if (isa<MulOp>(scale))
    input = otherThanConstant(scale, 1 / std::sqrt(2.0), elementType);
  if (!input || input.getType() != type)
    return nullptr;
  ops.append({add, erf, scale});
  return input;
}

/// Matches GELU at the product `root`.
std::optional<GeluMatch> matchGelu(MulOp root) {
  Type type = root.getType();
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return std::nullopt;
  auto elementType = dyn_cast<FloatType>(tensorType.getElementType());
  if (!elementType)
    return std::nullopt;

  // The factors: the operands of the root, and those of an operand that is
  // itself a product the root alone reads.
  GeluMatch match;
  match.ops.push_back(root);
  SmallVector<Value, 4> factors;
  for (Value operand : root->getOperands()) {
    auto inner = operand.getDefiningOp<MulOp>();
    if (isInner(inner, type)) {
      factors.append({inner.getLhs(), inner.getRhs()});
      match.ops.push_back(inner);
    } else {
      factors.push_back(operand);
    }
  }
  if (factors.size() != 3)
    return std::nullopt;

  // One factor is 0.5, one 1 + erf(x / sqrt(2)), and the third x.
  for (size_t half = 0; half < 3; ++half) {
    if (!isConstant(factors[half], 0.5, elementType))
      continue;
    for (size_t term = 0; term < 3; ++term) {
      if (term == half)
        continue;
      SmallVector<Operation *> termOps;
      Value input = matchErfTerm(factors[term], type, elementType, termOps);
      if (!input || input != factors[3 - half - term])
        continue;
      match.input = input;
      match.ops.append(termOps);
      return match;
    }
  }
  return std::nullopt;
}

struct FuseGeluPass : public lethe::impl::FuseGeluPassBase<FuseGeluPass> {
  void runOnOperation() override {
    SmallVector<MulOp> products;
    getOperation().walk([&](MulOp op) { products.push_back(op); });
    // Later products first, so that a GELU's outer product is its root; the
    // inner product it erases is skipped when its turn comes.
    DenseSet<Operation *> erased;
    for (MulOp root : llvm::reverse(products)) {
      if (erased.contains(root))
        continue;
      std::optional<GeluMatch> match = matchGelu(root);
      if (!match)
        continue;
      SmallVector<Location> locations;
      for (Operation *op : match->ops)
        locations.push_back(op->getLoc());
      OpBuilder builder(root);
      auto gelu =
          GeluOp::create(builder, builder.getFusedLoc(locations), match->input);
      root.getResult().replaceAllUsesWith(gelu.getResult());
      // Users first; constants nothing reads any more go too.
      llvm::SetVector<Operation *> constants;
      for (Operation *op : match->ops) {
        for (Value operand : op->getOperands())
          if (auto constant = operand.getDefiningOp<ConstantOp>())
            constants.insert(constant);
        erased.insert(op);
        op->erase();
      }
      for (Operation *constant : constants)
        if (constant->use_empty())
          constant->erase();
      ++numFused;
    }
  }
};

} // namespace
