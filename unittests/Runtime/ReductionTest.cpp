//===- ReductionTest.cpp - Reduction kernels ------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "TypedTensor.h"

#include <algorithm>
#include <limits>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using ReductionTest = RuntimeTest;

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

/// x's shape with the reduced dims set to 1 (all of them when `axes` is
/// empty), or dropped.
std::vector<int64_t> reducedShape(const std::vector<int64_t> &shape,
                                  const std::vector<int64_t> &axes,
                                  bool keepDims) {
  std::vector<int64_t> result;
  for (int64_t dim = 0; dim < static_cast<int64_t>(shape.size()); ++dim) {
    bool reduced =
        axes.empty() || std::find(axes.begin(), axes.end(), dim) != axes.end();
    if (!reduced)
      result.push_back(shape[dim]);
    else if (keepDims)
      result.push_back(1);
  }
  return result;
}

/// Reduces x naively: groups x's elements by their kept index.
std::vector<double> referenceReduce(lethe_rt_reduce_kind kind,
                                    const TypedTensor &x,
                                    const std::vector<int64_t> &axes) {
  std::vector<int64_t> kept = reducedShape(x.shape, axes, true);
  int64_t outCount = 1;
  for (int64_t dim : kept)
    outCount *= dim;
  std::vector<std::vector<double>> groups(outCount);
  for (int64_t i = 0; i < x.size(); ++i)
    groups[broadcastIndex(unravel(i, x.shape), kept)].push_back(x.get(i));
  bool integer = !isFloat(x.dtype);
  std::vector<double> result(outCount);
  for (int64_t o = 0; o < outCount; ++o) {
    const std::vector<double> &group = groups[o];
    if (kind == LETHE_RT_REDUCE_MAX) {
      // The identity of max: -inf, or the lowest value of the dtype.
      double best = x.dtype == LETHE_RT_I1 ? 0
                    : isFloat(x.dtype)     ? -inf
                                           : integerRange(x.dtype).first;
      for (double value : group)
        best = std::isnan(value) || value > best ? value : best;
      result[o] = best;
      continue;
    }
    if (integer) {
      // The exact sum (the values are small), its mean truncated toward
      // zero, wrapped to the dtype.
      int64_t sum = 0;
      for (double value : group)
        sum += static_cast<int64_t>(value);
      if (kind == LETHE_RT_REDUCE_MEAN)
        sum /= static_cast<int64_t>(group.size());
      result[o] = wrapInteger(x.dtype, static_cast<uint64_t>(sum));
    } else {
      double sum = 0;
      for (double value : group)
        sum += value;
      result[o] = kind == LETHE_RT_REDUCE_MEAN
                      ? sum / static_cast<double>(group.size())
                      : sum;
    }
  }
  return result;
}

