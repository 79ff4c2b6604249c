//===- MatMulTest.cpp - Matrix products on CUDA ---------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_matmul (batch dims broadcast, 1-D operands) and lethe_rt_gemm
// (transposes, c broadcast) through cuBLAS, against double-precision
// references.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"

using namespace lethe::rt::testing;

namespace {

using MatMulTest = CudaRuntimeTest;

/// lhs (B..., m, k) times rhs (B..., k, n) with the batch dims broadcast,
/// in double: both given with explicit batch shapes of equal rank.
std::vector<double> referenceMatmul(const std::vector<double> &lhs,
                                    const std::vector<int64_t> &lhsBatch,
                                    const std::vector<double> &rhs,
                                    const std::vector<int64_t> &rhsBatch,
                                    int64_t m, int64_t k, int64_t n) {
  size_t rank = lhsBatch.size();
  std::vector<int64_t> batch(rank);
  int64_t total = 1;
  for (size_t d = 0; d < rank; ++d)
    total *= batch[d] = std::max(lhsBatch[d], rhsBatch[d]);
  std::vector<double> out;
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t rest = linear, lhsIndex = 0, rhsIndex = 0, lhsScale = 1,
            rhsScale = 1;
    for (size_t d = rank; d-- > 0;) {
      int64_t position = rest % batch[d];
      rest /= batch[d];
      lhsIndex += (lhsBatch[d] == 1 ? 0 : position) * lhsScale;
      rhsIndex += (rhsBatch[d] == 1 ? 0 : position) * rhsScale;
      lhsScale *= lhsBatch[d];
      rhsScale *= rhsBatch[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += lhs[lhsIndex * m * k + i * k + p] *
                 rhs[rhsIndex * k * n + p * n + j];
        out.push_back(sum);
      }
  }
  return out;
}

template <typename T>
void checkBatchedMatmul(MatMulTest &test, lethe_rt_dtype dtype) {
  // lhs (2, 1, 5, 7) and rhs (3, 7, 4): out (2, 3, 5, 4); the broadcast
  // batch dims do not merge, so this takes the looped path.
  std::vector<T> lhsValues = randomValues<T>(2 * 5 * 7, 11);
  std::vector<T> rhsValues = randomValues<T>(3 * 7 * 4, 12);
  lethe_rt_tensor lhs = test.place<T>({2, 1, 5, 7}, dtype, lhsValues);
  lethe_rt_tensor rhs = test.place<T>({3, 7, 4}, dtype, rhsValues);
  lethe_rt_tensor out = test.place<T>({2, 3, 5, 4}, dtype);
  ASSERT_EQ(lethe_rt_matmul(test.context, &lhs, &rhs, &out), LETHE_RT_OK)
      << test.lastError();
  expectNear(test.read<T>(out),
             referenceMatmul({lhsValues.begin(), lhsValues.end()}, {2, 1},
                             {rhsValues.begin(), rhsValues.end()}, {1, 3}, 5, 7,
                             4),
             "batched matmul");

  // A shared rhs: one product of all the rows of lhs (4, 5, 7).
  std::vector<T> rowsValues = randomValues<T>(4 * 5 * 7, 13);
  lethe_rt_tensor rows = test.place<T>({4, 5, 7}, dtype, rowsValues);
  lethe_rt_tensor matrix =
      test.place<T>({7, 4}, dtype, {rhsValues.begin(), rhsValues.begin() + 28});
  lethe_rt_tensor shared = test.place<T>({4, 5, 4}, dtype);
  ASSERT_EQ(lethe_rt_matmul(test.context, &rows, &matrix, &shared), LETHE_RT_OK)
      << test.lastError();
  expectNear(test.read<T>(shared),
             referenceMatmul({rowsValues.begin(), rowsValues.end()}, {1},
                             {rhsValues.begin(), rhsValues.begin() + 28}, {1},
                             20, 7, 4),
             "shared-rhs matmul");

  // A 1-D lhs against batched rhs (3, 7, 4): out (3, 4).
  lethe_rt_tensor vector =
      test.place<T>({7}, dtype, {lhsValues.begin(), lhsValues.begin() + 7});
  lethe_rt_tensor rowsOut = test.place<T>({3, 4}, dtype);
  ASSERT_EQ(lethe_rt_matmul(test.context, &vector, &rhs, &rowsOut), LETHE_RT_OK)
      << test.lastError();
  expectNear(test.read<T>(rowsOut),
             referenceMatmul({lhsValues.begin(), lhsValues.begin() + 7}, {1},
                             {rhsValues.begin(), rhsValues.end()}, {3}, 1, 7,
                             4),
             "vector-matrix matmul");
}

TEST_F(MatMulTest, BatchedF32) {
  checkBatchedMatmul<float>(*this, LETHE_RT_F32);
}
TEST_F(MatMulTest, BatchedF64) {
  checkBatchedMatmul<double>(*this, LETHE_RT_F64);
}

template <typename T> void checkGemm(MatMulTest &test, lethe_rt_dtype dtype) {
  // m 6, k 9, n 5; c (1, 5) broadcast over the rows.
  const int64_t m = 6, k = 9, n = 5;
  std::vector<T> aValues = randomValues<T>(m * k, 21);
  std::vector<T> bValues = randomValues<T>(k * n, 22);
  std::vector<T> cValues = randomValues<T>(n, 23);
  const double alpha = 0.75, beta = -1.5;
  for (int transA = 0; transA < 2; ++transA) {
    for (int transB = 0; transB < 2; ++transB) {
      lethe_rt_tensor a = test.place<T>(transA ? std::vector<int64_t>{k, m}
                                               : std::vector<int64_t>{m, k},
                                        dtype, aValues);
      lethe_rt_tensor b = test.place<T>(transB ? std::vector<int64_t>{n, k}
                                               : std::vector<int64_t>{k, n},
                                        dtype, bValues);
      lethe_rt_tensor c = test.place<T>({1, n}, dtype, cValues);
      lethe_rt_tensor out = test.place<T>({m, n}, dtype);
      ASSERT_EQ(lethe_rt_gemm(test.context, &a, &b, &c, alpha, beta, transA,
                              transB, &out),
                LETHE_RT_OK)
          << test.lastError();
      std::vector<double> expected;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p < k; ++p)
            sum +=
                static_cast<double>(aValues[transA ? p * m + i : i * k + p]) *
                bValues[transB ? j * k + p : p * n + j];
          expected.push_back(alpha * sum + beta * cValues[j]);
        }
      expectNear(test.read<T>(out), expected,
                 "gemm trans_a " + std::to_string(transA) + " trans_b " +
                     std::to_string(transB));
    }
  }
}

TEST_F(MatMulTest, GemmF32) { checkGemm<float>(*this, LETHE_RT_F32); }
TEST_F(MatMulTest, GemmF64) { checkGemm<double>(*this, LETHE_RT_F64); }

TEST_F(MatMulTest, MismatchedContractionNamesTheKernel) {
  lethe_rt_tensor lhs = place<float>({2, 3}, LETHE_RT_F32);
  lethe_rt_tensor rhs = place<float>({4, 2}, LETHE_RT_F32);
  lethe_rt_tensor out = place<float>({2, 2}, LETHE_RT_F32);
  EXPECT_EQ(lethe_rt_matmul(context, &lhs, &rhs, &out), LETHE_RT_ERROR);
  EXPECT_EQ(lastError(), "lethe_rt_matmul: lhs (2x3) and rhs (4x2) have "
                         "different contraction dims 3 and 4");
}

} // namespace
