//===- Manifest.cpp - A compiled step's manifest, parsed and checked ------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The checks throw a ManifestError that parseManifest turns into its one-line
// message; nothing else in the driver throws. Fields this version does not
// know are ignored (later versions may add fields without changing
// `version`).
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include "DType.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>

using namespace lethe::driver;
using json = nlohmann::json;

namespace {

/// A manifest that is not valid; its message says where and why.
class ManifestError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// `where`.`key` in messages (`key` alone at the top level, where `where`
/// is empty).
std::string fieldName(const std::string &where, const char *key) {
  return where.empty() ? std::string(key) : where + "." + key;
}

const json &getMember(const json &object, const char *key,
                      const std::string &where) {
  auto found = object.find(key);
  if (found == object.end())
    throw ManifestError((where.empty() ? "the manifest" : where) + " has no '" +
                        key + "'");
  return *found;
}

std::string getString(const json &object, const char *key,
                      const std::string &where) {
  const json &value = getMember(object, key, where);
  if (!value.is_string())
    throw ManifestError(fieldName(where, key) + " must be a string");
  return value.get<std::string>();
}

int64_t getInteger(const json &object, const char *key,
                   const std::string &where, int64_t minimum) {
  const json &value = getMember(object, key, where);
  int64_t number;
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() <=
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    number = static_cast<int64_t>(value.get<uint64_t>());
  else if (value.is_number_integer() && !value.is_number_unsigned())
    number = value.get<int64_t>();
  else
    throw ManifestError(fieldName(where, key) + " must be an integer");
  if (number < minimum)
    throw ManifestError(fieldName(where, key) + " is " +
                        std::to_string(number) + ", less than " +
                        std::to_string(minimum));
  return number;
}

bool getBool(const json &object, const char *key, const std::string &where) {
  const json &value = getMember(object, key, where);
  if (!value.is_boolean())
    throw ManifestError(fieldName(where, key) + " must be true or false");
  return value.get<bool>();
}

const json &getArray(const json &object, const char *key,
                     const std::string &where) {
  const json &value = getMember(object, key, where);
  if (!value.is_array())
    throw ManifestError(fieldName(where, key) + " must be an array");
  return value;
}

/// An optional number: absent or null, or a non-negative number.
std::optional<double> getOptionalNumber(const json &object, const char *key,
                                        const std::string &where = "plan") {
  auto found = object.find(key);
  if (found == object.end() || found->is_null())
    return std::nullopt;
  if (!found->is_number() || found->get<double>() < 0)
    throw ManifestError(fieldName(where, key) +
                        " must be a non-negative number or null");
  return found->get<double>();
}

std::optional<std::string> getOptionalString(const json &object,
                                             const char *key) {
  auto found = object.find(key);
  if (found == object.end() || found->is_null())
    return std::nullopt;
  if (!found->is_string())
    throw ManifestError(std::string("plan.") + key +
                        " must be a string or null");
  return found->get<std::string>();
}

/// The index field of element `position` of an array, which must equal it.
void checkIndex(const json &object, size_t position, const std::string &where) {
  int64_t index = getInteger(object, "index", where, 0);
  if (static_cast<size_t>(index) != position)
    throw ManifestError(where + ".index is " + std::to_string(index) +
                        ", expected " + std::to_string(position) +
                        " (entries are listed in index order)");
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t dim = 0; dim < shape.size(); ++dim)
    text += (dim ? ", " : "") + std::to_string(shape[dim]);
  return text + "]";
}

