//===- Reduction.cu - Reduction kernels of the CUDA backend ---------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_reduce (sum and mean of floats and integers, max of every dtype)
// and lethe_rt_reduce_max_grad on the compute stream, with the CPU backend's
// semantics (runtime/cpu/Reduction.cpp): float sums and means accumulate in
// f64, integer ones in 64 bits (wrapping), max in the compute type (NaN wins
// over any number); an integer mean truncates, a float mean over nothing is
// NaN, a max over nothing -inf (the lowest value for integers).
//
// Each output element folds one group of x. A short group (fewer than
// minBlockGroup elements) folds in one thread in increasing row-major order
// of x, as the CPU backend does, and gives its bits; threads of neighbouring
// outputs then read neighbouring elements. A group of 2 * kSplitChunk
// elements or more whose innermost run of members is contiguous (a sum over
// everything, or over (N, H, W) of an NCHW tensor, such as a convolution's
// bias gradient) is split: a block folds each kSplitChunk members, and a
// second kernel folds each group's chunks in order, so that a few groups
// still fill the device. Another long group along x's innermost dims folds
// in one block (blockReduce); a long one whose elements are not contiguous
// (a sum over the rows, such as a dense layer's bias gradient) in the lanes
// of a column kernel (DeviceElements.cuh), neighbouring groups side by side;
// where the groups are few and the rows many (SplitFold.h's ColumnSplit), a
// block folds each chunk of rows and the chunks are folded in order, as in a
// split. In all three, the order is fixed by the shape: integer sums and
// maxima are the same in any order, f64 sums agree with the CPU's within
// rounding, not bit for bit (and a maximum over +0 and -0 may be either
// zero).
// lethe_rt_reduce_max_grad folds a long contiguous group in a block and a
// strided one in one thread.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"
#include "SourceGroups.h"
#include "SplitFold.h"

#include <limits>
#include <string>
#include <type_traits>

using namespace lethe::rt;

namespace {

/// Where each group of x lies: `groups` walks the output elements (x's
/// offset of each group's first element), `members` the elements of a group
/// (their offsets from the first), both in row-major order of x.
struct GroupLayout {
  BroadcastMap<1> groups, members;
  int64_t groupCount = 0, memberCount = 0;

