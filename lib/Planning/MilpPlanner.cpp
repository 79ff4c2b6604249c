//===- MilpPlanner.cpp - Checkmate's MILP, solved with CBC ----------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The `milp` strategy: the rematerialization MILP of Checkmate (Jain et al.
// 2020) on the general training graph, solved with CBC under the time limit.
// It plans recomputation only (no offloads), which is Checkmate's model.
//
// Stages. A plan runs the first computation of every node in the unplanned
// order. Stage t (t < n) is the recomputes after the first computation of
// node t-1, then the first computation of node t. When an output of the step
// has a recomputable producer, a final stage n holds recomputes after the
// last node (recomputing an output at the very end can lower the peak).
// Within a stage every node runs at most once, in increasing order.
//
// Variables (k, j nodes; v values; p(v) the producer of v, -1 for inputs):
//
//   R[t][k]     binary: node k runs in stage t (R[t][t] = 1)
//   S[t][v]     binary: v, made in an earlier stage, is resident entering t
//   F[t][v][k]  in [0, 1]: v is freed right after step k of stage t
//   U[t][k]     memory while step k of stage t runs, in [0, budget]
//
// Constraints:
//
//   R[t][k] <= R[t][p(v)] + S[t][v]     for every input v of k
//   S[t+1][v] <= S[t][v] + R[t][p(v)]   (S past the last stage: the outputs)
//   F[t][v][k] <= R[t][k],  F[t][v][k] <= 1 - S[t+1][v],
//   F[t][v][k] <= 1 - R[t][j]           for every user j of v after k in t
//   U[t][first] = sum_v bytes(v) S[t][v]
//                 + (bytes(outputs of first) + workspace(first)) R[t][first]
//   U[t][k] = U[t][prev] - sum_v bytes(v) F[t][v][prev]
//             - workspace(prev) R[t][prev]
//             + (bytes(outputs of k) + workspace(k)) R[t][k]
//
// and the objective is sum R[t][k] seconds(k). F appears only in the memory
// rows, where freeing more never hurts, so it needs no lower bounds and no
// integrality: at an integer R and S the solver may set it to the product
// that Checkmate's FREE is, and never above it.
//
// How it maps to the simulator (Schedule.h). A schedule is read off R: for
// each stage, its nodes in increasing order. The simulator frees a version
// of a value right after its last read, keeps outputs to the end and counts
// every input at the first step. With S set to exactly the stages that some
// later step reads a version in (or that carry an output to the end), and F
// to its bound, U at each step is the simulator's memory at that step:
// values entering the stage stay until their last read in it unless carried
// on, values made in the stage from the step that makes them, a value never
// read is freed right after its step, and so is a node's workspace (surely:
// it needs no F). Any other feasible S and F count at least as much, so
// every solution's schedule simulates within the budget.
// Inputs of the step are S[0] = 1, and values that cannot be made again
// (inputs, outputs of nodes that are not recomputable) are fixed resident
// from when they are made to their last reader.
//
// Variables that cannot matter are left out: recomputes of nodes whose
// outputs nothing reads any more, residency of values nothing reads any
// more, frees at a stage's last step. Sizes are scaled to a unit (their
// greatest common divisor, exact, unless the sizes span more than a million
// of it, in which case sizes are rounded up, conservatively) and times to
// their mean.
//
// Before building the model the strategy checks two cheap things: the
// unplanned schedule fits (then it is optimal), and no first computation
// needs more than the budget together with what must stay resident (then
// nothing fits). Then it solves a covering program (getCoverBound): which
// values to leave out at every first computation, so that enough bytes are
// left out there, each value left out between two of its reads costing a
// recompute of its producer. Its optimum bounds every plan of the model
// from below, far more tightly than the model's LP relaxation, which keeps
// fractions of tensors through the peak. The schedule that makes each
// left-out value again right before its next read costs exactly that
// bound: where it fits the budget it is optimal, and CBC is not run. Otherwise
// CBC runs on the model with the bound as a row (its objective at least the
// bound), as its `cbc` program does (CbcMain1: its default cut generators,
// heuristics and branching), without preprocessing. The recompute-only plans of
// the covers and of `chain` and `greedy` are kept beside it, and the fastest
// plan found wins; every plan is simulated before it is returned.
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/ArenaLayout.h"
#include "lethe/Planning/Strategies.h"

#include "CbcEventHandler.hpp"
#include "CbcModel.hpp"
#include "CbcSolver.hpp"
#include "ClpEventHandler.hpp"
#include "CoinError.hpp"
#include "CoinPackedMatrix.hpp"
#include "OsiClpSolverInterface.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

using namespace lethe::planning;

namespace {

/// The largest graph the strategy builds a model for: the model has about
/// nodes^2 x (values per node + edges per node) columns and rows.
constexpr size_t kMaxNodes = 400;
/// The largest value size, in the model's unit of memory: larger spans are
/// rounded (up) to keep CBC's arithmetic exact enough.
constexpr int64_t kMaxUnitsPerValue = 1000000;

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

//===----------------------------------------------------------------------===//
// The linear program
//===----------------------------------------------------------------------===//

/// A mixed-integer program in row form, independent of the solver.
struct LinearProgram {
  std::vector<double> columnLower, columnUpper, objective;
  std::vector<char> isInteger;
  std::vector<double> rowLower, rowUpper;
  std::vector<int> rowStarts{0};
  std::vector<int> rowColumns;
  std::vector<double> rowCoefficients;

  int numColumns() const { return static_cast<int>(objective.size()); }
  int numRows() const { return static_cast<int>(rowLower.size()); }
  int addColumn(double lower, double upper, double cost, bool integer) {
    columnLower.push_back(lower);
    columnUpper.push_back(upper);
    objective.push_back(cost);
    isInteger.push_back(integer);
    return numColumns() - 1;
  }
};

/// A variable of the model, or one the model fixed: kZero and kOne are
/// constants, any other value a column.
using Slot = int;
constexpr Slot kZero = -1;
constexpr Slot kOne = -2;

/// One linear row under construction: constants move to the right side.
class RowBuilder {
public:
  void add(double coefficient, Slot slot) {
    if (slot >= 0) {
      columns.push_back(slot);
      coefficients.push_back(coefficient);
    } else if (slot == kOne) {
      constant += coefficient;
    }
  }
  /// Adds `lower <= row <= upper` to `program`; a row with no columns is
  /// checked instead (false when it does not hold).
  bool emit(LinearProgram &program, double lower, double upper) {
    if (columns.empty())
      return lower - 1e-9 <= constant && constant <= upper + 1e-9;
    program.rowColumns.insert(program.rowColumns.end(), columns.begin(),
                              columns.end());
    program.rowCoefficients.insert(program.rowCoefficients.end(),
                                   coefficients.begin(), coefficients.end());
    program.rowStarts.push_back(static_cast<int>(program.rowColumns.size()));
    program.rowLower.push_back(lower - constant);
    program.rowUpper.push_back(upper - constant);
    return true;
  }

private:
  std::vector<int> columns;
  std::vector<double> coefficients;
  double constant = 0;
};

constexpr double kInfinity = 1e30;

/// Whether milp may run `node` again: like every strategy, it recomputes
/// recomputable forward nodes only.
bool isRecomputable(const GraphNode &node) {
  return node.recomputable && node.role == NodeRole::Forward;
}

//===----------------------------------------------------------------------===//
// The Checkmate model
//===----------------------------------------------------------------------===//

/// Checkmate's formulation of one planning problem (see the file comment):
/// which variables exist, the program over them, and the translation of
/// schedules to and from its solutions.
class CheckmateModel {
public:
  explicit CheckmateModel(const PlanningProblem &problem);

