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
  // CHECK: lethe.neg %{{.*}} : tensor<4x8xf32>
  %0 = lethe.neg %x : tensor<4x8xf32>
  // CHECK: lethe.relu %{{.*}} : tensor<4x8xf32>
  %1 = lethe.relu %0 : tensor<4x8xf32>
  // CHECK: lethe.leaky_relu %{{.*}} {alpha = 2.000000e-01 : f32} : tensor<4x8xf32>
  %2 = lethe.leaky_relu %1 {alpha = 0.2 : f32} : tensor<4x8xf32>
  // CHECK: lethe.leaky_relu %{{.*}} : tensor<4x8xf32>
  %3 = lethe.leaky_relu %2 : tensor<4x8xf32>
  // CHECK: lethe.sigmoid %{{.*}} : tensor<4x8xf32>
  %4 = lethe.sigmoid %3 : tensor<4x8xf32>
  // CHECK: lethe.tanh %{{.*}} : tensor<4x8xf32>
  %5 = lethe.tanh %4 : tensor<4x8xf32>
  // CHECK: lethe.gelu %{{.*}} : tensor<4x8xf32>
  %6 = lethe.gelu %5 : tensor<4x8xf32>
  // CHECK: lethe.gelu %{{.*}} {approximate = "tanh"} : tensor<4x8xf32>
  %7 = lethe.gelu %6 {approximate = "tanh"} : tensor<4x8xf32>
  // CHECK: lethe.erf %{{.*}} : tensor<4x8xf32>
  %8 = lethe.erf %7 : tensor<4x8xf32>
  // CHECK: lethe.exp %{{.*}} : tensor<4x8xf32>
  %9 = lethe.exp %8 : tensor<4x8xf32>
  // CHECK: lethe.log %{{.*}} : tensor<4x8xf32>
  %10 = lethe.log %9 : tensor<4x8xf32>
  // CHECK: lethe.sqrt %{{.*}} : tensor<4x8xf32>
  %11 = lethe.sqrt %10 : tensor<4x8xf32>
  // CHECK: lethe.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<4x8xf32>
  %12 = lethe.clip %11 {min = 0.0 : f64, max = 6.0 : f64} : tensor<4x8xf32>
  // CHECK: lethe.clip %{{.*}} {min = -1.000000e+00 : f64} : tensor<4x8xf32>
  %13 = lethe.clip %12 {min = -1.0 : f64} : tensor<4x8xf32>
  return %13 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<2x4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>,
                  %s: tensor<f32>, %i: tensor<3xi64>) -> tensor<2x4x8xf32> {
  // CHECK: lethe.add %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %0 = lethe.add %a, %b : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  // CHECK: lethe.sub %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %1 = lethe.sub %c, %0 : (tensor<4x1xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // CHECK: lethe.mul %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %2 = lethe.mul %1, %s : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  // CHECK: lethe.div %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<4x1xf32>) -> tensor<2x4x8xf32>
  %3 = lethe.div %2, %c : (tensor<2x4x8xf32>, tensor<4x1xf32>) -> tensor<2x4x8xf32>
  // CHECK: lethe.pow %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %4 = lethe.pow %3, %s : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  // CHECK: lethe.add %{{.*}}, %{{.*}} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %5 = lethe.add %i, %i : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %4 : tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @where_cast
func.func @where_cast(%c: tensor<4x1xi1>, %a: tensor<4x8xf32>, %s: tensor<f32>) -> tensor<4x8xf16> {
  // CHECK: lethe.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
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
  // CHECK: lethe.matmul %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %0 = lethe.matmul %a, %b : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  // CHECK: lethe.matmul %{{.*}}, %{{.*}} : (tensor<8xf32>, tensor<8x16xf32>) -> tensor<16xf32>
  %1 = lethe.matmul %v, %b : (tensor<8xf32>, tensor<8x16xf32>) -> tensor<16xf32>
  // CHECK: lethe.matmul %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4xf32>
  %2 = lethe.matmul %a, %v : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4xf32>
  // CHECK: lethe.matmul %{{.*}}, %{{.*}} : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
  %3 = lethe.matmul %v, %v : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
  // CHECK: lethe.matmul %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<3x1x8x16xf32>) -> tensor<3x2x4x16xf32>
  %4 = lethe.matmul %a, %bb : (tensor<2x4x8xf32>, tensor<3x1x8x16xf32>) -> tensor<3x2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

// (section Convolution: cases go below this line)

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// (section Pooling: cases go below this line)

//===----------------------------------------------------------------------===//
// Normalization, softmax and dropout
//===----------------------------------------------------------------------===//

// (section Normalization: cases go below this line)

//===----------------------------------------------------------------------===//
// Reduction
//===----------------------------------------------------------------------===//

// (section Reduction: cases go below this line)

//===----------------------------------------------------------------------===//
// Tensor (constants, shape and data movement)
//===----------------------------------------------------------------------===//

// (section Tensor: cases go below this line)

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

// (section Loss: cases go below this line)

//===----------------------------------------------------------------------===//
// Contraction: gemm
//===----------------------------------------------------------------------===//

// (section Gemm: cases go below this line)
