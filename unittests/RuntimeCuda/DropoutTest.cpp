//===- DropoutTest.cpp - Dropout on CUDA ----------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_dropout on the CUDA backend against the CPU backend's outputs bit
// for bit: the mask and out of common/DropoutMask.h, run here on the host as
// the CPU backend runs it (unittests/Runtime DropoutTest checks that
// definition against an independent Philox and the CPU backend's calls), for
// every float dtype; the step counter read on the device after a kernel has
// changed it; identity outside training; and the errors, with the CPU
// backend's words.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"
#include "StorageValues.h"
#include "common/DropoutMask.h"
#include "common/Tensor.h"

#include <string>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using DropoutTest = CudaRuntimeTest;

/// What the CPU backend writes for dropout in training of `x`: out and the
/// mask.
template <typename T> struct HostDropout {
  HostDropout(const std::vector<T> &x, double ratio, uint64_t seed,
              uint64_t step)
      : out(x.size()), mask(x.size()) {
    DropoutOperands operands{x.data(), out.data(), mask.data(),
                             static_cast<int64_t>(x.size())};
    for (int64_t block = 0; block * 4 < operands.count; ++block)
      dropoutBlock<T>(operands, seed, step, ratio, dropoutScale<T>(ratio),
                      block);
  }

  std::vector<T> out;
  std::vector<uint8_t> mask;
};

/// A step counter in the arena: a scalar i64.
lethe_rt_tensor placeStep(DropoutTest &test, int64_t value) {
  return test.place<int64_t>({}, LETHE_RT_I64, {value});
}

/// Dropout in training of 1003 elements (a partial last block of four) of
/// storage type T, with a step counter whose two words both count.
template <typename T> void checkTraining(DropoutTest &test) {
  SCOPED_TRACE(dtypeName(dtypeOf<T>()));
  uint64_t seed = 0x123456789abcdef0;
  int64_t stepValue = 0x0000000500000007;
  double ratio = 0.3;
  std::vector<int64_t> shape{17, 59};
  std::vector<T> values = randomStorage<T>(17 * 59, 1, -4, 4);
  lethe_rt_tensor x = test.place<T>(shape, dtypeOf<T>(), values);
  lethe_rt_tensor out = test.place<T>(shape, dtypeOf<T>());
  lethe_rt_tensor mask = test.place<uint8_t>(shape, LETHE_RT_I1);
  lethe_rt_tensor step = placeStep(test, stepValue);
  ASSERT_EQ(
      lethe_rt_dropout(test.context, &x, ratio, seed, &step, 1, &out, &mask),
      LETHE_RT_OK)
      << test.lastError();
  HostDropout<T> cpu(values, ratio, seed, stepValue);
  expectSameBits(test.read<uint8_t>(mask), cpu.mask, "mask");
  expectSameBits(test.read<T>(out), cpu.out, "out");
}

TEST_F(DropoutTest, GivesTheCpuBitsForEveryDtype) {
  checkTraining<Half>(*this);
  checkTraining<BFloat16>(*this);
  checkTraining<float>(*this);
  checkTraining<double>(*this);
}

// The compiled step increments the counter with a kernel on the compute
// stream, then calls dropout without waiting: the kernel must read the new
// value.
TEST_F(DropoutTest, ReadsTheStepOnTheDevice) {
  std::vector<float> values = randomStorage<float>(4096, 2);
  lethe_rt_tensor x = place<float>({4096}, LETHE_RT_F32, values);
  lethe_rt_tensor out = place<float>({4096}, LETHE_RT_F32);
  lethe_rt_tensor mask = place<uint8_t>({4096}, LETHE_RT_I1);
  lethe_rt_tensor step = placeStep(*this, 6);
  lethe_rt_tensor one = placeStep(*this, 1);
  ASSERT_EQ(lethe_rt_binary(context, LETHE_RT_ADD, &step, &one, &step),
            LETHE_RT_OK)
      << lastError();
  ASSERT_EQ(lethe_rt_dropout(context, &x, 0.5, 9, &step, 1, &out, &mask),
            LETHE_RT_OK)
      << lastError();
  std::vector<uint8_t> got = read<uint8_t>(mask);
  expectSameBits(got, HostDropout<float>(values, 0.5, 9, 7).mask, "mask");
  EXPECT_NE(got, HostDropout<float>(values, 0.5, 9, 6).mask);
  expectSameBits(read<float>(out), HostDropout<float>(values, 0.5, 9, 7).out,
                 "out");
}

TEST_F(DropoutTest, NullStepIsStepZeroAndTheMaskIsOptional) {
  std::vector<double> values = randomStorage<double>(300, 3);
  lethe_rt_tensor x = place<double>({300}, LETHE_RT_F64, values);
  lethe_rt_tensor out = place<double>({300}, LETHE_RT_F64);
  ASSERT_EQ(lethe_rt_dropout(context, &x, 0.25, 3, nullptr, 1, &out, nullptr),
            LETHE_RT_OK)
      << lastError();
  expectSameBits(read<double>(out), HostDropout<double>(values, 0.25, 3, 0).out,
                 "out");
}

