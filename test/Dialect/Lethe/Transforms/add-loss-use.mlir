// RUN: lethe-opt %s --lethe-add-loss="use=total" | FileCheck %s

// use=NAME: the model already computes its loss; that output moves to the
// front and is marked.
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<f32> {lethe.loss, lethe.name = "loss"}, tensor<4x10xf32> {lethe.name = "logits"})
// CHECK: %[[LOSS:.*]] = lethe.mse
// CHECK: return %[[LOSS]], %{{.*}} : tensor<f32>, tensor<4x10xf32>
func.func @main(%y: tensor<4x10xf32> {lethe.name = "y"}, %t: tensor<4x10xf32> {lethe.name = "t"}) -> (tensor<4x10xf32> {lethe.name = "logits"}, tensor<f32> {lethe.name = "total"}) {
  %0 = lethe.relu %y : tensor<4x10xf32>
  %1 = lethe.mse %0, %t : (tensor<4x10xf32>, tensor<4x10xf32>) -> tensor<f32>
  return %0, %1 : tensor<4x10xf32>, tensor<f32>
}
