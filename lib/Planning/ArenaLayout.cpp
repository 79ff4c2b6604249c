//===- ArenaLayout.cpp - Static addresses for a schedule's tensors --------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The layout is greedy placement: take the buffers in some order and put
// each where it clears every buffer already placed that is held at a common
// step, either at the lowest such offset (first fit) or in the smallest gap
// between those buffers that it fits (best fit, as TensorFlow Lite's arena
// planner does). The order decides the quality, and no single order or rule
// is best on every input, so several starts are tried: by size (large blocks
// first leave small gaps for small ones), by the pressure over the lifetime
// (the buffers held at the peak first, so that the peak is packed tightly),
// by lifetime length, by first step (first fit, as an allocator would run),
// and by area, each with both rules. If none reaches the liveness peak, a
// local search over orders follows from the best few starts (deterministic
// pseudo-random moves).
//
// The liveness peak is a lower bound, not always reachable: on the tight
// plans of tiny steps (many 256-byte blocks with interleaved lifetimes) the
// layout can stay several percent above it (docs/Planning.md).
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/ArenaLayout.h"

#include "ScheduleReplay.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>

using namespace lethe::planning;

namespace {

/// A buffer that is held at some step, its size rounded up.
struct Block {
  int64_t size = 0;
  int64_t firstStep = 0;
  int64_t lastStep = 0;
  /// Its index in the caller's vector.
  int index = 0;
};

/// A placed block, as the placement scans them (by offset).
struct PlacedBlock {
  int64_t offset = 0;
  int64_t end = 0;
  int64_t firstStep = 0;
  int64_t lastStep = 0;
};

/// The most rounds of local search, and the work they may do (rounds times
/// blocks squared), shared among the starts it searches from.
constexpr double kMaxSearchRounds = 24000;
constexpr double kSearchWork = 1.5e9;
constexpr size_t kSearchStarts = 4;

/// Where placement puts a block among the placed blocks it shares a step
/// with.
enum class Fit { Lowest, Best };

/// SplitMix64, for the perturbed orders.
struct Random {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

/// Places `blocks` in `order`, each by `fit` among the placed blocks it
/// shares a step with. Writes the offsets (indexed like `blocks`) and returns
/// the arena size, or stops early and returns a number above `giveUpAbove`
/// once the arena exceeds it. `critical` is set to the position in `order`
/// of the first block that reached the returned size.
int64_t placeInOrder(const std::vector<Block> &blocks,
                     const std::vector<int> &order, Fit fit,
                     std::vector<int64_t> &offsets, int64_t giveUpAbove,
                     size_t &critical) {
  // Sorted by offset. For the lowest fit a block's candidate offset only
  // grows while scanning, and the scan stops at the first placed block that
  // starts above the candidate's end, since every later one does too.
  std::vector<PlacedBlock> placed;
  placed.reserve(order.size());
  offsets.assign(blocks.size(), 0);
  int64_t arena = 0;
  critical = 0;
  for (size_t rank = 0; rank < order.size(); ++rank) {
    int index = order[rank];
    const Block &block = blocks[index];
    auto overlaps = [&](const PlacedBlock &other) {
      return other.firstStep <= block.lastStep &&
             block.firstStep <= other.lastStep;
    };
    int64_t candidate = 0;
    if (fit == Fit::Lowest) {
      for (const PlacedBlock &other : placed) {
        if (other.offset >= candidate + block.size)
          break;
        if (overlaps(other))
          candidate = std::max(candidate, other.end);
      }
    } else {
      // The smallest gap below the top of the overlapping blocks that holds
      // the block, or the top.
      int64_t top = 0, bestGap = std::numeric_limits<int64_t>::max();
      int64_t bestOffset = -1;
      for (const PlacedBlock &other : placed) {
        if (!overlaps(other))
          continue;
        int64_t gap = other.offset - top;
        if (gap >= block.size && gap < bestGap) {
          bestGap = gap;
          bestOffset = top;
        }
        top = std::max(top, other.end);
      }
      candidate = bestOffset >= 0 ? bestOffset : top;
    }
    offsets[index] = candidate;
    if (candidate + block.size > arena) {
      arena = candidate + block.size;
      critical = rank;
    }
    if (arena > giveUpAbove)
      return arena;
    // Keep `placed` sorted by offset: the new block goes after every block
    // at or below its offset.
    PlacedBlock entry{candidate, candidate + block.size, block.firstStep,
                      block.lastStep};
    auto at = std::upper_bound(
        placed.begin(), placed.end(), candidate,
        [](int64_t offset, const PlacedBlock &p) { return offset < p.offset; });
    placed.insert(at, entry);
  }
  return arena;
}

/// For every block, the most bytes held at one step of its lifetime.
std::vector<int64_t> computePressure(const std::vector<Block> &blocks) {
  // The live total only rises at a first step, so its maximum over a
  // lifetime is reached at one of the first steps within it.
  std::vector<int64_t> starts;
  starts.reserve(blocks.size());
  for (const Block &block : blocks)
    starts.push_back(block.firstStep);
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  size_t count = starts.size();
  // live[i]: bytes held at starts[i], from a difference array over the
  // compressed steps (a block ends before the first start past its last).
  std::vector<int64_t> delta(count + 1, 0);
  auto firstIndex = [&](int64_t step) {
    return static_cast<size_t>(
        std::lower_bound(starts.begin(), starts.end(), step) - starts.begin());
  };
  auto pastIndex = [&](int64_t step) {
    return static_cast<size_t>(
        std::upper_bound(starts.begin(), starts.end(), step) - starts.begin());
  };
  for (const Block &block : blocks) {
    delta[firstIndex(block.firstStep)] += block.size;
    delta[pastIndex(block.lastStep)] -= block.size;
  }
  // A sparse table answers the range maxima.
  std::vector<std::vector<int64_t>> table(1, std::vector<int64_t>(count));
  int64_t running = 0;
  for (size_t i = 0; i < count; ++i) {
    running += delta[i];
    table[0][i] = running;
  }
  for (size_t width = 1; 2 * width <= count; width *= 2) {
    const std::vector<int64_t> &previous = table.back();
    std::vector<int64_t> next(count - 2 * width + 1);
    for (size_t i = 0; i < next.size(); ++i)
      next[i] = std::max(previous[i], previous[i + width]);
    table.push_back(std::move(next));
  }
  std::vector<int64_t> pressure(blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    size_t low = firstIndex(blocks[b].firstStep);
    size_t high = pastIndex(blocks[b].lastStep); // exclusive, > low
    size_t level = 0;
    while ((size_t(2) << level) <= high - low)
      ++level;
    pressure[b] =
        std::max(table[level][low], table[level][high - (size_t(1) << level)]);
  }
  return pressure;
}

/// The blocks of `buffers` that are held at some step, sizes aligned.
std::vector<Block> collectBlocks(const std::vector<ArenaBuffer> &buffers,
                                 int64_t alignment) {
  std::vector<Block> blocks;
  for (size_t index = 0; index < buffers.size(); ++index) {
    const ArenaBuffer &buffer = buffers[index];
    if (buffer.bytes <= 0 || buffer.lastStep < buffer.firstStep)
      continue;
    blocks.push_back({alignBytes(buffer.bytes, alignment), buffer.firstStep,
                      buffer.lastStep, static_cast<int>(index)});
  }
  return blocks;
}

int64_t livenessPeak(const std::vector<Block> &blocks) {
  std::vector<std::pair<int64_t, int64_t>> events;
  events.reserve(2 * blocks.size());
  for (const Block &block : blocks) {
    events.push_back({block.firstStep, block.size});
    events.push_back({block.lastStep + 1, -block.size});
  }
  // At equal steps the frees (negative) come first.
  std::sort(events.begin(), events.end());
  int64_t running = 0, peak = 0;
  for (const auto &[step, change] : events) {
    running += change;
    peak = std::max(peak, running);
  }
  return peak;
}

} // namespace

int64_t lethe::planning::alignBytes(int64_t bytes, int64_t alignment) {
  if (alignment <= 1)
    return bytes;
  return (bytes + alignment - 1) / alignment * alignment;
}

int64_t
lethe::planning::computeLivenessPeak(const std::vector<ArenaBuffer> &buffers,
                                     int64_t alignment) {
  return livenessPeak(collectBlocks(buffers, alignment));
}

ArenaLayout
lethe::planning::layOutArena(const std::vector<ArenaBuffer> &buffers,
                             int64_t alignment, bool search) {
  if (alignment < 1)
    alignment = 1;
  std::vector<Block> blocks = collectBlocks(buffers, alignment);
  ArenaLayout layout;
  layout.offsets.assign(buffers.size(), 0);
  layout.peakBytes = livenessPeak(blocks);
  if (blocks.empty())
    return layout;

  std::vector<int64_t> pressure = computePressure(blocks);
  auto length = [&](const Block &block) {
    return block.lastStep - block.firstStep + 1;
  };
  // Each order is a comparison on block indices; the index breaks ties so
  // that every order is total and the result deterministic.
  using Less = std::function<bool(int, int)>;
  auto bySize = [&](int a, int b) {
    const Block &x = blocks[a], &y = blocks[b];
    if (x.size != y.size)
      return x.size > y.size;
    if (length(x) != length(y))
      return length(x) > length(y);
    return a < b;
  };
  std::vector<Less> orders = {
      bySize,
      [&](int a, int b) {
        if (pressure[a] != pressure[b])
          return pressure[a] > pressure[b];
        return bySize(a, b);
      },
      [&](int a, int b) {
        if (length(blocks[a]) != length(blocks[b]))
          return length(blocks[a]) > length(blocks[b]);
        return bySize(a, b);
      },
      [&](int a, int b) {
        if (blocks[a].firstStep != blocks[b].firstStep)
          return blocks[a].firstStep < blocks[b].firstStep;
        return bySize(a, b);
      },
      [&](int a, int b) {
        // Area, in floating point: sizes times steps may overflow.
        double x = static_cast<double>(blocks[a].size) * length(blocks[a]);
        double y = static_cast<double>(blocks[b].size) * length(blocks[b]);
        if (x != y)
          return x > y;
        return bySize(a, b);
      },
  };

  // A placement: an order, the rule, and what it gives.
  struct Start {
    std::vector<int> order;
    Fit fit = Fit::Lowest;
    int64_t arena = 0;
    size_t critical = 0;
  };
  std::vector<int64_t> offsets, bestOffsets;
  int64_t best = std::numeric_limits<int64_t>::max();
  std::vector<Start> starts;
  for (const Less &less : orders) {
    Start start;
    start.order.resize(blocks.size());
    std::iota(start.order.begin(), start.order.end(), 0);
    std::stable_sort(start.order.begin(), start.order.end(), less);
    for (Fit fit : {Fit::Lowest, Fit::Best}) {
      start.fit = fit;
      start.arena =
          placeInOrder(blocks, start.order, fit, offsets,
                       std::numeric_limits<int64_t>::max(), start.critical);
      if (start.arena < best) {
        best = start.arena;
        bestOffsets = offsets;
      }
      starts.push_back(start);
    }
    if (best == layout.peakBytes)
      break;
  }

  // Local search over orders from the best starts (every optimal layout is
  // the lowest-fit placement of some order: that of its offsets). A move
  // either takes the block that sets the arena's size and places it
  // earlier, or moves or swaps two blocks; a move that is no worse is kept,
  // so that the search can cross plateaus. The number of rounds shrinks
  // with the square of the block count, the cost of one placement, so that
  // large inputs (which the starts already pack within a fraction of a
  // percent) stay fast.
  std::stable_sort(
      starts.begin(), starts.end(),
      [](const Start &a, const Start &b) { return a.arena < b.arena; });
  starts.resize(std::min(starts.size(), kSearchStarts));
  double count = static_cast<double>(blocks.size());
  int64_t rounds = !search
                       ? 0
                       : static_cast<int64_t>(
                             std::min<double>(kMaxSearchRounds,
                                              kSearchWork / (count * count)) /
                             static_cast<double>(starts.size()));
  Random random{0x1e7e5eed};
  size_t critical = 0;
  for (Start &start : starts) {
    for (int64_t round = 0; round < rounds && best > layout.peakBytes;
         ++round) {
      std::vector<int> order = start.order;
      size_t size = order.size();
      uint64_t move = random.next() % 3;
      if (move == 0 && start.critical > 0) {
        size_t to = random.next() % start.critical;
        std::rotate(order.begin() + to, order.begin() + start.critical,
                    order.begin() + start.critical + 1);
      } else if (move == 1) {
        size_t first = random.next() % size, second = random.next() % size;
        if (first > second)
          std::swap(first, second);
        std::rotate(order.begin() + first, order.begin() + second,
                    order.begin() + second + 1);
      } else {
        std::swap(order[random.next() % size], order[random.next() % size]);
      }
      int64_t arena = placeInOrder(blocks, order, start.fit, offsets,
                                   start.arena, critical);
      if (arena > start.arena)
        continue;
      start.arena = arena;
      start.critical = critical;
      start.order = std::move(order);
      if (arena < best) {
        best = arena;
        bestOffsets = offsets;
      }
    }
  }

  layout.arenaBytes = best;
  for (size_t b = 0; b < blocks.size(); ++b)
    layout.offsets[blocks[b].index] = bestOffsets[b];
  return layout;
}

ScheduleBuffers
lethe::planning::getScheduleBuffers(const PlanningProblem &problem,
                                    const Schedule &schedule) {
  detail::ScheduleReplay replay = detail::replaySchedule(problem, schedule);
  ScheduleBuffers buffers;
  if (!replay.result.valid) {
    buffers.error = replay.result.error;
    return buffers;
  }
  const std::vector<GraphValue> &values = problem.graph.values;
  int64_t end = static_cast<int64_t>(schedule.size());
  buffers.device.reserve(replay.versions.size());
  for (const detail::VersionLifetime &version : replay.versions)
    buffers.device.push_back({values[version.value].bytes, version.firstStep,
                              version.lastStep, version.value});
  for (const detail::HostCopy &copy : replay.hostCopies)
    buffers.host.push_back(
        {values[copy.value].bytes, copy.firstStep, end, copy.value});
  buffers.valid = true;
  return buffers;
}
