//===- MemoryTest.cpp - Arena, host pool, streams and events --------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The memory and stream part of the ABI on the CPU backend. Besides what a
// correct program gets, these tests check that the backend is a faithful test
// backend: copies run as late as the stream order allows, so each kind of
// missing event wait gives wrong data. Kernels are played by lethe_rt_copy
// on descriptors into the arena; the host pool is read directly to see
// whether a copy has run yet.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include <cstring>
#include <limits>

using namespace lethe::rt::testing;

namespace {

using Words = std::vector<uint32_t>;

constexpr uint64_t arenaBytes = 4096, hostPoolBytes = 2048;
/// Each region holds `wordCount` u32 words.
constexpr int64_t wordCount = 8;
constexpr uint64_t regionBytes = wordCount * sizeof(uint32_t);
/// What memory that nothing wrote holds (0xFF bytes).
const Words poison(wordCount, 0xffffffffu);

/// Distinct contents for a region: first, first + 1, ...
Words words(uint32_t first) {
  Words values(wordCount);
  for (int64_t i = 0; i < wordCount; ++i)
    values[i] = first + static_cast<uint32_t>(i);
  return values;
}

/// A fixture with a context whose memory is initialized.
class MemoryTest : public RuntimeTest {
protected:
  void SetUp() override {
    ASSERT_EQ(lethe_rt_memory_init(context, arenaBytes, hostPoolBytes),
              LETHE_RT_OK)
        << lastError();
  }

  /// A u32 descriptor of one region at arena offset `offset`.
  lethe_rt_tensor arenaTensor(uint64_t offset) {
    return lethe_rt_tensor{
        static_cast<uint8_t *>(lethe_rt_arena_base(context)) + offset,
        LETHE_RT_U32, 1, &wordCount};
  }

  /// A kernel (on the compute stream) writes `values` at `offset`.
  void kernelWrite(uint64_t offset, const Words &values) {
    OwnedTensor<uint32_t> in({wordCount}, LETHE_RT_U32, values);
    lethe_rt_tensor inView = in.view(), out = arenaTensor(offset);
    ASSERT_EQ(lethe_rt_copy(context, &inView, &out), LETHE_RT_OK)
        << lastError();
  }

  /// What a kernel reading the region at `offset` sees now.
  Words kernelRead(uint64_t offset) {
    OwnedTensor<uint32_t> out({wordCount}, LETHE_RT_U32);
    lethe_rt_tensor in = arenaTensor(offset), outView = out.view();
    EXPECT_EQ(lethe_rt_copy(context, &in, &outView), LETHE_RT_OK)
        << lastError();
    return out.values;
  }

  /// Writes the region at `offset` synchronously (waiting for every stream).
  void load(uint64_t offset, const Words &values) {
    ASSERT_EQ(
        lethe_rt_copy_to_arena(context, offset, values.data(), regionBytes),
        LETHE_RT_OK)
        << lastError();
  }

  /// What the host pool holds at `offset` now, pending copies not run.
  Words hostPool(uint64_t offset) {
    Words values(wordCount);
    std::memcpy(values.data(),
                static_cast<uint8_t *>(lethe_rt_host_pool_base(context)) +
                    offset,
                regionBytes);
    return values;
  }

  /// A new event recorded on `stream`.
  lethe_rt_event *record(lethe_rt_stream stream) {
    lethe_rt_event *event = nullptr;
    EXPECT_EQ(lethe_rt_event_create(context, &event), LETHE_RT_OK)
        << lastError();
    EXPECT_EQ(lethe_rt_event_record(context, event, stream), LETHE_RT_OK)
        << lastError();
    return event;
  }

  void wait(lethe_rt_stream stream, lethe_rt_event *event) {
    EXPECT_EQ(lethe_rt_stream_wait_event(context, stream, event), LETHE_RT_OK)
        << lastError();
  }

  void offload(uint64_t hostOffset, uint64_t arenaOffset) {
    EXPECT_EQ(
        lethe_rt_offload_async(context, hostOffset, arenaOffset, regionBytes),
        LETHE_RT_OK)
        << lastError();
  }

  void prefetch(uint64_t arenaOffset, uint64_t hostOffset) {
    EXPECT_EQ(
        lethe_rt_prefetch_async(context, arenaOffset, hostOffset, regionBytes),
        LETHE_RT_OK)
        << lastError();
  }

  void synchronize() {
    EXPECT_EQ(lethe_rt_synchronize(context), LETHE_RT_OK) << lastError();
  }

