//===- Reduction.cpp - Reduction kernels of the CPU backend ---------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_reduce: sum and mean (float and integer) and max (every dtype).
//
// Accumulators: float sums and means accumulate in f64 whatever the element
// type, integer ones in i64 (wrapping), and max in the compute type. Every
// output element folds its inputs in increasing row-major order of x, one
// fixed sequence, so the result is deterministic. An integer mean truncates
// toward zero (sum / count in i64); a float mean over nothing is NaN, a max
// over nothing -inf (the lowest value for integers).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>
#include <limits>

using namespace lethe::rt;

namespace {

/// The accumulator of a sum or mean of storage type T: double for floats,
/// the 64-bit integer of T's signedness for integers.
template <typename T>
using SumType = std::conditional_t<
    isFloatStorage<T>(), double,
    std::conditional_t<std::is_unsigned_v<T>, uint64_t, int64_t>>;

/// Folds x into `acc` (one slot per output element, strides `accStrides`
/// over x's dims) with `combine(slot, value)`, in row-major order of x.
template <typename T, typename A, typename Combine>
void foldInto(const lethe_rt_tensor &x, const std::vector<int64_t> &accStrides,
              A *acc, Combine combine) {
  const void *data = x.data;
  forEachRun(shapeOf(x), {accStrides},
             [&](int64_t base, const int64_t *offsets, const int64_t *inner,
                 int64_t count) {
               A *slot = acc + offsets[0];
               if (inner[0] == 0) {
                 A value = *slot;
                 for (int64_t i = 0; i < count; ++i)
                   value = combine(value, load<T>(data, base + i));
                 *slot = value;
               } else {
                 for (int64_t i = 0; i < count; ++i)
                   slot[i * inner[0]] =
                       combine(slot[i * inner[0]], load<T>(data, base + i));
               }
             });
}

/// Sum or mean of x into out.
template <typename T>
void reduceSum(const lethe_rt_tensor &x, const std::vector<int64_t> &accStrides,
               int64_t reducedCount, bool mean, const lethe_rt_tensor &out) {
  using A = SumType<T>;
  int64_t outCount = numElements(out);
  std::vector<A> acc(outCount, A(0));
  if constexpr (std::is_same_v<A, double>) {
    foldInto<T>(x, accStrides, acc.data(),
                [](double sum, auto value) { return sum + value; });
  } else {
    // Wrap around instead of overflowing.
    foldInto<T>(x, accStrides, acc.data(), [](A sum, auto value) {
      return static_cast<A>(static_cast<uint64_t>(sum) +
                            static_cast<uint64_t>(value));
    });
  }
  for (int64_t i = 0; i < outCount; ++i) {
    A value = acc[i];
    if (mean) {
      if constexpr (std::is_same_v<A, double>)
        value /= static_cast<double>(reducedCount);
      else // the caller rejects an empty integer mean
        value /= static_cast<A>(reducedCount);
    }
    store<T>(out.data, i, value);
  }
}

/// Max of x into out; NaN wins over any number.
template <typename T>
void reduceMax(const lethe_rt_tensor &x, const std::vector<int64_t> &accStrides,
               const lethe_rt_tensor &out) {
  using C = ComputeType<T>;
  C lowest = std::numeric_limits<C>::has_infinity
                 ? -std::numeric_limits<C>::infinity()
                 : std::numeric_limits<C>::lowest();
  if constexpr (std::is_same_v<T, Bool>)
    lowest = 0;
  int64_t outCount = numElements(out);
  std::vector<C> acc(outCount, lowest);
  foldInto<T>(x, accStrides, acc.data(), [](C best, C value) {
    return value > best || value != value ? value : best;
  });
  for (int64_t i = 0; i < outCount; ++i)
    store<T>(out.data, i, acc[i]);
}

/// Checks `axes` (num_axes of them, none meaning all) against x and that
/// out is x reduced over them, with or without the kept dims
/// (reductionAxesError); gives the
/// strides of out's elements over x's dims (0 along the reduced ones) and
/// the number of elements reduced into each.
bool getReductionLayout(lethe_rt_context *context, const char *kernel,
                        const lethe_rt_tensor &x, const int64_t *axes,
                        int64_t num_axes, const lethe_rt_tensor &out,
                        std::vector<int64_t> &accStrides,
                        int64_t &reducedCount) {
  std::vector<bool> reduced;
  if (!report(context, kernel,
              reductionAxesError(x, axes, num_axes, out, reduced)))
    return false;
  int32_t rank = x.rank;
  reducedCount = 1;
  for (int32_t dim = 0; dim < rank; ++dim)
    if (reduced[dim])
      reducedCount *= x.shape[dim];
  accStrides.assign(rank, 0);
  int64_t stride = 1;
  for (int32_t dim = rank; dim-- > 0;) {
    if (reduced[dim])
      continue;
    accStrides[dim] = stride;
    stride *= x.shape[dim];
  }
  return true;
}

} // namespace

