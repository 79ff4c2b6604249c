//===- Checks.h - Argument checks shared by the backends --------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The host-side argument checks of the ABI, in a form that needs no context:
// each returns the message of the failed check ("" when it passes), without
// the "<call>: " prefix, and a backend records it in its own context with
// `report` (through its `fail`). The messages are those every backend gives,
// so that a program fails the same way on each.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_COMMON_CHECKS_H
#define LETHE_RUNTIME_COMMON_CHECKS_H

#include "lethe_rt.h"

#include <cstdarg>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace lethe::rt {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// Records "<call>: <printf-formatted message>" as the context's last error
/// and returns LETHE_RT_ERROR (common/Context.cpp).
lethe_rt_status fail(lethe_rt_context *context, const char *call,
                     const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/// Sets `lastError` to "<call>: <message>", the message formatted (and cut
/// to 511 bytes) from `format` and `arguments`.
void recordError(std::string &lastError, const char *call, const char *format,
                 va_list arguments);

/// The printf-formatted message, cut to 511 bytes as fail cuts it.
std::string formatMessage(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/// True when `error` is empty; otherwise records it through fail, naming
/// `call`, and returns false.
inline bool report(lethe_rt_context *context, const char *call,
                   const std::string &error) {
  if (error.empty())
    return true;
  fail(context, call, "%s", error.c_str());
  return false;
}

//===----------------------------------------------------------------------===//
// Tensors: `what` names the argument (e.g. "x").
//===----------------------------------------------------------------------===//

/// `tensor` is non-null and has a valid dtype and rank, no negative dim, and
/// data unless it has no elements. (Where its data must lie is the
/// backend's to check.)
std::string tensorError(const char *what, const lethe_rt_tensor *tensor);
/// A valid `tensor` has a float dtype (f16, bf16, f32, f64).
std::string floatDtypeError(const char *what, const lethe_rt_tensor &tensor);
/// A valid `tensor` has exactly `dtype`.
std::string dtypeError(const char *what, const lethe_rt_tensor &tensor,
                       lethe_rt_dtype dtype);
/// `a` and `b` have the same shape.
std::string sameShapeError(const char *whatA, const lethe_rt_tensor &a,
                           const char *whatB, const lethe_rt_tensor &b);
/// `tensor` has rank `rank`.
std::string rankError(const char *what, const lethe_rt_tensor &tensor,
                      int32_t rank);

/// A valid `workspace` (lethe_rt_conv's and the like) is a rank-1 u8 byte
/// buffer of at least `neededBytes` bytes (what `purpose` needs), its data
/// aligned to `alignment` bytes.
std::string workspaceError(const lethe_rt_tensor &workspace,
                           int64_t neededBytes, const char *purpose,
                           size_t alignment);

/// `operands` (named by `names`) broadcast together to exactly out's shape;
/// then `strides` holds each operand's strides over out (0 where it
/// broadcasts).
std::string
broadcastOperandsError(const std::vector<const char *> &names,
                       const std::vector<const lethe_rt_tensor *> &operands,
                       const lethe_rt_tensor &out,
                       std::vector<std::vector<int64_t>> &strides);

//===----------------------------------------------------------------------===//
// The same checks, recorded in a backend's context: each records an error
// naming `kernel` and `what` (the argument, e.g. "x") and returns false when
// the check fails.
//===----------------------------------------------------------------------===//

/// `tensor` passes tensorError and its data lies where the backend's kernels
/// can read it. Each backend defines it.
bool checkTensor(lethe_rt_context *context, const char *kernel,
                 const char *what, const lethe_rt_tensor *tensor);

/// `tensor` is valid and of a float dtype (f16, bf16, f32, f64).
inline bool checkFloatTensor(lethe_rt_context *context, const char *kernel,
                             const char *what, const lethe_rt_tensor *tensor) {
  return checkTensor(context, kernel, what, tensor) &&
         report(context, kernel, floatDtypeError(what, *tensor));
}
/// `tensor` is valid and has exactly `dtype`.
inline bool checkDtype(lethe_rt_context *context, const char *kernel,
                       const char *what, const lethe_rt_tensor *tensor,
                       lethe_rt_dtype dtype) {
  return checkTensor(context, kernel, what, tensor) &&
         report(context, kernel, dtypeError(what, *tensor, dtype));
}
/// `a` and `b` have the same shape.
inline bool checkSameShape(lethe_rt_context *context, const char *kernel,
                           const char *whatA, const lethe_rt_tensor &a,
                           const char *whatB, const lethe_rt_tensor &b) {
  return report(context, kernel, sameShapeError(whatA, a, whatB, b));
}
/// `tensor` has rank `rank`.
inline bool checkRank(lethe_rt_context *context, const char *kernel,
                      const char *what, const lethe_rt_tensor &tensor,
                      int32_t rank) {
  return report(context, kernel, rankError(what, tensor, rank));
}
/// `workspace` (not null) is valid and holds `neededBytes` for `purpose`,
/// aligned to `alignment` (workspaceError).
inline bool checkWorkspace(lethe_rt_context *context, const char *kernel,
                           const lethe_rt_tensor *workspace,
                           int64_t neededBytes, const char *purpose,
                           size_t alignment) {
  return checkTensor(context, kernel, "workspace", workspace) &&
         report(context, kernel,
                workspaceError(*workspace, neededBytes, purpose, alignment));
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

/// How lethe_rt_matmul's operands combine: out's batches (the broadcast of
/// the operands' dims but the last two, right-aligned) of m x k by k x n
/// products, 1-D operands promoted (lhs to a row, rhs to a column).
struct MatmulShapes {
  int64_t m = 0, n = 0, k = 0;
  std::vector<int64_t> batchShape;
  /// Per batch dim, the element stride of each operand's matrices (0 where
  /// it broadcasts) and of out's.
  std::vector<int64_t> lhsStrides, rhsStrides, outStrides;
  /// rhs is one matrix shared by every batch.
  bool rhsShared = false;
};

/// lhs and rhs (valid, of one float dtype) have rank >= 1, contraction dims
/// that agree and batch dims that broadcast, and out has the shape of their
/// product; then `shapes` describes it.
std::string matmulShapesError(const lethe_rt_tensor &lhs,
                              const lethe_rt_tensor &rhs,
                              const lethe_rt_tensor &out, MatmulShapes &shapes);

/// For lethe_rt_gemm, a and b being valid matrices: op(a) (m x k) and op(b)
/// (k x n) agree, out is m x n and c (when given) broadcasts to out, with
/// `cStrides` its strides over out.
std::string gemmShapesError(const lethe_rt_tensor &a, const lethe_rt_tensor &b,
                            const lethe_rt_tensor *c, int trans_a, int trans_b,
                            const lethe_rt_tensor &out, int64_t &m, int64_t &n,
                            int64_t &k, std::vector<int64_t> &cStrides);

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

/// The geometry of a convolution, checked against the tensors: `input` and
/// `output` are the spatial dims of the convolution's input and output (for
/// conv_transpose, the roles are swapped: its x is the convolution's
/// output).
struct ConvolutionGeometry {
  int32_t rank = 0;
  std::vector<int64_t> input, output, kernel, strides, padBegin, padEnd,
      dilations;
  int64_t inputSize = 1, outputSize = 1, kernelSize = 1;
};

/// The names a kernel gives the convolution's weight and output.
struct ConvolutionNames {
  const char *weight, *output;
};

/// For valid x, w, bias (may be null) and out: the ranks, batch, group and
/// bias shape every convolution kernel shares; `names` are what the kernel
/// calls w and out.
std::string convolutionOperandsError(const lethe_rt_tensor &x,
                                     const lethe_rt_tensor &w,
                                     const lethe_rt_tensor *bias,
                                     const lethe_rt_tensor &out, int64_t group,
                                     ConvolutionNames names);

/// The attributes of a convolution of `rank` spatial dims (strides and
/// dilations positive, pads non-negative), filling `geometry` with them and
/// the spatial dims of its input, output and kernel.
std::string
convolutionGeometryError(const int64_t *spatialIn, const int64_t *spatialOut,
                         const int64_t *kernel, const int64_t *strides,
                         const int64_t *pads, const int64_t *dilations,
                         int32_t rank, ConvolutionGeometry &geometry);

/// For operands that passed convolutionOperandsError: the channels and
/// spatial dims of x, w (its weight) and out (its output) match the
/// attributes, as lethe_rt_conv computes; fills `geometry`.
std::string convolutionShapesError(const lethe_rt_tensor &x,
                                   const lethe_rt_tensor &w,
                                   const lethe_rt_tensor &out,
                                   const int64_t *strides, const int64_t *pads,
                                   const int64_t *dilations, int64_t group,
                                   ConvolutionNames names,
                                   ConvolutionGeometry &geometry);

/// The same for lethe_rt_conv_transpose (whose out is the convolution's
/// input, sized by `outputPadding` too); fills `geometry` with the
/// convolution whose adjoint it is.
std::string
convTransposeShapesError(const lethe_rt_tensor &x, const lethe_rt_tensor &w,
                         const lethe_rt_tensor &out, const int64_t *strides,
                         const int64_t *pads, const int64_t *dilations,
                         const int64_t *outputPadding, int64_t group,
                         ConvolutionGeometry &geometry);

/// The tensors every convolution kernel shares: x of a float dtype, w, out
/// and bias (when not null) of x's dtype, and convolutionOperandsError.
inline bool checkConvolutionOperands(
    lethe_rt_context *context, const char *kernel, const lethe_rt_tensor *x,
    const lethe_rt_tensor *w, const lethe_rt_tensor *bias,
    const lethe_rt_tensor *out, int64_t group, ConvolutionNames names) {
  return checkFloatTensor(context, kernel, "x", x) &&
         checkDtype(context, kernel, names.weight, w, x->dtype) &&
         checkDtype(context, kernel, names.output, out, x->dtype) &&
         (!bias || checkDtype(context, kernel, "bias", bias, x->dtype)) &&
         report(context, kernel,
                convolutionOperandsError(*x, *w, bias, *out, group, names));
}

/// A convolution of x with w (and bias) into out, as lethe_rt_conv computes
/// it (lethe_rt_conv_grad_weight's, with w and out named by `names`), and
/// its geometry.
inline bool checkConvolution(lethe_rt_context *context, const char *kernel,
                             const lethe_rt_tensor *x, const lethe_rt_tensor *w,
                             const lethe_rt_tensor *bias,
                             const lethe_rt_tensor *out, const int64_t *strides,
                             const int64_t *pads, const int64_t *dilations,
                             int64_t group, ConvolutionNames names,
                             ConvolutionGeometry &geometry) {
  return checkConvolutionOperands(context, kernel, x, w, bias, out, group,
                                  names) &&
         report(context, kernel,
                convolutionShapesError(*x, *w, *out, strides, pads, dilations,
                                       group, names, geometry));
}

/// lethe_rt_conv_transpose's arguments, and the geometry of the convolution
/// whose adjoint it computes.
inline bool
checkConvTranspose(lethe_rt_context *context, const char *kernel,
                   const lethe_rt_tensor *x, const lethe_rt_tensor *w,
                   const lethe_rt_tensor *bias, const lethe_rt_tensor *out,
                   const int64_t *strides, const int64_t *pads,
                   const int64_t *dilations, const int64_t *outputPadding,
                   int64_t group, ConvolutionGeometry &geometry) {
  return checkConvolutionOperands(context, kernel, x, w, bias, out, group,
                                  {"w", "out"}) &&
         report(context, kernel,
                convTransposeShapesError(*x, *w, *out, strides, pads, dilations,
                                         outputPadding, group, geometry));
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

struct PoolingWindow; // common/PoolingWindow.h

/// A valid `tensor` is numeric: of any dtype but i1.
std::string numericDtypeError(const char *what, const lethe_rt_tensor &tensor);

/// For a pooling op on valid x and out: x and out are N, C and 1 to 3
/// spatial dims with the same N and C, kernel_shape, strides and pads (begin
/// values, then end values) are given, kernel, stride and dilation (1 where
/// `dilations` is null) are positive and pads non-negative, and the last
/// window of each out dim starts inside x or its padding; then `window`
/// describes the geometry.
std::string poolingWindowError(const lethe_rt_tensor &x,
                               const lethe_rt_tensor &out,
                               const int64_t *kernel, const int64_t *strides,
                               const int64_t *pads, const int64_t *dilations,
                               PoolingWindow &window);

/// storage_order (of max_pool's indices) is 0 or 1.
std::string storageOrderError(int64_t storageOrder);

/// max_pool's `indices` is null, or valid, of i64 and of out's shape, and
/// `storageOrder` is 0 or 1.
inline bool checkMaxPoolIndices(lethe_rt_context *context, const char *kernel,
                                const lethe_rt_tensor &out,
                                const lethe_rt_tensor *indices,
                                int64_t storageOrder) {
  if (indices &&
      (!checkDtype(context, kernel, "indices", indices, LETHE_RT_I64) ||
       !checkSameShape(context, kernel, "out", out, "indices", *indices)))
    return false;
  return report(context, kernel, storageOrderError(storageOrder));
}

/// For global_avg_pool on valid x and out: x is N, C and spatial dims and
/// out, of x's rank, holds one value per N, C plane.
std::string globalPoolingError(const lethe_rt_tensor &x,
                               const lethe_rt_tensor &out);

/// The checks every pooling op starts with, `x` being its input (dx for
/// avg_pool_grad) and `out` its output (dy for the gradients): x is valid and
/// of a float dtype (with `integers`, of any numeric dtype), out has x's
/// dtype, and poolingWindowError passes, filling `window`.
inline bool checkPoolingWindow(lethe_rt_context *context, const char *kernel,
                               const lethe_rt_tensor *x,
                               const lethe_rt_tensor *out,
                               const int64_t *kernelShape,
                               const int64_t *strides, const int64_t *pads,
                               const int64_t *dilations, bool integers,
                               PoolingWindow &window) {
  if (integers ? !checkTensor(context, kernel, "x", x) ||
                     !report(context, kernel, numericDtypeError("x", *x))
               : !checkFloatTensor(context, kernel, "x", x))
    return false;
  return checkDtype(context, kernel, "out", out, x->dtype) &&
         report(context, kernel,
                poolingWindowError(*x, *out, kernelShape, strides, pads,
                                   dilations, window));
}

//===----------------------------------------------------------------------===//
// Optimizer updates, reductions and losses
//===----------------------------------------------------------------------===//

/// A tensor argument and the name messages give it.
using NamedTensor = std::pair<const char *, const lethe_rt_tensor *>;
/// A backend's whole check of a tensor argument named `what`: tensorError's,
/// then where its data must lie; its message ("" when it passes).
using TensorCheck =
    std::function<std::string(const char *what, const lethe_rt_tensor *tensor)>;

/// The arguments of an optimizer update, each tensor checked with
/// `tensorCheck` when it is first met: `lr` is a scalar of f32 or f64, `step`
/// (unless null for an op without one) a scalar i64; the first input is x, of
/// a float dtype, and every other input and every output has its dtype and
/// shape; an output is either exactly an input or overlaps no input, no other
/// output, and neither lr nor step.
std::string updateError(const TensorCheck &tensorCheck,
                        const lethe_rt_tensor *lr, const lethe_rt_tensor *step,
                        std::initializer_list<NamedTensor> inputs,
                        std::initializer_list<NamedTensor> outputs);

/// `axes` (num_axes of them, none meaning all) are distinct dims of x, and
/// out is x reduced over them, with or without the kept dims; then
/// `reduced` says which of x's dims are.
std::string reductionAxesError(const lethe_rt_tensor &x, const int64_t *axes,
                               int64_t num_axes, const lethe_rt_tensor &out,
                               std::vector<bool> &reduced);

/// `reduction` is none, sum or mean.
std::string reductionError(lethe_rt_reduction reduction);
/// A valid `loss` (named `what`) has the shape `reduction` implies:
/// `unreduced` for none, a scalar otherwise.
std::string lossShapeError(const char *what, lethe_rt_reduction reduction,
                           const lethe_rt_tensor &loss,
                           const std::vector<int64_t> &unreduced);

/// For a class-indexed loss whose valid tensors are the float input
/// (`inputName`), labels and optional float weights: input is (N, C, D...),
/// labels (N, D...) of i32 or i64, weights (C); then `batch` is N, `classes`
/// C and `spatial` the product of D... (Whether each label lies in
/// [0, C) is the backend's to check, with labelRangeError's message.)
std::string
classArgumentsError(const char *inputName, const lethe_rt_tensor &input,
                    const char *labelsName, const lethe_rt_tensor &labels,
                    const char *weightsName, const lethe_rt_tensor *weights,
                    int64_t &batch, int64_t &classes, int64_t &spatial);
/// The message for element `index` of the labels, `value`, outside
/// [0, classes).
std::string labelRangeError(const char *labelsName, int64_t index,
                            int64_t value, int64_t classes);

/// lethe_rt_softmax_cross_entropy's valid log_prob has scores' dtype and
/// shape and overlaps neither labels nor weights.
std::string logProbError(const lethe_rt_tensor &scores,
                         const lethe_rt_tensor &labels,
                         const lethe_rt_tensor *weights,
                         const lethe_rt_tensor &logProb);
/// lethe_rt_softmax_cross_entropy_grad's valid dscores has log_prob's dtype
/// and shape and overlaps neither dloss, labels, weights nor part of
/// log_prob (it may be log_prob itself).
std::string dscoresError(const lethe_rt_tensor &logProb,
                         const lethe_rt_tensor &dloss,
                         const lethe_rt_tensor &labels,
                         const lethe_rt_tensor *weights,
                         const lethe_rt_tensor &dscores);
/// lethe_rt_nll_grad's dinput overlaps neither dloss, target nor weight.
std::string dinputError(const lethe_rt_tensor &dinput,
                        const lethe_rt_tensor &dloss,
                        const lethe_rt_tensor &target,
                        const lethe_rt_tensor *weight);

/// `reduction` is valid and `loss` (named `what`) is valid, has `dtype` and
/// the shape the reduction implies (`unreduced` for none, a scalar
/// otherwise).
inline bool checkLoss(lethe_rt_context *context, const char *kernel,
                      const char *what, lethe_rt_reduction reduction,
                      const lethe_rt_tensor *loss, lethe_rt_dtype dtype,
                      const std::vector<int64_t> &unreduced) {
  return report(context, kernel, reductionError(reduction)) &&
         checkDtype(context, kernel, what, loss, dtype) &&
         report(context, kernel,
                lossShapeError(what, reduction, *loss, unreduced));
}

//===----------------------------------------------------------------------===//
// Normalization and dropout
//===----------------------------------------------------------------------===//

/// `axis` is a dim of the valid `tensor` (named `what`).
std::string axisRangeError(const char *what, const lethe_rt_tensor &tensor,
                           int64_t axis);

/// A batch norm's valid x (N, C, ...) has rank >= 2.
std::string batchNormRankError(const lethe_rt_tensor &x);
/// A batch norm's valid per-channel `tensor` (named `what`) has shape (C),
/// C being the channels (dim 1) of x.
std::string channelShapeError(const char *what, const lethe_rt_tensor &tensor,
                              const lethe_rt_tensor &x);

/// For lethe_rt_layer_norm over the dims of x from `axis` (in range) on,
/// its tensors being valid: scale and bias (when given) broadcast to the
/// normalized shape x.shape[axis:], with `scaleStrides` and `biasStrides`
/// their strides over it, and mean and inv_std_dev have x's shape with the
/// normalized dims set to 1.
std::string layerNormShapesError(const lethe_rt_tensor &x, int64_t axis,
                                 const lethe_rt_tensor &scale,
                                 const lethe_rt_tensor *bias,
                                 const lethe_rt_tensor &mean,
                                 const lethe_rt_tensor &invStdDev,
                                 std::vector<int64_t> &scaleStrides,
                                 std::vector<int64_t> &biasStrides);
/// For lethe_rt_layer_norm_grad, likewise: scale, dscale and dbias have the
/// normalized shape, mean and inv_std_dev the statistics' shape.
std::string layerNormGradShapesError(const lethe_rt_tensor &x, int64_t axis,
                                     const lethe_rt_tensor &scale,
                                     const lethe_rt_tensor &mean,
                                     const lethe_rt_tensor &invStdDev,
                                     const lethe_rt_tensor &dscale,
                                     const lethe_rt_tensor &dbias);

/// lethe_rt_dropout's ratio lies in [0, 1].
std::string dropoutRatioError(double ratio);

/// The arguments of a batch norm: x is a float tensor of rank >= 2 (N, C,
/// ...), each of `likeX` (y; dx and dy) has its dtype and shape, and each
/// of `channelTensors` is a float tensor of shape (C).
inline bool checkBatchNorm(lethe_rt_context *context, const char *kernel,
                           const lethe_rt_tensor *x,
                           std::initializer_list<NamedTensor> likeX,
                           std::initializer_list<NamedTensor> channelTensors) {
  if (!checkFloatTensor(context, kernel, "x", x))
    return false;
  for (const auto &[what, tensor] : likeX)
    if (!checkDtype(context, kernel, what, tensor, x->dtype) ||
        !checkSameShape(context, kernel, "x", *x, what, *tensor))
      return false;
  if (!report(context, kernel, batchNormRankError(*x)))
    return false;
  for (const auto &[what, tensor] : channelTensors)
    if (!checkFloatTensor(context, kernel, what, tensor) ||
        !report(context, kernel, channelShapeError(what, *tensor, *x)))
      return false;
  return true;
}

/// The arguments of lethe_rt_batch_norm (checkBatchNorm).
inline bool
checkBatchNormInference(lethe_rt_context *context, const char *kernel,
                        const lethe_rt_tensor *x, const lethe_rt_tensor *scale,
                        const lethe_rt_tensor *bias,
                        const lethe_rt_tensor *mean, const lethe_rt_tensor *var,
                        const lethe_rt_tensor *y) {
  return checkBatchNorm(
      context, kernel, x, {{"y", y}},
      {{"scale", scale}, {"bias", bias}, {"mean", mean}, {"var", var}});
}

/// The arguments of lethe_rt_batch_norm_train (checkBatchNorm).
inline bool checkBatchNormTrain(
    lethe_rt_context *context, const char *kernel, const lethe_rt_tensor *x,
    const lethe_rt_tensor *scale, const lethe_rt_tensor *bias,
    const lethe_rt_tensor *runningMean, const lethe_rt_tensor *runningVar,
    const lethe_rt_tensor *y, const lethe_rt_tensor *runningMeanOut,
    const lethe_rt_tensor *runningVarOut, const lethe_rt_tensor *savedMean,
    const lethe_rt_tensor *savedInvStd) {
  return checkBatchNorm(context, kernel, x, {{"y", y}},
                        {{"scale", scale},
                         {"bias", bias},
                         {"running_mean", runningMean},
                         {"running_var", runningVar},
                         {"running_mean_out", runningMeanOut},
                         {"running_var_out", runningVarOut},
                         {"saved_mean", savedMean},
                         {"saved_inv_std", savedInvStd}});
}

/// The arguments of lethe_rt_batch_norm_grad (checkBatchNorm: dx and dy
/// like x).
inline bool checkBatchNormGrad(
    lethe_rt_context *context, const char *kernel, const lethe_rt_tensor *dy,
    const lethe_rt_tensor *x, const lethe_rt_tensor *scale,
    const lethe_rt_tensor *savedMean, const lethe_rt_tensor *savedInvStd,
    const lethe_rt_tensor *dx, const lethe_rt_tensor *dscale,
    const lethe_rt_tensor *dbias) {
  return checkBatchNorm(context, kernel, x, {{"dx", dx}, {"dy", dy}},
                        {{"scale", scale},
                         {"saved_mean", savedMean},
                         {"saved_inv_std", savedInvStd},
                         {"dscale", dscale},
                         {"dbias", dbias}});
}

/// The arguments of lethe_rt_layer_norm (layerNormShapesError, after the
/// dtypes: x, scale, bias, mean and inv_std_dev of float dtypes, y of x's
/// dtype and shape, axis in range).
inline bool checkLayerNorm(
    lethe_rt_context *context, const char *kernel, const lethe_rt_tensor *x,
    const lethe_rt_tensor *scale, const lethe_rt_tensor *bias, int64_t axis,
    const lethe_rt_tensor *y, const lethe_rt_tensor *mean,
    const lethe_rt_tensor *invStdDev, std::vector<int64_t> &scaleStrides,
    std::vector<int64_t> &biasStrides) {
  return checkFloatTensor(context, kernel, "x", x) &&
         checkDtype(context, kernel, "y", y, x->dtype) &&
         checkSameShape(context, kernel, "x", *x, "y", *y) &&
         checkFloatTensor(context, kernel, "scale", scale) &&
         (!bias || checkFloatTensor(context, kernel, "bias", bias)) &&
         checkFloatTensor(context, kernel, "mean", mean) &&
         checkFloatTensor(context, kernel, "inv_std_dev", invStdDev) &&
         report(context, kernel, axisRangeError("x", *x, axis)) &&
         report(context, kernel,
                layerNormShapesError(*x, axis, *scale, bias, *mean, *invStdDev,
                                     scaleStrides, biasStrides));
}

/// The arguments of lethe_rt_layer_norm_grad (layerNormGradShapesError,
/// after the dtypes: dy and dx of x's dtype and shape, the others of float
/// dtypes, axis in range).
inline bool
checkLayerNormGrad(lethe_rt_context *context, const char *kernel,
                   const lethe_rt_tensor *dy, const lethe_rt_tensor *x,
                   const lethe_rt_tensor *scale, const lethe_rt_tensor *mean,
                   const lethe_rt_tensor *invStdDev, int64_t axis,
                   const lethe_rt_tensor *dx, const lethe_rt_tensor *dscale,
                   const lethe_rt_tensor *dbias) {
  return checkFloatTensor(context, kernel, "x", x) &&
         checkDtype(context, kernel, "dy", dy, x->dtype) &&
         checkSameShape(context, kernel, "x", *x, "dy", *dy) &&
         checkDtype(context, kernel, "dx", dx, x->dtype) &&
         checkSameShape(context, kernel, "x", *x, "dx", *dx) &&
         checkFloatTensor(context, kernel, "scale", scale) &&
         checkFloatTensor(context, kernel, "mean", mean) &&
         checkFloatTensor(context, kernel, "inv_std_dev", invStdDev) &&
         checkFloatTensor(context, kernel, "dscale", dscale) &&
         checkFloatTensor(context, kernel, "dbias", dbias) &&
         report(context, kernel, axisRangeError("x", *x, axis)) &&
         report(context, kernel,
                layerNormGradShapesError(*x, axis, *scale, *mean, *invStdDev,
                                         *dscale, *dbias));
}

/// The arguments of lethe_rt_dropout: x of a float dtype, out of its dtype
/// and shape, the mask (when given) i1 of its shape, the step counter (when
/// given) a scalar i64, and the ratio in [0, 1].
inline bool checkDropout(lethe_rt_context *context, const char *kernel,
                         const lethe_rt_tensor *x, double ratio,
                         const lethe_rt_tensor *step,
                         const lethe_rt_tensor *out,
                         const lethe_rt_tensor *mask) {
  return checkFloatTensor(context, kernel, "x", x) &&
         checkDtype(context, kernel, "out", out, x->dtype) &&
         checkSameShape(context, kernel, "x", *x, "out", *out) &&
         (!mask || (checkDtype(context, kernel, "mask", mask, LETHE_RT_I1) &&
                    checkSameShape(context, kernel, "x", *x, "mask", *mask))) &&
         (!step || (checkDtype(context, kernel, "step", step, LETHE_RT_I64) &&
                    checkRank(context, kernel, "step", *step, 0))) &&
         report(context, kernel, dropoutRatioError(ratio));
}

//===----------------------------------------------------------------------===//
// Memory and streams
//===----------------------------------------------------------------------===//

/// `stream` is one of the three streams of the ABI.
std::string streamError(lethe_rt_stream stream);
/// lethe_rt_memory_init has run.
std::string memoryInitializedError(bool initialized);
/// [offset, offset + bytes) lies within the arena of `arenaBytes` bytes.
std::string arenaRangeError(uint64_t offset, uint64_t bytes,
                            uint64_t arenaBytes);
/// [offset, offset + bytes) lies within the host pool of `hostPoolBytes`.
std::string hostRangeError(uint64_t offset, uint64_t bytes,
                           uint64_t hostPoolBytes);

//===----------------------------------------------------------------------===//
// Data movement and resize: the shapes and arguments of valid tensors
//===----------------------------------------------------------------------===//

/// `a` and `b` (named `whatA` and `whatB`) lie apart in memory.
std::string overlapError(const char *whatA, const lethe_rt_tensor &a,
                         const char *whatB, const lethe_rt_tensor &b);

/// For lethe_rt_expand: x broadcasts to out's shape; then `strides` are x's
/// strides over out (0 where it broadcasts).
std::string expandError(const lethe_rt_tensor &x, const lethe_rt_tensor &out,
                        std::vector<int64_t> &strides);

/// For lethe_rt_transpose, out having x's rank: perm is given (unless x is a
/// scalar) and permutes x's dims into out's shape; then `strides` are x's
/// strides over out.
std::string transposeError(const lethe_rt_tensor &x, const int64_t *perm,
                           const lethe_rt_tensor &out,
                           std::vector<int64_t> &strides);

/// For lethe_rt_concat (`what` "inputs") and lethe_rt_split ("outputs"): the
/// whole passes `tensorCheck`, there is at least one part, axis is a dim of
/// the whole, every part passes `tensorCheck` and has the whole's dtype and
/// dims but along axis, and the parts add up to the whole along it. Every
/// message names the parts `what`, the whole included.
std::string partsError(const TensorCheck &tensorCheck,
                       const lethe_rt_tensor *whole,
                       const lethe_rt_tensor *const *parts, int64_t count,
                       int64_t axis, const char *what);

/// For lethe_rt_slice (whole x, part out) and lethe_rt_slice_grad (whole dx,
/// part dy), part having whole's rank: starts and steps are given (unless
/// whole is a scalar), no step is 0, and the part's elements from starts in
/// steps lie within whole (named `wholeName`); then `base` is whole's offset
/// of the part's first element and `strides` whole's strides over the part.
std::string sliceGeometryError(const char *wholeName,
                               const lethe_rt_tensor &whole,
                               const lethe_rt_tensor &part,
                               const int64_t *starts, const int64_t *steps,
                               int64_t &base, std::vector<int64_t> &strides);

/// For lethe_rt_gather (data and out, named `dataName` and `outName`) and
/// lethe_rt_gather_grad (dx and dy): indices are i32 or i64, axis is a dim of
/// data, and out is data.shape[:axis] + indices.shape +
/// data.shape[axis+1:].
std::string gatherError(const char *dataName, const char *outName,
                        const lethe_rt_tensor &data,
                        const lethe_rt_tensor &indices, int64_t axis,
                        const lethe_rt_tensor &out);
/// The message for element `element` of the indices, `index`, outside
/// [-dim, dim).
std::string gatherIndexError(int64_t index, int64_t element, int64_t dim);

/// For lethe_rt_resize (x into out) and lethe_rt_resize_grad (dx, dy), out
/// having x's rank: options and (unless x is a scalar) scales are given, the
/// modes are known, tf_crop_and_resize has a roi, every scale is positive
/// and finite, and no dim of x is empty unless out's is.
std::string resizeOptionsError(const lethe_rt_tensor &x,
                               const lethe_rt_tensor &out, const double *scales,
                               const lethe_rt_resize_options *options);
/// For lethe_rt_resize: linear and cubic resize a float x.
std::string resizeDtypeError(const lethe_rt_resize_options &options,
                             const lethe_rt_tensor &x);

/// The checks the data-movement and resize ops start with, recorded as the
/// other checks are (each returns false when one fails). `input` (named
/// `inputName`, of a float dtype when `floatInput`) is valid and `output`
/// is valid with its dtype and rank.
inline bool checkRankKept(lethe_rt_context *context, const char *kernel,
                          bool floatInput, const char *inputName,
                          const lethe_rt_tensor *input, const char *outputName,
                          const lethe_rt_tensor *output) {
  return (floatInput ? checkFloatTensor(context, kernel, inputName, input)
                     : checkTensor(context, kernel, inputName, input)) &&
         checkDtype(context, kernel, outputName, output, input->dtype) &&
         checkRank(context, kernel, outputName, *output, input->rank);
}
/// lethe_rt_expand's x and out, and expandError.
inline bool checkExpand(lethe_rt_context *context, const char *kernel,
                        const lethe_rt_tensor *x, const lethe_rt_tensor *out,
                        std::vector<int64_t> &strides) {
  return checkTensor(context, kernel, "x", x) &&
         checkDtype(context, kernel, "out", out, x->dtype) &&
         report(context, kernel, expandError(*x, *out, strides));
}
/// lethe_rt_transpose's x and out, and transposeError.
inline bool checkTranspose(lethe_rt_context *context, const char *kernel,
                           const lethe_rt_tensor *x, const int64_t *perm,
                           const lethe_rt_tensor *out,
                           std::vector<int64_t> &strides) {
  return checkRankKept(context, kernel, false, "x", x, "out", out) &&
         report(context, kernel, transposeError(*x, perm, *out, strides));
}
/// lethe_rt_slice's x and out or (`gradient`) lethe_rt_slice_grad's dy and
/// dx, and sliceGeometryError.
inline bool checkSlice(lethe_rt_context *context, const char *kernel,
                       bool gradient, const lethe_rt_tensor *input,
                       const int64_t *starts, const int64_t *steps,
                       const lethe_rt_tensor *output, int64_t &base,
                       std::vector<int64_t> &strides) {
  if (!checkRankKept(context, kernel, false, gradient ? "dy" : "x", input,
                     gradient ? "dx" : "out", output))
    return false;
  const lethe_rt_tensor &whole = gradient ? *output : *input;
  const lethe_rt_tensor &part = gradient ? *input : *output;
  return report(context, kernel,
                sliceGeometryError(gradient ? "dx" : "x", whole, part, starts,
                                   steps, base, strides));
}
/// lethe_rt_gather's data, indices and out or (`gradient`)
/// lethe_rt_gather_grad's dy (of a float dtype), indices and dx, and
/// gatherError (not the indices' values).
inline bool checkGather(lethe_rt_context *context, const char *kernel,
                        bool gradient, const lethe_rt_tensor *input,
                        const lethe_rt_tensor *indices, int64_t axis,
                        const lethe_rt_tensor *output) {
  const char *inputName = gradient ? "dy" : "data";
  const char *outputName = gradient ? "dx" : "out";
  if (!(gradient ? checkFloatTensor(context, kernel, inputName, input)
                 : checkTensor(context, kernel, inputName, input)) ||
      !checkTensor(context, kernel, "indices", indices) ||
      !checkDtype(context, kernel, outputName, output, input->dtype))
    return false;
  return report(
      context, kernel,
      gradient ? gatherError("dx", "dy", *output, *indices, axis, *input)
               : gatherError("data", "out", *input, *indices, axis, *output));
}
/// lethe_rt_resize's x and out or (`gradient`) lethe_rt_resize_grad's dy
/// (of a float dtype) and dx, resizeOptionsError and (for the resize)
/// resizeDtypeError.
inline bool checkResize(lethe_rt_context *context, const char *kernel,
                        bool gradient, const lethe_rt_tensor *input,
                        const double *scales,
                        const lethe_rt_resize_options *options,
                        const lethe_rt_tensor *output) {
  if (gradient)
    return checkRankKept(context, kernel, true, "dy", input, "dx", output) &&
           report(context, kernel,
                  resizeOptionsError(*output, *input, scales, options));
  return checkRankKept(context, kernel, false, "x", input, "out", output) &&
         report(context, kernel,
                resizeOptionsError(*input, *output, scales, options)) &&
         report(context, kernel, resizeDtypeError(*options, *input));
}

} // namespace lethe::rt

#endif // LETHE_RUNTIME_COMMON_CHECKS_H
