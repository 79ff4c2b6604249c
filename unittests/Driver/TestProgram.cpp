//===- TestProgram.cpp - A hand-written compiled step for the driver tests ===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "TestProgram.h"

#include "common/Context.h"
#include "lethe_program.h"

#include <cstdlib>
#include <cstring>
#include <string>

using namespace lethe::driver::test;

/// Arena layout (alignment 256): arguments, then temporaries and results.
/// v_new is updated in place (it shares v's bytes).
extern "C" const char lethe_program_manifest[] = R"json({
  "format": "lethe-program", "version": 1, "function": "linear_step",
  "arena_bytes": 3072, "host_pool_bytes": 256, "alignment": 256,
  "arguments": [
    {"index": 0, "name": "x", "kind": "data", "dtype": "f32",
     "shape": [4, 3], "offset": 0, "bytes": 48, "integer_bound": 10},
    {"index": 1, "name": "y", "kind": "data", "dtype": "f32",
     "shape": [4, 2], "offset": 256, "bytes": 32},
    {"index": 2, "name": "c", "kind": "label", "dtype": "i32",
     "shape": [4], "offset": 512, "bytes": 16, "integer_bound": 3},
    {"index": 3, "name": "w", "kind": "parameter", "dtype": "f32",
     "shape": [3, 2], "offset": 768, "bytes": 24},
    {"index": 4, "name": "w.velocity", "kind": "state", "dtype": "f32",
     "shape": [3, 2], "offset": 1024, "bytes": 24},
    {"index": 5, "name": "lr", "kind": "parameter", "dtype": "f32",
     "shape": [], "offset": 1280, "bytes": 4},
    {"index": 6, "name": "step", "kind": "step", "dtype": "i64",
     "shape": [], "offset": 1536, "bytes": 8}
  ],
  "results": [
    {"index": 0, "name": "loss", "loss": true, "updates": -1,
     "dtype": "f32", "shape": [], "offset": 2048, "bytes": 4},
    {"index": 1, "name": "w", "loss": false, "updates": 3,
     "dtype": "f32", "shape": [3, 2], "offset": 2816, "bytes": 24},
    {"index": 2, "name": "w.velocity", "loss": false, "updates": 4,
     "dtype": "f32", "shape": [3, 2], "offset": 1024, "bytes": 24}
  ],
  "plan": {"strategy": "hand-written", "budget_bytes": 3072,
           "peak_bytes": 2816, "unplanned_peak_bytes": 3072,
           "seconds": 1e-06, "unplanned_seconds": 1e-06,
           "liveness_peak_bytes": 2816, "profile": "cpu"},
  "ops": [
    {"index": 0, "kind": "compute", "op": "lethe.matmul", "node": 0,
     "live_bytes": 1824, "predicted_seconds": 2.5e-07},
    {"index": 1, "kind": "compute", "op": "lethe.mse", "node": 1,
     "live_bytes": 2080},
    {"index": 2, "kind": "compute", "op": "lethe.sub", "node": 2,
     "live_bytes": 2336},
    {"index": 3, "kind": "offload", "value": 2, "name": "diff",
     "live_bytes": 2336, "predicted_seconds": 1e-06},
    {"index": 4, "kind": "release", "value": 2, "name": "diff",
     "live_bytes": 2080},
    {"index": 5, "kind": "prefetch", "value": 2, "name": "diff",
     "live_bytes": 2336},
    {"index": 6, "kind": "compute", "op": "lethe.gemm", "node": 3,
     "live_bytes": 2592},
    {"index": 7, "kind": "compute", "op": "lethe.momentum", "node": 4,
     "live_bytes": 2816}
  ]
})json";

namespace {

constexpr int64_t kXShape[] = {kBatch, kInputs};
constexpr int64_t kYShape[] = {kBatch, kOutputs};
constexpr int64_t kWShape[] = {kInputs, kOutputs};

lethe_rt_tensor view(void *data, lethe_rt_dtype dtype, const int64_t *shape,
                     int32_t rank) {
  return lethe_rt_tensor{data, dtype, rank, shape};
}

/// The kernels of one step on tensors at the given addresses; `beforeOp`
/// runs before each op that has an index (the program's copies run in it).
template <typename BeforeOp>
lethe_rt_status runStep(lethe_rt_context *context, void *x, void *y, void *w,
                        void *v, void *lr, void *step, void *pred, void *loss,
                        void *diff, void *dw, void *wNew, BeforeOp beforeOp) {
  lethe_rt_tensor xT = view(x, LETHE_RT_F32, kXShape, 2);
  lethe_rt_tensor yT = view(y, LETHE_RT_F32, kYShape, 2);
  lethe_rt_tensor wT = view(w, LETHE_RT_F32, kWShape, 2);
  lethe_rt_tensor vT = view(v, LETHE_RT_F32, kWShape, 2);
  lethe_rt_tensor lrT = view(lr, LETHE_RT_F32, nullptr, 0);
  lethe_rt_tensor stepT = view(step, LETHE_RT_I64, nullptr, 0);
  lethe_rt_tensor predT = view(pred, LETHE_RT_F32, kYShape, 2);
  lethe_rt_tensor lossT = view(loss, LETHE_RT_F32, nullptr, 0);
  lethe_rt_tensor diffT = view(diff, LETHE_RT_F32, kYShape, 2);
  lethe_rt_tensor dwT = view(dw, LETHE_RT_F32, kWShape, 2);
  lethe_rt_tensor wNewT = view(wNew, LETHE_RT_F32, kWShape, 2);
  if (beforeOp(0) || lethe_rt_matmul(context, &xT, &wT, &predT) ||
      beforeOp(1) ||
      lethe_rt_mse(context, &predT, &yT, LETHE_RT_REDUCTION_MEAN, &lossT) ||
      beforeOp(2) ||
      lethe_rt_binary(context, LETHE_RT_SUB, &predT, &yT, &diffT) ||
      beforeOp(3) || beforeOp(5) || beforeOp(6) ||
      // d mean((pred - y)^2) / d w = x^T (2 / (batch * outputs)) diff.
      lethe_rt_gemm(context, &xT, &diffT, nullptr, 2.0 / (kBatch * kOutputs),
                    0.0, /*trans_a=*/1,
                    /*trans_b=*/0, &dwT) ||
      beforeOp(7) ||
      lethe_rt_momentum_update(context, &lrT, &stepT, &wT, &dwT, &vT, kMomentum,
                               1.0, 0.0, 0, &wNewT, &vT))
    return LETHE_RT_ERROR;
  return LETHE_RT_OK;
}

} // namespace