  __device__ int64_t groupStart(int64_t group) const {
    int64_t offsets[1];
    groups.offsetsAt(group, offsets);
    return offsets[0];
  }
  __device__ int64_t memberOffset(int64_t member) const {
    int64_t offsets[1];
    members.offsetsAt(member, offsets);
    return offsets[0];
  }
};

/// The accumulator of a fold of storage type T: double for floats (exact for
/// every float value, so a max loses nothing), the 64-bit integer of T's
/// signedness for integers (uint64_t for i1).
template <typename T>
using WideType = std::conditional_t<
    isFloatStorage<T>(), double,
    std::conditional_t<std::is_unsigned_v<T> || std::is_same_v<T, Bool>,
                       uint64_t, int64_t>>;

/// A sum, mean or max over storage type T in WideType<T>.
template <typename T, lethe_rt_reduce_kind Kind> struct Fold {
  using W = WideType<T>;
  using C = ComputeType<T>;

  __device__ W identity() const {
    if constexpr (Kind != LETHE_RT_REDUCE_MAX || std::is_same_v<T, Bool>)
      return W(0);
    else if constexpr (std::numeric_limits<C>::has_infinity)
      return -std::numeric_limits<W>::infinity();
    else
      return static_cast<W>(std::numeric_limits<C>::lowest());
  }
  __device__ W operator()(W acc, W value) const {
    if constexpr (Kind == LETHE_RT_REDUCE_MAX)
      return value > acc || value != value ? value : acc;
    else if constexpr (std::is_same_v<W, double>)
      return acc + value;
    else // wrap around instead of overflowing
      return static_cast<W>(static_cast<uint64_t>(acc) +
                            static_cast<uint64_t>(value));
  }
  __device__ W finish(W acc, int64_t count) const {
    if constexpr (Kind != LETHE_RT_REDUCE_MEAN)
      return acc;
    else if constexpr (std::is_same_v<W, double>)
      return acc / static_cast<double>(count);
    else // the caller rejects an empty integer mean
      return acc / static_cast<W>(count);
  }
};

/// One output element per thread, folding its group in order.
template <typename T, lethe_rt_reduce_kind Kind>
__global__ void reduceThreadKernel(const void *x, void *out,
                                   GroupLayout layout) {
  Fold<T, Kind> fold;
  LETHE_GRID_STRIDE_LOOP(group, layout.groupCount) {
    int64_t start = layout.groupStart(group);
    auto acc = fold.identity();
    for (int64_t member = 0; member < layout.memberCount; ++member)
      acc = fold(acc, load<T>(x, start + layout.memberOffset(member)));
    store<T>(out, group, fold.finish(acc, layout.memberCount));
  }
}

/// One output element per block, its threads folding strided members.
template <typename T, lethe_rt_reduce_kind Kind>
__global__ void reduceBlockKernel(const void *x, void *out,
                                  GroupLayout layout) {
  using W = WideType<T>;
  __shared__ W scratch[32];
  Fold<T, Kind> fold;
  for (int64_t group = blockIdx.x; group < layout.groupCount;
       group += gridDim.x) {
    int64_t start = layout.groupStart(group);
    W acc = fold.identity();
    for (int64_t member = threadIdx.x; member < layout.memberCount;
         member += blockDim.x)
      acc = fold(acc, load<T>(x, start + layout.memberOffset(member)));
    acc = blockReduce(acc, fold, scratch);
    if (threadIdx.x == 0)
      store<T>(out, group, fold.finish(acc, layout.memberCount));
  }
}

/// Long strided groups, kColumnGroups to a block, each by its lanes: the
/// members of chunk blockIdx.y of `split`, into out (one chunk) or into
/// partials[group * chunks + chunk] (more, for reduceChunkTotalsKernel).
template <typename T, lethe_rt_reduce_kind Kind>
__global__ void __launch_bounds__(kColumnThreads)
    reduceColumnsKernel(const void *x, void *out, WideType<T> *partials,
                        GroupLayout layout, ColumnSplit split) {
  using W = WideType<T>;
  __shared__ W partial[kColumnLanes][kColumnGroups];
  Fold<T, Kind> fold;
  int64_t chunk = blockIdx.y;
  int64_t begin = split.first(chunk),
          end = split.end(chunk, layout.memberCount);
  LETHE_COLUMN_TILE_LOOP(first, layout.groupCount) {
    int64_t group = first + threadIdx.x;
    bool active = group < layout.groupCount;
    W acc = fold.identity();
    if (active) {
      int64_t start = layout.groupStart(group);
#pragma unroll 4
      for (int64_t member = begin + threadIdx.y; member < end;
           member += blockDim.y)
        acc = fold(acc, load<T>(x, start + layout.memberOffset(member)));
    }
    acc = combineLanes(acc, fold, partial);
    if (active && threadIdx.y == 0) {
      if (split.chunks == 1)
        store<T>(out, group, fold.finish(acc, layout.memberCount));
      else
        partials[group * split.chunks + chunk] = acc;
    }
  }
}

/// A split fold's first kernel: block item = group * chunks + chunk folds
/// that chunk's members and writes the result to partials[item].
template <typename T, lethe_rt_reduce_kind Kind>
__global__ void reduceChunksKernel(const void *x, WideType<T> *partials,
                                   GroupLayout layout, int64_t chunks) {
  using W = WideType<T>;
  __shared__ W scratch[32];
  Fold<T, Kind> fold;
  for (int64_t item = blockIdx.x; item < layout.groupCount * chunks;
       item += gridDim.x) {
    SplitItem split = SplitItem::of(item, chunks, layout.memberCount);
    int64_t start = layout.groupStart(split.group);
    W acc = fold.identity();
    for (int64_t member = split.first + threadIdx.x; member < split.end;
         member += blockDim.x)
      acc = fold(acc, load<T>(x, start + layout.memberOffset(member)));
    acc = blockReduce(acc, fold, scratch);
    if (threadIdx.x == 0)
      partials[item] = acc;
  }
}

/// A split fold's second kernel: each group's chunks, in order.
template <typename T, lethe_rt_reduce_kind Kind>
__global__ void reduceChunkTotalsKernel(const WideType<T> *partials, void *out,
                                        GroupLayout layout, int64_t chunks) {
  Fold<T, Kind> fold;
  LETHE_GRID_STRIDE_LOOP(group, layout.groupCount) {
    auto acc = fold.identity();
    for (int64_t chunk = 0; chunk < chunks; ++chunk)
      acc = fold(acc, partials[group * chunks + chunk]);
    store<T>(out, group, fold.finish(acc, layout.memberCount));
  }
}

/// The gradient of a max for one group, by `lane` of `lanes` threads: each
/// maximum (x equal to y) gets dy / ties in the compute type, the rest 0;
/// `countTies` sums the lanes' counts of maxima. NaN equals nothing.
template <typename T, typename CountTies>
__device__ void maxGradGroup(const void *dy, const void *x, const void *y,
                             void *dx, const GroupLayout &layout, int64_t group,
                             int64_t lane, int64_t lanes, CountTies countTies) {
  using C = ComputeType<T>;
  int64_t start = layout.groupStart(group);
  C maximum = load<T>(y, group);
  int64_t ties = 0;
  for (int64_t member = lane; member < layout.memberCount; member += lanes)
    ties += load<T>(x, start + layout.memberOffset(member)) == maximum;
  ties = countTies(ties);
  C share = load<T>(dy, group) / static_cast<C>(ties);
  for (int64_t member = lane; member < layout.memberCount; member += lanes) {
    int64_t at = start + layout.memberOffset(member);
    store<T>(dx, at, load<T>(x, at) == maximum ? share : C(0));
  }
}

template <typename T>
__global__ void maxGradThreadKernel(const void *dy, const void *x,
                                    const void *y, void *dx,
                                    GroupLayout layout) {
  LETHE_GRID_STRIDE_LOOP(group, layout.groupCount) {
    maxGradGroup<T>(dy, x, y, dx, layout, group, 0, 1,
                    [](int64_t ties) { return ties; });
  }
}

template <typename T>
__global__ void maxGradBlockKernel(const void *dy, const void *x, const void *y,
                                   void *dx, GroupLayout layout) {
  __shared__ long long scratch[32];
  for (int64_t group = blockIdx.x; group < layout.groupCount;
       group += gridDim.x)
    maxGradGroup<T>(dy, x, y, dx, layout, group, threadIdx.x, blockDim.x,
                    [&](int64_t ties) {
                      return static_cast<int64_t>(blockReduce(
                          static_cast<long long>(ties),
                          [](long long a, long long b) { return a + b; },
                          scratch));
                    });
}

/// Checks `axes` (num_axes of them, none meaning all) against x and that
/// `out` is x reduced over them, with or without the kept dims
/// (reductionAxesError, whose messages call lethe_rt_reduce_max_grad's y
/// "out" too);
/// builds the layout of the groups and says how to fold each (see the file
/// comment; GroupFold::Split only where `split`).
enum class GroupFold { Thread, Block, Columns, Split };

bool groupLayout(lethe_rt_context *context, const char *kernel,
                 const lethe_rt_tensor &x, const int64_t *axes,
                 int64_t num_axes, const lethe_rt_tensor &out, bool split,
                 GroupLayout &layout, GroupFold &how) {
  std::vector<bool> reduced;
  if (!report(context, kernel,
              reductionAxesError(x, axes, num_axes, out, reduced)))
    return false;
  int32_t rank = x.rank;
  // The groups walk the kept dims, the members the reduced ones, each with
  // x's strides (1 on the other side, which then drops out of the map).
  std::vector<int64_t> groupShape, memberShape;
  std::vector<int64_t> xStrides = stridesOf(x);
  std::vector<std::vector<int64_t>> groupStrides(1), memberStrides(1);
  for (int32_t dim = 0; dim < rank; ++dim) {
    int64_t size = x.shape[dim];
    groupShape.push_back(reduced[dim] ? 1 : size);
    memberShape.push_back(reduced[dim] ? size : 1);
    groupStrides[0].push_back(xStrides[dim]);
    memberStrides[0].push_back(xStrides[dim]);
  }
  if (!makeBroadcastMap(groupShape, groupStrides, layout.groups) ||
      !makeBroadcastMap(memberShape, memberStrides, layout.members))
    return failRankLimit(context, kernel, "x", x, "dims that do not merge");
  layout.groupCount = numElements(out);
  layout.memberCount = 1;
  for (int32_t dim = 0; dim < rank; ++dim)
    if (reduced[dim])
      layout.memberCount *= x.shape[dim];
  // Contiguous groups: the members merged into one dim of stride 1. A
  // split fold reads runs of at least a warp's width.
  const BroadcastMap<1> &members = layout.members;
  bool contiguous = members.rank == 1 && members.strides[0][0] == 1;
  int64_t run = members.rank >= 1 && members.strides[0][members.rank - 1] == 1
                    ? members.shape[members.rank - 1]
                    : 1;
  how = layout.memberCount < minBlockGroup          ? GroupFold::Thread
        : split && isSplit(layout.memberCount, run) ? GroupFold::Split
        : contiguous                                ? GroupFold::Block
                                                    : GroupFold::Columns;
  return true;
}

/// Launches a group kernel: "<name>BlockKernel" (`blockKernel`) with a block
/// per group when `byBlock`, else "<name>ThreadKernel" (`threadKernel`) with a
/// thread per group.
template <typename... Parameters, typename... Arguments>
bool launchGroups(lethe_rt_context *context, const char *call,
                  const std::string &name, const GroupLayout &layout,
                  bool byBlock, void (*threadKernel)(Parameters...),
                  void (*blockKernel)(Parameters...),
                  Arguments &&...arguments) {
  if (byBlock)
    return launchRows(context, call, (name + "BlockKernel").c_str(),
                      layout.groupCount, blockKernel,
                      std::forward<Arguments>(arguments)...);
  return launchElementwise(context, call, (name + "ThreadKernel").c_str(),
                           layout.groupCount, threadKernel,
                           std::forward<Arguments>(arguments)...);
}

/// Launches reduce `Kind` over storage type T.
template <typename T, lethe_rt_reduce_kind Kind>
bool runReduce(lethe_rt_context *context, const lethe_rt_tensor &x,
               const lethe_rt_tensor &out, const GroupLayout &layout,
               GroupFold how) {
  if (how == GroupFold::Split) {
    const char *call = "lethe_rt_reduce";
    int64_t chunks = splitChunks(layout.memberCount);
    StreamScratch scratch(context, call);
    size_t partials = scratch.reserve<WideType<T>>(layout.groupCount * chunks);
    return scratch.allocate() &&
           launchRows(context, call, "reduceChunksKernel",
                      layout.groupCount * chunks, reduceChunksKernel<T, Kind>,
                      x.data, scratch.at<WideType<T>>(partials), layout,
                      chunks) &&
           launchElementwise(
               context, call, "reduceChunkTotalsKernel", layout.groupCount,
               reduceChunkTotalsKernel<T, Kind>,
               scratch.at<WideType<T>>(partials), out.data, layout, chunks) &&
           scratch.release();
  }
  if (how == GroupFold::Columns) {
    const char *call = "lethe_rt_reduce";
    ColumnSplit split =
        ColumnSplit::of(layout.memberCount, columnTiles(layout.groupCount));
    int lanes = columnLanes(layout.memberCount);
    if (split.chunks == 1)
      return launchColumns(context, call, "reduceColumnsKernel",
                           layout.groupCount, lanes, 1,
                           reduceColumnsKernel<T, Kind>, x.data, out.data,
                           static_cast<WideType<T> *>(nullptr), layout, split);
    StreamScratch scratch(context, call);
    size_t partials =
        scratch.reserve<WideType<T>>(layout.groupCount * split.chunks);
    return scratch.allocate() &&
           launchColumns(context, call, "reduceColumnsKernel",
                         layout.groupCount, lanes, split.chunks,
                         reduceColumnsKernel<T, Kind>, x.data, out.data,
                         scratch.at<WideType<T>>(partials), layout, split) &&
           launchElementwise(context, call, "reduceChunkTotalsKernel",
                             layout.groupCount,
                             reduceChunkTotalsKernel<T, Kind>,
                             scratch.at<WideType<T>>(partials), out.data,
                             layout, split.chunks) &&
           scratch.release();
  }
  return launchGroups(context, "lethe_rt_reduce", "reduce", layout,
                      how == GroupFold::Block, reduceThreadKernel<T, Kind>,
                      reduceBlockKernel<T, Kind>, x.data, out.data, layout);
}

} // namespace

