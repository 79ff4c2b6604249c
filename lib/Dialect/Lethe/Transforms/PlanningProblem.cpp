//===- PlanningProblem.cpp - The planner's view of a function -------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/Transforms/PlanningProblem.h"

#include "PassUtils.h"

#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "lethe/Planning/ArenaLayout.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <map>
#include <set>
#include <tuple>

using namespace mlir;
using namespace mlir::lethe;

namespace {

planning::Precision getPrecision(Type elementType) {
  if (elementType.isF16())
    return planning::Precision::F16;
  if (elementType.isBF16())
    return planning::Precision::BF16;
  if (elementType.isF64())
    return planning::Precision::F64;
  return planning::Precision::F32;
}

/// What identifies the op a recompute clones: its name, its attributes
/// (without those the planning passes add, `lethe.recompute` and the
/// arena's offsets) and the values it reads.
template <typename Input>
using OpKey = std::tuple<const void *, const void *, std::vector<Input>>;
using CloneKey = OpKey<int>;

template <typename Input>
OpKey<Input> getOpKey(Operation *op, ArrayRef<Input> inputs) {
  SmallVector<NamedAttribute> attributes;
  for (NamedAttribute attribute : op->getAttrs())
    if (!attribute.getName().getValue().starts_with("lethe.") ||
        attribute.getName() == kRepeatAttr)
      attributes.push_back(attribute);
  DictionaryAttr dictionary = DictionaryAttr::get(op->getContext(), attributes);
  return {op->getName().getAsOpaquePointer(), dictionary.getAsOpaquePointer(),
          std::vector<Input>(inputs.begin(), inputs.end())};
}

CloneKey getCloneKey(Operation *op, ArrayRef<int> inputs) {
  return getOpKey(op, inputs);
}

} // namespace

unsigned mlir::lethe::markRepeatedOps(func::FuncOp function) {
  if (function.isExternal())
    return 0;
  MLIRContext *context = function.getContext();
  std::map<OpKey<const void *>, int64_t> seen;
  unsigned marked = 0;
  for (Operation &op : function.getBody().front()) {
    if (!op.getNumResults())
      continue;
    op.removeAttr(kRepeatAttr);
    SmallVector<const void *> operands;
    for (Value operand : op.getOperands())
      operands.push_back(operand.getAsOpaquePointer());
    int64_t &count = seen[getOpKey<const void *>(&op, operands)];
    if (count)
      op.setAttr(kRepeatAttr,
                 IntegerAttr::get(IntegerType::get(context, 64), count));
    marked += count ? 1 : 0;
    ++count;
  }
  return marked;
}

