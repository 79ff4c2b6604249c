//===- Shape.cu - Data-movement kernels of the CUDA backend ---------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_expand, lethe_rt_transpose, lethe_rt_concat, lethe_rt_split,
// lethe_rt_slice, lethe_rt_slice_grad, lethe_rt_gather and
// lethe_rt_gather_grad on the compute stream, with the CPU backend's
// semantics, argument checks and messages (runtime/cpu/Shape.cpp,
// DataMovement.cpp; the checks are runtime/common's). All but gather_grad
// move elements of any dtype as words of their size, one thread per output
// element reading where the output element's index map (common/IndexMaps.h)
// says: the CPU backend's bits. slice_grad is a gather too (each dx element
// takes its dy element or 0), and gather_grad adds each dx element's dy
// elements in the CPU backend's order, grouped by index (SourceGroups.h), in
// the compute type: its bits as well, with no atomics.
//
// Where the CPU backend copies element after element, an output that
// overlaps an input would make threads read elements others have already
// overwritten: the cuda backend refuses it. gather and gather_grad check
// their indices on the device and wait for the compute stream to report the
// first one out of range, as the CPU backend does.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"
#include "SourceGroups.h"

#include <string>

using namespace lethe::rt;

namespace {

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// out[i] = in[base + map offset of i] (expand, transpose, slice).
template <typename Word>
__global__ void moveKernel(const Word *in, Word *out, int64_t count,
                           int64_t base, BroadcastMap<1> map) {
  LETHE_GRID_STRIDE_LOOP(i, count) {
    int64_t offsets[1];
    map.offsetsAt(i, offsets);
    out[i] = in[base + offsets[0]];
  }
}

/// Copies a part into its place in the whole (concat) or out of it (split).
template <typename Word, bool IntoWhole>
__global__ void partKernel(Word *whole, Word *part, int64_t count,
                           PartMap map) {
  LETHE_GRID_STRIDE_LOOP(i, count) {
    if constexpr (IntoWhole)
      whole[map.wholeOffset(i)] = part[i];
    else
      part[i] = whole[map.wholeOffset(i)];
  }
}

/// dx[i] = the dy element the slice read from dx's position i, or 0.
template <typename Word>
__global__ void sliceGradKernel(const Word *dy, Word *dx, int64_t count,
                                SliceGradMap map) {
  LETHE_GRID_STRIDE_LOOP(i, count) {
    int64_t source = map.sourceAt(i);
    dx[i] = source < 0 ? Word(0) : dy[source];
  }
}

/// out[i] = data[the element index i gathers].
template <typename Word>
__global__ void gatherKernel(const Word *data, Word *out, int64_t count,
                             GatherMap map) {
  LETHE_GRID_STRIDE_LOOP(i, count) { out[i] = data[map.sourceAt(i)]; }
}

/// Flags each index outside [-dim, dim).
__global__ void invalidIndexKernel(GatherMap map, unsigned long long *first) {
  LETHE_GRID_STRIDE_LOOP(i, map.count) {
    if (!map.inRange(i))
      atomicMin(first, static_cast<unsigned long long>(i));
  }
}

/// Keys the gather's sources (positions in indices) by the index along the
/// axis that each names, for SourceGroups.
__global__ void gatherKeysKernel(GatherMap map, uint64_t *keys,
                                 int64_t *numbers) {
  LETHE_GRID_STRIDE_LOOP(i, map.count) {
    keys[i] = static_cast<uint64_t>(map.indexAt(i));
    numbers[i] = i;
  }
}

/// dx[i] = the sum of the dy elements gathered from dx's position i.
template <typename T>
__global__ void gatherGradKernel(const void *dy, void *dx, int64_t count,
                                 GatherMap map, SourceGroups groups) {
  LETHE_GRID_STRIDE_LOOP(i, count) {
    store<T>(dx, i, gatherGradAt<T>(map, groups, dy, i));
  }
}

//===----------------------------------------------------------------------===//
// Checks and launches
//===----------------------------------------------------------------------===//

/// `out` (named `outName`) and `in` lie apart: the cuda backend's threads
/// would otherwise read elements that others have already overwritten.
bool checkApart(lethe_rt_context *context, const char *call,
                const std::string &outName, const lethe_rt_tensor &out,
                const std::string &inName, const lethe_rt_tensor &in) {
  std::string error = overlapError(outName.c_str(), out, inName.c_str(), in);
  if (error.empty())
    return true;
  fail(context, call,
       "%s (the cuda backend does not move elements within overlapping "
       "memory)",
       error.c_str());
  return false;
}

/// Launches moveKernel: out[i] = in[base + offset], the offset of out's
/// index i through `strides` (in's, one per dim of out).
bool launchMove(lethe_rt_context *context, const char *call,
                const lethe_rt_tensor &in, const lethe_rt_tensor &out,
                int64_t base, const std::vector<int64_t> &strides) {
  BroadcastMap<1> map;
  if (!makeBroadcastMap(shapeOf(out), {strides}, map))
    return failRankLimit(context, call, "out", out, "dims that do not merge");
  int64_t count = numElements(out);
  return launchForWord(lethe_rt_dtype_size(in.dtype), [&](auto word) {
    using Word = decltype(word);
    return launchElementwise(context, call, "moveKernel", count,
                             moveKernel<Word>,
                             static_cast<const Word *>(in.data),
                             static_cast<Word *>(out.data), count, base, map);
  });
}

/// Checks the device, then concat's (`intoWhole`) or split's arguments
/// (partsError; the parts named `what`) and that no part overlaps the
/// whole, named `wholeName`.
bool checkParts(lethe_rt_context *context, const char *call, bool intoWhole,
                const char *wholeName, const lethe_rt_tensor *whole,
                const lethe_rt_tensor *const *parts, int64_t count,
                int64_t axis, const char *what) {
  if (!context || !checkDevice(context, call) ||
      !report(context, call,
              partsError(
                  [context](const char *name, const lethe_rt_tensor *tensor) {
                    return arenaTensorError(context, name, tensor);
                  },
                  whole, parts, count, axis, what)))
    return false;
  for (int64_t i = 0; i < count; ++i) {
    std::string part = std::string(what) + "[" + std::to_string(i) + "]";
    if (!(intoWhole
              ? checkApart(context, call, wholeName, *whole, part, *parts[i])
              : checkApart(context, call, part, *parts[i], wholeName, *whole)))
      return false;
  }
  return true;
}

/// Copies every part into its place in the whole (`IntoWhole`, concat) or
/// out of it (split), one launch per part.
template <bool IntoWhole>
bool copyParts(lethe_rt_context *context, const char *call,
               const lethe_rt_tensor &whole,
               const lethe_rt_tensor *const *parts, int64_t count,
               int64_t axis) {
  std::vector<PartMap> maps = makePartMaps(whole, parts, count, axis);
  for (int64_t i = 0; i < count; ++i) {
    int64_t elements = numElements(*parts[i]);
    bool launched =
        launchForWord(lethe_rt_dtype_size(whole.dtype), [&](auto word) {
          using Word = decltype(word);
          return launchElementwise(
              context, call, "partKernel", elements,
              partKernel<Word, IntoWhole>, static_cast<Word *>(whole.data),
              static_cast<Word *>(parts[i]->data), elements, maps[i]);
        });
    if (!launched)
      return false;
  }
  return true;
}

/// Checks that every index lies in [-dim, dim) on the device, waiting for
/// the compute stream; records the first one that does not, as the CPU
/// backend does.
bool checkIndices(lethe_rt_context *context, const char *call,
                  const GatherMap &map) {
  int64_t invalid = -1;
  if (map.count == 0)
    return true;
  if (!findFirstFlagged(
          context, call,
          [&](unsigned long long *first) {
            return launchElementwise(context, call, "invalidIndexKernel",
                                     map.count, invalidIndexKernel, map, first);
          },
          invalid))
    return false;
  if (invalid < 0)
    return true;
  int64_t value = 0;
  if (!readIndexElement(context, call, map.indices, map.wide, invalid, value))
    return false;
  report(context, call, gatherIndexError(value, invalid, map.dim));
  return false;
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

extern "C" lethe_rt_status lethe_rt_expand(lethe_rt_context *context,
                                           const lethe_rt_tensor *x,
                                           const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_expand";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  std::vector<int64_t> strides;
  if (!checkExpand(context, kernel, x, out, strides) ||
      !checkApart(context, kernel, "out", *out, "x", *x) ||
      !launchMove(context, kernel, *x, *out, 0, strides))
    return LETHE_RT_ERROR;
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_transpose(lethe_rt_context *context,
                                              const lethe_rt_tensor *x,
                                              const int64_t *perm,
                                              const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_transpose";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  std::vector<int64_t> strides;
  if (!checkTranspose(context, kernel, x, perm, out, strides) ||
      !checkApart(context, kernel, "out", *out, "x", *x) ||
      !launchMove(context, kernel, *x, *out, 0, strides))
    return LETHE_RT_ERROR;
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_concat(lethe_rt_context *context,
                                           const lethe_rt_tensor *const *inputs,
                                           int64_t num_inputs, int64_t axis,
                                           const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_concat";
  if (!checkParts(context, kernel, /*intoWhole=*/true, "out", out, inputs,
                  num_inputs, axis, "inputs") ||
      !copyParts<true>(context, kernel, *out, inputs, num_inputs, axis))
    return LETHE_RT_ERROR;
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_split(lethe_rt_context *context,
                                          const lethe_rt_tensor *x,
                                          int64_t axis,
                                          const lethe_rt_tensor *const *outputs,
                                          int64_t num_outputs) {
  const char *kernel = "lethe_rt_split";
  if (!checkParts(context, kernel, /*intoWhole=*/false, "x", x, outputs,
                  num_outputs, axis, "outputs") ||
      !copyParts<false>(context, kernel, *x, outputs, num_outputs, axis))
    return LETHE_RT_ERROR;
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_slice(lethe_rt_context *context,
                                          const lethe_rt_tensor *x,
                                          const int64_t *starts,
                                          const int64_t *steps,
                                          const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_slice";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  int64_t base = 0;
  std::vector<int64_t> strides;
  if (!checkSlice(context, kernel, /*gradient=*/false, x, starts, steps, out,
                  base, strides) ||
      !checkApart(context, kernel, "out", *out, "x", *x) ||
      !launchMove(context, kernel, *x, *out, base, strides))
    return LETHE_RT_ERROR;
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_slice_grad(lethe_rt_context *context,
                                               const lethe_rt_tensor *dy,
                                               const int64_t *starts,
                                               const int64_t *steps,
                                               const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_slice_grad";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  int64_t base = 0;
  std::vector<int64_t> strides;
  if (!checkSlice(context, kernel, /*gradient=*/true, dy, starts, steps, dx,
                  base, strides) ||
      !report(context, kernel, overlapError("dx", *dx, "dy", *dy)))
    return LETHE_RT_ERROR;
  SliceGradMap map;
  if (!makeSliceGradMap(*dx, *dy, starts, steps, map)) {
    failRankLimit(context, kernel, "dx", *dx, "dims that are not 1");
    return LETHE_RT_ERROR;
  }
  int64_t count = numElements(*dx);
  bool launched = launchForWord(lethe_rt_dtype_size(dx->dtype), [&](auto word) {
    using Word = decltype(word);
    return launchElementwise(context, kernel, "sliceGradKernel", count,
                             sliceGradKernel<Word>,
                             static_cast<const Word *>(dy->data),
                             static_cast<Word *>(dx->data), count, map);
  });
  return launched ? LETHE_RT_OK : LETHE_RT_ERROR;
}

extern "C" lethe_rt_status lethe_rt_gather(lethe_rt_context *context,
                                           const lethe_rt_tensor *data,
                                           const lethe_rt_tensor *indices,
                                           int64_t axis,
                                           const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_gather";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  if (!checkGather(context, kernel, /*gradient=*/false, data, indices, axis,
                   out) ||
      !checkApart(context, kernel, "out", *out, "data", *data) ||
      !checkApart(context, kernel, "out", *out, "indices", *indices))
    return LETHE_RT_ERROR;
  GatherMap map = makeGatherMap(*data, *indices, axis);
  if (!checkIndices(context, kernel, map))
    return LETHE_RT_ERROR;
  int64_t count = numElements(*out);
  bool launched =
      launchForWord(lethe_rt_dtype_size(data->dtype), [&](auto word) {
        using Word = decltype(word);
        return launchElementwise(context, kernel, "gatherKernel", count,
                                 gatherKernel<Word>,
                                 static_cast<const Word *>(data->data),
                                 static_cast<Word *>(out->data), count, map);
      });
  return launched ? LETHE_RT_OK : LETHE_RT_ERROR;
}

extern "C" lethe_rt_status lethe_rt_gather_grad(lethe_rt_context *context,
                                                const lethe_rt_tensor *dy,
                                                const lethe_rt_tensor *indices,
                                                int64_t axis,
                                                const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_gather_grad";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  if (!checkGather(context, kernel, /*gradient=*/true, dy, indices, axis, dx) ||
      !checkApart(context, kernel, "dx", *dx, "dy", *dy))
    return LETHE_RT_ERROR;
  GatherMap map = makeGatherMap(*dx, *indices, axis);
  if (!checkIndices(context, kernel, map))
    return LETHE_RT_ERROR;
  int64_t count = numElements(*dx);
  if (count == 0)
    return LETHE_RT_OK;
  // The indices (the sources) grouped by the index along the axis that each
  // names (the targets), in increasing order; then each dx element adds its
  // dy elements in that order.
  StreamScratch scratch(context, kernel);
  SourceGrouping grouping;
  if (!reserveSourceGrouping(context, kernel, scratch, map.count, map.dim,
                             grouping) ||
      !scratch.allocate() ||
      !launchElementwise(context, kernel, "gatherKeysKernel", map.count,
                         gatherKeysKernel, map,
                         scratch.at<uint64_t>(grouping.keys),
                         scratch.at<int64_t>(grouping.numbers)))
    return LETHE_RT_ERROR;
  SourceGroups groups;
  if (!groupSources(context, kernel, scratch, grouping, groups))
    return LETHE_RT_ERROR;
  lethe_rt_status status = launchForFloat(dx->dtype, [&](auto tag) {
    using T = decltype(tag);
    return launchElementwise(context, kernel, "gatherGradKernel", count,
                             gatherGradKernel<T>, dy->data, dx->data, count,
                             map, groups);
  });
  if (!scratch.release())
    return LETHE_RT_ERROR;
  return status;
}
