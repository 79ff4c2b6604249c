//===- PoolingTest.cpp - Pooling kernels on CUDA --------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_max_pool, max_pool_grad, avg_pool, avg_pool_grad and
// global_avg_pool on the CUDA backend, compared bit for bit with the CPU
// backend's results: this program links the CUDA backend alone (both define
// the same symbols), so the CPU backend's results are computed here with the
// per-element functions of common/PoolingWindow.h, which the CPU backend
// runs and which unittests/Runtime/PoolingWindowTest.cpp checks against it
// over every element. 1-D, 2-D and 3-D windows with padding, strides,
// dilations, ceil mode, windows all padding and inputs in no window; ties,
// NaN, infinities and signed zeros for max; every float dtype and some
// integer ones. Then a few values worked out by hand, long planes of
// global_avg_pool (a block's tree) against a double-precision reference, and
// the errors, which are the CPU backend's but for overlapping outputs.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"
#include "StorageValues.h"

#include "common/Checks.h"
#include "common/PoolingWindow.h"
#include "common/Tensor.h"

#include <limits>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using PoolingTest = CudaRuntimeTest;

/// A pooling call's geometry: x's shape, out's spatial dims, kernel_shape,
/// strides, pads (begin values, then end values) and dilations.
struct Geometry {
  const char *name;
  std::vector<int64_t> x, outSpatial, kernel, strides, pads, dilations;

  std::vector<int64_t> out() const {
    std::vector<int64_t> shape{x[0], x[1]};
    shape.insert(shape.end(), outSpatial.begin(), outSpatial.end());
    return shape;
  }

  bool dilated() const {
    for (int64_t dilation : dilations)
      if (dilation != 1)
        return true;
    return false;
  }
};

const std::vector<Geometry> &geometries() {
  // clang-format off
  static const std::vector<Geometry> all{
      // (50 + 3 - 7) / 3 = 15.3: 17 windows with ceil mode.
      {"1-D pads, dilation, ceil", {2, 3, 50}, {17}, {4}, {3}, {2, 1}, {2}},
      {"2-D 3x3 same", {1, 4, 12, 13}, {12, 13}, {3, 3}, {1, 1},
       {1, 1, 1, 1}, {1, 1}},
      // (18 + 2 - 3) / 2 = 8.5: 10 windows with ceil mode, as for 19.
      {"2-D 3x3 stride 2, ceil", {2, 8, 18, 19}, {10, 10}, {3, 3}, {2, 2},
       {1, 1, 1, 1}, {1, 1}},
      {"2-D asymmetric pads, dilation", {1, 3, 15, 14}, {7, 13}, {2, 3},
       {2, 1}, {0, 2, 1, 1}, {3, 2}},
      {"2-D stride above kernel", {2, 2, 10, 11}, {3, 3}, {2, 2}, {3, 4},
       {0, 0, 0, 0}, {1, 1}},
      {"2-D windows all padding", {1, 2, 2, 3}, {7, 8}, {2, 2}, {1, 1},
       {3, 3, 3, 3}, {1, 1}},
      {"2-D many blocks", {8, 16, 32, 32}, {16, 16}, {3, 3}, {2, 2},
       {1, 1, 1, 1}, {1, 1}},
      {"3-D", {2, 2, 6, 7, 5}, {6, 3, 3}, {2, 3, 2}, {1, 2, 2},
       {1, 0, 1, 0, 1, 1}, {1, 1, 1}},
      {"3-D dilation, ceil", {1, 3, 5, 6, 7}, {3, 5, 4}, {2, 2, 2},
       {2, 1, 2}, {0, 1, 0, 1, 0, 1}, {1, 2, 2}},
  };
  // clang-format on
  return all;
}

/// The window the shared check builds (dilations left out when
/// `withDilations` is false), failing the test when it refuses the call.
PoolingWindow windowOf(const lethe_rt_tensor &x, const lethe_rt_tensor &out,
                       const Geometry &geometry, bool withDilations) {
  PoolingWindow window;
  EXPECT_EQ(poolingWindowError(
                x, out, geometry.kernel.data(), geometry.strides.data(),
                geometry.pads.data(),
                withDilations ? geometry.dilations.data() : nullptr, window),
            "")
      << geometry.name;
  return window;
}

