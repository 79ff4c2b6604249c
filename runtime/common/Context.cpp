//===- Context.cpp - The context-level calls of every backend -------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "common/Context.h"

#include "common/Checks.h"

#include <algorithm>
#include <cstdarg>

using namespace lethe::rt;

extern "C" const char *lethe_rt_last_error(const lethe_rt_context *context) {
  if (!context)
    return "no runtime context";
  // Reading the message does not change the context.
  return getContextBase(const_cast<lethe_rt_context &>(*context))
      .lastError.c_str();
}

extern "C" lethe_rt_status lethe_rt_set_op_hook(lethe_rt_context *context,
                                                lethe_rt_op_hook hook,
                                                void *user_data) {
  if (!context)
    return LETHE_RT_ERROR;
  ContextBase &base = getContextBase(*context);
  base.opHook = hook;
  base.opHookData = user_data;
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_op_begin(lethe_rt_context *context,
                                             int32_t op_index) {
  if (!context)
    return LETHE_RT_ERROR;
  ContextBase &base = getContextBase(*context);
  if (base.opHook) {
    if (base.beforeOpHook)
      base.beforeOpHook(context);
    base.opHook(base.opHookData, op_index);
  }
  // The hook has read what the previous op wanted; this op starts afresh.
  base.workspaceWanted = 0;
  return LETHE_RT_OK;
}

extern "C" uint64_t
lethe_rt_op_workspace_wanted(const lethe_rt_context *context) {
  if (!context)
    return 0;
  return getContextBase(const_cast<lethe_rt_context &>(*context))
      .workspaceWanted;
}

void lethe::rt::noteWorkspaceWanted(lethe_rt_context *context, uint64_t bytes) {
  if (!context)
    return;
  uint64_t &wanted = getContextBase(*context).workspaceWanted;
  wanted = std::max(wanted, bytes);
}

lethe_rt_status lethe::rt::fail(lethe_rt_context *context, const char *call,
                                const char *format, ...) {
  va_list arguments;
  va_start(arguments, format);
  if (context)
    recordError(getContextBase(*context).lastError, call, format, arguments);
  va_end(arguments);
  return LETHE_RT_ERROR;
}
