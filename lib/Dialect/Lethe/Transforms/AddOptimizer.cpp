//===- AddOptimizer.cpp - --lethe-add-optimizer ---------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Turns the gradients of a training step into parameter updates: for each
// trainable parameter with a gradient result, adds its optimizer state as
// zero-initialized arguments, builds one `lethe.*_update` op, and returns the
// parameter's next value and the next state, marked `lethe.updates` so that
// a driver running several steps feeds them back.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/Transforms/Passes.h"

#include "PassUtils.h"

#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

namespace mlir::lethe {
#define GEN_PASS_DEF_ADDOPTIMIZERPASS
#include "lethe/Dialect/Lethe/Transforms/Passes.h.inc"
} // namespace mlir::lethe

using namespace mlir;
using namespace mlir::lethe;

namespace {

/// The optimizers the pass builds.
enum class OptimizerKind { Sgd, Momentum, Nesterov, Adagrad, Adam, AdamW };

/// The suffixes of the state arguments of each kind, one per state tensor
/// (in the order the update op takes them).
ArrayRef<StringRef> getStateSuffixes(OptimizerKind kind) {
  static const StringRef momentum[] = {".momentum"};
  static const StringRef adagrad[] = {".adagrad_sum"};
  static const StringRef adam[] = {".adam_m", ".adam_v"};
  switch (kind) {
  case OptimizerKind::Sgd:
    return {};
  case OptimizerKind::Momentum:
  case OptimizerKind::Nesterov:
    return momentum;
  case OptimizerKind::Adagrad:
    return adagrad;
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
    return adam;
  }
  return {};
}

/// One parameter to update: its argument, its gradient result and the
/// values the update produces.
struct ParameterUpdate {
  unsigned argument;
  unsigned gradientResult;
  Value gradient;
  SmallVector<unsigned> stateArguments;
  SmallVector<Value> results;
};

struct AddOptimizerPass
    : public lethe::impl::AddOptimizerPassBase<AddOptimizerPass> {
  using AddOptimizerPassBase::AddOptimizerPassBase;

  void runOnOperation() override {
    if (failed(run()))
      signalPassFailure();
  }

  LogicalResult run();
  /// Checks the kind and the hyper-parameters; sets `optimizer`.
  LogicalResult checkOptions(Location loc);
  /// Builds the update of `update` at the builder's insertion point.
  void buildUpdate(OpBuilder &builder, func::FuncOp func,
                   ParameterUpdate &update, Value step);
  /// The learning rate as a scalar constant for parameters of
  /// `elementType` (f64 for f64 parameters, else f32), made once per type.
  Value getLearningRate(OpBuilder &builder, Location loc, Type elementType);

  OptimizerKind optimizer = OptimizerKind::Sgd;
  llvm::DenseMap<Type, Value> learningRates;
  /// Where the constants that every update shares are built.
  Operation *constantsPoint = nullptr;
};

/// The `lethe.name` of argument `index`, or "argN".
std::string nameOfArgument(func::FuncOp func, unsigned index) {
  if (auto name = func.getArgAttrOfType<StringAttr>(index, kNameAttr))
    return name.str();
  return "arg" + std::to_string(index);
}

/// `value` as a person writes it in an option ("0.01", "1", "1e-08").
std::string formatNumber(double value) {
  return llvm::formatv("{0}", llvm::format("%g", value)).str();
}

/// The integer value of the attribute `name` on result `index`, if any.
std::optional<int64_t> getResultIndexAttr(func::FuncOp func, unsigned index,
                                          StringRef name) {
  if (auto attr = func.getResultAttrOfType<IntegerAttr>(index, name))
    return attr.getInt();
  return std::nullopt;
}

} // namespace

