//===- ConvolutionTest.cpp - Convolutions on CUDA -------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_conv, lethe_rt_conv_transpose and lethe_rt_conv_grad_weight on
// the CUDA backend (cuDNN, and the direct kernels for what cuDNN cannot
// express) against double-precision references computed here: 1-D, 2-D and
// 3-D, strides, symmetric and asymmetric pads, dilations, groups, bias or
// none, output_padding below and at the stride, every float dtype; the
// workspace given, NULL and too small; the same bits from the same call; and
// the errors. The references are checked against each other first (the
// three directions are adjoints), and the host-side decisions of
// runtime/cuda/ConvolutionPlan.h without a GPU.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"
#include "StorageValues.h"

#include "common/Checks.h"
#include "common/Tensor.h"
#include "cuda/ConvolutionPlan.h"

#include <climits>
#include <cstdio>
#include <initializer_list>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

//===----------------------------------------------------------------------===//
// Cases and references
//===----------------------------------------------------------------------===//

/// A convolution "X convolved with W gives Y": X's shape (N, C, spatial),
/// the filters, kernel, strides, pads (begins, then ends), dilations and
/// group, and whether a bias is added.
struct Case {
  const char *name;
  std::vector<int64_t> x;
  int64_t filters;
  std::vector<int64_t> kernel, strides, pads, dilations;
  int64_t group;
  bool bias;

  int32_t rank() const { return static_cast<int32_t>(kernel.size()); }
  std::vector<int64_t> w() const {
    std::vector<int64_t> shape{filters, x[1] / group};
    shape.insert(shape.end(), kernel.begin(), kernel.end());
    return shape;
  }
  /// The span the kernel and strides cover past the last output along
  /// `dim`: conv_transpose's output_padding that gives back X's size.
  int64_t remainder(int32_t dim) const {
    return (x[2 + dim] + pads[dim] + pads[dim + rank()] -
            dilations[dim] * (kernel[dim] - 1) - 1) %
           strides[dim];
  }
  std::vector<int64_t> y() const {
    std::vector<int64_t> shape{x[0], filters};
    for (int32_t dim = 0; dim < rank(); ++dim)
      shape.push_back((x[2 + dim] + pads[dim] + pads[dim + rank()] -
                       dilations[dim] * (kernel[dim] - 1) - 1) /
                          strides[dim] +
                      1);
    return shape;
  }
  std::vector<int64_t> outputPadding() const {
    std::vector<int64_t> padding;
    for (int32_t dim = 0; dim < rank(); ++dim)
      padding.push_back(remainder(dim));
    return padding;
  }
};

const std::vector<Case> &cases() {
  // clang-format off
  static const std::vector<Case> all{
      {"1-D", {2, 3, 17}, 4, {3}, {1}, {1, 1}, {1}, 1, true},
      {"1-D stride, dilation, asymmetric pads", {2, 4, 20}, 6, {3}, {2},
       {2, 0}, {2}, 2, false},
      {"2-D 3x3 same", {2, 4, 9, 10}, 5, {3, 3}, {1, 1}, {1, 1, 1, 1},
       {1, 1}, 1, true},
      {"2-D stride 2, remainders", {1, 3, 12, 11}, 4, {3, 3}, {2, 2},
       {1, 1, 1, 1}, {1, 1}, 1, false},
      {"2-D asymmetric pads", {2, 2, 8, 9}, 3, {2, 3}, {1, 2}, {0, 2, 1, 1},
       {1, 1}, 1, true},
      {"2-D dilation, groups", {2, 6, 11, 9}, 9, {3, 2}, {1, 1},
       {2, 1, 2, 1}, {2, 3}, 3, true},
      {"2-D depthwise, stride 3", {1, 4, 13, 14}, 4, {3, 3}, {3, 3},
       {1, 1, 1, 1}, {1, 1}, 4, false},
      {"2-D 1x1", {3, 8, 5, 6}, 7, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1,
       true},
      {"3-D", {2, 3, 5, 6, 7}, 4, {2, 3, 2}, {1, 2, 1}, {1, 1, 0, 1, 1, 0},
       {1, 1, 2}, 1, true},
      {"3-D asymmetric pads, groups", {1, 4, 6, 5, 4}, 2, {3, 2, 2},
       {2, 1, 1}, {1, 0, 1, 0, 1, 0}, {1, 1, 1}, 2, false},
  };
  // clang-format on
  return all;
}

