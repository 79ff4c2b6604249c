// RUN: lethe-opt %s | FileCheck %s
// RUN: lethe-opt %s | lethe-opt | FileCheck %s
// RUN: lethe-opt %s --mlir-print-op-generic | lethe-opt | FileCheck %s

// Round trip of every op of the dialect, grouped by category as in the .td
// files. Each function checks the printed form of its ops.

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: lethe.neg %{{[^ ,]+}} : tensor<4x8xf32>
  %0 = lethe.neg %x : tensor<4x8xf32>
  // CHECK: lethe.relu %{{[^ ,]+}} : tensor<4x8xf32>
  %1 = lethe.relu %0 : tensor<4x8xf32>
  // CHECK: lethe.leaky_relu %{{.*}} {alpha = 2.000000e-01 : f32} : tensor<4x8xf32>
  %2 = lethe.leaky_relu %1 {alpha = 0.2 : f32} : tensor<4x8xf32>
  // CHECK: lethe.leaky_relu %{{[^ ,]+}} : tensor<4x8xf32>
  %3 = lethe.leaky_relu %2 : tensor<4x8xf32>
  // CHECK: lethe.sigmoid %{{[^ ,]+}} : tensor<4x8xf32>
  %4 = lethe.sigmoid %3 : tensor<4x8xf32>
  // CHECK: lethe.tanh %{{[^ ,]+}} : tensor<4x8xf32>
  %5 = lethe.tanh %4 : tensor<4x8xf32>
  // CHECK: lethe.gelu %{{[^ ,]+}} : tensor<4x8xf32>
  %6 = lethe.gelu %5 : tensor<4x8xf32>
  // CHECK: lethe.gelu %{{.*}} {approximate = "tanh"} : tensor<4x8xf32>
  %7 = lethe.gelu %6 {approximate = "tanh"} : tensor<4x8xf32>
  // CHECK: lethe.erf %{{[^ ,]+}} : tensor<4x8xf32>
  %8 = lethe.erf %7 : tensor<4x8xf32>
  // CHECK: lethe.exp %{{[^ ,]+}} : tensor<4x8xf32>
  %9 = lethe.exp %8 : tensor<4x8xf32>
  // CHECK: lethe.log %{{[^ ,]+}} : tensor<4x8xf32>
  %10 = lethe.log %9 : tensor<4x8xf32>
  // CHECK: lethe.sqrt %{{[^ ,]+}} : tensor<4x8xf32>
  %11 = lethe.sqrt %10 : tensor<4x8xf32>
  // CHECK: lethe.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<4x8xf32>
  %12 = lethe.clip %11 {min = 0.0 : f64, max = 6.0 : f64} : tensor<4x8xf32>
  // CHECK: lethe.clip %{{.*}} {min = -1.000000e+00 : f64} : tensor<4x8xf32>
  %13 = lethe.clip %12 {min = -1.0 : f64} : tensor<4x8xf32>
  return %13 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @clip_integers
func.func @clip_integers(%x: tensor<4xi8>, %y: tensor<4xi64>) -> tensor<4xi64> {
  // CHECK: lethe.clip %{{.*}} {max = 127 : i64, min = -128 : i64} : tensor<4xi8>
  %0 = lethe.clip %x {min = -128 : i64, max = 127 : i64} : tensor<4xi8>
  // CHECK: lethe.clip %{{.*}} {max = 9223372036854775807 : i64} : tensor<4xi64>
  %1 = lethe.clip %y {max = 9223372036854775807 : i64} : tensor<4xi64>
  return %1 : tensor<4xi64>
}