LogicalResult AddOptimizerPass::checkOptions(Location loc) {
  std::optional<OptimizerKind> parsed =
      llvm::StringSwitch<std::optional<OptimizerKind>>(kind)
          .Case("sgd", OptimizerKind::Sgd)
          .Case("momentum", OptimizerKind::Momentum)
          .Case("nesterov", OptimizerKind::Nesterov)
          .Case("adagrad", OptimizerKind::Adagrad)
          .Case("adam", OptimizerKind::Adam)
          .Case("adamw", OptimizerKind::AdamW)
          .Default(std::nullopt);
  if (!parsed)
    return emitError(loc, "lethe-add-optimizer: kind must be sgd, momentum, "
                          "nesterov, adagrad, adam or adamw, got '")
           << kind << "'";
  optimizer = *parsed;

  if (!learningRate.hasValue())
    return emitError(loc, "lethe-add-optimizer: give the learning rate with "
                          "lr=RATE");
  // Each hyper-parameter: its value, the kinds that use it, its default
  // (a kind that does not use it must leave it there) and its range.
  using Kind = OptimizerKind;
  struct HyperParameter {
    StringRef name;
    double value;
    SmallVector<Kind> usedBy;
    double defaultValue;
    double low;
    bool lowIncluded;
    double high; // excluded
  };
  const double infinity = std::numeric_limits<double>::infinity();
  const SmallVector<Kind> all{Kind::Sgd,     Kind::Momentum, Kind::Nesterov,
                              Kind::Adagrad, Kind::Adam,     Kind::AdamW};
  const HyperParameter parameters[] = {
      {"lr", learningRate, all, 0.0, 0.0, false, infinity},
      {"momentum",
       momentum,
       {Kind::Momentum, Kind::Nesterov},
       0.9,
       0.0,
       true,
       1.0},
      {"dampening",
       dampening,
       {Kind::Momentum, Kind::Nesterov},
       0.0,
       0.0,
       true,
       1.0},
      {"beta1", beta1, {Kind::Adam, Kind::AdamW}, 0.9, 0.0, true, 1.0},
      {"beta2", beta2, {Kind::Adam, Kind::AdamW}, 0.999, 0.0, true, 1.0},
      {"epsilon",
       epsilon,
       {Kind::Adagrad, Kind::Adam, Kind::AdamW},
       1e-8,
       0.0,
       false,
       infinity},
      {"weight-decay", weightDecay, all, 0.0, 0.0, true, infinity},
      {"decay-factor", decayFactor, {Kind::Adagrad}, 0.0, 0.0, true, infinity},
  };
  for (const HyperParameter &parameter : parameters) {
    if (!llvm::is_contained(parameter.usedBy, optimizer)) {
      if (parameter.value != parameter.defaultValue)
        return emitError(loc, "lethe-add-optimizer: ")
               << parameter.name << " does not apply to kind=" << kind;
      continue;
    }
    auto inRange = [&](double value) {
      bool aboveLow = parameter.lowIncluded ? value >= parameter.low
                                            : value > parameter.low;
      return aboveLow && value < parameter.high;
    };
    // The updates hold their hyper-parameters as f32, which must be in
    // range too (beta2=0.99999999 rounds to 1, 1e39 to infinity).
    double stored = static_cast<float>(parameter.value);
    if (!inRange(parameter.value) || !inRange(stored)) {
      InFlightDiagnostic diagnostic = emitError(loc, "lethe-add-optimizer: ")
                                      << parameter.name;
      if (parameter.high == infinity)
        diagnostic << " must be " << (parameter.lowIncluded ? ">= " : "> ")
                   << formatNumber(parameter.low) << " and finite";
      else
        diagnostic << " must be in [" << formatNumber(parameter.low) << ", "
                   << formatNumber(parameter.high) << ")";
      if (!inRange(parameter.value))
        return diagnostic << ", got " << formatNumber(parameter.value);
      return diagnostic << ", got "
                        << llvm::formatv("{0}",
                                         llvm::format("%.10g", parameter.value))
                               .str()
                        << ", which is " << formatNumber(stored)
                        << " as the f32 the update holds";
    }
  }
  if (optimizer == Kind::Nesterov && momentum == 0.0)
    return emitError(loc, "lethe-add-optimizer: kind=nesterov needs a "
                          "momentum > 0 (with momentum=0 it is kind=sgd)");
  return success();
}