  /// Builds the program. Fails (with a reason) only when the budget cannot
  /// be met by any schedule the model knows, which the fixings can show.
  bool build(std::string &error);

  const LinearProgram &getProgram() const { return program; }
  int getNumStages() const { return numStages; }

  /// The schedule a solution describes.
  Schedule decode(const double *solution) const;

  /// `schedule` in the model's shape: each stage's recomputes in increasing
  /// order, each once, without the recomputes whose outputs nothing reads
  /// any more. False when the first computations are out of order or a
  /// node is recomputed that may not be.
  bool normalize(const Schedule &schedule, Schedule &normalized) const;

  /// Seconds of the objective value `objective` (recomputes included).
  double toSeconds(double objective) const {
    return firstRunSeconds + objective * timeUnit;
  }
  /// The objective value of a recompute-only plan of `seconds`.
  double toObjective(double seconds) const {
    return (seconds - firstRunSeconds) / timeUnit;
  }
  double getFirstRunSeconds() const { return firstRunSeconds; }
  /// Whether sizes are exact in the model's unit (else rounded up, and the
  /// model's optimum is only an upper bound).
  bool isExact() const { return exact; }

private:
  /// R[stage][node] (kZero for node -1, the producer of an input) and
  /// S[stage][value].
  Slot r(int stage, int node) const {
    return node < 0 ? kZero : rSlots[stage * numNodes + node];
  }
  Slot s(int stage, int value) const {
    return sSlots[stage * numValues + value];
  }
  Slot &rSlot(int stage, int node) { return rSlots[stage * numNodes + node]; }
  Slot &sSlot(int stage, int value) {
    return sSlots[stage * numValues + value];
  }
  void chooseSlots();
  void chooseUnits();

  /// A free of `value` right after a step of a stage.
  struct Free {
    int value;
    Slot column;
  };

  const PlanningProblem &problem;
  const TrainingGraph &graph;
  int numNodes, numValues, numStages;
  /// Per node: whether a plan may run it again (a recomputable forward
  /// node), and the last stage where that can pay: some output is read in
  /// that stage or later (or is an output of the step, made again in the
  /// final stage). -1 for nodes that are not recomputed.
  std::vector<char> recomputable;
  std::vector<int> lastUseful;
  /// Per value: its last reader's first computation, the last stage in
  /// which any computation may read it, and whether it can be made again.
  std::vector<int> lastUser, lastRead;
  std::vector<char> regenerable;
  /// Size of each value, of each node's outputs and of its workspace, and
  /// the budget, in units of `unitBytes`.
  int64_t unitBytes = 1;
  bool exact = true;
  std::vector<double> valueUnits, outputUnits, workspaceUnits;
  double budgetUnits = 0;
  double timeUnit = 1, firstRunSeconds = 0;

