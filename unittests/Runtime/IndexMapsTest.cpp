//===- IndexMapsTest.cpp - The CUDA kernels' index maps on the host -------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA backend's data-movement kernels compute each output element
// through the index maps of common/IndexMaps.h, built by the same host code
// and checks (common/Checks.h). These tests build the maps as the CUDA entry
// points do and run their per-element functions on the host over every
// element of several shapes (broadcast dims, size-1 and empty dims,
// negative steps and indices, every axis), and compare the result, bit for
// bit, with the CPU backend's kernels: what runs without a GPU of the CUDA
// backend's arithmetic.
//
//===----------------------------------------------------------------------===//

#include "common/IndexMaps.h"
#include "HostSourceGroups.h"
#include "TypedTensor.h"
#include "common/Checks.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using IndexMapsTest = RuntimeTest;

/// An i64 tensor whose elements are 1, 2, 3, ...: every element distinct,
/// so that a wrong index shows.
TypedTensor numbered(std::vector<int64_t> shape) {
  TypedTensor tensor(std::move(shape), LETHE_RT_I64);
  for (int64_t i = 0; i < tensor.size(); ++i)
    tensor.set(i, static_cast<double>(i + 1));
  return tensor;
}

/// The elements of `in` that a BroadcastMap<1> over `out`'s shape with
/// `strides` reads from `base` on: what moveKernel writes.
std::vector<double> moved(const TypedTensor &in, const TypedTensor &out,
                          int64_t base, const std::vector<int64_t> &strides) {
  BroadcastMap<1> map;
  EXPECT_TRUE(makeBroadcastMap(out.shape, {strides}, map));
  std::vector<double> result(out.size());
  for (int64_t i = 0; i < out.size(); ++i) {
    int64_t offsets[1];
    map.offsetsAt(i, offsets);
    result[i] = in.get(base + offsets[0]);
  }
  return result;
}

/// The shape as text, for failure messages.
std::string text(const std::vector<int64_t> &shape) { return shapeText(shape); }

TEST_F(IndexMapsTest, ExpandMatchesTheCpuBackend) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>
      cases{{{3, 1, 4}, {2, 3, 5, 4}},
            {{1}, {4, 3}},
            {{}, {2, 2}},
            {{2, 3}, {2, 3}},
            {{5, 1, 1}, {5, 2, 3}},
            {{1, 1}, {1, 1}},
            {{2, 1}, {0, 2, 7}},
            {{4, 1, 3, 1}, {4, 2, 3, 5}}};
  for (const auto &[xShape, outShape] : cases) {
    TypedTensor x = numbered(xShape), out(outShape, LETHE_RT_I64);
    lethe_rt_tensor xv = x.view(), ov = out.view();
    ASSERT_EQ(lethe_rt_expand(context, &xv, &ov), LETHE_RT_OK) << lastError();
    std::vector<int64_t> strides;
    ASSERT_EQ(expandError(xv, ov, strides), "");
    EXPECT_EQ(moved(x, out, 0, strides), out.values())
        << text(xShape) << " to " << text(outShape);
  }
}

/// The offsets of output element `linear` of `shape` read through
/// `strides` (per operand), by the definition: row-major indices in 64 bits.
template <int Operands>
std::vector<int64_t>
offsetsByDefinition(const std::vector<int64_t> &shape,
                    const std::vector<std::vector<int64_t>> &strides,
                    int64_t linear) {
  std::vector<int64_t> offsets(Operands, 0);
  for (size_t dim = shape.size(); dim-- > 0;) {
    int64_t index = linear % shape[dim];
    linear /= shape[dim];
    for (int k = 0; k < Operands; ++k)
      offsets[k] += index * strides[k][dim];
  }
  return offsets;
}

/// Checks `map` (built over `shape` and `strides`) against the definition
/// at `linear`.
template <int Operands>
void expectOffsets(const BroadcastMap<Operands> &map,
                   const std::vector<int64_t> &shape,
                   const std::vector<std::vector<int64_t>> &strides,
                   int64_t linear) {
  int64_t got[Operands];
  map.offsetsAt(linear, got);
  EXPECT_EQ(std::vector<int64_t>(got, got + Operands),
            offsetsByDefinition<Operands>(shape, strides, linear))
      << "element " << linear << " of " << text(shape);
}

