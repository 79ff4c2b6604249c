//===- Gemm.cpp - Deterministic matrix multiplication ---------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// A cache-blocked product in the style of Goto's algorithm: B is packed in
// KC x NC panels of NR-column strips, A in MC x KC blocks of MR-row strips
// (both converted to the compute type while packing, which is how f16 and
// bf16 are handled), and an MR x NR register tile accumulates over the KC
// depth of a panel. The partial sums of one panel are stored to C and loaded
// back for the next, which continues each element's running sum exactly: the
// result is the plain sequential sum described in Gemm.h. Single rows and
// single columns take direct loops with the same per-element order.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"

#include <algorithm>

using namespace lethe::rt;

namespace {

/// A register-tile kernel: an mr x (nv vectors of `bytes` bytes) tile of
/// compute type C.
template <typename C, int bytes, int mrValue, int nvValue> struct TileShape {
  typedef C Vector __attribute__((vector_size(bytes)));
  static constexpr int lanes = bytes / sizeof(C);
  static constexpr int mr = mrValue, nv = nvValue, nr = nvValue * lanes;
};

/// Updates the rows x cols tile of C at `c` (row stride ldc) with the product
/// of a packed mr x kc strip of A and a packed kc x nr strip of B: starting
/// from the tile's values when `accumulate`, else from +0. Always inlined into
/// the per-ISA entry points below.
template <typename Shape, typename C>
inline __attribute__((always_inline)) void
microKernelBody(int64_t kc, const C *__restrict packedA,
                const C *__restrict packedB, C *__restrict c, int64_t ldc,
                int rows, int cols, bool accumulate) {
  constexpr int mr = Shape::mr, nv = Shape::nv, lanes = Shape::lanes;
  constexpr int nr = Shape::nr;
  using Vector = typename Shape::Vector;
  bool full = rows == mr && cols == nr;
  // Edge tiles go through a full-size scratch tile.
  C scratch[mr * nr];
  C *tile = full ? c : scratch;
  int64_t tileStride = full ? ldc : nr;
  if (accumulate && !full) {
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        scratch[i * nr + j] = c[i * ldc + j];
  }
  Vector acc[mr][nv];
  for (int i = 0; i < mr; ++i)
    for (int v = 0; v < nv; ++v) {
      if (accumulate)
        std::memcpy(&acc[i][v], tile + i * tileStride + v * lanes,
                    sizeof(Vector));
      else
        acc[i][v] = Vector{};
    }
  for (int64_t p = 0; p < kc; ++p) {
    Vector bRow[nv];
    for (int v = 0; v < nv; ++v)
      std::memcpy(&bRow[v], packedB + p * nr + v * lanes, sizeof(Vector));
    for (int i = 0; i < mr; ++i) {
      Vector aValue = Vector{} + packedA[p * mr + i];
      for (int v = 0; v < nv; ++v)
        acc[i][v] += aValue * bRow[v];
    }
  }
  for (int i = 0; i < mr; ++i)
    for (int v = 0; v < nv; ++v)
      std::memcpy(tile + i * tileStride + v * lanes, &acc[i][v],
                  sizeof(Vector));
  if (!full) {
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        c[i * ldc + j] = scratch[i * nr + j];
  }
}

/// Micro-kernels and their cache blocks (mc x kc of A, kc x nc of B). The
/// AVX2 ones run only where the CPU has AVX2; without FMA they compute the
/// same roundings as the SSE2 ones, in the same order, so the choice never
/// changes a bit of the result.
struct FloatSse2 {
  using Shape = TileShape<float, 16, 4, 2>;
  static constexpr int64_t mc = 96, kc = 256, nc = 1024;
  static void run(int64_t kc, const float *a, const float *b, float *c,
                  int64_t ldc, int rows, int cols, bool accumulate) {
    microKernelBody<Shape>(kc, a, b, c, ldc, rows, cols, accumulate);
  }
};
struct DoubleSse2 {
  using Shape = TileShape<double, 16, 4, 2>;
  static constexpr int64_t mc = 64, kc = 256, nc = 512;
  static void run(int64_t kc, const double *a, const double *b, double *c,
                  int64_t ldc, int rows, int cols, bool accumulate) {
    microKernelBody<Shape>(kc, a, b, c, ldc, rows, cols, accumulate);
  }
};
#if defined(__x86_64__) || defined(__i386__)
struct FloatAvx2 {
  using Shape = TileShape<float, 32, 4, 2>;
  static constexpr int64_t mc = 96, kc = 256, nc = 1024;
  __attribute__((target("avx2"))) static void run(int64_t kc, const float *a,
                                                  const float *b, float *c,
                                                  int64_t ldc, int rows,
                                                  int cols, bool accumulate) {
    microKernelBody<Shape>(kc, a, b, c, ldc, rows, cols, accumulate);
  }
};
struct DoubleAvx2 {
  using Shape = TileShape<double, 32, 4, 2>;
  static constexpr int64_t mc = 64, kc = 256, nc = 512;
  __attribute__((target("avx2"))) static void run(int64_t kc, const double *a,
                                                  const double *b, double *c,
                                                  int64_t ldc, int rows,
                                                  int cols, bool accumulate) {
    microKernelBody<Shape>(kc, a, b, c, ldc, rows, cols, accumulate);
  }
};
#endif

/// Packs the kc x nc block of b at (p0, j0) into strips of nr columns, each
/// stored row by row (kc rows of nr values, zero-padded past nc).
template <int nr, typename T, typename C>
void packB(MatrixRef<T> b, int64_t p0, int64_t j0, int64_t kc, int64_t nc,
           C *packed) {
  for (int64_t jr = 0; jr < nc; jr += nr) {
    int cols = static_cast<int>(std::min<int64_t>(nr, nc - jr));
    C *strip = packed + jr * kc;
    for (int64_t p = 0; p < kc; ++p) {
      int64_t base = (p0 + p) * b.rowStride + (j0 + jr) * b.colStride;
      C *row = strip + p * nr;
      if constexpr (std::is_same_v<T, C>) {
        if (b.colStride == 1 && cols == nr) {
          std::memcpy(row, b.data + base, nr * sizeof(C));
          continue;
        }
      }
      for (int j = 0; j < cols; ++j)
        row[j] = load<T>(b.data, base + j * b.colStride);
      for (int j = cols; j < nr; ++j)
        row[j] = 0;
    }
  }
}

/// Packs the mc x kc block of a at (i0, p0) into strips of mr rows, each
/// stored column by column (kc columns of mr values, zero-padded past mc).
template <int mr, typename T, typename C>
void packA(MatrixRef<T> a, int64_t i0, int64_t p0, int64_t mc, int64_t kc,
           C *packed) {
  for (int64_t ir = 0; ir < mc; ir += mr) {
    int rows = static_cast<int>(std::min<int64_t>(mr, mc - ir));
    C *strip = packed + ir * kc;
    for (int i = 0; i < mr; ++i) {
      if (i >= rows) {
        for (int64_t p = 0; p < kc; ++p)
          strip[p * mr + i] = 0;
        continue;
      }
      int64_t base = (i0 + ir + i) * a.rowStride + p0 * a.colStride;
      for (int64_t p = 0; p < kc; ++p)
        strip[p * mr + i] = load<T>(a.data, base + p * a.colStride);
    }
  }
}

/// The blocked product with micro-kernel `Kernel` (m, n >= 2, k >= 1).
template <typename Kernel, typename T, typename C>
void multiplyBlocked(int64_t m, int64_t n, int64_t k, MatrixRef<T> a,
                     MatrixRef<T> b, C *c, int64_t ldc,
                     GemmWorkspace<C> &workspace) {
  constexpr int mr = Kernel::Shape::mr, nr = Kernel::Shape::nr;
  int64_t kcMax = std::min(Kernel::kc, k);
  int64_t mcMax = (std::min(Kernel::mc, m) + mr - 1) / mr * mr;
  int64_t ncMax = (std::min(Kernel::nc, n) + nr - 1) / nr * nr;
  workspace.packedA.resize(
      std::max<size_t>(workspace.packedA.size(), mcMax * kcMax));
  workspace.packedB.resize(
      std::max<size_t>(workspace.packedB.size(), kcMax * ncMax));
  C *packedA = workspace.packedA.data(), *packedB = workspace.packedB.data();
  for (int64_t j0 = 0; j0 < n; j0 += Kernel::nc) {
    int64_t nc = std::min(Kernel::nc, n - j0);
    for (int64_t p0 = 0; p0 < k; p0 += Kernel::kc) {
      int64_t kc = std::min(Kernel::kc, k - p0);
      packB<nr>(b, p0, j0, kc, nc, packedB);
      for (int64_t i0 = 0; i0 < m; i0 += Kernel::mc) {
        int64_t mc = std::min(Kernel::mc, m - i0);
        packA<mr>(a, i0, p0, mc, kc, packedA);
        for (int64_t jr = 0; jr < nc; jr += nr) {
          int cols = static_cast<int>(std::min<int64_t>(nr, nc - jr));
          for (int64_t ir = 0; ir < mc; ir += mr) {
            int rows = static_cast<int>(std::min<int64_t>(mr, mc - ir));
            Kernel::run(kc, packedA + ir * kc, packedB + jr * kc,
                        c + (i0 + ir) * ldc + j0 + jr, ldc, rows, cols, p0 > 0);
          }
        }
      }
    }
  }
}

/// Whether the CPU runs AVX2 code.
bool hasAvx2() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
#else
  return false;
#endif
}