  /// R for stages [0, numStages), S for stages [0, numStages].
  std::vector<Slot> rSlots, sSlots;
  /// Per stage: the nodes that may run in it, in order; the memory column
  /// and the frees after each of them.
  std::vector<std::vector<int>> steps;
  std::vector<std::vector<int>> memoryColumns;
  std::vector<std::vector<std::vector<Free>>> frees;
  LinearProgram program;
};

CheckmateModel::CheckmateModel(const PlanningProblem &problem)
    : problem(problem), graph(problem.graph),
      numNodes(static_cast<int>(problem.graph.nodes.size())),
      numValues(static_cast<int>(problem.graph.values.size())) {
  // Like every strategy, milp recomputes forward nodes only.
  recomputable.assign(numNodes, false);
  for (int node = 0; node < numNodes; ++node)
    recomputable[node] = isRecomputable(graph.nodes[node]);
  lastUser.assign(numValues, -1);
  regenerable.assign(numValues, false);
  bool finalStage = false;
  for (int value = 0; value < numValues; ++value) {
    const GraphValue &info = graph.values[value];
    for (int user : info.users)
      lastUser[value] = std::max(lastUser[value], user);
    regenerable[value] = info.producer >= 0 && recomputable[info.producer];
    // A final stage of recomputes only pays when an output can be made
    // again.
    finalStage |= info.isOutput && regenerable[value];
  }
  numStages = numNodes + (finalStage ? 1 : 0);

  // Last reads and last useful recomputes, users before producers.
  lastRead.assign(numValues, -1);
  lastUseful.assign(numNodes, -1);
  auto computeLastRead = [&](int value) {
    int last = lastUser[value];
    for (int user : graph.values[value].users)
      last = std::max(last, lastUseful[user]);
    lastRead[value] = last;
  };
  for (int node = numNodes - 1; node >= 0; --node) {
    for (int output : graph.nodes[node].outputs)
      computeLastRead(output);
    if (!recomputable[node])
      continue;
    for (int output : graph.nodes[node].outputs)
      lastUseful[node] = std::max(
          lastUseful[node],
          graph.values[output].isOutput ? numStages - 1 : lastRead[output]);
  }
  for (int value = 0; value < numValues; ++value)
    if (graph.values[value].producer < 0)
      computeLastRead(value);
  chooseUnits();
}

void CheckmateModel::chooseUnits() {
  int64_t largest = 0, divisor = 0;
  auto measure = [&](int64_t bytes) {
    largest = std::max(largest, bytes);
    if (bytes > 0)
      divisor = std::gcd(divisor, bytes);
  };
  for (const GraphValue &value : graph.values)
    measure(value.bytes);
  for (const GraphNode &node : graph.nodes)
    measure(node.workspaceBytes);
  unitBytes = std::max<int64_t>(divisor, 1);
  if (largest / unitBytes > kMaxUnitsPerValue)
    unitBytes = (largest + kMaxUnitsPerValue - 1) / kMaxUnitsPerValue;
  auto toUnits = [&](int64_t bytes) {
    exact &= bytes % unitBytes == 0;
    return static_cast<double>((bytes + unitBytes - 1) / unitBytes);
  };
  valueUnits.resize(numValues);
  for (int value = 0; value < numValues; ++value)
    valueUnits[value] = toUnits(graph.values[value].bytes);
  outputUnits.assign(numNodes, 0);
  workspaceUnits.assign(numNodes, 0);
  for (int node = 0; node < numNodes; ++node) {
    for (int output : graph.nodes[node].outputs)
      outputUnits[node] += valueUnits[output];
    workspaceUnits[node] = toUnits(graph.nodes[node].workspaceBytes);
  }
  budgetUnits = problem.budgetBytes < 0
                    ? -1
                    : static_cast<double>(problem.budgetBytes / unitBytes);

  double total = 0;
  int timed = 0;
  for (const GraphNode &node : graph.nodes) {
    firstRunSeconds += node.seconds;
    if (node.seconds > 0) {
      total += node.seconds;
      ++timed;
    }
  }
  timeUnit = timed ? total / timed : 1;
}

void CheckmateModel::chooseSlots() {
  rSlots.assign(static_cast<size_t>(numStages) * numNodes, kZero);
  sSlots.assign(static_cast<size_t>(numStages + 1) * numValues, kZero);
  const int placeholder = 0; // any column index: numbered in build()
  for (int stage = 0; stage < numStages; ++stage) {
    // Residency entering the stage.
    for (int value = 0; value < numValues; ++value) {
      const GraphValue &info = graph.values[value];
      Slot &slot = sSlot(stage, value);
      if (info.producer >= stage)
        continue; // not made yet
      if (stage == 0) {
        slot = kOne; // an input: resident at the first step
        continue;
      }
      bool carried =
          s(stage - 1, value) != kZero || r(stage - 1, info.producer) != kZero;
      if (!carried)
        continue;
      if (!regenerable[value] && (info.isOutput || lastUser[value] >= stage))
        slot = kOne; // cannot be made again and is still needed
      else if (info.isOutput || lastRead[value] >= stage)
        slot = placeholder;
    }
    // Recomputes that may pay, with every input obtainable.
    for (int node = 0; node < std::min(stage, numNodes); ++node) {
      if (lastUseful[node] < stage)
        continue;
      bool obtainable = true;
      for (int input : graph.nodes[node].inputs)
        obtainable &= s(stage, input) != kZero ||
                      r(stage, graph.values[input].producer) != kZero;
      if (obtainable)
        rSlot(stage, node) = placeholder;
    }
    if (stage < numNodes)
      rSlot(stage, stage) = kOne;
  }
  for (int value = 0; value < numValues; ++value)
    if (graph.values[value].isOutput)
      sSlot(numStages, value) = kOne;
}

bool CheckmateModel::build(std::string &error) {
  chooseSlots();
  program = LinearProgram();
  // Columns: R and S are binary, in stage order.
  for (int stage = 0; stage < numStages; ++stage) {
    for (int node = 0; node < numNodes; ++node)
      if (r(stage, node) >= 0)
        rSlot(stage, node) =
            program.addColumn(0, 1, graph.nodes[node].seconds / timeUnit, true);
    for (int value = 0; value < numValues; ++value)
      if (s(stage, value) >= 0)
        sSlot(stage, value) = program.addColumn(0, 1, 0, true);
  }
  auto fail = [&](const char *what) {
    error = std::string("internal error: the MILP's ") + what +
            " cannot hold; this is a bug in Lethe";
    return false;
  };

  steps.assign(numStages, {});
  memoryColumns.assign(numStages, {});
  frees.assign(numStages, {});
  for (int stage = 0; stage < numStages; ++stage) {
    std::vector<int> &order = steps[stage];
    for (int node = 0; node < numNodes; ++node)
      if (r(stage, node) != kZero)
        order.push_back(node);
    // Dependencies: every input resident or made earlier in the stage.
    for (int node : order) {
      std::vector<int> inputs = graph.nodes[node].inputs;
      std::sort(inputs.begin(), inputs.end());
      inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
      for (int input : inputs) {
        RowBuilder row;
        row.add(1, r(stage, node));
        row.add(-1, r(stage, graph.values[input].producer));
        row.add(-1, s(stage, input));
        if (!row.emit(program, -kInfinity, 0))
          return fail("dependencies");
      }
    }
    // Residency carried to the next stage.
    for (int value = 0; value < numValues; ++value) {
      RowBuilder row;
      row.add(1, s(stage + 1, value));
      row.add(-1, s(stage, value));
      row.add(-1, r(stage, graph.values[value].producer));
      if (!row.emit(program, -kInfinity, 0))
        return fail("residency");
    }
    // Frees: after any step but the last that makes or reads a value.
    std::vector<int> position(numNodes, -1);
    for (size_t index = 0; index < order.size(); ++index)
      position[order[index]] = static_cast<int>(index);
    frees[stage].assign(order.size(), {});
    for (int value = 0; value < numValues; ++value) {
      int producer = graph.values[value].producer;
      bool present = s(stage, value) != kZero ||
                     (producer >= 0 && r(stage, producer) != kZero);
      if (!present || s(stage + 1, value) == kOne)
        continue;
      std::vector<int> places; // positions that make or read it, in order
      if (producer >= 0 && position[producer] >= 0)
        places.push_back(position[producer]);
      for (int user : graph.values[value].users)
        if (position[user] >= 0)
          places.push_back(position[user]);
      for (size_t at = 0; at < places.size(); ++at) {
        int index = places[at];
        if (index + 1 == static_cast<int>(order.size()))
          continue; // nothing runs after the last step of a stage
        bool readLaterForSure = false;
        for (size_t later = at + 1; later < places.size(); ++later)
          readLaterForSure |= r(stage, order[places[later]]) == kOne;
        if (readLaterForSure)
          continue;
        int column = program.addColumn(0, 1, 0, false);
        frees[stage][index].push_back({value, column});
        RowBuilder made;
        made.add(1, column);
        made.add(-1, r(stage, order[index]));
        made.emit(program, -kInfinity, 0);
        RowBuilder dropped;
        dropped.add(1, column);
        dropped.add(1, s(stage + 1, value));
        dropped.emit(program, -kInfinity, 1);
        for (size_t later = at + 1; later < places.size(); ++later) {
          RowBuilder unread;
          unread.add(1, column);
          unread.add(1, r(stage, order[places[later]]));
          unread.emit(program, -kInfinity, 1);
        }
      }
    }
    // Memory at every step, within the budget.
    for (size_t index = 0; index < order.size(); ++index) {
      int column = program.addColumn(0, std::max(budgetUnits, 0.0), 0, false);
      memoryColumns[stage].push_back(column);
      RowBuilder row;
      row.add(1, column);
      if (index == 0) {
        for (int value = 0; value < numValues; ++value)
          row.add(-valueUnits[value], s(stage, value));
      } else {
        row.add(-1, memoryColumns[stage][index - 1]);
        for (const Free &free : frees[stage][index - 1])
          row.add(valueUnits[free.value], free.column);
        int previous = order[index - 1];
        row.add(workspaceUnits[previous], r(stage, previous));
      }
      int node = order[index];
      row.add(-(outputUnits[node] + workspaceUnits[node]), r(stage, node));
      if (!row.emit(program, 0, 0)) {
        error = "the values that must be resident need more than the budget";
        return false;
      }
    }
  }
  // The final S (the outputs) needs no columns: it is constant.
  return true;
}

Schedule CheckmateModel::decode(const double *solution) const {
  Schedule schedule;
  for (int stage = 0; stage < numStages; ++stage)
    for (int node : steps[stage]) {
      Slot slot = r(stage, node);
      if (slot == kOne || (slot >= 0 && solution[slot] > 0.5))
        schedule.push_back(Step::compute(node));
    }
  return schedule;
}

bool CheckmateModel::normalize(const Schedule &schedule,
                               Schedule &normalized) const {
  std::vector<std::vector<char>> runs(numStages,
                                      std::vector<char>(numNodes, false));
  int next = 0;
  for (const Step &step : schedule) {
    if (step.kind != StepKind::Compute)
      return false;
    if (step.id == next) {
      ++next;
      continue;
    }
    if (step.id > next)
      return false;
    if (next >= numStages)
      continue; // recomputes after the last node that make no output
    if (!recomputable[step.id])
      return false;
    runs[next][step.id] = true;
  }
  if (next != numNodes)
    return false;
  normalized.clear();
  for (int stage = 0; stage < numStages; ++stage)
    for (int node : steps[stage])
      if (node == stage || (runs[stage][node] && r(stage, node) >= 0))
        normalized.push_back(Step::compute(node));
  return true;
}

//===----------------------------------------------------------------------===//
// Cheap bounds
//===----------------------------------------------------------------------===//

/// The least memory the first computation of some node needs in any
/// recompute-only plan: its inputs, outputs and workspace, the values that
/// cannot be made again and are read later (or returned), and at the first
/// step every input of the step. Sets `worstNode` to the node that needs it.
int64_t getLeastPeak(const TrainingGraph &graph, int &worstNode) {
  int numNodes = static_cast<int>(graph.nodes.size());
  int numValues = static_cast<int>(graph.values.size());
  auto isPinned = [&](const GraphValue &info) {
    return info.producer < 0 || !isRecomputable(graph.nodes[info.producer]);
  };
  // Values that cannot be made again, resident from their producer (or the
  // start) to their last reader (or the end): a difference array over steps.
  std::vector<int64_t> pinned(numNodes + 1, 0);
  for (int value = 0; value < numValues; ++value) {
    const GraphValue &info = graph.values[value];
    if (!isPinned(info))
      continue;
    int first = std::max(info.producer, 0);
    int last = info.isOutput        ? numNodes - 1
               : info.users.empty() ? (info.producer < 0 ? 0 : first)
                                    : info.users.back();
    pinned[first] += info.bytes;
    pinned[last + 1] -= info.bytes;
  }
  std::vector<char> counted(numValues, false);
  int64_t worst = -1, running = 0;
  worstNode = 0;
  for (int node = 0; node < numNodes; ++node) {
    running += pinned[node];
    int64_t bytes = running + graph.nodes[node].workspaceBytes;
    std::vector<int> touched;
    auto count = [&](int value) {
      const GraphValue &info = graph.values[value];
      if (counted[value] || isPinned(info))
        return; // pinned values are in `running` already
      counted[value] = true;
      touched.push_back(value);
      bytes += info.bytes;
    };
    for (int input : graph.nodes[node].inputs)
      count(input);
    for (int output : graph.nodes[node].outputs)
      count(output);
    for (int value : touched)
      counted[value] = false;
    if (bytes > worst) {
      worst = bytes;
      worstNode = node;
    }
  }
  return worst;
}

//===----------------------------------------------------------------------===//
// Solving
//===----------------------------------------------------------------------===//

/// What CBC found.
struct SolveResult {
  bool solved = false;     // an integer solution
  bool optimal = false;    // proven optimal
  bool lpSolved = false;   // the root LP finished
  bool infeasible = false; // proven: none (none below the cutoff, if given)
  double bound = 0;        // objective units
  std::vector<double> solution;
};

/// How long past the deadline a simplex solve may run (see ClpDeadline).
constexpr std::chrono::seconds kSolveGrace(1);

/// One solve: its deadline and, once the search ends, what the search
/// found. Shared by the handlers below, their clones (CBC copies the
/// solver, handlers included, for its heuristics) and noteStage.
struct CbcSolve {
  Clock::time_point at;
  /// Whether a simplex solve was stopped before the search ended. CBC takes
  /// a stopped LP for an infeasible one (OsiClpSolverInterface reports its
  /// status, 5, as the cutoff reached), so it may have pruned a node on it,
  /// and then neither its bound nor a proof of optimality or infeasibility
  /// holds. Any stopped solve counts: the handler cannot tell whose it is,
  /// the search's, a heuristic's copy's, or that of the search CBC restarts
  /// on a model reduced by reduced-cost fixing (a new CbcModel whose solver
  /// holds a clone of the handler).
  bool cutShort = false;

