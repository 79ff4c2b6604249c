//===- Autodiff.cpp - --lethe-autodiff ------------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Reverse-mode differentiation of a model function's loss. The ops on a path
// from a differentiated argument to the loss are "active"; walking them in
// reverse, each op's gradient rule turns the gradients of its results into
// gradients of its operands, which are summed per value. The rules build
// `lethe` ops: compositions of forward ops where the derivative is short,
// and the dedicated gradient ops (relu_grad, softmax_cross_entropy_grad,
// ...) where it is not.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/Transforms/Autodiff.h"
#include "lethe/Dialect/Lethe/Transforms/Passes.h"

#include "PassUtils.h"

#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <functional>
#include <numeric>

namespace mlir::lethe {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "lethe/Dialect/Lethe/Transforms/Passes.h.inc"
} // namespace mlir::lethe

using namespace mlir;
using namespace mlir::lethe;

namespace {

//===----------------------------------------------------------------------===//
// Builder helpers
//===----------------------------------------------------------------------===//

/// Builds the backward ops of one forward op, at the builder's insertion
/// point and with the forward op's location.
class GradientBuilder {
public:
  GradientBuilder(OpBuilder &builder, Location loc)
      : builder(builder), loc(loc) {}

  /// A constant of `type` (floating-point) with every element `value`.
  Value splat(RankedTensorType type, double value) {
    return ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(type,
                               FloatAttr::get(type.getElementType(), value)));
  }

  /// A scalar (rank-0) constant of `elementType`.
  Value scalar(Type elementType, double value) {
    return splat(RankedTensorType::get({}, elementType), value);
  }

  Value add(Value a, Value b) { return AddOp::create(builder, loc, a, b); }
  Value sub(Value a, Value b) { return SubOp::create(builder, loc, a, b); }
  Value mul(Value a, Value b) { return MulOp::create(builder, loc, a, b); }
  Value div(Value a, Value b) { return DivOp::create(builder, loc, a, b); }
  Value neg(Value a) { return NegOp::create(builder, loc, a); }
  Value exp(Value a) { return ExpOp::create(builder, loc, a); }
  Value log(Value a) { return LogOp::create(builder, loc, a); }

  /// `a` times the constant `factor` (a itself when factor is 1).
  Value scale(Value a, double factor) {
    if (factor == 1.0)
      return a;
    return mul(a, scalar(elementTypeOf(a), factor));
  }

  Value reshape(Value a, ArrayRef<int64_t> shape) {
    if (typeOf(a).getShape() == shape)
      return a;
    return ReshapeOp::create(builder, loc, a,
                             builder.getDenseI64ArrayAttr(shape),
                             /*allowzero=*/builder.getUnitAttr());
  }

  Value transpose(Value a, ArrayRef<int64_t> perm) {
    return TransposeOp::create(builder, loc, a,
                               builder.getDenseI64ArrayAttr(perm));
  }

  /// The sum of `a` over `axes`, keeping them as dims of size 1.
  Value reduceSum(Value a, ArrayRef<int64_t> axes) {
    return ReduceSumOp::create(builder, loc, a,
                               builder.getDenseI64ArrayAttr(axes),
                               builder.getBoolAttr(true));
  }

  /// `grad` (the gradient of a broadcast result) summed back to `type`,
  /// the type of the operand that was broadcast.
  Value unbroadcast(Value grad, RankedTensorType type) {
    RankedTensorType gradType = typeOf(grad);
    if (gradType == type)
      return grad;
    int64_t extra = gradType.getRank() - type.getRank();
    SmallVector<int64_t> axes;
    for (int64_t dim = 0; dim < gradType.getRank(); ++dim)
      if (dim < extra ||
          (type.getDimSize(dim - extra) == 1 && gradType.getDimSize(dim) != 1))
        axes.push_back(dim);
    Value summed = axes.empty() ? grad : reduceSum(grad, axes);
    return reshape(summed, type.getShape());
  }

  /// The gradient of log_softmax's input from that of its output `y`
  /// along `axis`: dy - exp(y) sum(dy).
  Value logSoftmaxGrad(Value dy, Value y, int64_t axis) {
    return LogSoftmaxGradOp::create(builder, loc, dy, y,
                                    builder.getI64IntegerAttr(axis));
  }

  /// `grad` of a reduced value broadcast back to `type` (the reduction's
  /// input), given the reduced shape with kept dims `keptShape`.
  Value broadcastTo(Value grad, ArrayRef<int64_t> keptShape,
                    RankedTensorType type) {
    Value kept = reshape(grad, keptShape);
    if (typeOf(kept).getShape() == type.getShape())
      return kept;
    return ExpandOp::create(builder, loc, kept,
                            builder.getDenseI64ArrayAttr(type.getShape()));
  }

  static RankedTensorType typeOf(Value value) {
    return cast<RankedTensorType>(value.getType());
  }
  static Type elementTypeOf(Value value) {
    return typeOf(value).getElementType();
  }

  OpBuilder &builder;
  Location loc;
};

