//===- Convolution.cu - Convolution kernels of the CUDA backend -----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_conv, lethe_rt_conv_transpose and lethe_rt_conv_grad_weight on
// N, C, D1..Dn tensors (n = 1 to 3). Each is one direction of a convolution
// "X convolved with W gives Y": conv is cuDNN's forward (Y from X and W),
// conv_transpose its backward data (its x is Y, its out is X) and
// conv_grad_weight its backward filter (W from X and Y); a bias is added
// after, by a kernel of ours, in the compute type.
//
// cuDNN's legacy convolution API (cudnn_cnn.h; deprecated in cuDNN 9 in
// favour of the graph API, but complete) runs on the context's compute
// stream with one handle per context, created by the first convolution.
// Descriptors are made per call; the algorithm is chosen once per shape (and
// remembered in the context) from cuDNN's heuristics
// (cudnnGetConvolution*Algorithm_v7, not the timed Find, whose choice could
// change from run to run): the first candidate that is deterministic and
// whose workspace fits, so that a recompute gives the same bits. f32 runs
// with CUDNN_FMA_MATH (never TF32), f16 and bf16 with tensor cores that
// multiply exactly and add in f32, f64 in f64.
//
// The workspace: with one given (a planned step's arena block, at least the
// op's planned workspace bytes), the algorithm must fit in it; with NULL,
// the first deterministic algorithm is used and its workspace allocated and
// freed on the compute stream (cudaMallocAsync), outside the arena. Where no
// deterministic algorithm fits (planned from the roofline, the block is
// sized for the CPU backend's im2col, which can be far less than cuDNN asks
// for) or cuDNN offers none, the call runs in the direct kernels below,
// which need no workspace. It then asks for the least workspace of a
// deterministic algorithm (lethe_rt_op_workspace_wanted): a --profile
// records it, and a plan from that profile gives the op that block.
//
// cuDNN pads both ends of a dim alike and sizes the data gradient by the
// forward's output formula. A convolution it cannot express that way
// (asymmetric pads, conv_transpose with output_padding at or above the
// stride), or with a dim of zero, or a tensor beyond 2^31 elements, runs in
// direct kernels of ours instead (ConvolutionPlan.h): one thread per output
// element summing its terms in a fixed order, so also deterministic, needing
// no workspace, and slower.
//
// Outputs overlapping an input are refused (the CPU backend, which computes
// in order, accepts some).
//
//===----------------------------------------------------------------------===//

#include "ConvolutionPlan.h"
#include "DeviceElements.cuh"
#include "SourceGroups.h"

#include <cudnn.h>

#include <string>
#include <vector>

using namespace lethe::rt;