FailureOr<FunctionPlanningProblem>
mlir::lethe::extractPlanningProblem(func::FuncOp function,
                                    const planning::DeviceProfile &profile,
                                    int64_t budgetBytes) {
  if (function.isExternal() || !function.getBody().hasOneBlock())
    return emitError(function.getLoc())
           << ("the memory planner needs a function with one "
               "block, @")
           << function.getName() << " has "
           << function.getBody().getBlocks().size();
  Block &block = function.getBody().front();
  FunctionPlanningProblem result;
  planning::TrainingGraph &graph = result.problem.graph;
  result.problem.budgetBytes = budgetBytes;
  result.problem.link.hostToDeviceBytesPerSecond =
      profile.hostToDeviceBandwidth;
  result.problem.link.deviceToHostBytesPerSecond =
      profile.deviceToHostBandwidth;
  result.problem.link.latencySeconds = profile.launchOverhead;
  AsmState state(function);

  auto addValue = [&](Value value, int producer,
                      planning::ValueKind kind) -> FailureOr<int> {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    // A tensor of more than 2^56 elements (a model's absurd dims) would
    // overflow the sizes and their sums; the executables' driver reads no
    // larger one either.
    if (type && type.hasStaticShape()) {
      int64_t elements = 1;
      bool overflow = false;
      for (int64_t dim : type.getShape())
        overflow |= llvm::MulOverflow(elements, dim, elements);
      if (overflow || elements > (int64_t(1) << 56))
        return emitError(value.getLoc(), "the memory planner cannot hold a ")
               << type
               << ": it has more than 2^56 elements; give the model "
                  "smaller shapes";
    }
    std::optional<int64_t> bytes;
    if (type)
      bytes = getSizeInBytes(type);
    if (!bytes)
      return emitError(value.getLoc(), "the memory planner needs statically "
                                       "shaped tensors, got ")
             << value.getType();
    planning::GraphValue graphValue;
    // The SSA name, and for an argument the model's name of it: "%arg2
    // (fc0.weight)".
    std::string name;
    llvm::raw_string_ostream nameStream(name);
    value.printAsOperand(nameStream, state);
    if (auto argument = dyn_cast<BlockArgument>(value))
      if (auto modelName = function.getArgAttrOfType<StringAttr>(
              argument.getArgNumber(), "lethe.name"))
        nameStream << " (" << modelName.getValue() << ")";
    graphValue.name = std::move(name);
    // What the tensor occupies in the arena, whose blocks are aligned (as
    // cudaMalloc's are): the budget counts device memory as allocated.
    graphValue.bytes =
        planning::alignBytes(*bytes, planning::kDefaultArenaAlignment);
    graphValue.producer = producer;
    graphValue.kind = kind;
    int id = static_cast<int>(graph.values.size());
    graph.values.push_back(std::move(graphValue));
    result.values.push_back(value);
    result.valueIds[value] = id;
    return id;
  };
  auto idOf = [&](Operation *op, Value operand) -> FailureOr<int> {
    auto it = result.valueIds.find(operand);
    if (it == result.valueIds.end())
      return emitError(op->getLoc())
             << ("the memory planner cannot follow an operand "
                 "defined outside the function's block");
    return it->second;
  };

  // Arguments: what the importer and the training passes marked them as.
  llvm::SmallDenseSet<unsigned> updated;
  for (unsigned index = 0; index < function.getNumResults(); ++index)
    if (auto target =
            function.getResultAttrOfType<IntegerAttr>(index, kUpdatesAttr))
      updated.insert(target.getInt());
  for (BlockArgument argument : block.getArguments()) {
    unsigned index = argument.getArgNumber();
    planning::ValueKind kind = planning::ValueKind::Input;
    if (function.getArgAttr(index, kStepAttr))
      kind = planning::ValueKind::OptimizerState;
    else if (function.getArgAttr(index, kParameterAttr) ||
             function.getArgAttr(index, kTrainableAttr))
      kind = planning::ValueKind::Parameter;
    else if (updated.contains(index))
      kind = planning::ValueKind::OptimizerState;
    if (failed(addValue(argument, -1, kind)))
      return failure();
  }

  // The loss ends the forward pass.
  Operation *terminator = block.getTerminator();
  Operation *lossOp = nullptr;
  for (unsigned index = 0; index < function.getNumResults(); ++index)
    if (function.getResultAttr(index, kLossAttr))
      lossOp = terminator->getOperand(index).getDefiningOp();
  bool inForward = true;

  std::map<CloneKey, int> originals;
  std::set<CloneKey> repeated;
  for (Operation &op : block) {
    if (&op == terminator)
      break;
    if (auto offload = dyn_cast<OffloadOp>(op)) {
      FailureOr<int> id = idOf(&op, offload.getInput());
      if (failed(id))
        return failure();
      result.valueIds[offload.getOutput()] = *id;
      result.schedule.push_back(planning::Step::offload(*id));
      continue;
    }
    if (auto prefetch = dyn_cast<PrefetchOp>(op)) {
      FailureOr<int> id = idOf(&op, prefetch.getInput());
      if (failed(id))
        return failure();
      result.valueIds[prefetch.getOutput()] = *id;
      result.schedule.push_back(planning::Step::prefetch(*id));
      continue;
    }
    if (auto release = dyn_cast<ReleaseOp>(op)) {
      FailureOr<int> id = idOf(&op, release.getInput());
      if (failed(id))
        return failure();
      result.schedule.push_back(planning::Step::release(*id));
      continue;
    }
    std::vector<int> inputs;
    for (Value operand : op.getOperands()) {
      FailureOr<int> id = idOf(&op, operand);
      if (failed(id))
        return failure();
      inputs.push_back(*id);
    }
    if (op.hasAttr(kRecomputeAttr)) {
      CloneKey key = getCloneKey(&op, inputs);
      auto it = originals.find(key);
      if (it == originals.end())
        return emitError(op.getLoc())
               << ("this recompute clones no earlier op with the "
                   "same attributes and operands");
      if (repeated.count(key))
        return emitError(op.getLoc())
               << ("this recompute clones one of several identical ops and "
                   "cannot say which; plan with --lethe-plan-memory, which "
                   "tells them apart with ")
               << kRepeatAttr;
      for (auto [result_, output] :
           llvm::zip(op.getResults(), graph.nodes[it->second].outputs))
        result.valueIds[result_] = output;
      result.schedule.push_back(planning::Step::compute(it->second));
      continue;
    }
    auto cost = dyn_cast<CostOpInterface>(op);
    if (!cost)
      return emitError(op.getLoc())
             << ("the memory planner handles lethe ops only; it "
                 "cannot estimate the time of this op");
    int id = static_cast<int>(graph.nodes.size());
    planning::GraphNode node;
    node.name = op.getName().getStringRef().str();
    Type elementType =
        op.getNumResults()
            ? cast<ShapedType>(op.getResult(0).getType()).getElementType()
            : Type();
    // A view costs nothing: --lethe-assign-arena lays it out in its input's
    // bytes, unless that makes the arena larger; such a copy is left out of
    // the times (a measured profile has it).
    node.seconds =
        isView(&op)
            ? 0.0
            : profile.estimateKernelSeconds(
                  cost.getFlops(), cost.getBytesRead() + cost.getBytesWritten(),
                  elementType ? getPrecision(elementType)
                              : planning::Precision::F32);
    if (!inForward)
      node.role = isOptimizerUpdate(&op) ? planning::NodeRole::Optimizer
                                         : planning::NodeRole::Backward;
    node.recomputable = node.role == planning::NodeRole::Forward && isPure(&op);
    // Scratch the op holds while it runs, at the size its arena block takes
    // (--lethe-assign-arena gives it one).
    if (int64_t workspace = getPlannedWorkspaceBytes(&op); workspace > 0)
      node.workspaceBytes =
          planning::alignBytes(workspace, planning::kDefaultArenaAlignment);
    node.inputs = inputs;
    graph.nodes.push_back(std::move(node));
    result.nodeOps.push_back(&op);
    for (auto [index, opResult] : llvm::enumerate(op.getResults())) {
      planning::ValueKind kind = planning::ValueKind::Temporary;
      if (graph.nodes[id].role == planning::NodeRole::Backward)
        kind = planning::ValueKind::Gradient;
      else if (graph.nodes[id].role == planning::NodeRole::Optimizer)
        kind = index == 0 ? planning::ValueKind::Parameter
                          : planning::ValueKind::OptimizerState;
      FailureOr<int> valueId = addValue(opResult, id, kind);
      if (failed(valueId))
        return failure();
      graph.nodes[id].outputs.push_back(*valueId);
    }
    CloneKey key = getCloneKey(&op, inputs);
    if (!originals.emplace(key, id).second)
      repeated.insert(std::move(key));
    result.schedule.push_back(planning::Step::compute(id));
    if (&op == lossOp)
      inForward = false;
  }
  for (Value operand : terminator->getOperands()) {
    FailureOr<int> id = idOf(terminator, operand);
    if (failed(id))
      return failure();
    graph.values[*id].isOutput = true;
  }
  graph.computeUsers();
  // A forward value that the backward pass or an update reads is an
  // activation: what plans keep, recompute or offload.
  for (planning::GraphValue &value : graph.values)
    if (value.producer >= 0 &&
        graph.nodes[value.producer].role == planning::NodeRole::Forward)
      for (int user : value.users)
        if (graph.nodes[user].role != planning::NodeRole::Forward)
          value.kind = planning::ValueKind::Activation;
  std::string error;
  if (!graph.verify(error))
    return emitError(function.getLoc())
           << ("internal error: the extracted training graph "
               "is inconsistent: ")
           << error;
  return result;
}