TEST_F(DropoutTest, InPlaceAndTheExtremeRatios) {
  std::vector<float> values = randomStorage<float>(1000, 4);
  lethe_rt_tensor x = place<float>({1000}, LETHE_RT_F32, values);
  lethe_rt_tensor mask = place<uint8_t>({1000}, LETHE_RT_I1);
  lethe_rt_tensor step = placeStep(*this, 11);
  ASSERT_EQ(lethe_rt_dropout(context, &x, 0.6, 5, &step, 1, &x, &mask),
            LETHE_RT_OK)
      << lastError();
  HostDropout<float> cpu(values, 0.6, 5, 11);
  expectSameBits(read<float>(x), cpu.out, "out in place");
  expectSameBits(read<uint8_t>(mask), cpu.mask, "mask");

  lethe_rt_tensor out = place<float>({1000}, LETHE_RT_F32);
  for (double ratio : {0.0, 1.0}) {
    SCOPED_TRACE("ratio " + std::to_string(ratio));
    lethe_rt_tensor y = place<float>({1000}, LETHE_RT_F32, values);
    ASSERT_EQ(lethe_rt_dropout(context, &y, ratio, 5, &step, 1, &out, &mask),
              LETHE_RT_OK)
        << lastError();
    HostDropout<float> extreme(values, ratio, 5, 11);
    EXPECT_EQ(extreme.mask, std::vector<uint8_t>(1000, ratio == 0 ? 1 : 0));
    expectSameBits(read<float>(out), extreme.out, "out");
    expectSameBits(read<uint8_t>(mask), extreme.mask, "mask");
  }
}

TEST_F(DropoutTest, IdentityOutsideTraining) {
  std::vector<BFloat16> values = randomStorage<BFloat16>(777, 5);
  lethe_rt_tensor x = place<BFloat16>({777}, LETHE_RT_BF16, values);
  lethe_rt_tensor out = place<BFloat16>({777}, LETHE_RT_BF16);
  lethe_rt_tensor mask = place<uint8_t>({777}, LETHE_RT_I1);
  ASSERT_EQ(lethe_rt_dropout(context, &x, 0.5, 1, nullptr, 0, &out, &mask),
            LETHE_RT_OK)
      << lastError();
  expectSameBits(read<BFloat16>(out), values, "out");
  EXPECT_EQ(read<uint8_t>(mask), std::vector<uint8_t>(777, 1));
  ASSERT_EQ(lethe_rt_dropout(context, &x, 0.5, 1, nullptr, 0, &x, nullptr),
            LETHE_RT_OK)
      << lastError();
  expectSameBits(read<BFloat16>(x), values, "x in place");
}

// The CPU backend's checks and words (unittests/Runtime DropoutTest), and
// the cuda backend's refusal of a partial overlap.
TEST_F(DropoutTest, InvalidArgumentsNameTheKernel) {
  lethe_rt_tensor x = place<float>({2, 3}, LETHE_RT_F32);
  lethe_rt_tensor f = place<float>({2, 3}, LETHE_RT_F32);
  lethe_rt_tensor m6 = place<uint8_t>({6}, LETHE_RT_I1);
  lethe_rt_tensor h = place<Half>({2, 3}, LETHE_RT_F16);
  lethe_rt_tensor narrow = place<int32_t>({}, LETHE_RT_I32, {1});
  lethe_rt_tensor vector = place<int64_t>({1}, LETHE_RT_I64, {1});
  auto expectError = [&](lethe_rt_status status, const std::string &message) {
    EXPECT_EQ(status, LETHE_RT_ERROR);
    EXPECT_EQ(lastError(), message);
  };
  expectError(lethe_rt_dropout(context, &x, 1.5, 0, nullptr, 1, &x, nullptr),
              "lethe_rt_dropout: ratio 1.5 must be in [0, 1]");
  expectError(lethe_rt_dropout(context, &x, 0.5, 0, nullptr, 1, &x, &f),
              "lethe_rt_dropout: mask must be i1, got f32");
  expectError(lethe_rt_dropout(context, &x, 0.5, 0, nullptr, 1, &x, &m6),
              "lethe_rt_dropout: x (2x3) and mask (6) must have the same "
              "shape");
  expectError(lethe_rt_dropout(context, &x, 0.5, 0, nullptr, 1, &h, nullptr),
              "lethe_rt_dropout: out must be f32, got f16");
  expectError(lethe_rt_dropout(context, &x, 0.5, 0, &narrow, 1, &x, nullptr),
              "lethe_rt_dropout: step must be i64, got i32");
  expectError(lethe_rt_dropout(context, &x, 0.5, 0, &vector, 1, &x, nullptr),
              "lethe_rt_dropout: step must have rank 0, got 1");
  lethe_rt_tensor shifted = x;
  shifted.data = static_cast<float *>(x.data) + 1;
  expectError(
      lethe_rt_dropout(context, &x, 0.5, 0, nullptr, 1, &shifted, nullptr),
      "lethe_rt_dropout: x and out overlap without being the same memory "
      "(the cuda backend does not write dropout within overlapping ranges)");
}

TEST(DropoutWithoutDeviceTest, SaysWhy) {
  if (missingDevice().empty())
    GTEST_SKIP() << "has a GPU: this test is for machines without one";
  lethe_rt_context *context = lethe_rt_context_create();
  ASSERT_NE(context, nullptr);
  lethe_rt_tensor t{nullptr, LETHE_RT_F32, 0, nullptr};
  EXPECT_EQ(lethe_rt_dropout(context, &t, 0.5, 0, nullptr, 1, &t, nullptr),
            LETHE_RT_ERROR);
  std::string error = lethe_rt_last_error(context);
  EXPECT_EQ(error.rfind("lethe_rt_dropout: no usable CUDA device (", 0), 0u)
      << error;
  lethe_rt_context_destroy(context);
}

} // namespace
