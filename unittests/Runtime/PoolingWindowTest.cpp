//===- PoolingWindowTest.cpp - Pooling windows shared by the backends -----===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The per-element functions of common/PoolingWindow.h, which the CUDA
// backend's pooling kernels run one per thread, evaluated here on the host
// over every output and input-gradient element of 1-D, 2-D and 3-D windows
// (padding, strides, dilations, ceil mode, windows all padding, inputs in
// no window, ties, NaN, signed zeros), and compared bit for bit with the CPU
// backend's kernels and with a reference written here from the definition.
// The gradients are gathered per input element there and scattered per
// output here and on the CPU backend: equal bits show the orders agree.
//
//===----------------------------------------------------------------------===//

#include "common/PoolingWindow.h"
#include "TypedTensor.h"

#include <cmath>
#include <limits>
#include <string>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

/// A pooling call's geometry; out's spatial dims follow from it.
struct Geometry {
  const char *name;
  std::vector<int64_t> x, kernel, strides, pads, dilations;
  bool ceilMode;

  int64_t rank() const { return static_cast<int64_t>(kernel.size()); }

  bool dilated() const {
    for (int64_t dilation : dilations)
      if (dilation != 1)
        return true;
    return false;
  }

  /// ONNX's output shape (floor, or ceil with ceil_mode).
  std::vector<int64_t> out() const {
    std::vector<int64_t> shape{x[0], x[1]};
    for (int64_t dim = 0; dim < rank(); ++dim) {
      int64_t span = x[dim + 2] + pads[dim] + pads[dim + rank()] -
                     ((kernel[dim] - 1) * dilations[dim] + 1);
      int64_t steps = span / strides[dim];
      if (ceilMode && span % strides[dim] != 0)
        ++steps;
      shape.push_back(steps + 1);
    }
    return shape;
  }
};

const std::vector<Geometry> &geometries() {
  // x, kernel, strides, pads (begin, then end), dilations, ceil mode.
  // clang-format off
  static const std::vector<Geometry> all{
      {"1-D", {2, 3, 11}, {3}, {2}, {0, 0}, {1}, false},
      {"1-D pads, dilation, ceil", {1, 2, 10}, {3}, {3}, {2, 1}, {2}, true},
      {"2-D 3x3 same", {2, 2, 7, 6}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1},
       false},
      {"2-D 3x3 stride 2, ceil", {1, 3, 8, 9}, {3, 3}, {2, 2}, {1, 1, 1, 1},
       {1, 1}, true},
      {"2-D asymmetric pads, dilation", {1, 2, 9, 8}, {2, 3}, {2, 1},
       {0, 2, 1, 1}, {3, 2}, false},
      {"2-D stride above kernel", {1, 1, 10, 10}, {2, 2}, {3, 4},
       {0, 0, 0, 0}, {1, 1}, false},
      {"2-D windows all padding", {1, 2, 2, 3}, {2, 2}, {1, 1}, {3, 3, 3, 3},
       {1, 1}, false},
      {"3-D", {1, 2, 5, 6, 4}, {2, 3, 2}, {1, 2, 2}, {1, 0, 1, 0, 1, 1},
       {1, 1, 1}, false},
      {"3-D dilation, ceil", {1, 1, 4, 5, 6}, {2, 2, 2}, {2, 1, 2},
       {0, 1, 0, 1, 0, 1}, {1, 2, 2}, true},
  };
  // clang-format on
  return all;
}

//===----------------------------------------------------------------------===//
// The reference, from the definition
//===----------------------------------------------------------------------===//

/// One output's window: the plane offsets of its positions inside the
/// input, in row-major kernel order, and how many positions lie inside the
/// padded input.
struct ReferenceWindow {
  std::vector<int64_t> inside;
  int64_t padded = 0;
};

