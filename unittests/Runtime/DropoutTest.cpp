//===- DropoutTest.cpp - Dropout kernel -----------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "TypedTensor.h"
#include "common/DropoutMask.h"

#include <array>
#include <cstring>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using DropoutTest = RuntimeTest;

/// Philox-4x32-10 as Random123 defines it, written independently of the
/// kernel's copy.
std::array<uint32_t, 4> philox(std::array<uint32_t, 4> ctr,
                               std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = 0xD2511F53ull * ctr[0], p1 = 0xCD9E8D57ull * ctr[2];
    ctr = {uint32_t(p1 >> 32) ^ ctr[1] ^ key[0], uint32_t(p1),
           uint32_t(p0 >> 32) ^ ctr[3] ^ key[1], uint32_t(p0)};
    key = {key[0] + 0x9E3779B9u, key[1] + 0xBB67AE85u};
  }
  return ctr;
}

// Random123's published known-answer vectors.
TEST(PhiloxTest, MatchesKnownAnswers) {
  EXPECT_EQ(philox({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c,
                                     0x9b00dbd8}));
  EXPECT_EQ(philox({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                   {0xffffffff, 0xffffffff}),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6,
                                     0x6d5451fd}));
  EXPECT_EQ(philox({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                   {0xa4093822, 0x299f31d0}),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420,
                                     0x24126ea1}));
}

