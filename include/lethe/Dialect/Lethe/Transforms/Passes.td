//===- Passes.td - Lethe dialect passes ------------------------*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Passes on the `lethe` dialect. Every flag is prefixed `lethe-`.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_TRANSFORMS_PASSES_TD
#define LETHE_DIALECT_LETHE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PrintMemoryProfilePass
    : Pass<"lethe-print-memory-profile", "::mlir::ModuleOp"> {
  let summary = "Print every tensor's size and live range, and the peak of "
                "live bytes, of each function's unplanned schedule";
  let description = [{
    For each function with a body, in the order they appear, prints every
    tensor value (arguments, then op results) with its type, its size in
    bytes and its live range in op positions; the bytes live at each op; and
    the peak with the op at which it first occurs. The schedule is the order
    of the ops as written, each tensor freed after its last use; arguments
    are live from op 0. The report goes to standard error, and the IR is left
    unchanged. Fails on a function with several blocks or a tensor without a
    static shape.

    Example: `lethe-opt model.mlir --lethe-print-memory-profile -o /dev/null`.
  }];
  let statistics = [
    Statistic<"numFunctionsProfiled", "functions-profiled",
              "Number of functions profiled">,
  ];
}

#endif // LETHE_DIALECT_LETHE_TRANSFORMS_PASSES_TD
