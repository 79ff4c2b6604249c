//===- LetheNormalizationOps.td - Normalization ops ----*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Lethe's normalization, softmax and dropout (batch_norm, layer_norm, softmax, log_softmax, dropout).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHENORMALIZATIONOPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHENORMALIZATIONOPS_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"

#endif // LETHE_DIALECT_LETHE_IR_LETHENORMALIZATIONOPS_TD
