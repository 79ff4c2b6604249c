// RUN: lethe-opt %s -split-input-file --lethe-add-optimizer="kind=sgd lr=0.1" | FileCheck %s --check-prefix=SGD
// RUN: lethe-opt %s -split-input-file --lethe-add-optimizer="kind=momentum lr=0.1 momentum=0.8 dampening=0.5 weight-decay=0.01" | FileCheck %s --check-prefix=MOMENTUM
// RUN: lethe-opt %s -split-input-file --lethe-add-optimizer="kind=nesterov lr=0.1" | FileCheck %s --check-prefix=NESTEROV
// RUN: lethe-opt %s -split-input-file --lethe-add-optimizer="kind=adagrad lr=0.1 decay-factor=0.01 epsilon=1e-10" | FileCheck %s --check-prefix=ADAGRAD
// RUN: lethe-opt %s -split-input-file --lethe-add-optimizer="kind=adam lr=0.001 beta1=0.8 weight-decay=0.1" | FileCheck %s --check-prefix=ADAM
// RUN: lethe-opt %s -split-input-file --lethe-add-optimizer="kind=adamw lr=0.001 weight-decay=0.1" | FileCheck %s --check-prefix=ADAMW
// RUN: lethe-opt %s -split-input-file --lethe-add-optimizer="kind=sgd lr=0.1 keep-gradients" | FileCheck %s --check-prefix=KEEP

// A training step as --lethe-autodiff leaves it: the loss, then the
// gradients of the trainable w and b (arguments 2 and 3), and of the data
// input x (inputs=x), which is not updated. The running mean is a result
// that updates argument 4 already (as batch_norm_train's would) and stays.

// SGD-LABEL: func.func @train_step
// SGD-SAME: (%[[X:[^:]*]]: tensor<4x3xf32> {lethe.name = "x"}, %[[T:[^:]*]]: tensor<4xi64> {lethe.label, lethe.name = "labels"}, %[[W:[^:]*]]: tensor<5x3xf32> {lethe.name = "w", lethe.parameter, lethe.trainable}, %[[B:[^:]*]]: tensor<5xf32> {lethe.name = "b", lethe.parameter, lethe.trainable}, %[[RM:[^:]*]]: tensor<5xf32> {lethe.name = "running_mean", lethe.parameter})
// SGD-SAME: -> (tensor<f32> {lethe.loss, lethe.name = "loss"}, tensor<5x3xf32> {lethe.name = "w", lethe.updates = 2 : i64}, tensor<5xf32> {lethe.name = "b", lethe.updates = 3 : i64}, tensor<5xf32> {lethe.name = "running_mean", lethe.updates = 4 : i64})
// SGD-NOT: lethe.step
// SGD: %[[LR:.*]] = lethe.constant dense<1.000000e-01> : tensor<f32>
// SGD: %[[DW:.*]] = lethe.gemm {{.*}} {trans_a}
// SGD-NEXT: %[[W1:.*]] = lethe.sgd_update %[[LR]], %[[W]], %[[DW]] : (tensor<f32>, tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
// SGD: %[[DB:.*]] = lethe.reshape
// SGD-NEXT: %[[B1:.*]] = lethe.sgd_update %[[LR]], %[[B]], %[[DB]]
// SGD: return %[[LOSS:.*]], %[[W1]], %[[B1]], %[[NEWRM:.*]] : tensor<f32>, tensor<5x3xf32>, tensor<5xf32>, tensor<5xf32>

