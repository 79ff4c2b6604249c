//===- DeviceElements.cuh - Math and launches on the GPU -------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// What the CUDA backend's kernels share: the math functions of each compute
// type, and grid-stride and per-row launches on the context's compute
// stream, on top of what both backends share: the storage types, loads,
// stores and dispatch (runtime/common/ElementTypes.h; its f16/bf16
// conversions are written out rather than taken from cuda_fp16.h so that
// they give the same bits on either backend, including the canonical NaNs)
// and the index maps of broadcasts and data movement
// (runtime/common/IndexMaps.h).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_CUDA_DEVICEELEMENTS_CUH
#define LETHE_RUNTIME_CUDA_DEVICEELEMENTS_CUH

#include "CudaRuntime.h"
#include "common/ElementTypes.h"
#include "common/IndexMaps.h"

#include <cstdint>
#include <type_traits>
#include <utility>

namespace lethe::rt {

//===----------------------------------------------------------------------===//
// Math in the compute type (float or double; CUDA's C functions are named by
// type)
//===----------------------------------------------------------------------===//

__device__ inline float mathExp(float x) { return expf(x); }
__device__ inline double mathExp(double x) { return exp(x); }
__device__ inline float mathLog(float x) { return logf(x); }
__device__ inline double mathLog(double x) { return log(x); }
__device__ inline float mathTanh(float x) { return tanhf(x); }
__device__ inline double mathTanh(double x) { return tanh(x); }
__device__ inline float mathErf(float x) { return erff(x); }
__device__ inline double mathErf(double x) { return erf(x); }
__device__ inline float mathSqrt(float x) { return sqrtf(x); }
__device__ inline double mathSqrt(double x) { return sqrt(x); }
__device__ inline float mathPow(float x, float y) { return powf(x, y); }
__device__ inline double mathPow(double x, double y) { return pow(x, y); }

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

/// Threads per block of the elementwise kernels.
constexpr int threadsPerBlock = 256;

/// Grid-stride loop bounds: kernels loop `for (i = first; i < count; i +=
/// stride)`, so any grid covers any count.
#define LETHE_GRID_STRIDE_LOOP(index, count)                                   \
  for (int64_t index =                                                         \
           static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;        \
       index < (count); index += static_cast<int64_t>(blockDim.x) * gridDim.x)

/// Launches `kernel(arguments...)` over `count` elements on the context's
/// compute stream; records an error naming `call` and `kernelName` when the
/// launch fails. Nothing is launched for 0 elements.
template <typename... Parameters, typename... Arguments>
bool launchElementwise(lethe_rt_context *context, const char *call,
                       const char *kernelName, int64_t count,
                       void (*kernel)(Parameters...),
                       Arguments &&...arguments) {
  if (count == 0)
    return true;
  // Enough blocks to fill an H100 many times over; the loop covers the rest.
  int64_t blocks = (count + threadsPerBlock - 1) / threadsPerBlock;
  if (blocks > (int64_t(1) << 16))
    blocks = int64_t(1) << 16;
  // Clears the error an earlier failed call left (say, a cudaMalloc out of
  // memory, which the caller has already been told about), so that
  // checkLaunch reports this launch's alone.
  (void)cudaGetLastError();
  kernel<<<static_cast<unsigned>(blocks), threadsPerBlock, 0,
           context->compute>>>(std::forward<Arguments>(arguments)...);
  return checkLaunch(context, call, kernelName);
}

/// The fewest elements that a block folds together: a shorter group folds
/// in one thread, in order (as the CPU backend folds, with its bits).
constexpr int64_t minBlockGroup = 64;

/// Blocks of the per-row kernels: at most this many, each looping over rows
/// `for (row = blockIdx.x; row < rows; row += gridDim.x)`.
constexpr int64_t maxRowBlocks = int64_t(1) << 16;

/// Combines `value` of every thread of the block with `op` (associative and
/// commutative) and returns the result to every thread: a warp-shuffle tree
/// in each warp, then warp 0's thread 0 over the warps' results in order. The
/// order is fixed, so the same inputs give the same bits. `scratch` is shared
/// memory of 32 values; every thread of the block must call it.
template <typename V, typename Op>
__device__ V blockReduce(V value, Op op, V *scratch) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0)
    scratch[warp] = value;
  __syncthreads();
  if (threadIdx.x == 0) {
    V total = scratch[0];
    for (int other = 1; other < static_cast<int>(blockDim.x / 32); ++other)
      total = op(total, scratch[other]);
    scratch[0] = total;
  }
  __syncthreads();
  V result = scratch[0];
  // Until every thread has read it, no later call may overwrite scratch.
  __syncthreads();
  return result;
}