TEST_F(IndexMapsTest, NarrowAndWideMapsFollowTheDefinition) {
  // Up to 2^32 elements the map divides in 32 bits: every element of a
  // small broadcast, then the ends of one of exactly 2^32 elements.
  std::vector<int64_t> small{5, 7, 11};
  std::vector<std::vector<int64_t>> smallStrides{{77, 0, 1}, {0, 11, 1}};
  BroadcastMap<2> map;
  ASSERT_TRUE(makeBroadcastMap(small, smallStrides, map));
  EXPECT_TRUE(map.narrow);
  for (int64_t i = 0; i < 5 * 7 * 11; ++i)
    expectOffsets(map, small, smallStrides, i);

  std::vector<int64_t> edge{1 << 16, 3, 1 << 16};
  edge[1] = 1; // dropped: 2^32 elements in two dims
  std::vector<std::vector<int64_t>> edgeStrides{{1, 0, 1 << 16}, {0, 0, 1}};
  ASSERT_TRUE(makeBroadcastMap(edge, edgeStrides, map));
  EXPECT_TRUE(map.narrow);
  EXPECT_EQ(map.rank, 2);
  for (int64_t i : {int64_t(0), int64_t(65535), int64_t(65536),
                    (int64_t(1) << 32) - 65537, (int64_t(1) << 32) - 1})
    expectOffsets(map, edge, edgeStrides, i);

  // Past 2^32 it divides in 64 bits, and the indices past 2^32 are right.
  std::vector<int64_t> wide{3, 1 << 20, 1 << 13};
  std::vector<std::vector<int64_t>> wideStrides{{int64_t(1) << 33, 1, 1 << 20},
                                                {0, 1 << 13, 1}};
  ASSERT_TRUE(makeBroadcastMap(wide, wideStrides, map));
  EXPECT_FALSE(map.narrow);
  for (int64_t i :
       {int64_t(0), int64_t(1) << 32, (int64_t(1) << 32) + 12345,
        (int64_t(3) << 33) - 1, (int64_t(5) << 31) + (int64_t(1) << 20) + 7})
    expectOffsets(map, wide, wideStrides, i);

  // A contiguous copy merges into one dim: its index is the offset.
  std::vector<int64_t> flat{4, 6};
  std::vector<std::vector<int64_t>> flatStrides{{6, 1}, {6, 1}};
  ASSERT_TRUE(makeBroadcastMap(flat, flatStrides, map));
  EXPECT_EQ(map.rank, 1);
  for (int64_t i = 0; i < 24; ++i)
    expectOffsets(map, flat, flatStrides, i);
}

