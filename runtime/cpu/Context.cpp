//===- Context.cpp - Context, errors and checks of the CPU backend --------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "CpuRuntime.h"

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

lethe::rt::ContextBase &lethe::rt::getContextBase(lethe_rt_context &context) {
  return context;
}

//===----------------------------------------------------------------------===//
// Argument checks
//===----------------------------------------------------------------------===//

bool lethe::rt::checkTensor(lethe_rt_context *context, const char *kernel,
                            const char *what, const lethe_rt_tensor *tensor) {
  return report(context, kernel, tensorError(what, tensor));
}
