#!/usr/bin/env python3
"""Run ONNX's own conformance tests through Lethe's importer and interpreter.

For every test directory (model.onnx + test_data_set_*/input_N.pb, output_N.pb)
under the ONNX test data, imports the model with `lethe-translate
--import-onnx` and runs each data set with `lethe-run --inputs-from
--expect-from`. A test is

  passed       every data set matches (rtol 1e-4, atol 1e-5 by default),
  unsupported  Lethe rejects something the model uses, with its
               "not supported" diagnostics (an op, a data type, a run-time
               shape),
  failed       anything else: a wrong number, a crash, an unexpected error.

Prints the totals per directory and overall. Exits non-zero only when a test
named in the expected-passes list does not pass, so the list is what the test
suite holds Lethe to; `--update` rewrites it with the tests that pass now.

With `--op-table`, also prints a Markdown table of the node tests of each op
of SUPPORTED_OPS (the ops docs/ONNX.md lists): how many pass of those that
count for the op, which are the tests whose model uses the op and whose name
is the op's (test_<op in lower or snake case>..., test_sce... and
test_nllloss... for the losses, test_batchnorm... for BatchNormalization).

usage: onnx_conformance.py --build DIR [--data DIR] [--expected FILE]
                           [--update] [--jobs N] [--filter SUBSTRING] [-v]
                           [--op-table]
"""

import argparse
import collections
import concurrent.futures
import os
import subprocess
import sys
import tempfile

DEFAULT_DATA = "/usr/share/libonnx-testdata/data"
SUITES = ("node", "pytorch-converted", "pytorch-operator", "simple")
HERE = os.path.dirname(os.path.abspath(__file__))

# Tests whose expected numbers Lethe does not reproduce by design, with why.
KNOWN_DIFFERENCES = {
    **{f"node/test_training_dropout{suffix}":
       "expected values drawn by numpy's random generator; Lethe's dropout "
       "uses its own counter-based generator"
       for suffix in ("", "_default", "_default_mask", "_mask")},
    "node/test_cast_FLOAT_to_BFLOAT16":
        "ONNX 1.12's data truncates to bfloat16; Lethe rounds to nearest even",
    "node/test_adam_multiple":
        "the expected outputs use epsilon 1e-2, which ONNX's test generator "
        "forgot to set on the node: the model's Adam has the default 1e-6",
    **{f"node/test_castlike_{pair}{suffix}":
       "the data set's input_1.pb (1 element) contradicts the model's input "
       "'like' (3x4)"
       for pair in ("BFLOAT16_to_FLOAT", "FLOAT_to_BFLOAT16")
       for suffix in ("", "_expanded")},
}

# Diagnostics by which Lethe says it does not support something the model uses.
UNSUPPORTED_MARKERS = (
    "is not supported",
    "which Lethe does not support",
    "known at import time",
    "has a dynamic dimension",
    "has no shape",
    "is not a tensor",
    "Lethe supports opsets",
    "the interpreter cannot execute",
)


# The ONNX ops Lethe imports, in the order of docs/ONNX.md's table.
SUPPORTED_OPS = (
    "Add", "Sub", "Mul", "Div", "Neg", "Relu", "LeakyRelu", "Sigmoid", "Tanh",
    "Erf", "Exp", "Log", "Sqrt", "Pow", "Clip", "Where", "MatMul", "Gemm",
    "Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool",
    "BatchNormalization", "LayerNormalization", "Softmax", "LogSoftmax",
    "Reshape", "Flatten", "Transpose", "Concat", "Split", "Slice", "Gather",
    "Squeeze", "Unsqueeze", "Expand", "ReduceSum", "ReduceMean", "ReduceMax",
    "Cast", "CastLike", "Dropout", "Resize", "Constant", "Identity",
    "SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss", "Shape", "Size",
    "ConstantOfShape", "Adagrad", "Momentum", "Adam",
)
TEST_NAMES = {"SoftmaxCrossEntropyLoss": ("sce",),
              "NegativeLogLikelihoodLoss": ("nllloss",),
              "Dropout": ("dropout", "training_dropout"),
              "BatchNormalization": ("batchnorm",),
              "Momentum": ("momentum", "nesterov_momentum")}


def test_names_of(op):
    """The prefixes (after test_) of the tests named after `op`."""
    if op in TEST_NAMES:
        return TEST_NAMES[op]
    snake = "".join("_" + c.lower() if c.isupper() else c for c in op)[1:]
    return (op.lower(), snake)


def print_op_table(args, results):
    import onnx  # Debian's python3-onnx; only this option needs it.
    status_of = {test: status for test, status, _ in results}
    counts = {op: [0, 0] for op in SUPPORTED_OPS}
    not_passing = collections.defaultdict(list)
    for test, directory in find_tests(args.data, "node/"):
        model = onnx.load(os.path.join(directory, "model.onnx"))
        used = {node.op_type for node in model.graph.node}
        name = test.split("/", 1)[1][len("test_"):]
        for op in SUPPORTED_OPS:
            if op not in used:
                continue
            if not any(name == prefix or name.startswith(prefix + "_")
                       for prefix in test_names_of(op)):
                continue
            counts[op][1] += 1
            if status_of.get(test) == "passed":
                counts[op][0] += 1
            else:
                not_passing[op].append(test)
    print("| ONNX op | node tests passed / with the op |")
    print("|---|---|")
    for op in SUPPORTED_OPS:
        print(f"| {op} | {counts[op][0]} / {counts[op][1]} |")
    for op in SUPPORTED_OPS:
        for test in not_passing[op]:
            print(f"not passing ({op}): {test}: {status_of.get(test)}")


