//===- Normalization.cu - Normalization kernels of the CUDA backend -------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_batch_norm, lethe_rt_batch_norm_train, lethe_rt_layer_norm and
// their gradients lethe_rt_batch_norm_grad and lethe_rt_layer_norm_grad on
// the compute stream, with the CPU backend's semantics, arguments and
// messages (runtime/cpu/Normalization.cpp, common/Checks.h). The arithmetic
// per channel and per row is NormalizationGroups.h's.
//
// Inference is elementwise (one thread per element) and gives the CPU
// backend's bits. Batch norm training and its gradient fold each channel,
// layer norm and the dx of its gradient each row: a group of fewer than
// minBlockGroup elements in one thread, in the CPU backend's order and with
// its bits; a longer one in one block, whose threads add their f64 partial
// sums in a fixed tree (blockReduce), within rounding of the CPU's sums. One
// kernel does a group's passes (statistics, then the outputs), so that
// nothing passes between kernels. A batch norm channel of 2 * kSplitChunk
// elements or more in runs of 32 or more (ResNet-50's first layers: 64
// channels of 802,816 elements at batch 64) is split instead (SplitFold.h):
// a block per chunk of each pass, the chunks' sums passing through scratch
// memory to the next pass, which adds them in chunk order. Layer norm's dscale
// and dbias add over the rows in a column kernel (DeviceElements.cuh:
// neighbouring threads read neighbouring elements, lanes share out the rows):
// fewer than minBlockGroup rows in one lane, in order, with the CPU's bits,
// more in kColumnLanes lanes, within rounding of them, and where the rows are
// many and the elements few (SplitFold.h's ColumnSplit; GPT-2's 21,504 rows
// of 768) a block per chunk of rows, the chunks added in order by a second
// kernel; those kernels run before the one that writes dx, which may be dy
// itself.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"
#include "NormalizationGroups.h"
#include "SourceGroups.h"

#include <string>
#include <vector>

using namespace lethe::rt;

namespace {

/// The sum over the threads of a block, in blockReduce's fixed tree.
struct BlockSum {
  double *scratch;

