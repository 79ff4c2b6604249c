//===- RandomData.cpp - The reference interpreter's random inputs ---------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// A copy of randomTensor in tools/lethe-run/lethe-run.cpp, which is the
// reference: change both together (RandomDataTest pins the sequence).
//
//===----------------------------------------------------------------------===//

#include "RandomData.h"

#include "DType.h"
#include "common/ElementTypes.h"

using namespace lethe::driver;

void lethe::driver::drawRandomTensor(std::mt19937_64 &rng, lethe_rt_dtype dtype,
                                     const std::vector<int64_t> &shape,
                                     int64_t integerBound, std::string &data) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  // Generate in f64 and round to the element type as lethe_rt_cast does, on
  // the host: the runtime's kernels may take only device memory.
  std::vector<double> values(count);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  for (double &value : values) {
    if (isFloatDType(dtype))
      value = real(rng);
    else if (dtype == LETHE_RT_I1)
      value = rng() & 1;
    else
      value = static_cast<double>(rng() % integerBound);
  }
  data.assign(count * getDTypeSize(dtype), '\0');
  lethe::rt::dispatchAny(dtype, [&](auto tag) {
    for (int64_t i = 0; i < count; ++i)
      lethe::rt::castElement<double, decltype(tag)>(values.data(), data.data(),
                                                    i);
  });
}
