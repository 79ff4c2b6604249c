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
// Greedy placement packs large steps within a fraction of a percent of the
// liveness peak, but on the tight plans of tiny steps (many 256-byte blocks
// with interleaved lifetimes and swaps) it can stay 5-10% above it. Those
// get a systematic search next: a depth-first branch and bound over
// canonical layouts (below) that asks for an arena one unit smaller than the
// best so far, again and again, until it fails within its node budget or
// reaches the peak. The liveness peak is a lower bound, not always
// reachable; the search does not prove that a smaller arena is impossible.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/ArenaLayout.h"

#include "lethe/Planning/SplitMix64.h"

#include "ScheduleReplay.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <unordered_set>

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

/// The work of one branch-and-bound attempt (nodes times blocks: a node
/// costs a pass over the unplaced blocks), the attempts' worth of work all
/// attempts on one layout may share, the most blocks it runs on (the greedy
/// layout of larger inputs is already within a fraction of a percent of the
/// peak) and the deepest it recurses.
constexpr int64_t kBranchWork = 5'000'000;
constexpr int64_t kBranchAttempts = 6;
constexpr size_t kMaxBranchBlocks = 2000;
constexpr int kMaxBranchDepth = 20000;

/// Where placement puts a block among the placed blocks it shares a step
/// with.
enum class Fit { Lowest, Best };

/// The local search's perturbed orders are drawn from SplitMix64.
using Random = SplitMix64;

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

/// The orders in which the branch and bound tries the blocks that may go
/// at the lowest free offset: the larger first (then the longer-lived), or
/// the longer-lived first (then the larger). Neither is best everywhere.
enum class BranchOrder { Size, Length };

/// Depth-first branch and bound for a layout within a capacity.
///
/// It enumerates canonical layouts: every block rests at offset zero or on
/// the end of a block below it that shares a step, and blocks are placed in
/// order of their offsets. Every layout can be pushed down into a canonical
/// one no larger, so the search is complete (up to its node budget). Placed
/// in that order, a block's offset is the floor of its lifetime: the highest
/// end of the placed blocks it shares a step with. At each node, m is the
/// lowest offset at which some unplaced block can go; the branches put each
/// such block there in turn, and the last branch leaves the level m empty
/// for all of them (each is then barred from it: it must be raised by a
/// block placed later in its lifetime).
///
/// Pruning: at each section (the steps between two consecutive lifetime
/// ends), the unplaced blocks held there stack above the lowest offset any
/// of them can still take, so that offset plus their total must fit. States
/// already shown to fail (same placed set, floors, level and bars; kept as a
/// 64-bit hash, so a collision can only lose a layout, never make a wrong
/// one) are not searched again. Sizes and offsets are counted in a unit that
/// divides every size.
class BranchAndBound {
public:
  BranchAndBound(const std::vector<Block> &blocks, int64_t unit,
                 BranchOrder order)
      : count(blocks.size()) {
    // Sections between the distinct lifetime boundaries.
    std::vector<int64_t> bounds;
    bounds.reserve(2 * count);
    for (const Block &block : blocks) {
      bounds.push_back(block.firstStep);
      bounds.push_back(block.lastStep + 1);
    }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    sectionCount = bounds.size() - 1;
    auto sectionOf = [&](int64_t step) {
      return static_cast<int>(
          std::lower_bound(bounds.begin(), bounds.end(), step) -
          bounds.begin());
    };
    items.reserve(count);
    for (const Block &block : blocks)
      items.push_back({block.size / unit, sectionOf(block.firstStep),
                       sectionOf(block.lastStep + 1) - 1});
    // Candidates are tried by rank.
    std::vector<int> byRank(count);
    std::iota(byRank.begin(), byRank.end(), 0);
    auto length = [&](int b) { return items[b].last - items[b].first; };
    std::stable_sort(byRank.begin(), byRank.end(), [&](int a, int b) {
      const Item &x = items[a], &y = items[b];
      if (order == BranchOrder::Size && x.size != y.size)
        return x.size > y.size;
      if (length(a) != length(b))
        return length(a) > length(b);
      return x.size > y.size;
    });
    rank.resize(count);
    for (size_t position = 0; position < count; ++position)
      rank[byRank[position]] = static_cast<int>(position);
    totals.assign(sectionCount, 0);
    for (const Item &item : items)
      for (int section = item.first; section <= item.last; ++section)
        totals[section] += item.size;
  }

