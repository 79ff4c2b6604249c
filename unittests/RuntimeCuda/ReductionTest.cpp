//===- ReductionTest.cpp - Reductions on CUDA -----------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_reduce (sum, mean, max) and lethe_rt_reduce_max_grad on the CUDA
// backend, over groups that a block folds (long and contiguous), that a
// thread folds (short), that the lanes of a column kernel fold (long and
// strided) and that a split fold folds in chunks (very long, in runs), against
// double-precision references computed here; integer wrapping and truncation;
// and the errors that name the kernel.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"

#include <algorithm>
#include <limits>

using namespace lethe::rt::testing;

namespace {

using ReductionTest = CudaRuntimeTest;

/// The group (output element) of each element of a row-major `shape` reduced
/// over `axes` (all when empty), and the output's shape with reduced dims 1.
std::vector<int64_t> groupsOf(const std::vector<int64_t> &shape,
                              const std::vector<int64_t> &axes,
                              std::vector<int64_t> &outShape) {
  outShape = shape;
  for (size_t dim = 0; dim < shape.size(); ++dim)
    if (axes.empty() || std::count(axes.begin(), axes.end(), dim))
      outShape[dim] = 1;
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  std::vector<int64_t> groups;
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t rest = linear, group = 0, stride = 1;
    for (size_t dim = shape.size(); dim-- > 0;) {
      int64_t index = rest % shape[dim];
      rest /= shape[dim];
      if (outShape[dim] != 1)
        group += index * stride;
      stride *= outShape[dim];
    }
    groups.push_back(group);
  }
  return groups;
}

template <typename T>
void checkReduce(ReductionTest &test, lethe_rt_dtype dtype,
                 const std::vector<int64_t> &shape,
                 const std::vector<int64_t> &axes) {
  std::vector<int64_t> outShape;
  std::vector<int64_t> groups = groupsOf(shape, axes, outShape);
  int64_t outCount = 1;
  for (int64_t dim : outShape)
    outCount *= dim;
  std::vector<T> values = randomValues<T>(groups.size(), 11, -3, 3);
  lethe_rt_tensor x = test.place<T>(shape, dtype, values);
  std::vector<double> sums(outCount, 0), counts(outCount, 0),
      maxima(outCount, -INFINITY);
  for (size_t i = 0; i < groups.size(); ++i) {
    sums[groups[i]] += values[i];
    counts[groups[i]] += 1;
    maxima[groups[i]] = std::max<double>(maxima[groups[i]], values[i]);
  }
  std::string what = "axes";
  for (int64_t axis : axes)
    what += " " + std::to_string(axis);
  for (int kind = LETHE_RT_REDUCE_SUM; kind <= LETHE_RT_REDUCE_MAX; ++kind) {
    lethe_rt_tensor out = test.place<T>(outShape, dtype);
    ASSERT_EQ(lethe_rt_reduce(test.context,
                              static_cast<lethe_rt_reduce_kind>(kind), &x,
                              axes.data(), axes.size(), &out),
              LETHE_RT_OK)
        << test.lastError();
    std::vector<double> expected(outCount);
    for (int64_t group = 0; group < outCount; ++group)
      expected[group] = kind == LETHE_RT_REDUCE_SUM ? sums[group]
                        : kind == LETHE_RT_REDUCE_MEAN
                            ? sums[group] / counts[group]
                            : maxima[group];
    expectNear(test.read<T>(out), expected,
               what + " kind " + std::to_string(kind));
  }

  // The gradient of the max, with a tie in every group: element 0 of each
  // group is copied onto its last.
  std::vector<int64_t> first(outCount, -1), last(outCount, -1);
  for (size_t i = 0; i < groups.size(); ++i) {
    if (first[groups[i]] < 0)
      first[groups[i]] = i;
    last[groups[i]] = i;
  }
  std::vector<T> tied = values;
  for (int64_t group = 0; group < outCount; ++group)
    tied[first[group]] = tied[last[group]] = static_cast<T>(4); // above all
  lethe_rt_tensor tiedX = test.place<T>(shape, dtype, tied);
  lethe_rt_tensor y = test.place<T>(outShape, dtype);
  std::vector<T> dyValues = randomValues<T>(outCount, 12);
  lethe_rt_tensor dy = test.place<T>(outShape, dtype, dyValues);
  lethe_rt_tensor dx = test.place<T>(shape, dtype);
  ASSERT_EQ(lethe_rt_reduce(test.context, LETHE_RT_REDUCE_MAX, &tiedX,
                            axes.data(), axes.size(), &y),
            LETHE_RT_OK)
      << test.lastError();
  ASSERT_EQ(lethe_rt_reduce_max_grad(test.context, &dy, &tiedX, &y, axes.data(),
                                     axes.size(), &dx),
            LETHE_RT_OK)
      << test.lastError();
  std::vector<double> dxExpected(groups.size(), 0);
  for (int64_t group = 0; group < outCount; ++group) {
    double share =
        first[group] == last[group] ? dyValues[group] : dyValues[group] / 2.0;
    dxExpected[first[group]] = dxExpected[last[group]] = share;
  }
  expectNear(test.read<T>(dx), dxExpected, what + " max grad");
}