/// Calls `visit(n, f, c, o, k, xIndex, wIndex, yIndex)` for every term of
/// the convolution of the case (X of shape `x`, Y of `y`): each product
/// x[xIndex] * w[wIndex] that adds into y[yIndex].
template <typename Visit>
void forEachTerm(const Case &test, const std::vector<int64_t> &y,
                 Visit &&visit) {
  int32_t rank = test.rank();
  std::vector<int64_t> inSpatial(test.x.begin() + 2, test.x.end()),
      outSpatial(y.begin() + 2, y.end());
  int64_t inSize = countOf(inSpatial), outSize = countOf(outSpatial),
          kernelSize = countOf(test.kernel);
  int64_t channels = test.x[1], groupChannels = channels / test.group,
          groupFilters = test.filters / test.group;
  for (int64_t n = 0; n < test.x[0]; ++n)
    for (int64_t f = 0; f < test.filters; ++f)
      for (int64_t o = 0; o < outSize; ++o) {
        std::vector<int64_t> outPosition = unravel(o, outSpatial);
        for (int64_t k = 0; k < kernelSize; ++k) {
          std::vector<int64_t> kernelPosition = unravel(k, test.kernel);
          int64_t offset = 0;
          for (int32_t dim = 0; dim < rank && offset >= 0; ++dim) {
            int64_t at = outPosition[dim] * test.strides[dim] - test.pads[dim] +
                         kernelPosition[dim] * test.dilations[dim];
            offset = at < 0 || at >= inSpatial[dim]
                         ? -1
                         : offset * inSpatial[dim] + at;
          }
          if (offset < 0)
            continue;
          for (int64_t c = 0; c < groupChannels; ++c) {
            int64_t channel = f / groupFilters * groupChannels + c;
            visit((n * channels + channel) * inSize + offset,
                  (f * groupChannels + c) * kernelSize + k,
                  (n * test.filters + f) * outSize + o);
          }
        }
      }
}

/// Y = X * W (+ bias per filter) in double.
std::vector<double> referenceForward(const Case &test,
                                     const std::vector<double> &x,
                                     const std::vector<double> &w,
                                     const std::vector<double> *bias) {
  std::vector<int64_t> y = test.y();
  std::vector<double> out(countOf(y), 0.0);
  forEachTerm(test, y, [&](int64_t xi, int64_t wi, int64_t yi) {
    out[yi] += x[xi] * w[wi];
  });
  if (bias)
    for (size_t i = 0; i < out.size(); ++i)
      out[i] += (*bias)[i / (countOf(y) / y[0] / y[1]) % y[1]];
  return out;
}

/// X = the adjoint of the convolution applied to Y (+ bias per channel of
/// X): lethe_rt_conv_transpose with x = Y.
std::vector<double> referenceBackwardData(const Case &test,
                                          const std::vector<double> &y,
                                          const std::vector<double> &w,
                                          const std::vector<double> *bias) {
  std::vector<double> out(countOf(test.x), 0.0);
  forEachTerm(test, test.y(), [&](int64_t xi, int64_t wi, int64_t yi) {
    out[xi] += y[yi] * w[wi];
  });
  if (bias)
    for (size_t i = 0; i < out.size(); ++i)
      out[i] +=
          (*bias)[i / (countOf(test.x) / test.x[0] / test.x[1]) % test.x[1]];
  return out;
}

/// W's gradient given X and Y's gradient.
std::vector<double> referenceBackwardFilter(const Case &test,
                                            const std::vector<double> &x,
                                            const std::vector<double> &y) {
  std::vector<double> out(countOf(test.w()), 0.0);
  forEachTerm(test, test.y(), [&](int64_t xi, int64_t wi, int64_t yi) {
    out[wi] += x[xi] * y[yi];
  });
  return out;
}

double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i)
    sum += a[i] * b[i];
  return sum;
}

