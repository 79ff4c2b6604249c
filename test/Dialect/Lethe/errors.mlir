// RUN: lethe-opt %s -split-input-file -verify-diagnostics

// One case per verifier diagnostic of the dialect, grouped by category.

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

func.func @unary_integer(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<4xi64>'}}
  %0 = lethe.relu %x : tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @unary_dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %0 = lethe.exp %x : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @gelu_approximate(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'lethe.gelu' op approximate must be "none" or "tanh", got "fast"}}
  %0 = lethe.gelu %x {approximate = "fast"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clip_bounds(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'lethe.clip' op min (6.000000e+00) is greater than max (0.000000e+00)}}
  %0 = lethe.clip %x {min = 6.0 : f64, max = 0.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @binary_no_broadcast(%a: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'lethe.add' op operand shapes 'tensor<4x8xf32>' and 'tensor<4xf32>' do not broadcast}}
  %0 = lethe.add %a, %b : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @binary_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'lethe.mul' op operands have different element types ('f32' and 'f16')}}
  %0 = lethe.mul %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @binary_result_type(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'lethe.sub' op result type 'tensor<8xf32>' differs from the inferred 'tensor<4x8xf32>'}}
  %0 = lethe.sub %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @where_no_broadcast(%c: tensor<3xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'lethe.where' op operand shapes 'tensor<3xi1>', 'tensor<4xf32>' and 'tensor<4xf32>' do not broadcast}}
  %0 = lethe.where %c, %a, %a : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @where_element_types(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{'lethe.where' op operands have different element types ('f32' and 'i64')}}
  %0 = lethe.where %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @where_condition(%c: tensor<4xf32>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of i1, but got 'tensor<4xf32>'}}
  %0 = lethe.where %c, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @cast_result(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'lethe.cast' op result type 'tensor<4xf32>' differs from the inferred 'tensor<4xf16>'}}
  %0 = lethe.cast %x {to = f16} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @cast_target(%x: tensor<4xf32>) -> tensor<4xi16> {
  // expected-error @+1 {{'lethe.cast' op attribute 'to' failed to satisfy constraint}}
  %0 = lethe.cast %x {to = i16} : (tensor<4xf32>) -> tensor<4xi16>
  return %0 : tensor<4xi16>
}

//===----------------------------------------------------------------------===//
// Contraction
//===----------------------------------------------------------------------===//

// -----

func.func @matmul_contraction(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'lethe.matmul' op contraction dimensions differ: 'tensor<4x8xf32>' has 8 columns but 'tensor<7x16xf32>' has 7 rows}}
  %0 = lethe.matmul %a, %b : (tensor<4x8xf32>, tensor<7x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{'lethe.matmul' op batch dimensions of 'tensor<2x4x8xf32>' and 'tensor<3x8x16xf32>' do not broadcast}}
  %0 = lethe.matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x16xf32>) -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'lethe.matmul' op operands must have rank 1 or more, got 'tensor<f32>' and 'tensor<8xf32>'}}
  %0 = lethe.matmul %a, %b : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @matmul_element_types(%a: tensor<4x8xf32>, %b: tensor<8x4xf64>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'lethe.matmul' op operands have different element types ('f32' and 'f64')}}
  %0 = lethe.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf64>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
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
