"""Times lethec on ResNet-50 (25.6 million parameters): a benchmark that
prints a table, not a test.

    /usr/bin/python3 bench/lethec/resnet50.py --bin build/bin [--batch 8]
        [--image 224] [--budget 0.6] [--strategy auto]

Builds ResNet-50 (bottleneck blocks 3-4-6-3, batch normalization, 1000
classes) as ONNX with lethe.onnx_models' builder, then runs lethec on it
(softmax cross-entropy, Adam, the budget) and prints the wall time of the
whole compile with lethec's summary. No executable is run.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))

import numpy as np  # noqa: E402
from onnx import helper  # noqa: E402

from lethe.onnx_models import GraphBuilder, tensor  # noqa: E402


def conv_bn(g, x, cin, cout, kernel, stride, prefix, relu=True):
    w = g.weight(f"{prefix}.weight", (cout, cin, kernel, kernel))
    pad = kernel // 2
    y = g.node("Conv", [x, w], kernel_shape=[kernel, kernel],
               pads=[pad] * 4, strides=[stride, stride])
    scale = g.constant(f"{prefix}.bn.weight", np.ones(cout, np.float32))
    bias = g.constant(f"{prefix}.bn.bias", np.zeros(cout, np.float32))
    mean = g.constant(f"{prefix}.bn.running_mean", np.zeros(cout, np.float32))
    var = g.constant(f"{prefix}.bn.running_var", np.ones(cout, np.float32))
    y = g.node("BatchNormalization", [y, scale, bias, mean, var],
               epsilon=1e-5)
    return g.node("Relu", [y]) if relu else y


def resnet50(batch, image, classes=1000):
    g = GraphBuilder("resnet50", 5)
    y = conv_bn(g, "x", 3, 64, 7, 2, "conv1")
    y = g.node("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2],
               pads=[1, 1, 1, 1])
    cin = 64
    for stage, (blocks, width) in enumerate([(3, 64), (4, 128), (6, 256),
                                             (3, 512)]):
        for block in range(blocks):
            stride = 2 if block == 0 and stage > 0 else 1
            prefix = f"layer{stage + 1}.{block}"
            r = conv_bn(g, y, cin, width, 1, 1, prefix + ".conv1")
            r = conv_bn(g, r, width, width, 3, stride, prefix + ".conv2")
            r = conv_bn(g, r, width, width * 4, 1, 1, prefix + ".conv3",
                        relu=False)
            if block == 0:
                y = conv_bn(g, y, cin, width * 4, 1, stride,
                            prefix + ".downsample", relu=False)
            y = g.node("Relu", [g.node("Add", [y, r])])
            cin = width * 4
    y = g.node("Flatten", [g.node("GlobalAveragePool", [y])], axis=1)
    w = g.weight("fc.weight", (classes, cin))
    b = g.weight("fc.bias", (classes,), scale=0.1)
    g.nodes.append(helper.make_node("Gemm", [y, w, b], ["logits"], name="fc",
                                    transB=1))
    return g.model([tensor("x", (batch, 3, image, image))],
                   [tensor("logits", (batch, classes))])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--image", type=int, default=224)
    parser.add_argument("--budget", default="0.6")
    parser.add_argument("--strategy", default="auto")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        model = resnet50(args.batch, args.image)
        parameters = sum(int(np.prod(i.dims)) for i in model.graph.initializer)
        path = os.path.join(work, "resnet50.onnx")
        with open(path, "wb") as handle:
            handle.write(model.SerializeToString())
        start = time.monotonic()
        result = subprocess.run(
            [os.path.join(args.bin, "lethec"), path, "--loss",
             "output=logits kind=softmax_cross_entropy", "--optimizer",
             "kind=adam lr=0.001", "--budget", args.budget, "--strategy",
             args.strategy, "-o", os.path.join(work, "resnet50")],
            capture_output=True, text=True)
        seconds = time.monotonic() - start
        print(result.stdout + result.stderr, end="")
        print("model        parameters  batch  image  budget  strategy  "
              "lethec s  exit")
        print("resnet50  %12d  %5d  %5d  %6s  %8s  %8.1f  %4d" %
              (parameters, args.batch, args.image, args.budget,
               args.strategy, seconds, result.returncode))
        sys.exit(result.returncode)


if __name__ == "__main__":
    main()