void mlir::lethe::materializeSchedule(func::FuncOp function,
                                      const FunctionPlanningProblem &extracted,
                                      const planning::Schedule &schedule) {
  const planning::TrainingGraph &graph = extracted.problem.graph;
  Block &block = function.getBody().front();
  Operation *terminator = block.getTerminator();
  OpBuilder builder(terminator);
  UnitAttr unit = builder.getUnitAttr();

  // The resident version of each value, and its host copy.
  SmallVector<Value> current(graph.values.size());
  SmallVector<Value> hostCopy(graph.values.size());
  for (auto [id, value] : llvm::enumerate(graph.values))
    if (value.producer < 0)
      current[id] = extracted.values[id];
  SmallVector<bool> computed(graph.nodes.size(), false);

  for (const planning::Step &step : schedule) {
    if (step.kind == planning::StepKind::Compute) {
      Operation *original = extracted.nodeOps[step.id];
      Operation *op;
      if (!computed[step.id]) {
        op = original;
        op->moveBefore(terminator);
        computed[step.id] = true;
      } else {
        op = builder.clone(*original);
        op->setAttr(kRecomputeAttr, unit);
      }
      const planning::GraphNode &node = graph.nodes[step.id];
      for (auto [operand, input] : llvm::zip(op->getOpOperands(), node.inputs))
        operand.set(current[input]);
      for (auto [opResult, output] : llvm::zip(op->getResults(), node.outputs))
        current[output] = opResult;
      continue;
    }
    Value value = current[step.id];
    Location loc = extracted.values[step.id].getLoc();
    switch (step.kind) {
    case planning::StepKind::Offload: {
      auto type = cast<RankedTensorType>(value.getType());
      hostCopy[step.id] = OffloadOp::create(
          builder, loc, HostTensorType::get(builder.getContext(), type), value);
      break;
    }
    case planning::StepKind::Release:
      ReleaseOp::create(builder, loc, value);
      break;
    case planning::StepKind::Prefetch: {
      Value host = hostCopy[step.id];
      current[step.id] = PrefetchOp::create(
          builder, loc, cast<HostTensorType>(host.getType()).getTensorType(),
          host);
      break;
    }
    case planning::StepKind::Compute:
      break;
    }
  }
  for (OpOperand &operand : terminator->getOpOperands())
    operand.set(current[extracted.valueIds.lookup(operand.get())]);
  // Nodes the schedule never runs compute nothing anyone reads: erase them,
  // readers first.
  for (int node = static_cast<int>(graph.nodes.size()) - 1; node >= 0; --node)
    if (!computed[node])
      extracted.nodeOps[node]->erase();
}

