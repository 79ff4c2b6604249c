//===- DataMovementTest.cpp - Copy and broadcast kernels ------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

using namespace lethe::rt::testing;

namespace {

using DataMovementTest = RuntimeTest;

TEST_F(DataMovementTest, CopyReshapes) {
  OwnedTensor<int32_t> in({2, 3}, LETHE_RT_I32, {1, 2, 3, 4, 5, 6});
  OwnedTensor<int32_t> out({3, 2}, LETHE_RT_I32);
  lethe_rt_tensor inView = in.view(), outView = out.view();
  ASSERT_EQ(lethe_rt_copy(context, &inView, &outView), LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out.values, in.values);
}

TEST_F(DataMovementTest, CopyRejectsDifferentElementCounts) {
  OwnedTensor<float> in({2, 3}, LETHE_RT_F32), out({5}, LETHE_RT_F32);
  lethe_rt_tensor inView = in.view(), outView = out.view();
  EXPECT_EQ(lethe_rt_copy(context, &inView, &outView), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_copy: in (2x3) and out (5) have different element "
            "counts");
}

TEST_F(DataMovementTest, ExpandBroadcastsBothWays) {
  // (3, 1) expanded to (2, 3, 4): each row value repeats along the last dim,
  // and the whole block repeats along the new leading dim.
  OwnedTensor<float> x({3, 1}, LETHE_RT_F32, {1, 2, 3});
  OwnedTensor<float> out({2, 3, 4}, LETHE_RT_F32);
  lethe_rt_tensor xView = x.view(), outView = out.view();
  ASSERT_EQ(lethe_rt_expand(context, &xView, &outView), LETHE_RT_OK)
      << lastError();
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k)
        EXPECT_EQ(out.values[(i * 3 + j) * 4 + k], x.values[j]);
}

TEST_F(DataMovementTest, ExpandRejectsIncompatibleShapes) {
  OwnedTensor<float> x({3}, LETHE_RT_F32), out({2, 4}, LETHE_RT_F32);
  lethe_rt_tensor xView = x.view(), outView = out.view();
  EXPECT_EQ(lethe_rt_expand(context, &xView, &outView), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_expand: x (3) does not broadcast to out "
                         "(2x4)");
}

} // namespace