// The references are adjoints of each other: <conv(x, w), y> = <x,
// conv_transpose(y, w)> = <w, grad_weight(x, y)>. (Runs without a GPU.)
TEST(ConvolutionReferenceTest, DirectionsAreAdjoint) {
  for (const Case &test : cases()) {
    std::vector<double> x = randomValues<double>(countOf(test.x), 1),
                        w = randomValues<double>(countOf(test.w()), 2),
                        y = randomValues<double>(countOf(test.y()), 3);
    double forward = dot(referenceForward(test, x, w, nullptr), y);
    EXPECT_NEAR(dot(x, referenceBackwardData(test, y, w, nullptr)), forward,
                1e-9 * std::max(1.0, std::fabs(forward)))
        << test.name;
    EXPECT_NEAR(dot(w, referenceBackwardFilter(test, x, y)), forward,
                1e-9 * std::max(1.0, std::fabs(forward)))
        << test.name;
  }
}

// One value worked out by hand: a 1-D kernel [1, 2] with stride 2 and pads
// (1, 0) over [3, 4, 5]: outputs 2*3 (the first tap reads the pad), 1*4 +
// 2*5.
TEST(ConvolutionReferenceTest, HandWorkedForward) {
  Case test{"hand", {1, 1, 3}, 1, {2}, {2}, {1, 0}, {1}, 1, false};
  EXPECT_EQ(test.y(), (std::vector<int64_t>{1, 1, 2}));
  EXPECT_EQ(referenceForward(test, {3, 4, 5}, {1, 2}, nullptr),
            (std::vector<double>{6, 14}));
}

//===----------------------------------------------------------------------===//
// Host-side decisions (ConvolutionPlan.h), without a GPU
//===----------------------------------------------------------------------===//

/// The checked geometry of lethe_rt_conv on the case's shapes.
ConvolutionGeometry geometryOf(const Case &test) {
  ConvolutionGeometry geometry;
  std::vector<int64_t> y = test.y();
  EXPECT_EQ(convolutionGeometryError(test.x.data() + 2, y.data() + 2,
                                     test.kernel.data(), test.strides.data(),
                                     test.pads.data(), test.dilations.data(),
                                     test.rank(), geometry),
            "");
  return geometry;
}

/// A tensor descriptor of `shape` (no data: the plan reads shapes only).
lethe_rt_tensor shapeOnly(std::vector<int64_t> &shape) {
  return {nullptr, LETHE_RT_F32, static_cast<int32_t>(shape.size()),
          shape.data()};
}

TEST(ConvolutionPlanTest, SymmetricPadsGoToCudnn) {
  const Case &test = cases()[2]; // 2-D 3x3 same
  std::vector<int64_t> xShape = test.x, wShape = test.w(), yShape = test.y();
  lethe_rt_tensor x = shapeOnly(xShape), w = shapeOnly(wShape),
                  y = shapeOnly(yShape);
  CudnnGeometry cudnn;
  EXPECT_EQ(cudnnGeometryError(geometryOf(test), {&x, &w, &y}, cudnn), "");
  EXPECT_EQ(cudnn.spatialDims, 2);
  EXPECT_EQ(cudnn.input, (std::vector<int>{9, 10}));
  EXPECT_EQ(cudnn.output, (std::vector<int>{9, 10}));
  EXPECT_EQ(cudnn.kernel, (std::vector<int>{3, 3}));
  EXPECT_EQ(cudnn.pads, (std::vector<int>{1, 1}));
}

TEST(ConvolutionPlanTest, OneDimensionalRunsAsTwoDimensional) {
  const Case &test = cases()[0]; // 1-D, pads (1, 1)
  std::vector<int64_t> xShape = test.x, wShape = test.w(), yShape = test.y();
  lethe_rt_tensor x = shapeOnly(xShape), w = shapeOnly(wShape),
                  y = shapeOnly(yShape);
  CudnnGeometry cudnn;
  EXPECT_EQ(cudnnGeometryError(geometryOf(test), {&x, &w, &y}, cudnn), "");
  EXPECT_EQ(cudnn.spatialDims, 2);
  EXPECT_EQ(cudnn.input, (std::vector<int>{17, 1}));
  EXPECT_EQ(cudnn.output, (std::vector<int>{17, 1}));
  EXPECT_EQ(cudnn.kernel, (std::vector<int>{3, 1}));
  EXPECT_EQ(cudnn.pads, (std::vector<int>{1, 0}));
  EXPECT_EQ(cudnn.strides, (std::vector<int>{1, 1}));
  EXPECT_EQ(cudnn.dilations, (std::vector<int>{1, 1}));
}

