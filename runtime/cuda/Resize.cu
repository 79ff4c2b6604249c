//===- Resize.cu - ONNX Resize on the CUDA backend ------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_resize and lethe_rt_resize_grad on the compute stream, with the
// CPU backend's semantics, argument checks and messages
// (runtime/cpu/Resize.cpp) and its bits: both take their taps from
// common/ResizeSampling.h, computed here on the GPU with the same IEEE
// operations (no FMA contraction, correctly rounded division).
//
// Nearest copies, for each output element, the element its taps name (any
// dtype, as words). Linear and cubic compute each output element in one
// thread as the CPU backend's passes compute it (resizeInterpolatedAt): the
// same sums in double, in the same order, without the passes'
// intermediate tensors. The gradient does the same for each dx element
// (resizeGradAt): for each dim that is not the identity, the forward's taps
// are grouped by the input index they read (SourceGroups.h, in scratch
// memory on the compute stream), so that each dx element adds its dy
// elements in the CPU backend's order, without atomics.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"
#include "SourceGroups.h"
#include "common/ResizeSampling.h"

using namespace lethe::rt;

namespace {

/// Each level's grouped taps, passed to resizeGradKernel by value.
struct ResizeGradLevels {
  ResizeGradLevel level[maxBroadcastRank];
};

/// out[i] = x[the element out element i's taps name], or the extrapolation
/// value (in x's dtype) where they fall outside.
template <typename Word>
__global__ void resizeNearestKernel(const Word *x, Word *out, int64_t count,
                                    ResizeGeometry geometry,
                                    Word extrapolated) {
  LETHE_GRID_STRIDE_LOOP(i, count) {
    int64_t source = resizeNearestSource(geometry, i);
    out[i] = source < 0 ? extrapolated : x[source];
  }
}

/// Linear and cubic: out[i] as the CPU backend's passes compute it.
template <typename T>
__global__ void resizeInterpolatedKernel(const void *x, void *out,
                                         int64_t count,
                                         ResizeGeometry geometry) {
  LETHE_GRID_STRIDE_LOOP(i, count) {
    store<T>(out, i, resizeInterpolatedAt<T>(geometry, x, i));
  }
}

/// The taps of one dim in slots (resizeTapSlot): each keyed by the input
/// index it reads, numbered, and weighted.
__global__ void tapKeysKernel(ResizeSampling sampling, ResizeDim dim,
                              uint64_t *keys, int64_t *numbers,
                              double *weights) {
  LETHE_GRID_STRIDE_LOOP(slot, dim.outLength * sampling.tapsPerIndex()) {
    resizeTapSlot(sampling, dim, slot, keys[slot], weights[slot]);
    numbers[slot] = slot;
  }
}

/// dx[i] as the adjoint of the CPU backend's passes computes it.
template <typename T>
__global__ void resizeGradKernel(const void *dy, void *dx, int64_t count,
                                 ResizeGeometry geometry,
                                 ResizeGradLevels levels) {
  LETHE_GRID_STRIDE_LOOP(i, count) {
    store<T>(dx, i, resizeGradAt<T>(geometry, levels.level, dy, i));
  }
}

/// The geometry of the resize of `x` into `out`; records an error naming
/// `call` when x has more dims than the cuda backend's kernels take.
bool geometryOf(lethe_rt_context *context, const char *call,
                const lethe_rt_resize_options &options,
                const lethe_rt_tensor &x, const lethe_rt_tensor &out,
                const double *scales, ResizeGeometry &geometry) {
  if (makeResizeGeometry(options, x, out, scales, geometry))
    return true;
  return failRankLimit(context, call, "x", x, "dims");
}

} // namespace

