//===- MatMul.cu - Matrix-product kernels of the CUDA backend -------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_matmul (numpy matmul, batch dims broadcast) and lethe_rt_gemm
// (ONNX Gemm) through cuBLAS on the compute stream. Products accumulate in
// the compute type (f32 for f16, bf16 and f32, never TF32; f64 for f64) and
// are rounded once to the output type, as on the CPU backend; the order of
// the sum over k is cuBLAS's, so the bits differ from the CPU backend's
// within rounding. cuBLAS gives the same bits for the same call on the same
// GPU, which recompute needs.
//
// cuBLAS is column-major: the row-major m x n product out = op(a) op(b) is
// computed as its column-major transpose out^T = op(b)^T op(a)^T, which
// reads the same memory with the operands swapped.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"

#include <algorithm>

using namespace lethe::rt;

namespace {

/// How cuBLAS names a float dtype and the type it multiplies in; false for a
/// dtype that is not a float.
bool blasTypesOf(lethe_rt_dtype dtype, cudaDataType_t &data,
                 cublasComputeType_t &compute) {
  // CUBLAS_COMPUTE_32F (not ..._FAST_TF32 or ..._FAST_16F): full f32
  // products and sums, as the CPU backend computes f16, bf16 and f32.
  compute = CUBLAS_COMPUTE_32F;
  switch (dtype) {
  case LETHE_RT_F16:
    data = CUDA_R_16F;
    return true;
  case LETHE_RT_BF16:
    data = CUDA_R_16BF;
    return true;
  case LETHE_RT_F32:
    data = CUDA_R_32F;
    return true;
  case LETHE_RT_F64:
    data = CUDA_R_64F;
    compute = CUBLAS_COMPUTE_64F;
    return true;
  default:
    return false;
  }
}

/// One strided batch of row-major products on the compute stream: for each
/// batch i < `batches`, out_i = alpha * op(a_i) op(b_i) + beta * out_i, with
/// op(a_i) m x k starting `aStride` elements after a_(i-1) (0: shared), and
/// likewise b_i (k x n) and out_i (m x n). `a` is stored m x k, or k x m
/// when transA; `b` k x n, or n x k when transB. With beta 0, out is not
/// read.
bool multiply(lethe_rt_context *context, const char *call, lethe_rt_dtype dtype,
              int64_t m, int64_t n, int64_t k, bool transA, bool transB,
              const void *a, int64_t aStride, const void *b, int64_t bStride,
              void *out, int64_t outStride, int64_t batches, double alpha,
              double beta) {
  cudaDataType_t dataType;
  cublasComputeType_t computeType;
  blasTypesOf(dtype, dataType, computeType);
  // The scalars have the compute type's precision.
  float alphaFloat = static_cast<float>(alpha),
        betaFloat = static_cast<float>(beta);
  bool doubleScalars = computeType == CUBLAS_COMPUTE_64F;
  const void *alphaPointer =
      doubleScalars ? static_cast<const void *>(&alpha) : &alphaFloat;
  const void *betaPointer =
      doubleScalars ? static_cast<const void *>(&beta) : &betaFloat;
  // cuBLAS wants leading dims >= 1 even where k is 0.
  int64_t aLeading = std::max<int64_t>(transA ? m : k, 1),
          bLeading = std::max<int64_t>(transB ? k : n, 1);
  return checkCublas(context, call, "cublasGemmStridedBatchedEx_64",
                     cublasGemmStridedBatchedEx_64(
                         context->cublas, transB ? CUBLAS_OP_T : CUBLAS_OP_N,
                         transA ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                         alphaPointer, b, dataType, bLeading, bStride, a,
                         dataType, aLeading, aStride, betaPointer, out,
                         dataType, n, outStride, batches, computeType,
                         CUBLAS_GEMM_DEFAULT));
}

/// out[i] = in[offset of i] for a contiguous `out` read from `in` through a
/// broadcast map, elements copied as words of their size.
template <typename Word>
__global__ void broadcastKernel(const Word *in, Word *out, int64_t count,
                                BroadcastMap<1> map) {
  LETHE_GRID_STRIDE_LOOP(i, count) {
    int64_t offsets[1];
    map.offsetsAt(i, offsets);
    out[i] = in[offsets[0]];
  }
}

/// Writes `in` broadcast (with `strides`) to the contiguous `out`.
bool broadcastInto(lethe_rt_context *context, const char *call,
                   const lethe_rt_tensor &in, const lethe_rt_tensor &out,
                   const std::vector<int64_t> &strides) {
  BroadcastMap<1> map;
  makeBroadcastMap(shapeOf(out), {strides}, map); // out has rank 2: fits
  int64_t count = numElements(out);
  auto launch = [&](auto word) {
    using Word = decltype(word);
    return launchElementwise(context, call, "broadcastKernel", count,
                             broadcastKernel<Word>,
                             static_cast<const Word *>(in.data),
                             static_cast<Word *>(out.data), count, map);
  };
  return lethe_rt_dtype_size(in.dtype) == 2   ? launch(uint16_t{})
         : lethe_rt_dtype_size(in.dtype) == 4 ? launch(uint32_t{})
                                              : launch(uint64_t{});
}

} // namespace

