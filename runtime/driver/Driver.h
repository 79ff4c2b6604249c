//===- Driver.h - The training loop of a planned executable ---------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// A planned executable is the object lethec compiles (lethe_program.h: a
// manifest and lethe_program_step), this driver and a runtime backend. The
// driver owns the command line
//
//   NAME [--steps N] [--seed S] [--data DIR] [--weights FILE]
//        [--random-weights S] [--save-weights OUT] [--profile OUT.json]
//        [--trace OUT.json] [--help]
//
// and the training loop: it checks the manifest, sets up the runtime's
// memory, loads the weights and the data, runs the step N times feeding each
// updated result into the next step, and prints one line per step. See
// docs/Executables.md.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DRIVER_DRIVER_H
#define LETHE_DRIVER_DRIVER_H

#include "lethe_rt.h"

#include <ostream>

namespace lethe::driver {

/// A compiled step (lethe_program_step's signature).
using StepFunction = lethe_rt_status (*)(lethe_rt_context *context);

/// Runs the executable's command line `argv` for the program with manifest
/// `manifestText` and step function `step`, printing to `out` and, as one
/// `NAME: error: ...` line, errors to `err`. Returns the exit code: 0, or 1
/// on any error (and then writes no output file).
int runDriver(int argc, const char *const *argv, const char *manifestText,
              StepFunction step, std::ostream &out, std::ostream &err);

} // namespace lethe::driver

#endif // LETHE_DRIVER_DRIVER_H