DictionaryAttr mlir::lethe::buildPlanAttr(
    MLIRContext *context, const FunctionPlanningProblem &extracted,
    const planning::Plan &plan, const planning::SimulationResult &planned,
    const planning::SimulationResult &unplanned, StringRef profileName) {
  Builder builder(context);
  SmallVector<NamedAttribute> fields = {
      builder.getNamedAttr("strategy", builder.getStringAttr(plan.strategy)),
      builder.getNamedAttr("profile", builder.getStringAttr(profileName)),
      builder.getNamedAttr(
          "budget", builder.getI64IntegerAttr(extracted.problem.budgetBytes)),
      builder.getNamedAttr("peak",
                           builder.getI64IntegerAttr(planned.peakBytes)),
      builder.getNamedAttr("seconds", builder.getF64FloatAttr(planned.seconds)),
      builder.getNamedAttr("unplanned_peak",
                           builder.getI64IntegerAttr(unplanned.peakBytes)),
      builder.getNamedAttr("unplanned_seconds",
                           builder.getF64FloatAttr(unplanned.seconds)),
      builder.getNamedAttr("fingerprint",
                           builder.getStringAttr(planning::getGraphFingerprint(
                               extracted.problem.graph))),
  };
  if (plan.lowerBoundSeconds >= 0) {
    fields.push_back(
        builder.getNamedAttr("lower_bound_seconds",
                             builder.getF64FloatAttr(plan.lowerBoundSeconds)));
    if (!plan.lowerBoundCoversOffloading)
      fields.push_back(builder.getNamedAttr("lower_bound_recompute_only",
                                            builder.getUnitAttr()));
  }
  SmallVector<Attribute> steps;
  steps.reserve(plan.schedule.size());
  for (const planning::Step &step : plan.schedule)
    steps.push_back(builder.getStringAttr(
        Twine(planning::stringifyStepKind(step.kind)) + " " + Twine(step.id)));
  fields.push_back(builder.getNamedAttr("steps", builder.getArrayAttr(steps)));
  return builder.getDictionaryAttr(fields);
}

void mlir::lethe::readPlanLowerBound(DictionaryAttr attr,
                                     planning::Plan &plan) {
  auto bound = attr.getAs<FloatAttr>("lower_bound_seconds");
  if (!bound)
    return;
  plan.lowerBoundSeconds = bound.getValueAsDouble();
  plan.lowerBoundCoversOffloading =
      !attr.contains("lower_bound_recompute_only");
}

