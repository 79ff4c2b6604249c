//===- ShapeTest.cpp - Data-movement kernels ------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

using namespace lethe::rt::testing;

namespace {

using ShapeTest = RuntimeTest;

TEST_F(ShapeTest, Transpose) {
  OwnedTensor<int64_t> x({2, 3}, LETHE_RT_I64, {1, 2, 3, 4, 5, 6});
  OwnedTensor<int64_t> out({3, 2}, LETHE_RT_I64);
  std::vector<int64_t> perm = {1, 0};
  lethe_rt_tensor xv = x.view(), ov = out.view();
  ASSERT_EQ(lethe_rt_transpose(context, &xv, perm.data(), &ov), LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out.values, (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
  perm = {1, 1};
  EXPECT_EQ(lethe_rt_transpose(context, &xv, perm.data(), &ov), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_transpose: perm is not a permutation of 2 "
                         "dims");
}

TEST_F(ShapeTest, ConcatAndSplitAreInverse) {
  OwnedTensor<float> a({2, 1}, LETHE_RT_F32, {1, 2}),
      b({2, 2}, LETHE_RT_F32, {3, 4, 5, 6}), out({2, 3}, LETHE_RT_F32);
  lethe_rt_tensor av = a.view(), bv = b.view(), ov = out.view();
  const lethe_rt_tensor *inputs[] = {&av, &bv};
  ASSERT_EQ(lethe_rt_concat(context, inputs, 2, 1, &ov), LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out.values, (std::vector<float>{1, 3, 4, 2, 5, 6}));

  OwnedTensor<float> first({2, 1}, LETHE_RT_F32), second({2, 2}, LETHE_RT_F32);
  lethe_rt_tensor fv = first.view(), sv = second.view();
  const lethe_rt_tensor *outputs[] = {&fv, &sv};
  ASSERT_EQ(lethe_rt_split(context, &ov, 1, outputs, 2), LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(first.values, a.values);
  EXPECT_EQ(second.values, b.values);

  OwnedTensor<float> wrong({2, 4}, LETHE_RT_F32);
  lethe_rt_tensor wv = wrong.view();
  EXPECT_EQ(lethe_rt_concat(context, inputs, 2, 1, &wv), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_concat: the inputs add up to 3 along axis "
                         "1, not 4");
}

TEST_F(ShapeTest, SliceWithNegativeStep) {
  // x[3:0:-2] on 0..4 is {3, 1}; all of the first dim.
  OwnedTensor<int32_t> x({2, 5}, LETHE_RT_I32,
                         {0, 1, 2, 3, 4, 10, 11, 12, 13, 14});
  OwnedTensor<int32_t> out({2, 2}, LETHE_RT_I32);
  std::vector<int64_t> starts = {0, 3}, steps = {1, -2};
  lethe_rt_tensor xv = x.view(), ov = out.view();
  ASSERT_EQ(lethe_rt_slice(context, &xv, starts.data(), steps.data(), &ov),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out.values, (std::vector<int32_t>{3, 1, 13, 11}));
  starts = {0, 4};
  steps = {1, 2};
  EXPECT_EQ(lethe_rt_slice(context, &xv, starts.data(), steps.data(), &ov),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_slice: dim 1: 2 elements from 4 in steps "
                         "of 2 leave x's 5");
}

TEST_F(ShapeTest, GatherWithNegativeIndices) {
  OwnedTensor<float> data({3, 2}, LETHE_RT_F32, {1, 2, 3, 4, 5, 6});
  OwnedTensor<int64_t> indices({2, 2}, LETHE_RT_I64, {0, -1, 1, 0});
  OwnedTensor<float> out({2, 2, 2}, LETHE_RT_F32);
  lethe_rt_tensor dv = data.view(), iv = indices.view(), ov = out.view();
  ASSERT_EQ(lethe_rt_gather(context, &dv, &iv, 0, &ov), LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out.values, (std::vector<float>{1, 2, 5, 6, 3, 4, 1, 2}));
  indices.values[1] = 3;
  EXPECT_EQ(lethe_rt_gather(context, &dv, &iv, 0, &ov), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_gather: index 3 (element 1) is out of "
                         "range for a dimension of 3");
}

} // namespace
