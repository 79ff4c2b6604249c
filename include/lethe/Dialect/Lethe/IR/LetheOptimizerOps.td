//===- LetheOptimizerOps.td - Optimizer update ops -----------*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Lethe's optimizer updates (sgd_update, momentum_update, adagrad_update,
// adam_update): one step of an optimizer applied to ONE tensor, with ONNX's
// `ai.onnx.preview.training` semantics (Momentum, Adagrad, Adam; ONNX's ops
// take variadic groups of tensors, which the importer splits into one op per
// tensor). Each op takes the learning rate R (a scalar tensor of f32 or f64),
// the tensor X, its gradient G and its optimizer state, and returns the new
// X and the new state; all but R and the step T have X's type.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHEOPTIMIZEROPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHEOPTIMIZEROPS_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"

/// The learning rate: a scalar of f32 or f64 (checked to be rank 0 by each
/// op's inference).
def Lethe_LearningRate : Lethe_TensorOf<[F32, F64],
    "statically shaped tensor of f32 or f64">;
/// The update count: a scalar i64 (rank 0, checked likewise).
def Lethe_StepCount : Lethe_TensorOf<[I64], "statically shaped tensor of i64">;

def Lethe_SgdUpdateOp : Lethe_InferredOp<"sgd_update"> {
  let summary = "plain stochastic gradient descent on one tensor";
  let description = [{
    `X_new = X - R * (norm_coefficient * X + G)`: a gradient step with L2
    regularization of `0.5 * norm_coefficient * ||X||^2` (which for plain
    SGD is the same as decoupled weight decay). ONNX has no such op: its
    `Momentum` with `alpha = 0`, `beta = 1` computes the same numbers
    (`V_new = 0 * V + G_regularized`, `X_new = X - R * V_new`) but reads and
    writes a momentum tensor as large as X that SGD does not need, which a
    memory planner should not be made to keep. `norm_coefficient` must be
    finite and >= 0.

    ```mlir
    %x1 = lethe.sgd_update %lr, %x, %g : (tensor<f32>, tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
    ```
  }];
  let arguments = (ins Lethe_LearningRate:$learning_rate,
                       Lethe_FloatTensor:$x, Lethe_FloatTensor:$gradient,
                       DefaultValuedAttr<F32Attr, "0.0">:$norm_coefficient);
  let results = (outs Lethe_FloatTensor:$x_new);
}

