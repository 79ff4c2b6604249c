/*===- lethe_program.h - What a planned executable's object provides ------===*\
|*                                                                            *|
|* Part of the Lethe project.                                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The contract between the object code that `lethec` compiles from a planned
 * training step (--convert-lethe-to-runtime, then LLVM) and the executable's
 * driver (runtime/driver), which owns main(), the command line, the weights,
 * the data and the training loop.
 *
 * The object defines two symbols:
 *
 *   lethe_program_manifest  a NUL-terminated JSON text (schema below and in
 *                           docs/Executables.md) describing the step: the
 *                           arena and host-pool sizes, every argument and
 *                           result with its arena offset, and the plan;
 *   lethe_program_step      runs one training step on a context whose memory
 *                           lethe_rt_memory_init has set up with the
 *                           manifest's sizes, reading the arguments at their
 *                           offsets and leaving the results at theirs. It
 *                           issues every kernel and copy of the planned step
 *                           with the event waits they need, synchronizes,
 *                           and returns LETHE_RT_OK; on a runtime error it
 *                           returns LETHE_RT_ERROR at once, leaving the
 *                           message in lethe_rt_last_error(context).
 *
 * Before each op of the step (kernel, offload, prefetch; releases are free)
 * the step calls lethe_rt_op_begin(context, index) with the op's index in
 * the manifest's "ops", so that the driver can time ops (--profile) and
 * trace memory (--trace).
 *
 * Manifest (version 1):
 *
 *   {
 *     "format": "lethe-program", "version": 1,
 *     "function": "train_step",
 *     "arena_bytes": 900608, "host_pool_bytes": 28160, "alignment": 256,
 *     "arguments": [
 *       {"index": 0, "name": "x", "kind": "data", "dtype": "f32",
 *        "shape": [4, 3, 8, 8], "offset": 0, "bytes": 3072,
 *        "integer_bound": 10},
 *       {"index": 2, "name": "fc.weight", "kind": "parameter", ...},
 *       ...
 *     ],
 *     "results": [
 *       {"index": 0, "name": "loss", "loss": true, "updates": -1,
 *        "dtype": "f32", "shape": [], "offset": 4096, "bytes": 4},
 *       {"index": 1, "name": "fc.weight", "loss": false, "updates": 2, ...}
 *     ],
 *     "plan": {"strategy": "auto (greedy)", "budget_bytes": ...,
 *              "peak_bytes": ..., "unplanned_peak_bytes": ...,
 *              "seconds": ..., "unplanned_seconds": ...,
 *              "liveness_peak_bytes": ..., "profile": "h100"},
 *     "ops": [
 *       {"index": 0, "kind": "compute", "op": "lethe.conv", "node": 0,
 *        "live_bytes": 123456},
 *       {"index": 7, "kind": "offload", "value": 12, "name": "relu_1",
 *        "live_bytes": 150000}
 *     ]
 *   }
 *
 * Argument kinds: "data" (an input without initializer: the driver fills it
 * from --data or at random), "label" (a data input a loss reads as classes;
 * `integer_bound` is the class count, as lethe-run draws them), "parameter"
 * and "state" (optimizer state; both read from the weights file), "step"
 * (the step counter, an i64 scalar: the driver writes the step number).
 * A result with "updates": k >= 0 is the next step's argument k. dtypes are
 * the runtime's names: f16, bf16, f32, f64, i1, i8, i16, i32, i64, u8, u16,
 * u32, u64. "ops" lists the steps of the plan in order (the kinds of
 * lethe-mem's JSON timeline, docs/MemoryTimeline.md), with the device bytes
 * the planner counts while each runs.
 */

#ifndef LETHE_PROGRAM_H
#define LETHE_PROGRAM_H

#include "lethe_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defined by the compiled step (lethec). */
extern const char lethe_program_manifest[];
lethe_rt_status lethe_program_step(lethe_rt_context *context);

#ifdef __cplusplus
}
#endif

#endif /* LETHE_PROGRAM_H */
