//===- Dropout.cu - Dropout kernel of the CUDA backend --------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_dropout on the compute stream, with the CPU backend's arguments
// and messages (common/Checks.h) and its very mask and outputs: which
// elements are kept, and what is written for them, is common/DropoutMask.h's
// single definition, here one thread per block of four elements
// (grid-stride). The step counter lives in the arena, where the step's
// increment may have written it on the same stream: the kernel reads it on
// the device, never the host when the call is made.
//
// Outside training out = x is a copy on the compute stream and the mask is
// set to ones. out may be x itself; an out that partly overlaps x is refused
// (threads would read elements others have written).
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"
#include "common/DropoutMask.h"

using namespace lethe::rt;

namespace {

/// Dropout in training of the elements of `operands` (storage type T), one
/// block of four elements per thread; `step` is the step counter or null
/// (step 0).
template <typename T>
__global__ void dropoutKernel(DropoutOperands operands, uint64_t seed,
                              const int64_t *step, double ratio) {
  uint64_t stepValue = step ? static_cast<uint64_t>(*step) : 0;
  ComputeType<T> scale = dropoutScale<T>(ratio);
  LETHE_GRID_STRIDE_LOOP(block, (operands.count + 3) / 4) {
    dropoutBlock<T>(operands, seed, stepValue, ratio, scale, block);
  }
}

} // namespace

extern "C" lethe_rt_status
lethe_rt_dropout(lethe_rt_context *context, const lethe_rt_tensor *x,
                 double ratio, uint64_t seed, const lethe_rt_tensor *step,
                 int training, const lethe_rt_tensor *out,
                 const lethe_rt_tensor *mask) {
  const char *kernel = "lethe_rt_dropout";
  if (!context || !checkDevice(context, kernel) ||
      !checkDropout(context, kernel, x, ratio, step, out, mask))
    return LETHE_RT_ERROR;
  int64_t count = numElements(*x);
  if (count == 0)
    return LETHE_RT_OK;
  if (out->data != x->data && overlaps(*x, *out))
    return fail(context, kernel,
                "x and out overlap without being the same memory (the cuda "
                "backend does not write dropout within overlapping ranges)");
  uint8_t *maskData = mask ? static_cast<uint8_t *>(mask->data) : nullptr;
  if (!training) {
    if (out->data != x->data &&
        !checkCuda(context, kernel, "cudaMemcpyAsync",
                   cudaMemcpyAsync(out->data, x->data,
                                   count * lethe_rt_dtype_size(x->dtype),
                                   cudaMemcpyDeviceToDevice, context->compute)))
      return LETHE_RT_ERROR;
    if (maskData &&
        !checkCuda(context, kernel, "cudaMemsetAsync",
                   cudaMemsetAsync(maskData, 1, count, context->compute)))
      return LETHE_RT_ERROR;
    return LETHE_RT_OK;
  }
  DropoutOperands operands{x->data, out->data, maskData, count};
  const int64_t *stepData =
      step ? static_cast<const int64_t *>(step->data) : nullptr;
  return launchForFloat(x->dtype, [&](auto tag) {
    return launchElementwise(context, kernel, "dropoutKernel", (count + 3) / 4,
                             dropoutKernel<decltype(tag)>, operands, seed,
                             stepData, ratio);
  });
}
