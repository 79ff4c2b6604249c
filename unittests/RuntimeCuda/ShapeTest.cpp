//===- ShapeTest.cpp - Data-movement kernels on CUDA ----------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_expand, transpose, concat, split, slice, slice_grad, gather and
// gather_grad on the CUDA backend, for every element size (i1 to f64),
// against references computed here element by element: the moves exactly,
// gather_grad bit for bit with the CPU backend's sums (in the compute type,
// indices in order) and the same bits on every run; and the errors, which
// name the kernel with the CPU backend's words (plus the overlaps the cuda
// backend refuses).
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"
#include "StorageValues.h"
#include "common/ElementTypes.h"
#include "common/Tensor.h"

#include <algorithm>
#include <numeric>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using ShapeTest = CudaRuntimeTest;

/// The row-major linear index of `index` in `shape`.
int64_t ravel(const std::vector<int64_t> &index,
              const std::vector<int64_t> &shape) {
  int64_t linear = 0;
  for (size_t dim = 0; dim < shape.size(); ++dim)
    linear = linear * shape[dim] + index[dim];
  return linear;
}

/// `count` values of storage type T for `dtype`, as distinct as its width
/// allows (i1 alternates 0 and 1; f16 and bf16 are bit patterns of ordinary
/// numbers).
template <typename T>
std::vector<T> distinctValues(int64_t count, lethe_rt_dtype dtype,
                              int64_t salt = 0) {
  std::vector<T> values(count);
  for (int64_t i = 0; i < count; ++i) {
    int64_t n = i + salt;
    if (dtype == LETHE_RT_I1)
      values[i] = static_cast<T>(n % 2);
    else if (dtype == LETHE_RT_F16 || dtype == LETHE_RT_BF16)
      values[i] = static_cast<T>(0x3c00 + n % 0x3000);
    else if constexpr (std::is_floating_point_v<T>)
      values[i] = static_cast<T>(n) + T(0.25);
    else
      values[i] = static_cast<T>(n % 120 + 1);
  }
  return values;
}

