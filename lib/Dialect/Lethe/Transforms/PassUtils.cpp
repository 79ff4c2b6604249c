//===- PassUtils.cpp - Helpers shared by the Lethe passes -----------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

/// The function named `name` if it is given, else the first of `defaults`
/// that the module defines, else its only function with a body; `what` is
/// the kind of function the error asks to name.
static FailureOr<func::FuncOp> findFunction(ModuleOp module, StringRef name,
                                            ArrayRef<StringRef> defaults,
                                            StringRef passName,
                                            StringRef what) {
  if (!name.empty()) {
    auto named = module.lookupSymbol<func::FuncOp>(name);
    if (!named || named.isExternal())
      return emitError(module.getLoc(), passName)
             << ": the module has no function @" << name << " with a body";
    return named;
  }
  for (StringRef candidate : defaults)
    if (auto found = module.lookupSymbol<func::FuncOp>(candidate))
      if (!found.isExternal())
        return found;
  SmallVector<func::FuncOp> defined;
  for (auto candidate : module.getOps<func::FuncOp>())
    if (!candidate.isExternal())
      defined.push_back(candidate);
  if (defined.size() != 1) {
    InFlightDiagnostic diagnostic = emitError(module.getLoc(), passName);
    diagnostic << ": the module has " << defined.size()
               << " functions with a body and none is ";
    for (auto [index, candidate] : llvm::enumerate(defaults))
      diagnostic << (index == 0 ? "@" : " or @") << candidate;
    diagnostic << "; name the " << what << " with function=NAME";
    return diagnostic;
  }
  return defined.front();
}

FailureOr<func::FuncOp>
lethe::findModelFunction(ModuleOp module, StringRef name, StringRef passName) {
  return findFunction(module, name, {"main"}, passName, "model function");
}

FailureOr<func::FuncOp> lethe::findTrainingStep(ModuleOp module, StringRef name,
                                                StringRef passName) {
  return findFunction(module, name, {"train_step", "main"}, passName,
                      "training step");
}

std::optional<unsigned> lethe::findStepArgument(func::FuncOp func) {
  for (unsigned index = 0; index < func.getNumArguments(); ++index)
    if (func.getArgAttr(index, kStepAttr))
      return index;
  return std::nullopt;
}

BlockArgument lethe::getOrAddStepArgument(func::FuncOp func) {
  if (std::optional<unsigned> index = findStepArgument(func))
    return func.getArgument(*index);
  Builder builder(func.getContext());
  unsigned index = func.getNumArguments();
  auto type = RankedTensorType::get({}, builder.getI64Type());
  auto attrs = builder.getDictionaryAttr(
      {builder.getNamedAttr(kNameAttr, builder.getStringAttr("step")),
       builder.getNamedAttr(kStepAttr, builder.getUnitAttr())});
  if (failed(func.insertArgument(index, type, attrs, func.getLoc())))
    return {};
  return func.getArgument(index);
}
