//===- LossOps.cpp - Loss ops ---------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers, result-type inference and costs of the ops in
// LetheLossOps.td.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheOps.h"

using namespace mlir;
using namespace mlir::lethe;