/// The product of a single row (m == 1): c[j] accumulates a(0, p) * b(p, j)
/// over p, vectorized across j.
template <typename T, typename C>
void multiplyRow(int64_t n, int64_t k, MatrixRef<T> a, MatrixRef<T> b, C *c) {
  constexpr int64_t columnBlock = 512;
  std::fill(c, c + n, C(0));
  for (int64_t j0 = 0; j0 < n; j0 += columnBlock) {
    int64_t columns = std::min(columnBlock, n - j0);
    C *__restrict out = c + j0;
    for (int64_t p = 0; p < k; ++p) {
      C aValue = load<T>(a.data, p * a.colStride);
      int64_t base = p * b.rowStride + j0 * b.colStride;
      if constexpr (std::is_same_v<T, C>) {
        if (b.colStride == 1) {
          const C *__restrict row = b.data + base;
          for (int64_t j = 0; j < columns; ++j)
            out[j] += aValue * row[j];
          continue;
        }
      }
      for (int64_t j = 0; j < columns; ++j)
        out[j] += aValue * load<T>(b.data, base + j * b.colStride);
    }
  }
}

/// The product with a single column (n == 1): one running sum per row, four
/// rows at a time for instruction-level parallelism.
template <typename T, typename C>
void multiplyColumn(int64_t m, int64_t k, MatrixRef<T> a, MatrixRef<T> b, C *c,
                    int64_t ldc, std::vector<C> &column) {
  column.resize(std::max<size_t>(column.size(), static_cast<size_t>(k)));
  for (int64_t p = 0; p < k; ++p)
    column[p] = load<T>(b.data, p * b.rowStride);
  const C *bColumn = column.data();
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    C acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;
    int64_t row0 = i * a.rowStride, rs = a.rowStride, cs = a.colStride;
    for (int64_t p = 0; p < k; ++p) {
      int64_t offset = row0 + p * cs;
      acc0 += load<T>(a.data, offset) * bColumn[p];
      acc1 += load<T>(a.data, offset + rs) * bColumn[p];
      acc2 += load<T>(a.data, offset + 2 * rs) * bColumn[p];
      acc3 += load<T>(a.data, offset + 3 * rs) * bColumn[p];
    }
    c[i * ldc] = acc0;
    c[(i + 1) * ldc] = acc1;
    c[(i + 2) * ldc] = acc2;
    c[(i + 3) * ldc] = acc3;
  }
  for (; i < m; ++i) {
    C acc = 0;
    for (int64_t p = 0; p < k; ++p)
      acc += load<T>(a.data, i * a.rowStride + p * a.colStride) * bColumn[p];
    c[i * ldc] = acc;
  }
}

} // namespace

