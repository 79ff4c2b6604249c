//===- ArenaLayoutTest.cpp - Static arena layout --------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The layout's invariants (no two buffers held at a common step overlap,
// aligned offsets, arena at least the liveness peak) on random buffers; its
// optimality against exhaustive search on small instances; its quality
// (within 3% of the liveness peak) on the buffers of generated training
// steps; and the buffers of a schedule against the simulator's memory curve,
// with recompute, offloads and prefetches.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/ArenaLayout.h"
#include "lethe/Planning/GraphGenerators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>

using namespace lethe::planning;

namespace {

/// Checks that `layout` is a valid layout of `buffers`: offsets aligned, no
/// two buffers held at a common step overlapping, every buffer within the
/// arena, and the arena at least the liveness peak.
void expectValidLayout(const std::vector<ArenaBuffer> &buffers,
                       const ArenaLayout &layout, int64_t alignment) {
  ASSERT_EQ(layout.offsets.size(), buffers.size());
  EXPECT_EQ(layout.peakBytes, computeLivenessPeak(buffers, alignment));
  EXPECT_GE(layout.arenaBytes, layout.peakBytes);
  auto held = [](const ArenaBuffer &buffer) {
    return buffer.bytes > 0 && buffer.firstStep <= buffer.lastStep;
  };
  for (size_t a = 0; a < buffers.size(); ++a) {
    EXPECT_EQ(layout.offsets[a] % alignment, 0) << "buffer " << a;
    EXPECT_GE(layout.offsets[a], 0);
    if (!held(buffers[a]))
      continue;
    int64_t endA = layout.offsets[a] + alignBytes(buffers[a].bytes, alignment);
    EXPECT_LE(endA, layout.arenaBytes) << "buffer " << a;
    for (size_t b = a + 1; b < buffers.size(); ++b) {
      if (!held(buffers[b]) || buffers[a].lastStep < buffers[b].firstStep ||
          buffers[b].lastStep < buffers[a].firstStep)
        continue;
      int64_t endB =
          layout.offsets[b] + alignBytes(buffers[b].bytes, alignment);
      EXPECT_TRUE(endA <= layout.offsets[b] || endB <= layout.offsets[a])
          << "buffers " << a << " and " << b << " overlap";
    }
  }
}

std::vector<ArenaBuffer> makeRandomBuffers(int count, int steps,
                                           uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<ArenaBuffer> buffers;
  for (int i = 0; i < count; ++i) {
    ArenaBuffer buffer;
    buffer.bytes = static_cast<int64_t>(random() % 5000) + 1;
    buffer.firstStep = static_cast<int64_t>(random() % steps);
    buffer.lastStep =
        buffer.firstStep + static_cast<int64_t>(random() % (steps / 2 + 1));
    buffers.push_back(buffer);
  }
  return buffers;
}

/// The smallest arena of any layout of `buffers`, by exhaustive search:
/// every layout is at least as high as the greedy placement (each buffer at
/// the lowest offset clear of those placed before it) in the order of its
/// offsets, so the best greedy placement over all orders is optimal.
int64_t bruteForceArena(const std::vector<ArenaBuffer> &buffers,
                        int64_t alignment) {
  std::vector<int> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  int64_t best = std::numeric_limits<int64_t>::max();
  do {
    std::vector<int64_t> offsets(buffers.size(), 0);
    int64_t arena = 0;
    for (size_t rank = 0; rank < order.size(); ++rank) {
      const ArenaBuffer &buffer = buffers[order[rank]];
      int64_t size = alignBytes(buffer.bytes, alignment);
      // Try the offsets where a gap can start: 0 and the end of each
      // placed buffer, lowest first.
      std::vector<int64_t> candidates = {0};
      for (size_t other = 0; other < rank; ++other)
        candidates.push_back(
            offsets[order[other]] +
            alignBytes(buffers[order[other]].bytes, alignment));
      std::sort(candidates.begin(), candidates.end());
      for (int64_t candidate : candidates) {
        bool clear = true;
        for (size_t other = 0; other < rank && clear; ++other) {
          const ArenaBuffer &placed = buffers[order[other]];
          int64_t start = offsets[order[other]];
          int64_t end = start + alignBytes(placed.bytes, alignment);
          bool sameTime = placed.firstStep <= buffer.lastStep &&
                          buffer.firstStep <= placed.lastStep;
          clear = !sameTime || end <= candidate || candidate + size <= start;
        }
        if (clear) {
          offsets[order[rank]] = candidate;
          break;
        }
      }
      arena = std::max(arena, offsets[order[rank]] + size);
    }
    best = std::min(best, arena);
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

TEST(ArenaLayoutTest, EmptyAndSingleBuffers) {
  ArenaLayout empty = layOutArena({});
  EXPECT_TRUE(empty.offsets.empty());
  EXPECT_EQ(empty.arenaBytes, 0);
  EXPECT_EQ(empty.peakBytes, 0);

  ArenaLayout one = layOutArena({{1000, 3, 7, -1}});
  EXPECT_EQ(one.offsets, std::vector<int64_t>{0});
  EXPECT_EQ(one.arenaBytes, 1024);
  EXPECT_EQ(one.peakBytes, 1024);
  ArenaLayout unaligned = layOutArena({{1000, 3, 7, -1}}, 1);
  EXPECT_EQ(unaligned.arenaBytes, 1000);

  // Buffers of no bytes, or never held, take no room.
  ArenaLayout nothing = layOutArena({{0, 0, 5, -1}, {512, 4, 2, -1}});
  EXPECT_EQ(nothing.offsets, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(nothing.arenaBytes, 0);
}

TEST(ArenaLayoutTest, HandMadeLayout) {
  // a [0, 1] and c [2, 3] can share an address, b [1, 2] overlaps both in
  // time: the peak is 2 KiB at steps 1 and 2, and the layout reaches it.
  std::vector<ArenaBuffer> buffers = {
      {1024, 0, 1, -1}, {1024, 1, 2, -1}, {1000, 2, 3, -1}};
  ArenaLayout layout = layOutArena(buffers);
  expectValidLayout(buffers, layout, 256);
  EXPECT_EQ(layout.peakBytes, 2048);
  EXPECT_EQ(layout.arenaBytes, 2048);
  EXPECT_EQ(layout.offsets[0], layout.offsets[2]);
  // Sizes are rounded up to the alignment before they are added.
  EXPECT_EQ(computeLivenessPeak({{1, 0, 0, -1}, {1, 0, 0, -1}}, 256), 512);
  EXPECT_EQ(alignBytes(257, 256), 512);
  EXPECT_EQ(alignBytes(0, 256), 0);
}

TEST(ArenaLayoutTest, RandomBuffersNeverOverlap) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    SCOPED_TRACE(seed);
    std::vector<ArenaBuffer> buffers =
        makeRandomBuffers(5 + static_cast<int>(seed) * 5, 40, seed);
    for (int64_t alignment : {1, 64, 256, 1000}) {
      ArenaLayout layout = layOutArena(buffers, alignment);
      expectValidLayout(buffers, layout, alignment);
    }
  }
}

// fitsInArena answers what comparing the greedy starts' arena with the
// capacity would, at the capacities around it.
TEST(ArenaLayoutTest, FitsInArenaAgreesWithTheGreedyStarts) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    std::vector<ArenaBuffer> buffers = makeRandomBuffers(60, 40, seed);
    int64_t arena = layOutArena(buffers, 256, /*search=*/false).arenaBytes;
    int64_t peak = computeLivenessPeak(buffers, 256);
    for (int64_t capacity : {peak - 256, peak, arena - 256, arena, arena + 1})
      EXPECT_EQ(fitsInArena(buffers, 256, capacity), arena <= capacity)
          << "seed " << seed << ", capacity " << capacity << ", arena "
          << arena;
  }
  EXPECT_TRUE(fitsInArena({}, 256, 0));
  EXPECT_FALSE(fitsInArena({{1, 0, 0}}, 256, 255));
  EXPECT_TRUE(fitsInArena({{1, 0, 0}}, 256, 256));
}