// MOMENTUM-LABEL: func.func @train_step
// MOMENTUM-SAME: %[[W:[^:]*]]: tensor<5x3xf32> {{.*}}, %[[B:[^:]*]]: tensor<5xf32> {{.*}}, %[[RM:[^:]*]]: tensor<5xf32> {{.*}}, %[[WM:[^:]*]]: tensor<5x3xf32> {lethe.initializer = dense<0.000000e+00> : tensor<5x3xf32>, lethe.name = "w.momentum"}, %[[BM:[^:]*]]: tensor<5xf32> {lethe.initializer = dense<0.000000e+00> : tensor<5xf32>, lethe.name = "b.momentum"}, %[[STEP:[^:]*]]: tensor<i64> {lethe.name = "step", lethe.step})
// MOMENTUM-SAME: -> (tensor<f32> {lethe.loss, lethe.name = "loss"}, tensor<5x3xf32> {lethe.name = "w", lethe.updates = 2 : i64}, tensor<5xf32> {lethe.name = "b", lethe.updates = 3 : i64}, tensor<5x3xf32> {lethe.name = "w.momentum", lethe.updates = 5 : i64}, tensor<5xf32> {lethe.name = "b.momentum", lethe.updates = 6 : i64}, tensor<5xf32> {lethe.name = "running_mean", lethe.updates = 4 : i64})
// MOMENTUM: %[[W1:.*]], %[[WM1:.*]] = lethe.momentum_update %[[LR:.*]], %[[STEP]], %[[W]], %[[DW:.*]], %[[WM]] {alpha = 8.000000e-01 : f32, beta = 5.000000e-01 : f32, norm_coefficient = 0.00999999977 : f32}
// MOMENTUM: %[[B1:.*]], %[[BM1:.*]] = lethe.momentum_update %[[LR]], %[[STEP]], %[[B]], %[[DB:.*]], %[[BM]]
// MOMENTUM: return %{{.*}}, %[[W1]], %[[B1]], %[[WM1]], %[[BM1]], %{{.*}} :

// NESTEROV: lethe.momentum_update {{.*}} {alpha = 0.899999976 : f32, beta = 1.000000e+00 : f32, mode = "nesterov"} :

// ADAGRAD: lethe.name = "w.adagrad_sum"
// ADAGRAD: lethe.adagrad_update %{{.*}}, %[[STEP:.*]], %{{.*}}, %{{.*}}, %{{.*}} {decay_factor = 0.00999999977 : f32, epsilon = 1.000000e-10 : f32} :

// Adam counts updates from 1: T = step + 1. For adam, weight-decay is L2
// regularization (norm_coefficient); for adamw it is decoupled.
// ADAM-LABEL: func.func @train_step
// ADAM-SAME: %[[WM:[^:]*]]: tensor<5x3xf32> {lethe.initializer = dense<0.000000e+00> : tensor<5x3xf32>, lethe.name = "w.adam_m"}, %[[WV:[^:]*]]: tensor<5x3xf32> {lethe.initializer = dense<0.000000e+00> : tensor<5x3xf32>, lethe.name = "w.adam_v"}, %{{[^:]*}}: tensor<5xf32> {lethe.initializer = dense<0.000000e+00> : tensor<5xf32>, lethe.name = "b.adam_m"}, %{{[^:]*}}: tensor<5xf32> {lethe.initializer = dense<0.000000e+00> : tensor<5xf32>, lethe.name = "b.adam_v"}, %[[STEP:[^:]*]]: tensor<i64> {lethe.name = "step", lethe.step}
// ADAM: %[[ONE:.*]] = lethe.constant dense<1> : tensor<i64>
// ADAM: %[[COUNT:.*]] = lethe.add %[[STEP]], %[[ONE]] : (tensor<i64>, tensor<i64>) -> tensor<i64>
// ADAM: lethe.adam_update %{{.*}}, %[[COUNT]], %{{.*}}, %{{.*}}, %[[WM]], %[[WV]] {alpha = 8.000000e-01 : f32, epsilon = 9.99999993E-9 : f32, norm_coefficient = 1.000000e-01 : f32} :
// ADAMW: lethe.adam_update {{.*}} {epsilon = 9.99999993E-9 : f32, weight_decay = 1.000000e-01 : f32} :