TEST_F(IndexMapsTest, TransposeMatchesTheCpuBackend) {
  const std::vector<std::vector<int64_t>> shapes{
      {2, 3, 4}, {1, 3, 1, 2}, {}, {5}, {2, 0, 3}, {3, 1, 2, 2, 2}};
  for (const std::vector<int64_t> &shape : shapes) {
    std::vector<int64_t> perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      std::vector<int64_t> outShape;
      for (int64_t source : perm)
        outShape.push_back(shape[source]);
      TypedTensor x = numbered(shape), out(outShape, LETHE_RT_I64);
      lethe_rt_tensor xv = x.view(), ov = out.view();
      ASSERT_EQ(lethe_rt_transpose(context, &xv, perm.data(), &ov), LETHE_RT_OK)
          << lastError();
      std::vector<int64_t> strides;
      ASSERT_EQ(transposeError(xv, perm.data(), ov, strides), "");
      EXPECT_EQ(moved(x, out, 0, strides), out.values())
          << text(shape) << " permuted to " << text(outShape);
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

/// A slice of `shape` from `starts` in `steps`, `counts` elements per dim.
struct SliceCase {
  std::vector<int64_t> shape, starts, steps, counts;
};

const std::vector<SliceCase> &sliceCases() {
  static const std::vector<SliceCase> cases{
      {{5, 6, 7}, {0, 1, 2}, {1, 2, 3}, {5, 3, 2}},
      {{5, 6, 7}, {4, 5, 6}, {-1, -2, -3}, {5, 3, 3}},
      {{5, 6, 7}, {2, 0, 6}, {2, -1, -6}, {2, 1, 2}},
      {{4, 1, 3}, {1, 0, 0}, {1, 1, 1}, {3, 1, 3}},
      {{4, 3}, {0, 0}, {1, 1}, {0, 3}},
      {{8}, {7}, {-3}, {3}},
      {{}, {}, {}, {}},
      {{2, 3, 2, 3}, {1, 2, 0, 1}, {-1, -1, 1, 2}, {2, 3, 2, 1}}};
  return cases;
}

TEST_F(IndexMapsTest, SliceMatchesTheCpuBackend) {
  for (const SliceCase &c : sliceCases()) {
    TypedTensor x = numbered(c.shape), out(c.counts, LETHE_RT_I64);
    lethe_rt_tensor xv = x.view(), ov = out.view();
    ASSERT_EQ(
        lethe_rt_slice(context, &xv, c.starts.data(), c.steps.data(), &ov),
        LETHE_RT_OK)
        << lastError();
    int64_t base = 0;
    std::vector<int64_t> strides;
    ASSERT_EQ(sliceGeometryError("x", xv, ov, c.starts.data(), c.steps.data(),
                                 base, strides),
              "");
    EXPECT_EQ(moved(x, out, base, strides), out.values()) << text(c.shape);
  }
}

TEST_F(IndexMapsTest, SliceGradMatchesTheCpuBackend) {
  for (const SliceCase &c : sliceCases()) {
    TypedTensor dy = numbered(c.counts), dx(c.shape, LETHE_RT_I64);
    lethe_rt_tensor dyv = dy.view(), dxv = dx.view();
    ASSERT_EQ(lethe_rt_slice_grad(context, &dyv, c.starts.data(),
                                  c.steps.data(), &dxv),
              LETHE_RT_OK)
        << lastError();
    SliceGradMap map;
    ASSERT_TRUE(
        makeSliceGradMap(dxv, dyv, c.starts.data(), c.steps.data(), map));
    std::vector<double> got(dx.size());
    for (int64_t i = 0; i < dx.size(); ++i) {
      int64_t source = map.sourceAt(i);
      got[i] = source < 0 ? 0 : dy.get(source);
    }
    EXPECT_EQ(got, dx.values()) << text(c.shape);
  }
}

TEST_F(IndexMapsTest, SliceGradMapsSkipDimsOfOneAndRefuseTooMany) {
  std::vector<int64_t> shape(maxBroadcastRank + 1, 1), starts(shape.size(), 0),
      steps(shape.size(), 1);
  shape[0] = shape[5] = 2;
  TypedTensor dx(shape, LETHE_RT_F32), dy(shape, LETHE_RT_F32);
  lethe_rt_tensor dxv = dx.view(), dyv = dy.view();
  SliceGradMap map;
  ASSERT_TRUE(makeSliceGradMap(dxv, dyv, starts.data(), steps.data(), map));
  EXPECT_EQ(map.rank, 2);
  std::fill(shape.begin(), shape.end(), 2);
  TypedTensor wide(shape, LETHE_RT_F32);
  lethe_rt_tensor wv = wide.view();
  EXPECT_FALSE(makeSliceGradMap(wv, wv, starts.data(), steps.data(), map));
}

TEST_F(IndexMapsTest, ConcatAndSplitMatchTheCpuBackend) {
  struct Case {
    std::vector<std::vector<int64_t>> parts;
    int64_t axis;
  };
  const std::vector<Case> cases{
      {{{2, 1, 3}, {2, 4, 3}, {2, 0, 3}, {2, 2, 3}}, 1},
      {{{1, 3}, {4, 3}}, 0},
      {{{3, 2, 1}, {3, 2, 5}}, 2},
      {{{6}}, 0},
      {{{0, 2}, {0, 3}}, 1}};
  for (const Case &c : cases) {
    std::vector<int64_t> wholeShape = c.parts[0];
    wholeShape[c.axis] = 0;
    std::vector<TypedTensor> parts;
    int64_t first = 1;
    for (const std::vector<int64_t> &shape : c.parts) {
      wholeShape[c.axis] += shape[c.axis];
      // Distinct values across the parts.
      TypedTensor part(shape, LETHE_RT_I64);
      for (int64_t i = 0; i < part.size(); ++i)
        part.set(i, static_cast<double>(first++));
      parts.push_back(std::move(part));
    }
    std::vector<lethe_rt_tensor> views;
    for (TypedTensor &part : parts)
      views.push_back(part.view());
    std::vector<const lethe_rt_tensor *> pointers;
    for (const lethe_rt_tensor &view : views)
      pointers.push_back(&view);
    int64_t count = static_cast<int64_t>(parts.size());

    TypedTensor whole(wholeShape, LETHE_RT_I64);
    lethe_rt_tensor wholeView = whole.view();
    ASSERT_EQ(
        lethe_rt_concat(context, pointers.data(), count, c.axis, &wholeView),
        LETHE_RT_OK)
        << lastError();
    std::vector<PartMap> maps =
        makePartMaps(wholeView, pointers.data(), count, c.axis);
    // Concat: each whole element written once, by the part the CPU backend
    // copied it from.
    std::vector<double> got(whole.size(), 0);
    std::vector<int> writes(whole.size(), 0);
    for (int64_t k = 0; k < count; ++k)
      for (int64_t i = 0; i < parts[k].size(); ++i) {
        got[maps[k].wholeOffset(i)] = parts[k].get(i);
        ++writes[maps[k].wholeOffset(i)];
      }
    EXPECT_EQ(got, whole.values()) << text(wholeShape);
    EXPECT_EQ(writes, std::vector<int>(whole.size(), 1)) << text(wholeShape);

    // Split: each part read back from the whole.
    std::vector<TypedTensor> outputs;
    for (const std::vector<int64_t> &shape : c.parts)
      outputs.emplace_back(shape, LETHE_RT_I64);
    std::vector<lethe_rt_tensor> outputViews;
    for (TypedTensor &output : outputs)
      outputViews.push_back(output.view());
    std::vector<const lethe_rt_tensor *> outputPointers;
    for (const lethe_rt_tensor &view : outputViews)
      outputPointers.push_back(&view);
    ASSERT_EQ(lethe_rt_split(context, &wholeView, c.axis, outputPointers.data(),
                             count),
              LETHE_RT_OK)
        << lastError();
    for (int64_t k = 0; k < count; ++k) {
      std::vector<double> part(outputs[k].size());
      for (int64_t i = 0; i < outputs[k].size(); ++i)
        part[i] = whole.get(maps[k].wholeOffset(i));
      EXPECT_EQ(part, outputs[k].values()) << text(wholeShape) << " part " << k;
    }
  }
}

/// Indices of `shape` and `dtype` (i32 or i64), uniform in [-dim, dim).
TypedTensor randomIndices(std::vector<int64_t> shape, lethe_rt_dtype dtype,
                          int64_t dim, uint64_t seed) {
  TypedTensor indices(std::move(shape), dtype);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> distribution(-dim, dim - 1);
  for (int64_t i = 0; i < indices.size(); ++i)
    indices.set(i, static_cast<double>(distribution(rng)));
  return indices;
}

/// The shape of a gather along `axis` of `data` with `indices`.
std::vector<int64_t> gatheredShape(const std::vector<int64_t> &data,
                                   const std::vector<int64_t> &indices,
                                   int64_t axis) {
  std::vector<int64_t> shape(data.begin(), data.begin() + axis);
  shape.insert(shape.end(), indices.begin(), indices.end());
  shape.insert(shape.end(), data.begin() + axis + 1, data.end());
  return shape;
}

TEST_F(IndexMapsTest, GatherMatchesTheCpuBackend) {
  const std::vector<int64_t> dataShape{4, 5, 3};
  const std::vector<std::vector<int64_t>> indexShapes{{2, 3}, {7}, {}, {0}};
  uint64_t seed = 1;
  for (lethe_rt_dtype indexDtype : {LETHE_RT_I32, LETHE_RT_I64})
    for (const std::vector<int64_t> &indexShape : indexShapes)
      for (int64_t axis = 0; axis < 3; ++axis) {
        TypedTensor data = numbered(dataShape);
        TypedTensor indices =
            randomIndices(indexShape, indexDtype, dataShape[axis], seed++);
        TypedTensor out(gatheredShape(dataShape, indexShape, axis),
                        LETHE_RT_I64);
        lethe_rt_tensor dv = data.view(), iv = indices.view(), ov = out.view();
        ASSERT_EQ(lethe_rt_gather(context, &dv, &iv, axis, &ov), LETHE_RT_OK)
            << lastError();
        ASSERT_EQ(gatherError("data", "out", dv, iv, axis, ov), "");
        GatherMap map = makeGatherMap(dv, iv, axis);
        std::vector<double> got(out.size());
        for (int64_t i = 0; i < out.size(); ++i)
          got[i] = data.get(map.sourceAt(i));
        EXPECT_EQ(got, out.values()) << "axis " << axis;
      }
}

TEST_F(IndexMapsTest, GatherIndexChecksMatchTheCpuBackend) {
  // The first index out of range is the one reported, whichever way it is
  // out (the device flags every one and keeps the lowest position), and
  // the output is left as it was (the device checks before it copies).
  for (const std::vector<double> &values : std::vector<std::vector<double>>{
           {0, -4, 1, 4, -5}, {-5, 3, 9}, {2, 3, -1, -4, 12}}) {
    TypedTensor data = numbered({4, 2});
    TypedTensor indices({static_cast<int64_t>(values.size())}, LETHE_RT_I32,
                        values);
    TypedTensor out({static_cast<int64_t>(values.size()), 2}, LETHE_RT_I64);
    for (int64_t i = 0; i < out.size(); ++i)
      out.set(i, -7);
    lethe_rt_tensor dv = data.view(), iv = indices.view(), ov = out.view();
    ASSERT_EQ(lethe_rt_gather(context, &dv, &iv, 0, &ov), LETHE_RT_ERROR);
    // Nothing is written, not even the rows before the bad index.
    EXPECT_EQ(out.values(), std::vector<double>(out.size(), -7));
    GatherMap map = makeGatherMap(dv, iv, 0);
    int64_t first = 0;
    while (first < map.count && map.inRange(first))
      ++first;
    ASSERT_LT(first, map.count);
    EXPECT_EQ(lastError(),
              "lethe_rt_gather: " +
                  gatherIndexError(map.rawIndexAt(first), first, map.dim));
  }
}

/// Values of `dtype` spread over many binades, so that a sum's rounding
/// depends on the order it adds them in.
TypedTensor spreadValues(std::vector<int64_t> shape, lethe_rt_dtype dtype,
                         uint64_t seed) {
  TypedTensor tensor(std::move(shape), dtype);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mantissa(-1, 1);
  std::uniform_int_distribution<int> exponent(-12, 12);
  for (int64_t i = 0; i < tensor.size(); ++i)
    tensor.set(i, std::ldexp(mantissa(rng), exponent(rng)));
  return tensor;
}

/// lethe_rt_gather_grad's dx as the CUDA kernel computes it: gatherGradAt
/// over `groups`, stored as the dtype.
std::vector<uint8_t> gatherGradOnHost(const GatherMap &map,
                                      const HostSourceGroups &groups,
                                      const TypedTensor &dy,
                                      const TypedTensor &dx) {
  std::vector<uint8_t> bytes(dx.bytes.size());
  dispatchFloat(dx.dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < dx.size(); ++i)
      store<T>(bytes.data(), i,
               gatherGradAt<T>(map, groups.view(), dy.bytes.data(), i));
  });
  return bytes;
}

