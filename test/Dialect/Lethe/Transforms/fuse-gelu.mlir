// RUN: lethe-opt %s -split-input-file --lethe-fuse-gelu | FileCheck %s

// The form this project's GPT-2 builder writes: (x * 0.5) * (erf(x / sqrt2) + 1).
// The constants, shared with another GELU, stay while it reads them.

// CHECK-LABEL: func.func @builder_form
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %[[Y:.*]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[A:.*]] = lethe.gelu %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: %[[B:.*]] = lethe.gelu %[[Y]] : tensor<2x8xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @builder_form(%x: tensor<2x8xf32>, %y: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %sqrt2 = lethe.constant dense<1.41421354> : tensor<f32>
  %half = lethe.constant dense<5.000000e-01> : tensor<f32>
  %one = lethe.constant dense<1.000000e+00> : tensor<f32>
  %0 = lethe.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %1 = lethe.erf %0 : tensor<2x8xf32>
  %2 = lethe.mul %x, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %3 = lethe.add %1, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %4 = lethe.mul %2, %3 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %5 = lethe.div %y, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %6 = lethe.erf %5 : tensor<2x8xf32>
  %7 = lethe.mul %y, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %8 = lethe.add %6, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %9 = lethe.mul %7, %8 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %4, %9 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// PyTorch's export before opset 20: (x * (1 + erf(x / sqrt2))) * 0.5, with
// the constant first where it commutes; x is also read elsewhere.

// CHECK-LABEL: func.func @torch_form
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[G:.*]] = lethe.gelu %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[S:.*]] = lethe.add %[[G]], %[[X]]
// CHECK-NEXT: return %[[S]]
func.func @torch_form(%x: tensor<4xf32>) -> tensor<4xf32> {
  %sqrt2 = lethe.constant dense<1.41421354> : tensor<f32>
  %half = lethe.constant dense<5.000000e-01> : tensor<f32>
  %one = lethe.constant dense<1.000000e+00> : tensor<f32>
  %0 = lethe.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = lethe.erf %0 : tensor<4xf32>
  %2 = lethe.add %one, %1 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = lethe.mul %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = lethe.mul %half, %3 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = lethe.add %4, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %5 : tensor<4xf32>
}

// -----

// x * (0.5 * (1 + erf(x * (1 / sqrt2)))), in f64, the constants as splats
// of x's shape.

// CHECK-LABEL: func.func @scaled_form
// CHECK-NEXT: %[[G:.*]] = lethe.gelu %{{.*}} : tensor<3xf64>
// CHECK-NEXT: return %[[G]]
func.func @scaled_form(%x: tensor<3xf64>) -> tensor<3xf64> {
  %inv = lethe.constant dense<0.70710678118654757> : tensor<3xf64>
  %half = lethe.constant dense<5.000000e-01> : tensor<3xf64>
  %one = lethe.constant dense<1.000000e+00> : tensor<3xf64>
  %0 = lethe.mul %inv, %x : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %1 = lethe.erf %0 : tensor<3xf64>
  %2 = lethe.add %1, %one : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %3 = lethe.mul %half, %2 : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %4 = lethe.mul %x, %3 : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %4 : tensor<3xf64>
}

// -----

// Not a GELU, or not one the pass may fuse: every op stays.

// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: lethe.gelu
// CHECK: return
func.func @not_fused(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %sqrt2 = lethe.constant dense<1.41421354> : tensor<f32>
  %half = lethe.constant dense<5.000000e-01> : tensor<f32>
  %almost = lethe.constant dense<4.900000e-01> : tensor<f32>
  %one = lethe.constant dense<1.000000e+00> : tensor<f32>
  // The erf is also a result.
  %0 = lethe.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = lethe.erf %0 : tensor<4xf32>
  %2 = lethe.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = lethe.mul %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %4 = lethe.mul %3, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // 0.49, not 0.5.
  %5 = lethe.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %6 = lethe.erf %5 : tensor<4xf32>
  %7 = lethe.add %6, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %8 = lethe.mul %x, %almost : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %9 = lethe.mul %8, %7 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // erf of y, times x.
  %10 = lethe.div %y, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %11 = lethe.erf %10 : tensor<4xf32>
  %12 = lethe.add %11, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %13 = lethe.mul %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %14 = lethe.mul %13, %12 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // sqrt2 / x, not x / sqrt2.
  %15 = lethe.div %sqrt2, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %16 = lethe.erf %15 : tensor<4xf32>
  %17 = lethe.add %16, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %18 = lethe.mul %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %19 = lethe.mul %18, %17 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1, %4, %9, %14, %19 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// x broadcast against a larger half: the product is not x's shape.

// CHECK-LABEL: func.func @broadcast
// CHECK-NOT: lethe.gelu
// CHECK: return
func.func @broadcast(%x: tensor<4xf32>) -> tensor<2x4xf32> {
  %sqrt2 = lethe.constant dense<1.41421354> : tensor<f32>
  %half = lethe.constant dense<5.000000e-01> : tensor<2x4xf32>
  %one = lethe.constant dense<1.000000e+00> : tensor<f32>
  %0 = lethe.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = lethe.erf %0 : tensor<4xf32>
  %2 = lethe.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = lethe.mul %x, %half : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = lethe.mul %3, %2 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %4 : tensor<2x4xf32>
}