/// Seeded values of storage type T that tie often: small integers, and for
/// floats signed zeros, NaN and infinities.
template <typename T> std::vector<T> tiedValues(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(0, 39);
  std::vector<T> values(count);
  for (size_t i = 0; i < count; ++i) {
    int choice = pick(rng);
    double value = choice % 5 - (std::is_unsigned_v<T> ? 0 : 2);
    if constexpr (isFloatStorage<T>()) {
      if (choice == 0)
        value = std::numeric_limits<double>::quiet_NaN();
      else if (choice == 1)
        value = -std::numeric_limits<double>::infinity();
      else if (choice == 2)
        value = std::numeric_limits<double>::infinity();
      else if (choice < 8)
        value = -0.0;
      store<T>(values.data(), i, value);
    } else {
      store<T>(values.data(), i, static_cast<int64_t>(value));
    }
  }
  return values;
}

std::string describe(const Geometry &geometry, lethe_rt_dtype dtype,
                     const std::string &what) {
  return std::string(geometry.name) + ", " + dtypeName(dtype) + ": " + what;
}

int64_t sizeOf(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

//===----------------------------------------------------------------------===//
// Against the CPU backend's bits
//===----------------------------------------------------------------------===//

/// max_pool with and without indices, in both storage orders, and (for
/// floats) max_pool_grad.
template <typename T>
void checkMaxPool(PoolingTest &test, const Geometry &geometry,
                  lethe_rt_dtype dtype, uint64_t seed) {
  // Each check starts at the arena's start: read() has waited for the
  // previous one's kernels.
  test.nextOffset = 0;
  std::vector<int64_t> outShape = geometry.out();
  int64_t inputs = sizeOf(geometry.x), outputs = sizeOf(outShape);
  std::vector<T> xValues = tiedValues<T>(inputs, seed);
  lethe_rt_tensor x = test.place<T>(geometry.x, dtype, xValues);
  lethe_rt_tensor out = test.place<T>(outShape, dtype);
  lethe_rt_tensor indices = test.place<int64_t>(outShape, LETHE_RT_I64);
  PoolingWindow window = windowOf(x, out, geometry, true);
  for (int64_t storageOrder = 0; storageOrder <= 1; ++storageOrder) {
    std::vector<T> expected(outputs);
    std::vector<int64_t> expectedIndices(outputs);
    for (int64_t element = 0; element < outputs; ++element)
      maxPoolElement<T>(window, xValues.data(), expected.data(),
                        expectedIndices.data(), storageOrder, element);
    ASSERT_EQ(lethe_rt_max_pool(test.context, &x, geometry.kernel.data(),
                                geometry.strides.data(), geometry.pads.data(),
                                geometry.dilations.data(), storageOrder, &out,
                                &indices),
              LETHE_RT_OK)
        << test.lastError();
    std::string order = " (storage order " + std::to_string(storageOrder) + ")";
    expectSameBits(test.read<T>(out), expected,
                   describe(geometry, dtype, "max_pool") + order);
    expectSameBits(test.read<int64_t>(indices), expectedIndices,
                   describe(geometry, dtype, "max_pool indices") + order);
  }
  // Without indices, into a fresh out.
  lethe_rt_tensor plainOut = test.place<T>(outShape, dtype);
  std::vector<T> expected(outputs);
  for (int64_t element = 0; element < outputs; ++element)
    maxPoolElement<T>(window, xValues.data(), expected.data(), nullptr, 0,
                      element);
  ASSERT_EQ(lethe_rt_max_pool(test.context, &x, geometry.kernel.data(),
                              geometry.strides.data(), geometry.pads.data(),
                              geometry.dilations.data(), 0, &plainOut, nullptr),
            LETHE_RT_OK)
      << test.lastError();
  expectSameBits(test.read<T>(plainOut), expected,
                 describe(geometry, dtype, "max_pool without indices"));
  if constexpr (isFloatStorage<T>()) {
    std::vector<T> dyValues = randomStorage<T>(outputs, seed + 1, -2, 2);
    lethe_rt_tensor dy = test.place<T>(outShape, dtype, dyValues);
    lethe_rt_tensor dx = test.place<T>(geometry.x, dtype);
    std::vector<T> dxExpected(inputs);
    for (int64_t element = 0; element < inputs; ++element)
      maxPoolGradElement<T>(window, dyValues.data(), xValues.data(),
                            dxExpected.data(), element);
    ASSERT_EQ(
        lethe_rt_max_pool_grad(test.context, &dy, &x, geometry.kernel.data(),
                               geometry.strides.data(), geometry.pads.data(),
                               geometry.dilations.data(), &dx),
        LETHE_RT_OK)
        << test.lastError();
    expectSameBits(test.read<T>(dx), dxExpected,
                   describe(geometry, dtype, "max_pool_grad"));
  }
}

/// avg_pool and avg_pool_grad, with and without count_include_pad.
template <typename T>
void checkAvgPool(PoolingTest &test, const Geometry &geometry,
                  lethe_rt_dtype dtype, uint64_t seed) {
  test.nextOffset = 0; // as in checkMaxPool
  std::vector<int64_t> outShape = geometry.out();
  int64_t inputs = sizeOf(geometry.x), outputs = sizeOf(outShape);
  std::vector<T> xValues = randomStorage<T>(inputs, seed, -2, 2);
  std::vector<T> dyValues = randomStorage<T>(outputs, seed + 1, -2, 2);
  lethe_rt_tensor x = test.place<T>(geometry.x, dtype, xValues);
  lethe_rt_tensor dy = test.place<T>(outShape, dtype, dyValues);
  lethe_rt_tensor out = test.place<T>(outShape, dtype);
  lethe_rt_tensor dx = test.place<T>(geometry.x, dtype);
  PoolingWindow window = windowOf(x, out, geometry, false);
  for (int countIncludePad = 0; countIncludePad <= 1; ++countIncludePad) {
    std::vector<T> expected(outputs), dxExpected(inputs);
    for (int64_t element = 0; element < outputs; ++element)
      avgPoolElement<T>(window, xValues.data(), expected.data(),
                        countIncludePad, element);
    for (int64_t element = 0; element < inputs; ++element)
      avgPoolGradElement<T>(window, dyValues.data(), dxExpected.data(),
                            countIncludePad, element);
    ASSERT_EQ(lethe_rt_avg_pool(test.context, &x, geometry.kernel.data(),
                                geometry.strides.data(), geometry.pads.data(),
                                countIncludePad, &out),
              LETHE_RT_OK)
        << test.lastError();
    ASSERT_EQ(lethe_rt_avg_pool_grad(test.context, &dy, geometry.kernel.data(),
                                     geometry.strides.data(),
                                     geometry.pads.data(), countIncludePad,
                                     &dx),
              LETHE_RT_OK)
        << test.lastError();
    std::string mode =
        " (count_include_pad " + std::to_string(countIncludePad) + ")";
    expectSameBits(test.read<T>(out), expected,
                   describe(geometry, dtype, "avg_pool") + mode);
    expectSameBits(test.read<T>(dx), dxExpected,
                   describe(geometry, dtype, "avg_pool_grad") + mode);
  }
}

const std::vector<lethe_rt_dtype> floatDtypes{LETHE_RT_F32, LETHE_RT_F64,
                                              LETHE_RT_F16, LETHE_RT_BF16};

TEST_F(PoolingTest, MaxPoolHasTheCpuBackendsBits) {
  uint64_t seed = 100;
  for (const Geometry &geometry : geometries())
    for (lethe_rt_dtype dtype :
         {LETHE_RT_F32, LETHE_RT_F64, LETHE_RT_F16, LETHE_RT_BF16, LETHE_RT_I8,
          LETHE_RT_I32, LETHE_RT_I64, LETHE_RT_U8, LETHE_RT_U16}) {
      seed += 2;
      dispatchAny(dtype, [&](auto tag) {
        checkMaxPool<decltype(tag)>(*this, geometry, dtype, seed);
      });
    }
}

TEST_F(PoolingTest, AvgPoolHasTheCpuBackendsBits) {
  uint64_t seed = 200;
  for (const Geometry &geometry : geometries()) {
    if (geometry.dilated()) // avg_pool has no dilations
      continue;
    for (lethe_rt_dtype dtype : floatDtypes) {
      seed += 2;
      dispatchFloat(dtype, [&](auto tag) {
        checkAvgPool<decltype(tag)>(*this, geometry, dtype, seed);
      });
    }
  }
}

/// global_avg_pool over planes of `plane` elements: planes shorter than 64
/// elements are summed in order, with the CPU backend's bits; longer ones
/// by a block's tree, within rounding of a double-precision sum and with the
/// same bits on every call.
template <typename T>
void checkGlobalAvgPool(PoolingTest &test, lethe_rt_dtype dtype,
                        std::vector<int64_t> shape, uint64_t seed) {
  test.nextOffset = 0;
  int64_t planes = shape[0] * shape[1], plane = sizeOf(shape) / planes;
  std::vector<T> xValues = randomStorage<T>(sizeOf(shape), seed, -2, 2);
  lethe_rt_tensor x = test.place<T>(shape, dtype, xValues);
  std::vector<int64_t> outShape(shape.size(), 1);
  outShape[0] = shape[0];
  outShape[1] = shape[1];
  lethe_rt_tensor out = test.place<T>(outShape, dtype);
  ASSERT_EQ(lethe_rt_global_avg_pool(test.context, &x, &out), LETHE_RT_OK)
      << test.lastError();
  std::vector<T> got = test.read<T>(out);
  std::string what = std::string(dtypeName(dtype)) + " global_avg_pool of " +
                     std::to_string(plane);
  if (plane < 64) {
    std::vector<T> expected(planes);
    for (int64_t p = 0; p < planes; ++p)
      store<T>(expected.data(), p,
               planeAverage<T>(xValues.data(), p * plane, plane));
    expectSameBits(got, expected, what);
    return;
  }
  // The compute type's rounding over a tree of `plane` terms of magnitude
  // below 2, relative to max(1, |mean|).
  double epsilon = std::is_same_v<T, double> ? 1e-15 : 1.2e-7;
  double bound = 4 * std::log2(static_cast<double>(plane)) * epsilon * 2;
  if (std::is_same_v<T, Half>)
    bound += 1e-3; // the store's rounding to f16
  else if (std::is_same_v<T, BFloat16>)
    bound += 8e-3;
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0;
    for (int64_t i = 0; i < plane; ++i)
      sum += static_cast<double>(load<T>(xValues.data(), p * plane + i));
    double mean = sum / plane;
    EXPECT_NEAR(static_cast<double>(load<T>(got.data(), p)), mean,
                bound * std::max(1.0, std::fabs(mean)))
        << what << " plane " << p;
  }
  // Deterministic: the same call gives the same bits.
  ASSERT_EQ(lethe_rt_global_avg_pool(test.context, &x, &out), LETHE_RT_OK)
      << test.lastError();
  expectSameBits(test.read<T>(out), got, what + " (again)");
}