template <typename T>
void checkAxes(ReductionTest &test, lethe_rt_dtype dtype) {
  const std::vector<int64_t> shape{4, 5, 150};
  // Long contiguous groups (a block each), a long strided one ({0, 2}: the
  // lanes of a column kernel), short ones (a thread each), and everything.
  for (const std::vector<int64_t> &axes :
       std::vector<std::vector<int64_t>>{{2}, {1, 2}, {1}, {0, 2}, {0}, {}})
    checkReduce<T>(test, dtype, shape, axes);
}

TEST_F(ReductionTest, AxesF32) { checkAxes<float>(*this, LETHE_RT_F32); }

// Long strided groups, which column kernels fold in lanes: a sum over the
// rows (groups side by side, one tile of 32 and part of the next), over
// outer and inner dims at once (members of two strides), and over the
// middle dim (groups of two strides). From 4,096 rows, in a block per chunk
// of rows (ColumnSplit), the chunks folded in order: over the rows (chunks
// of 1,367, 1,367 and 1,366 rows), and over the middle dim. The
// shapes are small enough for the test arena (4 MiB) in f64 too.
template <typename T>
void checkLongStridedGroups(ReductionTest &test, lethe_rt_dtype dtype) {
  checkReduce<T>(test, dtype, {300, 45}, {0});
  checkReduce<T>(test, dtype, {70, 3, 5}, {0, 2});
  checkReduce<T>(test, dtype, {3, 100, 4}, {1});
  checkReduce<T>(test, dtype, {4100, 9}, {0});
  checkReduce<T>(test, dtype, {3, 4200, 5}, {1});
}

TEST_F(ReductionTest, LongStridedGroupsF32) {
  checkLongStridedGroups<float>(*this, LETHE_RT_F32);
}
// Row chunks over groups that fill more than one tile of 32.
TEST_F(ReductionTest, LongStridedGroupsInChunksOverTiles) {
  checkReduce<float>(*this, LETHE_RT_F32, {4500, 45}, {0});
}

TEST_F(ReductionTest, LongStridedGroupsF64) {
  checkLongStridedGroups<double>(*this, LETHE_RT_F64);
}
TEST_F(ReductionTest, AxesF64) { checkAxes<double>(*this, LETHE_RT_F64); }

// Groups of 2 * 8192 members or more with contiguous runs, which a split
// fold folds in chunks: a bias gradient of an NCHW tensor (over N, H and W:
// 2 chunks per channel, each one run), a sum per sample (3 chunks) and over
// everything (6). One test per pair, within the test arena.
template <typename T>
void checkSplitGroups(ReductionTest &test, lethe_rt_dtype dtype, bool all) {
  if (all) {
    checkReduce<T>(test, dtype, {2, 3, 64, 128}, {});
    return;
  }
  checkReduce<T>(test, dtype, {2, 3, 64, 128}, {0, 2, 3});
  checkReduce<T>(test, dtype, {2, 3, 64, 128}, {1, 2, 3});
}

// Chunks that start inside a run and span the gap to the next: runs of
// 7,680 members, 23,040 per group (three chunks).
TEST_F(ReductionTest, SplitChunksStraddleRuns) {
  checkReduce<float>(*this, LETHE_RT_F32, {3, 2, 96, 80}, {0, 2, 3});
}

TEST_F(ReductionTest, SplitGroupsF32) {
  checkSplitGroups<float>(*this, LETHE_RT_F32, false);
  checkSplitGroups<float>(*this, LETHE_RT_F32, true);
}
TEST_F(ReductionTest, SplitGroupsF64) {
  checkSplitGroups<double>(*this, LETHE_RT_F64, false);
}
TEST_F(ReductionTest, SplitEverythingF64) {
  checkSplitGroups<double>(*this, LETHE_RT_F64, true);
}