extern "C" lethe_rt_status
lethe_rt_reduce(lethe_rt_context *context, lethe_rt_reduce_kind kind,
                const lethe_rt_tensor *x, const int64_t *axes, int64_t num_axes,
                const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_reduce";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  if (kind != LETHE_RT_REDUCE_SUM && kind != LETHE_RT_REDUCE_MEAN &&
      kind != LETHE_RT_REDUCE_MAX)
    return fail(context, kernel, "unknown reduce kind %d",
                static_cast<int>(kind));
  if (!checkTensor(context, kernel, "x", x) ||
      !checkDtype(context, kernel, "out", out, x->dtype))
    return LETHE_RT_ERROR;
  if (kind != LETHE_RT_REDUCE_MAX && x->dtype == LETHE_RT_I1)
    return fail(context, kernel, "sum and mean need a numeric x, got i1");
  GroupLayout layout;
  GroupFold how = GroupFold::Thread;
  if (!groupLayout(context, kernel, *x, axes, num_axes, *out, /*split=*/true,
                   layout, how))
    return LETHE_RT_ERROR;
  if (kind == LETHE_RT_REDUCE_MEAN && !isFloat(x->dtype) &&
      layout.memberCount == 0 && layout.groupCount > 0)
    return fail(context, kernel, "the %s mean of no elements is undefined",
                dtypeName(x->dtype));

  bool launched = false;
  dispatchAny(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    if (kind == LETHE_RT_REDUCE_MAX)
      launched =
          runReduce<T, LETHE_RT_REDUCE_MAX>(context, *x, *out, layout, how);
    else if constexpr (!std::is_same_v<T, Bool>)
      launched = kind == LETHE_RT_REDUCE_SUM
                     ? runReduce<T, LETHE_RT_REDUCE_SUM>(context, *x, *out,
                                                         layout, how)
                     : runReduce<T, LETHE_RT_REDUCE_MEAN>(context, *x, *out,
                                                          layout, how);
  });
  return launched ? LETHE_RT_OK : LETHE_RT_ERROR;
}

