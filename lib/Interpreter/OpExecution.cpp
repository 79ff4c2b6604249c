//===- OpExecution.cpp - Run one lethe op with the runtime ----------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The mapping of each `lethe` op onto a call of the runtime's C ABI: the same
// calls, with the same arguments, that the lowering to runtime calls emits,
// so the interpreter and planned executables compute the same bits.
//
//===----------------------------------------------------------------------===//

#include "OpExecution.h"

#include "lethe/Interpreter/RuntimeArguments.h"

#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::lethe;

namespace {

/// The arguments of one op's execution.
struct Execution {
  lethe_rt_context *context;
  Operation &op;
  ArrayRef<HostTensor *> operands;
  MutableArrayRef<HostTensor> results;
  SmallVector<lethe_rt_tensor> operandViews, resultViews;

  Execution(lethe_rt_context *context, Operation &op,
            ArrayRef<HostTensor *> operands,
            MutableArrayRef<HostTensor> results)
      : context(context), op(op), operands(operands), results(results) {
    for (HostTensor *operand : operands)
      operandViews.push_back(operand->view());
    for (HostTensor &result : results)
      resultViews.push_back(result.view());
  }

  const lethe_rt_tensor *in(unsigned index) { return &operandViews[index]; }
  const lethe_rt_tensor *out(unsigned index = 0) { return &resultViews[index]; }
  /// The op's workspace, as a planned executable passes its arena block: a
  /// rank-1 u8 buffer of the op's planned workspace bytes (NULL when the
  /// op needs none), held until the op returns.
  const lethe_rt_tensor *workspace() {
    workspaceBytes = getPlannedWorkspaceBytes(&op);
    if (workspaceBytes <= 0)
      return nullptr;
    workspaceData.assign(workspaceBytes, 0);
    workspaceView = {workspaceData.data(), LETHE_RT_U8, 1, &workspaceBytes};
    return &workspaceView;
  }

  /// Turns a runtime status into a diagnostic at the op.
  LogicalResult check(lethe_rt_status status) {
    if (status == LETHE_RT_OK)
      return success();
    return op.emitError("runtime error: ") << lethe_rt_last_error(context);
  }

private:
  int64_t workspaceBytes = 0;
  std::vector<char> workspaceData;
  lethe_rt_tensor workspaceView = {};
};

LogicalResult unary(Execution &execution, lethe_rt_unary_kind kind,
                    double alpha = 0, double beta = 0) {
  return execution.check(lethe_rt_unary(execution.context, kind, alpha, beta,
                                        execution.in(0), execution.out()));
}

LogicalResult activationGrad(Execution &execution,
                             lethe_rt_activation_grad_kind kind,
                             double alpha = 0) {
  return execution.check(
      lethe_rt_activation_grad(execution.context, kind, alpha, execution.in(0),
                               execution.in(1), execution.out()));
}

LogicalResult binary(Execution &execution, lethe_rt_binary_kind kind) {
  return execution.check(lethe_rt_binary(execution.context, kind,
                                         execution.in(0), execution.in(1),
                                         execution.out()));
}

} // namespace

