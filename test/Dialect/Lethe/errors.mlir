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
  // expected-error @+1 {{'lethe.clip' op min (6.000000e+00 : f64) is greater than max (0.000000e+00 : f64)}}
  %0 = lethe.clip %x {min = 6.0 : f64, max = 0.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clip_integer_bound_type(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'lethe.clip' op max must be an i64 attribute for elements of type 'i32', got 6.000000e+00 : f64}}
  %0 = lethe.clip %x {max = 6.0 : f64} : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @clip_integer_bound_range(%x: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @+1 {{'lethe.clip' op min (-129) is outside the range of 'i8'}}
  %0 = lethe.clip %x {min = -129 : i64} : tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @clip_unsigned_bound_below(%x: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+1 {{'lethe.clip' op min (-1) is outside the range of 'ui8'}}
  %0 = lethe.clip %x {min = -1 : i64} : tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

func.func @clip_unsigned_bound_above(%x: tensor<4xui16>) -> tensor<4xui16> {
  // expected-error @+1 {{'lethe.clip' op max (65536) is outside the range of 'ui16'}}
  %0 = lethe.clip %x {max = 65536 : i64} : tensor<4xui16>
  return %0 : tensor<4xui16>
}

// -----

func.func @clip_bool(%x: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{'lethe.clip' op operand #0 must be statically shaped tensor of f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32 or ui64, but got 'tensor<4xi1>'}}
  %0 = lethe.clip %x : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @neg_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'lethe.neg' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<4xi32>'}}
  %0 = lethe.neg %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @relu_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'lethe.relu' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<4xi32>'}}
  %0 = lethe.relu %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @sigmoid_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'lethe.sigmoid' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<4xi32>'}}
  %0 = lethe.sigmoid %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @tanh_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'lethe.tanh' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<4xi32>'}}
  %0 = lethe.tanh %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @erf_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'lethe.erf' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<4xi32>'}}
  %0 = lethe.erf %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @exp_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'lethe.exp' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<4xi32>'}}
  %0 = lethe.exp %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @log_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'lethe.log' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<4xi32>'}}
  %0 = lethe.log %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @sqrt_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'lethe.sqrt' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<4xi32>'}}
  %0 = lethe.sqrt %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @leaky_relu_result(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'lethe.leaky_relu' op requires the same type for all operands and results}}
  %0 = "lethe.leaky_relu"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @div_broadcast(%a: tensor<3x4xf32>, %b: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'lethe.div' op operand shapes 'tensor<3x4xf32>' and 'tensor<3xf32>' do not broadcast}}
  %0 = lethe.div %a, %b : (tensor<3x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @pow_bool(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{'lethe.pow' op operand #0 must be statically shaped tensor of f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32 or ui64, but got 'tensor<4xi1>'}}
  %0 = lethe.pow %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
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

func.func @cast_target(%x: tensor<4xf32>) -> tensor<4xi4> {
  // expected-error @+1 {{'lethe.cast' op attribute 'to' failed to satisfy constraint}}
  %0 = lethe.cast %x {to = i4} : (tensor<4xf32>) -> tensor<4xi4>
  return %0 : tensor<4xi4>
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

// -----

func.func @conv_rank(%x: tensor<8x4xf32>, %w: tensor<16x4xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'lethe.conv' op input must have rank 3 to 5 (N, C and 1 to 3 spatial dims), got 'tensor<8x4xf32>'}}
  %0 = lethe.conv %x, %w {dilations = array<i64>, pads = array<i64>, strides = array<i64>} : (tensor<8x4xf32>, tensor<16x4xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @conv_weight_rank(%x: tensor<8x4x8x8xf32>, %w: tensor<16x4x3xf32>) -> tensor<8x16x6x6xf32> {
  // expected-error @+1 {{'lethe.conv' op weight 'tensor<16x4x3xf32>' must have the input's rank 4}}
  %0 = lethe.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<8x4x8x8xf32>, tensor<16x4x3xf32>) -> tensor<8x16x6x6xf32>
  return %0 : tensor<8x16x6x6xf32>
}

// -----

func.func @conv_channels(%x: tensor<8x3x8x8xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<8x16x6x6xf32> {
  // expected-error @+1 {{'lethe.conv' op weight has 4 input channels per group, but the input has 3 channels and group is 1 (expected 3)}}
  %0 = lethe.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<8x3x8x8xf32>, tensor<16x4x3x3xf32>) -> tensor<8x16x6x6xf32>
  return %0 : tensor<8x16x6x6xf32>
}

// -----

func.func @conv_filters_group(%x: tensor<8x4x8x8xf32>, %w: tensor<15x2x3x3xf32>) -> tensor<8x15x6x6xf32> {
  // expected-error @+1 {{'lethe.conv' op weight has 15 filters, which group 2 does not divide}}
  %0 = lethe.conv %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<8x4x8x8xf32>, tensor<15x2x3x3xf32>) -> tensor<8x15x6x6xf32>
  return %0 : tensor<8x15x6x6xf32>
}

// -----

func.func @conv_group(%x: tensor<8x4x8x8xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<8x16x6x6xf32> {
  // expected-error @+1 {{'lethe.conv' op group must be positive, got 0}}
  %0 = lethe.conv %x, %w {dilations = array<i64: 1, 1>, group = 0 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<8x4x8x8xf32>, tensor<16x4x3x3xf32>) -> tensor<8x16x6x6xf32>
  return %0 : tensor<8x16x6x6xf32>
}

// -----

func.func @conv_bias(%x: tensor<8x4x8x8xf32>, %w: tensor<16x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<8x16x6x6xf32> {
  // expected-error @+1 {{'lethe.conv' op bias has 8 elements, expected one per output channel (16)}}
  %0 = lethe.conv %x, %w, %b {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<8x4x8x8xf32>, tensor<16x4x3x3xf32>, tensor<8xf32>) -> tensor<8x16x6x6xf32>
  return %0 : tensor<8x16x6x6xf32>
}

// -----

func.func @conv_bias_rank(%x: tensor<8x4x8x8xf32>, %w: tensor<16x4x3x3xf32>, %b: tensor<16x1xf32>) -> tensor<8x16x6x6xf32> {
  // expected-error @+1 {{'lethe.conv' op bias 'tensor<16x1xf32>' must be a vector of 'f32'}}
  %0 = lethe.conv %x, %w, %b {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<8x4x8x8xf32>, tensor<16x4x3x3xf32>, tensor<16x1xf32>) -> tensor<8x16x6x6xf32>
  return %0 : tensor<8x16x6x6xf32>
}

// -----

func.func @conv_types(%x: tensor<8x4x8x8xf32>, %w: tensor<16x4x3x3xf16>) -> tensor<8x16x6x6xf32> {
  // expected-error @+1 {{'lethe.conv' op operands have different element types ('f32' and 'f16')}}
  %0 = lethe.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<8x4x8x8xf32>, tensor<16x4x3x3xf16>) -> tensor<8x16x6x6xf32>
  return %0 : tensor<8x16x6x6xf32>
}

// -----

func.func @conv_strides(%x: tensor<8x4x8x8xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<8x16x6x6xf32> {
  // expected-error @+1 {{'lethe.conv' op strides and dilations must have 2 entries, got 1 and 2}}
  %0 = lethe.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1>} : (tensor<8x4x8x8xf32>, tensor<16x4x3x3xf32>) -> tensor<8x16x6x6xf32>
  return %0 : tensor<8x16x6x6xf32>
}

// -----

func.func @conv_pads(%x: tensor<8x4x8x8xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<8x16x6x6xf32> {
  // expected-error @+1 {{'lethe.conv' op pads must have 4 entries (all begins, then all ends), got 2}}
  %0 = lethe.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<8x4x8x8xf32>, tensor<16x4x3x3xf32>) -> tensor<8x16x6x6xf32>
  return %0 : tensor<8x16x6x6xf32>
}

// -----

func.func @conv_zero_stride(%x: tensor<8x4x8x8xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<8x16x6x6xf32> {
  // expected-error @+1 {{'lethe.conv' op kernel sizes, strides and dilations must be positive, got 3, 0 and 1 for spatial dim 1}}
  %0 = lethe.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 0>} : (tensor<8x4x8x8xf32>, tensor<16x4x3x3xf32>) -> tensor<8x16x6x6xf32>
  return %0 : tensor<8x16x6x6xf32>
}

// -----

func.func @conv_negative_pad(%x: tensor<8x4x8x8xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<8x16x6x6xf32> {
  // expected-error @+1 {{'lethe.conv' op pads must not be negative, got 0 and -1 for spatial dim 0}}
  %0 = lethe.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, -1, 0>, strides = array<i64: 1, 1>} : (tensor<8x4x8x8xf32>, tensor<16x4x3x3xf32>) -> tensor<8x16x6x6xf32>
  return %0 : tensor<8x16x6x6xf32>
}

// -----

func.func @conv_window(%x: tensor<8x4x2x8xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<8x16x1x6xf32> {
  // expected-error @+1 {{'lethe.conv' op the window (extent 3) is larger than spatial dim 0 (2 plus padding 0)}}
  %0 = lethe.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<8x4x2x8xf32>, tensor<16x4x3x3xf32>) -> tensor<8x16x1x6xf32>
  return %0 : tensor<8x16x1x6xf32>
}

// -----

func.func @conv_result(%x: tensor<8x4x8x8xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<8x16x8x8xf32> {
  // expected-error @+1 {{'lethe.conv' op result type 'tensor<8x16x8x8xf32>' differs from the inferred 'tensor<8x16x6x6xf32>'}}
  %0 = lethe.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<8x4x8x8xf32>, tensor<16x4x3x3xf32>) -> tensor<8x16x8x8xf32>
  return %0 : tensor<8x16x8x8xf32>
}

// -----

func.func @conv_transpose_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<3x2x2x2xf32>) -> tensor<1x2x16x16xf32> {
  // expected-error @+1 {{'lethe.conv_transpose' op weight has 3 input channels (dim 0), but the input has 4}}
  %0 = lethe.conv_transpose %x, %w {dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<3x2x2x2xf32>) -> tensor<1x2x16x16xf32>
  return %0 : tensor<1x2x16x16xf32>
}

// -----

func.func @conv_transpose_group(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x2x2xf32>) -> tensor<1x6x16x16xf32> {
  // expected-error @+1 {{'lethe.conv_transpose' op group 3 does not divide the 4 input channels}}
  %0 = lethe.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 3 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x2x2x2xf32>) -> tensor<1x6x16x16xf32>
  return %0 : tensor<1x6x16x16xf32>
}

// -----

func.func @conv_transpose_lengths(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x2x2xf32>) -> tensor<1x2x16x16xf32> {
  // expected-error @+1 {{'lethe.conv_transpose' op strides, dilations and output_padding must have 2 entries and pads 4, got 2, 2, 1 and 4}}
  %0 = lethe.conv_transpose %x, %w {dilations = array<i64: 1, 1>, output_padding = array<i64: 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x16x16xf32>
  return %0 : tensor<1x2x16x16xf32>
}

// -----

func.func @conv_transpose_values(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x2x2xf32>) -> tensor<1x2x16x16xf32> {
  // expected-error @+1 {{'lethe.conv_transpose' op strides and dilations must be positive and pads and output_padding non-negative (spatial dim 0)}}
  %0 = lethe.conv_transpose %x, %w {dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 0, 2>} : (tensor<1x4x8x8xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x16x16xf32>
  return %0 : tensor<1x2x16x16xf32>
}

// -----

func.func @conv_transpose_output_padding(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x2x2xf32>) -> tensor<1x2x18x16xf32> {
  // expected-error @+1 {{'lethe.conv_transpose' op output_padding 2 of spatial dim 0 must be smaller than its stride (2) or dilation (1)}}
  %0 = lethe.conv_transpose %x, %w {dilations = array<i64: 1, 1>, output_padding = array<i64: 2, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x18x16xf32>
  return %0 : tensor<1x2x18x16xf32>
}

// -----

func.func @conv_transpose_pads(%x: tensor<1x4x1x1xf32>, %w: tensor<4x2x2x2xf32>) -> tensor<1x2x1x1xf32> {
  // expected-error @+1 {{'lethe.conv_transpose' op spatial dim 0 of the output would have size 0 (the pads are larger than the output)}}
  %0 = lethe.conv_transpose %x, %w {dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x1x1xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// -----

func.func @max_pool_storage_order(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xi64> {
  // expected-error @+1 {{'lethe.max_pool_with_indices' op storage_order must be 0 (row-major) or 1 (column-major), got 2}}
  %0, %1 = lethe.max_pool_with_indices %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, storage_order = 2 : i64, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
  return %1 : tensor<1x1x2x2xi64>
}

// -----

func.func @max_pool_indices_type(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xi32> {
  // expected-error @+1 {{'lethe.max_pool_with_indices' op result #1 must be tensor of 64-bit signless integer values, but got 'tensor<1x1x2x2xi32>'}}
  %0, %1 = lethe.max_pool_with_indices %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi32>)
  return %1 : tensor<1x1x2x2xi32>
}

// -----

func.func @max_pool_rank(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'lethe.max_pool' op input must have rank 3 to 5 (N, C and 1 to 3 spatial dims), got 'tensor<8x16xf32>'}}
  %0 = lethe.max_pool %x {dilations = array<i64>, kernel_shape = array<i64>, pads = array<i64>, strides = array<i64>} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @max_pool_kernel(%x: tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'lethe.max_pool' op the kernel has 1 dims, expected 2 (the input's spatial dims)}}
  %0 = lethe.max_pool %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @max_pool_result(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+1 {{'lethe.max_pool' op result type 'tensor<1x1x3x3xf32>' differs from the inferred 'tensor<1x1x2x2xf32>'}}
  %0 = lethe.max_pool %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

func.func @avg_pool_pads(%x: tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'lethe.avg_pool' op pads must have 4 entries (all begins, then all ends), got 3}}
  %0 = lethe.avg_pool %x {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @global_avg_pool_rank(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'lethe.global_avg_pool' op input must have rank 3 to 5 (N, C and 1 to 3 spatial dims), got 'tensor<8xf32>'}}
  %0 = lethe.global_avg_pool %x : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// Normalization, softmax and dropout
//===----------------------------------------------------------------------===//

// -----

func.func @batch_norm_scale(%x: tensor<8x16x4x4xf32>, %c: tensor<16xf32>, %s: tensor<8xf32>) -> tensor<8x16x4x4xf32> {
  // expected-error @+1 {{'lethe.batch_norm' op scale has type 'tensor<8xf32>', expected 'tensor<16xf32>' (one value per channel)}}
  %0 = lethe.batch_norm %x, %s, %c, %c, %c : (tensor<8x16x4x4xf32>, tensor<8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  return %0 : tensor<8x16x4x4xf32>
}

// -----

func.func @batch_norm_rank(%x: tensor<8xf32>, %c: tensor<16xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'lethe.batch_norm' op input must have rank 2 or more (N, C, ...), got 'tensor<8xf32>'}}
  %0 = lethe.batch_norm %x, %c, %c, %c, %c : (tensor<8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @batch_norm_train_variance(%x: tensor<8x16xf32>, %c: tensor<16xf32>, %v: tensor<16xf64>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'lethe.batch_norm_train' op running_variance has type 'tensor<16xf64>', expected 'tensor<16xf32>' (one value per channel)}}
  %0:5 = lethe.batch_norm_train %x, %c, %c, %c, %v : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf64>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %0#0 : tensor<8x16xf32>
}

// -----

func.func @batch_norm_train_momentum(%x: tensor<8x16xf32>, %c: tensor<16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'lethe.batch_norm_train' op momentum must be in [0, 1], got 2.000000e+00}}
  %0:5 = lethe.batch_norm_train %x, %c, %c, %c, %c {momentum = 2.0 : f32} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %0#0 : tensor<8x16xf32>
}

// -----

func.func @layer_norm_axis(%x: tensor<2x5x32xf32>, %s: tensor<32xf32>) -> tensor<2x5x32xf32> {
  // expected-error @+1 {{'lethe.layer_norm' op axis 3 is out of range for rank 3}}
  %0:3 = lethe.layer_norm %x, %s {axis = 3 : i64} : (tensor<2x5x32xf32>, tensor<32xf32>) -> (tensor<2x5x32xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>)
  return %0#0 : tensor<2x5x32xf32>
}

// -----

func.func @layer_norm_scale(%x: tensor<2x5x32xf32>, %s: tensor<5x32xf32>) -> tensor<2x5x32xf32> {
  // expected-error @+1 {{'lethe.layer_norm' op scale has type 'tensor<5x32xf32>', expected 'tensor<32xf32>' (the normalized dims)}}
  %0:3 = lethe.layer_norm %x, %s : (tensor<2x5x32xf32>, tensor<5x32xf32>) -> (tensor<2x5x32xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>)
  return %0#0 : tensor<2x5x32xf32>
}

// -----

func.func @layer_norm_bias(%x: tensor<2x5x32xf32>, %s: tensor<32xf32>, %b: tensor<16xf32>) -> tensor<2x5x32xf32> {
  // expected-error @+1 {{'lethe.layer_norm' op bias has type 'tensor<16xf32>', expected 'tensor<32xf32>' (the normalized dims)}}
  %0:3 = lethe.layer_norm %x, %s, %b : (tensor<2x5x32xf32>, tensor<32xf32>, tensor<16xf32>) -> (tensor<2x5x32xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>)
  return %0#0 : tensor<2x5x32xf32>
}

// -----

func.func @softmax_axis(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'lethe.softmax' op axis 2 is out of range for rank 2}}
  %0 = lethe.softmax %x {axis = 2 : i64} : tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @log_softmax_axis(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'lethe.log_softmax' op axis -3 is out of range for rank 2}}
  %0 = lethe.log_softmax %x {axis = -3 : i64} : tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @dropout_ratio(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'lethe.dropout' op ratio must be in [0, 1), got 1.000000e+00}}
  %0:2 = lethe.dropout %x {ratio = 1.0 : f32, seed = 1 : i64} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi1>)
  return %0#0 : tensor<8xf32>
}

// -----

func.func @dropout_seed(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'lethe.dropout' op requires attribute 'seed'}}
  %0:2 = lethe.dropout %x : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi1>)
  return %0#0 : tensor<8xf32>
}