def find_tests(data_dir, name_filter):
    for suite in SUITES:
        root = os.path.join(data_dir, suite)
        if not os.path.isdir(root):
            continue
        for name in sorted(os.listdir(root)):
            directory = os.path.join(root, name)
            if os.path.isfile(os.path.join(directory, "model.onnx")):
                test = f"{suite}/{name}"
                if name_filter is None or name_filter in test:
                    yield test, directory


def classify_error(output):
    if any(marker in output for marker in UNSUPPORTED_MARKERS):
        return "unsupported"
    return "failed"


def first_error_line(output):
    for line in output.splitlines():
        if "error" in line.lower() or "mismatch" in line.lower():
            return line.strip()
    lines = output.strip().splitlines()
    return lines[-1] if lines else "(no output)"


def run_test(args, test, directory):
    """Returns (test, status, detail)."""
    if test in KNOWN_DIFFERENCES:
        return test, "unsupported", KNOWN_DIFFERENCES[test]
    translate = os.path.join(args.build, "bin", "lethe-translate")
    run = os.path.join(args.build, "bin", "lethe-run")
    with tempfile.TemporaryDirectory() as scratch:
        data_sets = sorted(d for d in os.listdir(directory) if d.startswith("test_data_set_"))
        if not data_sets:
            return test, "failed", "no test_data_set_* directory"
        for data_set in data_sets:
            path = os.path.join(directory, data_set)
            # Lethe compiles for static shapes: the model is specialized to
            # each data set's inputs, so that shape inputs fold.
            mlir = os.path.join(scratch, f"{data_set}.mlir")
            try:
                result = subprocess.run(
                    [translate, "--import-onnx", os.path.join(directory, "model.onnx"),
                     "--input-values-from", path, "-o", mlir],
                    capture_output=True, text=True, timeout=120)
            except subprocess.TimeoutExpired:
                return test, "failed", "import timed out"
            if result.returncode != 0:
                output = result.stderr + result.stdout
                if result.returncode < 0:
                    return test, "failed", f"import crashed (signal {-result.returncode})"
                return test, classify_error(output), first_error_line(output)
            try:
                result = subprocess.run(
                    [run, mlir, "--inputs-from", path, "--expect-from", path,
                     "--rtol", str(args.rtol), "--atol", str(args.atol)],
                    capture_output=True, text=True, timeout=300)
            except subprocess.TimeoutExpired:
                return test, "failed", f"{data_set}: run timed out"
            if result.returncode != 0:
                output = result.stderr + result.stdout
                if result.returncode < 0:
                    return test, "failed", f"{data_set}: lethe-run crashed (signal {-result.returncode})"
                status = classify_error(output)
                return test, status, f"{data_set}: {first_error_line(output)}"
    return test, "passed", ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", required=True, help="Lethe build directory")
    parser.add_argument("--data", default=DEFAULT_DATA, help="ONNX test data directory")
    parser.add_argument("--expected", default=os.path.join(HERE, "expected-passes.txt"))
    parser.add_argument("--update", action="store_true",
                        help="rewrite the expected-passes list with what passes now")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--filter", help="only tests whose name contains this")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print every test that does not pass, with its first error")
    parser.add_argument("--op-table", action="store_true",
                        help="print the node tests passed per supported op")
    args = parser.parse_args()

    if not os.path.isdir(args.data):
        sys.exit(f"onnx_conformance.py: no ONNX test data at {args.data} "
                 "(install Debian's libonnx-testdata)")
    if not args.update:
        # Without the list nothing could regress, and the run would pass
        # whatever happened: that is an error, not a pass.
        try:
            with open(args.expected) as file:
                expected = {line.strip() for line in file
                            if line.strip() and not line.startswith("#")}
        except OSError as error:
            sys.exit(f"onnx_conformance.py: cannot read the expected-passes "
                     f"list {args.expected}: {error.strerror}; write it with "
                     "--update")
        if not expected:
            sys.exit(f"onnx_conformance.py: the expected-passes list "
                     f"{args.expected} names no test; write it with --update")

    tests = list(find_tests(args.data, args.filter))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda item: run_test(args, *item), tests))

    totals = collections.defaultdict(collections.Counter)
    for test, status, detail in results:
        totals[test.split("/")[0]][status] += 1
        totals["all"][status] += 1
        if args.verbose and status != "passed":
            print(f"{status:12} {test}: {detail}")
    print(f"{'suite':20} {'passed':>8} {'failed':>8} {'unsupported':>12} {'total':>8}")
    for suite in list(SUITES) + ["all"]:
        counts = totals.get(suite)
        if not counts:
            continue
        print(f"{suite:20} {counts['passed']:8} {counts['failed']:8} "
              f"{counts['unsupported']:12} {sum(counts.values()):8}")

    if args.op_table:
        print_op_table(args, results)

    passed = sorted(test for test, status, _ in results if status == "passed")
    if args.update:
        with open(args.expected, "w") as file:
            file.write("# ONNX conformance tests that Lethe passes; "
                       "test/conformance/onnx_conformance.py --update rewrites it.\n")
            file.writelines(f"{test}\n" for test in passed)
        print(f"wrote {len(passed)} expected passes to {args.expected}")
        return 0

    status_of = {test: (status, detail) for test, status, detail in results}
    regressions = sorted(test for test in expected
                         if test in status_of and status_of[test][0] != "passed")
    if args.filter is None:
        regressions += sorted(test for test in expected if test not in status_of)
    for test in regressions:
        status, detail = status_of.get(test, ("missing", "the test directory is gone"))
        print(f"REGRESSION {test}: {status}: {detail}")
    print(f"{len(passed)} passed, {len(regressions)} failed: "
          f"{len(expected)} expected passes, {len(regressions)} regressions")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
