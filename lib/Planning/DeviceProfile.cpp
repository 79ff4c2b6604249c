//===- DeviceProfile.cpp - Device profiles from JSON ----------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Reading profiles is strict: every field is required, numbers must be
// positive and finite, and an unknown field is an error (a misspelt
// "memory_bandwith" must not silently leave a default).
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/DeviceProfile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

using namespace lethe::planning;
using json = nlohmann::json;

namespace {

/// The built-in profiles (profiles/*.json), generated at configure time.
const std::pair<const char *, const char *> kBuiltinProfiles[] = {
#include "BuiltinProfiles.inc"
};

const char *const kPrecisionNames[] = {"f16", "bf16", "f32", "f64"};

/// Reads the positive finite number `key` of `object` into `value`.
bool readPositive(const json &object, const char *key, double &value,
                  std::string &why) {
  auto it = object.find(key);
  if (it == object.end()) {
    why = std::string("'") + key + "' is missing";
    return false;
  }
  if (!it->is_number()) {
    why = std::string("'") + key + "' must be a number, got " + it->dump();
    return false;
  }
  value = it->get<double>();
  if (!std::isfinite(value) || value <= 0) {
    why = std::string("'") + key + "' must be positive and finite, got " +
          it->dump();
    return false;
  }
  return true;
}

/// Fails when `object` has a key not in `known`.
bool checkKeys(const json &object, std::initializer_list<const char *> known,
               const std::string &where, std::string &why) {
  for (const auto &item : object.items())
    if (std::none_of(known.begin(), known.end(),
                     [&](const char *key) { return item.key() == key; })) {
      why = "unknown field '" + item.key() + "'" + where;
      return false;
    }
  return true;
}

bool parseObject(const json &document, DeviceProfile &profile,
                 std::string &why) {
  if (!document.is_object()) {
    why = "the profile must be a JSON object";
    return false;
  }
  if (!checkKeys(document,
                 {"name", "description", "peak_flops", "memory_bandwidth",
                  "host_to_device_bandwidth", "device_to_host_bandwidth",
                  "launch_overhead", "memory_bytes"},
                 "", why))
    return false;
  for (const char *key : {"name", "description"}) {
    auto it = document.find(key);
    if (it == document.end() || !it->is_string() ||
        it->get<std::string>().empty()) {
      why = std::string("'") + key + "' must be a non-empty string";
      return false;
    }
  }
  profile.name = document["name"].get<std::string>();
  profile.description = document["description"].get<std::string>();
  auto peaks = document.find("peak_flops");
  if (peaks == document.end() || !peaks->is_object()) {
    why = "'peak_flops' must be an object with f16, bf16, f32 and f64";
    return false;
  }
  if (!checkKeys(*peaks, {"f16", "bf16", "f32", "f64"}, " in 'peak_flops'",
                 why))
    return false;
  for (int i = 0; i < 4; ++i)
    if (!readPositive(*peaks, kPrecisionNames[i], profile.peakFlops[i], why)) {
      why = "peak_flops: " + why;
      return false;
    }
  double memoryBytes = 0;
  if (!readPositive(document, "memory_bandwidth", profile.memoryBandwidth,
                    why) ||
      !readPositive(document, "host_to_device_bandwidth",
                    profile.hostToDeviceBandwidth, why) ||
      !readPositive(document, "device_to_host_bandwidth",
                    profile.deviceToHostBandwidth, why) ||
      !readPositive(document, "launch_overhead", profile.launchOverhead, why) ||
      !readPositive(document, "memory_bytes", memoryBytes, why))
    return false;
  if (!document["memory_bytes"].is_number_integer() || memoryBytes >= 9.2e18) {
    why = "'memory_bytes' must be a whole number of bytes below 2^63, got " +
          document["memory_bytes"].dump();
    return false;
  }
  profile.memoryBytes = document["memory_bytes"].get<int64_t>();
  return true;
}

} // namespace

double DeviceProfile::estimateKernelSeconds(int64_t flops, int64_t bytes,
                                            Precision precision) const {
  double compute = static_cast<double>(flops) / getPeakFlops(precision);
  double memory = static_cast<double>(bytes) / memoryBandwidth;
  return launchOverhead + std::max(compute, memory);
}

double DeviceProfile::estimateCopySeconds(int64_t bytes,
                                          CopyDirection direction) const {
  double bandwidth = direction == CopyDirection::HostToDevice
                         ? hostToDeviceBandwidth
                         : deviceToHostBandwidth;
  return static_cast<double>(bytes) / bandwidth;
}

bool lethe::planning::parseDeviceProfile(std::string_view text,
                                         std::string_view origin,
                                         DeviceProfile &profile,
                                         std::string &error) {
  std::string prefix = "device profile " + std::string(origin) + ": ";
  json document;
  try {
    document = json::parse(text);
  } catch (const json::parse_error &parseError) {
    // nlohmann's message: "[json.exception.parse_error.101] parse error at
    // line 3, column 5: ..."; keep what follows the bracketed id.
    std::string message = parseError.what();
    size_t start = message.find("] ");
    error = prefix + "invalid JSON: " +
            (start == std::string::npos ? message : message.substr(start + 2));
    return false;
  }
  DeviceProfile parsed;
  std::string why;
  if (!parseObject(document, parsed, why)) {
    error = prefix + why;
    return false;
  }
  profile = std::move(parsed);
  return true;
}

bool lethe::planning::loadDeviceProfile(const std::string &nameOrPath,
                                        DeviceProfile &profile,
                                        std::string &error) {
  for (const auto &[name, text] : kBuiltinProfiles)
    if (nameOrPath == name)
      return parseDeviceProfile(text, nameOrPath, profile, error);
  std::ifstream file(nameOrPath, std::ios::binary);
  if (!file) {
    std::string names;
    for (const std::string &name : getBuiltinProfileNames())
      names += (names.empty() ? "" : ", ") + name;
    error = "device profile " + nameOrPath + ": not a built-in profile (" +
            names + ") nor a readable JSON file";
    return false;
  }
  std::ostringstream contents;
  contents << file.rdbuf();
  return parseDeviceProfile(contents.str(), nameOrPath, profile, error);
}

std::vector<std::string> lethe::planning::getBuiltinProfileNames() {
  std::vector<std::string> names;
  for (const auto &[name, text] : kBuiltinProfiles)
    names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}
