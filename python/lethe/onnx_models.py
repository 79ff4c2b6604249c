"""Small ONNX models that Lethe's tests and examples train.

Each builder returns an onnx.ModelProto (opset 17, static shapes, float32,
seeded random weights as initializers) whose first output is the model's
prediction:

  mlp          a multi-layer perceptron (Gemm + Relu)
  cnn          a small CNN: Conv, BatchNormalization, pooling and a residual
               block, then GlobalAveragePool and a classifier
  transformer  a pre-LayerNorm transformer block: multi-head self-attention
               and a GELU feed-forward, both with residual connections
  unet         a small U-Net: two down-sampling stages, a bottleneck, and
               up-sampling (Resize) with skip concatenations

    /usr/bin/python3 -m lethe.onnx_models --out DIR [--tiny] [--float64]

writes DIR/<name>.onnx for every model (run from python/ or with python/ on
PYTHONPATH). --tiny builds each model with small dimensions (the same
graph), --float64 in double precision: the gradient tests check tiny f64
models against finite differences. Uses Debian's python3-onnx and
python3-numpy only.
"""

import argparse
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class GraphBuilder:
    """Accumulates nodes and initializers with unique names."""

    def __init__(self, name, seed):
        self.name = name
        self.nodes = []
        self.initializers = []
        self.rng = np.random.default_rng(seed)
        self.counter = 0

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}_{self.counter}"

    def weight(self, name, shape, scale=None):
        """A random weight scaled by 1/sqrt(fan_in) unless `scale` is given."""
        if scale is None:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
            scale = 1.0 / math.sqrt(max(fan_in, 1))
        value = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def constant(self, name, value):
        """A non-trainable initializer (shapes, scalars)."""
        self.initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(self, op_type, inputs, outputs=1, **attributes):
        name = self.fresh(op_type.lower())
        names = [f"{name}_out{i}" if outputs > 1 else name for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, names, name=name, **attributes))
        return names if outputs > 1 else names[0]

    def model(self, inputs, outputs):
        graph = helper.make_graph(self.nodes, self.name, inputs, outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="lethe.onnx_models")
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model


def tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def mlp(batch=8, features=32, hidden=64, classes=10, depth=2, seed=1):
    g = GraphBuilder("mlp", seed)
    x = "x"
    width = features
    for layer in range(depth):
        w = g.weight(f"fc{layer}.weight", (hidden, width))
        b = g.weight(f"fc{layer}.bias", (hidden,), scale=0.1)
        x = g.node("Relu", [g.node("Gemm", [x, w, b], transB=1)])
        width = hidden
    w = g.weight("head.weight", (classes, width))
    b = g.weight("head.bias", (classes,), scale=0.1)
    g.nodes.append(helper.make_node("Gemm", [x, w, b], ["logits"], name="head", transB=1))
    return g.model([tensor("x", (batch, features))], [tensor("logits", (batch, classes))])


def conv_bn(g, x, in_channels, out_channels, prefix, relu=True, stride=1):
    w = g.weight(f"{prefix}.conv.weight", (out_channels, in_channels, 3, 3))
    y = g.node("Conv", [x, w], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[stride, stride])
    scale = g.constant(f"{prefix}.bn.weight", np.ones(out_channels, np.float32))
    bias = g.constant(f"{prefix}.bn.bias", np.zeros(out_channels, np.float32))
    mean = g.constant(f"{prefix}.bn.running_mean", np.zeros(out_channels, np.float32))
    var = g.constant(f"{prefix}.bn.running_var", np.ones(out_channels, np.float32))
    y = g.node("BatchNormalization", [y, scale, bias, mean, var], epsilon=1e-5)
    return g.node("Relu", [y]) if relu else y