TEST(ArenaLayoutTest, OptimalOnSmallInstances) {
  int optimal = 0, total = 0;
  for (uint64_t seed = 0; seed < 150; ++seed) {
    SCOPED_TRACE(seed);
    std::vector<ArenaBuffer> buffers =
        makeRandomBuffers(2 + static_cast<int>(seed % 6), 8, seed + 1000);
    ArenaLayout layout = layOutArena(buffers);
    expectValidLayout(buffers, layout, 256);
    int64_t best = bruteForceArena(buffers, 256);
    EXPECT_GE(layout.arenaBytes, best);
    EXPECT_EQ(layout.arenaBytes, best);
    optimal += layout.arenaBytes == best;
    ++total;
  }
  EXPECT_EQ(optimal, total);
}

/// Offloads every activation right after it is made and releases it, and
/// prefetches it before each later reader: a schedule with every kind of
/// step, for the buffer tests.
Schedule makeOffloadEverythingSchedule(const TrainingGraph &graph) {
  Schedule schedule;
  std::vector<bool> resident(graph.values.size(), false);
  for (size_t value = 0; value < graph.values.size(); ++value)
    resident[value] = graph.values[value].producer < 0;
  for (int node = 0; node < static_cast<int>(graph.nodes.size()); ++node) {
    for (int input : graph.nodes[node].inputs)
      if (!resident[input]) {
        schedule.push_back(Step::prefetch(input));
        resident[input] = true;
      }
    schedule.push_back(Step::compute(node));
    for (int output : graph.nodes[node].outputs) {
      resident[output] = true;
      if (graph.values[output].kind == ValueKind::Activation) {
        schedule.push_back(Step::offload(output));
        schedule.push_back(Step::release(output));
        resident[output] = false;
      }
    }
  }
  return schedule;
}