extern "C" lethe_rt_status
lethe_rt_reduce(lethe_rt_context *context, lethe_rt_reduce_kind kind,
                const lethe_rt_tensor *x, const int64_t *axes, int64_t num_axes,
                const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_reduce";
  if (kind != LETHE_RT_REDUCE_SUM && kind != LETHE_RT_REDUCE_MEAN &&
      kind != LETHE_RT_REDUCE_MAX)
    return fail(context, kernel, "unknown reduce kind %d",
                static_cast<int>(kind));
  if (!checkTensor(context, kernel, "x", x) ||
      !checkDtype(context, kernel, "out", out, x->dtype))
    return LETHE_RT_ERROR;
  if (kind != LETHE_RT_REDUCE_MAX && x->dtype == LETHE_RT_I1)
    return fail(context, kernel, "sum and mean need a numeric x, got i1");
  std::vector<int64_t> accStrides;
  int64_t reducedCount = 0;
  if (!getReductionLayout(context, kernel, *x, axes, num_axes, *out, accStrides,
                          reducedCount))
    return LETHE_RT_ERROR;
  if (kind == LETHE_RT_REDUCE_MEAN && !isFloat(x->dtype) && reducedCount == 0 &&
      numElements(*out) > 0)
    return fail(context, kernel, "the %s mean of no elements is undefined",
                dtypeName(x->dtype));

  dispatchAny(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    if (kind == LETHE_RT_REDUCE_MAX) {
      reduceMax<T>(*x, accStrides, *out);
    } else if constexpr (!std::is_same_v<T, Bool>) {
      reduceSum<T>(*x, accStrides, reducedCount, kind == LETHE_RT_REDUCE_MEAN,
                   *out);
    }
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status
lethe_rt_reduce_max_grad(lethe_rt_context *context, const lethe_rt_tensor *dy,
                         const lethe_rt_tensor *x, const lethe_rt_tensor *y,
                         const int64_t *axes, int64_t num_axes,
                         const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_reduce_max_grad";
  if (!checkFloatTensor(context, kernel, "x", x) ||
      !checkDtype(context, kernel, "y", y, x->dtype) ||
      !checkDtype(context, kernel, "dy", dy, x->dtype) ||
      !checkDtype(context, kernel, "dx", dx, x->dtype) ||
      !checkSameShape(context, kernel, "y", *y, "dy", *dy) ||
      !checkSameShape(context, kernel, "x", *x, "dx", *dx))
    return LETHE_RT_ERROR;
  std::vector<int64_t> accStrides;
  int64_t reducedCount = 0;
  if (!getReductionLayout(context, kernel, *x, axes, num_axes, *y, accStrides,
                          reducedCount))
    return LETHE_RT_ERROR;
  // Each maximum of a group gets an equal share of its gradient (PyTorch's
  // amax); NaN equals nothing, so a group whose maximum is NaN gets none.
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    std::vector<int64_t> ties(numElements(*y), 0);
    forEachIndex(shapeOf(*x), {accStrides},
                 [&](int64_t index, const int64_t *group) {
                   ties[group[0]] +=
                       load<T>(x->data, index) == load<T>(y->data, group[0]);
                 });
    forEachIndex(shapeOf(*x), {accStrides},
                 [&](int64_t index, const int64_t *group) {
                   C share = 0;
                   if (load<T>(x->data, index) == load<T>(y->data, group[0]))
                     share = load<T>(dy->data, group[0]) /
                             static_cast<C>(ties[group[0]]);
                   store<T>(dx->data, index, share);
                 });
  });
  return LETHE_RT_OK;
}
