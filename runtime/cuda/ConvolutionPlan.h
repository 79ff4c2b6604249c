//===- ConvolutionPlan.h - How the CUDA backend runs a convolution -*- C++
//-*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The host-side decisions behind the CUDA backend's convolutions, kept free
// of cuDNN so that they are tested without a GPU: whether cuDNN's legacy
// convolution API can express a checked convolution (it pads each spatial
// dim by the same amount at both ends, and sizes the gradient of the input
// by the forward's output formula), the dims it is then given (a 1-D
// convolution as a 2-D one with a unit trailing dim), the workspace bytes the
// planner gives the op, and which of cuDNN's candidate algorithms is used.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_CUDA_CONVOLUTIONPLAN_H
#define LETHE_RUNTIME_CUDA_CONVOLUTIONPLAN_H

#include "common/Checks.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lethe::rt {

/// A convolution as cuDNN's Nd descriptors take it: `spatialDims` (2 or 3)
/// spatial dims of the forward convolution's input, output and kernel, with
/// one pad per dim applied at both ends.
struct CudnnGeometry {
  int spatialDims = 0;
  std::vector<int> input, output, kernel, pads, strides, dilations;
};

/// Why cuDNN cannot run the convolution of `geometry` on `tensors` (its
/// input, weight and output, in any order) ("" when it can, with `cudnn`
/// filled): pads that differ at the two ends of a dim, an input size from
/// which the forward's output formula does not give `geometry.output`
/// (conv_transpose with output_padding at or above the stride), a dim of
/// zero, or a tensor whose elements overflow cuDNN's int.
std::string
cudnnGeometryError(const ConvolutionGeometry &geometry,
                   const std::vector<const lethe_rt_tensor *> &tensors,
                   CudnnGeometry &cudnn);

/// The workspace bytes the planner gives a convolution (getWorkspaceBytes of
/// the lethe op: the CPU backend's im2col column buffer), for a weight whose
/// dim 1 is `weightChannels`, and `elementBytes` per column element (the
/// dtype's size; for conv_transpose at least 4, its columns being in the
/// compute type).
int64_t plannedWorkspaceBytes(int64_t weightChannels,
                              const ConvolutionGeometry &geometry,
                              int64_t elementBytes);

/// One algorithm cuDNN offers, as the choice needs it.
struct AlgorithmCandidate {
  int algorithm = 0;
  /// cuDNN can run it here (its status, and the workspace query, succeeded).
  bool supported = false;
  /// Its results do not depend on scheduling (CUDNN_DETERMINISTIC).
  bool deterministic = false;
  uint64_t workspaceBytes = 0;
};

/// The index of the first supported deterministic candidate whose workspace
/// is at most `budgetBytes` (any workspace when `budgetBytes` is UINT64_MAX:
/// the backend allocates it), or -1 for none: the call then runs in the
/// direct kernels, which need no workspace.
int chooseAlgorithm(const std::vector<AlgorithmCandidate> &candidates,
                    uint64_t budgetBytes);

/// The index of the supported deterministic candidate with the least
/// workspace (the first of those with the least), or -1 for none: when
/// chooseAlgorithm finds none within a planned workspace, the call asks for
/// this one's workspace (lethe_rt_op_workspace_wanted), with which a plan
/// runs it in cuDNN.
int leastWorkspaceAlgorithm(const std::vector<AlgorithmCandidate> &candidates);

} // namespace lethe::rt

#endif // LETHE_RUNTIME_CUDA_CONVOLUTIONPLAN_H
