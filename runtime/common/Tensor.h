//===- Tensor.h - Tensor helpers shared by the backends ---------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Host-side helpers on tensor descriptors that every backend uses: dtype
// names and shape texts as error messages print them, element counts, row-
// major and broadcast strides, and the ONNX multidirectional broadcast.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_COMMON_TENSOR_H
#define LETHE_RUNTIME_COMMON_TENSOR_H

#include "lethe_rt.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lethe::rt {

/// The name of a dtype as in MLIR ("f32", "i64", ...).
const char *dtypeName(lethe_rt_dtype dtype);

/// "2x3x4" for a tensor's shape ("scalar" for rank 0).
std::string shapeString(const lethe_rt_tensor &tensor);
/// "2x3" for a shape ("scalar" when empty), as shapeString does for tensors.
std::string shapeText(const std::vector<int64_t> &shape);

inline bool isFloat(lethe_rt_dtype dtype) {
  return dtype == LETHE_RT_F16 || dtype == LETHE_RT_BF16 ||
         dtype == LETHE_RT_F32 || dtype == LETHE_RT_F64;
}

inline int64_t numElements(const lethe_rt_tensor &tensor) {
  int64_t count = 1;
  for (int32_t i = 0; i < tensor.rank; ++i)
    count *= tensor.shape[i];
  return count;
}

/// The shape of `tensor` as a vector.
inline std::vector<int64_t> shapeOf(const lethe_rt_tensor &tensor) {
  return std::vector<int64_t>(tensor.shape, tensor.shape + tensor.rank);
}

/// Whether the data of two tensors overlap in memory.
bool overlaps(const lethe_rt_tensor &a, const lethe_rt_tensor &b);

/// Row-major strides (in elements) of `tensor`.
std::vector<int64_t> stridesOf(const lethe_rt_tensor &tensor);

/// Strides with which to read `input` at the indices of `output` when input
/// broadcasts to output (ONNX multidirectional rule, input right-aligned):
/// broadcast dims get stride 0. Has output.rank entries. Fails (returns false)
/// when input does not broadcast to output.
bool broadcastStrides(const lethe_rt_tensor &input,
                      const lethe_rt_tensor &output,
                      std::vector<int64_t> &strides);

/// The ONNX multidirectional broadcast of `operands`' shapes into `shape`;
/// false when they do not broadcast.
bool broadcastShape(const std::vector<const lethe_rt_tensor *> &operands,
                    std::vector<int64_t> &shape);

} // namespace lethe::rt

#endif // LETHE_RUNTIME_COMMON_TENSOR_H
