//===- PoolingWindow.h - Pooling windows shared by the backends -*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The geometry of max_pool, avg_pool and their gradients, and what each
// output element and each input-gradient element computes, written once for
// every backend. Header only, for g++ and nvcc alike (every function is
// LETHE_HOST_DEVICE): the CPU backend calls these functions in loops, the
// CUDA backend's kernels call them per thread, and unittests/Runtime checks
// them on the host against the CPU backend, so that both give the same bits.
//
// A window position maps to input index `o * stride - pad_begin + k *
// dilation` along each spatial dim; positions outside the input are padding.
// ceil_mode is already in the output's shape: windows that run past the
// padded input are clipped. A window's elements are visited in row-major
// order of the kernel, its outputs in row-major order of the output.
//
// The gradients are written gather-style: each input-gradient element adds
// its contributions from the windows that hold it, in increasing output
// order. That is the order in which the CPU backend scatters them (it walks
// the outputs in order and adds each to its window's elements), so a
// gathered sum has the scattered sum's bits, and a GPU needs no atomics.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_COMMON_POOLINGWINDOW_H
#define LETHE_RUNTIME_COMMON_POOLINGWINDOW_H

#include "common/ElementTypes.h"

#include <cstdint>
#include <limits>

namespace lethe::rt {

/// The most spatial dims of a pooling op (N, C, D1..D3). The window walks
/// below loop over exactly this many dims.
constexpr int32_t maxPoolingRank = 3;
static_assert(maxPoolingRank == 3, "the window walks nest three loops");

/// The spatial geometry of a pooling call. Its dims are right-aligned:
/// with fewer than maxPoolingRank spatial dims, the leading ones are a
/// trivial window (size, kernel, stride and dilation 1, no padding), which
/// changes neither offsets nor orders. Passed to CUDA kernels by value.
struct PoolingWindow {
  /// The caller's spatial dims (1 to maxPoolingRank).
  int32_t rank = 0;
  int64_t input[maxPoolingRank] = {1, 1, 1}, output[maxPoolingRank] = {1, 1, 1},
          kernel[maxPoolingRank] = {1, 1, 1},
          strides[maxPoolingRank] = {1, 1, 1},
          padBegin[maxPoolingRank] = {0, 0, 0},
          padEnd[maxPoolingRank] = {0, 0, 0},
          dilations[maxPoolingRank] = {1, 1, 1};
  /// N * C, and the elements of one input and one output plane.
  int64_t planes = 0, inputPlane = 1, outputPlane = 1;
};

namespace detail {

/// ceil(numerator / denominator) for a positive denominator.
LETHE_HOST_DEVICE inline int64_t ceilDivide(int64_t numerator,
                                            int64_t denominator) {
  return numerator >= 0 ? (numerator + denominator - 1) / denominator
                        : -(-numerator / denominator);
}

/// The kernel indices k in [0, kernel) whose positions `base + k *
/// dilation` lie in [low, high), as [first, end) (empty when end <= first).
LETHE_HOST_DEVICE inline void kernelRange(int64_t base, int64_t dilation,
                                          int64_t kernel, int64_t low,
                                          int64_t high, int64_t &first,
                                          int64_t &end) {
  first = ceilDivide(low - base, dilation);
  end = ceilDivide(high - base, dilation);
  if (first < 0)
    first = 0;
  if (end > kernel)
    end = kernel;
}

/// Splits `offset`, row-major within dims `sizes`, into its indices.
LETHE_HOST_DEVICE inline void splitOffset(const int64_t *sizes, int64_t offset,
                                          int64_t *indices) {
  for (int32_t dim = maxPoolingRank; dim-- > 0;) {
    indices[dim] = offset % sizes[dim];
    offset /= sizes[dim];
  }
}

} // namespace detail

//===----------------------------------------------------------------------===//
// Windows
//===----------------------------------------------------------------------===//

/// Calls `visit(offset)` with the offset within the input plane of each
/// element of output `output`'s window that lies inside the input, in
/// row-major order of the kernel.
template <typename Visit>
LETHE_HOST_DEVICE inline void forEachWindowElement(const PoolingWindow &window,
                                                   int64_t output,
                                                   Visit &&visit) {
  int64_t index[maxPoolingRank], base[maxPoolingRank], first[maxPoolingRank],
      end[maxPoolingRank];
  detail::splitOffset(window.output, output, index);
  for (int32_t dim = 0; dim < maxPoolingRank; ++dim) {
    base[dim] = index[dim] * window.strides[dim] - window.padBegin[dim];
    detail::kernelRange(base[dim], window.dilations[dim], window.kernel[dim], 0,
                        window.input[dim], first[dim], end[dim]);
  }
  for (int64_t k0 = first[0]; k0 < end[0]; ++k0) {
    int64_t row0 = base[0] + k0 * window.dilations[0];
    for (int64_t k1 = first[1]; k1 < end[1]; ++k1) {
      int64_t row1 =
          row0 * window.input[1] + base[1] + k1 * window.dilations[1];
      for (int64_t k2 = first[2]; k2 < end[2]; ++k2)
        visit(row1 * window.input[2] + base[2] + k2 * window.dilations[2]);
    }
  }
}

/// How many positions of output `output`'s window lie inside the input, or
/// with `includePadding` inside the padded input (avg_pool's divisors).
LETHE_HOST_DEVICE inline int64_t
windowCount(const PoolingWindow &window, int64_t output, bool includePadding) {
  int64_t index[maxPoolingRank];
  detail::splitOffset(window.output, output, index);
  int64_t count = 1;
  // The window is a product of per-dim ranges, and so are the positions in
  // it that lie inside.
  for (int32_t dim = 0; dim < maxPoolingRank; ++dim) {
    int64_t base = index[dim] * window.strides[dim] - window.padBegin[dim];
    int64_t low = includePadding ? -window.padBegin[dim] : 0;
    int64_t high =
        window.input[dim] + (includePadding ? window.padEnd[dim] : 0);
    int64_t first = 0, end = 0;
    detail::kernelRange(base, window.dilations[dim], window.kernel[dim], low,
                        high, first, end);
    count *= end > first ? end - first : 0;
  }
  return count;
}

/// Calls `visit(output)` for each output of a plane whose window holds the
/// input element at offset `input` of the plane, in increasing order.
template <typename Visit>
LETHE_HOST_DEVICE inline void forEachWindowHolding(const PoolingWindow &window,
                                                   int64_t input,
                                                   Visit &&visit) {
  int64_t index[maxPoolingRank], reach[maxPoolingRank], first[maxPoolingRank],
      end[maxPoolingRank];
  detail::splitOffset(window.input, input, index);
  // Output o holds the element when o * stride = index + pad_begin - k *
  // dilation for some k in [0, kernel): o lies in [first, end), and
  // (index + pad_begin - o * stride) is a multiple of the dilation (its
  // quotient is then below the kernel size, by the choice of first).
  for (int32_t dim = 0; dim < maxPoolingRank; ++dim) {
    reach[dim] = index[dim] + window.padBegin[dim];
    first[dim] = detail::ceilDivide(reach[dim] - (window.kernel[dim] - 1) *
                                                     window.dilations[dim],
                                    window.strides[dim]);
    if (first[dim] < 0)
      first[dim] = 0;
    end[dim] = reach[dim] / window.strides[dim] + 1;
    if (end[dim] > window.output[dim])
      end[dim] = window.output[dim];
  }
  auto holds = [&](int32_t dim, int64_t o) {
    return (reach[dim] - o * window.strides[dim]) % window.dilations[dim] == 0;
  };
  for (int64_t o0 = first[0]; o0 < end[0]; ++o0) {
    if (!holds(0, o0))
      continue;
    for (int64_t o1 = first[1]; o1 < end[1]; ++o1) {
      if (!holds(1, o1))
        continue;
      for (int64_t o2 = first[2]; o2 < end[2]; ++o2)
        if (holds(2, o2))
          visit((o0 * window.output[1] + o1) * window.output[2] + o2);
    }
  }
}

/// The offset within a plane, flattened column-major (ONNX MaxPool's
/// storage_order 1), of the element at row-major offset `input`.
LETHE_HOST_DEVICE inline int64_t columnMajorOffset(const PoolingWindow &window,
                                                   int64_t input) {
  int64_t index[maxPoolingRank];
  detail::splitOffset(window.input, input, index);
  // Column-major weights grow from the first spatial dim; the leading
  // trivial dims have index 0 and size 1, and change nothing.
  int64_t result = 0, weight = 1;
  for (int32_t dim = maxPoolingRank - window.rank; dim < maxPoolingRank;
       ++dim) {
    result += index[dim] * weight;
    weight *= window.input[dim];
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Output elements
//===----------------------------------------------------------------------===//

/// A window's maximum (in the compute type) and its offset in the plane.
template <typename C> struct WindowMax {
  C value;
  int64_t where;
};

/// The maximum of output `output`'s window over the plane of `data` (of
/// storage type T) that starts at element `base`: the first maximum in the
/// window, NaN winning over numbers. A window that is all padding gives the
/// lowest value (-inf for floats) at offset 0.
template <typename T>
LETHE_HOST_DEVICE inline WindowMax<ComputeType<T>>
windowMax(const PoolingWindow &window, const void *data, int64_t base,
          int64_t output) {
  using C = ComputeType<T>;
  WindowMax<C> best{std::numeric_limits<C>::has_infinity
                        ? -std::numeric_limits<C>::infinity()
                        : std::numeric_limits<C>::lowest(),
                    0};
  bool first = true;
  forEachWindowElement(window, output, [&](int64_t offset) {
    C value = load<T>(data, base + offset);
    // The first element is taken whatever its value (the lowest value would
    // not beat the starting one, but is there).
    if (first || value > best.value ||
        (value != value && best.value == best.value)) {
      best.value = value;
      best.where = offset;
    }
    first = false;
  });
  return best;
}

/// The average of output `output`'s window over the plane of `data` (of
/// storage type T) that starts at element `base`: the elements inside the
/// input summed in window order, divided by windowCount (0 when that is 0).
template <typename T>
LETHE_HOST_DEVICE inline ComputeType<T>
windowAverage(const PoolingWindow &window, const void *data, int64_t base,
              int64_t output, bool countIncludePad) {
  using C = ComputeType<T>;
  C sum = 0;
  forEachWindowElement(window, output, [&](int64_t offset) {
    sum += load<T>(data, base + offset);
  });
  int64_t count = windowCount(window, output, countIncludePad);
  return count > 0 ? sum / static_cast<C>(count) : C(0);
}

/// The average of the `count` elements of `data` (storage type T) from
/// `first` on, summed in order (global_avg_pool; 0 for no elements).
template <typename T>
LETHE_HOST_DEVICE inline ComputeType<T>
planeAverage(const void *data, int64_t first, int64_t count) {
  using C = ComputeType<T>;
  C sum = 0;
  for (int64_t i = 0; i < count; ++i)
    sum += load<T>(data, first + i);
  return count ? sum / static_cast<C>(count) : C(0);
}

//===----------------------------------------------------------------------===//
// Input-gradient elements
//===----------------------------------------------------------------------===//

/// max_pool_grad's dx at offset `input` of plane `plane`: the sum, from 0 in
/// increasing output order, of dy over the windows that hold the element
/// and whose maximum in x (windowMax) it is. dy and x have storage type T.
template <typename T>
LETHE_HOST_DEVICE inline ComputeType<T>
maxPoolGradAt(const PoolingWindow &window, const void *dy, const void *x,
              int64_t plane, int64_t input) {
  using C = ComputeType<T>;
  int64_t inBase = plane * window.inputPlane,
          outBase = plane * window.outputPlane;
  C sum = 0;
  forEachWindowHolding(window, input, [&](int64_t output) {
    if (windowMax<T>(window, x, inBase, output).where == input)
      sum += load<T>(dy, outBase + output);
  });
  return sum;
}

/// avg_pool_grad's dx at offset `input` of plane `plane`: the sum, from 0 in
/// increasing output order, of dy divided by its window's divisor over the
/// windows that hold the element. dy has storage type T.
template <typename T>
LETHE_HOST_DEVICE inline ComputeType<T>
avgPoolGradAt(const PoolingWindow &window, const void *dy, int64_t plane,
              int64_t input, bool countIncludePad) {
  using C = ComputeType<T>;
  int64_t outBase = plane * window.outputPlane;
  C sum = 0;
  forEachWindowHolding(window, input, [&](int64_t output) {
    // Never 0: the window holds this element.
    int64_t count = windowCount(window, output, countIncludePad);
    sum += load<T>(dy, outBase + output) / static_cast<C>(count);
  });
  return sum;
}

//===----------------------------------------------------------------------===//
// Whole elements: what one CUDA thread computes, and the CPU backend's loop
// body. `element` counts over every plane (N * C planes, row-major).
//===----------------------------------------------------------------------===//

/// max_pool's out (storage type T) and, unless `indices` is null, indices
/// at output element `element`: where its maximum is in x, flattened
/// row-major, or with each plane flattened column-major for storage order 1.
template <typename T>
LETHE_HOST_DEVICE inline void
maxPoolElement(const PoolingWindow &window, const void *x, void *out,
               int64_t *indices, int64_t storageOrder, int64_t element) {
  int64_t plane = element / window.outputPlane;
  int64_t inBase = plane * window.inputPlane;
  WindowMax<ComputeType<T>> best =
      windowMax<T>(window, x, inBase, element % window.outputPlane);
  store<T>(out, element, best.value);
  if (indices)
    indices[element] =
        inBase +
        (storageOrder ? columnMajorOffset(window, best.where) : best.where);
}

/// avg_pool's out (storage type T) at output element `element`.
template <typename T>
LETHE_HOST_DEVICE inline void
avgPoolElement(const PoolingWindow &window, const void *x, void *out,
               bool countIncludePad, int64_t element) {
  int64_t plane = element / window.outputPlane;
  store<T>(out, element,
           windowAverage<T>(window, x, plane * window.inputPlane,
                            element % window.outputPlane, countIncludePad));
}

/// max_pool_grad's dx (storage type T) at input element `element`.
template <typename T>
LETHE_HOST_DEVICE inline void maxPoolGradElement(const PoolingWindow &window,
                                                 const void *dy, const void *x,
                                                 void *dx, int64_t element) {
  store<T>(dx, element,
           maxPoolGradAt<T>(window, dy, x, element / window.inputPlane,
                            element % window.inputPlane));
}

/// avg_pool_grad's dx (storage type T) at input element `element`.
template <typename T>
LETHE_HOST_DEVICE inline void
avgPoolGradElement(const PoolingWindow &window, const void *dy, void *dx,
                   bool countIncludePad, int64_t element) {
  store<T>(dx, element,
           avgPoolGradAt<T>(window, dy, element / window.inputPlane,
                            element % window.inputPlane, countIncludePad));
}

} // namespace lethe::rt

#endif // LETHE_RUNTIME_COMMON_POOLINGWINDOW_H
