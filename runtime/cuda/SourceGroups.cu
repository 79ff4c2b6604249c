//===- SourceGroups.cu - Sources grouped by target on the GPU -------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The stable sort by target (CUB's radix sort) and the search for each
// target's first source behind SourceGroups.h, and the scratch memory they
// use.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"
#include "SourceGroups.h"

#include <cub/device/device_radix_sort.cuh>

using namespace lethe::rt;

namespace {

/// offsets[t] = the first of the sorted keys not below t, for t in [0,
/// targets]: target t's sources are then sortedNumbers[offsets[t] ..
/// offsets[t + 1]).
__global__ void targetOffsetsKernel(const uint64_t *sortedKeys, int64_t sources,
                                    int64_t *offsets, int64_t targets) {
  LETHE_GRID_STRIDE_LOOP(target, targets + 1) {
    offsets[target] =
        lowerBound(sortedKeys, sources, static_cast<uint64_t>(target));
  }
}

/// The bits needed to write `value`, at least 1.
int bitsFor(uint64_t value) {
  int bits = 1;
  while (bits < 64 && (value >> bits) != 0)
    ++bits;
  return bits;
}

} // namespace

StreamScratch::~StreamScratch() {
  if (memory)
    (void)cudaFreeAsync(memory, context->compute);
}

bool StreamScratch::allocate() {
  return checkCuda(
      context, call, "cudaMallocAsync",
      cudaMallocAsync(&memory, bytes > 0 ? bytes : 1, context->compute));
}

bool StreamScratch::release() {
  void *held = memory;
  memory = nullptr;
  return !held || checkCuda(context, call, "cudaFreeAsync",
                            cudaFreeAsync(held, context->compute));
}

bool lethe::rt::reserveSourceGrouping(lethe_rt_context *context,
                                      const char *call, StreamScratch &scratch,
                                      int64_t sources, int64_t targets,
                                      SourceGrouping &grouping) {
  grouping.sources = sources;
  grouping.targets = targets;
  grouping.keyBits = bitsFor(static_cast<uint64_t>(targets));
  grouping.keys = scratch.reserve<uint64_t>(sources);
  grouping.numbers = scratch.reserve<int64_t>(sources);
  grouping.sortedKeys = scratch.reserve<uint64_t>(sources);
  grouping.sortedNumbers = scratch.reserve<int64_t>(sources);
  grouping.offsets = scratch.reserve<int64_t>(targets + 1);
  grouping.temporaryBytes = 0;
  if (sources > 0 &&
      !checkCuda(context, call, "cub::DeviceRadixSort::SortPairs",
                 cub::DeviceRadixSort::SortPairs(
                     nullptr, grouping.temporaryBytes,
                     static_cast<const uint64_t *>(nullptr),
                     static_cast<uint64_t *>(nullptr),
                     static_cast<const int64_t *>(nullptr),
                     static_cast<int64_t *>(nullptr), sources, 0,
                     grouping.keyBits, context->compute)))
    return false;
  grouping.temporary = scratch.reserve<uint8_t>(grouping.temporaryBytes);
  return true;
}

bool lethe::rt::groupSources(lethe_rt_context *context, const char *call,
                             const StreamScratch &scratch,
                             const SourceGrouping &grouping,
                             SourceGroups &groups) {
  uint64_t *sortedKeys = scratch.at<uint64_t>(grouping.sortedKeys);
  int64_t *sortedNumbers = scratch.at<int64_t>(grouping.sortedNumbers);
  int64_t *offsets = scratch.at<int64_t>(grouping.offsets);
  size_t temporaryBytes = grouping.temporaryBytes;
  // Radix sort is stable: equal keys keep the order of their numbers, which
  // the caller wrote increasing.
  if (grouping.sources > 0 &&
      !checkCuda(context, call, "cub::DeviceRadixSort::SortPairs",
                 cub::DeviceRadixSort::SortPairs(
                     scratch.at<void>(grouping.temporary), temporaryBytes,
                     scratch.at<const uint64_t>(grouping.keys), sortedKeys,
                     scratch.at<const int64_t>(grouping.numbers), sortedNumbers,
                     grouping.sources, 0, grouping.keyBits, context->compute)))
    return false;
  if (!launchElementwise(context, call, "targetOffsetsKernel",
                         grouping.targets + 1, targetOffsetsKernel, sortedKeys,
                         grouping.sources, offsets, grouping.targets))
    return false;
  groups.offsets = offsets;
  groups.sources = sortedNumbers;
  return true;
}
