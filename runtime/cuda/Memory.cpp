//===- Memory.cpp - Memory, streams and events of the CUDA backend --------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The memory and stream part of the ABI ("Memory and streams" in lethe_rt.h)
// on a GPU, after MLIR's CUDA runtime wrappers: the arena is one cudaMalloc,
// the host pool one pinned cudaHostAlloc (so that the copy streams' copies
// are truly asynchronous DMA), offloads and prefetches are cudaMemcpyAsync on
// two streams of their own, and events are CUDA events without timing (the
// cheapest kind; the ABI only orders streams with them).
//
// The argument checks and the event registry are those the CPU backend uses
// too (runtime/common), with the same messages; what the CPU backend
// simulates, the hardware does.
//
//===----------------------------------------------------------------------===//

#include "CudaRuntime.h"
#include "common/Events.h"

#include <algorithm>
#include <cstring>

using namespace lethe::rt;

namespace {

/// The alignment the ABI promises for the arena and the host pool
/// (cudaMalloc's and cudaHostAlloc's are at least this).
constexpr uint64_t memoryAlignment = 256;

//===----------------------------------------------------------------------===//
// Argument checks (runtime/common/Checks.h): each records an error naming
// `call` and returns false when the check fails.
//===----------------------------------------------------------------------===//

bool checkStream(lethe_rt_context *context, const char *call,
                 lethe_rt_stream stream) {
  return report(context, call, streamError(stream));
}

bool checkMemoryInitialized(lethe_rt_context *context, const char *call) {
  return report(context, call,
                memoryInitializedError(context->memoryInitialized));
}

bool checkArenaRange(lethe_rt_context *context, const char *call,
                     uint64_t offset, uint64_t bytes) {
  return report(context, call,
                arenaRangeError(offset, bytes, context->arenaBytes));
}

bool checkHostRange(lethe_rt_context *context, const char *call,
                    uint64_t offset, uint64_t bytes) {
  return report(context, call,
                hostRangeError(offset, bytes, context->hostPoolBytes));
}

/// `event` is a live event of `context`.
bool checkEvent(lethe_rt_context *context, const char *call,
                const lethe_rt_event *event) {
  return report(context, call,
                eventError(event, event && context->events.count(event)));
}

cudaStream_t streamOf(const lethe_rt_context &context, lethe_rt_stream stream) {
  switch (stream) {
  case LETHE_RT_STREAM_DEVICE_TO_HOST:
    return context.deviceToHost;
  case LETHE_RT_STREAM_HOST_TO_DEVICE:
    return context.hostToDevice;
  default:
    return context.compute;
  }
}

/// Waits on the host for the work of all three streams (reporting, under
/// `call`, an error of any work issued to them).
bool synchronizeAll(lethe_rt_context &context, const char *call) {
  for (cudaStream_t stream :
       {context.compute, context.deviceToHost, context.hostToDevice})
    if (!checkCuda(&context, call, "cudaStreamSynchronize",
                   cudaStreamSynchronize(stream)))
      return false;
  return true;
}

/// Checks and issues an offload (arena to host pool) or a prefetch (host
/// pool to arena) on its copy stream.
lethe_rt_status issueCopy(lethe_rt_context *context, const char *call,
                          bool offload, uint64_t arenaOffset,
                          uint64_t hostOffset, uint64_t bytes) {
  if (!context)
    return LETHE_RT_ERROR;
  if (!checkDevice(context, call) || !checkMemoryInitialized(context, call) ||
      !checkArenaRange(context, call, arenaOffset, bytes) ||
      !checkHostRange(context, call, hostOffset, bytes))
    return LETHE_RT_ERROR;
  uint8_t *device = context->arena + arenaOffset;
  uint8_t *host = context->hostPool + hostOffset;
  if (bytes > 0 &&
      !checkCuda(
          context, call, "cudaMemcpyAsync",
          offload ? cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost,
                                    context->deviceToHost)
                  : cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice,
                                    context->hostToDevice)))
    return LETHE_RT_ERROR;
  ++(offload ? context->offloads : context->prefetches);
  (offload ? context->offloadedBytes : context->prefetchedBytes) += bytes;
  return LETHE_RT_OK;
}

} // namespace

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

