// RUN: lethe-opt %s -split-input-file --lethe-autodiff | FileCheck %s
// RUN: lethe-opt %s -split-input-file --lethe-autodiff="name=step inputs=x" | FileCheck %s --check-prefix=INPUTS

// The model becomes @train_step: the loss, then one gradient per trainable
// argument in argument order; the other outputs (logits) are dropped. The
// backward ops follow the forward ones in reverse: relu's gradient reads its
// output, the gemm's bias gradient sums over the batch.

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32> {lethe.name = "x"}, %[[T:.*]]: tensor<4xi64> {lethe.label, lethe.name = "labels"}, %[[W:.*]]: tensor<5x3xf32> {lethe.name = "w", lethe.parameter, lethe.trainable}, %[[B:.*]]: tensor<5xf32> {lethe.name = "b", lethe.parameter, lethe.trainable}, %[[FROZEN:.*]]: tensor<5x2xf32> {lethe.name = "head", lethe.parameter})
// CHECK-SAME: -> (tensor<f32> {lethe.loss, lethe.name = "loss"}, tensor<5x3xf32> {lethe.gradient_of = 2 : i64, lethe.name = "w.grad"}, tensor<5xf32> {lethe.gradient_of = 3 : i64, lethe.name = "b.grad"})
// CHECK: %[[H:.*]] = lethe.gemm %[[X]], %[[W]], %[[B]] {trans_b}
// CHECK: %[[R:.*]] = lethe.relu %[[H]]
// CHECK: %[[Y:.*]] = lethe.matmul %[[R]], %[[FROZEN]]
// CHECK: %[[LOSS:.*]], %[[LP:.*]] = lethe.softmax_cross_entropy %[[Y]], %[[T]]
// CHECK: %[[ONE:.*]] = lethe.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DY:.*]] = lethe.softmax_cross_entropy_grad %[[ONE]], %[[LP]], %[[T]] : (tensor<f32>, tensor<4x2xf32>, tensor<4xi64>) -> tensor<4x2xf32>
// CHECK-NOT: lethe.transpose
// CHECK: %[[DR:.*]] = lethe.gemm %[[DY]], %[[FROZEN]] {trans_b} : (tensor<4x2xf32>, tensor<5x2xf32>) -> tensor<4x5xf32>
// CHECK-NOT: lethe.transpose
// CHECK: %[[DH:.*]] = lethe.relu_grad %[[DR]], %[[R]] : tensor<4x5xf32>
// CHECK: %[[DW:.*]] = lethe.gemm %[[DH]], %[[X]] {trans_a} : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
// CHECK: %[[SUM:.*]] = lethe.reduce_sum %[[DH]] {axes = array<i64: 0>} : (tensor<4x5xf32>) -> tensor<1x5xf32>
// CHECK: %[[DB:.*]] = lethe.reshape %[[SUM]] {allowzero, shape = array<i64: 5>}
// CHECK: return %[[LOSS]], %[[DW]], %[[DB]] : tensor<f32>, tensor<5x3xf32>, tensor<5xf32>

// With inputs=x, the data input gets a gradient too, in argument order.
// INPUTS-LABEL: func.func @step
// INPUTS-SAME: -> (tensor<f32> {lethe.loss, lethe.name = "loss"}, tensor<4x3xf32> {lethe.gradient_of = 0 : i64, lethe.name = "x.grad"}, tensor<5x3xf32> {lethe.gradient_of = 2 : i64, lethe.name = "w.grad"}, tensor<5xf32> {lethe.gradient_of = 3 : i64, lethe.name = "b.grad"})
func.func @main(%x: tensor<4x3xf32> {lethe.name = "x"}, %t: tensor<4xi64> {lethe.label, lethe.name = "labels"}, %w: tensor<5x3xf32> {lethe.name = "w", lethe.parameter, lethe.trainable}, %b: tensor<5xf32> {lethe.name = "b", lethe.parameter, lethe.trainable}, %head: tensor<5x2xf32> {lethe.name = "head", lethe.parameter}) -> (tensor<f32> {lethe.loss, lethe.name = "loss"}, tensor<4x2xf32> {lethe.name = "logits"}) {
  %h = lethe.gemm %x, %w, %b {trans_b} : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %r = lethe.relu %h : tensor<4x5xf32>
  %y = lethe.matmul %r, %head : (tensor<4x5xf32>, tensor<5x2xf32>) -> tensor<4x2xf32>
  %loss, %lp = lethe.softmax_cross_entropy %y, %t : (tensor<4x2xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x2xf32>)
  return %loss, %y : tensor<f32>, tensor<4x2xf32>
}

