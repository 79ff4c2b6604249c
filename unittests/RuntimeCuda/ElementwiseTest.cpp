//===- ElementwiseTest.cpp - Elementwise kernels on CUDA ------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_copy, cast, unary, clip, binary and where on the CUDA backend,
// each against a double-precision reference computed here, and the errors
// that name the kernel.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"

#include <functional>
#include <limits>

using namespace lethe::rt::testing;

namespace {

using ElementwiseTest = CudaRuntimeTest;

/// The reference of each unary kind, in double.
double unaryReference(lethe_rt_unary_kind kind, double alpha, double x) {
  switch (kind) {
  case LETHE_RT_NEG:
    return -x;
  case LETHE_RT_RELU:
    return x < 0 ? 0 : x;
  case LETHE_RT_LEAKY_RELU:
    return x < 0 ? alpha * x : x;
  case LETHE_RT_SIGMOID:
    return 1 / (1 + std::exp(-x));
  case LETHE_RT_TANH:
    return std::tanh(x);
  case LETHE_RT_GELU:
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  case LETHE_RT_GELU_TANH:
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  case LETHE_RT_ERF:
    return std::erf(x);
  case LETHE_RT_EXP:
    return std::exp(x);
  case LETHE_RT_LOG:
    return std::log(x);
  case LETHE_RT_SQRT:
    return std::sqrt(x);
  }
  return 0;
}

template <typename T>
void checkUnary(ElementwiseTest &test, lethe_rt_dtype dtype) {
  for (int kind = LETHE_RT_NEG; kind <= LETHE_RT_SQRT; ++kind) {
    // Log and sqrt on positive inputs only.
    bool positive = kind == LETHE_RT_LOG || kind == LETHE_RT_SQRT;
    std::vector<T> values =
        randomValues<T>(517, 100 + kind, positive ? 0.01 : -4, 4);
    lethe_rt_tensor in = test.place<T>({11, 47}, dtype, values);
    lethe_rt_tensor out = test.place<T>({11, 47}, dtype);
    auto unaryKind = static_cast<lethe_rt_unary_kind>(kind);
    ASSERT_EQ(lethe_rt_unary(test.context, unaryKind, 0.1, 0, &in, &out),
              LETHE_RT_OK)
        << test.lastError();
    std::vector<double> expected;
    for (T value : values)
      expected.push_back(unaryReference(unaryKind, static_cast<double>(T(0.1)),
                                        static_cast<double>(value)));
    expectNear(test.read<T>(out), expected,
               "unary kind " + std::to_string(kind));
  }
}

TEST_F(ElementwiseTest, UnaryF32) { checkUnary<float>(*this, LETHE_RT_F32); }
TEST_F(ElementwiseTest, UnaryF64) { checkUnary<double>(*this, LETHE_RT_F64); }

template <typename T>
void checkBinary(ElementwiseTest &test, lethe_rt_dtype dtype) {
  // lhs (2, 1, 3) and rhs (4, 1) broadcast to (2, 4, 3).
  std::vector<T> lhsValues = randomValues<T>(6, 1, 0.5, 2);
  std::vector<T> rhsValues = randomValues<T>(4, 2, 0.5, 2);
  lethe_rt_tensor lhs = test.place<T>({2, 1, 3}, dtype, lhsValues);
  lethe_rt_tensor rhs = test.place<T>({4, 1}, dtype, rhsValues);
  const std::function<double(double, double)> references[] = {
      std::plus<double>(), std::minus<double>(), std::multiplies<double>(),
      std::divides<double>(),
      [](double a, double b) { return std::pow(a, b); }};
  for (int kind = LETHE_RT_ADD; kind <= LETHE_RT_POW; ++kind) {
    lethe_rt_tensor out = test.place<T>({2, 4, 3}, dtype);
    ASSERT_EQ(lethe_rt_binary(test.context,
                              static_cast<lethe_rt_binary_kind>(kind), &lhs,
                              &rhs, &out),
              LETHE_RT_OK)
        << test.lastError();
    std::vector<double> expected;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 3; ++k)
          expected.push_back(
              references[kind](lhsValues[i * 3 + k], rhsValues[j]));
    expectNear(test.read<T>(out), expected,
               "binary kind " + std::to_string(kind));
  }
}

