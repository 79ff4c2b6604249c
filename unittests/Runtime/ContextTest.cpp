//===- ContextTest.cpp - Context, errors and element types ----------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "CpuRuntime.h"
#include "RuntimeTestUtils.h"

#include <cmath>
#include <limits>
#include <vector>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using ContextTest = RuntimeTest;

TEST_F(ContextTest, ErrorsNameTheKernelAndTheProblem) {
  EXPECT_STREQ(lethe_rt_last_error(context), "");
  OwnedTensor<float> in({2, 3}, LETHE_RT_F32);
  OwnedTensor<int64_t> out({6}, LETHE_RT_I64);
  lethe_rt_tensor inView = in.view(), outView = out.view();
  EXPECT_EQ(lethe_rt_copy(context, &inView, &outView), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_copy: out must be f32, got i64");
  EXPECT_EQ(lethe_rt_copy(context, nullptr, &outView), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_copy: in is missing (null descriptor)");
}

// What a call asks for beyond its workspace is the op's: lethe_rt_op_begin
// forgets it, after the hook has read it for the op before.
TEST_F(ContextTest, WorkspaceWantedIsReadPerOp) {
  EXPECT_EQ(lethe_rt_op_workspace_wanted(context), 0u);
  noteWorkspaceWanted(context, 4096);
  noteWorkspaceWanted(context, 1024);
  EXPECT_EQ(lethe_rt_op_workspace_wanted(context), 4096u);
  struct Seen {
    lethe_rt_context *context;
    std::vector<uint64_t> wanted;
  } seen{context, {}};
  auto hook = [](void *data, int32_t) {
    auto *seen = static_cast<Seen *>(data);
    seen->wanted.push_back(lethe_rt_op_workspace_wanted(seen->context));
  };
  ASSERT_EQ(lethe_rt_set_op_hook(context, hook, &seen), LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_op_begin(context, 0), LETHE_RT_OK);
  EXPECT_EQ(lethe_rt_op_workspace_wanted(context), 0u);
  noteWorkspaceWanted(context, 512);
  ASSERT_EQ(lethe_rt_op_begin(context, 1), LETHE_RT_OK);
  ASSERT_EQ(lethe_rt_op_begin(context, 2), LETHE_RT_OK);
  EXPECT_EQ(seen.wanted, (std::vector<uint64_t>{4096, 512, 0}));
  // Without a hook, an op still starts afresh.
  ASSERT_EQ(lethe_rt_set_op_hook(context, nullptr, nullptr), LETHE_RT_OK);
  noteWorkspaceWanted(context, 64);
  ASSERT_EQ(lethe_rt_op_begin(context, 3), LETHE_RT_OK);
  EXPECT_EQ(lethe_rt_op_workspace_wanted(context), 0u);
  EXPECT_EQ(lethe_rt_op_workspace_wanted(nullptr), 0u);
}

TEST_F(ContextTest, DtypeSizes) {
  EXPECT_EQ(lethe_rt_dtype_size(LETHE_RT_F16), 2u);
  EXPECT_EQ(lethe_rt_dtype_size(LETHE_RT_BF16), 2u);
  EXPECT_EQ(lethe_rt_dtype_size(LETHE_RT_F32), 4u);
  EXPECT_EQ(lethe_rt_dtype_size(LETHE_RT_F64), 8u);
  EXPECT_EQ(lethe_rt_dtype_size(LETHE_RT_I1), 1u);
  EXPECT_EQ(lethe_rt_dtype_size(LETHE_RT_I64), 8u);
}

// Every f16 bit pattern converts to float and back unchanged (NaNs stay NaN).
TEST(HalfTest, RoundTripsEveryBitPattern) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    Half half{static_cast<uint16_t>(bits)};
    float value = halfToFloat(half);
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(value))));
      continue;
    }
    EXPECT_EQ(floatToHalf(value).bits, half.bits) << "bits " << bits;
  }
}

TEST(HalfTest, RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and the next half (1 + 2^-10): ties to
  // the even one, 1. 1 + 3 * 2^-11 ties between 1 + 2^-10 and 1 + 2^-9: even
  // is 1 + 2^-9.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);
  EXPECT_EQ(floatToHalf(65504.0f).bits, 0x7bff); // largest half
  EXPECT_EQ(floatToHalf(70000.0f).bits, 0x7c00); // overflows to infinity
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)).bits, 0x0001); // subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -26)).bits, 0x0000); // underflow
  EXPECT_EQ(floatToHalf(-0.0f).bits, 0x8000);
}

TEST(BFloat16Test, RoundsToNearestEven) {
  EXPECT_EQ(floatToBFloat16(1.0f).bits, 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(floatToBFloat16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80);
  EXPECT_EQ(floatToBFloat16(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3f82);
  EXPECT_EQ(bfloat16ToFloat(BFloat16{0x4049}), 3.140625f);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(
      floatToBFloat16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(OpHookTest, OpBeginCallsTheInstalledHook) {
  lethe_rt_context *context = lethe_rt_context_create();
  ASSERT_NE(context, nullptr);
  // Without a hook, a boundary does nothing.
  EXPECT_EQ(lethe_rt_op_begin(context, 0), LETHE_RT_OK);
  std::vector<int32_t> seen;
  auto record = [](void *user, int32_t index) {
    static_cast<std::vector<int32_t> *>(user)->push_back(index);
  };
  ASSERT_EQ(lethe_rt_set_op_hook(context, record, &seen), LETHE_RT_OK);
  EXPECT_EQ(lethe_rt_op_begin(context, 3), LETHE_RT_OK);
  EXPECT_EQ(lethe_rt_op_begin(context, 4), LETHE_RT_OK);
  EXPECT_EQ(seen, (std::vector<int32_t>{3, 4}));
  ASSERT_EQ(lethe_rt_set_op_hook(context, nullptr, nullptr), LETHE_RT_OK);
  EXPECT_EQ(lethe_rt_op_begin(context, 5), LETHE_RT_OK);
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_EQ(lethe_rt_op_begin(nullptr, 0), LETHE_RT_ERROR);
  EXPECT_EQ(lethe_rt_set_op_hook(nullptr, record, &seen), LETHE_RT_ERROR);
  lethe_rt_context_destroy(context);
}

} // namespace