/// Reads the fields every arena tensor has and checks them against the
/// arena.
void parseArenaTensor(const json &object, const std::string &where,
                      uint64_t arenaBytes, ArenaTensor &tensor) {
  tensor.name = getString(object, "name", where);
  if (tensor.name.empty())
    throw ManifestError(where + ".name is empty");
  std::string dtypeName = getString(object, "dtype", where);
  std::optional<lethe_rt_dtype> dtype = parseDTypeName(dtypeName);
  if (!dtype)
    throw ManifestError(where + ".dtype '" + dtypeName +
                        "' is not a runtime dtype");
  tensor.dtype = *dtype;
  const json &shape = getArray(object, "shape", where);
  uint64_t elements = 1;
  for (size_t dim = 0; dim < shape.size(); ++dim) {
    if (!shape[dim].is_number_integer() || shape[dim].get<int64_t>() < 0)
      throw ManifestError(where + ".shape[" + std::to_string(dim) +
                          "] must be a non-negative integer");
    int64_t size = shape[dim].get<int64_t>();
    if (size != 0 && elements > (uint64_t(1) << 56) / size)
      throw ManifestError(where + ".shape is too large");
    elements *= size;
    tensor.shape.push_back(size);
  }
  tensor.offset = getInteger(object, "offset", where, 0);
  tensor.bytes = getInteger(object, "bytes", where, 0);
  uint64_t needed = elements * getDTypeSize(tensor.dtype);
  if (tensor.bytes != needed)
    throw ManifestError(where + ".bytes is " + std::to_string(tensor.bytes) +
                        ", but " + dtypeName + " " + formatShape(tensor.shape) +
                        " needs " + std::to_string(needed));
  if (tensor.offset > arenaBytes || tensor.bytes > arenaBytes - tensor.offset)
    throw ManifestError(where + " (offset " + std::to_string(tensor.offset) +
                        ", " + std::to_string(tensor.bytes) +
                        " bytes) ends past the arena (" +
                        std::to_string(arenaBytes) + " bytes)");
}

/// Throws when two of `tensors` (all live at once) share arena bytes.
template <typename T>
void checkDisjoint(const std::vector<T> &tensors, const char *what) {
  std::vector<size_t> order;
  for (size_t index = 0; index < tensors.size(); ++index)
    if (tensors[index].bytes > 0)
      order.push_back(index);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return tensors[a].offset < tensors[b].offset;
  });
  for (size_t position = 1; position < order.size(); ++position) {
    const T &previous = tensors[order[position - 1]];
    const T &next = tensors[order[position]];
    if (previous.offset + previous.bytes > next.offset)
      throw ManifestError(
          std::string(what) + " " +
          std::to_string(std::min(order[position - 1], order[position])) +
          " and " +
          std::to_string(std::max(order[position - 1], order[position])) +
          " overlap in the arena");
  }
}

