//===- LetheLossOps.td - Loss ops ----*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Lethe's loss functions (softmax_cross_entropy, nll, mse).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHELOSSOPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHELOSSOPS_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"

#endif // LETHE_DIALECT_LETHE_IR_LETHELOSSOPS_TD