namespace {

//===----------------------------------------------------------------------===//
// The direct kernels
//===----------------------------------------------------------------------===//

/// A convolution "X convolved with W gives Y" as the direct kernels read it:
/// X is batch x channels x input, W filters x (channels / group) x kernel, Y
/// batch x filters x output.
struct DirectGeometry {
  int32_t rank = 0;
  int64_t input[3] = {}, output[3] = {}, kernel[3] = {}, strides[3] = {},
          padBegin[3] = {}, dilations[3] = {};
  int64_t inputSize = 1, outputSize = 1, kernelSize = 1;
  int64_t batch = 0, channels = 0, filters = 0, groupChannels = 0,
          groupFilters = 0;
};

/// The positions along `dims` (rank of them) of the row-major `linear`.
__device__ void unravel(int64_t linear, const int64_t *dims, int32_t rank,
                        int64_t *positions) {
  for (int32_t dim = rank; dim-- > 0;) {
    positions[dim] = linear % dims[dim];
    linear /= dims[dim];
  }
}

/// Y = X * W (+ bias, per filter), one thread per element of Y, the terms
/// summed channel by channel, kernel position by kernel position.
template <typename T>
__global__ void forwardKernel(const void *x, const void *w, const void *bias,
                              void *y, DirectGeometry g) {
  using C = ComputeType<T>;
  LETHE_GRID_STRIDE_LOOP(index, g.batch * g.filters * g.outputSize) {
    int64_t o = index % g.outputSize, f = index / g.outputSize % g.filters,
            n = index / (g.outputSize * g.filters);
    int64_t outPosition[3], kernelPosition[3];
    unravel(o, g.output, g.rank, outPosition);
    int64_t firstChannel = f / g.groupFilters * g.groupChannels;
    C sum = 0;
    for (int64_t k = 0; k < g.kernelSize; ++k) {
      unravel(k, g.kernel, g.rank, kernelPosition);
      int64_t offset = 0;
      for (int32_t dim = 0; dim < g.rank && offset >= 0; ++dim) {
        int64_t at = outPosition[dim] * g.strides[dim] - g.padBegin[dim] +
                     kernelPosition[dim] * g.dilations[dim];
        offset = at < 0 || at >= g.input[dim] ? -1 : offset * g.input[dim] + at;
      }
      if (offset < 0)
        continue;
      for (int64_t c = 0; c < g.groupChannels; ++c)
        sum += load<T>(x, (n * g.channels + firstChannel + c) * g.inputSize +
                              offset) *
               load<T>(w, (f * g.groupChannels + c) * g.kernelSize + k);
    }
    store<T>(y, index, bias ? sum + load<T>(bias, f) : sum);
  }
}

/// X = the adjoint of the convolution applied to Y (+ bias, per channel of
/// X), one thread per element of X, gathering the elements of Y that read it.
template <typename T>
__global__ void backwardDataKernel(const void *y, const void *w,
                                   const void *bias, void *x,
                                   DirectGeometry g) {
  using C = ComputeType<T>;
  LETHE_GRID_STRIDE_LOOP(index, g.batch * g.channels * g.inputSize) {
    int64_t i = index % g.inputSize, c = index / g.inputSize % g.channels,
            n = index / (g.inputSize * g.channels);
    int64_t inPosition[3], kernelPosition[3];
    unravel(i, g.input, g.rank, inPosition);
    int64_t firstFilter = c / g.groupChannels * g.groupFilters,
            groupChannel = c % g.groupChannels;
    C sum = 0;
    for (int64_t k = 0; k < g.kernelSize; ++k) {
      unravel(k, g.kernel, g.rank, kernelPosition);
      // The output position o with o * stride - pad + k * dilation = i.
      int64_t offset = 0;
      for (int32_t dim = 0; dim < g.rank && offset >= 0; ++dim) {
        int64_t at = inPosition[dim] + g.padBegin[dim] -
                     kernelPosition[dim] * g.dilations[dim];
        offset = at < 0 || at % g.strides[dim] != 0 ||
                         at / g.strides[dim] >= g.output[dim]
                     ? -1
                     : offset * g.output[dim] + at / g.strides[dim];
      }
      if (offset < 0)
        continue;
      for (int64_t f = 0; f < g.groupFilters; ++f)
        sum += load<T>(y, (n * g.filters + firstFilter + f) * g.outputSize +
                              offset) *
               load<T>(w, ((firstFilter + f) * g.groupChannels + groupChannel) *
                                  g.kernelSize +
                              k);
    }
    store<T>(x, index, bias ? sum + load<T>(bias, c) : sum);
  }
}

/// W = the gradient of the convolution's weight, Y being its output's
/// gradient: one thread per element of W, summing images in order.
template <typename T>
__global__ void backwardFilterKernel(const void *x, const void *y, void *w,
                                     DirectGeometry g) {
  using C = ComputeType<T>;
  LETHE_GRID_STRIDE_LOOP(index, g.filters * g.groupChannels * g.kernelSize) {
    int64_t k = index % g.kernelSize,
            groupChannel = index / g.kernelSize % g.groupChannels,
            f = index / (g.kernelSize * g.groupChannels);
    int64_t c = f / g.groupFilters * g.groupChannels + groupChannel;
    int64_t kernelPosition[3], outPosition[3];
    unravel(k, g.kernel, g.rank, kernelPosition);
    C sum = 0;
    for (int64_t n = 0; n < g.batch; ++n)
      for (int64_t o = 0; o < g.outputSize; ++o) {
        unravel(o, g.output, g.rank, outPosition);
        int64_t offset = 0;
        for (int32_t dim = 0; dim < g.rank && offset >= 0; ++dim) {
          int64_t at = outPosition[dim] * g.strides[dim] - g.padBegin[dim] +
                       kernelPosition[dim] * g.dilations[dim];
          offset =
              at < 0 || at >= g.input[dim] ? -1 : offset * g.input[dim] + at;
        }
        if (offset >= 0)
          sum += load<T>(x, (n * g.channels + c) * g.inputSize + offset) *
                 load<T>(y, (n * g.filters + f) * g.outputSize + o);
      }
    store<T>(w, index, sum);
  }
}

/// out[i] += bias[channel of i], in the compute type, out being N x
/// `channels` x `plane`.
template <typename T>
__global__ void addBiasKernel(void *out, const void *bias, int64_t count,
                              int64_t channels, int64_t plane) {
  LETHE_GRID_STRIDE_LOOP(i, count) {
    store<T>(out, i, load<T>(out, i) + load<T>(bias, i / plane % channels));
  }
}

//===----------------------------------------------------------------------===//
// One call
//===----------------------------------------------------------------------===//

/// Which of the convolution's three operands a call computes.
enum class Direction { Forward, BackwardData, BackwardFilter };

/// A checked call: the convolution "X convolved with W gives Y" (the
/// tensors' roles), which of them it computes, the bias added to it (or
/// null) and the workspace given (or null).
struct ConvolutionCall {
  const char *kernel;
  Direction direction;
  const lethe_rt_tensor *x, *w, *y, *bias, *workspace;
  int64_t group;
  const ConvolutionGeometry *geometry;

