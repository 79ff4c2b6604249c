//===- Shape.cpp - Data-movement kernels of the CPU backend ---------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// transpose, concat, split, slice and gather. They move elements of any
// dtype as bytes; none computes on them.
//
//===----------------------------------------------------------------------===//

#include "CpuRuntime.h"
#include "KernelUtils.h"

#include <cmath>
#include <cstring>

using namespace lethe::rt;

namespace {

/// Copies one element of `size` bytes.
inline void copyElement(char *destination, const char *source, size_t size) {
  std::memcpy(destination, source, size);
}

/// Product of shape[begin, end).
int64_t product(const lethe_rt_tensor &tensor, int32_t begin, int32_t end) {
  int64_t result = 1;
  for (int32_t dim = begin; dim < end; ++dim)
    result *= tensor.shape[dim];
  return result;
}

/// Checks that `a` and `b` have the same rank and dims except along `axis`.
bool checkSameExceptAxis(lethe_rt_context *context, const char *kernel,
                         const lethe_rt_tensor &a, const lethe_rt_tensor &b,
                         int64_t axis) {
  bool same = a.rank == b.rank && a.dtype == b.dtype;
  for (int32_t dim = 0; same && dim < a.rank; ++dim)
    same = dim == axis || a.shape[dim] == b.shape[dim];
  if (!same)
    fail(context, kernel,
         "tensors %s (%s) and %s (%s) differ outside axis %lld",
         shapeString(a).c_str(), dtypeName(a.dtype), shapeString(b).c_str(),
         dtypeName(b.dtype), static_cast<long long>(axis));
  return same;
}

/// Checks that the slice of `whole` from `starts` in steps of `steps` with
/// the shape of `part` stays inside `whole`; gives the offset of its first
/// element and, per dim, the distance between its elements in `whole`.
bool getSliceGeometry(lethe_rt_context *context, const char *kernel,
                      const char *wholeName, const lethe_rt_tensor &whole,
                      const lethe_rt_tensor &part, const int64_t *starts,
                      const int64_t *steps, int64_t &base,
                      std::vector<int64_t> &strides) {
  if (whole.rank > 0 && (!starts || !steps)) {
    fail(context, kernel, "starts or steps is missing");
    return false;
  }
  std::vector<int64_t> wholeStrides = stridesOf(whole);
  strides.assign(whole.rank, 0);
  base = 0;
  for (int32_t dim = 0; dim < whole.rank; ++dim) {
    int64_t count = part.shape[dim];
    if (steps[dim] == 0) {
      fail(context, kernel, "steps[%d] is 0", dim);
      return false;
    }
    if (count > 0) {
      int64_t last = starts[dim] + (count - 1) * steps[dim];
      if (starts[dim] < 0 || starts[dim] >= whole.shape[dim] || last < 0 ||
          last >= whole.shape[dim]) {
        fail(context, kernel,
             "dim %d: %lld elements from %lld in steps of %lld leave %s's "
             "%lld",
             dim, static_cast<long long>(count),
             static_cast<long long>(starts[dim]),
             static_cast<long long>(steps[dim]), wholeName,
             static_cast<long long>(whole.shape[dim]));
        return false;
      }
    }
    base += starts[dim] * wholeStrides[dim];
    strides[dim] = steps[dim] * wholeStrides[dim];
  }
  return true;
}

/// The names a kernel gives gather's data and result.
struct GatherNames {
  const char *data, *out;
};

/// Checks the indices, axis and ranks of a gather from `data` into `out`.
bool checkGather(lethe_rt_context *context, const char *kernel,
                 GatherNames names, const lethe_rt_tensor &data,
                 const lethe_rt_tensor &indices, int64_t axis,
                 const lethe_rt_tensor &out) {
  if (indices.dtype != LETHE_RT_I32 && indices.dtype != LETHE_RT_I64) {
    fail(context, kernel, "indices must be i32 or i64, got %s",
         dtypeName(indices.dtype));
    return false;
  }
  if (axis < 0 || axis >= data.rank) {
    fail(context, kernel, "axis %lld is out of range for rank %d",
         static_cast<long long>(axis), data.rank);
    return false;
  }
  // out is data.shape[:axis] + indices.shape + data.shape[axis+1:].
  std::vector<int64_t> expected(data.shape, data.shape + axis);
  expected.insert(expected.end(), indices.shape, indices.shape + indices.rank);
  expected.insert(expected.end(), data.shape + axis + 1,
                  data.shape + data.rank);
  if (shapeOf(out) != expected) {
    fail(context, kernel, "%s (%s) must be %s for %s (%s), indices (%s)",
         names.out, shapeString(out).c_str(), shapeText(expected).c_str(),
         names.data, shapeString(data).c_str(), shapeString(indices).c_str());
    return false;
  }
  return true;
}

} // namespace