template <typename T>
void lethe::rt::multiplyMatrices(int64_t m, int64_t n, int64_t k,
                                 MatrixRef<T> a, MatrixRef<T> b,
                                 ComputeType<T> *c, int64_t ldc,
                                 GemmWorkspace<ComputeType<T>> &workspace) {
  using C = ComputeType<T>;
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      std::fill(c + i * ldc, c + i * ldc + n, C(0));
    return;
  }
  if (n == 1)
    return multiplyColumn(m, k, a, b, c, ldc, workspace.packedB);
  if (m == 1)
    return multiplyRow(n, k, a, b, c);

#if defined(__x86_64__) || defined(__i386__)
  if (hasAvx2()) {
    if constexpr (std::is_same_v<C, float>)
      return multiplyBlocked<FloatAvx2>(m, n, k, a, b, c, ldc, workspace);
    else
      return multiplyBlocked<DoubleAvx2>(m, n, k, a, b, c, ldc, workspace);
  }
#endif
  if constexpr (std::is_same_v<C, float>)
    return multiplyBlocked<FloatSse2>(m, n, k, a, b, c, ldc, workspace);
  else
    return multiplyBlocked<DoubleSse2>(m, n, k, a, b, c, ldc, workspace);
}

template void lethe::rt::multiplyMatrices<Half>(int64_t, int64_t, int64_t,
                                                MatrixRef<Half>,
                                                MatrixRef<Half>, float *,
                                                int64_t,
                                                GemmWorkspace<float> &);
template void lethe::rt::multiplyMatrices<BFloat16>(int64_t, int64_t, int64_t,
                                                    MatrixRef<BFloat16>,
                                                    MatrixRef<BFloat16>,
                                                    float *, int64_t,
                                                    GemmWorkspace<float> &);
template void lethe::rt::multiplyMatrices<float>(int64_t, int64_t, int64_t,
                                                 MatrixRef<float>,
                                                 MatrixRef<float>, float *,
                                                 int64_t,
                                                 GemmWorkspace<float> &);
template void lethe::rt::multiplyMatrices<double>(int64_t, int64_t, int64_t,
                                                  MatrixRef<double>,
                                                  MatrixRef<double>, double *,
                                                  int64_t,
                                                  GemmWorkspace<double> &);