TEST_F(ReductionTest, IntegersWrapAndTruncate) {
  int64_t axis = 1;
  int32_t max = std::numeric_limits<int32_t>::max();
  lethe_rt_tensor x =
      place<int32_t>({2, 3}, LETHE_RT_I32, {max, 1, 0, -7, 1, 0});
  lethe_rt_tensor out = place<int32_t>({2}, LETHE_RT_I32);
  ASSERT_EQ(lethe_rt_reduce(context, LETHE_RT_REDUCE_SUM, &x, &axis, 1, &out),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(read<int32_t>(out),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -6}));
  ASSERT_EQ(lethe_rt_reduce(context, LETHE_RT_REDUCE_MEAN, &x, &axis, 1, &out),
            LETHE_RT_OK)
      << lastError();
  // The sum wraps in 64 bits only on the way out: (2^31) / 3, then -6 / 3.
  EXPECT_EQ(read<int32_t>(out), (std::vector<int32_t>{715827882, -2}));
  // A long strided group of integers, folded in lanes: the sum wraps too.
  std::vector<int32_t> column(2 * 100, 1);
  column[0] = max;
  lethe_rt_tensor rows = place<int32_t>({100, 2}, LETHE_RT_I32, column);
  lethe_rt_tensor sums = place<int32_t>({2}, LETHE_RT_I32);
  int64_t first = 0;
  ASSERT_EQ(
      lethe_rt_reduce(context, LETHE_RT_REDUCE_SUM, &rows, &first, 1, &sums),
      LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(
      read<int32_t>(sums),
      (std::vector<int32_t>{std::numeric_limits<int32_t>::min() + 98, 100}));
  // A split group of integers: the chunks' sums wrap as one sum would.
  std::vector<int32_t> many(3 * 8192, 1);
  many[5] = max;
  lethe_rt_tensor split = place<int32_t>({3 * 8192}, LETHE_RT_I32, many);
  lethe_rt_tensor total = place<int32_t>({}, LETHE_RT_I32);
  ASSERT_EQ(
      lethe_rt_reduce(context, LETHE_RT_REDUCE_SUM, &split, nullptr, 0, &total),
      LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(read<int32_t>(total),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min() +
                                  3 * 8192 - 2}));
  // A long group of i1, folded by a block.
  std::vector<uint8_t> flags(1000, 0);
  flags[777] = 1;
  lethe_rt_tensor bits = place<uint8_t>({1000}, LETHE_RT_I1, flags);
  lethe_rt_tensor any = place<uint8_t>({}, LETHE_RT_I1);
  ASSERT_EQ(
      lethe_rt_reduce(context, LETHE_RT_REDUCE_MAX, &bits, nullptr, 0, &any),
      LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(read<uint8_t>(any), (std::vector<uint8_t>{1}));
}

TEST_F(ReductionTest, InvalidArgumentsNameTheKernel) {
  lethe_rt_tensor x = place<float>({2, 3}, LETHE_RT_F32);
  lethe_rt_tensor out = place<float>({3}, LETHE_RT_F32);
  int64_t axes[] = {1, 1};
  EXPECT_EQ(lethe_rt_reduce(context, LETHE_RT_REDUCE_SUM, &x, axes, 2, &out),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_reduce: axis 1 is repeated");
  EXPECT_EQ(lethe_rt_reduce(context, LETHE_RT_REDUCE_SUM, &x, axes, 1, &out),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_reduce: out (3) must be 2x1 (keepdims) or "
                         "2 for x (2x3) reduced");
  lethe_rt_tensor flags = place<uint8_t>({2}, LETHE_RT_I1);
  lethe_rt_tensor flag = place<uint8_t>({}, LETHE_RT_I1);
  EXPECT_EQ(
      lethe_rt_reduce(context, LETHE_RT_REDUCE_SUM, &flags, nullptr, 0, &flag),
      LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_reduce: sum and mean need a numeric x, got "
                         "i1");
  lethe_rt_tensor y = place<float>({2}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_reduce_max_grad(context, &y, &x, &y, axes, 1, &out),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_reduce_max_grad: x (2x3) and dx (3) must "
                         "have the same shape");
}

} // namespace
