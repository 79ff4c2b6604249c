//===- Loss.cu - Loss kernels of the CUDA backend -------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_mse, lethe_rt_softmax_cross_entropy, lethe_rt_nll and their
// gradients lethe_rt_softmax_cross_entropy_grad and lethe_rt_nll_grad on the
// compute stream, with the CPU backend's semantics (runtime/cpu/Loss.cpp,
// Gradient.cpp, ClassLoss.h).
//
// mse: each squared difference in the compute type (f32 for f16 and bf16),
// rounded once on store for reduction none; for sum and mean, their sum in
// f64 rounded once to the loss type (a mean over nothing is NaN).
//
// Class-indexed losses: the loss of element (n, d...) of the labels is
// -log_prob[n, label, d...] * w(label) in f64 (w = 1 without weights, 0 for
// an ignored element); sum adds them, mean divides that by the sum of the
// counted weights. The gradients write g(n, d...) * w(label) * (exp(log_prob)
// - [c == label]) (softmax cross entropy) or -g w [c == label] (nll) in f64,
// one thread per element of the gradient, g being dloss over the weights'
// sum for mean (0 when that is 0). Labels live in device memory: checking
// that each lies in [0, C) scans them on the device and waits for the
// compute stream, as integer division's divisor check does. The weights'
// sum for a mean gradient passes from one kernel to the next through the
// context's status word.
//
// Sums over fewer than minBlockGroup elements add in order, as the CPU
// backend adds, and give its bits; longer ones add in one block's tree, and
// those of 2 * kSplitChunk elements or more in a block per chunk whose sums
// one thread adds in order (SplitFold.h), within rounding of them.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"
#include "SourceGroups.h"
#include "SplitFold.h"

using namespace lethe::rt;

namespace {

/// (a - b)^2 in the compute type of T.
template <typename T>
__device__ ComputeType<T> squaredDifference(const void *a, const void *b,
                                            int64_t i) {
  ComputeType<T> difference = load<T>(a, i) - load<T>(b, i);
  return difference * difference;
}

/// Reduction none: loss[i] = (a[i] - b[i])^2.
template <typename T>
__global__ void squaredErrorKernel(const void *a, const void *b, void *loss,
                                   int64_t count) {
  LETHE_GRID_STRIDE_LOOP(i, count) {
    store<T>(loss, i, squaredDifference<T>(a, b, i));
  }
}

/// The two sums over i in [0, count) of `term(i)` (a double2), for thread 0
/// of a one-block kernel: thread 0 adds in order when count <
/// minBlockGroup (the CPU backend's order, and bits), the block in a tree
/// otherwise. Every thread of the block must call it.
template <typename Term> __device__ double2 sumTerms(int64_t count, Term term) {
  __shared__ double scratch[32];
  double2 total{0, 0};
  if (count < minBlockGroup) {
    for (int64_t i = 0; threadIdx.x == 0 && i < count; ++i) {
      double2 value = term(i);
      total.x += value.x;
      total.y += value.y;
    }
    return total;
  }
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
    double2 value = term(i);
    total.x += value.x;
    total.y += value.y;
  }
  auto plus = [](double a, double b) { return a + b; };
  total.x = blockReduce(total.x, plus, scratch);
  total.y = blockReduce(total.y, plus, scratch);
  return total;
}

/// The sum of `count` terms (`terms(i)`, a double2) given to `finish`: in
/// one block (sumTerms) or, over 2 * kSplitChunk terms or more, split
/// (SplitFold.h): a block per chunk of kSplitChunk, then one thread adds the
/// chunks' sums in order. Every kernel below is one of these.
template <typename Terms, typename Finish>
__global__ void sumKernel(int64_t count, Terms terms, Finish finish) {
  double2 total = sumTerms(count, terms);
  if (threadIdx.x == 0)
    finish(total);
}

template <typename Terms>
__global__ void chunkSumsKernel(int64_t count, int64_t chunks, Terms terms,
                                double2 *partials) {
  __shared__ double scratch[32];
  auto plus = [](double a, double b) { return a + b; };
  for (int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    SplitItem split = SplitItem::of(chunk, chunks, count);
    double2 total{0, 0};
    for (int64_t i = split.first + threadIdx.x; i < split.end;
         i += blockDim.x) {
      double2 value = terms(i);
      total.x += value.x;
      total.y += value.y;
    }
    total.x = blockReduce(total.x, plus, scratch);
    total.y = blockReduce(total.y, plus, scratch);
    if (threadIdx.x == 0)
      partials[chunk] = total;
  }
}