FailureOr<planning::Schedule>
mlir::lethe::readPlanSteps(func::FuncOp function, DictionaryAttr plan,
                           const planning::TrainingGraph &graph,
                           StringRef passName) {
  auto steps = plan.getAs<ArrayAttr>("steps");
  if (!steps)
    return emitError(function.getLoc(), passName)
           << ": " << ("the lethe.plan attribute has no 'steps' array");
  planning::Schedule schedule;
  schedule.reserve(steps.size());
  for (auto [index, attribute] : llvm::enumerate(steps)) {
    auto text = dyn_cast<StringAttr>(attribute);
    auto fail = [&]() {
      return emitError(function.getLoc(), passName)
             << ": " << ("step ") << index << " of the lethe.plan attribute, "
             << attribute
             << ", is not '<compute|offload|release|prefetch> <id>' naming a "
                "node or value of the function";
    };
    if (!text)
      return fail();
    auto [kindName, idText] = text.getValue().split(' ');
    std::optional<planning::StepKind> kind;
    for (planning::StepKind candidate :
         {planning::StepKind::Compute, planning::StepKind::Offload,
          planning::StepKind::Release, planning::StepKind::Prefetch})
      if (kindName == planning::stringifyStepKind(candidate))
        kind = candidate;
    int id;
    if (!kind || idText.getAsInteger(10, id) || id < 0)
      return fail();
    size_t limit = *kind == planning::StepKind::Compute ? graph.nodes.size()
                                                        : graph.values.size();
    if (static_cast<size_t>(id) >= limit)
      return fail();
    schedule.push_back({*kind, id});
  }
  return schedule;
}

FailureOr<PlannedFunction>
mlir::lethe::readPlannedFunction(func::FuncOp func, StringRef passName) {
  auto plan = func->getAttrOfType<DictionaryAttr>(kPlanAttr);
  auto profileName = plan.getAs<StringAttr>("profile");
  auto budget = plan.getAs<IntegerAttr>("budget");
  auto fingerprint = plan.getAs<StringAttr>("fingerprint");
  if (!profileName || !budget || !fingerprint)
    return emitError(func.getLoc(), passName)
           << ": "
           << ("the lethe.plan attribute needs 'profile', "
               "'budget' and 'fingerprint'; plan the step with "
               "--lethe-plan-memory");
  planning::DeviceProfile profile;
  std::string error;
  if (!planning::loadDeviceProfile(profileName.str(), profile, error))
    return emitError(func.getLoc(), passName) << ": " << (error);
  FailureOr<FunctionPlanningProblem> extracted =
      extractPlanningProblem(func, profile, budget.getInt());
  if (failed(extracted))
    return failure();
  std::string actual = planning::getGraphFingerprint(extracted->problem.graph);
  if (actual != fingerprint.getValue())
    return emitError(func.getLoc(), passName)
           << ": " << ("@") << func.getName()
           << " changed since it was planned (its training graph's "
              "fingerprint is "
           << actual << ", the plan's " << fingerprint.getValue()
           << "); plan it again";
  return PlannedFunction{plan, std::move(*extracted)};
}

FailureOr<int64_t> mlir::lethe::parseBudget(StringRef text,
                                            int64_t unplannedPeak,
                                            std::string &error) {
  StringRef number = text.trim();
  StringRef unit =
      number.drop_while([](char c) { return llvm::isDigit(c) || c == '.'; });
  number = number.drop_back(unit.size());
  unit = unit.trim();
  static const std::pair<StringRef, double> units[] = {
      {"", 1},         {"B", 1},        {"KB", 1e3},     {"MB", 1e6},
      {"GB", 1e9},     {"TB", 1e12},    {"KiB", 0x1p10}, {"MiB", 0x1p20},
      {"GiB", 0x1p30}, {"TiB", 0x1p40},
  };
  double value;
  const double *scale = nullptr;
  for (const auto &[name, factor] : units)
    if (unit == name)
      scale = &factor;
  if (number.empty() || !scale || number.getAsDouble(value) ||
      !std::isfinite(value) || value <= 0) {
    error = ("budget '" + text +
             "' is neither bytes with an optional unit (6GiB, 512MiB, "
             "1000000) nor a fraction of the unplanned peak (0.5)")
                .str();
    return failure();
  }
  double bytes = unit.empty() && number.contains('.')
                     ? value * static_cast<double>(unplannedPeak)
                     : value * *scale;
  if (bytes >= 0x1p62) {
    error = ("budget '" + text +
             "' is too large (the most is 4 EiB); give the device's memory "
             "or less")
                .str();
    return failure();
  }
  return static_cast<int64_t>(std::floor(bytes));
}