// With keep-gradients, every gradient follows, x's included, in their order.
// KEEP-LABEL: func.func @train_step
// KEEP-SAME: -> (tensor<f32> {lethe.loss, lethe.name = "loss"}, tensor<5x3xf32> {lethe.name = "w", lethe.updates = 2 : i64}, tensor<5xf32> {lethe.name = "b", lethe.updates = 3 : i64}, tensor<5xf32> {lethe.name = "running_mean", lethe.updates = 4 : i64}, tensor<4x3xf32> {lethe.gradient_of = 0 : i64, lethe.name = "x.grad"}, tensor<5x3xf32> {lethe.gradient_of = 2 : i64, lethe.name = "w.grad"}, tensor<5xf32> {lethe.gradient_of = 3 : i64, lethe.name = "b.grad"})
func.func @train_step(%x: tensor<4x3xf32> {lethe.name = "x"}, %t: tensor<4xi64> {lethe.label, lethe.name = "labels"}, %w: tensor<5x3xf32> {lethe.name = "w", lethe.parameter, lethe.trainable}, %b: tensor<5xf32> {lethe.name = "b", lethe.parameter, lethe.trainable}, %rm: tensor<5xf32> {lethe.name = "running_mean", lethe.parameter}) -> (tensor<f32> {lethe.loss, lethe.name = "loss"}, tensor<4x3xf32> {lethe.gradient_of = 0 : i64, lethe.name = "x.grad"}, tensor<5x3xf32> {lethe.gradient_of = 2 : i64, lethe.name = "w.grad"}, tensor<5xf32> {lethe.gradient_of = 3 : i64, lethe.name = "b.grad"}, tensor<5xf32> {lethe.name = "running_mean", lethe.updates = 4 : i64}) {
  %h = lethe.gemm %x, %w, %b {trans_b} : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %newrm = lethe.add %rm, %b : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %loss, %lp = lethe.softmax_cross_entropy %h, %t : (tensor<4x5xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x5xf32>)
  %one = lethe.constant dense<1.0> : tensor<f32>
  %dh = lethe.softmax_cross_entropy_grad %one, %lp, %t : (tensor<f32>, tensor<4x5xf32>, tensor<4xi64>) -> tensor<4x5xf32>
  %dx = lethe.matmul %dh, %w : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
  %dw = lethe.gemm %dh, %x {trans_a} : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  %s = lethe.reduce_sum %dh {axes = array<i64: 0>} : (tensor<4x5xf32>) -> tensor<1x5xf32>
  %db = lethe.reshape %s {allowzero, shape = array<i64: 5>} : (tensor<1x5xf32>) -> tensor<5xf32>
  return %loss, %dx, %dw, %db, %newrm : tensor<f32>, tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>, tensor<5xf32>
}

// -----

// An f64 parameter gets an f64 learning rate; a state name already taken
// gets a suffix; an existing step argument is used.
// MOMENTUM-LABEL: func.func @train_step
// MOMENTUM-SAME: %[[P:[^:]*]]: tensor<3xf64> {lethe.name = "p", lethe.trainable}, %{{.*}}: tensor<3xf64> {lethe.name = "p.momentum"}, %[[S:[^:]*]]: tensor<i64> {lethe.name = "iteration", lethe.step}, %[[PM:[^:]*]]: tensor<3xf64> {lethe.initializer = dense<0.000000e+00> : tensor<3xf64>, lethe.name = "p.momentum_1"})
// MOMENTUM: %[[LR:.*]] = lethe.constant dense<1.000000e-01> : tensor<f64>
// MOMENTUM: lethe.momentum_update %[[LR]], %[[S]], %[[P]], %{{.*}}, %[[PM]]
func.func @train_step(%p: tensor<3xf64> {lethe.name = "p", lethe.trainable}, %other: tensor<3xf64> {lethe.name = "p.momentum"}, %step: tensor<i64> {lethe.name = "iteration", lethe.step}) -> (tensor<f64> {lethe.loss, lethe.name = "loss"}, tensor<3xf64> {lethe.gradient_of = 0 : i64, lethe.name = "p.grad"}) {
  %sq = lethe.mul %p, %other : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %loss = lethe.reduce_sum %sq {keepdims = false} : (tensor<3xf64>) -> tensor<f64>
  return %loss, %other : tensor<f64>, tensor<3xf64>
}
