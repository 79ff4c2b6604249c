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

/// The element types ONNX's ReduceSum and ReduceMean take.
def Lethe_SumTensor
    : Lethe_TensorOf<[F16, BF16, F32, F64, I32, I64, UI32, UI64],
                     "statically shaped tensor of f16, bf16, f32, f64, i32, "
                     "i64, ui32 or ui64">;

/// A reduction over `axes` (ONNX semantics: negative axes count from the
/// end, none means every axis; `keepdims` keeps reduced dims as 1). ONNX's
/// `noop_with_empty_axes` needs no attribute: the importer emits no op then.
class Lethe_ReductionOp<string mnemonic, Type tensorType>
    : Lethe_InferredOp<mnemonic> {
  let arguments = (ins tensorType:$input,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs tensorType:$output);
  let extraClassDeclaration = [{
    /// The reduced dims of the input, normalized to [0, rank) (every dim
    /// when `axes` is empty). A verified op only.
    ::llvm::SmallVector<int64_t> getReducedDims();
  }];
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::mlir::lethe::inferReductionType(
          location, getOperationName(), adaptor.getInput().getType(),
          adaptor.getAxes(), adaptor.getKeepdims(), types);
    }
    ::llvm::SmallVector<int64_t> $cppClass::getReducedDims() {
      return ::mlir::lethe::getReducedDims(getInput().getType().getRank(),
                                           getAxes());
    }
    int64_t $cppClass::getFlops() {
      // One operation per input element.
      return ::mlir::lethe::getNumElements(getInput().getType());
    }
  }];
}

def Lethe_ReduceSumOp
    : Lethe_ReductionOp<"reduce_sum", Lethe_SumTensor> {
  let summary = "sum over axes";
  let description = [{
    Sums the elements over `axes` (ONNX `ReduceSum`).

    ```mlir
    %s = lethe.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
    ```
  }];
}

def Lethe_ReduceMeanOp
    : Lethe_ReductionOp<"reduce_mean", Lethe_SumTensor> {
  let summary = "mean over axes";
  let description = [{
    The mean of the elements over `axes` (ONNX `ReduceMean`); integer means
    truncate toward zero.

    ```mlir
    %m = lethe.reduce_mean %x {axes = array<i64: -1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
    ```
  }];
}

def Lethe_ReduceMaxOp
    : Lethe_ReductionOp<"reduce_max",
                        Lethe_NumericTensor> {
  let summary = "maximum over axes";
  let description = [{
    The largest element over `axes` (ONNX `ReduceMax`); a reduction over an
    empty dim gives the lowest value of the element type.

    ```mlir
    %m = lethe.reduce_max %x : (tensor<4x8xf32>) -> tensor<1x1xf32>
    ```
  }];
}

def Lethe_ReduceMaxGradOp : Lethe_InferredOp<"reduce_max_grad"> {
  let summary = "gradient of reduce_max";
  let description = [{
    The input gradient of `reduce_max` with these `axes` and `keepdims`,
    from its output gradient `output_grad`, its `input` and its `output`:
    the elements of each reduced group equal to its maximum share the
    group's gradient equally (as PyTorch's `amax`), the others get 0. The
    result has the input's type.

    ```mlir
    %dx = lethe.reduce_max_grad %dy, %x, %y {axes = array<i64: 1>, keepdims = false} : (tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$output_grad, Lethe_FloatTensor:$input,
                       Lethe_FloatTensor:$output,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Lethe_FloatTensor:$input_grad);
  let extraClassDeclaration = [{
    /// As reduce_max's.
    ::llvm::SmallVector<int64_t> getReducedDims();
  }];
  let extraClassDefinition = [{
    ::llvm::SmallVector<int64_t> $cppClass::getReducedDims() {
      return ::mlir::lethe::getReducedDims(getInput().getType().getRank(),
                                           getAxes());
    }
    int64_t $cppClass::getFlops() {
      // Two comparisons and a division per input element.
      return 3 * ::mlir::lethe::getNumElements(getInput().getType());
    }
  }];
}

#endif // LETHE_DIALECT_LETHE_IR_LETHEREDUCTIONOPS_TD
