//===- Main.cpp - main() of a planned executable --------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The only part of the driver that names the compiled step's symbols
// (lethe_program.h), in its own library (lethe_driver_main) so that the rest
// of the driver can be tested with other programs.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "lethe_program.h"

#include <iostream>

int main(int argc, char **argv) {
  return lethe::driver::runDriver(argc, argv, lethe_program_manifest,
                                  lethe_program_step, std::cout, std::cerr);
}
