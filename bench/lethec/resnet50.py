"""Times lethec on ResNet-50 (25.6 million parameters): a benchmark that
prints a table, not a test.

    /usr/bin/python3 bench/lethec/resnet50.py --bin build/bin [--batch 8]
        [--image 224] [--budget 0.6] [--strategy auto]

Builds ResNet-50 (bottleneck blocks 3-4-6-3, batch normalization, 1000
classes) as ONNX with lethe.onnx_models.resnet50, then runs lethec on it
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

from lethe.onnx_models import resnet50  # noqa: E402


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
