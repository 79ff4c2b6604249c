//===- LetheConvolutionOps.td - Convolution ops ----*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Lethe's convolution and transposed convolution (conv, conv_transpose).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHECONVOLUTIONOPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHECONVOLUTIONOPS_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"

#endif // LETHE_DIALECT_LETHE_IR_LETHECONVOLUTIONOPS_TD
