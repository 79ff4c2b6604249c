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

} // namespace

extern "C" lethe_rt_status lethe_rt_transpose(lethe_rt_context *context,
                                              const lethe_rt_tensor *x,
                                              const int64_t *perm,
                                              const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_transpose";
  std::vector<int64_t> strides;
  if (!checkTranspose(context, kernel, x, perm, out, strides))
    return LETHE_RT_ERROR;
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
  if (!report(context, "lethe_rt_concat",
              partsError(tensorError, out, inputs, num_inputs, axis, "inputs")))
    return LETHE_RT_ERROR;
  copyParts(*out, inputs, num_inputs, axis, /*intoWhole=*/true);
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_split(lethe_rt_context *context,
                                          const lethe_rt_tensor *x,
                                          int64_t axis,
                                          const lethe_rt_tensor *const *outputs,
                                          int64_t num_outputs) {
  if (!report(
          context, "lethe_rt_split",
          partsError(tensorError, x, outputs, num_outputs, axis, "outputs")))
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
  int64_t base = 0;
  std::vector<int64_t> strides;
  if (!checkSlice(context, kernel, /*gradient=*/false, x, starts, steps, out,
                  base, strides))
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

namespace {

/// Element `i` of a gather's indices (i32 or i64, as checkGather allows).
int64_t indexAt(const lethe_rt_tensor *indices, int64_t i) {
  return indices->dtype == LETHE_RT_I64
             ? static_cast<const int64_t *>(indices->data)[i]
             : static_cast<const int32_t *>(indices->data)[i];
}

/// Reports the first of `indices` outside [-dim, dim) and returns false;
/// true when they are all within.
bool checkGatherIndices(lethe_rt_context *context, const char *kernel,
                        const lethe_rt_tensor *indices, int64_t dim) {
  int64_t count = numElements(*indices);
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = indexAt(indices, i);
    if (index < -dim || index >= dim)
      return report(context, kernel, gatherIndexError(index, i, dim));
  }
  return true;
}

} // namespace

extern "C" lethe_rt_status lethe_rt_gather(lethe_rt_context *context,
                                           const lethe_rt_tensor *data,
                                           const lethe_rt_tensor *indices,
                                           int64_t axis,
                                           const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_gather";
  if (!checkGather(context, kernel, /*gradient=*/false, data, indices, axis,
                   out))
    return LETHE_RT_ERROR;
  size_t size = lethe_rt_dtype_size(data->dtype);
  int64_t outer = product(*data, 0, axis);
  int64_t inner = product(*data, axis + 1, data->rank) * size;
  int64_t dim = data->shape[axis];
  int64_t count = numElements(*indices);
  const char *source = static_cast<const char *>(data->data);
  char *destination = static_cast<char *>(out->data);
  // Every index is checked before anything is written: a failed gather
  // leaves `out` as it was, as the CUDA backend's does.
  if (!checkGatherIndices(context, kernel, indices, dim))
    return LETHE_RT_ERROR;
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = indexAt(indices, i);
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
  int64_t base = 0;
  std::vector<int64_t> strides;
  if (!checkSlice(context, kernel, /*gradient=*/true, dy, starts, steps, dx,
                  base, strides) ||
      !report(context, kernel, overlapError("dx", *dx, "dy", *dy)))
    return LETHE_RT_ERROR;
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
  if (!checkGather(context, kernel, /*gradient=*/true, dy, indices, axis, dx))
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
    if (!checkGatherIndices(context, kernel, indices, dim)) {
      status = LETHE_RT_ERROR;
      return;
    }
    std::vector<C> sum(numElements(*dx), C(0));
    for (int64_t i = 0; i < count; ++i) {
      int64_t index = indexAt(indices, i);
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