  /// Puts `values` at host offset `hostOffset` through `scratch`, an arena
  /// region, and waits.
  void fillHost(uint64_t hostOffset, uint64_t scratch, const Words &values) {
    load(scratch, values);
    offload(hostOffset, scratch);
    synchronize();
  }

  static constexpr lethe_rt_stream compute = LETHE_RT_STREAM_COMPUTE;
  static constexpr lethe_rt_stream toHost = LETHE_RT_STREAM_DEVICE_TO_HOST;
  static constexpr lethe_rt_stream toDevice = LETHE_RT_STREAM_HOST_TO_DEVICE;
};

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

TEST_F(MemoryTest, BasesAreAlignedAndMemoryStartsPoisoned) {
  auto *arena = static_cast<uint8_t *>(lethe_rt_arena_base(context));
  auto *pool = static_cast<uint8_t *>(lethe_rt_host_pool_base(context));
  ASSERT_NE(arena, nullptr);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(arena) % 256, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(pool) % 256, 0u);
  for (uint64_t i = 0; i < arenaBytes; ++i)
    ASSERT_EQ(arena[i], 0xff) << "arena byte " << i;
  for (uint64_t i = 0; i < hostPoolBytes; ++i)
    ASSERT_EQ(pool[i], 0xff) << "host pool byte " << i;
}

TEST_F(MemoryTest, SynchronousCopiesRoundTrip) {
  Words in = words(7), out(wordCount);
  uint64_t last = arenaBytes - regionBytes; // the region ending the arena
  load(last, in);
  EXPECT_EQ(kernelRead(last), in);
  ASSERT_EQ(lethe_rt_copy_from_arena(context, out.data(), last, regionBytes),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out, in);
  // An empty copy may have no caller memory, even at the arena's end.
  EXPECT_EQ(lethe_rt_copy_to_arena(context, arenaBytes, nullptr, 0),
            LETHE_RT_OK);
  EXPECT_EQ(lethe_rt_copy_from_arena(context, nullptr, 0, 0), LETHE_RT_OK);
}

TEST_F(MemoryTest, ZeroSizesAreAllowed) {
  lethe_rt_context *empty = lethe_rt_context_create();
  ASSERT_EQ(lethe_rt_memory_init(empty, 0, 0), LETHE_RT_OK)
      << lethe_rt_last_error(empty);
  EXPECT_NE(lethe_rt_arena_base(empty), nullptr);
  EXPECT_EQ(lethe_rt_offload_async(empty, 0, 0, 0), LETHE_RT_OK);
  EXPECT_EQ(lethe_rt_synchronize(empty), LETHE_RT_OK);
  lethe_rt_context_destroy(empty);
}

//===----------------------------------------------------------------------===//
// Streams: a correct program
//===----------------------------------------------------------------------===//

TEST_F(MemoryTest, OffloadWaitPrefetchWaitGivesTheBytesBack) {
  const uint64_t a = 0, b = 256, host = 64;
  load(a, words(100));
  offload(host, a);
  lethe_rt_event *offloaded = record(toHost);
  wait(compute, offloaded);
  kernelWrite(a, words(200)); // a's region is released and reused
  wait(toDevice, offloaded);
  prefetch(b, host);
  lethe_rt_event *prefetched = record(toDevice);
  wait(compute, prefetched);
  EXPECT_EQ(kernelRead(b), words(100));
  EXPECT_EQ(kernelRead(a), words(200));
  EXPECT_EQ(hostPool(host), words(100));
}

TEST_F(MemoryTest, APrefetchWaitingOnAPendingOffloadSeesTheOffloadedData) {
  const uint64_t a = 0, b = 256, host = 0;
  load(a, words(100));
  offload(host, a);
  lethe_rt_event *offloaded = record(toHost);
  wait(toDevice, offloaded);
  prefetch(b, host);
  // Nothing forced either copy yet.
  EXPECT_EQ(hostPool(host), poison);
  lethe_rt_event *prefetched = record(toDevice);
  wait(compute, prefetched); // runs the offload, then the prefetch
  EXPECT_EQ(hostPool(host), words(100));
  EXPECT_EQ(kernelRead(b), words(100));
}