extern "C" lethe_rt_status
lethe_rt_reduce_max_grad(lethe_rt_context *context, const lethe_rt_tensor *dy,
                         const lethe_rt_tensor *x, const lethe_rt_tensor *y,
                         const int64_t *axes, int64_t num_axes,
                         const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_reduce_max_grad";
  if (!context || !checkDevice(context, kernel) ||
      !checkFloatTensor(context, kernel, "x", x) ||
      !checkDtype(context, kernel, "y", y, x->dtype) ||
      !checkDtype(context, kernel, "dy", dy, x->dtype) ||
      !checkDtype(context, kernel, "dx", dx, x->dtype) ||
      !checkSameShape(context, kernel, "y", *y, "dy", *dy) ||
      !checkSameShape(context, kernel, "x", *x, "dx", *dx))
    return LETHE_RT_ERROR;
  GroupLayout layout;
  GroupFold how = GroupFold::Thread;
  if (!groupLayout(context, kernel, *x, axes, num_axes, *y, /*split=*/false,
                   layout, how))
    return LETHE_RT_ERROR;
  if (numElements(*x) == 0)
    return LETHE_RT_OK;
  return launchForFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    return launchGroups(context, kernel, "maxGrad", layout,
                        how == GroupFold::Block, maxGradThreadKernel<T>,
                        maxGradBlockKernel<T>, dy->data, x->data, y->data,
                        dx->data, layout);
  });
}
