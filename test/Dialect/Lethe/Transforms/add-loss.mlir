// RUN: lethe-opt %s -split-input-file --lethe-add-loss="output=logits kind=softmax_cross_entropy" | FileCheck %s --check-prefix=SCE
// RUN: lethe-opt %s -split-input-file --lethe-add-loss="output=logits kind=nll reduction=sum" | FileCheck %s --check-prefix=NLL
// RUN: lethe-opt %s -split-input-file --lethe-add-loss="output=logits kind=mse" | FileCheck %s --check-prefix=MSE

// The label goes after the data inputs, before the parameters; the loss is
// the first result and the model's outputs follow it.

// SCE-LABEL: func.func @main
// SCE-SAME: (%[[X:.*]]: tensor<4x16xf32> {lethe.name = "x"}, %[[L:.*]]: tensor<4xi64> {lethe.label, lethe.name = "labels"}, %[[W:.*]]: tensor<10x16xf32> {lethe.name = "w", lethe.parameter, lethe.trainable})
// SCE-SAME: -> (tensor<f32> {lethe.loss, lethe.name = "loss"}, tensor<4x10xf32> {lethe.name = "logits"})
// SCE: %[[Y:.*]] = lethe.gemm %[[X]], %[[W]]
// SCE: %[[LOSS:.*]], %{{.*}} = lethe.softmax_cross_entropy %[[Y]], %[[L]] : (tensor<4x10xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x10xf32>)
// SCE: return %[[LOSS]], %[[Y]] : tensor<f32>, tensor<4x10xf32>

// NLL-LABEL: func.func @main
// NLL: %[[LOSS:.*]] = lethe.nll %{{.*}}, %{{.*}} {reduction = "sum"} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
// NLL: return %[[LOSS]]

// MSE-LABEL: func.func @main
// MSE-SAME: tensor<4x10xf32> {lethe.label, lethe.name = "labels"}
// MSE: %[[LOSS:.*]] = lethe.mse %{{.*}}, %{{.*}} : (tensor<4x10xf32>, tensor<4x10xf32>) -> tensor<f32>
// MSE: return %[[LOSS]]
func.func @main(%x: tensor<4x16xf32> {lethe.name = "x"}, %w: tensor<10x16xf32> {lethe.name = "w", lethe.parameter, lethe.trainable}) -> (tensor<4x10xf32> {lethe.name = "logits"}) {
  %0 = lethe.gemm %x, %w {trans_b} : (tensor<4x16xf32>, tensor<10x16xf32>) -> tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

// Scores with spatial dims (N, C, H, W) take labels (N, H, W); an input
// already named "labels" makes the new one "labels_1"; with no parameters
// the label is the last argument.

// SCE-LABEL: func.func @segment
// SCE-SAME: (%{{.*}}: tensor<2x3x4x4xf32> {lethe.name = "labels"}, %[[L:.*]]: tensor<2x4x4xi64> {lethe.label, lethe.name = "labels_1"})
// SCE: lethe.softmax_cross_entropy %{{.*}}, %[[L]] : (tensor<2x3x4x4xf32>, tensor<2x4x4xi64>)
func.func @segment(%x: tensor<2x3x4x4xf32> {lethe.name = "labels"}) -> (tensor<2x3x4x4xf32> {lethe.name = "logits"}) {
  %0 = lethe.relu %x : tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// Results that name an argument by its number (a training graph's update of
// its parameter) still name it after the label goes in before it.

// SCE-LABEL: func.func @updated
// SCE-SAME: %{{.*}}: tensor<4xi64> {lethe.label, lethe.name = "labels"}, %{{.*}}: tensor<10x16xf32> {lethe.name = "w", lethe.parameter, lethe.trainable}
// SCE-SAME: tensor<10x16xf32> {lethe.name = "w", lethe.updates = 2 : i64}
func.func @updated(%x: tensor<4x16xf32> {lethe.name = "x"}, %w: tensor<10x16xf32> {lethe.name = "w", lethe.parameter, lethe.trainable}) -> (tensor<4x10xf32> {lethe.name = "logits"}, tensor<10x16xf32> {lethe.name = "w", lethe.updates = 1 : i64}) {
  %0 = lethe.gemm %x, %w {trans_b} : (tensor<4x16xf32>, tensor<10x16xf32>) -> tensor<4x10xf32>
  %1 = lethe.neg %w : tensor<10x16xf32>
  return %0, %1 : tensor<4x10xf32>, tensor<10x16xf32>
}
