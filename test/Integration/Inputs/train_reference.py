#!/usr/bin/env python3
"""A numpy reference for `lethe-run --steps` on a small MLP.

    train_reference.py setup DIR
        writes DIR/mlp.mlir (a two-layer MLP whose parameters have seeded
        random initializers), DIR/input_0.pb and DIR/input_1.pb (a batch of
        inputs and their class labels, for lethe-run --inputs-from DIR);

    train_reference.py check DIR LOSSES KIND [NAME=VALUE ...]
        trains the same MLP on the same batch with numpy, following
        PyTorch's formulas for the optimizer KIND (sgd, momentum, nesterov,
        adagrad, adam, adamw; options as --lethe-add-optimizer's), and
        compares the losses with those lethe-run printed to the file LOSSES
        ("step K: loss L" lines, 30 of them). Prints the largest difference
        and exits 1 if it is over 1e-5, if either loss did not fall, or if
        LOSSES does not hold 30 steps.

The reference is written from PyTorch's documentation of torch.optim, not
from Lethe's kernels: Adam counts steps from 1 and adds epsilon to the
square root of the uncorrected second moment times the correction (ONNX's
placement, which Lethe follows; PyTorch's eps is ONNX's epsilon divided by
sqrt(1 - beta2^t)).
"""

import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

BATCH, FEATURES, HIDDEN, CLASSES = 8, 4, 6, 3


def parameters():
    rng = np.random.default_rng(7)
    return {
        "w1": (rng.standard_normal((FEATURES, HIDDEN)) * 0.5).astype(np.float32),
        "b1": (rng.standard_normal(HIDDEN) * 0.1).astype(np.float32),
        "w2": (rng.standard_normal((HIDDEN, CLASSES)) * 0.5).astype(np.float32),
        "b2": (rng.standard_normal(CLASSES) * 0.1).astype(np.float32),
    }


def batch():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((BATCH, FEATURES)).astype(np.float32)
    labels = rng.integers(0, CLASSES, BATCH).astype(np.int64)
    return x, labels


def dense(array):
    """The MLIR literal of an f32 array (each float printed exactly)."""
    def nested(a):
        if a.ndim == 0:
            return repr(float(a))
        return "[" + ", ".join(nested(item) for item in a) + "]"
    shape = "x".join(str(d) for d in array.shape)
    return f"dense<{nested(array)}> : tensor<{shape}xf32>"


