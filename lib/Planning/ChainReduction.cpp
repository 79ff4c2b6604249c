//===- ChainReduction.cpp - A training step as a chain of stages ----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/ChainReduction.h"

#include <algorithm>
#include <limits>

using namespace lethe::planning;

namespace {

/// The peak of a run with no node: it measures nothing, whatever is added.
constexpr int64_t kNoStep = std::numeric_limits<int64_t>::min() / 4;

/// What a value is to the model (see the header's file comment).
enum class ValueRole { Outside, Chain, StepOutput, ForwardOnly };

/// The simulator's memory over one run of nodes, counting the values the
/// model tracks as the simulator frees them (after their last read in the
/// run, unless kept), each node's workspace while it runs, plus a background
/// given per node.
class RunModel {
public:
  struct Run {
    const std::vector<int> *nodes = nullptr;
    /// Tracked values resident when the run starts.
    std::vector<int> initial;
    /// Values made by the run that are tracked (per value).
    const std::vector<char> *tracked = nullptr;
    /// Tracked values not freed after their last read.
    std::vector<int> kept;
    /// Memory outside the tracked values at each node (indexed by node),
    /// plus a constant.
    const std::vector<int64_t> *background = nullptr;
    int64_t backgroundOffset = 0;
  };

  explicit RunModel(const TrainingGraph &graph)
      : graph(graph), lastRead(graph.values.size(), kUnseen),
        madeAt(graph.values.size(), kUnseen), isKept(graph.values.size(), 0) {}

  /// The peak of `run`, or kNoStep when it runs no node.
  int64_t peak(const Run &run) {
    const std::vector<int> &nodes = *run.nodes;
    int count = static_cast<int>(nodes.size());
    if (count == 0)
      return kNoStep;
    touched.clear();
    auto touch = [&](int value, int index, bool made) {
      if (lastRead[value] == kUnseen) {
        touched.push_back(value);
        madeAt[value] = made ? index : 0;
        lastRead[value] = index;
      } else {
        lastRead[value] = std::max(lastRead[value], index);
      }
    };
    for (int value : run.initial)
      touch(value, -1, false);
    for (int index = 0; index < count; ++index) {
      const GraphNode &node = graph.nodes[nodes[index]];
      for (int value : node.inputs)
        if (lastRead[value] != kUnseen)
          touch(value, index, false);
      for (int value : node.outputs)
        if ((*run.tracked)[value])
          touch(value, index, true);
    }
    for (int value : run.kept)
      isKept[value] = 1;
    std::vector<int64_t> delta(count + 1, 0);
    for (int value : touched) {
      int64_t bytes = graph.values[value].bytes;
      delta[madeAt[value]] += bytes;
      if (!isKept[value])
        delta[std::max(lastRead[value], -1) + 1] -= bytes;
    }
    int64_t alive = 0, peak = kNoStep;
    for (int index = 0; index < count; ++index) {
      alive += delta[index];
      int64_t here = alive + run.backgroundOffset +
                     graph.nodes[nodes[index]].workspaceBytes +
                     (run.background ? (*run.background)[nodes[index]] : 0);
      peak = std::max(peak, here);
    }
    for (int value : touched)
      lastRead[value] = madeAt[value] = kUnseen;
    for (int value : run.kept)
      isKept[value] = 0;
    return peak;
  }

private:
  static constexpr int kUnseen = std::numeric_limits<int>::min();
  const TrainingGraph &graph;
  std::vector<int> lastRead, madeAt;
  std::vector<char> isKept;
  std::vector<int> touched;
};

/// Builds the chain: cuts, attribution and the model of each stage.
class ChainBuilder {
public:
  explicit ChainBuilder(const TrainingGraph &graph)
      : graph(graph), numNodes(static_cast<int>(graph.nodes.size())),
        numValues(static_cast<int>(graph.values.size())) {}

