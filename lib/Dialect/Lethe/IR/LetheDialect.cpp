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