TEST_F(PoolingTest, GlobalAvgPool) {
  uint64_t seed = 300;
  for (lethe_rt_dtype dtype : floatDtypes)
    dispatchFloat(dtype, [&](auto tag) {
      using T = decltype(tag);
      // 7x7 planes (a thread each), 8x8 (the first a block sums), long ones
      // and 3-D ones.
      checkGlobalAvgPool<T>(*this, dtype, {4, 70, 7, 7}, ++seed);
      checkGlobalAvgPool<T>(*this, dtype, {2, 5, 8, 8}, ++seed);
      checkGlobalAvgPool<T>(*this, dtype, {2, 3, 37, 41}, ++seed);
      checkGlobalAvgPool<T>(*this, dtype, {1, 2, 3, 4, 5}, ++seed);
      checkGlobalAvgPool<T>(*this, dtype, {3, 1, 2000}, ++seed);
    });
}

//===----------------------------------------------------------------------===//
// Values worked out by hand, edge cases and errors
//===----------------------------------------------------------------------===//

TEST_F(PoolingTest, MaxPoolIndicesByHand) {
  // As the CPU backend's test: two planes of 1..16 (the second negated, so
  // its maxima are the window starts); kernel 2, stride 2.
  std::vector<float> values(32);
  for (int i = 0; i < 16; ++i) {
    values[i] = static_cast<float>(i + 1);
    values[16 + i] = -static_cast<float>(i + 1);
  }
  lethe_rt_tensor x = place<float>({1, 2, 4, 4}, LETHE_RT_F32, values);
  lethe_rt_tensor out = place<float>({1, 2, 2, 2}, LETHE_RT_F32);
  lethe_rt_tensor indices = place<int64_t>({1, 2, 2, 2}, LETHE_RT_I64);
  std::vector<int64_t> kernel = {2, 2}, strides = {2, 2}, pads = {0, 0, 0, 0},
                       dilations = {1, 1};
  ASSERT_EQ(lethe_rt_max_pool(context, &x, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 0, &out, &indices),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(read<float>(out),
            (std::vector<float>{6, 8, 14, 16, -1, -3, -9, -11}));
  EXPECT_EQ(read<int64_t>(indices),
            (std::vector<int64_t>{5, 7, 13, 15, 16, 18, 24, 26}));
  ASSERT_EQ(lethe_rt_max_pool(context, &x, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 1, &out, &indices),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(read<int64_t>(indices),
            (std::vector<int64_t>{5, 13, 7, 15, 16, 24, 18, 26}));
  // The gradient goes to the maxima, nowhere else.
  lethe_rt_tensor dy =
      place<float>({1, 2, 2, 2}, LETHE_RT_F32, {1, 2, 3, 4, 5, 6, 7, 8});
  lethe_rt_tensor dx = place<float>({1, 2, 4, 4}, LETHE_RT_F32);
  ASSERT_EQ(lethe_rt_max_pool_grad(context, &dy, &x, kernel.data(),
                                   strides.data(), pads.data(),
                                   dilations.data(), &dx),
            LETHE_RT_OK)
      << lastError();
  std::vector<float> dxExpected(32, 0);
  int64_t winners[] = {5, 7, 13, 15, 16, 18, 24, 26};
  for (int i = 0; i < 8; ++i)
    dxExpected[winners[i]] = static_cast<float>(i + 1);
  EXPECT_EQ(read<float>(dx), dxExpected);
}

TEST_F(PoolingTest, AvgPoolDivisorsByHand) {
  // kernel 2x2, stride 2, pad 1 on every side over 1..16: the corner window
  // holds only element 1; with count_include_pad it divides by 4.
  std::vector<float> values(16);
  for (int i = 0; i < 16; ++i)
    values[i] = static_cast<float>(i + 1);
  lethe_rt_tensor x = place<float>({1, 1, 4, 4}, LETHE_RT_F32, values);
  lethe_rt_tensor out = place<float>({1, 1, 3, 3}, LETHE_RT_F32);
  std::vector<int64_t> kernel = {2, 2}, strides = {2, 2}, pads = {1, 1, 1, 1};
  ASSERT_EQ(lethe_rt_avg_pool(context, &x, kernel.data(), strides.data(),
                              pads.data(), 0, &out),
            LETHE_RT_OK)
      << lastError();
  std::vector<float> got = read<float>(out);
  EXPECT_EQ(got[0], 1.0f);
  EXPECT_EQ(got[1], (2 + 3) / 2.0f);
  EXPECT_EQ(got[4], (6 + 7 + 10 + 11) / 4.0f);
  ASSERT_EQ(lethe_rt_avg_pool(context, &x, kernel.data(), strides.data(),
                              pads.data(), 1, &out),
            LETHE_RT_OK)
      << lastError();
  got = read<float>(out);
  EXPECT_EQ(got[0], 1 / 4.0f);
  EXPECT_EQ(got[1], (2 + 3) / 4.0f);
}

TEST_F(PoolingTest, EmptyTensorsLaunchNothing) {
  std::vector<int64_t> kernel = {2}, strides = {1}, pads = {0, 0},
                       dilations = {1};
  lethe_rt_tensor x = place<float>({0, 3, 5}, LETHE_RT_F32);
  lethe_rt_tensor out = place<float>({0, 3, 4}, LETHE_RT_F32);
  lethe_rt_tensor dx = place<float>({0, 3, 5}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_max_pool(context, &x, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 0, &out, nullptr),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(lethe_rt_max_pool_grad(context, &out, &x, kernel.data(),
                                   strides.data(), pads.data(),
                                   dilations.data(), &dx),
            LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(lethe_rt_avg_pool(context, &x, kernel.data(), strides.data(),
                              pads.data(), 1, &out),
            LETHE_RT_OK)
      << lastError();
  lethe_rt_tensor planes = place<float>({0, 3, 1}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_global_avg_pool(context, &x, &planes), LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(lethe_rt_synchronize(context), LETHE_RT_OK) << lastError();
}

TEST_F(PoolingTest, InvalidArgumentsNameTheKernel) {
  std::vector<int64_t> kernel = {2, 2}, strides = {2, 2}, pads = {0, 0, 0, 0},
                       dilations = {1, 1};
  lethe_rt_tensor x = place<float>({1, 1, 4, 4}, LETHE_RT_F32);
  lethe_rt_tensor tooLarge = place<float>({1, 1, 4, 4}, LETHE_RT_F32);
  lethe_rt_tensor out = place<float>({1, 1, 2, 2}, LETHE_RT_F32);
  // The CPU backend's messages (runtime/common/Checks.cpp).
  EXPECT_EQ(lethe_rt_max_pool(context, &x, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 0, &tooLarge,
                              nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_max_pool: out's spatial dim 0 (4) is too "
                         "large for x's (4)");
  EXPECT_EQ(lethe_rt_max_pool(context, &x, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 2, &out, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_max_pool: storage_order must be 0 or 1, "
                         "not 2");
  lethe_rt_tensor flags = place<uint8_t>({1, 1, 4, 4}, LETHE_RT_I1);
  lethe_rt_tensor flagsOut = place<uint8_t>({1, 1, 2, 2}, LETHE_RT_I1);
  EXPECT_EQ(lethe_rt_max_pool(context, &flags, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 0, &flagsOut,
                              nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_max_pool: x must be numeric, got i1");
  lethe_rt_tensor bytes = place<uint8_t>({1, 1, 4, 4}, LETHE_RT_U8);
  lethe_rt_tensor bytesOut = place<uint8_t>({1, 1, 2, 2}, LETHE_RT_U8);
  EXPECT_EQ(lethe_rt_avg_pool(context, &bytes, kernel.data(), strides.data(),
                              pads.data(), 0, &bytesOut),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_avg_pool: x must be f16, bf16, f32 or f64, got ui8");
  std::vector<int64_t> negativePads = {0, -1, 0, 0};
  EXPECT_EQ(lethe_rt_avg_pool_grad(context, &out, kernel.data(), strides.data(),
                                   negativePads.data(), 0, &x),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_avg_pool_grad: spatial dim 1: kernel, "
                         "stride and dilation must be positive and pads "
                         "non-negative");
  lethe_rt_tensor flat = place<float>({1, 16}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_max_pool_grad(context, &out, &flat, kernel.data(),
                                   strides.data(), pads.data(),
                                   dilations.data(), &flat),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_max_pool_grad: x (1x16) and out (1x1x2x2) "
                         "must be N, C and 1 to 3 spatial dims");
  EXPECT_EQ(lethe_rt_global_avg_pool(context, &x, &tooLarge), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_global_avg_pool: out (1x1x4x4) must hold one value per "
            "plane");
  // A host pointer is refused before it reaches a kernel.
  std::vector<float> host(16);
  lethe_rt_tensor hostX = x;
  hostX.data = host.data();
  EXPECT_EQ(lethe_rt_avg_pool(context, &hostX, kernel.data(), strides.data(),
                              pads.data(), 0, &out),
            LETHE_RT_ERROR);
  EXPECT_NE(lastError().find("does not lie in the arena"), std::string::npos)
      << lastError();
  // Where the cuda backend differs: an output overlapping an input.
  lethe_rt_tensor inX = x;
  inX.shape = out.shape;
  EXPECT_EQ(lethe_rt_max_pool(context, &x, kernel.data(), strides.data(),
                              pads.data(), dilations.data(), 0, &inX, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_max_pool: out overlaps x (the cuda backend "
                         "does not pool in place)");
  EXPECT_EQ(lethe_rt_max_pool_grad(context, &out, &x, kernel.data(),
                                   strides.data(), pads.data(),
                                   dilations.data(), &x),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_max_pool_grad: dx overlaps x (the cuda "
                         "backend does not pool in place)");
}

} // namespace