TEST(ConvolutionPlanTest, AsymmetricPadsGoToTheDirectKernels) {
  const Case &test = cases()[4]; // 2-D asymmetric pads (0, 2) / (1, 1)
  std::vector<int64_t> xShape = test.x, wShape = test.w(), yShape = test.y();
  lethe_rt_tensor x = shapeOnly(xShape), w = shapeOnly(wShape),
                  y = shapeOnly(yShape);
  CudnnGeometry cudnn;
  EXPECT_EQ(cudnnGeometryError(geometryOf(test), {&x, &w, &y}, cudnn),
            "spatial dim 0 is padded by 0 at the start and 1 at the end");
}

TEST(ConvolutionPlanTest, OutputPaddingAtTheStrideGoesToTheDirectKernels) {
  // conv_transpose of x 4 with kernel 3, stride 2, output_padding 1: out 10
  // (2 * 3 + 1 + 3), from which cuDNN's forward formula gives (10 - 3) / 2 +
  // 1 = 4 outputs: cuDNN. With output_padding 2 (at the stride): out 11,
  // which gives 5.
  for (auto [outSize, expected] :
       {std::pair<int64_t, const char *>{10, ""},
        {11, "spatial dim 0: an input of 11 gives cuDNN an output other "
             "than 4"}}) {
    ConvolutionGeometry geometry;
    int64_t kernel = 3, stride = 2, pads[2] = {0, 0}, dilation = 1, xSize = 4;
    ASSERT_EQ(convolutionGeometryError(&outSize, &xSize, &kernel, &stride, pads,
                                       &dilation, 1, geometry),
              "");
    std::vector<int64_t> xShape{1, 2, xSize}, wShape{2, 3, kernel},
        outShape{1, 3, outSize};
    lethe_rt_tensor x = shapeOnly(xShape), w = shapeOnly(wShape),
                    out = shapeOnly(outShape);
    CudnnGeometry cudnn;
    EXPECT_EQ(cudnnGeometryError(geometry, {&out, &w, &x}, cudnn), expected);
  }
}

TEST(ConvolutionPlanTest, EmptyAndHugeTensorsGoToTheDirectKernels) {
  const Case &test = cases()[2];
  std::vector<int64_t> xShape = test.x, wShape = test.w(), yShape = test.y();
  xShape[0] = yShape[0] = 0;
  lethe_rt_tensor x = shapeOnly(xShape), w = shapeOnly(wShape),
                  y = shapeOnly(yShape);
  CudnnGeometry cudnn;
  EXPECT_EQ(cudnnGeometryError(geometryOf(test), {&x, &w, &y}, cudnn),
            "a tensor (0x4x9x10) has no elements");
  xShape = {1 << 20, 4, 32, 32};
  x = shapeOnly(xShape);
  yShape = {1, 5, 9, 10};
  y = shapeOnly(yShape);
  EXPECT_EQ(cudnnGeometryError(geometryOf(test), {&x, &w, &y}, cudnn),
            "a tensor (1048576x4x32x32) has more than 2147483647 elements");
}

TEST(ConvolutionPlanTest, PlannedWorkspaceIsTheColumnBuffer) {
  // (C / group) * prod(kernel) rows by prod(output spatial) columns.
  const Case &test = cases()[5]; // 2-D dilation, groups: C/g 2, kernel 3x2
  ConvolutionGeometry geometry = geometryOf(test);
  std::vector<int64_t> y = test.y();
  EXPECT_EQ(plannedWorkspaceBytes(test.w()[1], geometry, 4),
            2 * 3 * 2 * y[2] * y[3] * 4);
}

