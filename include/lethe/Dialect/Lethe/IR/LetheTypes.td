//===- LetheTypes.td - Lethe types ----------------------------*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The types of the dialect. Tensors are builtin tensors (on the device); the
// one type of Lethe's own is a tensor held in host memory, which only the
// memory operations produce and consume.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHETYPES_TD
#define LETHE_DIALECT_LETHE_IR_LETHETYPES_TD

include "lethe/Dialect/Lethe/IR/LetheBase.td"

def Lethe_HostTensorType : TypeDef<Lethe_Dialect, "HostTensor"> {
  let mnemonic = "host";
  let summary = "a tensor held in host memory";
  let description = [{
    The host copy of a device tensor of type `tensorType`, made by
    `lethe.offload` and brought back by `lethe.prefetch`. It takes no device
    memory; the memory planner gives it a slot in the host pool.

    ```mlir
    %h = lethe.offload %x : tensor<4x16xf32> -> !lethe.host<tensor<4x16xf32>>
    ```
  }];
  let parameters = (ins "::mlir::RankedTensorType":$tensorType);
  let assemblyFormat = "`<` $tensorType `>`";
}

#endif // LETHE_DIALECT_LETHE_IR_LETHETYPES_TD