def cnn(batch=4, channels=16, classes=10, image=32, seed=2):
    g = GraphBuilder("cnn", seed)
    y = conv_bn(g, "x", 3, channels, "stem")
    y = g.node("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
    # Residual block: the input of the block stays live across both convs.
    r = conv_bn(g, y, channels, channels, "block.0")
    r = conv_bn(g, r, channels, channels, "block.1", relu=False)
    y = g.node("Relu", [g.node("Add", [y, r])])
    y = g.node("GlobalAveragePool", [y])
    y = g.node("Flatten", [y], axis=1)
    w = g.weight("fc.weight", (classes, channels))
    b = g.weight("fc.bias", (classes,), scale=0.1)
    g.nodes.append(helper.make_node("Gemm", [y, w, b], ["logits"], name="fc", transB=1))
    return g.model([tensor("x", (batch, 3, image, image))], [tensor("logits", (batch, classes))])


def transformer(batch=2, sequence=16, model_dim=32, heads=4, ff_dim=64, seed=3):
    g = GraphBuilder("transformer", seed)
    head_dim = model_dim // heads

    def layer_norm(x, prefix):
        scale = g.constant(f"{prefix}.weight", np.ones(model_dim, np.float32))
        bias = g.constant(f"{prefix}.bias", np.zeros(model_dim, np.float32))
        return g.node("LayerNormalization", [x, scale, bias], axis=-1, epsilon=1e-5)

    def linear(x, in_dim, out_dim, prefix):
        w = g.weight(f"{prefix}.weight", (in_dim, out_dim))
        b = g.weight(f"{prefix}.bias", (out_dim,), scale=0.1)
        return g.node("Add", [g.node("MatMul", [x, w]), b])

    split_shape = g.constant("shape.split_heads",
                             np.array([batch, sequence, heads, head_dim], np.int64))
    merge_shape = g.constant("shape.merge_heads", np.array([batch, sequence, model_dim], np.int64))

    def split_heads(x):  # (B, S, D) -> (B, H, S, Dh)
        return g.node("Transpose", [g.node("Reshape", [x, split_shape])], perm=[0, 2, 1, 3])

    h = layer_norm("x", "ln1")
    q = split_heads(linear(h, model_dim, model_dim, "attn.q"))
    k = split_heads(linear(h, model_dim, model_dim, "attn.k"))
    v = split_heads(linear(h, model_dim, model_dim, "attn.v"))
    scores = g.node("MatMul", [q, g.node("Transpose", [k], perm=[0, 1, 3, 2])])
    scale = g.constant("attn.scale", np.array(1.0 / math.sqrt(head_dim), np.float32))
    probabilities = g.node("Softmax", [g.node("Mul", [scores, scale])], axis=-1)
    context = g.node("Transpose", [g.node("MatMul", [probabilities, v])], perm=[0, 2, 1, 3])
    context = g.node("Reshape", [context, merge_shape])
    x = g.node("Add", ["x", linear(context, model_dim, model_dim, "attn.out")])

    h = layer_norm(x, "ln2")
    h = linear(h, model_dim, ff_dim, "ff.in")
    # GELU (exact) from Erf: 0.5 * h * (1 + erf(h / sqrt(2))); opset 17 has no Gelu.
    half = g.constant("gelu.half", np.array(0.5, np.float32))
    one = g.constant("gelu.one", np.array(1.0, np.float32))
    root2 = g.constant("gelu.sqrt2", np.array(math.sqrt(2.0), np.float32))
    erf = g.node("Erf", [g.node("Div", [h, root2])])
    h = g.node("Mul", [g.node("Mul", [h, half]), g.node("Add", [erf, one])])
    h = linear(h, ff_dim, model_dim, "ff.out")
    g.nodes.append(helper.make_node("Add", [x, h], ["y"], name="residual.ff"))
    shape = (batch, sequence, model_dim)
    return g.model([tensor("x", shape)], [tensor("y", shape)])


def unet(batch=1, channels=1, base=8, image=32, seed=4):
    g = GraphBuilder("unet", seed)

    def conv_relu(x, in_channels, out_channels, prefix):
        w = g.weight(f"{prefix}.weight", (out_channels, in_channels, 3, 3))
        b = g.weight(f"{prefix}.bias", (out_channels,), scale=0.1)
        return g.node("Relu", [g.node("Conv", [x, w, b], kernel_shape=[3, 3], pads=[1, 1, 1, 1])])

    scales = g.constant("up.scales", np.array([1, 1, 2, 2], np.float32))
    e1 = conv_relu("x", channels, base, "enc1")
    e2 = conv_relu(g.node("MaxPool", [e1], kernel_shape=[2, 2], strides=[2, 2]), base, 2 * base, "enc2")
    m = conv_relu(g.node("MaxPool", [e2], kernel_shape=[2, 2], strides=[2, 2]), 2 * base, 4 * base, "mid")
    u2 = g.node("Resize", [m, "", scales], mode="nearest")
    d2 = conv_relu(g.node("Concat", [u2, e2], axis=1), 6 * base, 2 * base, "dec2")
    u1 = g.node("Resize", [d2, "", scales], mode="nearest")
    d1 = conv_relu(g.node("Concat", [u1, e1], axis=1), 3 * base, base, "dec1")
    w = g.weight("head.weight", (channels, base, 1, 1))
    g.nodes.append(helper.make_node("Conv", [d1, w], ["y"], name="head", kernel_shape=[1, 1]))
    shape = (batch, channels, image, image)
    return g.model([tensor("x", shape)], [tensor("y", shape)])


MODELS = {"mlp": mlp, "cnn": cnn, "transformer": transformer, "unet": unet}

# Small dimensions for each model: the same graphs, cheap enough to check
# every gradient against finite differences.
TINY = {
    "mlp": dict(batch=4, features=6, hidden=8, classes=3),
    "cnn": dict(batch=2, channels=4, classes=3, image=8),
    "transformer": dict(batch=2, sequence=4, model_dim=8, heads=2, ff_dim=16),
    "unet": dict(batch=1, channels=1, base=2, image=8),
}


def as_float64(model):
    """The model with every float tensor in double precision, except
    Resize's scales and roi, which ONNX requires to be float."""
    graph = model.graph
    keep = set()
    for node in graph.node:
        if node.op_type == "Resize":
            keep.update(name for name in node.input[1:3] if name)
    for i, tensor in enumerate(graph.initializer):
        if tensor.data_type == TensorProto.FLOAT and tensor.name not in keep:
            value = numpy_helper.to_array(tensor).astype(np.float64)
            graph.initializer[i].CopyFrom(numpy_helper.from_array(value, tensor.name))
    for info in list(graph.input) + list(graph.output):
        if info.type.tensor_type.elem_type == TensorProto.FLOAT:
            info.type.tensor_type.elem_type = TensorProto.DOUBLE
    onnx.checker.check_model(model)
    return model


def main():
    parser = argparse.ArgumentParser(description="Write Lethe's test models as ONNX files.")
    parser.add_argument("--out", required=True, help="directory to write <name>.onnx into")
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--tiny", action="store_true", help="small dimensions (the same graphs)")
    parser.add_argument("--float64", action="store_true", help="double precision")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.models:
        path = os.path.join(args.out, f"{name}.onnx")
        model = MODELS[name](**(TINY[name] if args.tiny else {}))
        if args.float64:
            model = as_float64(model)
        onnx.save(model, path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
