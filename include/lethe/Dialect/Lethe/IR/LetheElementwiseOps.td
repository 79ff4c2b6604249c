//===- LetheElementwiseOps.td - Elementwise ops ---------------*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Unary and binary elementwise operators, `clip`, `where` and `cast`. Binary
// operators broadcast their operands with ONNX's multidirectional (numpy)
// rule; unary ones keep the type of their operand.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHEELEMENTWISEOPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHEELEMENTWISEOPS_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

/// A unary elementwise op on floating-point tensors. `flopsPerElement` is the
/// cost model's count for one element (transcendental functions are counted
/// as a handful of FLOPs, as their polynomial evaluations take).
class Lethe_UnaryFloatOp<string mnemonic, int flopsPerElement,
                         list<Trait> traits = []>
    : Lethe_Op<mnemonic, !listconcat([SameOperandsAndResultType], traits)> {
  let arguments = (ins Lethe_FloatTensor:$input);
  let results = (outs Lethe_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDefinition = [{
    int64_t $cppClass::getFlops() {
      return }] # flopsPerElement # [{ * ::mlir::lethe::getNumElements(getType());
    }
  }];
}

def Lethe_NegOp : Lethe_UnaryFloatOp<"neg", 1> {
  let summary = "elementwise negation";
  let description = [{
    `y = -x` elementwise (ONNX `Neg`).

    ```mlir
    %y = lethe.neg %x : tensor<4x8xf32>
    ```
  }];
}

def Lethe_ReluOp : Lethe_UnaryFloatOp<"relu", 1> {
  let summary = "rectified linear unit";
  let description = [{
    `y = max(x, 0)` elementwise (ONNX `Relu`).

    ```mlir
    %y = lethe.relu %x : tensor<4x8xf32>
    ```
  }];
}

def Lethe_LeakyReluOp : Lethe_UnaryFloatOp<"leaky_relu", 2> {
  let summary = "leaky rectified linear unit";
  let description = [{
    `y = x` where `x >= 0`, else `alpha * x` (ONNX `LeakyRelu`; `alpha`
    defaults to 0.01).

    ```mlir
    %y = lethe.leaky_relu %x {alpha = 2.000000e-01 : f32} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$input,
                       DefaultValuedAttr<F32Attr, "0.01">:$alpha);
}

def Lethe_SigmoidOp : Lethe_UnaryFloatOp<"sigmoid", 4> {
  let summary = "logistic sigmoid";
  let description = [{
    `y = 1 / (1 + exp(-x))` elementwise (ONNX `Sigmoid`).
  }];
}

def Lethe_TanhOp : Lethe_UnaryFloatOp<"tanh", 4> {
  let summary = "hyperbolic tangent";
  let description = [{ `y = tanh(x)` elementwise (ONNX `Tanh`). }];
}

def Lethe_GeluOp : Lethe_UnaryFloatOp<"gelu", 8> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `y = 0.5 * x * (1 + erf(x / sqrt(2)))` elementwise, or with
    `approximate = "tanh"`, `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 *
    x^3)))` (ONNX `Gelu`, opset 20, and PyTorch's `gelu`).

    ```mlir
    %y = lethe.gelu %x {approximate = "tanh"} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$input,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let hasVerifier = 1;
}

def Lethe_ErfOp : Lethe_UnaryFloatOp<"erf", 4> {
  let summary = "Gauss error function";
  let description = [{ `y = erf(x)` elementwise (ONNX `Erf`). }];
}

def Lethe_ExpOp : Lethe_UnaryFloatOp<"exp", 4> {
  let summary = "exponential";
  let description = [{ `y = exp(x)` elementwise (ONNX `Exp`). }];
}

def Lethe_LogOp : Lethe_UnaryFloatOp<"log", 4> {
  let summary = "natural logarithm";
  let description = [{ `y = log(x)` elementwise (ONNX `Log`). }];
}

def Lethe_SqrtOp : Lethe_UnaryFloatOp<"sqrt", 4> {
  let summary = "square root";
  let description = [{ `y = sqrt(x)` elementwise (ONNX `Sqrt`). }];
}