extern "C" lethe_rt_status lethe_rt_matmul(lethe_rt_context *context,
                                           const lethe_rt_tensor *lhs,
                                           const lethe_rt_tensor *rhs,
                                           const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_matmul";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  if (!checkFloatTensor(context, kernel, "lhs", lhs) ||
      !checkDtype(context, kernel, "rhs", rhs, lhs->dtype) ||
      !checkDtype(context, kernel, "out", out, lhs->dtype))
    return LETHE_RT_ERROR;
  MatmulShapes shapes;
  if (!report(context, kernel, matmulShapesError(*lhs, *rhs, *out, shapes)))
    return LETHE_RT_ERROR;
  int64_t m = shapes.m, n = shapes.n, k = shapes.k;
  // cuBLAS writes out while it reads the operands.
  if (!checkNoOverlap(context, kernel, "out", *out,
                      {{"lhs", lhs}, {"rhs", rhs}}, "multiply"))
    return LETHE_RT_ERROR;
  if (numElements(*out) == 0)
    return LETHE_RT_OK;

  if (lhs->rank >= 2 && shapes.rhsShared) {
    // rhs is shared by every batch: one product of all lhs rows at once.
    return multiply(context, kernel, lhs->dtype, numElements(*out) / n, n, k,
                    false, false, lhs->data, 0, rhs->data, 0, out->data, 0, 1,
                    1.0, 0.0)
               ? LETHE_RT_OK
               : LETHE_RT_ERROR;
  }
  // Each batch dim walks lhs, rhs and out with a stride of its own (0 where
  // an operand broadcasts): merged where all three continue the next dim,
  // the innermost is one strided-batched call, and the outer ones are looped.
  BroadcastMap<3> batches;
  if (!makeBroadcastMap(
          shapes.batchShape,
          {shapes.lhsStrides, shapes.rhsStrides, shapes.outStrides}, batches)) {
    failRankLimit(context, kernel, "out", *out, "batch dims that do not merge");
    return LETHE_RT_ERROR;
  }
  int64_t inner = 1, innerStrides[3] = {0, 0, 0};
  if (batches.rank > 0) {
    --batches.rank;
    inner = batches.shape[batches.rank];
    for (int operand = 0; operand < 3; ++operand)
      innerStrides[operand] = batches.strides[operand][batches.rank];
  }
  int64_t outer = 1;
  for (int32_t dim = 0; dim < batches.rank; ++dim)
    outer *= batches.shape[dim];
  size_t elementSize = lethe_rt_dtype_size(lhs->dtype);
  for (int64_t index = 0; index < outer; ++index) {
    int64_t offsets[3] = {0, 0, 0}, rest = index;
    for (int32_t dim = batches.rank; dim-- > 0;) {
      int64_t position = rest % batches.shape[dim];
      rest /= batches.shape[dim];
      for (int operand = 0; operand < 3; ++operand)
        offsets[operand] += position * batches.strides[operand][dim];
    }
    if (!multiply(
            context, kernel, lhs->dtype, m, n, k, false, false,
            static_cast<const char *>(lhs->data) + offsets[0] * elementSize,
            innerStrides[0],
            static_cast<const char *>(rhs->data) + offsets[1] * elementSize,
            innerStrides[1],
            static_cast<char *>(out->data) + offsets[2] * elementSize,
            innerStrides[2], inner, 1.0, 0.0))
      return LETHE_RT_ERROR;
  }
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_gemm(lethe_rt_context *context,
                                         const lethe_rt_tensor *a,
                                         const lethe_rt_tensor *b,
                                         const lethe_rt_tensor *c, double alpha,
                                         double beta, int trans_a, int trans_b,
                                         const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_gemm";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
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
  // c may be out itself (cuBLAS's own form, C = alpha A B + beta C), but not
  // another view of its memory.
  bool cIsOut = c && c->data == out->data && shapeOf(*c) == shapeOf(*out);
  if (!checkNoOverlap(context, kernel, "out", *out, {{"a", a}, {"b", b}},
                      "multiply") ||
      (c && !cIsOut &&
       !checkNoOverlap(context, kernel, "out", *out, {{"c", c}}, "multiply")))
    return LETHE_RT_ERROR;
  if (m == 0 || n == 0)
    return LETHE_RT_OK;
  // beta * c is added by cuBLAS to what out holds: c broadcast into it first.
  if (c && !cIsOut && !broadcastInto(context, kernel, *c, *out, cStrides))
    return LETHE_RT_ERROR;
  return multiply(context, kernel, a->dtype, m, n, k, trans_a != 0,
                  trans_b != 0, a->data, 0, b->data, 0, out->data, 0, 1, alpha,
                  c ? beta : 0.0)
             ? LETHE_RT_OK
             : LETHE_RT_ERROR;
}
