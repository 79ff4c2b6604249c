//===- Context.cpp - Context, errors and checks of the CPU backend --------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "CpuRuntime.h"

#include <cstdarg>
#include <new>

using namespace lethe::rt;

//===----------------------------------------------------------------------===//
// Context and errors
//===----------------------------------------------------------------------===//

extern "C" lethe_rt_context *lethe_rt_context_create(void) {
  return new (std::nothrow) lethe_rt_context();
}

extern "C" void lethe_rt_context_destroy(lethe_rt_context *context) {
  if (!context)
    return;
  // Like cudaStreamDestroy, destruction lets the streams' work finish.
  finishMemory(*context);
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

lethe_rt_status lethe::rt::fail(lethe_rt_context *context, const char *kernel,
                                const char *format, ...) {
  va_list arguments;
  va_start(arguments, format);
  if (context)
    recordError(context->lastError, kernel, format, arguments);
  va_end(arguments);
  return LETHE_RT_ERROR;
}

//===----------------------------------------------------------------------===//
// Argument checks
//===----------------------------------------------------------------------===//

bool lethe::rt::checkTensor(lethe_rt_context *context, const char *kernel,
                            const char *what, const lethe_rt_tensor *tensor) {
  return report(context, kernel, tensorError(what, tensor));
}