/// Launches `kernel(arguments...)` with one block of threadsPerBlock threads
/// per row (up to maxRowBlocks blocks) on the compute stream; records an error
/// naming `call` and `kernelName` when the launch fails. Nothing is launched
/// for 0 rows.
template <typename... Parameters, typename... Arguments>
bool launchRows(lethe_rt_context *context, const char *call,
                const char *kernelName, int64_t rows,
                void (*kernel)(Parameters...), Arguments &&...arguments) {
  if (rows == 0)
    return true;
  int64_t blocks = rows < maxRowBlocks ? rows : maxRowBlocks;
  (void)cudaGetLastError(); // as in launchElementwise
  kernel<<<static_cast<unsigned>(blocks), threadsPerBlock, 0,
           context->compute>>>(std::forward<Arguments>(arguments)...);
  return checkLaunch(context, call, kernelName);
}

/// The column kernels, which fold groups whose members are strided (a sum
/// over the rows, such as a bias gradient): each block holds kColumnGroups
/// neighbouring groups across (threadIdx.x, so that a warp reads
/// neighbouring elements of a row) and `lanes` lanes down (threadIdx.y, up
/// to kColumnLanes): lane l folds members l, l + lanes, ... of its group in
/// order, then lane 0 folds the lanes' results in lane order (combineLanes).
/// The order depends on the shape alone, so the same inputs give the same
/// bits; with one lane it is the CPU backend's.
constexpr int kColumnGroups = 32;
constexpr int kColumnLanes = 32;
/// The most threads of a column kernel's block: its __launch_bounds__, which
/// holds its registers within what so many threads may have.
constexpr int kColumnThreads = kColumnGroups * kColumnLanes;

/// The lanes of a column kernel for groups of `members` members: one for a
/// short group (folded in order, as the CPU backend folds), kColumnLanes
/// for a long one.
inline int columnLanes(int64_t members) {
  return members < minBlockGroup ? 1 : kColumnLanes;
}

/// Lane 0's fold with `op`, in lane order, of each lane's `value` for the
/// group of threadIdx.x (the other lanes get their own value back).
/// `partial` is shared memory; every thread of the block must call it.
template <typename V, typename Op>
__device__ V combineLanes(V value, Op op, V (*partial)[kColumnGroups]) {
  partial[threadIdx.y][threadIdx.x] = value;
  __syncthreads();
  if (threadIdx.y == 0)
    for (unsigned lane = 1; lane < blockDim.y; ++lane)
      value = op(value, partial[lane][threadIdx.x]);
  // Until lane 0 has read them all, no later call may overwrite partial.
  __syncthreads();
  return value;
}

/// The groups of a column kernel's block, kColumnGroups at a time: `first`
/// walks the first group of each tile (the same for every thread of the
/// block, so that combineLanes may be called in the loop).
#define LETHE_COLUMN_TILE_LOOP(first, count)                                   \
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * kColumnGroups;       \
       first < (count);                                                        \
       first += static_cast<int64_t>(gridDim.x) * kColumnGroups)

/// The tiles of kColumnGroups groups that `groups` groups make.
inline int64_t columnTiles(int64_t groups) {
  return (groups + kColumnGroups - 1) / kColumnGroups;
}

/// Launches a column kernel over `groups` groups with `lanes` lanes (up to
/// maxRowBlocks blocks of kColumnGroups groups, the kernel looping over the
/// rest) and `chunks` chunks of rows (blockIdx.y; SplitFold.h's
/// ColumnSplit) on the compute stream; records an error naming `call` and
/// `kernelName` when the launch fails. Nothing is launched for 0 groups.
template <typename... Parameters, typename... Arguments>
bool launchColumns(lethe_rt_context *context, const char *call,
                   const char *kernelName, int64_t groups, int lanes,
                   int64_t chunks, void (*kernel)(Parameters...),
                   Arguments &&...arguments) {
  if (groups == 0)
    return true;
  int64_t blocks = columnTiles(groups);
  if (blocks > maxRowBlocks)
    blocks = maxRowBlocks;
  (void)cudaGetLastError(); // as in launchElementwise
  kernel<<<dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(chunks)),
           dim3(kColumnGroups, lanes), 0, context->compute>>>(
      std::forward<Arguments>(arguments)...);
  return checkLaunch(context, call, kernelName);
}