def Lethe_ClipOp : Lethe_Op<"clip", [SameOperandsAndResultType]> {
  let summary = "clamp to an interval";
  let description = [{
    `y = min(max(x, min), max)` elementwise (ONNX `Clip`), on floating-point
    or integer tensors. A bound that is absent does not clamp. The bounds
    are f64 attributes for a floating-point input and i64 attributes, within
    the range of the element type, for an integer input. The importer folds
    ONNX's constant `min`/`max` inputs into these attributes.

    ```mlir
    %y = lethe.clip %x {min = 0.000000e+00 : f64, max = 6.000000e+00 : f64} : tensor<4x8xf32>
    %j = lethe.clip %i {min = -5 : i64} : tensor<4xi8>
    ```
  }];
  let arguments = (ins Lethe_NumericTensor:$input,
                       OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$min,
                       OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$max);
  let results = (outs Lethe_NumericTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The value of a bound attribute (f64 or i64) as a double.
    static double getBoundValue(::mlir::Attribute bound);
    /// Whether both bounds are given and min > max (exact for i64 bounds).
    static bool areBoundsReversed(::mlir::Attribute min, ::mlir::Attribute max);
  }];
  let extraClassDefinition = [{
    int64_t $cppClass::getFlops() {
      return 2 * ::mlir::lethe::getNumElements(getType());
    }
  }];
}

//===----------------------------------------------------------------------===//
// Gradients of activations
//===----------------------------------------------------------------------===//

/// The gradient of an activation whose derivative is not a short composition
/// of other ops: `input_grad = grad * f'(...)` elementwise, from `grad` (the
/// gradient of the activation's output) and one saved forward value.
class Lethe_ActivationGradOp<string mnemonic, int flopsPerElement,
                             dag savedAndAttributes>
    : Lethe_Op<mnemonic, [SameOperandsAndResultType]> {
  let arguments = !con((ins Lethe_FloatTensor:$grad), savedAndAttributes);
  let results = (outs Lethe_FloatTensor:$input_grad);
  let extraClassDefinition = [{
    int64_t $cppClass::getFlops() {
      return }] # flopsPerElement # [{ * ::mlir::lethe::getNumElements(getType());
    }
  }];
}

def Lethe_ReluGradOp
    : Lethe_ActivationGradOp<"relu_grad", 1,
                             (ins Lethe_FloatTensor:$output)> {
  let summary = "gradient of relu";
  let description = [{
    `input_grad = grad` where relu's `output > 0`, else 0. It reads the
    output rather than the input, so that the input need not be kept.

    ```mlir
    %dx = lethe.relu_grad %dy, %y : tensor<4x8xf32>
    ```
  }];
  let assemblyFormat = "$grad `,` $output attr-dict `:` type($grad)";
}

def Lethe_LeakyReluGradOp
    : Lethe_ActivationGradOp<"leaky_relu_grad", 2,
                             (ins Lethe_FloatTensor:$input,
                                  DefaultValuedAttr<F32Attr, "0.01">:$alpha)> {
  let summary = "gradient of leaky_relu";
  let description = [{
    `input_grad = grad` where `input > 0`, else `alpha * grad`.

    ```mlir
    %dx = lethe.leaky_relu_grad %dy, %x {alpha = 2.000000e-01 : f32} : tensor<4x8xf32>
    ```
  }];
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($grad)";
}

def Lethe_ClipGradOp
    : Lethe_ActivationGradOp<"clip_grad", 2,
                             (ins Lethe_FloatTensor:$input,
                                  OptionalAttr<F64Attr>:$min,
                                  OptionalAttr<F64Attr>:$max)> {
  let summary = "gradient of clip";
  let description = [{
    `input_grad = grad` where `min <= input <= max` (an absent bound does
    not limit), else 0: the gradient passes where clip is the identity,
    including at the bounds, as PyTorch's clamp does.

    ```mlir
    %dx = lethe.clip_grad %dy, %x {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<4x8xf32>
    ```
  }];
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($grad)";
  let hasVerifier = 1;
}

