//===- Memory.cpp - Memory, streams and events of the CPU backend ---------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The memory and stream part of the ABI ("Memory and streams" in lethe_rt.h)
// on the CPU, built as a test backend: a program that forgets an event wait
// must compute wrong values here rather than pass by luck.
//
// Kernels run when called, so the compute stream never has pending work.
// Each copy stream is a queue (CopyStream) of operations that run as late as
// the stream order allows: only when something forces them. An event
// recorded on a copy stream holds the stream's position then; a
// compute-stream wait runs the stream up to that position at once; a wait of
// the other copy stream is queued as a Wait operation, which, when its turn
// comes, runs the waited-on stream up to the position first. Running a
// stream never needs more than one level of recursion: the event a Wait
// names was recorded before the wait was issued, so any Wait the other
// stream meets on the way names a position of this stream that it has
// already passed.
//
// When everything must run (synchronize, the synchronous copies, context
// destruction), the two queues are merged by taking, of the two pending
// operations at their heads, the one issued later: a copy left unordered
// with an earlier copy of the other stream then runs before it, so that both
// a prefetch that forgets to wait for an offload and an offload that forgets
// to wait for a prefetch read or write the wrong bytes.
//
//===----------------------------------------------------------------------===//

#include "CpuRuntime.h"
#include "common/Events.h"

#include <limits>

using namespace lethe::rt;

namespace {

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

//===----------------------------------------------------------------------===//
// Copy streams
//===----------------------------------------------------------------------===//

CopyStream &copyStream(lethe_rt_context &context, lethe_rt_stream stream) {
  return stream == LETHE_RT_STREAM_DEVICE_TO_HOST ? context.deviceToHost
                                                  : context.hostToDevice;
}

bool hasPending(const CopyStream &stream) {
  return stream.completed < stream.issued;
}

/// Appends `operation` to the queue of copy stream `stream`.
void issue(lethe_rt_context &context, lethe_rt_stream stream,
           StreamOperation operation) {
  CopyStream &queue = copyStream(context, stream);
  operation.issue = context.issuedOperations++;
  queue.queue.push_back(operation);
  ++queue.issued;
}

/// Runs copy stream `stream` up to `position`, and, where it meets a Wait,
/// the other copy stream up to the Wait's position first.
void runUpTo(lethe_rt_context &context, lethe_rt_stream stream,
             uint64_t position) {
  CopyStream &queue = copyStream(context, stream);
  while (queue.completed < position) {
    StreamOperation operation = queue.queue[queue.head++];
    ++queue.completed;
    switch (operation.kind) {
    case StreamOperation::Kind::Offload:
      std::memcpy(context.hostPool.get() + operation.hostOffset,
                  context.arena.get() + operation.arenaOffset, operation.bytes);
      break;
    case StreamOperation::Kind::Prefetch:
      std::memcpy(context.arena.get() + operation.arenaOffset,
                  context.hostPool.get() + operation.hostOffset,
                  operation.bytes);
      break;
    case StreamOperation::Kind::Wait:
      runUpTo(context, operation.waitStream, operation.waitPosition);
      break;
    }
  }
  if (!hasPending(queue)) {
    queue.queue.clear();
    queue.head = 0;
  }
}

/// Runs both copy streams to their ends; of two operations that nothing
/// orders, the one issued later runs first.
void runAll(lethe_rt_context &context) {
  CopyStream &deviceToHost = context.deviceToHost;
  CopyStream &hostToDevice = context.hostToDevice;
  while (hasPending(deviceToHost) || hasPending(hostToDevice)) {
    lethe_rt_stream next;
    if (!hasPending(hostToDevice))
      next = LETHE_RT_STREAM_DEVICE_TO_HOST;
    else if (!hasPending(deviceToHost))
      next = LETHE_RT_STREAM_HOST_TO_DEVICE;
    else
      next = deviceToHost.queue[deviceToHost.head].issue >
                     hostToDevice.queue[hostToDevice.head].issue
                 ? LETHE_RT_STREAM_DEVICE_TO_HOST
                 : LETHE_RT_STREAM_HOST_TO_DEVICE;
    CopyStream &queue = copyStream(context, next);
    runUpTo(context, next, queue.completed + 1);
  }
}

/// `bytes` bytes aligned to `memoryAlignment`; null when out of memory.
AlignedBuffer allocate(uint64_t bytes) {
  if (bytes > std::numeric_limits<size_t>::max() - memoryAlignment)
    return nullptr;
  return AlignedBuffer(static_cast<uint8_t *>(
      ::operator new[](static_cast<size_t>(bytes),
                       std::align_val_t(memoryAlignment), std::nothrow)));
}

} // namespace

void lethe::rt::finishMemory(lethe_rt_context &context) {
  runAll(context);
  unregisterEvents(context.events);
  context.events.clear();
}

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
  AlignedBuffer arena = allocate(arena_bytes);
  if (!arena)
    return fail(context, call, "cannot allocate %llu bytes for the arena",
                static_cast<unsigned long long>(arena_bytes));
  AlignedBuffer hostPool = allocate(host_pool_bytes);
  if (!hostPool)
    return fail(context, call, "cannot allocate %llu bytes for the host pool",
                static_cast<unsigned long long>(host_pool_bytes));
  // 0xFF bytes are NaN in every float type: a read of memory nothing wrote
  // shows.
  std::memset(arena.get(), 0xff, arena_bytes);
  std::memset(hostPool.get(), 0xff, host_pool_bytes);
  context->arena = std::move(arena);
  context->hostPool = std::move(hostPool);
  context->arenaBytes = arena_bytes;
  context->hostPoolBytes = host_pool_bytes;
  context->memoryInitialized = true;
  return LETHE_RT_OK;
}

