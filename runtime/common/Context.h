//===- Context.h - What every backend's context holds ----------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The part of a runtime context that the ABI's context-level calls read
// (lethe_rt_last_error, lethe_rt_set_op_hook, lethe_rt_op_begin,
// lethe_rt_op_workspace_wanted) and that lethe::rt::fail and
// lethe::rt::noteWorkspaceWanted write. Each backend's `struct lethe_rt_context` derives
// from ContextBase and defines getContextBase; runtime/common defines those
// calls once, for both backends.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_COMMON_CONTEXT_H
#define LETHE_RUNTIME_COMMON_CONTEXT_H

#include "lethe_rt.h"

#include <string>

namespace lethe::rt {

struct ContextBase {
  /// The message of the last failed call.
  std::string lastError;
  /// What lethe_rt_op_begin calls (lethe_rt_set_op_hook).
  lethe_rt_op_hook opHook = nullptr;
  void *opHookData = nullptr;
  /// What lethe_rt_op_begin does before it calls the hook, if anything: the
  /// CUDA backend waits for its compute stream, so that the time between
  /// two hooks is what the previous op took on the device, not its launch.
  void (*beforeOpHook)(lethe_rt_context *context) = nullptr;
  /// The most workspace bytes a call since the last lethe_rt_op_begin asked
  /// for beyond what it was given (noteWorkspaceWanted).
  uint64_t workspaceWanted = 0;
};

/// The common part of `context` (defined by the backend, whose context type
/// is complete there).
ContextBase &getContextBase(lethe_rt_context &context);

/// Records that a call on `context` was given less workspace than `bytes`,
/// the least with which it would have run its fast way (lethe_rt.h,
/// lethe_rt_op_workspace_wanted): the CUDA backend's convolutions, which
/// run in cuDNN with that much and in direct kernels without it.
void noteWorkspaceWanted(lethe_rt_context *context, uint64_t bytes);

} // namespace lethe::rt

#endif // LETHE_RUNTIME_COMMON_CONTEXT_H
