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

and, at configurable sizes for the GPU benchmark (bench/gpu), the same
builders with more layers and:

  resnet50     ResNet-50: bottleneck blocks 3-4-6-3, batch normalization
  gpt2         a GPT-2-style decoder: token and position embeddings, pre-LayerNorm
               blocks of causal multi-head attention and a GELU feed-forward,
               a final LayerNorm and the head tied to the token embedding

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
        """An initializer given by value (shapes, scalars, normalization
        parameters); a float tensor of rank 1 or more is still a parameter
        to the importer. Blocks that share one (a reshape's shape) may add
        it again with the same value."""
        value = np.asarray(value)
        for tensor in self.initializers:
            if tensor.name == name:
                if not np.array_equal(numpy_helper.to_array(tensor), value):
                    raise ValueError(f"initializer '{name}' added twice with different values")
                return name
        self.initializers.append(numpy_helper.from_array(value, name))
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


def tensor(name, shape, elem_type=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem_type, shape)


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


def conv_bn(g, x, in_channels, out_channels, prefix, relu=True, stride=1, kernel=3,
            weight=None, training=False):
    """Conv (no bias, padded to keep the size at stride 1), BatchNormalization
    and optionally Relu. The weight is `weight` or PREFIX.conv.weight; the
    normalization uses the batch's statistics when `training` (as PyTorch's
    train mode does), else its running statistics."""
    w = g.weight(weight or f"{prefix}.conv.weight", (out_channels, in_channels, kernel, kernel))
    pad = kernel // 2
    y = g.node("Conv", [x, w], kernel_shape=[kernel, kernel], pads=[pad] * 4,
               strides=[stride, stride])
    scale = g.constant(f"{prefix}.bn.weight", np.ones(out_channels, np.float32))
    bias = g.constant(f"{prefix}.bn.bias", np.zeros(out_channels, np.float32))
    mean = g.constant(f"{prefix}.bn.running_mean", np.zeros(out_channels, np.float32))
    var = g.constant(f"{prefix}.bn.running_var", np.ones(out_channels, np.float32))
    mode = {"training_mode": 1} if training else {}
    y = g.node("BatchNormalization", [y, scale, bias, mean, var], epsilon=1e-5, **mode)
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


def layer_norm(g, x, dim, prefix):
    scale = g.constant(f"{prefix}.weight", np.ones(dim, np.float32))
    bias = g.constant(f"{prefix}.bias", np.zeros(dim, np.float32))
    return g.node("LayerNormalization", [x, scale, bias], axis=-1, epsilon=1e-5)


def linear(g, x, in_dim, out_dim, prefix):
    """x W + b with W of shape (in_dim, out_dim), for MatMul of any rank."""
    w = g.weight(f"{prefix}.weight", (in_dim, out_dim))
    b = g.weight(f"{prefix}.bias", (out_dim,), scale=0.1)
    return g.node("Add", [g.node("MatMul", [x, w]), b])