def Lethe_MomentumUpdateOp : Lethe_InferredOp<"momentum_update"> {
  let summary = "stochastic gradient descent with momentum on one tensor";
  let description = [{
    ONNX `Momentum` (ai.onnx.preview.training) on one tensor X with its
    gradient G and momentum V, at update count T (0 at the first step):

    ```
    G_regularized = norm_coefficient * X + G
    beta_adjusted = T > 0 ? beta : 1
    V_new = alpha * V + beta_adjusted * G_regularized
    X_new = X - R * V_new                                    (mode "standard")
    X_new = X - R * (G_regularized + alpha * V_new)          (mode "nesterov")
    ```

    This is PyTorch's `SGD(momentum=alpha, dampening=1-beta,
    nesterov=...)`, whose first step also takes the gradient undamped.
    `alpha`, `beta` and `norm_coefficient` must be finite and >= 0.

    ```mlir
    %x1, %v1 = lethe.momentum_update %lr, %t, %x, %g, %v {alpha = 0.9 : f32, beta = 1.0 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
    ```
  }];
  let arguments = (ins Lethe_LearningRate:$learning_rate,
                       Lethe_StepCount:$step, Lethe_FloatTensor:$x,
                       Lethe_FloatTensor:$gradient,
                       Lethe_FloatTensor:$momentum,
                       F32Attr:$alpha, F32Attr:$beta,
                       DefaultValuedAttr<F32Attr, "0.0">:$norm_coefficient,
                       DefaultValuedStrAttr<StrAttr, "standard">:$mode);
  let results = (outs Lethe_FloatTensor:$x_new,
                      Lethe_FloatTensor:$momentum_new);
}

def Lethe_AdagradUpdateOp : Lethe_InferredOp<"adagrad_update"> {
  let summary = "ADAGRAD on one tensor";
  let description = [{
    ONNX `Adagrad` (ai.onnx.preview.training) on one tensor X with its
    gradient G and accumulated squared gradient H, at update count T:

    ```
    r = R / (1 + T * decay_factor)
    G_regularized = norm_coefficient * X + G
    H_new = H + G_regularized * G_regularized
    X_new = X - r * G_regularized / (sqrt(H_new) + epsilon)
    ```

    With T counting from 0 this is PyTorch's `Adagrad(lr_decay =
    decay_factor, weight_decay = norm_coefficient, eps = epsilon)`.
    `decay_factor`, `epsilon` and `norm_coefficient` must be finite and >= 0.

    ```mlir
    %x1, %h1 = lethe.adagrad_update %lr, %t, %x, %g, %h {epsilon = 1.0e-10 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
    ```
  }];
  let arguments = (ins Lethe_LearningRate:$learning_rate,
                       Lethe_StepCount:$step, Lethe_FloatTensor:$x,
                       Lethe_FloatTensor:$gradient,
                       Lethe_FloatTensor:$squared_sum,
                       DefaultValuedAttr<F32Attr, "0.0">:$decay_factor,
                       DefaultValuedAttr<F32Attr, "1e-6">:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.0">:$norm_coefficient);
  let results = (outs Lethe_FloatTensor:$x_new,
                      Lethe_FloatTensor:$squared_sum_new);
}

def Lethe_AdamUpdateOp : Lethe_InferredOp<"adam_update"> {
  let summary = "Adam (and AdamW) on one tensor";
  let description = [{
    ONNX `Adam` (ai.onnx.preview.training) on one tensor X with its gradient
    G, first moment V and second moment H, at update count T, extended with
    AdamW's decoupled `weight_decay`:

    ```
    G_regularized = norm_coefficient * X + G
    V_new = alpha * V + (1 - alpha) * G_regularized
    H_new = beta * H + (1 - beta) * G_regularized * G_regularized
    H_sqrt = sqrt(H_new) + epsilon
    R_adjusted = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R
    X_new = X * (1 - R * weight_decay) - R_adjusted * (V_new / H_sqrt)
    X_final = (1 - norm_coefficient_post) * X_new
    ```

    With `weight_decay = 0` (the default) this is ONNX's op exactly. T is the
    number of the update counting from 1 for the bias correction to be
    Adam's (T = 0 turns the correction off, as ONNX specifies).
    `weight_decay` is AdamW's decoupled decay (Loshchilov and Hutter;
    PyTorch's `AdamW`, which first multiplies X by `1 - lr * weight_decay`
    with the uncorrected learning rate); `norm_coefficient` is Adam's L2
    regularization added to the gradient (PyTorch's `Adam(weight_decay)`).
    Unlike PyTorch, epsilon is added to `sqrt(H_new)` before the bias
    correction, as ONNX specifies: this epsilon plays the role of PyTorch's
    `eps` times `sqrt(1 - beta^T)`. As PyTorch requires, `alpha` and `beta`
    must lie in [0, 1) (at 1 the bias correction divides by zero), and
    `epsilon`, `norm_coefficient`, `norm_coefficient_post` and
    `weight_decay` must be finite and >= 0.

    ```mlir
    %x1, %v1, %h1 = lethe.adam_update %lr, %t, %x, %g, %v, %h {weight_decay = 0.01 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>)
    ```
  }];
  let arguments = (ins Lethe_LearningRate:$learning_rate,
                       Lethe_StepCount:$step, Lethe_FloatTensor:$x,
                       Lethe_FloatTensor:$gradient,
                       Lethe_FloatTensor:$first_moment,
                       Lethe_FloatTensor:$second_moment,
                       DefaultValuedAttr<F32Attr, "0.9">:$alpha,
                       DefaultValuedAttr<F32Attr, "0.999">:$beta,
                       DefaultValuedAttr<F32Attr, "1e-6">:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.0">:$norm_coefficient,
                       DefaultValuedAttr<F32Attr, "0.0">:$norm_coefficient_post,
                       DefaultValuedAttr<F32Attr, "0.0">:$weight_decay);
  let results = (outs Lethe_FloatTensor:$x_new,
                      Lethe_FloatTensor:$first_moment_new,
                      Lethe_FloatTensor:$second_moment_new);
}

#endif // LETHE_DIALECT_LETHE_IR_LETHEOPTIMIZEROPS_TD
