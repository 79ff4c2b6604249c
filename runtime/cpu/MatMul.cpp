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
  if (lhs->rank < 1 || rhs->rank < 1)
    return fail(context, kernel, "%s must have rank >= 1, got a scalar",
                lhs->rank < 1 ? "lhs" : "rhs");

  // 1-D operands are promoted to matrices (lhs to a row, rhs to a column)
  // whose promoted dim is then dropped from the result.
  int32_t lhsRank = lhs->rank, rhsRank = rhs->rank;
  int64_t m = lhsRank >= 2 ? lhs->shape[lhsRank - 2] : 1;
  int64_t k = lhs->shape[lhsRank - 1];
  int64_t rhsK = rhsRank >= 2 ? rhs->shape[rhsRank - 2] : rhs->shape[0];
  int64_t n = rhsRank >= 2 ? rhs->shape[rhsRank - 1] : 1;
  if (k != rhsK)
    return fail(context, kernel,
                "lhs (%s) and rhs (%s) have different contraction dims %lld "
                "and %lld",
                shapeString(*lhs).c_str(), shapeString(*rhs).c_str(),
                static_cast<long long>(k), static_cast<long long>(rhsK));

  // Broadcast the batch dims (all but the last two), right-aligned.
  int32_t lhsBatchRank = std::max(lhsRank - 2, 0);
  int32_t rhsBatchRank = std::max(rhsRank - 2, 0);
  int32_t batchRank = std::max(lhsBatchRank, rhsBatchRank);
  std::vector<int64_t> batchShape(batchRank), lhsStrides(batchRank, 0),
      rhsStrides(batchRank, 0);
  int64_t lhsStride = m * k, rhsStride = k * n;
  for (int32_t dim = batchRank; dim-- > 0;) {
    int32_t lhsDim = dim - (batchRank - lhsBatchRank);
    int32_t rhsDim = dim - (batchRank - rhsBatchRank);
    int64_t lhsSize = lhsDim >= 0 ? lhs->shape[lhsDim] : 1;
    int64_t rhsSize = rhsDim >= 0 ? rhs->shape[rhsDim] : 1;
    if (lhsSize != rhsSize && lhsSize != 1 && rhsSize != 1)
      return fail(context, kernel,
                  "the batch dims of lhs (%s) and rhs (%s) do not broadcast",
                  shapeString(*lhs).c_str(), shapeString(*rhs).c_str());
    batchShape[dim] = std::max(lhsSize, rhsSize);
    if (lhsSize != 1)
      lhsStrides[dim] = lhsStride;
    if (rhsSize != 1)
      rhsStrides[dim] = rhsStride;
    lhsStride *= lhsSize;
    rhsStride *= rhsSize;
  }
  std::vector<int64_t> expected = batchShape;
  if (lhsRank >= 2)
    expected.push_back(m);
  if (rhsRank >= 2)
    expected.push_back(n);
  if (shapeOf(*out) != expected)
    return fail(context, kernel,
                "out (%s) must be %s for lhs (%s) and rhs (%s)",
                shapeString(*out).c_str(), shapeText(expected).c_str(),
                shapeString(*lhs).c_str(), shapeString(*rhs).c_str());
  if (numElements(*out) == 0)
    return LETHE_RT_OK;

  BatchedProduct product{m, n, k, {}, {}};
  if (lhsRank >= 2 && rhsStride == k * n) {
    // rhs is shared by every batch: one product of all lhs rows at once
    // (row-independent, so the same bits as batch by batch).
    product.m = numElements(*out) / n;
    product.lhsOffsets = {0};
    product.rhsOffsets = {0};
  } else {
    forEachIndex(batchShape, {lhsStrides, rhsStrides},
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
  int64_t m = trans_a ? a->shape[1] : a->shape[0];
  int64_t k = trans_a ? a->shape[0] : a->shape[1];
  int64_t bK = trans_b ? b->shape[1] : b->shape[0];
  int64_t n = trans_b ? b->shape[0] : b->shape[1];
  if (k != bK)
    return fail(context, kernel,
                "a (%s, trans_a %d) and b (%s, trans_b %d) have different "
                "contraction dims %lld and %lld",
                shapeString(*a).c_str(), trans_a ? 1 : 0,
                shapeString(*b).c_str(), trans_b ? 1 : 0,
                static_cast<long long>(k), static_cast<long long>(bK));
  std::vector<int64_t> expected{m, n};
  if (shapeOf(*out) != expected)
    return fail(context, kernel, "out (%s) must be %s",
                shapeString(*out).c_str(), shapeText(expected).c_str());
  std::vector<int64_t> cStrides;
  if (c && !broadcastStrides(*c, *out, cStrides))
    return fail(context, kernel, "c (%s) does not broadcast to out (%s)",
                shapeString(*c).c_str(), shapeString(*out).c_str());
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
