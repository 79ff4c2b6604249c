//===- DeviceProfileTest.cpp - Device profiles ----------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The built-in profiles load and are sane, the roofline and copy estimates,
// and every error of a bad profile (one line, naming the problem).
//
//===----------------------------------------------------------------------===//

#include "lethe/Planning/DeviceProfile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace lethe::planning;

namespace {

TEST(DeviceProfileTest, BuiltinProfilesLoad) {
  std::vector<std::string> names = getBuiltinProfileNames();
  EXPECT_EQ(names,
            (std::vector<std::string>{"a100", "cpu", "h100", "h200", "v100"}));
  for (const std::string &name : names) {
    SCOPED_TRACE(name);
    DeviceProfile profile;
    std::string error;
    ASSERT_TRUE(loadDeviceProfile(name, profile, error)) << error;
    EXPECT_EQ(profile.name, name);
    // Half precision is never slower than f64, and the host link is slower
    // than device memory.
    EXPECT_GE(profile.getPeakFlops(Precision::F16),
              profile.getPeakFlops(Precision::F64));
    EXPECT_LT(profile.hostToDeviceBandwidth, profile.memoryBandwidth);
    EXPECT_GT(profile.memoryBytes, int64_t(1) << 30);
  }
  DeviceProfile h100, h200;
  std::string error;
  ASSERT_TRUE(loadDeviceProfile("h100", h100, error));
  ASSERT_TRUE(loadDeviceProfile("h200", h200, error));
  EXPECT_GT(h200.memoryBytes, h100.memoryBytes);
  EXPECT_GT(h200.memoryBandwidth, h100.memoryBandwidth);
}

TEST(DeviceProfileTest, RooflineAndCopyTimes) {
  DeviceProfile profile;
  std::string error;
  ASSERT_TRUE(parseDeviceProfile(R"({
    "name": "toy", "description": "round numbers",
    "peak_flops": {"f16": 4e12, "bf16": 4e12, "f32": 1e12, "f64": 5e11},
    "memory_bandwidth": 1e11, "host_to_device_bandwidth": 1e10,
    "device_to_host_bandwidth": 2e10, "launch_overhead": 1e-6,
    "memory_bytes": 1073741824})",
                                 "toy", profile, error))
      << error;
  // Compute-bound: 2e12 FLOPs at 1e12/s is 2 s; 1e9 bytes take 0.01 s.
  EXPECT_DOUBLE_EQ(profile.estimateKernelSeconds(2'000'000'000'000,
                                                 1'000'000'000, Precision::F32),
                   2.0 + 1e-6);
  // Memory-bound: in f16 the 2e12 FLOPs take 0.5 s, the 1e11 bytes 1 s.
  EXPECT_DOUBLE_EQ(profile.estimateKernelSeconds(
                       2'000'000'000'000, 100'000'000'000, Precision::F16),
                   1.0 + 1e-6);
  EXPECT_DOUBLE_EQ(profile.estimateKernelSeconds(0, 0, Precision::F64), 1e-6);
  EXPECT_DOUBLE_EQ(
      profile.estimateCopySeconds(1'000'000'000, CopyDirection::HostToDevice),
      0.1);
  EXPECT_DOUBLE_EQ(
      profile.estimateCopySeconds(1'000'000'000, CopyDirection::DeviceToHost),
      0.05);
}

/// A valid profile's text with `field` replaced by `replacement` (the
/// whole `"key": value` pair), or removed when `replacement` is empty.
std::string profileWith(const std::string &field,
                        const std::string &replacement) {
  std::vector<std::pair<std::string, std::string>> fields = {
      {"name", R"("name": "x")"},
      {"description", R"("description": "y")"},
      {"peak_flops",
       R"("peak_flops": {"f16": 1, "bf16": 1, "f32": 1, "f64": 1})"},
      {"memory_bandwidth", R"("memory_bandwidth": 1)"},
      {"host_to_device_bandwidth", R"("host_to_device_bandwidth": 1)"},
      {"device_to_host_bandwidth", R"("device_to_host_bandwidth": 1)"},
      {"launch_overhead", R"("launch_overhead": 1)"},
      {"memory_bytes", R"("memory_bytes": 1024)"}};
  std::string text = "{";
  for (const auto &[key, pair] : fields) {
    std::string value = key == field ? replacement : pair;
    if (value.empty())
      continue;
    text += (text.size() > 1 ? ", " : "") + value;
  }
  return text + "}";
}

TEST(DeviceProfileTest, RejectsBadProfiles) {
  struct Case {
    std::string text, error;
  };
  const std::string prefix = "device profile test: ";
  const Case cases[] = {
      {profileWith("", ""), ""},
      {"{\"name\": ", "invalid JSON: parse error at line 1, column 10: "
                      "syntax error while parsing value - unexpected "
                      "end of input; expected '[', '{', or a literal"},
      {"[]", "the profile must be a JSON object"},
      {profileWith("memory_bandwidth", ""), "'memory_bandwidth' is missing"},
      {profileWith("memory_bandwidth", R"("memory_bandwith": 1)"),
       "unknown field 'memory_bandwith'"},
      {profileWith("launch_overhead", R"("launch_overhead": "5us")"),
       "'launch_overhead' must be a number, got \"5us\""},
      {profileWith("host_to_device_bandwidth",
                   R"("host_to_device_bandwidth": 0)"),
       "'host_to_device_bandwidth' must be positive and finite, got 0"},
      {profileWith("peak_flops", R"("peak_flops": {"f32": 1})"),
       "peak_flops: 'f16' is missing"},
      {profileWith(
           "peak_flops",
           R"("peak_flops": {"f16": 1, "bf16": 1, "f32": 1, "f64": 1, "fp8": 2})"),
       "unknown field 'fp8' in 'peak_flops'"},
      {profileWith("peak_flops", R"("peak_flops": 1e12)"),
       "'peak_flops' must be an object with f16, bf16, f32 and f64"},
      {profileWith("memory_bytes", R"("memory_bytes": 1.5)"),
       "'memory_bytes' must be a whole number of bytes below 2^63, got 1.5"},
      {profileWith("name", ""), "'name' must be a non-empty string"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.text);
    DeviceProfile profile;
    std::string error;
    bool parsed = parseDeviceProfile(c.text, "test", profile, error);
    if (c.error.empty()) {
      EXPECT_TRUE(parsed) << error;
      continue;
    }
    EXPECT_FALSE(parsed);
    EXPECT_EQ(error, prefix + c.error);
    EXPECT_EQ(error.find('\n'), std::string::npos);
  }
}

TEST(DeviceProfileTest, LoadsFilesAndRejectsUnknownNames) {
  DeviceProfile profile;
  std::string error;
  EXPECT_FALSE(loadDeviceProfile("h300", profile, error));
  EXPECT_EQ(error, "device profile h300: not a built-in profile (a100, cpu, "
                   "h100, h200, v100) nor a readable JSON file");

  std::string path = ::testing::TempDir() + "lethe-profile-test.json";
  {
    std::ofstream file(path);
    file << profileWith("", "");
  }
  EXPECT_TRUE(loadDeviceProfile(path, profile, error)) << error;
  EXPECT_EQ(profile.name, "x");
  EXPECT_EQ(profile.memoryBytes, 1024);
  std::remove(path.c_str());
}

} // namespace
