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

// -----

// Every block must lie in its memory: the step addresses the bytes it is
// given without checking them.
func.func @train_step(%x: tensor<4x4xf32> {lethe.offset = 256 : i64}) -> tensor<4x4xf32> attributes {lethe.arena = {alignment = 256 : i64, host_size = 0 : i64, liveness_peak = 512 : i64, size = 512 : i64}} {
  // expected-error @below {{convert-lethe-to-runtime: result 0 of 64 bytes at offset 1099511627776 is outside the arena of 512 bytes; lay @train_step out again with --lethe-assign-arena}}
  %y = lethe.relu %x {lethe.offsets = array<i64: 1099511627776>} : tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// expected-error @below {{convert-lethe-to-runtime: argument 0 of 64 bytes at offset -256 is outside the arena of 512 bytes; lay @train_step out again with --lethe-assign-arena}}
func.func @train_step(%x: tensor<4x4xf32> {lethe.offset = -256 : i64}) -> tensor<4x4xf32> attributes {lethe.arena = {alignment = 256 : i64, host_size = 0 : i64, liveness_peak = 512 : i64, size = 512 : i64}} {
  %y = lethe.relu %x {lethe.offsets = array<i64: 256>} : tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

func.func @train_step(%x: tensor<1x1x3x3xf32> {lethe.offset = 0 : i64}, %w: tensor<1x1x2x2xf32> {lethe.offset = 256 : i64}) -> tensor<1x1x2x2xf32> attributes {lethe.arena = {alignment = 256 : i64, host_size = 0 : i64, liveness_peak = 1024 : i64, size = 1024 : i64}} {
  // expected-error @below {{convert-lethe-to-runtime: the workspace of 64 bytes at offset 1020 is outside the arena of 1024 bytes; lay @train_step out again with --lethe-assign-arena}}
  %y = lethe.conv %x, %w {dilations = array<i64: 1, 1>, lethe.offsets = array<i64: 512>, lethe.workspace_offset = 1020 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %y : tensor<1x1x2x2xf32>
}

// -----

func.func @train_step(%x: tensor<4x4xf32> {lethe.offset = 0 : i64}) -> tensor<4x4xf32> attributes {lethe.arena = {alignment = 256 : i64, host_size = 256 : i64, liveness_peak = 512 : i64, size = 512 : i64}} {
  %y = lethe.relu %x {lethe.offsets = array<i64: 256>} : tensor<4x4xf32>
  // expected-error @below {{convert-lethe-to-runtime: the host copy of 64 bytes at offset 224 is outside the host pool of 256 bytes; lay @train_step out again with --lethe-assign-arena}}
  %h = lethe.offload %y {lethe.host_offset = 224 : i64} : tensor<4x4xf32> -> !lethe.host<tensor<4x4xf32>>
  return %y : tensor<4x4xf32>
}

// -----

// expected-error @below {{convert-lethe-to-runtime: @train_step has no arena layout (lethe.arena has no size and host_size in bytes): run --lethe-assign-arena first}}
func.func @train_step(%x: tensor<4x4xf32> {lethe.offset = 0 : i64}) -> tensor<4x4xf32> attributes {lethe.arena = {size = 512 : i64}} {
  %y = lethe.relu %x {lethe.offsets = array<i64: 256>} : tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