// -----

func.func @dropout_mask(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'lethe.dropout' op result #1 must be statically shaped tensor of i1, but got 'tensor<8xf32>'}}
  %0:2 = lethe.dropout %x {seed = 1 : i64} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %0#0 : tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// Reduction
//===----------------------------------------------------------------------===//

// -----

func.func @reduce_axis(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'lethe.reduce_sum' op axis 2 is out of range for rank 2}}
  %0 = lethe.reduce_sum %x {axes = array<i64: 2>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @reduce_duplicate(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'lethe.reduce_mean' op axes name dimension 1 twice}}
  %0 = lethe.reduce_mean %x {axes = array<i64: 1, -1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @reduce_result(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'lethe.reduce_max' op result type 'tensor<4xf32>' differs from the inferred 'tensor<4x1xf32>'}}
  %0 = lethe.reduce_max %x {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_bool(%x: tensor<4x8xi1>) -> tensor<4x1xi1> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of f16, bf16, f32, f64, i32, i64, ui32 or ui64, but got 'tensor<4x8xi1>'}}
  %0 = lethe.reduce_sum %x {axes = array<i64: 1>} : (tensor<4x8xi1>) -> tensor<4x1xi1>
  return %0 : tensor<4x1xi1>
}

//===----------------------------------------------------------------------===//
// Tensor (constants, shape and data movement)
//===----------------------------------------------------------------------===//