  lethe_rt_dtype dtype() const { return x->dtype; }
  /// The tensor the call writes.
  const lethe_rt_tensor &result() const {
    return direction == Direction::Forward        ? *y
           : direction == Direction::BackwardData ? *x
                                                  : *w;
  }
};

DirectGeometry directGeometryOf(const ConvolutionCall &call) {
  const ConvolutionGeometry &geometry = *call.geometry;
  DirectGeometry g;
  g.rank = geometry.rank;
  for (int32_t dim = 0; dim < geometry.rank; ++dim) {
    g.input[dim] = geometry.input[dim];
    g.output[dim] = geometry.output[dim];
    g.kernel[dim] = geometry.kernel[dim];
    g.strides[dim] = geometry.strides[dim];
    g.padBegin[dim] = geometry.padBegin[dim];
    g.dilations[dim] = geometry.dilations[dim];
  }
  g.inputSize = geometry.inputSize;
  g.outputSize = geometry.outputSize;
  g.kernelSize = geometry.kernelSize;
  g.batch = call.x->shape[0];
  g.channels = call.x->shape[1];
  g.filters = call.y->shape[1];
  g.groupChannels = g.channels / call.group;
  g.groupFilters = g.filters / call.group;
  return g;
}

/// Runs the call in the direct kernels, bias included.
bool runDirect(lethe_rt_context *context, const ConvolutionCall &call) {
  DirectGeometry g = directGeometryOf(call);
  const void *bias = call.bias ? call.bias->data : nullptr;
  return launchForFloat(call.dtype(), [&](auto tag) {
           using T = decltype(tag);
           switch (call.direction) {
           case Direction::Forward:
             return launchElementwise(context, call.kernel, "forwardKernel",
                                      g.batch * g.filters * g.outputSize,
                                      forwardKernel<T>, call.x->data,
                                      call.w->data, bias, call.y->data, g);
           case Direction::BackwardData:
             return launchElementwise(
                 context, call.kernel, "backwardDataKernel",
                 g.batch * g.channels * g.inputSize, backwardDataKernel<T>,
                 call.y->data, call.w->data, bias, call.x->data, g);
           default:
             return launchElementwise(
                 context, call.kernel, "backwardFilterKernel",
                 g.filters * g.groupChannels * g.kernelSize,
                 backwardFilterKernel<T>, call.x->data, call.y->data,
                 call.w->data, g);
           }
         }) == LETHE_RT_OK;
}

//===----------------------------------------------------------------------===//
// cuDNN
//===----------------------------------------------------------------------===//

/// Returns true when `status` is CUDNN_STATUS_SUCCESS; otherwise records
/// "<call>: <cudnnFunction> failed: <cudnnGetErrorString> (<status>)" and
/// returns false.
bool checkCudnn(lethe_rt_context *context, const char *call,
                const char *cudnnFunction, cudnnStatus_t status) {
  if (status == CUDNN_STATUS_SUCCESS)
    return true;
  fail(context, call, "%s failed: %s (%d)", cudnnFunction,
       cudnnGetErrorString(status), static_cast<int>(status));
  return false;
}

/// Creates the context's cuDNN handle, bound to the compute stream, unless
/// it exists.
bool ensureCudnn(lethe_rt_context *context, const char *call) {
  if (context->cudnn)
    return true;
  cudnnHandle_t handle = nullptr;
  if (!checkCudnn(context, call, "cudnnCreate", cudnnCreate(&handle)))
    return false;
  if (!checkCudnn(context, call, "cudnnSetStream",
                  cudnnSetStream(handle, context->compute))) {
    cudnnDestroy(handle);
    return false;
  }
  context->cudnn = handle;
  return true;
}

/// The descriptors of one call, destroyed with it.
struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t convolution = nullptr;

  Descriptors() = default;
  Descriptors(const Descriptors &) = delete;
  Descriptors &operator=(const Descriptors &) = delete;
  ~Descriptors() {
    if (x)
      cudnnDestroyTensorDescriptor(x);
    if (y)
      cudnnDestroyTensorDescriptor(y);
    if (w)
      cudnnDestroyFilterDescriptor(w);
    if (convolution)
      cudnnDestroyConvolutionDescriptor(convolution);
  }
};

