//===- MatMulTest.cpp - Matrix-product kernels ----------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "TypedTensor.h"

#include <cstring>
#include <tuple>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using MatMulTest = RuntimeTest;

/// numpy matmul in double: the product and, per element, the sum of |a * b|
/// (the scale of its rounding error).
void referenceMatmul(const TypedTensor &lhs, const TypedTensor &rhs,
                     std::vector<int64_t> &outShape,
                     std::vector<double> &product,
                     std::vector<double> &magnitude) {
  std::vector<int64_t> l = lhs.shape, r = rhs.shape;
  bool lhsVector = l.size() == 1, rhsVector = r.size() == 1;
  if (lhsVector)
    l.insert(l.begin(), 1);
  if (rhsVector)
    r.push_back(1);
  int64_t m = l[l.size() - 2], k = l.back(), n = r.back();
  std::vector<int64_t> lhsBatch(l.begin(), l.end() - 2);
  std::vector<int64_t> rhsBatch(r.begin(), r.end() - 2);
  size_t batchRank = std::max(lhsBatch.size(), rhsBatch.size());
  std::vector<int64_t> batch(batchRank, 1);
  for (size_t i = 0; i < batchRank; ++i) {
    for (const auto *shape : {&lhsBatch, &rhsBatch}) {
      int64_t offset = batchRank - shape->size();
      if (static_cast<int64_t>(i) >= offset && (*shape)[i - offset] != 1)
        batch[i] = (*shape)[i - offset];
    }
  }
  int64_t batchCount = 1;
  for (int64_t dim : batch)
    batchCount *= dim;
  outShape = batch;
  if (!lhsVector)
    outShape.push_back(m);
  if (!rhsVector)
    outShape.push_back(n);
  product.assign(batchCount * m * n, 0);
  magnitude.assign(batchCount * m * n, 0);
  for (int64_t b = 0; b < batchCount; ++b) {
    std::vector<int64_t> index = unravel(b, batch);
    int64_t lhsBase = broadcastIndex(index, lhsBatch) * m * k;
    int64_t rhsBase = broadcastIndex(index, rhsBatch) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t p = 0; p < k; ++p) {
          double term =
              lhs.get(lhsBase + i * k + p) * rhs.get(rhsBase + p * n + j);
          product[(b * m + i) * n + j] += term;
          magnitude[(b * m + i) * n + j] += std::fabs(term);
        }
  }
}

/// Expects |actual - expected| <= tolerance * (magnitude + |expected|).
void expectProductNear(const std::vector<double> &actual,
                       const std::vector<double> &expected,
                       const std::vector<double> &magnitude, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i],
                tolerance * (magnitude[i] + std::fabs(expected[i])) + 1e-30)
        << "element " << i;
}

struct MatmulCase {
  std::vector<int64_t> lhs, rhs;
};

TEST_F(MatMulTest, MatchesReferenceForEveryShapeKindAndDtype) {
  std::vector<MatmulCase> cases{
      {{3, 4}, {4, 5}},
      {{4}, {4, 5}},
      {{3, 4}, {4}},
      {{4}, {4}},
      {{2, 3, 4}, {4, 5}},
      {{3, 4}, {2, 4, 5}},
      {{2, 1, 3, 4}, {1, 5, 4, 6}},
      {{2, 3, 4}, {4}},
      {{4}, {2, 4, 5}},
      {{1, 7}, {7, 9}},
      {{7, 9}, {9, 1}},
      {{67, 300}, {300, 70}},
      {{200, 17}, {17, 19}},
      {{3, 20}, {20, 1100}},
      {{5, 13, 33}, {5, 33, 20}},
      {{3, 0}, {0, 4}},
      {{0, 3}, {3, 4}},
      {{2, 3, 5}, {1, 5, 0}},
  };
  uint64_t seed = 1;
  for (lethe_rt_dtype dtype : floatDtypes()) {
    for (const MatmulCase &shapes : cases) {
      SCOPED_TRACE(std::string(dtypeName(dtype)) + " " +
                   std::to_string(shapes.lhs.size()) + "-D x " +
                   std::to_string(shapes.rhs.size()) + "-D case " +
                   std::to_string(seed));
      TypedTensor lhs = randomTensor(shapes.lhs, dtype, seed++);
      TypedTensor rhs = randomTensor(shapes.rhs, dtype, seed++);
      std::vector<int64_t> outShape;
      std::vector<double> expected, magnitude;
      referenceMatmul(lhs, rhs, outShape, expected, magnitude);
      TypedTensor out(outShape, dtype);
      lethe_rt_tensor l = lhs.view(), r = rhs.view(), o = out.view();
      ASSERT_EQ(lethe_rt_matmul(context, &l, &r, &o), LETHE_RT_OK)
          << lastError();
      expectProductNear(out.values(), expected, magnitude, toleranceFor(dtype));
    }
  }
}

