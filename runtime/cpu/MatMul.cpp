//===- MatMul.cpp - Matrix-product kernels of the CPU backend -------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_matmul (numpy matmul) and lethe_rt_gemm (ONNX Gemm) on the
// deterministic engine of Gemm.h: each output element is the sequential sum
// over k in the compute type (f32 for f16, bf16 and f32; f64 for f64), then
// for gemm alpha * sum + beta * c in the compute type, rounded once to the
// output type.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "KernelUtils.h"

#include <algorithm>

using namespace lethe::rt;

namespace {

/// The products of a matmul: independent m x n products, one per pair of
/// element offsets at which its lhs and rhs matrices start.
struct BatchedProduct {
  int64_t m, n, k;
  std::vector<int64_t> lhsOffsets, rhsOffsets;
};

/// Computes `product` into `out` (of storage type T). Writes straight into
/// out when it has the compute type and overlaps no operand; else through a
/// compute-type scratch buffer rounded once at the end.
template <typename T>
void runMatmul(const BatchedProduct &product, const lethe_rt_tensor &lhs,
               const lethe_rt_tensor &rhs, const lethe_rt_tensor &out) {
  using C = ComputeType<T>;
  int64_t m = product.m, n = product.n, k = product.k;
  int64_t total = numElements(out);
  bool direct =
      std::is_same_v<T, C> && !overlaps(out, lhs) && !overlaps(out, rhs);
  std::vector<C> scratch(direct ? 0 : total);
  C *result = direct ? reinterpret_cast<C *>(out.data) : scratch.data();
  const T *lhsData = static_cast<const T *>(lhs.data);
  const T *rhsData = static_cast<const T *>(rhs.data);
  GemmWorkspace<C> workspace;
  for (size_t batch = 0; batch < product.lhsOffsets.size(); ++batch)
    multiplyMatrices<T>(m, n, k, {lhsData + product.lhsOffsets[batch], k, 1},
                        {rhsData + product.rhsOffsets[batch], n, 1},
                        result + batch * m * n, n, workspace);
  if (!direct) {
    for (int64_t i = 0; i < total; ++i)
      store<T>(out.data, i, scratch[i]);
  }
}

/// out = alpha * a' * b' + beta * c (c broadcast with `cStrides` over
/// (m, n); no c when c is null).
template <typename T>
void runGemm(int64_t m, int64_t n, int64_t k, MatrixRef<T> a, MatrixRef<T> b,
             const lethe_rt_tensor *c, const std::vector<int64_t> &cStrides,
             double alpha, double beta, const lethe_rt_tensor &out,
             bool direct) {
  using C = ComputeType<T>;
  std::vector<C> scratch(direct ? 0 : m * n);
  C *result = direct ? reinterpret_cast<C *>(out.data) : scratch.data();
  GemmWorkspace<C> workspace;
  multiplyMatrices<T>(m, n, k, a, b, result, n, workspace);
  C alphaValue = static_cast<C>(alpha), betaValue = static_cast<C>(beta);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      C value = alphaValue * result[i * n + j];
      if (c)
        value +=
            betaValue * load<T>(c->data, i * cStrides[0] + j * cStrides[1]);
      store<T>(out.data, i * n + j, value);
    }
  }
}

} // namespace

extern "C" lethe_rt_status lethe_rt_matmul(lethe_rt_context *context,
                                           const lethe_rt_tensor *lhs,
                                           const lethe_rt_tensor *rhs,
                                           const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_matmul";
  if (!checkFloatTensor(context, kernel, "lhs", lhs) ||
      !checkDtype(context, kernel, "rhs", rhs, lhs->dtype) ||
      !checkDtype(context, kernel, "out", out, lhs->dtype))
    return LETHE_RT_ERROR;
  MatmulShapes shapes;
  if (!report(context, kernel, matmulShapesError(*lhs, *rhs, *out, shapes)))
    return LETHE_RT_ERROR;
  int64_t m = shapes.m, n = shapes.n, k = shapes.k;
  if (numElements(*out) == 0)
    return LETHE_RT_OK;

  BatchedProduct product{m, n, k, {}, {}};
  if (lhs->rank >= 2 && shapes.rhsShared) {
    // rhs is shared by every batch: one product of all lhs rows at once
    // (row-independent, so the same bits as batch by batch).
    product.m = numElements(*out) / n;
    product.lhsOffsets = {0};
    product.rhsOffsets = {0};
  } else {
    forEachIndex(shapes.batchShape, {shapes.lhsStrides, shapes.rhsStrides},
                 [&](int64_t, const int64_t *offsets) {
                   product.lhsOffsets.push_back(offsets[0]);
                   product.rhsOffsets.push_back(offsets[1]);
                 });
  }
  dispatchFloat(lhs->dtype, [&](auto tag) {
    runMatmul<decltype(tag)>(product, *lhs, *rhs, *out);
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_gemm(lethe_rt_context *context,
                                         const lethe_rt_tensor *a,
                                         const lethe_rt_tensor *b,
                                         const lethe_rt_tensor *c, double alpha,
                                         double beta, int trans_a, int trans_b,
                                         const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_gemm";
  if (!checkFloatTensor(context, kernel, "a", a) ||
      !checkDtype(context, kernel, "b", b, a->dtype) ||
      (c && !checkDtype(context, kernel, "c", c, a->dtype)) ||
      !checkDtype(context, kernel, "out", out, a->dtype) ||
      !checkRank(context, kernel, "a", *a, 2) ||
      !checkRank(context, kernel, "b", *b, 2))
    return LETHE_RT_ERROR;
  int64_t m, n, k;
  std::vector<int64_t> cStrides;
  if (!report(context, kernel,
              gemmShapesError(*a, *b, c, trans_a, trans_b, *out, m, n, k,
                              cStrides)))
    return LETHE_RT_ERROR;
  if (m == 0 || n == 0)
    return LETHE_RT_OK;

  // Element (i, p) of op(a) and (p, j) of op(b), transposition being a swap
  // of strides.
  int64_t aRowStride = trans_a ? 1 : k, aColStride = trans_a ? m : 1;
  int64_t bRowStride = trans_b ? 1 : n, bColStride = trans_b ? k : 1;
  bool direct = (a->dtype == LETHE_RT_F32 || a->dtype == LETHE_RT_F64) &&
                !overlaps(*out, *a) && !overlaps(*out, *b) &&
                !(c && overlaps(*out, *c));
  dispatchFloat(a->dtype, [&](auto tag) {
    using T = decltype(tag);
    runGemm<T>(m, n, k,
               {static_cast<const T *>(a->data), aRowStride, aColStride},
               {static_cast<const T *>(b->data), bRowStride, bColStride}, c,
               cStrides, alpha, beta, *out, direct);
  });
  return LETHE_RT_OK;
}
