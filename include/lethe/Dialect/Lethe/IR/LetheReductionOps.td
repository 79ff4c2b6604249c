//===- LetheReductionOps.td - Reduction ops ----*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Lethe's reductions (reduce_sum, reduce_mean, reduce_max).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHEREDUCTIONOPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHEREDUCTIONOPS_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"

#endif // LETHE_DIALECT_LETHE_IR_LETHEREDUCTIONOPS_TD