/// Recomputes the first forward node before the backward pass reads its
/// output, so that a value has two versions.
Schedule makeRecomputeSchedule(const TrainingGraph &graph) {
  Schedule schedule;
  int last =
      static_cast<int>(graph.values[graph.nodes[0].outputs[0]].users.back());
  for (int node = 0; node < static_cast<int>(graph.nodes.size()); ++node) {
    if (node == last)
      schedule.push_back(Step::compute(0));
    schedule.push_back(Step::compute(node));
  }
  return schedule;
}

/// The bytes of `buffers` held at each step 0..steps.
std::vector<int64_t> sumPerStep(const std::vector<ArenaBuffer> &buffers,
                                size_t steps) {
  std::vector<int64_t> memory(steps + 1, 0);
  for (const ArenaBuffer &buffer : buffers)
    for (int64_t step = buffer.firstStep; step <= buffer.lastStep; ++step)
      memory[step] += buffer.bytes;
  return memory;
}

TEST(ArenaLayoutTest, ScheduleBuffersMatchTheSimulator) {
  for (uint64_t seed = 0; seed < 12; ++seed) {
    SCOPED_TRACE(seed);
    TrainingGraph graph =
        seed % 2 ? makeRandomTrainingDag(20, seed) : makeRandomChain(8, seed);
    // The second half with workspace.
    PlanningProblem problem =
        makeProblem(seed < 6 ? std::move(graph)
                             : addRandomWorkspace(std::move(graph), seed),
                    1.0);
    for (const Schedule &schedule :
         {makeUnplannedSchedule(problem.graph),
          makeOffloadEverythingSchedule(problem.graph),
          makeRecomputeSchedule(problem.graph)}) {
      SimulationResult simulation = simulate(problem, schedule);
      ASSERT_TRUE(simulation.valid) << simulation.error;
      ScheduleBuffers buffers = getScheduleBuffers(problem, schedule);
      ASSERT_TRUE(buffers.valid) << buffers.error;
      EXPECT_EQ(sumPerStep(buffers.device, schedule.size()), simulation.memory);
      EXPECT_EQ(computeLivenessPeak(buffers.device, 1), simulation.peakBytes);
      // Versions of values, then one workspace per compute that has one,
      // held at that compute's step.
      size_t workspaces = 0;
      for (const ArenaBuffer &buffer : buffers.device) {
        if (buffer.node >= 0) {
          ++workspaces;
          EXPECT_EQ(buffer.value, -1);
          EXPECT_EQ(buffer.bytes,
                    problem.graph.nodes[buffer.node].workspaceBytes);
          EXPECT_EQ(buffer.firstStep, buffer.lastStep);
          EXPECT_EQ(schedule[buffer.firstStep], Step::compute(buffer.node));
          continue;
        }
        EXPECT_EQ(workspaces, 0u) << "a value after the workspaces";
        ASSERT_GE(buffer.value, 0);
        EXPECT_EQ(buffer.bytes, problem.graph.values[buffer.value].bytes);
      }
      size_t computesWithWorkspace = std::count_if(
          schedule.begin(), schedule.end(), [&](const Step &step) {
            return step.kind == StepKind::Compute &&
                   problem.graph.nodes[step.id].workspaceBytes > 0;
          });
      EXPECT_EQ(workspaces, computesWithWorkspace);
      if (seed >= 6) {
        EXPECT_GT(workspaces, 0u);
      }
      // Host copies are kept to the end.
      int64_t hostBytes = 0;
      for (const ArenaBuffer &buffer : buffers.host) {
        EXPECT_EQ(buffer.lastStep, static_cast<int64_t>(schedule.size()));
        hostBytes += buffer.bytes;
      }
      EXPECT_EQ(hostBytes, simulation.hostPeakBytes);
      EXPECT_EQ(hostBytes, simulation.offloadedBytes);
      ArenaLayout device = layOutArena(buffers.device);
      expectValidLayout(buffers.device, device, 256);
      ArenaLayout host = layOutArena(buffers.host);
      expectValidLayout(buffers.host, host, 256);
      EXPECT_EQ(host.arenaBytes, host.peakBytes);
    }
  }
  // The recomputed value has two versions.
  PlanningProblem problem = makeProblem(makeRandomChain(4, 1), 1.0);
  ScheduleBuffers buffers =
      getScheduleBuffers(problem, makeRecomputeSchedule(problem.graph));
  int output = problem.graph.nodes[0].outputs[0];
  EXPECT_EQ(std::count_if(buffers.device.begin(), buffers.device.end(),
                          [&](const ArenaBuffer &buffer) {
                            return buffer.value == output;
                          }),
            2);
}

