//===- LethePoolingOps.td - Pooling ops ----*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Lethe's pooling (max_pool, avg_pool, global_avg_pool).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHEPOOLINGOPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHEPOOLINGOPS_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"

#endif // LETHE_DIALECT_LETHE_IR_LETHEPOOLINGOPS_TD
