//===- Softmax.cu - Softmax and its gradient on the CUDA backend ----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_softmax (and log-softmax) and lethe_rt_softmax_grad on the compute
// stream, with the CPU backend's semantics (runtime/cpu/Normalization.cpp):
// the row maximum in the compute type (NaN-propagating), e = exp(x - max) in
// the compute type, the sum of the e in f64, then e / sum (softmax) or x -
// max - log(sum) (log-softmax) in f64, rounded once on store; the gradient
// sums dy y (softmax) or dy (log-softmax) along the row in f64 and writes
// y (dy - sum) or dy - exp(y) sum in f64.
//
// One block per row along the axis (a row is `size` elements `inner` apart);
// its threads reduce with blockReduce. The f64 sums add in a tree rather than
// the CPU backend's sequential order, and exp and log are CUDA's: results
// agree with the CPU's within rounding, not bit for bit, but the same call on
// the same GPU gives the same bits.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"

#include <limits>

using namespace lethe::rt;

namespace {

/// NaN-propagating maximum, as the CPU backend's.
template <typename C> __device__ C maxOf(C best, C value) {
  return value > best || value != value ? value : best;
}

/// The rows of a tensor along an axis: `outer` blocks of `size` x `inner`
/// elements, row r = (o, j) starting at o * size * inner + j, stride inner.
struct Rows {
  int64_t outer = 1, size = 1, inner = 1;

  __host__ __device__ int64_t count() const { return outer * inner; }
  __device__ int64_t start(int64_t row) const {
    return row / inner * size * inner + row % inner;
  }
};

/// Softmax (log-softmax when `log`) of each row of x into out.
template <typename T>
__global__ void softmaxKernel(const void *x, void *out, Rows rows, bool log) {
  using C = ComputeType<T>;
  __shared__ double scratch[32];
  auto maximum = [] __device__(double a, double b) { return maxOf(a, b); };
  auto plus = [] __device__(double a, double b) { return a + b; };
  for (int64_t row = blockIdx.x; row < rows.count(); row += gridDim.x) {
    int64_t base = rows.start(row);
    C localMax = -std::numeric_limits<C>::infinity();
    for (int64_t k = threadIdx.x; k < rows.size; k += blockDim.x)
      localMax = maxOf(localMax, load<T>(x, base + k * rows.inner));
    // Exact in double, so the maximum is the compute type's.
    C rowMax = static_cast<C>(
        blockReduce(static_cast<double>(localMax), maximum, scratch));
    double localSum = 0;
    for (int64_t k = threadIdx.x; k < rows.size; k += blockDim.x)
      localSum += mathExp(load<T>(x, base + k * rows.inner) - rowMax);
    double sum = blockReduce(localSum, plus, scratch);
    double logSum = log ? mathLog(sum) : 0;
    for (int64_t k = threadIdx.x; k < rows.size; k += blockDim.x) {
      int64_t at = base + k * rows.inner;
      C value = load<T>(x, at);
      if (log)
        store<T>(out, at,
                 static_cast<double>(value) - static_cast<double>(rowMax) -
                     logSum);
      else
        store<T>(out, at, static_cast<double>(mathExp(value - rowMax)) / sum);
    }
  }
}

/// The gradient of softmax (log-softmax when `log`) along each row, in f64.
template <typename T>
__global__ void softmaxGradKernel(const void *dy, const void *y, void *dx,
                                  Rows rows, bool log) {
  __shared__ double scratch[32];
  auto plus = [] __device__(double a, double b) { return a + b; };
  for (int64_t row = blockIdx.x; row < rows.count(); row += gridDim.x) {
    int64_t base = rows.start(row);
    double localSum = 0;
    for (int64_t k = threadIdx.x; k < rows.size; k += blockDim.x) {
      int64_t at = base + k * rows.inner;
      double g = load<T>(dy, at);
      localSum += log ? g : g * static_cast<double>(load<T>(y, at));
    }
    double sum = blockReduce(localSum, plus, scratch);
    for (int64_t k = threadIdx.x; k < rows.size; k += blockDim.x) {
      int64_t at = base + k * rows.inner;
      double g = load<T>(dy, at), v = load<T>(y, at);
      store<T>(dx, at, log ? g - mathExp(v) * sum : v * (g - sum));
    }
  }
}

/// The rows of `tensor` along `axis`, which must be in range; records an
/// error naming `kernel` and `what` (the tensor) otherwise.
bool rowsAlong(lethe_rt_context *context, const char *kernel, const char *what,
               const lethe_rt_tensor &tensor, int64_t axis, Rows &rows) {
  if (!report(context, kernel, axisRangeError(what, tensor, axis)))
    return false;
  rows.size = tensor.shape[axis];
  for (int64_t dim = 0; dim < axis; ++dim)
    rows.outer *= tensor.shape[dim];
  for (int64_t dim = axis + 1; dim < tensor.rank; ++dim)
    rows.inner *= tensor.shape[dim];
  return true;
}

} // namespace

extern "C" lethe_rt_status lethe_rt_softmax(lethe_rt_context *context,
                                            const lethe_rt_tensor *x,
                                            int64_t axis, int log,
                                            const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_softmax";
  Rows rows;
  if (!context || !checkDevice(context, kernel) ||
      !checkFloatTensor(context, kernel, "x", x) ||
      !checkDtype(context, kernel, "out", out, x->dtype) ||
      !checkSameShape(context, kernel, "x", *x, "out", *out) ||
      !rowsAlong(context, kernel, "x", *x, axis, rows))
    return LETHE_RT_ERROR;
  if (numElements(*x) == 0)
    return LETHE_RT_OK;
  return launchForFloat(x->dtype, [&](auto tag) {
    return launchRows(context, kernel, "softmaxKernel", rows.count(),
                      softmaxKernel<decltype(tag)>, x->data, out->data, rows,
                      log != 0);
  });
}

extern "C" lethe_rt_status lethe_rt_softmax_grad(lethe_rt_context *context,
                                                 const lethe_rt_tensor *dy,
                                                 const lethe_rt_tensor *y,
                                                 int64_t axis, int log,
                                                 const lethe_rt_tensor *dx) {
  const char *kernel = "lethe_rt_softmax_grad";
  Rows rows;
  if (!context || !checkDevice(context, kernel) ||
      !checkFloatTensor(context, kernel, "y", y) ||
      !checkDtype(context, kernel, "dy", dy, y->dtype) ||
      !checkDtype(context, kernel, "dx", dx, y->dtype) ||
      !checkSameShape(context, kernel, "y", *y, "dy", *dy) ||
      !checkSameShape(context, kernel, "y", *y, "dx", *dx) ||
      !rowsAlong(context, kernel, "y", *y, axis, rows))
    return LETHE_RT_ERROR;
  if (numElements(*y) == 0)
    return LETHE_RT_OK;
  return launchForFloat(y->dtype, [&](auto tag) {
    return launchRows(context, kernel, "softmaxGradKernel", rows.count(),
                      softmaxGradKernel<decltype(tag)>, dy->data, y->data,
                      dx->data, rows, log != 0);
  });
}