extern "C" lethe_rt_status lethe_rt_memory_init(lethe_rt_context *context,
                                                uint64_t arena_bytes,
                                                uint64_t host_pool_bytes) {
  const char *call = "lethe_rt_memory_init";
  if (!context)
    return LETHE_RT_ERROR;
  if (context->memoryInitialized)
    return fail(context, call,
                "memory is already initialized (once per context)");
  if (!checkDevice(context, call))
    return LETHE_RT_ERROR;
  // At least one aligned block each, so that the bases are never NULL (NULL
  // is the bases' error value) even for an empty arena or pool.
  void *arena = nullptr, *hostPool = nullptr;
  cudaError_t status =
      cudaMalloc(&arena, std::max(arena_bytes, memoryAlignment));
  if (status != cudaSuccess)
    return fail(context, call,
                "cannot allocate %llu bytes for the arena: cudaMalloc failed: "
                "%s (%s)",
                static_cast<unsigned long long>(arena_bytes),
                cudaGetErrorString(status), cudaGetErrorName(status));
  // Pinned, so that cudaMemcpyAsync to and from it is asynchronous; portable
  // would only matter with several devices.
  status = cudaHostAlloc(&hostPool, std::max(host_pool_bytes, memoryAlignment),
                         cudaHostAllocDefault);
  if (status != cudaSuccess) {
    cudaFree(arena);
    return fail(context, call,
                "cannot allocate %llu bytes for the host pool: cudaHostAlloc "
                "failed: %s (%s)",
                static_cast<unsigned long long>(host_pool_bytes),
                cudaGetErrorString(status), cudaGetErrorName(status));
  }
  context->arena = static_cast<uint8_t *>(arena);
  context->hostPool = static_cast<uint8_t *>(hostPool);
  context->arenaBytes = arena_bytes;
  context->hostPoolBytes = host_pool_bytes;
  // 0xFF bytes are NaN in every float type, as on the CPU backend: a read of
  // memory nothing wrote shows, and gives the same bits on both backends.
  std::memset(hostPool, 0xff, host_pool_bytes);
  if (!checkCuda(context, call, "cudaMemsetAsync",
                 cudaMemsetAsync(arena, 0xff, arena_bytes, context->compute)) ||
      !checkCuda(context, call, "cudaStreamSynchronize",
                 cudaStreamSynchronize(context->compute))) {
    cudaFree(arena);
    cudaFreeHost(hostPool);
    context->arena = context->hostPool = nullptr;
    context->arenaBytes = context->hostPoolBytes = 0;
    return LETHE_RT_ERROR;
  }
  context->memoryInitialized = true;
  return LETHE_RT_OK;
}

extern "C" void *lethe_rt_arena_base(lethe_rt_context *context) {
  if (!context || !checkMemoryInitialized(context, "lethe_rt_arena_base"))
    return nullptr;
  return context->arena;
}

extern "C" void *lethe_rt_host_pool_base(lethe_rt_context *context) {
  if (!context || !checkMemoryInitialized(context, "lethe_rt_host_pool_base"))
    return nullptr;
  return context->hostPool;
}

