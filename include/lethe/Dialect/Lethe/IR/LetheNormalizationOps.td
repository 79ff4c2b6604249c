//===- LetheNormalizationOps.td - Normalization ops ----*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Lethe's normalization, softmax and dropout (batch_norm, layer_norm,
// softmax, log_softmax, dropout), and the gradients of the normalizations
// (batch_norm_grad, layer_norm_grad) and of the softmaxes (softmax_grad,
// log_softmax_grad).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHENORMALIZATIONOPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHENORMALIZATIONOPS_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"

def Lethe_BatchNormOp : Lethe_InferredOp<"batch_norm"> {
  let summary = "batch normalization, inference mode";
  let description = [{
    ONNX `BatchNormalization` with `training_mode = 0`: per channel c (axis
    1 of `input`, N, C, D...), `y = scale[c] * (x - mean[c]) / sqrt(var[c] +
    epsilon) + bias[c]`, with the running statistics given. `momentum` does
    not affect the result: it is the model's, kept for `--lethe-autodiff`,
    which trains with `batch_norm_train`.

    ```mlir
    %y = lethe.batch_norm %x, %scale, %bias, %mean, %var : (tensor<8x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$input, Lethe_FloatTensor:$scale,
                       Lethe_FloatTensor:$bias, Lethe_FloatTensor:$mean,
                       Lethe_FloatTensor:$variance,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.9">:$momentum);
  let results = (outs Lethe_FloatTensor:$output);
}

def Lethe_BatchNormTrainOp : Lethe_InferredOp<"batch_norm_train"> {
  let summary = "batch normalization, training mode";
  let description = [{
    ONNX `BatchNormalization` with `training_mode = 1`: normalizes with the
    batch's statistics per channel c, `batch_mean[c]` and the population
    variance `batch_var[c]` over N and the spatial dims: `y = scale[c] * (x -
    batch_mean[c]) / sqrt(batch_var[c] + epsilon) + bias[c]`. Also returns
    the updated running statistics, `running_mean * momentum + batch_mean *
    (1 - momentum)` (likewise the variance, as ONNX specifies), and the batch
    statistics the backward pass needs: `saved_mean = batch_mean` and
    `saved_inv_std = 1 / sqrt(batch_var + epsilon)`.

    ```mlir
    %y, %rm, %rv, %sm, %si = lethe.batch_norm_train %x, %scale, %bias, %mean, %var {momentum = 0.899999976 : f32} : (tensor<8x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$input, Lethe_FloatTensor:$scale,
                       Lethe_FloatTensor:$bias, Lethe_FloatTensor:$running_mean,
                       Lethe_FloatTensor:$running_variance,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.9">:$momentum);
  let results = (outs Lethe_FloatTensor:$output,
                      Lethe_FloatTensor:$running_mean_out,
                      Lethe_FloatTensor:$running_variance_out,
                      Lethe_FloatTensor:$saved_mean,
                      Lethe_FloatTensor:$saved_inv_std);
}

def Lethe_BatchNormGradOp : Lethe_InferredOp<"batch_norm_grad"> {
  let summary = "gradient of training-mode batch normalization";
  let description = [{
    The gradients of `batch_norm_train`'s output with respect to its input,
    scale and bias, from the output gradient `output_grad`, the `input`, the
    `scale` and the batch statistics the forward saved. Per channel c, with
    `xhat = (x - saved_mean[c]) * saved_inv_std[c]` and M the elements per
    channel: `bias_grad[c] = sum(dy)`, `scale_grad[c] = sum(dy * xhat)` and
    `input_grad = scale[c] * saved_inv_std[c] * (dy - (bias_grad[c] + xhat
    * scale_grad[c]) / M)`, which accounts for the statistics depending on
    the input.

    ```mlir
    %dx, %dscale, %dbias = lethe.batch_norm_grad %dy, %x, %scale, %sm, %si : (tensor<8x16x32x32xf32>, tensor<8x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$output_grad, Lethe_FloatTensor:$input,
                       Lethe_FloatTensor:$scale, Lethe_FloatTensor:$saved_mean,
                       Lethe_FloatTensor:$saved_inv_std);
  let results = (outs Lethe_FloatTensor:$input_grad,
                      Lethe_FloatTensor:$scale_grad,
                      Lethe_FloatTensor:$bias_grad);
}

def Lethe_LayerNormOp : Lethe_InferredOp<"layer_norm"> {
  let summary = "layer normalization";
  let description = [{
    ONNX `LayerNormalization`: normalizes `input` over the dims from `axis`
    (default -1) on, `y = (x - mean) * inv_std_dev * scale + bias`, with
    `inv_std_dev = 1 / sqrt(variance + epsilon)`; `scale` and the optional
    `bias` have the shape of those dims. Also returns `mean` and
    `inv_std_dev`, of the input's shape with those dims set to 1, which the
    backward pass needs.

    ```mlir
    %y, %mean, %inv = lethe.layer_norm %x, %scale, %bias : (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<2x16x32xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>)
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$input, Lethe_FloatTensor:$scale,
                       Optional<Lethe_FloatTensor>:$bias,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Lethe_FloatTensor:$output, Lethe_FloatTensor:$mean,
                      Lethe_FloatTensor:$inv_std_dev);
}

def Lethe_LayerNormGradOp : Lethe_InferredOp<"layer_norm_grad"> {
  let summary = "gradient of layer normalization";
  let description = [{
    The gradients of `layer_norm`'s output with respect to its input, scale
    and bias, from the output gradient `output_grad`, the `input`, the
    `scale` and the `mean` and `inv_std_dev` the forward returned. Per row
    (the normalized dims from `axis` on, K elements), with `xhat = (x -
    mean) * inv_std_dev` and `d = dy * scale`: `input_grad = inv_std_dev *
    (d - (sum(d) + xhat * sum(d * xhat)) / K)`. `scale_grad = sum over rows
    of dy * xhat` and `bias_grad = sum over rows of dy` have the normalized
    shape (a scale or bias that broadcast to it is summed back by the
    caller).

    ```mlir
    %dx, %dscale, %dbias = lethe.layer_norm_grad %dy, %x, %scale, %mean, %inv : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>) -> (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>)
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$output_grad, Lethe_FloatTensor:$input,
                       Lethe_FloatTensor:$scale, Lethe_FloatTensor:$mean,
                       Lethe_FloatTensor:$inv_std_dev,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Lethe_FloatTensor:$input_grad,
                      Lethe_FloatTensor:$scale_grad,
                      Lethe_FloatTensor:$bias_grad);
}

/// Softmax and log-softmax along one axis (opset 13 semantics; the importer
/// rewrites opsets 11-12, which flatten to 2-D, with reshapes).
class Lethe_SoftmaxLikeOp<string mnemonic, int flopsPerElement>
    : Lethe_Op<mnemonic, [SameOperandsAndResultType]> {
  let arguments = (ins Lethe_FloatTensor:$input,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Lethe_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    int64_t $cppClass::getFlops() {
      // Max, subtract, exp, sum and divide (or log) per element.
      return }] # flopsPerElement # [{ * ::mlir::lethe::getNumElements(getType());
    }
    ::llvm::LogicalResult $cppClass::verify() {
      int64_t rank = getType().getRank();
      int64_t axis = static_cast<int64_t>(getAxis());
      if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
        return emitOpError("axis ") << axis << " is out of range for rank "
                                    << rank;
      return ::mlir::success();
    }
  }];
}

def Lethe_SoftmaxOp : Lethe_SoftmaxLikeOp<"softmax", 8> {
  let summary = "softmax along an axis";
  let description = [{
    `y = exp(x) / sum(exp(x))` along `axis` (default -1), computed stably
    (ONNX `Softmax`, opset 13).

    ```mlir
    %y = lethe.softmax %x {axis = 1 : i64} : tensor<8x10xf32>
    ```
  }];
}

def Lethe_LogSoftmaxOp : Lethe_SoftmaxLikeOp<"log_softmax", 8> {
  let summary = "log-softmax along an axis";
  let description = [{
    `y = x - log(sum(exp(x)))` along `axis` (default -1), computed stably
    (ONNX `LogSoftmax`, opset 13).
  }];
}

/// The gradients of softmax and log-softmax along their axis, from the
/// output gradient and the forward's output.
class Lethe_SoftmaxGradLikeOp<string mnemonic>
    : Lethe_Op<mnemonic, [SameOperandsAndResultType]> {
  let arguments = (ins Lethe_FloatTensor:$grad, Lethe_FloatTensor:$output,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Lethe_FloatTensor:$input_grad);
  let assemblyFormat = "$grad `,` $output attr-dict `:` type($grad)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    int64_t $cppClass::getFlops() {
      // A product and a sum, then a multiply-add, per element.
      return 4 * ::mlir::lethe::getNumElements(getType());
    }
    ::llvm::LogicalResult $cppClass::verify() {
      int64_t rank = getType().getRank();
      int64_t axis = static_cast<int64_t>(getAxis());
      if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
        return emitOpError("axis ") << axis << " is out of range for rank "
                                    << rank;
      return ::mlir::success();
    }
  }];
}

def Lethe_SoftmaxGradOp : Lethe_SoftmaxGradLikeOp<"softmax_grad"> {
  let summary = "gradient of softmax";
  let description = [{
    `input_grad = output * (grad - sum(grad * output))` along `axis`, from
    softmax's `output`: one op where the composition would hold three
    temporaries.

    ```mlir
    %dx = lethe.softmax_grad %dy, %y {axis = 1 : i64} : tensor<8x10xf32>
    ```
  }];
}

def Lethe_LogSoftmaxGradOp : Lethe_SoftmaxGradLikeOp<"log_softmax_grad"> {
  let summary = "gradient of log_softmax";
  let description = [{
    `input_grad = grad - exp(output) * sum(grad)` along `axis`, from
    log_softmax's `output`.

    ```mlir
    %dx = lethe.log_softmax_grad %dy, %y {axis = 1 : i64} : tensor<8x10xf32>
    ```
  }];
}

def Lethe_DropoutOp : Lethe_InferredOp<"dropout"> {
  let summary = "dropout with an explicit seed";
  let description = [{
    ONNX `Dropout`. With `training`, each element is kept with probability
    `1 - ratio` and scaled by `1 / (1 - ratio)`, else zeroed; `mask` says
    which were kept. The draw is a counter-based random function of `seed`,
    the training step (the optional scalar `step`, 0 without it) and the
    element's index, so that a recompute of the op reproduces the same mask
    and each step draws a new one. Without `training` the op is the
    identity and the mask is all true. The importer folds ONNX's `ratio` and
    `training_mode` inputs into the attributes and gives a node without a
    seed one derived from its name; `--lethe-autodiff` turns training on and
    passes the training step's `step` argument.

    ```mlir
    %y, %mask = lethe.dropout %x, %step {ratio = 1.000000e-01 : f32, seed = 7 : i64, training} : (tensor<8x64xf32>, tensor<i64>) -> (tensor<8x64xf32>, tensor<8x64xi1>)
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$input,
                       Optional<Lethe_TensorOf<[I64], "tensor<i64>">>:$step,
                       DefaultValuedAttr<F32Attr, "0.5">:$ratio,
                       I64Attr:$seed, UnitAttr:$training);
  let results = (outs Lethe_FloatTensor:$output, Lethe_BoolTensor:$mask);
}

#endif // LETHE_DIALECT_LETHE_IR_LETHENORMALIZATIONOPS_TD