extern "C" void *lethe_rt_arena_base(lethe_rt_context *context) {
  if (!context || !checkMemoryInitialized(context, "lethe_rt_arena_base"))
    return nullptr;
  return context->arena.get();
}

extern "C" void *lethe_rt_host_pool_base(lethe_rt_context *context) {
  if (!context || !checkMemoryInitialized(context, "lethe_rt_host_pool_base"))
    return nullptr;
  return context->hostPool.get();
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
  if (!checkArenaRange(context, call, arena_offset, bytes))
    return LETHE_RT_ERROR;
  runAll(*context);
  if (bytes > 0) // memmove: the caller's memory might lie in the arena
    std::memmove(context->arena.get() + arena_offset, source, bytes);
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
  if (!checkArenaRange(context, call, arena_offset, bytes))
    return LETHE_RT_ERROR;
  runAll(*context);
  if (bytes > 0)
    std::memmove(destination, context->arena.get() + arena_offset, bytes);
  return LETHE_RT_OK;
}

namespace {

/// Checks and queues an offload or a prefetch on its copy stream.
lethe_rt_status issueCopy(lethe_rt_context *context, const char *call,
                          StreamOperation::Kind kind, uint64_t arenaOffset,
                          uint64_t hostOffset, uint64_t bytes) {
  if (!context)
    return LETHE_RT_ERROR;
  if (!checkMemoryInitialized(context, call) ||
      !checkArenaRange(context, call, arenaOffset, bytes) ||
      !checkHostRange(context, call, hostOffset, bytes))
    return LETHE_RT_ERROR;
  StreamOperation copy{};
  copy.kind = kind;
  copy.arenaOffset = arenaOffset;
  copy.hostOffset = hostOffset;
  copy.bytes = bytes;
  bool offload = kind == StreamOperation::Kind::Offload;
  issue(*context,
        offload ? LETHE_RT_STREAM_DEVICE_TO_HOST
                : LETHE_RT_STREAM_HOST_TO_DEVICE,
        copy);
  ++(offload ? context->offloads : context->prefetches);
  (offload ? context->offloadedBytes : context->prefetchedBytes) += bytes;
  return LETHE_RT_OK;
}

} // namespace

extern "C" lethe_rt_status lethe_rt_offload_async(lethe_rt_context *context,
                                                  uint64_t host_offset,
                                                  uint64_t arena_offset,
                                                  uint64_t bytes) {
  return issueCopy(context, "lethe_rt_offload_async",
                   StreamOperation::Kind::Offload, arena_offset, host_offset,
                   bytes);
}

extern "C" lethe_rt_status lethe_rt_prefetch_async(lethe_rt_context *context,
                                                   uint64_t arena_offset,
                                                   uint64_t host_offset,
                                                   uint64_t bytes) {
  return issueCopy(context, "lethe_rt_prefetch_async",
                   StreamOperation::Kind::Prefetch, arena_offset, host_offset,
                   bytes);
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
  std::unique_ptr<lethe_rt_event> created(new (std::nothrow) lethe_rt_event());
  if (!created)
    return fail(context, call, "out of memory");
  registerEvent(created.get());
  *event = created.get();
  context->events.emplace(created.get(), std::move(created));
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_event_destroy(lethe_rt_context *context,
                                                  lethe_rt_event *event) {
  if (!context)
    return LETHE_RT_ERROR;
  if (!event)
    return LETHE_RT_OK;
  if (!checkEvent(context, "lethe_rt_event_destroy", event))
    return LETHE_RT_ERROR;
  // The waits issued on the event hold copies of its position: nothing refers
  // to it.
  unregisterEvent(event);
  context->events.erase(event);
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_event_record(lethe_rt_context *context,
                                                 lethe_rt_event *event,
                                                 lethe_rt_stream stream) {
  const char *call = "lethe_rt_event_record";
  if (!context)
    return LETHE_RT_ERROR;
  if (!checkEvent(context, call, event) || !checkStream(context, call, stream))
    return LETHE_RT_ERROR;
  event->recorded = true;
  event->stream = stream;
  // The compute stream has done all its work: its events are complete.
  event->position = stream == LETHE_RT_STREAM_COMPUTE
                        ? 0
                        : copyStream(*context, stream).issued;
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
  // A stream runs in order, and the compute stream's events are complete.
  if (event->stream == stream || event->stream == LETHE_RT_STREAM_COMPUTE)
    return LETHE_RT_OK;
  if (copyStream(*context, event->stream).completed >= event->position)
    return LETHE_RT_OK;
  // Kernels run when called: the copies a kernel waits for run now.
  if (stream == LETHE_RT_STREAM_COMPUTE) {
    runUpTo(*context, event->stream, event->position);
    return LETHE_RT_OK;
  }
  StreamOperation wait{};
  wait.kind = StreamOperation::Kind::Wait;
  wait.waitStream = event->stream;
  wait.waitPosition = event->position;
  issue(*context, stream, wait);
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_synchronize(lethe_rt_context *context) {
  if (!context)
    return LETHE_RT_ERROR;
  runAll(*context);
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