  /// Looks for a layout whose arena is at most `arenaUnits` units within
  /// `maxNodes` nodes; on success fills `offsets` (in units, indexed like
  /// the blocks) and returns true. Either way, `nodesVisited()` then says
  /// how many nodes it took.
  bool run(int64_t arenaUnits, int64_t maxNodes,
           std::vector<int64_t> &offsets) {
    capacity = arenaUnits;
    nodeLimit = maxNodes;
    nodes = 0;
    aborted = false;
    floors.assign(sectionCount, 0);
    remaining = totals;
    bars.assign(count, 0);
    placed.assign(count, false);
    at.assign(count, 0);
    failed.clear();
    if (!search(0, 0, 0))
      return false;
    offsets = at;
    return true;
  }

  int64_t nodesVisited() const { return std::min(nodes, nodeLimit); }

private:
  struct Item {
    int64_t size;
    int first, last; // sections
  };

  static uint64_t mix(uint64_t hash, uint64_t value) {
    hash ^= value + 0x9e3779b97f4a7c15ull + (hash << 6) + (hash >> 2);
    hash *= 0xff51afd7ed558ccdull;
    return hash ^ (hash >> 33);
  }

  uint64_t hashState(int64_t level) const {
    uint64_t hash = mix(0, static_cast<uint64_t>(level));
    for (int64_t floor : floors)
      hash = mix(hash, static_cast<uint64_t>(floor));
    for (size_t b = 0; b < count; ++b)
      hash = mix(hash, placed[b]
                           ? ~uint64_t(0)
                           : static_cast<uint64_t>(std::max(bars[b], level)));
    return hash;
  }

  /// Places the unplaced blocks at offsets of at least `level`, given
  /// `done` placed.
  bool search(size_t done, int64_t level, int depth) {
    if (done == count)
      return true;
    if (++nodes > nodeLimit || depth > kMaxBranchDepth) {
      aborted = true;
      return false;
    }
    uint64_t hash = hashState(level);
    if (failed.count(hash))
      return false;
    bool found = expand(done, level, depth);
    if (!found && !aborted)
      failed.insert(hash);
    return found;
  }

  bool expand(size_t done, int64_t level, int depth) {
    // The floor of every unplaced block, the lowest offset any block of a
    // section can still take, and the blocks that can go lowest.
    std::vector<int64_t> lowest(sectionCount,
                                std::numeric_limits<int64_t>::max());
    std::vector<int> candidates;
    int64_t m = std::numeric_limits<int64_t>::max();
    for (size_t b = 0; b < count; ++b) {
      if (placed[b])
        continue;
      const Item &item = items[b];
      int64_t floor = 0;
      for (int section = item.first; section <= item.last; ++section)
        floor = std::max(floor, floors[section]);
      int64_t start = std::max({floor, level, bars[b]});
      for (int section = item.first; section <= item.last; ++section)
        lowest[section] = std::min(lowest[section], start);
      if (start != floor)
        continue; // it must be raised first
      if (floor < m) {
        m = floor;
        candidates.clear();
      }
      if (floor == m)
        candidates.push_back(static_cast<int>(b));
    }
    for (size_t section = 0; section < sectionCount; ++section)
      if (remaining[section] > 0 &&
          lowest[section] + remaining[section] > capacity)
        return false;
    if (candidates.empty())
      return false;
    std::sort(candidates.begin(), candidates.end(),
              [&](int a, int b) { return rank[a] < rank[b]; });

    std::vector<int64_t> savedBars;
    savedBars.reserve(candidates.size());
    for (int b : candidates)
      savedBars.push_back(bars[b]);
    bool found = false;
    for (int b : candidates) {
      const Item &item = items[b];
      if (m + item.size <= capacity) {
        std::vector<int64_t> savedFloors(floors.begin() + item.first,
                                         floors.begin() + item.last + 1);
        for (int section = item.first; section <= item.last; ++section) {
          floors[section] = m + item.size;
          remaining[section] -= item.size;
        }
        placed[b] = true;
        at[b] = m;
        found = search(done + 1, m, depth + 1);
        if (found)
          return true;
        placed[b] = false;
        for (int section = item.first; section <= item.last; ++section) {
          floors[section] = savedFloors[section - item.first];
          remaining[section] += item.size;
        }
        if (aborted)
          break;
      }
      // In the branches to come, b does not go at m.
      bars[b] = m + 1;
    }
    if (!aborted)
      found = search(done, m, depth + 1);
    if (!found)
      for (size_t c = 0; c < candidates.size(); ++c)
        bars[candidates[c]] = savedBars[c];
    return found;
  }

  size_t count = 0, sectionCount = 0;
  std::vector<Item> items;
  std::vector<int> rank;
  std::vector<int64_t> totals;
  int64_t capacity = 0, nodeLimit = 0, nodes = 0;
  bool aborted = false;
  // The state of the search.
  std::vector<int64_t> floors, remaining, bars, at;
  std::vector<bool> placed;
  std::unordered_set<uint64_t> failed;
};