TEST(ConvolutionPlanTest, ChoosesTheFirstDeterministicAlgorithmThatFits) {
  std::vector<AlgorithmCandidate> candidates{
      {0, true, false, 0},      // not deterministic
      {1, false, true, 0},      // not supported
      {2, true, true, 1 << 20}, // too big for 4096
      {3, true, true, 1024},    // fits
      {4, true, true, 512}};    // fits, but later
  EXPECT_EQ(chooseAlgorithm(candidates, 4096), 3);
  // Without a budget, the first deterministic one.
  EXPECT_EQ(chooseAlgorithm(candidates, UINT64_MAX), 2);
  // None fits, or none is deterministic: the direct kernels run the call.
  EXPECT_EQ(chooseAlgorithm(candidates, 100), -1);
  EXPECT_EQ(chooseAlgorithm({candidates[0], candidates[1]}, UINT64_MAX), -1);
}

TEST(ConvolutionPlanTest, AsksForTheLeastDeterministicWorkspace) {
  std::vector<AlgorithmCandidate> candidates{
      {0, true, false, 0},      // not deterministic
      {1, false, true, 16},     // not supported
      {2, true, true, 1 << 20}, // the first that would run
      {3, true, true, 1024},    // the least
      {4, true, true, 1024}};   // as little, but later
  EXPECT_EQ(leastWorkspaceAlgorithm(candidates), 3);
  EXPECT_EQ(leastWorkspaceAlgorithm({candidates[0], candidates[1]}), -1);
  EXPECT_EQ(leastWorkspaceAlgorithm({}), -1);
}

//===----------------------------------------------------------------------===//
// The kernels on the GPU
//===----------------------------------------------------------------------===//

using ConvolutionTest = CudaRuntimeTest;

/// The tolerance of a dtype's convolutions against the double reference:
/// the storage tolerance, but for f32 a little looser, its sums of up to a
/// few hundred terms being rounded in a cuDNN order.
template <typename T> double convolutionTolerance() {
  return std::is_same_v<T, float> ? 3e-5 : storageTolerance<T>();
}

/// How a call gets its workspace.
enum class Workspace { Null, Planned };

/// A u8 workspace of `bytes` bytes in the test arena.
lethe_rt_tensor placeWorkspace(ConvolutionTest &test, int64_t bytes) {
  return test.place<uint8_t>({bytes}, LETHE_RT_U8);
}