/// cuDNN's names of a float dtype and of the type it computes in.
void cudnnTypesOf(lethe_rt_dtype dtype, cudnnDataType_t &data,
                  cudnnDataType_t &compute) {
  compute = CUDNN_DATA_FLOAT;
  switch (dtype) {
  case LETHE_RT_F16:
    data = CUDNN_DATA_HALF;
    return;
  case LETHE_RT_BF16:
    data = CUDNN_DATA_BFLOAT16;
    return;
  case LETHE_RT_F64:
    data = compute = CUDNN_DATA_DOUBLE;
    return;
  default:
    data = CUDNN_DATA_FLOAT;
    return;
  }
}

/// The math type a dtype's convolutions start from: FMA for f32 (tensor
/// cores would round its operands to TF32), tensor cores for f16 and bf16
/// (whose products they compute exactly, adding in f32), cuDNN's default for
/// f64.
cudnnMathType_t mathTypeOf(lethe_rt_dtype dtype) {
  switch (dtype) {
  case LETHE_RT_F32:
    return CUDNN_FMA_MATH;
  case LETHE_RT_F16:
  case LETHE_RT_BF16:
    return CUDNN_TENSOR_OP_MATH;
  default:
    return CUDNN_DEFAULT_MATH;
  }
}

/// Packed strides of `dims`.
std::vector<int> packedStrides(const std::vector<int> &dims) {
  std::vector<int> strides(dims.size(), 1);
  for (size_t dim = dims.size() - 1; dim > 0; --dim)
    strides[dim - 1] = strides[dim] * dims[dim];
  return strides;
}

/// Describes the call's X, W, Y and convolution to cuDNN.
bool makeDescriptors(lethe_rt_context *context, const ConvolutionCall &call,
                     const CudnnGeometry &geometry, Descriptors &descriptors) {
  const char *kernel = call.kernel;
  cudnnDataType_t data, compute;
  cudnnTypesOf(call.dtype(), data, compute);
  int batch = static_cast<int>(call.x->shape[0]),
      channels = static_cast<int>(call.x->shape[1]),
      filters = static_cast<int>(call.y->shape[1]);
  std::vector<int> xDims{batch, channels}, yDims{batch, filters},
      wDims{filters, static_cast<int>(call.w->shape[1])};
  xDims.insert(xDims.end(), geometry.input.begin(), geometry.input.end());
  yDims.insert(yDims.end(), geometry.output.begin(), geometry.output.end());
  wDims.insert(wDims.end(), geometry.kernel.begin(), geometry.kernel.end());
  int dims = static_cast<int>(xDims.size());
  return checkCudnn(context, kernel, "cudnnCreateTensorDescriptor",
                    cudnnCreateTensorDescriptor(&descriptors.x)) &&
         checkCudnn(context, kernel, "cudnnSetTensorNdDescriptor",
                    cudnnSetTensorNdDescriptor(descriptors.x, data, dims,
                                               xDims.data(),
                                               packedStrides(xDims).data())) &&
         checkCudnn(context, kernel, "cudnnCreateTensorDescriptor",
                    cudnnCreateTensorDescriptor(&descriptors.y)) &&
         checkCudnn(context, kernel, "cudnnSetTensorNdDescriptor",
                    cudnnSetTensorNdDescriptor(descriptors.y, data, dims,
                                               yDims.data(),
                                               packedStrides(yDims).data())) &&
         checkCudnn(context, kernel, "cudnnCreateFilterDescriptor",
                    cudnnCreateFilterDescriptor(&descriptors.w)) &&
         checkCudnn(context, kernel, "cudnnSetFilterNdDescriptor",
                    cudnnSetFilterNdDescriptor(descriptors.w, data,
                                               CUDNN_TENSOR_NCHW, dims,
                                               wDims.data())) &&
         checkCudnn(
             context, kernel, "cudnnCreateConvolutionDescriptor",
             cudnnCreateConvolutionDescriptor(&descriptors.convolution)) &&
         // ONNX's Conv is a cross-correlation (the kernel is not flipped).
         checkCudnn(context, kernel, "cudnnSetConvolutionNdDescriptor",
                    cudnnSetConvolutionNdDescriptor(
                        descriptors.convolution, geometry.spatialDims,
                        geometry.pads.data(), geometry.strides.data(),
                        geometry.dilations.data(), CUDNN_CROSS_CORRELATION,
                        compute)) &&
         checkCudnn(
             context, kernel, "cudnnSetConvolutionGroupCount",
             cudnnSetConvolutionGroupCount(descriptors.convolution,
                                           static_cast<int>(call.group))) &&
         checkCudnn(context, kernel, "cudnnSetConvolutionMathType",
                    cudnnSetConvolutionMathType(descriptors.convolution,
                                                mathTypeOf(call.dtype())));
}