  __device__ double operator()(double value) const {
    return blockReduce(
        value, [](double a, double b) { return a + b; }, scratch);
  }
};

/// Each thread folds whole groups alone.
template <typename T, typename Groups>
__global__ void groupThreadKernel(Groups groups, int64_t count) {
  LETHE_GRID_STRIDE_LOOP(group, count) {
    groups.template group<T>(group, 0, 1, SingleLane());
  }
}

/// Each block folds whole groups, its threads together.
template <typename T, typename Groups>
__global__ void groupBlockKernel(Groups groups, int64_t count) {
  __shared__ double scratch[32];
  for (int64_t group = blockIdx.x; group < count; group += gridDim.x)
    groups.template group<T>(group, threadIdx.x, blockDim.x, BlockSum{scratch});
}

/// Pass `pass` of a batch norm's split fold over chunks of its channels
/// (SplitFold.h): BatchNormTraining's or BatchNormGradient's `splitPass`,
/// a block per chunk.
template <typename T, typename Passes>
__global__ void batchNormSplitKernel(Passes passes, int pass, int64_t chunks,
                                     double *first, double *second) {
  __shared__ double scratch[32];
  for (int64_t item = blockIdx.x; item < passes.layout.channels * chunks;
       item += gridDim.x)
    passes.template splitPass<T>(pass, item, chunks, threadIdx.x, blockDim.x,
                                 BlockSum{scratch}, first, second);
}

/// Whether a batch norm over `layout` folds its channels split into
/// chunks: long channels in runs of a warp's width or more.
bool splitsChannels(const ChannelLayout &layout) {
  return isSplit(layout.count(), layout.spatial);
}

/// Launches the passes of `passes`' split fold over its channels, with
/// two scratch arrays of a double per block item (each pass reading what
/// the ones before wrote, in stream order).
template <typename Passes>
lethe_rt_status launchSplit(lethe_rt_context *context, const char *call,
                            lethe_rt_dtype dtype, const Passes &passes) {
  int64_t chunks = splitChunks(passes.layout.count());
  int64_t items = passes.layout.channels * chunks;
  StreamScratch scratch(context, call);
  size_t first = scratch.reserve<double>(items),
         second = scratch.reserve<double>(items);
  if (!scratch.allocate())
    return LETHE_RT_ERROR;
  if (launchForFloat(
          dtype,
          [&](auto tag) {
            for (int pass = 0; pass < Passes::kSplitPasses; ++pass)
              if (!launchRows(context, call, "batchNormSplitKernel", items,
                              batchNormSplitKernel<decltype(tag), Passes>,
                              passes, pass, chunks, scratch.at<double>(first),
                              scratch.at<double>(second)))
                return false;
            return true;
          }) != LETHE_RT_OK ||
      !scratch.release())
    return LETHE_RT_ERROR;
  return LETHE_RT_OK;
}

/// One element of batch norm inference per thread.
template <typename T>
__global__ void batchNormKernel(BatchNormInference inference, int64_t count) {
  LETHE_GRID_STRIDE_LOOP(i, count) { inference.template element<T>(i); }
}

/// Layer norm's dscale and dbias: kColumnGroups elements of the normalized
/// shape to a block, each by its lanes, over the rows of chunk blockIdx.y
/// of `split` (LayerNormGradient::column): into dscale and dbias (one
/// chunk) or into partials (more): element k's chunk c at k * chunks + c,
/// dscale's then dbias's.
template <typename T>
__global__ void __launch_bounds__(kColumnThreads)
    layerNormColumnsKernel(LayerNormGradient gradient, ColumnSplit split,
                           double *partials) {
  __shared__ double scaleParts[kColumnLanes][kColumnGroups],
      biasParts[kColumnLanes][kColumnGroups];
  auto add = [](double a, double b) { return a + b; };
  int64_t chunk = blockIdx.y;
  int64_t begin = split.first(chunk), end = split.end(chunk, gradient.rows);
  LETHE_COLUMN_TILE_LOOP(first, gradient.size) {
    int64_t k = first + threadIdx.x;
    double scaleGrad = 0, biasGrad = 0;
    if (k < gradient.size)
      gradient.template columnLane<T>(k, begin, end, threadIdx.y, blockDim.y,
                                      scaleGrad, biasGrad);
    scaleGrad = combineLanes(scaleGrad, add, scaleParts);
    biasGrad = combineLanes(biasGrad, add, biasParts);
    if (k < gradient.size && threadIdx.y == 0) {
      if (split.chunks == 1) {
        gradient.setColumn(k, scaleGrad, biasGrad);
      } else {
        int64_t at = k * split.chunks + chunk;
        partials[at] = scaleGrad;
        partials[gradient.size * split.chunks + at] = biasGrad;
      }
    }
  }
}

/// Adds each element's chunks of layerNormColumnsKernel, in chunk order.
__global__ void layerNormChunkTotalsKernel(LayerNormGradient gradient,
                                           int64_t chunks,
                                           const double *partials) {
  LETHE_GRID_STRIDE_LOOP(k, gradient.size) {
    double scaleGrad = 0, biasGrad = 0;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      scaleGrad += partials[k * chunks + chunk];
      biasGrad += partials[gradient.size * chunks + k * chunks + chunk];
    }
    gradient.setColumn(k, scaleGrad, biasGrad);
  }
}

/// Launches `count` groups of `size` elements each over x's dtype (see the
/// file comment for which kernel folds them).
template <typename Groups>
lethe_rt_status launchGroups(lethe_rt_context *context, const char *call,
                             lethe_rt_dtype dtype, const Groups &groups,
                             int64_t count, int64_t size) {
  return launchForFloat(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (size >= minBlockGroup)
      return launchRows(context, call, "groupBlockKernel", count,
                        groupBlockKernel<T, Groups>, groups, count);
    return launchElementwise(context, call, "groupThreadKernel", count,
                             groupThreadKernel<T, Groups>, groups, count);
  });
}

/// `tensor` (checked: a float tensor) as the kernels read and write it.
FloatValues valuesOf(const lethe_rt_tensor *tensor) {
  return FloatValues{tensor->data, tensor->dtype};
}

/// The elements of each row of a layer norm over x's dims from `axis` on.
int64_t normalizedSize(const lethe_rt_tensor &x, int64_t axis) {
  int64_t size = 1;
  for (int32_t dim = static_cast<int32_t>(axis); dim < x.rank; ++dim)
    size *= x.shape[dim];
  return size;
}

} // namespace