extern "C" lethe_rt_status
lethe_rt_resize(lethe_rt_context *context, const lethe_rt_tensor *x,
                const double *scales, const lethe_rt_resize_options *options,
                const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_resize";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  if (!checkResize(context, kernel, /*gradient=*/false, x, scales, options,
                   out))
    return LETHE_RT_ERROR;
  int64_t count = numElements(*out);
  if (count == 0)
    return LETHE_RT_OK;
  ResizeGeometry geometry;
  if (!report(context, kernel, overlapError("out", *out, "x", *x)) ||
      !geometryOf(context, kernel, *options, *x, *out, scales, geometry))
    return LETHE_RT_ERROR;

  if (options->mode == LETHE_RT_RESIZE_NEAREST) {
    uint64_t extrapolated =
        extrapolationElement(x->dtype, options->extrapolation_value);
    bool launched =
        launchForWord(lethe_rt_dtype_size(x->dtype), [&](auto word) {
          using Word = decltype(word);
          // The element is in extrapolated's low bytes (little-endian).
          return launchElementwise(context, kernel, "resizeNearestKernel",
                                   count, resizeNearestKernel<Word>,
                                   static_cast<const Word *>(x->data),
                                   static_cast<Word *>(out->data), count,
                                   geometry, static_cast<Word>(extrapolated));
        });
    return launched ? LETHE_RT_OK : LETHE_RT_ERROR;
  }
  return launchForFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    return launchElementwise(context, kernel, "resizeInterpolatedKernel", count,
                             resizeInterpolatedKernel<T>, x->data, out->data,
                             count, geometry);
  });
}

extern "C" lethe_rt_status lethe_rt_resize_grad(
    lethe_rt_context *context, const lethe_rt_tensor *dy, const double *scales,
    const lethe_rt_resize_options *options, const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_resize_grad";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  if (!checkResize(context, kernel, /*gradient=*/true, dy, scales, options, dx))
    return LETHE_RT_ERROR;
  int64_t count = numElements(*dx);
  if (count == 0)
    return LETHE_RT_OK;
  ResizeGeometry geometry;
  if (!report(context, kernel, overlapError("dx", *dx, "dy", *dy)) ||
      !geometryOf(context, kernel, *options, *dx, *dy, scales, geometry))
    return LETHE_RT_ERROR;

  // Per level, the forward's taps grouped by the input index they read.
  StreamScratch scratch(context, kernel);
  int perIndex = geometry.sampling.tapsPerIndex();
  SourceGrouping groupings[maxBroadcastRank];
  size_t weights[maxBroadcastRank];
  for (int32_t l = 0; l < geometry.levels; ++l) {
    const ResizeDim &dim = geometry.dims[geometry.levelDims[l]];
    int64_t slots = dim.outLength * perIndex;
    if (!reserveSourceGrouping(context, kernel, scratch, slots, dim.inLength,
                               groupings[l]))
      return LETHE_RT_ERROR;
    weights[l] = scratch.reserve<double>(slots);
  }
  if (!scratch.allocate())
    return LETHE_RT_ERROR;
  ResizeGradLevels levels;
  for (int32_t l = 0; l < geometry.levels; ++l) {
    const ResizeDim &dim = geometry.dims[geometry.levelDims[l]];
    const SourceGrouping &grouping = groupings[l];
    levels.level[l].weights = scratch.at<double>(weights[l]);
    if (!launchElementwise(context, kernel, "tapKeysKernel", grouping.sources,
                           tapKeysKernel, geometry.sampling, dim,
                           scratch.at<uint64_t>(grouping.keys),
                           scratch.at<int64_t>(grouping.numbers),
                           scratch.at<double>(weights[l])) ||
        !groupSources(context, kernel, scratch, grouping,
                      levels.level[l].groups))
      return LETHE_RT_ERROR;
  }
  lethe_rt_status status = launchForFloat(dx->dtype, [&](auto tag) {
    using T = decltype(tag);
    return launchElementwise(context, kernel, "resizeGradKernel", count,
                             resizeGradKernel<T>, dy->data, dx->data, count,
                             geometry, levels);
  });
  if (!scratch.release())
    return LETHE_RT_ERROR;
  return status;
}