// The definition every backend shares (common/DropoutMask.h), which the
// CUDA kernel runs one block of four elements per thread, in any order:
// Random123's known answers, and the CPU backend's outputs from the blocks
// taken last to first.
TEST_F(DropoutTest, SharedDefinitionGivesTheCpuBitsInAnyOrder) {
  DropoutWords words = philox4x32x10(0x243f6a88, 0x85a308d3, 0x13198a2e,
                                     0x03707344, 0xa4093822, 0x299f31d0);
  EXPECT_EQ(
      std::vector<uint32_t>(words.words, words.words + 4),
      (std::vector<uint32_t>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
  uint64_t seed = 0xfedcba9876543210, step = 0x0000000300000002;
  double ratio = 0.4;
  for (lethe_rt_dtype dtype : floatDtypes()) {
    SCOPED_TRACE(dtypeName(dtype));
    TypedTensor x = randomTensor({1003}, dtype, 8, -4, 4);
    TypedTensor out({1003}, dtype), mask({1003}, LETHE_RT_I1);
    OwnedTensor<int64_t> counter({}, LETHE_RT_I64,
                                 {static_cast<int64_t>(step)});
    lethe_rt_tensor xv = x.view(), ov = out.view(), mv = mask.view(),
                    sv = counter.view();
    ASSERT_EQ(lethe_rt_dropout(context, &xv, ratio, seed, &sv, 1, &ov, &mv),
              LETHE_RT_OK)
        << lastError();
    TypedTensor sharedOut({1003}, dtype), sharedMask({1003}, LETHE_RT_I1);
    DropoutOperands operands{x.bytes.data(), sharedOut.bytes.data(),
                             sharedMask.bytes.data(), 1003};
    dispatchFloat(dtype, [&](auto tag) {
      using T = decltype(tag);
      for (int64_t block = (1003 + 3) / 4; block-- > 0;)
        dropoutBlock<T>(operands, seed, step, ratio, dropoutScale<T>(ratio),
                        block);
    });
    EXPECT_EQ(sharedOut.bytes, out.bytes);
    EXPECT_EQ(sharedMask.bytes, mask.bytes);
  }
}

/// Whether element i is kept, per the generator documented in
/// common/DropoutMask.h.
bool documentedKeep(uint64_t seed, uint64_t step, uint64_t i, double ratio) {
  uint64_t block = i / 4;
  std::array<uint32_t, 4> random =
      philox({uint32_t(block), uint32_t(block >> 32), uint32_t(step),
              uint32_t(step >> 32)},
             {uint32_t(seed), uint32_t(seed >> 32)});
  return (random[i % 4] >> 8) * 0x1p-24 >= ratio;
}

/// The results of one dropout call on f32 data.
struct DropoutRun {
  std::vector<float> out;
  std::vector<uint8_t> mask;
};

DropoutRun runDropout(lethe_rt_context *context, std::vector<float> x,
                      double ratio, uint64_t seed, uint64_t step,
                      int training) {
  int64_t count = x.size();
  OwnedTensor<float> in({count}, LETHE_RT_F32, std::move(x));
  OwnedTensor<float> out({count}, LETHE_RT_F32);
  OwnedTensor<uint8_t> mask({count}, LETHE_RT_I1);
  OwnedTensor<int64_t> counter({}, LETHE_RT_I64, {static_cast<int64_t>(step)});
  lethe_rt_tensor i = in.view(), o = out.view(), m = mask.view(),
                  s = counter.view();
  EXPECT_EQ(lethe_rt_dropout(context, &i, ratio, seed, &s, training, &o, &m),
            LETHE_RT_OK)
      << lethe_rt_last_error(context);
  return {out.values, mask.values};
}

TEST_F(DropoutTest, MaskFollowsTheDocumentedGenerator) {
  uint64_t seed = 0x123456789abcdef0, step = 0x0000000500000007;
  int64_t count = 1003; // a partial last block of four
  double ratio = 0.3;
  std::vector<float> x = randomFloats(count, 1);
  DropoutRun run = runDropout(context, x, ratio, seed, step, 1);
  float scale = static_cast<float>(1 / (1 - ratio));
  for (int64_t i = 0; i < count; ++i) {
    bool kept = documentedKeep(seed, step, i, ratio);
    ASSERT_EQ(run.mask[i], kept) << "element " << i;
    ASSERT_EQ(run.out[i], kept ? x[i] * scale : 0.0f) << "element " << i;
  }
}

TEST_F(DropoutTest, MaskIsReproducibleAndKeyedBySeedAndStep) {
  std::vector<float> x(1000, 1.0f);
  DropoutRun first = runDropout(context, x, 0.5, 42, 3, 1);
  DropoutRun again = runDropout(context, x, 0.5, 42, 3, 1);
  EXPECT_EQ(first.mask, again.mask);
  EXPECT_EQ(std::memcmp(first.out.data(), again.out.data(),
                        first.out.size() * sizeof(float)),
            0);
  EXPECT_NE(runDropout(context, x, 0.5, 42, 4, 1).mask, first.mask);
  EXPECT_NE(runDropout(context, x, 0.5, 43, 3, 1).mask, first.mask);
}

TEST_F(DropoutTest, KeepsRoughlyOneMinusRatio) {
  int64_t count = 100000;
  std::vector<float> x(count, 1.0f);
  for (double ratio : {0.1, 0.5, 0.9}) {
    DropoutRun run = runDropout(context, x, ratio, 7, 0, 1);
    double kept = 0;
    for (uint8_t flag : run.mask)
      kept += flag;
    // The standard deviation of the kept fraction is at most 0.0016.
    EXPECT_NEAR(kept / count, 1 - ratio, 0.01) << "ratio " << ratio;
  }
}

// Kept elements are x * s exactly, with s = 1 / (1 - ratio) rounded to the
// compute type; dropped ones are 0.
TEST_F(DropoutTest, ScalesExactly) {
  double ratio = 0.3;
  for (lethe_rt_dtype dtype : floatDtypes()) {
    SCOPED_TRACE(dtypeName(dtype));
    TypedTensor x = randomTensor({4, 250}, dtype, 9);
    TypedTensor out({4, 250}, dtype), mask({4, 250}, LETHE_RT_I1);
    OwnedTensor<int64_t> step({}, LETHE_RT_I64, {6});
    lethe_rt_tensor xv = x.view(), ov = out.view(), mv = mask.view(),
                    sv = step.view();
    ASSERT_EQ(lethe_rt_dropout(context, &xv, ratio, 5, &sv, 1, &ov, &mv),
              LETHE_RT_OK)
        << lastError();
    TypedTensor expected({4, 250}, dtype);
    for (int64_t i = 0; i < x.size(); ++i) {
      double value = 0;
      if (mask.get(i) != 0)
        value = dtype == LETHE_RT_F64
                    ? x.get(i) * (1 / (1 - ratio))
                    : static_cast<double>(static_cast<float>(x.get(i)) *
                                          static_cast<float>(1 / (1 - ratio)));
      expected.set(i, value);
    }
    EXPECT_EQ(out.bytes, expected.bytes);
  }
}

TEST_F(DropoutTest, IdentityOutsideTrainingAndAtRatioZero) {
  std::vector<float> x = randomFloats(100, 3);
  for (auto [ratio, training] :
       {std::pair<double, int>{0.5, 0}, {0.0, 1}, {0.0, 0}}) {
    DropoutRun run = runDropout(context, x, ratio, 1, 2, training);
    EXPECT_EQ(run.out, x) << "ratio " << ratio << " training " << training;
    EXPECT_EQ(run.mask, std::vector<uint8_t>(100, 1));
  }
  DropoutRun all = runDropout(context, x, 1.0, 1, 2, 1);
  EXPECT_EQ(all.out, std::vector<float>(100, 0.0f));
  EXPECT_EQ(all.mask, std::vector<uint8_t>(100, 0));
}

TEST_F(DropoutTest, MaskIsOptional) {
  OwnedTensor<float> x({4}, LETHE_RT_F32, {1, 2, 3, 4}), out({4}, LETHE_RT_F32);
  OwnedTensor<int64_t> step({}, LETHE_RT_I64, {1});
  lethe_rt_tensor xv = x.view(), ov = out.view(), sv = step.view();
  ASSERT_EQ(lethe_rt_dropout(context, &xv, 0.5, 1, &sv, 1, &ov, nullptr),
            LETHE_RT_OK)
      << lastError();
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(out.values[i],
              documentedKeep(1, 1, i, 0.5) ? x.values[i] * 2 : 0);
}

TEST_F(DropoutTest, RejectsBadArguments) {
  TypedTensor x({2, 3}, LETHE_RT_F32), f({2, 3}, LETHE_RT_F32),
      m6({6}, LETHE_RT_I1), h({2, 3}, LETHE_RT_F16);
  lethe_rt_tensor xv = x.view(), fv = f.view(), m6v = m6.view(), hv = h.view();
  EXPECT_EQ(lethe_rt_dropout(context, &xv, 1.5, 0, nullptr, 1, &xv, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_dropout: ratio 1.5 must be in [0, 1]");
  EXPECT_EQ(lethe_rt_dropout(context, &xv, 0.5, 0, nullptr, 1, &xv, &fv),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_dropout: mask must be i1, got f32");
  EXPECT_EQ(lethe_rt_dropout(context, &xv, 0.5, 0, nullptr, 1, &xv, &m6v),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_dropout: x (2x3) and mask (6) must have the same shape");
  EXPECT_EQ(lethe_rt_dropout(context, &xv, 0.5, 0, nullptr, 1, &hv, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_dropout: out must be f32, got f16");
  OwnedTensor<int32_t> narrow({}, LETHE_RT_I32, {1});
  OwnedTensor<int64_t> vector({1}, LETHE_RT_I64, {1});
  lethe_rt_tensor nv = narrow.view(), vv = vector.view();
  EXPECT_EQ(lethe_rt_dropout(context, &xv, 0.5, 0, &nv, 1, &xv, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_dropout: step must be i64, got i32");
  EXPECT_EQ(lethe_rt_dropout(context, &xv, 0.5, 0, &vv, 1, &xv, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_dropout: step must have rank 0, got 1");
}

// A null step counter is step 0.
TEST_F(DropoutTest, NullStepIsStepZero) {
  OwnedTensor<float> x({64}, LETHE_RT_F32, randomFloats(64, 4));
  OwnedTensor<float> withNull({64}, LETHE_RT_F32), withZero({64}, LETHE_RT_F32);
  OwnedTensor<int64_t> zero({}, LETHE_RT_I64, {0});
  lethe_rt_tensor xv = x.view(), nv = withNull.view(), zv = withZero.view(),
                  sv = zero.view();
  ASSERT_EQ(lethe_rt_dropout(context, &xv, 0.5, 3, nullptr, 1, &nv, nullptr),
            LETHE_RT_OK)
      << lastError();
  ASSERT_EQ(lethe_rt_dropout(context, &xv, 0.5, 3, &sv, 1, &zv, nullptr),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(withNull.values, withZero.values);
}

} // namespace
