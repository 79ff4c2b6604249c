//===- ResizeCases.h - Resizes that the runtime tests run -------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The resizes that both the host tests of the CUDA backend's resize
// arithmetic (unittests/Runtime/ResizeSamplingTest.cpp) and the CUDA
// backend's own tests (unittests/RuntimeCuda/ResizeTest.cpp) run: shapes
// with up, down and non-integer scales, lengths of 1 and 1 to 3 resized
// dims, and every combination of the options that matter for a mode.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_UNITTESTS_RESIZECASES_H
#define LETHE_UNITTESTS_RESIZECASES_H

#include "common/Tensor.h"
#include "lethe_rt.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lethe::rt::testing {

/// x's shape, out's, and the scales between them.
struct ResizeCase {
  std::vector<int64_t> in, out;
  std::vector<double> scales;
};

inline const std::vector<ResizeCase> &resizeCases() {
  static const std::vector<ResizeCase> cases{
      {{1, 2, 4, 4}, {1, 2, 8, 8}, {1, 1, 2, 2}},
      {{2, 3, 7}, {2, 3, 3}, {1, 1, 0.5}},
      {{3, 5}, {7, 4}, {7.0 / 3.0, 0.8}},
      {{4}, {9}, {2.3}},
      {{1, 6}, {3, 6}, {3, 1}},
      {{5, 4}, {1, 4}, {0.2, 1}},
      {{2, 2, 3}, {3, 5, 4}, {1.5, 2.5, 1.4}},
      {{3}, {3}, {1}},
      {{3}, {3}, {1.2}},
      {{9, 2}, {2, 5}, {0.25, 2.5}},
      {{1}, {1}, {0.5}},
  };
  return cases;
}

/// A region of interest for `rank` dims that reaches outside the input at
/// both ends of some dims (tf_crop_and_resize then extrapolates there).
inline std::vector<double> regionOfInterest(size_t rank) {
  std::vector<double> roi(2 * rank);
  for (size_t dim = 0; dim < rank; ++dim) {
    roi[dim] = -0.2 + 0.15 * dim;
    roi[rank + dim] = 1.1 - 0.2 * dim;
  }
  return roi;
}

/// Every combination of the options that matter for `mode`: each coordinate
/// transformation (tf_crop_and_resize with `roi`) and, for nearest, each
/// rounding, for linear and cubic, with and without exclude_outside, for
/// cubic, a = -0.75 and -0.5.
inline std::vector<lethe_rt_resize_options>
resizeOptionsFor(lethe_rt_resize_mode mode, const double *roi) {
  std::vector<lethe_rt_resize_options> result;
  for (int coordinates = LETHE_RT_HALF_PIXEL;
       coordinates <= LETHE_RT_TF_CROP_AND_RESIZE; ++coordinates) {
    lethe_rt_resize_options options{};
    options.mode = mode;
    options.coordinates = static_cast<lethe_rt_coordinate_mode>(coordinates);
    options.cubic_coeff_a = -0.75;
    options.extrapolation_value = -3.75;
    if (coordinates == LETHE_RT_TF_CROP_AND_RESIZE)
      options.roi = roi;
    if (mode == LETHE_RT_RESIZE_NEAREST) {
      for (int nearest = LETHE_RT_ROUND_PREFER_FLOOR; nearest <= LETHE_RT_CEIL;
           ++nearest) {
        options.nearest = static_cast<lethe_rt_nearest_mode>(nearest);
        result.push_back(options);
      }
      continue;
    }
    for (int exclude = 0; exclude < 2; ++exclude) {
      options.exclude_outside = exclude;
      for (double a : {-0.75, -0.5}) {
        options.cubic_coeff_a = a;
        result.push_back(options);
        if (mode != LETHE_RT_RESIZE_CUBIC)
          break; // a is cubic's
      }
    }
  }
  return result;
}

/// What a failing comparison names.
inline std::string describeResize(const ResizeCase &c,
                                  const lethe_rt_resize_options &o,
                                  lethe_rt_dtype dtype) {
  return shapeText(c.in) + " to " + shapeText(c.out) + " mode " +
         std::to_string(o.mode) + " coordinates " +
         std::to_string(o.coordinates) + " nearest " +
         std::to_string(o.nearest) + " exclude " +
         std::to_string(o.exclude_outside) + " a " +
         std::to_string(o.cubic_coeff_a) + " " + dtypeName(dtype);
}

} // namespace lethe::rt::testing

#endif // LETHE_UNITTESTS_RESIZECASES_H