/// A float product computed naively, each element summed in increasing k
/// from +0, one rounding per operation (volatile keeps the compiler from
/// fusing the multiply and the add).
std::vector<float> sequentialProduct(const std::vector<float> &a,
                                     const std::vector<float> &b, int64_t m,
                                     int64_t k, int64_t n) {
  std::vector<float> c(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        volatile float product = a[i * k + p] * b[p * n + j];
        sum += product;
      }
      c[i * n + j] = sum;
    }
  return c;
}

/// Runs lethe_rt_matmul on f32 matrices a (m x k) and b (k x n).
std::vector<float> runMatmul(lethe_rt_context *context, std::vector<float> a,
                             std::vector<float> b, int64_t m, int64_t k,
                             int64_t n) {
  OwnedTensor<float> lhs({m, k}, LETHE_RT_F32, std::move(a));
  OwnedTensor<float> rhs({k, n}, LETHE_RT_F32, std::move(b));
  OwnedTensor<float> out({m, n}, LETHE_RT_F32);
  lethe_rt_tensor l = lhs.view(), r = rhs.view(), o = out.view();
  EXPECT_EQ(lethe_rt_matmul(context, &l, &r, &o), LETHE_RT_OK)
      << lethe_rt_last_error(context);
  return out.values;
}

bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The blocked kernel, its edge tiles and the row and column paths all sum
// each element in the same order, so the bits equal the naive loop's.
TEST_F(MatMulTest, EqualsTheSequentialSumBitForBit) {
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{67, 300, 70},
                         {1, 515, 40},
                         {45, 515, 1},
                         {9, 1, 33}}) {
    std::vector<float> a = randomFloats(m * k, 11), b = randomFloats(k * n, 12);
    EXPECT_TRUE(sameBits(runMatmul(context, a, b, m, k, n),
                         sequentialProduct(a, b, m, k, n)))
        << m << "x" << k << "x" << n;
  }
}

// Determinism: the same inputs give the same bits, and a row of the product
// does not depend on which other rows are computed with it.
TEST_F(MatMulTest, IsDeterministicAndRowIndependent) {
  int64_t m = 50, k = 700, n = 37;
  std::vector<float> a = randomFloats(m * k, 21), b = randomFloats(k * n, 22);
  std::vector<float> first = runMatmul(context, a, b, m, k, n);
  EXPECT_TRUE(sameBits(first, runMatmul(context, a, b, m, k, n)));
  for (int64_t row : {0, 13, 49}) {
    std::vector<float> single(a.begin() + row * k, a.begin() + (row + 1) * k);
    std::vector<float> expected(first.begin() + row * n,
                                first.begin() + (row + 1) * n);
    EXPECT_TRUE(sameBits(runMatmul(context, single, b, 1, k, n), expected))
        << "row " << row;
  }
  std::vector<float> tail(a.begin() + 7 * k, a.end());
  EXPECT_TRUE(sameBits(runMatmul(context, tail, b, m - 7, k, n),
                       std::vector<float>(first.begin() + 7 * n, first.end())));
}

// A batched product with a shared rhs (computed as one tall product) equals
// the batches computed one by one.
TEST_F(MatMulTest, BatchesEqualSeparateProducts) {
  int64_t batch = 3, m = 40, k = 50, n = 30;
  std::vector<float> a = randomFloats(batch * m * k, 31),
                     b = randomFloats(k * n, 32);
  OwnedTensor<float> lhs({batch, m, k}, LETHE_RT_F32, a);
  OwnedTensor<float> rhs({k, n}, LETHE_RT_F32, b);
  OwnedTensor<float> out({batch, m, n}, LETHE_RT_F32);
  lethe_rt_tensor l = lhs.view(), r = rhs.view(), o = out.view();
  ASSERT_EQ(lethe_rt_matmul(context, &l, &r, &o), LETHE_RT_OK) << lastError();
  for (int64_t i = 0; i < batch; ++i) {
    std::vector<float> slice(a.begin() + i * m * k,
                             a.begin() + (i + 1) * m * k);
    EXPECT_TRUE(
        sameBits(runMatmul(context, slice, b, m, k, n),
                 std::vector<float>(out.values.begin() + i * m * n,
                                    out.values.begin() + (i + 1) * m * n)))
        << "batch " << i;
  }
}

