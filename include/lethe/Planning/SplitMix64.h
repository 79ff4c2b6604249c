//===- SplitMix64.h - A small seeded generator ------------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// SplitMix64 (Steele, Lea and Flood 2014): small, fast, and the same numbers
// on every platform and standard library, which std::uniform_*_distribution
// does not promise. The generated graphs of GraphGenerators.h, the arena
// layout's local search and the tests that need reproducible instances use
// it.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_PLANNING_SPLITMIX64_H
#define LETHE_PLANNING_SPLITMIX64_H

#include <cstdint>

namespace lethe::planning {

struct SplitMix64 {
  uint64_t state = 0;

  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  /// Uniform in [low, high] (up to the modulo's slight bias).
  int64_t range(int64_t low, int64_t high) {
    return low +
           static_cast<int64_t>(next() % static_cast<uint64_t>(high - low + 1));
  }

  /// True with `probability`.
  bool chance(double probability) {
    return static_cast<double>(next() >> 11) * 0x1.0p-53 < probability;
  }
};

} // namespace lethe::planning

#endif // LETHE_PLANNING_SPLITMIX64_H