/// cuDNN's heuristic candidates for the call (the perf results of
/// `get(requested, &returned, results)`, at most `maxCount()` of them), each
/// with the math type it will run with and its workspace under that type
/// (`size(algorithm, &bytes)`), in `candidates` and `mathTypes`. For f32, a
/// candidate offered with tensor-op math is dropped and the others run with
/// FMA math.
template <typename Perf, typename MaxCount, typename Get, typename Size>
bool collectCandidates(lethe_rt_context *context, const ConvolutionCall &call,
                       const Descriptors &descriptors, const char *maxCountName,
                       MaxCount maxCount, const char *getName, Get get,
                       Size size, std::vector<AlgorithmCandidate> &candidates,
                       std::vector<cudnnMathType_t> &mathTypes) {
  int requested = 0, returned = 0;
  if (!checkCudnn(context, call.kernel, maxCountName, maxCount(&requested)))
    return false;
  std::vector<Perf> results(requested > 0 ? requested : 1);
  if (!checkCudnn(context, call.kernel, getName,
                  get(requested, &returned, results.data())))
    return false;
  bool isF32 = call.dtype() == LETHE_RT_F32;
  for (int index = 0; index < returned; ++index) {
    const Perf &result = results[index];
    AlgorithmCandidate candidate;
    candidate.algorithm = static_cast<int>(result.algo);
    candidate.deterministic = result.determinism == CUDNN_DETERMINISTIC;
    cudnnMathType_t mathType = result.mathType;
    bool tensorOps = mathType == CUDNN_TENSOR_OP_MATH ||
                     mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    if (isF32)
      mathType = CUDNN_FMA_MATH;
    candidate.supported = result.status == CUDNN_STATUS_SUCCESS &&
                          !(isF32 && tensorOps) &&
                          mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    if (candidate.supported && candidate.deterministic) {
      // The workspace under the math type it will run with (the heuristics'
      // figure is for theirs).
      if (!checkCudnn(
              context, call.kernel, "cudnnSetConvolutionMathType",
              cudnnSetConvolutionMathType(descriptors.convolution, mathType)))
        return false;
      size_t bytes = 0;
      candidate.supported = size(result.algo, &bytes) == CUDNN_STATUS_SUCCESS;
      candidate.workspaceBytes = bytes;
    }
    candidates.push_back(candidate);
    mathTypes.push_back(mathType);
  }
  return true;
}

/// The key of the call's algorithm in the context's cache.
std::string algorithmKey(const ConvolutionCall &call,
                         const CudnnGeometry &geometry, uint64_t budgetBytes) {
  std::string key = std::to_string(static_cast<int>(call.direction)) + " " +
                    std::to_string(static_cast<int>(call.dtype())) + " " +
                    std::to_string(call.group) + " " +
                    std::to_string(budgetBytes);
  for (int64_t dim : {call.x->shape[0], call.x->shape[1], call.y->shape[1]})
    key += " " + std::to_string(dim);
  for (const std::vector<int> *values :
       {&geometry.input, &geometry.output, &geometry.kernel, &geometry.pads,
        &geometry.strides, &geometry.dilations}) {
    key += " |";
    for (int value : *values)
      key += " " + std::to_string(value);
  }
  return key;
}

