"""Writes small binary ONNX models for the importer's error tests.

usage: make_model.py KIND OUTPUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def relu_model(input_type=TensorProto.FLOAT, shape=(2, 4)):
    x = helper.make_tensor_value_info("x", input_type, shape)
    y = helper.make_tensor_value_info("y", input_type, shape)
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                              "relu", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


def external_model(path):
    """An MLP whose weight lives in an external file that is not written."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, (2, 4))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 3))
    weight = numpy_helper.from_array(np.ones((4, 3), np.float32), "w")
    weight.data_location = TensorProto.EXTERNAL
    weight.ClearField("raw_data")
    entry = weight.external_data.add()
    entry.key, entry.value = "location", "missing-weights.bin"
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")],
                              "external", [x], [y], [weight])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


def corrupt_weight_model(kind, path):
    """An MLP whose weight initializer is corrupt in the way `kind` names:
    dims whose product overflows, dims of 10^15 elements with one value,
    a negative dim, too few typed values, raw data of the wrong length,
    external data that names no file, or an external file too short for
    it (written next to `path`)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, (2, 4))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 3))
    weight = TensorProto()
    weight.name = "w"
    weight.data_type = TensorProto.FLOAT
    if kind == "overflow-dims":
        weight.dims.extend([1 << 62, 4])
    elif kind == "overflow-then-zero":
        weight.dims.extend([1 << 62, 4, 0])
    elif kind == "huge-dims":
        weight.dims.extend([10**15])
        weight.float_data.append(0.5)
    elif kind == "negative-dim":
        weight.dims.extend([-4, 3])
    elif kind == "few-values":
        weight.dims.extend([4, 3])
        weight.float_data.extend([0.5] * 5)
    elif kind == "raw-size":
        weight.dims.extend([4, 3])
        weight.raw_data = bytes(10)
    elif kind in ("no-location", "short-external"):
        weight.dims.extend([4, 3])
        weight.data_location = TensorProto.EXTERNAL
        if kind == "short-external":
            with open(path + ".bin", "wb") as data:
                data.write(bytes(8))
            entry = weight.external_data.add()
            entry.key, entry.value = "location", path.rsplit("/", 1)[-1] + ".bin"
            entry = weight.external_data.add()
            entry.key, entry.value = "length", "48"
        else:
            entry = weight.external_data.add()
            entry.key, entry.value = "offset", "0"
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")],
                              "corrupt", [x], [y], [weight])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


CORRUPT_WEIGHTS = ["overflow-dims", "overflow-then-zero", "huge-dims", "negative-dim", "few-values", "raw-size",
                   "no-location", "short-external"]


def training_model(variant="sgd"):
    """A linear model with a training step (TrainingInfoProto): the
    algorithm computes a squared-error loss, its Gradient with respect to
    the weight and bias, an SGD update of both and the step count, and
    binds the new values to the initializers. `variant` breaks it for the
    error tests."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, (4, 3))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, (4, 2))
    rng = np.random.default_rng(5)
    w = numpy_helper.from_array(rng.standard_normal((3, 2)).astype(np.float32), "w")
    b = numpy_helper.from_array(np.zeros(2, np.float32), "b")
    inference = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc")],
        "linear", [x], [y], [w, b])

    label = helper.make_tensor_value_info("label", TensorProto.FLOAT, (4, 2))
    lr = numpy_helper.from_array(np.array(0.1, np.float32), "lr")
    one = numpy_helper.from_array(np.array(1, np.int64), "one")
    t = numpy_helper.from_array(np.array(0, np.int64), "t")
    nodes = [
        helper.make_node("Sub", ["y", "label"], ["diff"]),
        helper.make_node("Mul", ["diff", "diff"], ["squares"]),
        helper.make_node("ReduceSum", ["squares"], ["loss"], keepdims=0),
        helper.make_node("Gradient", ["w", "b", "x", "label"], ["dw", "db"],
                         domain="ai.onnx.preview.training", xs=["w", "b"],
                         zs=["x", "label"], y="loss"),
        helper.make_node("Mul", ["lr", "dw"], ["sw"]),
        helper.make_node("Sub", ["w", "sw"], ["w_new"]),
        helper.make_node("Mul", ["lr", "db"], ["sb"]),
        helper.make_node("Sub", ["b", "sb"], ["b_new"]),
        helper.make_node("Add", ["t", "one"], ["t_new"]),
    ]
    if variant == "redefined":
        # Nodes that compute a tensor named like the initializer t (which
        # update_binding updates) before anything reads t: not SSA.
        nodes[-1:-1] = [
            helper.make_node("Cast", ["label"], ["label_int"], to=TensorProto.INT64),
            helper.make_node("ReduceSum", ["label_int"], ["t"], keepdims=0),
        ]
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
               for name, shape in [("loss", ()), ("w_new", (3, 2)), ("b_new", (2,))]]
    outputs.append(helper.make_tensor_value_info("t_new", TensorProto.INT64, ()))
    algorithm = helper.make_graph(nodes, "sgd", [label], outputs, [lr, one, t])
    info = onnx.TrainingInfoProto()
    info.algorithm.CopyFrom(algorithm)
    bindings = [("w", "w_new"), ("b", "b_new"), ("t", "t_new")]
    if variant == "unknown-initializer":
        bindings.append(("momentum", "w_new"))
    if variant == "unknown-output":
        bindings[0] = ("w", "w_next")
    for key, value in bindings:
        entry = info.update_binding.add()
        entry.key, entry.value = key, value
    if variant == "initialization":
        entry = info.initialization_binding.add()
        entry.key, entry.value = "w", "w_init"
    model = helper.make_model(
        inference, opset_imports=[helper.make_opsetid("", 17),
                                  helper.make_opsetid("ai.onnx.preview.training", 1)])
    model.training_info.append(info)
    if variant == "two-steps":
        model.training_info.append(info)
    return model


def main():
    kind, output = sys.argv[1], sys.argv[2]
    if kind == "relu":
        model = relu_model()
    elif kind == "string-input":
        model = relu_model(TensorProto.STRING)
    elif kind == "dynamic":
        model = relu_model(shape=("batch", 4))
    elif kind == "external":
        model = external_model(output)
    elif kind in CORRUPT_WEIGHTS:
        model = corrupt_weight_model(kind, output)
    elif kind.startswith("training"):
        model = training_model(kind[len("training-"):] if "-" in kind else "sgd")
    else:
        sys.exit(f"make_model.py: unknown kind {kind}")
    with open(output, "wb") as file:
        file.write(model.SerializeToString())


if __name__ == "__main__":
    main()
