//===- Dropout.cpp - Dropout kernel of the CPU backend --------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_dropout. Which elements are kept, and what is written for them,
// is defined once for every backend in common/DropoutMask.h (Philox-4x32-10
// keyed by the seed, counting the step and the block of four elements): this
// file walks the blocks in order.
//
//===----------------------------------------------------------------------===//

#include "CpuRuntime.h"
#include "common/DropoutMask.h"

using namespace lethe::rt;

extern "C" lethe_rt_status
lethe_rt_dropout(lethe_rt_context *context, const lethe_rt_tensor *x,
                 double ratio, uint64_t seed, const lethe_rt_tensor *step,
                 int training, const lethe_rt_tensor *out,
                 const lethe_rt_tensor *mask) {
  const char *kernel = "lethe_rt_dropout";
  if (!checkDropout(context, kernel, x, ratio, step, out, mask))
    return LETHE_RT_ERROR;
  int64_t count = numElements(*x);
  if (count == 0)
    return LETHE_RT_OK;
  uint8_t *maskData = mask ? static_cast<uint8_t *>(mask->data) : nullptr;
  if (!training) {
    if (out->data != x->data)
      std::memmove(out->data, x->data, count * lethe_rt_dtype_size(x->dtype));
    if (maskData)
      std::memset(maskData, 1, count);
    return LETHE_RT_OK;
  }
  uint64_t stepValue =
      step ? static_cast<uint64_t>(load<int64_t>(step->data, 0)) : 0;
  DropoutOperands operands{x->data, out->data, maskData, count};
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    ComputeType<T> scale = dropoutScale<T>(ratio);
    for (int64_t block = 0; block * 4 < count; ++block)
      dropoutBlock<T>(operands, seed, stepValue, ratio, scale, block);
  });
  return LETHE_RT_OK;
}