TEST_F(MatMulTest, RejectsBadArguments) {
  TypedTensor scalar({}, LETHE_RT_F32), a23({2, 3}, LETHE_RT_F32),
      a45({4, 5}, LETHE_RT_F32), a35({3, 5}, LETHE_RT_F32),
      a24({2, 4}, LETHE_RT_F32), a234({2, 3, 4}, LETHE_RT_F32),
      a345({3, 4, 5}, LETHE_RT_F32), d35({3, 5}, LETHE_RT_F64),
      i23({2, 3}, LETHE_RT_I32);
  lethe_rt_tensor s = scalar.view(), v23 = a23.view(), v45 = a45.view(),
                  v35 = a35.view(), v24 = a24.view(), v234 = a234.view(),
                  v345 = a345.view(), vd35 = d35.view(), vi23 = i23.view();
  auto expectError = [&](lethe_rt_status status, const char *message) {
    EXPECT_EQ(status, LETHE_RT_ERROR);
    EXPECT_EQ(lastError(), message);
  };
  expectError(lethe_rt_matmul(context, &s, &v35, &v24),
              "lethe_rt_matmul: lhs must have rank >= 1, got a scalar");
  expectError(lethe_rt_matmul(context, &v23, &v45, &v24),
              "lethe_rt_matmul: lhs (2x3) and rhs (4x5) have different "
              "contraction dims 3 and 4");
  expectError(lethe_rt_matmul(context, &v234, &v345, &v24),
              "lethe_rt_matmul: the batch dims of lhs (2x3x4) and rhs "
              "(3x4x5) do not broadcast");
  expectError(lethe_rt_matmul(context, &v23, &v35, &v24),
              "lethe_rt_matmul: out (2x4) must be 2x5 for lhs (2x3) and rhs "
              "(3x5)");
  expectError(lethe_rt_matmul(context, &v23, &vd35, &v24),
              "lethe_rt_matmul: rhs must be f32, got f64");
  expectError(lethe_rt_matmul(context, &vi23, &v35, &v24),
              "lethe_rt_matmul: lhs must be f16, bf16, f32 or f64, got i32");
  expectError(lethe_rt_matmul(context, &v23, &v35, nullptr),
              "lethe_rt_matmul: out is missing (null descriptor)");
}

/// ONNX Gemm in double.
std::vector<double> referenceGemm(const TypedTensor &a, const TypedTensor &b,
                                  const TypedTensor *c, double alpha,
                                  double beta, bool transA, bool transB,
                                  int64_t m, int64_t k, int64_t n,
                                  std::vector<double> &magnitude) {
  std::vector<double> out(m * n);
  magnitude.assign(m * n, 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        double term = a.get(transA ? p * m + i : i * k + p) *
                      b.get(transB ? j * k + p : p * n + j);
        sum += term;
        magnitude[i * n + j] += std::fabs(alpha * term);
      }
      out[i * n + j] = alpha * sum;
      if (c) {
        double value = c->get(broadcastIndex({i, j}, c->shape));
        out[i * n + j] += beta * value;
        magnitude[i * n + j] += std::fabs(beta * value);
      }
    }
  return out;
}

TEST_F(MatMulTest, GemmMatchesReferenceForEveryAttributeCombination) {
  uint64_t seed = 100;
  for (lethe_rt_dtype dtype : floatDtypes()) {
    for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{3, 4, 5},
                           {1, 6, 7},
                           {8, 5, 1},
                           {33, 270, 17}}) {
      std::vector<std::vector<int64_t>> cShapes{
          {}, {n}, {1, n}, {m, 1}, {m, n}};
      for (int trans = 0; trans < 4; ++trans) {
        bool transA = trans & 1, transB = trans & 2;
        for (int cCase = -1; cCase < static_cast<int>(cShapes.size());
             ++cCase) {
          for (auto [alpha, beta] :
               {std::pair<double, double>{1, 1}, {0.5, -2}, {2, 0}}) {
            SCOPED_TRACE(std::string(dtypeName(dtype)) + " m" +
                         std::to_string(m) + " trans " + std::to_string(trans) +
                         " c case " + std::to_string(cCase) + " alpha " +
                         std::to_string(alpha));
            TypedTensor a = randomTensor(transA ? std::vector<int64_t>{k, m}
                                                : std::vector{m, k},
                                         dtype, seed++);
            TypedTensor b = randomTensor(transB ? std::vector<int64_t>{n, k}
                                                : std::vector{k, n},
                                         dtype, seed++);
            TypedTensor c = randomTensor(cCase >= 0 ? cShapes[cCase]
                                                    : std::vector<int64_t>{},
                                         dtype, seed++);
            TypedTensor out({m, n}, dtype);
            std::vector<double> magnitude;
            std::vector<double> expected =
                referenceGemm(a, b, cCase >= 0 ? &c : nullptr, alpha, beta,
                              transA, transB, m, k, n, magnitude);
            lethe_rt_tensor av = a.view(), bv = b.view(), cv = c.view(),
                            ov = out.view();
            ASSERT_EQ(lethe_rt_gemm(context, &av, &bv,
                                    cCase >= 0 ? &cv : nullptr, alpha, beta,
                                    transA, transB, &ov),
                      LETHE_RT_OK)
                << lastError();
            expectProductNear(out.values(), expected, magnitude,
                              toleranceFor(dtype));
          }
        }
      }
    }
  }
}

