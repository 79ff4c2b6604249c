//===- LetheMemoryOps.td - Memory operations ------------------*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The operations --lethe-materialize-plan adds to carry out a memory plan:
// copies between device and host memory and the end of a device lifetime.
// Recomputation needs no op of its own: it is a clone of the producing op
// that carries the `lethe.recompute` attribute.
//
// Unlike the compute ops these are not pure: each copy is a transfer the plan
// placed at a point of the schedule on purpose, so folding, CSE or DCE must
// not move, merge or drop them.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHEMEMORYOPS_TD
#define LETHE_DIALECT_LETHE_IR_LETHEMEMORYOPS_TD

include "lethe/Dialect/Lethe/IR/LetheTypes.td"

/// A memory operation: it moves bytes over the host link (or frees them) and
/// computes nothing.
class Lethe_MemoryOp<string mnemonic, list<Trait> traits = []>
    : Op<Lethe_Dialect, mnemonic,
         !listconcat([DeclareOpInterfaceMethods<Lethe_CostOpInterface,
                        ["getBytesRead", "getBytesWritten"]>],
                     traits)> {
  let extraClassDefinition = [{
    int64_t $cppClass::getFlops() { return 0; }
  }];
}

def Lethe_OffloadOp : Lethe_MemoryOp<"offload", [
    MemoryEffects<[MemWrite]>,
    TypesMatchWith<"the result is the host copy of the input",
                   "input", "output",
                   "::mlir::lethe::HostTensorType::get($_ctxt, "
                   "::llvm::cast<::mlir::RankedTensorType>($_self))">]> {
  let summary = "start copying a device tensor to host memory";
  let description = [{
    Starts copying `input` from device memory to host memory on the
    device-to-host copy stream and returns the host copy. The device tensor
    stays where it is: its memory is given back by a later `lethe.release`,
    which waits for the copy to finish. The memory planner places an offload
    after the last forward use of an activation.

    ```mlir
    %h = lethe.offload %x : tensor<4x16xf32> -> !lethe.host<tensor<4x16xf32>>
    ```
  }];
  let arguments = (ins Lethe_Tensor:$input);
  let results = (outs Lethe_HostTensorType:$output);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($output))
  }];
}

def Lethe_PrefetchOp : Lethe_MemoryOp<"prefetch", [
    MemoryEffects<[MemWrite]>,
    TypesMatchWith<"the input is the host copy of the result",
                   "output", "input",
                   "::mlir::lethe::HostTensorType::get($_ctxt, "
                   "::llvm::cast<::mlir::RankedTensorType>($_self))">]> {
  let summary = "start copying a host tensor back to the device";
  let description = [{
    Allocates a device tensor and starts filling it from the host copy
    `input` on the host-to-device copy stream. The ops that read the result
    wait for the copy to arrive. The memory planner places a prefetch early
    enough before the backward use for the copy to hide under compute.

    ```mlir
    %y = lethe.prefetch %h : !lethe.host<tensor<4x16xf32>> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Lethe_HostTensorType:$input);
  let results = (outs Lethe_Tensor:$output);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($output))
  }];
}

def Lethe_ReleaseOp : Lethe_MemoryOp<"release", [MemoryEffects<[MemFree]>]> {
  let summary = "end the device lifetime of an offloaded tensor";
  let description = [{
    Gives back the device memory of `input`, whose offload must have been
    issued before: it waits for that copy to finish, then frees. Nothing may
    use `input` after it. (Tensors that are not offloaded need no release:
    their memory is given back after their last use.)

    ```mlir
    lethe.release %x : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Lethe_Tensor:$input);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

#endif // LETHE_DIALECT_LETHE_IR_LETHEMEMORYOPS_TD