extern "C" lethe_rt_status
lethe_rt_batch_norm(lethe_rt_context *context, const lethe_rt_tensor *x,
                    const lethe_rt_tensor *scale, const lethe_rt_tensor *bias,
                    const lethe_rt_tensor *mean, const lethe_rt_tensor *var,
                    double epsilon, const lethe_rt_tensor *y) {
  const char *kernel = "lethe_rt_batch_norm";
  if (!context || !checkDevice(context, kernel) ||
      !checkBatchNormInference(context, kernel, x, scale, bias, mean, var, y))
    return LETHE_RT_ERROR;
  BatchNormInference inference;
  inference.x = x->data;
  inference.y = y->data;
  inference.scale = valuesOf(scale);
  inference.bias = valuesOf(bias);
  inference.mean = valuesOf(mean);
  inference.var = valuesOf(var);
  inference.epsilon = epsilon;
  inference.layout = ChannelLayout::of(x->shape, x->rank);
  int64_t count = numElements(*x);
  if (count == 0)
    return LETHE_RT_OK;
  return launchForFloat(x->dtype, [&](auto tag) {
    return launchElementwise(context, kernel, "batchNormKernel", count,
                             batchNormKernel<decltype(tag)>, inference, count);
  });
}

extern "C" lethe_rt_status lethe_rt_batch_norm_train(
    lethe_rt_context *context, const lethe_rt_tensor *x,
    const lethe_rt_tensor *scale, const lethe_rt_tensor *bias,
    const lethe_rt_tensor *running_mean, const lethe_rt_tensor *running_var,
    double epsilon, double momentum, const lethe_rt_tensor *y,
    const lethe_rt_tensor *running_mean_out,
    const lethe_rt_tensor *running_var_out, const lethe_rt_tensor *saved_mean,
    const lethe_rt_tensor *saved_inv_std) {
  const char *kernel = "lethe_rt_batch_norm_train";
  if (!context || !checkDevice(context, kernel) ||
      !checkBatchNormTrain(context, kernel, x, scale, bias, running_mean,
                           running_var, y, running_mean_out, running_var_out,
                           saved_mean, saved_inv_std))
    return LETHE_RT_ERROR;
  BatchNormTraining training;
  training.x = x->data;
  training.y = y->data;
  training.scale = valuesOf(scale);
  training.bias = valuesOf(bias);
  training.runningMean = valuesOf(running_mean);
  training.runningVar = valuesOf(running_var);
  training.runningMeanOut = valuesOf(running_mean_out);
  training.runningVarOut = valuesOf(running_var_out);
  training.savedMean = valuesOf(saved_mean);
  training.savedInvStd = valuesOf(saved_inv_std);
  training.epsilon = epsilon;
  training.momentum = momentum;
  training.layout = ChannelLayout::of(x->shape, x->rank);
  if (splitsChannels(training.layout))
    return launchSplit(context, kernel, x->dtype, training);
  // Every channel, even over no elements (its statistics are then NaN, as
  // on the CPU backend).
  return launchGroups(context, kernel, x->dtype, training,
                      training.layout.channels, training.layout.count());
}

extern "C" lethe_rt_status lethe_rt_batch_norm_grad(
    lethe_rt_context *context, const lethe_rt_tensor *dy,
    const lethe_rt_tensor *x, const lethe_rt_tensor *scale,
    const lethe_rt_tensor *saved_mean, const lethe_rt_tensor *saved_inv_std,
    const lethe_rt_tensor *dx, const lethe_rt_tensor *dscale,
    const lethe_rt_tensor *dbias) {
  const char *kernel = "lethe_rt_batch_norm_grad";
  if (!context || !checkDevice(context, kernel) ||
      !checkBatchNormGrad(context, kernel, dy, x, scale, saved_mean,
                          saved_inv_std, dx, dscale, dbias))
    return LETHE_RT_ERROR;
  BatchNormGradient gradient;
  gradient.dy = dy->data;
  gradient.x = x->data;
  gradient.dx = dx->data;
  gradient.scale = valuesOf(scale);
  gradient.savedMean = valuesOf(saved_mean);
  gradient.savedInvStd = valuesOf(saved_inv_std);
  gradient.dscale = valuesOf(dscale);
  gradient.dbias = valuesOf(dbias);
  gradient.layout = ChannelLayout::of(x->shape, x->rank);
  if (splitsChannels(gradient.layout))
    return launchSplit(context, kernel, x->dtype, gradient);
  return launchGroups(context, kernel, x->dtype, gradient,
                      gradient.layout.channels, gradient.layout.count());
}

