//===- LetheDialect.cpp - The lethe dialect -------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Registers the ops and types of the `lethe` dialect, and checks the one
// dialect attribute of ops whose meaning the IR carries
// (lethe.workspace_bytes).
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheDialect.h"
#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "lethe/Dialect/Lethe/Transforms/Attributes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::lethe;

#include "lethe/Dialect/Lethe/IR/LetheDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "lethe/Dialect/Lethe/IR/LetheTypes.cpp.inc"

void LetheDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "lethe/Dialect/Lethe/IR/LetheOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "lethe/Dialect/Lethe/IR/LetheTypes.cpp.inc"
      >();
}

LogicalResult
LetheDialect::verifyRegionResultAttribute(Operation *op, unsigned regionIndex,
                                          unsigned resultIndex,
                                          NamedAttribute attribute) {
  // `lethe.updates = k` on a training step's result: the result is the next
  // value of argument k (Transforms/Attributes.h). Every tool and driver
  // relies on it naming an argument of the result's type, once.
  if (attribute.getName() != kUpdatesAttr)
    return success();
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return op->emitError() << kUpdatesAttr << " is for function results";
  auto argument = dyn_cast<IntegerAttr>(attribute.getValue());
  if (!argument || !argument.getType().isSignlessInteger(64))
    return op->emitError("result ")
           << resultIndex << " is marked " << kUpdatesAttr << " = "
           << attribute.getValue() << ", not an i64 argument number";
  int64_t index = argument.getInt();
  ArrayRef<Type> arguments = function.getArgumentTypes();
  if (index < 0 || index >= static_cast<int64_t>(arguments.size()))
    return op->emitError("result ")
           << resultIndex << " is marked " << kUpdatesAttr << " = " << index
           << ", which is not an argument";
  Type resultType = function.getResultTypes()[resultIndex];
  if (resultType != arguments[index])
    return op->emitError("result ")
           << resultIndex << " updates argument " << index << " but has type "
           << resultType << ", not the argument's " << arguments[index];
  for (unsigned other = 0; other < resultIndex; ++other) {
    auto earlier =
        function.getResultAttrOfType<IntegerAttr>(other, kUpdatesAttr);
    if (earlier && earlier.getInt() == index)
      return op->emitError("argument ")
             << index << " is updated by two results (" << other << " and "
             << resultIndex << ", " << kUpdatesAttr << ")";
  }
  return success();
}

LogicalResult LetheDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attribute) {
  // The other `lethe.*` attributes of ops and functions are the passes' and
  // drivers' to check (Transforms/Attributes.h).
  if (attribute.getName() != kWorkspaceBytesAttr)
    return success();
  if (!isa<CostOpInterface>(op))
    return op->emitError() << kWorkspaceBytesAttr
                           << " is for lethe ops, which have a workspace";
  auto bytes = dyn_cast<IntegerAttr>(attribute.getValue());
  if (!bytes || !bytes.getType().isSignlessInteger(64) || bytes.getInt() < 0)
    return op->emitError() << kWorkspaceBytesAttr
                           << " must be a non-negative i64 byte count, got "
                           << attribute.getValue();
  return success();
}
