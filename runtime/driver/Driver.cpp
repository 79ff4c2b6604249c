//===- Driver.cpp - The training loop of a planned executable -------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Everything the driver reads is checked before the first step, so that a bad
// input is one error line and no step runs; output files are written after
// the last step, each all at once (FileIO.h).
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "DType.h"
#include "FileIO.h"
#include "Manifest.h"
#include "NpyFile.h"
#include "RandomData.h"
#include "WeightsFile.h"
#include "common/ElementTypes.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <unistd.h>
#include <utility>

using namespace lethe::driver;
using Clock = std::chrono::steady_clock;
using ordered_json = nlohmann::ordered_json;

namespace {

constexpr const char *kUsage =
    "usage: %s [--steps N] [--seed S] [--data DIR] [--weights FILE]\n"
    "          [--random-weights S] [--save-weights OUT] [--profile OUT.json]\n"
    "          [--trace OUT.json]\n"
    "\n"
    "Trains the compiled step for N steps (default 1), printing the loss of\n"
    "each step.\n"
    "\n"
    "  --steps N           run N >= 1 steps\n"
    "  --seed S            draw random data inputs from seed S >= 0 (default\n"
    "                      0), as lethe-run --random-inputs S does\n"
    "  --data DIR          read each data input from DIR/<name>.npy instead\n"
    "  --weights FILE      read parameters and optimizer state from FILE\n"
    "                      (default: this executable's path + .weights)\n"
    "  --random-weights S  draw the parameters from seed S >= 0 instead and\n"
    "                      start the optimizer state at zero (no file read)\n"
    "  --save-weights OUT  write the trained parameters and state to OUT\n"
    "  --profile OUT.json  write each op's mean time over the steps (and the\n"
    "                      workspace it asked for beyond its plan's)\n"
    "  --trace OUT.json    write the last step's measured memory timeline\n"
    "                      (lethe-mem's JSON schema)\n"
    "  --help              print this help\n";

/// The command line, parsed.
struct Options {
  int64_t steps = 1;
  uint64_t seed = 0;
  std::optional<uint64_t> randomWeightsSeed;
  std::optional<std::string> dataDirectory, weightsPath, saveWeightsPath,
      profilePath, tracePath;
  bool help = false;
};

/// A failure: the message of the one error line.
struct Failure {
  std::string message;
};

/// Parses a decimal integer in [minimum, INT64_MAX].
std::optional<int64_t> parseInteger(const std::string &text, int64_t minimum) {
  if (text.empty() || text.size() > 19)
    return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    if (value > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10)
      return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (value < minimum)
    return std::nullopt;
  return value;
}

std::optional<Failure> parseOptions(int argc, const char *const *argv,
                                    Options &options) {
  for (int position = 1; position < argc; ++position) {
    std::string argument = argv[position];
    if (argument == "--help" || argument == "-h") {
      options.help = true;
      continue;
    }
    std::string flag = argument, value;
    bool hasValue = false;
    size_t equals = argument.find('=');
    if (argument.rfind("--", 0) == 0 && equals != std::string::npos) {
      flag = argument.substr(0, equals);
      value = argument.substr(equals + 1);
      hasValue = true;
    }
    static const char *const kFlags[] = {
        "--steps",          "--seed",         "--data",    "--weights",
        "--random-weights", "--save-weights", "--profile", "--trace",
    };
    bool known = false;
    for (const char *name : kFlags)
      known |= flag == name;
    if (!known)
      return Failure{"unknown option '" + argument + "' (see --help)"};
    if (!hasValue) {
      if (position + 1 >= argc)
        return Failure{flag + " needs a value (see --help)"};
      value = argv[++position];
    }
    if (flag == "--steps") {
      std::optional<int64_t> steps = parseInteger(value, 1);
      if (!steps)
        return Failure{"--steps takes a whole number of steps >= 1, not '" +
                       value + "'"};
      options.steps = *steps;
      continue;
    }
    if (flag == "--seed") {
      std::optional<int64_t> seed = parseInteger(value, 0);
      if (!seed)
        return Failure{"--seed takes a whole number >= 0, not '" + value + "'"};
      options.seed = static_cast<uint64_t>(*seed);
      continue;
    }
    if (flag == "--random-weights") {
      std::optional<int64_t> seed = parseInteger(value, 0);
      if (!seed)
        return Failure{"--random-weights takes a whole number >= 0, not '" +
                       value + "'"};
      options.randomWeightsSeed = static_cast<uint64_t>(*seed);
      continue;
    }
    if (value.empty())
      return Failure{flag + " needs a non-empty path"};
    if (flag == "--data")
      options.dataDirectory = value;
    else if (flag == "--weights")
      options.weightsPath = value;
    else if (flag == "--save-weights")
      options.saveWeightsPath = value;
    else if (flag == "--profile")
      options.profilePath = value;
    else
      options.tracePath = value;
  }
  if (options.weightsPath && options.randomWeightsSeed)
    return Failure{"--weights and --random-weights exclude each other: read "
                   "the weights from a file or draw them, not both"};
  // Said before training, not after it.
  const std::pair<const char *, const std::optional<std::string> *> outputs[] =
      {{"--save-weights", &options.saveWeightsPath},
       {"--profile", &options.profilePath},
       {"--trace", &options.tracePath}};
  for (size_t index = 0; index < std::size(outputs); ++index)
    for (size_t other = 0; other < index; ++other)
      if (*outputs[index].second && *outputs[other].second &&
          **outputs[index].second == **outputs[other].second)
        return Failure{std::string(outputs[other].first) + " and " +
                       outputs[index].first + " name the same file '" +
                       **outputs[index].second + "'; give each its own"};
  return std::nullopt;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t dim = 0; dim < shape.size(); ++dim)
    text += (dim ? ", " : "") + std::to_string(shape[dim]);
  return text + "]";
}