/// The algorithm the call runs with, its workspace at most `budgetBytes`:
/// the one chosen before for this shape, or the heuristics' first that
/// fits (chooseAlgorithm). Leaves the convolution descriptor set to its math
/// type.
bool chooseCudnnAlgorithm(lethe_rt_context *context,
                          const ConvolutionCall &call,
                          const CudnnGeometry &geometry,
                          const Descriptors &descriptors, uint64_t budgetBytes,
                          ConvolutionAlgorithm &algorithm) {
  std::string key = algorithmKey(call, geometry, budgetBytes);
  auto cached = context->convolutionAlgorithms.find(key);
  if (cached != context->convolutionAlgorithms.end()) {
    algorithm = cached->second;
    if (algorithm.direct)
      return true;
    return checkCudnn(context, call.kernel, "cudnnSetConvolutionMathType",
                      cudnnSetConvolutionMathType(
                          descriptors.convolution,
                          static_cast<cudnnMathType_t>(algorithm.mathType)));
  }
  cudnnHandle_t handle = context->cudnn;
  std::vector<AlgorithmCandidate> candidates;
  std::vector<cudnnMathType_t> mathTypes;
  bool collected = false;
  switch (call.direction) {
  case Direction::Forward:
    collected = collectCandidates<cudnnConvolutionFwdAlgoPerf_t>(
        context, call, descriptors,
        "cudnnGetConvolutionForwardAlgorithmMaxCount",
        [&](int *count) {
          return cudnnGetConvolutionForwardAlgorithmMaxCount(handle, count);
        },
        "cudnnGetConvolutionForwardAlgorithm_v7",
        [&](int requested, int *returned,
            cudnnConvolutionFwdAlgoPerf_t *results) {
          return cudnnGetConvolutionForwardAlgorithm_v7(
              handle, descriptors.x, descriptors.w, descriptors.convolution,
              descriptors.y, requested, returned, results);
        },
        [&](cudnnConvolutionFwdAlgo_t algo, size_t *bytes) {
          return cudnnGetConvolutionForwardWorkspaceSize(
              handle, descriptors.x, descriptors.w, descriptors.convolution,
              descriptors.y, algo, bytes);
        },
        candidates, mathTypes);
    break;
  case Direction::BackwardData:
    collected = collectCandidates<cudnnConvolutionBwdDataAlgoPerf_t>(
        context, call, descriptors,
        "cudnnGetConvolutionBackwardDataAlgorithmMaxCount",
        [&](int *count) {
          return cudnnGetConvolutionBackwardDataAlgorithmMaxCount(handle,
                                                                  count);
        },
        "cudnnGetConvolutionBackwardDataAlgorithm_v7",
        [&](int requested, int *returned,
            cudnnConvolutionBwdDataAlgoPerf_t *results) {
          return cudnnGetConvolutionBackwardDataAlgorithm_v7(
              handle, descriptors.w, descriptors.y, descriptors.convolution,
              descriptors.x, requested, returned, results);
        },
        [&](cudnnConvolutionBwdDataAlgo_t algo, size_t *bytes) {
          return cudnnGetConvolutionBackwardDataWorkspaceSize(
              handle, descriptors.w, descriptors.y, descriptors.convolution,
              descriptors.x, algo, bytes);
        },
        candidates, mathTypes);
    break;
  default:
    collected = collectCandidates<cudnnConvolutionBwdFilterAlgoPerf_t>(
        context, call, descriptors,
        "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount",
        [&](int *count) {
          return cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(handle,
                                                                    count);
        },
        "cudnnGetConvolutionBackwardFilterAlgorithm_v7",
        [&](int requested, int *returned,
            cudnnConvolutionBwdFilterAlgoPerf_t *results) {
          return cudnnGetConvolutionBackwardFilterAlgorithm_v7(
              handle, descriptors.x, descriptors.y, descriptors.convolution,
              descriptors.w, requested, returned, results);
        },
        [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t *bytes) {
          return cudnnGetConvolutionBackwardFilterWorkspaceSize(
              handle, descriptors.x, descriptors.y, descriptors.convolution,
              descriptors.w, algo, bytes);
        },
        candidates, mathTypes);
    break;
  }
  if (!collected)
    return false;
  int choice = chooseAlgorithm(candidates, budgetBytes);
  if (choice < 0) {
    // No deterministic algorithm, or none that fits a planned workspace (a
    // plan from the roofline sizes it for im2col, not for cuDNN): the direct
    // kernels need none. The call asks for the least workspace that would
    // run it in cuDNN, which a plan from a measured profile then gives it.
    algorithm.direct = true;
    if (int least = leastWorkspaceAlgorithm(candidates); least >= 0)
      algorithm.wantedWorkspaceBytes = candidates[least].workspaceBytes;
    context->convolutionAlgorithms.emplace(std::move(key), algorithm);
    return true;
  }
  algorithm.algorithm = candidates[choice].algorithm;
  algorithm.mathType = mathTypes[choice];
  algorithm.workspaceBytes = candidates[choice].workspaceBytes;
  if (!checkCudnn(context, call.kernel, "cudnnSetConvolutionMathType",
                  cudnnSetConvolutionMathType(descriptors.convolution,
                                              mathTypes[choice])))
    return false;
  context->convolutionAlgorithms.emplace(std::move(key), algorithm);
  return true;
}