// -----

// A weight applied to a batch of rows (a 3-D left operand times a matrix):
// the batch dims fold into the rows, each gradient is one gemm with the
// transposes as flags, and the weight's is not summed over the batch. Two
// batched operands keep the batched products and their transposes.

// CHECK-LABEL: func.func @train_step
// INPUTS-LABEL: func.func @step
// INPUTS-SAME: lethe.name = "v.grad"})
// CHECK: %[[XW:.*]] = lethe.matmul %[[X:.*]], %[[W:[^ ]*]] : (tensor<2x4x3xf32>, tensor<3x5xf32>)
// CHECK: %[[Y:.*]] = lethe.matmul %[[XW]], %[[V:[^ ]*]] : (tensor<2x4x5xf32>, tensor<2x5x6xf32>)
// CHECK: %[[VT:.*]] = lethe.transpose %[[V]] {perm = array<i64: 0, 2, 1>}
// CHECK: %[[DXW:.*]] = lethe.matmul %[[DY:.*]], %[[VT]] : (tensor<2x4x6xf32>, tensor<2x6x5xf32>) -> tensor<2x4x5xf32>
// CHECK: %[[XWT:.*]] = lethe.transpose %[[XW]] {perm = array<i64: 0, 2, 1>}
// CHECK: %[[DV:.*]] = lethe.matmul %[[XWT]], %[[DY]] : (tensor<2x5x4xf32>, tensor<2x4x6xf32>) -> tensor<2x5x6xf32>
// CHECK: %[[ROWS:.*]] = lethe.reshape %[[DXW]] {allowzero, shape = array<i64: 8, 5>} : (tensor<2x4x5xf32>) -> tensor<8x5xf32>
// CHECK: %[[DXROWS:.*]] = lethe.gemm %[[ROWS]], %[[W]] {trans_b} : (tensor<8x5xf32>, tensor<3x5xf32>) -> tensor<8x3xf32>
// CHECK: %[[DX:.*]] = lethe.reshape %[[DXROWS]] {allowzero, shape = array<i64: 2, 4, 3>} : (tensor<8x3xf32>) -> tensor<2x4x3xf32>
// CHECK: %[[XROWS:.*]] = lethe.reshape %[[X]] {allowzero, shape = array<i64: 8, 3>} : (tensor<2x4x3xf32>) -> tensor<8x3xf32>
// CHECK: %[[DW:.*]] = lethe.gemm %[[XROWS]], %[[ROWS]] {trans_a} : (tensor<8x3xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
// CHECK-NOT: lethe.reduce_sum
// CHECK: return %{{.*}}, %[[DX]], %[[DW]], %[[DV]]
func.func @main(%x: tensor<2x4x3xf32> {lethe.name = "x", lethe.trainable}, %w: tensor<3x5xf32> {lethe.name = "w", lethe.trainable}, %v: tensor<2x5x6xf32> {lethe.name = "v", lethe.trainable}) -> (tensor<f32> {lethe.loss, lethe.name = "loss"}) {
  %xw = lethe.matmul %x, %w : (tensor<2x4x3xf32>, tensor<3x5xf32>) -> tensor<2x4x5xf32>
  %y = lethe.matmul %xw, %v : (tensor<2x4x5xf32>, tensor<2x5x6xf32>) -> tensor<2x4x6xf32>
  %loss = lethe.reduce_sum %y {keepdims = false} : (tensor<2x4x6xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// The same with an empty inner dim: the rows are the batch dims' product
// (8), not the elements over the inner dim.

// CHECK-LABEL: func.func @train_step
// INPUTS-LABEL: func.func @step
// CHECK: %[[ROWS:.*]] = lethe.reshape %{{.*}} {allowzero, shape = array<i64: 8, 5>} : (tensor<2x4x5xf32>) -> tensor<8x5xf32>
// CHECK: lethe.gemm %[[ROWS]], %{{.*}} {trans_b} : (tensor<8x5xf32>, tensor<0x5xf32>) -> tensor<8x0xf32>
// CHECK: lethe.gemm %{{.*}}, %[[ROWS]] {trans_a} : (tensor<8x0xf32>, tensor<8x5xf32>) -> tensor<0x5xf32>
func.func @main(%x: tensor<2x4x0xf32> {lethe.name = "x", lethe.trainable}, %w: tensor<0x5xf32> {lethe.name = "w", lethe.trainable}) -> (tensor<f32> {lethe.loss, lethe.name = "loss"}) {
  %y = lethe.matmul %x, %w : (tensor<2x4x0xf32>, tensor<0x5xf32>) -> tensor<2x4x5xf32>
  %loss = lethe.reduce_sum %y {keepdims = false} : (tensor<2x4x5xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A value used twice gets the sum of both contributions; a trainable
// argument the loss does not depend on gets zeros; an op the loss does not
// depend on is erased with the output that needed it. %x is trainable and,
// in the INPUTS run, named in inputs too: it is differentiated once.

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> (tensor<f32> {lethe.loss, lethe.name = "loss"}, tensor<3xf32> {lethe.gradient_of = 0 : i64, lethe.name = "p.grad"}, tensor<2xf32> {lethe.gradient_of = 1 : i64, lethe.name = "unused.grad"}, tensor<2xf32> {lethe.gradient_of = 2 : i64, lethe.name = "x.grad"})
// INPUTS-LABEL: func.func @step
// INPUTS-SAME: lethe.name = "unused.grad"}, tensor<2xf32> {lethe.gradient_of = 2 : i64, lethe.name = "x.grad"})
// CHECK-NOT: lethe.exp
// CHECK: %[[SQ:.*]] = lethe.mul %[[P:.*]], %[[P]]
// CHECK: %[[LOSS:.*]] = lethe.reduce_sum %[[SQ]]
// CHECK: %[[ONE:.*]] = lethe.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[G:.*]] = lethe.expand
// CHECK: %[[A:.*]] = lethe.mul %[[G]], %[[P]]
// CHECK: %[[B:.*]] = lethe.mul %[[G]], %[[P]]
// CHECK: %[[DP:.*]] = lethe.add %[[A]], %[[B]]
// CHECK: %[[ZERO:.*]] = lethe.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK: %[[ZERO2:.*]] = lethe.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK: return %[[LOSS]], %[[DP]], %[[ZERO]], %[[ZERO2]]
func.func @main(%p: tensor<3xf32> {lethe.name = "p", lethe.trainable}, %unused: tensor<2xf32> {lethe.name = "unused", lethe.trainable}, %x: tensor<2xf32> {lethe.name = "x", lethe.trainable}) -> (tensor<f32> {lethe.loss, lethe.name = "loss"}, tensor<2xf32> {lethe.name = "side"}) {
  %side = lethe.exp %unused : tensor<2xf32>
  %sq = lethe.mul %p, %p : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %loss = lethe.reduce_sum %sq {keepdims = false} : (tensor<3xf32>) -> tensor<f32>
  return %loss, %side : tensor<f32>, tensor<2xf32>
}
