//===- ContextTest.cpp - The CUDA backend's context, with or without a GPU ===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// What a context does on a machine without a usable GPU (it is still created,
// and every call that needs the device fails saying why), and the calls that
// need no device. These run on the build machines, which have none. On a GPU:
// the op hook sees the device's work done.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"

using namespace lethe::rt::testing;

namespace {

TEST(ContextTest, WithoutADeviceEveryCallSaysWhy) {
  std::string missing = missingDevice();
  if (missing.empty())
    GTEST_SKIP() << "has a GPU: this test is for machines without one";
  lethe_rt_context *context = lethe_rt_context_create();
  ASSERT_NE(context, nullptr);
  std::string created = lethe_rt_last_error(context);
  EXPECT_EQ(created.rfind("lethe_rt_context_create: cudaGetDevice failed: ", 0),
            0u)
      << created;
  EXPECT_EQ(lethe_rt_memory_init(context, 1024, 1024), LETHE_RT_ERROR);
  EXPECT_EQ(std::string(lethe_rt_last_error(context)),
            "lethe_rt_memory_init: no usable CUDA device (" + created + ")");
  lethe_rt_event *event = nullptr;
  EXPECT_EQ(lethe_rt_event_create(context, &event), LETHE_RT_ERROR);
  EXPECT_EQ(event, nullptr);
  lethe_rt_tensor scalar{nullptr, LETHE_RT_F32, 0, nullptr};
  EXPECT_EQ(lethe_rt_unary(context, LETHE_RT_EXP, 0, 0, &scalar, &scalar),
            LETHE_RT_ERROR);
  EXPECT_EQ(std::string(lethe_rt_last_error(context))
                .rfind("lethe_rt_unary: no usable CUDA device", 0),
            0u)
      << lethe_rt_last_error(context);
  lethe_rt_context_destroy(context);
}

TEST(ContextTest, CallsThatNeedNoDevice) {
  lethe_rt_context *context = lethe_rt_context_create();
  ASSERT_NE(context, nullptr);
  lethe_rt_memory_stats stats;
  ASSERT_EQ(lethe_rt_get_memory_stats(context, &stats), LETHE_RT_OK);
  EXPECT_EQ(stats.arena_bytes, 0u);
  EXPECT_EQ(stats.offloads, 0u);
  EXPECT_EQ(lethe_rt_get_memory_stats(context, nullptr), LETHE_RT_ERROR);
  EXPECT_STREQ(lethe_rt_last_error(context),
               "lethe_rt_get_memory_stats: stats is null");
  EXPECT_EQ(lethe_rt_arena_base(context), nullptr);
  EXPECT_STREQ(lethe_rt_last_error(context),
               "lethe_rt_arena_base: memory is not initialized (call "
               "lethe_rt_memory_init first)");
  int64_t shape[] = {2, 3, 4};
  lethe_rt_tensor tensor{nullptr, LETHE_RT_F32, 3, shape};
  EXPECT_EQ(lethe_rt_num_elements(&tensor), 24);
  EXPECT_EQ(lethe_rt_dtype_size(LETHE_RT_BF16), 2u);
  EXPECT_EQ(lethe_rt_op_begin(nullptr, 0), LETHE_RT_ERROR);
  EXPECT_STREQ(lethe_rt_last_error(nullptr), "no runtime context");
  lethe_rt_context_destroy(context);
  lethe_rt_context_destroy(nullptr);
}

/// What the hook of OpBeginWaitsForTheComputeStreamWhenHooked reads: one
/// float at `source`, with a plain copy on the legacy stream, which does not
/// wait for the context's non-blocking streams.
struct HookedRead {
  const void *source = nullptr;
  float value = 0;
  cudaError_t status = cudaSuccess;
};

void readInHook(void *data, int32_t) {
  auto *read = static_cast<HookedRead *>(data);
  read->status = cudaMemcpy(&read->value, read->source, sizeof(float),
                            cudaMemcpyDeviceToHost);
}

TEST_F(CudaRuntimeTest, OpBeginWaitsForTheComputeStreamWhenHooked) {
  // A weight gradient of one element that the direct kernels compute (cuDNN
  // cannot express pads that differ at the two ends): one thread adding
  // 450,000 products, a millisecond or more after its launch returned.
  const int64_t length = 450000;
  lethe_rt_tensor x =
      place<float>({1, 1, length}, LETHE_RT_F32, std::vector<float>(length, 1));
  lethe_rt_tensor dy = place<float>({1, 1, length + 1}, LETHE_RT_F32,
                                    std::vector<float>(length + 1, 1));
  lethe_rt_tensor dw = place<float>({1, 1, 1}, LETHE_RT_F32); // 0xFF: NaN
  const int64_t strides[] = {1}, pads[] = {0, 1}, dilations[] = {1};
  HookedRead read;
  read.source = dw.data;
  ASSERT_EQ(lethe_rt_set_op_hook(context, readInHook, &read), LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_conv_grad_weight(context, &x, &dy, strides, pads,
                                      dilations, 1, &dw, nullptr),
            LETHE_RT_OK)
      << lastError();
  ASSERT_EQ(lethe_rt_op_begin(context, 1), LETHE_RT_OK);
  ASSERT_EQ(read.status, cudaSuccess) << cudaGetErrorString(read.status);
  EXPECT_EQ(read.value, static_cast<float>(length));
}

} // namespace
