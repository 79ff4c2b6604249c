//===- KernelUtils.h - Helpers shared by CPU kernels ------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Iteration and message helpers shared by the elementwise, reduction, matrix,
// normalization and loss kernels (on top of CpuRuntime.h).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_CPU_KERNELUTILS_H
#define LETHE_RUNTIME_CPU_KERNELUTILS_H

#include "CpuRuntime.h"

#include <string>
#include <vector>

namespace lethe::rt {

/// Calls `run(base, offsets, innerStrides, count)` for each innermost run of
/// a row-major iteration over `shape`: the run covers the `count` elements
/// base, base + 1, ... of the iteration, and operand k's run starts at
/// offsets[k] with stride innerStrides[k] (strides[k] are its per-dim
/// strides, 0 where it broadcasts). Adjacent dims that every operand walks
/// contiguously are merged first, so runs are as long as possible; the
/// elements are still visited in row-major order.
template <typename Function>
void forEachRun(const std::vector<int64_t> &shape,
                const std::vector<std::vector<int64_t>> &strides,
                Function &&run) {
  size_t operands = strides.size();
  std::vector<int64_t> merged;
  std::vector<std::vector<int64_t>> mergedStrides(operands);
  for (size_t dim = 0; dim < shape.size(); ++dim) {
    if (shape[dim] == 1)
      continue;
    bool contiguous = !merged.empty();
    for (size_t k = 0; contiguous && k < operands; ++k)
      contiguous = mergedStrides[k].back() == strides[k][dim] * shape[dim];
    if (contiguous) {
      merged.back() *= shape[dim];
      for (size_t k = 0; k < operands; ++k)
        mergedStrides[k].back() = strides[k][dim];
    } else {
      merged.push_back(shape[dim]);
      for (size_t k = 0; k < operands; ++k)
        mergedStrides[k].push_back(strides[k][dim]);
    }
  }
  int64_t count = 1;
  std::vector<int64_t> innerStrides(operands, 0);
  if (!merged.empty()) {
    count = merged.back();
    merged.pop_back();
    for (size_t k = 0; k < operands; ++k) {
      innerStrides[k] = mergedStrides[k].back();
      mergedStrides[k].pop_back();
    }
  }
  forEachIndex(merged, mergedStrides,
               [&](int64_t outer, const int64_t *offsets) {
                 run(outer * count, offsets, innerStrides.data(), count);
               });
}

} // namespace lethe::rt

#endif // LETHE_RUNTIME_CPU_KERNELUTILS_H