def transformer_block(g, x, prefix, batch, sequence, model_dim, heads, ff_dim, mask=None,
                      output=None):
    """A pre-LayerNorm block on x (batch, sequence, model_dim): multi-head
    self-attention (scores + `mask`, an additive (sequence, sequence) mask,
    when given) and a GELU feed-forward, each with a residual connection.
    Weights are named PREFIX + ln1, attn.q, ...; the block's result is
    `output` when given."""
    head_dim = model_dim // heads
    split_shape = g.constant("shape.split_heads",
                             np.array([batch, sequence, heads, head_dim], np.int64))
    merge_shape = g.constant("shape.merge_heads", np.array([batch, sequence, model_dim], np.int64))

    def split_heads(y):  # (B, S, D) -> (B, H, S, Dh)
        return g.node("Transpose", [g.node("Reshape", [y, split_shape])], perm=[0, 2, 1, 3])

    h = layer_norm(g, x, model_dim, prefix + "ln1")
    q = split_heads(linear(g, h, model_dim, model_dim, prefix + "attn.q"))
    k = split_heads(linear(g, h, model_dim, model_dim, prefix + "attn.k"))
    v = split_heads(linear(g, h, model_dim, model_dim, prefix + "attn.v"))
    scores = g.node("MatMul", [q, g.node("Transpose", [k], perm=[0, 1, 3, 2])])
    scale = g.constant("attn.scale", np.array(1.0 / math.sqrt(head_dim), np.float32))
    scores = g.node("Mul", [scores, scale])
    if mask is not None:
        scores = g.node("Add", [scores, mask])
    probabilities = g.node("Softmax", [scores], axis=-1)
    context = g.node("Transpose", [g.node("MatMul", [probabilities, v])], perm=[0, 2, 1, 3])
    context = g.node("Reshape", [context, merge_shape])
    x = g.node("Add", [x, linear(g, context, model_dim, model_dim, prefix + "attn.out")])

    h = layer_norm(g, x, model_dim, prefix + "ln2")
    h = linear(g, h, model_dim, ff_dim, prefix + "ff.in")
    # GELU (exact) from Erf: 0.5 * h * (1 + erf(h / sqrt(2))); opset 17 has no Gelu.
    half = g.constant("gelu.half", np.array(0.5, np.float32))
    one = g.constant("gelu.one", np.array(1.0, np.float32))
    root2 = g.constant("gelu.sqrt2", np.array(math.sqrt(2.0), np.float32))
    erf = g.node("Erf", [g.node("Div", [h, root2])])
    h = g.node("Mul", [g.node("Mul", [h, half]), g.node("Add", [erf, one])])
    h = linear(g, h, ff_dim, model_dim, prefix + "ff.out")
    if output is None:
        return g.node("Add", [x, h])
    g.nodes.append(helper.make_node("Add", [x, h], [output], name=prefix + "residual.ff"))
    return output


def transformer(batch=2, sequence=16, model_dim=32, heads=4, ff_dim=64, seed=3):
    g = GraphBuilder("transformer", seed)
    transformer_block(g, "x", "", batch, sequence, model_dim, heads, ff_dim, output="y")
    shape = (batch, sequence, model_dim)
    return g.model([tensor("x", shape)], [tensor("y", shape)])


def gpt2(batch=2, sequence=16, model_dim=32, heads=4, layers=2, vocab=64, seed=6):
    """A GPT-2-style decoder on int64 tokens (batch, sequence): token and
    position embeddings, `layers` pre-LayerNorm blocks with causal attention
    and a 4x GELU feed-forward, a final LayerNorm, and logits
    (batch * sequence, vocab) from the token embedding (tied, as GPT-2's
    head is), ready for softmax cross-entropy against the next tokens.
    GPT-2 small is model_dim=768, heads=12, layers=12, vocab=50257,
    sequence=1024."""
    g = GraphBuilder("gpt2", seed)
    wte = g.weight("wte", (vocab, model_dim), scale=0.02)
    wpe = g.weight("wpe", (sequence, model_dim), scale=0.01)
    x = g.node("Add", [g.node("Gather", [wte, "tokens"], axis=0), wpe])
    # The causal mask, added to the scores: a Constant node, so that the
    # importer folds it into a constant instead of a trainable parameter.
    mask = np.triu(np.full((sequence, sequence), -1e9, np.float32), k=1)
    mask = g.node("Constant", [], value=numpy_helper.from_array(mask, "causal_mask"))
    for layer in range(layers):
        x = transformer_block(g, x, f"h{layer}.", batch, sequence, model_dim, heads,
                              4 * model_dim, mask=mask)
    x = layer_norm(g, x, model_dim, "ln_f")
    rows = g.constant("shape.rows", np.array([batch * sequence, model_dim], np.int64))
    x = g.node("Reshape", [x, rows])
    g.nodes.append(helper.make_node("Gemm", [x, wte], ["logits"], name="head", transB=1))
    return g.model([tensor("tokens", (batch, sequence), TensorProto.INT64)],
                   [tensor("logits", (batch * sequence, vocab))])


# ResNet-50's bottleneck blocks per stage; each block's output has 4 times
# the stage's width.
RESNET50_BLOCKS = [3, 4, 6, 3]