TEST_F(MemoryTest, AnOffloadWaitingOnAPrefetchLeavesItsSourceAlone) {
  const uint64_t a = 0, b = 256, scratch = 512, host = 0;
  fillHost(host, scratch, words(1));
  load(a, words(2));
  prefetch(b, host);
  lethe_rt_event *prefetched = record(toDevice);
  wait(toHost, prefetched);
  offload(host, a); // reuses the host region once the prefetch has read it
  synchronize();
  EXPECT_EQ(kernelRead(b), words(1));
  EXPECT_EQ(hostPool(host), words(2));
}

TEST_F(MemoryTest, AnEventMarksAPositionInItsStream) {
  const uint64_t a = 0, b = 256;
  load(a, words(10));
  load(b, words(20));
  offload(0, a);
  lethe_rt_event *event = record(toHost);
  offload(64, b);
  wait(compute, event); // runs the first offload only
  EXPECT_EQ(hostPool(0), words(10));
  EXPECT_EQ(hostPool(64), poison);
  // Recorded again, the event marks the second offload too.
  ASSERT_EQ(lethe_rt_event_record(context, event, toHost), LETHE_RT_OK);
  wait(compute, event);
  EXPECT_EQ(hostPool(64), words(20));
}

TEST_F(MemoryTest, AWaitKeepsThePositionTheEventHadWhenIssued) {
  const uint64_t a = 0, b = 256, c = 512;
  load(a, words(10));
  load(b, words(20));
  offload(0, a);
  lethe_rt_event *event = record(toHost);
  wait(toDevice, event); // waits for the first offload only
  prefetch(c, 64);
  offload(64, b);
  // Neither recording the event again nor destroying it changes the wait.
  ASSERT_EQ(lethe_rt_event_record(context, event, toHost), LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_event_destroy(context, event), LETHE_RT_OK);
  lethe_rt_event *prefetched = record(toDevice);
  wait(compute, prefetched);
  EXPECT_EQ(hostPool(0), words(10));
  EXPECT_EQ(kernelRead(c), poison); // the second offload has not run
}

TEST_F(MemoryTest, ComputeEventsAreCompleteAtOnce) {
  const uint64_t a = 0;
  kernelWrite(a, words(5));
  lethe_rt_event *written = record(compute);
  wait(toHost, written); // the kernel is done: nothing to wait for
  wait(compute, written);
  offload(0, a);
  lethe_rt_event *offloaded = record(toHost);
  wait(toHost, offloaded); // a stream is in order with itself
  synchronize();
  EXPECT_EQ(hostPool(0), words(5));
}

TEST_F(MemoryTest, SynchronizeAndSynchronousCopiesRunEveryPendingCopy) {
  for (uint64_t i = 0; i < 4; ++i)
    load(i * regionBytes, words(100 * static_cast<uint32_t>(i)));
  for (uint64_t i = 0; i < 4; ++i)
    offload(i * regionBytes, i * regionBytes);
  for (uint64_t i = 0; i < 4; ++i)
    EXPECT_EQ(hostPool(i * regionBytes), poison);
  synchronize();
  for (uint64_t i = 0; i < 4; ++i)
    EXPECT_EQ(hostPool(i * regionBytes), words(100 * static_cast<uint32_t>(i)));

  // A pending prefetch has run before copy_from_arena reads.
  prefetch(1024, 0);
  Words out(wordCount);
  ASSERT_EQ(lethe_rt_copy_from_arena(context, out.data(), 1024, regionBytes),
            LETHE_RT_OK);
  EXPECT_EQ(out, words(0));
  // A pending offload has run before copy_to_arena overwrites its source.
  offload(512, 0);
  load(0, words(7));
  EXPECT_EQ(hostPool(512), words(0));
}

TEST_F(MemoryTest, StatsCountAllocationAndIssuedCopies) {
  lethe_rt_memory_stats stats;
  ASSERT_EQ(lethe_rt_get_memory_stats(context, &stats), LETHE_RT_OK);
  EXPECT_EQ(stats.arena_bytes, arenaBytes);
  EXPECT_EQ(stats.host_pool_bytes, hostPoolBytes);
  EXPECT_EQ(stats.offloads, 0u);
  offload(0, 0);
  offload(64, 64);
  ASSERT_EQ(lethe_rt_prefetch_async(context, 0, 0, 16), LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_get_memory_stats(context, &stats), LETHE_RT_OK);
  EXPECT_EQ(stats.offloads, 2u); // counted when issued, run or not
  EXPECT_EQ(stats.offloaded_bytes, 2 * regionBytes);
  EXPECT_EQ(stats.prefetches, 1u);
  EXPECT_EQ(stats.prefetched_bytes, 16u);
  synchronize();
  ASSERT_EQ(lethe_rt_get_memory_stats(context, &stats), LETHE_RT_OK);
  EXPECT_EQ(stats.offloads, 2u);
}

