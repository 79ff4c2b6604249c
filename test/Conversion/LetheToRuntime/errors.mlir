// RUN: lethe-opt %s --convert-lethe-to-runtime -split-input-file -verify-diagnostics --allow-unregistered-dialect

// expected-error @below {{convert-lethe-to-runtime: @train_step has no arena layout (no lethe.arena attribute): run --lethe-assign-arena first}}
func.func @train_step(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = lethe.tanh %x : tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// expected-error @below {{convert-lethe-to-runtime: @train_step has no arena layout (argument 1 has no lethe.offset): run --lethe-assign-arena first}}
func.func @train_step(%x: tensor<2xf32> {lethe.offset = 0 : i64}, %w: tensor<2xf32>) -> tensor<2xf32> attributes {lethe.arena = {alignment = 256 : i64, host_size = 0 : i64, liveness_peak = 768 : i64, size = 768 : i64}} {
  %y = lethe.add %x, %w {lethe.offsets = array<i64: 512>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// expected-error @below {{convert-lethe-to-runtime: @train_step has no arena layout (lethe.tanh has no lethe.offsets for each result): run --lethe-assign-arena first}}
func.func @train_step(%x: tensor<2xf32> {lethe.offset = 0 : i64}) -> tensor<2xf32> attributes {lethe.arena = {alignment = 256 : i64, host_size = 0 : i64, liveness_peak = 512 : i64, size = 512 : i64}} {
  %y = lethe.tanh %x : tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// expected-error @below {{convert-lethe-to-runtime: @train_step has no arena layout (lethe.conv has no lethe.workspace_offset for its workspace): run --lethe-assign-arena first}}
func.func @train_step(%x: tensor<1x1x3x3xf32> {lethe.offset = 0 : i64}, %w: tensor<1x1x2x2xf32> {lethe.offset = 256 : i64}) -> tensor<1x1x2x2xf32> attributes {lethe.arena = {alignment = 256 : i64, host_size = 0 : i64, liveness_peak = 1024 : i64, size = 1024 : i64}} {
  %y = lethe.conv %x, %w {dilations = array<i64: 1, 1>, lethe.offsets = array<i64: 512>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %y : tensor<1x1x2x2xf32>
}
// -----

func.func @train_step(%x: tensor<2xf32> {lethe.offset = 0 : i64}) -> tensor<2xf32> attributes {lethe.arena = {alignment = 256 : i64, host_size = 0 : i64, liveness_peak = 512 : i64, size = 512 : i64}} {
  // expected-error @below {{convert-lethe-to-runtime: cannot lower foo.bar to runtime calls yet}}
  %y = "foo.bar"(%x) {lethe.offsets = array<i64: 256>} : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// expected-error @below {{convert-lethe-to-runtime: expected one function with a body, found 2 (name it with function=...)}}
module {
  func.func @a() {
    return
  }
  func.func @b() {
    return
  }
}
