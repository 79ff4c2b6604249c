//===- DataMovement.cpp - Copy and broadcast kernels of the CPU backend ---===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "CpuRuntime.h"

using namespace lethe::rt;

extern "C" lethe_rt_status lethe_rt_copy(lethe_rt_context *context,
                                         const lethe_rt_tensor *in,
                                         const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_copy";
  if (!checkTensor(context, kernel, "in", in) ||
      !checkDtype(context, kernel, "out", out, in->dtype))
    return LETHE_RT_ERROR;
  if (numElements(*in) != numElements(*out))
    return fail(context, kernel,
                "in (%s) and out (%s) have different element counts",
                shapeString(*in).c_str(), shapeString(*out).c_str());
  if (in->data != out->data && numElements(*in) > 0)
    std::memmove(out->data, in->data,
                 numElements(*in) * lethe_rt_dtype_size(in->dtype));
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_expand(lethe_rt_context *context,
                                           const lethe_rt_tensor *x,
                                           const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_expand";
  std::vector<int64_t> strides;
  if (!checkExpand(context, kernel, x, out, strides))
    return LETHE_RT_ERROR;
  size_t elementSize = lethe_rt_dtype_size(x->dtype);
  const char *source = static_cast<const char *>(x->data);
  char *destination = static_cast<char *>(out->data);
  forEachIndex(shapeOf(*out), {strides},
               [&](int64_t index, const int64_t *offsets) {
                 std::memcpy(destination + index * elementSize,
                             source + offsets[0] * elementSize, elementSize);
               });
  return LETHE_RT_OK;
}