/// Calls `launch(first)`, which launches kernels on the compute stream that
/// atomicMin into *first the index of each element they flag, and sets
/// `found` to the smallest index flagged (-1 for none). Waits for the compute
/// stream: for the checks whose error depends on data in device memory.
/// *first is the context's status word, set to UINT64_MAX first.
template <typename Launch>
bool findFirstFlagged(lethe_rt_context *context, const char *call,
                      Launch &&launch, int64_t &found) {
  unsigned long long *first =
      reinterpret_cast<unsigned long long *>(context->deviceStatus);
  unsigned long long index = 0;
  if (!checkCuda(
          context, call, "cudaMemsetAsync",
          cudaMemsetAsync(first, 0xff, sizeof(*first), context->compute)) ||
      !launch(first) ||
      !checkCuda(context, call, "cudaMemcpyAsync",
                 cudaMemcpyAsync(&index, first, sizeof(index),
                                 cudaMemcpyDeviceToHost, context->compute)) ||
      !checkCuda(context, call, "cudaStreamSynchronize",
                 cudaStreamSynchronize(context->compute)))
    return false;
  found = index == ~0ull ? -1 : static_cast<int64_t>(index);
  return true;
}

/// Calls `launch(tag)`, which launches a kernel and says whether it did, with
/// the storage-type tag of float `dtype` (one the checks accepted):
/// LETHE_RT_OK when it launched.
template <typename Launch>
lethe_rt_status launchForFloat(lethe_rt_dtype dtype, Launch &&launch) {
  bool launched = false;
  dispatchFloat(dtype, [&](auto tag) { launched = launch(tag); });
  return launched ? LETHE_RT_OK : LETHE_RT_ERROR;
}

/// Records that `what` (`tensor`) has more than maxBroadcastRank `dims`
/// (e.g. "dims that do not merge"), a limit of the cuda backend's index maps,
/// and returns false.
inline bool failRankLimit(lethe_rt_context *context, const char *call,
                          const char *what, const lethe_rt_tensor &tensor,
                          const char *dims) {
  fail(context, call,
       "%s (%s) has more than %d %s (a limit of the cuda backend)", what,
       shapeString(tensor).c_str(), maxBroadcastRank, dims);
  return false;
}

/// Calls `launch(word)`, which launches a kernel that moves elements as
/// unsigned words of their size (uint8_t to uint64_t, a tag) and says
/// whether it did, for elements of `elementSize` bytes (a dtype's size).
template <typename Launch>
bool launchForWord(size_t elementSize, Launch &&launch) {
  switch (elementSize) {
  case 1:
    return launch(uint8_t{});
  case 2:
    return launch(uint16_t{});
  case 4:
    return launch(uint32_t{});
  default:
    return launch(uint64_t{});
  }
}

/// Reads element `element` of an i32 or i64 (`wide`) tensor in device memory
/// into `value`, waiting for the copy: for the message of a check whose
/// error depends on data (after findFirstFlagged, with the compute stream
/// idle).
inline bool readIndexElement(lethe_rt_context *context, const char *call,
                             const void *data, bool wide, int64_t element,
                             int64_t &value) {
  size_t size = wide ? sizeof(int64_t) : sizeof(int32_t);
  int64_t wideValue = 0;
  int32_t narrowValue = 0;
  void *host = wide ? static_cast<void *>(&wideValue)
                    : static_cast<void *>(&narrowValue);
  if (!checkCuda(context, call, "cudaMemcpy",
                 cudaMemcpy(host,
                            static_cast<const uint8_t *>(data) + element * size,
                            size, cudaMemcpyDeviceToHost)))
    return false;
  value = wide ? wideValue : narrowValue;
  return true;
}

} // namespace lethe::rt

#endif // LETHE_RUNTIME_CUDA_DEVICEELEMENTS_CUH