TEST(ArenaLayoutTest, InvalidScheduleHasNoBuffers) {
  PlanningProblem problem = makeProblem(makeRandomChain(3, 0), 1.0);
  Schedule schedule = {Step::compute(1)};
  ScheduleBuffers buffers = getScheduleBuffers(problem, schedule);
  EXPECT_FALSE(buffers.valid);
  EXPECT_EQ(buffers.error, simulate(problem, schedule).error);
  EXPECT_TRUE(buffers.device.empty());
  EXPECT_TRUE(buffers.host.empty());
}

TEST(ArenaLayoutTest, GeneratedStepsWithinThreePercentOfThePeak) {
  for (int size : {3, 10, 30, 100, 300}) {
    for (uint64_t seed = 0; seed < (size <= 30 ? 25u : 3u); ++seed) {
      for (bool chain : {true, false}) {
        SCOPED_TRACE(std::string(chain ? "chain " : "dag ") +
                     std::to_string(size) + " seed " + std::to_string(seed));
        PlanningProblem problem =
            makeProblem(chain ? makeRandomChain(size, seed)
                              : makeRandomTrainingDag(size, seed),
                        1.0);
        Schedule schedule = makeUnplannedSchedule(problem.graph);
        ScheduleBuffers buffers = getScheduleBuffers(problem, schedule);
        ASSERT_TRUE(buffers.valid) << buffers.error;
        ArenaLayout layout = layOutArena(buffers.device);
        expectValidLayout(buffers.device, layout, 256);
        EXPECT_LE(static_cast<double>(layout.arenaBytes),
                  1.03 * static_cast<double>(layout.peakBytes));
        // Alignment only rounds up the 4-byte loss.
        EXPECT_GE(layout.peakBytes, simulate(problem, schedule).peakBytes);
        EXPECT_LE(layout.peakBytes,
                  simulate(problem, schedule).peakBytes + 256);
      }
    }
  }
}

/// Reads `bytes first last` lines, skipping `#` comments.
std::vector<ArenaBuffer> readBuffers(const std::string &name) {
  std::ifstream file(std::string(LETHE_PLANNING_INPUTS) + "/" + name);
  EXPECT_TRUE(file) << "cannot read " << name;
  std::vector<ArenaBuffer> buffers;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream fields(line);
    ArenaBuffer buffer;
    EXPECT_TRUE(fields >> buffer.bytes >> buffer.firstStep >> buffer.lastStep)
        << line;
    buffers.push_back(buffer);
  }
  return buffers;
}

TEST(ArenaLayoutTest, BranchAndBoundReachesThePeakWhereGreedyDoesNot) {
  std::vector<ArenaBuffer> buffers =
      readBuffers("transformer-grad-greedy.buffers");
  ASSERT_EQ(buffers.size(), 176u);
  ArenaLayout greedy = layOutArena(buffers, 256, /*search=*/false);
  ArenaLayout searched = layOutArena(buffers);
  expectValidLayout(buffers, searched, 256);
  EXPECT_EQ(searched.peakBytes, 8192);
  EXPECT_GT(greedy.arenaBytes, searched.peakBytes);
  EXPECT_EQ(searched.arenaBytes, searched.peakBytes);
}

TEST(ArenaLayoutTest, Deterministic) {
  std::vector<ArenaBuffer> buffers = makeRandomBuffers(200, 60, 5);
  ArenaLayout first = layOutArena(buffers);
  ArenaLayout second = layOutArena(buffers);
  EXPECT_EQ(first.offsets, second.offsets);
  EXPECT_EQ(first.arenaBytes, second.arenaBytes);
}

} // namespace