std::string describe(const ManifestArgument &argument, size_t index) {
  return std::string(getArgumentKindName(argument.kind)) + " argument " +
         std::to_string(index) + " ('" + argument.name + "')";
}

/// The weights file an executable reads by default: its own path +
/// ".weights" (argv[0], or /proc/self/exe when argv[0] names no directory,
/// as when it was found on PATH).
std::string getDefaultWeightsPath(const char *argv0) {
  std::string self = argv0 ? argv0 : "";
  if (self.find('/') == std::string::npos) {
    char buffer[4096];
    ssize_t length = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
    if (length > 0)
      self.assign(buffer, length);
  }
  return self + ".weights";
}

/// A data input's values: one or more batches of the argument's bytes.
struct DataInput {
  std::string bytes;
  int64_t batches = 1;
};

/// Checks that each element of `data`, the values of label argument `index`
/// read from `path`, names a class (is in [0, integer_bound), or >= 0 where
/// the manifest gives no bound) or is the loss's ignore_index: the loss
/// would reject any other, but only once the steps have begun.
std::optional<Failure> checkLabels(const std::string &data,
                                   const std::string &path,
                                   const ManifestArgument &argument,
                                   size_t index) {
  size_t size = getDTypeSize(argument.dtype);
  if (argument.dtype != LETHE_RT_I32 && argument.dtype != LETHE_RT_I64)
    return std::nullopt; // the loss itself rejects labels of another dtype
  for (size_t element = 0; element < data.size() / size; ++element) {
    int64_t value;
    if (size == sizeof(int32_t)) {
      int32_t narrow;
      std::memcpy(&narrow, data.data() + element * size, size);
      value = narrow;
    } else {
      std::memcpy(&value, data.data() + element * size, size);
    }
    if ((value >= 0 &&
         (!argument.hasIntegerBound || value < argument.integerBound)) ||
        value == argument.ignoreIndex)
      continue;
    std::string allowed =
        (argument.hasIntegerBound
             ? "[0, " + std::to_string(argument.integerBound) + ")"
             : std::string("[0, the class count)")) +
        (argument.ignoreIndex
             ? " or the ignore_index " + std::to_string(*argument.ignoreIndex)
             : std::string());
    return Failure{"'" + path + "' element " + std::to_string(element) +
                   " is " + std::to_string(value) + ", but " +
                   describe(argument, index) + " takes class indices in " +
                   allowed};
  }
  return std::nullopt;
}