template <typename Finish>
__global__ void chunkTotalKernel(const double2 *partials, int64_t chunks,
                                 Finish finish) {
  if (threadIdx.x != 0)
    return;
  double2 total{0, 0};
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    total.x += partials[chunk].x;
    total.y += partials[chunk].y;
  }
  finish(total);
}

/// Launches the sum of `count` terms into `finish` (see sumKernel), which
/// runs even over no terms.
template <typename Terms, typename Finish>
bool launchSum(lethe_rt_context *context, const char *call, int64_t count,
               const Terms &terms, const Finish &finish) {
  if (!isSplit(count, count))
    return launchRows(context, call, "sumKernel", 1, sumKernel<Terms, Finish>,
                      count, terms, finish);
  int64_t chunks = splitChunks(count);
  StreamScratch scratch(context, call);
  size_t partials = scratch.reserve<double2>(chunks);
  return scratch.allocate() &&
         launchRows(context, call, "chunkSumsKernel", chunks,
                    chunkSumsKernel<Terms>, count, chunks, terms,
                    scratch.at<double2>(partials)) &&
         launchRows(context, call, "chunkTotalKernel", 1,
                    chunkTotalKernel<Finish>,
                    static_cast<const double2 *>(scratch.at<double2>(partials)),
                    chunks, finish) &&
         scratch.release();
}

/// mse's terms: the squared differences.
template <typename T> struct SquaredErrors {
  const void *a, *b;
  __device__ double2 operator()(int64_t i) const {
    return double2{squaredDifference<T>(a, b, i), 0};
  }
};

/// Writes mse's sum, or its mean over `count`, as the scalar loss.
template <typename T> struct StoreSquaredError {
  void *loss;
  int64_t count;
  bool mean;
  __device__ void operator()(double2 total) const {
    store<T>(loss, 0, mean ? total.x / static_cast<double>(count) : total.x);
  }
};

//===----------------------------------------------------------------------===//
// Class-indexed losses
//===----------------------------------------------------------------------===//

/// The arguments of a class-indexed loss, checked, as its kernels read them:
/// an input (N, C, D...), labels (N, D...) of i32 or i64, weights (C) of any
/// float dtype or none.
struct ClassLoss {
  const void *labels = nullptr;
  bool labels64 = false;
  const void *weights = nullptr;
  lethe_rt_dtype weightsDtype = LETHE_RT_F32;
  bool hasIgnoreIndex = false;
  int64_t ignoreIndex = 0;
  int64_t batch = 0, classes = 0, spatial = 1;

  __host__ __device__ int64_t labelCount() const { return batch * spatial; }
  /// Label of element (n, d) (index n * spatial + d).
  __device__ int64_t label(int64_t index) const {
    return labels64 ? static_cast<const int64_t *>(labels)[index]
                    : static_cast<const int32_t *>(labels)[index];
  }
  __device__ bool ignored(int64_t label) const {
    return hasIgnoreIndex && label == ignoreIndex;
  }
  /// The weight of class `label` in f64 (1 without weights).
  __device__ double weight(int64_t label) const {
    switch (weights ? weightsDtype : LETHE_RT_I1) {
    case LETHE_RT_F16:
      return load<Half>(weights, label);
    case LETHE_RT_BF16:
      return load<BFloat16>(weights, label);
    case LETHE_RT_F32:
      return load<float>(weights, label);
    case LETHE_RT_F64:
      return load<double>(weights, label);
    default:
      return 1;
    }
  }
  /// The loss of label element `index` from log-probabilities `logProb`
  /// (storage type T) and its weight, 0 and 0 when ignored.
  template <typename T>
  __device__ double2 elementLoss(const void *logProb, int64_t index) const {
    int64_t value = label(index);
    if (ignored(value))
      return double2{0, 0};
    double weightValue = weight(value);
    int64_t n = index / spatial, d = index % spatial;
    double logP = load<T>(logProb, (n * classes + value) * spatial + d);
    return double2{-logP * weightValue, weightValue};
  }
};

/// Flags each label element outside [0, classes) and not ignored.
__global__ void invalidLabelKernel(ClassLoss arguments,
                                   unsigned long long *first) {
  LETHE_GRID_STRIDE_LOOP(i, arguments.labelCount()) {
    int64_t value = arguments.label(i);
    if (!arguments.ignored(value) && (value < 0 || value >= arguments.classes))
      atomicMin(first, static_cast<unsigned long long>(i));
  }
}