/// Runs the three entry points on the case in dtype T and compares them
/// with the references; each call runs twice and must give the same bits.
template <typename T>
void checkCase(ConvolutionTest &test, const Case &c, Workspace workspace) {
  std::string what = std::string(c.name) + " (" + dtypeName(dtypeOf<T>()) +
                     (workspace == Workspace::Null ? ", NULL workspace)"
                                                   : ", planned workspace)");
  lethe_rt_dtype dtype = dtypeOf<T>();
  std::vector<int64_t> yShape = c.y();
  std::vector<T> xValues = randomStorage<T>(countOf(c.x), 11),
                 wValues = randomStorage<T>(countOf(c.w()), 12),
                 yValues = randomStorage<T>(countOf(yShape), 13),
                 biasValues = randomStorage<T>(c.filters, 14),
                 channelBias = randomStorage<T>(c.x[1], 15);
  std::vector<double> x = doublesOf(xValues), w = doublesOf(wValues),
                      y = doublesOf(yValues), bias = doublesOf(biasValues),
                      xBias = doublesOf(channelBias);
  lethe_rt_tensor xTensor = test.place(c.x, dtype, xValues);
  lethe_rt_tensor wTensor = test.place(c.w(), dtype, wValues);
  lethe_rt_tensor yTensor = test.place(yShape, dtype, yValues);
  lethe_rt_tensor biasTensor = test.place({c.filters}, dtype, biasValues);
  lethe_rt_tensor channelBiasTensor = test.place({c.x[1]}, dtype, channelBias);
  lethe_rt_tensor out = test.place<T>(yShape, dtype);
  lethe_rt_tensor transposed = test.place<T>(c.x, dtype);
  lethe_rt_tensor dw = test.place<T>(c.w(), dtype);
  size_t size = sizeof(T);
  int64_t columns = countOf(c.w()) / c.w()[0];
  lethe_rt_tensor convWorkspace = placeWorkspace(
      test, columns * countOf(yShape) / yShape[0] / yShape[1] * size);
  lethe_rt_tensor transposeWorkspace =
      placeWorkspace(test, columns * countOf(yShape) / yShape[0] / yShape[1] *
                               std::max<size_t>(size, 4));
  bool planned = workspace == Workspace::Planned;
  std::vector<int64_t> outputPadding = c.outputPadding();

  auto conv = [&] {
    return lethe_rt_conv(test.context, &xTensor, &wTensor,
                         c.bias ? &biasTensor : nullptr, c.strides.data(),
                         c.pads.data(), c.dilations.data(), c.group, &out,
                         planned ? &convWorkspace : nullptr);
  };
  auto transpose = [&] {
    return lethe_rt_conv_transpose(
        test.context, &yTensor, &wTensor, c.bias ? &channelBiasTensor : nullptr,
        c.strides.data(), c.pads.data(), c.dilations.data(),
        outputPadding.data(), c.group, &transposed,
        planned ? &transposeWorkspace : nullptr);
  };
  auto gradWeight = [&] {
    return lethe_rt_conv_grad_weight(
        test.context, &xTensor, &yTensor, c.strides.data(), c.pads.data(),
        c.dilations.data(), c.group, &dw, planned ? &convWorkspace : nullptr);
  };
  double tolerance = convolutionTolerance<T>();
  // With a planned workspace that no deterministic cuDNN algorithm fits, a
  // call runs in the direct kernels and asks for the least workspace that
  // one needs (lethe_rt_op_workspace_wanted); given that much, it runs in
  // cuDNN, asks for nothing, and is as close to the reference.
  auto checkWantedWorkspace = [&](auto &&call, lethe_rt_tensor &space,
                                  const lethe_rt_tensor &result,
                                  const std::vector<double> &reference,
                                  double bound, const std::string &name) {
    if (!planned)
      return;
    lethe_rt_op_begin(test.context, 0); // forgets what earlier calls asked
    ASSERT_EQ(call(), LETHE_RT_OK) << name << ": " << test.lastError();
    uint64_t wanted = lethe_rt_op_workspace_wanted(test.context);
    if (wanted == 0)
      return;
    EXPECT_GT(wanted, static_cast<uint64_t>(space.shape[0])) << name;
    if (test.nextOffset + wanted > testArenaBytes) {
      // The ask is checked; the run in that much needs a larger arena.
      std::printf("%s: asks for %llu workspace bytes, past the test arena; "
                  "not run in them\n",
                  name.c_str(), static_cast<unsigned long long>(wanted));
      return;
    }
    lethe_rt_tensor given = space;
    space = placeWorkspace(test, static_cast<int64_t>(wanted));
    lethe_rt_op_begin(test.context, 0);
    ASSERT_EQ(call(), LETHE_RT_OK) << name << ": " << test.lastError();
    EXPECT_EQ(lethe_rt_op_workspace_wanted(test.context), 0u)
        << name << " in the " << wanted << " bytes it asked for";
    expectClose(test.read<T>(result), reference, bound,
                name + " in the workspace it asked for");
    space = given;
  };

  std::vector<double> reference =
      referenceForward(c, x, w, c.bias ? &bias : nullptr);
  ASSERT_EQ(conv(), LETHE_RT_OK) << what << ": " << test.lastError();
  std::vector<T> first = test.read<T>(out);
  expectClose(first, reference, tolerance, what + " conv");
  ASSERT_EQ(conv(), LETHE_RT_OK) << what << ": " << test.lastError();
  expectSameBits(test.read<T>(out), first, what + " conv again");
  checkWantedWorkspace(conv, convWorkspace, out, reference, tolerance,
                       what + " conv");

  reference = referenceBackwardData(c, y, w, c.bias ? &xBias : nullptr);
  ASSERT_EQ(transpose(), LETHE_RT_OK) << what << ": " << test.lastError();
  first = test.read<T>(transposed);
  expectClose(first, reference, tolerance, what + " conv_transpose");
  ASSERT_EQ(transpose(), LETHE_RT_OK) << what << ": " << test.lastError();
  expectSameBits(test.read<T>(transposed), first, what + " transpose again");
  checkWantedWorkspace(transpose, transposeWorkspace, transposed, reference,
                       tolerance, what + " conv_transpose");

  reference = referenceBackwardFilter(c, x, y);
  ASSERT_EQ(gradWeight(), LETHE_RT_OK) << what << ": " << test.lastError();
  first = test.read<T>(dw);
  // The weight gradient sums over images and positions: scaled by their
  // count's root, the typical size of the sum.
  double terms = std::sqrt(static_cast<double>(countOf(yShape) / yShape[1]));
  expectClose(first, reference, tolerance * terms, what + " conv_grad_weight");
  ASSERT_EQ(gradWeight(), LETHE_RT_OK) << what << ": " << test.lastError();
  expectSameBits(test.read<T>(dw), first, what + " grad_weight again");
  checkWantedWorkspace(gradWeight, convWorkspace, dw, reference,
                       tolerance * terms, what + " conv_grad_weight");
}