TEST_F(IndexMapsTest, GatherGradMatchesTheCpuBackendBitForBit) {
  const std::vector<int64_t> dxShape{3, 4, 5};
  uint64_t seed = 100;
  for (lethe_rt_dtype dtype : floatDtypes())
    for (int64_t axis = 0; axis < 3; ++axis) {
      // Many repeats of few indices (negative ones naming the same rows as
      // positive ones), so that most dx elements add several dy elements.
      int64_t dim = dxShape[axis];
      TypedTensor indices({6, 7}, LETHE_RT_I64);
      std::mt19937_64 rng(seed++);
      for (int64_t i = 0; i < indices.size(); ++i)
        indices.set(i, rng() % 3 == 0 ? -1.0 : static_cast<double>(rng() % 2));
      TypedTensor dy = spreadValues(gatheredShape(dxShape, indices.shape, axis),
                                    dtype, seed++);
      TypedTensor dx(dxShape, dtype);
      lethe_rt_tensor dyv = dy.view(), iv = indices.view(), dxv = dx.view();
      ASSERT_EQ(lethe_rt_gather_grad(context, &dyv, &iv, axis, &dxv),
                LETHE_RT_OK)
          << lastError();
      GatherMap map = makeGatherMap(dxv, iv, axis);
      std::vector<uint64_t> keys(map.count);
      for (int64_t i = 0; i < map.count; ++i)
        keys[i] = static_cast<uint64_t>(map.indexAt(i));
      HostSourceGroups groups(keys, dim);
      EXPECT_EQ(gatherGradOnHost(map, groups, dy, dx), dx.bytes)
          << dtypeName(dtype) << " axis " << axis;
      // The same sums in another order do not give the same bits: the
      // comparison above sees the order.
      if (dtype == LETHE_RT_F32 || dtype == LETHE_RT_F64) {
        groups.reverseEachGroup();
        EXPECT_NE(gatherGradOnHost(map, groups, dy, dx), dx.bytes)
            << dtypeName(dtype) << " axis " << axis;
      }
    }
}

TEST_F(IndexMapsTest, GatherGradWithoutIndicesIsZero) {
  TypedTensor indices({0}, LETHE_RT_I32), dy({2, 0}, LETHE_RT_F32);
  TypedTensor dx = spreadValues({2, 3}, LETHE_RT_F32, 7);
  lethe_rt_tensor dyv = dy.view(), iv = indices.view(), dxv = dx.view();
  ASSERT_EQ(lethe_rt_gather_grad(context, &dyv, &iv, 1, &dxv), LETHE_RT_OK)
      << lastError();
  GatherMap map = makeGatherMap(dxv, iv, 1);
  HostSourceGroups groups({}, map.dim);
  EXPECT_EQ(gatherGradOnHost(map, groups, dy, dx), dx.bytes);
  EXPECT_EQ(dx.values(), std::vector<double>(6, 0.0));
}

} // namespace
