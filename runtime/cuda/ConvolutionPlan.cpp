//===- ConvolutionPlan.cpp - How the CUDA backend runs a convolution ------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The host-side decisions of ConvolutionPlan.h.
//
//===----------------------------------------------------------------------===//

#include "ConvolutionPlan.h"
#include "common/Tensor.h"

#include <climits>

using namespace lethe::rt;

std::string lethe::rt::cudnnGeometryError(
    const ConvolutionGeometry &geometry,
    const std::vector<const lethe_rt_tensor *> &tensors, CudnnGeometry &cudnn) {
  for (const lethe_rt_tensor *tensor : tensors) {
    for (int32_t dim = 0; dim < tensor->rank; ++dim)
      if (tensor->shape[dim] == 0)
        return formatMessage("a tensor (%s) has no elements",
                             shapeString(*tensor).c_str());
    if (numElements(*tensor) > INT_MAX)
      return formatMessage("a tensor (%s) has more than %d elements",
                           shapeString(*tensor).c_str(), INT_MAX);
  }
  cudnn = CudnnGeometry();
  for (int32_t dim = 0; dim < geometry.rank; ++dim) {
    if (geometry.padBegin[dim] != geometry.padEnd[dim])
      return formatMessage("spatial dim %d is padded by %lld at the start and "
                           "%lld at the end",
                           dim, static_cast<long long>(geometry.padBegin[dim]),
                           static_cast<long long>(geometry.padEnd[dim]));
    // cuDNN sizes the output (for the data gradient, checks it) as
    // (input + 2 pad - dilation (kernel - 1) - 1) / stride + 1.
    int64_t span = geometry.input[dim] + 2 * geometry.padBegin[dim] -
                   geometry.dilations[dim] * (geometry.kernel[dim] - 1) - 1;
    if (span < 0 || span / geometry.strides[dim] + 1 != geometry.output[dim])
      return formatMessage("spatial dim %d: an input of %lld gives cuDNN an "
                           "output other than %lld",
                           dim, static_cast<long long>(geometry.input[dim]),
                           static_cast<long long>(geometry.output[dim]));
    for (int64_t value : {geometry.padBegin[dim], geometry.strides[dim],
                          geometry.dilations[dim]})
      if (value > INT_MAX)
        return formatMessage("spatial dim %d: an attribute (%lld) is above %d",
                             dim, static_cast<long long>(value), INT_MAX);
    cudnn.input.push_back(static_cast<int>(geometry.input[dim]));
    cudnn.output.push_back(static_cast<int>(geometry.output[dim]));
    cudnn.kernel.push_back(static_cast<int>(geometry.kernel[dim]));
    cudnn.pads.push_back(static_cast<int>(geometry.padBegin[dim]));
    cudnn.strides.push_back(static_cast<int>(geometry.strides[dim]));
    cudnn.dilations.push_back(static_cast<int>(geometry.dilations[dim]));
  }
  // cuDNN's descriptors have at least 4 dims: a 1-D convolution is a 2-D one
  // whose second spatial dim is 1 everywhere.
  if (geometry.rank == 1) {
    for (std::vector<int> *dims : {&cudnn.input, &cudnn.output, &cudnn.kernel,
                                   &cudnn.strides, &cudnn.dilations})
      dims->push_back(1);
    cudnn.pads.push_back(0);
  }
  cudnn.spatialDims = static_cast<int>(cudnn.input.size());
  return "";
}

int64_t lethe::rt::plannedWorkspaceBytes(int64_t weightChannels,
                                         const ConvolutionGeometry &geometry,
                                         int64_t elementBytes) {
  return weightChannels * geometry.kernelSize * geometry.outputSize *
         elementBytes;
}

int lethe::rt::chooseAlgorithm(
    const std::vector<AlgorithmCandidate> &candidates, uint64_t budgetBytes) {
  for (size_t index = 0; index < candidates.size(); ++index) {
    const AlgorithmCandidate &candidate = candidates[index];
    if (candidate.supported && candidate.deterministic &&
        candidate.workspaceBytes <= budgetBytes)
      return static_cast<int>(index);
  }
  return -1;
}

int lethe::rt::leastWorkspaceAlgorithm(
    const std::vector<AlgorithmCandidate> &candidates) {
  int least = -1;
  for (size_t index = 0; index < candidates.size(); ++index) {
    const AlgorithmCandidate &candidate = candidates[index];
    if (candidate.supported && candidate.deterministic &&
        (least < 0 ||
         candidate.workspaceBytes < candidates[least].workspaceBytes))
      least = static_cast<int>(index);
  }
  return least;
}