def setup(directory):
    os.makedirs(directory, exist_ok=True)
    p = parameters()

    def arg(name):
        shape = "x".join(str(d) for d in p[name].shape)
        return (f"%{name}: tensor<{shape}xf32> {{lethe.name = \"{name}\", "
                f"lethe.parameter, lethe.trainable, lethe.initializer = "
                f"{dense(p[name])}}}")

    with open(os.path.join(directory, "mlp.mlir"), "w") as f:
        f.write(f"""func.func @main(%x: tensor<{BATCH}x{FEATURES}xf32> {{lethe.name = "x"}}, {arg("w1")}, {arg("b1")}, {arg("w2")}, {arg("b2")}) -> (tensor<{BATCH}x{CLASSES}xf32> {{lethe.name = "logits"}}) {{
  %0 = lethe.matmul %x, %w1 : (tensor<{BATCH}x{FEATURES}xf32>, tensor<{FEATURES}x{HIDDEN}xf32>) -> tensor<{BATCH}x{HIDDEN}xf32>
  %1 = lethe.add %0, %b1 : (tensor<{BATCH}x{HIDDEN}xf32>, tensor<{HIDDEN}xf32>) -> tensor<{BATCH}x{HIDDEN}xf32>
  %2 = lethe.relu %1 : tensor<{BATCH}x{HIDDEN}xf32>
  %3 = lethe.matmul %2, %w2 : (tensor<{BATCH}x{HIDDEN}xf32>, tensor<{HIDDEN}x{CLASSES}xf32>) -> tensor<{BATCH}x{CLASSES}xf32>
  %4 = lethe.add %3, %b2 : (tensor<{BATCH}x{CLASSES}xf32>, tensor<{CLASSES}xf32>) -> tensor<{BATCH}x{CLASSES}xf32>
  return %4 : tensor<{BATCH}x{CLASSES}xf32>
}}
""")
    x, labels = batch()
    for index, array in enumerate((x, labels)):
        with open(os.path.join(directory, f"input_{index}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array).SerializeToString())


def reference_losses(kind, options, steps):
    p = {k: v.astype(np.float64) for k, v in parameters().items()}
    x, labels = batch()
    x = x.astype(np.float64)
    lr = options["lr"]
    momentum = options.get("momentum", 0.9)
    dampening = options.get("dampening", 0.0)
    beta1, beta2 = options.get("beta1", 0.9), options.get("beta2", 0.999)
    epsilon = options.get("epsilon", 1e-8)
    decay = options.get("weight-decay", 0.0)
    lr_decay = options.get("decay-factor", 0.0)
    state = {k: [np.zeros_like(v), np.zeros_like(v)] for k, v in p.items()}
    losses = []
    rows = np.arange(BATCH)
    for t in range(steps):
        hidden = np.maximum(x @ p["w1"] + p["b1"], 0)
        logits = hidden @ p["w2"] + p["b2"]
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_prob = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        losses.append(-log_prob[rows, labels].mean())
        dlogits = np.exp(log_prob)
        dlogits[rows, labels] -= 1
        dlogits /= BATCH
        dhidden = (dlogits @ p["w2"].T) * (hidden > 0)
        grads = {"w1": x.T @ dhidden, "b1": dhidden.sum(axis=0),
                 "w2": hidden.T @ dlogits, "b2": dlogits.sum(axis=0)}
        for name, g in grads.items():
            w = p[name]
            first, second = state[name]
            if kind != "adamw":
                g = g + decay * w  # coupled L2, as torch.optim does
            if kind == "sgd":
                w -= lr * g
            elif kind in ("momentum", "nesterov"):
                first[:] = g if t == 0 else momentum * first + (1 - dampening) * g
                w -= lr * (g + momentum * first if kind == "nesterov" else first)
            elif kind == "adagrad":
                second += g * g
                w -= lr / (1 + t * lr_decay) * g / (np.sqrt(second) + epsilon)
            else:
                if kind == "adamw":
                    w *= 1 - lr * decay
                first[:] = beta1 * first + (1 - beta1) * g
                second[:] = beta2 * second + (1 - beta2) * g * g
                count = t + 1
                rate = lr * np.sqrt(1 - beta2 ** count) / (1 - beta1 ** count)
                w -= rate * first / (np.sqrt(second) + epsilon)
    return losses


def check(directory, losses_file, kind, settings, steps=30):
    options = {}
    for setting in settings:
        name, value = setting.split("=", 1)
        options[name] = float(value)
    with open(losses_file) as f:
        lethe = [float(line.split()[-1]) for line in f if line.startswith("step ")]
    if len(lethe) != steps:
        print(f"{kind}: MISMATCH: {losses_file} has {len(lethe)} step lines, "
              f"not {steps}")
        return 1
    reference = reference_losses(kind, options, len(lethe))
    difference = max(abs(a - b) for a, b in zip(lethe, reference))
    print(f"{kind}: {len(lethe)} steps, loss {reference[0]:.6f} -> "
          f"{reference[-1]:.6f} (lethe {lethe[-1]:.6f}), "
          f"max |lethe - reference| = {difference:.2e}")
    if (difference > 1e-5 or not reference[-1] < reference[0]
            or not lethe[-1] < lethe[0]):
        print(f"{kind}: MISMATCH")
        return 1
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "setup":
        setup(argv[2])
        return 0
    if len(argv) >= 5 and argv[1] == "check":
        return check(argv[2], argv[3], argv[4], argv[5:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
