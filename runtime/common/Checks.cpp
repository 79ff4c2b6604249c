//===- Checks.cpp - Argument checks shared by the backends ----------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "common/Checks.h"
#include "common/PoolingWindow.h"
#include "common/Tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

using namespace lethe::rt;

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

namespace {

/// The size of the buffer messages are formatted into (a longer one is cut).
constexpr size_t messageCapacity = 512;

} // namespace

void lethe::rt::recordError(std::string &lastError, const char *call,
                            const char *format, va_list arguments) {
  char message[messageCapacity];
  std::vsnprintf(message, sizeof(message), format, arguments);
  lastError = std::string(call) + ": " + message;
}

std::string lethe::rt::formatMessage(const char *format, ...) {
  char message[messageCapacity];
  va_list arguments;
  va_start(arguments, format);
  std::vsnprintf(message, sizeof(message), format, arguments);
  va_end(arguments);
  return message;
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

std::string lethe::rt::tensorError(const char *what,
                                   const lethe_rt_tensor *tensor) {
  if (!tensor)
    return formatMessage("%s is missing (null descriptor)", what);
  if (lethe_rt_dtype_size(tensor->dtype) == 0)
    return formatMessage("%s has an invalid dtype %d", what,
                         static_cast<int>(tensor->dtype));
  if (tensor->rank < 0 || (tensor->rank > 0 && !tensor->shape))
    return formatMessage("%s has an invalid rank %d or no shape", what,
                         tensor->rank);
  for (int32_t i = 0; i < tensor->rank; ++i)
    if (tensor->shape[i] < 0)
      return formatMessage("%s has a negative dimension %lld", what,
                           static_cast<long long>(tensor->shape[i]));
  if (!tensor->data && numElements(*tensor) > 0)
    return formatMessage("%s (%s) has no data", what,
                         shapeString(*tensor).c_str());
  return "";
}

std::string lethe::rt::floatDtypeError(const char *what,
                                       const lethe_rt_tensor &tensor) {
  if (isFloat(tensor.dtype))
    return "";
  return formatMessage("%s must be f16, bf16, f32 or f64, got %s", what,
                       dtypeName(tensor.dtype));
}

std::string lethe::rt::dtypeError(const char *what,
                                  const lethe_rt_tensor &tensor,
                                  lethe_rt_dtype dtype) {
  if (tensor.dtype == dtype)
    return "";
  return formatMessage("%s must be %s, got %s", what, dtypeName(dtype),
                       dtypeName(tensor.dtype));
}

std::string lethe::rt::sameShapeError(const char *whatA,
                                      const lethe_rt_tensor &a,
                                      const char *whatB,
                                      const lethe_rt_tensor &b) {
  bool same = a.rank == b.rank;
  for (int32_t i = 0; same && i < a.rank; ++i)
    same = a.shape[i] == b.shape[i];
  if (same)
    return "";
  return formatMessage("%s (%s) and %s (%s) must have the same shape", whatA,
                       shapeString(a).c_str(), whatB, shapeString(b).c_str());
}

std::string lethe::rt::rankError(const char *what,
                                 const lethe_rt_tensor &tensor, int32_t rank) {
  if (tensor.rank == rank)
    return "";
  return formatMessage("%s must have rank %d, got %s", what, rank,
                       shapeString(tensor).c_str());
}

std::string lethe::rt::workspaceError(const lethe_rt_tensor &workspace,
                                      int64_t neededBytes, const char *purpose,
                                      size_t alignment) {
  if (workspace.dtype != LETHE_RT_U8 || workspace.rank != 1)
    return formatMessage("workspace must be a rank-1 u8 byte buffer, got %s "
                         "(%s)",
                         dtypeName(workspace.dtype),
                         shapeString(workspace).c_str());
  if (workspace.shape[0] < neededBytes)
    return formatMessage("workspace holds %lld bytes, but %s needs %lld; pass "
                         "at least the op's workspace bytes, or NULL",
                         static_cast<long long>(workspace.shape[0]), purpose,
                         static_cast<long long>(neededBytes));
  if (reinterpret_cast<uintptr_t>(workspace.data) % alignment)
    return formatMessage("workspace data must be aligned to %zu bytes",
                         alignment);
  return "";
}

std::string lethe::rt::broadcastOperandsError(
    const std::vector<const char *> &names,
    const std::vector<const lethe_rt_tensor *> &operands,
    const lethe_rt_tensor &out, std::vector<std::vector<int64_t>> &strides) {
  std::string described;
  for (size_t k = 0; k < operands.size(); ++k) {
    described += k == 0 ? "" : k + 1 == operands.size() ? " and " : ", ";
    described += std::string(names[k]) + " (" + shapeString(*operands[k]) + ")";
  }
  std::vector<int64_t> shape;
  if (!broadcastShape(operands, shape))
    return formatMessage("%s do not broadcast", described.c_str());
  if (shapeOf(out) != shape)
    return formatMessage("out (%s) must be %s, the broadcast of %s",
                         shapeString(out).c_str(), shapeText(shape).c_str(),
                         described.c_str());
  strides.resize(operands.size());
  for (size_t k = 0; k < operands.size(); ++k)
    broadcastStrides(*operands[k], out, strides[k]);
  return "";
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

std::string lethe::rt::matmulShapesError(const lethe_rt_tensor &lhs,
                                         const lethe_rt_tensor &rhs,
                                         const lethe_rt_tensor &out,
                                         MatmulShapes &shapes) {
  if (lhs.rank < 1 || rhs.rank < 1)
    return formatMessage("%s must have rank >= 1, got a scalar",
                         lhs.rank < 1 ? "lhs" : "rhs");

  // 1-D operands are promoted to matrices (lhs to a row, rhs to a column)
  // whose promoted dim is then dropped from the result.
  int32_t lhsRank = lhs.rank, rhsRank = rhs.rank;
  int64_t m = lhsRank >= 2 ? lhs.shape[lhsRank - 2] : 1;
  int64_t k = lhs.shape[lhsRank - 1];
  int64_t rhsK = rhsRank >= 2 ? rhs.shape[rhsRank - 2] : rhs.shape[0];
  int64_t n = rhsRank >= 2 ? rhs.shape[rhsRank - 1] : 1;
  if (k != rhsK)
    return formatMessage(
        "lhs (%s) and rhs (%s) have different contraction dims %lld "
        "and %lld",
        shapeString(lhs).c_str(), shapeString(rhs).c_str(),
        static_cast<long long>(k), static_cast<long long>(rhsK));

  // Broadcast the batch dims (all but the last two), right-aligned; a
  // broadcast dim has stride 0.
  int32_t lhsBatchRank = std::max(lhsRank - 2, 0);
  int32_t rhsBatchRank = std::max(rhsRank - 2, 0);
  int32_t batchRank = std::max(lhsBatchRank, rhsBatchRank);
  std::vector<int64_t> batchShape(batchRank), lhsStrides(batchRank, 0),
      rhsStrides(batchRank, 0), outStrides(batchRank, 0);
  int64_t lhsStride = m * k, rhsStride = k * n, outStride = m * n;
  for (int32_t dim = batchRank; dim-- > 0;) {
    int32_t lhsDim = dim - (batchRank - lhsBatchRank);
    int32_t rhsDim = dim - (batchRank - rhsBatchRank);
    int64_t lhsSize = lhsDim >= 0 ? lhs.shape[lhsDim] : 1;
    int64_t rhsSize = rhsDim >= 0 ? rhs.shape[rhsDim] : 1;
    if (lhsSize != rhsSize && lhsSize != 1 && rhsSize != 1)
      return formatMessage(
          "the batch dims of lhs (%s) and rhs (%s) do not broadcast",
          shapeString(lhs).c_str(), shapeString(rhs).c_str());
    batchShape[dim] = std::max(lhsSize, rhsSize);
    if (lhsSize != 1)
      lhsStrides[dim] = lhsStride;
    if (rhsSize != 1)
      rhsStrides[dim] = rhsStride;
    outStrides[dim] = outStride;
    lhsStride *= lhsSize;
    rhsStride *= rhsSize;
    outStride *= batchShape[dim];
  }
  std::vector<int64_t> expected = batchShape;
  if (lhsRank >= 2)
    expected.push_back(m);
  if (rhsRank >= 2)
    expected.push_back(n);
  if (shapeOf(out) != expected)
    return formatMessage("out (%s) must be %s for lhs (%s) and rhs (%s)",
                         shapeString(out).c_str(), shapeText(expected).c_str(),
                         shapeString(lhs).c_str(), shapeString(rhs).c_str());
  shapes.m = m;
  shapes.n = n;
  shapes.k = k;
  shapes.batchShape = std::move(batchShape);
  shapes.lhsStrides = std::move(lhsStrides);
  shapes.rhsStrides = std::move(rhsStrides);
  shapes.outStrides = std::move(outStrides);
  shapes.rhsShared = rhsStride == k * n;
  return "";
}

std::string lethe::rt::gemmShapesError(const lethe_rt_tensor &a,
                                       const lethe_rt_tensor &b,
                                       const lethe_rt_tensor *c, int trans_a,
                                       int trans_b, const lethe_rt_tensor &out,
                                       int64_t &m, int64_t &n, int64_t &k,
                                       std::vector<int64_t> &cStrides) {
  m = trans_a ? a.shape[1] : a.shape[0];
  k = trans_a ? a.shape[0] : a.shape[1];
  int64_t bK = trans_b ? b.shape[1] : b.shape[0];
  n = trans_b ? b.shape[0] : b.shape[1];
  if (k != bK)
    return formatMessage(
        "a (%s, trans_a %d) and b (%s, trans_b %d) have different "
        "contraction dims %lld and %lld",
        shapeString(a).c_str(), trans_a ? 1 : 0, shapeString(b).c_str(),
        trans_b ? 1 : 0, static_cast<long long>(k), static_cast<long long>(bK));
  std::vector<int64_t> expected{m, n};
  if (shapeOf(out) != expected)
    return formatMessage("out (%s) must be %s", shapeString(out).c_str(),
                         shapeText(expected).c_str());
  if (c && !broadcastStrides(*c, out, cStrides))
    return formatMessage("c (%s) does not broadcast to out (%s)",
                         shapeString(*c).c_str(), shapeString(out).c_str());
  return "";
}

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

std::string lethe::rt::convolutionOperandsError(const lethe_rt_tensor &x,
                                                const lethe_rt_tensor &w,
                                                const lethe_rt_tensor *bias,
                                                const lethe_rt_tensor &out,
                                                int64_t group,
                                                ConvolutionNames names) {
  if (x.rank < 3 || x.rank > 5 || w.rank != x.rank || out.rank != x.rank ||
      out.shape[0] != x.shape[0])
    return formatMessage(
        "x (%s), %s (%s) and %s (%s) must be N, C and 1 to 3 spatial dims",
        shapeString(x).c_str(), names.weight, shapeString(w).c_str(),
        names.output, shapeString(out).c_str());
  if (group < 1)
    return formatMessage("group must be positive, got %lld",
                         static_cast<long long>(group));
  if (bias && (bias->rank != 1 || bias->shape[0] != out.shape[1]))
    return formatMessage("bias (%s) must have one value per output channel "
                         "(%lld)",
                         shapeString(*bias).c_str(),
                         static_cast<long long>(out.shape[1]));
  return "";
}

std::string lethe::rt::convolutionGeometryError(
    const int64_t *spatialIn, const int64_t *spatialOut, const int64_t *kernel,
    const int64_t *strides, const int64_t *pads, const int64_t *dilations,
    int32_t rank, ConvolutionGeometry &geometry) {
  if (!strides || !pads || !dilations)
    return "strides, pads or dilations is missing";
  geometry = ConvolutionGeometry();
  geometry.rank = rank;
  for (int32_t dim = 0; dim < rank; ++dim) {
    if (strides[dim] <= 0 || dilations[dim] <= 0 || pads[dim] < 0 ||
        pads[dim + rank] < 0)
      return formatMessage("spatial dim %d: strides and dilations must be "
                           "positive and pads non-negative",
                           dim);
    geometry.input.push_back(spatialIn[dim]);
    geometry.output.push_back(spatialOut[dim]);
    geometry.kernel.push_back(kernel[dim]);
    geometry.strides.push_back(strides[dim]);
    geometry.padBegin.push_back(pads[dim]);
    geometry.padEnd.push_back(pads[dim + rank]);
    geometry.dilations.push_back(dilations[dim]);
    geometry.inputSize *= spatialIn[dim];
    geometry.outputSize *= spatialOut[dim];
    geometry.kernelSize *= kernel[dim];
  }
  return "";
}

std::string lethe::rt::convolutionShapesError(
    const lethe_rt_tensor &x, const lethe_rt_tensor &w,
    const lethe_rt_tensor &out, const int64_t *strides, const int64_t *pads,
    const int64_t *dilations, int64_t group, ConvolutionNames names,
    ConvolutionGeometry &geometry) {
  int64_t channels = x.shape[1], filters = w.shape[0];
  if (channels % group || filters % group || w.shape[1] * group != channels ||
      out.shape[1] != filters)
    return formatMessage(
        "channels do not match: x (%s), %s (%s), %s (%s), group %lld",
        shapeString(x).c_str(), names.weight, shapeString(w).c_str(),
        names.output, shapeString(out).c_str(), static_cast<long long>(group));
  int32_t rank = x.rank - 2;
  std::string error =
      convolutionGeometryError(x.shape + 2, out.shape + 2, w.shape + 2, strides,
                               pads, dilations, rank, geometry);
  if (!error.empty())
    return error;
  for (int32_t dim = 0; dim < rank; ++dim) {
    int64_t span = geometry.input[dim] + pads[dim] + pads[dim + rank] -
                   dilations[dim] * (geometry.kernel[dim] - 1) - 1;
    if (span < 0 || span / strides[dim] + 1 != geometry.output[dim])
      return formatMessage("%s's spatial dim %d (%lld) does not match x, %s "
                           "and the attributes",
                           names.output, dim,
                           static_cast<long long>(geometry.output[dim]),
                           names.weight);
  }
  return "";
}

std::string lethe::rt::convTransposeShapesError(
    const lethe_rt_tensor &x, const lethe_rt_tensor &w,
    const lethe_rt_tensor &out, const int64_t *strides, const int64_t *pads,
    const int64_t *dilations, const int64_t *outputPadding, int64_t group,
    ConvolutionGeometry &geometry) {
  int64_t channels = x.shape[1], filters = out.shape[1];
  if (channels % group || w.shape[0] != channels ||
      w.shape[1] * group != filters)
    return formatMessage(
        "channels do not match: x (%s), w (%s), out (%s), group %lld",
        shapeString(x).c_str(), shapeString(w).c_str(),
        shapeString(out).c_str(), static_cast<long long>(group));
  if (!outputPadding)
    return "output_padding is missing";
  // The geometry of the convolution whose adjoint this is: its input is our
  // output, its output our x.
  int32_t rank = x.rank - 2;
  std::string error =
      convolutionGeometryError(out.shape + 2, x.shape + 2, w.shape + 2, strides,
                               pads, dilations, rank, geometry);
  if (!error.empty())
    return error;
  for (int32_t dim = 0; dim < rank; ++dim) {
    int64_t size = strides[dim] * (geometry.output[dim] - 1) +
                   outputPadding[dim] +
                   dilations[dim] * (geometry.kernel[dim] - 1) + 1 - pads[dim] -
                   pads[dim + rank];
    if (size != geometry.input[dim])
      return formatMessage("out's spatial dim %d (%lld) does not match x, w "
                           "and the attributes (%lld)",
                           dim, static_cast<long long>(geometry.input[dim]),
                           static_cast<long long>(size));
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

std::string lethe::rt::numericDtypeError(const char *what,
                                         const lethe_rt_tensor &tensor) {
  if (tensor.dtype != LETHE_RT_I1)
    return "";
  return formatMessage("%s must be numeric, got i1", what);
}

std::string
lethe::rt::poolingWindowError(const lethe_rt_tensor &x,
                              const lethe_rt_tensor &out, const int64_t *kernel,
                              const int64_t *strides, const int64_t *pads,
                              const int64_t *dilations, PoolingWindow &window) {
  if (x.rank < 3 || x.rank > 2 + maxPoolingRank || out.rank != x.rank ||
      out.shape[0] != x.shape[0] || out.shape[1] != x.shape[1])
    return formatMessage(
        "x (%s) and out (%s) must be N, C and 1 to 3 spatial dims",
        shapeString(x).c_str(), shapeString(out).c_str());
  if (!kernel || !strides || !pads)
    return "kernel_shape, strides or pads is missing";
  window = PoolingWindow();
  window.rank = x.rank - 2;
  window.planes = x.shape[0] * x.shape[1];
  // The caller's dims, right-aligned in the window's.
  int32_t skipped = maxPoolingRank - window.rank;
  for (int32_t dim = 0; dim < window.rank; ++dim) {
    int64_t dilation = dilations ? dilations[dim] : 1;
    int64_t padBegin = pads[dim], padEnd = pads[dim + window.rank];
    if (kernel[dim] <= 0 || strides[dim] <= 0 || dilation <= 0 ||
        padBegin < 0 || padEnd < 0)
      return formatMessage("spatial dim %d: kernel, stride and dilation must "
                           "be positive and pads non-negative",
                           dim);
    int64_t input = x.shape[dim + 2], output = out.shape[dim + 2];
    // The last window must start inside the input or its padding.
    if (output > 0 && (output - 1) * strides[dim] >= input + padBegin + padEnd)
      return formatMessage(
          "out's spatial dim %d (%lld) is too large for x's (%lld)", dim,
          static_cast<long long>(output), static_cast<long long>(input));
    int32_t at = skipped + dim;
    window.input[at] = input;
    window.output[at] = output;
    window.kernel[at] = kernel[dim];
    window.strides[at] = strides[dim];
    window.padBegin[at] = padBegin;
    window.padEnd[at] = padEnd;
    window.dilations[at] = dilation;
    window.inputPlane *= input;
    window.outputPlane *= output;
  }
  return "";
}

std::string lethe::rt::storageOrderError(int64_t storageOrder) {
  if (storageOrder == 0 || storageOrder == 1)
    return "";
  return formatMessage("storage_order must be 0 or 1, not %lld",
                       static_cast<long long>(storageOrder));
}

std::string lethe::rt::globalPoolingError(const lethe_rt_tensor &x,
                                          const lethe_rt_tensor &out) {
  if (x.rank < 3 || out.rank != x.rank)
    return formatMessage("x (%s) must be N, C and spatial dims",
                         shapeString(x).c_str());
  if (numElements(out) != x.shape[0] * x.shape[1])
    return formatMessage("out (%s) must hold one value per plane",
                         shapeString(out).c_str());
  return "";
}

//===----------------------------------------------------------------------===//
// Normalization and dropout
//===----------------------------------------------------------------------===//

std::string lethe::rt::axisRangeError(const char *what,
                                      const lethe_rt_tensor &tensor,
                                      int64_t axis) {
  if (axis >= 0 && axis < tensor.rank)
    return "";
  return formatMessage("axis %lld is out of range for %s (%s)",
                       static_cast<long long>(axis), what,
                       shapeString(tensor).c_str());
}

std::string lethe::rt::batchNormRankError(const lethe_rt_tensor &x) {
  if (x.rank >= 2)
    return "";
  return formatMessage("x must have rank >= 2 (N, C, ...), got %s",
                       shapeString(x).c_str());
}

std::string lethe::rt::channelShapeError(const char *what,
                                         const lethe_rt_tensor &tensor,
                                         const lethe_rt_tensor &x) {
  int64_t channels = x.shape[1];
  if (tensor.rank == 1 && tensor.shape[0] == channels)
    return "";
  return formatMessage("%s (%s) must have shape %lld, the channels of x (%s)",
                       what, shapeString(tensor).c_str(),
                       static_cast<long long>(channels),
                       shapeString(x).c_str());
}

namespace {

/// Layer normalization's `mean` and `inv_std_dev` have x's shape with the
/// dims from `axis` on set to 1.
std::string layerNormStatisticsError(const lethe_rt_tensor &x, int64_t axis,
                                     const lethe_rt_tensor &mean,
                                     const lethe_rt_tensor &invStdDev) {
  std::vector<int64_t> statShape = shapeOf(x);
  std::fill(statShape.begin() + axis, statShape.end(), 1);
  for (const auto &[what, stat] :
       {NamedTensor{"mean", &mean}, {"inv_std_dev", &invStdDev}})
    if (shapeOf(*stat) != statShape)
      return formatMessage("%s (%s) must be %s for x (%s), axis %lld", what,
                           shapeString(*stat).c_str(),
                           shapeText(statShape).c_str(), shapeString(x).c_str(),
                           static_cast<long long>(axis));
  return "";
}

} // namespace

std::string lethe::rt::layerNormShapesError(
    const lethe_rt_tensor &x, int64_t axis, const lethe_rt_tensor &scale,
    const lethe_rt_tensor *bias, const lethe_rt_tensor &mean,
    const lethe_rt_tensor &invStdDev, std::vector<int64_t> &scaleStrides,
    std::vector<int64_t> &biasStrides) {
  // Scale and bias broadcast to the normalized shape x.shape[axis:].
  std::vector<int64_t> normalizedShape(x.shape + axis, x.shape + x.rank);
  lethe_rt_tensor normalized{nullptr, x.dtype,
                             static_cast<int32_t>(normalizedShape.size()),
                             normalizedShape.data()};
  for (const auto &[what, tensor, strides] :
       {std::tuple<const char *, const lethe_rt_tensor *,
                   std::vector<int64_t> *>{"scale", &scale, &scaleStrides},
        {"bias", bias, &biasStrides}})
    if (tensor && !broadcastStrides(*tensor, normalized, *strides))
      return formatMessage("%s (%s) does not broadcast to the normalized "
                           "shape %s",
                           what, shapeString(*tensor).c_str(),
                           shapeText(normalizedShape).c_str());
  return layerNormStatisticsError(x, axis, mean, invStdDev);
}

std::string lethe::rt::layerNormGradShapesError(
    const lethe_rt_tensor &x, int64_t axis, const lethe_rt_tensor &scale,
    const lethe_rt_tensor &mean, const lethe_rt_tensor &invStdDev,
    const lethe_rt_tensor &dscale, const lethe_rt_tensor &dbias) {
  std::vector<int64_t> normalizedShape(x.shape + axis, x.shape + x.rank);
  for (const auto &[what, tensor] :
       {NamedTensor{"scale", &scale}, {"dscale", &dscale}, {"dbias", &dbias}})
    if (shapeOf(*tensor) != normalizedShape)
      return formatMessage("%s (%s) must have the normalized shape %s", what,
                           shapeString(*tensor).c_str(),
                           shapeText(normalizedShape).c_str());
  return layerNormStatisticsError(x, axis, mean, invStdDev);
}

std::string lethe::rt::dropoutRatioError(double ratio) {
  if (ratio >= 0 && ratio <= 1)
    return "";
  return formatMessage("ratio %g must be in [0, 1]", ratio);
}

//===----------------------------------------------------------------------===//
// Memory and streams
//===----------------------------------------------------------------------===//

namespace {

/// [offset, offset + bytes) lies within a memory of `size` bytes named
/// `memory` ("arena" or "host pool"); `what` names the offset.
std::string rangeError(const char *what, uint64_t offset, uint64_t bytes,
                       const char *memory, uint64_t size) {
  if (offset <= size && bytes <= size - offset) // offset + bytes may overflow
    return "";
  return formatMessage(
      "%s %llu + %llu bytes is past the end of the %s (%llu bytes)", what,
      static_cast<unsigned long long>(offset),
      static_cast<unsigned long long>(bytes), memory,
      static_cast<unsigned long long>(size));
}

} // namespace

std::string lethe::rt::streamError(lethe_rt_stream stream) {
  int value = static_cast<int>(stream);
  if (value >= LETHE_RT_STREAM_COMPUTE &&
      value <= LETHE_RT_STREAM_HOST_TO_DEVICE)
    return "";
  return formatMessage(
      "unknown stream %d (0 compute, 1 device-to-host, 2 host-to-device)",
      value);
}

std::string lethe::rt::memoryInitializedError(bool initialized) {
  if (initialized)
    return "";
  return "memory is not initialized (call lethe_rt_memory_init first)";
}

std::string lethe::rt::arenaRangeError(uint64_t offset, uint64_t bytes,
                                       uint64_t arenaBytes) {
  return rangeError("arena offset", offset, bytes, "arena", arenaBytes);
}

std::string lethe::rt::hostRangeError(uint64_t offset, uint64_t bytes,
                                      uint64_t hostPoolBytes) {
  return rangeError("host offset", offset, bytes, "host pool", hostPoolBytes);
}

//===----------------------------------------------------------------------===//
// Optimizer updates, reductions and losses
//===----------------------------------------------------------------------===//

std::string lethe::rt::updateError(const TensorCheck &tensorCheck,
                                   const lethe_rt_tensor *lr,
                                   const lethe_rt_tensor *step,
                                   std::initializer_list<NamedTensor> inputs,
                                   std::initializer_list<NamedTensor> outputs) {
  std::string error = tensorCheck("lr", lr);
  if (!error.empty())
    return error;
  if (lr->dtype != LETHE_RT_F32 && lr->dtype != LETHE_RT_F64)
    return formatMessage("lr must be f32 or f64, got %s", dtypeName(lr->dtype));
  error = rankError("lr", *lr, 0);
  if (!error.empty())
    return error;
  if (step) {
    error = tensorCheck("step", step);
    if (error.empty())
      error = dtypeError("step", *step, LETHE_RT_I64);
    if (error.empty())
      error = rankError("step", *step, 0);
    if (!error.empty())
      return error;
  }

  const NamedTensor &x = *inputs.begin();
  error = tensorCheck(x.first, x.second);
  if (error.empty())
    error = floatDtypeError(x.first, *x.second);
  if (!error.empty())
    return error;
  for (std::initializer_list<NamedTensor> group : {inputs, outputs}) {
    for (const NamedTensor &tensor : group) {
      error = tensorCheck(tensor.first, tensor.second);
      if (error.empty())
        error = dtypeError(tensor.first, *tensor.second, x.second->dtype);
      if (error.empty())
        error =
            sameShapeError(x.first, *x.second, tensor.first, *tensor.second);
      if (!error.empty())
        return error;
    }
  }

  for (auto current = outputs.begin(); current != outputs.end(); ++current) {
    const lethe_rt_tensor &out = *current->second;
    if (overlaps(out, *lr) || (step && overlaps(out, *step)))
      return formatMessage("%s overlaps lr or step", current->first);
    for (const NamedTensor &input : inputs)
      if (input.second->data != out.data && overlaps(out, *input.second))
        return formatMessage(
            "%s overlaps part of %s (an output must be exactly an input "
            "or apart from all of them)",
            current->first, input.first);
    for (auto other = outputs.begin(); other != current; ++other)
      if (overlaps(out, *other->second))
        return formatMessage("%s and %s overlap", other->first, current->first);
  }
  return "";
}

std::string lethe::rt::reductionAxesError(const lethe_rt_tensor &x,
                                          const int64_t *axes, int64_t num_axes,
                                          const lethe_rt_tensor &out,
                                          std::vector<bool> &reduced) {
  if (num_axes < 0 || (num_axes > 0 && !axes))
    return formatMessage("invalid axes (%s) for num_axes %lld",
                         axes ? "non-null" : "null",
                         static_cast<long long>(num_axes));
  // Which dims are reduced (all of them when no axes are given).
  int32_t rank = x.rank;
  reduced.assign(rank, num_axes == 0);
  for (int64_t i = 0; i < num_axes; ++i) {
    int64_t axis = axes[i];
    if (axis < 0 || axis >= rank)
      return formatMessage("axis %lld is out of range for x (%s)",
                           static_cast<long long>(axis),
                           shapeString(x).c_str());
    if (reduced[axis])
      return formatMessage("axis %lld is repeated",
                           static_cast<long long>(axis));
    reduced[axis] = true;
  }
  // out is x's shape with the reduced dims 1 (keepdims) or dropped.
  std::vector<int64_t> kept, dropped;
  for (int32_t dim = 0; dim < rank; ++dim) {
    kept.push_back(reduced[dim] ? 1 : x.shape[dim]);
    if (!reduced[dim])
      dropped.push_back(x.shape[dim]);
  }
  std::vector<int64_t> outShape = shapeOf(out);
  if (outShape != kept && outShape != dropped)
    return formatMessage(
        "out (%s) must be %s (keepdims) or %s for x (%s) reduced",
        shapeString(out).c_str(), shapeText(kept).c_str(),
        shapeText(dropped).c_str(), shapeString(x).c_str());
  return "";
}

std::string lethe::rt::reductionError(lethe_rt_reduction reduction) {
  if (reduction != LETHE_RT_REDUCTION_NONE &&
      reduction != LETHE_RT_REDUCTION_SUM &&
      reduction != LETHE_RT_REDUCTION_MEAN)
    return formatMessage("unknown reduction %d", static_cast<int>(reduction));
  return "";
}

std::string lethe::rt::lossShapeError(const char *what,
                                      lethe_rt_reduction reduction,
                                      const lethe_rt_tensor &loss,
                                      const std::vector<int64_t> &unreduced) {
  bool none = reduction == LETHE_RT_REDUCTION_NONE;
  std::vector<int64_t> expected = none ? unreduced : std::vector<int64_t>{};
  if (shapeOf(loss) != expected)
    return formatMessage("%s (%s) must be %s for reduction %s", what,
                         shapeString(loss).c_str(), shapeText(expected).c_str(),
                         none                                  ? "none"
                         : reduction == LETHE_RT_REDUCTION_SUM ? "sum"
                                                               : "mean");
  return "";
}

std::string lethe::rt::classArgumentsError(
    const char *inputName, const lethe_rt_tensor &input, const char *labelsName,
    const lethe_rt_tensor &labels, const char *weightsName,
    const lethe_rt_tensor *weights, int64_t &batch, int64_t &classes,
    int64_t &spatial) {
  if (input.rank < 2)
    return formatMessage("%s must have rank >= 2 (N, C, ...), got %s",
                         inputName, shapeString(input).c_str());
  if (labels.dtype != LETHE_RT_I32 && labels.dtype != LETHE_RT_I64)
    return formatMessage("%s must be i32 or i64, got %s", labelsName,
                         dtypeName(labels.dtype));
  std::vector<int64_t> expected = shapeOf(input);
  expected.erase(expected.begin() + 1);
  if (shapeOf(labels) != expected)
    return formatMessage("%s (%s) must be %s for %s (%s)", labelsName,
                         shapeString(labels).c_str(),
                         shapeText(expected).c_str(), inputName,
                         shapeString(input).c_str());
  batch = input.shape[0];
  classes = input.shape[1];
  spatial = 1;
  for (int32_t dim = 2; dim < input.rank; ++dim)
    spatial *= input.shape[dim];
  if (weights && (weights->rank != 1 || weights->shape[0] != classes))
    return formatMessage("%s (%s) must have shape %lld, the classes of %s "
                         "(%s)",
                         weightsName, shapeString(*weights).c_str(),
                         static_cast<long long>(classes), inputName,
                         shapeString(input).c_str());
  return "";
}

std::string lethe::rt::labelRangeError(const char *labelsName, int64_t index,
                                       int64_t value, int64_t classes) {
  return formatMessage("%s element %lld is %lld, outside [0, %lld)", labelsName,
                       static_cast<long long>(index),
                       static_cast<long long>(value),
                       static_cast<long long>(classes));
}

std::string lethe::rt::logProbError(const lethe_rt_tensor &scores,
                                    const lethe_rt_tensor &labels,
                                    const lethe_rt_tensor *weights,
                                    const lethe_rt_tensor &logProb) {
  std::string error = dtypeError("log_prob", logProb, scores.dtype);
  if (error.empty())
    error = sameShapeError("scores", scores, "log_prob", logProb);
  if (!error.empty())
    return error;
  if (overlaps(logProb, labels) || (weights && overlaps(logProb, *weights)))
    return "log_prob overlaps labels or weights";
  return "";
}

std::string lethe::rt::dscoresError(const lethe_rt_tensor &logProb,
                                    const lethe_rt_tensor &dloss,
                                    const lethe_rt_tensor &labels,
                                    const lethe_rt_tensor *weights,
                                    const lethe_rt_tensor &dscores) {
  std::string error = dtypeError("dscores", dscores, logProb.dtype);
  if (error.empty())
    error = sameShapeError("log_prob", logProb, "dscores", dscores);
  if (!error.empty())
    return error;
  // Each element of log_prob is read just before the same element of dscores
  // is written, so dscores may be log_prob itself, but no other input.
  if (overlaps(dscores, dloss) || overlaps(dscores, labels) ||
      (weights && overlaps(dscores, *weights)) ||
      (dscores.data != logProb.data && overlaps(dscores, logProb)))
    return "dscores overlaps dloss, labels, weights or part of log_prob";
  return "";
}

std::string lethe::rt::dinputError(const lethe_rt_tensor &dinput,
                                   const lethe_rt_tensor &dloss,
                                   const lethe_rt_tensor &target,
                                   const lethe_rt_tensor *weight) {
  if (overlaps(dinput, dloss) || overlaps(dinput, target) ||
      (weight && overlaps(dinput, *weight)))
    return "dinput overlaps dloss, target or weight";
  return "";
}

//===----------------------------------------------------------------------===//
// Data movement and resize
//===----------------------------------------------------------------------===//

std::string lethe::rt::overlapError(const char *whatA, const lethe_rt_tensor &a,
                                    const char *whatB,
                                    const lethe_rt_tensor &b) {
  if (overlaps(a, b))
    return formatMessage("%s overlaps %s", whatA, whatB);
  return "";
}

std::string lethe::rt::expandError(const lethe_rt_tensor &x,
                                   const lethe_rt_tensor &out,
                                   std::vector<int64_t> &strides) {
  if (!broadcastStrides(x, out, strides))
    return formatMessage("x (%s) does not broadcast to out (%s)",
                         shapeString(x).c_str(), shapeString(out).c_str());
  return "";
}

std::string lethe::rt::transposeError(const lethe_rt_tensor &x,
                                      const int64_t *perm,
                                      const lethe_rt_tensor &out,
                                      std::vector<int64_t> &strides) {
  if (x.rank > 0 && !perm)
    return "perm is missing";
  std::vector<int64_t> inputStrides = stridesOf(x);
  strides.assign(x.rank, 0);
  std::vector<bool> seen(x.rank, false);
  for (int32_t dim = 0; dim < x.rank; ++dim) {
    int64_t source = perm[dim];
    if (source < 0 || source >= x.rank || seen[source])
      return formatMessage("perm is not a permutation of %d dims", x.rank);
    seen[source] = true;
    if (out.shape[dim] != x.shape[source])
      return formatMessage("out (%s) is not x (%s) with its dims permuted",
                           shapeString(out).c_str(), shapeString(x).c_str());
    strides[dim] = inputStrides[source];
  }
  return "";
}

namespace {

/// The message when `a` and `b` differ in rank, dtype or a dim other than
/// `axis` ("" when they do not).
std::string sameExceptAxisError(const lethe_rt_tensor &a,
                                const lethe_rt_tensor &b, int64_t axis) {
  bool same = a.rank == b.rank && a.dtype == b.dtype;
  for (int32_t dim = 0; same && dim < a.rank; ++dim)
    same = dim == axis || a.shape[dim] == b.shape[dim];
  if (same)
    return "";
  return formatMessage("tensors %s (%s) and %s (%s) differ outside axis %lld",
                       shapeString(a).c_str(), dtypeName(a.dtype),
                       shapeString(b).c_str(), dtypeName(b.dtype),
                       static_cast<long long>(axis));
}

/// The message when `axis` is not a dim of a tensor of `rank`.
std::string axisError(int64_t axis, int32_t rank) {
  if (axis >= 0 && axis < rank)
    return "";
  return formatMessage("axis %lld is out of range for rank %d",
                       static_cast<long long>(axis), rank);
}

} // namespace

std::string lethe::rt::partsError(const TensorCheck &tensorCheck,
                                  const lethe_rt_tensor *whole,
                                  const lethe_rt_tensor *const *parts,
                                  int64_t count, int64_t axis,
                                  const char *what) {
  std::string error = tensorCheck(what, whole);
  if (!error.empty())
    return error;
  if (count < 1 || !parts)
    return formatMessage("needs at least one of the %s", what);
  error = axisError(axis, whole->rank);
  if (!error.empty())
    return error;
  int64_t total = 0;
  for (int64_t i = 0; i < count; ++i) {
    error = tensorCheck(what, parts[i]);
    if (error.empty())
      error = sameExceptAxisError(*parts[i], *whole, axis);
    if (!error.empty())
      return error;
    total += parts[i]->shape[axis];
  }
  if (total != whole->shape[axis])
    return formatMessage("the %s add up to %lld along axis %lld, not %lld",
                         what, static_cast<long long>(total),
                         static_cast<long long>(axis),
                         static_cast<long long>(whole->shape[axis]));
  return "";
}

std::string lethe::rt::sliceGeometryError(const char *wholeName,
                                          const lethe_rt_tensor &whole,
                                          const lethe_rt_tensor &part,
                                          const int64_t *starts,
                                          const int64_t *steps, int64_t &base,
                                          std::vector<int64_t> &strides) {
  if (whole.rank > 0 && (!starts || !steps))
    return "starts or steps is missing";
  std::vector<int64_t> wholeStrides = stridesOf(whole);
  strides.assign(whole.rank, 0);
  base = 0;
  for (int32_t dim = 0; dim < whole.rank; ++dim) {
    int64_t count = part.shape[dim];
    if (steps[dim] == 0)
      return formatMessage("steps[%d] is 0", dim);
    if (count > 0) {
      int64_t last = starts[dim] + (count - 1) * steps[dim];
      if (starts[dim] < 0 || starts[dim] >= whole.shape[dim] || last < 0 ||
          last >= whole.shape[dim])
        return formatMessage(
            "dim %d: %lld elements from %lld in steps of %lld leave %s's %lld",
            dim, static_cast<long long>(count),
            static_cast<long long>(starts[dim]),
            static_cast<long long>(steps[dim]), wholeName,
            static_cast<long long>(whole.shape[dim]));
    }
    base += starts[dim] * wholeStrides[dim];
    strides[dim] = steps[dim] * wholeStrides[dim];
  }
  return "";
}

std::string lethe::rt::gatherError(const char *dataName, const char *outName,
                                   const lethe_rt_tensor &data,
                                   const lethe_rt_tensor &indices, int64_t axis,
                                   const lethe_rt_tensor &out) {
  if (indices.dtype != LETHE_RT_I32 && indices.dtype != LETHE_RT_I64)
    return formatMessage("indices must be i32 or i64, got %s",
                         dtypeName(indices.dtype));
  std::string error = axisError(axis, data.rank);
  if (!error.empty())
    return error;
  // out is data.shape[:axis] + indices.shape + data.shape[axis+1:].
  std::vector<int64_t> expected(data.shape, data.shape + axis);
  expected.insert(expected.end(), indices.shape, indices.shape + indices.rank);
  expected.insert(expected.end(), data.shape + axis + 1,
                  data.shape + data.rank);
  if (shapeOf(out) != expected)
    return formatMessage(
        "%s (%s) must be %s for %s (%s), indices (%s)", outName,
        shapeString(out).c_str(), shapeText(expected).c_str(), dataName,
        shapeString(data).c_str(), shapeString(indices).c_str());
  return "";
}

std::string lethe::rt::gatherIndexError(int64_t index, int64_t element,
                                        int64_t dim) {
  return formatMessage(
      "index %lld (element %lld) is out of range for a dimension of %lld",
      static_cast<long long>(index), static_cast<long long>(element),
      static_cast<long long>(dim));
}

std::string
lethe::rt::resizeOptionsError(const lethe_rt_tensor &x,
                              const lethe_rt_tensor &out, const double *scales,
                              const lethe_rt_resize_options *options) {
  if (!options)
    return "options is missing";
  if (x.rank > 0 && !scales)
    return "scales is missing";
  if (options->mode != LETHE_RT_RESIZE_NEAREST &&
      options->mode != LETHE_RT_RESIZE_LINEAR &&
      options->mode != LETHE_RT_RESIZE_CUBIC)
    return formatMessage("unknown mode %d", static_cast<int>(options->mode));
  if (options->coordinates < LETHE_RT_HALF_PIXEL ||
      options->coordinates > LETHE_RT_TF_CROP_AND_RESIZE)
    return formatMessage("unknown coordinate mode %d",
                         static_cast<int>(options->coordinates));
  if (options->nearest < LETHE_RT_ROUND_PREFER_FLOOR ||
      options->nearest > LETHE_RT_CEIL)
    return formatMessage("unknown nearest mode %d",
                         static_cast<int>(options->nearest));
  if (options->coordinates == LETHE_RT_TF_CROP_AND_RESIZE && !options->roi)
    return "tf_crop_and_resize needs a region of interest (roi)";
  for (int32_t dim = 0; dim < x.rank; ++dim) {
    if (!(scales[dim] > 0) || !std::isfinite(scales[dim]))
      return formatMessage("scale %g of dim %d is not positive", scales[dim],
                           dim);
    if (x.shape[dim] == 0 && out.shape[dim] != 0)
      return formatMessage("dim %d of x is empty", dim);
  }
  return "";
}

std::string lethe::rt::resizeDtypeError(const lethe_rt_resize_options &options,
                                        const lethe_rt_tensor &x) {
  if (options.mode != LETHE_RT_RESIZE_NEAREST && !isFloat(x.dtype))
    return formatMessage("linear and cubic resize need a float dtype, x is %s",
                         dtypeName(x.dtype));
  return "";
}
