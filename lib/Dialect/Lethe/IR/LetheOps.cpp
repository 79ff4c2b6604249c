//===- LetheOps.cpp - Generated op definitions ----------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Instantiates the TableGen-generated op classes and the cost interface. The
// hand-written verifiers, type inference and costs of each category live in
// the <Category>Ops.cpp files beside this one.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::lethe;

#include "lethe/Dialect/Lethe/IR/LetheInterfaces.cpp.inc"

int64_t mlir::lethe::getPlannedWorkspaceBytes(Operation *op) {
  auto cost = dyn_cast<CostOpInterface>(op);
  if (!cost)
    return 0;
  int64_t modelled = cost.getWorkspaceBytes();
  // The dialect's verifier keeps the attribute a non-negative integer.
  if (auto measured = op->getAttrOfType<IntegerAttr>(kWorkspaceBytesAttr))
    return std::max(modelled, measured.getInt());
  return modelled;
}

#define GET_OP_CLASSES
#include "lethe/Dialect/Lethe/IR/LetheOps.cpp.inc"
