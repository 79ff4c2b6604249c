//===- MeasuredProfile.h - What an executable measured ----------*- C++ -*-===//
//-*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Profile-guided planning: a planned executable's --profile file
// (docs/Executables.md, "lethe-program-profile") gives the measured time of
// every op it ran, and the workspace an op asked for beyond its plan's (a
// backend library's, such as cuDNN's for a convolution); applied to a
// planning problem of the same training step, those times replace the
// nodes' roofline estimates and those workspaces raise the nodes'.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_PLANNING_MEASUREDPROFILE_H
#define LETHE_PLANNING_MEASUREDPROFILE_H

#include "lethe/Planning/Schedule.h"

#include <string>
#include <string_view>
#include <vector>

namespace lethe::planning {

/// What applyMeasuredProfile changed.
struct MeasuredNodes {
  /// How many nodes got a measured time.
  int timed = 0;
  /// The nodes whose workspace the profile raised, in increasing order.
  std::vector<int> widened;
};

/// Sets the time of every node that `text` (an executable's --profile JSON)
/// measured: the mean over the node's computes and recomputes of their mean
/// time per step. Nodes it did not measure keep their times. Raises the
/// workspace of every node whose computes or recomputes asked for more
/// (their most `workspace_bytes`, aligned as the arena aligns its blocks).
/// Fails, setting `error` to one line that names `origin`, on malformed
/// JSON, another format or version, a node that `problem` does not have, or
/// a node whose op differs from the problem's (a profile of another
/// training step).
bool applyMeasuredProfile(std::string_view text, std::string_view origin,
                          PlanningProblem &problem, MeasuredNodes &measured,
                          std::string &error);

} // namespace lethe::planning

#endif // LETHE_PLANNING_MEASUREDPROFILE_H