void parse(const json &document, Manifest &manifest) {
  if (!document.is_object())
    throw ManifestError("the manifest is not a JSON object");
  const std::string top;
  std::string format = getString(document, "format", top);
  if (format != "lethe-program")
    throw ManifestError("format is '" + format + "', not 'lethe-program'");
  int64_t version = getInteger(document, "version", top, 0);
  if (version != 1)
    throw ManifestError("version " + std::to_string(version) +
                        " is not the version this driver reads (1)");
  manifest.function = getString(document, "function", top);
  manifest.arenaBytes = getInteger(document, "arena_bytes", top, 0);
  manifest.hostPoolBytes = getInteger(document, "host_pool_bytes", top, 0);
  manifest.alignment = getInteger(document, "alignment", top, 1);
  if (manifest.alignment & (manifest.alignment - 1))
    throw ManifestError("alignment " + std::to_string(manifest.alignment) +
                        " is not a power of two");

  const json &arguments = getArray(document, "arguments", top);
  for (size_t position = 0; position < arguments.size(); ++position) {
    std::string where = "arguments[" + std::to_string(position) + "]";
    const json &object = arguments[position];
    if (!object.is_object())
      throw ManifestError(where + " must be an object");
    checkIndex(object, position, where);
    ManifestArgument argument;
    parseArenaTensor(object, where, manifest.arenaBytes, argument);
    std::string kind = getString(object, "kind", where);
    if (kind == "data")
      argument.kind = ArgumentKind::Data;
    else if (kind == "label")
      argument.kind = ArgumentKind::Label;
    else if (kind == "parameter")
      argument.kind = ArgumentKind::Parameter;
    else if (kind == "state")
      argument.kind = ArgumentKind::State;
    else if (kind == "step")
      argument.kind = ArgumentKind::Step;
    else
      throw ManifestError(where + ".kind '" + kind +
                          "' is not data, label, parameter, state or step");
    if (object.contains("integer_bound")) {
      argument.integerBound = getInteger(object, "integer_bound", where, 1);
      argument.hasIntegerBound = true;
    }
    if (object.contains("ignore_index"))
      argument.ignoreIndex = getInteger(object, "ignore_index", where,
                                        std::numeric_limits<int64_t>::min());
    if (argument.kind == ArgumentKind::Step) {
      if (manifest.stepArgument >= 0)
        throw ManifestError(where +
                            " is a second step argument (the first "
                            "is argument " +
                            std::to_string(manifest.stepArgument) + ")");
      if (argument.dtype != LETHE_RT_I64 || !argument.shape.empty())
        throw ManifestError(where + " is the step counter but is " +
                            getDTypeName(argument.dtype) + " " +
                            formatShape(argument.shape) + ", not i64 []");
      manifest.stepArgument = static_cast<int64_t>(position);
    }
    for (size_t earlier = 0; earlier < manifest.arguments.size(); ++earlier)
      if (manifest.arguments[earlier].name == argument.name)
        throw ManifestError(where + ".name '" + argument.name +
                            "' is argument " + std::to_string(earlier) +
                            "'s too (weights and data files are found by "
                            "name)");
    manifest.arguments.push_back(std::move(argument));
  }
  checkDisjoint(manifest.arguments, "arguments");

  const json &results = getArray(document, "results", top);
  std::vector<bool> updated(manifest.arguments.size(), false);
  std::optional<size_t> loss;
  for (size_t position = 0; position < results.size(); ++position) {
    std::string where = "results[" + std::to_string(position) + "]";
    const json &object = results[position];
    if (!object.is_object())
      throw ManifestError(where + " must be an object");
    checkIndex(object, position, where);
    ManifestResult result;
    parseArenaTensor(object, where, manifest.arenaBytes, result);
    result.isLoss = getBool(object, "loss", where);
    result.updates = getInteger(object, "updates", where, -1);
    if (result.isLoss) {
      if (loss)
        throw ManifestError(where + " is a second loss (the first is result " +
                            std::to_string(*loss) + ")");
      if (!isFloatDType(result.dtype) || result.bytes == 0 ||
          result.bytes != getDTypeSize(result.dtype))
        throw ManifestError(
            where + " is the loss but is " + getDTypeName(result.dtype) + " " +
            formatShape(result.shape) + ", not one floating-point element");
      loss = position;
    }
    if (result.updates >= 0) {
      if (static_cast<size_t>(result.updates) >= manifest.arguments.size())
        throw ManifestError(
            where + " updates argument " + std::to_string(result.updates) +
            ", but there are " + std::to_string(manifest.arguments.size()));
      const ManifestArgument &argument = manifest.arguments[result.updates];
      if (argument.kind == ArgumentKind::Step)
        throw ManifestError(where + " updates the step argument " +
                            std::to_string(result.updates) +
                            "; the driver counts the steps itself");
      if (updated[result.updates])
        throw ManifestError(where + " updates argument " +
                            std::to_string(result.updates) +
                            ", which an earlier result updates too");
      if (argument.dtype != result.dtype || argument.shape != result.shape)
        throw ManifestError(
            where + " is " + getDTypeName(result.dtype) + " " +
            formatShape(result.shape) + " but updates argument " +
            std::to_string(result.updates) + " ('" + argument.name +
            "'), which is " + getDTypeName(argument.dtype) + " " +
            formatShape(argument.shape));
      updated[result.updates] = true;
    }
    manifest.results.push_back(std::move(result));
  }
  if (!loss)
    throw ManifestError("no result has \"loss\": true");
  manifest.lossResult = *loss;
  checkDisjoint(manifest.results, "results");

  const json &plan = getMember(document, "plan", top);
  if (!plan.is_object())
    throw ManifestError("plan must be an object");
  manifest.plan.strategy = getOptionalString(plan, "strategy");
  manifest.plan.profile = getOptionalString(plan, "profile");
  manifest.plan.budgetBytes = getOptionalNumber(plan, "budget_bytes");
  manifest.plan.peakBytes = getOptionalNumber(plan, "peak_bytes");
  manifest.plan.unplannedPeakBytes =
      getOptionalNumber(plan, "unplanned_peak_bytes");
  manifest.plan.seconds = getOptionalNumber(plan, "seconds");
  manifest.plan.unplannedSeconds = getOptionalNumber(plan, "unplanned_seconds");
  manifest.plan.livenessPeakBytes =
      getOptionalNumber(plan, "liveness_peak_bytes");

  const json &ops = getArray(document, "ops", top);
  for (size_t position = 0; position < ops.size(); ++position) {
    std::string where = "ops[" + std::to_string(position) + "]";
    const json &object = ops[position];
    if (!object.is_object())
      throw ManifestError(where + " must be an object");
    checkIndex(object, position, where);
    ManifestOp op;
    op.kind = getString(object, "kind", where);
    if (op.kind == "compute" || op.kind == "recompute") {
      op.op = getString(object, "op", where);
      op.node = getInteger(object, "node", where, 0);
    } else if (op.kind == "offload" || op.kind == "prefetch" ||
               op.kind == "release") {
      op.value = getInteger(object, "value", where, 0);
      op.valueName = getString(object, "name", where);
    } else {
      throw ManifestError(where + ".kind '" + op.kind +
                          "' is not compute, recompute, offload, prefetch "
                          "or release");
    }
    op.liveBytes = getInteger(object, "live_bytes", where, 0);
    op.predictedSeconds = getOptionalNumber(object, "predicted_seconds", where);
    manifest.ops.push_back(std::move(op));
  }
}

} // namespace

