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

#include "JsonUtils.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

using namespace lethe::planning;
using namespace lethe::planning::json_utils;

namespace {

/// The built-in profiles (profiles/*.json), generated at configure time.
const std::pair<const char *, const char *> kBuiltinProfiles[] = {
#include "BuiltinProfiles.inc"
};

const char *const kPrecisionNames[] = {"f16", "bf16", "f32", "f64"};

/// The positive finite number `key` of `object`; `context` prefixes the
/// errors ("peak_flops: 'f16' is missing").
double getPositiveMember(const json &object, const char *key,
                         const std::string &context = "") {
  std::string what = context + "'" + key + "'";
  auto it = object.find(key);
  if (it == object.end())
    throw SchemaError(what + " is missing");
  return getPositive(*it, what);
}

DeviceProfile parseObject(const json &document) {
  if (!document.is_object())
    throw SchemaError("the profile must be a JSON object");
  checkKeys(document,
            {"name", "description", "peak_flops", "memory_bandwidth",
             "host_to_device_bandwidth", "device_to_host_bandwidth",
             "launch_overhead", "memory_bytes"},
            "");
  DeviceProfile profile;
  for (auto [key, field] :
       {std::make_pair("name", &profile.name),
        std::make_pair("description", &profile.description)}) {
    auto it = document.find(key);
    if (it == document.end() || !it->is_string() ||
        it->get<std::string>().empty())
      throw SchemaError(std::string("'") + key +
                        "' must be a non-empty string");
    *field = it->get<std::string>();
  }
  auto peaks = document.find("peak_flops");
  if (peaks == document.end() || !peaks->is_object())
    throw SchemaError(
        "'peak_flops' must be an object with f16, bf16, f32 and f64");
  checkKeys(*peaks, {"f16", "bf16", "f32", "f64"}, "'peak_flops'");
  for (int i = 0; i < 4; ++i)
    profile.peakFlops[i] =
        getPositiveMember(*peaks, kPrecisionNames[i], "peak_flops: ");
  profile.memoryBandwidth = getPositiveMember(document, "memory_bandwidth");
  profile.hostToDeviceBandwidth =
      getPositiveMember(document, "host_to_device_bandwidth");
  profile.deviceToHostBandwidth =
      getPositiveMember(document, "device_to_host_bandwidth");
  profile.launchOverhead = getPositiveMember(document, "launch_overhead");
  double memoryBytes = getPositiveMember(document, "memory_bytes");
  const json &memory = document.at("memory_bytes");
  if (!memory.is_number_integer() || memoryBytes >= 9.2e18)
    throw SchemaError(
        "'memory_bytes' must be a whole number of bytes below 2^63, got " +
        memory.dump());
  profile.memoryBytes = memory.get<int64_t>();
  return profile;
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
  try {
    profile = parseObject(parseDocument(text));
  } catch (const SchemaError &schemaError) {
    error = "device profile " + std::string(origin) + ": " + schemaError.what();
    return false;
  }
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
