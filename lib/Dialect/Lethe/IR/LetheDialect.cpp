//===- LetheDialect.cpp - The lethe dialect -------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Registers the ops and types of the `lethe` dialect.
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