const char *lethe::driver::getArgumentKindName(ArgumentKind kind) {
  switch (kind) {
  case ArgumentKind::Data:
    return "data";
  case ArgumentKind::Label:
    return "label";
  case ArgumentKind::Parameter:
    return "parameter";
  case ArgumentKind::State:
    return "state";
  case ArgumentKind::Step:
    return "step";
  }
  return "?";
}

bool lethe::driver::parseManifest(std::string_view text, Manifest &manifest,
                                  std::string &error) {
  json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) {
    error = "the manifest is not valid JSON";
    return false;
  }
  manifest = Manifest();
  try {
    parse(document, manifest);
  } catch (const ManifestError &manifestError) {
    error = manifestError.what();
    return false;
  }
  return true;
}

StateUpdates lethe::driver::planStateUpdates(const Manifest &manifest) {
  StateUpdates updates;
  updates.onDevice.assign(manifest.arguments.size(), false);
  auto intersect = [](uint64_t a, uint64_t aBytes, uint64_t b,
                      uint64_t bBytes) {
    return a < b + bBytes && b < a + aBytes;
  };
  auto targetOf = [&](const ManifestResult &result) {
    return manifest.arguments[result.updates].offset;
  };
  // The results to copy: neither in place nor empty.
  std::vector<size_t> moving;
  for (size_t index = 0; index < manifest.results.size(); ++index) {
    const ManifestResult &result = manifest.results[index];
    if (result.updates < 0 || result.bytes == 0)
      continue;
    uint64_t target = targetOf(result);
    if (target == result.offset)
      updates.onDevice[result.updates] = true;
    else if (intersect(target, result.bytes, result.offset, result.bytes))
      updates.throughHost.push_back(index);
    else
      moving.push_back(index);
  }
  // Copy i must wait for every copy j whose result its argument overlaps
  // (results do not overlap one another, nor arguments: only these).
  size_t count = moving.size();
  std::vector<std::vector<size_t>> waiters(count);
  std::vector<size_t> waitsFor(count, 0);
  for (size_t i = 0; i < count; ++i) {
    const ManifestResult &writer = manifest.results[moving[i]];
    for (size_t j = 0; j < count; ++j) {
      const ManifestResult &read = manifest.results[moving[j]];
      if (i != j &&
          intersect(targetOf(writer), writer.bytes, read.offset, read.bytes)) {
        waiters[j].push_back(i);
        ++waitsFor[i];
      }
    }
  }
  // Kahn's order, lowest index first; what a cycle holds goes through the
  // host (read before any copy, so that it constrains none).
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < count; ++i)
    if (waitsFor[i] == 0)
      ready.push(i);
  std::vector<bool> done(count, false);
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    done[i] = true;
    updates.deviceCopies.push_back(moving[i]);
    updates.onDevice[manifest.results[moving[i]].updates] = true;
    for (size_t waiter : waiters[i])
      if (--waitsFor[waiter] == 0)
        ready.push(waiter);
  }
  for (size_t i = 0; i < count; ++i)
    if (!done[i])
      updates.throughHost.push_back(moving[i]);
  std::sort(updates.throughHost.begin(), updates.throughHost.end());
  return updates;
}