/// Expand, transpose, slice, concat, split, slice_grad and gather of
/// elements of storage type T (moved as words of its size).
template <typename T> void checkMoves(ShapeTest &test, lethe_rt_dtype dtype) {
  std::string what = dtypeName(dtype);
  // Expand (3, 1, 4) to (2, 3, 5, 4).
  {
    std::vector<int64_t> xShape{3, 1, 4}, outShape{2, 3, 5, 4};
    std::vector<T> xValues = distinctValues<T>(countOf(xShape), dtype);
    lethe_rt_tensor x = test.place<T>(xShape, dtype, xValues);
    lethe_rt_tensor out = test.place<T>(outShape, dtype);
    ASSERT_EQ(lethe_rt_expand(test.context, &x, &out), LETHE_RT_OK)
        << test.lastError();
    std::vector<T> expected;
    for (int64_t i = 0; i < countOf(outShape); ++i) {
      std::vector<int64_t> index = unravel(i, outShape);
      expected.push_back(xValues[ravel({index[1], 0, index[3]}, xShape)]);
    }
    EXPECT_EQ(test.read<T>(out), expected) << what << " expand";
  }
  // Transpose (2, 3, 4, 5) by (2, 0, 3, 1).
  {
    std::vector<int64_t> xShape{2, 3, 4, 5}, perm{2, 0, 3, 1};
    std::vector<int64_t> outShape{4, 2, 5, 3};
    std::vector<T> xValues = distinctValues<T>(countOf(xShape), dtype);
    lethe_rt_tensor x = test.place<T>(xShape, dtype, xValues);
    lethe_rt_tensor out = test.place<T>(outShape, dtype);
    ASSERT_EQ(lethe_rt_transpose(test.context, &x, perm.data(), &out),
              LETHE_RT_OK)
        << test.lastError();
    std::vector<T> expected;
    for (int64_t i = 0; i < countOf(outShape); ++i) {
      std::vector<int64_t> index = unravel(i, outShape), source(4);
      for (int dim = 0; dim < 4; ++dim)
        source[perm[dim]] = index[dim];
      expected.push_back(xValues[ravel(source, xShape)]);
    }
    EXPECT_EQ(test.read<T>(out), expected) << what << " transpose";
  }
  // Slice (6, 7, 5) from (5, 1, 0) in steps (-2, 3, 1); its gradient.
  {
    std::vector<int64_t> xShape{6, 7, 5}, starts{5, 1, 0}, steps{-2, 3, 1};
    std::vector<int64_t> outShape{3, 2, 5};
    std::vector<T> xValues = distinctValues<T>(countOf(xShape), dtype);
    lethe_rt_tensor x = test.place<T>(xShape, dtype, xValues);
    lethe_rt_tensor out = test.place<T>(outShape, dtype);
    ASSERT_EQ(
        lethe_rt_slice(test.context, &x, starts.data(), steps.data(), &out),
        LETHE_RT_OK)
        << test.lastError();
    std::vector<T> expected, gradient(countOf(xShape), T{});
    std::vector<T> dyValues = distinctValues<T>(countOf(outShape), dtype, 7);
    for (int64_t i = 0; i < countOf(outShape); ++i) {
      std::vector<int64_t> index = unravel(i, outShape), source(3);
      for (int dim = 0; dim < 3; ++dim)
        source[dim] = starts[dim] + index[dim] * steps[dim];
      expected.push_back(xValues[ravel(source, xShape)]);
      gradient[ravel(source, xShape)] = dyValues[i];
    }
    EXPECT_EQ(test.read<T>(out), expected) << what << " slice";
    lethe_rt_tensor dy = test.place<T>(outShape, dtype, dyValues);
    lethe_rt_tensor dx = test.place<T>(xShape, dtype); // 0xFF bytes before
    ASSERT_EQ(lethe_rt_slice_grad(test.context, &dy, starts.data(),
                                  steps.data(), &dx),
              LETHE_RT_OK)
        << test.lastError();
    EXPECT_EQ(test.read<T>(dx), gradient) << what << " slice_grad";
  }
  // Concat (2, 1, 3), (2, 0, 3) and (2, 4, 3) along axis 1, then split.
  {
    std::vector<std::vector<int64_t>> shapes{{2, 1, 3}, {2, 0, 3}, {2, 4, 3}};
    std::vector<int64_t> wholeShape{2, 5, 3};
    std::vector<std::vector<T>> values;
    std::vector<lethe_rt_tensor> parts;
    for (size_t k = 0; k < shapes.size(); ++k) {
      values.push_back(
          distinctValues<T>(countOf(shapes[k]), dtype, 40 * (k + 1)));
      parts.push_back(test.place<T>(shapes[k], dtype, values.back()));
    }
    const lethe_rt_tensor *inputs[] = {&parts[0], &parts[1], &parts[2]};
    lethe_rt_tensor whole = test.place<T>(wholeShape, dtype);
    ASSERT_EQ(lethe_rt_concat(test.context, inputs, 3, 1, &whole), LETHE_RT_OK)
        << test.lastError();
    std::vector<T> expected;
    for (int64_t block = 0; block < 2; ++block)
      for (size_t k = 0; k < shapes.size(); ++k) {
        int64_t row = shapes[k][1] * 3;
        expected.insert(expected.end(), values[k].begin() + block * row,
                        values[k].begin() + (block + 1) * row);
      }
    EXPECT_EQ(test.read<T>(whole), expected) << what << " concat";
    std::vector<lethe_rt_tensor> outputs;
    for (const std::vector<int64_t> &shape : shapes)
      outputs.push_back(test.place<T>(shape, dtype));
    const lethe_rt_tensor *outputPointers[] = {&outputs[0], &outputs[1],
                                               &outputs[2]};
    ASSERT_EQ(lethe_rt_split(test.context, &whole, 1, outputPointers, 3),
              LETHE_RT_OK)
        << test.lastError();
    for (size_t k = 0; k < shapes.size(); ++k)
      EXPECT_EQ(test.read<T>(outputs[k]), values[k]) << what << " split " << k;
  }
  // Gather along each axis of (4, 5, 3) with (2, 3) indices, some negative.
  {
    std::vector<int64_t> dataShape{4, 5, 3};
    std::vector<T> dataValues = distinctValues<T>(countOf(dataShape), dtype);
    lethe_rt_tensor data = test.place<T>(dataShape, dtype, dataValues);
    for (int64_t axis = 0; axis < 3; ++axis) {
      int64_t dim = dataShape[axis];
      std::vector<int32_t> indexValues{
          0, -1, 1, static_cast<int32_t>(dim - 1), static_cast<int32_t>(-dim),
          2};
      lethe_rt_tensor indices =
          test.place<int32_t>({2, 3}, LETHE_RT_I32, indexValues);
      std::vector<int64_t> outShape(dataShape.begin(),
                                    dataShape.begin() + axis);
      outShape.insert(outShape.end(), {2, 3});
      outShape.insert(outShape.end(), dataShape.begin() + axis + 1,
                      dataShape.end());
      lethe_rt_tensor out = test.place<T>(outShape, dtype);
      ASSERT_EQ(lethe_rt_gather(test.context, &data, &indices, axis, &out),
                LETHE_RT_OK)
          << test.lastError();
      std::vector<T> expected;
      for (int64_t i = 0; i < countOf(outShape); ++i) {
        std::vector<int64_t> index = unravel(i, outShape), source;
        source.insert(source.end(), index.begin(), index.begin() + axis);
        int64_t position = index[axis] * 3 + index[axis + 1];
        int64_t named = indexValues[position];
        source.push_back(named < 0 ? named + dim : named);
        source.insert(source.end(), index.begin() + axis + 2, index.end());
        expected.push_back(dataValues[ravel(source, dataShape)]);
      }
      EXPECT_EQ(test.read<T>(out), expected) << what << " gather " << axis;
    }
  }
}

