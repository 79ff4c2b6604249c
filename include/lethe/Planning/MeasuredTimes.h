//===- MeasuredTimes.h - Op times an executable measured --------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Profile-guided planning: a planned executable's --profile file
// (docs/Executables.md, "lethe-program-profile") gives the measured time of
// every op it ran; applied to a planning problem of the same training step,
// those times replace the nodes' roofline estimates.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_PLANNING_MEASUREDTIMES_H
#define LETHE_PLANNING_MEASUREDTIMES_H

#include "lethe/Planning/Schedule.h"

#include <string>
#include <string_view>

namespace lethe::planning {

/// Sets the time of every node that `text` (an executable's --profile JSON)
/// measured: the mean over the node's computes and recomputes of their mean
/// time per step. Nodes it did not measure keep their times. Fails, setting
/// `error` to one line that names `origin`, on malformed JSON, another
/// format or version, a node that `problem` does not have, or a node whose
/// op differs from the problem's (a profile of another training step).
/// Returns the number of nodes it set in `measured`.
bool applyMeasuredTimes(std::string_view text, std::string_view origin,
                        PlanningProblem &problem, int &measured,
                        std::string &error);

} // namespace lethe::planning

#endif // LETHE_PLANNING_MEASUREDTIMES_H
