//===- AddLoss.cpp - --lethe-add-loss -------------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Attaches a loss to an output of the model function: the loss op reads the
// output and a new label argument, and the loss becomes the first result.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/Transforms/Passes.h"

#include "PassUtils.h"

#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::lethe {
#define GEN_PASS_DEF_ADDLOSSPASS
#include "lethe/Dialect/Lethe/Transforms/Passes.h.inc"
} // namespace mlir::lethe

using namespace mlir;
using namespace mlir::lethe;

namespace {

struct AddLossPass : public lethe::impl::AddLossPassBase<AddLossPass> {
  using AddLossPassBase::AddLossPassBase;

  void runOnOperation() override {
    if (failed(run()))
      signalPassFailure();
  }

  LogicalResult run();
  /// Builds the loss of `kind` on `prediction` with a new label argument.
  FailureOr<Value> buildLoss(func::FuncOp function, Value prediction);
};

/// The `lethe.name` of result `index` of `function`, or "".
StringRef getResultName(func::FuncOp function, unsigned index) {
  if (auto name = function.getResultAttrOfType<StringAttr>(index, kNameAttr))
    return name.getValue();
  return "";
}

} // namespace

FailureOr<Value> AddLossPass::buildLoss(func::FuncOp function,
                                        Value prediction) {
  auto type = cast<RankedTensorType>(prediction.getType());
  bool classification = kind == "softmax_cross_entropy" || kind == "nll";
  if (classification && type.getRank() < 2)
    return emitError(function.getLoc(), "lethe-add-loss: kind=")
           << kind << " needs an output of scores (N, C, ...), but '" << output
           << "' is " << type;
  if (!isa<FloatType>(type.getElementType()))
    return emitError(function.getLoc(), "lethe-add-loss: the output '")
           << output << "' is " << type << ", not floating-point";

  // The label: class indices, or a tensor like the prediction.
  RankedTensorType labelType = type;
  if (classification) {
    SmallVector<int64_t> shape(type.getShape());
    shape.erase(shape.begin() + 1);
    labelType = RankedTensorType::get(
        shape, IntegerType::get(function.getContext(), 64));
  }
  // Unique name among the arguments; after the data inputs.
  llvm::StringSet<> names;
  unsigned position = function.getNumArguments();
  for (unsigned index = 0; index < function.getNumArguments(); ++index) {
    if (auto name = function.getArgAttrOfType<StringAttr>(index, kNameAttr))
      names.insert(name.getValue());
    if (position == function.getNumArguments() &&
        function.getArgAttr(index, kParameterAttr))
      position = index;
  }
  std::string labelName = "labels";
  for (int suffix = 1; names.contains(labelName); ++suffix)
    labelName = "labels_" + std::to_string(suffix);
  Builder builder(function.getContext());
  if (failed(function.insertArgument(
          position, labelType,
          builder.getDictionaryAttr(
              {builder.getNamedAttr(kNameAttr,
                                    builder.getStringAttr(labelName)),
               builder.getNamedAttr(kLabelAttr, builder.getUnitAttr())}),
          function.getLoc())))
    return failure();
  Value label = function.getArgument(position);
  // Results that name an argument by its number (an imported training
  // graph's updates, say) name the same argument after the insertion.
  for (unsigned index = 0; index < function.getNumResults(); ++index)
    for (StringRef attribute : {kUpdatesAttr, kGradientOfAttr})
      if (auto argument =
              function.getResultAttrOfType<IntegerAttr>(index, attribute);
          argument && argument.getInt() >= static_cast<int64_t>(position))
        function.setResultAttr(
            index, attribute,
            builder.getI64IntegerAttr(argument.getInt() + 1));

  auto returnOp = cast<func::ReturnOp>(function.getBody().front().back());
  OpBuilder opBuilder(returnOp);
  Location loc =
      NameLoc::get(builder.getStringAttr("loss"), prediction.getLoc());
  NamedAttribute reductionAttr =
      builder.getNamedAttr("reduction", builder.getStringAttr(reduction));
  if (kind == "softmax_cross_entropy")
    return SoftmaxCrossEntropyOp::create(opBuilder, loc,
                                         ValueRange{prediction, label},
                                         ArrayRef(reductionAttr))
        .getLoss();
  if (kind == "nll")
    return NllOp::create(opBuilder, loc, ValueRange{prediction, label},
                         ArrayRef(reductionAttr))
        .getLoss();
  return MseOp::create(opBuilder, loc, ValueRange{prediction, label},
                       ArrayRef(reductionAttr))
      .getLoss();
}