/// Every output's window of one plane, in row-major output order.
std::vector<ReferenceWindow> referenceWindows(const Geometry &geometry) {
  int64_t rank = geometry.rank();
  std::vector<int64_t> outShape = geometry.out();
  std::vector<int64_t> inSpatial(geometry.x.begin() + 2, geometry.x.end()),
      outSpatial(outShape.begin() + 2, outShape.end());
  int64_t outputs = 1, positions = 1;
  for (int64_t dim = 0; dim < rank; ++dim) {
    outputs *= outSpatial[dim];
    positions *= geometry.kernel[dim];
  }
  std::vector<int64_t> inStrides = rowMajorStrides(inSpatial);
  std::vector<ReferenceWindow> windows(outputs);
  for (int64_t output = 0; output < outputs; ++output) {
    std::vector<int64_t> o = unravel(output, outSpatial);
    for (int64_t k = 0; k < positions; ++k) {
      std::vector<int64_t> kIndex = unravel(k, geometry.kernel);
      bool inside = true, padded = true;
      int64_t offset = 0;
      for (int64_t dim = 0; dim < rank; ++dim) {
        int64_t at = o[dim] * geometry.strides[dim] - geometry.pads[dim] +
                     kIndex[dim] * geometry.dilations[dim];
        inside = inside && at >= 0 && at < inSpatial[dim];
        padded = padded && at >= -geometry.pads[dim] &&
                 at < inSpatial[dim] + geometry.pads[dim + rank];
        offset += at * inStrides[dim];
      }
      if (inside)
        windows[output].inside.push_back(offset);
      windows[output].padded += padded;
    }
  }
  return windows;
}

/// Calls `visit(inBase, outBase, output, window)` for every output of every
/// plane.
template <typename Visit>
void forEachReferenceWindow(const Geometry &geometry, Visit &&visit) {
  std::vector<ReferenceWindow> windows = referenceWindows(geometry);
  int64_t inPlane = 1;
  for (size_t dim = 2; dim < geometry.x.size(); ++dim)
    inPlane *= geometry.x[dim];
  int64_t outPlane = static_cast<int64_t>(windows.size());
  for (int64_t plane = 0; plane < geometry.x[0] * geometry.x[1]; ++plane)
    for (int64_t output = 0; output < outPlane; ++output)
      visit(plane * inPlane, plane * outPlane, output, windows[output]);
}

/// The first maximum of a window (NaN winning), and where it is: offset 0
/// with the lowest value when the window is all padding.
template <typename T>
std::pair<ComputeType<T>, int64_t> referenceMax(const void *x, int64_t inBase,
                                                const ReferenceWindow &window) {
  using C = ComputeType<T>;
  C best = std::numeric_limits<C>::has_infinity
               ? -std::numeric_limits<C>::infinity()
               : std::numeric_limits<C>::lowest();
  int64_t where = window.inside.empty() ? 0 : window.inside.front();
  for (int64_t offset : window.inside) {
    C value = load<T>(x, inBase + offset);
    bool valueIsNaN = value != value, bestIsNaN = best != best;
    if ((valueIsNaN && !bestIsNaN) || (!bestIsNaN && value > best)) {
      best = value;
      where = offset;
    }
  }
  return {best, where};
}