TEST_F(ReductionTest, MatchesReferenceForEveryAxisSetKindAndDtype) {
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases{
      {{2, 3, 4}, {1}},       {{2, 3, 4}, {0, 2}},    {{2, 3, 4}, {}},
      {{2, 3, 4}, {2}},       {{2, 3, 4}, {0, 1, 2}}, {{5}, {0}},
      {{3, 1, 4}, {1}},       {{2, 0, 3}, {1}},       {{}, {}},
      {{4, 5, 6, 7}, {1, 3}}, {{3, 1000}, {1}},       {{1000, 3}, {0}},
  };
  uint64_t seed = 1;
  std::vector<lethe_rt_dtype> dtypes{LETHE_RT_F16, LETHE_RT_BF16, LETHE_RT_F32,
                                     LETHE_RT_F64, LETHE_RT_I1};
  dtypes.insert(dtypes.end(), integerDtypes().begin(), integerDtypes().end());
  for (lethe_rt_dtype dtype : dtypes) {
    for (lethe_rt_reduce_kind kind :
         {LETHE_RT_REDUCE_SUM, LETHE_RT_REDUCE_MEAN, LETHE_RT_REDUCE_MAX}) {
      if (dtype == LETHE_RT_I1 && kind != LETHE_RT_REDUCE_MAX)
        continue;
      for (const auto &[shape, axes] : cases) {
        TypedTensor x = randomTensor(shape, dtype, seed++,
                                     isUnsigned(dtype) ? 0 : -100, 100);
        bool emptyIntegerMean =
            kind == LETHE_RT_REDUCE_MEAN && !isFloat(dtype) && x.size() == 0;
        if (emptyIntegerMean)
          continue;
        std::vector<double> expected = referenceReduce(kind, x, axes);
        for (bool keepDims : {true, false}) {
          SCOPED_TRACE(std::string(dtypeName(dtype)) + " kind " +
                       std::to_string(kind) + " case " + std::to_string(seed) +
                       (keepDims ? " keepdims" : ""));
          TypedTensor out(reducedShape(shape, axes, keepDims), dtype);
          lethe_rt_tensor xv = x.view(), ov = out.view();
          ASSERT_EQ(lethe_rt_reduce(context, kind, &xv, axes.data(),
                                    axes.size(), &ov),
                    LETHE_RT_OK)
              << lastError();
          if (isFloat(dtype)) {
            // A sum of n values of magnitude <= 100 is a multiple of its
            // rounding unit at 100 n.
            double scale = kind == LETHE_RT_REDUCE_SUM ? 1000 : 100;
            std::vector<double> scaled = out.values(), reference = expected;
            for (size_t i = 0; i < scaled.size(); ++i) {
              scaled[i] /= scale;
              reference[i] /= scale;
            }
            expectAllNear(scaled, reference, toleranceFor(dtype));
          } else {
            EXPECT_EQ(out.values(), expected);
          }
        }
      }
    }
  }
}

// Float sums accumulate in f64 in row-major order and round once.
TEST_F(ReductionTest, SumsInDoubleInRowMajorOrder) {
  TypedTensor x = randomTensor({1000, 3}, LETHE_RT_F32, 5);
  TypedTensor out({3}, LETHE_RT_F32);
  int64_t axis = 0;
  lethe_rt_tensor xv = x.view(), ov = out.view();
  ASSERT_EQ(lethe_rt_reduce(context, LETHE_RT_REDUCE_SUM, &xv, &axis, 1, &ov),
            LETHE_RT_OK)
      << lastError();
  for (int64_t j = 0; j < 3; ++j) {
    double sum = 0;
    for (int64_t i = 0; i < 1000; ++i)
      sum += x.get(i * 3 + j);
    EXPECT_EQ(out.get(j), static_cast<float>(sum)) << "column " << j;
  }
}