/// Whether `value` is a tensor of floats (which carry gradients).
bool isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// The permutation that swaps the last two of `rank` dims.
SmallVector<int64_t> swapLastTwo(int64_t rank) {
  SmallVector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

//===----------------------------------------------------------------------===//
// Gradient rules
//===----------------------------------------------------------------------===//

/// What a rule is given: the forward op, the gradients of its results (null
/// where a result has none), and which operands need a gradient. It fills
/// `operandGrads` (null where it gives none).
struct RuleContext {
  Operation *op;
  ArrayRef<Value> resultGrads;
  ArrayRef<bool> wanted;
  SmallVectorImpl<Value> &operandGrads;
  GradientBuilder &g;

  Value grad(unsigned index = 0) const { return resultGrads[index]; }
  Value operand(unsigned index) const { return op->getOperand(index); }
  Value result(unsigned index = 0) const { return op->getResult(index); }
  /// Whether operand `index` exists and needs a gradient.
  bool wants(unsigned index) const {
    return index < wanted.size() && wanted[index];
  }
  void set(unsigned index, Value value) { operandGrads[index] = value; }
};

/// The rule of a binary elementwise op with broadcasting.
LogicalResult binaryRule(RuleContext &c) {
  GradientBuilder &g = c.g;
  Value dy = c.grad(), a = c.operand(0), b = c.operand(1);
  auto typeA = GradientBuilder::typeOf(a), typeB = GradientBuilder::typeOf(b);
  return llvm::TypeSwitch<Operation *, LogicalResult>(c.op)
      .Case([&](AddOp) {
        if (c.wants(0))
          c.set(0, g.unbroadcast(dy, typeA));
        if (c.wants(1))
          c.set(1, g.unbroadcast(dy, typeB));
        return success();
      })
      .Case([&](SubOp) {
        if (c.wants(0))
          c.set(0, g.unbroadcast(dy, typeA));
        if (c.wants(1))
          c.set(1, g.unbroadcast(g.neg(dy), typeB));
        return success();
      })
      .Case([&](MulOp) {
        if (c.wants(0))
          c.set(0, g.unbroadcast(g.mul(dy, b), typeA));
        if (c.wants(1))
          c.set(1, g.unbroadcast(g.mul(dy, a), typeB));
        return success();
      })
      .Case([&](DivOp) {
        // y = a / b: da = dy / b, db = -dy * y / b.
        Value quotient = g.div(dy, b);
        if (c.wants(0))
          c.set(0, g.unbroadcast(quotient, typeA));
        if (c.wants(1))
          c.set(1, g.unbroadcast(g.neg(g.mul(quotient, c.result())), typeB));
        return success();
      })
      .Case([&](PowOp) {
        // y = a^b: da = dy * b * a^(b - 1), db = dy * y * log(a).
        if (c.wants(0)) {
          Value one = g.scalar(typeB.getElementType(), 1.0);
          Value lower = PowOp::create(g.builder, g.loc, a, g.sub(b, one));
          c.set(0, g.unbroadcast(g.mul(g.mul(dy, b), lower), typeA));
        }
        if (c.wants(1))
          c.set(1,
                g.unbroadcast(g.mul(g.mul(dy, c.result()), g.log(a)), typeB));
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

/// The rule of a unary elementwise op.
LogicalResult unaryRule(RuleContext &c) {
  GradientBuilder &g = c.g;
  Value dy = c.grad(), x = c.operand(0), y = c.result();
  Type element = GradientBuilder::elementTypeOf(x);
  Value dx =
      llvm::TypeSwitch<Operation *, Value>(c.op)
          .Case([&](NegOp) { return g.neg(dy); })
          .Case([&](ReluOp) {
            return ReluGradOp::create(g.builder, g.loc, dy, y).getResult();
          })
          .Case([&](LeakyReluOp op) {
            return LeakyReluGradOp::create(g.builder, g.loc, dy, x,
                                           op.getAlphaAttr())
                .getResult();
          })
          .Case([&](GeluOp op) {
            return GeluGradOp::create(g.builder, g.loc, dy, x,
                                      op.getApproximateAttr())
                .getResult();
          })
          .Case([&](ClipOp op) {
            // Float input, so the bounds are f64 attributes.
            return ClipGradOp::create(
                       g.builder, g.loc, dy, x,
                       dyn_cast_or_null<FloatAttr>(op.getMinAttr()),
                       dyn_cast_or_null<FloatAttr>(op.getMaxAttr()))
                .getResult();
          })
          .Case([&](SigmoidOp) {
            // y (1 - y)
            Value one = g.scalar(element, 1.0);
            return g.mul(dy, g.mul(y, g.sub(one, y)));
          })
          .Case([&](TanhOp) {
            // 1 - y^2
            Value one = g.scalar(element, 1.0);
            return g.mul(dy, g.sub(one, g.mul(y, y)));
          })
          .Case([&](ErfOp) {
            // 2 / sqrt(pi) * exp(-x^2)
            Value bell = g.exp(g.neg(g.mul(x, x)));
            return g.mul(dy, g.scale(bell, 2.0 / std::sqrt(M_PI)));
          })
          .Case([&](ExpOp) { return g.mul(dy, y); })
          .Case([&](LogOp) { return g.div(dy, x); })
          .Case([&](SqrtOp) { return g.div(g.scale(dy, 0.5), y); })
          .Default([](Operation *) { return Value(); });
  if (!dx)
    return failure();
  c.set(0, dx);
  return success();
}

/// The rule of matmul (numpy semantics). A vector operand is the matrix
/// numpy makes of it (a row for the left operand, a column for the right),
/// and the gradient is reshaped back.
LogicalResult matmulRule(RuleContext &c) {
  GradientBuilder &g = c.g;
  Value dy = c.grad(), a = c.operand(0), b = c.operand(1);
  auto typeA = GradientBuilder::typeOf(a), typeB = GradientBuilder::typeOf(b);
  // The operands as matrices, and dy with the dims the vectors dropped.
  SmallVector<int64_t> shapeA(typeA.getShape()), shapeB(typeB.getShape());
  SmallVector<int64_t> shapeY(GradientBuilder::typeOf(dy).getShape());
  if (typeA.getRank() == 1) {
    shapeA.insert(shapeA.begin(), 1);
    shapeY.insert(shapeY.end() - (typeB.getRank() == 1 ? 0 : 1), 1);
  }
  if (typeB.getRank() == 1) {
    shapeB.push_back(1);
    shapeY.push_back(1);
  }
  // A matrix right operand (a weight applied to every row of a batch): the
  // batch dims fold into the rows, so that each gradient is one gemm whose
  // flags do the transposes, and the weight's is no batch of products
  // summed afterwards. The reshapes are views (--lethe-assign-arena).
  if (typeA.getRank() >= 2 && typeB.getRank() == 2 && typeA.hasStaticShape() &&
      typeB.hasStaticShape()) {
    int64_t inner = shapeA.back(), columns = shapeB.back();
    int64_t rows = std::accumulate(shapeA.begin(), shapeA.end() - 1, int64_t{1},
                                   std::multiplies<int64_t>());
    OpBuilder &builder = g.builder;
    auto product = [&](Value lhs, Value rhs, bool transLhs, bool transRhs) {
      auto unit = [&](bool set) {
        return set ? builder.getUnitAttr() : UnitAttr();
      };
      return GemmOp::create(builder, g.loc, lhs, rhs, /*c=*/Value(),
                            builder.getF32FloatAttr(1.0f),
                            builder.getF32FloatAttr(1.0f), unit(transLhs),
                            unit(transRhs))
          .getResult();
    };
    Value dyRows = g.reshape(dy, {rows, columns});
    if (c.wants(0))
      c.set(0, g.reshape(product(dyRows, b, false, true), typeA.getShape()));
    if (c.wants(1))
      c.set(1, product(g.reshape(a, {rows, inner}), dyRows, true, false));
    return success();
  }
  Value a2 = g.reshape(a, shapeA), b2 = g.reshape(b, shapeB);
  Value dy2 = g.reshape(dy, shapeY);
  // y = a b: da = dy b^T, db = a^T dy, each summed over broadcast batch dims.
  if (c.wants(0)) {
    Value bT = g.transpose(b2, swapLastTwo(shapeB.size()));
    Value da = g.unbroadcast(MatMulOp::create(g.builder, g.loc, dy2, bT),
                             typeA.clone(shapeA));
    c.set(0, g.reshape(da, typeA.getShape()));
  }
  if (c.wants(1)) {
    Value aT = g.transpose(a2, swapLastTwo(shapeA.size()));
    Value db = g.unbroadcast(MatMulOp::create(g.builder, g.loc, aT, dy2),
                             typeB.clone(shapeB));
    c.set(1, g.reshape(db, typeB.getShape()));
  }
  return success();
}

/// The rule of gemm: y = alpha op(a) op(b) + beta c.
LogicalResult gemmRule(RuleContext &c) {
  auto gemm = cast<GemmOp>(c.op);
  GradientBuilder &g = c.g;
  OpBuilder &b = g.builder;
  Value dy = c.grad(), a = gemm.getA(), bMatrix = gemm.getB();
  bool transA = gemm.getTransA(), transB = gemm.getTransB();
  FloatAttr alpha = gemm.getAlphaAttr();
  auto unit = [&](bool set) { return set ? b.getUnitAttr() : UnitAttr(); };
  auto product = [&](Value lhs, Value rhs, bool tLhs, bool tRhs) -> Value {
    return GemmOp::create(b, g.loc, lhs, rhs, /*c=*/Value(), alpha,
                          b.getF32FloatAttr(1.0f), unit(tLhs), unit(tRhs));
  };
  // With opA = op(a) and opB = op(b): d opA = alpha dy opB^T and d opB =
  // alpha opA^T dy; a transposed operand takes the transposed gradient.
  if (c.wants(0))
    c.set(0, transA ? product(bMatrix, dy, transB, true)
                    : product(dy, bMatrix, false, !transB));
  if (c.wants(1))
    c.set(1, transB ? product(dy, a, true, transA)
                    : product(a, dy, !transA, false));
  if (c.wants(2))
    c.set(2, g.unbroadcast(g.scale(dy, gemm.getBetaAttr().getValueAsDouble()),
                           GradientBuilder::typeOf(gemm.getC())));
  return success();
}

/// The rule of the ops that only change the shape.
LogicalResult shapeRule(RuleContext &c) {
  GradientBuilder &g = c.g;
  Value dy = c.grad();
  auto inputType = GradientBuilder::typeOf(c.operand(0));
  if (auto transpose = dyn_cast<TransposeOp>(c.op)) {
    ArrayRef<int64_t> perm = transpose.getPerm();
    SmallVector<int64_t> inverse(perm.size());
    for (auto [index, dim] : llvm::enumerate(perm))
      inverse[dim] = index;
    c.set(0, g.transpose(dy, inverse));
    return success();
  }
  if (isa<ExpandOp>(c.op)) {
    c.set(0, g.unbroadcast(dy, inputType));
    return success();
  }
  // reshape, flatten, squeeze, unsqueeze: the same elements in order.
  c.set(0, g.reshape(dy, inputType.getShape()));
  return success();
}

/// The rule of reduce_sum, reduce_mean and reduce_max.
LogicalResult reduceRule(RuleContext &c) {
  GradientBuilder &g = c.g;
  if (auto max = dyn_cast<ReduceMaxOp>(c.op)) {
    c.set(0, ReduceMaxGradOp::create(g.builder, g.loc, c.grad(), max.getInput(),
                                     max.getOutput(), max.getAxesAttr(),
                                     max.getKeepdimsAttr()));
    return success();
  }
  auto inputType = GradientBuilder::typeOf(c.operand(0));
  SmallVector<int64_t> reduced;
  if (auto sum = dyn_cast<ReduceSumOp>(c.op))
    reduced = sum.getReducedDims();
  else
    reduced = cast<ReduceMeanOp>(c.op).getReducedDims();
  SmallVector<int64_t> kept(inputType.getShape());
  int64_t count = 1;
  for (int64_t axis : reduced) {
    count *= kept[axis];
    kept[axis] = 1;
  }
  Value dy = c.grad();
  if (isa<ReduceMeanOp>(c.op))
    dy = g.scale(dy, 1.0 / static_cast<double>(count));
  c.set(0, g.broadcastTo(dy, kept, inputType));
  return success();
}

/// The rule of softmax and log_softmax along their axis.
LogicalResult softmaxRule(RuleContext &c) {
  GradientBuilder &g = c.g;
  Value dy = c.grad(), y = c.result();
  if (auto softmax = dyn_cast<SoftmaxOp>(c.op)) {
    c.set(0, SoftmaxGradOp::create(g.builder, g.loc, dy, y,
                                   softmax.getAxisAttr()));
    return success();
  }
  c.set(0, g.logSoftmaxGrad(dy, y,
                            cast<LogSoftmaxOp>(c.op).getAxisAttr().getInt()));
  return success();
}

/// The rules of the losses.
LogicalResult lossRule(RuleContext &c) {
  GradientBuilder &g = c.g;
  OpBuilder &b = g.builder;
  return llvm::TypeSwitch<Operation *, LogicalResult>(c.op)
      .Case([&](SoftmaxCrossEntropyOp loss) -> LogicalResult {
        if (c.wants(2))
          return emitError(loss.getLoc(),
                           "lethe-autodiff: the gradient of "
                           "softmax_cross_entropy with respect to its "
                           "weights is not implemented");
        // The loss's contribution, then log_prob's (as log_softmax's).
        Value dScores;
        if (Value dLoss = c.grad(0))
          dScores = SoftmaxCrossEntropyGradOp::create(
              b, g.loc, dLoss, loss.getLogProb(), loss.getLabels(),
              loss.getWeights(), loss.getReductionAttr(),
              loss.getIgnoreIndexAttr());
        if (Value dLogProb = c.grad(1)) {
          Value viaLogProb = g.logSoftmaxGrad(dLogProb, loss.getLogProb(), 1);
          dScores = dScores ? g.add(dScores, viaLogProb) : viaLogProb;
        }
        c.set(0, dScores);
        return success();
      })
      .Case([&](NllOp loss) -> LogicalResult {
        if (c.wants(2))
          return emitError(loss.getLoc(),
                           "lethe-autodiff: the gradient of nll with "
                           "respect to its weight is not implemented");
        c.set(0, NllGradOp::create(b, g.loc, loss.getInput().getType(),
                                   c.grad(), loss.getTarget(), loss.getWeight(),
                                   loss.getReductionAttr(),
                                   loss.getIgnoreIndexAttr()));
        return success();
      })
      .Case([&](MseOp loss) {
        // d/dp of reduce((p - t)^2) = 2 (p - t) scaled by the loss gradient
        // (per element for "none", divided by the count for "mean").
        auto type = GradientBuilder::typeOf(loss.getPredictions());
        double factor = 2.0;
        if (loss.getReduction() == "mean")
          factor /= static_cast<double>(type.getNumElements());
        Value diff =
            g.scale(g.sub(loss.getPredictions(), loss.getTargets()), factor);
        Value dDiff = g.mul(diff, c.grad());
        if (c.wants(0))
          c.set(0, dDiff);
        if (c.wants(1))
          c.set(1, g.neg(dDiff));
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

/// The axes of `rank` dims but the channel dim 1: (0, 2, 3, ...).
SmallVector<int64_t> nonChannelAxes(int64_t rank) {
  SmallVector<int64_t> axes{0};
  for (int64_t dim = 2; dim < rank; ++dim)
    axes.push_back(dim);
  return axes;
}

/// `grad` (N, C, D...) summed to a vector of its C channels: the gradient of
/// a per-channel bias.
Value channelSum(GradientBuilder &g, Value grad) {
  RankedTensorType type = GradientBuilder::typeOf(grad);
  return g.reshape(g.reduceSum(grad, nonChannelAxes(type.getRank())),
                   {type.getDimSize(1)});
}

/// The rules of conv and conv_transpose. A convolution's input gradient is
/// the transposed convolution of the output gradient with the same weight
/// (and the other way round); the weight gradients are conv_grad_weight.
LogicalResult convolutionRule(RuleContext &c) {
  GradientBuilder &g = c.g;
  OpBuilder &b = g.builder;
  Value dy = c.grad();
  if (auto conv = dyn_cast<ConvOp>(c.op)) {
    auto inputType = GradientBuilder::typeOf(conv.getInput());
    if (c.wants(0)) {
      // The output size rounds down: output_padding restores the rows the
      // stride skipped at the end.
      ArrayRef<int64_t> strides = conv.getStrides(), pads = conv.getPads(),
                        dilations = conv.getDilations();
      ArrayRef<int64_t> kernel =
          conv.getWeight().getType().getShape().drop_front(2);
      size_t rank = strides.size();
      SmallVector<int64_t> outputPadding;
      for (size_t dim = 0; dim < rank; ++dim) {
        int64_t span = inputType.getDimSize(dim + 2) + pads[dim] +
                       pads[dim + rank] - dilations[dim] * (kernel[dim] - 1) -
                       1;
        outputPadding.push_back(span % strides[dim]);
      }
      c.set(0, ConvTransposeOp::create(
                   b, g.loc, dy, conv.getWeight(), /*bias=*/Value(),
                   conv.getStridesAttr(), conv.getPadsAttr(),
                   conv.getDilationsAttr(),
                   b.getDenseI64ArrayAttr(outputPadding), conv.getGroupAttr()));
    }
    if (c.wants(1))
      c.set(1, ConvGradWeightOp::create(
                   b, g.loc, conv.getWeight().getType(), conv.getInput(), dy,
                   conv.getStridesAttr(), conv.getPadsAttr(),
                   conv.getDilationsAttr(), conv.getGroupAttr()));
    if (c.wants(2))
      c.set(2, channelSum(g, dy));
    return success();
  }
  auto conv = cast<ConvTransposeOp>(c.op);
  // An output_padding of a stride or more (allowed when the dilation is
  // larger) adds positions no convolution of the output would give back.
  for (auto [padding, stride] :
       llvm::zip(conv.getOutputPadding(), conv.getStrides()))
    if (padding >= stride)
      return emitError(conv.getLoc(),
                       "lethe-autodiff: the gradient of a conv_transpose "
                       "whose output_padding (")
             << padding << ") is not smaller than its stride (" << stride
             << ") is not implemented";
  if (c.wants(0))
    c.set(0, ConvOp::create(b, g.loc, dy, conv.getWeight(), /*bias=*/Value(),
                            conv.getStridesAttr(), conv.getPadsAttr(),
                            conv.getDilationsAttr(), conv.getGroupAttr()));
  if (c.wants(1))
    c.set(1, ConvGradWeightOp::create(
                 b, g.loc, conv.getWeight().getType(), dy, conv.getInput(),
                 conv.getStridesAttr(), conv.getPadsAttr(),
                 conv.getDilationsAttr(), conv.getGroupAttr()));
  if (c.wants(2))
    c.set(2, channelSum(g, dy));
  return success();
}

/// The rules of the pooling ops.
LogicalResult poolingRule(RuleContext &c) {
  GradientBuilder &g = c.g;
  OpBuilder &b = g.builder;
  Value dy = c.grad();
  auto inputType = GradientBuilder::typeOf(c.operand(0));
  Value dx =
      llvm::TypeSwitch<Operation *, Value>(c.op)
          .Case<MaxPoolOp, MaxPoolWithIndicesOp>([&](auto pool) -> Value {
            return MaxPoolGradOp::create(
                b, g.loc, dy, pool.getInput(), pool.getKernelShapeAttr(),
                pool.getStridesAttr(), pool.getPadsAttr(),
                pool.getDilationsAttr(), pool.getCeilModeAttr());
          })
          .Case([&](AvgPoolOp pool) -> Value {
            return AvgPoolGradOp::create(
                b, g.loc, inputType, dy, pool.getKernelShapeAttr(),
                pool.getStridesAttr(), pool.getPadsAttr(),
                pool.getCeilModeAttr(), pool.getCountIncludePadAttr());
          })
          .Case([&](GlobalAvgPoolOp) -> Value {
            int64_t planes = inputType.getDimSize(0) * inputType.getDimSize(1);
            int64_t plane = planes ? inputType.getNumElements() / planes : 0;
            return g.broadcastTo(g.scale(dy, plane ? 1.0 / plane : 0.0),
                                 GradientBuilder::typeOf(dy).getShape(),
                                 inputType);
          });
  c.set(0, dx);
  return success();
}

/// Fails with a diagnostic when a result other than the first of `op`
/// (statistics that are not differentiated) has a gradient.
LogicalResult onlyFirstResult(RuleContext &c) {
  for (unsigned index = 1; index < c.resultGrads.size(); ++index)
    if (c.grad(index))
      return emitError(c.op->getLoc(), "lethe-autodiff: the gradient of ")
             << c.op->getName() << "'s result " << index
             << " (a statistic) is not implemented; only the output is "
                "differentiated";
  return success();
}

/// The rules of the normalizations.
LogicalResult normalizationRule(RuleContext &c) {
  if (failed(onlyFirstResult(c)))
    return failure();
  GradientBuilder &g = c.g;
  OpBuilder &b = g.builder;
  Value dy = c.grad();
  if (auto norm = dyn_cast<BatchNormTrainOp>(c.op)) {
    // The running statistics do not affect the output.
    auto grad =
        BatchNormGradOp::create(b, g.loc, dy, norm.getInput(), norm.getScale(),
                                norm.getSavedMean(), norm.getSavedInvStd());
    for (unsigned index = 0; index < 3; ++index)
      c.set(index, grad.getResult(index));
    return success();
  }
  if (auto norm = dyn_cast<LayerNormOp>(c.op)) {
    auto grad = LayerNormGradOp::create(
        b, g.loc, dy, norm.getInput(), norm.getScale(), norm.getMean(),
        norm.getInvStdDev(), norm.getAxisAttr());
    for (unsigned index = 0; index < c.op->getNumOperands(); ++index)
      c.set(index, grad.getResult(index));
    return success();
  }
  // Inference-mode batch_norm is affine per channel: y = (x - mean) * a +
  // bias with a = scale * inv and inv = 1 / sqrt(variance + epsilon).
  auto norm = cast<BatchNormOp>(c.op);
  auto inputType = GradientBuilder::typeOf(norm.getInput());
  Type element = inputType.getElementType();
  SmallVector<int64_t> channelShape(inputType.getRank(), 1);
  channelShape[1] = inputType.getDimSize(1);
  auto perChannel = [&](Value vector) {
    return g.reshape(vector, channelShape);
  };
  Value inv =
      g.div(g.scalar(element, 1.0),
            SqrtOp::create(
                b, g.loc,
                g.add(norm.getVariance(),
                      g.scalar(element, norm.getEpsilon().convertToDouble()))));
  Value factor = g.mul(norm.getScale(), inv);
  if (c.wants(0))
    c.set(0, g.mul(dy, perChannel(factor)));
  Value dBias = channelSum(g, dy);
  if (c.wants(2))
    c.set(2, dBias);
  if (c.wants(3))
    c.set(3, g.neg(g.mul(dBias, factor)));
  if (c.wants(1) || c.wants(4)) {
    Value xhat = g.mul(g.sub(norm.getInput(), perChannel(norm.getMean())),
                       perChannel(inv));
    Value dScale = channelSum(g, g.mul(dy, xhat));
    if (c.wants(1))
      c.set(1, dScale);
    // d/dvariance = -1/2 scale inv^2 sum(dy xhat).
    if (c.wants(4))
      c.set(4, g.scale(g.mul(g.mul(dScale, factor), inv), -0.5));
  }
  return success();
}

/// The rules of the ops that move data: concat, split, slice, gather,
/// resize, where and dropout.
LogicalResult dataMovementRule(RuleContext &c) {
  GradientBuilder &g = c.g;
  OpBuilder &b = g.builder;
  return llvm::TypeSwitch<Operation *, LogicalResult>(c.op)
      .Case([&](ConcatOp concat) {
        // The pieces of dy along the axis.
        int64_t rank = GradientBuilder::typeOf(concat.getResult()).getRank();
        int64_t axis = concat.getAxisAttr().getInt();
        if (axis < 0)
          axis += rank;
        SmallVector<int64_t> sizes;
        SmallVector<Type> types;
        for (Value input : concat.getInputs()) {
          sizes.push_back(GradientBuilder::typeOf(input).getDimSize(axis));
          types.push_back(input.getType());
        }
        auto split = SplitOp::create(b, g.loc, types, c.grad(),
                                     b.getI64IntegerAttr(axis),
                                     b.getDenseI64ArrayAttr(sizes));
        for (unsigned index = 0; index < types.size(); ++index)
          if (c.wants(index))
            c.set(index, split.getResult(index));
        return success();
      })
      .Case([&](SplitOp split) {
        // The result gradients concatenated, zeros for those without one.
        SmallVector<Value> pieces;
        for (auto [index, result] : llvm::enumerate(split.getResults())) {
          Value grad = c.grad(index);
          pieces.push_back(
              grad ? grad : g.splat(GradientBuilder::typeOf(result), 0.0));
        }
        c.set(0, ConcatOp::create(b, g.loc, pieces, split.getAxisAttr()));
        return success();
      })
      .Case([&](SliceOp slice) {
        c.set(0, SliceGradOp::create(b, g.loc, slice.getInput().getType(),
                                     c.grad(), slice.getStartsAttr(),
                                     slice.getEndsAttr(), slice.getAxesAttr(),
                                     slice.getStepsAttr()));
        return success();
      })
      .Case([&](GatherOp gather) {
        c.set(0, GatherGradOp::create(b, g.loc, gather.getData().getType(),
                                      c.grad(), gather.getIndices(),
                                      gather.getAxisAttr()));
        return success();
      })
      .Case([&](ResizeOp resize) {
        c.set(0, ResizeGradOp::create(
                     b, g.loc, TypeRange{resize.getInput().getType()},
                     ValueRange{c.grad()}, resize->getAttrs()));
        return success();
      })
      .Case([&](WhereOp where) {
        Value zero = g.scalar(GradientBuilder::elementTypeOf(c.grad()), 0.0);
        Value condition = where.getCondition();
        if (c.wants(1))
          c.set(1, g.unbroadcast(
                       WhereOp::create(b, g.loc, condition, c.grad(), zero),
                       GradientBuilder::typeOf(where.getLhs())));
        if (c.wants(2))
          c.set(2, g.unbroadcast(
                       WhereOp::create(b, g.loc, condition, zero, c.grad()),
                       GradientBuilder::typeOf(where.getRhs())));
        return success();
      })
      .Case([&](DropoutOp dropout) {
        // The kept elements, scaled as in the forward.
        if (!dropout.getTraining()) {
          c.set(0, c.grad());
          return success();
        }
        double keep = 1.0 - dropout.getRatio().convertToDouble();
        Value zero = g.scalar(GradientBuilder::elementTypeOf(c.grad()), 0.0);
        c.set(0, WhereOp::create(b, g.loc, dropout.getMask(),
                                 g.scale(c.grad(), 1.0 / keep), zero));
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

/// Runs the rule of `op`. Fails, after a diagnostic, when `op` has none.
LogicalResult buildGradient(RuleContext &c) {
  Operation *op = c.op;
  auto noRule = [&]() -> LogicalResult {
    return emitError(op->getLoc(), "lethe-autodiff: '")
           << op->getName()
           << "' has no gradient rule yet, and it lies between a "
              "differentiated argument and the loss";
  };
  if (isa<AddOp, SubOp, MulOp, DivOp, PowOp>(op))
    return binaryRule(c);
  if (isa<NegOp, ReluOp, LeakyReluOp, GeluOp, ClipOp, SigmoidOp, TanhOp, ErfOp,
          ExpOp, LogOp, SqrtOp>(op))
    return unaryRule(c);
  if (isa<MatMulOp>(op))
    return matmulRule(c);
  if (isa<GemmOp>(op))
    return gemmRule(c);
  if (isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp, TransposeOp, ExpandOp>(
          op))
    return shapeRule(c);
  if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op))
    return reduceRule(c);
  if (isa<SoftmaxOp, LogSoftmaxOp>(op))
    return softmaxRule(c);
  if (isa<SoftmaxCrossEntropyOp, NllOp, MseOp>(op))
    return lossRule(c);
  if (isa<ConvOp, ConvTransposeOp>(op))
    return convolutionRule(c);
  if (isa<MaxPoolOp, MaxPoolWithIndicesOp, AvgPoolOp, GlobalAvgPoolOp>(op))
    return poolingRule(c);
  if (isa<BatchNormOp, BatchNormTrainOp, LayerNormOp>(op))
    return normalizationRule(c);
  if (isa<ConcatOp, SplitOp, SliceOp, GatherOp, ResizeOp, WhereOp, DropoutOp>(
          op))
    return dataMovementRule(c);
  if (auto castOp = dyn_cast<CastOp>(op)) {
    // Active, so from a float type (integers carry no gradient).
    c.set(0, CastOp::create(c.g.builder, c.g.loc, c.grad(),
                            GradientBuilder::elementTypeOf(castOp.getInput())));
    return success();
  }
  return noRule();
}

//===----------------------------------------------------------------------===//
// Training mode
//===----------------------------------------------------------------------===//

/// A running statistic that the training step updates: the value of its
/// next step and the argument it replaces.
struct StateUpdate {
  Value next;
  unsigned argument;
};

/// Puts `func` in training mode: batch_norm becomes batch_norm_train and
/// dropout drops, keyed by the step argument. Returns the running
/// statistics to update (those that are arguments of `func`).
SmallVector<StateUpdate> enterTrainingMode(func::FuncOp func) {
  Block &body = func.getBody().front();
  SmallVector<StateUpdate> updates;
  auto argumentIndex = [&](Value value) -> std::optional<unsigned> {
    auto argument = dyn_cast<BlockArgument>(value);
    if (argument && argument.getOwner() == &body)
      return argument.getArgNumber();
    return std::nullopt;
  };
  auto recordUpdates = [&](BatchNormTrainOp norm) {
    for (auto [running, next] :
         {std::pair<Value, Value>{norm.getRunningMean(),
                                  norm.getRunningMeanOut()},
          {norm.getRunningVariance(), norm.getRunningVarianceOut()}})
      if (std::optional<unsigned> index = argumentIndex(running))
        updates.push_back({next, *index});
  };
  Value step;
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    if (auto norm = dyn_cast<BatchNormOp>(op)) {
      OpBuilder builder(norm);
      auto train = BatchNormTrainOp::create(
          builder, norm.getLoc(), norm.getInput(), norm.getScale(),
          norm.getBias(), norm.getMean(), norm.getVariance(),
          norm.getEpsilonAttr(), norm.getMomentumAttr());
      norm.getResult().replaceAllUsesWith(train.getOutput());
      norm.erase();
      recordUpdates(train);
    } else if (auto norm = dyn_cast<BatchNormTrainOp>(op)) {
      recordUpdates(norm);
    } else if (auto dropout = dyn_cast<DropoutOp>(op)) {
      if (dropout.getRatio().convertToDouble() == 0)
        continue;
      if (!step)
        step = getOrAddStepArgument(func);
      dropout.setTraining(true);
      dropout.getStepMutable().assign(step);
    }
  }
  return updates;
}

} // namespace

FailureOr<SmallVector<Value>> lethe::buildGradients(OpBuilder &builder, Value y,
                                                    ArrayRef<Value> xs) {
  Block *block = builder.getInsertionBlock();
  SmallVector<Operation *> forward;
  for (Operation &op :
       llvm::make_range(block->begin(), builder.getInsertionPoint()))
    forward.push_back(&op);

  // Active values: float values that depend on an x and that y depends on.
  llvm::DenseSet<Value> varied(xs.begin(), xs.end()), useful;
  for (Operation *op : forward)
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return varied.contains(v); }))
      for (Value result : op->getResults())
        if (isFloatTensor(result))
          varied.insert(result);
  useful.insert(y);
  for (Operation *op : llvm::reverse(forward))
    if (llvm::any_of(op->getResults(),
                     [&](Value v) { return useful.contains(v); }))
      for (Value operand : op->getOperands())
        useful.insert(operand);
  auto active = [&](Value v) {
    return varied.contains(v) && useful.contains(v);
  };

  // Walk the active ops in reverse, accumulating gradients per value. An x
  // computed from another x (not an independent variable) is not walked
  // through: the sweep stops at the xs.
  llvm::DenseSet<Value> independent(xs.begin(), xs.end());
  llvm::DenseMap<Value, Value> grads;
  grads[y] = GradientBuilder(builder, y.getLoc())
                 .splat(GradientBuilder::typeOf(y), 1.0);
  for (Operation *op : llvm::reverse(forward)) {
    if (!llvm::any_of(op->getResults(), active))
      continue;
    SmallVector<Value> resultGrads;
    bool anyGrad = false;
    for (Value result : op->getResults()) {
      // An independent x's gradient does not flow on to what computed it.
      resultGrads.push_back(
          independent.contains(result) ? Value() : grads.lookup(result));
      anyGrad |= static_cast<bool>(resultGrads.back());
    }
    if (!anyGrad)
      continue;
    SmallVector<bool> wanted;
    for (Value operand : op->getOperands())
      wanted.push_back(active(operand));
    if (llvm::none_of(wanted, [](bool w) { return w; }))
      continue;
    SmallVector<Value> operandGrads(op->getNumOperands());
    GradientBuilder g(builder, op->getLoc());
    RuleContext context{op, resultGrads, wanted, operandGrads, g};
    if (failed(buildGradient(context)))
      return failure();
    for (auto [operand, grad, want] :
         llvm::zip(op->getOperands(), operandGrads, wanted)) {
      if (!grad || !want)
        continue;
      Value &sum = grads[operand];
      sum = sum ? g.add(sum, grad) : grad;
    }
  }

  SmallVector<Value> gradients;
  for (Value x : xs) {
    Value grad = grads.lookup(x);
    if (!grad)
      grad = GradientBuilder(builder, x.getLoc())
                 .splat(GradientBuilder::typeOf(x), 0.0);
    gradients.push_back(grad);
  }
  return gradients;
}

namespace {

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct AutodiffPass : public lethe::impl::AutodiffPassBase<AutodiffPass> {
  using AutodiffPassBase::AutodiffPassBase;

  void runOnOperation() override {
    if (failed(run()))
      signalPassFailure();
  }

  LogicalResult run();
};

} // namespace

LogicalResult AutodiffPass::run() {
  ModuleOp module = getOperation();
  FailureOr<func::FuncOp> found =
      findModelFunction(module, function, "lethe-autodiff");
  if (failed(found))
    return failure();
  func::FuncOp func = *found;
  if (!func.getBody().hasOneBlock())
    return emitError(func.getLoc(),
                     "lethe-autodiff: the function has several blocks");
  if (func.getNumResults() == 0 || !func.getResultAttr(0, kLossAttr))
    return emitError(func.getLoc(), "lethe-autodiff: @")
           << func.getSymName()
           << " has no loss (a first result marked lethe.loss); add one "
              "with --lethe-add-loss";
  if (Operation *other = module.lookupSymbol(name); other && other != func)
    return emitError(func.getLoc(), "lethe-autodiff: the module already has "
                                    "a symbol @")
           << name << "; choose another name with name=NAME";

  // The arguments to differentiate: trainable ones and the named inputs.
  Block &body = func.getBody().front();
  auto argName = [&](unsigned index) -> std::string {
    if (auto attr = func.getArgAttrOfType<StringAttr>(index, kNameAttr))
      return attr.str();
    return "arg" + std::to_string(index);
  };
  llvm::StringSet<> requested;
  for (const std::string &input : inputs)
    requested.insert(input);
  SmallVector<unsigned> wrt;
  for (unsigned index = 0; index < func.getNumArguments(); ++index) {
    std::string nameOfArg = argName(index);
    // Erase first: a trainable argument may be named in inputs as well.
    bool named = requested.erase(nameOfArg);
    bool wanted = named || func.getArgAttr(index, kTrainableAttr);
    if (!wanted)
      continue;
    if (!isFloatTensor(body.getArgument(index)))
      return emitError(func.getLoc(), "lethe-autodiff: argument '")
             << nameOfArg << "' is " << body.getArgument(index).getType()
             << ", which has no gradient (not floating-point)";
    wrt.push_back(index);
  }
  if (!requested.empty())
    return emitError(func.getLoc(), "lethe-autodiff: inputs names '")
           << requested.begin()->getKey() << "', which is not an argument of @"
           << func.getSymName();

  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  Type lossType = returnOp.getOperand(0).getType();
  if (!isFloatTensor(returnOp.getOperand(0)) ||
      cast<RankedTensorType>(lossType).getNumElements() != 1)
    return emitError(func.getLoc(), "lethe-autodiff: the loss is ")
           << lossType << ", not one floating-point element";
  SmallVector<StateUpdate> stateUpdates;
  if (training)
    stateUpdates = enterTrainingMode(func);
  // Read after the training mode, which replaces ops (the loss among them,
  // when a batch_norm computes it).
  Value loss = returnOp.getOperand(0);

  OpBuilder builder(returnOp);
  SmallVector<Value> wrtValues;
  for (unsigned index : wrt)
    wrtValues.push_back(body.getArgument(index));
  FailureOr<SmallVector<Value>> gradients =
      buildGradients(builder, loss, wrtValues);
  if (failed(gradients))
    return failure();

  // The new results: the loss and one gradient per differentiated argument.
  SmallVector<Value> results{loss};
  SmallVector<Type> resultTypes{loss.getType()};
  SmallVector<DictionaryAttr> resultAttrs{func.getResultAttrDict(0)
                                              ? func.getResultAttrDict(0)
                                              : builder.getDictionaryAttr({})};
  for (auto [index, grad] : llvm::zip(wrt, *gradients)) {
    results.push_back(grad);
    resultTypes.push_back(grad.getType());
    resultAttrs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr(kNameAttr,
                              builder.getStringAttr(argName(index) + ".grad")),
         builder.getNamedAttr(kGradientOfAttr,
                              builder.getI64IntegerAttr(index))}));
  }
  for (const StateUpdate &update : stateUpdates) {
    results.push_back(update.next);
    resultTypes.push_back(update.next.getType());
    resultAttrs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr(kNameAttr,
                              builder.getStringAttr(argName(update.argument))),
         builder.getNamedAttr(kUpdatesAttr,
                              builder.getI64IntegerAttr(update.argument))}));
  }
  func::ReturnOp::create(builder, returnOp.getLoc(), results);
  returnOp.erase();
  func.setFunctionType(
      builder.getFunctionType(func.getFunctionType().getInputs(), resultTypes));
  func.setAllResultAttrs(resultAttrs);
  func.setSymName(name);

  // Erase what only the dropped results needed, last first, so that an
  // op's operands lose that use before they are looked at. (A reverse
  // iterator over the block would point at the op it erases.)
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (op->use_empty())
      op->erase();
  return success();
}
