//===- MemoryTest.cpp - Arena, host pool, streams and events on CUDA ------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The memory and stream part of the ABI on the CUDA backend: what a correct
// program gets (an offload, an event and a prefetch round-trip the bytes),
// the statistics, and the errors every backend gives.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"

using namespace lethe::rt::testing;

namespace {

using MemoryTest = CudaRuntimeTest;

TEST_F(MemoryTest, BasesAreAlignedAndInitIsOnce) {
  EXPECT_EQ(reinterpret_cast<uintptr_t>(arena) % 256, 0u);
  void *hostPool = lethe_rt_host_pool_base(context);
  ASSERT_NE(hostPool, nullptr) << lastError();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(hostPool) % 256, 0u);
  EXPECT_EQ(lethe_rt_memory_init(context, 256, 256), LETHE_RT_ERROR);
  EXPECT_NE(lastError().find("lethe_rt_memory_init"), std::string::npos)
      << lastError();
}

TEST_F(MemoryTest, FreshArenaIsAllOnes) {
  lethe_rt_tensor fresh = place<uint32_t>({16}, LETHE_RT_U32);
  for (uint32_t word : read<uint32_t>(fresh))
    EXPECT_EQ(word, 0xffffffffu);
}

TEST_F(MemoryTest, OffloadEventPrefetchRoundTrips) {
  constexpr int64_t count = 1000;
  std::vector<uint32_t> values(count);
  for (int64_t i = 0; i < count; ++i)
    values[i] = 0x9e3779b9u * static_cast<uint32_t>(i + 1);
  lethe_rt_tensor source = place<uint32_t>({count}, LETHE_RT_U32, values);
  lethe_rt_tensor written = place<uint32_t>({count}, LETHE_RT_U32);
  lethe_rt_tensor prefetched = place<uint32_t>({count}, LETHE_RT_U32);
  lethe_rt_tensor result = place<uint32_t>({count}, LETHE_RT_U32);
  uint64_t bytes = count * sizeof(uint32_t);
  auto offsetOf = [&](const lethe_rt_tensor &tensor) {
    return static_cast<uint64_t>(static_cast<uint8_t *>(tensor.data) - arena);
  };

  lethe_rt_event *computed, *offloaded, *arrived;
  ASSERT_EQ(lethe_rt_event_create(context, &computed), LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_event_create(context, &offloaded), LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_event_create(context, &arrived), LETHE_RT_OK);
  // A kernel writes the tensor, an offload copies it out once written, a
  // prefetch brings it back into another region once offloaded, and a
  // kernel reads that region once prefetched.
  ASSERT_EQ(lethe_rt_copy(context, &source, &written), LETHE_RT_OK)
      << lastError();
  ASSERT_EQ(lethe_rt_event_record(context, computed, LETHE_RT_STREAM_COMPUTE),
            LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_stream_wait_event(context, LETHE_RT_STREAM_DEVICE_TO_HOST,
                                       computed),
            LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_offload_async(context, 512, offsetOf(written), bytes),
            LETHE_RT_OK)
      << lastError();
  ASSERT_EQ(
      lethe_rt_event_record(context, offloaded, LETHE_RT_STREAM_DEVICE_TO_HOST),
      LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_stream_wait_event(context, LETHE_RT_STREAM_HOST_TO_DEVICE,
                                       offloaded),
            LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_prefetch_async(context, offsetOf(prefetched), 512, bytes),
            LETHE_RT_OK)
      << lastError();
  ASSERT_EQ(
      lethe_rt_event_record(context, arrived, LETHE_RT_STREAM_HOST_TO_DEVICE),
      LETHE_RT_OK);
  ASSERT_EQ(
      lethe_rt_stream_wait_event(context, LETHE_RT_STREAM_COMPUTE, arrived),
      LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_copy(context, &prefetched, &result), LETHE_RT_OK)
      << lastError();
  ASSERT_EQ(lethe_rt_synchronize(context), LETHE_RT_OK) << lastError();

  EXPECT_EQ(read<uint32_t>(result), values);
  const uint8_t *hostPool =
      static_cast<const uint8_t *>(lethe_rt_host_pool_base(context));
  EXPECT_EQ(std::memcmp(hostPool + 512, values.data(), bytes), 0);

  lethe_rt_memory_stats stats;
  ASSERT_EQ(lethe_rt_get_memory_stats(context, &stats), LETHE_RT_OK);
  EXPECT_EQ(stats.arena_bytes, testArenaBytes);
  EXPECT_EQ(stats.host_pool_bytes, testHostPoolBytes);
  EXPECT_EQ(stats.offloads, 1u);
  EXPECT_EQ(stats.prefetches, 1u);
  EXPECT_EQ(stats.offloaded_bytes, bytes);
  EXPECT_EQ(stats.prefetched_bytes, bytes);
  for (lethe_rt_event *event : {computed, offloaded, arrived})
    EXPECT_EQ(lethe_rt_event_destroy(context, event), LETHE_RT_OK);
}

TEST_F(MemoryTest, BadStreamCallsFail) {
  lethe_rt_event *event;
  ASSERT_EQ(lethe_rt_event_create(context, &event), LETHE_RT_OK);
  EXPECT_EQ(lethe_rt_stream_wait_event(context, LETHE_RT_STREAM_COMPUTE, event),
            LETHE_RT_ERROR);
  EXPECT_NE(lastError().find("never recorded"), std::string::npos)
      << lastError();
  EXPECT_EQ(
      lethe_rt_event_record(context, event, static_cast<lethe_rt_stream>(7)),
      LETHE_RT_ERROR);
  EXPECT_NE(lastError().find("unknown stream 7"), std::string::npos)
      << lastError();
  EXPECT_EQ(lethe_rt_offload_async(context, testHostPoolBytes, 0, 1),
            LETHE_RT_ERROR);
  EXPECT_NE(lastError().find("past the end of the host pool"),
            std::string::npos)
      << lastError();
  ASSERT_EQ(lethe_rt_event_destroy(context, event), LETHE_RT_OK);
  EXPECT_EQ(lethe_rt_event_record(context, event, LETHE_RT_STREAM_COMPUTE),
            LETHE_RT_ERROR);
  EXPECT_NE(lastError().find("destroyed"), std::string::npos) << lastError();
}

TEST_F(MemoryTest, OpHookSeesEachOp) {
  std::vector<int32_t> seen;
  lethe_rt_op_hook hook = [](void *data, int32_t op) {
    static_cast<std::vector<int32_t> *>(data)->push_back(op);
  };
  ASSERT_EQ(lethe_rt_set_op_hook(context, hook, &seen), LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_op_begin(context, 3), LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_op_begin(context, 4), LETHE_RT_OK);
  EXPECT_EQ(seen, (std::vector<int32_t>{3, 4}));
}

} // namespace
