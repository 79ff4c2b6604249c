//===- Passes.td - Lethe conversion passes ---------------------*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Conversions out of the `lethe` dialect. Flags are `convert-lethe-to-...`.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_CONVERSION_PASSES_TD
#define LETHE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertLetheToRuntimePass
    : Pass<"convert-lethe-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower a planned training step to LLVM calls of the Lethe "
                "runtime";
  let description = [{
    Rewrites the training step of the module, a function that has been
    through `--lethe-assign-arena` (its `lethe.arena` attribute, an
    `lethe.offset` on every argument, `lethe.offsets` on every op with
    results and `lethe.host_offset` on every offload), into
    `llvm.func @lethe_program_step(%context: !llvm.ptr) -> i32`, the entry
    point of runtime/include/lethe_program.h, and declares the runtime
    functions it calls. The step function is erased; the module then holds
    only LLVM dialect and translates to LLVM IR (`lethe-translate
    --mlir-to-llvmir`).

    The step reads `lethe_rt_arena_base(context)` once; every tensor is a
    descriptor (`lethe_rt_tensor`) whose data is the arena base plus the
    value's offset and whose shape is a constant global. Each op becomes
    the runtime call that the reference interpreter makes for it
    (lib/Interpreter/OpExecution.cpp), with the same attribute arguments;
    a `lethe.constant` becomes a `lethe_rt_copy` from a constant global
    into its slot; reshape-like ops a `lethe_rt_copy`. `lethe.offload` and
    `lethe.prefetch` become `lethe_rt_offload_async` and
    `lethe_rt_prefetch_async` (the prefetch reads the host region of the
    offload that made its input); `lethe.release` emits nothing.

    Op numbering: before each op of the body other than `lethe.release`
    and the terminator, the step calls `lethe_rt_op_begin(context, i)`,
    where i counts those ops in block order from 0 (every kernel,
    constant, offload and prefetch; releases are not counted). This is the
    index of the op in the program manifest's "ops".

    Synchronisation: the pass follows every byte range of the arena and
    the host pool that each op reads and writes, on its stream (kernels on
    compute, offloads on device-to-host, prefetches on host-to-device),
    and before an op that conflicts with earlier work of another stream
    (it reads what that work writes, or writes what it reads or writes)
    and is not yet ordered after it, it makes the op's stream wait: on an
    event recorded on the compute stream just before, or on the event
    recorded on the copy stream just after the copy concerned. Orderings
    already implied by earlier waits (transitively) are not repeated, but
    a prefetch always waits directly for the offload that filled the host
    region it reads. The events are created at the start of the step and destroyed at its end,
    after `lethe_rt_synchronize`.

    Every runtime call's status is checked: on a non-zero status the step
    returns 1 at once (the runtime's last error says why); otherwise it
    returns 0. Scalars the step computes (the step counter of
    `lethe.dropout` and the optimizers, a learning rate) are passed as
    tensors in the arena, never read on the host, so that a device backend
    reads them where they live. Results stay where the arena layout put them (a returned
    argument at its own offset), for the driver to read.

    `function` names the step (default: the module's only function with a
    body). A function without arena attributes, or an op with no runtime
    lowering, is an error naming it.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"",
           "The function to lower (default: the only function with a body)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numRuntimeCalls", "runtime-calls",
              "Number of runtime calls emitted (kernels and copies)">,
    Statistic<"numEventWaits", "event-waits",
              "Number of stream waits on events emitted">,
  ];
}

#endif // LETHE_CONVERSION_PASSES_TD
