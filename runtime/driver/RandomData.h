//===- RandomData.h - The reference interpreter's random inputs -----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Without --data, a planned executable draws its data inputs exactly as
// `lethe-run --random-inputs SEED` does, so that the executable and the
// reference interpreter train on the same numbers: one std::mt19937_64
// seeded with SEED, the data and label arguments drawn in argument order,
// once for all steps, each element in row-major order as
//   float types  std::uniform_real_distribution<double>(-1, 1) (a fresh
//                distribution per tensor), then rounded to the dtype by
//                lethe_rt_cast;
//   i1           rng() & 1;
//   integers     rng() % bound (the class count of a label, else 10).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DRIVER_RANDOMDATA_H
#define LETHE_DRIVER_RANDOMDATA_H

#include "lethe_rt.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace lethe::driver {

/// Draws one tensor of `dtype` and `shape` from `rng` (advancing it) into
/// `data` (resized to the tensor's bytes). False, with a one-line `error`,
/// only when the runtime's cast fails.
bool drawRandomTensor(std::mt19937_64 &rng, lethe_rt_dtype dtype,
                      const std::vector<int64_t> &shape, int64_t integerBound,
                      std::string &data, std::string &error);

} // namespace lethe::driver

#endif // LETHE_DRIVER_RANDOMDATA_H