/// Reduction none: loss[n, d...] of each label element.
template <typename T>
__global__ void classLossKernel(const void *logProb, ClassLoss arguments,
                                void *loss) {
  LETHE_GRID_STRIDE_LOOP(index, arguments.labelCount()) {
    store<T>(loss, index, arguments.elementLoss<T>(logProb, index).x);
  }
}

/// A class-indexed loss's terms: each label element's loss and weight.
template <typename T> struct ClassLosses {
  const void *logProb;
  ClassLoss arguments;
  __device__ double2 operator()(int64_t index) const {
    return arguments.elementLoss<T>(logProb, index);
  }
};

/// Writes the sum of the losses, or for a mean that over the sum of the
/// weights, as the scalar loss.
template <typename T> struct StoreClassLoss {
  void *loss;
  bool mean;
  __device__ void operator()(double2 total) const {
    store<T>(loss, 0, mean ? total.x / total.y : total.x);
  }
};

/// The weights of the counted label elements.
struct CountedWeights {
  ClassLoss arguments;
  __device__ double2 operator()(int64_t index) const {
    int64_t value = arguments.label(index);
    return double2{arguments.ignored(value) ? 0 : arguments.weight(value), 0};
  }
};

/// Writes the weights' sum to *weightTotal.
struct StoreWeightTotal {
  double *weightTotal;
  __device__ void operator()(double2 total) const { *weightTotal = total.x; }
};

/// The gradient of softmax cross entropy (`Nll` false, from log_prob) or of
/// nll (`Nll` true) with respect to its (N, C, D...) input, one thread per
/// element; `weightTotal` is the weights' sum for mean.
template <typename T, bool Nll>
__global__ void classLossGradKernel(const void *dloss, const void *logProb,
                                    ClassLoss arguments,
                                    lethe_rt_reduction reduction,
                                    const double *weightTotal, void *out) {
  double scale = 0;
  if (reduction == LETHE_RT_REDUCTION_SUM) {
    scale = load<T>(dloss, 0);
  } else if (reduction == LETHE_RT_REDUCTION_MEAN) {
    double total = *weightTotal;
    if (total != 0)
      scale = load<T>(dloss, 0) / total;
  }
  int64_t classes = arguments.classes, spatial = arguments.spatial;
  LETHE_GRID_STRIDE_LOOP(i, arguments.labelCount() * classes) {
    int64_t d = i % spatial, c = i / spatial % classes,
            n = i / (spatial * classes);
    int64_t index = n * spatial + d, value = arguments.label(index);
    double result = 0;
    if (!arguments.ignored(value)) {
      double g = reduction == LETHE_RT_REDUCTION_NONE
                     ? static_cast<double>(load<T>(dloss, index))
                     : scale;
      double factor = g * arguments.weight(value);
      if constexpr (Nll)
        result = c == value ? -factor : 0.0;
      else
        result = factor * (mathExp(static_cast<double>(load<T>(logProb, i))) -
                           (c == value ? 1.0 : 0.0));
    }
    store<T>(out, i, result);
  }
}

/// Checks the arguments of a class-indexed loss as the CPU backend does,
/// with its messages (the input named `inputName`, ...), labels in range
/// included (which waits for the compute stream), and fills `arguments`.
bool checkClassArguments(lethe_rt_context *context, const char *kernel,
                         const char *inputName, const lethe_rt_tensor *input,
                         const char *labelsName, const lethe_rt_tensor *labels,
                         const char *weightsName,
                         const lethe_rt_tensor *weights, int hasIgnoreIndex,
                         int64_t ignoreIndex, ClassLoss &arguments) {
  if (!checkFloatTensor(context, kernel, inputName, input) ||
      !checkTensor(context, kernel, labelsName, labels) ||
      (weights && !checkFloatTensor(context, kernel, weightsName, weights)))
    return false;
  if (!report(context, kernel,
              classArgumentsError(inputName, *input, labelsName, *labels,
                                  weightsName, weights, arguments.batch,
                                  arguments.classes, arguments.spatial)))
    return false;
  arguments.labels = labels->data;
  arguments.labels64 = labels->dtype == LETHE_RT_I64;
  arguments.weights = weights ? weights->data : nullptr;
  arguments.weightsDtype = weights ? weights->dtype : LETHE_RT_F32;
  arguments.hasIgnoreIndex = hasIgnoreIndex != 0;
  arguments.ignoreIndex = ignoreIndex;
  int64_t count = arguments.labelCount(), invalid = -1;
  if (count == 0)
    return true;
  if (!findFirstFlagged(
          context, kernel,
          [&](unsigned long long *first) {
            return launchElementwise(context, kernel, "invalidLabelKernel",
                                     count, invalidLabelKernel, arguments,
                                     first);
          },
          invalid))
    return false;
  if (invalid < 0)
    return true;
  // The compute stream is idle: the label can be read directly.
  int64_t value = 0;
  if (!readIndexElement(context, kernel, labels->data, arguments.labels64,
                        invalid, value))
    return false;
  report(context, kernel,
         labelRangeError(labelsName, invalid, value, arguments.classes));
  return false;
}