Value AddOptimizerPass::getLearningRate(OpBuilder &builder, Location loc,
                                        Type elementType) {
  Type rateType = elementType.isF64() ? Type(builder.getF64Type())
                                      : Type(builder.getF32Type());
  Value &rate = learningRates[rateType];
  if (!rate) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(constantsPoint);
    auto type = RankedTensorType::get({}, rateType);
    rate = ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(type, FloatAttr::get(rateType, learningRate)));
  }
  return rate;
}

void AddOptimizerPass::buildUpdate(OpBuilder &builder, func::FuncOp func,
                                   ParameterUpdate &update, Value step) {
  Value x = func.getArgument(update.argument);
  auto type = cast<RankedTensorType>(x.getType());
  Location loc = NameLoc::get(
      builder.getStringAttr(nameOfArgument(func, update.argument) + ".update"),
      func.getLoc());
  Value rate = getLearningRate(builder, loc, type.getElementType());
  SmallVector<Value> states;
  for (unsigned index : update.stateArguments)
    states.push_back(func.getArgument(index));
  auto f32 = [&](double value) {
    return builder.getF32FloatAttr(static_cast<float>(value));
  };
  Operation *op = nullptr;
  switch (optimizer) {
  case OptimizerKind::Sgd:
    op = SgdUpdateOp::create(builder, loc, rate, x, update.gradient,
                             f32(weightDecay));
    break;
  case OptimizerKind::Momentum:
  case OptimizerKind::Nesterov:
    op = MomentumUpdateOp::create(
        builder, loc, rate, step, x, update.gradient, states[0], f32(momentum),
        f32(1.0 - dampening), f32(weightDecay),
        builder.getStringAttr(
            optimizer == OptimizerKind::Nesterov ? "nesterov" : "standard"));
    break;
  case OptimizerKind::Adagrad:
    op = AdagradUpdateOp::create(builder, loc, rate, step, x, update.gradient,
                                 states[0], f32(decayFactor), f32(epsilon),
                                 f32(weightDecay));
    break;
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW: {
    bool decoupled = optimizer == OptimizerKind::AdamW;
    op = AdamUpdateOp::create(builder, loc, rate, step, x, update.gradient,
                              states[0], states[1], f32(beta1), f32(beta2),
                              f32(epsilon), f32(decoupled ? 0.0 : weightDecay),
                              /*norm_coefficient_post=*/f32(0.0),
                              f32(decoupled ? weightDecay : 0.0));
    break;
  }
  }
  update.results.assign(op->result_begin(), op->result_end());
}