/// Runs the chosen algorithm: the call's result = 1 * op(operands) + 0 *
/// result (cuDNN does not read it with beta 0).
bool runCudnnAlgorithm(lethe_rt_context *context, const ConvolutionCall &call,
                       const Descriptors &descriptors,
                       const ConvolutionAlgorithm &algorithm, void *workspace,
                       size_t workspaceBytes) {
  // The scalars have the compute type's precision.
  double alphaDouble = 1, betaDouble = 0;
  float alphaFloat = 1, betaFloat = 0;
  bool doubles = call.dtype() == LETHE_RT_F64;
  const void *alpha = doubles ? static_cast<const void *>(&alphaDouble)
                              : static_cast<const void *>(&alphaFloat);
  const void *beta = doubles ? static_cast<const void *>(&betaDouble)
                             : static_cast<const void *>(&betaFloat);
  cudnnHandle_t handle = context->cudnn;
  switch (call.direction) {
  case Direction::Forward:
    return checkCudnn(
        context, call.kernel, "cudnnConvolutionForward",
        cudnnConvolutionForward(
            handle, alpha, descriptors.x, call.x->data, descriptors.w,
            call.w->data, descriptors.convolution,
            static_cast<cudnnConvolutionFwdAlgo_t>(algorithm.algorithm),
            workspace, workspaceBytes, beta, descriptors.y, call.y->data));
  case Direction::BackwardData:
    return checkCudnn(
        context, call.kernel, "cudnnConvolutionBackwardData",
        cudnnConvolutionBackwardData(
            handle, alpha, descriptors.w, call.w->data, descriptors.y,
            call.y->data, descriptors.convolution,
            static_cast<cudnnConvolutionBwdDataAlgo_t>(algorithm.algorithm),
            workspace, workspaceBytes, beta, descriptors.x, call.x->data));
  default:
    return checkCudnn(
        context, call.kernel, "cudnnConvolutionBackwardFilter",
        cudnnConvolutionBackwardFilter(
            handle, alpha, descriptors.x, call.x->data, descriptors.y,
            call.y->data, descriptors.convolution,
            static_cast<cudnnConvolutionBwdFilterAlgo_t>(algorithm.algorithm),
            workspace, workspaceBytes, beta, descriptors.w, call.w->data));
  }
}

/// cuDNN's alignment for the workspace we hand it: the arena's blocks are
/// aligned to this, so a planned workspace loses nothing to it.
constexpr uintptr_t cudnnWorkspaceAlignment = 256;

/// Runs the call through cuDNN (`geometry` being cuDNN's view of it), then
/// adds the bias.
bool runCudnn(lethe_rt_context *context, const ConvolutionCall &call,
              const CudnnGeometry &geometry) {
  Descriptors descriptors;
  if (!ensureCudnn(context, call.kernel) ||
      !makeDescriptors(context, call, geometry, descriptors))
    return false;
  // The given workspace, from its first aligned byte; or none, and the
  // algorithm's allocated on the stream.
  uint8_t *given = nullptr;
  uint64_t budgetBytes = UINT64_MAX, skipped = 0;
  if (call.workspace) {
    uintptr_t begin = reinterpret_cast<uintptr_t>(call.workspace->data);
    uintptr_t aligned = (begin + cudnnWorkspaceAlignment - 1) /
                        cudnnWorkspaceAlignment * cudnnWorkspaceAlignment;
    uint64_t bytes = static_cast<uint64_t>(call.workspace->shape[0]);
    given = reinterpret_cast<uint8_t *>(aligned);
    skipped = aligned - begin;
    budgetBytes = bytes > skipped ? bytes - skipped : 0;
  }
  ConvolutionAlgorithm algorithm;
  if (!chooseCudnnAlgorithm(context, call, geometry, descriptors, budgetBytes,
                            algorithm))
    return false;
  if (algorithm.direct) {
    if (algorithm.wantedWorkspaceBytes > 0)
      noteWorkspaceWanted(context, algorithm.wantedWorkspaceBytes + skipped);
    return runDirect(context, call);
  }
  StreamScratch scratch(context, call.kernel);
  void *workspace = given;
  if (!call.workspace && algorithm.workspaceBytes > 0) {
    size_t offset = scratch.reserve<uint8_t>(algorithm.workspaceBytes);
    if (!scratch.allocate())
      return false;
    workspace = scratch.at<void>(offset);
  }
  if (!runCudnnAlgorithm(context, call, descriptors, algorithm,
                         algorithm.workspaceBytes > 0 ? workspace : nullptr,
                         algorithm.workspaceBytes) ||
      !scratch.release())
    return false;
  if (!call.bias)
    return true;
  const lethe_rt_tensor &result = call.result();
  int64_t count = numElements(result), channels = result.shape[1];
  int64_t plane = count / (result.shape[0] * channels);
  return launchForFloat(call.dtype(), [&](auto tag) {
           using T = decltype(tag);
           return launchElementwise(context, call.kernel, "addBiasKernel",
                                    count, addBiasKernel<T>, result.data,
                                    call.bias->data, count, channels, plane);
         }) == LETHE_RT_OK;
}