  /// What the search ended with, read from it as it ends: CbcMain1 does
  /// not hand every outcome back to its caller's model (a search that
  /// restarted on a reduced model and then ran out of time returned none
  /// of the solutions it had found).
  int numColumns = 0;
  bool searchEnded = false;
  std::vector<double> solution; // empty: none
  double bound = 0;
  bool optimal = false, infeasible = false;
};

/// Stops every simplex solve of CBC's (its nodes', its heuristics', the
/// one it starts with) once the deadline has passed. CBC checks its own
/// time limit only between such solves, and one of them takes tens of
/// seconds on a model of 300 nodes, so without this the time limit was
/// overrun by half. A solve gets a grace of kSolveGrace, in which CBC
/// usually stops cleanly at its next event (CbcDeadline) and keeps its
/// bound.
class ClpDeadline : public ClpEventHandler {
public:
  explicit ClpDeadline(CbcSolve *deadline) : deadline(deadline) {}
  int event(Event whichEvent) override {
    if (whichEvent != endOfIteration)
      return -1;
    Clock::time_point now = Clock::now();
    if (now < deadline->at)
      return -1; // go on
    // Once the search has ended, its outcome is read (noteStage) and a
    // stopped solve cannot change it.
    if (deadline->searchEnded)
      return 0;
    if (now < deadline->at + kSolveGrace)
      return -1;
    deadline->cutShort = true;
    return 0; // stop this solve
  }
  ClpEventHandler *clone() const override { return new ClpDeadline(*this); }

private:
  CbcSolve *deadline;
};

/// Stops CBC at its next event (a node, a heuristic's pass, a solution)
/// once the deadline has passed: its own limit counts from the start of
/// the search, not from ours, and is checked less often.
class CbcDeadline : public CbcEventHandler {
public:
  explicit CbcDeadline(Clock::time_point deadline) : deadline(deadline) {}
  CbcAction event(CbcEvent) override {
    return Clock::now() < deadline ? noAction : stop;
  }
  CbcAction event(CbcEvent whichEvent, void *) override {
    return event(whichEvent);
  }
  CbcEventHandler *clone() const override { return new CbcDeadline(*this); }

private:
  Clock::time_point deadline;
};

/// The solve in progress on this thread, for noteStage: CbcMain1 takes a
/// plain function.
thread_local CbcSolve *currentSolve = nullptr;

/// CbcMain1's callback at each stage of its run: 4 is right after the
/// search ends. Returns 0: go on.
int noteStage(CbcModel *model, int whereFrom) {
  if (!currentSolve || whereFrom != 4)
    return 0;
  CbcSolve &solve = *currentSolve;
  solve.searchEnded = true;
  solve.bound = model->getBestPossibleObjValue();
  solve.optimal = model->isProvenOptimal();
  solve.infeasible = model->isProvenInfeasible();
  // Without preprocessing the search's columns are the program's.
  if (model->bestSolution() && model->getNumCols() == solve.numColumns)
    solve.solution.assign(model->bestSolution(),
                          model->bestSolution() + solve.numColumns);
  return 0;
}

/// Solves `program` with CBC within `seconds` of wall time. Returns at once,
/// `infeasible`, when the root LP shows that no solution is below `cutoff`
/// (objective units; infinite: none). The cutoff is not given to CBC: with
/// it, CBC's heuristics missed for 30 s the optimum of a 59-node DAG that
/// CBC proves in 13 s without. Nothing is printed.
/// Returns within about two seconds of the deadline (kSolveGrace, then the
/// last simplex iteration and CBC's clean-up).
SolveResult solveWithCbc(const LinearProgram &program, double seconds,
                         double cutoff) {
  SolveResult result;
  Clock::time_point start = Clock::now();
  Clock::time_point deadline =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(seconds));
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  solver.getModelPtr()->messageHandler()->setLogLevel(0);
  std::vector<int> lengths(program.numRows());
  for (int row = 0; row < program.numRows(); ++row)
    lengths[row] = program.rowStarts[row + 1] - program.rowStarts[row];
  CoinPackedMatrix matrix(false, program.numColumns(), program.numRows(),
                          static_cast<CoinBigIndex>(program.rowColumns.size()),
                          program.rowCoefficients.data(),
                          program.rowColumns.data(), program.rowStarts.data(),
                          lengths.data());
  solver.loadProblem(matrix, program.columnLower.data(),
                     program.columnUpper.data(), program.objective.data(),
                     program.rowLower.data(), program.rowUpper.data());
  for (int column = 0; column < program.numColumns(); ++column)
    if (program.isInteger[column])
      solver.setInteger(column);