/// How a class-indexed loss names its arguments in messages.
struct ClassLossNames {
  const char *input, *labels, *weights, *loss;
};

/// Checks the device, then the arguments of a class-indexed loss
/// (checkClassArguments) and its loss or loss gradient `loss` (of the
/// input's dtype, and the labels' shape for reduction none).
bool checkClassLoss(lethe_rt_context *context, const char *kernel,
                    const ClassLossNames &names, const lethe_rt_tensor *input,
                    const lethe_rt_tensor *labels,
                    const lethe_rt_tensor *weights, int hasIgnoreIndex,
                    int64_t ignoreIndex, lethe_rt_reduction reduction,
                    const lethe_rt_tensor *loss, ClassLoss &arguments) {
  return context && checkDevice(context, kernel) &&
         checkClassArguments(context, kernel, names.input, input, names.labels,
                             labels, names.weights, weights, hasIgnoreIndex,
                             ignoreIndex, arguments) &&
         checkLoss(context, kernel, names.loss, reduction, loss, input->dtype,
                   shapeOf(*labels));
}

/// Writes the loss from log-probabilities `logProb` (the checks passed).
lethe_rt_status computeLoss(lethe_rt_context *context, const char *kernel,
                            const ClassLoss &arguments,
                            const lethe_rt_tensor &logProb,
                            lethe_rt_reduction reduction,
                            const lethe_rt_tensor &loss) {
  return launchForFloat(logProb.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (reduction == LETHE_RT_REDUCTION_NONE)
      return launchElementwise(context, kernel, "classLossKernel",
                               arguments.labelCount(), classLossKernel<T>,
                               logProb.data, arguments, loss.data);
    return launchSum(
        context, kernel, arguments.labelCount(),
        ClassLosses<T>{logProb.data, arguments},
        StoreClassLoss<T>{loss.data, reduction == LETHE_RT_REDUCTION_MEAN});
  });
}

/// Writes the gradient `out` of a class-indexed loss (nll when `nll`, else
/// softmax cross entropy from `logProb`, which nll does not read), the
/// checks passed.
lethe_rt_status computeLossGrad(lethe_rt_context *context, const char *kernel,
                                bool nll, const ClassLoss &arguments,
                                const lethe_rt_tensor &dloss,
                                const lethe_rt_tensor &logProb,
                                lethe_rt_reduction reduction,
                                const lethe_rt_tensor &out) {
  // The weights' sum, from one kernel to the next on the compute stream.
  double *weightTotal = reinterpret_cast<double *>(context->deviceStatus);
  if (reduction == LETHE_RT_REDUCTION_MEAN &&
      !launchSum(context, kernel, arguments.labelCount(),
                 CountedWeights{arguments}, StoreWeightTotal{weightTotal}))
    return LETHE_RT_ERROR;
  int64_t count = numElements(out);
  return launchForFloat(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    return launchElementwise(
        context, kernel, "classLossGradKernel", count,
        nll ? classLossGradKernel<T, true> : classLossGradKernel<T, false>,
        dloss.data, logProb.data, arguments, reduction,
        static_cast<const double *>(weightTotal), out.data);
  });
}

} // namespace

extern "C" lethe_rt_status lethe_rt_mse(lethe_rt_context *context,
                                        const lethe_rt_tensor *a,
                                        const lethe_rt_tensor *b,
                                        lethe_rt_reduction reduction,
                                        const lethe_rt_tensor *loss) {
  const char *kernel = "lethe_rt_mse";
  if (!context || !checkDevice(context, kernel) ||
      !checkFloatTensor(context, kernel, "a", a) ||
      !checkDtype(context, kernel, "b", b, a->dtype) ||
      !checkSameShape(context, kernel, "a", *a, "b", *b) ||
      !checkLoss(context, kernel, "loss", reduction, loss, a->dtype,
                 shapeOf(*a)))
    return LETHE_RT_ERROR;
  int64_t count = numElements(*a);
  return launchForFloat(a->dtype, [&](auto tag) {
    using T = decltype(tag);
    if (reduction == LETHE_RT_REDUCTION_NONE)
      return launchElementwise(context, kernel, "squaredErrorKernel", count,
                               squaredErrorKernel<T>, a->data, b->data,
                               loss->data, count);
    // Written even over no elements (a mean is then NaN).
    return launchSum(
        context, kernel, count, SquaredErrors<T>{a->data, b->data},
        StoreSquaredError<T>{loss->data, count,
                             reduction == LETHE_RT_REDUCTION_MEAN});
  });
}

