//===- Manifest.h - A compiled step's manifest, parsed and checked --------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The manifest (lethe_program.h, docs/Executables.md) tells the driver how
// big the arena and host pool are, where each argument and result lives in
// the arena, which results update which arguments, and which ops the step
// runs. parseManifest checks every field, so that the driver can trust it.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DRIVER_MANIFEST_H
#define LETHE_DRIVER_MANIFEST_H

#include "lethe_rt.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lethe::driver {

/// What an argument of the step is, and so where the driver gets it from.
enum class ArgumentKind {
  Data,      ///< an input: from --data DIR or random
  Label,     ///< an input a loss reads as class indices below integerBound
  Parameter, ///< from the weights file
  State,     ///< optimizer state, from the weights file
  Step,      ///< the step counter (i64 scalar): 0 at the first step
};

/// The manifest's name of `kind` ("data", "parameter", ...).
const char *getArgumentKindName(ArgumentKind kind);

/// A tensor in the arena: an argument or a result.
struct ArenaTensor {
  std::string name;
  lethe_rt_dtype dtype = LETHE_RT_F32;
  std::vector<int64_t> shape;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

/// One argument of the step (its index is its position).
struct ManifestArgument : ArenaTensor {
  ArgumentKind kind = ArgumentKind::Data;
  /// The bound random integers are drawn below (the class count of a
  /// label; 10, as lethe-run's default, when the manifest gives none).
  int64_t integerBound = 10;
  /// Whether the manifest gives integer_bound (else labels are checked
  /// against no class count of their own).
  bool hasIntegerBound = false;
  /// A label's value that names no class (the loss's ignore_index), if any.
  std::optional<int64_t> ignoreIndex;
};

/// One result of the step (its index is its position).
struct ManifestResult : ArenaTensor {
  bool isLoss = false;
  /// The argument this result becomes at the next step, or -1.
  int64_t updates = -1;
};

/// One op of the plan (its index is its position), the kinds of lethe-mem's
/// timeline: compute and recompute name `op` and `node`, offload, prefetch
/// and release `value` and `valueName`.
struct ManifestOp {
  std::string kind;
  std::string op;
  int64_t node = -1;
  int64_t value = -1;
  std::string valueName;
  uint64_t liveBytes = 0;
  /// The planner's time for the op (optional: absent in a manifest written
  /// without one), which --profile reports beside the measured time.
  std::optional<double> predictedSeconds;
};

/// The plan's summary, as the planner reported it (absent numbers are
/// nullopt: an unplanned step has no budget).
struct ManifestPlan {
  std::optional<std::string> strategy, profile;
  std::optional<double> budgetBytes, peakBytes, unplannedPeakBytes, seconds,
      unplannedSeconds, livenessPeakBytes;
};

/// A parsed and checked manifest.
struct Manifest {
  std::string function;
  uint64_t arenaBytes = 0, hostPoolBytes = 0, alignment = 0;
  std::vector<ManifestArgument> arguments;
  std::vector<ManifestResult> results;
  ManifestPlan plan;
  std::vector<ManifestOp> ops;
  /// The index of the loss result.
  size_t lossResult = 0;
  /// The index of the step argument, or -1 when there is none.
  int64_t stepArgument = -1;
};

/// Parses the manifest `text` into `manifest`, checking every field: the
/// format and version, that every tensor lies inside the arena with as many
/// bytes as its dtype and shape need, that arguments (and results) do not
/// overlap one another, that there is exactly one loss result, a float
/// scalar, and that an updating result has its argument's dtype and shape.
/// False, with a one-line `error`, when it is not a valid manifest.
bool parseManifest(std::string_view text, Manifest &manifest,
                   std::string &error);

/// How the state a step updates (the results with `updates` >= 0) becomes
/// the next step's arguments without leaving the device: a result in its
/// argument's bytes is there already; another is copied within the arena,
/// in an order in which no copy overwrites a result not yet copied; one
/// whose copy would overlap its own bytes, or that a cycle of such
/// overlaps holds, goes through the host.
struct StateUpdates {
  /// The results copied within the arena, in that order.
  std::vector<size_t> deviceCopies;
  /// The results read to the host after the step (and written back to
  /// their argument before the next one).
  std::vector<size_t> throughHost;
  /// Per argument: whether, after the first step, the arena holds its next
  /// value (updated in place or by a copy), so that it is not written from
  /// the host again.
  std::vector<bool> onDevice;
};

/// Plans the updates of `manifest`'s state between steps.
StateUpdates planStateUpdates(const Manifest &manifest);

} // namespace lethe::driver

#endif // LETHE_DRIVER_MANIFEST_H