  // The root LP, under the time limit: CBC's own limit is not checked
  // inside Clp's first solve.
  solver.getModelPtr()->setMaximumWallSeconds(seconds);
  solver.initialSolve();
  if (solver.isProvenPrimalInfeasible()) {
    result.infeasible = true;
    return result;
  }
  if (!solver.isProvenOptimal())
    return result; // out of time (or numerically lost): no bound
  result.lpSolved = true;
  result.bound = solver.getObjValue();
  if (result.bound >= cutoff) {
    result.infeasible = true; // nothing below the cutoff: proved at the root
    return result;
  }
  if (Clock::now() >= deadline)
    return result;
  solver.getModelPtr()->setMaximumWallSeconds(-1);
  CbcSolve shared{deadline};
  shared.numColumns = program.numColumns();
  ClpDeadline clpDeadline(&shared);
  solver.getModelPtr()->passInEventHandler(&clpDeadline);

  // CBC's own driver, as the `cbc` program runs it: its default cut
  // generators (TwoMir and ZeroHalf beside the usual), heuristics (diving,
  // the feasibility pump, RINS and more) and branching. It proves a
  // 100-node generated chain at 0.8 of its peak optimal in 49 s, where the
  // generators and heuristics this strategy set up itself before had not
  // in 600 s. Two departures from `cbc`:
  // - no preprocessing: CglPreProcess maps the solution back with an LP
  //   solve after the search, 17 s on a 300-node chain and past the
  //   deadline, and the search's columns are then not the program's;
  // - no start from the fast strategies' plans: with one, CBC skipped the
  //   feasibility pump and kept the start on a 300-node chain (1.0283 at
  //   300 s, against 1.0179 without).
  CbcModel model(solver);
  CbcSolverUsefulData data;
  CbcMain0(model, data);
  data.noPrinting_ = true;
  data.useSignalHandler_ = false; // Ctrl-C stops the tool, not the search
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  model.solver()->messageHandler()->setLogLevel(0);
  CbcDeadline cbcDeadline(deadline);
  model.passInEventHandler(&cbcDeadline);
  // CBC's own limit, from when its search starts: a second check beside
  // the handlers, which stop it at the deadline itself.
  double left = seconds - secondsSince(start);
  if (left <= 0)
    return result;
  std::string limit = std::to_string(left);
  std::vector<const char *> arguments = {
      "lethe",   "-log",     "0", "-sec",        limit.c_str(), "-timeMode",
      "elapsed", "-threads", "0", "-preprocess", "off"};
  arguments.insert(arguments.end(), {"-solve", "-quit"});
  struct Current {
    explicit Current(CbcSolve *solve) { currentSolve = solve; }
    ~Current() { currentSolve = nullptr; }
  } current(&shared);
  CbcMain1(static_cast<int>(arguments.size()), arguments.data(), model,
           noteStage, data);
  if (!shared.searchEnded)
    return result; // the search did not start: the root bound stands

  // After a stopped simplex solve, the search may have taken the unfinished
  // LP for an infeasible node (CbcSolve::cutShort): keep the root's bound
  // then, and no proof of optimality or infeasibility.
  bool trusted = !shared.cutShort;
  result.infeasible = trusted && shared.infeasible;
  if (trusted)
    result.bound = std::max(result.bound, shared.bound);
  if (!shared.solution.empty()) {
    result.solved = true;
    result.solution = std::move(shared.solution);
    result.optimal = trusted && shared.optimal;
    if (result.optimal) {
      double objective = 0;
      for (int column = 0; column < program.numColumns(); ++column)
        objective += program.objective[column] * result.solution[column];
      result.bound = std::max(result.bound, objective);
    }
  }
  return result;
}

/// The share of the time left that the cover bound's programs may take
/// (well under a second on 300-node graphs, with a few attempts; at a 2 s
/// limit a tenth was too little to prove the 199- and 301-node chains of
/// seed 2 at 0.5 of the peak, which take about half a second). A quarter
/// of that share again goes to the weaker program that counts each node
/// once (for repairCoverSchedule), when the first proves nothing.
constexpr double kCoverShare = 0.25;
/// Relative difference under which two step times count as the same.
constexpr double kSameSeconds = 1e-9;
/// How many of the least covers' schedules planMilp tries (each a solve of
/// the cover's program, a hundredth of a second on 300 nodes).
constexpr int kCoverAttempts = 50;
/// How many recomputes repairCoverSchedule adds to a cover at most.
constexpr int kRepairRounds = 64;

/// `program` with a row saying that its objective is at least `least`
/// (less a rounding margin): a bound proved by other means, which CBC's
/// root LP then starts from.
LinearProgram withObjectiveAtLeast(const LinearProgram &program, double least) {
  LinearProgram bounded = program;
  RowBuilder row;
  for (int column = 0; column < program.numColumns(); ++column)
    if (program.objective[column] != 0)
      row.add(program.objective[column], column);
  double margin = 1e-7 * std::max(1.0, std::abs(least));
  if (!row.emit(bounded, least - margin, kInfinity))
    return program; // no recomputes at all: nothing to bound
  return bounded;
}

/// The last node that reads each value of `graph` (-1: none).
std::vector<int> getLastReaders(const TrainingGraph &graph) {
  std::vector<int> lastReader(graph.values.size(), -1);
  for (size_t value = 0; value < graph.values.size(); ++value)
    for (int user : graph.values[value].users)
      lastReader[value] = std::max(lastReader[value], user);
  return lastReader;
}

