//===- LetheOps.td - All Lethe ops -----------------------------*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The one entry point that TableGen reads for the ops of the dialect; the ops
// themselves are defined by category in the files included here.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHEOPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHEOPS_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"
include "lethe/Dialect/Lethe/IR/LetheElementwiseOps.td"
include "lethe/Dialect/Lethe/IR/LetheContractionOps.td"
include "lethe/Dialect/Lethe/IR/LetheConvolutionOps.td"
include "lethe/Dialect/Lethe/IR/LethePoolingOps.td"
include "lethe/Dialect/Lethe/IR/LetheNormalizationOps.td"
include "lethe/Dialect/Lethe/IR/LetheReductionOps.td"
include "lethe/Dialect/Lethe/IR/LetheTensorOps.td"
include "lethe/Dialect/Lethe/IR/LetheLossOps.td"
include "lethe/Dialect/Lethe/IR/LetheOptimizerOps.td"
include "lethe/Dialect/Lethe/IR/LetheMemoryOps.td"

#endif // LETHE_DIALECT_LETHE_IR_LETHEOPS_TD