extern "C" lethe_rt_status
lethe_rt_layer_norm(lethe_rt_context *context, const lethe_rt_tensor *x,
                    const lethe_rt_tensor *scale, const lethe_rt_tensor *bias,
                    int64_t axis, double epsilon, const lethe_rt_tensor *y,
                    const lethe_rt_tensor *mean,
                    const lethe_rt_tensor *inv_std_dev) {
  const char *kernel = "lethe_rt_layer_norm";
  std::vector<int64_t> scaleStrides, biasStrides;
  if (!context || !checkDevice(context, kernel) ||
      !checkLayerNorm(context, kernel, x, scale, bias, axis, y, mean,
                      inv_std_dev, scaleStrides, biasStrides))
    return LETHE_RT_ERROR;
  std::vector<int64_t> normalizedShape(x->shape + axis, x->shape + x->rank);
  if (!bias)
    biasStrides.assign(normalizedShape.size(), 0);
  LayerNormForward<BroadcastMap<2>> forward;
  if (!makeBroadcastMap(normalizedShape, {scaleStrides, biasStrides},
                        forward.offsets))
    return fail(context, kernel,
                "scale (%s) and bias read over the normalized shape %s "
                "through more than %d dims that do not merge (a limit of the "
                "cuda backend)",
                shapeString(*scale).c_str(), shapeText(normalizedShape).c_str(),
                maxBroadcastRank);
  forward.x = x->data;
  forward.y = y->data;
  forward.scale = valuesOf(scale);
  if (bias)
    forward.bias = valuesOf(bias);
  forward.mean = valuesOf(mean);
  forward.invStdDev = valuesOf(inv_std_dev);
  forward.size = normalizedSize(*x, axis);
  forward.epsilon = epsilon;
  return launchGroups(context, kernel, x->dtype, forward, numElements(*mean),
                      forward.size);
}

extern "C" lethe_rt_status lethe_rt_layer_norm_grad(
    lethe_rt_context *context, const lethe_rt_tensor *dy,
    const lethe_rt_tensor *x, const lethe_rt_tensor *scale,
    const lethe_rt_tensor *mean, const lethe_rt_tensor *inv_std_dev,
    int64_t axis, const lethe_rt_tensor *dx, const lethe_rt_tensor *dscale,
    const lethe_rt_tensor *dbias) {
  const char *kernel = "lethe_rt_layer_norm_grad";
  if (!context || !checkDevice(context, kernel) ||
      !checkLayerNormGrad(context, kernel, dy, x, scale, mean, inv_std_dev,
                          axis, dx, dscale, dbias))
    return LETHE_RT_ERROR;
  LayerNormGradient gradient;
  gradient.dy = dy->data;
  gradient.x = x->data;
  gradient.dx = dx->data;
  gradient.scale = valuesOf(scale);
  gradient.mean = valuesOf(mean);
  gradient.invStdDev = valuesOf(inv_std_dev);
  gradient.dscale = valuesOf(dscale);
  gradient.dbias = valuesOf(dbias);
  gradient.rows = numElements(*mean);
  gradient.size = normalizedSize(*x, axis);
  // dscale and dbias first: they read dy, which dx may overwrite.
  ColumnSplit split =
      ColumnSplit::of(gradient.rows, columnTiles(gradient.size));
  StreamScratch scratch(context, kernel);
  size_t partials = scratch.reserve<double>(
      split.chunks == 1 ? 0 : 2 * gradient.size * split.chunks);
  if ((split.chunks > 1 && !scratch.allocate()) ||
      launchForFloat(x->dtype, [&](auto tag) {
        return launchColumns(
            context, kernel, "layerNormColumnsKernel", gradient.size,
            columnLanes(gradient.rows), split.chunks,
            layerNormColumnsKernel<decltype(tag)>, gradient, split,
            split.chunks == 1 ? nullptr : scratch.at<double>(partials));
      }) != LETHE_RT_OK)
    return LETHE_RT_ERROR;
  if (split.chunks > 1 &&
      (!launchElementwise(context, kernel, "layerNormChunkTotalsKernel",
                          gradient.size, layerNormChunkTotalsKernel, gradient,
                          split.chunks, scratch.at<double>(partials)) ||
       !scratch.release()))
    return LETHE_RT_ERROR;
  return launchGroups(context, kernel, x->dtype, gradient, gradient.rows,
                      gradient.size);
}