extern "C" lethe_rt_status lethe_rt_softmax_cross_entropy(
    lethe_rt_context *context, const lethe_rt_tensor *scores,
    const lethe_rt_tensor *labels, const lethe_rt_tensor *weights,
    lethe_rt_reduction reduction, int has_ignore_index, int64_t ignore_index,
    const lethe_rt_tensor *loss, const lethe_rt_tensor *log_prob) {
  const char *kernel = "lethe_rt_softmax_cross_entropy";
  ClassLoss arguments;
  if (!checkClassLoss(context, kernel, {"scores", "labels", "weights", "loss"},
                      scores, labels, weights, has_ignore_index, ignore_index,
                      reduction, loss, arguments) ||
      !checkTensor(context, kernel, "log_prob", log_prob) ||
      !report(context, kernel,
              logProbError(*scores, *labels, weights, *log_prob)))
    return LETHE_RT_ERROR;
  if (lethe_rt_softmax(context, scores, 1, 1, log_prob) != LETHE_RT_OK)
    return LETHE_RT_ERROR;
  return computeLoss(context, kernel, arguments, *log_prob, reduction, *loss);
}

extern "C" lethe_rt_status
lethe_rt_nll(lethe_rt_context *context, const lethe_rt_tensor *input,
             const lethe_rt_tensor *target, const lethe_rt_tensor *weight,
             lethe_rt_reduction reduction, int has_ignore_index,
             int64_t ignore_index, const lethe_rt_tensor *loss) {
  const char *kernel = "lethe_rt_nll";
  ClassLoss arguments;
  if (!checkClassLoss(context, kernel, {"input", "target", "weight", "loss"},
                      input, target, weight, has_ignore_index, ignore_index,
                      reduction, loss, arguments))
    return LETHE_RT_ERROR;
  return computeLoss(context, kernel, arguments, *input, reduction, *loss);
}

extern "C" lethe_rt_status lethe_rt_softmax_cross_entropy_grad(
    lethe_rt_context *context, const lethe_rt_tensor *dloss,
    const lethe_rt_tensor *log_prob, const lethe_rt_tensor *labels,
    const lethe_rt_tensor *weights, lethe_rt_reduction reduction,
    int has_ignore_index, int64_t ignore_index,
    const lethe_rt_tensor *dscores) {
  const char *kernel = "lethe_rt_softmax_cross_entropy_grad";
  ClassLoss arguments;
  if (!checkClassLoss(context, kernel,
                      {"log_prob", "labels", "weights", "dloss"}, log_prob,
                      labels, weights, has_ignore_index, ignore_index,
                      reduction, dloss, arguments) ||
      !checkTensor(context, kernel, "dscores", dscores) ||
      !report(context, kernel,
              dscoresError(*log_prob, *dloss, *labels, weights, *dscores)))
    return LETHE_RT_ERROR;
  return computeLossGrad(context, kernel, /*nll=*/false, arguments, *dloss,
                         *log_prob, reduction, *dscores);
}

extern "C" lethe_rt_status
lethe_rt_nll_grad(lethe_rt_context *context, const lethe_rt_tensor *dloss,
                  const lethe_rt_tensor *target, const lethe_rt_tensor *weight,
                  lethe_rt_reduction reduction, int has_ignore_index,
                  int64_t ignore_index, const lethe_rt_tensor *dinput) {
  const char *kernel = "lethe_rt_nll_grad";
  ClassLoss arguments;
  if (!checkClassLoss(context, kernel, {"dinput", "target", "weight", "dloss"},
                      dinput, target, weight, has_ignore_index, ignore_index,
                      reduction, dloss, arguments) ||
      !report(context, kernel, dinputError(*dinput, *dloss, *target, weight)))
    return LETHE_RT_ERROR;
  return computeLossGrad(context, kernel, /*nll=*/true, arguments, *dloss,
                         *dinput, reduction, *dinput);
}
