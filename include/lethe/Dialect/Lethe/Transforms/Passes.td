//===- Passes.td - Lethe dialect passes ------------------------*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Passes on the `lethe` dialect. Every flag is prefixed `lethe-`.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_TRANSFORMS_PASSES_TD
#define LETHE_DIALECT_LETHE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PrintMemoryProfilePass
    : Pass<"lethe-print-memory-profile", "::mlir::ModuleOp"> {
  let summary = "Print every tensor's size and live range, and the peak of "
                "live bytes, of each function's unplanned schedule";
  let description = [{
    For each function with a body, in the order they appear, prints every
    tensor value (arguments, then op results) with its type, its size in
    bytes and its live range in op positions; the bytes live at each op; and
    the peak with the op at which it first occurs. The schedule is the order
    of the ops as written, each tensor freed after its last use; arguments
    are live from op 0. The report goes to standard error, and the IR is left
    unchanged. Fails on a function with several blocks or a tensor without a
    static shape.

    Example: `lethe-opt model.mlir --lethe-print-memory-profile -o /dev/null`.
  }];
  let statistics = [
    Statistic<"numFunctionsProfiled", "functions-profiled",
              "Number of functions profiled">,
  ];
}

def FuseGeluPass : Pass<"lethe-fuse-gelu", "::mlir::func::FuncOp"> {
  let summary = "Make GELU written out with erf one lethe.gelu";
  let description = [{
    ONNX has no GELU before opset 20, so exporters write it out: `x * 0.5 *
    (1 + erf(x / sqrt(2)))`, five elementwise ops forward and about ten
    backward, each a pass over the tensor. This pass finds the product of
    `x`, the constant 0.5 and `1 + erf(x / sqrt(2))` (the two products in
    any grouping and order, the division by sqrt(2) or the product with
    1/sqrt(2), the constants as splats of any shape that broadcast to `x`)
    and replaces it with `lethe.gelu %x`, whose gradient is one
    `lethe.gelu_grad`. It fuses only where the ops in between have no other
    use and every one of them has `x`'s type; the constants must be within
    a few units of rounding of their values in `x`'s element type. The
    result is GELU computed in one op: equal to the written-out form within
    rounding, not bit for bit.

    Example: `lethe-opt model.mlir --lethe-fuse-gelu`.
  }];
  let statistics = [
    Statistic<"numFused", "gelus-fused", "Number of GELUs fused">,
  ];
}