/// Shrinks `arena` (with `offsets`, indexed like `blocks`) by the branch and
/// bound while it stays above `peak`: to the peak, else one unit below the
/// best until an attempt fails in both orders. The attempts share
/// kBranchAttempts attempts' worth of nodes: a success visits a node per
/// block at least, and on a large arena the descent could take hundreds of
/// them (tens of seconds for 2000 blocks).
void shrinkByBranchAndBound(const std::vector<Block> &blocks, int64_t peak,
                            int64_t &arena, std::vector<int64_t> &offsets) {
  int64_t unit = 0;
  for (const Block &block : blocks)
    unit = std::gcd(unit, block.size);
  int64_t nodeLimit = std::max<int64_t>(
      1000, kBranchWork / static_cast<int64_t>(blocks.size()));
  std::vector<BranchAndBound> searches;
  for (BranchOrder order : {BranchOrder::Size, BranchOrder::Length})
    searches.emplace_back(blocks, unit, order);
  std::vector<int64_t> found;
  int64_t nodesLeft = kBranchAttempts * nodeLimit;
  auto attempt = [&](int64_t capacity) {
    for (BranchAndBound &search : searches) {
      if (nodesLeft <= 0)
        return false;
      bool success =
          search.run(capacity, std::min(nodeLimit, nodesLeft), found);
      nodesLeft -= search.nodesVisited();
      if (!success)
        continue;
      arena = 0;
      for (size_t b = 0; b < blocks.size(); ++b) {
        offsets[b] = found[b] * unit;
        arena = std::max(arena, offsets[b] + blocks[b].size);
      }
      return true;
    }
    return false;
  };
  // The peak itself first: when a layout reaches it, the search often finds
  // one quickly, and more easily than one a unit or two above it.
  if (attempt(peak / unit))
    return;
  while (arena / unit - 1 > peak / unit)
    if (!attempt(arena / unit - 1))
      break;
}

/// The orders of the greedy starts, best first: by size (then lifetime),
/// by the pressure over the lifetime, by lifetime, by first step, by area.
/// Each is a comparison on block indices; the index breaks ties so that
/// every order is total and the result deterministic.
std::vector<std::vector<int>>
sortStartOrders(const std::vector<Block> &blocks) {
  std::vector<int64_t> pressure = computePressure(blocks);
  auto length = [&](const Block &block) {
    return block.lastStep - block.firstStep + 1;
  };
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

  std::vector<std::vector<int>> sorted;
  for (const Less &less : orders) {
    std::vector<int> order(blocks.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), less);
    sorted.push_back(std::move(order));
  }
  return sorted;
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
  for (std::vector<int> &order : sortStartOrders(blocks)) {
    Start start;
    start.order = std::move(order);
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

  if (search && best > layout.peakBytes && blocks.size() <= kMaxBranchBlocks)
    shrinkByBranchAndBound(blocks, layout.peakBytes, best, bestOffsets);

  layout.arenaBytes = best;
  for (size_t b = 0; b < blocks.size(); ++b)
    layout.offsets[blocks[b].index] = bestOffsets[b];
  return layout;
}

bool lethe::planning::fitsInArena(const std::vector<ArenaBuffer> &buffers,
                                  int64_t alignment, int64_t capacity) {
  if (alignment < 1)
    alignment = 1;
  std::vector<Block> blocks = collectBlocks(buffers, alignment);
  if (livenessPeak(blocks) > capacity)
    return false;
  if (blocks.empty())
    return true;
  std::vector<int64_t> offsets;
  size_t critical = 0;
  for (const std::vector<int> &order : sortStartOrders(blocks))
    for (Fit fit : {Fit::Lowest, Fit::Best})
      if (placeInOrder(blocks, order, fit, offsets, capacity, critical) <=
          capacity)
        return true;
  return false;
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
  buffers.device.reserve(replay.versions.size() + replay.workspaces.size());
  for (const detail::VersionLifetime &version : replay.versions)
    buffers.device.push_back({values[version.value].bytes, version.firstStep,
                              version.lastStep, version.value});
  for (const detail::WorkspaceUse &use : replay.workspaces)
    buffers.device.push_back({problem.graph.nodes[use.node].workspaceBytes,
                              use.step, use.step, /*value=*/-1, use.node});
  for (const detail::HostCopy &copy : replay.hostCopies)
    buffers.host.push_back(
        {values[copy.value].bytes, copy.firstStep, end, copy.value});
  buffers.valid = true;
  return buffers;
}