TEST_F(ShapeTest, MovesI1) { checkMoves<uint8_t>(*this, LETHE_RT_I1); }
TEST_F(ShapeTest, MovesI8) { checkMoves<int8_t>(*this, LETHE_RT_I8); }
TEST_F(ShapeTest, MovesF16) { checkMoves<uint16_t>(*this, LETHE_RT_F16); }
TEST_F(ShapeTest, MovesBF16) { checkMoves<uint16_t>(*this, LETHE_RT_BF16); }
TEST_F(ShapeTest, MovesI32) { checkMoves<int32_t>(*this, LETHE_RT_I32); }
TEST_F(ShapeTest, MovesF32) { checkMoves<float>(*this, LETHE_RT_F32); }
TEST_F(ShapeTest, MovesI64) { checkMoves<int64_t>(*this, LETHE_RT_I64); }
TEST_F(ShapeTest, MovesF64) { checkMoves<double>(*this, LETHE_RT_F64); }

TEST_F(ShapeTest, LargeTransposeAndBroadcast) {
  // Many blocks; a scalar broadcast and a transpose whose dims merge.
  std::vector<int64_t> shape{64, 48, 32}, perm{2, 0, 1}, outShape{32, 64, 48};
  std::vector<float> values = randomValues<float>(countOf(shape), 3);
  lethe_rt_tensor x = place<float>(shape, LETHE_RT_F32, values);
  lethe_rt_tensor out = place<float>(outShape, LETHE_RT_F32);
  ASSERT_EQ(lethe_rt_transpose(context, &x, perm.data(), &out), LETHE_RT_OK)
      << lastError();
  std::vector<float> got = read<float>(out);
  for (int64_t i = 0; i < countOf(outShape); ++i) {
    std::vector<int64_t> index = unravel(i, outShape);
    ASSERT_EQ(got[i], values[ravel({index[1], index[2], index[0]}, shape)])
        << "element " << i;
  }
  lethe_rt_tensor scalar = place<double>({}, LETHE_RT_F64, {-2.5});
  lethe_rt_tensor filled = place<double>({300, 200}, LETHE_RT_F64);
  ASSERT_EQ(lethe_rt_expand(context, &scalar, &filled), LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(read<double>(filled), std::vector<double>(60000, -2.5));
}

TEST_F(ShapeTest, EmptyTensorsMoveNothing) {
  lethe_rt_tensor x = place<float>({2, 0, 3}, LETHE_RT_F32);
  lethe_rt_tensor out = place<float>({3, 2, 0}, LETHE_RT_F32);
  std::vector<int64_t> perm{2, 0, 1};
  EXPECT_EQ(lethe_rt_transpose(context, &x, perm.data(), &out), LETHE_RT_OK)
      << lastError();
  // A gather with no indices writes nothing; a gradient with none is all
  // zeros.
  lethe_rt_tensor data = place<float>({3, 2}, LETHE_RT_F32, {1, 2, 3, 4, 5, 6});
  lethe_rt_tensor none = place<int64_t>({0}, LETHE_RT_I64);
  lethe_rt_tensor nothing = place<float>({0, 2}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_gather(context, &data, &none, 0, &nothing), LETHE_RT_OK)
      << lastError();
  ASSERT_EQ(lethe_rt_gather_grad(context, &nothing, &none, 0, &data),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(read<float>(data), std::vector<float>(6, 0.0f));
}

/// lethe_rt_gather_grad as the CPU backend computes it: in the compute type
/// of storage type T, from 0, each index's dy slice added in index order.
template <typename T>
std::vector<T> gatherGradReference(const std::vector<T> &dy,
                                   const std::vector<int64_t> &indices,
                                   const std::vector<int64_t> &dxShape,
                                   int64_t axis) {
  int64_t outer = 1, inner = 1, dim = dxShape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= dxShape[d];
  for (size_t d = axis + 1; d < dxShape.size(); ++d)
    inner *= dxShape[d];
  int64_t count = static_cast<int64_t>(indices.size());
  std::vector<ComputeType<T>> sum(countOf(dxShape), ComputeType<T>(0));
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = indices[i] < 0 ? indices[i] + dim : indices[i];
    for (int64_t block = 0; block < outer; ++block)
      for (int64_t j = 0; j < inner; ++j)
        sum[(block * dim + index) * inner + j] +=
            load<T>(dy.data(), (block * count + i) * inner + j);
  }
  std::vector<T> result(sum.size());
  for (size_t i = 0; i < sum.size(); ++i)
    store<T>(result.data(), i, sum[i]);
  return result;
}

/// gather_grad of storage type T along each axis of `dxShape`, with
/// `count` indices that repeat few values (negative ones too), against the
/// CPU backend's sums, and twice with the same bits.
template <typename T>
void checkGatherGrad(ShapeTest &test, lethe_rt_dtype dtype,
                     const std::vector<int64_t> &dxShape, int64_t count,
                     uint64_t seed) {
  for (int64_t axis = 0; axis < static_cast<int64_t>(dxShape.size()); ++axis) {
    uint64_t saved = test.nextOffset;
    int64_t dim = dxShape[axis];
    std::mt19937_64 rng(seed + axis);
    std::vector<int64_t> indexValues(count);
    for (int64_t &index : indexValues) {
      // A third of them name row 0 (as 0 or -dim), the rest spread out.
      int64_t row = rng() % 3 == 0 ? 0 : static_cast<int64_t>(rng() % dim);
      index = rng() % 2 ? row : row - dim;
    }
    std::vector<int64_t> dyShape(dxShape.begin(), dxShape.begin() + axis);
    dyShape.push_back(count);
    dyShape.insert(dyShape.end(), dxShape.begin() + axis + 1, dxShape.end());
    // Values over many binades: the sums' bits depend on their order.
    std::vector<double> spread = randomValues<double>(countOf(dyShape), seed);
    std::vector<T> dyValues(spread.size());
    for (size_t i = 0; i < spread.size(); ++i)
      store<T>(dyValues.data(), i,
               std::ldexp(spread[i], static_cast<int>(i * 7 % 21) - 10));
    lethe_rt_tensor indices =
        test.place<int64_t>({count}, LETHE_RT_I64, indexValues);
    lethe_rt_tensor dy = test.place<T>(dyShape, dtype, dyValues);
    lethe_rt_tensor dx = test.place<T>(dxShape, dtype);
    std::vector<T> expected =
        gatherGradReference<T>(dyValues, indexValues, dxShape, axis);
    for (int run = 0; run < 2; ++run) {
      ASSERT_EQ(lethe_rt_gather_grad(test.context, &dy, &indices, axis, &dx),
                LETHE_RT_OK)
          << test.lastError();
      expectSameBits(test.read<T>(dx), expected,
                     std::string(dtypeName(dtype)) + " axis " +
                         std::to_string(axis) + " run " + std::to_string(run));
    }
    test.nextOffset = saved;
  }
}

TEST_F(ShapeTest, GatherGradF32) {
  checkGatherGrad<float>(*this, LETHE_RT_F32, {5, 6, 7}, 40, 1);
}
TEST_F(ShapeTest, GatherGradF64) {
  checkGatherGrad<double>(*this, LETHE_RT_F64, {5, 6, 7}, 40, 2);
}
TEST_F(ShapeTest, GatherGradF16) {
  checkGatherGrad<Half>(*this, LETHE_RT_F16, {5, 6, 7}, 40, 3);
}
TEST_F(ShapeTest, GatherGradBF16) {
  checkGatherGrad<BFloat16>(*this, LETHE_RT_BF16, {5, 6, 7}, 40, 4);
}
TEST_F(ShapeTest, GatherGradManyIndices) {
  // An embedding's gradient: 5000 tokens of 64 rows, sorted on the device
  // by a multi-block radix sort.
  checkGatherGrad<float>(*this, LETHE_RT_F32, {64, 32}, 5000, 5);
}

TEST_F(ShapeTest, InvalidArgumentsNameTheKernel) {
  lethe_rt_tensor x = place<float>({2, 3}, LETHE_RT_F32);
  lethe_rt_tensor out = place<float>({3, 2}, LETHE_RT_F32);
  std::vector<int64_t> perm{1, 1};
  EXPECT_EQ(lethe_rt_transpose(context, &x, perm.data(), &out), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_transpose: perm is not a permutation of 2 "
                         "dims");
  lethe_rt_tensor row = place<float>({3}, LETHE_RT_F32);
  lethe_rt_tensor wide = place<float>({2, 4}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_expand(context, &row, &wide), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_expand: x (3) does not broadcast to out "
                         "(2x4)");
  lethe_rt_tensor a = place<float>({2, 1}, LETHE_RT_F32);
  lethe_rt_tensor b = place<float>({2, 2}, LETHE_RT_F32);
  const lethe_rt_tensor *inputs[] = {&a, &b};
  EXPECT_EQ(lethe_rt_concat(context, inputs, 2, 1, &wide), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_concat: the inputs add up to 3 along axis "
                         "1, not 4");
  lethe_rt_tensor five = place<int32_t>({2, 5}, LETHE_RT_I32);
  lethe_rt_tensor two = place<int32_t>({2, 2}, LETHE_RT_I32);
  std::vector<int64_t> starts{0, 4}, steps{1, 2};
  EXPECT_EQ(lethe_rt_slice(context, &five, starts.data(), steps.data(), &two),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_slice: dim 1: 2 elements from 4 in steps "
                         "of 2 leave x's 5");
  EXPECT_EQ(
      lethe_rt_slice_grad(context, &two, starts.data(), steps.data(), &five),
      LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_slice_grad: dim 1: 2 elements from 4 in "
                         "steps of 2 leave dx's 5");

  // Indices are checked on the device; the first one out of range is named.
  lethe_rt_tensor data = place<float>({3, 2}, LETHE_RT_F32);
  lethe_rt_tensor indices = place<int64_t>({2, 2}, LETHE_RT_I64, {0, 3, 1, -4});
  lethe_rt_tensor gathered = place<float>({2, 2, 2}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_gather(context, &data, &indices, 0, &gathered),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_gather: index 3 (element 1) is out of "
                         "range for a dimension of 3");
  lethe_rt_tensor narrow = place<int32_t>({3}, LETHE_RT_I32, {1, 2, -7});
  lethe_rt_tensor dy = place<float>({3, 2}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_gather_grad(context, &dy, &narrow, 0, &data),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_gather_grad: index -7 (element 2) is out "
                         "of range for a dimension of 3");
  lethe_rt_tensor dx = place<float>({5, 4}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_gather_grad(context, &dy, &narrow, 0, &dx),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_gather_grad: dy (3x2) must be 3x4 for dx "
                         "(5x4), indices (3)");
  lethe_rt_tensor labels = place<int32_t>({3, 2}, LETHE_RT_I32);
  EXPECT_EQ(lethe_rt_gather_grad(context, &labels, &narrow, 0, &labels),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_gather_grad: dy must be f16, bf16, f32 or "
                         "f64, got i32");
}

TEST_F(ShapeTest, OverlappingOutputsAreRefused) {
  // Where the CPU backend copies element after element, threads would read
  // what others overwrote: the cuda backend refuses out overlapping x.
  lethe_rt_tensor x = place<float>({4, 4}, LETHE_RT_F32);
  lethe_rt_tensor alias = x;
  std::vector<int64_t> perm{1, 0};
  EXPECT_EQ(lethe_rt_transpose(context, &x, perm.data(), &alias),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_transpose: out overlaps x (the cuda "
                         "backend does not move elements within overlapping "
                         "memory)");
  std::vector<int64_t> halfShape{2, 4};
  lethe_rt_tensor top = x, bottom = x;
  top.shape = bottom.shape = halfShape.data();
  bottom.data = static_cast<float *>(x.data) + 8;
  const lethe_rt_tensor *outputs[] = {&top, &bottom};
  EXPECT_EQ(lethe_rt_split(context, &x, 0, outputs, 2), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_split: outputs[0] overlaps x (the cuda "
                         "backend does not move elements within overlapping "
                         "memory)");
  lethe_rt_tensor indices = place<int32_t>({2}, LETHE_RT_I32, {0, 1});
  lethe_rt_tensor rows = x;
  rows.shape = halfShape.data();
  rows.data = static_cast<float *>(x.data) + 4;
  EXPECT_EQ(lethe_rt_gather(context, &x, &indices, 0, &rows), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_gather: out overlaps data (the cuda "
                         "backend does not move elements within overlapping "
                         "memory)");
  // slice_grad refuses it on both backends.
  std::vector<int64_t> starts{0, 0}, steps{1, 1};
  EXPECT_EQ(
      lethe_rt_slice_grad(context, &rows, starts.data(), steps.data(), &alias),
      LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_slice_grad: dx overlaps dy");
}

} // namespace