/// What every entry point does once its arguments are checked: refuse a
/// result that overlaps an operand, check the workspace against the op's
/// planned bytes (`plannedBytes`), then run in cuDNN where it can express
/// the convolution, else in the direct kernels.
lethe_rt_status convolve(lethe_rt_context *context, const ConvolutionCall &call,
                         int64_t plannedBytes) {
  const lethe_rt_tensor &result = call.result();
  const char *resultName =
      call.direction == Direction::BackwardFilter ? "dw" : "out";
  // The operands by the names the entry point gives them.
  std::vector<NamedTensor> operands;
  switch (call.direction) {
  case Direction::Forward:
    operands = {{"x", call.x}, {"w", call.w}};
    break;
  case Direction::BackwardData:
    operands = {{"x", call.y}, {"w", call.w}};
    break;
  default:
    operands = {{"x", call.x}, {"dy", call.y}};
    break;
  }
  if (call.bias)
    operands.push_back({"bias", call.bias});
  for (const NamedTensor &operand : operands)
    if (!checkNoOverlap(context, call.kernel, resultName, result, {operand},
                        "convolve"))
      return LETHE_RT_ERROR;
  if (call.workspace &&
      !checkWorkspace(context, call.kernel, call.workspace, plannedBytes,
                      "the op's planned workspace", /*alignment=*/8))
    return LETHE_RT_ERROR;
  if (numElements(result) == 0)
    return LETHE_RT_OK;
  CudnnGeometry geometry;
  if (!cudnnGeometryError(*call.geometry, {call.x, call.w, call.y}, geometry)
           .empty())
    return runDirect(context, call) ? LETHE_RT_OK : LETHE_RT_ERROR;
  return runCudnn(context, call, geometry) ? LETHE_RT_OK : LETHE_RT_ERROR;
}

} // namespace

extern "C" lethe_rt_status
lethe_rt_conv(lethe_rt_context *context, const lethe_rt_tensor *x,
              const lethe_rt_tensor *w, const lethe_rt_tensor *bias,
              const int64_t *strides, const int64_t *pads,
              const int64_t *dilations, int64_t group,
              const lethe_rt_tensor *out, const lethe_rt_tensor *workspace) {
  const char *kernel = "lethe_rt_conv";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  ConvolutionGeometry geometry;
  if (!checkConvolution(context, kernel, x, w, bias, out, strides, pads,
                        dilations, group, {"w", "out"}, geometry))
    return LETHE_RT_ERROR;
  ConvolutionCall call{kernel, Direction::Forward, x,     w,        out,
                       bias,   workspace,          group, &geometry};
  return convolve(context, call,
                  plannedWorkspaceBytes(w->shape[1], geometry,
                                        lethe_rt_dtype_size(x->dtype)));
}

extern "C" lethe_rt_status
lethe_rt_conv_transpose(lethe_rt_context *context, const lethe_rt_tensor *x,
                        const lethe_rt_tensor *w, const lethe_rt_tensor *bias,
                        const int64_t *strides, const int64_t *pads,
                        const int64_t *dilations, const int64_t *output_padding,
                        int64_t group, const lethe_rt_tensor *out,
                        const lethe_rt_tensor *workspace) {
  const char *kernel = "lethe_rt_conv_transpose";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  ConvolutionGeometry geometry;
  if (!checkConvTranspose(context, kernel, x, w, bias, out, strides, pads,
                          dilations, output_padding, group, geometry))
    return LETHE_RT_ERROR;
  // The convolution whose adjoint this is reads out and gives x.
  ConvolutionCall call{
      kernel,   Direction::BackwardData, out, w, x, bias, workspace, group,
      &geometry};
  // The planner counts its columns in the compute type (at least 4 bytes).
  int64_t elementBytes = lethe_rt_dtype_size(x->dtype);
  return convolve(context, call,
                  plannedWorkspaceBytes(w->shape[1], geometry,
                                        elementBytes > 4 ? elementBytes : 4));
}

extern "C" lethe_rt_status
lethe_rt_conv_grad_weight(lethe_rt_context *context, const lethe_rt_tensor *x,
                          const lethe_rt_tensor *dy, const int64_t *strides,
                          const int64_t *pads, const int64_t *dilations,
                          int64_t group, const lethe_rt_tensor *dw,
                          const lethe_rt_tensor *workspace) {
  const char *kernel = "lethe_rt_conv_grad_weight";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  // dy plays the convolution's output, dw its weight.
  ConvolutionGeometry geometry;
  if (!checkConvolution(context, kernel, x, dw, /*bias=*/nullptr, dy, strides,
                        pads, dilations, group, {"dw", "dy"}, geometry))
    return LETHE_RT_ERROR;
  ConvolutionCall call{kernel,
                       Direction::BackwardFilter,
                       x,
                       dw,
                       dy,
                       /*bias=*/nullptr,
                       workspace,
                       group,
                       &geometry};
  return convolve(context, call,
                  plannedWorkspaceBytes(dw->shape[1], geometry,
                                        lethe_rt_dtype_size(x->dtype)));
}
