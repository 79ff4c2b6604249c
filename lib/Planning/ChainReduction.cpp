//===- ChainReduction.cpp - A training step as a chain of stages ----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/ChainReduction.h"

#include <algorithm>

using namespace lethe::planning;

namespace {

/// What the model builder knows about the graph.
struct GraphFacts {
  const TrainingGraph &graph;
  /// Made by a forward node and not an output: what the chain holds.
  std::vector<bool> isChainValue;
  std::vector<int> stageOfValue;
  /// Memory outside the chain at each step of the unplanned schedule, and
  /// right after it.
  std::vector<int64_t> backgroundAt;
  std::vector<int64_t> backgroundAfter;
};

/// The peak of running `nodes` (in order) of one stage: `background` (per
/// node, or none) plus the stage's values alive, each freed after its last
/// read in `nodes` unless in `kept`; the stage input counts until its last
/// read unless `inputHeld` (then the caller counts it). `initial` values are
/// resident at the start.
int64_t runPeak(const GraphFacts &facts, const std::vector<int> &nodes,
                const std::vector<int> &initial, const std::vector<int> &kept,
                int input, bool inputHeld,
                const std::vector<int64_t> *background) {
  const TrainingGraph &graph = facts.graph;
  // Bytes per tracked value and when it is last read; tracked values are
  // chain values made by `nodes`, those in `initial`, and the input.
  std::vector<std::pair<int, int>> lastRead; // (value, index)
  auto findLast = [&](int value) -> int * {
    for (auto &entry : lastRead)
      if (entry.first == value)
        return &entry.second;
    return nullptr;
  };
  auto track = [&](int value, int index) {
    if (int *last = findLast(value))
      *last = std::max(*last, index);
    else
      lastRead.push_back({value, index});
  };
  for (int value : initial)
    track(value, -1);
  if (input >= 0 && !inputHeld)
    track(input, -1);
  for (size_t index = 0; index < nodes.size(); ++index) {
    const GraphNode &node = graph.nodes[nodes[index]];
    for (int value : node.inputs)
      if (findLast(value))
        track(value, static_cast<int>(index));
    for (int value : node.outputs)
      if (facts.isChainValue[value])
        track(value, static_cast<int>(index));
  }
  auto isKept = [&](int value) {
    return std::find(kept.begin(), kept.end(), value) != kept.end();
  };
  int64_t alive = 0, peak = 0;
  std::vector<int> aliveValues;
  for (int value : initial) {
    alive += graph.values[value].bytes;
    aliveValues.push_back(value);
  }
  if (input >= 0 && !inputHeld) {
    alive += graph.values[input].bytes;
    aliveValues.push_back(input);
  }
  for (size_t index = 0; index < nodes.size(); ++index) {
    const GraphNode &node = graph.nodes[nodes[index]];
    for (int value : node.outputs)
      if (facts.isChainValue[value]) {
        alive += graph.values[value].bytes;
        aliveValues.push_back(value);
      }
    int64_t here = alive + (background ? (*background)[nodes[index]] : 0);
    peak = std::max(peak, here);
    for (size_t k = 0; k < aliveValues.size();) {
      int value = aliveValues[k];
      int *last = findLast(value);
      if (last && *last <= static_cast<int>(index) && !isKept(value)) {
        alive -= graph.values[value].bytes;
        aliveValues.erase(aliveValues.begin() + k);
      } else {
        ++k;
      }
    }
  }
  return peak;
}

/// The stage's forward nodes needed to make `targets`, in order.
std::vector<int> ancestorsInStage(const TrainingGraph &graph,
                                  const std::vector<int> &forwardNodes,
                                  std::vector<int> targets) {
  std::vector<int> needed;
  for (auto it = forwardNodes.rbegin(); it != forwardNodes.rend(); ++it) {
    const GraphNode &node = graph.nodes[*it];
    bool makesTarget = false;
    for (int output : node.outputs)
      if (std::find(targets.begin(), targets.end(), output) != targets.end())
        makesTarget = true;
    if (!makesTarget)
      continue;
    needed.push_back(*it);
    for (int input : node.inputs)
      targets.push_back(input);
  }
  std::reverse(needed.begin(), needed.end());
  return needed;
}

} // namespace