extern "C" lethe_rt_status lethe_rt_copy_to_arena(lethe_rt_context *context,
                                                  uint64_t arena_offset,
                                                  const void *source,
                                                  uint64_t bytes) {
  const char *call = "lethe_rt_copy_to_arena";
  if (!context)
    return LETHE_RT_ERROR;
  if (!checkMemoryInitialized(context, call))
    return LETHE_RT_ERROR;
  if (!source && bytes > 0)
    return fail(context, call, "source is null");
  if (!checkArenaRange(context, call, arena_offset, bytes) ||
      !synchronizeAll(*context, call))
    return LETHE_RT_ERROR;
  // cudaMemcpyDefault: the source may be pageable, pinned, or the device's
  // own memory (unified addressing tells which).
  if (bytes > 0 && !checkCuda(context, call, "cudaMemcpy",
                              cudaMemcpy(context->arena + arena_offset, source,
                                         bytes, cudaMemcpyDefault)))
    return LETHE_RT_ERROR;
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_copy_from_arena(lethe_rt_context *context,
                                                    void *destination,
                                                    uint64_t arena_offset,
                                                    uint64_t bytes) {
  const char *call = "lethe_rt_copy_from_arena";
  if (!context)
    return LETHE_RT_ERROR;
  if (!checkMemoryInitialized(context, call))
    return LETHE_RT_ERROR;
  if (!destination && bytes > 0)
    return fail(context, call, "destination is null");
  if (!checkArenaRange(context, call, arena_offset, bytes) ||
      !synchronizeAll(*context, call))
    return LETHE_RT_ERROR;
  if (bytes > 0 &&
      !checkCuda(context, call, "cudaMemcpy",
                 cudaMemcpy(destination, context->arena + arena_offset, bytes,
                            cudaMemcpyDefault)))
    return LETHE_RT_ERROR;
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_offload_async(lethe_rt_context *context,
                                                  uint64_t host_offset,
                                                  uint64_t arena_offset,
                                                  uint64_t bytes) {
  return issueCopy(context, "lethe_rt_offload_async", /*offload=*/true,
                   arena_offset, host_offset, bytes);
}

extern "C" lethe_rt_status lethe_rt_prefetch_async(lethe_rt_context *context,
                                                   uint64_t arena_offset,
                                                   uint64_t host_offset,
                                                   uint64_t bytes) {
  return issueCopy(context, "lethe_rt_prefetch_async", /*offload=*/false,
                   arena_offset, host_offset, bytes);
}

//===----------------------------------------------------------------------===//
// Events and streams
//===----------------------------------------------------------------------===//

extern "C" lethe_rt_status lethe_rt_event_create(lethe_rt_context *context,
                                                 lethe_rt_event **event) {
  const char *call = "lethe_rt_event_create";
  if (!context)
    return LETHE_RT_ERROR;
  if (!event)
    return fail(context, call, "event is null (nowhere to return the event)");
  if (!checkDevice(context, call))
    return LETHE_RT_ERROR;
  std::unique_ptr<lethe_rt_event> created(new (std::nothrow) lethe_rt_event());
  if (!created)
    return fail(context, call, "out of memory");
  if (!checkCuda(
          context, call, "cudaEventCreateWithFlags",
          cudaEventCreateWithFlags(&created->event, cudaEventDisableTiming)))
    return LETHE_RT_ERROR;
  registerEvent(created.get());
  *event = created.get();
  context->events.emplace(created.get(), std::move(created));
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_event_destroy(lethe_rt_context *context,
                                                  lethe_rt_event *event) {
  const char *call = "lethe_rt_event_destroy";
  if (!context)
    return LETHE_RT_ERROR;
  if (!event)
    return LETHE_RT_OK;
  if (!checkEvent(context, call, event))
    return LETHE_RT_ERROR;
  // CUDA keeps a destroyed event's pending mark alive for the waits already
  // issued on it, which the ABI promises.
  cudaError_t status = cudaEventDestroy(event->event);
  unregisterEvent(event);
  context->events.erase(event);
  return checkCuda(context, call, "cudaEventDestroy", status) ? LETHE_RT_OK
                                                              : LETHE_RT_ERROR;
}

extern "C" lethe_rt_status lethe_rt_event_record(lethe_rt_context *context,
                                                 lethe_rt_event *event,
                                                 lethe_rt_stream stream) {
  const char *call = "lethe_rt_event_record";
  if (!context)
    return LETHE_RT_ERROR;
  if (!checkEvent(context, call, event) ||
      !checkStream(context, call, stream) ||
      !checkCuda(context, call, "cudaEventRecord",
                 cudaEventRecord(event->event, streamOf(*context, stream))))
    return LETHE_RT_ERROR;
  event->recorded = true;
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_stream_wait_event(lethe_rt_context *context,
                                                      lethe_rt_stream stream,
                                                      lethe_rt_event *event) {
  const char *call = "lethe_rt_stream_wait_event";
  if (!context)
    return LETHE_RT_ERROR;
  if (!checkStream(context, call, stream) || !checkEvent(context, call, event))
    return LETHE_RT_ERROR;
  if (!event->recorded)
    return fail(context, call,
                "the event was never recorded (record it before waiting on "
                "it)");
  // The wait captures the event's current mark, as the ABI says: a later
  // record does not move it.
  if (!checkCuda(
          context, call, "cudaStreamWaitEvent",
          cudaStreamWaitEvent(streamOf(*context, stream), event->event, 0)))
    return LETHE_RT_ERROR;
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_synchronize(lethe_rt_context *context) {
  const char *call = "lethe_rt_synchronize";
  if (!context)
    return LETHE_RT_ERROR;
  if (!checkDevice(context, call) || !synchronizeAll(*context, call))
    return LETHE_RT_ERROR;
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status
lethe_rt_get_memory_stats(lethe_rt_context *context,
                          lethe_rt_memory_stats *stats) {
  if (!context)
    return LETHE_RT_ERROR;
  if (!stats)
    return fail(context, "lethe_rt_get_memory_stats", "stats is null");
  stats->arena_bytes = context->arenaBytes;
  stats->host_pool_bytes = context->hostPoolBytes;
  stats->offloaded_bytes = context->offloadedBytes;
  stats->prefetched_bytes = context->prefetchedBytes;
  stats->offloads = context->offloads;
  stats->prefetches = context->prefetches;
  return LETHE_RT_OK;
}