LogicalResult AddOptimizerPass::run() {
  ModuleOp module = getOperation();
  if (failed(checkOptions(module.getLoc())))
    return failure();
  auto func = module.lookupSymbol<func::FuncOp>(function);
  if (!func || func.isExternal())
    return emitError(module.getLoc(),
                     "lethe-add-optimizer: the module has no function @")
           << function
           << " with a body; make the training step with --lethe-autodiff, "
              "or name it with function=NAME";
  if (!func.getBody().hasOneBlock())
    return emitError(func.getLoc(),
                     "lethe-add-optimizer: the function has several blocks");
  Block &body = func.getBody().front();
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());

  // Classify the results: the loss, gradients of trainable arguments (which
  // get an update), and everything else (kept as it is).
  std::optional<unsigned> lossResult;
  SmallVector<ParameterUpdate> updates;
  llvm::DenseMap<unsigned, unsigned> updateOfArgument;
  SmallVector<unsigned> otherResults, otherGradients;
  for (unsigned index = 0; index < func.getNumResults(); ++index) {
    if (func.getResultAttr(index, kLossAttr)) {
      lossResult = index;
      continue;
    }
    std::optional<int64_t> argument =
        getResultIndexAttr(func, index, kGradientOfAttr);
    if (std::optional<int64_t> updated =
            getResultIndexAttr(func, index, kUpdatesAttr)) {
      if (*updated >= 0 && *updated < func.getNumArguments() &&
          func.getArgAttr(*updated, kTrainableAttr))
        return emitError(func.getLoc(), "lethe-add-optimizer: @")
               << func.getSymName() << " is already optimized: result " << index
               << " updates the trainable argument '"
               << nameOfArgument(func, *updated) << "'";
    }
    if (!argument) {
      otherResults.push_back(index);
      continue;
    }
    if (*argument < 0 || *argument >= func.getNumArguments())
      return emitError(func.getLoc(), "lethe-add-optimizer: result ")
             << index << " is marked lethe.gradient_of = " << *argument
             << ", but @" << func.getSymName() << " has "
             << func.getNumArguments() << " arguments";
    unsigned argIndex = *argument;
    Value gradient = returnOp.getOperand(index);
    if (!func.getArgAttr(argIndex, kTrainableAttr)) {
      // The gradient of a data input (autodiff's inputs=): nothing to
      // update; kept only with the gradients.
      otherGradients.push_back(index);
      continue;
    }
    if (gradient.getType() != func.getArgument(argIndex).getType())
      return emitError(func.getLoc(), "lethe-add-optimizer: the gradient of '")
             << nameOfArgument(func, argIndex) << "' (result " << index
             << ") is " << gradient.getType() << ", but the argument is "
             << func.getArgument(argIndex).getType();
    if (updateOfArgument.count(argIndex))
      return emitError(func.getLoc(), "lethe-add-optimizer: '")
             << nameOfArgument(func, argIndex) << "' has two gradient results, "
             << updates[updateOfArgument[argIndex]].gradientResult << " and "
             << index;
    updateOfArgument[argIndex] = updates.size();
    updates.push_back({argIndex, index, gradient, {}, {}});
  }
  if (!lossResult)
    return emitError(func.getLoc(), "lethe-add-optimizer: @")
           << func.getSymName()
           << " has no loss (a result marked lethe.loss); make the training "
              "step with --lethe-add-loss and --lethe-autodiff";
  if (updates.empty())
    return emitError(func.getLoc(), "lethe-add-optimizer: @")
           << func.getSymName()
           << " returns no gradient of a trainable argument (a result marked "
              "lethe.gradient_of); make the training step with "
              "--lethe-autodiff";

  // The state arguments, zero-initialized, after the existing arguments.
  Builder attrBuilder(func.getContext());
  llvm::StringSet<> names;
  for (unsigned index = 0; index < func.getNumArguments(); ++index)
    names.insert(nameOfArgument(func, index));
  for (ParameterUpdate &update : updates) {
    auto type =
        cast<RankedTensorType>(func.getArgument(update.argument).getType());
    for (StringRef suffix : getStateSuffixes(optimizer)) {
      std::string name = nameOfArgument(func, update.argument) + suffix.str();
      std::string unique = name;
      for (int counter = 1; names.contains(unique); ++counter)
        unique = name + "_" + std::to_string(counter);
      names.insert(unique);
      auto zero = DenseElementsAttr::get(
          type, FloatAttr::get(type.getElementType(), 0.0));
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(
              index, type,
              attrBuilder.getDictionaryAttr(
                  {attrBuilder.getNamedAttr(kNameAttr,
                                            attrBuilder.getStringAttr(unique)),
                   attrBuilder.getNamedAttr(kInitializerAttr, zero)}),
              func.getLoc())))
        return failure();
      update.stateArguments.push_back(index);
    }
  }

  // The update count: none for SGD, the step for momentum and Adagrad, the
  // step + 1 for Adam's bias correction. Shared constants go first.
  OpBuilder builder(&body, body.begin());
  constantsPoint = &body.front();
  Value step;
  if (optimizer != OptimizerKind::Sgd) {
    step = getOrAddStepArgument(func);
    if (!step)
      return emitError(func.getLoc(),
                       "lethe-add-optimizer: cannot add the step argument");
    if (optimizer == OptimizerKind::Adam || optimizer == OptimizerKind::AdamW) {
      Location loc =
          NameLoc::get(builder.getStringAttr("adam.count"), func.getLoc());
      auto countType = RankedTensorType::get({}, builder.getI64Type());
      Value one = ConstantOp::create(
          builder, loc,
          DenseElementsAttr::get(countType, builder.getI64IntegerAttr(1)));
      step = AddOp::create(builder, loc, step, one);
    }
  }

  // Each update goes right after the later of its gradient and the last
  // use of the parameter (the return aside), so that both die there.
  for (ParameterUpdate &update : updates) {
    Operation *after = update.gradient.getDefiningOp();
    if (step && step.getDefiningOp() &&
        (!after || after->isBeforeInBlock(step.getDefiningOp())))
      after = step.getDefiningOp();
    for (Operation *user : func.getArgument(update.argument).getUsers())
      if (!isa<func::ReturnOp>(user) &&
          (!after || after->isBeforeInBlock(user)))
        after = user;
    if (after)
      builder.setInsertionPointAfter(after);
    else
      builder.setInsertionPointToStart(&body);
    buildUpdate(builder, func, update, step);
  }

  // The new results.
  SmallVector<Value> results{returnOp.getOperand(*lossResult)};
  SmallVector<DictionaryAttr> resultAttrs{func.getResultAttrDict(*lossResult)};
  for (ParameterUpdate &update : updates) {
    results.push_back(update.results[0]);
    resultAttrs.push_back(attrBuilder.getDictionaryAttr(
        {attrBuilder.getNamedAttr(
             kNameAttr,
             attrBuilder.getStringAttr(nameOfArgument(func, update.argument))),
         attrBuilder.getNamedAttr(
             kUpdatesAttr, attrBuilder.getI64IntegerAttr(update.argument))}));
  }
  for (ParameterUpdate &update : updates) {
    for (auto [state, argument] : llvm::zip_equal(
             ArrayRef(update.results).drop_front(), update.stateArguments)) {
      results.push_back(state);
      resultAttrs.push_back(attrBuilder.getDictionaryAttr(
          {attrBuilder.getNamedAttr(
               kNameAttr,
               attrBuilder.getStringAttr(nameOfArgument(func, argument))),
           attrBuilder.getNamedAttr(kUpdatesAttr,
                                    attrBuilder.getI64IntegerAttr(argument))}));
    }
  }
  for (unsigned index : otherResults) {
    results.push_back(returnOp.getOperand(index));
    resultAttrs.push_back(func.getResultAttrDict(index));
  }
  if (keepGradients) {
    SmallVector<unsigned> gradients(otherGradients);
    for (ParameterUpdate &update : updates)
      gradients.push_back(update.gradientResult);
    llvm::sort(gradients);
    for (unsigned index : gradients) {
      results.push_back(returnOp.getOperand(index));
      resultAttrs.push_back(func.getResultAttrDict(index));
    }
  }
  for (DictionaryAttr &attrs : resultAttrs)
    if (!attrs)
      attrs = attrBuilder.getDictionaryAttr({});

  OpBuilder atReturn(returnOp);
  func::ReturnOp::create(atReturn, returnOp.getLoc(), results);
  returnOp.erase();
  func.setFunctionType(attrBuilder.getFunctionType(
      func.getFunctionType().getInputs(), ValueRange(results).getTypes()));
  func.setAllResultAttrs(resultAttrs);
  numParametersUpdated += updates.size();
  return success();
}
