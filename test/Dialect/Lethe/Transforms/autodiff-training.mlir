// RUN: lethe-opt %s --lethe-autodiff | FileCheck %s
// RUN: lethe-opt %s --lethe-autodiff="training=false" | FileCheck %s --check-prefix=WRITTEN

// In training mode (the default), batch_norm normalizes with the batch's
// statistics: it becomes batch_norm_train, and its new running statistics
// follow the gradients as results that update the arguments they replace.
// The dropout drops, keyed by a new `step` argument; its gradient keeps the
// elements the forward kept.

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[MEAN:[a-z0-9]+]]: tensor<3xf32> {lethe.name = "bn.mean", lethe.parameter}, %[[VAR:[a-z0-9]+]]: tensor<3xf32> {lethe.name = "bn.var", lethe.parameter}, %[[STEP:[a-z0-9]+]]: tensor<i64> {lethe.name = "step", lethe.step})
// CHECK-SAME: -> (tensor<f32> {lethe.loss}, tensor<3xf32> {lethe.gradient_of = 1 : i64, lethe.name = "bn.scale.grad"}, tensor<3xf32> {lethe.gradient_of = 2 : i64, lethe.name = "bn.bias.grad"}, tensor<3xf32> {lethe.name = "bn.mean", lethe.updates = 3 : i64}, tensor<3xf32> {lethe.name = "bn.var", lethe.updates = 4 : i64})
// CHECK: %[[Y:.*]], %[[RM:.*]], %[[RV:.*]], %[[SM:.*]], %[[SI:.*]] = lethe.batch_norm_train %{{.*}}, %{{.*}}, %{{.*}}, %[[MEAN]], %[[VAR]] {momentum = 8.000000e-01 : f32}
// CHECK: %[[D:.*]], %[[MASK:.*]] = lethe.dropout %[[Y]], %[[STEP]] {seed = 3 : i64, training}
// CHECK: lethe.where %[[MASK]]
// CHECK: %[[DX:.*]], %[[DS:.*]], %[[DB:.*]] = lethe.batch_norm_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[SM]], %[[SI]]
// CHECK: return %{{.*}}, %[[DS]], %[[DB]], %[[RM]], %[[RV]]

// WRITTEN-LABEL: func.func @train_step
// WRITTEN-SAME: %{{[a-z0-9]+}}: tensor<3xf32> {lethe.name = "bn.var", lethe.parameter})
// WRITTEN-SAME: -> (tensor<f32> {lethe.loss}, tensor<3xf32> {lethe.gradient_of = 1 : i64, lethe.name = "bn.scale.grad"}, tensor<3xf32> {lethe.gradient_of = 2 : i64, lethe.name = "bn.bias.grad"})
// WRITTEN-NOT: lethe.batch_norm_train
// WRITTEN: lethe.batch_norm %
// WRITTEN-NOT: lethe.batch_norm_train
// WRITTEN: lethe.dropout %{{[^,]*}} {seed
// WRITTEN-NOT: lethe.batch_norm_train
func.func @main(%x: tensor<2x3x4xf32> {lethe.name = "x"}, %scale: tensor<3xf32> {lethe.name = "bn.scale", lethe.parameter, lethe.trainable}, %bias: tensor<3xf32> {lethe.name = "bn.bias", lethe.parameter, lethe.trainable}, %mean: tensor<3xf32> {lethe.name = "bn.mean", lethe.parameter}, %var: tensor<3xf32> {lethe.name = "bn.var", lethe.parameter}) -> (tensor<f32> {lethe.loss}) {
  %y = lethe.batch_norm %x, %scale, %bias, %mean, %var {momentum = 0.8 : f32} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  %d, %mask = lethe.dropout %y {ratio = 0.5 : f32, seed = 3 : i64} : (tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xi1>)
  %sq = lethe.mul %d, %d : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %loss = lethe.reduce_sum %sq {keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