extern "C" lethe_rt_status lethe_rt_transpose(lethe_rt_context *context,
                                              const lethe_rt_tensor *x,
                                              const int64_t *perm,
                                              const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_transpose";
  if (!checkTensor(context, kernel, "x", x) ||
      !checkDtype(context, kernel, "out", out, x->dtype) ||
      !checkRank(context, kernel, "out", *out, x->rank))
    return LETHE_RT_ERROR;
  if (x->rank > 0 && !perm)
    return fail(context, kernel, "perm is missing");
  std::vector<int64_t> inputStrides = stridesOf(*x), strides(x->rank);
  std::vector<bool> seen(x->rank, false);
  for (int32_t dim = 0; dim < x->rank; ++dim) {
    int64_t source = perm[dim];
    if (source < 0 || source >= x->rank || seen[source])
      return fail(context, kernel, "perm is not a permutation of %d dims",
                  x->rank);
    seen[source] = true;
    if (out->shape[dim] != x->shape[source])
      return fail(context, kernel,
                  "out (%s) is not x (%s) with its dims permuted",
                  shapeString(*out).c_str(), shapeString(*x).c_str());
    strides[dim] = inputStrides[source];
  }
  size_t size = lethe_rt_dtype_size(x->dtype);
  const char *source = static_cast<const char *>(x->data);
  char *destination = static_cast<char *>(out->data);
  forEachIndex(shapeOf(*out), {strides},
               [&](int64_t index, const int64_t *offsets) {
                 copyElement(destination + index * size,
                             source + offsets[0] * size, size);
               });
  return LETHE_RT_OK;
}

namespace {

/// Checks that `parts` laid side by side along `axis` make up `whole` (what
/// concat reads and split writes); `what` names the parts in messages.
bool checkParts(lethe_rt_context *context, const char *kernel,
                const lethe_rt_tensor *whole,
                const lethe_rt_tensor *const *parts, int64_t count,
                int64_t axis, const char *what) {
  if (!checkTensor(context, kernel, what, whole))
    return false;
  if (count < 1 || !parts) {
    fail(context, kernel, "needs at least one of the %s", what);
    return false;
  }
  if (axis < 0 || axis >= whole->rank) {
    fail(context, kernel, "axis %lld is out of range for rank %d",
         static_cast<long long>(axis), whole->rank);
    return false;
  }
  int64_t total = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (!checkTensor(context, kernel, what, parts[i]) ||
        !checkSameExceptAxis(context, kernel, *parts[i], *whole, axis))
      return false;
    total += parts[i]->shape[axis];
  }
  if (total != whole->shape[axis]) {
    fail(context, kernel, "the %s add up to %lld along axis %lld, not %lld",
         what, static_cast<long long>(total), static_cast<long long>(axis),
         static_cast<long long>(whole->shape[axis]));
    return false;
  }
  return true;
}

