// RUN: lethe-opt %s --lethe-print-memory-profile -split-input-file -verify-diagnostics -allow-unregistered-dialect -o /dev/null

// expected-error @+1 {{memory profile needs static shapes, but a value has type 'tensor<?x4xf32>'}}
func.func @dynamic(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %a : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{memory profile needs a function with a single block, this one has 2}}
func.func @two_blocks(%a: tensor<4xf32>) -> tensor<4xf32> {
  "test.br"() [^next] : () -> ()
^next:
  return %a : tensor<4xf32>
}