float lethe::driver::test::computeTestStep(const float *x, const float *y,
                                           float *w, float *v, float lr,
                                           int64_t step) {
  lethe_rt_context *context = lethe_rt_context_create();
  float pred[kBatch * kOutputs], loss, diff[kBatch * kOutputs],
      dw[kInputs * kOutputs], wNew[kInputs * kOutputs];
  runStep(context, const_cast<float *>(x), const_cast<float *>(y), w, v, &lr,
          &step, pred, &loss, diff, dw, wNew, [](int) { return false; });
  std::memcpy(w, wNew, sizeof(wNew));
  lethe_rt_context_destroy(context);
  return loss;
}

extern "C" lethe_rt_status lethe_program_step(lethe_rt_context *context) {
  char *arena = static_cast<char *>(lethe_rt_arena_base(context));
  if (!arena)
    return LETHE_RT_ERROR;
  int64_t stepNumber;
  std::memcpy(&stepNumber, arena + 1536, sizeof(stepNumber));
  if (const char *failAt = std::getenv(kFailAtStepVariable))
    if (std::to_string(stepNumber) == failAt) {
      // A kernel called with mismatched shapes: a runtime error.
      int64_t shape[] = {5};
      lethe_rt_tensor bad = view(arena, LETHE_RT_F32, shape, 1);
      lethe_rt_tensor x = view(arena, LETHE_RT_F32, kXShape, 2);
      return lethe_rt_matmul(context, &bad, &x, &bad);
    }
  lethe_rt_event *computed = nullptr, *offloaded = nullptr,
                 *prefetched = nullptr;
  if (lethe_rt_event_create(context, &computed) ||
      lethe_rt_event_create(context, &offloaded) ||
      lethe_rt_event_create(context, &prefetched))
    return LETHE_RT_ERROR;
  // diff (2304, 32 bytes) goes to the host pool and back before the gemm
  // reads it.
  uint64_t wanted = 0;
  if (const char *bytes = std::getenv(kWantWorkspaceVariable))
    wanted = std::stoull(bytes);
  auto beforeOp = [&](int op) -> bool {
    if (op == 4)
      return false; // releases are free: not announced
    if (lethe_rt_op_begin(context, op))
      return true;
    if (wanted && (op == 0 || op == 7))
      lethe::rt::noteWorkspaceWanted(context, op == 0 ? wanted : wanted / 2);
    switch (op) {
    case 3:
      return lethe_rt_event_record(context, computed,
                                   LETHE_RT_STREAM_COMPUTE) ||
             lethe_rt_stream_wait_event(context, LETHE_RT_STREAM_DEVICE_TO_HOST,
                                        computed) ||
             lethe_rt_offload_async(context, 0, 2304, 32) ||
             lethe_rt_event_record(context, offloaded,
                                   LETHE_RT_STREAM_DEVICE_TO_HOST);
    case 5:
      return lethe_rt_stream_wait_event(context, LETHE_RT_STREAM_HOST_TO_DEVICE,
                                        offloaded) ||
             lethe_rt_prefetch_async(context, 2304, 0, 32) ||
             lethe_rt_event_record(context, prefetched,
                                   LETHE_RT_STREAM_HOST_TO_DEVICE);
    case 6:
      return lethe_rt_stream_wait_event(context, LETHE_RT_STREAM_COMPUTE,
                                        prefetched);
    default:
      return false;
    }
  };
  lethe_rt_status status =
      runStep(context, arena + 0, arena + 256, arena + 768, arena + 1024,
              arena + 1280, arena + 1536, arena + 1792, arena + 2048,
              arena + 2304, arena + 2560, arena + 2816, beforeOp);
  if (status == LETHE_RT_OK)
    status = lethe_rt_synchronize(context);
  lethe_rt_event_destroy(context, computed);
  lethe_rt_event_destroy(context, offloaded);
  lethe_rt_event_destroy(context, prefetched);
  return status;
}