TEST_F(ReductionTest, CornerCases) {
  // An integer mean truncates toward zero.
  TypedTensor ints({2, 2}, LETHE_RT_I32, {1, 2, -1, -2});
  TypedTensor intMeans({2}, LETHE_RT_I32);
  int64_t axis = 1;
  lethe_rt_tensor xv = ints.view(), ov = intMeans.view();
  ASSERT_EQ(lethe_rt_reduce(context, LETHE_RT_REDUCE_MEAN, &xv, &axis, 1, &ov),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(intMeans.values(), (std::vector<double>{1, -1}));

  // NaN wins a max wherever it is.
  TypedTensor withNan({2, 3}, LETHE_RT_F32, {1, nan, 3, nan, 5, 4});
  TypedTensor maxima({2}, LETHE_RT_F32);
  xv = withNan.view();
  ov = maxima.view();
  ASSERT_EQ(lethe_rt_reduce(context, LETHE_RT_REDUCE_MAX, &xv, &axis, 1, &ov),
            LETHE_RT_OK)
      << lastError();
  EXPECT_TRUE(std::isnan(maxima.get(0)));
  EXPECT_TRUE(std::isnan(maxima.get(1)));

  // Over no elements: sum 0, mean NaN, max -inf.
  TypedTensor empty({2, 0}, LETHE_RT_F32);
  TypedTensor result({2}, LETHE_RT_F32);
  xv = empty.view();
  ov = result.view();
  for (auto [kind, expected] :
       {std::pair<lethe_rt_reduce_kind, double>{LETHE_RT_REDUCE_SUM, 0},
        {LETHE_RT_REDUCE_MAX, -inf}}) {
    ASSERT_EQ(lethe_rt_reduce(context, kind, &xv, &axis, 1, &ov), LETHE_RT_OK)
        << lastError();
    EXPECT_EQ(result.values(), (std::vector<double>{expected, expected}));
  }
  ASSERT_EQ(lethe_rt_reduce(context, LETHE_RT_REDUCE_MEAN, &xv, &axis, 1, &ov),
            LETHE_RT_OK)
      << lastError();
  EXPECT_TRUE(std::isnan(result.get(0)));

  // ... and an integer mean of nothing is an error.
  TypedTensor emptyInts({2, 0}, LETHE_RT_I32), intResult({2}, LETHE_RT_I32);
  xv = emptyInts.view();
  ov = intResult.view();
  EXPECT_EQ(lethe_rt_reduce(context, LETHE_RT_REDUCE_MEAN, &xv, &axis, 1, &ov),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_reduce: the i32 mean of no elements is undefined");

  // The max of booleans is "any".
  TypedTensor flags({2, 3}, LETHE_RT_I1, {0, 0, 1, 0, 0, 0});
  TypedTensor any({2}, LETHE_RT_I1);
  xv = flags.view();
  ov = any.view();
  ASSERT_EQ(lethe_rt_reduce(context, LETHE_RT_REDUCE_MAX, &xv, &axis, 1, &ov),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(any.values(), (std::vector<double>{1, 0}));
}

TEST_F(ReductionTest, RejectsBadArguments) {
  TypedTensor x({2, 3}, LETHE_RT_F32), out2({2}, LETHE_RT_F32),
      out3({3}, LETHE_RT_F32), d2({2}, LETHE_RT_F64), b23({2, 3}, LETHE_RT_I1),
      b2({2}, LETHE_RT_I1);
  lethe_rt_tensor xv = x.view(), o2 = out2.view(), o3 = out3.view(),
                  vd2 = d2.view(), vb23 = b23.view(), vb2 = b2.view();
  auto expectError = [&](lethe_rt_status status, const char *message) {
    EXPECT_EQ(status, LETHE_RT_ERROR);
    EXPECT_EQ(lastError(), message);
  };
  int64_t axis3 = 3, axis1 = 1, repeated[] = {1, 1};
  expectError(
      lethe_rt_reduce(context, LETHE_RT_REDUCE_SUM, &xv, &axis3, 1, &o2),
      "lethe_rt_reduce: axis 3 is out of range for x (2x3)");
  expectError(
      lethe_rt_reduce(context, LETHE_RT_REDUCE_SUM, &xv, repeated, 2, &o2),
      "lethe_rt_reduce: axis 1 is repeated");
  expectError(
      lethe_rt_reduce(context, LETHE_RT_REDUCE_SUM, &xv, &axis1, 1, &o3),
      "lethe_rt_reduce: out (3) must be 2x1 (keepdims) or 2 for x "
      "(2x3) reduced");
  expectError(
      lethe_rt_reduce(context, LETHE_RT_REDUCE_SUM, &vb23, &axis1, 1, &vb2),
      "lethe_rt_reduce: sum and mean need a numeric x, got i1");
  expectError(lethe_rt_reduce(context, static_cast<lethe_rt_reduce_kind>(7),
                              &xv, &axis1, 1, &o2),
              "lethe_rt_reduce: unknown reduce kind 7");
  expectError(
      lethe_rt_reduce(context, LETHE_RT_REDUCE_SUM, &xv, nullptr, 2, &o2),
      "lethe_rt_reduce: invalid axes (null) for num_axes 2");
  expectError(
      lethe_rt_reduce(context, LETHE_RT_REDUCE_SUM, &xv, &axis1, 1, &vd2),
      "lethe_rt_reduce: out must be f32, got f64");
}

} // namespace
