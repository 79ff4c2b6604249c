//===- LetheDialect.cpp - The lethe dialect -------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Registers the ops of the `lethe` dialect.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheDialect.h"
#include "lethe/Dialect/Lethe/IR/LetheOps.h"

using namespace mlir;
using namespace mlir::lethe;

#include "lethe/Dialect/Lethe/IR/LetheDialect.cpp.inc"

void LetheDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "lethe/Dialect/Lethe/IR/LetheOps.cpp.inc"
      >();
}
