//===- Gemm.h - Deterministic matrix multiplication -------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The matrix-product engine behind lethe_rt_matmul and lethe_rt_gemm, usable
// by any kernel that reduces to a matrix product (convolution as im2col +
// GEMM).
//
// Determinism: every element of the product is one running sum in the compute
// type, started at +0 and updated in increasing k, one rounding per
// multiplication and per addition (the library is built with
// -ffp-contract=off, and nothing is reassociated). Blocking, packing, edge
// tiles and the matrix-vector paths change only the memory traffic, never that
// sequence, so an element's bits depend only on its row of A and column of B:
// not on M, N, how a product is split into calls, or the machine's thread
// count (the engine is single-threaded). OpenBLAS is not used: its sgemm
// gives different bits with different OPENBLAS_NUM_THREADS (its threaded
// driver splits K differently and repartitions M and N).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_CPU_GEMM_H
#define LETHE_RUNTIME_CPU_GEMM_H

#include "CpuRuntime.h"

#include <vector>

namespace lethe::rt {

/// A matrix operand in storage type T: element (i, j) is at
/// data[i * rowStride + j * colStride] (strides in elements, so a transposed
/// operand is the same data with the strides swapped).
template <typename T> struct MatrixRef {
  const T *data;
  int64_t rowStride;
  int64_t colStride;
};

/// Packing buffers in compute type C, reused across the products of one
/// kernel call.
template <typename C> struct GemmWorkspace {
  std::vector<C> packedA;
  std::vector<C> packedB;
};

/// Writes c[i * ldc + j] = sum over p in [0, k) of a(i, p) * b(p, j) for the
/// m x n product of a (m x k) and b (k x n), in the compute type of T (float
/// for Half, BFloat16 and float; double for double), summed as described in
/// the file comment. `c` must not overlap `a` or `b`. T is Half, BFloat16,
/// float or double.
template <typename T>
void multiplyMatrices(int64_t m, int64_t n, int64_t k, MatrixRef<T> a,
                      MatrixRef<T> b, ComputeType<T> *c, int64_t ldc,
                      GemmWorkspace<ComputeType<T>> &workspace);

} // namespace lethe::rt

#endif // LETHE_RUNTIME_CPU_GEMM_H
