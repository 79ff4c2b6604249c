//===- ConvolutionTest.cpp - conv and conv_transpose kernels --------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Both kernels against direct loops in double on random inputs over strides,
// pads, dilations and groups, in 1-D, 2-D and 3-D; the column buffer of the
// convolutions in the caller's workspace, and the workspace checks.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

using namespace lethe::rt::testing;

namespace {

/// One convolution configuration (2 spatial dims unless `rank` says).
struct ConvCase {
  int32_t rank;
  int64_t batch, channels, filters, group;
  std::vector<int64_t> input, kernel, strides, pads, dilations;
};

/// Output spatial sizes of a convolution.
std::vector<int64_t> convOutput(const ConvCase &c) {
  std::vector<int64_t> output;
  for (int32_t d = 0; d < c.rank; ++d)
    output.push_back((c.input[d] + c.pads[d] + c.pads[d + c.rank] -
                      c.dilations[d] * (c.kernel[d] - 1) - 1) /
                         c.strides[d] +
                     1);
  return output;
}

/// Visits every multi-index below `dims`.
template <typename F> void forEach(const std::vector<int64_t> &dims, F &&f) {
  std::vector<int64_t> index(dims.size(), 0);
  int64_t total = 1;
  for (int64_t d : dims)
    total *= d;
  for (int64_t i = 0; i < total; ++i) {
    f(index);
    for (size_t d = dims.size(); d-- > 0;) {
      if (++index[d] < dims[d])
        break;
      index[d] = 0;
    }
  }
}

int64_t linear(const std::vector<int64_t> &index,
               const std::vector<int64_t> &dims) {
  int64_t offset = 0;
  for (size_t d = 0; d < dims.size(); ++d)
    offset = offset * dims[d] + index[d];
  return offset;
}

using ConvolutionTest = RuntimeTest;

TEST_F(ConvolutionTest, ConvMatchesDirectLoops) {
  std::vector<ConvCase> cases = {
      {2, 2, 3, 4, 1, {7, 6}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {2, 1, 4, 6, 2, {9, 8}, {3, 2}, {2, 3}, {0, 1, 2, 0}, {2, 1}},
      {2, 2, 4, 4, 4, {5, 5}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {1, 2, 3, 5, 1, {11}, {4}, {2}, {1, 2}, {2}},
      {3,
       1,
       2,
       3,
       1,
       {4, 5, 3},
       {2, 3, 2},
       {1, 2, 1},
       {0, 1, 1, 1, 0, 0},
       {1, 1, 2}},
  };
  uint64_t seed = 1;
  for (const ConvCase &c : cases) {
    std::vector<int64_t> output = convOutput(c);
    std::vector<int64_t> xShape = {c.batch, c.channels},
                         wShape = {c.filters, c.channels / c.group};
    std::vector<int64_t> outShape = {c.batch, c.filters};
    xShape.insert(xShape.end(), c.input.begin(), c.input.end());
    wShape.insert(wShape.end(), c.kernel.begin(), c.kernel.end());
    outShape.insert(outShape.end(), output.begin(), output.end());
    OwnedTensor<float> x(xShape, LETHE_RT_F32), w(wShape, LETHE_RT_F32),
        bias({c.filters}, LETHE_RT_F32), out(outShape, LETHE_RT_F32);
    x.values = randomFloats(x.values.size(), seed++);
    w.values = randomFloats(w.values.size(), seed++);
    bias.values = randomFloats(bias.values.size(), seed++);
    lethe_rt_tensor xv = x.view(), wv = w.view(), bv = bias.view(),
                    ov = out.view();
    ASSERT_EQ(lethe_rt_conv(context, &xv, &wv, &bv, c.strides.data(),
                            c.pads.data(), c.dilations.data(), c.group, &ov,
                            nullptr),
              LETHE_RT_OK)
        << lastError();

    int64_t groupChannels = c.channels / c.group,
            groupFilters = c.filters / c.group;
    forEach(outShape, [&](const std::vector<int64_t> &o) {
      int64_t n = o[0], m = o[1], g = m / groupFilters;
      double sum = bias.values[m];
      for (int64_t ci = 0; ci < groupChannels; ++ci)
        forEach(c.kernel, [&](const std::vector<int64_t> &k) {
          std::vector<int64_t> xi = {n, g * groupChannels + ci};
          for (int32_t d = 0; d < c.rank; ++d) {
            int64_t p =
                o[d + 2] * c.strides[d] - c.pads[d] + k[d] * c.dilations[d];
            if (p < 0 || p >= c.input[d])
              return;
            xi.push_back(p);
          }
          std::vector<int64_t> wi = {m, ci};
          wi.insert(wi.end(), k.begin(), k.end());
          sum += double(x.values[linear(xi, xShape)]) *
                 w.values[linear(wi, wShape)];
        });
      EXPECT_NEAR(out.values[linear(o, outShape)], sum, 1e-4)
          << "rank " << c.rank << " group " << c.group;
    });

    // Same inputs, same bits.
    OwnedTensor<float> again(outShape, LETHE_RT_F32);
    lethe_rt_tensor av = again.view();
    ASSERT_EQ(lethe_rt_conv(context, &xv, &wv, &bv, c.strides.data(),
                            c.pads.data(), c.dilations.data(), c.group, &av,
                            nullptr),
              LETHE_RT_OK);
    EXPECT_EQ(0, std::memcmp(again.values.data(), out.values.data(),
                             out.values.size() * sizeof(float)));
  }
}

TEST_F(ConvolutionTest, ConvTransposeMatchesScatterLoops) {
  // x (N, C, in), w (C, M/g, k): out[n, m, i*s - pb + k*d] += x * w.
  struct Case {
    int64_t channels, filters, group, size, kernel, stride, padBegin, padEnd,
        dilation, outputPadding;
  };
  std::vector<Case> cases = {{3, 4, 1, 5, 3, 2, 1, 1, 1, 1},
                             {4, 6, 2, 4, 2, 2, 0, 0, 1, 0},
                             {2, 2, 1, 3, 3, 1, 0, 2, 2, 0}};
  uint64_t seed = 100;
  for (const Case &c : cases) {
    int64_t outSize = c.stride * (c.size - 1) + c.outputPadding +
                      c.dilation * (c.kernel - 1) + 1 - c.padBegin - c.padEnd;
    OwnedTensor<double> x({2, c.channels, c.size, c.size}, LETHE_RT_F64),
        w({c.channels, c.filters / c.group, c.kernel, c.kernel}, LETHE_RT_F64),
        out({2, c.filters, outSize, outSize}, LETHE_RT_F64);
    for (double &v : x.values)
      v = randomFloats(1, seed++)[0];
    for (double &v : w.values)
      v = randomFloats(1, seed++)[0];
    std::vector<int64_t> strides = {c.stride, c.stride},
                         pads = {c.padBegin, c.padBegin, c.padEnd, c.padEnd},
                         dilations = {c.dilation, c.dilation},
                         outputPadding = {c.outputPadding, c.outputPadding};
    lethe_rt_tensor xv = x.view(), wv = w.view(), ov = out.view();
    ASSERT_EQ(lethe_rt_conv_transpose(context, &xv, &wv, nullptr,
                                      strides.data(), pads.data(),
                                      dilations.data(), outputPadding.data(),
                                      c.group, &ov, nullptr),
              LETHE_RT_OK)
        << lastError();
    std::vector<double> expected(out.values.size(), 0.0);
    int64_t gc = c.channels / c.group, gf = c.filters / c.group;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t ch = 0; ch < c.channels; ++ch)
        for (int64_t i = 0; i < c.size; ++i)
          for (int64_t j = 0; j < c.size; ++j)
            for (int64_t f = 0; f < gf; ++f)
              for (int64_t ki = 0; ki < c.kernel; ++ki)
                for (int64_t kj = 0; kj < c.kernel; ++kj) {
                  int64_t oi = i * c.stride - c.padBegin + ki * c.dilation;
                  int64_t oj = j * c.stride - c.padBegin + kj * c.dilation;
                  if (oi < 0 || oi >= outSize || oj < 0 || oj >= outSize)
                    continue;
                  int64_t m = (ch / gc) * gf + f;
                  expected[((n * c.filters + m) * outSize + oi) * outSize +
                           oj] +=
                      x.values[((n * c.channels + ch) * c.size + i) * c.size +
                               j] *
                      w.values[((ch * gf + f) * c.kernel + ki) * c.kernel + kj];
                }
    for (size_t i = 0; i < expected.size(); ++i)
      EXPECT_NEAR(out.values[i], expected[i], 1e-12) << "element " << i;
  }
}

TEST_F(ConvolutionTest, RejectsMismatchedChannels) {
  OwnedTensor<float> x({1, 3, 5, 5}, LETHE_RT_F32),
      w({4, 2, 3, 3}, LETHE_RT_F32), out({1, 4, 3, 3}, LETHE_RT_F32);
  std::vector<int64_t> ones = {1, 1}, zeros = {0, 0, 0, 0};
  lethe_rt_tensor xv = x.view(), wv = w.view(), ov = out.view();
  EXPECT_EQ(lethe_rt_conv(context, &xv, &wv, nullptr, ones.data(), zeros.data(),
                          ones.data(), 1, &ov, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_conv: channels do not match: x (1x3x5x5), "
                         "w (4x2x3x3), out (1x4x3x3), group 1");
}

TEST_F(ConvolutionTest, RejectsWrongOutputShape) {
  OwnedTensor<float> x({1, 2, 5, 5}, LETHE_RT_F32),
      w({4, 2, 3, 3}, LETHE_RT_F32), out({1, 4, 5, 5}, LETHE_RT_F32);
  std::vector<int64_t> ones = {1, 1}, zeros = {0, 0, 0, 0};
  lethe_rt_tensor xv = x.view(), wv = w.view(), ov = out.view();
  EXPECT_EQ(lethe_rt_conv(context, &xv, &wv, nullptr, ones.data(), zeros.data(),
                          ones.data(), 1, &ov, nullptr),
            LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_conv: out's spatial dim 0 (5) does not "
                         "match x, w and the attributes");
}

/// A byte buffer for a kernel's workspace, filled with a pattern so that a
/// test sees whether the kernel wrote it.
struct Workspace {
  explicit Workspace(int64_t bytes)
      : tensor({bytes}, LETHE_RT_U8, std::vector<uint8_t>(bytes, 0xab)) {}
  bool untouched() const {
    return std::all_of(tensor.values.begin(), tensor.values.end(),
                       [](uint8_t byte) { return byte == 0xab; });
  }
  OwnedTensor<uint8_t> tensor;
};

TEST_F(ConvolutionTest, KernelsKeepTheirColumnsInTheWorkspace) {
  // x (2, 4, 6, 5) with w (6, 2, 3, 3), group 2, pads 1: the column buffer
  // has 2 * 3 * 3 rows and 6 * 5 columns of f32, 2160 bytes, for the
  // convolution, its weight gradient and the transposed convolution of its
  // output with w.
  OwnedTensor<float> x({2, 4, 6, 5}, LETHE_RT_F32),
      w({6, 2, 3, 3}, LETHE_RT_F32), y({2, 6, 6, 5}, LETHE_RT_F32);
  x.values = randomFloats(x.values.size(), 7);
  w.values = randomFloats(w.values.size(), 8);
  y.values = randomFloats(y.values.size(), 9);
  std::vector<int64_t> ones = {1, 1}, pads = {1, 1, 1, 1}, zeros = {0, 0};
  lethe_rt_tensor xv = x.view(), wv = w.view(), yv = y.view();
  const int64_t needed = 2 * 3 * 3 * 6 * 5 * sizeof(float);
  struct Kernel {
    const char *name;
    std::vector<int64_t> outShape;
    std::function<lethe_rt_status(const lethe_rt_tensor *,
                                  const lethe_rt_tensor *)>
        run;
  };
  std::vector<Kernel> kernels = {
      {"lethe_rt_conv",
       {2, 6, 6, 5},
       [&](const lethe_rt_tensor *out, const lethe_rt_tensor *workspace) {
         return lethe_rt_conv(context, &xv, &wv, nullptr, ones.data(),
                              pads.data(), ones.data(), 2, out, workspace);
       }},
      {"lethe_rt_conv_grad_weight",
       {6, 2, 3, 3},
       [&](const lethe_rt_tensor *out, const lethe_rt_tensor *workspace) {
         return lethe_rt_conv_grad_weight(context, &xv, &yv, ones.data(),
                                          pads.data(), ones.data(), 2, out,
                                          workspace);
       }},
      {"lethe_rt_conv_transpose",
       {2, 4, 6, 5},
       [&](const lethe_rt_tensor *out, const lethe_rt_tensor *workspace) {
         return lethe_rt_conv_transpose(context, &yv, &wv, nullptr, ones.data(),
                                        pads.data(), ones.data(), zeros.data(),
                                        2, out, workspace);
       }},
  };
  for (const Kernel &kernel : kernels) {
    OwnedTensor<float> onHeap(kernel.outShape, LETHE_RT_F32),
        inWorkspace(kernel.outShape, LETHE_RT_F32);
    lethe_rt_tensor heapView = onHeap.view(),
                    workspaceView = inWorkspace.view();
    ASSERT_EQ(kernel.run(&heapView, nullptr), LETHE_RT_OK) << lastError();
    // Exactly the bytes needed: the kernel writes its columns there and
    // computes the same bits as with its own buffer.
    Workspace workspace(needed);
    lethe_rt_tensor bytes = workspace.tensor.view();
    ASSERT_EQ(kernel.run(&workspaceView, &bytes), LETHE_RT_OK) << lastError();
    EXPECT_FALSE(workspace.untouched()) << kernel.name;
    EXPECT_EQ(0, std::memcmp(onHeap.values.data(), inWorkspace.values.data(),
                             onHeap.values.size() * sizeof(float)))
        << kernel.name;
    // A byte short is an error that names the kernel and the bytes needed.
    Workspace small(needed - 1);
    lethe_rt_tensor smallBytes = small.tensor.view();
    EXPECT_EQ(kernel.run(&workspaceView, &smallBytes), LETHE_RT_ERROR);
    EXPECT_EQ(lastError(),
              std::string(kernel.name) +
                  ": workspace holds 2159 bytes, but the column buffer needs "
                  "2160; pass at least the op's workspace bytes, or NULL");
    EXPECT_TRUE(small.untouched()) << kernel.name;
  }

  // A workspace is bytes.
  OwnedTensor<float> out({2, 6, 6, 5}, LETHE_RT_F32),
      floats({540}, LETHE_RT_F32);
  lethe_rt_tensor ov = out.view(), fv = floats.view();
  EXPECT_EQ(kernels[0].run(&ov, &fv), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_conv: workspace must be a rank-1 u8 byte "
                         "buffer, got f32 (540)");
}

TEST_F(ConvolutionTest, HalfTransposedColumnsAreSingles) {
  // The transposed convolution keeps the GEMM's products for col2im in the
  // compute precision: f32 columns for f16 data, which
  // ConvTransposeOp::getWorkspaceBytes counts. x (1, 2, 3, 3), w (2, 1, 2,
  // 2): 4 rows and 9 columns, 144 bytes.
  const uint16_t halves[] = {0x3800, 0xb800, 0x3c00, 0x3400}; // .5 -.5 1 .25
  OwnedTensor<uint16_t> x({1, 2, 3, 3}, LETHE_RT_F16),
      w({2, 1, 2, 2}, LETHE_RT_F16), onHeap({1, 1, 4, 4}, LETHE_RT_F16),
      inWorkspace({1, 1, 4, 4}, LETHE_RT_F16);
  for (size_t i = 0; i < x.values.size(); ++i)
    x.values[i] = halves[i % 4];
  for (size_t i = 0; i < w.values.size(); ++i)
    w.values[i] = halves[(i + 1) % 4];
  std::vector<int64_t> ones = {1, 1}, zeros = {0, 0}, pads = {0, 0, 0, 0};
  lethe_rt_tensor xv = x.view(), wv = w.view(), hv = onHeap.view(),
                  iv = inWorkspace.view();
  auto run = [&](const lethe_rt_tensor *out, const lethe_rt_tensor *workspace) {
    return lethe_rt_conv_transpose(context, &xv, &wv, nullptr, ones.data(),
                                   pads.data(), ones.data(), zeros.data(), 1,
                                   out, workspace);
  };
  ASSERT_EQ(run(&hv, nullptr), LETHE_RT_OK) << lastError();
  Workspace halfSized(72), enough(144);
  lethe_rt_tensor halfBytes = halfSized.tensor.view(),
                  bytes = enough.tensor.view();
  EXPECT_EQ(run(&iv, &halfBytes), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_conv_transpose: workspace holds 72 bytes, "
                         "but the column buffer needs 144; pass at least the "
                         "op's workspace bytes, or NULL");
  ASSERT_EQ(run(&iv, &bytes), LETHE_RT_OK) << lastError();
  EXPECT_EQ(onHeap.values, inWorkspace.values);
}

} // namespace
