//===- ElementwiseTest.cpp - Elementwise kernels --------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "TypedTensor.h"

#include <functional>
#include <limits>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using ElementwiseTest = RuntimeTest;

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

struct UnaryCase {
  lethe_rt_unary_kind kind;
  double alpha, beta;
  double low, high; // input range
  std::function<double(double)> reference;
};

std::vector<UnaryCase> unaryCases() {
  const double sqrt2OverPi = std::sqrt(2 / M_PI);
  return {
      {LETHE_RT_NEG, 0, 0, -3, 3, [](double x) { return -x; }},
      {LETHE_RT_RELU, 0, 0, -3, 3, [](double x) { return x < 0 ? 0 : x; }},
      {LETHE_RT_LEAKY_RELU, 0.1, 0, -3, 3,
       [](double x) { return x < 0 ? 0.1 * x : x; }},
      {LETHE_RT_SIGMOID, 0, 0, -8, 8,
       [](double x) { return 1 / (1 + std::exp(-x)); }},
      {LETHE_RT_TANH, 0, 0, -3, 3, [](double x) { return std::tanh(x); }},
      {LETHE_RT_GELU, 0, 0, -4, 4,
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {LETHE_RT_GELU_TANH, 0, 0, -4, 4,
       [=](double x) {
         return 0.5 * x *
                (1 + std::tanh(sqrt2OverPi * (x + 0.044715 * x * x * x)));
       }},
      {LETHE_RT_ERF, 0, 0, -3, 3, [](double x) { return std::erf(x); }},
      {LETHE_RT_EXP, 0, 0, -5, 5, [](double x) { return std::exp(x); }},
      {LETHE_RT_LOG, 0, 0, 0.01, 10, [](double x) { return std::log(x); }},
      {LETHE_RT_SQRT, 0, 0, 0, 10, [](double x) { return std::sqrt(x); }},
  };
}

TEST_F(ElementwiseTest, UnaryMatchesReferenceForEveryKindAndDtype) {
  uint64_t seed = 1;
  for (lethe_rt_dtype dtype : floatDtypes()) {
    for (const UnaryCase &unary : unaryCases()) {
      SCOPED_TRACE(std::string(dtypeName(dtype)) + " kind " +
                   std::to_string(unary.kind));
      TypedTensor in =
          randomTensor({3, 50}, dtype, seed++, unary.low, unary.high);
      TypedTensor out({3, 50}, dtype);
      std::vector<double> expected = in.values();
      for (double &value : expected)
        value = unary.reference(value);
      lethe_rt_tensor i = in.view(), o = out.view();
      ASSERT_EQ(
          lethe_rt_unary(context, unary.kind, unary.alpha, unary.beta, &i, &o),
          LETHE_RT_OK)
          << lastError();
      expectAllNear(out.values(), expected, toleranceFor(dtype));
    }
  }
}

/// Runs unary `kind` on f32 `values`.
std::vector<float> runUnary(lethe_rt_context *context, lethe_rt_unary_kind kind,
                            double alpha, double beta,
                            std::vector<float> values) {
  int64_t count = values.size();
  OwnedTensor<float> in({count}, LETHE_RT_F32, std::move(values));
  OwnedTensor<float> out({count}, LETHE_RT_F32);
  lethe_rt_tensor i = in.view(), o = out.view();
  EXPECT_EQ(lethe_rt_unary(context, kind, alpha, beta, &i, &o), LETHE_RT_OK)
      << lethe_rt_last_error(context);
  return out.values;
}

TEST_F(ElementwiseTest, UnaryCornerCases) {
  float fnan = std::numeric_limits<float>::quiet_NaN();
  // NaN passes through relu.
  EXPECT_TRUE(std::isnan(runUnary(context, LETHE_RT_RELU, 0, 0, {fnan})[0]));
  // Sigmoid saturates without overflow.
  std::vector<float> sigmoid =
      runUnary(context, LETHE_RT_SIGMOID, 0, 0, {-200, 200, 0});
  EXPECT_EQ(sigmoid[0], 0);
  EXPECT_EQ(sigmoid[1], 1);
  EXPECT_EQ(sigmoid[2], 0.5f);
  // The two GELU forms at 1.
  EXPECT_NEAR(runUnary(context, LETHE_RT_GELU, 0, 0, {1})[0],
              0.8413447460685429, 1e-7);
  EXPECT_NEAR(runUnary(context, LETHE_RT_GELU_TANH, 0, 0, {1})[0],
              0.8411919906082768, 1e-7);
  EXPECT_EQ(runUnary(context, LETHE_RT_LEAKY_RELU, 0.25, 0, {-4, 4}),
            (std::vector<float>{-1, 4}));
}

TEST_F(ElementwiseTest, ClipFloats) {
  float fnan = std::numeric_limits<float>::quiet_NaN();
  float finf = std::numeric_limits<float>::infinity();
  OwnedTensor<float> in({5}, LETHE_RT_F32, {fnan, -finf, -1, 0.5f, 3});
  OwnedTensor<float> out({5}, LETHE_RT_F32);
  lethe_rt_tensor i = in.view(), o = out.view();
  float low = -0.5f, high = 0.25f;
  ASSERT_EQ(lethe_rt_clip(context, &i, &low, &high, &o), LETHE_RT_OK)
      << lethe_rt_last_error(context);
  // NaN stays NaN.
  EXPECT_TRUE(std::isnan(out.values[0]));
  EXPECT_EQ(std::vector<float>(out.values.begin() + 1, out.values.end()),
            (std::vector<float>{-0.5f, -0.5f, 0.25f, 0.25f}));
  // No bounds: nothing changes, infinities included.
  ASSERT_EQ(lethe_rt_clip(context, &i, nullptr, nullptr, &o), LETHE_RT_OK);
  EXPECT_EQ(out.values[1], -finf);
  EXPECT_EQ(out.values[4], 3);
  // With min > max, ONNX Clip gives max everywhere.
  low = 2;
  high = 1;
  ASSERT_EQ(lethe_rt_clip(context, &i, &low, &high, &o), LETHE_RT_OK);
  EXPECT_EQ(out.values[4], 1);
  EXPECT_EQ(out.values[2], 1);
}

TEST_F(ElementwiseTest, ClipIntegers) {
  // Exact at the ends of the type's range, where a double bound would not be.
  OwnedTensor<int64_t> in({3}, LETHE_RT_I64,
                          {std::numeric_limits<int64_t>::min(), 7,
                           std::numeric_limits<int64_t>::max()});
  OwnedTensor<int64_t> out({3}, LETHE_RT_I64);
  lethe_rt_tensor i = in.view(), o = out.view();
  int64_t high = (int64_t(1) << 62) + 1;
  ASSERT_EQ(lethe_rt_clip(context, &i, nullptr, &high, &o), LETHE_RT_OK)
      << lethe_rt_last_error(context);
  EXPECT_EQ(out.values, (std::vector<int64_t>{
                            std::numeric_limits<int64_t>::min(), 7, high}));
  OwnedTensor<int8_t> small({4}, LETHE_RT_I8, {-128, -3, 4, 127});
  OwnedTensor<int8_t> clipped({4}, LETHE_RT_I8);
  lethe_rt_tensor s = small.view(), c = clipped.view();
  int8_t low8 = -2, high8 = 3;
  ASSERT_EQ(lethe_rt_clip(context, &s, &low8, &high8, &c), LETHE_RT_OK);
  EXPECT_EQ(clipped.values, (std::vector<int8_t>{-2, -2, 3, 3}));
  // Booleans have no order to clip in.
  TypedTensor flags({2}, LETHE_RT_I1), flagsOut({2}, LETHE_RT_I1);
  lethe_rt_tensor f = flags.view(), fo = flagsOut.view();
  EXPECT_EQ(lethe_rt_clip(context, &f, nullptr, nullptr, &fo), LETHE_RT_ERROR);
  EXPECT_STREQ(lethe_rt_last_error(context),
               "lethe_rt_clip: in is i1, which has no order to clip in");
}

TEST_F(ElementwiseTest, UnaryRejectsBadArguments) {
  TypedTensor f23({2, 3}, LETHE_RT_F32), f32({3, 2}, LETHE_RT_F32),
      h23({2, 3}, LETHE_RT_F16), i23({2, 3}, LETHE_RT_I32);
  lethe_rt_tensor vf23 = f23.view(), vf32 = f32.view(), vh23 = h23.view(),
                  vi23 = i23.view();
  EXPECT_EQ(lethe_rt_unary(context, static_cast<lethe_rt_unary_kind>(99), 0, 0,
                           &vf23, &vf23),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_unary: unknown unary kind 99");
  EXPECT_EQ(lethe_rt_unary(context, LETHE_RT_EXP, 0, 0, &vi23, &vi23),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_unary: in must be f16, bf16, f32 or f64, got i32");
  EXPECT_EQ(lethe_rt_unary(context, LETHE_RT_EXP, 0, 0, &vf23, &vf32),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_unary: in (2x3) and out (3x2) must have "
                         "the same shape");
  EXPECT_EQ(lethe_rt_unary(context, LETHE_RT_EXP, 0, 0, &vf23, &vh23),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_unary: out must be f32, got f16");
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

/// The broadcast shape of two shapes (assumed compatible).
std::vector<int64_t> broadcast(const std::vector<int64_t> &a,
                               const std::vector<int64_t> &b) {
  std::vector<int64_t> shape(std::max(a.size(), b.size()), 1);
  for (const auto *operand : {&a, &b})
    for (size_t i = 0; i < operand->size(); ++i) {
      int64_t dim = (*operand)[i];
      if (dim != 1)
        shape[shape.size() - operand->size() + i] = dim;
    }
  return shape;
}

/// Element-by-element reference over the broadcast of lhs and rhs.
std::vector<double>
referenceBinary(const TypedTensor &lhs, const TypedTensor &rhs,
                const std::vector<int64_t> &shape,
                const std::function<double(double, double)> &op) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  std::vector<double> result(count);
  for (int64_t i = 0; i < count; ++i) {
    std::vector<int64_t> index = unravel(i, shape);
    result[i] = op(lhs.get(broadcastIndex(index, lhs.shape)),
                   rhs.get(broadcastIndex(index, rhs.shape)));
  }
  return result;
}

const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> &
binaryShapes() {
  static const std::vector<
      std::pair<std::vector<int64_t>, std::vector<int64_t>>>
      shapes{{{2, 3, 4}, {4}},       {{2, 1, 4}, {3, 1}},
             {{}, {2, 3}},           {{1}, {5}},
             {{0, 3}, {3}},          {{2, 3}, {2, 3}},
             {{3, 1, 5}, {1, 4, 1}}, {{4, 1}, {}},
             {{2, 3, 4}, {2, 3, 1}}};
  return shapes;
}

TEST_F(ElementwiseTest, FloatBinaryMatchesReferenceWithBroadcasting) {
  std::vector<
      std::pair<lethe_rt_binary_kind, std::function<double(double, double)>>>
      ops{{LETHE_RT_ADD, [](double a, double b) { return a + b; }},
          {LETHE_RT_SUB, [](double a, double b) { return a - b; }},
          {LETHE_RT_MUL, [](double a, double b) { return a * b; }},
          {LETHE_RT_DIV, [](double a, double b) { return a / b; }},
          {LETHE_RT_POW, [](double a, double b) { return std::pow(a, b); }}};
  uint64_t seed = 1;
  for (lethe_rt_dtype dtype : floatDtypes()) {
    for (const auto &[kind, op] : ops) {
      for (const auto &[lhsShape, rhsShape] : binaryShapes()) {
        SCOPED_TRACE(std::string(dtypeName(dtype)) + " kind " +
                     std::to_string(kind) + " case " + std::to_string(seed));
        // Positive bases and divisors away from zero.
        TypedTensor lhs = randomTensor(lhsShape, dtype, seed++, 0.1, 2);
        TypedTensor rhs = randomTensor(rhsShape, dtype, seed++, 0.5, 2);
        std::vector<int64_t> shape = broadcast(lhsShape, rhsShape);
        TypedTensor out(shape, dtype);
        lethe_rt_tensor l = lhs.view(), r = rhs.view(), o = out.view();
        ASSERT_EQ(lethe_rt_binary(context, kind, &l, &r, &o), LETHE_RT_OK)
            << lastError();
        expectAllNear(out.values(), referenceBinary(lhs, rhs, shape, op),
                      toleranceFor(dtype));
      }
    }
  }
}

TEST_F(ElementwiseTest, IntegerBinaryMatchesReferenceWithBroadcasting) {
  uint64_t seed = 1;
  for (lethe_rt_dtype dtype : integerDtypes()) {
    bool isUnsignedDtype = isUnsigned(dtype);
    for (lethe_rt_binary_kind kind :
         {LETHE_RT_ADD, LETHE_RT_SUB, LETHE_RT_MUL, LETHE_RT_DIV}) {
      for (const auto &[lhsShape, rhsShape] : binaryShapes()) {
        SCOPED_TRACE(std::string(dtypeName(dtype)) + " kind " +
                     std::to_string(kind) + " case " + std::to_string(seed));
        // Unsigned operands stay in [0, 200) (their differences wrap), signed
        // ones in [-100, 100); products of 8- and 16-bit values wrap.
        TypedTensor lhs =
            randomTensor(lhsShape, dtype, seed++, isUnsignedDtype ? 0 : -100,
                         isUnsignedDtype ? 200 : 100);
        TypedTensor rhs = randomTensor(rhsShape, dtype, seed++, 1, 20);
        std::vector<int64_t> shape = broadcast(lhsShape, rhsShape);
        TypedTensor out(shape, dtype);
        auto op = [&](double a, double b) {
          // Two's-complement arithmetic in 64 bits, wrapped to the dtype;
          // the values are small enough that the quotient is exact.
          int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
          uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
          switch (kind) {
          case LETHE_RT_ADD:
            return wrapInteger(dtype, ux + uy);
          case LETHE_RT_SUB:
            return wrapInteger(dtype, ux - uy);
          case LETHE_RT_MUL:
            return wrapInteger(dtype, ux * uy);
          default:
            return wrapInteger(dtype, static_cast<uint64_t>(x / y));
          }
        };
        lethe_rt_tensor l = lhs.view(), r = rhs.view(), o = out.view();
        ASSERT_EQ(lethe_rt_binary(context, kind, &l, &r, &o), LETHE_RT_OK)
            << lastError();
        EXPECT_EQ(out.values(), referenceBinary(lhs, rhs, shape, op));
      }
    }
  }
}

/// Runs integer binary `kind` elementwise on equal-shape vectors.
template <typename I>
std::vector<I> runIntegerBinary(lethe_rt_context *context,
                                lethe_rt_binary_kind kind, lethe_rt_dtype dtype,
                                std::vector<I> lhs, std::vector<I> rhs) {
  int64_t count = lhs.size();
  OwnedTensor<I> l({count}, dtype, std::move(lhs)),
      r({count}, dtype, std::move(rhs));
  OwnedTensor<I> o({count}, dtype);
  lethe_rt_tensor lv = l.view(), rv = r.view(), ov = o.view();
  EXPECT_EQ(lethe_rt_binary(context, kind, &lv, &rv, &ov), LETHE_RT_OK)
      << lethe_rt_last_error(context);
  return o.values;
}

TEST_F(ElementwiseTest, IntegerArithmeticWrapsAndTruncates) {
  constexpr int32_t max32 = std::numeric_limits<int32_t>::max();
  constexpr int32_t min32 = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(runIntegerBinary<int32_t>(context, LETHE_RT_ADD, LETHE_RT_I32,
                                      {max32, -5}, {1, 3}),
            (std::vector<int32_t>{min32, -2}));
  EXPECT_EQ(runIntegerBinary<int32_t>(context, LETHE_RT_DIV, LETHE_RT_I32,
                                      {-7, 7, min32, 9}, {2, -2, -1, 3}),
            (std::vector<int32_t>{-3, -3, min32, 3}));
  EXPECT_EQ(runIntegerBinary<int8_t>(context, LETHE_RT_ADD, LETHE_RT_I8,
                                     {100, -128}, {100, -1}),
            (std::vector<int8_t>{-56, 127}));
  EXPECT_EQ(runIntegerBinary<int8_t>(context, LETHE_RT_DIV, LETHE_RT_I8, {-128},
                                     {-1}),
            (std::vector<int8_t>{-128}));
  EXPECT_EQ(runIntegerBinary<int64_t>(context, LETHE_RT_MUL, LETHE_RT_I64,
                                      {int64_t(1) << 62, 3}, {4, -5}),
            (std::vector<int64_t>{0, -15}));
  // Unsigned: wrapping modulo 2^n, and a divisor with all bits set is the
  // largest value, not -1.
  EXPECT_EQ(runIntegerBinary<uint8_t>(context, LETHE_RT_SUB, LETHE_RT_U8,
                                      {3, 200}, {5, 100}),
            (std::vector<uint8_t>{254, 100}));
  EXPECT_EQ(runIntegerBinary<uint8_t>(context, LETHE_RT_DIV, LETHE_RT_U8,
                                      {200, 255, 254}, {255, 255, 127}),
            (std::vector<uint8_t>{0, 1, 2}));
  constexpr uint64_t max64 = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(runIntegerBinary<uint64_t>(context, LETHE_RT_DIV, LETHE_RT_U64,
                                       {max64, 7}, {max64, max64}),
            (std::vector<uint64_t>{1, 0}));
  EXPECT_EQ(runIntegerBinary<uint64_t>(context, LETHE_RT_ADD, LETHE_RT_U64,
                                       {max64}, {2}),
            (std::vector<uint64_t>{1}));
  EXPECT_EQ(runIntegerBinary<uint32_t>(context, LETHE_RT_MUL, LETHE_RT_U32,
                                       {uint32_t(1) << 31, 3}, {2, 5}),
            (std::vector<uint32_t>{0, 15}));
}

TEST_F(ElementwiseTest, PowTakesAnExponentOfAnyNumericType) {
  TypedTensor base({3}, LETHE_RT_F32, {2, 3, 0.5});
  TypedTensor out({3}, LETHE_RT_F32);
  for (lethe_rt_dtype exponentType :
       {LETHE_RT_I8, LETHE_RT_I16, LETHE_RT_I32, LETHE_RT_I64, LETHE_RT_F64,
        LETHE_RT_F16}) {
    TypedTensor exponent({3}, exponentType, {3, -1, 2});
    lethe_rt_tensor b = base.view(), e = exponent.view(), o = out.view();
    ASSERT_EQ(lethe_rt_binary(context, LETHE_RT_POW, &b, &e, &o), LETHE_RT_OK)
        << lastError();
    expectAllNear(out.values(), {8, 1.0 / 3, 0.25}, 1e-7);
  }
  for (lethe_rt_dtype exponentType :
       {LETHE_RT_U8, LETHE_RT_U16, LETHE_RT_U32, LETHE_RT_U64}) {
    TypedTensor exponent({3}, exponentType, {3, 0, 2});
    lethe_rt_tensor b = base.view(), e = exponent.view(), o = out.view();
    ASSERT_EQ(lethe_rt_binary(context, LETHE_RT_POW, &b, &e, &o), LETHE_RT_OK)
        << lastError();
    EXPECT_EQ(out.values(), (std::vector<double>{8, 1, 0.25}));
  }
}

TEST_F(ElementwiseTest, IntegerPowWrapsAndTruncates) {
  EXPECT_EQ(runIntegerBinary<int32_t>(context, LETHE_RT_POW, LETHE_RT_I32,
                                      {2, -3, 5, 1, -1, -1, 7, 0},
                                      {10, 3, 0, -2, -3, -4, -1, 0}),
            (std::vector<int32_t>{1024, -27, 1, 1, -1, 1, 0, 1}));
  // 2^63 wraps to the lowest i64, 2^64 to 0, (-2)^63 is the lowest too.
  EXPECT_EQ(runIntegerBinary<int64_t>(context, LETHE_RT_POW, LETHE_RT_I64,
                                      {2, 2, -2}, {63, 64, 63}),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 0,
                                  std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(
      runIntegerBinary<int8_t>(context, LETHE_RT_POW, LETHE_RT_I8, {3}, {5}),
      (std::vector<int8_t>{-13})); // 243 - 256
  EXPECT_EQ(runIntegerBinary<uint8_t>(context, LETHE_RT_POW, LETHE_RT_U8,
                                      {3, 2, 255}, {5, 8, 2}),
            (std::vector<uint8_t>{243, 0, 1})); // 65025 = 254 * 256 + 1
  // An unsigned base with a negative exponent: 1 stays 1, 255 is not -1.
  TypedTensor unsignedBase({3}, LETHE_RT_U8, {1, 255, 2});
  TypedTensor negativeExponent({3}, LETHE_RT_I64, {-1, -1, -2});
  TypedTensor unsignedOut({3}, LETHE_RT_U8);
  lethe_rt_tensor ub = unsignedBase.view(), ne = negativeExponent.view(),
                  uo = unsignedOut.view();
  ASSERT_EQ(lethe_rt_binary(context, LETHE_RT_POW, &ub, &ne, &uo), LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(unsignedOut.values(), (std::vector<double>{1, 0, 0}));
  // A float exponent: the f64 power truncated toward zero.
  TypedTensor base({4}, LETHE_RT_I32, {1, 2, 3, 2});
  TypedTensor exponent({4}, LETHE_RT_F32, {4, 5, 6, 0.5});
  TypedTensor out({4}, LETHE_RT_I32);
  lethe_rt_tensor b = base.view(), e = exponent.view(), o = out.view();
  ASSERT_EQ(lethe_rt_binary(context, LETHE_RT_POW, &b, &e, &o), LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(out.values(), (std::vector<double>{1, 32, 729, 1}));
}

TEST_F(ElementwiseTest, BinaryRejectsBadArguments) {
  TypedTensor f234({2, 3, 4}, LETHE_RT_F32), f23({2, 3}, LETHE_RT_F32),
      f4({4}, LETHE_RT_F32), i23({2, 3}, LETHE_RT_I32),
      i23zero({2, 3}, LETHE_RT_I32, {1, 0, 2, 0, 3, 4}),
      l23({2, 3}, LETHE_RT_I64), b23({2, 3}, LETHE_RT_I1);
  lethe_rt_tensor v234 = f234.view(), v23 = f23.view(), v4 = f4.view(),
                  vi = i23.view(), vz = i23zero.view(), vl = l23.view(),
                  vb = b23.view();
  auto expectError = [&](lethe_rt_status status, const char *message) {
    EXPECT_EQ(status, LETHE_RT_ERROR);
    EXPECT_EQ(lastError(), message);
  };
  expectError(lethe_rt_binary(context, LETHE_RT_ADD, &v23, &v4, &v23),
              "lethe_rt_binary: lhs (2x3) and rhs (4) do not broadcast");
  expectError(lethe_rt_binary(context, LETHE_RT_ADD, &v234, &v4, &v23),
              "lethe_rt_binary: out (2x3) must be 2x3x4, the broadcast of lhs "
              "(2x3x4) and rhs (4)");
  expectError(lethe_rt_binary(context, LETHE_RT_POW, &v23, &vb, &v23),
              "lethe_rt_binary: pow needs a numeric rhs, got i1");
  expectError(lethe_rt_binary(context, LETHE_RT_ADD, &vb, &vb, &vb),
              "lethe_rt_binary: lhs must be numeric, got i1");
  expectError(lethe_rt_binary(context, LETHE_RT_ADD, &vi, &vl, &vi),
              "lethe_rt_binary: rhs must be i32, got i64");
  expectError(lethe_rt_binary(context, LETHE_RT_DIV, &vi, &vz, &vi),
              "lethe_rt_binary: integer division by zero (rhs element 1)");
  expectError(lethe_rt_binary(context, static_cast<lethe_rt_binary_kind>(9),
                              &v23, &v23, &v23),
              "lethe_rt_binary: unknown binary kind 9");
  expectError(lethe_rt_binary(context, LETHE_RT_ADD, &v23, nullptr, &v23),
              "lethe_rt_binary: rhs is missing (null descriptor)");
}

//===----------------------------------------------------------------------===//
// Where
//===----------------------------------------------------------------------===//

TEST_F(ElementwiseTest, WhereBroadcastsThreeWaysForEveryElementSize) {
  uint64_t seed = 7;
  for (lethe_rt_dtype dtype :
       {LETHE_RT_I1, LETHE_RT_I8, LETHE_RT_F16, LETHE_RT_F32, LETHE_RT_I64}) {
    SCOPED_TRACE(dtypeName(dtype));
    TypedTensor condition = randomTensor({2, 1, 4}, LETHE_RT_F32, seed++);
    TypedTensor flags({2, 1, 4}, LETHE_RT_I1);
    for (int64_t i = 0; i < flags.size(); ++i)
      flags.set(i, condition.get(i) > 0);
    TypedTensor lhs = randomTensor({3, 1}, dtype, seed++, -50, 50);
    TypedTensor rhs = randomTensor({4}, dtype, seed++, -50, 50);
    TypedTensor out({2, 3, 4}, dtype);
    lethe_rt_tensor c = flags.view(), l = lhs.view(), r = rhs.view(),
                    o = out.view();
    ASSERT_EQ(lethe_rt_where(context, &c, &l, &r, &o), LETHE_RT_OK)
        << lastError();
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> index = unravel(i, out.shape);
      double expected = flags.get(broadcastIndex(index, flags.shape))
                            ? lhs.get(broadcastIndex(index, lhs.shape))
                            : rhs.get(broadcastIndex(index, rhs.shape));
      EXPECT_EQ(out.get(i), expected) << "element " << i;
    }
  }
}

TEST_F(ElementwiseTest, WhereRejectsBadArguments) {
  TypedTensor f2({2}, LETHE_RT_F32), f3({3}, LETHE_RT_F32),
      b2({2}, LETHE_RT_I1), i2({2}, LETHE_RT_I32);
  lethe_rt_tensor vf2 = f2.view(), vf3 = f3.view(), vb2 = b2.view(),
                  vi2 = i2.view();
  EXPECT_EQ(lethe_rt_where(context, &vf2, &vf2, &vf2, &vf2), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_where: condition must be i1, got f32");
  EXPECT_EQ(lethe_rt_where(context, &vb2, &vf3, &vf2, &vf2), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_where: condition (2), lhs (3) and rhs (2) "
                         "do not broadcast");
  EXPECT_EQ(lethe_rt_where(context, &vb2, &vf2, &vi2, &vf2), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_where: rhs must be f32, got i32");
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

/// The 16-bit pattern (f16 or bf16) nearest to `value`, ties to the even
/// pattern, found by exhaustive search: a reference independent of the
/// runtime's conversions.
uint16_t nearest16(double value, lethe_rt_dtype dtype) {
  if (std::isnan(value))
    return 0;
  uint16_t best = 0;
  double bestDistance = inf;
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    uint16_t pattern = static_cast<uint16_t>(bits);
    double candidate = dtype == LETHE_RT_F16
                           ? halfToFloat(Half{pattern})
                           : bfloat16ToFloat(BFloat16{pattern});
    if (std::isnan(candidate))
      continue;
    double distance =
        std::isinf(candidate) ? inf : std::fabs(candidate - value);
    if (std::isinf(candidate) && std::isinf(value) &&
        (candidate > 0) == (value > 0))
      return pattern;
    if (distance < bestDistance ||
        (distance == bestDistance && (pattern & 1) == 0 &&
         std::signbit(candidate) == std::signbit(value))) {
      best = pattern;
      bestDistance = distance;
    }
  }
  // Beyond the largest finite value by at least half an ulp: infinity.
  double largest =
      dtype == LETHE_RT_F16 ? 65504.0 : bfloat16ToFloat(BFloat16{0x7f7f});
  double halfUlp = dtype == LETHE_RT_F16 ? 16.0 : std::ldexp(1.0, 119);
  if (std::fabs(value) >= largest + halfUlp)
    return dtype == LETHE_RT_F16 ? (value > 0 ? 0x7c00 : 0xfc00)
                                 : (value > 0 ? 0x7f80 : 0xff80);
  return best;
}

/// The expected result of casting `value` (exactly representable in `from`)
/// to `to`, as a double.
double expectedCast(double value, lethe_rt_dtype from, lethe_rt_dtype to) {
  bool fromFloat = isFloat(from);
  if (std::isnan(value) && isFloat(to))
    return value;
  if (to == LETHE_RT_I1)
    return value != 0;
  if (!isFloat(to)) {
    if (!fromFloat) // keep the low bits
      return wrapInteger(to,
                         static_cast<uint64_t>(static_cast<int64_t>(value)));
    if (std::isnan(value))
      return 0;
    auto [lowest, largest] = integerRange(to);
    double truncated = std::trunc(value);
    return truncated <= lowest    ? lowest
           : truncated >= largest ? largest
                                  : truncated;
  }
  switch (to) {
  case LETHE_RT_F16:
    return halfToFloat(Half{nearest16(value, to)});
  case LETHE_RT_BF16:
    return bfloat16ToFloat(BFloat16{nearest16(value, to)});
  case LETHE_RT_F32:
    return static_cast<float>(value);
  default:
    return value;
  }
}

TEST_F(ElementwiseTest, CastConvertsBetweenEveryPairOfDtypes) {
  std::vector<double> floatValues{0,     1,       -1,  2.5,  -2.5, 2.75,
                                  -3.99, 127,     128, -129, 255,  300,
                                  65504, 65520,   1e5, -1e9, 3e9,  1e20,
                                  0.1,   1.0 / 3, nan, inf,  -inf, 1e-6};
  std::vector<double> integerValues{0,   1,    -1,  2,        -3,    127,
                                    128, -129, 255, 300,      65504, 65520,
                                    1e5, -1e9, 3e9, 16777217, -7};
  std::vector<double> nonNegativeValues;
  for (double value : integerValues)
    if (value >= 0)
      nonNegativeValues.push_back(value);
  std::vector<lethe_rt_dtype> dtypes{LETHE_RT_F16, LETHE_RT_BF16, LETHE_RT_F32,
                                     LETHE_RT_F64, LETHE_RT_I1};
  dtypes.insert(dtypes.end(), integerDtypes().begin(), integerDtypes().end());
  for (lethe_rt_dtype from : dtypes) {
    // Negative values would wrap to unsigned numbers near 2^64, which a
    // double does not hold exactly.
    const std::vector<double> &values = isFloat(from)      ? floatValues
                                        : isUnsigned(from) ? nonNegativeValues
                                                           : integerValues;
    int64_t count = values.size();
    TypedTensor in({count}, from, values);
    for (lethe_rt_dtype to : dtypes) {
      SCOPED_TRACE(std::string(dtypeName(from)) + " to " + dtypeName(to));
      TypedTensor out({count}, to);
      lethe_rt_tensor i = in.view(), o = out.view();
      ASSERT_EQ(lethe_rt_cast(context, &i, &o), LETHE_RT_OK) << lastError();
      for (int64_t k = 0; k < count; ++k) {
        double expected = expectedCast(in.get(k), from, to);
        if (std::isnan(expected))
          EXPECT_TRUE(std::isnan(out.get(k))) << "element " << k;
        else
          EXPECT_EQ(out.get(k), expected)
              << "element " << k << " from " << in.get(k);
      }
    }
  }
}

// Narrowing to f16 or bf16 rounds once, from the exact value, even when the
// value is not a float: the naive path (to float, then to 16 bits) would
// round twice and land on the other neighbor in these cases.
TEST_F(ElementwiseTest, CastNarrowsWithoutDoubleRounding) {
  // Just above the midpoint between 1 and the next f16, 1 + 2^-10.
  TypedTensor f64({1}, LETHE_RT_F64,
                  {1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)});
  TypedTensor half({1}, LETHE_RT_F16);
  lethe_rt_tensor i = f64.view(), o = half.view();
  ASSERT_EQ(lethe_rt_cast(context, &i, &o), LETHE_RT_OK) << lastError();
  EXPECT_EQ(half.get(0), 1 + std::ldexp(1.0, -10));

  // 2^32 + 2^24 + 1 lies just above the midpoint of two bf16 values.
  OwnedTensor<int64_t> i64({1}, LETHE_RT_I64,
                           {(int64_t(1) << 32) + (int64_t(1) << 24) + 1});
  TypedTensor bf16({1}, LETHE_RT_BF16);
  i = i64.view();
  o = bf16.view();
  ASSERT_EQ(lethe_rt_cast(context, &i, &o), LETHE_RT_OK) << lastError();
  EXPECT_EQ(bf16.get(0), std::ldexp(1.0, 32) + std::ldexp(1.0, 25));

  // Likewise 2^24 + 2^16 + 1 from i32.
  OwnedTensor<int32_t> i32({1}, LETHE_RT_I32, {(1 << 24) + (1 << 16) + 1});
  i = i32.view();
  ASSERT_EQ(lethe_rt_cast(context, &i, &o), LETHE_RT_OK) << lastError();
  EXPECT_EQ(bf16.get(0), std::ldexp(1.0, 24) + std::ldexp(1.0, 17));

  // And 2^63 + 2^55 + 1 from ui64, beyond the range of i64.
  OwnedTensor<uint64_t> u64({1}, LETHE_RT_U64,
                            {(uint64_t(1) << 63) + (uint64_t(1) << 55) + 1});
  i = u64.view();
  ASSERT_EQ(lethe_rt_cast(context, &i, &o), LETHE_RT_OK) << lastError();
  EXPECT_EQ(bf16.get(0), std::ldexp(1.0, 63) + std::ldexp(1.0, 56));
}

TEST_F(ElementwiseTest, CastToUnsignedSaturates) {
  TypedTensor in({6}, LETHE_RT_F32, {-1, -0.5, 255.9, 256, 1e30, nan});
  TypedTensor out({6}, LETHE_RT_U8);
  lethe_rt_tensor i = in.view(), o = out.view();
  ASSERT_EQ(lethe_rt_cast(context, &i, &o), LETHE_RT_OK) << lastError();
  EXPECT_EQ(out.values(), (std::vector<double>{0, 0, 255, 255, 255, 0}));
  TypedTensor wide({2}, LETHE_RT_F64, {1.9e19, -1e19});
  TypedTensor out64({2}, LETHE_RT_U64);
  i = wide.view();
  o = out64.view();
  ASSERT_EQ(lethe_rt_cast(context, &i, &o), LETHE_RT_OK) << lastError();
  EXPECT_EQ(out64.values(),
            (std::vector<double>{
                static_cast<double>(std::numeric_limits<uint64_t>::max()), 0}));
}

TEST_F(ElementwiseTest, CastRejectsBadArguments) {
  TypedTensor f23({2, 3}, LETHE_RT_F32), i6({6}, LETHE_RT_I64);
  lethe_rt_tensor vf = f23.view(), vi = i6.view();
  EXPECT_EQ(lethe_rt_cast(context, &vf, &vi), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_cast: in (2x3) and out (6) must have the same shape");
  EXPECT_EQ(lethe_rt_cast(context, nullptr, &vi), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_cast: in is missing (null descriptor)");
}

} // namespace
