//===- Context.cpp - Context, errors and checks of the CUDA backend -------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The context's device resources (three streams, a cuBLAS handle, a status
// word) and their teardown, error reporting, and the host-side argument
// checks every kernel starts with.
//
//===----------------------------------------------------------------------===//

#include "CudaRuntime.h"

#include <cstdarg>
#include <cstdio>
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
  context.events.clear();
  if (context.cublas)
    cublasDestroy(context.cublas);
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

extern "C" const char *lethe_rt_last_error(const lethe_rt_context *context) {
  return context ? context->lastError.c_str() : "no runtime context";
}

extern "C" lethe_rt_status lethe_rt_set_op_hook(lethe_rt_context *context,
                                                lethe_rt_op_hook hook,
                                                void *user_data) {
  if (!context)
    return LETHE_RT_ERROR;
  context->opHook = hook;
  context->opHookData = user_data;
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_op_begin(lethe_rt_context *context,
                                             int32_t op_index) {
  if (!context)
    return LETHE_RT_ERROR;
  if (context->opHook)
    context->opHook(context->opHookData, op_index);
  return LETHE_RT_OK;
}

lethe_rt_status lethe::rt::fail(lethe_rt_context *context, const char *call,
                                const char *format, ...) {
  char message[512];
  va_list arguments;
  va_start(arguments, format);
  std::vsnprintf(message, sizeof(message), format, arguments);
  va_end(arguments);
  if (context)
    context->lastError = std::string(call) + ": " + message;
  return LETHE_RT_ERROR;
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

const char *lethe::rt::dtypeName(lethe_rt_dtype dtype) {
  switch (dtype) {
  case LETHE_RT_F16:
    return "f16";
  case LETHE_RT_BF16:
    return "bf16";
  case LETHE_RT_F32:
    return "f32";
  case LETHE_RT_F64:
    return "f64";
  case LETHE_RT_I1:
    return "i1";
  case LETHE_RT_I8:
    return "i8";
  case LETHE_RT_I32:
    return "i32";
  case LETHE_RT_I64:
    return "i64";
  case LETHE_RT_I16:
    return "i16";
  case LETHE_RT_U8:
    return "ui8";
  case LETHE_RT_U16:
    return "ui16";
  case LETHE_RT_U32:
    return "ui32";
  case LETHE_RT_U64:
    return "ui64";
  }
  return "<invalid dtype>";
}

std::string lethe::rt::shapeText(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += 'x';
    text += std::to_string(shape[i]);
  }
  return text;
}

std::string lethe::rt::shapeString(const lethe_rt_tensor &tensor) {
  return shapeText(shapeOf(tensor));
}

extern "C" size_t lethe_rt_dtype_size(lethe_rt_dtype dtype) {
  switch (dtype) {
  case LETHE_RT_F16:
  case LETHE_RT_BF16:
  case LETHE_RT_I16:
  case LETHE_RT_U16:
    return 2;
  case LETHE_RT_F32:
  case LETHE_RT_I32:
  case LETHE_RT_U32:
    return 4;
  case LETHE_RT_F64:
  case LETHE_RT_I64:
  case LETHE_RT_U64:
    return 8;
  case LETHE_RT_I1:
  case LETHE_RT_I8:
  case LETHE_RT_U8:
    return 1;
  }
  return 0;
}

extern "C" int64_t lethe_rt_num_elements(const lethe_rt_tensor *tensor) {
  return tensor ? numElements(*tensor) : 0;
}

//===----------------------------------------------------------------------===//
// Argument checks
//===----------------------------------------------------------------------===//

bool lethe::rt::checkTensor(lethe_rt_context *context, const char *kernel,
                            const char *what, const lethe_rt_tensor *tensor) {
  if (!tensor) {
    fail(context, kernel, "%s is missing (null descriptor)", what);
    return false;
  }
  if (lethe_rt_dtype_size(tensor->dtype) == 0) {
    fail(context, kernel, "%s has an invalid dtype %d", what,
         static_cast<int>(tensor->dtype));
    return false;
  }
  if (tensor->rank < 0 || (tensor->rank > 0 && !tensor->shape)) {
    fail(context, kernel, "%s has an invalid rank %d or no shape", what,
         tensor->rank);
    return false;
  }
  for (int32_t i = 0; i < tensor->rank; ++i) {
    if (tensor->shape[i] < 0) {
      fail(context, kernel, "%s has a negative dimension %lld", what,
           static_cast<long long>(tensor->shape[i]));
      return false;
    }
  }
  int64_t count = numElements(*tensor);
  if (count == 0)
    return true;
  if (!tensor->data) {
    fail(context, kernel, "%s (%s) has no data", what,
         shapeString(*tensor).c_str());
    return false;
  }
  // Compared as integers: the data need not point into any allocation.
  uintptr_t begin = reinterpret_cast<uintptr_t>(tensor->data);
  uintptr_t arena = reinterpret_cast<uintptr_t>(context->arena);
  uint64_t bytes =
      static_cast<uint64_t>(count) * lethe_rt_dtype_size(tensor->dtype);
  if (!context->memoryInitialized || begin < arena ||
      begin - arena > context->arenaBytes ||
      bytes > context->arenaBytes - (begin - arena)) {
    fail(context, kernel,
         "%s (%s, %llu bytes) does not lie in the arena (on the cuda "
         "backend, tensors live in the device arena of lethe_rt_memory_init)",
         what, shapeString(*tensor).c_str(),
         static_cast<unsigned long long>(bytes));
    return false;
  }
  return true;
}

bool lethe::rt::checkFloatTensor(lethe_rt_context *context, const char *kernel,
                                 const char *what,
                                 const lethe_rt_tensor *tensor) {
  if (!checkTensor(context, kernel, what, tensor))
    return false;
  if (!isFloat(tensor->dtype)) {
    fail(context, kernel, "%s must be f16, bf16, f32 or f64, got %s", what,
         dtypeName(tensor->dtype));
    return false;
  }
  return true;
}

bool lethe::rt::checkDtype(lethe_rt_context *context, const char *kernel,
                           const char *what, const lethe_rt_tensor *tensor,
                           lethe_rt_dtype dtype) {
  if (!checkTensor(context, kernel, what, tensor))
    return false;
  if (tensor->dtype != dtype) {
    fail(context, kernel, "%s must be %s, got %s", what, dtypeName(dtype),
         dtypeName(tensor->dtype));
    return false;
  }
  return true;
}

bool lethe::rt::checkSameShape(lethe_rt_context *context, const char *kernel,
                               const char *whatA, const lethe_rt_tensor &a,
                               const char *whatB, const lethe_rt_tensor &b) {
  if (shapeOf(a) == shapeOf(b))
    return true;
  fail(context, kernel, "%s (%s) and %s (%s) must have the same shape", whatA,
       shapeString(a).c_str(), whatB, shapeString(b).c_str());
  return false;
}

bool lethe::rt::checkRank(lethe_rt_context *context, const char *kernel,
                          const char *what, const lethe_rt_tensor &tensor,
                          int32_t rank) {
  if (tensor.rank == rank)
    return true;
  fail(context, kernel, "%s must have rank %d, got %s", what, rank,
       shapeString(tensor).c_str());
  return false;
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

std::vector<int64_t> lethe::rt::stridesOf(const lethe_rt_tensor &tensor) {
  std::vector<int64_t> strides(tensor.rank);
  int64_t stride = 1;
  for (int32_t i = tensor.rank; i-- > 0;) {
    strides[i] = stride;
    stride *= tensor.shape[i];
  }
  return strides;
}

bool lethe::rt::broadcastStrides(const lethe_rt_tensor &input,
                                 const lethe_rt_tensor &output,
                                 std::vector<int64_t> &strides) {
  if (input.rank > output.rank)
    return false;
  std::vector<int64_t> inputStrides = stridesOf(input);
  strides.assign(output.rank, 0);
  int32_t offset = output.rank - input.rank;
  for (int32_t i = 0; i < input.rank; ++i) {
    int64_t dim = input.shape[i], outDim = output.shape[offset + i];
    if (dim == outDim)
      strides[offset + i] = dim == 1 ? 0 : inputStrides[i];
    else if (dim != 1)
      return false;
  }
  return true;
}
