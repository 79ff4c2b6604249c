//===- FaultInjection.cpp - Runtime calls that fail on request ------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The driver's reports of a runtime that fails between steps (an argument
// that cannot be written into the arena, a loss or result that cannot be
// read, an update that cannot be copied): lethe-driver-test-program is
// linked with --wrap for the entry points below, and kFailCallVariable
// (TestProgram.h) arms one call of one of them. The armed call goes to the
// runtime with an argument it refuses (a null pointer, an output of another
// dtype), so that the error the driver reports is the runtime's own.
//
//===----------------------------------------------------------------------===//

#include "TestProgram.h"

#include "lethe_rt.h"

#include <cstdlib>
#include <cstring>
#include <string>

using namespace lethe::driver::test;

extern "C" {
lethe_rt_status __real_lethe_rt_copy_to_arena(lethe_rt_context *context,
                                              uint64_t arena_offset,
                                              const void *source,
                                              uint64_t bytes);
lethe_rt_status __real_lethe_rt_copy_from_arena(lethe_rt_context *context,
                                                void *destination,
                                                uint64_t arena_offset,
                                                uint64_t bytes);
lethe_rt_status __real_lethe_rt_copy(lethe_rt_context *context,
                                     const lethe_rt_tensor *in,
                                     const lethe_rt_tensor *out);
}

namespace {

/// Whether this call of the entry point `name` is the one armed to fail
/// (counting its calls).
bool armed(const char *name) {
  static const char *spec = std::getenv(kFailCallVariable);
  if (!spec)
    return false;
  const char *colon = std::strchr(spec, ':');
  if (!colon || std::string(spec, colon) != name)
    return false;
  static long calls = 0;
  return ++calls == std::atol(colon + 1);
}

} // namespace

extern "C" lethe_rt_status
__wrap_lethe_rt_copy_to_arena(lethe_rt_context *context, uint64_t arena_offset,
                              const void *source, uint64_t bytes) {
  if (armed("copy_to_arena"))
    source = nullptr;
  return __real_lethe_rt_copy_to_arena(context, arena_offset, source, bytes);
}

extern "C" lethe_rt_status
__wrap_lethe_rt_copy_from_arena(lethe_rt_context *context, void *destination,
                                uint64_t arena_offset, uint64_t bytes) {
  if (armed("copy_from_arena"))
    destination = nullptr;
  return __real_lethe_rt_copy_from_arena(context, destination, arena_offset,
                                         bytes);
}

extern "C" lethe_rt_status __wrap_lethe_rt_copy(lethe_rt_context *context,
                                                const lethe_rt_tensor *in,
                                                const lethe_rt_tensor *out) {
  lethe_rt_tensor other = *out;
  if (armed("copy")) {
    other.dtype = out->dtype == LETHE_RT_F64 ? LETHE_RT_F32 : LETHE_RT_F64;
    out = &other;
  }
  return __real_lethe_rt_copy(context, in, out);
}
