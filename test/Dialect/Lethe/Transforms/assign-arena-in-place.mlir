// State updates in place: --lethe-assign-arena lays an update's result in
// the bytes of the parameter or state it replaces when nothing reads those
// after the update (the runtime updates in place, the driver copies nothing
// between steps). %w1 takes %w's bytes; %u1 does not, as %u is read after
// its update; %v1 does not, as a neg is no optimizer update.
//
// RUN: lethe-opt %s --lethe-assign-arena | FileCheck %s

// CHECK: %arg1: tensor<8x32xf32> {lethe.name = "w", lethe.offset = [[W:[0-9]+]] : i64}, %arg2: tensor<8x32xf32> {lethe.name = "u", lethe.offset = [[U:[0-9]+]] : i64}, %arg3: tensor<8x32xf32> {lethe.name = "v", lethe.offset = [[V:[0-9]+]] : i64}
// CHECK: lethe.sgd_update %{{.*}}, %arg1, %{{.*}} {lethe.offsets = array<i64: [[W]]>}
// CHECK: lethe.sgd_update %{{.*}}, %arg2, %{{.*}} {lethe.offsets = array<i64:
// CHECK-NOT: {{ }}[[U]]>
// CHECK-SAME: } :
// CHECK: lethe.neg %arg3 {lethe.offsets = array<i64:
// CHECK-NOT: {{ }}[[V]]>
// CHECK-SAME: } :

func.func @step(%x: tensor<8x32xf32> {lethe.name = "x"}, %w: tensor<8x32xf32> {lethe.name = "w"}, %u: tensor<8x32xf32> {lethe.name = "u"}, %v: tensor<8x32xf32> {lethe.name = "v"}) -> (tensor<8x32xf32> {lethe.name = "w", lethe.updates = 1 : i64}, tensor<8x32xf32> {lethe.name = "u", lethe.updates = 2 : i64}, tensor<8x32xf32> {lethe.name = "v", lethe.updates = 3 : i64}, tensor<8x32xf32> {lethe.name = "after"}) {
  %lr = lethe.constant dense<0.1> : tensor<f32>
  %g = lethe.mul %x, %w : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %w1 = lethe.sgd_update %lr, %w, %g : (tensor<f32>, tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %u1 = lethe.sgd_update %lr, %u, %g : (tensor<f32>, tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %after = lethe.add %u, %g : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %v1 = lethe.neg %v : tensor<8x32xf32>
  return %w1, %u1, %v1, %after : tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>
}

// Only the input a result replaces: a result said to update %g, which the
// update reads as its gradient, does not take %g's bytes.
// CHECK-LABEL: func.func @gradient_slot
// CHECK-SAME: %arg1: tensor<8x32xf32> {lethe.name = "g", lethe.offset = [[G:[0-9]+]] : i64}
// CHECK: lethe.sgd_update %{{.*}}, %arg0, %arg1 {lethe.offsets = array<i64:
// CHECK-NOT: {{ }}[[G]]>
// CHECK-SAME: } :
func.func @gradient_slot(%p: tensor<8x32xf32> {lethe.name = "p"}, %g: tensor<8x32xf32> {lethe.name = "g"}) -> (tensor<8x32xf32> {lethe.name = "g", lethe.updates = 1 : i64}, tensor<8x32xf32> {lethe.name = "p"}) {
  %lr = lethe.constant dense<0.1> : tensor<f32>
  %next = lethe.sgd_update %lr, %p, %g : (tensor<f32>, tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %keep = lethe.neg %p : tensor<8x32xf32>
  return %next, %keep : tensor<8x32xf32>, tensor<8x32xf32>
}

// Batch normalization's running statistics go in place too: %mean1 takes
// %mean's bytes and %var1 %var's.
// CHECK-LABEL: func.func @running_statistics
// CHECK-SAME: %arg3: tensor<4xf32> {lethe.name = "mean", lethe.offset = [[MEAN:[0-9]+]] : i64}, %arg4: tensor<4xf32> {lethe.name = "var", lethe.offset = [[VAR:[0-9]+]] : i64}
// CHECK: lethe.batch_norm_train {{.*}}lethe.offsets = array<i64: {{[0-9]+}}, [[MEAN]], [[VAR]], {{[0-9]+}}, {{[0-9]+}}>
func.func @running_statistics(%x: tensor<2x4x3x3xf32> {lethe.name = "x"}, %scale: tensor<4xf32> {lethe.name = "scale"}, %bias: tensor<4xf32> {lethe.name = "bias"}, %mean: tensor<4xf32> {lethe.name = "mean"}, %var: tensor<4xf32> {lethe.name = "var"}) -> (tensor<2x4x3x3xf32> {lethe.name = "y"}, tensor<4xf32> {lethe.name = "mean", lethe.updates = 3 : i64}, tensor<4xf32> {lethe.name = "var", lethe.updates = 4 : i64}) {
  %y, %mean1, %var1, %saved, %inv = lethe.batch_norm_train %x, %scale, %bias, %mean, %var : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y, %mean1, %var1 : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>
}

// Not in place when the op also reads the old statistics through another
// operand (here as the bias): the runtime lets an output be an input, not
// overlap another.
// CHECK-LABEL: func.func @statistics_read_twice
// CHECK-SAME: %arg2: tensor<4xf32> {lethe.name = "mean", lethe.offset = [[TWICE:[0-9]+]] : i64}
// CHECK-NOT: lethe.offsets = array<i64: {{[0-9]+}}, [[TWICE]],
// CHECK: return
func.func @statistics_read_twice(%x: tensor<2x4x3x3xf32> {lethe.name = "x"}, %scale: tensor<4xf32> {lethe.name = "scale"}, %mean: tensor<4xf32> {lethe.name = "mean"}, %var: tensor<4xf32> {lethe.name = "var"}) -> (tensor<2x4x3x3xf32> {lethe.name = "y"}, tensor<4xf32> {lethe.name = "mean", lethe.updates = 2 : i64}) {
  %y, %mean1, %var1, %saved, %inv = lethe.batch_norm_train %x, %scale, %mean, %mean, %var : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y, %mean1 : tensor<2x4x3x3xf32>, tensor<4xf32>
}