def AddLossPass : Pass<"lethe-add-loss", "::mlir::ModuleOp"> {
  let summary = "Attach a loss to a model output";
  let description = [{
    Makes the model function (`function`, by default @main or the module's
    only function) compute a scalar loss, the first step towards a training
    step. With `output=NAME kind=KIND`, the loss of kind
    `softmax_cross_entropy`, `nll` or `mse` (with `reduction` `mean`, the
    default, or `sum`) is computed from the output named NAME (its
    `lethe.name`, the ONNX name the importer keeps), and its label becomes a
    new argument after the data inputs, named `labels` (or `labels_1`, ...
    when taken) and marked `lethe.label`: class indices (i64, the output's
    shape without its class dimension 1) for `softmax_cross_entropy` and
    `nll`, and a tensor like the output for `mse`. With `use=NAME`, the
    output NAME, which the model already computes as a loss, is the loss; it
    must hold one floating-point element.

    The loss becomes the function's first result, marked `lethe.loss` and
    named `loss`; the other results stay after it. A function that already
    has a loss, an output that does not exist, or one of the wrong type is
    an error naming it.

    Example: `lethe-opt model.mlir --lethe-add-loss="output=logits
    kind=softmax_cross_entropy"`.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"",
           "The model output (its lethe.name) the loss is computed from">,
    Option<"kind", "kind", "std::string", /*default=*/"",
           "The loss: softmax_cross_entropy, nll or mse">,
    Option<"use", "use", "std::string", /*default=*/"",
           "A model output that is already a loss">,
    Option<"reduction", "reduction", "std::string", /*default=*/"\"mean\"",
           "How the loss reduces over elements: mean or sum">,
    Option<"function", "function", "std::string", /*default=*/"",
           "The model function (default: main, or the only function)">,
  ];
}

def AutodiffPass : Pass<"lethe-autodiff", "::mlir::ModuleOp"> {
  let summary = "Differentiate the loss: make the model function a training "
                "step that returns the loss and the gradients";
  let description = [{
    Reverse-mode differentiation of the model function (`function`, by
    default @main or the module's only function), whose first result is its
    loss (`lethe.loss`, as `--lethe-add-loss` leaves it), with respect to
    every argument marked `lethe.trainable` and the data inputs named in
    `inputs`. The function becomes `name` (default `train_step`) with the
    same arguments; its results are the loss and then one gradient per
    differentiated argument, in argument order, named `NAME.grad` and
    marked `lethe.gradient_of = INDEX` (the argument's position). Other
    results are dropped, and forward values only they needed are erased.

    The backward ops follow the forward ones, in reverse order of the ops
    they differentiate. The gradient of a value used several times is the
    sum of its uses' contributions; broadcasts are reduced back to the
    operand's shape. Each backward op reads only the forward values its
    rule needs (relu's output, not its input, for example), so the others
    die with their last forward use. An argument the loss does not depend on
    gets a zero gradient. An op on the path from a differentiated argument
    to the loss that has no gradient rule is an error naming it.

    With `training` (the default), the step trains as a framework's
    training mode does: every `batch_norm` normalizes with its batch's
    statistics (it becomes `batch_norm_train`), every dropout with a
    non-zero ratio drops, keyed by a `step` argument (tensor<i64>, marked
    `lethe.step`, added if missing) so that each step draws a new mask. The
    new running statistics of a normalization whose running mean and
    variance are arguments follow the gradients as results named like those
    arguments and marked `lethe.updates = INDEX`, the argument they replace
    in the next step. With `training=false` the forward is differentiated
    as written.

    Example: `lethe-opt model.mlir --lethe-add-loss="output=logits
    kind=softmax_cross_entropy" --lethe-autodiff`.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"",
           "The model function (default: main, or the only function)">,
    Option<"name", "name", "std::string", /*default=*/"\"train_step\"",
           "The name of the training-step function">,
    ListOption<"inputs", "inputs", "std::string",
               "Data inputs (by lethe.name) to differentiate as well">,
    Option<"training", "training", "bool", /*default=*/"true",
           "Batch statistics and active dropout, as in a framework's "
           "training mode">,
  ];
}

def AddOptimizerPass : Pass<"lethe-add-optimizer", "::mlir::ModuleOp"> {
  let summary = "Update the parameters in the training step: replace the "
                "gradients by an optimizer's new parameters and state";
  let description = [{
    Completes the training step that `--lethe-autodiff` made (`function`,
    by default @train_step): for each result marked `lethe.gradient_of = I`
    whose argument I is `lethe.trainable`, an optimizer update (one
    `lethe.*_update` op per parameter) computes the parameter's next value
    from the parameter, its gradient and its optimizer state.

    `kind` chooses the optimizer and `lr` (required, > 0) the learning rate,
    a constant:

    - `sgd`: `lethe.sgd_update`, `x - lr (g + weight_decay x)`; no state.
    - `momentum`, `nesterov`: `lethe.momentum_update` (PyTorch's SGD with
      `momentum`, `dampening`, `nesterov`); state `NAME.momentum`.
    - `adagrad`: `lethe.adagrad_update` (`decay-factor` is PyTorch's
      lr_decay); state `NAME.adagrad_sum`.
    - `adam`, `adamw`: `lethe.adam_update` with `beta1`, `beta2`,
      `epsilon`; for `adam`, `weight-decay` is L2 regularization added to
      the gradient (PyTorch's Adam), for `adamw` it is decoupled (PyTorch's
      AdamW). States `NAME.adam_m` and `NAME.adam_v`.

    `weight-decay` defaults to 0 for every kind (PyTorch's AdamW defaults to
    0.01: give it). Epsilon is added to the square root of the second moment
    before the bias correction, as ONNX specifies.

    Each state is a new argument after the existing ones, named as above and
    initialized with zeros (`lethe.initializer`). The updates read the step
    number from the argument marked `lethe.step`, which is added (named
    `step`) if there is none: momentum and Adagrad take it as the update
    count T (0 at the first step), Adam as T = step + 1 so that its bias
    correction is Adam's. SGD needs no step. Each update is placed right
    after the later of its gradient and the last use of the parameter, so
    that both die there.

    The results become: the loss, then each updated parameter's next value
    (`lethe.updates = I`, named as the parameter), then each new state
    (`lethe.updates =` its argument), then the results that were marked
    `lethe.updates` already (running statistics, for example), unchanged.
    Gradients are dropped unless `keep-gradients` is set, in which case
    they follow. A function without a loss or without the gradient of a
    trainable argument, an unknown kind, a hyper-parameter out of range or
    one that the kind does not use, and a function already optimized are
    errors.

    Example: `lethe-opt model.mlir --lethe-add-loss="output=logits
    kind=softmax_cross_entropy" --lethe-autodiff
    --lethe-add-optimizer="kind=adamw lr=1e-3 weight-decay=0.01"`.
  }];
  let options = [
    Option<"kind", "kind", "std::string", /*default=*/"",
           "The optimizer: sgd, momentum, nesterov, adagrad, adam or adamw">,
    Option<"learningRate", "lr", "double", /*default=*/"0.0",
           "The learning rate (required, > 0)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "momentum, nesterov: the momentum factor, in [0, 1)">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0",
           "momentum, nesterov: the gradient's dampening, in [0, 1)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "adam, adamw: the first moment's decay, in [0, 1)">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999",
           "adam, adamw: the second moment's decay, in [0, 1)">,
    Option<"epsilon", "epsilon", "double", /*default=*/"1e-8",
           "adagrad, adam, adamw: added to the denominator (> 0)">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "L2 regularization (decoupled decay for adamw), >= 0">,
    Option<"decayFactor", "decay-factor", "double", /*default=*/"0.0",
           "adagrad: the learning rate's decay, lr / (1 + step * decay), "
           ">= 0">,
    Option<"function", "function", "std::string",
           /*default=*/"\"train_step\"",
           "The training step (default: train_step)">,
    Option<"keepGradients", "keep-gradients", "bool", /*default=*/"false",
           "Keep the gradient results after the updates">,
  ];
  let statistics = [
    Statistic<"numParametersUpdated", "parameters-updated",
              "Number of parameters given an optimizer update">,
  ];
}

def PlanMemoryPass : Pass<"lethe-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Choose what to keep, recompute or offload so that the "
                "training step fits a memory budget";
  let description = [{
    Plans the training step (`function`, by default @train_step, else @main,
    else the module's only function) for a device memory budget: `budget` in bytes with an
    optional unit (`6GiB`, `512MiB`, `100KiB`, `2GB`, `1000000`) or as a
    fraction of the unplanned peak (`0.5`; a fraction has a decimal point).
    The budget counts everything resident on the device: parameters,
    gradients, optimizer state, activations and temporaries. It bounds the
    arena `--lethe-assign-arena` lays the step out in, fragmentation
    included: a plan whose arena is over the budget is planned again below
    it. The room a plan leaves is then spent on taking back the recomputes
    and swaps that fit, for a faster step, so the planned peak sits close to
    the budget (docs/Planning.md).

    The step becomes a graph of nodes (its ops, each with a roofline time
    from the cost interface and the device `profile`: a built-in name,
    h100, h200, a100, v100 or cpu, or a profile JSON file) and values (its
    tensors). `strategy` chooses the planner: `none` (keep everything),
    `sqrt`, `chain`, `chain-offload`, `milp`, `greedy` or `auto` (see
    docs/Planning.md); `time-limit` bounds its seconds. With `plan-in=FILE`
    the plan is read from a plan file instead, and checked. With
    `measured=FILE`, a planned executable's `--profile` output for the same
    step, the ops it timed take their measured times instead of the
    roofline's (profile-guided planning), and an op that asked for more
    workspace than it was given gets that much (`lethe.workspace_bytes` on
    the op, which the later passes take as its workspace).

    The plan is recorded as the function's `lethe.plan` attribute: the
    strategy, the budget, the simulated peak and time against the unplanned
    ones, and the schedule's steps. `--lethe-materialize-plan` carries it
    out. `plan-out=FILE` writes the plan and `problem-out=FILE` the planning
    problem as JSON (docs/Planning.md), so that other solvers can be
    compared on the same instance; files are written only when planning
    succeeds.

    A budget no plan of the strategy meets is an error that says the
    smallest budget it can meet.

    Example: `lethe-opt train.mlir --lethe-plan-memory="budget=0.5
    strategy=chain profile=h100"`.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"",
           "The training-step function (default: train_step, else main, or "
           "the only function)">,
    Option<"budget", "budget", "std::string", /*default=*/"",
           "Device memory budget: bytes with an optional unit (6GiB), or a "
           "fraction of the unplanned peak (0.5)">,
    Option<"strategy", "strategy", "std::string", /*default=*/"\"auto\"",
           "none, sqrt, chain, chain-offload, milp, greedy or auto">,
    Option<"profile", "profile", "std::string", /*default=*/"\"h100\"",
           "Device profile: h100, h200, a100, v100, cpu or a JSON file">,
    Option<"timeLimit", "time-limit", "double", /*default=*/"60",
           "Seconds the strategy may spend">,
    Option<"measured", "measured", "std::string", /*default=*/"",
           "Op times and workspace measured by a planned executable (its "
           "--profile JSON)">,
    Option<"planIn", "plan-in", "std::string", /*default=*/"",
           "Read the plan from this JSON file instead of planning">,
    Option<"planOut", "plan-out", "std::string", /*default=*/"",
           "Write the plan to this JSON file">,
    Option<"problemOut", "problem-out", "std::string", /*default=*/"",
           "Write the planning problem to this JSON file">,
  ];
  let statistics = [
    Statistic<"unplannedPeak", "unplanned-peak-bytes",
              "Simulated peak of the unplanned step, in bytes">,
    Statistic<"plannedPeak", "planned-peak-bytes",
              "Simulated peak of the planned step, in bytes">,
    Statistic<"numRecomputes", "recomputes", "Recompute steps in the plan">,
    Statistic<"numOffloads", "offloads", "Offload steps in the plan">,
  ];
}

def MaterializePlanPass
    : Pass<"lethe-materialize-plan", "::mlir::func::FuncOp"> {
  let summary = "Carry out the memory plan: recompute clones and memory ops";
  let description = [{
    Rewrites a function that `--lethe-plan-memory` planned (it has a
    `lethe.plan` attribute with steps) to run the plan: its ops move into the
    plan's order; a recompute is a clone of the forward op marked
    `lethe.recompute`, placed where the plan runs it (right before the
    backward ops that need it); an offload, release or prefetch becomes a
    `lethe.offload`, `lethe.release` or `lethe.prefetch`; and every operand
    reads the copy of its value that the plan makes resident at that point.
    The steps leave the attribute, which keeps the plan's summary. Functions
    without a plan are left alone. A plan that does not match the function
    (it changed since planning) is an error.

    Example: `lethe-opt train.mlir --lethe-plan-memory="budget=0.5"
    --lethe-materialize-plan`.
  }];
}

def VerifyPlanPass : Pass<"lethe-verify-plan", "::mlir::func::FuncOp"> {
  let summary = "Check that a planned training step fits its budget";
  let description = [{
    For a function with a `lethe.plan` attribute, replays what the function
    runs (the plan's steps, or the ops of a materialized function with its
    recomputes and memory ops) in the memory simulator, and fails unless
    every op reads a tensor resident on the device when it runs and the
    simulated peak is within the plan's budget; the error says which op
    reads what, or the peak reached. The IR is left unchanged.

    Example: `lethe-opt planned.mlir --lethe-verify-plan -o /dev/null`.
  }];
}

def AssignArenaPass : Pass<"lethe-assign-arena", "::mlir::func::FuncOp"> {
  let summary = "Give every device tensor a static offset in one arena";
  let description = [{
    Lays out the device tensors of each function (planned and materialized,
    or not) in one arena: every tensor gets a byte offset, aligned to
    `alignment`, such that two tensors alive at the same op never overlap;
    so does the workspace of every op whose cost interface reports one (a
    convolution's column buffer), alive while that op runs; host copies made
    by `lethe.offload` get slots in one host pool the same way. Lifetimes
    are those the memory simulator and the interpreter use: from the op that
    makes a tensor to its last use (to its release for an offloaded one;
    arguments from the start, results to the end).

    Offsets are recorded as attributes: `lethe.offsets` (one per result) and
    `lethe.workspace_offset` (for an op with workspace) on ops,
    `lethe.offset` on arguments, `lethe.host_offset` on offloads; and the
    function gets `lethe.arena = {size, liveness_peak, alignment,
    host_size}`, the arena's size against the most aligned bytes alive at
    once (no layout can be smaller). The statistics say the same.

    Example: `lethe-opt planned.mlir --lethe-assign-arena`.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"256",
           "Byte alignment of every offset (a power of two)">,
  ];
  let statistics = [
    Statistic<"arenaBytes", "arena-bytes", "Size of the device arena">,
    Statistic<"livenessPeak", "liveness-peak-bytes",
              "Most aligned device bytes alive at once">,
    Statistic<"hostBytes", "host-pool-bytes", "Size of the host pool">,
  ];
}

#endif // LETHE_DIALECT_LETHE_TRANSFORMS_PASSES_TD