def Lethe_GeluGradOp
    : Lethe_ActivationGradOp<"gelu_grad", 16,
                             (ins Lethe_FloatTensor:$input,
                                  DefaultValuedStrAttr<StrAttr, "none">:$approximate)> {
  let summary = "gradient of gelu";
  let description = [{
    `input_grad = grad * gelu'(input)`, with the derivative of the exact form
    (`0.5 * (1 + erf(x / sqrt(2))) + x * exp(-x^2 / 2) / sqrt(2 pi)`) or,
    with `approximate = "tanh"`, of the tanh approximation.

    ```mlir
    %dx = lethe.gelu_grad %dy, %x : tensor<4x8xf32>
    ```
  }];
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($grad)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Binary, broadcasting
//===----------------------------------------------------------------------===//

/// A binary elementwise op with ONNX (numpy) broadcasting; both operands
/// have the same element type and so does the result.
class Lethe_BinaryOp<string mnemonic, int flopsPerElement,
                     list<Trait> traits = []>
    : Lethe_InferredOp<mnemonic, traits> {
  let arguments = (ins Lethe_NumericTensor:$lhs, Lethe_NumericTensor:$rhs);
  let results = (outs Lethe_NumericTensor:$output);
  let extraClassDefinition = [{
    int64_t $cppClass::getFlops() {
      return }] # flopsPerElement # [{ * ::mlir::lethe::getNumElements(getType());
    }
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::mlir::lethe::inferBroadcastType(
          location, getOperationName(), adaptor.getLhs().getType(),
          adaptor.getRhs().getType(), types);
    }
  }];
}

def Lethe_AddOp : Lethe_BinaryOp<"add", 1, [Commutative]> {
  let summary = "elementwise addition with broadcasting";
  let description = [{
    `y = a + b` (ONNX `Add`).

    ```mlir
    %y = lethe.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
}

def Lethe_SubOp : Lethe_BinaryOp<"sub", 1> {
  let summary = "elementwise subtraction with broadcasting";
  let description = [{ `y = a - b` (ONNX `Sub`). }];
}

def Lethe_MulOp : Lethe_BinaryOp<"mul", 1, [Commutative]> {
  let summary = "elementwise multiplication with broadcasting";
  let description = [{ `y = a * b` (ONNX `Mul`). }];
}

def Lethe_DivOp : Lethe_BinaryOp<"div", 1> {
  let summary = "elementwise division with broadcasting";
  let description = [{
    `y = a / b` (ONNX `Div`); integer division truncates toward zero.
  }];
}

def Lethe_PowOp : Lethe_BinaryOp<"pow", 8> {
  let summary = "elementwise power with broadcasting";
  let description = [{
    `y = a ^ b` (ONNX `Pow`). Both operands have the same element type; the
    importer casts an exponent of another type.
  }];
}

//===----------------------------------------------------------------------===//
// Where, cast
//===----------------------------------------------------------------------===//

def Lethe_WhereOp : Lethe_InferredOp<"where"> {
  let summary = "elementwise select with broadcasting";
  let description = [{
    `y = condition ? a : b` elementwise, the three operands broadcast
    together (ONNX `Where`).

    ```mlir
    %y = lethe.where %c, %a, %b : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lethe_BoolTensor:$condition, Lethe_Tensor:$lhs,
                       Lethe_Tensor:$rhs);
  let results = (outs Lethe_Tensor:$output);
}

def Lethe_CastOp : Lethe_InferredOp<"cast"> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Converts every element to the element type `to` (ONNX `Cast`): floats
    round to nearest even, float to integer truncates toward zero, anything
    to `i1` is `x != 0`.

    ```mlir
    %y = lethe.cast %x {to = f16} : (tensor<4x8xf32>) -> tensor<4x8xf16>
    ```
  }];
  let arguments = (ins Lethe_Tensor:$input, TypeAttrOf<Lethe_Element>:$to);
  let results = (outs Lethe_Tensor:$output);
}

#endif // LETHE_DIALECT_LETHE_IR_LETHEELEMENTWISEOPS_TD