LogicalResult AddLossPass::run() {
  ModuleOp module = getOperation();
  if (output.empty() == use.empty())
    return emitError(module.getLoc(),
                     "lethe-add-loss: give either output=NAME "
                     "kind=KIND, or use=NAME for an output that is "
                     "already a loss");
  if (!output.empty() &&
      !llvm::is_contained({"softmax_cross_entropy", "nll", "mse"}, kind))
    return emitError(module.getLoc(),
                     "lethe-add-loss: kind must be "
                     "softmax_cross_entropy, nll or mse, got '")
           << kind << "'";
  if (!use.empty() && !kind.empty())
    return emitError(module.getLoc(),
                     "lethe-add-loss: use=NAME takes the output as "
                     "the loss; kind=")
           << kind << " does not apply";
  if (reduction != "mean" && reduction != "sum")
    return emitError(module.getLoc(),
                     "lethe-add-loss: reduction must be mean or sum, "
                     "got '")
           << reduction << "'";
  FailureOr<func::FuncOp> found =
      findModelFunction(module, function, "lethe-add-loss");
  if (failed(found))
    return failure();
  func::FuncOp function = *found;
  if (!function.getBody().hasOneBlock())
    return emitError(function.getLoc(),
                     "lethe-add-loss: the function has several "
                     "blocks");
  for (unsigned index = 0; index < function.getNumResults(); ++index)
    if (function.getResultAttr(index, kLossAttr))
      return emitError(function.getLoc(), "lethe-add-loss: @")
             << function.getSymName() << " already has a loss (result " << index
             << ")";

  // The output the loss is computed from, or that is the loss.
  StringRef wanted = output.empty() ? StringRef(use) : StringRef(output);
  std::optional<unsigned> resultIndex;
  SmallVector<std::string> available;
  for (unsigned index = 0; index < function.getNumResults(); ++index) {
    StringRef name = getResultName(function, index);
    available.push_back("'" + name.str() + "'");
    if (name == wanted)
      resultIndex = index;
  }
  if (!resultIndex)
    return emitError(function.getLoc(), "lethe-add-loss: @")
           << function.getSymName() << " has no output named '" << wanted
           << "'; its outputs are " << llvm::join(available, ", ");

  auto returnOp = cast<func::ReturnOp>(function.getBody().front().back());
  Value chosen = returnOp.getOperand(*resultIndex);
  Value loss;
  if (!use.empty()) {
    auto type = cast<RankedTensorType>(chosen.getType());
    if (!isa<FloatType>(type.getElementType()) || type.getNumElements() != 1)
      return emitError(function.getLoc(), "lethe-add-loss: the output '")
             << use << "' is " << type
             << ", but a loss holds one floating-point element";
    loss = chosen;
    // The output becomes the loss: it moves to the front.
    returnOp->eraseOperand(*resultIndex);
    if (failed(function.eraseResult(*resultIndex)))
      return failure();
  } else {
    FailureOr<Value> built = buildLoss(function, chosen);
    if (failed(built))
      return failure();
    loss = *built;
  }
  Builder builder(function.getContext());
  if (failed(function.insertResult(
          0, loss.getType(),
          builder.getDictionaryAttr(
              {builder.getNamedAttr(kNameAttr, builder.getStringAttr("loss")),
               builder.getNamedAttr(kLossAttr, builder.getUnitAttr())}))))
    return failure();
  returnOp->insertOperands(0, loss);
  return success();
}