def resnet50(batch=8, image=224, classes=1000, training=False, width=64, seed=5):
    """ResNet-50 (bottleneck blocks 3-4-6-3, the stride on the 3x3
    convolution as in torchvision, 25.6 million parameters) on
    (batch, 3, image, image); batch normalization in training mode when
    `training`. `width` is the stem's channels and the first stage's
    bottleneck width (the stages double it); below 64 it is a thinner
    network of the same graph, for tests."""
    g = GraphBuilder("resnet50", seed)

    def conv(x, cin, cout, kernel, stride, prefix, relu=True):
        return conv_bn(g, x, cin, cout, prefix, relu=relu, stride=stride, kernel=kernel,
                       weight=f"{prefix}.weight", training=training)

    y = conv("x", 3, width, 7, 2, "conv1")
    y = g.node("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = width
    for stage, blocks in enumerate(RESNET50_BLOCKS):
        stage_width = width * 2 ** stage
        for block in range(blocks):
            stride = 2 if block == 0 and stage > 0 else 1
            prefix = f"layer{stage + 1}.{block}"
            r = conv(y, cin, stage_width, 1, 1, prefix + ".conv1")
            r = conv(r, stage_width, stage_width, 3, stride, prefix + ".conv2")
            r = conv(r, stage_width, stage_width * 4, 1, 1, prefix + ".conv3", relu=False)
            if block == 0:
                y = conv(y, cin, stage_width * 4, 1, stride, prefix + ".downsample", relu=False)
            y = g.node("Relu", [g.node("Add", [y, r])])
            cin = stage_width * 4
    y = g.node("Flatten", [g.node("GlobalAveragePool", [y])], axis=1)
    w = g.weight("fc.weight", (classes, cin))
    b = g.weight("fc.bias", (classes,), scale=0.1)
    g.nodes.append(helper.make_node("Gemm", [y, w, b], ["logits"], name="fc", transB=1))
    return g.model([tensor("x", (batch, 3, image, image))], [tensor("logits", (batch, classes))])


def unet(batch=1, channels=1, base=8, image=32, depth=2, convs=1, seed=4):
    """A U-Net on (batch, channels, image, image): `depth` down-sampling
    stages (MaxPool) of base, 2 base, ... channels, a bottleneck of
    2^depth base, and as many up-sampling stages (nearest Resize, the skip
    concatenated after it); every stage is `convs` 3x3 convolutions with bias
    and Relu; a 1x1 convolution maps back to `channels`. The original U-Net
    is depth=4, convs=2, base=64."""
    g = GraphBuilder("unet", seed)
    if image % (2 ** depth):
        raise ValueError(f"unet: the image size {image} is not divisible by 2^depth = {2 ** depth}")

    def conv_relu(x, in_channels, out_channels, prefix):
        w = g.weight(f"{prefix}.weight", (out_channels, in_channels, 3, 3))
        b = g.weight(f"{prefix}.bias", (out_channels,), scale=0.1)
        return g.node("Relu", [g.node("Conv", [x, w, b], kernel_shape=[3, 3], pads=[1, 1, 1, 1])])

    def stage(x, in_channels, out_channels, prefix):
        for index in range(convs):
            name = prefix if convs == 1 else f"{prefix}.{index}"
            x = conv_relu(x, in_channels if index == 0 else out_channels, out_channels, name)
        return x

    def pool(x):
        return g.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])

    scales = g.constant("up.scales", np.array([1, 1, 2, 2], np.float32))
    skips = []
    y, width = "x", channels
    for level in range(1, depth + 1):
        y = stage(y if level == 1 else pool(y), width, base * 2 ** (level - 1), f"enc{level}")
        skips.append(y)
        width = base * 2 ** (level - 1)
    y = stage(pool(y), width, base * 2 ** depth, "mid")
    width = base * 2 ** depth
    for level in range(depth, 0, -1):
        up = g.node("Resize", [y, "", scales], mode="nearest")
        skip_width = base * 2 ** (level - 1)
        y = stage(g.node("Concat", [up, skips[level - 1]], axis=1), width + skip_width,
                  skip_width, f"dec{level}")
        width = skip_width
    w = g.weight("head.weight", (channels, base, 1, 1))
    g.nodes.append(helper.make_node("Conv", [y, w], ["y"], name="head", kernel_shape=[1, 1]))
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