/// Whether a recompute-only plan may leave `value` out while node `t` first
/// runs: made before t by a recomputable node, not read by t, and needed
/// after it (read later, or an output of the step).
bool mayLeaveOut(const TrainingGraph &graph, const std::vector<int> &lastReader,
                 int value, int t) {
  const GraphValue &info = graph.values[value];
  const std::vector<int> &inputs = graph.nodes[t].inputs;
  return info.producer >= 0 && info.producer < t &&
         (info.isOutput || lastReader[value] > t) &&
         std::find(inputs.begin(), inputs.end(), value) == inputs.end() &&
         isRecomputable(graph.nodes[info.producer]);
}

/// The first node after `t` that reads `value`; the number of nodes when
/// none does (an output of the step, needed at its end).
int getNextRead(const TrainingGraph &graph, int value, int t) {
  int next = static_cast<int>(graph.nodes.size());
  for (int user : graph.values[value].users)
    if (user > t)
      next = std::min(next, user);
  return next;
}

/// A recompute of a cover's schedule: `node` runs again in the stage of the
/// first computation of node `before` (the number of nodes: the final
/// stage).
struct CoverRecompute {
  int node, before;
};

/// The nodes that `recomputes` run, in increasing order, each once.
std::vector<int> nodesOf(const std::vector<CoverRecompute> &recomputes) {
  std::vector<int> nodes;
  for (const CoverRecompute &recompute : recomputes)
    nodes.push_back(recompute.node);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

/// A lower bound on the seconds of every recompute-only plan that runs the
/// first computations in the unplanned order (the MILP's plans), from a
/// covering program that is far smaller than the MILP and that CBC solves
/// to optimality in a moment.
///
/// When node t first runs, every value made before it that a later step
/// (or the step's end) still needs is either resident or made again after
/// t, before its next read g: by a recompute of its producer in (t, g].
/// The unplanned step holds them all (with t's inputs, outputs and
/// workspace) in M(t) bytes; a plan within budget B must therefore leave
/// out values of at least M(t) - B bytes, all made by recomputable nodes
/// and not read by t itself. Group the first computations at which a value
/// v is left out by its next read g: the stretches (t, g] of two groups do
/// not overlap (the later group's t is past the earlier one's g), so each
/// group needs a recompute of its own. With z[v,g] = "v is left out
/// somewhere before its read g" and k_p the recomputes of node p:
///
///   minimize   sum_p seconds(p) k_p
///   subject to sum_v bytes(v) z[v, next read of v after t] >= M(t) - B
///                  for every node t with M(t) > B,
///              k_p >= sum_g z[v,g]  for every output v of p.
///
/// The MILP's own relaxation keeps fractions of tensors through the peak;
/// this program is small enough to be solved whole, so it knows that a
/// tensor is kept or left out, and that a value left out on both sides of
/// a read is made again twice. It ignores what a recompute's inputs and
/// intermediate values occupy while it runs, so it bounds; it is tight
/// where each recompute runs from resident inputs right before its read.
///
/// With `perStretch` false, every value is one stretch: a node costs its
/// seconds once however often it is left out (a weaker bound, whose
/// solutions are other starting points for repairCoverSchedule).
///
/// Returns the bound, at least `firstRunSeconds`; that alone when CBC does
/// not finish the program's LP within `seconds`. Before it returns, it
/// hands the recomputes of up to kCoverAttempts of the program's optimal
/// solutions (each placed right before the read that ends its stretch; the
/// end of the step for a single stretch) to `tryCover` with the bound, one
/// after another until it returns true.
double getCoverBound(
    const PlanningProblem &problem, double firstRunSeconds, double seconds,
    bool perStretch,
    const std::function<bool(const std::vector<CoverRecompute> &, double)>
        &tryCover) {
  Clock::time_point start = Clock::now();
  if (!(seconds > 0))
    return firstRunSeconds;
  const TrainingGraph &graph = problem.graph;
  int numNodes = static_cast<int>(graph.nodes.size());
  int numValues = static_cast<int>(graph.values.size());
  std::vector<int> lastReader = getLastReaders(graph);
  double meanSeconds = 0;
  for (const GraphNode &node : graph.nodes)
    meanSeconds += node.seconds / numNodes;
  if (!(meanSeconds > 0))
    return firstRunSeconds;
  LinearProgram program;
  std::vector<int> recomputes(numNodes, -1);  // k_p's column
  std::map<std::pair<int, int>, int> leftOut; // z[v,g]'s column, by (v, g)
  for (int t = 0; t < numNodes; ++t) {
    // The bytes the unplanned step holds while t runs.
    int64_t held = graph.nodes[t].workspaceBytes;
    for (int value = 0; value < numValues; ++value) {
      const GraphValue &info = graph.values[value];
      if (info.producer <= t &&
          (info.producer == t || info.isOutput || lastReader[value] >= t))
        held += info.bytes;
    }
    if (held <= problem.budgetBytes)
      continue;
    RowBuilder row;
    for (int value = 0; value < numValues; ++value) {
      if (!mayLeaveOut(graph, lastReader, value, t))
        continue;
      auto [it, isNew] = leftOut.try_emplace(
          {value, perStretch ? getNextRead(graph, value, t) : numNodes}, -1);
      if (isNew) {
        it->second = program.addColumn(0, 1, 0, true);
        int producer = graph.values[value].producer;
        if (recomputes[producer] < 0)
          recomputes[producer] = program.addColumn(
              0, kInfinity, graph.nodes[producer].seconds / meanSeconds, true);
      }
      row.add(static_cast<double>(graph.values[value].bytes), it->second);
    }
    if (!row.emit(program, static_cast<double>(held - problem.budgetBytes),
                  kInfinity))
      return firstRunSeconds; // nothing can be left out: the MILP will say
  }
  if (program.numRows() == 0)
    return firstRunSeconds;
  // k_p >= the stretches of each output of p (leftOut is ordered by value).
  for (auto it = leftOut.begin(); it != leftOut.end();) {
    int value = it->first.first;
    RowBuilder count;
    count.add(1, recomputes[graph.values[value].producer]);
    for (; it != leftOut.end() && it->first.first == value; ++it)
      count.add(-1, it->second);
    count.emit(program, 0, kInfinity);
  }
  SolveResult result = solveWithCbc(program, seconds, kInfinity);
  if (!result.lpSolved)
    return firstRunSeconds;
  // A proved optimum is the solution's own cost: CBC's bound may pass it by
  // its cutoff increment.
  double bound = result.bound;
  if (result.optimal) {
    bound = 0;
    for (int column = 0; column < program.numColumns(); ++column)
      bound += program.objective[column] * result.solution[column];
  }
  double boundSeconds = firstRunSeconds + bound * meanSeconds;
  // The covers of the least cost, one after another (each excluded from
  // the next solve), until one's schedule is taken.
  for (int attempt = 0; result.solved && attempt < kCoverAttempts; ++attempt) {
    std::vector<CoverRecompute> chosen;
    RowBuilder exclude;
    for (const auto &[stretch, column] : leftOut)
      if (result.solution[column] > 0.5) {
        chosen.push_back(
            {graph.values[stretch.first].producer, stretch.second});
        exclude.add(1, column);
      }
    if (tryCover(chosen, boundSeconds) || !result.optimal)
      break;
    if (attempt == 0) {
      RowBuilder cost;
      for (int column = 0; column < program.numColumns(); ++column)
        cost.add(program.objective[column], column);
      cost.emit(program, -kInfinity, bound + 1e-7 * std::max(1.0, bound));
    }
    if (!exclude.emit(program, -kInfinity,
                      static_cast<double>(chosen.size()) - 1))
      break;
    double left = seconds - secondsSince(start);
    if (left <= 0)
      break;
    result = solveWithCbc(program, left, kInfinity);
  }
  return boundSeconds;
}

/// The schedule that runs the recomputes of `chosen` in their stages, each
/// stage's in increasing order. A recompute's input made by a node that is
/// recomputed later anyway is made again first: the later recompute moves
/// to the reader's stage, so that the version the first computation made
/// need not stay until then.
Schedule makeCoverSchedule(const PlanningProblem &problem,
                           const std::vector<CoverRecompute> &chosen) {
  const TrainingGraph &graph = problem.graph;
  int numNodes = static_cast<int>(graph.nodes.size());
  std::vector<std::set<int>> stages(numNodes); // per node, where it runs again
  for (const CoverRecompute &recompute : chosen)
    stages[recompute.node].insert(recompute.before);
  for (int node = numNodes - 1; node >= 0; --node)
    for (int stage : stages[node])
      for (int input : graph.nodes[node].inputs) {
        int producer = graph.values[input].producer;
        if (producer < 0)
          continue;
        auto later = stages[producer].lower_bound(stage);
        if (later != stages[producer].end() && *later > stage) {
          stages[producer].erase(later);
          stages[producer].insert(stage);
        }
      }
  std::vector<std::vector<int>> before(numNodes + 1);
  for (int node = 0; node < numNodes; ++node)
    for (int stage : stages[node])
      before[stage].push_back(node);
  Schedule schedule;
  for (int t = 0; t <= numNodes; ++t) {
    for (int node : before[t])
      schedule.push_back(Step::compute(node));
    if (t < numNodes)
      schedule.push_back(Step::compute(t));
  }
  return schedule;
}

/// One recompute of each node of `nodes` (increasing): after the widest
/// stretch of first computations marked in `overBudget` between two reads
/// of its outputs, right before the read that ends it (the end, for an
/// output of the step read last before it).
std::vector<CoverRecompute>
placeOncePerNode(const PlanningProblem &problem, const std::vector<int> &nodes,
                 const std::vector<char> &overBudget) {
  const TrainingGraph &graph = problem.graph;
  int numNodes = static_cast<int>(graph.nodes.size());
  // Over-budget steps before each step, to count them in a stretch.
  std::vector<int> over(numNodes + 1, 0);
  for (int t = 0; t < numNodes; ++t)
    over[t + 1] = over[t] + overBudget[t];
  std::vector<CoverRecompute> placed;
  for (int node : nodes) {
    std::vector<int> readers;
    for (int output : graph.nodes[node].outputs) {
      readers.insert(readers.end(), graph.values[output].users.begin(),
                     graph.values[output].users.end());
      if (graph.values[output].isOutput)
        readers.push_back(numNodes);
    }
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    int previous = node, best = numNodes, bestCount = -1;
    for (int reader : readers) {
      int count = over[reader] - over[previous + 1];
      if (reader > previous + 1 && count > bestCount) {
        best = reader;
        bestCount = count;
      }
      previous = reader;
    }
    placed.push_back({node, best});
  }
  return placed;
}

/// How repairCoverSchedule places the recomputes it adds.
enum class Repair {
  /// Each at the stretch it leaves a value out in (the cover's own
  /// placement): a node may run again more than once.
  PerStretch,
  /// Every node once, its recompute moved to its widest over-budget
  /// stretch whenever the nodes change (placeOncePerNode).
  OncePerNode,
};

/// A cover's schedule (makeCoverSchedule) that fits the budget, made from
/// `chosen` by adding recomputes while it does not: at the first
/// computation at or after the peak, of the node whose outputs resident
/// there and needed later free the most bytes per second of its recompute,
/// placed as `how` says. Empty when kRepairRounds such rounds do not make
/// it fit. It costs more than the cover, so it proves nothing; it is a plan
/// for CBC to beat. Neither placement does better on every generated step
/// (on seeds 1 to 3 at 0.8 of the peak, each gave the faster plan on some
/// DAG of 200 or 300 nodes), so planMilp tries both.
Schedule repairCoverSchedule(const PlanningProblem &problem,
                             std::vector<CoverRecompute> chosen,
                             std::vector<char> overBudget, Repair how) {
  const TrainingGraph &graph = problem.graph;
  int numNodes = static_cast<int>(graph.nodes.size());
  std::vector<int> lastReader = getLastReaders(graph);
  std::vector<int> nodes; // OncePerNode: the nodes recomputed
  if (how == Repair::OncePerNode)
    nodes = nodesOf(chosen);
  for (int round = 0; round < kRepairRounds; ++round) {
    if (how == Repair::OncePerNode)
      chosen = placeOncePerNode(problem, nodes, overBudget);
    Schedule schedule = makeCoverSchedule(problem, chosen);
    SimulationResult run = simulate(problem, schedule);
    if (!run.valid)
      return {};
    if (run.peakBytes <= problem.budgetBytes)
      return schedule;
    // The first computation at or after the peak.
    int hot = numNodes - 1, next = 0;
    for (size_t step = 0; step < schedule.size(); ++step) {
      int node = schedule[step].id;
      if (node < next)
        continue;
      next = node + 1;
      if (static_cast<int64_t>(step) >= run.peakStep) {
        hot = node;
        break;
      }
    }
    overBudget[hot] = true;
    // Per node, what it may leave out at `hot`, and the stage to make it
    // again in: the first read after hot of those outputs.
    std::vector<int64_t> bytes(numNodes, 0);
    std::vector<int> stage(numNodes, numNodes);
    for (int value = 0; value < static_cast<int>(graph.values.size()); ++value)
      if (mayLeaveOut(graph, lastReader, value, hot)) {
        int producer = graph.values[value].producer;
        bytes[producer] += graph.values[value].bytes;
        stage[producer] =
            std::min(stage[producer], getNextRead(graph, value, hot));
      }
    // A node recomputed once already is placed anew, not added; one
    // recomputed in (hot, stage] leaves those outputs out already.
    for (const CoverRecompute &recompute : chosen)
      if (how == Repair::OncePerNode ||
          (recompute.before > hot && recompute.before <= stage[recompute.node]))
        bytes[recompute.node] = 0;
    int pick = -1;
    for (int node = 0; node < numNodes; ++node)
      if (bytes[node] > 0 &&
          (pick < 0 || bytes[node] * graph.nodes[pick].seconds >
                           bytes[pick] * graph.nodes[node].seconds))
        pick = node;
    if (pick < 0)
      return {};
    if (how == Repair::OncePerNode)
      nodes.insert(std::upper_bound(nodes.begin(), nodes.end(), pick), pick);
    else
      chosen.push_back({pick, stage[pick]});
  }
  return {};
}

std::string formatSeconds(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g s", seconds);
  return buffer;
}

} // namespace