// -----

func.func @constant_element_type() -> tensor<4xsi32> {
  // expected-error @+1 {{result #0 must be statically shaped tensor of}}
  %0 = lethe.constant dense<1> : tensor<4xsi32>
  return %0 : tensor<4xsi32>
}

// -----

func.func @constant_result_type() -> tensor<2xf32> {
  // expected-error @+1 {{'lethe.constant' op result type 'tensor<2xf32>' differs from the inferred 'tensor<4xf32>'}}
  %0 = "lethe.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reshape_two_inferred(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'lethe.reshape' op shape [2, -1, -1] has more than one -1}}
  %0 = lethe.reshape %x {shape = array<i64: 2, -1, -1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

func.func @reshape_negative(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  // expected-error @+1 {{'lethe.reshape' op shape[1] is -12, but dimensions must be >= 0 or -1}}
  %0 = lethe.reshape %x {shape = array<i64: 2, -12>} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  return %0 : tensor<2x12xf32>
}

// -----

func.func @reshape_allowzero_inferred(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  // expected-error @+1 {{'lethe.reshape' op shape [0, -1] has both 0 and -1, which allowzero forbids}}
  %0 = lethe.reshape %x {allowzero, shape = array<i64: 0, -1>} : (tensor<0x4xf32>) -> tensor<0x4xf32>
  return %0 : tensor<0x4xf32>
}

// -----

func.func @reshape_copy_rank(%x: tensor<24xf32>) -> tensor<24x1xf32> {
  // expected-error @+1 {{'lethe.reshape' op shape[1] is 0, which copies the input dimension at that index, but the input 'tensor<24xf32>' has rank 1}}
  %0 = lethe.reshape %x {shape = array<i64: 24, 0>} : (tensor<24xf32>) -> tensor<24x1xf32>
  return %0 : tensor<24x1xf32>
}

// -----

func.func @reshape_inferred_empty(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  // expected-error @+1 {{'lethe.reshape' op cannot infer the -1 in shape [0, -1]: the other dimensions have 0 elements}}
  %0 = lethe.reshape %x {shape = array<i64: 0, -1>} : (tensor<0x4xf32>) -> tensor<0x4xf32>
  return %0 : tensor<0x4xf32>
}

// -----

func.func @reshape_inferred_count(%x: tensor<2x3x4xf32>) -> tensor<5x5xf32> {
  // expected-error @+1 {{'lethe.reshape' op cannot infer the -1 in shape [5, -1]: the input 'tensor<2x3x4xf32>' has 24 elements, not a multiple of 5 (the product of the other dimensions)}}
  %0 = lethe.reshape %x {shape = array<i64: 5, -1>} : (tensor<2x3x4xf32>) -> tensor<5x5xf32>
  return %0 : tensor<5x5xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x3x4xf32>) -> tensor<2x0x5xf32> {
  // expected-error @+1 {{'lethe.reshape' op shape [0, 0, 5] has 30 elements, but the input 'tensor<2x3x4xf32>' has 24}}
  %0 = lethe.reshape %x {shape = array<i64: 0, 0, 5>} : (tensor<2x3x4xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

func.func @reshape_overflow(%x: tensor<2x3x4xf32>) -> tensor<24xf32> {
  // expected-error @+1 {{'lethe.reshape' op shape [4294967296, 4294967296, -1] has more elements than int64 can count}}
  %0 = lethe.reshape %x {shape = array<i64: 4294967296, 4294967296, -1>} : (tensor<2x3x4xf32>) -> tensor<24xf32>
  return %0 : tensor<24xf32>
}

// -----

func.func @reshape_result(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{'lethe.reshape' op result type 'tensor<4x6xf32>' differs from the inferred 'tensor<6x4xf32>'}}
  %0 = lethe.reshape %x {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @flatten_axis(%x: tensor<2x3x4xf32>) -> tensor<24x1xf32> {
  // expected-error @+1 {{'lethe.flatten' op axis -4 is out of range [-3, 3] for rank 3}}
  %0 = lethe.flatten %x {axis = -4 : i64} : (tensor<2x3x4xf32>) -> tensor<24x1xf32>
  return %0 : tensor<24x1xf32>
}

// -----

func.func @transpose_length(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  // expected-error @+1 {{'lethe.transpose' op perm [1, 0] has 2 entries, but the input 'tensor<2x3x4xf32>' has rank 3}}
  %0 = lethe.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>
}

// -----

func.func @transpose_range(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'lethe.transpose' op perm entry -1 is out of range [0, 2)}}
  %0 = lethe.transpose %x {perm = array<i64: -1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @transpose_repeated(%x: tensor<2x3x4xf32>) -> tensor<2x3x2xf32> {
  // expected-error @+1 {{'lethe.transpose' op perm [0, 1, 0] is not a permutation: 0 appears twice}}
  %0 = lethe.transpose %x {perm = array<i64: 0, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<2x3x2xf32>
  return %0 : tensor<2x3x2xf32>
}

// -----

func.func @concat_empty() -> tensor<2xf32> {
  // expected-error @+1 {{'lethe.concat' op needs at least one input}}
  %0 = lethe.concat {axis = 0 : i64} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'lethe.concat' op axis 2 is out of range for rank 2}}
  %0 = lethe.concat %a, %a {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_element_type(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'lethe.concat' op input #1 has element type 'f16', but input #0 has 'f32'}}
  %0 = lethe.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'lethe.concat' op input #2 'tensor<2x3x1xf32>' has rank 3, but input #0 'tensor<2x3xf32>' has rank 2}}
  %0 = lethe.concat %a, %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3x1xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'lethe.concat' op input #1 'tensor<2x4xf32>' has size 4 in dimension 1, but input #0 'tensor<2x3xf32>' has size 3 (only the concatenation axis 0 may differ)}}
  %0 = lethe.concat %a, %b {axis = -2 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @split_empty(%x: tensor<4xf32>) {
  // expected-error @+1 {{'lethe.split' op split must have at least one size}}
  lethe.split %x {split = array<i64>} : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @split_negative(%x: tensor<4xf32>) -> (tensor<6xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'lethe.split' op split[1] is -2, but sizes must be non-negative}}
  %0:2 = "lethe.split"(%x) <{axis = 0 : i64, split = array<i64: 6, -2>}> : (tensor<4xf32>) -> (tensor<6xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<6xf32>, tensor<4xf32>
}

// -----

func.func @split_sum(%x: tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x5xf32>) {
  // expected-error @+1 {{'lethe.split' op split sizes [2, 5] sum to 7, but dimension 1 of the input 'tensor<4x8xf32>' has size 8}}
  %0:2 = lethe.split %x {axis = -1 : i64, split = array<i64: 2, 5>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x5xf32>)
  return %0#0, %0#1 : tensor<4x2xf32>, tensor<4x5xf32>
}

// -----

func.func @split_overflow(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'lethe.split' op split sizes [4611686018427387904, 4611686018427387904] sum to more than int64 can count}}
  %0:2 = "lethe.split"(%x) <{axis = 0 : i64, split = array<i64: 4611686018427387904, 4611686018427387904>}> : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @split_results(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'lethe.split' op result type 'tensor<2xf32>' differs from the inferred 'tensor<2xf32>', 'tensor<2xf32>'}}
  %0 = lethe.split %x {split = array<i64: 2, 2>} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @split_axis(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'lethe.split' op axis 1 is out of range for rank 1}}
  %0 = lethe.split %x {axis = 1 : i64, split = array<i64: 4>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @slice_lengths(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lethe.slice' op starts, ends, axes and steps have 1, 1, 2 and 1 entries, but they must have the same length}}
  %0 = lethe.slice %x {starts = array<i64: 1>, ends = array<i64: 3>, axes = array<i64: 0, 1>, steps = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_axis(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lethe.slice' op axis -3 is out of range for rank 2}}
  %0 = lethe.slice %x {starts = array<i64: 1>, ends = array<i64: 3>, axes = array<i64: -3>, steps = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_repeated_axis(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'lethe.slice' op axes [1, -1] name dimension 1 twice}}
  %0 = lethe.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 2>, axes = array<i64: 1, -1>, steps = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @slice_step(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'lethe.slice' op steps[1] is 0, but steps must be non-zero}}
  %0 = lethe.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 4, 2>, axes = array<i64: 0, 1>, steps = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @slice_result(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'lethe.slice' op result type 'tensor<4x3xf32>' differs from the inferred 'tensor<4x4xf32>'}}
  %0 = lethe.slice %x {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, axes = array<i64: 1>, steps = array<i64: -2>} : (tensor<4x8xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @gather_axis(%data: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<10x3xf32> {
  // expected-error @+1 {{'lethe.gather' op axis 2 is out of range for rank 2}}
  %0 = lethe.gather %data, %i {axis = 2 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<10x3xf32>
  return %0 : tensor<10x3xf32>
}

// -----

func.func @gather_indices(%data: tensor<10x4xf32>, %i: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of i32 or i64}}
  %0 = lethe.gather %data, %i : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @squeeze_size(%x: tensor<1x3x1xf32>) -> tensor<1x1xf32> {
  // expected-error @+1 {{'lethe.squeeze' op dimension 1 of the input 'tensor<1x3x1xf32>' has size 3, not 1, so it cannot be squeezed}}
  %0 = lethe.squeeze %x {axes = array<i64: 1>} : (tensor<1x3x1xf32>) -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}

// -----

func.func @squeeze_axis(%x: tensor<1x3x1xf32>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'lethe.squeeze' op axis 3 is out of range for rank 3}}
  %0 = lethe.squeeze %x {axes = array<i64: 3>} : (tensor<1x3x1xf32>) -> tensor<3x1xf32>
  return %0 : tensor<3x1xf32>
}

// -----

func.func @squeeze_result(%x: tensor<1x3x1xf32>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'lethe.squeeze' op result type 'tensor<3x1xf32>' differs from the inferred 'tensor<3xf32>'}}
  %0 = lethe.squeeze %x : (tensor<1x3x1xf32>) -> tensor<3x1xf32>
  return %0 : tensor<3x1xf32>
}

// -----

func.func @unsqueeze_axis(%x: tensor<3x4xf32>) -> tensor<3x4x1xf32> {
  // expected-error @+1 {{'lethe.unsqueeze' op result axis 3 is out of range for rank 3}}
  %0 = lethe.unsqueeze %x {axes = array<i64: 3>} : (tensor<3x4xf32>) -> tensor<3x4x1xf32>
  return %0 : tensor<3x4x1xf32>
}

// -----

func.func @unsqueeze_repeated(%x: tensor<3x4xf32>) -> tensor<3x4x1x1xf32> {
  // expected-error @+1 {{'lethe.unsqueeze' op axes [3, -1] name dimension 3 twice}}
  %0 = lethe.unsqueeze %x {axes = array<i64: 3, -1>} : (tensor<3x4xf32>) -> tensor<3x4x1x1xf32>
  return %0 : tensor<3x4x1x1xf32>
}

// -----

func.func @expand_negative(%x: tensor<3x1xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'lethe.expand' op shape[0] is -1, but dimensions must be non-negative}}
  %0 = lethe.expand %x {shape = array<i64: -1, 4>} : (tensor<3x1xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @expand_broadcast(%x: tensor<3x1xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'lethe.expand' op input 'tensor<3x1xf32>' and shape [2, 4] do not broadcast}}
  %0 = lethe.expand %x {shape = array<i64: 2, 4>} : (tensor<3x1xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @resize_rank(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32> {
  // expected-error @+1 {{'lethe.resize' op scales has 2 entries, but the input 'tensor<1x3x8x8xf32>' has rank 4}}
  %0 = lethe.resize %x {scales = array<f64: 2.0, 2.0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
  return %0 : tensor<1x3x16x16xf32>
}

// -----

func.func @resize_scale(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32> {
  // expected-error @+1 {{'lethe.resize' op scales[1] is 0.000000e+00, but scales must be positive and finite}}
  %0 = lethe.resize %x {scales = array<f64: 1.0, 0.0, 2.0, 2.0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
  return %0 : tensor<1x3x16x16xf32>
}

// -----

func.func @resize_empty(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x0x8xf32> {
  // expected-error @+1 {{'lethe.resize' op scales[2] = 1.000000e-01 resizes dimension 2 of size 8 to 0 elements}}
  %0 = lethe.resize %x {scales = array<f64: 1.0, 1.0, 0.1, 1.0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x0x8xf32>
  return %0 : tensor<1x3x0x8xf32>
}

// -----

func.func @resize_overflow(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  // expected-error @+1 {{'lethe.resize' op scales[3] = 1.000000e+300 resizes dimension 3 of size 8 beyond the range of int64}}
  %0 = lethe.resize %x {scales = array<f64: 1.0, 1.0, 1.0, 1.0e300>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @resize_transformation(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32> {
  // expected-error @+1 {{'lethe.resize' op coordinate_transformation_mode must be "half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn" or "tf_crop_and_resize", got "center"}}
  %0 = lethe.resize %x {coordinate_transformation_mode = "center", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
  return %0 : tensor<1x3x16x16xf32>
}

// -----

func.func @resize_mode(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32> {
  // expected-error @+1 {{'lethe.resize' op mode must be "nearest", "linear" or "cubic", got "bilinear"}}
  %0 = lethe.resize %x {mode = "bilinear", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
  return %0 : tensor<1x3x16x16xf32>
}

// -----

func.func @resize_linear_integer(%x: tensor<1x3x8x8xi64>) -> tensor<1x3x16x16xi64> {
  // expected-error @+1 {{'lethe.resize' op mode "linear" needs a floating-point input, got 'tensor<1x3x8x8xi64>'}}
  %0 = lethe.resize %x {mode = "linear", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x3x8x8xi64>) -> tensor<1x3x16x16xi64>
  return %0 : tensor<1x3x16x16xi64>
}

// -----

func.func @resize_crop_without_roi(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32> {
  // expected-error @+1 {{'lethe.resize' op coordinate_transformation_mode "tf_crop_and_resize" needs a roi}}
  %0 = lethe.resize %x {coordinate_transformation_mode = "tf_crop_and_resize", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
  return %0 : tensor<1x3x16x16xf32>
}

// -----

func.func @resize_roi_without_crop(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32> {
  // expected-error @+1 {{'lethe.resize' op roi is only used with coordinate_transformation_mode "tf_crop_and_resize", not "half_pixel"}}
  %0 = lethe.resize %x {roi = array<f64: 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
  return %0 : tensor<1x3x16x16xf32>
}

// -----

func.func @resize_roi_size(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32> {
  // expected-error @+1 {{'lethe.resize' op roi has 4 entries, but needs 8 (a start and an end per dimension of the input)}}
  %0 = lethe.resize %x {coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.0, 0.0, 1.0, 1.0>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
  return %0 : tensor<1x3x16x16xf32>
}

// -----

func.func @resize_nearest_mode(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32> {
  // expected-error @+1 {{'lethe.resize' op nearest_mode must be "round_prefer_floor", "round_prefer_ceil", "floor" or "ceil", got "round"}}
  %0 = lethe.resize %x {nearest_mode = "round", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
  return %0 : tensor<1x3x16x16xf32>
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

// -----

func.func @sce_rank(%s: tensor<8xf32>, %l: tensor<8xi64>) -> tensor<f32> {
  // expected-error @+1 {{'lethe.softmax_cross_entropy' op scores must have rank 2 or more (N, C, ...), got 'tensor<8xf32>'}}
  %0:2 = lethe.softmax_cross_entropy %s, %l : (tensor<8xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<8xf32>)
  return %0#0 : tensor<f32>
}

// -----

func.func @sce_labels(%s: tensor<8x10xf32>, %l: tensor<4xi64>) -> tensor<f32> {
  // expected-error @+1 {{'lethe.softmax_cross_entropy' op labels of type 'tensor<4xi64>' must have the shape of scores without its class axis 1 ('tensor<8xi64>')}}
  %0:2 = lethe.softmax_cross_entropy %s, %l : (tensor<8x10xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<8x10xf32>)
  return %0#0 : tensor<f32>
}

// -----

func.func @sce_weights(%s: tensor<8x10xf32>, %l: tensor<8xi64>, %w: tensor<8xf32>) -> tensor<f32> {
  // expected-error @+1 {{'lethe.softmax_cross_entropy' op weights of type 'tensor<8xf32>' must be a vector of the 10 classes of 'f32'}}
  %0:2 = lethe.softmax_cross_entropy %s, %l, %w : (tensor<8x10xf32>, tensor<8xi64>, tensor<8xf32>) -> (tensor<f32>, tensor<8x10xf32>)
  return %0#0 : tensor<f32>
}

// -----

func.func @sce_reduction(%s: tensor<8x10xf32>, %l: tensor<8xi64>) -> tensor<f32> {
  // expected-error @+1 {{'lethe.softmax_cross_entropy' op reduction must be "mean", "sum" or "none", got "max"}}
  %0:2 = lethe.softmax_cross_entropy %s, %l {reduction = "max"} : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<8x10xf32>)
  return %0#0 : tensor<f32>
}

// -----

func.func @sce_label_type(%s: tensor<8x10xf32>, %l: tensor<8xf32>) -> tensor<f32> {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of i32 or i64, but got 'tensor<8xf32>'}}
  %0:2 = lethe.softmax_cross_entropy %s, %l : (tensor<8x10xf32>, tensor<8xf32>) -> (tensor<f32>, tensor<8x10xf32>)
  return %0#0 : tensor<f32>
}

// -----

func.func @nll_target(%x: tensor<8x10x3xf32>, %t: tensor<8xi64>) -> tensor<f32> {
  // expected-error @+1 {{'lethe.nll' op target of type 'tensor<8xi64>' must have the shape of input without its class axis 1 ('tensor<8x3xi64>')}}
  %0 = lethe.nll %x, %t : (tensor<8x10x3xf32>, tensor<8xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @nll_result(%x: tensor<8x10xf32>, %t: tensor<8xi64>) -> tensor<f32> {
  // expected-error @+1 {{'lethe.nll' op result type 'tensor<f32>' differs from the inferred 'tensor<8xf32>'}}
  %0 = lethe.nll %x, %t {reduction = "none"} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @mse_types(%a: tensor<8x4xf32>, %b: tensor<8x3xf32>) -> tensor<f32> {
  // expected-error @+1 {{'lethe.mse' op predictions 'tensor<8x4xf32>' and targets 'tensor<8x3xf32>' must have the same type}}
  %0 = lethe.mse %a, %b : (tensor<8x4xf32>, tensor<8x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

func.func @sgd_update_rate_rank(%lr: tensor<1xf32>, %x: tensor<5x3xf32>, %g: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.sgd_update' op learning_rate must be a scalar (rank 0), got 'tensor<1xf32>'}}
  %0 = lethe.sgd_update %lr, %x, %g : (tensor<1xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @sgd_update_rate_type(%lr: tensor<f16>, %x: tensor<5x3xf32>, %g: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of f32 or f64, but got 'tensor<f16>'}}
  %0 = lethe.sgd_update %lr, %x, %g : (tensor<f16>, tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @sgd_update_integer(%lr: tensor<f32>, %x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<4xi32>'}}
  %0 = lethe.sgd_update %lr, %x, %x : (tensor<f32>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @sgd_update_gradient_type(%lr: tensor<f32>, %x: tensor<5x3xf32>, %g: tensor<3x5xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.sgd_update' op gradient of type 'tensor<3x5xf32>' must have the type of x, 'tensor<5x3xf32>'}}
  %0 = lethe.sgd_update %lr, %x, %g : (tensor<f32>, tensor<5x3xf32>, tensor<3x5xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @sgd_update_result_type(%lr: tensor<f32>, %x: tensor<5x3xf32>) -> tensor<5x3xf64> {
  // expected-error @+1 {{'lethe.sgd_update' op result type 'tensor<5x3xf64>' differs from the inferred 'tensor<5x3xf32>'}}
  %0 = lethe.sgd_update %lr, %x, %x : (tensor<f32>, tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf64>
  return %0 : tensor<5x3xf64>
}

// -----

func.func @momentum_update_step_rank(%lr: tensor<f32>, %t: tensor<1xi64>, %x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.momentum_update' op step must be a scalar (rank 0), got 'tensor<1xi64>'}}
  %0:2 = lethe.momentum_update %lr, %t, %x, %x, %x {alpha = 0.9 : f32, beta = 1.0 : f32} : (tensor<f32>, tensor<1xi64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

// -----

func.func @momentum_update_step_type(%lr: tensor<f32>, %t: tensor<i32>, %x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of i64, but got 'tensor<i32>'}}
  %0:2 = lethe.momentum_update %lr, %t, %x, %x, %x {alpha = 0.9 : f32, beta = 1.0 : f32} : (tensor<f32>, tensor<i32>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

// -----

func.func @momentum_update_mode(%lr: tensor<f32>, %t: tensor<i64>, %x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.momentum_update' op mode must be "standard" or "nesterov", got "heavy_ball"}}
  %0:2 = lethe.momentum_update %lr, %t, %x, %x, %x {alpha = 0.9 : f32, beta = 1.0 : f32, mode = "heavy_ball"} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

// -----

func.func @momentum_update_alpha(%lr: tensor<f32>, %t: tensor<i64>, %x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.momentum_update' op requires attribute 'alpha'}}
  %0:2 = lethe.momentum_update %lr, %t, %x, %x, %x {beta = 1.0 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

// -----

func.func @momentum_update_state_type(%lr: tensor<f32>, %t: tensor<i64>, %x: tensor<5x3xf32>, %v: tensor<5x3xf64>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.momentum_update' op momentum of type 'tensor<5x3xf64>' must have the type of x, 'tensor<5x3xf32>'}}
  %0:2 = lethe.momentum_update %lr, %t, %x, %x, %v {alpha = 0.9 : f32, beta = 1.0 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf64>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

// -----

func.func @adagrad_update_state_type(%lr: tensor<f32>, %t: tensor<i64>, %x: tensor<5x3xf32>, %h: tensor<15xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.adagrad_update' op squared_sum of type 'tensor<15xf32>' must have the type of x, 'tensor<5x3xf32>'}}
  %0:2 = lethe.adagrad_update %lr, %t, %x, %x, %h : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<15xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

// -----

func.func @adam_update_second_moment_type(%lr: tensor<f32>, %t: tensor<i64>, %x: tensor<5x3xf32>, %h: tensor<5x3xbf16>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.adam_update' op second_moment of type 'tensor<5x3xbf16>' must have the type of x, 'tensor<5x3xf32>'}}
  %0:3 = lethe.adam_update %lr, %t, %x, %x, %x, %h : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xbf16>) -> (tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

// -----

func.func @sgd_update_norm_coefficient(%lr: tensor<f32>, %x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.sgd_update' op norm_coefficient must be >= 0 and finite, got -0.01}}
  %0 = lethe.sgd_update %lr, %x, %x {norm_coefficient = -1.0e-02 : f32} : (tensor<f32>, tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @momentum_update_alpha_nan(%lr: tensor<f32>, %t: tensor<i64>, %x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.momentum_update' op alpha must be >= 0 and finite, got nan}}
  %0:2 = lethe.momentum_update %lr, %t, %x, %x, %x {alpha = 0x7FC00000 : f32, beta = 1.0 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

// -----

func.func @momentum_update_beta(%lr: tensor<f32>, %t: tensor<i64>, %x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.momentum_update' op beta must be >= 0 and finite, got -1}}
  %0:2 = lethe.momentum_update %lr, %t, %x, %x, %x {alpha = 0.9 : f32, beta = -1.0 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

// -----

func.func @adagrad_update_decay_factor(%lr: tensor<f32>, %t: tensor<i64>, %x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.adagrad_update' op decay_factor must be >= 0 and finite, got inf}}
  %0:2 = lethe.adagrad_update %lr, %t, %x, %x, %x {decay_factor = 0x7F800000 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

// -----

func.func @adagrad_update_epsilon(%lr: tensor<f32>, %t: tensor<i64>, %x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.adagrad_update' op epsilon must be >= 0 and finite, got -1e-10}}
  %0:2 = lethe.adagrad_update %lr, %t, %x, %x, %x {epsilon = -1.0e-10 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

// -----

func.func @adam_update_alpha(%lr: tensor<f32>, %t: tensor<i64>, %x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.adam_update' op alpha must be in [0, 1), got 1}}
  %0:3 = lethe.adam_update %lr, %t, %x, %x, %x, %x {alpha = 1.0 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

// -----

func.func @adam_update_beta(%lr: tensor<f32>, %t: tensor<i64>, %x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.adam_update' op beta must be in [0, 1), got -0.5}}
  %0:3 = lethe.adam_update %lr, %t, %x, %x, %x, %x {beta = -0.5 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

// -----

func.func @adam_update_epsilon(%lr: tensor<f32>, %t: tensor<i64>, %x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.adam_update' op epsilon must be >= 0 and finite, got -1e-08}}
  %0:3 = lethe.adam_update %lr, %t, %x, %x, %x, %x {epsilon = -1.0e-08 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

// -----

func.func @adam_update_weight_decay(%lr: tensor<f32>, %t: tensor<i64>, %x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.adam_update' op weight_decay must be >= 0 and finite, got -inf}}
  %0:3 = lethe.adam_update %lr, %t, %x, %x, %x, %x {weight_decay = 0xFF800000 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

// -----

func.func @adam_update_norm_coefficient_post(%lr: tensor<f32>, %t: tensor<i64>, %x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'lethe.adam_update' op norm_coefficient_post must be >= 0 and finite, got -2}}
  %0:3 = lethe.adam_update %lr, %t, %x, %x, %x, %x {norm_coefficient_post = -2.0 : f32} : (tensor<f32>, tensor<i64>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<5x3xf32>
}

//===----------------------------------------------------------------------===//
// Contraction: gemm
//===----------------------------------------------------------------------===//

// -----

func.func @gemm_rank(%a: tensor<8xf32>, %b: tensor<8x4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{'lethe.gemm' op operands a and b must be matrices, got 'tensor<8xf32>' and 'tensor<8x4xf32>'}}
  %0 = lethe.gemm %a, %b : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @gemm_contraction(%a: tensor<8x32xf32>, %b: tensor<64x32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'lethe.gemm' op contraction dimensions differ: op(a) is 8x32 and op(b) is 64x32 (after trans_a = 0, trans_b = 0)}}
  %0 = lethe.gemm %a, %b : (tensor<8x32xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

func.func @gemm_element_types(%a: tensor<8x32xf32>, %b: tensor<32x4xf64>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'lethe.gemm' op operands have different element types ('f32' and 'f64')}}
  %0 = lethe.gemm %a, %b : (tensor<8x32xf32>, tensor<32x4xf64>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @gemm_bias(%a: tensor<8x32xf32>, %b: tensor<32x4xf32>, %c: tensor<8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'lethe.gemm' op c of type 'tensor<8xf32>' does not broadcast to the result 'tensor<8x4xf32>'}}
  %0 = lethe.gemm %a, %b, %c : (tensor<8x32xf32>, tensor<32x4xf32>, tensor<8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @gemm_bias_type(%a: tensor<8x32xf32>, %b: tensor<32x4xf32>, %c: tensor<4xf16>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'lethe.gemm' op c has element type 'f16', expected 'f32'}}
  %0 = lethe.gemm %a, %b, %c : (tensor<8x32xf32>, tensor<32x4xf32>, tensor<4xf16>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @gelu_grad_approximation(%dy: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'lethe.gelu_grad' op approximate must be "none" or "tanh", got "erf"}}
  %0 = lethe.gelu_grad %dy, %x {approximate = "erf"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @relu_grad_types(%dy: tensor<4xf32>, %y: tensor<4xf64>) -> tensor<4xf32> {
  // expected-error @+1 {{'lethe.relu_grad' op requires the same type for all operands and results}}
  %0 = "lethe.relu_grad"(%dy, %y) : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @softmax_cross_entropy_grad_loss_type(%dloss: tensor<8xf32>, %lp: tensor<8x10xf32>, %labels: tensor<8xi64>) -> tensor<8x10xf32> {
  // expected-error @+1 {{'lethe.softmax_cross_entropy_grad' op loss_grad of type 'tensor<8xf32>' must have the type of the loss, 'tensor<f32>'}}
  %0 = lethe.softmax_cross_entropy_grad %dloss, %lp, %labels : (tensor<8xf32>, tensor<8x10xf32>, tensor<8xi64>) -> tensor<8x10xf32>
  return %0 : tensor<8x10xf32>
}

// -----

func.func @nll_grad_labels(%dloss: tensor<f32>, %labels: tensor<4xi64>) -> tensor<8x10xf32> {
  // expected-error @+1 {{'lethe.nll_grad' op target of type 'tensor<4xi64>' must have the shape of input_grad without its class axis 1 ('tensor<8xi64>')}}
  %0 = lethe.nll_grad %dloss, %labels : (tensor<f32>, tensor<4xi64>) -> tensor<8x10xf32>
  return %0 : tensor<8x10xf32>
}

// -----

func.func @nll_grad_reduction(%dloss: tensor<f32>, %labels: tensor<8xi64>) -> tensor<8x10xf32> {
  // expected-error @+1 {{'lethe.nll_grad' op loss_grad of type 'tensor<f32>' must have the type of the loss, 'tensor<8xf32>'}}
  %0 = lethe.nll_grad %dloss, %labels {reduction = "none"} : (tensor<f32>, tensor<8xi64>) -> tensor<8x10xf32>
  return %0 : tensor<8x10xf32>
}

// -----

func.func @conv_grad_weight_output_grad(%x: tensor<2x4x6x6xf32>, %dy: tensor<2x4x4x4xf32>) -> tensor<4x2x3x3xf32> {
  // expected-error @+1 {{'lethe.conv_grad_weight' op output_grad 'tensor<2x4x4x4xf32>' is not the type of the convolution's output ('tensor<2x4x3x3xf32>')}}
  %0 = lethe.conv_grad_weight %x, %dy {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x6x6xf32>, tensor<2x4x4x4xf32>) -> tensor<4x2x3x3xf32>
  return %0 : tensor<4x2x3x3xf32>
}

// -----

func.func @conv_grad_weight_channels(%x: tensor<2x4x6x6xf32>, %dy: tensor<2x4x3x3xf32>) -> tensor<4x4x3x3xf32> {
  // expected-error @+1 {{'lethe.conv_grad_weight' op weight has 4 input channels per group, but the input has 4 channels and group is 2 (expected 2)}}
  %0 = lethe.conv_grad_weight %x, %dy {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x6x6xf32>, tensor<2x4x3x3xf32>) -> tensor<4x4x3x3xf32>
  return %0 : tensor<4x4x3x3xf32>
}

// -----

func.func @max_pool_grad_shape(%dy: tensor<2x4x2x2xf32>, %x: tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{'lethe.max_pool_grad' op output_grad 'tensor<2x4x2x2xf32>' is not the type of the pooling's output ('tensor<2x4x3x3xf32>')}}
  %0 = lethe.max_pool_grad %dy, %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x4x2x2xf32>, tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  return %0 : tensor<2x4x6x6xf32>
}

// -----

func.func @avg_pool_grad_shape(%dy: tensor<2x4x3x3xf32>) -> tensor<2x4x8x8xf32> {
  // expected-error @+1 {{'lethe.avg_pool_grad' op output_grad 'tensor<2x4x3x3xf32>' is not the type of the pooling's output ('tensor<2x4x4x4xf32>')}}
  %0 = lethe.avg_pool_grad %dy {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x4x3x3xf32>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

func.func @batch_norm_grad_stats(%dy: tensor<2x4x3x3xf32>, %x: tensor<2x4x3x3xf32>, %c: tensor<4xf32>, %bad: tensor<3xf32>) -> tensor<2x4x3x3xf32> {
  // expected-error @+1 {{'lethe.batch_norm_grad' op saved_inv_std has type 'tensor<3xf32>', expected 'tensor<4xf32>' (one value per channel)}}
  %0:3 = lethe.batch_norm_grad %dy, %x, %c, %c, %bad : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>) -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<2x4x3x3xf32>
}

// -----

func.func @batch_norm_grad_output_grad(%dy: tensor<2x4x3x3xf64>, %x: tensor<2x4x3x3xf32>, %c: tensor<4xf32>) -> tensor<2x4x3x3xf32> {
  // expected-error @+1 {{'lethe.batch_norm_grad' op output_grad has type 'tensor<2x4x3x3xf64>', expected 'tensor<2x4x3x3xf32>' (the input's)}}
  %0:3 = lethe.batch_norm_grad %dy, %x, %c, %c, %c : (tensor<2x4x3x3xf64>, tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<2x4x3x3xf32>
}

// -----

func.func @layer_norm_grad_statistics(%t: tensor<2x6x4xf32>, %s: tensor<4xf32>, %stat: tensor<2x1x1xf32>) -> tensor<2x6x4xf32> {
  // expected-error @+1 {{'lethe.layer_norm_grad' op mean has type 'tensor<2x1x1xf32>', expected 'tensor<2x6x1xf32>' (the statistics)}}
  %0:3 = lethe.layer_norm_grad %t, %t, %s, %stat, %stat : (tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) -> (tensor<2x6x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<2x6x4xf32>
}

// -----

func.func @layer_norm_grad_scale(%t: tensor<2x6x4xf32>, %s: tensor<6x4xf32>, %stat: tensor<2x6x1xf32>) -> tensor<2x6x4xf32> {
  // expected-error @+1 {{'lethe.layer_norm_grad' op scale has type 'tensor<6x4xf32>', expected 'tensor<4xf32>' (the normalized dims)}}
  %0:3 = lethe.layer_norm_grad %t, %t, %s, %stat, %stat : (tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<6x4xf32>, tensor<2x6x1xf32>, tensor<2x6x1xf32>) -> (tensor<2x6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>)
  return %0#0 : tensor<2x6x4xf32>
}

// -----

func.func @resize_grad_shape(%dy: tensor<1x2x5x6xf32>) -> tensor<1x2x3x3xf32> {
  // expected-error @+1 {{'lethe.resize_grad' op output_grad 'tensor<1x2x5x6xf32>' is not the type of the resize's output ('tensor<1x2x6x6xf32>')}}
  %0 = lethe.resize_grad %dy {scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x2x5x6xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

func.func @resize_grad_mode(%dy: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  // expected-error @+1 {{'lethe.resize_grad' op mode must be "nearest", "linear" or "cubic", got "area"}}
  %0 = lethe.resize_grad %dy {mode = "area", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

func.func @slice_grad_shape(%dy: tensor<2x3xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'lethe.slice_grad' op output_grad 'tensor<2x3xf32>' is not the type of the slice's output ('tensor<2x4xf32>')}}
  %0 = lethe.slice_grad %dy {axes = array<i64: 0, -1>, ends = array<i64: 3, -9223372036854775808>, starts = array<i64: 1, -1>, steps = array<i64: 1, -2>} : (tensor<2x3xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @gather_grad_shape(%dy: tensor<8x16x32xf32>, %ids: tensor<8x16xi64>) -> tensor<1000x64xf32> {
  // expected-error @+1 {{'lethe.gather_grad' op output_grad 'tensor<8x16x32xf32>' is not the type of the gather's output ('tensor<8x16x64xf32>')}}
  %0 = lethe.gather_grad %dy, %ids : (tensor<8x16x32xf32>, tensor<8x16xi64>) -> tensor<1000x64xf32>
  return %0 : tensor<1000x64xf32>
}

// -----

func.func @gather_grad_axis(%dy: tensor<8x16x64xf32>, %ids: tensor<8x16xi64>) -> tensor<1000x64xf32> {
  // expected-error @+1 {{'lethe.gather_grad' op axis 2 is out of range for rank 2}}
  %0 = lethe.gather_grad %dy, %ids {axis = 2 : i64} : (tensor<8x16x64xf32>, tensor<8x16xi64>) -> tensor<1000x64xf32>
  return %0 : tensor<1000x64xf32>
}

// -----

func.func @clip_grad_reversed(%dy: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'lethe.clip_grad' op min (6.000000e+00) is greater than max (0.000000e+00)}}
  %0 = lethe.clip_grad %dy, %x {min = 6.0 : f64, max = 0.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_max_grad_output(%dy: tensor<4xf32>, %x: tensor<4x8xf32>, %y: tensor<4x1xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'lethe.reduce_max_grad' op output has type 'tensor<4x1xf32>', expected the reduction's 'tensor<4xf32>'}}
  %0 = lethe.reduce_max_grad %dy, %x, %y {axes = array<i64: 1>, keepdims = false} : (tensor<4xf32>, tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @softmax_grad_axis(%dy: tensor<8x10xf32>, %y: tensor<8x10xf32>) -> tensor<8x10xf32> {
  // expected-error @+1 {{'lethe.softmax_grad' op axis 2 is out of range for rank 2}}
  %0 = lethe.softmax_grad %dy, %y {axis = 2 : i64} : tensor<8x10xf32>
  return %0 : tensor<8x10xf32>
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

// -----

func.func @offload_type(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'lethe.offload' op failed to verify that the result is the host copy of the input}}
  %h = lethe.offload %x : tensor<4x16xf32> -> !lethe.host<tensor<4x8xf32>>
  return
}

// -----

func.func @prefetch_type(%h: !lethe.host<tensor<4x16xf32>>) -> tensor<16xf32> {
  // expected-error @+1 {{'lethe.prefetch' op failed to verify that the input is the host copy of the result}}
  %y = lethe.prefetch %h : !lethe.host<tensor<4x16xf32>> -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

func.func @release_not_offloaded(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'lethe.release' op releases a tensor that no earlier lethe.offload copies to the host; only offloaded tensors are released}}
  lethe.release %x : tensor<4x16xf32>
  return
}

// -----

func.func @use_after_release(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %h = lethe.offload %x : tensor<4x16xf32> -> !lethe.host<tensor<4x16xf32>>
  // expected-error @+1 {{'lethe.release' op releases a tensor that 'lethe.relu' uses afterwards}}
  lethe.release %x : tensor<4x16xf32>
  %y = lethe.relu %x : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

//===----------------------------------------------------------------------===//
// Dialect attributes
//===----------------------------------------------------------------------===//

// -----

func.func @workspace_negative(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{lethe.workspace_bytes must be a non-negative i64 byte count, got -1 : i64}}
  %y = lethe.relu %x {lethe.workspace_bytes = -1 : i64} : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @workspace_not_integer(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{lethe.workspace_bytes must be a non-negative i64 byte count, got "big"}}
  %y = lethe.relu %x {lethe.workspace_bytes = "big"} : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @workspace_not_lethe(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{lethe.workspace_bytes is for lethe ops, which have a workspace}}
  "func.return"(%x) {lethe.workspace_bytes = 256 : i64} : (tensor<4x16xf32>) -> ()
}

// -----

// expected-error @+1 {{result 0 is marked lethe.updates = 2, which is not an argument}}
func.func @updates_no_argument(%w: tensor<4xf32>, %g: tensor<4xf32>) -> (tensor<4xf32> {lethe.updates = 2 : i64}) {
  return %g : tensor<4xf32>
}

// -----

// expected-error @+1 {{result 0 is marked lethe.updates = -1, which is not an argument}}
func.func @updates_negative(%w: tensor<4xf32>) -> (tensor<4xf32> {lethe.updates = -1 : i64}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{result 0 is marked lethe.updates = "w", not an i64 argument number}}
func.func @updates_not_integer(%w: tensor<4xf32>) -> (tensor<4xf32> {lethe.updates = "w"}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{result 0 updates argument 0 but has type 'tensor<2xf32>', not the argument's 'tensor<4xf32>'}}
func.func @updates_other_type(%w: tensor<4xf32>, %g: tensor<2xf32>) -> (tensor<2xf32> {lethe.updates = 0 : i64}) {
  return %g : tensor<2xf32>
}

// -----

// expected-error @+1 {{argument 0 is updated by two results (0 and 1, lethe.updates)}}
func.func @updates_twice(%w: tensor<4xf32>, %g: tensor<4xf32>) -> (tensor<4xf32> {lethe.updates = 0 : i64}, tensor<4xf32> {lethe.updates = 0 : i64}) {
  return %w, %g : tensor<4xf32>, tensor<4xf32>
}
