//===- ArenaLayout.h - Static addresses of a step's tensors -----*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// A planned step allocates nothing at run time: every device tensor lives at
// a fixed offset in one arena, and every host copy in one pinned host pool.
// The layout gives each buffer (a size and the schedule steps it is held) an
// offset such that no two buffers held at a common step share an address,
// and keeps the arena close to the liveness peak, the most aligned bytes
// held at any one step (no layout can do with less). --lethe-assign-arena
// applies it; the planner's budget is checked against the liveness peak, so
// the gap between the two is what fragmentation costs.
//
// Offline layout is NP-hard in general (dynamic storage allocation); the
// layout places buffers greedily, each at the lowest offset that clears the
// buffers already placed whose lifetimes overlap it, in several orders, and
// keeps the smallest arena; while that stays above the liveness peak, a
// local search over orders and then a branch and bound over canonical
// layouts (each under a work budget) look for a smaller one. Deterministic.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_PLANNING_ARENALAYOUT_H
#define LETHE_PLANNING_ARENALAYOUT_H

#include "lethe/Planning/Schedule.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lethe::planning {

/// A block of memory held from `firstStep` to `lastStep`, both included.
struct ArenaBuffer {
  int64_t bytes = 0;
  int64_t firstStep = 0;
  int64_t lastStep = 0;
  /// The value it holds, for buffers of a schedule's values; -1 otherwise.
  int value = -1;
  /// The node whose workspace it is, for a schedule's workspace buffers
  /// (held at one compute of the node); -1 otherwise.
  int node = -1;
};

/// The default alignment of every offset (and rounding of every size): what
/// CUDA's allocator guarantees, enough for any vectorized kernel.
constexpr int64_t kDefaultArenaAlignment = 256;

/// A layout: the offset of every buffer, in the order given, and the sizes.
struct ArenaLayout {
  std::vector<int64_t> offsets;
  /// The size of the arena: the end of the highest placed buffer.
  int64_t arenaBytes = 0;
  /// The most aligned bytes held at one step: a lower bound on arenaBytes.
  int64_t peakBytes = 0;
};

/// Rounds `bytes` up to a multiple of `alignment`.
int64_t alignBytes(int64_t bytes, int64_t alignment);

/// The liveness peak of `buffers`: the most bytes, each size rounded up to
/// `alignment`, held at any one step.
int64_t computeLivenessPeak(const std::vector<ArenaBuffer> &buffers,
                            int64_t alignment = kDefaultArenaAlignment);

/// Lays out `buffers`: every offset is a multiple of `alignment` (which must
/// be positive), and two buffers held at a common step never overlap once
/// their sizes are rounded up to it. Buffers of no bytes, or whose last step
/// is before their first, are never held; they get offset 0. Without
/// `search`, only the greedy starts run (fast; the arena is then no smaller
/// than the full layout's, which can take a second on a few hundred
/// buffers).
ArenaLayout layOutArena(const std::vector<ArenaBuffer> &buffers,
                        int64_t alignment = kDefaultArenaAlignment,
                        bool search = true);

/// Whether layOutArena(buffers, alignment, /*search=*/false) is within
/// `capacity` bytes, found faster: it stops at the first greedy start that
/// fits and gives each start up once it goes over.
bool fitsInArena(const std::vector<ArenaBuffer> &buffers, int64_t alignment,
                 int64_t capacity);

/// The buffers of a schedule.
struct ScheduleBuffers {
  /// False when the schedule breaks a rule; `error` then says which, as
  /// simulate() does, and the buffers are empty.
  bool valid = false;
  std::string error;
  /// Every device version of a value (the inputs of the step, each output of
  /// each compute, each prefetch), in the order they are made, held by the
  /// freeing rule of simulate(): steps are schedule indices, and the number
  /// of steps is the end of the training step. Then the workspace of every
  /// compute of a node that has one, in schedule order, held at that step
  /// only. Their sum at each step is simulate()'s memory curve.
  std::vector<ArenaBuffer> device;
  /// The host copy of every offloaded value, from its first offload to the
  /// end (a later offload of the value reuses it).
  std::vector<ArenaBuffer> host;
};

/// The device and host buffers of `schedule` on `problem`.
ScheduleBuffers getScheduleBuffers(const PlanningProblem &problem,
                                   const Schedule &schedule);

} // namespace lethe::planning

#endif // LETHE_PLANNING_ARENALAYOUT_H
