//===- LethePoolingOps.td - Pooling ops ----*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Lethe's pooling (max_pool, avg_pool, global_avg_pool) and the gradients
// of the windowed ones (max_pool_grad, avg_pool_grad).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHEPOOLINGOPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHEPOOLINGOPS_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"

def Lethe_MaxPoolOp : Lethe_InferredOp<"max_pool"> {
  let summary = "max pooling";
  let description = [{
    ONNX `MaxPool` (the values; see `max_pool_with_indices` for the
    `Indices` output) on `input` (N, C, D1..Dn) of floats or integers: the
    largest element of each window of
    `kernel_shape`, `strides`, `dilations` and `pads` (begins then ends);
    padding never wins. The output size is `floor` (or with `ceil_mode`,
    `ceil`) of `(D + pad_begin + pad_end - dilation * (k - 1) - 1) / stride`
    plus 1, a window that would start in the end padding being dropped.

    ```mlir
    %y = lethe.max_pool %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x16x16xf32>
    ```
  }];
  let arguments = (ins Lethe_NumericTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, UnitAttr:$ceil_mode);
  let results = (outs Lethe_NumericTensor:$output);
}

def Lethe_MaxPoolWithIndicesOp : Lethe_InferredOp<"max_pool_with_indices"> {
  let summary = "max pooling that also returns where each max is";
  let description = [{
    `max_pool` with ONNX `MaxPool`'s second output: `indices` (i64, the
    shape of `output`) holds the offset in `input` of each max, of equal
    maxima the first in the window. The offset is into `input` flattened
    row-major, or, with `storage_order = 1`, with the spatial dims of each
    (N, C) plane flattened column-major. The importer uses this op only
    where a model uses `Indices`.

    ```mlir
    %y, %i = lethe.max_pool_with_indices %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<8x16x32x32xf32>) -> (tensor<8x16x16x16xf32>, tensor<8x16x16x16xi64>)
    ```
  }];
  let arguments = (ins Lethe_NumericTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, UnitAttr:$ceil_mode,
                       DefaultValuedAttr<I64Attr, "0">:$storage_order);
  let results = (outs Lethe_NumericTensor:$output,
                      TensorOf<[I64]>:$indices);
  let hasVerifier = 1;
}

def Lethe_AvgPoolOp : Lethe_InferredOp<"avg_pool"> {
  let summary = "average pooling";
  let description = [{
    ONNX `AveragePool` on `input` (N, C, D1..Dn): the mean of each window of
    `kernel_shape`, `strides` and `pads`; with `count_include_pad`, padded
    positions count in the divisor. Output size as for `max_pool` (without
    dilation).

    ```mlir
    %y = lethe.avg_pool %x {count_include_pad, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       UnitAttr:$ceil_mode, UnitAttr:$count_include_pad);
  let results = (outs Lethe_FloatTensor:$output);
}

def Lethe_GlobalAvgPoolOp : Lethe_InferredOp<"global_avg_pool"> {
  let summary = "global average pooling";
  let description = [{
    ONNX `GlobalAveragePool`: the mean over all spatial dims of `input` (N,
    C, D1..Dn), giving (N, C, 1, ..., 1).

    ```mlir
    %y = lethe.global_avg_pool %x : (tensor<8x16x7x7xf32>) -> tensor<8x16x1x1xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$input);
  let results = (outs Lethe_FloatTensor:$output);
}

def Lethe_MaxPoolGradOp : Lethe_InferredOp<"max_pool_grad"> {
  let summary = "gradient of max pooling";
  let description = [{
    The input gradient of `max_pool` with these attributes: each element of
    `output_grad` is added to the element of `input` that won its window
    (of equal maxima the first, as in the forward), every other element
    gets 0. It finds the winners again from `input`, so the forward need
    not keep indices. The result has the type of `input`.

    ```mlir
    %dx = lethe.max_pool_grad %dy, %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<8x16x16x16xf32>, tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$output_grad, Lethe_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, UnitAttr:$ceil_mode);
  let results = (outs Lethe_FloatTensor:$input_grad);
}

def Lethe_AvgPoolGradOp : Lethe_Op<"avg_pool_grad"> {
  let summary = "gradient of average pooling";
  let description = [{
    The input gradient of `avg_pool` with these attributes: each element of
    `output_grad`, divided by its window's divisor, is added to every input
    element of the window. The result has the type of the forward's input,
    which `output_grad` does not determine; the verifier checks that
    pooling it gives the shape of `output_grad`.

    ```mlir
    %dx = lethe.avg_pool_grad %dy {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<8x16x16x16xf32>) -> tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$output_grad,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       UnitAttr:$ceil_mode, UnitAttr:$count_include_pad);
  let results = (outs Lethe_FloatTensor:$input_grad);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // LETHE_DIALECT_LETHE_IR_LETHEPOOLINGOPS_TD
