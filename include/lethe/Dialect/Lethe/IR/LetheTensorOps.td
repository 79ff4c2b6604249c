//===- LetheTensorOps.td - Constants, shape, data movement -*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Constants and the ops that move data without computing on it: reshape,
// flatten, transpose, concat, split, slice, gather, squeeze, unsqueeze,
// expand, and resize (which also interpolates). Their ONNX inputs that must
// be constant for shapes to be static (shape, axes, starts, ends, steps,
// split, scales, roi) are attributes here; the importer folds them in.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHETENSOROPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHETENSOROPS_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"

/// An op that only moves or copies elements: it performs no floating-point
/// operation. By default it reads its operands and writes its results once;
/// the ops that read only part of an operand (slice, gather) say so by
/// overriding `getBytesRead`.
class Lethe_DataMovementOp<string mnemonic, list<Trait> traits = []>
    : Lethe_InferredOp<mnemonic, traits> {
  let extraClassDefinition = [{
    int64_t $cppClass::getFlops() { return 0; }
  }];
}

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

def Lethe_ConstantOp : Lethe_DataMovementOp<"constant", [ConstantLike]> {
  let summary = "constant tensor";
  let description = [{
    A tensor whose elements are given by the attribute `value` (ONNX
    `Constant` and graph initializers); the result has the attribute's type.
    The value is any elements attribute: `dense<...>` for small constants,
    `dense_resource<...>` for the weights that the importer stores as blobs.
    A constant reads nothing and writes its result.

    ```mlir
    %c = lethe.constant dense<1.000000e+00> : tensor<4xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Lethe_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reshape, flatten, transpose
//===----------------------------------------------------------------------===//

def Lethe_ReshapeOp : Lethe_DataMovementOp<"reshape"> {
  let summary = "reshape to a given shape";
  let description = [{
    Gives the elements of `input`, in row-major order, the shape `shape`
    (ONNX `Reshape`, opset 14). A `0` in `shape` copies the input dimension
    at the same index, unless `allowzero` is set, in which case it is a
    dimension of size 0 (and `shape` may then not also hold `-1`). At most
    one entry is `-1`: that dimension is inferred from the number of
    elements. The number of elements is unchanged.

    ```mlir
    %y = lethe.reshape %x {shape = array<i64: 0, -1>} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
    ```
  }];
  let arguments = (ins Lethe_Tensor:$input, DenseI64ArrayAttr:$shape,
                       UnitAttr:$allowzero);
  let results = (outs Lethe_Tensor:$output);
}

def Lethe_FlattenOp : Lethe_DataMovementOp<"flatten"> {
  let summary = "flatten to a matrix";
  let description = [{
    Reshapes `input` of rank r to the 2-D tensor whose dimensions are the
    products of the input dimensions before `axis` and from `axis` on (ONNX
    `Flatten`). `axis` is in [-r, r] and defaults to 1; a negative axis
    counts from the end, and axis 0 gives a first dimension of 1.

    ```mlir
    %y = lethe.flatten %x {axis = 2 : i64} : (tensor<2x3x4x5xf32>) -> tensor<6x20xf32>
    ```
  }];
  let arguments = (ins Lethe_Tensor:$input,
                       DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs Lethe_Tensor:$output);
}

def Lethe_TransposeOp : Lethe_DataMovementOp<"transpose"> {
  let summary = "permute dimensions";
  let description = [{
    Permutes the dimensions of `input`: dimension i of the result is
    dimension `perm[i]` of the input (ONNX `Transpose`). `perm` is a
    permutation of [0, rank); the importer fills in ONNX's default, the
    reversed dimensions, when the node has no `perm`.

    ```mlir
    %y = lethe.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
    ```
  }];
  let arguments = (ins Lethe_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Lethe_Tensor:$output);
}

//===----------------------------------------------------------------------===//
// Concat, split, slice, gather
//===----------------------------------------------------------------------===//

def Lethe_ConcatOp : Lethe_DataMovementOp<"concat"> {
  let summary = "concatenate along an axis";
  let description = [{
    Concatenates one or more tensors along `axis` (ONNX `Concat`). The inputs
    have the same rank, element type and dimensions except along `axis`,
    which is in [-rank, rank) (negative counts from the end).

    ```mlir
    %y = lethe.concat %a, %b {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Lethe_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Lethe_Tensor:$output);
}

def Lethe_SplitOp : Lethe_DataMovementOp<"split"> {
  let summary = "split along an axis into given sizes";
  let description = [{
    Splits `input` along `axis` (default 0, in [-rank, rank)) into one result
    per entry of `split`, the size of that result along the axis (ONNX
    `Split`). The sizes are non-negative and sum to the input dimension. The
    importer turns ONNX's `split` input, or its equal split into
    `num_outputs` parts (the last one smaller), into these sizes.

    ```mlir
    %y:2 = lethe.split %x {axis = 1 : i64, split = array<i64: 2, 6>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x6xf32>)
    ```
  }];
  let arguments = (ins Lethe_Tensor:$input,
                       DefaultValuedAttr<I64Attr, "0">:$axis,
                       DenseI64ArrayAttr:$split);
  let results = (outs Variadic<Lethe_Tensor>:$outputs);
}

def Lethe_SliceOp
    : Lethe_DataMovementOp<"slice",
                           [DeclareOpInterfaceMethods<Lethe_CostOpInterface,
                                                      ["getBytesRead"]>]> {
  let summary = "strided slice";
  let description = [{
    Takes, along each axis `axes[i]`, the elements from `starts[i]` towards
    `ends[i]` (exclusive) in steps of `steps[i]` (ONNX `Slice`, opset 13);
    the other dimensions are kept whole. The four attributes have the same
    length; axes are in [-rank, rank) and distinct, steps are non-zero.
    The importer fills in ONNX's defaults (all axes, steps of 1).

    As in ONNX, a negative start or end has the dimension `d` added to it;
    then for a positive step the start and end are clamped to [0, d], and
    for a negative step the start to [0, d - 1] and the end to [-1, d - 1]
    (so INT64_MAX and INT64_MIN stand for "to the end"). The result has
    `max(0, ceil((end - start) / step))` elements along the axis. Only the
    selected elements are read.

    ```mlir
    %y = lethe.slice %x {axes = array<i64: 0, -1>, ends = array<i64: 3, -9223372036854775808>, starts = array<i64: 1, -1>, steps = array<i64: 1, -2>} : (tensor<4x8xf32>) -> tensor<2x4xf32>
    ```
  }];
  let arguments = (ins Lethe_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$axes,
                       DenseI64ArrayAttr:$steps);
  let results = (outs Lethe_Tensor:$output);
  let extraClassDeclaration = [{
    /// For every dim of the input, the index of the first element the slice
    /// reads (ONNX's clamping applied) and the step between elements (1 for
    /// dims the slice does not name). A verified op only.
    void getDimStartsAndSteps(::llvm::SmallVectorImpl<int64_t> &starts,
                              ::llvm::SmallVectorImpl<int64_t> &steps);
  }];
}

def Lethe_GatherOp
    : Lethe_DataMovementOp<"gather",
                           [DeclareOpInterfaceMethods<Lethe_CostOpInterface,
                                                      ["getBytesRead"]>]> {
  let summary = "gather slices along an axis";
  let description = [{
    Takes, for each entry of `indices`, the slice of `data` at that index
    along `axis` (default 0, in [-rank, rank)) (ONNX `Gather`). The result
    has the shape `data.shape[:axis] + indices.shape + data.shape[axis+1:]`.
    Negative indices count from the end of the axis. The op reads the
    indices and the selected slices, not the whole of `data`.

    ```mlir
    %y = lethe.gather %data, %indices : (tensor<1000x64xf32>, tensor<8x16xi64>) -> tensor<8x16x64xf32>
    ```
  }];
  let arguments = (ins Lethe_Tensor:$data, Lethe_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Lethe_Tensor:$output);
}

def Lethe_SliceGradOp : Lethe_Op<"slice_grad"> {
  let summary = "gradient of slice";
  let description = [{
    The input gradient of `slice` with these attributes: `output_grad` at
    the elements the slice read, 0 elsewhere. The result has the type of the
    forward's input, which `output_grad` does not determine; the verifier
    checks that slicing it gives the shape of `output_grad`.

    ```mlir
    %dx = lethe.slice_grad %dy {axes = array<i64: 1>, ends = array<i64: 7>, starts = array<i64: 1>, steps = array<i64: 2>} : (tensor<4x3xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$output_grad,
                       DenseI64ArrayAttr:$starts, DenseI64ArrayAttr:$ends,
                       DenseI64ArrayAttr:$axes, DenseI64ArrayAttr:$steps);
  let results = (outs Lethe_FloatTensor:$input_grad);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// As slice's, for the forward's input (this op's result).
    void getDimStartsAndSteps(::llvm::SmallVectorImpl<int64_t> &starts,
                              ::llvm::SmallVectorImpl<int64_t> &steps);
  }];
  let extraClassDefinition = [{
    int64_t $cppClass::getFlops() { return 0; }
  }];
}

def Lethe_GatherGradOp : Lethe_Op<"gather_grad"> {
  let summary = "gradient of gather";
  let description = [{
    The data gradient of `gather` with this `axis`: zeros, then each slice
    of `output_grad` added at the index it was gathered from, so that an
    index gathered several times (a token that occurs twice) gets the sum.
    The result has the type of the forward's `data`, which the operands do
    not determine; the verifier checks that gathering from it gives the
    shape of `output_grad`.

    ```mlir
    %dtable = lethe.gather_grad %dy, %indices : (tensor<8x16x64xf32>, tensor<8x16xi64>) -> tensor<1000x64xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$output_grad,
                       Lethe_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Lethe_FloatTensor:$input_grad);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    int64_t $cppClass::getFlops() {
      // An addition per element of output_grad.
      return ::mlir::lethe::getNumElements(getOutputGrad().getType());
    }
  }];
}

//===----------------------------------------------------------------------===//
// Squeeze, unsqueeze, expand
//===----------------------------------------------------------------------===//

def Lethe_SqueezeOp : Lethe_DataMovementOp<"squeeze"> {
  let summary = "remove unit dimensions";
  let description = [{
    Removes the dimensions `axes` of `input`, each of which has size 1 (ONNX
    `Squeeze`). Axes are in [-rank, rank) and distinct. Without `axes` (the
    default, empty), every dimension of size 1 is removed.

    ```mlir
    %y = lethe.squeeze %x {axes = array<i64: -1>} : (tensor<2x1x3x1xf32>) -> tensor<2x1x3xf32>
    ```
  }];
  let arguments = (ins Lethe_Tensor:$input,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes);
  let results = (outs Lethe_Tensor:$output);
}

def Lethe_UnsqueezeOp : Lethe_DataMovementOp<"unsqueeze"> {
  let summary = "insert unit dimensions";
  let description = [{
    Inserts dimensions of size 1 into `input` (ONNX `Unsqueeze`). The
    entries of `axes` index the result: for an input of rank r and k axes,
    they are in [-(r + k), r + k) and distinct, and the input dimensions
    fill the other positions in order.

    ```mlir
    %y = lethe.unsqueeze %x {axes = array<i64: 0, -1>} : (tensor<3x4xf32>) -> tensor<1x3x4x1xf32>
    ```
  }];
  let arguments = (ins Lethe_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Lethe_Tensor:$output);
}

def Lethe_ExpandOp : Lethe_DataMovementOp<"expand"> {
  let summary = "broadcast to a shape";
  let description = [{
    Broadcasts `input` against `shape` with ONNX's multidirectional rule
    (ONNX `Expand`): the result shape is the broadcast of both, so a
    dimension of 1 in `shape` keeps the input dimension and `shape` may have
    a lower rank than the input. The entries of `shape` are non-negative.

    ```mlir
    %y = lethe.expand %x {shape = array<i64: 2, 1, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins Lethe_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Lethe_Tensor:$output);
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

def Lethe_ResizeOp : Lethe_DataMovementOp<"resize"> {
  let summary = "resize by nearest, linear or cubic sampling";
  let description = [{
    Resizes `input` by the factor `scales[i]` along each dimension i (ONNX
    `Resize`, opsets 10 to 17). Scales are positive and finite; the importer
    turns ONNX's `sizes` input into the scales `size / input size`.

    Dimension i of the result has `floor(input_dim * scales[i] + 1e-9)`
    elements: ONNX takes `floor(input_dim * scale)`, and the tiny epsilon
    absorbs the rounding of a scale `size / input_dim` that the importer
    computes from a size (in doubles, 11 * (15 / 11) is 14.999999999999998).
    Every result dimension is at least 1.

    `mode` is "nearest" (the default: copies one input element, any element
    type), "linear" (N-linear: 2 points per dimension) or "cubic" (Keys'
    cubic convolution with parameter `cubic_coeff_a`, default -0.75: 4
    points per dimension); linear and cubic need a floating-point element
    type. Points outside the input repeat its edge, or, with
    `exclude_outside`, get weight 0 while the others are scaled to sum to 1.

    `coordinate_transformation_mode` maps a result coordinate back to the
    input: "half_pixel" (the default), "asymmetric", "align_corners",
    "pytorch_half_pixel", "tf_half_pixel_for_nn" or "tf_crop_and_resize".
    As in ONNX's reference implementation, the resized length in these
    formulas is `input_dim * scale`, which need not be an integer.
    "tf_crop_and_resize" samples the region of interest `roi` (required with
    this mode and only with it: the starts of every dimension, then the ends,
    normalized to [0, 1]); a result element that maps outside the input is
    `extrapolation_value`. `nearest_mode` rounds a coordinate to an index in
    mode nearest: "round_prefer_floor" (the default), "round_prefer_ceil",
    "floor" or "ceil".

    ```mlir
    %y = lethe.resize %x {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
    %z = lethe.resize %x {mode = "linear", scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
    ```
  }];
  let arguments = (ins
    Lethe_Tensor:$input,
    DenseF64ArrayAttr:$scales,
    DefaultValuedStrAttr<StrAttr, "nearest">:$mode,
    DefaultValuedStrAttr<StrAttr, "half_pixel">:$coordinate_transformation_mode,
    DefaultValuedStrAttr<StrAttr, "round_prefer_floor">:$nearest_mode,
    DefaultValuedAttr<F64Attr, "-0.75">:$cubic_coeff_a,
    DefaultValuedAttr<BoolAttr, "false">:$exclude_outside,
    OptionalAttr<DenseF64ArrayAttr>:$roi,
    DefaultValuedAttr<F64Attr, "0.0">:$extrapolation_value);
  let results = (outs Lethe_Tensor:$output);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Input points read per result element and dimension: 1 for nearest,
    /// 2 for linear, 4 for cubic.
    int64_t getPointsPerDim();
  }];
  let extraClassDefinition = [{
    int64_t $cppClass::getFlops() {
      // A multiply and an add per point read, per resized dimension.
      if (getMode() == "nearest")
        return 0;
      auto type = ::llvm::cast<::mlir::RankedTensorType>(getType());
      return 2 * getPointsPerDim() * type.getNumElements() * type.getRank();
    }
  }];
}

def Lethe_ResizeGradOp : Lethe_Op<"resize_grad"> {
  let summary = "gradient of resize";
  let description = [{
    The input gradient of `resize` with these attributes (the adjoint of the
    resize): each element of `output_grad` is added, times its weight, to
    every input element it was sampled from; a result element that
    `tf_crop_and_resize` extrapolated contributes nothing. The result has
    the type of the forward's input, which `output_grad` does not determine;
    the verifier checks that resizing it gives the shape of `output_grad`.
    Floating-point only.

    ```mlir
    %dx = lethe.resize_grad %dy {mode = "nearest", scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : (tensor<1x3x16x16xf32>) -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins
    Lethe_FloatTensor:$output_grad,
    DenseF64ArrayAttr:$scales,
    DefaultValuedStrAttr<StrAttr, "nearest">:$mode,
    DefaultValuedStrAttr<StrAttr, "half_pixel">:$coordinate_transformation_mode,
    DefaultValuedStrAttr<StrAttr, "round_prefer_floor">:$nearest_mode,
    DefaultValuedAttr<F64Attr, "-0.75">:$cubic_coeff_a,
    DefaultValuedAttr<BoolAttr, "false">:$exclude_outside,
    OptionalAttr<DenseF64ArrayAttr>:$roi,
    DefaultValuedAttr<F64Attr, "0.0">:$extrapolation_value);
  let results = (outs Lethe_FloatTensor:$input_grad);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    int64_t $cppClass::getFlops() {
      // A multiply-add per point written, per resized dimension.
      auto type = ::llvm::cast<::mlir::RankedTensorType>(
          getOutputGrad().getType());
      int64_t points = getMode() == "nearest" ? 1
                       : getMode() == "linear" ? 2 : 4;
      return 2 * points * type.getNumElements() * type.getRank();
    }
  }];
}

#endif // LETHE_DIALECT_LETHE_IR_LETHETENSOROPS_TD
