//===- DeviceProfile.h - What the planner knows of a device -----*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// A device profile: peak FLOP/s per precision, memory bandwidth, host-link
// bandwidth per direction, kernel launch overhead and memory size, read from
// JSON (profiles/*.json are built in by name; docs/DeviceProfiles.md is the
// schema). The planner turns an op's cost (FLOPs and bytes moved, from the
// cost interface) into a time with the roofline model, and a copy's bytes
// into a transfer time. Plain C++: no MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_PLANNING_DEVICEPROFILE_H
#define LETHE_PLANNING_DEVICEPROFILE_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lethe::planning {

/// The floating-point precisions a profile gives peaks for.
enum class Precision { F16, BF16, F32, F64 };

/// The direction of a copy over the host link.
enum class CopyDirection { HostToDevice, DeviceToHost };

struct DeviceProfile {
  std::string name;
  std::string description;
  /// Peak FLOP/s, indexed by Precision.
  double peakFlops[4] = {0, 0, 0, 0};
  /// Device memory bandwidth, bytes per second.
  double memoryBandwidth = 0;
  /// Host-link bandwidth per direction, bytes per second.
  double hostToDeviceBandwidth = 0;
  double deviceToHostBandwidth = 0;
  /// Seconds every kernel costs on top of its work.
  double launchOverhead = 0;
  /// Device memory, bytes.
  int64_t memoryBytes = 0;

  double getPeakFlops(Precision precision) const {
    return peakFlops[static_cast<int>(precision)];
  }

  /// The roofline time of a kernel: the launch overhead plus the larger of
  /// its compute time at the precision's peak and its memory time.
  double estimateKernelSeconds(int64_t flops, int64_t bytes,
                               Precision precision) const;

  /// The time to copy `bytes` over the host link in `direction`.
  double estimateCopySeconds(int64_t bytes, CopyDirection direction) const;
};

/// Parses a profile from JSON `text` (`origin` names it in errors). On
/// failure returns false and sets `error` to one line naming the problem.
bool parseDeviceProfile(std::string_view text, std::string_view origin,
                        DeviceProfile &profile, std::string &error);

/// The profile `nameOrPath`: a built-in one by name (see
/// getBuiltinProfileNames), else a JSON file. Same errors as
/// parseDeviceProfile, and an unknown name that is not a readable file is one.
bool loadDeviceProfile(const std::string &nameOrPath, DeviceProfile &profile,
                       std::string &error);

/// The names of the built-in profiles, sorted.
std::vector<std::string> getBuiltinProfileNames();

} // namespace lethe::planning

#endif // LETHE_PLANNING_DEVICEPROFILE_H
