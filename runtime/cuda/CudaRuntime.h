//===- CudaRuntime.h - Shared internals of the CUDA backend -----*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// What every entry point of the CUDA backend shares: the context (its device
// memory, streams, events, cuBLAS handle and cuDNN handle), error reporting
// (one line per failure, naming the entry point and, for a CUDA failure, the
// CUDA call and its message) and the host-side argument checks. Not part of the
// ABI (runtime/include/lethe_rt.h). Host code only: device code includes
// DeviceElements.cuh.
//
// The argument checks and their messages are those of runtime/common
// (Checks.h), which the CPU backend gives too, so that a program fails the
// same way on either backend.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_CUDA_CUDARUNTIME_H
#define LETHE_RUNTIME_CUDA_CUDARUNTIME_H

#include "common/Checks.h"
#include "common/Context.h"
#include "common/Tensor.h"
#include "lethe_rt.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

/// An event of the ABI: a CUDA event (timing disabled) and whether it was
/// ever recorded (a wait on an event never recorded is an error on every
/// Lethe backend; CUDA would treat it as complete).
struct lethe_rt_event {
  cudaEvent_t event = nullptr;
  bool recorded = false;
};

/// cuDNN's handle type (cudnnHandle_t is a pointer to it), declared here so
/// that only the files that call cuDNN include its headers.
struct cudnnContext;

namespace lethe::rt {
/// A convolution algorithm chosen by cuDNN's heuristics: its number (of the
/// cuDNN enum of its direction), the math type it runs with and the
/// workspace it needs.
struct ConvolutionAlgorithm {
  int algorithm = 0, mathType = 0;
  size_t workspaceBytes = 0;
  /// cuDNN offers no deterministic algorithm that fits the workspace: the
  /// call runs in the direct kernels.
  bool direct = false;
  /// For a direct call given a workspace: the least workspace of a
  /// deterministic cuDNN algorithm, which the call asks for
  /// (noteWorkspaceWanted); 0 when cuDNN offers none.
  uint64_t wantedWorkspaceBytes = 0;
};
} // namespace lethe::rt

struct lethe_rt_context : lethe::rt::ContextBase {
  /// Why the context has no usable device ("" when it has one): set by
  /// lethe_rt_context_create when creating the streams or the cuBLAS handle
  /// failed (no GPU, no driver), and reported by every call that needs them.
  std::string deviceError;

  /// The device that was current when the context was created. Calls do not
  /// make it current again: the caller keeps it current (one device per
  /// process for now).
  int device = 0;
  /// The three streams of the ABI, non-blocking (the legacy default stream,
  /// which other code in the process may use, orders nothing here).
  cudaStream_t compute = nullptr, deviceToHost = nullptr,
               hostToDevice = nullptr;
  /// cuBLAS, bound to `compute`.
  cublasHandle_t cublas = nullptr;
  /// cuDNN, bound to `compute`: created by the first convolution (its
  /// kernels load then, and it holds a few MB of device memory besides),
  /// destroyed with the context. Null until then.
  cudnnContext *cudnn = nullptr;
  /// The algorithm chosen for each convolution seen so far, by a key of its
  /// direction, dtype, dims, attributes and workspace budget: the heuristics
  /// run once per shape, and every call of one shape runs the same algorithm.
  std::unordered_map<std::string, lethe::rt::ConvolutionAlgorithm>
      convolutionAlgorithms;
  /// Eight bytes of device memory through which a kernel reports a
  /// data-dependent error (an integer division by zero, a label out of
  /// range) to the host, or passes a scalar to the next kernel on the
  /// compute stream (the weights' sum of a mean loss gradient).
  uint64_t *deviceStatus = nullptr;

  /// Whether lethe_rt_memory_init has run (successfully).
  bool memoryInitialized = false;
  /// The arena (one cudaMalloc) and the host pool (one pinned
  /// cudaHostAlloc), with the sizes asked for.
  uint8_t *arena = nullptr, *hostPool = nullptr;
  uint64_t arenaBytes = 0, hostPoolBytes = 0;
  /// The live events of this context, which owns them.
  std::unordered_map<const lethe_rt_event *, std::unique_ptr<lethe_rt_event>>
      events;
  /// Copies issued so far (lethe_rt_get_memory_stats).
  uint64_t offloadedBytes = 0, prefetchedBytes = 0, offloads = 0,
           prefetches = 0;
};

namespace lethe::rt {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// Returns true when `status` is cudaSuccess; otherwise records
/// "<call>: <cudaFunction> failed: <cudaGetErrorString> (<error name>)" and
/// returns false.
bool checkCuda(lethe_rt_context *context, const char *call,
               const char *cudaFunction, cudaError_t status);

/// The same for a cuBLAS status.
bool checkCublas(lethe_rt_context *context, const char *call,
                 const char *cublasFunction, cublasStatus_t status);

/// Checks that a kernel just launched on the compute stream was launched
/// (cudaGetLastError); errors while it runs surface at the next
/// synchronizing call.
bool checkLaunch(lethe_rt_context *context, const char *call,
                 const char *kernelName);

/// The context has a device (streams and cuBLAS); records an error naming
/// `call` otherwise.
bool checkDevice(lethe_rt_context *context, const char *call);

/// Refuses an output (`what`) that overlaps one of `inputs`: the kernels of
/// `operation` (e.g. "pool") read the inputs while they write the output.
bool checkNoOverlap(lethe_rt_context *context, const char *call,
                    const char *what, const lethe_rt_tensor &output,
                    std::initializer_list<NamedTensor> inputs,
                    const char *operation);

/// tensorError's checks, and (unless the tensor has no elements) data that
/// lies within the context's arena: kernels read and write device memory, and
/// a host pointer would fault on the device and poison the CUDA context
/// instead of failing the call. The message, or "". (checkTensor, declared in
/// common/Checks.h, records it.)
std::string arenaTensorError(lethe_rt_context *context, const char *what,
                             const lethe_rt_tensor *tensor);

} // namespace lethe::rt

#endif // LETHE_RUNTIME_CUDA_CUDARUNTIME_H