// CHECK-LABEL: func.func @unsigned_integers
func.func @unsigned_integers(%x: tensor<4xui8>, %y: tensor<4xui64>,
                             %z: tensor<1x1x4x4xui16>) -> tensor<4xf32> {
  // CHECK: lethe.clip %{{.*}} {max = 255 : i64, min = 0 : i64} : tensor<4xui8>
  %0 = lethe.clip %x {min = 0 : i64, max = 255 : i64} : tensor<4xui8>
  // CHECK: lethe.add %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = lethe.add %0, %x : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  // CHECK: lethe.pow %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
  %2 = lethe.pow %y, %y : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
  // CHECK: lethe.reduce_sum %{{[^ ,]+}} : (tensor<4xui64>) -> tensor<1xui64>
  %3 = lethe.reduce_sum %2 : (tensor<4xui64>) -> tensor<1xui64>
  // CHECK: lethe.max_pool %{{.*}} : (tensor<1x1x4x4xui16>) -> tensor<1x1x2x2xui16>
  %4 = lethe.max_pool %z {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xui16>) -> tensor<1x1x2x2xui16>
  // CHECK: lethe.cast %{{.*}} {to = f32} : (tensor<4xui8>) -> tensor<4xf32>
  %5 = lethe.cast %1 {to = f32} : (tensor<4xui8>) -> tensor<4xf32>
  return %5 : tensor<4xf32>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<2x4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>,
                  %s: tensor<f32>, %i: tensor<3xi64>) -> tensor<2x4x8xf32> {
  // CHECK: lethe.add %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %0 = lethe.add %a, %b : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  // CHECK: lethe.sub %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<4x1xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %1 = lethe.sub %c, %0 : (tensor<4x1xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // CHECK: lethe.mul %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %2 = lethe.mul %1, %s : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  // CHECK: lethe.div %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<2x4x8xf32>, tensor<4x1xf32>) -> tensor<2x4x8xf32>
  %3 = lethe.div %2, %c : (tensor<2x4x8xf32>, tensor<4x1xf32>) -> tensor<2x4x8xf32>
  // CHECK: lethe.pow %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %4 = lethe.pow %3, %s : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  // CHECK: lethe.add %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %5 = lethe.add %i, %i : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %4 : tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @where_cast
func.func @where_cast(%c: tensor<4x1xi1>, %a: tensor<4x8xf32>, %s: tensor<f32>) -> tensor<4x8xf16> {
  // CHECK: lethe.where %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %0 = lethe.where %c, %a, %s : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  // CHECK: lethe.cast %{{.*}} {to = f16} : (tensor<4x8xf32>) -> tensor<4x8xf16>
  %1 = lethe.cast %0 {to = f16} : (tensor<4x8xf32>) -> tensor<4x8xf16>
  // CHECK: lethe.cast %{{.*}} {to = i1} : (tensor<4x8xf32>) -> tensor<4x8xi1>
  %2 = lethe.cast %0 {to = i1} : (tensor<4x8xf32>) -> tensor<4x8xi1>
  return %1 : tensor<4x8xf16>
}

//===----------------------------------------------------------------------===//
// Contraction
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @matmul
func.func @matmul(%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>, %v: tensor<8xf32>,
                  %bb: tensor<3x1x8x16xf32>) -> tensor<2x4x16xf32> {
  // CHECK: lethe.matmul %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %0 = lethe.matmul %a, %b : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  // CHECK: lethe.matmul %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<8xf32>, tensor<8x16xf32>) -> tensor<16xf32>
  %1 = lethe.matmul %v, %b : (tensor<8xf32>, tensor<8x16xf32>) -> tensor<16xf32>
  // CHECK: lethe.matmul %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4xf32>
  %2 = lethe.matmul %a, %v : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4xf32>
  // CHECK: lethe.matmul %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
  %3 = lethe.matmul %v, %v : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
  // CHECK: lethe.matmul %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<2x4x8xf32>, tensor<3x1x8x16xf32>) -> tensor<3x2x4x16xf32>
  %4 = lethe.matmul %a, %bb : (tensor<2x4x8xf32>, tensor<3x1x8x16xf32>) -> tensor<3x2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @convolutions
func.func @convolutions(%x: tensor<8x4x32x32xf32>, %w: tensor<16x4x3x3xf32>, %b: tensor<16xf32>,
                        %wg: tensor<8x2x3x3xf32>, %x1: tensor<2x3x20xf32>, %w1: tensor<6x3x5xf32>,
                        %x3: tensor<1x2x8x8x8xf32>, %w3: tensor<4x2x3x3x3xf32>,
                        %wt: tensor<4x6x2x2xf32>, %wtg: tensor<4x3x3x3xf32>) -> tensor<8x16x32x32xf32> {
  // CHECK: lethe.conv %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<8x4x32x32xf32>, tensor<16x4x3x3xf32>, tensor<16xf32>) -> tensor<8x16x32x32xf32>
  %0 = lethe.conv %x, %w, %b {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<8x4x32x32xf32>, tensor<16x4x3x3xf32>, tensor<16xf32>) -> tensor<8x16x32x32xf32>
  // Strided, dilated, asymmetric padding, two groups, no bias.
  // CHECK: lethe.conv %{{.*}}, %{{.*}} {dilations = array<i64: 2, 2>, group = 2 : i64, pads = array<i64: 0, 1, 2, 3>, strides = array<i64: 2, 3>} : (tensor<8x4x32x32xf32>, tensor<8x2x3x3xf32>) -> tensor<8x8x15x11xf32>
  %1 = lethe.conv %x, %wg {dilations = array<i64: 2, 2>, group = 2 : i64, pads = array<i64: 0, 1, 2, 3>, strides = array<i64: 2, 3>} : (tensor<8x4x32x32xf32>, tensor<8x2x3x3xf32>) -> tensor<8x8x15x11xf32>
  // CHECK: lethe.conv %{{.*}}, %{{.*}} {dilations = array<i64: 1>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<2x3x20xf32>, tensor<6x3x5xf32>) -> tensor<2x6x16xf32>
  %2 = lethe.conv %x1, %w1 {dilations = array<i64: 1>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<2x3x20xf32>, tensor<6x3x5xf32>) -> tensor<2x6x16xf32>
  // CHECK: lethe.conv %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1, 1>, pads = array<i64: 1, 1, 1, 1, 1, 1>, strides = array<i64: 2, 2, 2>} : (tensor<1x2x8x8x8xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x4x4x4x4xf32>
  %3 = lethe.conv %x3, %w3 {dilations = array<i64: 1, 1, 1>, pads = array<i64: 1, 1, 1, 1, 1, 1>, strides = array<i64: 2, 2, 2>} : (tensor<1x2x8x8x8xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x4x4x4x4xf32>
  // CHECK: lethe.conv_transpose %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<8x4x32x32xf32>, tensor<4x6x2x2xf32>) -> tensor<8x6x64x64xf32>
  %4 = lethe.conv_transpose %x, %wt {dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<8x4x32x32xf32>, tensor<4x6x2x2xf32>) -> tensor<8x6x64x64xf32>
  // 3 * (32 - 1) + 1 + (3 - 1) + 1 - 1 - 1 = 95, two groups of 3 filters.
  // CHECK: lethe.conv_transpose %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 3, 3>} : (tensor<8x4x32x32xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> tensor<8x6x95x95xf32>
  %bt = lethe.constant dense<0.0> : tensor<6xf32>
  %5 = lethe.conv_transpose %x, %wtg, %bt {dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 3, 3>} : (tensor<8x4x32x32xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> tensor<8x6x95x95xf32>
  return %0 : tensor<8x16x32x32xf32>
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @pooling
func.func @pooling(%x: tensor<8x16x32x32xf32>, %odd: tensor<1x1x5x5xf32>, %x1: tensor<2x3x10xf32>) -> tensor<8x16x16x16xf32> {
  // CHECK: lethe.max_pool %{{.*}} {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x16x16xf32>
  %0 = lethe.max_pool %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x16x16xf32>
  // CHECK: lethe.max_pool_with_indices %{{.*}} {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, storage_order = 1 : i64, strides = array<i64: 2, 2>} : (tensor<8x16x32x32xf32>) -> (tensor<8x16x16x16xf32>, tensor<8x16x16x16xi64>)
  %values, %indices = lethe.max_pool_with_indices %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, storage_order = 1 : i64, strides = array<i64: 2, 2>} : (tensor<8x16x32x32xf32>) -> (tensor<8x16x16x16xf32>, tensor<8x16x16x16xi64>)
  // ceil_mode: (5 - 2) / 2 rounds up to 2, so 3 outputs; floor gives 2.
  // CHECK: lethe.max_pool %{{.*}} {ceil_mode, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  %1 = lethe.max_pool %odd {ceil_mode, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  %2 = lethe.max_pool %odd {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>
  // Dilated 1-D window: extent 2 * (3 - 1) + 1 = 5 over 10 gives 6.
  // CHECK: lethe.max_pool %{{.*}} {dilations = array<i64: 2>, kernel_shape = array<i64: 3>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<2x3x10xf32>) -> tensor<2x3x6xf32>
  %3 = lethe.max_pool %x1 {dilations = array<i64: 2>, kernel_shape = array<i64: 3>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<2x3x10xf32>) -> tensor<2x3x6xf32>
  // CHECK: lethe.avg_pool %{{.*}} {count_include_pad, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
  %4 = lethe.avg_pool %x {count_include_pad, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
  // CHECK: lethe.avg_pool %{{.*}} {ceil_mode, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>
  %5 = lethe.avg_pool %odd {ceil_mode, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>
  // CHECK: lethe.global_avg_pool %{{[^ ,]+}} : (tensor<8x16x32x32xf32>) -> tensor<8x16x1x1xf32>
  %6 = lethe.global_avg_pool %x : (tensor<8x16x32x32xf32>) -> tensor<8x16x1x1xf32>
  // CHECK: lethe.global_avg_pool %{{[^ ,]+}} : (tensor<2x3x10xf32>) -> tensor<2x3x1xf32>
  %7 = lethe.global_avg_pool %x1 : (tensor<2x3x10xf32>) -> tensor<2x3x1xf32>
  return %0 : tensor<8x16x16x16xf32>
}

//===----------------------------------------------------------------------===//
// Normalization, softmax and dropout
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @normalization
func.func @normalization(%x: tensor<8x16x4x4xf32>, %c: tensor<16xf32>, %t: tensor<2x5x32xf32>,
                         %s: tensor<32xf32>, %s2: tensor<5x32xf32>) -> tensor<8x16x4x4xf32> {
  // CHECK: lethe.batch_norm %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  %0 = lethe.batch_norm %x, %c, %c, %c, %c : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  // CHECK: lethe.batch_norm %{{.*}} {epsilon = 1.000000e-03 : f32}
  %1 = lethe.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-3 : f32} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  // CHECK: lethe.batch_norm_train %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {momentum = 9.900000e-01 : f32} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  %2:5 = lethe.batch_norm_train %x, %c, %c, %c, %c {momentum = 0.99 : f32} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  // CHECK: lethe.layer_norm %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<2x5x32xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<2x5x32xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>)
  %3:3 = lethe.layer_norm %t, %s, %s : (tensor<2x5x32xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<2x5x32xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>)
  // CHECK: lethe.layer_norm %{{.*}}, %{{.*}} {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x5x32xf32>, tensor<5x32xf32>) -> (tensor<2x5x32xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  %4:3 = lethe.layer_norm %t, %s2 {axis = 1 : i64, epsilon = 1.0e-6 : f32} : (tensor<2x5x32xf32>, tensor<5x32xf32>) -> (tensor<2x5x32xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  // CHECK: lethe.softmax %{{[^ ,]+}} : tensor<2x5x32xf32>
  %5 = lethe.softmax %t : tensor<2x5x32xf32>
  // CHECK: lethe.softmax %{{.*}} {axis = 1 : i64} : tensor<2x5x32xf32>
  %6 = lethe.softmax %t {axis = 1 : i64} : tensor<2x5x32xf32>
  // CHECK: lethe.log_softmax %{{.*}} {axis = -2 : i64} : tensor<2x5x32xf32>
  %7 = lethe.log_softmax %t {axis = -2 : i64} : tensor<2x5x32xf32>
  // CHECK: lethe.dropout %{{.*}} {ratio = 1.000000e-01 : f32, seed = 7 : i64, training} : (tensor<2x5x32xf32>) -> (tensor<2x5x32xf32>, tensor<2x5x32xi1>)
  %8:2 = lethe.dropout %t {ratio = 0.1 : f32, seed = 7 : i64, training} : (tensor<2x5x32xf32>) -> (tensor<2x5x32xf32>, tensor<2x5x32xi1>)
  // CHECK: lethe.dropout %{{.*}} {seed = 0 : i64} : (tensor<2x5x32xf32>) -> (tensor<2x5x32xf32>, tensor<2x5x32xi1>)
  %9:2 = lethe.dropout %t {seed = 0 : i64} : (tensor<2x5x32xf32>) -> (tensor<2x5x32xf32>, tensor<2x5x32xi1>)
  return %0 : tensor<8x16x4x4xf32>
}

//===----------------------------------------------------------------------===//
// Reduction
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<4x8x16xf32>, %i: tensor<4x8xi64>) -> tensor<4x1x16xf32> {
  // CHECK: lethe.reduce_sum %{{.*}} {axes = array<i64: 1>} : (tensor<4x8x16xf32>) -> tensor<4x1x16xf32>
  %0 = lethe.reduce_sum %x {axes = array<i64: 1>} : (tensor<4x8x16xf32>) -> tensor<4x1x16xf32>
  // CHECK: lethe.reduce_sum %{{.*}} {axes = array<i64: -1, 0>, keepdims = false} : (tensor<4x8x16xf32>) -> tensor<8xf32>
  %1 = lethe.reduce_sum %x {axes = array<i64: -1, 0>, keepdims = false} : (tensor<4x8x16xf32>) -> tensor<8xf32>
  // CHECK: lethe.reduce_mean %{{[^ ,]+}} : (tensor<4x8x16xf32>) -> tensor<1x1x1xf32>
  %2 = lethe.reduce_mean %x : (tensor<4x8x16xf32>) -> tensor<1x1x1xf32>
  // CHECK: lethe.reduce_mean %{{.*}} {keepdims = false} : (tensor<4x8x16xf32>) -> tensor<f32>
  %3 = lethe.reduce_mean %x {keepdims = false} : (tensor<4x8x16xf32>) -> tensor<f32>
  // CHECK: lethe.reduce_max %{{.*}} {axes = array<i64: 2>, keepdims = false} : (tensor<4x8x16xf32>) -> tensor<4x8xf32>
  %4 = lethe.reduce_max %x {axes = array<i64: 2>, keepdims = false} : (tensor<4x8x16xf32>) -> tensor<4x8xf32>
  // CHECK: lethe.reduce_max %{{.*}} {axes = array<i64: 0>} : (tensor<4x8xi64>) -> tensor<1x8xi64>
  %5 = lethe.reduce_max %i {axes = array<i64: 0>} : (tensor<4x8xi64>) -> tensor<1x8xi64>
  return %0 : tensor<4x1x16xf32>
}

//===----------------------------------------------------------------------===//
// Tensor (constants, shape and data movement)
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @constant
func.func @constant() -> (tensor<4xf32>, tensor<2x2xi64>, tensor<i1>, tensor<2xf32>) {
  // CHECK: lethe.constant dense<1.000000e+00> : tensor<4xf32>
  %0 = lethe.constant dense<1.0> : tensor<4xf32>
  // CHECK: lethe.constant dense<{{\[\[}}1, 2], [3, 4]]> : tensor<2x2xi64>
  %1 = lethe.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  // CHECK: lethe.constant dense<true> : tensor<i1>
  %2 = lethe.constant dense<true> : tensor<i1>
  // CHECK: lethe.constant dense_resource<tensor_weight> : tensor<2xf32>
  %3 = lethe.constant dense_resource<tensor_weight> : tensor<2xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<2x2xi64>, tensor<i1>, tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      tensor_weight: "0x040000000000803F00000040"
    }
  }
#-}

// CHECK-LABEL: func.func @reshape
func.func @reshape(%x: tensor<2x3x4xf32>, %e: tensor<0x3xf32>, %s: tensor<f32>) -> tensor<2x12xf32> {
  // CHECK: lethe.reshape %{{.*}} {shape = array<i64: 0, -1>} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %0 = lethe.reshape %x {shape = array<i64: 0, -1>} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  // CHECK: lethe.reshape %{{.*}} {shape = array<i64: 4, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %1 = lethe.reshape %x {shape = array<i64: 4, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  // CHECK: lethe.reshape %{{.*}} {shape = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<24xf32>
  %2 = lethe.reshape %x {shape = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<24xf32>
  // CHECK: lethe.reshape %{{.*}} {allowzero, shape = array<i64: 3, 0>} : (tensor<0x3xf32>) -> tensor<3x0xf32>
  %3 = lethe.reshape %e {allowzero, shape = array<i64: 3, 0>} : (tensor<0x3xf32>) -> tensor<3x0xf32>
  // CHECK: lethe.reshape %{{.*}} {shape = array<i64: 0, 3>} : (tensor<0x3xf32>) -> tensor<0x3xf32>
  %4 = lethe.reshape %e {shape = array<i64: 0, 3>} : (tensor<0x3xf32>) -> tensor<0x3xf32>
  // CHECK: lethe.reshape %{{.*}} {shape = array<i64: 1, 1>} : (tensor<f32>) -> tensor<1x1xf32>
  %5 = lethe.reshape %s {shape = array<i64: 1, 1>} : (tensor<f32>) -> tensor<1x1xf32>
  // CHECK: lethe.reshape %{{.*}} {shape = array<i64>} : (tensor<1x1xf32>) -> tensor<f32>
  %6 = lethe.reshape %5 {shape = array<i64>} : (tensor<1x1xf32>) -> tensor<f32>
  return %0 : tensor<2x12xf32>
}

// CHECK-LABEL: func.func @flatten_transpose
func.func @flatten_transpose(%x: tensor<2x3x4x5xf32>, %s: tensor<f32>) -> tensor<2x60xf32> {
  // CHECK: lethe.flatten %{{[^ ,]+}} : (tensor<2x3x4x5xf32>) -> tensor<2x60xf32>
  %0 = lethe.flatten %x : (tensor<2x3x4x5xf32>) -> tensor<2x60xf32>
  // CHECK: lethe.flatten %{{.*}} {axis = 0 : i64} : (tensor<2x3x4x5xf32>) -> tensor<1x120xf32>
  %1 = lethe.flatten %x {axis = 0 : i64} : (tensor<2x3x4x5xf32>) -> tensor<1x120xf32>
  // CHECK: lethe.flatten %{{.*}} {axis = 4 : i64} : (tensor<2x3x4x5xf32>) -> tensor<120x1xf32>
  %2 = lethe.flatten %x {axis = 4 : i64} : (tensor<2x3x4x5xf32>) -> tensor<120x1xf32>
  // CHECK: lethe.flatten %{{.*}} {axis = -1 : i64} : (tensor<2x3x4x5xf32>) -> tensor<24x5xf32>
  %3 = lethe.flatten %x {axis = -1 : i64} : (tensor<2x3x4x5xf32>) -> tensor<24x5xf32>
  // CHECK: lethe.flatten %{{.*}} {axis = 0 : i64} : (tensor<f32>) -> tensor<1x1xf32>
  %4 = lethe.flatten %s {axis = 0 : i64} : (tensor<f32>) -> tensor<1x1xf32>
  // CHECK: lethe.transpose %{{.*}} {perm = array<i64: 3, 2, 1, 0>} : (tensor<2x3x4x5xf32>) -> tensor<5x4x3x2xf32>
  %5 = lethe.transpose %x {perm = array<i64: 3, 2, 1, 0>} : (tensor<2x3x4x5xf32>) -> tensor<5x4x3x2xf32>
  // CHECK: lethe.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x3x4x5xf32>) -> tensor<2x4x5x3xf32>
  %6 = lethe.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x3x4x5xf32>) -> tensor<2x4x5x3xf32>
  // CHECK: lethe.transpose %{{.*}} {perm = array<i64>} : (tensor<f32>) -> tensor<f32>
  %7 = lethe.transpose %s {perm = array<i64>} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<2x60xf32>
}

// CHECK-LABEL: func.func @concat_split
func.func @concat_split(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<4x3xf32>,
                        %d: tensor<4x6xf32>, %i: tensor<6xi64>) -> tensor<2x8xf32> {
  // CHECK: lethe.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %0 = lethe.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  // CHECK: lethe.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = -2 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<8x3xf32>
  %1 = lethe.concat %a, %c, %a {axis = -2 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<8x3xf32>
  // CHECK: lethe.concat %{{.*}} {axis = 0 : i64} : (tensor<6xi64>) -> tensor<6xi64>
  %2 = lethe.concat %i {axis = 0 : i64} : (tensor<6xi64>) -> tensor<6xi64>
  // CHECK: lethe.split %{{.*}} {axis = 1 : i64, split = array<i64: 2, 6>} : (tensor<2x8xf32>) -> (tensor<2x2xf32>, tensor<2x6xf32>)
  %3:2 = lethe.split %0 {axis = 1 : i64, split = array<i64: 2, 6>} : (tensor<2x8xf32>) -> (tensor<2x2xf32>, tensor<2x6xf32>)
  // CHECK: lethe.split %{{.*}} {split = array<i64: 2, 2, 2>} : (tensor<6xi64>) -> (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>)
  %4:3 = lethe.split %i {split = array<i64: 2, 2, 2>} : (tensor<6xi64>) -> (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>)
  // CHECK: lethe.split %{{.*}} {axis = -1 : i64, split = array<i64: 3, 0, 3>} : (tensor<4x6xf32>) -> (tensor<4x3xf32>, tensor<4x0xf32>, tensor<4x3xf32>)
  %5:3 = lethe.split %d {axis = -1 : i64, split = array<i64: 3, 0, 3>} : (tensor<4x6xf32>) -> (tensor<4x3xf32>, tensor<4x0xf32>, tensor<4x3xf32>)
  // CHECK: lethe.split %{{.*}} {split = array<i64: 6>} : (tensor<6xi64>) -> tensor<6xi64>
  %6 = lethe.split %i {split = array<i64: 6>} : (tensor<6xi64>) -> tensor<6xi64>
  return %0 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @slice
func.func @slice(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // CHECK: lethe.slice %{{.*}} {axes = array<i64: 0>, ends = array<i64: 3>, starts = array<i64: 1>, steps = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  %0 = lethe.slice %x {starts = array<i64: 1>, ends = array<i64: 3>, axes = array<i64: 0>, steps = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  // Reverse the last axis: INT64_MIN as end means "past the beginning".
  // CHECK: lethe.slice %{{.*}} {axes = array<i64: -1>, ends = array<i64: -9223372036854775808>, starts = array<i64: -1>, steps = array<i64: -1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = lethe.slice %x {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, axes = array<i64: -1>, steps = array<i64: -1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // INT64_MAX as end means "to the end"; ceil(6 / 4) = 2.
  // CHECK: lethe.slice %{{.*}} {axes = array<i64: 1>, ends = array<i64: 9223372036854775807>, starts = array<i64: 2>, steps = array<i64: 4>} : (tensor<4x8xf32>) -> tensor<4x2xf32>
  %2 = lethe.slice %x {starts = array<i64: 2>, ends = array<i64: 9223372036854775807>, axes = array<i64: 1>, steps = array<i64: 4>} : (tensor<4x8xf32>) -> tensor<4x2xf32>
  // A negative step from INT64_MAX (clamped to 7) to INT64_MIN (clamped to
  // -1): ceil(8 / 3) = 3. Out-of-range bounds clamp on axis 0.
  // CHECK: lethe.slice %{{.*}} {axes = array<i64: 1, 0>, ends = array<i64: -9223372036854775808, 100>, starts = array<i64: 9223372036854775807, -100>, steps = array<i64: -3, 1>} : (tensor<4x8xf32>) -> tensor<4x3xf32>
  %3 = lethe.slice %x {starts = array<i64: 9223372036854775807, -100>, ends = array<i64: -9223372036854775808, 100>, axes = array<i64: 1, 0>, steps = array<i64: -3, 1>} : (tensor<4x8xf32>) -> tensor<4x3xf32>
  // With a negative step, end -1 is index 7 (not "before the first"): empty.
  // CHECK: lethe.slice %{{.*}} {axes = array<i64: 1>, ends = array<i64: -1>, starts = array<i64: 7>, steps = array<i64: -1>} : (tensor<4x8xf32>) -> tensor<4x0xf32>
  %4 = lethe.slice %x {starts = array<i64: 7>, ends = array<i64: -1>, axes = array<i64: 1>, steps = array<i64: -1>} : (tensor<4x8xf32>) -> tensor<4x0xf32>
  // Start after end with a positive step: empty. A huge step takes one element.
  // CHECK: lethe.slice %{{.*}} {axes = array<i64: 0, 1>, ends = array<i64: 1, 8>, starts = array<i64: 3, 0>, steps = array<i64: 1, 9223372036854775807>} : (tensor<4x8xf32>) -> tensor<0x1xf32>
  %5 = lethe.slice %x {starts = array<i64: 3, 0>, ends = array<i64: 1, 8>, axes = array<i64: 0, 1>, steps = array<i64: 1, 9223372036854775807>} : (tensor<4x8xf32>) -> tensor<0x1xf32>
  // CHECK: lethe.slice %{{.*}} {axes = array<i64: 0>, ends = array<i64: -9223372036854775808>, starts = array<i64: 2>, steps = array<i64: -9223372036854775808>} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %6 = lethe.slice %x {starts = array<i64: 2>, ends = array<i64: -9223372036854775808>, axes = array<i64: 0>, steps = array<i64: -9223372036854775808>} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  // CHECK: lethe.slice %{{.*}} {axes = array<i64>, ends = array<i64>, starts = array<i64>, steps = array<i64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = lethe.slice %x {starts = array<i64>, ends = array<i64>, axes = array<i64>, steps = array<i64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @gather
func.func @gather(%data: tensor<10x4xf32>, %i: tensor<3x2xi64>, %j: tensor<i32>,
                  %k: tensor<5xi32>) -> tensor<3x2x4xf32> {
  // CHECK: lethe.gather %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<10x4xf32>, tensor<3x2xi64>) -> tensor<3x2x4xf32>
  %0 = lethe.gather %data, %i : (tensor<10x4xf32>, tensor<3x2xi64>) -> tensor<3x2x4xf32>
  // CHECK: lethe.gather %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<10x4xf32>, tensor<i32>) -> tensor<10xf32>
  %1 = lethe.gather %data, %j {axis = -1 : i64} : (tensor<10x4xf32>, tensor<i32>) -> tensor<10xf32>
  // CHECK: lethe.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<10x4xf32>, tensor<5xi32>) -> tensor<10x5xf32>
  %2 = lethe.gather %data, %k {axis = 1 : i64} : (tensor<10x4xf32>, tensor<5xi32>) -> tensor<10x5xf32>
  return %0 : tensor<3x2x4xf32>
}

// CHECK-LABEL: func.func @squeeze_unsqueeze
func.func @squeeze_unsqueeze(%x: tensor<1x3x1x4xf32>, %y: tensor<3x4xf32>,
                             %o: tensor<1x1xi64>, %s: tensor<f32>) -> tensor<3x4xf32> {
  // CHECK: lethe.squeeze %{{[^ ,]+}} : (tensor<1x3x1x4xf32>) -> tensor<3x4xf32>
  %0 = lethe.squeeze %x : (tensor<1x3x1x4xf32>) -> tensor<3x4xf32>
  // CHECK: lethe.squeeze %{{.*}} {axes = array<i64: -2>} : (tensor<1x3x1x4xf32>) -> tensor<1x3x4xf32>
  %1 = lethe.squeeze %x {axes = array<i64: -2>} : (tensor<1x3x1x4xf32>) -> tensor<1x3x4xf32>
  // CHECK: lethe.squeeze %{{.*}} {axes = array<i64: 2, 0>} : (tensor<1x3x1x4xf32>) -> tensor<3x4xf32>
  %2 = lethe.squeeze %x {axes = array<i64: 2, 0>} : (tensor<1x3x1x4xf32>) -> tensor<3x4xf32>
  // CHECK: lethe.squeeze %{{[^ ,]+}} : (tensor<1x1xi64>) -> tensor<i64>
  %3 = lethe.squeeze %o : (tensor<1x1xi64>) -> tensor<i64>
  // CHECK: lethe.unsqueeze %{{.*}} {axes = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<1x3x4xf32>
  %4 = lethe.unsqueeze %y {axes = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<1x3x4xf32>
  // CHECK: lethe.unsqueeze %{{.*}} {axes = array<i64: -1>} : (tensor<3x4xf32>) -> tensor<3x4x1xf32>
  %5 = lethe.unsqueeze %y {axes = array<i64: -1>} : (tensor<3x4xf32>) -> tensor<3x4x1xf32>
  // The axes index the result (of rank 4), in any order.
  // CHECK: lethe.unsqueeze %{{.*}} {axes = array<i64: 3, 1>} : (tensor<3x4xf32>) -> tensor<3x1x4x1xf32>
  %6 = lethe.unsqueeze %y {axes = array<i64: 3, 1>} : (tensor<3x4xf32>) -> tensor<3x1x4x1xf32>
  // CHECK: lethe.unsqueeze %{{.*}} {axes = array<i64: 0, -1>} : (tensor<3x4xf32>) -> tensor<1x3x4x1xf32>
  %7 = lethe.unsqueeze %y {axes = array<i64: 0, -1>} : (tensor<3x4xf32>) -> tensor<1x3x4x1xf32>
  // CHECK: lethe.unsqueeze %{{.*}} {axes = array<i64: 0>} : (tensor<f32>) -> tensor<1xf32>
  %8 = lethe.unsqueeze %s {axes = array<i64: 0>} : (tensor<f32>) -> tensor<1xf32>
  return %0 : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @expand
func.func @expand(%x: tensor<3x1xf32>, %y: tensor<3x4xi1>) -> tensor<2x3x4xf32> {
  // CHECK: lethe.expand %{{.*}} {shape = array<i64: 2, 1, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %0 = lethe.expand %x {shape = array<i64: 2, 1, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  // A shape of lower rank, and 1 keeping a larger input dimension.
  // CHECK: lethe.expand %{{.*}} {shape = array<i64: 1>} : (tensor<3x4xi1>) -> tensor<3x4xi1>
  %1 = lethe.expand %y {shape = array<i64: 1>} : (tensor<3x4xi1>) -> tensor<3x4xi1>
  // CHECK: lethe.expand %{{.*}} {shape = array<i64: 3, 0>} : (tensor<3x1xf32>) -> tensor<3x0xf32>
  %2 = lethe.expand %x {shape = array<i64: 3, 0>} : (tensor<3x1xf32>) -> tensor<3x0xf32>
  return %0 : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @resize
func.func @resize(%x: tensor<1x3x5x11xf32>) -> tensor<1x3x10x22xf32> {
  // CHECK: lethe.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : (tensor<1x3x5x11xf32>) -> tensor<1x3x10x22xf32>
  %0 = lethe.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x3x5x11xf32>) -> tensor<1x3x10x22xf32>
  // floor(5 * 0.5) = 2; 11 * (15 / 11) = 14.999999999999998 gives 15.
  // CHECK: lethe.resize %{{.*}} {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f64: 1.000000e+00, 1.000000e+00, 5.000000e-01, 1.3636363636363635>} : (tensor<1x3x5x11xf32>) -> tensor<1x3x2x15xf32>
  %1 = lethe.resize %x {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 0.5, 1.3636363636363635>} : (tensor<1x3x5x11xf32>) -> tensor<1x3x2x15xf32>
  // CHECK: lethe.resize %{{.*}} {coordinate_transformation_mode = "align_corners", nearest_mode = "ceil", scales = array<f64: 1.000000e+00, 1.000000e+00, 3.000000e+00, 1.000000e+00>} : (tensor<1x3x5x11xf32>) -> tensor<1x3x15x11xf32>
  %2 = lethe.resize %x {coordinate_transformation_mode = "align_corners", nearest_mode = "ceil", scales = array<f64: 1.0, 1.0, 3.0, 1.0>} : (tensor<1x3x5x11xf32>) -> tensor<1x3x15x11xf32>
  // CHECK: lethe.resize %{{.*}} {coordinate_transformation_mode = "pytorch_half_pixel", nearest_mode = "round_prefer_ceil", scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>}
  %3 = lethe.resize %x {coordinate_transformation_mode = "pytorch_half_pixel", nearest_mode = "round_prefer_ceil", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x3x5x11xf32>) -> tensor<1x3x10x22xf32>
  // CHECK: lethe.resize %{{.*}} {coordinate_transformation_mode = "tf_half_pixel_for_nn", scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>}
  %4 = lethe.resize %x {coordinate_transformation_mode = "tf_half_pixel_for_nn", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x3x5x11xf32>) -> tensor<1x3x10x22xf32>
  // CHECK: lethe.resize %{{.*}} {mode = "linear", scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : (tensor<1x3x5x11xf32>) -> tensor<1x3x10x22xf32>
  %5 = lethe.resize %x {mode = "linear", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x3x5x11xf32>) -> tensor<1x3x10x22xf32>
  // CHECK: lethe.resize %{{.*}} {cubic_coeff_a = -5.000000e-01 : f64, exclude_outside = true, mode = "cubic", scales = array<f64: 1.000000e+00, 1.000000e+00, 5.000000e-01, 5.000000e-01>} : (tensor<1x3x5x11xf32>) -> tensor<1x3x2x5xf32>
  %6 = lethe.resize %x {mode = "cubic", cubic_coeff_a = -0.5 : f64, exclude_outside = true, scales = array<f64: 1.0, 1.0, 0.5, 0.5>} : (tensor<1x3x5x11xf32>) -> tensor<1x3x2x5xf32>
  // CHECK: lethe.resize %{{.*}} {coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 1.000000e+01 : f64, mode = "linear", roi = array<f64: 0.000000e+00, 0.000000e+00, 4.000000e-01, 6.000000e-01, 1.000000e+00, 1.000000e+00, 6.000000e-01, 8.000000e-01>, scales = array<f64: 1.000000e+00, 1.000000e+00, 6.000000e-01, 3.000000e-01>} : (tensor<1x3x5x11xf32>) -> tensor<1x3x3x3xf32>
  %7 = lethe.resize %x {coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 10.0 : f64, mode = "linear", roi = array<f64: 0.0, 0.0, 0.4, 0.6, 1.0, 1.0, 0.6, 0.8>, scales = array<f64: 1.0, 1.0, 0.6, 0.3>} : (tensor<1x3x5x11xf32>) -> tensor<1x3x3x3xf32>
  return %0 : tensor<1x3x10x22xf32>
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @losses
func.func @losses(%scores: tensor<8x10xf32>, %labels: tensor<8xi64>, %w: tensor<10xf32>,
                  %image: tensor<2x5x4x4xf32>, %pixels: tensor<2x4x4xi32>,
                  %y: tensor<8x4xf32>, %t: tensor<8x4xf32>) -> tensor<f32> {
  // CHECK: lethe.softmax_cross_entropy %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<8x10xf32>)
  %0:2 = lethe.softmax_cross_entropy %scores, %labels : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<8x10xf32>)
  // CHECK: lethe.softmax_cross_entropy %{{.*}}, %{{.*}}, %{{.*}} {ignore_index = -1 : i64, reduction = "sum"} : (tensor<8x10xf32>, tensor<8xi64>, tensor<10xf32>) -> (tensor<f32>, tensor<8x10xf32>)
  %1:2 = lethe.softmax_cross_entropy %scores, %labels, %w {ignore_index = -1 : i64, reduction = "sum"} : (tensor<8x10xf32>, tensor<8xi64>, tensor<10xf32>) -> (tensor<f32>, tensor<8x10xf32>)
  // CHECK: lethe.softmax_cross_entropy %{{.*}}, %{{.*}} {reduction = "none"} : (tensor<2x5x4x4xf32>, tensor<2x4x4xi32>) -> (tensor<2x4x4xf32>, tensor<2x5x4x4xf32>)
  %2:2 = lethe.softmax_cross_entropy %image, %pixels {reduction = "none"} : (tensor<2x5x4x4xf32>, tensor<2x4x4xi32>) -> (tensor<2x4x4xf32>, tensor<2x5x4x4xf32>)
  // CHECK: lethe.nll %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  %3 = lethe.nll %0#1, %labels : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  // CHECK: lethe.nll %{{.*}}, %{{.*}}, %{{.*}} {ignore_index = 3 : i64, reduction = "none"} : (tensor<8x10xf32>, tensor<8xi64>, tensor<10xf32>) -> tensor<8xf32>
  %4 = lethe.nll %0#1, %labels, %w {ignore_index = 3 : i64, reduction = "none"} : (tensor<8x10xf32>, tensor<8xi64>, tensor<10xf32>) -> tensor<8xf32>
  // CHECK: lethe.mse %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<f32>
  %5 = lethe.mse %y, %t : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<f32>
  // CHECK: lethe.mse %{{.*}}, %{{.*}} {reduction = "none"} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %6 = lethe.mse %y, %t {reduction = "none"} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0#0 : tensor<f32>
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @optimizers
func.func @optimizers(%lr: tensor<f32>, %lr64: tensor<f64>, %t: tensor<i64>, %x: tensor<5x3xf32>, %g: tensor<5x3xf32>, %s: tensor<5x3xf32>, %s2: tensor<5x3xf32>, %y: tensor<4xbf16>) -> tensor<5x3xf32> {
  // CHECK: lethe.sgd_update %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<f32>, tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
  %0 = lethe.sgd_update %lr, %x, %g : (tensor<f32>, tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
  // CHECK: lethe.sgd_update %{{.*}}, %{{.*}}, %{{.*}} {norm_coefficient = 0.00999999977 : f32} : (tensor<f64>, tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %1 = lethe.sgd_update %lr64, %y, %y {norm_coefficient = 0.01 : f32} : (tensor<f64>, tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  // CHECK: lethe.momentum_update %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {alpha = 0.949999988 : f32, beta = 1.000000e-01 : f32, norm_coefficient = 1.000000e-03 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
  %2:2 = lethe.momentum_update %lr, %t, %x, %g, %s {alpha = 0.95 : f32, beta = 0.1 : f32, norm_coefficient = 0.001 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
  // CHECK: lethe.momentum_update {{.*}} {alpha = 0.899999976 : f32, beta = 1.000000e+00 : f32, mode = "nesterov"}
  %3:2 = lethe.momentum_update %lr, %t, %x, %g, %s {alpha = 0.9 : f32, beta = 1.0 : f32, mode = "nesterov"} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
  // CHECK: lethe.adagrad_update %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {decay_factor = 1.000000e-01 : f32, epsilon = 1.000000e-10 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
  %4:2 = lethe.adagrad_update %lr, %t, %x, %g, %s {decay_factor = 0.1 : f32, epsilon = 1.0e-10 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
  // CHECK: lethe.adam_update %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>)
  %5:3 = lethe.adam_update %lr, %t, %x, %g, %s, %s2 : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>)
  // CHECK: lethe.adam_update {{.*}} {alpha = 0.949999988 : f32, beta = 1.000000e-01 : f32, epsilon = 1.000000e-07 : f32, norm_coefficient = 1.000000e-03 : f32, norm_coefficient_post = 2.000000e-02 : f32, weight_decay = 0.00999999977 : f32}
  %6:3 = lethe.adam_update %lr, %t, %x, %g, %s, %s2 {alpha = 0.95 : f32, beta = 0.1 : f32, epsilon = 1.0e-7 : f32, norm_coefficient = 0.001 : f32, norm_coefficient_post = 0.02 : f32, weight_decay = 0.01 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>)
  return %6#0 : tensor<5x3xf32>
}

//===----------------------------------------------------------------------===//
// Contraction: gemm
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @gemm
func.func @gemm(%a: tensor<8x32xf32>, %w: tensor<64x32xf32>, %b: tensor<64xf32>,
                %at: tensor<32x8xf32>, %c: tensor<8x1xf32>) -> tensor<8x64xf32> {
  // CHECK: lethe.gemm %{{.*}}, %{{.*}}, %{{.*}} {trans_b} : (tensor<8x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %0 = lethe.gemm %a, %w, %b {trans_b} : (tensor<8x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  // CHECK: lethe.gemm %{{.*}}, %{{.*}} {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, trans_a, trans_b} : (tensor<32x8xf32>, tensor<64x32xf32>) -> tensor<8x64xf32>
  %1 = lethe.gemm %at, %w {alpha = 0.5 : f32, beta = 2.0 : f32, trans_a, trans_b} : (tensor<32x8xf32>, tensor<64x32xf32>) -> tensor<8x64xf32>
  // CHECK: lethe.gemm %{{.*}}, %{{.*}}, %{{.*}} {trans_b} : (tensor<8x32xf32>, tensor<64x32xf32>, tensor<8x1xf32>) -> tensor<8x64xf32>
  %2 = lethe.gemm %a, %w, %c {trans_b} : (tensor<8x32xf32>, tensor<64x32xf32>, tensor<8x1xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// CHECK-LABEL: func.func @gradients
func.func @gradients(%dy: tensor<8x10xf32>, %y: tensor<8x10xf32>, %dloss: tensor<f32>, %labels: tensor<8xi64>, %w: tensor<10xf32>) -> (tensor<8x10xf32>, tensor<8x10xf32>, tensor<8x10xf32>, tensor<8x10xf32>, tensor<8x10xf32>) {
  // CHECK: lethe.relu_grad %{{[^ ,]+}}, %{{[^ ,]+}} : tensor<8x10xf32>
  %0 = lethe.relu_grad %dy, %y : tensor<8x10xf32>
  // CHECK: lethe.leaky_relu_grad %{{.*}}, %{{.*}} {alpha = 2.000000e-01 : f32} : tensor<8x10xf32>
  %1 = lethe.leaky_relu_grad %dy, %y {alpha = 0.2 : f32} : tensor<8x10xf32>
  // CHECK: lethe.gelu_grad %{{.*}}, %{{.*}} {approximate = "tanh"} : tensor<8x10xf32>
  %2 = lethe.gelu_grad %dy, %y {approximate = "tanh"} : tensor<8x10xf32>
  // CHECK: lethe.softmax_cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {ignore_index = -1 : i64, reduction = "sum"} : (tensor<f32>, tensor<8x10xf32>, tensor<8xi64>, tensor<10xf32>) -> tensor<8x10xf32>
  %3 = lethe.softmax_cross_entropy_grad %dloss, %y, %labels, %w {reduction = "sum", ignore_index = -1 : i64} : (tensor<f32>, tensor<8x10xf32>, tensor<8xi64>, tensor<10xf32>) -> tensor<8x10xf32>
  // CHECK: lethe.nll_grad %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<f32>, tensor<8xi64>) -> tensor<8x10xf32>
  %4 = lethe.nll_grad %dloss, %labels : (tensor<f32>, tensor<8xi64>) -> tensor<8x10xf32>
  return %0, %1, %2, %3, %4 : tensor<8x10xf32>, tensor<8x10xf32>, tensor<8x10xf32>, tensor<8x10xf32>, tensor<8x10xf32>
}

// CHECK-LABEL: func.func @layer_gradients
func.func @layer_gradients(%x: tensor<2x4x6x6xf32>, %dy: tensor<2x4x3x3xf32>, %dp: tensor<2x4x3x3xf32>, %c: tensor<4xf32>, %t: tensor<2x6x4xf32>, %s: tensor<4xf32>, %stat: tensor<2x6x1xf32>, %u: tensor<1x2x6x6xf32>) -> (tensor<4x2x3x3xf32>, tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<2x6x4xf32>, tensor<1x2x3x3xf32>) {
  // CHECK: lethe.conv_grad_weight %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x6x6xf32>, tensor<2x4x3x3xf32>) -> tensor<4x2x3x3xf32>
  %0 = lethe.conv_grad_weight %x, %dy {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x6x6xf32>, tensor<2x4x3x3xf32>) -> tensor<4x2x3x3xf32>
  // CHECK: lethe.max_pool_grad %{{.*}}, %{{.*}} {{.*}} : (tensor<2x4x3x3xf32>, tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  %1 = lethe.max_pool_grad %dp, %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x4x3x3xf32>, tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  // CHECK: lethe.avg_pool_grad %{{.*}} {count_include_pad, {{.*}}} : (tensor<2x4x3x3xf32>) -> tensor<2x4x6x6xf32>
  %2 = lethe.avg_pool_grad %dp {count_include_pad, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x4x3x3xf32>) -> tensor<2x4x6x6xf32>
  // CHECK: lethe.batch_norm_grad %{{.*}} : (tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>)
  %3:3 = lethe.batch_norm_grad %1, %x, %c, %c, %c : (tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>)
  // CHECK: lethe.layer_norm_grad %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<4xf32>, tensor<2x6x1xf32>, tensor<2x6x1xf32>) -> (tensor<2x6x4xf32>, tensor<4xf32>, tensor<4xf32>)
  %4:3 = lethe.layer_norm_grad %t, %t, %s, %stat, %stat : (tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<4xf32>, tensor<2x6x1xf32>, tensor<2x6x1xf32>) -> (tensor<2x6x4xf32>, tensor<4xf32>, tensor<4xf32>)
  // CHECK: lethe.resize_grad %{{.*}} {mode = "linear", scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  %5 = lethe.resize_grad %u {mode = "linear", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  return %0, %1, %2, %3#0, %3#1, %4#0, %5 : tensor<4x2x3x3xf32>, tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<2x6x4xf32>, tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @data_movement_gradients
func.func @data_movement_gradients(%dy: tensor<2x4xf32>, %de: tensor<8x16x64xf32>, %ids: tensor<8x16xi64>) -> (tensor<4x8xf32>, tensor<1000x64xf32>) {
  // CHECK: lethe.slice_grad %{{.*}} {axes = array<i64: 0, -1>, ends = array<i64: 3, -9223372036854775808>, starts = array<i64: 1, -1>, steps = array<i64: 1, -2>} : (tensor<2x4xf32>) -> tensor<4x8xf32>
  %0 = lethe.slice_grad %dy {axes = array<i64: 0, -1>, ends = array<i64: 3, -9223372036854775808>, starts = array<i64: 1, -1>, steps = array<i64: 1, -2>} : (tensor<2x4xf32>) -> tensor<4x8xf32>
  // CHECK: lethe.gather_grad %{{[^ ,]+}}, %{{[^ ,]+}} : (tensor<8x16x64xf32>, tensor<8x16xi64>) -> tensor<1000x64xf32>
  %1 = lethe.gather_grad %de, %ids : (tensor<8x16x64xf32>, tensor<8x16xi64>) -> tensor<1000x64xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<1000x64xf32>
}

// CHECK-LABEL: func.func @clip_gradient
func.func @clip_gradient(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: lethe.clip_grad %{{.*}}, %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<4x8xf32>
  %0 = lethe.clip_grad %dy, %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<4x8xf32>
  // CHECK: lethe.clip_grad %{{[^ ,]+}}, %{{[^ ,]+}} : tensor<4x8xf32>
  %1 = lethe.clip_grad %dy, %x : tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @reduce_max_gradient
func.func @reduce_max_gradient(%dy: tensor<4xf32>, %x: tensor<4x8xf32>, %y: tensor<4xf32>) -> tensor<4x8xf32> {
  // CHECK: lethe.reduce_max_grad %{{.*}}, %{{.*}}, %{{.*}} {axes = array<i64: 1>, keepdims = false} : (tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  %0 = lethe.reduce_max_grad %dy, %x, %y {axes = array<i64: 1>, keepdims = false} : (tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @softmax_gradients
func.func @softmax_gradients(%dy: tensor<8x10xf32>, %y: tensor<8x10xf32>) -> (tensor<8x10xf32>, tensor<8x10xf32>) {
  // CHECK: lethe.softmax_grad %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<8x10xf32>
  %0 = lethe.softmax_grad %dy, %y {axis = 1 : i64} : tensor<8x10xf32>
  // CHECK: lethe.log_softmax_grad %{{[^ ,]+}}, %{{[^ ,]+}} : tensor<8x10xf32>
  %1 = lethe.log_softmax_grad %dy, %y : tensor<8x10xf32>
  return %0, %1 : tensor<8x10xf32>, tensor<8x10xf32>
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @memory
func.func @memory(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // CHECK: %[[H:.*]] = lethe.offload %{{[^ ,]+}} : tensor<4x16xf32> -> !lethe.host<tensor<4x16xf32>>
  %h = lethe.offload %x : tensor<4x16xf32> -> !lethe.host<tensor<4x16xf32>>
  // CHECK: lethe.release %{{[^ ,]+}} : tensor<4x16xf32>
  lethe.release %x : tensor<4x16xf32>
  // CHECK: lethe.prefetch %[[H]] : !lethe.host<tensor<4x16xf32>> -> tensor<4x16xf32>
  %y = lethe.prefetch %h : !lethe.host<tensor<4x16xf32>> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
