// RUN: lethe-opt %s --lethe-print-memory-profile -o /dev/null 2>&1 | FileCheck %s
// RUN: lethe-opt %s --lethe-print-memory-profile | FileCheck %s --check-prefix=IR

// The pass leaves the IR unchanged.
// IR-LABEL: func.func @mlp
// IR: lethe.matmul

// Expected figures were worked out by hand from the liveness rules in
// MemoryProfile.h: arguments live from op 0 to their last use, results from
// their op to their last use, operands and results of an op live together.

// A two-layer MLP. Sizes: %x 4x8xf32 = 128, %w1 8x16xf32 = 512,
// %b1 16xf32 = 64, %w2 16x4xf32 = 256; activations 4x16xf32 = 256,
// 4x4xf32 = 64.
//   op 0 matmul: x 128 + w1 512 + b1 64 + w2 256 + %0 256 = 1216
//   op 1 add:    b1 64 + w2 256 + %0 256 + %1 256        =  832
//   op 2 relu:   w2 256 + %1 256 + %2 256                 =  768
//   op 3 matmul: w2 256 + %2 256 + %3 64                  =  576
//   op 4 return: %3 64                                    =   64
// CHECK-LABEL: memory profile of @mlp: 8 tensors, 5 ops
// CHECK:      values:
// CHECK-NEXT: %arg0 tensor<4x8xf32>  128 bytes live 0..0
// CHECK-NEXT: %arg1 tensor<8x16xf32> 512 bytes live 0..0
// CHECK-NEXT: %arg2 tensor<16xf32>   64 bytes live 0..1
// CHECK-NEXT: %arg3 tensor<16x4xf32> 256 bytes live 0..3
// CHECK-NEXT: %0 tensor<4x16xf32>    256 bytes live 0..1
// CHECK-NEXT: %1 tensor<4x16xf32>    256 bytes live 1..2
// CHECK-NEXT: %2 tensor<4x16xf32>    256 bytes live 2..3
// CHECK-NEXT: %3 tensor<4x4xf32>     64 bytes live 3..4
// CHECK-NEXT: live bytes by op:
// CHECK-NEXT: #0 lethe.matmul 1216 bytes
// CHECK-NEXT: #1 lethe.add     832 bytes
// CHECK-NEXT: #2 lethe.relu    768 bytes
// CHECK-NEXT: #3 lethe.matmul  576 bytes
// CHECK-NEXT: #4 func.return    64 bytes
// CHECK-NEXT: peak: 1216 bytes at op #0 (lethe.matmul)
func.func @mlp(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %b1: tensor<16xf32>,
               %w2: tensor<16x4xf32>) -> tensor<4x4xf32> {
  %0 = lethe.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = lethe.add %0, %b1 : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = lethe.relu %1 : tensor<4x16xf32>
  %3 = lethe.matmul %2, %w2 : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
  return %3 : tensor<4x4xf32>
}

// A skip connection: %x (8x8xf32 = 256) is used by op 0 and again by op 4,
// so it stays live across the branch, which widens to f64 in the middle
// (8x8xf64 = 512).
//   op 0 exp:  x 256 + %0 256                 =  512
//   op 1 cast: x 256 + %0 256 + %1 512        = 1024
//   op 2 sqrt: x 256 + %1 512 + %2 512        = 1280  <- peak; 1024 without the skip
//   op 3 cast: x 256 + %2 512 + %3 256        = 1024
//   op 4 mul:  x 256 + %3 256 + %4 256        =  768
//   op 5 return: %4 256                       =  256
// CHECK-LABEL: memory profile of @skip: 6 tensors, 6 ops
// CHECK:      %arg0 tensor<8x8xf32> 256 bytes live 0..4
// CHECK:      live bytes by op:
// CHECK-NEXT: #0 lethe.exp   512 bytes
// CHECK-NEXT: #1 lethe.cast 1024 bytes
// CHECK-NEXT: #2 lethe.sqrt 1280 bytes
// CHECK-NEXT: #3 lethe.cast 1024 bytes
// CHECK-NEXT: #4 lethe.mul   768 bytes
// CHECK-NEXT: #5 func.return 256 bytes
// CHECK-NEXT: peak: 1280 bytes at op #2 (lethe.sqrt)
func.func @skip(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = lethe.exp %x : tensor<8x8xf32>
  %1 = lethe.cast %0 {to = f64} : (tensor<8x8xf32>) -> tensor<8x8xf64>
  %2 = lethe.sqrt %1 : tensor<8x8xf64>
  %3 = lethe.cast %2 {to = f32} : (tensor<8x8xf64>) -> tensor<8x8xf32>
  %4 = lethe.mul %x, %3 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %4 : tensor<8x8xf32>
}

// A result nobody uses is live at its op only; a returned argument lives to
// the return. %keep (16xf32 = 64) is returned; %0 (1x2xf16 = 4) is dead.
//   op 0 neg:    keep 64 + small 8 + %0 8     = 80
//   op 1 return: keep 64                      = 64
// CHECK-LABEL: memory profile of @dead_and_returned: 3 tensors, 2 ops
// CHECK:      %arg0 tensor<16xf32>  64 bytes live 0..1
// CHECK-NEXT: %arg1 tensor<2x2xf16>  8 bytes live 0..0
// CHECK-NEXT: %0 tensor<2x2xf16>     8 bytes live 0..0
// CHECK:      peak: 80 bytes at op #0 (lethe.neg)
func.func @dead_and_returned(%keep: tensor<16xf32>, %small: tensor<2x2xf16>) -> tensor<16xf32> {
  %0 = lethe.neg %small : tensor<2x2xf16>
  return %keep : tensor<16xf32>
}

// An op's workspace (the cost interface's getWorkspaceBytes: a convolution's
// im2col column buffer, (C/group) * prod(kernel) rows by prod(output
// spatial) columns, 2 * 3 * 3 * 5 * 5 f32 = 1800 bytes) is live at that op
// only. x 1x2x5x5xf32 = 200, w 3x2x3x3xf32 = 216, %0 and %1 1x3x5x5xf32 =
// 300.
//   op 0 conv:   x 200 + w 216 + %0 300 + workspace 1800 = 2516
//   op 1 relu:   %0 300 + %1 300                         =  600
//   op 2 return: %1 300                                  =  300
// CHECK-LABEL: memory profile of @conv: 4 tensors, 3 ops
// CHECK:      %1 tensor<1x3x5x5xf32> 300 bytes live 1..2
// CHECK-NEXT: workspace:
// CHECK-NEXT: #0 lethe.conv 1800 bytes live 0..0
// CHECK-NEXT: live bytes by op:
// CHECK-NEXT: #0 lethe.conv  2516 bytes
// CHECK-NEXT: #1 lethe.relu   600 bytes
// CHECK-NEXT: #2 func.return  300 bytes
// CHECK-NEXT: peak: 2516 bytes at op #0 (lethe.conv)
func.func @conv(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32> {
  %0 = lethe.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  %1 = lethe.relu %0 : tensor<1x3x5x5xf32>
  return %1 : tensor<1x3x5x5xf32>
}

// Declarations have no body and no profile.
// CHECK-NOT: memory profile of @external
func.func private @external(tensor<4xf32>) -> tensor<4xf32>
