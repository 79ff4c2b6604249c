//===- HostSourceGroups.h - SourceGroups built on the host ------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The grouping of sources by target (common/IndexMaps.h) that the CUDA
// backend builds on the GPU (runtime/cuda/SourceGroups.cu: a stable radix
// sort by key, then lowerBound for each target's first source), built here
// with std::stable_sort, so that host tests can run the per-element sums of
// gather_grad and resize_grad that the CUDA kernels run.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_UNITTESTS_RUNTIME_HOSTSOURCEGROUPS_H
#define LETHE_UNITTESTS_RUNTIME_HOSTSOURCEGROUPS_H

#include "common/IndexMaps.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace lethe::rt::testing {

/// Sources 0, 1, ... grouped by their `keys` over `targets` targets (a key
/// at or past `targets` drops its source), each group in increasing order.
struct HostSourceGroups {
  HostSourceGroups(const std::vector<uint64_t> &keys, int64_t targets) {
    sources.resize(keys.size());
    std::iota(sources.begin(), sources.end(), 0);
    std::stable_sort(sources.begin(), sources.end(),
                     [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
    std::vector<uint64_t> sortedKeys;
    for (int64_t source : sources)
      sortedKeys.push_back(keys[source]);
    for (int64_t target = 0; target <= targets; ++target)
      offsets.push_back(lowerBound(sortedKeys.data(),
                                   static_cast<int64_t>(sortedKeys.size()),
                                   static_cast<uint64_t>(target)));
  }

  /// Each target's sources in decreasing order instead: an order the sums
  /// must not take, for tests that show they can tell.
  void reverseEachGroup() {
    for (size_t target = 0; target + 1 < offsets.size(); ++target)
      std::reverse(sources.begin() + offsets[target],
                   sources.begin() + offsets[target + 1]);
  }

  SourceGroups view() const { return {offsets.data(), sources.data()}; }

  std::vector<int64_t> offsets, sources;
};

} // namespace lethe::rt::testing

#endif // LETHE_UNITTESTS_RUNTIME_HOSTSOURCEGROUPS_H
