//===- TestProgram.h - A hand-written compiled step for the driver tests --===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// TestProgram.cpp stands in for what lethec compiles (lethe_program.h): a
// linear model y ~ x w trained with momentum on a mean squared error, written
// by hand against the runtime's C ABI, with an offload and a prefetch of one
// gradient so that the manifest has every kind of op. The tests compute the
// same step directly with computeTestStep and compare bits.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_UNITTESTS_DRIVER_TESTPROGRAM_H
#define LETHE_UNITTESTS_DRIVER_TESTPROGRAM_H

#include "lethe_rt.h"

#include <cstdint>

namespace lethe::driver::test {

/// The model's sizes: x is [kBatch, kInputs], y [kBatch, kOutputs], w
/// [kInputs, kOutputs]; the label argument c is i32 [kBatch] below
/// kClasses (drawn, not used).
inline constexpr int64_t kBatch = 4, kInputs = 3, kOutputs = 2, kClasses = 3;

/// Momentum's coefficient.
inline constexpr double kMomentum = 0.9;

/// One step computed directly on host buffers, the same kernels in the
/// same order as the program's: returns the loss and updates w and v in
/// place. The step is `step` (0 at the first).
float computeTestStep(const float *x, const float *y, float *w, float *v,
                      float lr, int64_t step);

/// The environment variable that makes the program's step fail (with a
/// runtime error) when the step counter equals its value.
inline constexpr const char *kFailAtStepVariable =
    "LETHE_TEST_PROGRAM_FAIL_AT_STEP";

/// The environment variable that makes the program's first op (the matmul)
/// ask for its value in workspace bytes, and its last op (the update) for
/// half of it, as a backend's kernel given too little workspace does
/// (lethe_rt_op_workspace_wanted).
inline constexpr const char *kWantWorkspaceVariable =
    "LETHE_TEST_PROGRAM_WANT_WORKSPACE";

/// The environment variable that makes a call of the runtime fail, as
/// NAME:N: the N-th call (from 1) of lethe_rt_NAME, one of copy_to_arena,
/// copy_from_arena and copy. The program is linked with those entry points
/// wrapped (FaultInjection.cpp): the armed call reaches the runtime with an
/// argument it refuses, so that the driver reports the runtime's own error.
inline constexpr const char *kFailCallVariable = "LETHE_TEST_PROGRAM_FAIL_CALL";

} // namespace lethe::driver::test

#endif // LETHE_UNITTESTS_DRIVER_TESTPROGRAM_H