/// Where the row-major plane offset `offset` lies with the plane's spatial
/// dims flattened column-major.
int64_t columnMajor(const std::vector<int64_t> &spatial, int64_t offset) {
  std::vector<int64_t> index = unravel(offset, spatial);
  int64_t result = 0, weight = 1;
  for (size_t dim = 0; dim < spatial.size(); ++dim) {
    result += index[dim] * weight;
    weight *= spatial[dim];
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Data and comparison
//===----------------------------------------------------------------------===//

/// Values that tie often: small integers, signed zeros, and for floats NaN
/// and infinities.
TypedTensor tiedTensor(const std::vector<int64_t> &shape, lethe_rt_dtype dtype,
                       uint64_t seed) {
  TypedTensor tensor(shape, dtype);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(0, 39);
  bool floats = isFloat(dtype), unsignedInts = isUnsigned(dtype);
  for (int64_t i = 0; i < tensor.size(); ++i) {
    int choice = pick(rng);
    double value = choice % 5 - (unsignedInts ? 0 : 2);
    if (floats && choice == 0)
      value = std::numeric_limits<double>::quiet_NaN();
    else if (floats && choice == 1)
      value = -std::numeric_limits<double>::infinity();
    else if (floats && choice == 2)
      value = std::numeric_limits<double>::infinity();
    else if (floats && choice < 8)
      value = -0.0;
    tensor.set(i, value);
  }
  return tensor;
}

/// Expects the same bytes element by element, naming the first mismatch.
void expectSameBits(const TypedTensor &actual, const TypedTensor &expected,
                    const std::string &what) {
  ASSERT_EQ(actual.bytes.size(), expected.bytes.size()) << what;
  size_t width = lethe_rt_dtype_size(actual.dtype);
  for (size_t i = 0; i < actual.bytes.size(); i += width)
    ASSERT_EQ(std::memcmp(&actual.bytes[i], &expected.bytes[i], width), 0)
        << what << ": element " << i / width << " is " << actual.get(i / width)
        << ", expected " << expected.get(i / width);
}

/// The window the shared check builds for `geometry` (dilations left out
/// when `withDilations` is false).
PoolingWindow windowOf(TypedTensor &x, TypedTensor &out,
                       const Geometry &geometry, bool withDilations) {
  PoolingWindow window;
  lethe_rt_tensor xView = x.view(), outView = out.view();
  EXPECT_EQ(poolingWindowError(
                xView, outView, geometry.kernel.data(), geometry.strides.data(),
                geometry.pads.data(),
                withDilations ? geometry.dilations.data() : nullptr, window),
            "")
      << geometry.name;
  return window;
}

std::string describe(const Geometry &geometry, lethe_rt_dtype dtype,
                     const char *what) {
  return std::string(geometry.name) + ", " + dtypeName(dtype) + ": " + what;
}

//===----------------------------------------------------------------------===//
// The checks, per dtype
//===----------------------------------------------------------------------===//

/// max_pool with indices in both storage orders, and (for floats)
/// max_pool_grad.
void checkMaxPool(lethe_rt_context *context, const Geometry &geometry,
                  lethe_rt_dtype dtype, uint64_t seed) {
  TypedTensor x = tiedTensor(geometry.x, dtype, seed);
  std::vector<int64_t> outShape = geometry.out();
  TypedTensor out(outShape, dtype), expected(outShape, dtype),
      gathered(outShape, dtype);
  TypedTensor indices(outShape, LETHE_RT_I64),
      expectedIndices(outShape, LETHE_RT_I64),
      gatheredIndices(outShape, LETHE_RT_I64);
  PoolingWindow window = windowOf(x, out, geometry, true);
  std::vector<int64_t> spatial(geometry.x.begin() + 2, geometry.x.end());
  int64_t outputs = out.size();
  for (int64_t storageOrder = 0; storageOrder <= 1; ++storageOrder) {
    lethe_rt_tensor xView = x.view(), outView = out.view(),
                    indicesView = indices.view();
    ASSERT_EQ(lethe_rt_max_pool(context, &xView, geometry.kernel.data(),
                                geometry.strides.data(), geometry.pads.data(),
                                geometry.dilations.data(), storageOrder,
                                &outView, &indicesView),
              LETHE_RT_OK)
        << lethe_rt_last_error(context);
    dispatchAny(dtype, [&](auto tag) {
      using T = decltype(tag);
      forEachReferenceWindow(geometry, [&](int64_t inBase, int64_t outBase,
                                           int64_t output,
                                           const ReferenceWindow &reference) {
        auto [best, where] = referenceMax<T>(x.bytes.data(), inBase, reference);
        store<T>(expected.bytes.data(), outBase + output, best);
        reinterpret_cast<int64_t *>(
            expectedIndices.bytes.data())[outBase + output] =
            inBase + (storageOrder ? columnMajor(spatial, where) : where);
      });
      for (int64_t element = 0; element < outputs; ++element)
        maxPoolElement<T>(
            window, x.bytes.data(), gathered.bytes.data(),
            reinterpret_cast<int64_t *>(gatheredIndices.bytes.data()),
            storageOrder, element);
    });
    std::string order = " (storage order " + std::to_string(storageOrder) + ")";
    expectSameBits(out, expected, describe(geometry, dtype, "max_pool"));
    expectSameBits(gathered, expected,
                   describe(geometry, dtype, "maxPoolElement"));
    expectSameBits(indices, expectedIndices,
                   describe(geometry, dtype, "max_pool indices") + order);
    expectSameBits(gatheredIndices, expectedIndices,
                   describe(geometry, dtype, "maxPoolElement indices") + order);
  }
  if (!isFloat(dtype))
    return;

  TypedTensor dy = randomTensor(outShape, dtype, seed + 1, -2, 2);
  TypedTensor dx(geometry.x, dtype), dxExpected(geometry.x, dtype),
      dxGathered(geometry.x, dtype);
  lethe_rt_tensor dyView = dy.view(), xView = x.view(), dxView = dx.view();
  ASSERT_EQ(
      lethe_rt_max_pool_grad(context, &dyView, &xView, geometry.kernel.data(),
                             geometry.strides.data(), geometry.pads.data(),
                             geometry.dilations.data(), &dxView),
      LETHE_RT_OK)
      << lethe_rt_last_error(context);
  dispatchFloat(dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    std::vector<C> sum(dx.size(), C(0));
    forEachReferenceWindow(geometry, [&](int64_t inBase, int64_t outBase,
                                         int64_t output,
                                         const ReferenceWindow &reference) {
      if (!reference.inside.empty())
        sum[inBase +
            referenceMax<T>(x.bytes.data(), inBase, reference).second] +=
            load<T>(dy.bytes.data(), outBase + output);
    });
    for (size_t i = 0; i < sum.size(); ++i)
      store<T>(dxExpected.bytes.data(), i, sum[i]);
    for (int64_t element = 0; element < dx.size(); ++element)
      maxPoolGradElement<T>(window, dy.bytes.data(), x.bytes.data(),
                            dxGathered.bytes.data(), element);
  });
  expectSameBits(dx, dxExpected, describe(geometry, dtype, "max_pool_grad"));
  expectSameBits(dxGathered, dxExpected,
                 describe(geometry, dtype, "maxPoolGradElement"));
}

/// avg_pool and avg_pool_grad, with and without count_include_pad.
void checkAvgPool(lethe_rt_context *context, const Geometry &geometry,
                  lethe_rt_dtype dtype, uint64_t seed) {
  TypedTensor x = randomTensor(geometry.x, dtype, seed, -2, 2);
  std::vector<int64_t> outShape = geometry.out();
  TypedTensor dy = randomTensor(outShape, dtype, seed + 1, -2, 2);
  for (int countIncludePad = 0; countIncludePad <= 1; ++countIncludePad) {
    TypedTensor out(outShape, dtype), expected(outShape, dtype),
        gathered(outShape, dtype);
    TypedTensor dx(geometry.x, dtype), dxExpected(geometry.x, dtype),
        dxGathered(geometry.x, dtype);
    PoolingWindow window = windowOf(x, out, geometry, false);
    lethe_rt_tensor xView = x.view(), outView = out.view(), dyView = dy.view(),
                    dxView = dx.view();
    ASSERT_EQ(lethe_rt_avg_pool(context, &xView, geometry.kernel.data(),
                                geometry.strides.data(), geometry.pads.data(),
                                countIncludePad, &outView),
              LETHE_RT_OK)
        << lethe_rt_last_error(context);
    ASSERT_EQ(lethe_rt_avg_pool_grad(context, &dyView, geometry.kernel.data(),
                                     geometry.strides.data(),
                                     geometry.pads.data(), countIncludePad,
                                     &dxView),
              LETHE_RT_OK)
        << lethe_rt_last_error(context);
    dispatchFloat(dtype, [&](auto tag) {
      using T = decltype(tag);
      using C = ComputeType<T>;
      std::vector<C> sum(dx.size(), C(0));
      forEachReferenceWindow(geometry, [&](int64_t inBase, int64_t outBase,
                                           int64_t output,
                                           const ReferenceWindow &reference) {
        int64_t count = countIncludePad
                            ? reference.padded
                            : static_cast<int64_t>(reference.inside.size());
        C total = 0;
        for (int64_t offset : reference.inside)
          total += load<T>(x.bytes.data(), inBase + offset);
        store<T>(expected.bytes.data(), outBase + output,
                 count ? total / static_cast<C>(count) : C(0));
        if (count == 0)
          return;
        C share =
            load<T>(dy.bytes.data(), outBase + output) / static_cast<C>(count);
        for (int64_t offset : reference.inside)
          sum[inBase + offset] += share;
      });
      for (size_t i = 0; i < sum.size(); ++i)
        store<T>(dxExpected.bytes.data(), i, sum[i]);
      for (int64_t element = 0; element < out.size(); ++element)
        avgPoolElement<T>(window, x.bytes.data(), gathered.bytes.data(),
                          countIncludePad, element);
      for (int64_t element = 0; element < dx.size(); ++element)
        avgPoolGradElement<T>(window, dy.bytes.data(), dxGathered.bytes.data(),
                              countIncludePad, element);
    });
    std::string mode =
        " (count_include_pad " + std::to_string(countIncludePad) + ")";
    expectSameBits(out, expected, describe(geometry, dtype, "avg_pool") + mode);
    expectSameBits(gathered, expected,
                   describe(geometry, dtype, "avgPoolElement") + mode);
    expectSameBits(dx, dxExpected,
                   describe(geometry, dtype, "avg_pool_grad") + mode);
    expectSameBits(dxGathered, dxExpected,
                   describe(geometry, dtype, "avgPoolGradElement") + mode);
  }
}

const std::vector<lethe_rt_dtype> floatDtypes{LETHE_RT_F32, LETHE_RT_F64,
                                              LETHE_RT_F16, LETHE_RT_BF16};

using PoolingWindowTest = RuntimeTest;

TEST_F(PoolingWindowTest, MaxPoolMatchesTheCpuBackend) {
  uint64_t seed = 100;
  for (const Geometry &geometry : geometries()) {
    for (lethe_rt_dtype dtype : floatDtypes)
      checkMaxPool(context, geometry, dtype, seed += 2);
    for (lethe_rt_dtype dtype : {LETHE_RT_I32, LETHE_RT_U8, LETHE_RT_I64})
      checkMaxPool(context, geometry, dtype, seed += 2);
  }
}

TEST_F(PoolingWindowTest, AvgPoolMatchesTheCpuBackend) {
  uint64_t seed = 200;
  int checked = 0;
  for (const Geometry &geometry : geometries()) {
    // avg_pool has no dilations.
    if (geometry.dilated())
      continue;
    ++checked;
    for (lethe_rt_dtype dtype : floatDtypes)
      checkAvgPool(context, geometry, dtype, seed += 2);
  }
  EXPECT_GE(checked, 6);
}

TEST_F(PoolingWindowTest, GlobalAvgPoolMatchesTheCpuBackend) {
  for (lethe_rt_dtype dtype : floatDtypes) {
    TypedTensor x = randomTensor({3, 2, 5, 7}, dtype, 300, -2, 2);
    TypedTensor out({3, 2, 1, 1}, dtype), expected({3, 2, 1, 1}, dtype);
    lethe_rt_tensor xView = x.view(), outView = out.view();
    ASSERT_EQ(lethe_rt_global_avg_pool(context, &xView, &outView), LETHE_RT_OK)
        << lastError();
    dispatchFloat(dtype, [&](auto tag) {
      using T = decltype(tag);
      using C = ComputeType<T>;
      for (int64_t plane = 0; plane < 6; ++plane) {
        C sum = 0;
        for (int64_t i = 0; i < 35; ++i)
          sum += load<T>(x.bytes.data(), plane * 35 + i);
        store<T>(expected.bytes.data(), plane, sum / static_cast<C>(35));
        EXPECT_EQ(static_cast<double>(
                      planeAverage<T>(x.bytes.data(), plane * 35, 35)),
                  static_cast<double>(sum / static_cast<C>(35)));
      }
    });
    expectSameBits(out, expected,
                   std::string(dtypeName(dtype)) + ": global_avg_pool");
  }
}

TEST_F(PoolingWindowTest, GeometryHelpers) {
  // 2-D, kernel 3, stride 2, dilation 2, pads 1 (begin) and 2 (end) on a
  // 5x6 input: the window of output (1, 2) starts at (1, 3).
  PoolingWindow window;
  window.rank = 2;
  int64_t sizes[][3] = {{1, 5, 6}, {1, 3, 3}, {1, 3, 3}, {1, 2, 2},
                        {0, 1, 1}, {0, 2, 2}, {1, 2, 2}};
  for (int dim = 0; dim < 3; ++dim) {
    window.input[dim] = sizes[0][dim];
    window.output[dim] = sizes[1][dim];
    window.kernel[dim] = sizes[2][dim];
    window.strides[dim] = sizes[3][dim];
    window.padBegin[dim] = sizes[4][dim];
    window.padEnd[dim] = sizes[5][dim];
    window.dilations[dim] = sizes[6][dim];
  }
  std::vector<int64_t> visited;
  forEachWindowElement(window, 1 * 3 + 2,
                       [&](int64_t offset) { visited.push_back(offset); });
  // Rows 1 and 3 (5 is outside), columns 3 and 5 (7 is outside).
  EXPECT_EQ(visited, (std::vector<int64_t>{9, 11, 21, 23}));
  EXPECT_EQ(windowCount(window, 1 * 3 + 2, false), 4);
  // Inside the padded input (rows -1 .. 6, columns -1 .. 7): rows 1, 3, 5
  // and columns 3, 5, 7.
  EXPECT_EQ(windowCount(window, 1 * 3 + 2, true), 9);
  // Element (3, 5) lies in the windows of outputs (o0, o1) with 2 o0 - 1 +
  // 2 k0 = 3 and 2 o1 - 1 + 2 k1 = 5: o0 in {0, 1, 2}, o1 in {1, 2}.
  std::vector<int64_t> holding;
  forEachWindowHolding(window, 3 * 6 + 5,
                       [&](int64_t output) { holding.push_back(output); });
  EXPECT_EQ(holding, (std::vector<int64_t>{1, 2, 4, 5, 7, 8}));
  // Column-major: (3, 5) of 5x6 is at 5 * 5 + 3.
  EXPECT_EQ(columnMajorOffset(window, 3 * 6 + 5), 28);
}

} // namespace
