//===- PassUtils.cpp - Helpers shared by the Lethe passes -----------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

FailureOr<func::FuncOp>
lethe::findModelFunction(ModuleOp module, StringRef name, StringRef passName) {
  if (!name.empty()) {
    auto named = module.lookupSymbol<func::FuncOp>(name);
    if (!named || named.isExternal())
      return emitError(module.getLoc(), passName)
             << ": the module has no function @" << name << " with a body";
    return named;
  }
  if (auto main = module.lookupSymbol<func::FuncOp>("main"))
    if (!main.isExternal())
      return main;
  SmallVector<func::FuncOp> defined;
  for (auto candidate : module.getOps<func::FuncOp>())
    if (!candidate.isExternal())
      defined.push_back(candidate);
  if (defined.size() != 1)
    return emitError(module.getLoc(), passName)
           << ": the module has " << defined.size()
           << " functions with a body and none is @main; name the model "
              "function with function=NAME";
  return defined.front();
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