TEST_F(ElementwiseTest, BinaryBroadcastF32) {
  checkBinary<float>(*this, LETHE_RT_F32);
}
TEST_F(ElementwiseTest, BinaryBroadcastF64) {
  checkBinary<double>(*this, LETHE_RT_F64);
}

TEST_F(ElementwiseTest, IntegerBinaryWrapsAndTruncates) {
  int32_t max = std::numeric_limits<int32_t>::max();
  int32_t min = std::numeric_limits<int32_t>::min();
  lethe_rt_tensor lhs = place<int32_t>({4}, LETHE_RT_I32, {max, -7, 7, min});
  lethe_rt_tensor rhs = place<int32_t>({4}, LETHE_RT_I32, {1, 2, -2, -1});
  lethe_rt_tensor out = place<int32_t>({4}, LETHE_RT_I32);
  ASSERT_EQ(lethe_rt_binary(context, LETHE_RT_ADD, &lhs, &rhs, &out),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(read<int32_t>(out), (std::vector<int32_t>{min, -5, 5, max}));
  ASSERT_EQ(lethe_rt_binary(context, LETHE_RT_DIV, &lhs, &rhs, &out),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(read<int32_t>(out), (std::vector<int32_t>{max, -3, -3, min}));
  // An integer exponent of another dtype: 7^2 = 49 and 2^-2 truncates to 0.
  lethe_rt_tensor exponents = place<int64_t>({4}, LETHE_RT_I64, {0, 2, -2, 1});
  ASSERT_EQ(lethe_rt_binary(context, LETHE_RT_POW, &lhs, &exponents, &out),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(read<int32_t>(out), (std::vector<int32_t>{1, 49, 0, min}));
}

TEST_F(ElementwiseTest, IntegerDivisionByZeroNamesTheElement) {
  lethe_rt_tensor lhs = place<int32_t>({3}, LETHE_RT_I32, {1, 2, 3});
  lethe_rt_tensor rhs = place<int32_t>({3}, LETHE_RT_I32, {1, 0, 0});
  lethe_rt_tensor out = place<int32_t>({3}, LETHE_RT_I32);
  EXPECT_EQ(lethe_rt_binary(context, LETHE_RT_DIV, &lhs, &rhs, &out),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_binary: integer division by zero (rhs element 1)");
}

TEST_F(ElementwiseTest, ClipF32) {
  std::vector<float> values = randomValues<float>(300, 7, -3, 3);
  values[5] = std::numeric_limits<float>::quiet_NaN();
  lethe_rt_tensor in = place<float>({300}, LETHE_RT_F32, values);
  lethe_rt_tensor out = place<float>({300}, LETHE_RT_F32);
  float low = -1, high = 2;
  ASSERT_EQ(lethe_rt_clip(context, &in, &low, &high, &out), LETHE_RT_OK)
      << lastError();
  std::vector<double> expected;
  for (float value : values)
    expected.push_back(
        std::isnan(value)
            ? value
            : std::min<double>(std::max<double>(value, low), high));
  expectNear(read<float>(out), expected, "clip");
  // Only an upper bound.
  ASSERT_EQ(lethe_rt_clip(context, &in, nullptr, &low, &out), LETHE_RT_OK)
      << lastError();
  std::vector<float> got = read<float>(out);
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isnan(values[i])) {
      EXPECT_EQ(got[i], std::min(values[i], low)) << i;
    }
  }
}

TEST_F(ElementwiseTest, WhereBroadcastsThreeWays) {
  // condition (3, 1), lhs (1, 4), rhs scalar: out (3, 4).
  lethe_rt_tensor condition = place<uint8_t>({3, 1}, LETHE_RT_I1, {1, 0, 1});
  std::vector<double> lhsValues = randomValues<double>(4, 3);
  lethe_rt_tensor lhs = place<double>({1, 4}, LETHE_RT_F64, lhsValues);
  lethe_rt_tensor rhs = place<double>({}, LETHE_RT_F64, {42.0});
  lethe_rt_tensor out = place<double>({3, 4}, LETHE_RT_F64);
  ASSERT_EQ(lethe_rt_where(context, &condition, &lhs, &rhs, &out), LETHE_RT_OK)
      << lastError();
  std::vector<double> expected;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      expected.push_back(i == 1 ? 42.0 : lhsValues[j]);
  EXPECT_EQ(read<double>(out), expected);
}

TEST_F(ElementwiseTest, CastTruncatesAndSaturates) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  lethe_rt_tensor in =
      place<float>({5}, LETHE_RT_F32, {2.9f, -2.9f, 1e20f, -1e20f, nan});
  lethe_rt_tensor out = place<int32_t>({5}, LETHE_RT_I32);
  ASSERT_EQ(lethe_rt_cast(context, &in, &out), LETHE_RT_OK) << lastError();
  EXPECT_EQ(read<int32_t>(out),
            (std::vector<int32_t>{2, -2, std::numeric_limits<int32_t>::max(),
                                  std::numeric_limits<int32_t>::min(), 0}));
  std::vector<double> wide = randomValues<double>(64, 9, -100, 100);
  lethe_rt_tensor wideIn = place<double>({8, 8}, LETHE_RT_F64, wide);
  lethe_rt_tensor narrow = place<float>({8, 8}, LETHE_RT_F32);
  ASSERT_EQ(lethe_rt_cast(context, &wideIn, &narrow), LETHE_RT_OK)
      << lastError();
  std::vector<float> got = read<float>(narrow);
  for (size_t i = 0; i < wide.size(); ++i)
    EXPECT_EQ(got[i], static_cast<float>(wide[i])) << i;
  // To i1: x != 0.
  lethe_rt_tensor flags = place<uint8_t>({5}, LETHE_RT_I1);
  ASSERT_EQ(lethe_rt_cast(context, &out, &flags), LETHE_RT_OK) << lastError();
  EXPECT_EQ(read<uint8_t>(flags), (std::vector<uint8_t>{1, 1, 1, 1, 0}));
}

TEST_F(ElementwiseTest, CopyReshapes) {
  std::vector<int64_t> values{1, 2, 3, 4, 5, 6};
  lethe_rt_tensor in = place<int64_t>({2, 3}, LETHE_RT_I64, values);
  lethe_rt_tensor out = place<int64_t>({3, 2}, LETHE_RT_I64);
  ASSERT_EQ(lethe_rt_copy(context, &in, &out), LETHE_RT_OK) << lastError();
  EXPECT_EQ(read<int64_t>(out), values);
}

TEST_F(ElementwiseTest, InvalidArgumentsNameTheKernel) {
  lethe_rt_tensor in = place<float>({2, 3}, LETHE_RT_F32);
  lethe_rt_tensor out = place<float>({3, 2}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_unary(context, LETHE_RT_EXP, 0, 0, &in, &out),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_unary: in (2x3) and out (3x2) must have "
                         "the same shape");
  // Host memory is not the arena: refused before it reaches the GPU.
  std::vector<float> host(6);
  lethe_rt_tensor onHost = in;
  onHost.data = host.data();
  EXPECT_EQ(lethe_rt_unary(context, LETHE_RT_EXP, 0, 0, &onHost, &in),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError().rfind("lethe_rt_unary: in (2x3, 24 bytes) does not "
                              "lie in the arena",
                              0),
            0u)
      << lastError();
  lethe_rt_tensor rhs = place<float>({4}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_binary(context, LETHE_RT_ADD, &in, &rhs, &in),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_binary: lhs (2x3) and rhs (4) do not broadcast");
}

} // namespace