bool lethe::planning::planMilp(const PlanningProblem &problem,
                               const PlanOptions &options, Plan &plan,
                               std::string &error) {
  Clock::time_point start = Clock::now();
  const TrainingGraph &graph = problem.graph;
  size_t numNodes = graph.nodes.size();
  if (numNodes > kMaxNodes) {
    error = "milp handles graphs of up to " + std::to_string(kMaxNodes) +
            " nodes; this step has " + std::to_string(numNodes) +
            "; use greedy or chain";
    return false;
  }
  // The unplanned schedule, when it fits, runs no node twice: optimal.
  Schedule unplanned = makeUnplannedSchedule(graph);
  SimulationResult unplannedRun = simulate(problem, unplanned);
  if (!unplannedRun.valid) {
    error = "the training step cannot be simulated: " + unplannedRun.error;
    return false;
  }
  if (unplannedRun.peakBytes <= problem.budgetBytes) {
    plan.schedule = std::move(unplanned);
    plan.lowerBoundSeconds = unplannedRun.seconds;
    return true;
  }
  int worstNode = 0;
  int64_t leastPeak = getLeastPeak(graph, worstNode);
  if (leastPeak > problem.budgetBytes) {
    error = "computing node " + std::to_string(worstNode) + " (" +
            graph.nodes[worstNode].name + ") needs " + formatBytes(leastPeak) +
            " with what must stay resident, over the budget";
    return false;
  }

  CheckmateModel model(problem);
  try {
    if (!model.build(error))
      return false;
    const LinearProgram &program = model.getProgram();

    // Recompute-only plans, in the model's shape: those of the fast
    // strategies and the covers' (below; after them, so that a tie keeps
    // the fast strategies' plan); what the strategy returns when CBC finds
    // nothing faster.
    // With an arena alignment, a plan that lays out within the budget is
    // preferred to a faster one that does not (the pass would have to plan
    // again below the budget for it, where a cover's plan may have no
    // counterpart; the greedy starts only, as the arena check lays out).
    Schedule best;
    double bestSeconds = 0;
    bool bestLaysOut = false;
    auto consider = [&](const Schedule &schedule, bool replaceOnTie) {
      Schedule normalized;
      if (!model.normalize(schedule, normalized))
        return;
      SimulationResult run = simulate(problem, normalized);
      if (!run.valid || run.peakBytes > problem.budgetBytes)
        return;
      bool laysOut = options.arenaAlignment <= 0 ||
                     fitsInArena(getScheduleBuffers(problem, normalized).device,
                                 options.arenaAlignment, problem.budgetBytes);
      bool faster = run.seconds < bestSeconds ||
                    (replaceOnTie && run.seconds <= bestSeconds);
      if (best.empty() || (laysOut && !bestLaysOut) ||
          (laysOut == bestLaysOut && faster)) {
        best = std::move(normalized);
        bestSeconds = run.seconds;
        bestLaysOut = laysOut;
      }
    };
    // Whether the best plan is optimal: it lays out, and no plan of the
    // model can be faster than `least` seconds.
    auto isOptimal = [&](double least) {
      return !best.empty() && bestLaysOut &&
             bestSeconds <= least * (1 + kSameSeconds);
    };
    PlanningProblem recomputeOnly = problem;
    recomputeOnly.link = HostLink();
    for (StrategyFunction strategy : {planChain, planGreedy}) {
      Plan seed;
      std::string why;
      if (strategy(recomputeOnly, options, seed, why))
        consider(seed.schedule, false);
    }
    // The cover bound, and the schedules of its least covers, each placed
    // two ways (per stretch, as the cover counts, and once per node): one
    // that fits costs the bound, and is optimal.
    std::vector<char> overBudget(numNodes);
    for (size_t node = 0; node < numNodes; ++node)
      overBudget[node] = unplannedRun.memory[node] > problem.budgetBytes;
    // The first solution of each program, for repairCoverSchedule.
    std::vector<std::vector<CoverRecompute>> toRepair;
    double coverShare = kCoverShare * std::max(0.0, options.timeLimitSeconds -
                                                        secondsSince(start));
    double coverSeconds = getCoverBound(
        problem, model.getFirstRunSeconds(), coverShare, true,
        [&](const std::vector<CoverRecompute> &chosen, double least) {
          consider(makeCoverSchedule(problem, chosen), false);
          consider(makeCoverSchedule(
                       problem,
                       placeOncePerNode(problem, nodesOf(chosen), overBudget)),
                   false);
          if (toRepair.empty())
            toRepair.push_back(chosen);
          return isOptimal(least);
        });
    bool provedByCover = isOptimal(coverSeconds);
    if (!provedByCover) {
      // The weaker program's first solution: neither starting point
      // repairs to the faster plan on every generated step (seeds 1 to 3
      // of 100 to 300 nodes at 0.5 and 0.8 of the peak).
      getCoverBound(problem, model.getFirstRunSeconds(), coverShare / 4, false,
                    [&](const std::vector<CoverRecompute> &chosen, double) {
                      std::vector<CoverRecompute> placed = placeOncePerNode(
                          problem, nodesOf(chosen), overBudget);
                      consider(makeCoverSchedule(problem, placed), false);
                      toRepair.push_back(placed);
                      return true;
                    });
      for (const std::vector<CoverRecompute> &chosen : toRepair)
        for (Repair how : {Repair::PerStretch, Repair::OncePerNode})
          if (Schedule fit =
                  repairCoverSchedule(problem, chosen, overBudget, how);
              !fit.empty())
            consider(fit, false);
    }

    // Only plans faster than options.toBeatSeconds are of use (auto has
    // one): none is faster than the first runs, and the root LP may show
    // that none is faster at all; CBC's search is skipped then.
    double cutoff = std::numeric_limits<double>::infinity();
    bool toBeat = std::isfinite(options.toBeatSeconds);
    if (toBeat)
      cutoff = model.toObjective(options.toBeatSeconds);
    double left = options.timeLimitSeconds - secondsSince(start);
    SolveResult result;
    if (toBeat && cutoff <= 0)
      result.infeasible = true;
    else if (!provedByCover && left > 0)
      result = solveWithCbc(
          withObjectiveAtLeast(program, model.toObjective(coverSeconds)), left,
          cutoff);
    if (result.infeasible && best.empty()) {
      error = toBeat ? "no recompute-only schedule is faster than " +
                           formatSeconds(options.toBeatSeconds)
                     : "no recompute-only schedule fits the budget (the "
                       "MILP is infeasible)";
      return false;
    }
    if (result.solved)
      consider(model.decode(result.solution.data()), true);
    double bound = std::max(model.getFirstRunSeconds(), coverSeconds);
    if (result.lpSolved && model.isExact())
      bound = std::max(bound, model.toSeconds(result.bound));
    if (best.empty()) {
      error = "CBC found no schedule within the time limit of " +
              formatSeconds(options.timeLimitSeconds) +
              (result.lpSolved ? " (LP bound " + formatSeconds(bound) + ")"
                               : " (the root LP did not finish)");
      return false;
    }
    plan.schedule = std::move(best);
    plan.lowerBoundSeconds = std::min(bound, bestSeconds);
    // Checkmate's model has no offloads: its bound holds for every plan only
    // where none can offload.
    plan.lowerBoundCoversOffloading = !problem.link.canSwap();
    return true;
  } catch (const CoinError &coinError) {
    error = "CBC failed: " + coinError.message();
    return false;
  }
}