/// Copies between `whole` and its `parts` along `axis`: into `whole` (concat)
/// when `intoWhole`, out of it (split) otherwise.
void copyParts(const lethe_rt_tensor &whole,
               const lethe_rt_tensor *const *parts, int64_t count, int64_t axis,
               bool intoWhole) {
  size_t size = lethe_rt_dtype_size(whole.dtype);
  int64_t outer = product(whole, 0, axis);
  int64_t inner = product(whole, axis + 1, whole.rank) * size;
  int64_t wholeRow = whole.shape[axis] * inner;
  char *wholeData = static_cast<char *>(whole.data);
  int64_t offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t row = parts[i]->shape[axis] * inner;
    char *partData = static_cast<char *>(parts[i]->data);
    for (int64_t block = 0; block < outer && row > 0; ++block) {
      char *inWhole = wholeData + block * wholeRow + offset;
      char *inPart = partData + block * row;
      if (intoWhole)
        std::memcpy(inWhole, inPart, row);
      else
        std::memcpy(inPart, inWhole, row);
    }
    offset += row;
  }
}

} // namespace

extern "C" lethe_rt_status lethe_rt_concat(lethe_rt_context *context,
                                           const lethe_rt_tensor *const *inputs,
                                           int64_t num_inputs, int64_t axis,
                                           const lethe_rt_tensor *out) {
  if (!checkParts(context, "lethe_rt_concat", out, inputs, num_inputs, axis,
                  "inputs"))
    return LETHE_RT_ERROR;
  copyParts(*out, inputs, num_inputs, axis, /*intoWhole=*/true);
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_split(lethe_rt_context *context,
                                          const lethe_rt_tensor *x,
                                          int64_t axis,
                                          const lethe_rt_tensor *const *outputs,
                                          int64_t num_outputs) {
  if (!checkParts(context, "lethe_rt_split", x, outputs, num_outputs, axis,
                  "outputs"))
    return LETHE_RT_ERROR;
  copyParts(*x, outputs, num_outputs, axis, /*intoWhole=*/false);
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_slice(lethe_rt_context *context,
                                          const lethe_rt_tensor *x,
                                          const int64_t *starts,
                                          const int64_t *steps,
                                          const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_slice";
  if (!checkTensor(context, kernel, "x", x) ||
      !checkDtype(context, kernel, "out", out, x->dtype) ||
      !checkRank(context, kernel, "out", *out, x->rank))
    return LETHE_RT_ERROR;
  int64_t base = 0;
  std::vector<int64_t> strides;
  if (!getSliceGeometry(context, kernel, "x", *x, *out, starts, steps, base,
                        strides))
    return LETHE_RT_ERROR;
  size_t size = lethe_rt_dtype_size(x->dtype);
  const char *source = static_cast<const char *>(x->data) + base * size;
  char *destination = static_cast<char *>(out->data);
  forEachIndex(shapeOf(*out), {strides},
               [&](int64_t index, const int64_t *offsets) {
                 copyElement(destination + index * size,
                             source + offsets[0] * size, size);
               });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_gather(lethe_rt_context *context,
                                           const lethe_rt_tensor *data,
                                           const lethe_rt_tensor *indices,
                                           int64_t axis,
                                           const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_gather";
  if (!checkTensor(context, kernel, "data", data) ||
      !checkTensor(context, kernel, "indices", indices) ||
      !checkDtype(context, kernel, "out", out, data->dtype))
    return LETHE_RT_ERROR;
  if (!checkGather(context, kernel, {"data", "out"}, *data, *indices, axis,
                   *out))
    return LETHE_RT_ERROR;
  size_t size = lethe_rt_dtype_size(data->dtype);
  int64_t outer = product(*data, 0, axis);
  int64_t inner = product(*data, axis + 1, data->rank) * size;
  int64_t dim = data->shape[axis];
  int64_t count = numElements(*indices);
  const char *source = static_cast<const char *>(data->data);
  char *destination = static_cast<char *>(out->data);
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = indices->dtype == LETHE_RT_I64
                        ? static_cast<const int64_t *>(indices->data)[i]
                        : static_cast<const int32_t *>(indices->data)[i];
    if (index < -dim || index >= dim)
      return fail(context, kernel,
                  "index %lld (element %lld) is out of range for a dimension "
                  "of %lld",
                  static_cast<long long>(index), static_cast<long long>(i),
                  static_cast<long long>(dim));
    if (index < 0)
      index += dim;
    for (int64_t block = 0; block < outer; ++block)
      std::memcpy(destination + (block * count + i) * inner,
                  source + (block * dim + index) * inner, inner);
  }
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_slice_grad(lethe_rt_context *context,
                                               const lethe_rt_tensor *dy,
                                               const int64_t *starts,
                                               const int64_t *steps,
                                               const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_slice_grad";
  if (!checkTensor(context, kernel, "dy", dy) ||
      !checkDtype(context, kernel, "dx", dx, dy->dtype) ||
      !checkRank(context, kernel, "dx", *dx, dy->rank))
    return LETHE_RT_ERROR;
  int64_t base = 0;
  std::vector<int64_t> strides;
  if (!getSliceGeometry(context, kernel, "dx", *dx, *dy, starts, steps, base,
                        strides))
    return LETHE_RT_ERROR;
  if (overlaps(*dx, *dy))
    return fail(context, kernel, "dx overlaps dy");
  size_t size = lethe_rt_dtype_size(dx->dtype);
  std::memset(dx->data, 0, numElements(*dx) * size);
  const char *source = static_cast<const char *>(dy->data);
  char *destination = static_cast<char *>(dx->data) + base * size;
  forEachIndex(shapeOf(*dy), {strides},
               [&](int64_t index, const int64_t *offsets) {
                 copyElement(destination + offsets[0] * size,
                             source + index * size, size);
               });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_gather_grad(lethe_rt_context *context,
                                                const lethe_rt_tensor *dy,
                                                const lethe_rt_tensor *indices,
                                                int64_t axis,
                                                const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_gather_grad";
  if (!checkFloatTensor(context, kernel, "dy", dy) ||
      !checkTensor(context, kernel, "indices", indices) ||
      !checkDtype(context, kernel, "dx", dx, dy->dtype))
    return LETHE_RT_ERROR;
  if (!checkGather(context, kernel, {"dx", "dy"}, *dx, *indices, axis, *dy))
    return LETHE_RT_ERROR;
  int64_t outer = product(*dx, 0, axis);
  int64_t inner = product(*dx, axis + 1, dx->rank);
  int64_t dim = dx->shape[axis];
  int64_t count = numElements(*indices);
  // Sums in the compute type, indices in order: the same bits every run.
  lethe_rt_status status = LETHE_RT_OK;
  dispatchFloat(dx->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    std::vector<C> sum(numElements(*dx), C(0));
    for (int64_t i = 0; i < count; ++i) {
      int64_t index = indices->dtype == LETHE_RT_I64
                          ? static_cast<const int64_t *>(indices->data)[i]
                          : static_cast<const int32_t *>(indices->data)[i];
      if (index < -dim || index >= dim) {
        status = fail(context, kernel,
                      "index %lld (element %lld) is out of range for a "
                      "dimension of %lld",
                      static_cast<long long>(index), static_cast<long long>(i),
                      static_cast<long long>(dim));
        return;
      }
      if (index < 0)
        index += dim;
      for (int64_t block = 0; block < outer; ++block) {
        C *target = sum.data() + (block * dim + index) * inner;
        int64_t from = (block * count + i) * inner;
        for (int64_t j = 0; j < inner; ++j)
          target[j] += load<T>(dy->data, from + j);
      }
    }
    for (size_t i = 0; i < sum.size(); ++i)
      store<T>(dx->data, i, sum[i]);
  });
  return status;
}
