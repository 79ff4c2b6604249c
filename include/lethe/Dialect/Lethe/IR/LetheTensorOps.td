//===- LetheTensorOps.td - Tensor ops ----*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Lethe's constants and shape/data-movement ops (constant, reshape, flatten, transpose, concat, split, slice, gather, squeeze, unsqueeze, expand, resize).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHETENSOROPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHETENSOROPS_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"

#endif // LETHE_DIALECT_LETHE_IR_LETHETENSOROPS_TD