/// Reads data argument `index` from DIR/<name>.npy.
std::optional<Failure> readDataInput(const std::string &directory,
                                     const ManifestArgument &argument,
                                     size_t index, DataInput &input) {
  std::string fileName = argument.name;
  for (char &c : fileName)
    if (c == '/')
      c = '_';
  std::string path = directory + "/" + fileName + ".npy";
  std::string bytes, error;
  if (!readWholeFile(path, bytes, error, kNpyMagic))
    return Failure{error + " (--data DIR needs <name>.npy for " +
                   describe(argument, index) + ")"};
  NpyArray array;
  if (!parseNpy(bytes, path, array, error))
    return Failure{error};
  if (!npyMatchesDType(array.descr, argument.dtype))
    return Failure{"'" + path + "' holds '" + array.descr + "' elements, but " +
                   describe(argument, index) + " is " +
                   getDTypeName(argument.dtype) + " (save it with astype('" +
                   getNpyDescr(argument.dtype) + "'))"};
  const std::vector<int64_t> &shape = argument.shape;
  int64_t batches = 0;
  if (array.shape == shape) {
    batches = 1;
  } else if (!shape.empty() && shape[0] > 0 &&
             array.shape.size() == shape.size() && array.shape[0] > 0 &&
             array.shape[0] % shape[0] == 0 &&
             std::equal(shape.begin() + 1, shape.end(),
                        array.shape.begin() + 1)) {
    batches = array.shape[0] / shape[0];
  }
  if (batches == 0)
    return Failure{"'" + path + "' has shape " + formatShape(array.shape) +
                   ", but " + describe(argument, index) + " is " +
                   formatShape(shape) +
                   (shape.empty() ? std::string()
                                  : " (or k batches of it stacked along the "
                                    "first dimension)")};
  if (argument.kind == ArgumentKind::Label)
    if (std::optional<Failure> failure =
            checkLabels(array.data, path, argument, index))
      return failure;
  input.bytes = std::move(array.data);
  input.batches = batches;
  return std::nullopt;
}

/// The value of one element of float `dtype` at `data`, as a double.
double readFloat(const void *data, lethe_rt_dtype dtype) {
  switch (dtype) {
  case LETHE_RT_F64: {
    double value;
    std::memcpy(&value, data, sizeof(value));
    return value;
  }
  case LETHE_RT_F32: {
    float value;
    std::memcpy(&value, data, sizeof(value));
    return value;
  }
  case LETHE_RT_BF16: {
    uint16_t bits;
    std::memcpy(&bits, data, sizeof(bits));
    uint32_t wide = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &wide, sizeof(value));
    return value;
  }
  case LETHE_RT_F16: {
    uint16_t bits;
    std::memcpy(&bits, data, sizeof(bits));
    int exponent = (bits >> 10) & 0x1F;
    int mantissa = bits & 0x3FF;
    double magnitude;
    if (exponent == 0)
      magnitude = std::ldexp(mantissa, -24);
    else if (exponent == 31)
      magnitude = mantissa ? std::nan("") : INFINITY;
    else
      magnitude = std::ldexp(mantissa + 1024, exponent - 25);
    return (bits & 0x8000) ? -magnitude : magnitude;
  }
  default:
    return std::nan("");
  }
}

/// The initial value of a parameter or optimizer state argument under
/// --random-weights (docs/Executables.md): state is zero, as lethec writes
/// it; a float parameter is uniform in [-b, b) with b = 1 / sqrt(fan in),
/// the fan in being the product of the dimensions after the first (1 for
/// rank 0 and 1), as PyTorch initializes linear and convolution weights,
/// rounded to the dtype on the host; any other parameter is zero.
void drawRandomWeights(std::mt19937_64 &rng, const ManifestArgument &argument,
                       std::string &data) {
  // All zero bytes are zero in every dtype.
  data.assign(argument.bytes, '\0');
  if (argument.kind == ArgumentKind::State)
    return;
  int64_t count = 1, fanIn = 1;
  for (size_t dim = 0; dim < argument.shape.size(); ++dim) {
    count *= argument.shape[dim];
    if (dim > 0)
      fanIn *= argument.shape[dim];
  }
  double bound =
      1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(fanIn, 1)));
  std::uniform_real_distribution<double> real(-bound, bound);
  lethe::rt::dispatchFloat(argument.dtype, [&](auto storage) {
    using Storage = decltype(storage);
    for (int64_t index = 0; index < count; ++index)
      lethe::rt::store<Storage>(data.data(), index, real(rng));
  });
}

/// The op boundaries of one step, as the op hook records them.
struct OpRecorder {
  struct Boundary {
    int32_t op;
    Clock::time_point time;
    /// The workspace the op's calls asked for beyond what they were given
    /// (lethe_rt_op_workspace_wanted), read when the next op begins or the
    /// step ends (readWanted).
    uint64_t workspaceWanted = 0;
  };
  lethe_rt_context *context = nullptr;
  std::vector<Boundary> boundaries;

  /// Reads what the last op announced asked for.
  void readWanted() {
    if (!boundaries.empty())
      boundaries.back().workspaceWanted = lethe_rt_op_workspace_wanted(context);
  }
};

