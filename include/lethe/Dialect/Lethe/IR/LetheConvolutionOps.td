//===- LetheConvolutionOps.td - Convolution ops ----*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Lethe's convolution and transposed convolution (conv, conv_transpose),
// and the weight gradient of a convolution (conv_grad_weight). The input
// gradient of a convolution is the transposed convolution of the output
// gradient with the same weight, so it needs no op of its own.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHECONVOLUTIONOPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHECONVOLUTIONOPS_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"

def Lethe_ConvOp
    : Lethe_InferredOp<"conv", [DeclareOpInterfaceMethods<Lethe_CostOpInterface,
                                                         ["getWorkspaceBytes"]>]> {
  let summary = "convolution";
  let description = [{
    ONNX `Conv` on `input` (N, C, D1..Dn), n = 1 to 3, with `weight` (M,
    C/group, k1..kn) and an optional `bias` (M): each of the `group` groups
    of input channels is convolved (cross-correlated) with its M/group
    filters. `pads` holds the n padding sizes at the beginning of each
    spatial dim, then the n at the end. Output spatial size:
    `floor((D + pad_begin + pad_end - dilation * (k - 1) - 1) / stride) + 1`.
    The importer resolves ONNX's `auto_pad` into `pads` and takes the kernel
    shape from the weight.

    ```mlir
    %y = lethe.conv %x, %w, %b {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$input, Lethe_FloatTensor:$weight,
                       Optional<Lethe_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Lethe_FloatTensor:$output);
}

def Lethe_ConvTransposeOp
    : Lethe_InferredOp<"conv_transpose",
                       [DeclareOpInterfaceMethods<Lethe_CostOpInterface,
                                                  ["getWorkspaceBytes"]>]> {
  let summary = "transposed convolution";
  let description = [{
    ONNX `ConvTranspose` on `input` (N, C, D1..Dn) with `weight` (C, M/group,
    k1..kn) and an optional `bias` (M): the gradient of a convolution with
    respect to its input. Output spatial size: `stride * (D - 1) +
    output_padding + dilation * (k - 1) + 1 - pad_begin - pad_end`. The
    importer resolves `output_shape` and `auto_pad` into `pads`.

    ```mlir
    %y = lethe.conv_transpose %x, %w {dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x8x16x16xf32>, tensor<8x4x2x2xf32>) -> tensor<1x4x32x32xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$input, Lethe_FloatTensor:$weight,
                       Optional<Lethe_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$output_padding,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Lethe_FloatTensor:$output);
}

def Lethe_ConvGradWeightOp
    : Lethe_Op<"conv_grad_weight", [DeclareOpInterfaceMethods<
                                        Lethe_CostOpInterface,
                                        ["getWorkspaceBytes"]>]> {
  let summary = "gradient of a convolution with respect to its weight";
  let description = [{
    The weight gradient of `conv` with these attributes, given the
    convolution's `input` (N, C, D1..Dn) and the gradient `output_grad` of
    its output (N, M, O1..On): `weight_grad[m, c, k] = sum over n, o of
    output_grad[n, m, o] * input[n, g * C/group + c, o * stride - pad_begin
    + k * dilation]` for filter m of group g (padding reads 0). The result
    has the weight's type (M, C/group, k1..kn), which the operands do not
    determine; the verifier checks that a convolution of `input` with it
    has the shape of `output_grad`. The transposed convolution's weight
    gradient is this op with the roles of the two operands swapped.

    ```mlir
    %dw = lethe.conv_grad_weight %x, %dy {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<8x16x32x32xf32>) -> tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$input, Lethe_FloatTensor:$output_grad,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Lethe_FloatTensor:$weight_grad);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // LETHE_DIALECT_LETHE_IR_LETHECONVOLUTIONOPS_TD
