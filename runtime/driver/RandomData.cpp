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

#include <memory>

using namespace lethe::driver;

bool lethe::driver::drawRandomTensor(std::mt19937_64 &rng, lethe_rt_dtype dtype,
                                     const std::vector<int64_t> &shape,
                                     int64_t integerBound, std::string &data,
                                     std::string &error) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  // Generate in f64 and let the runtime's cast round to the element type.
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
  int32_t rank = static_cast<int32_t>(shape.size());
  lethe_rt_tensor source{values.data(), LETHE_RT_F64, rank, shape.data()};
  lethe_rt_tensor target{data.data(), dtype, rank, shape.data()};
  std::unique_ptr<lethe_rt_context, void (*)(lethe_rt_context *)> context(
      lethe_rt_context_create(), lethe_rt_context_destroy);
  if (!context) {
    error = "out of memory creating a runtime context";
    return false;
  }
  if (lethe_rt_cast(context.get(), &source, &target) != LETHE_RT_OK) {
    error = lethe_rt_last_error(context.get());
    return false;
  }
  return true;
}
