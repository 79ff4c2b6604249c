//===- Context.cpp - Context, errors and checks of the CUDA backend -------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The context's device resources (three streams, a cuBLAS handle, a status
// word, and the cuDNN handle of the first convolution) and their teardown,
// error reporting, and the host-side argument checks every kernel starts with.
//
//===----------------------------------------------------------------------===//

#include "CudaRuntime.h"
#include "common/Events.h"

#include <cudnn_graph.h>

#include <new>

using namespace lethe::rt;

namespace {

/// Creates the context's streams, cuBLAS handle and status word; on failure
/// returns false with context.lastError set (and whatever was created left
/// for destroyDeviceResources).
bool createDeviceResources(lethe_rt_context &context) {
  const char *call = "lethe_rt_context_create";
  if (!checkCuda(&context, call, "cudaGetDevice",
                 cudaGetDevice(&context.device)))
    return false;
  for (cudaStream_t *stream :
       {&context.compute, &context.deviceToHost, &context.hostToDevice})
    if (!checkCuda(&context, call, "cudaStreamCreateWithFlags",
                   cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking)))
      return false;
  if (!checkCublas(&context, call, "cublasCreate",
                   cublasCreate(&context.cublas)) ||
      !checkCublas(&context, call, "cublasSetStream",
                   cublasSetStream(context.cublas, context.compute)) ||
      // Full-precision f32 products: no TF32 (CUBLAS_DEFAULT_MATH keeps it
      // off unless asked), so f32 matches the CPU backend within rounding.
      !checkCublas(&context, call, "cublasSetMathMode",
                   cublasSetMathMode(context.cublas, CUBLAS_DEFAULT_MATH)))
    return false;
  void *status = nullptr;
  if (!checkCuda(&context, call, "cudaMalloc",
                 cudaMalloc(&status, sizeof(uint64_t))))
    return false;
  context.deviceStatus = static_cast<uint64_t *>(status);
  // With an op hook (the driver's --profile and --trace), each op is timed
  // on the device: the previous one has finished when the hook runs. A
  // failure here is the previous op's, and its next synchronizing call
  // reports it.
  context.beforeOpHook = [](lethe_rt_context *timed) {
    (void)cudaStreamSynchronize(timed->compute);
  };
  return true;
}

/// Lets the streams' work finish (as cudaStreamDestroy would), then frees
/// everything the context holds. Errors are ignored: there is no one left to
/// report them to.
void destroyDeviceResources(lethe_rt_context &context) {
  for (cudaStream_t stream :
       {context.compute, context.deviceToHost, context.hostToDevice})
    if (stream)
      cudaStreamSynchronize(stream);
  for (auto &entry : context.events)
    cudaEventDestroy(entry.second->event);
  // As the CPU backend: a destroyed context's events are no one's, so that
  // a later use says "destroyed" rather than "another context's".
  unregisterEvents(context.events);
  context.events.clear();
  if (context.cublas)
    cublasDestroy(context.cublas);
  if (context.cudnn)
    cudnnDestroy(context.cudnn);
  for (cudaStream_t stream :
       {context.compute, context.deviceToHost, context.hostToDevice})
    if (stream)
      cudaStreamDestroy(stream);
  cudaFree(context.deviceStatus);
  cudaFree(context.arena);
  cudaFreeHost(context.hostPool);
}

} // namespace

//===----------------------------------------------------------------------===//
// Context and errors
//===----------------------------------------------------------------------===//

extern "C" lethe_rt_context *lethe_rt_context_create(void) {
  lethe_rt_context *context = new (std::nothrow) lethe_rt_context();
  if (!context)
    return nullptr;
  // Without a device the context still exists (NULL means out of memory),
  // so that the caller can read why: every call that needs the device then
  // fails with this message.
  if (!createDeviceResources(*context))
    context->deviceError = context->lastError;
  return context;
}

extern "C" void lethe_rt_context_destroy(lethe_rt_context *context) {
  if (!context)
    return;
  destroyDeviceResources(*context);
  delete context;
}

lethe::rt::ContextBase &lethe::rt::getContextBase(lethe_rt_context &context) {
  return context;
}

bool lethe::rt::checkCuda(lethe_rt_context *context, const char *call,
                          const char *cudaFunction, cudaError_t status) {
  if (status == cudaSuccess)
    return true;
  fail(context, call, "%s failed: %s (%s)", cudaFunction,
       cudaGetErrorString(status), cudaGetErrorName(status));
  return false;
}

bool lethe::rt::checkCublas(lethe_rt_context *context, const char *call,
                            const char *cublasFunction, cublasStatus_t status) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return true;
  fail(context, call, "%s failed: %s (%s)", cublasFunction,
       cublasGetStatusString(status), cublasGetStatusName(status));
  return false;
}

bool lethe::rt::checkLaunch(lethe_rt_context *context, const char *call,
                            const char *kernelName) {
  cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess)
    return true;
  fail(context, call, "launching %s failed: %s (%s)", kernelName,
       cudaGetErrorString(status), cudaGetErrorName(status));
  return false;
}

bool lethe::rt::checkDevice(lethe_rt_context *context, const char *call) {
  if (context->deviceError.empty())
    return true;
  fail(context, call, "no usable CUDA device (%s)",
       context->deviceError.c_str());
  return false;
}

//===----------------------------------------------------------------------===//
// Argument checks
//===----------------------------------------------------------------------===//

bool lethe::rt::checkNoOverlap(lethe_rt_context *context, const char *call,
                               const char *what, const lethe_rt_tensor &output,
                               std::initializer_list<NamedTensor> inputs,
                               const char *operation) {
  for (const NamedTensor &input : inputs) {
    if (!overlaps(output, *input.second))
      continue;
    fail(context, call,
         "%s overlaps %s (the cuda backend does not %s in place)", what,
         input.first, operation);
    return false;
  }
  return true;
}

std::string lethe::rt::arenaTensorError(lethe_rt_context *context,
                                        const char *what,
                                        const lethe_rt_tensor *tensor) {
  std::string error = tensorError(what, tensor);
  if (!error.empty())
    return error;
  int64_t count = numElements(*tensor);
  if (count == 0)
    return "";
  // Compared as integers: the data need not point into any allocation.
  uintptr_t begin = reinterpret_cast<uintptr_t>(tensor->data);
  uintptr_t arena = reinterpret_cast<uintptr_t>(context->arena);
  uint64_t bytes =
      static_cast<uint64_t>(count) * lethe_rt_dtype_size(tensor->dtype);
  if (!context->memoryInitialized || begin < arena ||
      begin - arena > context->arenaBytes ||
      bytes > context->arenaBytes - (begin - arena))
    return formatMessage(
        "%s (%s, %llu bytes) does not lie in the arena (on the cuda "
        "backend, tensors live in the device arena of lethe_rt_memory_init)",
        what, shapeString(*tensor).c_str(),
        static_cast<unsigned long long>(bytes));
  return "";
}

bool lethe::rt::checkTensor(lethe_rt_context *context, const char *kernel,
                            const char *what, const lethe_rt_tensor *tensor) {
  return report(context, kernel, arenaTensorError(context, what, tensor));
}