// Transposition only swaps strides: the bits equal those of the product of
// explicitly transposed operands, and two runs agree.
TEST_F(MatMulTest, GemmTransposesAndRepeatsBitForBit) {
  int64_t m = 30, k = 300, n = 20;
  std::vector<float> a = randomFloats(m * k, 41), b = randomFloats(k * n, 42);
  std::vector<float> aT(k * m), bT(n * k);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      aT[p * m + i] = a[i * k + p];
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j)
      bT[j * k + p] = b[p * n + j];
  std::vector<float> expected = runMatmul(context, a, b, m, k, n);
  OwnedTensor<float> at({k, m}, LETHE_RT_F32, aT), bt({n, k}, LETHE_RT_F32, bT);
  for (int run = 0; run < 2; ++run) {
    OwnedTensor<float> out({m, n}, LETHE_RT_F32);
    lethe_rt_tensor av = at.view(), bv = bt.view(), ov = out.view();
    ASSERT_EQ(lethe_rt_gemm(context, &av, &bv, nullptr, 1, 0, 1, 1, &ov),
              LETHE_RT_OK)
        << lastError();
    EXPECT_TRUE(sameBits(out.values, expected)) << "run " << run;
  }
}

// out may be the same buffer as c (the product goes through scratch memory).
TEST_F(MatMulTest, GemmAccumulatesIntoItsBiasBuffer) {
  OwnedTensor<float> a({2, 2}, LETHE_RT_F32, {1, 2, 3, 4});
  OwnedTensor<float> b({2, 2}, LETHE_RT_F32, {5, 6, 7, 8});
  OwnedTensor<float> c({2, 2}, LETHE_RT_F32, {1, 1, 1, 1});
  lethe_rt_tensor av = a.view(), bv = b.view(), cv = c.view();
  ASSERT_EQ(lethe_rt_gemm(context, &av, &bv, &cv, 2, 3, 0, 0, &cv), LETHE_RT_OK)
      << lastError();
  EXPECT_EQ(c.values, (std::vector<float>{41, 47, 89, 103}));
}

TEST_F(MatMulTest, GemmRejectsBadArguments) {
  TypedTensor a234({2, 3, 4}, LETHE_RT_F32), a23({2, 3}, LETHE_RT_F32),
      b34({3, 4}, LETHE_RT_F32), o34({3, 4}, LETHE_RT_F32),
      o24({2, 4}, LETHE_RT_F32), c3({3}, LETHE_RT_F32), h4({4}, LETHE_RT_F16);
  lethe_rt_tensor va234 = a234.view(), va23 = a23.view(), vb34 = b34.view(),
                  vo34 = o34.view(), vo24 = o24.view(), vc3 = c3.view(),
                  vh4 = h4.view();
  auto expectError = [&](lethe_rt_status status, const char *message) {
    EXPECT_EQ(status, LETHE_RT_ERROR);
    EXPECT_EQ(lastError(), message);
  };
  expectError(lethe_rt_gemm(context, &va234, &vb34, nullptr, 1, 1, 0, 0, &vo24),
              "lethe_rt_gemm: a must have rank 2, got 2x3x4");
  expectError(lethe_rt_gemm(context, &va23, &vb34, nullptr, 1, 1, 1, 0, &vo24),
              "lethe_rt_gemm: a (2x3, trans_a 1) and b (3x4, trans_b 0) "
              "have different contraction dims 2 and 3");
  expectError(lethe_rt_gemm(context, &va23, &vb34, nullptr, 1, 1, 0, 0, &vo34),
              "lethe_rt_gemm: out (3x4) must be 2x4");
  expectError(lethe_rt_gemm(context, &va23, &vb34, &vc3, 1, 1, 0, 0, &vo24),
              "lethe_rt_gemm: c (3) does not broadcast to out (2x4)");
  expectError(lethe_rt_gemm(context, &va23, &vb34, &vh4, 1, 1, 0, 0, &vo24),
              "lethe_rt_gemm: c must be f32, got f16");
}

} // namespace
