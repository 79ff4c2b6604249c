//===- LetheContractionOps.td - Matrix products ---------------*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Matrix products: numpy-style batched `matmul` and BLAS-style `gemm`.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHECONTRACTIONOPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHECONTRACTIONOPS_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"

def Lethe_MatMulOp : Lethe_InferredOp<"matmul"> {
  let summary = "numpy-style matrix product";
  let description = [{
    Matrix product with numpy semantics (ONNX `MatMul`): the last two
    dimensions are multiplied, leading dimensions broadcast; a 1-D left
    operand is a row vector and a 1-D right operand a column vector, their
    unit dimension removed from the result.

    ```mlir
    %y = lethe.matmul %a, %b : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$lhs, Lethe_FloatTensor:$rhs);
  let results = (outs Lethe_FloatTensor:$output);
}

def Lethe_GemmOp : Lethe_InferredOp<"gemm"> {
  let summary = "general matrix multiply";
  let description = [{
    `y = alpha * op(a) * op(b) + beta * c` (ONNX `Gemm`), where `op(a)` is
    `a` transposed when `trans_a` is set, likewise for `b`. `a` and `b` are
    matrices, `op(a)` of shape (M, K) and `op(b)` of shape (K, N); the
    optional `c` broadcasts (unidirectionally) to (M, N). `alpha` and `beta`
    default to 1.

    ```mlir
    %y = lethe.gemm %x, %w, %b {trans_b} : (tensor<8x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$a, Lethe_FloatTensor:$b,
                       Optional<Lethe_FloatTensor>:$c,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0">:$beta,
                       UnitAttr:$trans_a, UnitAttr:$trans_b);
  let results = (outs Lethe_FloatTensor:$output);
}

#endif // LETHE_DIALECT_LETHE_IR_LETHECONTRACTIONOPS_TD