void recordOpBoundary(void *userData, int32_t opIndex) {
  auto *recorder = static_cast<OpRecorder *>(userData);
  recorder->readWanted();
  recorder->boundaries.push_back({opIndex, Clock::now()});
}

double secondsBetween(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

std::string formatDouble(const char *format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

/// A step's ops, timed: per op, its start and end in seconds from the start
/// of the step (an op the step did not announce, like a release, starts and
/// ends where the previous one ended).
struct StepTimes {
  std::vector<double> start, end;
  std::vector<int64_t> calls;
  /// Per op, the most workspace any of its calls asked for.
  std::vector<uint64_t> workspaceWanted;
  double seconds = 0;
};

StepTimes timeStep(const OpRecorder &recorder, size_t numOps,
                   Clock::time_point stepStart, Clock::time_point stepEnd) {
  StepTimes times;
  times.start.assign(numOps, -1);
  times.end.assign(numOps, -1);
  times.calls.assign(numOps, 0);
  times.workspaceWanted.assign(numOps, 0);
  times.seconds = secondsBetween(stepStart, stepEnd);
  std::vector<double> total(numOps, 0);
  const auto &boundaries = recorder.boundaries;
  for (size_t call = 0; call < boundaries.size(); ++call) {
    size_t index = boundaries[call].op;
    double start = secondsBetween(stepStart, boundaries[call].time);
    double end = secondsBetween(stepStart, call + 1 < boundaries.size()
                                               ? boundaries[call + 1].time
                                               : stepEnd);
    times.workspaceWanted[index] = std::max(times.workspaceWanted[index],
                                            boundaries[call].workspaceWanted);
    if (times.calls[index]++ == 0)
      times.start[index] = start;
    total[index] += end - start;
    times.end[index] = times.start[index] + total[index];
  }
  double previousEnd = 0;
  for (size_t index = 0; index < numOps; ++index) {
    if (times.calls[index] == 0)
      times.start[index] = times.end[index] = previousEnd;
    previousEnd = times.end[index];
  }
  return times;
}

ordered_json optionalNumber(const std::optional<double> &value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

/// A byte count of the plan: an integer in JSON, as lethe-mem writes it.
ordered_json optionalBytes(const std::optional<double> &value) {
  if (value && *value == std::floor(*value) && *value < 9.0e15)
    return ordered_json(static_cast<int64_t>(*value));
  return optionalNumber(value);
}

ordered_json optionalString(const std::optional<std::string> &value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

/// --profile's document (docs/Executables.md).
std::string makeProfile(const Manifest &manifest, int64_t steps,
                        const std::vector<double> &opSeconds,
                        const std::vector<int64_t> &opCalls,
                        const std::vector<uint64_t> &opWorkspace,
                        double stepSeconds) {
  ordered_json document;
  document["format"] = "lethe-program-profile";
  document["version"] = 1;
  document["function"] = manifest.function;
  document["steps"] = steps;
  document["step_seconds"] = stepSeconds / steps;
  ordered_json ops = ordered_json::array();
  for (size_t index = 0; index < manifest.ops.size(); ++index) {
    const ManifestOp &op = manifest.ops[index];
    ordered_json entry;
    entry["index"] = index;
    entry["kind"] = op.kind;
    bool isCompute = op.kind == "compute" || op.kind == "recompute";
    entry["op"] = isCompute ? op.op : op.kind;
    entry["node"] = isCompute ? ordered_json(op.node) : ordered_json(nullptr);
    if (!isCompute) {
      entry["value"] = op.value;
      entry["name"] = op.valueName;
    }
    entry["seconds"] = opSeconds[index] / steps;
    if (op.predictedSeconds)
      entry["predicted_seconds"] = *op.predictedSeconds;
    entry["calls"] = opCalls[index];
    if (opWorkspace[index] > 0)
      entry["workspace_bytes"] = opWorkspace[index];
    ops.push_back(std::move(entry));
  }
  document["ops"] = std::move(ops);
  return document.dump(2) + "\n";
}

/// --trace's document: lethe-mem's timeline (docs/MemoryTimeline.md) with
/// the last step's measured times.
std::string makeTrace(const Manifest &manifest, const StepTimes &times) {
  ordered_json document;
  document["format"] = "lethe-memory-timeline";
  document["version"] = 1;
  document["source"] = "measured";
  document["function"] = manifest.function;
  document["profile"] = optionalString(manifest.plan.profile);
  document["strategy"] = optionalString(manifest.plan.strategy);
  document["budget_bytes"] = optionalBytes(manifest.plan.budgetBytes);
  uint64_t peakBytes = 0;
  size_t peakStep = 0;
  for (size_t index = 0; index < manifest.ops.size(); ++index)
    if (manifest.ops[index].liveBytes > peakBytes) {
      peakBytes = manifest.ops[index].liveBytes;
      peakStep = index;
    }
  document["peak_bytes"] = peakBytes;
  document["peak_step"] =
      manifest.ops.empty() ? ordered_json(nullptr) : ordered_json(peakStep);
  document["peak_time"] = manifest.ops.empty()
                              ? ordered_json(nullptr)
                              : ordered_json(times.start[peakStep]);
  document["seconds"] = times.seconds;
  document["unplanned_peak_bytes"] =
      optionalBytes(manifest.plan.unplannedPeakBytes);
  document["unplanned_seconds"] =
      optionalNumber(manifest.plan.unplannedSeconds);
  document["liveness_peak_bytes"] =
      optionalBytes(manifest.plan.livenessPeakBytes);
  document["arena_bytes"] = manifest.arenaBytes;
  document["host_peak_bytes"] = manifest.hostPoolBytes;
  int64_t recomputes = 0, offloads = 0, prefetches = 0, releases = 0;
  double recomputeSeconds = 0;
  ordered_json steps = ordered_json::array();
  for (size_t index = 0; index < manifest.ops.size(); ++index) {
    const ManifestOp &op = manifest.ops[index];
    ordered_json step;
    step["index"] = index;
    step["kind"] = op.kind;
    const char *stream = "compute";
    if (op.kind == "compute" || op.kind == "recompute") {
      step["op"] = op.op;
      step["node"] = op.node;
      if (op.kind == "recompute") {
        ++recomputes;
        recomputeSeconds += times.end[index] - times.start[index];
      }
    } else {
      step["value"] = op.value;
      step["name"] = op.valueName;
      if (op.kind == "offload") {
        stream = "d2h";
        ++offloads;
      } else if (op.kind == "prefetch") {
        stream = "h2d";
        ++prefetches;
      } else {
        ++releases;
      }
    }
    step["stream"] = stream;
    step["issue"] = times.start[index];
    step["start"] = times.start[index];
    step["end"] = times.end[index];
    step["live_bytes"] = op.liveBytes;
    steps.push_back(std::move(step));
  }
  document["totals"] = {{"recomputes", recomputes},
                        {"recompute_seconds", recomputeSeconds},
                        {"offloads", offloads},
                        {"prefetches", prefetches},
                        {"releases", releases}};
  document["steps"] = std::move(steps);
  document["tensors"] = ordered_json::array();
  document["largest_at_peak"] = ordered_json::array();
  return document.dump(2) + "\n";
}

/// The driver's state for one run.
class Run {
public:
  Run(const Options &options, const Manifest &manifest, StepFunction step,
      std::ostream &out)
      : options(options), manifest(manifest), step(step), out(out) {}

  std::optional<Failure> loadWeights(const char *argv0);
  void drawWeights(uint64_t seed);
  std::optional<Failure> loadData();
  std::optional<Failure> train();
  std::optional<Failure> writeOutputs();

private:
  std::optional<Failure> copyIn(uint64_t offset, const void *data,
                                uint64_t bytes);
  /// Copies `result` onto the argument it updates, within the arena.
  bool copyWithin(const ManifestResult &result);
  std::optional<Failure> runtimeFailure(const std::string &what);

  const Options &options;
  const Manifest &manifest;
  StepFunction step;
  std::ostream &out;

  /// Per argument: its host value (parameters and state: from the weights,
  /// then the updates that go through the host, and after the last step
  /// every update; data: all its batches).
  std::vector<DataInput> values;
  std::string weightsPath;

  std::unique_ptr<lethe_rt_context, void (*)(lethe_rt_context *)> context{
      nullptr, lethe_rt_context_destroy};
  OpRecorder recorder;
  std::vector<double> opSeconds;
  std::vector<int64_t> opCalls;
  std::vector<uint64_t> opWorkspace;
  StepTimes lastStep;
  double totalSeconds = 0;
};

std::optional<Failure> Run::loadWeights(const char *argv0) {
  values.resize(manifest.arguments.size());
  bool needsWeights = false;
  for (const ManifestArgument &argument : manifest.arguments)
    needsWeights |= argument.kind == ArgumentKind::Parameter ||
                    argument.kind == ArgumentKind::State;
  if (!needsWeights && !options.weightsPath)
    return std::nullopt;
  if (options.randomWeightsSeed) {
    drawWeights(*options.randomWeightsSeed);
    return std::nullopt;
  }
  weightsPath =
      options.weightsPath ? *options.weightsPath : getDefaultWeightsPath(argv0);
  std::vector<WeightsTensor> tensors;
  std::string error;
  if (!readWeightsFile(weightsPath, tensors, error))
    return Failure{error + (options.weightsPath
                                ? std::string()
                                : " (give the weights file with --weights "
                                  "FILE)")};
  std::map<std::string, WeightsTensor *> byName;
  for (WeightsTensor &tensor : tensors)
    byName[tensor.name] = &tensor;
  for (size_t index = 0; index < manifest.arguments.size(); ++index) {
    const ManifestArgument &argument = manifest.arguments[index];
    if (argument.kind != ArgumentKind::Parameter &&
        argument.kind != ArgumentKind::State)
      continue;
    auto found = byName.find(argument.name);
    if (found == byName.end())
      return Failure{"'" + weightsPath + "' has no tensor '" + argument.name +
                     "' for " + describe(argument, index) +
                     " (was it written for another program?)"};
    WeightsTensor &tensor = *found->second;
    if (tensor.dtype != argument.dtype || tensor.shape != argument.shape)
      return Failure{
          "tensor '" + argument.name + "' in '" + weightsPath + "' is " +
          getDTypeName(tensor.dtype) + " " + formatShape(tensor.shape) +
          ", but " + describe(argument, index) + " is " +
          getDTypeName(argument.dtype) + " " + formatShape(argument.shape)};
    values[index].bytes = std::move(tensor.data);
  }
  return std::nullopt;
}

/// --random-weights: every parameter and state argument drawn in argument
/// order from one generator seeded with `seed`.
void Run::drawWeights(uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (size_t index = 0; index < manifest.arguments.size(); ++index) {
    const ManifestArgument &argument = manifest.arguments[index];
    if (argument.kind == ArgumentKind::Parameter ||
        argument.kind == ArgumentKind::State)
      drawRandomWeights(rng, argument, values[index].bytes);
  }
}

std::optional<Failure> Run::loadData() {
  std::mt19937_64 rng(options.seed);
  for (size_t index = 0; index < manifest.arguments.size(); ++index) {
    const ManifestArgument &argument = manifest.arguments[index];
    if (argument.kind != ArgumentKind::Data &&
        argument.kind != ArgumentKind::Label)
      continue;
    if (options.dataDirectory) {
      if (std::optional<Failure> failure = readDataInput(
              *options.dataDirectory, argument, index, values[index]))
        return failure;
      continue;
    }
    drawRandomTensor(rng, argument.dtype, argument.shape, argument.integerBound,
                     values[index].bytes);
  }
  return std::nullopt;
}

std::optional<Failure> Run::runtimeFailure(const std::string &what) {
  return Failure{what + ": " + lethe_rt_last_error(context.get())};
}

std::optional<Failure> Run::copyIn(uint64_t offset, const void *data,
                                   uint64_t bytes) {
  if (bytes == 0)
    return std::nullopt;
  if (lethe_rt_copy_to_arena(context.get(), offset, data, bytes) != LETHE_RT_OK)
    return runtimeFailure("cannot write an argument into the arena");
  return std::nullopt;
}

bool Run::copyWithin(const ManifestResult &result) {
  char *arena = static_cast<char *>(lethe_rt_arena_base(context.get()));
  const ManifestArgument &argument = manifest.arguments[result.updates];
  int32_t rank = static_cast<int32_t>(result.shape.size());
  lethe_rt_tensor in{arena + result.offset, result.dtype, rank,
                     result.shape.data()};
  lethe_rt_tensor out{arena + argument.offset, argument.dtype, rank,
                      argument.shape.data()};
  return lethe_rt_copy(context.get(), &in, &out) == LETHE_RT_OK;
}

std::optional<Failure> Run::train() {
  context.reset(lethe_rt_context_create());
  if (!context)
    return Failure{"out of memory creating the runtime context"};
  if (lethe_rt_memory_init(context.get(), manifest.arenaBytes,
                           manifest.hostPoolBytes) != LETHE_RT_OK)
    return runtimeFailure(
        "cannot allocate the step's memory (" +
        std::to_string(manifest.arenaBytes) + " device bytes, " +
        std::to_string(manifest.hostPoolBytes) + " host bytes)");
  bool timeOps = options.profilePath || options.tracePath;
  size_t numOps = manifest.ops.size();
  opSeconds.assign(numOps, 0);
  opCalls.assign(numOps, 0);
  opWorkspace.assign(numOps, 0);
  if (timeOps) {
    recorder.context = context.get();
    recorder.boundaries.reserve(4 * numOps + 16);
    lethe_rt_set_op_hook(context.get(), recordOpBoundary, &recorder);
  }
  // The state stays on the device between steps (planStateUpdates), but
  // for the results that go through the host, and every result after the
  // last step (for --save-weights); staging buffers for those.
  StateUpdates updates = planStateUpdates(manifest);
  std::vector<size_t> everyUpdate;
  for (size_t index = 0; index < manifest.results.size(); ++index)
    if (manifest.results[index].updates >= 0)
      everyUpdate.push_back(index);
  std::vector<std::string> staged(manifest.results.size());
  const ManifestResult &lossResult = manifest.results[manifest.lossResult];
  std::string lossBytes(lossResult.bytes, '\0');
  double loss = 0;
  for (int64_t number = 0; number < options.steps; ++number) {
    // Arguments: data (batch number mod k), the step counter, parameters and
    // state (the weights at the first step, the updates afterwards; a
    // parameter no result updates is written again at every step, as the
    // plan may have reused its slot).
    for (size_t index = 0; index < manifest.arguments.size(); ++index) {
      const ManifestArgument &argument = manifest.arguments[index];
      const DataInput &value = values[index];
      std::optional<Failure> failure;
      switch (argument.kind) {
      case ArgumentKind::Data:
      case ArgumentKind::Label:
        failure = copyIn(argument.offset,
                         value.bytes.data() +
                             (number % value.batches) * argument.bytes,
                         argument.bytes);
        break;
      case ArgumentKind::Step:
        failure = copyIn(argument.offset, &number, sizeof(number));
        break;
      case ArgumentKind::Parameter:
      case ArgumentKind::State:
        if (number == 0 || !updates.onDevice[index])
          failure = copyIn(argument.offset, value.bytes.data(), argument.bytes);
        break;
      }
      if (failure)
        return failure;
    }
    recorder.boundaries.clear();
    Clock::time_point start = Clock::now();
    lethe_rt_status status = step(context.get());
    Clock::time_point end = Clock::now();
    recorder.readWanted();
    if (status != LETHE_RT_OK)
      return runtimeFailure("step " + std::to_string(number + 1) + " failed");
    for (const auto &boundary : recorder.boundaries)
      if (boundary.op < 0 || static_cast<size_t>(boundary.op) >= numOps)
        return Failure{"step " + std::to_string(number + 1) + " announced op " +
                       std::to_string(boundary.op) + ", but the manifest has " +
                       std::to_string(numOps) + " ops (a lethec bug)"};
    // The loss, then every updated result, out before any is written back:
    // results may share bytes with arguments.
    if (lethe_rt_copy_from_arena(context.get(), lossBytes.data(),
                                 lossResult.offset,
                                 lossResult.bytes) != LETHE_RT_OK)
      return runtimeFailure("cannot read the loss");
    loss = readFloat(lossBytes.data(), lossResult.dtype);
    bool last = number + 1 == options.steps;
    const std::vector<size_t> &toHost =
        last ? everyUpdate : updates.throughHost;
    for (size_t index : toHost) {
      const ManifestResult &result = manifest.results[index];
      staged[index].resize(result.bytes);
      if (result.bytes &&
          lethe_rt_copy_from_arena(context.get(), staged[index].data(),
                                   result.offset, result.bytes) != LETHE_RT_OK)
        return runtimeFailure("cannot read result " + std::to_string(index));
    }
    for (size_t index : toHost)
      values[manifest.results[index].updates].bytes.swap(staged[index]);
    if (!last) {
      for (size_t index : updates.deviceCopies)
        if (!copyWithin(manifest.results[index]))
          return runtimeFailure("cannot copy result " + std::to_string(index) +
                                " to the argument it updates");
      // Done before the next step, whose copies on the other streams may
      // read or overwrite these bytes without waiting for the compute
      // stream (a step that starts with no argument from the host).
      if (!updates.deviceCopies.empty() &&
          lethe_rt_synchronize(context.get()) != LETHE_RT_OK)
        return runtimeFailure("cannot copy the updates to their arguments");
    }

    double seconds = secondsBetween(start, end);
    totalSeconds += seconds;
    if (timeOps) {
      lastStep = timeStep(recorder, numOps, start, end);
      for (size_t index = 0; index < numOps; ++index) {
        opSeconds[index] += lastStep.end[index] - lastStep.start[index];
        opCalls[index] += lastStep.calls[index];
        opWorkspace[index] =
            std::max(opWorkspace[index], lastStep.workspaceWanted[index]);
      }
    }
    lethe_rt_memory_stats stats;
    lethe_rt_get_memory_stats(context.get(), &stats);
    out << "step " << number + 1 << "  loss " << formatDouble("%.7g", loss)
        << "  time " << formatDouble("%.3g", seconds * 1e3)
        << " ms  peak device " << stats.arena_bytes << " bytes\n";
  }
  lethe_rt_memory_stats stats;
  lethe_rt_get_memory_stats(context.get(), &stats);
  out << "trained " << options.steps << " step"
      << (options.steps == 1 ? "" : "s") << " of " << manifest.function
      << " in " << formatDouble("%.3g", totalSeconds * 1e3) << " ms ("
      << formatDouble("%.3g", totalSeconds * 1e3 / options.steps)
      << " ms/step), final loss " << formatDouble("%.7g", loss)
      << ", peak device " << stats.arena_bytes << " bytes, host pool "
      << stats.host_pool_bytes << " bytes\n";
  out.flush();
  return std::nullopt;
}

std::optional<Failure> Run::writeOutputs() {
  // Everything is serialized first, then written file by file.
  std::vector<std::pair<std::string, std::string>> files;
  std::string error;
  if (options.saveWeightsPath) {
    std::vector<WeightsTensor> tensors;
    for (size_t index = 0; index < manifest.arguments.size(); ++index) {
      const ManifestArgument &argument = manifest.arguments[index];
      if (argument.kind == ArgumentKind::Parameter ||
          argument.kind == ArgumentKind::State)
        tensors.push_back(WeightsTensor{argument.name, argument.dtype,
                                        argument.shape, values[index].bytes});
    }
    std::string bytes;
    if (!serializeWeights(tensors, bytes, error))
      return Failure{"cannot save the weights: " + error};
    files.emplace_back(*options.saveWeightsPath, std::move(bytes));
  }
  if (options.profilePath)
    files.emplace_back(*options.profilePath,
                       makeProfile(manifest, options.steps, opSeconds, opCalls,
                                   opWorkspace, totalSeconds));
  if (options.tracePath)
    files.emplace_back(*options.tracePath, makeTrace(manifest, lastStep));
  // All or none: an unwritable --profile must not leave --save-weights'
  // file behind.
  if (!writeFilesAtomically(files, error))
    return Failure{error};
  return std::nullopt;
}

/// The executable's name for messages: argv[0] without its directory.
std::string getProgramName(int argc, const char *const *argv) {
  std::string name = argc > 0 && argv[0] ? argv[0] : "lethe-program";
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

} // namespace

int lethe::driver::runDriver(int argc, const char *const *argv,
                             const char *manifestText, StepFunction step,
                             std::ostream &out, std::ostream &err) {
  std::string name = getProgramName(argc, argv);
  auto fail = [&](const Failure &failure) {
    out.flush();
    err << name << ": error: " << failure.message << "\n";
    err.flush();
    return 1;
  };
  Options options;
  if (std::optional<Failure> failure = parseOptions(argc, argv, options))
    return fail(*failure);
  if (options.help) {
    char usage[2048];
    std::snprintf(usage, sizeof(usage), kUsage, name.c_str());
    out << usage;
    return 0;
  }
  Manifest manifest;
  std::string error;
  if (!manifestText || !parseManifest(manifestText, manifest, error))
    return fail(Failure{"the program's manifest is corrupt: " +
                        (manifestText ? error : std::string("it is null")) +
                        " (rebuild the executable with lethec)"});
  Run run(options, manifest, step, out);
  if (std::optional<Failure> failure =
          run.loadWeights(argc > 0 ? argv[0] : nullptr))
    return fail(*failure);
  if (std::optional<Failure> failure = run.loadData())
    return fail(*failure);
  if (std::optional<Failure> failure = run.train())
    return fail(*failure);
  if (std::optional<Failure> failure = run.writeOutputs())
    return fail(*failure);
  return 0;
}