LogicalResult lethe::executeOp(lethe_rt_context *context, Operation &op,
                               ArrayRef<HostTensor *> operands,
                               MutableArrayRef<HostTensor> results) {
  Execution execution(context, op, operands, results);
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      // Elementwise.
      .Case([&](NegOp) { return unary(execution, LETHE_RT_NEG); })
      .Case([&](ReluOp) { return unary(execution, LETHE_RT_RELU); })
      .Case([&](LeakyReluOp leaky) {
        return unary(execution, LETHE_RT_LEAKY_RELU,
                     leaky.getAlpha().convertToDouble());
      })
      .Case([&](SigmoidOp) { return unary(execution, LETHE_RT_SIGMOID); })
      .Case([&](TanhOp) { return unary(execution, LETHE_RT_TANH); })
      .Case([&](GeluOp gelu) {
        return unary(execution, gelu.getApproximate() == "tanh"
                                    ? LETHE_RT_GELU_TANH
                                    : LETHE_RT_GELU);
      })
      .Case([&](ReluGradOp) {
        return activationGrad(execution, LETHE_RT_RELU_GRAD);
      })
      .Case([&](LeakyReluGradOp grad) {
        return activationGrad(execution, LETHE_RT_LEAKY_RELU_GRAD,
                              grad.getAlpha().convertToDouble());
      })
      .Case([&](GeluGradOp grad) {
        return activationGrad(execution, grad.getApproximate() == "tanh"
                                             ? LETHE_RT_GELU_TANH_GRAD
                                             : LETHE_RT_GELU_GRAD);
      })
      .Case([&](ClipGradOp grad) {
        auto bound = [](FloatAttr attr, double absent) {
          return attr ? attr.getValueAsDouble() : absent;
        };
        return execution.check(lethe_rt_clip_grad(
            context, execution.in(0), execution.in(1),
            bound(grad.getMinAttr(), -INFINITY),
            bound(grad.getMaxAttr(), INFINITY), execution.out()));
      })
      .Case([&](ErfOp) { return unary(execution, LETHE_RT_ERF); })
      .Case([&](ExpOp) { return unary(execution, LETHE_RT_EXP); })
      .Case([&](LogOp) { return unary(execution, LETHE_RT_LOG); })
      .Case([&](SqrtOp) { return unary(execution, LETHE_RT_SQRT); })
      .Case([&](ClipOp clip) -> LogicalResult {
        Type element = clip.getType().getElementType();
        HostTensor bounds[2];
        const void *pointers[2] = {nullptr, nullptr};
        Attribute given[] = {clip.getMinAttr(), clip.getMaxAttr()};
        for (auto [k, bound] : llvm::enumerate(given)) {
          if (!bound)
            continue;
          FailureOr<HostTensor> scalar = scalarOfType(bound, element);
          if (failed(scalar))
            return op.emitError("cannot represent the bound ")
                   << bound << " as " << element;
          bounds[k] = std::move(*scalar);
          pointers[k] = bounds[k].data();
        }
        return execution.check(lethe_rt_clip(context, execution.in(0),
                                             pointers[0], pointers[1],
                                             execution.out()));
      })
      .Case([&](AddOp) { return binary(execution, LETHE_RT_ADD); })
      .Case([&](SubOp) { return binary(execution, LETHE_RT_SUB); })
      .Case([&](MulOp) { return binary(execution, LETHE_RT_MUL); })
      .Case([&](DivOp) { return binary(execution, LETHE_RT_DIV); })
      .Case([&](PowOp) { return binary(execution, LETHE_RT_POW); })
      .Case([&](WhereOp) {
        return execution.check(lethe_rt_where(context, execution.in(0),
                                              execution.in(1), execution.in(2),
                                              execution.out()));
      })
      .Case([&](CastOp) {
        return execution.check(
            lethe_rt_cast(context, execution.in(0), execution.out()));
      })
      // Matrix products.
      .Case([&](MatMulOp) {
        return execution.check(lethe_rt_matmul(
            context, execution.in(0), execution.in(1), execution.out()));
      })
      .Case([&](GemmOp gemm) {
        const lethe_rt_tensor *c =
            operands.size() > 2 ? execution.in(2) : nullptr;
        return execution.check(lethe_rt_gemm(
            context, execution.in(0), execution.in(1), c,
            gemm.getAlpha().convertToDouble(), gemm.getBeta().convertToDouble(),
            gemm.getTransA(), gemm.getTransB(), execution.out()));
      })
      // Convolution and pooling.
      .Case([&](ConvOp conv) {
        const lethe_rt_tensor *bias =
            operands.size() > 2 ? execution.in(2) : nullptr;
        return execution.check(
            lethe_rt_conv(context, execution.in(0), execution.in(1), bias,
                          conv.getStrides().data(), conv.getPads().data(),
                          conv.getDilations().data(), conv.getGroup(),
                          execution.out(), execution.workspace()));
      })
      .Case([&](ConvTransposeOp conv) {
        const lethe_rt_tensor *bias =
            operands.size() > 2 ? execution.in(2) : nullptr;
        return execution.check(lethe_rt_conv_transpose(
            context, execution.in(0), execution.in(1), bias,
            conv.getStrides().data(), conv.getPads().data(),
            conv.getDilations().data(), conv.getOutputPadding().data(),
            conv.getGroup(), execution.out(), execution.workspace()));
      })
      .Case([&](ConvGradWeightOp grad) {
        return execution.check(lethe_rt_conv_grad_weight(
            context, execution.in(0), execution.in(1), grad.getStrides().data(),
            grad.getPads().data(), grad.getDilations().data(), grad.getGroup(),
            execution.out(), execution.workspace()));
      })
      .Case([&](MaxPoolOp pool) {
        return execution.check(lethe_rt_max_pool(
            context, execution.in(0), pool.getKernelShape().data(),
            pool.getStrides().data(), pool.getPads().data(),
            pool.getDilations().data(), /*storage_order=*/0, execution.out(),
            /*indices=*/nullptr));
      })
      .Case([&](MaxPoolWithIndicesOp pool) {
        return execution.check(lethe_rt_max_pool(
            context, execution.in(0), pool.getKernelShape().data(),
            pool.getStrides().data(), pool.getPads().data(),
            pool.getDilations().data(), pool.getStorageOrder(),
            execution.out(0), execution.out(1)));
      })
      .Case([&](AvgPoolOp pool) {
        return execution.check(lethe_rt_avg_pool(
            context, execution.in(0), pool.getKernelShape().data(),
            pool.getStrides().data(), pool.getPads().data(),
            pool.getCountIncludePad(), execution.out()));
      })
      .Case([&](MaxPoolGradOp grad) {
        return execution.check(lethe_rt_max_pool_grad(
            context, execution.in(0), execution.in(1),
            grad.getKernelShape().data(), grad.getStrides().data(),
            grad.getPads().data(), grad.getDilations().data(),
            execution.out()));
      })
      .Case([&](AvgPoolGradOp grad) {
        return execution.check(lethe_rt_avg_pool_grad(
            context, execution.in(0), grad.getKernelShape().data(),
            grad.getStrides().data(), grad.getPads().data(),
            grad.getCountIncludePad(), execution.out()));
      })
      .Case([&](GlobalAvgPoolOp) {
        return execution.check(lethe_rt_global_avg_pool(
            context, execution.in(0), execution.out()));
      })
      // Normalization, softmax, dropout.
      .Case([&](BatchNormOp norm) {
        return execution.check(lethe_rt_batch_norm(
            context, execution.in(0), execution.in(1), execution.in(2),
            execution.in(3), execution.in(4),
            norm.getEpsilon().convertToDouble(), execution.out()));
      })
      .Case([&](BatchNormTrainOp norm) {
        return execution.check(lethe_rt_batch_norm_train(
            context, execution.in(0), execution.in(1), execution.in(2),
            execution.in(3), execution.in(4),
            norm.getEpsilon().convertToDouble(),
            norm.getMomentum().convertToDouble(), execution.out(0),
            execution.out(1), execution.out(2), execution.out(3),
            execution.out(4)));
      })
      .Case([&](LayerNormOp norm) {
        const lethe_rt_tensor *bias =
            operands.size() > 2 ? execution.in(2) : nullptr;
        int64_t axis = normalizeAxis(norm.getAxis(), execution.in(0)->rank);
        return execution.check(lethe_rt_layer_norm(
            context, execution.in(0), execution.in(1), bias, axis,
            norm.getEpsilon().convertToDouble(), execution.out(0),
            execution.out(1), execution.out(2)));
      })
      .Case([&](BatchNormGradOp) {
        return execution.check(lethe_rt_batch_norm_grad(
            context, execution.in(0), execution.in(1), execution.in(2),
            execution.in(3), execution.in(4), execution.out(0),
            execution.out(1), execution.out(2)));
      })
      .Case([&](LayerNormGradOp grad) {
        int64_t axis = normalizeAxis(grad.getAxis(), execution.in(1)->rank);
        return execution.check(lethe_rt_layer_norm_grad(
            context, execution.in(0), execution.in(1), execution.in(2),
            execution.in(3), execution.in(4), axis, execution.out(0),
            execution.out(1), execution.out(2)));
      })
      .Case<SoftmaxGradOp, LogSoftmaxGradOp>([&](auto grad) {
        int64_t axis = normalizeAxis(grad.getAxis(), execution.in(0)->rank);
        bool log = isa<LogSoftmaxGradOp>(grad.getOperation());
        return execution.check(lethe_rt_softmax_grad(context, execution.in(0),
                                                     execution.in(1), axis, log,
                                                     execution.out()));
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto softmax) {
        int64_t axis = normalizeAxis(softmax.getAxis(), execution.in(0)->rank);
        bool log = isa<LogSoftmaxOp>(softmax.getOperation());
        return execution.check(lethe_rt_softmax(context, execution.in(0), axis,
                                                log, execution.out()));
      })
      .Case([&](DropoutOp dropout) {
        return execution.check(lethe_rt_dropout(
            context, execution.in(0), dropout.getRatio().convertToDouble(),
            static_cast<uint64_t>(dropout.getSeed()),
            dropout.getStep() ? execution.in(1) : nullptr,
            dropout.getTraining(), execution.out(0), execution.out(1)));
      })
      // Reductions.
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>([&](auto reduce) {
        lethe_rt_reduce_kind kind = LETHE_RT_REDUCE_SUM;
        if (isa<ReduceMeanOp>(reduce.getOperation()))
          kind = LETHE_RT_REDUCE_MEAN;
        else if (isa<ReduceMaxOp>(reduce.getOperation()))
          kind = LETHE_RT_REDUCE_MAX;
        int64_t rank = execution.in(0)->rank;
        SmallVector<int64_t> axes;
        for (int64_t axis : reduce.getAxes())
          axes.push_back(normalizeAxis(axis, rank));
        return execution.check(lethe_rt_reduce(context, kind, execution.in(0),
                                               axes.data(), axes.size(),
                                               execution.out()));
      })
      // Optimizer updates.
      .Case([&](SgdUpdateOp update) {
        return execution.check(lethe_rt_sgd_update(
            context, execution.in(0), execution.in(1), execution.in(2),
            update.getNormCoefficient().convertToDouble(), execution.out()));
      })
      .Case([&](MomentumUpdateOp update) {
        return execution.check(lethe_rt_momentum_update(
            context, execution.in(0), execution.in(1), execution.in(2),
            execution.in(3), execution.in(4),
            update.getAlpha().convertToDouble(),
            update.getBeta().convertToDouble(),
            update.getNormCoefficient().convertToDouble(),
            update.getMode() == "nesterov", execution.out(0),
            execution.out(1)));
      })
      .Case([&](AdagradUpdateOp update) {
        return execution.check(lethe_rt_adagrad_update(
            context, execution.in(0), execution.in(1), execution.in(2),
            execution.in(3), execution.in(4),
            update.getDecayFactor().convertToDouble(),
            update.getEpsilon().convertToDouble(),
            update.getNormCoefficient().convertToDouble(), execution.out(0),
            execution.out(1)));
      })
      .Case([&](AdamUpdateOp update) {
        return execution.check(lethe_rt_adam_update(
            context, execution.in(0), execution.in(1), execution.in(2),
            execution.in(3), execution.in(4), execution.in(5),
            update.getAlpha().convertToDouble(),
            update.getBeta().convertToDouble(),
            update.getEpsilon().convertToDouble(),
            update.getNormCoefficient().convertToDouble(),
            update.getNormCoefficientPost().convertToDouble(),
            update.getWeightDecay().convertToDouble(), execution.out(0),
            execution.out(1), execution.out(2)));
      })
      // Losses.
      .Case([&](ReduceMaxGradOp grad) {
        SmallVector<int64_t> axes = grad.getReducedDims();
        return execution.check(lethe_rt_reduce_max_grad(
            context, execution.in(0), execution.in(1), execution.in(2),
            axes.data(), static_cast<int64_t>(axes.size()), execution.out()));
      })
      .Case([&](SoftmaxCrossEntropyOp loss) {
        const lethe_rt_tensor *weights =
            operands.size() > 2 ? execution.in(2) : nullptr;
        std::optional<int64_t> ignore = loss.getIgnoreIndex();
        return execution.check(lethe_rt_softmax_cross_entropy(
            context, execution.in(0), execution.in(1), weights,
            getReduction(loss.getReduction()), ignore.has_value(),
            ignore.value_or(0), execution.out(0), execution.out(1)));
      })
      .Case([&](NllOp loss) {
        const lethe_rt_tensor *weights =
            operands.size() > 2 ? execution.in(2) : nullptr;
        std::optional<int64_t> ignore = loss.getIgnoreIndex();
        return execution.check(
            lethe_rt_nll(context, execution.in(0), execution.in(1), weights,
                         getReduction(loss.getReduction()), ignore.has_value(),
                         ignore.value_or(0), execution.out()));
      })
      .Case([&](SoftmaxCrossEntropyGradOp grad) {
        const lethe_rt_tensor *weights =
            operands.size() > 3 ? execution.in(3) : nullptr;
        std::optional<int64_t> ignore = grad.getIgnoreIndex();
        return execution.check(lethe_rt_softmax_cross_entropy_grad(
            context, execution.in(0), execution.in(1), execution.in(2), weights,
            getReduction(grad.getReduction()), ignore.has_value(),
            ignore.value_or(0), execution.out()));
      })
      .Case([&](NllGradOp grad) {
        const lethe_rt_tensor *weights =
            operands.size() > 2 ? execution.in(2) : nullptr;
        std::optional<int64_t> ignore = grad.getIgnoreIndex();
        return execution.check(lethe_rt_nll_grad(
            context, execution.in(0), execution.in(1), weights,
            getReduction(grad.getReduction()), ignore.has_value(),
            ignore.value_or(0), execution.out()));
      })
      .Case([&](MseOp loss) {
        return execution.check(
            lethe_rt_mse(context, execution.in(0), execution.in(1),
                         getReduction(loss.getReduction()), execution.out()));
      })
      // Constants and data movement.
      .Case([&](ConstantOp constant) -> LogicalResult {
        FailureOr<HostTensor> value = tensorFromAttribute(constant.getValue());
        if (failed(value))
          return op.emitError("cannot read the constant's value");
        results[0] = std::move(*value);
        return success();
      })
      // Copies to and from the host, which the interpreter also holds in
      // host memory; release frees what the run loop frees anyway.
      .Case<OffloadOp, PrefetchOp>([&](auto) {
        return execution.check(
            lethe_rt_copy(context, execution.in(0), execution.out()));
      })
      .Case([&](ReleaseOp) { return success(); })
      .Case<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>([&](auto) {
        return execution.check(
            lethe_rt_copy(context, execution.in(0), execution.out()));
      })
      .Case([&](TransposeOp transpose) {
        return execution.check(lethe_rt_transpose(context, execution.in(0),
                                                  transpose.getPerm().data(),
                                                  execution.out()));
      })
      .Case([&](ConcatOp concat) {
        SmallVector<const lethe_rt_tensor *> inputs;
        for (unsigned index = 0; index < operands.size(); ++index)
          inputs.push_back(execution.in(index));
        int64_t axis = normalizeAxis(concat.getAxis(), execution.out()->rank);
        return execution.check(lethe_rt_concat(
            context, inputs.data(), inputs.size(), axis, execution.out()));
      })
      .Case([&](SplitOp split) {
        SmallVector<const lethe_rt_tensor *> outputs;
        for (unsigned index = 0; index < results.size(); ++index)
          outputs.push_back(execution.out(index));
        int64_t axis = normalizeAxis(split.getAxis(), execution.in(0)->rank);
        return execution.check(lethe_rt_split(context, execution.in(0), axis,
                                              outputs.data(), outputs.size()));
      })
      .Case([&](SliceOp slice) {
        SmallVector<int64_t> starts, steps;
        slice.getDimStartsAndSteps(starts, steps);
        return execution.check(lethe_rt_slice(context, execution.in(0),
                                              starts.data(), steps.data(),
                                              execution.out()));
      })
      .Case([&](GatherOp gather) {
        int64_t axis = normalizeAxis(gather.getAxis(), execution.in(0)->rank);
        return execution.check(lethe_rt_gather(
            context, execution.in(0), execution.in(1), axis, execution.out()));
      })
      .Case([&](SliceGradOp grad) {
        SmallVector<int64_t> starts, steps;
        grad.getDimStartsAndSteps(starts, steps);
        return execution.check(lethe_rt_slice_grad(context, execution.in(0),
                                                   starts.data(), steps.data(),
                                                   execution.out()));
      })
      .Case([&](GatherGradOp grad) {
        int64_t axis = normalizeAxis(grad.getAxis(), execution.out()->rank);
        return execution.check(lethe_rt_gather_grad(
            context, execution.in(0), execution.in(1), axis, execution.out()));
      })
      .Case([&](ExpandOp) {
        return execution.check(
            lethe_rt_expand(context, execution.in(0), execution.out()));
      })
      .Case<ResizeOp, ResizeGradOp>([&](auto resize) {
        lethe_rt_resize_options options = getResizeOptions(resize);
        auto run = isa<ResizeOp>(resize.getOperation()) ? lethe_rt_resize
                                                        : lethe_rt_resize_grad;
        return execution.check(run(context, execution.in(0),
                                   resize.getScales().data(), &options,
                                   execution.out()));
      })
      .Default([&](Operation *other) {
        return other->emitError("the interpreter cannot execute '")
               << other->getName() << "'";
      });
}