TEST_F(MemoryTest, DestroyingAContextWithPendingCopiesFreesEverything) {
  lethe_rt_context *other = lethe_rt_context_create();
  ASSERT_EQ(lethe_rt_memory_init(other, 1 << 20, 1 << 20), LETHE_RT_OK);
  lethe_rt_event *event = nullptr, *unused = nullptr;
  ASSERT_EQ(lethe_rt_event_create(other, &event), LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_event_create(other, &unused), LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_offload_async(other, 0, 0, 1 << 19), LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_event_record(other, event, toHost), LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_stream_wait_event(other, toDevice, event), LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_prefetch_async(other, 1 << 19, 0, 1 << 19), LETHE_RT_OK);
  lethe_rt_context_destroy(other); // valgrind checks that nothing leaks
  // The destroyed context's events are no events of any live context.
  EXPECT_EQ(lethe_rt_event_record(context, event, toHost), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_event_record: the event was destroyed (or "
                         "never created)");
}

//===----------------------------------------------------------------------===//
// Streams: a missing wait shows as wrong data
//===----------------------------------------------------------------------===//

TEST_F(MemoryTest, OverwritingAnOffloadsSourceWithoutWaitingOffloadsNewData) {
  const uint64_t a = 0, host = 0;
  load(a, words(100));
  offload(host, a);
  kernelWrite(a, words(200)); // forgot to wait for the offload
  synchronize();
  EXPECT_EQ(hostPool(host), words(200));
  // With the wait, the old data.
  load(a, words(100));
  offload(host, a);
  wait(compute, record(toHost));
  kernelWrite(a, words(200));
  EXPECT_EQ(hostPool(host), words(100));
}

TEST_F(MemoryTest, ReadingAPrefetchWithoutWaitingSeesTheOldContents) {
  const uint64_t b = 256, scratch = 512, host = 0;
  fillHost(host, scratch, words(100));
  load(b, words(5));
  prefetch(b, host);
  EXPECT_EQ(kernelRead(b), words(5)); // forgot to wait for the prefetch
  wait(compute, record(toDevice));
  EXPECT_EQ(kernelRead(b), words(100));
}

TEST_F(MemoryTest, APrefetchNotWaitingOnItsOffloadReadsStaleHostData) {
  const uint64_t a = 0, b = 256, host = 0;
  load(a, words(100));
  offload(host, a);
  prefetch(b, host); // forgot to wait for the offload
  synchronize();
  EXPECT_EQ(kernelRead(b), poison);
  EXPECT_EQ(hostPool(host), words(100));
}

TEST_F(MemoryTest, AnOffloadNotWaitingOnAPrefetchOverwritesItsSource) {
  const uint64_t a = 0, b = 256, scratch = 512, host = 0;
  fillHost(host, scratch, words(1));
  load(a, words(2));
  prefetch(b, host);
  offload(host, a); // forgot to wait for the prefetch reading `host`
  synchronize();
  EXPECT_EQ(kernelRead(b), words(2));
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

using MemoryErrorsTest = RuntimeTest;

TEST_F(MemoryErrorsTest, MemoryUsedBeforeInit) {
  const std::string notInitialized =
      ": memory is not initialized (call lethe_rt_memory_init first)";
  uint8_t buffer[8] = {};
  EXPECT_EQ(lethe_rt_arena_base(context), nullptr);
  EXPECT_EQ(lastError(), "lethe_rt_arena_base" + notInitialized);
  EXPECT_EQ(lethe_rt_host_pool_base(context), nullptr);
  EXPECT_EQ(lastError(), "lethe_rt_host_pool_base" + notInitialized);
  EXPECT_EQ(lethe_rt_copy_to_arena(context, 0, buffer, 8), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_copy_to_arena" + notInitialized);
  EXPECT_EQ(lethe_rt_copy_from_arena(context, buffer, 0, 8), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_copy_from_arena" + notInitialized);
  EXPECT_EQ(lethe_rt_offload_async(context, 0, 0, 8), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_offload_async" + notInitialized);
  EXPECT_EQ(lethe_rt_prefetch_async(context, 0, 0, 8), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_prefetch_async" + notInitialized);
  // Events, synchronize and the statistics need no memory.
  lethe_rt_memory_stats stats;
  std::memset(&stats, 0x55, sizeof(stats));
  EXPECT_EQ(lethe_rt_get_memory_stats(context, &stats), LETHE_RT_OK);
  EXPECT_EQ(stats.arena_bytes, 0u);
  EXPECT_EQ(stats.offloads, 0u);
  EXPECT_EQ(lethe_rt_synchronize(context), LETHE_RT_OK);
  lethe_rt_event *event = nullptr;
  EXPECT_EQ(lethe_rt_event_create(context, &event), LETHE_RT_OK);
  EXPECT_EQ(lethe_rt_event_record(context, event, LETHE_RT_STREAM_COMPUTE),
            LETHE_RT_OK);
}

TEST_F(MemoryErrorsTest, InitTwiceOrOutOfMemory) {
  EXPECT_EQ(lethe_rt_memory_init(context, uint64_t(1) << 62, 0),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_memory_init: cannot allocate "
                         "4611686018427387904 bytes for the arena");
  EXPECT_EQ(
      lethe_rt_memory_init(context, 64, std::numeric_limits<uint64_t>::max()),
      LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_memory_init: cannot allocate "
                         "18446744073709551615 bytes for the host pool");
  // A failed init leaves the context as it was: it may try again.
  EXPECT_EQ(lethe_rt_arena_base(context), nullptr);
  ASSERT_EQ(lethe_rt_memory_init(context, 64, 64), LETHE_RT_OK);
  EXPECT_EQ(lethe_rt_memory_init(context, 64, 64), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_memory_init: memory is already "
                         "initialized (once per context)");
}

TEST(MemoryNullContextTest, EveryCallFails) {
  lethe_rt_event *event = nullptr;
  lethe_rt_memory_stats stats;
  uint8_t buffer[8] = {};
  EXPECT_EQ(lethe_rt_memory_init(nullptr, 8, 8), LETHE_RT_ERROR);
  EXPECT_EQ(lethe_rt_arena_base(nullptr), nullptr);
  EXPECT_EQ(lethe_rt_host_pool_base(nullptr), nullptr);
  EXPECT_EQ(lethe_rt_copy_to_arena(nullptr, 0, buffer, 8), LETHE_RT_ERROR);
  EXPECT_EQ(lethe_rt_copy_from_arena(nullptr, buffer, 0, 8), LETHE_RT_ERROR);
  EXPECT_EQ(lethe_rt_offload_async(nullptr, 0, 0, 8), LETHE_RT_ERROR);
  EXPECT_EQ(lethe_rt_prefetch_async(nullptr, 0, 0, 8), LETHE_RT_ERROR);
  EXPECT_EQ(lethe_rt_event_create(nullptr, &event), LETHE_RT_ERROR);
  EXPECT_EQ(lethe_rt_event_destroy(nullptr, event), LETHE_RT_ERROR);
  EXPECT_EQ(lethe_rt_event_record(nullptr, event, LETHE_RT_STREAM_COMPUTE),
            LETHE_RT_ERROR);
  EXPECT_EQ(lethe_rt_stream_wait_event(nullptr, LETHE_RT_STREAM_COMPUTE, event),
            LETHE_RT_ERROR);
  EXPECT_EQ(lethe_rt_synchronize(nullptr), LETHE_RT_ERROR);
  EXPECT_EQ(lethe_rt_get_memory_stats(nullptr, &stats), LETHE_RT_ERROR);
  EXPECT_STREQ(lethe_rt_last_error(nullptr), "no runtime context");
}

TEST_F(MemoryTest, RangesPastTheEndFailAndDoNothing) {
  Words values = words(1);
  EXPECT_EQ(lethe_rt_copy_to_arena(context, arenaBytes - 8, values.data(), 16),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_copy_to_arena: arena offset 4088 + 16 "
                         "bytes is past the end of the arena (4096 bytes)");
  // offset + bytes wraps around 2^64: still past the end.
  EXPECT_EQ(lethe_rt_copy_from_arena(context, values.data(),
                                     std::numeric_limits<uint64_t>::max(), 2),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_copy_from_arena: arena offset "
                         "18446744073709551615 + 2 bytes is past the end of "
                         "the arena (4096 bytes)");
  EXPECT_EQ(lethe_rt_copy_to_arena(context, 8, values.data(),
                                   std::numeric_limits<uint64_t>::max()),
            LETHE_RT_ERROR);
  EXPECT_EQ(lethe_rt_offload_async(context, hostPoolBytes - 16, 0, 32),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_offload_async: host offset 2032 + 32 bytes "
                         "is past the end of the host pool (2048 bytes)");
  EXPECT_EQ(lethe_rt_offload_async(context, 0, arenaBytes + 1, 0),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_offload_async: arena offset 4097 + 0 "
                         "bytes is past the end of the arena (4096 bytes)");
  EXPECT_EQ(lethe_rt_prefetch_async(context, arenaBytes - 16, 0, 32),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_prefetch_async: arena offset 4080 + 32 "
                         "bytes is past the end of the arena (4096 bytes)");
  EXPECT_EQ(lethe_rt_prefetch_async(context, 0, hostPoolBytes, 1),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_prefetch_async: host offset 2048 + 1 "
                         "bytes is past the end of the host pool (2048 bytes)");
  // Nothing was issued or written.
  lethe_rt_memory_stats stats;
  ASSERT_EQ(lethe_rt_get_memory_stats(context, &stats), LETHE_RT_OK);
  EXPECT_EQ(stats.offloads + stats.prefetches, 0u);
  EXPECT_EQ(kernelRead(arenaBytes - regionBytes), poison);
}

TEST_F(MemoryTest, NullPointersFail) {
  EXPECT_EQ(lethe_rt_copy_to_arena(context, 0, nullptr, 4), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_copy_to_arena: source is null");
  EXPECT_EQ(lethe_rt_copy_from_arena(context, nullptr, 0, 4), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_copy_from_arena: destination is null");
  EXPECT_EQ(lethe_rt_event_create(context, nullptr), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_event_create: event is null (nowhere to "
                         "return the event)");
  EXPECT_EQ(lethe_rt_event_record(context, nullptr, compute), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_event_record: event is null");
  EXPECT_EQ(lethe_rt_stream_wait_event(context, compute, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_stream_wait_event: event is null");
  EXPECT_EQ(lethe_rt_get_memory_stats(context, nullptr), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_get_memory_stats: stats is null");
  // Like free(NULL).
  EXPECT_EQ(lethe_rt_event_destroy(context, nullptr), LETHE_RT_OK);
}

TEST_F(MemoryTest, BadStreamsAndEventsFail) {
  lethe_rt_event *event = record(toHost);
  auto badStream = static_cast<lethe_rt_stream>(3);
  EXPECT_EQ(lethe_rt_event_record(context, event, badStream), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_event_record: unknown stream 3 (0 compute, "
                         "1 device-to-host, 2 host-to-device)");
  // (3 is the only value past the last stream that C++ lets a
  // lethe_rt_stream hold; a C caller may pass any int.)
  EXPECT_EQ(lethe_rt_stream_wait_event(context, badStream, event),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_stream_wait_event: unknown stream 3 (0 "
                         "compute, 1 device-to-host, 2 host-to-device)");

  lethe_rt_event *unrecorded = nullptr;
  ASSERT_EQ(lethe_rt_event_create(context, &unrecorded), LETHE_RT_OK);
  EXPECT_EQ(lethe_rt_stream_wait_event(context, compute, unrecorded),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_stream_wait_event: the event was never "
                         "recorded (record it before waiting on it)");

  // Another context's event.
  lethe_rt_context *other = lethe_rt_context_create();
  lethe_rt_event *foreign = nullptr;
  ASSERT_EQ(lethe_rt_event_create(other, &foreign), LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_event_record(other, foreign, compute), LETHE_RT_OK);
  const std::string notOurs = ": the event belongs to another context";
  EXPECT_EQ(lethe_rt_event_record(context, foreign, toHost), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_event_record" + notOurs);
  EXPECT_EQ(lethe_rt_stream_wait_event(context, toDevice, foreign),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_stream_wait_event" + notOurs);
  EXPECT_EQ(lethe_rt_event_destroy(context, foreign), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_event_destroy" + notOurs);
  lethe_rt_context_destroy(other);

  // A destroyed event (best effort: found in no context's live events).
  ASSERT_EQ(lethe_rt_event_destroy(context, event), LETHE_RT_OK);
  const std::string destroyed = ": the event was destroyed (or never created)";
  EXPECT_EQ(lethe_rt_event_record(context, event, toHost), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_event_record" + destroyed);
  EXPECT_EQ(lethe_rt_stream_wait_event(context, compute, event),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_stream_wait_event" + destroyed);
  EXPECT_EQ(lethe_rt_event_destroy(context, event), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_event_destroy" + destroyed);
}

} // namespace