bool lethe::planning::reduceToChain(const TrainingGraph &graph,
                                    ChainReduction &chain, std::string &error,
                                    int maxStages) {
  int numNodes = static_cast<int>(graph.nodes.size());
  int numValues = static_cast<int>(graph.values.size());
  int numForward = 0;
  while (numForward < numNodes &&
         graph.nodes[numForward].role == NodeRole::Forward)
    ++numForward;
  if (numForward == 0) {
    error = "the training step has no forward node to cut into a chain";
    return false;
  }
  for (int node = numForward; node < numNodes; ++node)
    if (graph.nodes[node].role == NodeRole::Forward) {
      error = "forward node " + graph.nodes[node].name +
              " comes after the backward pass starts; the chain strategies "
              "need every forward node first";
      return false;
    }

  // Crossings: value v (made by forward node p, last read by forward node q)
  // crosses every cut in (p, q]. Count them and sum their ids, so that a cut
  // crossed by one value knows which.
  std::vector<int64_t> count(numForward + 2, 0), idSum(numForward + 2, 0);
  for (int value = 0; value < numValues; ++value) {
    const GraphValue &v = graph.values[value];
    if (v.producer < 0 || v.producer >= numForward)
      continue;
    int lastForward = -1;
    for (int user : v.users)
      if (user < numForward)
        lastForward = std::max(lastForward, user);
    if (lastForward <= v.producer)
      continue;
    count[v.producer + 1] += 1;
    count[lastForward + 1] -= 1;
    idSum[v.producer + 1] += value;
    idSum[lastForward + 1] -= value;
  }
  std::vector<int> cuts, crossing;
  int64_t runningCount = 0, runningSum = 0;
  for (int position = 0; position < numForward; ++position) {
    runningCount += count[position];
    runningSum += idSum[position];
    // No cut right before the last forward node: the loss ends a block.
    if (position >= 1 && position <= numForward - 2 && runningCount == 1) {
      cuts.push_back(position);
      crossing.push_back(static_cast<int>(runningSum));
    }
  }
  int numStages = static_cast<int>(cuts.size()) + 1;
  if (maxStages > 0 && numStages > maxStages) {
    std::vector<int> keptCuts, keptCrossing;
    for (int group = 1; group < maxStages; ++group) {
      int index = static_cast<int>(static_cast<int64_t>(group) * numStages /
                                   maxStages) -
                  1;
      keptCuts.push_back(cuts[index]);
      keptCrossing.push_back(crossing[index]);
    }
    cuts = std::move(keptCuts);
    crossing = std::move(keptCrossing);
    numStages = maxStages;
  }

  ChainReduction result;
  result.stages.resize(numStages);
  result.stageOfNode.assign(numNodes, -1);
  for (int stage = 0, node = 0; stage < numStages; ++stage) {
    ChainStage &s = result.stages[stage];
    int end = stage + 1 < numStages ? cuts[stage] : numForward;
    for (; node < end; ++node) {
      s.forwardNodes.push_back(node);
      result.stageOfNode[node] = stage;
    }
    s.inputValue = stage > 0 ? crossing[stage - 1] : -1;
    s.outputValue = stage + 1 < numStages ? crossing[stage] : -1;
  }

  GraphFacts facts{graph, {}, {}, {}, {}};
  facts.isChainValue.assign(numValues, false);
  facts.stageOfValue.assign(numValues, -1);
  for (int value = 0; value < numValues; ++value) {
    const GraphValue &v = graph.values[value];
    if (v.producer >= 0 && v.producer < numForward && !v.isOutput) {
      facts.isChainValue[value] = true;
      facts.stageOfValue[value] = result.stageOfNode[v.producer];
    }
  }
  std::vector<bool> isBoundary(numValues, false);
  for (const ChainStage &s : result.stages)
    if (s.outputValue >= 0)
      isBoundary[s.outputValue] = true;

  // Attribute the other nodes: the latest stage of the activations they read
  // (a boundary value only counts when nothing else is read), never later
  // than the node before.
  int current = numStages - 1;
  for (int node = numForward; node < numNodes; ++node) {
    int inner = -1, boundary = -1;
    for (int value : graph.nodes[node].inputs) {
      if (!facts.isChainValue[value])
        continue;
      int &slot = isBoundary[value] ? boundary : inner;
      slot = std::max(slot, facts.stageOfValue[value]);
    }
    int stage = inner >= 0 ? inner : boundary;
    if (stage >= 0)
      current = std::min(current, stage);
    result.stageOfNode[node] = current;
    result.stages[current].backwardNodes.push_back(node);
  }

  // Memory outside the chain in the unplanned schedule: value v lives from
  // its producer (step 0 for inputs) to its last read (the end for outputs).
  std::vector<int64_t> atDelta(numNodes + 2, 0), afterDelta(numNodes + 2, 0);
  for (int value = 0; value < numValues; ++value) {
    if (facts.isChainValue[value])
      continue;
    const GraphValue &v = graph.values[value];
    int alloc = std::max(v.producer, 0);
    int free = v.isOutput        ? numNodes
               : v.users.empty() ? alloc
                                 : std::max(alloc, v.users.back());
    atDelta[alloc] += v.bytes;
    atDelta[free + 1] -= v.bytes;
    afterDelta[alloc] += v.bytes;
    afterDelta[free] -= v.bytes;
  }
  facts.backgroundAt.resize(numNodes);
  facts.backgroundAfter.resize(numNodes);
  int64_t at = 0, after = 0;
  for (int node = 0; node < numNodes; ++node) {
    at += atDelta[node];
    after += afterDelta[node];
    facts.backgroundAt[node] = at;
    facts.backgroundAfter[node] = after;
  }

  for (int stage = 0; stage < numStages; ++stage) {
    ChainStage &s = result.stages[stage];
    for (int node : s.backwardNodes)
      for (int value : graph.nodes[node].inputs)
        if (facts.isChainValue[value] && facts.stageOfValue[value] == stage &&
            std::find(s.keptValues.begin(), s.keptValues.end(), value) ==
                s.keptValues.end())
          s.keptValues.push_back(value);
    std::sort(s.keptValues.begin(), s.keptValues.end());
    for (int node : s.forwardNodes)
      s.forwardSeconds += graph.nodes[node].seconds;
    for (int node : s.backwardNodes)
      s.backwardSeconds += graph.nodes[node].seconds;
    s.outputBytes = s.outputValue >= 0 ? graph.values[s.outputValue].bytes : 0;
    std::vector<int> all = s.keptValues;
    if (s.outputValue >= 0 &&
        std::find(all.begin(), all.end(), s.outputValue) == all.end())
      all.push_back(s.outputValue);
    for (int value : all)
      s.heldAllBytes += graph.values[value].bytes;
    std::vector<int> output;
    if (s.outputValue >= 0)
      output.push_back(s.outputValue);

    const std::vector<int> *keptByMode[kNumForwardModes] = {
        &output, &output, &all, &s.keptValues};
    const bool inputHeld[kNumForwardModes] = {true, false, true, true};
    for (int mode = 0; mode < kNumForwardModes; ++mode) {
      const std::vector<int> &kept = *keptByMode[mode];
      s.recomputeNodes[mode] = ancestorsInStage(graph, s.forwardNodes, kept);
      s.canRecompute[mode] = true;
      for (int node : s.recomputeNodes[mode]) {
        const GraphNode &n = graph.nodes[node];
        bool makesOutput = false;
        for (int value : n.outputs)
          makesOutput |= graph.values[value].isOutput;
        if (!n.recomputable || makesOutput)
          s.canRecompute[mode] = false;
        s.recomputeSeconds[mode] += n.seconds;
      }
      s.firstPeakBytes[mode] =
          runPeak(facts, s.forwardNodes, {}, kept, s.inputValue,
                  inputHeld[mode], &facts.backgroundAt);
      s.recomputePeakBytes[mode] =
          runPeak(facts, s.recomputeNodes[mode], {}, kept, s.inputValue,
                  inputHeld[mode], nullptr);
    }
    // The backward block: kept values that later backward blocks read too
    // stay resident.
    std::vector<int> stray;
    for (int value : s.keptValues)
      for (int user : graph.values[value].users)
        if (user >= numForward && result.stageOfNode[user] < stage)
          stray.push_back(value);
    s.backwardPeakBytes = runPeak(facts, s.backwardNodes, s.keptValues, stray,
                                  -1, true, &facts.backgroundAt);
  }
  // What recomputes before backward block t see: the memory outside the
  // chain right before its first node (after the blocks of later stages).
  for (int stage = 0; stage < numStages; ++stage) {
    int start = numNodes;
    for (int node = numForward; node < numNodes; ++node)
      if (result.stageOfNode[node] <= stage) {
        start = node;
        break;
      }
    result.stages[stage].gapBytes = facts.backgroundAfter[start - 1];
  }
  chain = std::move(result);
  return true;
}