/// checkCase over every case, with each of `workspaces`, in a fresh arena
/// each time.
template <typename T>
void checkEveryCase(ConvolutionTest &test,
                    std::initializer_list<Workspace> workspaces) {
  for (const Case &c : cases())
    for (Workspace workspace : workspaces) {
      checkCase<T>(test, c, workspace);
      test.nextOffset = 0;
      test.shapes.clear();
    }
}

TEST_F(ConvolutionTest, EveryCaseF32) {
  checkEveryCase<float>(*this, {Workspace::Null, Workspace::Planned});
}
TEST_F(ConvolutionTest, EveryCaseF64) {
  checkEveryCase<double>(*this, {Workspace::Planned});
}
TEST_F(ConvolutionTest, EveryCaseF16) {
  checkEveryCase<Half>(*this, {Workspace::Null});
}
TEST_F(ConvolutionTest, EveryCaseBF16) {
  checkEveryCase<BFloat16>(*this, {Workspace::Planned});
}

// output_padding at the stride: conv_transpose's out is one longer than any
// convolution's input for x, which cuDNN cannot size: the direct kernel,
// whose last element holds only the bias.
TEST_F(ConvolutionTest, OutputPaddingAtTheStride) {
  std::vector<float> xValues{1, 2, 3, 4}, wValues{1, 10, 100}, biasValues{0.5f};
  lethe_rt_tensor x = place({1, 1, 4}, LETHE_RT_F32, xValues);
  lethe_rt_tensor w = place({1, 1, 3}, LETHE_RT_F32, wValues);
  lethe_rt_tensor bias = place({1}, LETHE_RT_F32, biasValues);
  // 2 * (4 - 1) + 2 + 3 = 11.
  lethe_rt_tensor out = place<float>({1, 1, 11}, LETHE_RT_F32);
  int64_t strides[] = {2}, pads[] = {0, 0}, dilations[] = {1},
          outputPadding[] = {2};
  ASSERT_EQ(lethe_rt_conv_transpose(context, &x, &w, &bias, strides, pads,
                                    dilations, outputPadding, 1, &out, nullptr),
            LETHE_RT_OK)
      << lastError();
  // x[o] * w[k] lands at 2 o + k.
  std::vector<float> expected{1.5f,   10.5f, 102.5f, 20.5f, 203.5f, 30.5f,
                              304.5f, 40.5f, 400.5f, 0.5f,  0.5f};
  EXPECT_EQ(read<float>(out), expected);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// A 2-D convolution's tensors for the error tests: x 1x2x5x5, w 3x2x3x3, out
/// 1x3x3x3 (no pads).
struct ErrorOperands {
  lethe_rt_tensor x, w, out;
  int64_t strides[2] = {1, 1}, pads[4] = {0, 0, 0, 0}, dilations[2] = {1, 1};
};

ErrorOperands placeErrorOperands(ConvolutionTest &test) {
  return {test.place<float>({1, 2, 5, 5}, LETHE_RT_F32,
                            randomStorage<float>(50, 1)),
          test.place<float>({3, 2, 3, 3}, LETHE_RT_F32,
                            randomStorage<float>(54, 2)),
          test.place<float>({1, 3, 3, 3}, LETHE_RT_F32)};
}

TEST_F(ConvolutionTest, WorkspaceTooSmallNamesTheBytes) {
  ErrorOperands operands = placeErrorOperands(*this);
  // The planned bytes: 2 * 3 * 3 rows by 3 * 3 columns of 4 bytes.
  lethe_rt_tensor workspace = place<uint8_t>({647}, LETHE_RT_U8);
  EXPECT_EQ(lethe_rt_conv(context, &operands.x, &operands.w, nullptr,
                          operands.strides, operands.pads, operands.dilations,
                          1, &operands.out, &workspace),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(),
            "lethe_rt_conv: workspace holds 647 bytes, but the op's planned "
            "workspace needs 648; pass at least the op's workspace bytes, "
            "or NULL");
  workspace = place<uint8_t>({648}, LETHE_RT_U8);
  EXPECT_EQ(lethe_rt_conv(context, &operands.x, &operands.w, nullptr,
                          operands.strides, operands.pads, operands.dilations,
                          1, &operands.out, &workspace),
            LETHE_RT_OK)
      << lastError();
  lethe_rt_tensor wrongType = place<float>({162}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_conv_grad_weight(
                context, &operands.x, &operands.out, operands.strides,
                operands.pads, operands.dilations, 1, &operands.w, &wrongType),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_conv_grad_weight: workspace must be a "
                         "rank-1 u8 byte buffer, got f32 (162)");
}

TEST_F(ConvolutionTest, ErrorsAreTheCpuBackends) {
  ErrorOperands operands = placeErrorOperands(*this);
  lethe_rt_tensor wrongOut = place<float>({1, 4, 3, 3}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_conv(context, &operands.x, &operands.w, nullptr,
                          operands.strides, operands.pads, operands.dilations,
                          1, &wrongOut, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_conv: channels do not match: x "
                         "(1x2x5x5), w (3x2x3x3), out (1x4x3x3), group 1");
  int64_t badStrides[] = {1, 0};
  EXPECT_EQ(lethe_rt_conv(context, &operands.x, &operands.w, nullptr,
                          badStrides, operands.pads, operands.dilations, 1,
                          &operands.out, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_conv: spatial dim 1: strides and "
                         "dilations must be positive and pads non-negative");
  int64_t outputPadding[] = {0, 0};
  lethe_rt_tensor shortOut = place<float>({1, 2, 4, 5}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_conv_transpose(context, &operands.out, &operands.w,
                                    nullptr, operands.strides, operands.pads,
                                    operands.dilations, outputPadding, 1,
                                    &shortOut, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_conv_transpose: out's spatial dim 0 (4) "
                         "does not match x, w and the attributes (5)");
  EXPECT_EQ(lethe_rt_conv_transpose(context, &operands.out, &operands.w,
                                    nullptr, operands.strides, operands.pads,
                                    operands.dilations, nullptr, 1, &operands.x,
                                    nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_conv_transpose: output_padding is missing");
  lethe_rt_tensor wrongDy = place<float>({1, 3, 4, 3}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_conv_grad_weight(
                context, &operands.x, &wrongDy, operands.strides, operands.pads,
                operands.dilations, 1, &operands.w, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_conv_grad_weight: dy's spatial dim 0 (4) "
                         "does not match x, dw and the attributes");
}

TEST_F(ConvolutionTest, RefusesAnOutputOverlappingAnInput) {
  ErrorOperands operands = placeErrorOperands(*this);
  // out 1x2x3x3 over x's first 18 elements, with a 2-filter weight.
  lethe_rt_tensor w =
      place<float>({2, 2, 3, 3}, LETHE_RT_F32, randomStorage<float>(36, 3));
  std::vector<int64_t> shape{1, 2, 3, 3};
  lethe_rt_tensor out{operands.x.data, LETHE_RT_F32, 4, shape.data()};
  EXPECT_EQ(lethe_rt_conv(context, &operands.x, &w, nullptr, operands.strides,
                          operands.pads, operands.dilations, 1, &out, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_conv: out overlaps x (the cuda backend "
                         "does not convolve in place)");
}

} // namespace