  bool build(ChainReduction &chain, std::string &error, int maxStages);

private:
  /// Forward nodes and values that depend on the step's data (directly or
  /// through other forward values): the chain nodes and values.
  void classifyForward();
  /// Makes chain nodes of the forward nodes that do not depend on the data
  /// but whose values only their stage reads (its forward and its backward
  /// block), with the layout of the current cuts. Says whether it made any.
  bool localizeConstants();
  std::vector<int> findCuts(std::vector<int> &crossing) const;
  /// Lays out stages for `cuts` and attributes the other nodes.
  void layOut(const std::vector<int> &cuts, const std::vector<int> &crossing);
  /// The indices of the cuts to drop so that no backward block reads a value
  /// older than its stage's input.
  std::vector<bool> findLongReads() const;
  /// Chain values and step outputs, and each stage's kept values and
  /// recompute lists.
  void describeStages();
  /// Values outside the chain: forward-only ones, and those a recompute
  /// may read after their unplanned last read.
  void classifyOutside();
  void computeBackground();
  void measureStage(int stage);
  std::vector<int> ancestors(int stage, const std::vector<int> &targets);

  const TrainingGraph &graph;
  int numNodes, numValues, numForward = 0;
  /// Forward nodes that depend on the step's data, and the values they make
  /// that are not step outputs.
  std::vector<bool> isChainNode, isChainValue;
  ChainReduction result;
  int numStages = 0;
  std::vector<int> stageOfValue;
  std::vector<ValueRole> role;
  /// Forward nodes some recompute of their stage runs, and those its last
  /// run (keeping everything but the output) runs.
  std::vector<bool> isRecomputed, isInLastRun;
  /// For a value outside the chain that a recompute may read after its last
  /// unplanned read: the first block before which one may, else -1.
  std::vector<int> recomputeReader;
  /// The first node of each backward block, or of the next block to run
  /// when it is empty (numNodes when none is left): recomputes for block s
  /// run right before it.
  std::vector<int> blockStart;
  /// Memory outside the chain in the unplanned step at and right after each
  /// node, forward-only values and step outputs left out.
  std::vector<int64_t> outsideAt, outsideAfter;
  /// Memory outside the chain during the first computation of each forward
  /// node, as the stage models see it.
  std::vector<int64_t> firstBackground;
  /// Bytes of the step outputs of stages s and later, and of the values a
  /// recompute for block s may still read.
  std::vector<int64_t> laterStepOutputBytes, recomputeReadBytes;
  /// Values a stage's model tracks that its forward makes: chain values,
  /// step outputs, forward-only values made in the stage.
  std::vector<char> madeByStage;
};

void ChainBuilder::classifyForward() {
  std::vector<bool> dependsOnData(numValues, false);
  for (int value = 0; value < numValues; ++value) {
    const GraphValue &v = graph.values[value];
    dependsOnData[value] = v.producer < 0 && v.kind != ValueKind::Parameter &&
                           v.kind != ValueKind::OptimizerState;
  }
  isChainNode.assign(numNodes, false);
  for (int node = 0; node < numForward; ++node) {
    const GraphNode &n = graph.nodes[node];
    bool dependent = false;
    for (int value : n.inputs)
      dependent = dependent || dependsOnData[value];
    isChainNode[node] = dependent;
    for (int value : n.outputs)
      dependsOnData[value] = dependent;
  }
  isChainValue.assign(numValues, false);
  for (int value = 0; value < numValues; ++value) {
    const GraphValue &v = graph.values[value];
    isChainValue[value] = v.producer >= 0 && v.producer < numForward &&
                          dependsOnData[value] && !v.isOutput;
  }
}

bool ChainBuilder::localizeConstants() {
  bool changed = false;
  for (int node = 0; node < numForward; ++node) {
    if (isChainNode[node])
      continue;
    int stage = result.stageOfNode[node];
    bool local = true;
    for (int value : graph.nodes[node].outputs) {
      local = local && !graph.values[value].isOutput;
      for (int user : graph.values[value].users)
        local = local && result.stageOfNode[user] == stage;
    }
    if (!local)
      continue;
    isChainNode[node] = true;
    for (int value : graph.nodes[node].outputs)
      isChainValue[value] = true;
    changed = true;
  }
  return changed;
}

std::vector<int> ChainBuilder::findCuts(std::vector<int> &crossing) const {
  // Chain value v (made by forward node p, last read by forward node q)
  // crosses every cut in (p, q]. Count them and sum their ids, so that a cut
  // crossed by one value knows which.
  std::vector<int64_t> count(numForward + 2, 0), idSum(numForward + 2, 0);
  for (int value = 0; value < numValues; ++value) {
    if (!isChainValue[value])
      continue;
    const GraphValue &v = graph.values[value];
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
  std::vector<int> cuts;
  crossing.clear();
  int64_t runningCount = 0, runningSum = 0;
  for (int position = 0; position < numForward; ++position) {
    runningCount += count[position];
    runningSum += idSum[position];
    // No cut right before the last forward node: the loss ends a block. A
    // value crossing two cuts in a row would be both input and output of
    // the block between them: keep the first.
    int value = static_cast<int>(runningSum);
    if (position >= 1 && position <= numForward - 2 && runningCount == 1 &&
        (crossing.empty() || crossing.back() != value)) {
      cuts.push_back(position);
      crossing.push_back(value);
    }
  }
  return cuts;
}

void ChainBuilder::layOut(const std::vector<int> &cuts,
                          const std::vector<int> &crossing) {
  numStages = static_cast<int>(cuts.size()) + 1;
  result = ChainReduction();
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
  stageOfValue.assign(numValues, -1);
  for (int value = 0; value < numValues; ++value)
    if (isChainValue[value])
      stageOfValue[value] = result.stageOfNode[graph.values[value].producer];

  // A node reading chain values belongs to the latest stage read by it or by
  // a later node; one reading none follows the node before it.
  std::vector<int> latestRead(numNodes + 1, -1);
  for (int node = numNodes - 1; node >= numForward; --node) {
    int read = latestRead[node + 1];
    for (int value : graph.nodes[node].inputs)
      read = std::max(read, stageOfValue[value]);
    latestRead[node] = read;
  }
  int current = numStages - 1;
  for (int node = numForward; node < numNodes; ++node) {
    bool readsChain = false;
    for (int value : graph.nodes[node].inputs)
      readsChain = readsChain || isChainValue[value];
    if (readsChain)
      current = latestRead[node];
    result.stageOfNode[node] = current;
    result.stages[current].backwardNodes.push_back(node);
  }
}

std::vector<bool> ChainBuilder::findLongReads() const {
  std::vector<bool> drop(std::max(numStages - 1, 0), false);
  for (int node = numForward; node < numNodes; ++node) {
    int block = result.stageOfNode[node];
    for (int value : graph.nodes[node].inputs) {
      int stage = stageOfValue[value];
      if (stage < 0 || stage == block)
        continue;
      bool isBoundary = result.stages[stage].outputValue == value;
      if (isBoundary && stage == block - 1)
        continue;
      // Merge the stages from the value's (from the next, for an output) to
      // the block's.
      for (int cut = isBoundary ? stage + 1 : stage; cut < block; ++cut)
        drop[cut] = true;
    }
  }
  return drop;
}

void ChainBuilder::describeStages() {
  role.assign(numValues, ValueRole::Outside);
  for (int value = 0; value < numValues; ++value) {
    const GraphValue &v = graph.values[value];
    if (isChainValue[value]) {
      role[value] = ValueRole::Chain;
      continue;
    }
    // A step output of a chain node read only by its stage's forward: the
    // version of the last run is returned.
    if (v.producer < 0 || v.producer >= numForward || !isChainNode[v.producer])
      continue;
    int stage = result.stageOfNode[v.producer];
    bool local = true;
    for (int user : v.users)
      local = local && user < numForward && result.stageOfNode[user] == stage;
    if (local) {
      role[value] = ValueRole::StepOutput;
      stageOfValue[value] = stage;
    }
  }

  isRecomputed.assign(numNodes, false);
  isInLastRun.assign(numNodes, false);
  for (int stage = 0; stage < numStages; ++stage) {
    ChainStage &s = result.stages[stage];
    for (int node : s.forwardNodes)
      s.forwardSeconds += graph.nodes[node].seconds;
    for (int node : s.backwardNodes) {
      s.backwardSeconds += graph.nodes[node].seconds;
      for (int value : graph.nodes[node].inputs) {
        if (value == s.inputValue)
          s.backwardReadsInput = true;
        if (role[value] == ValueRole::Chain && stageOfValue[value] == stage &&
            std::find(s.keptValues.begin(), s.keptValues.end(), value) ==
                s.keptValues.end())
          s.keptValues.push_back(value);
      }
    }
    std::sort(s.keptValues.begin(), s.keptValues.end());
    s.backwardReadsOutput =
        s.outputValue >= 0 &&
        std::binary_search(s.keptValues.begin(), s.keptValues.end(),
                           s.outputValue);
    for (int node : s.forwardNodes)
      for (int value : graph.nodes[node].outputs)
        if (role[value] == ValueRole::StepOutput)
          s.stepOutputValues.push_back(value);

    // A recompute runs what the mode's kept values need: the output, plus
    // for the runs keeping everything the kept values and the step outputs
    // (so that the version returned is the last run's).
    std::vector<int> targets[kNumForwardModes];
    if (s.outputValue >= 0)
      targets[0].push_back(s.outputValue);
    targets[1] = targets[0];
    targets[3] = s.keptValues;
    targets[3].insert(targets[3].end(), s.stepOutputValues.begin(),
                      s.stepOutputValues.end());
    targets[2] = targets[3];
    targets[2].insert(targets[2].end(), targets[0].begin(), targets[0].end());
    for (int mode = 0; mode < kNumForwardModes; ++mode) {
      s.recomputeNodes[mode] = ancestors(stage, targets[mode]);
      s.canRecompute[mode] = true;
      for (int node : s.recomputeNodes[mode]) {
        const GraphNode &n = graph.nodes[node];
        bool pinned = false;
        for (int value : n.outputs)
          pinned = pinned || role[value] == ValueRole::Outside;
        for (int value : n.inputs)
          s.recomputeReadsInput[mode] |= value == s.inputValue;
        s.canRecompute[mode] =
            s.canRecompute[mode] && n.recomputable && !pinned;
        s.recomputeSeconds[mode] += n.seconds;
        // The last stage is never recomputed.
        isRecomputed[node] = stage + 1 < numStages;
        if (mode == static_cast<int>(ForwardMode::AllWithoutOutput))
          isInLastRun[node] = isRecomputed[node];
      }
    }
  }
}

void ChainBuilder::classifyOutside() {
  recomputeReader.assign(numValues, -1);
  madeByStage.assign(numValues, 0);
  for (int value = 0; value < numValues; ++value) {
    const GraphValue &v = graph.values[value];
    if (role[value] != ValueRole::Outside || v.isOutput)
      continue;
    // The stages whose recomputes read it; the first block before which one
    // may (a stage is recomputed before its own block only by the run
    // keeping everything but the output); whether anything but the forward
    // nodes up to the latest of those stages reads it.
    int earliest = numStages, latest = -1, firstGap = numStages;
    bool forwardOnly = true;
    for (int user : v.users) {
      if (user >= numForward) {
        forwardOnly = false;
        continue;
      }
      if (!isRecomputed[user])
        continue;
      int stage = result.stageOfNode[user];
      earliest = std::min(earliest, stage);
      latest = std::max(latest, stage);
      firstGap = std::min(firstGap, isInLastRun[user] ? stage : stage + 1);
    }
    if (latest < 0)
      continue;
    if (forwardOnly && earliest == latest &&
        result.stageOfNode[v.users.back()] <= latest) {
      ChainStage &s = result.stages[latest];
      role[value] = ValueRole::ForwardOnly;
      stageOfValue[value] = latest;
      (firstGap == latest ? s.forwardOnlyValues : s.outputForwardOnlyValues)
          .push_back(value);
      continue;
    }
    recomputeReader[value] = firstGap;
  }
  for (int value = 0; value < numValues; ++value) {
    int producer = graph.values[value].producer;
    if (producer >= 0 && producer < numForward && stageOfValue[value] >= 0 &&
        result.stageOfNode[producer] == stageOfValue[value])
      madeByStage[value] = 1;
  }
}

void ChainBuilder::computeBackground() {
  blockStart.assign(numStages, numNodes);
  for (int node = numNodes - 1; node >= numForward; --node)
    blockStart[result.stageOfNode[node]] = node;
  for (int stage = 1; stage < numStages; ++stage)
    blockStart[stage] = std::min(blockStart[stage], blockStart[stage - 1]);

  // Value v lives in the unplanned step from its producer (0 for inputs) to
  // its last read (the end for outputs): at nodes [alloc, lastAt] and right
  // after nodes [alloc, lastAt - 1].
  std::vector<int64_t> atDelta(numNodes + 2, 0), afterDelta(numNodes + 2, 0),
      forwardOnlyDelta(numNodes + 2, 0), ownDelta(numNodes + 2, 0),
      recomputeDelta(numStages + 1, 0);
  for (int value = 0; value < numValues; ++value) {
    const GraphValue &v = graph.values[value];
    if (role[value] == ValueRole::Chain || role[value] == ValueRole::StepOutput)
      continue;
    int alloc = std::max(v.producer, 0);
    int lastAt = v.isOutput        ? numNodes
                 : v.users.empty() ? alloc
                                   : std::max(alloc, v.users.back());
    if (role[value] == ValueRole::ForwardOnly) {
      forwardOnlyDelta[alloc] += v.bytes;
      forwardOnlyDelta[lastAt + 1] -= v.bytes;
      // Alive at the nodes of its own stage from its making.
      int first = std::max(
          alloc, result.stages[stageOfValue[value]].forwardNodes.front());
      if (first <= lastAt) {
        ownDelta[first] += v.bytes;
        ownDelta[lastAt + 1] -= v.bytes;
      }
      continue;
    }
    afterDelta[alloc] += v.bytes;
    afterDelta[lastAt] -= v.bytes;
    // A recompute of stage r reading it comes before backward block r:
    // count it, conservatively, at every node before that block and in the
    // gaps of blocks r and later where the unplanned step has freed it.
    if (int reader = recomputeReader[value];
        reader >= 0 && reader < numStages) {
      lastAt = std::max(lastAt, blockStart[reader] - 1);
      int stage = reader;
      while (stage < numStages && blockStart[stage] - 1 >= v.users.back())
        ++stage;
      recomputeDelta[reader] += v.bytes;
      recomputeDelta[stage] -= v.bytes;
    }
    atDelta[alloc] += v.bytes;
    atDelta[lastAt + 1] -= v.bytes;
  }
  outsideAt.assign(numNodes, 0);
  outsideAfter.assign(numNodes, 0);
  firstBackground.assign(numNodes, 0);
  int64_t at = 0, after = 0, forwardOnly = 0, own = 0;
  for (int node = 0; node < numNodes; ++node) {
    at += atDelta[node];
    after += afterDelta[node];
    forwardOnly += forwardOnlyDelta[node];
    own += ownDelta[node];
    outsideAt[node] = at;
    outsideAfter[node] = after;
    // Forward-only values of later stages are resident as in the unplanned
    // step; the stage's own are tracked by its model, earlier ones held by
    // callers.
    if (node < numForward)
      firstBackground[node] = at + forwardOnly - own;
  }
  laterStepOutputBytes.assign(numStages + 1, 0);
  for (int value = 0; value < numValues; ++value)
    if (role[value] == ValueRole::StepOutput)
      laterStepOutputBytes[stageOfValue[value]] += graph.values[value].bytes;
  for (int stage = numStages - 1; stage >= 0; --stage)
    laterStepOutputBytes[stage] += laterStepOutputBytes[stage + 1];
  recomputeReadBytes.assign(numStages, 0);
  int64_t running = 0;
  for (int stage = 0; stage < numStages; ++stage) {
    running += recomputeDelta[stage];
    recomputeReadBytes[stage] = running;
  }
}

std::vector<int> ChainBuilder::ancestors(int stage,
                                         const std::vector<int> &targets) {
  const std::vector<int> &forwardNodes = result.stages[stage].forwardNodes;
  std::vector<char> wanted(numValues, 0);
  for (int value : targets)
    wanted[value] = 1;
  std::vector<int> needed;
  for (auto it = forwardNodes.rbegin(); it != forwardNodes.rend(); ++it) {
    const GraphNode &node = graph.nodes[*it];
    if (!isChainNode[*it])
      continue;
    bool makesTarget = false;
    for (int output : node.outputs)
      makesTarget = makesTarget || wanted[output];
    if (!makesTarget)
      continue;
    needed.push_back(*it);
    for (int input : node.inputs)
      if (role[input] == ValueRole::Chain ||
          role[input] == ValueRole::StepOutput)
        wanted[input] = 1;
  }
  std::reverse(needed.begin(), needed.end());
  return needed;
}

void ChainBuilder::measureStage(int stage) {
  ChainStage &s = result.stages[stage];
  auto bytesOf = [&](const std::vector<int> &values) {
    int64_t bytes = 0;
    for (int value : values)
      bytes += graph.values[value].bytes;
    return bytes;
  };
  s.inputBytes = s.inputValue >= 0 ? graph.values[s.inputValue].bytes : 0;
  s.outputBytes = s.outputValue >= 0 ? graph.values[s.outputValue].bytes : 0;
  s.heldAllBytes = bytesOf(s.keptValues) + bytesOf(s.stepOutputValues);
  s.forwardOnlyBytes = bytesOf(s.forwardOnlyValues);
  s.outputForwardOnlyBytes = bytesOf(s.outputForwardOnlyValues);

  // What each run keeps to its end: the output and the forward-only values
  // for later runs (those of the output only if a later run makes it), or
  // what the backward reads and the step outputs.
  std::vector<int> output;
  if (s.outputValue >= 0)
    output.push_back(s.outputValue);
  std::vector<int> keepOutput[2];
  keepOutput[1] = output;
  keepOutput[1].insert(keepOutput[1].end(), s.forwardOnlyValues.begin(),
                       s.forwardOnlyValues.end());
  keepOutput[0] = keepOutput[1];
  keepOutput[0].insert(keepOutput[0].end(), s.outputForwardOnlyValues.begin(),
                       s.outputForwardOnlyValues.end());
  std::vector<int> keepAllWithoutOutput = s.keptValues;
  keepAllWithoutOutput.insert(keepAllWithoutOutput.end(),
                              s.stepOutputValues.begin(),
                              s.stepOutputValues.end());
  std::vector<int> keepAll = keepAllWithoutOutput;
  if (s.outputValue >= 0 && !s.backwardReadsOutput)
    keepAll.push_back(s.outputValue);
  // Forward-only values resident when a run starts: in a first computation
  // those made before the stage, in a recompute all of them (the output's
  // only if the run makes the output).
  std::vector<int> allForwardOnly = s.forwardOnlyValues;
  allForwardOnly.insert(allForwardOnly.end(), s.outputForwardOnlyValues.begin(),
                        s.outputForwardOnlyValues.end());
  std::vector<int> residentFirst;
  for (int value : allForwardOnly)
    if (!madeByStage[value])
      residentFirst.push_back(value);

  RunModel model(graph);
  for (int mode = 0; mode < kNumForwardModes; ++mode) {
    bool keepsAll = mode >= static_cast<int>(ForwardMode::All);
    for (int use = 0; use < kNumInputUses; ++use) {
      for (int end = 0; end < 2; ++end) {
        const std::vector<int> &kept =
            !keepsAll                                    ? keepOutput[end]
            : mode == static_cast<int>(ForwardMode::All) ? keepAll
                                                         : keepAllWithoutOutput;
        RunModel::Run run;
        run.tracked = &madeByStage;
        if (use == static_cast<int>(InputUse::Freed) && s.inputValue >= 0)
          run.initial.push_back(s.inputValue);
        size_t inputs = run.initial.size();
        // First computation: every forward node, the memory outside the
        // chain as the unplanned step has it.
        run.nodes = &s.forwardNodes;
        run.initial.insert(run.initial.end(), residentFirst.begin(),
                           residentFirst.end());
        run.kept = keepsAll ? keepAll : kept;
        run.background = &firstBackground;
        s.firstPeakBytes[mode][use][end] = model.peak(run);
        // Recompute.
        run.nodes = &s.recomputeNodes[mode];
        run.initial.resize(inputs);
        run.initial.insert(run.initial.end(), s.forwardOnlyValues.begin(),
                           s.forwardOnlyValues.end());
        if (mode != static_cast<int>(ForwardMode::AllWithoutOutput))
          run.initial.insert(run.initial.end(),
                             s.outputForwardOnlyValues.begin(),
                             s.outputForwardOnlyValues.end());
        run.kept = kept;
        run.background = nullptr;
        s.recomputePeakBytes[mode][use][end] = model.peak(run);
      }
    }
  }
  // The backward block: the kept values resident at its start, the memory
  // outside the chain as unplanned but for the step outputs of earlier
  // stages, which are either not made yet or held by a caller.
  for (int use = 0; use < kNumInputUses; ++use) {
    RunModel::Run run;
    run.nodes = &s.backwardNodes;
    run.initial = s.keptValues;
    if (use == static_cast<int>(InputUse::Freed) && s.inputValue >= 0)
      run.initial.push_back(s.inputValue);
    run.tracked = &madeByStage;
    run.background = &outsideAt;
    run.backgroundOffset = laterStepOutputBytes[stage];
    s.backwardPeakBytes[use] = model.peak(run);
  }
  // Recomputes before this block see what the unplanned step holds after
  // the later blocks, the step outputs of later stages and what a recompute
  // may still read.
  s.gapBytes = outsideAfter[blockStart[stage] - 1] +
               laterStepOutputBytes[stage + 1] + recomputeReadBytes[stage];
}

bool ChainBuilder::build(ChainReduction &chain, std::string &error,
                         int maxStages) {
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

  classifyForward();
  std::vector<int> crossing;
  std::vector<int> cuts = findCuts(crossing);
  layOut(cuts, crossing);
  // Merging blocks never makes a read long, so one round suffices.
  std::vector<bool> drop = findLongReads();
  if (std::find(drop.begin(), drop.end(), true) != drop.end()) {
    std::vector<int> keptCuts, keptCrossing;
    for (size_t cut = 0; cut < cuts.size(); ++cut)
      if (!drop[cut]) {
        keptCuts.push_back(cuts[cut]);
        keptCrossing.push_back(crossing[cut]);
      }
    cuts = std::move(keptCuts);
    crossing = std::move(keptCrossing);
    layOut(cuts, crossing);
  }
  if (maxStages > 0 && numStages > maxStages) {
    std::vector<int> keptCuts, keptCrossing;
    for (int group = 1; group < maxStages; ++group) {
      int index = static_cast<int>(static_cast<int64_t>(group) * numStages /
                                   maxStages) -
                  1;
      keptCuts.push_back(cuts[index]);
      keptCrossing.push_back(crossing[index]);
    }
    layOut(keptCuts, keptCrossing);
    cuts = std::move(keptCuts);
    crossing = std::move(keptCrossing);
  }
  // Values that do not depend on the data but are read within one stage
  // only join its chain values, so that plans may drop and remake them
  // (this moves no node to another stage).
  if (localizeConstants())
    layOut(cuts, crossing);

  describeStages();
  classifyOutside();
  computeBackground();
  for (int stage = 0; stage < numStages; ++stage)
    measureStage(stage);
  chain = std::move(result);
  return true;
}

} // namespace

bool lethe::planning::reduceToChain(const TrainingGraph &graph,
                                    ChainReduction &chain, std::string &error,
                                    int maxStages) {
  return ChainBuilder(graph).build(chain, error, maxStages);
}
