//===- LetheLossOps.td - Loss ops ----*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Lethe's loss functions (softmax_cross_entropy, nll, mse).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHELOSSOPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHELOSSOPS_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"

def Lethe_SoftmaxCrossEntropyOp : Lethe_InferredOp<"softmax_cross_entropy"> {
  let summary = "softmax cross-entropy loss";
  let description = [{
    ONNX `SoftmaxCrossEntropyLoss`: with `log_prob = log_softmax(scores)`
    along the class axis 1 of `scores` (N, C, D1..Dk) and `labels` (N,
    D1..Dk), the loss of element i is `-weights[labels[i]] *
    log_prob[i, labels[i]]` (weight 1 without `weights`), and 0 where
    `labels[i] == ignore_index`. `reduction` is "none" (the loss per element,
    shape (N, D1..Dk)), "sum", or "mean" (the default: the sum divided by the
    sum of the weights of the elements not ignored). Both results are
    computed: the backward pass needs `log_prob`.

    ```mlir
    %loss, %log_prob = lethe.softmax_cross_entropy %scores, %labels : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<8x10xf32>)
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$scores, Lethe_IndexTensor:$labels,
                       Optional<Lethe_FloatTensor>:$weights,
                       DefaultValuedStrAttr<StrAttr, "mean">:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Lethe_FloatTensor:$loss, Lethe_FloatTensor:$log_prob);
}

def Lethe_SoftmaxCrossEntropyGradOp
    : Lethe_InferredOp<"softmax_cross_entropy_grad"> {
  let summary = "gradient of softmax_cross_entropy with respect to the scores";
  let description = [{
    `scores_grad[n, c, d...] = g * w * (exp(log_prob[n, c, d...]) - [c ==
    label])`, where `label = labels[n, d...]`, `w` is its weight (1 without
    `weights`), and `g` is `loss_grad` for "sum", `loss_grad` divided by the
    sum of the counted weights for "mean", and `loss_grad[n, d...]` for
    "none"; an ignored element has a zero gradient. `log_prob` is the
    forward's second result; the operands and attributes are otherwise the
    forward's.

    ```mlir
    %ds = lethe.softmax_cross_entropy_grad %dloss, %log_prob, %labels : (tensor<f32>, tensor<8x10xf32>, tensor<8xi64>) -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$loss_grad,
                       Lethe_FloatTensor:$log_prob, Lethe_IndexTensor:$labels,
                       Optional<Lethe_FloatTensor>:$weights,
                       DefaultValuedStrAttr<StrAttr, "mean">:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Lethe_FloatTensor:$scores_grad);
}

def Lethe_NllGradOp : Lethe_Op<"nll_grad"> {
  let summary = "gradient of nll with respect to its input";
  let description = [{
    `input_grad[n, c, d...] = -g * w` where `c == target[n, d...]`, else 0
    (`g`, `w` and ignored elements as for `softmax_cross_entropy_grad`). The
    result has the type of the forward's input, which the operands do not
    determine (they lack the number of classes).

    ```mlir
    %dx = lethe.nll_grad %dloss, %target : (tensor<f32>, tensor<8xi64>) -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$loss_grad,
                       Lethe_IndexTensor:$target,
                       Optional<Lethe_FloatTensor>:$weight,
                       DefaultValuedStrAttr<StrAttr, "mean">:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Lethe_FloatTensor:$input_grad);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Lethe_NllOp
    : Lethe_InferredOp<"nll", [DeclareOpInterfaceMethods<Lethe_CostOpInterface,
                                                        ["getBytesRead"]>]> {
  let summary = "negative log-likelihood loss";
  let description = [{
    ONNX `NegativeLogLikelihoodLoss` on log-probabilities `input` (N, C,
    D1..Dk) and `target` (N, D1..Dk): the loss of element i is
    `-weight[target[i]] * input[i, target[i]]`, 0 where `target[i] ==
    ignore_index`; `reduction` as for `softmax_cross_entropy`.

    ```mlir
    %loss = lethe.nll %log_prob, %target {reduction = "sum"} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$input, Lethe_IndexTensor:$target,
                       Optional<Lethe_FloatTensor>:$weight,
                       DefaultValuedStrAttr<StrAttr, "mean">:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Lethe_FloatTensor:$loss);
}

def Lethe_MseOp : Lethe_InferredOp<"mse"> {
  let summary = "mean squared error loss";
  let description = [{
    `(predictions - targets)^2` elementwise, reduced by `reduction`: "mean"
    (the default), "sum" or "none" (PyTorch's `MSELoss`; ONNX has no such
    op). Both operands have the same type.

    ```mlir
    %loss = lethe.mse %y, %t : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Lethe_FloatTensor:$predictions,
                       Lethe_FloatTensor:$targets,
                       DefaultValuedStrAttr<StrAttr, "mean">:$reduction);
  let results = (outs Lethe_FloatTensor:$loss);
}

#endif // LETHE_DIALECT_LETHE_IR_LETHELOSSOPS_TD
