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
    else:
        sys.exit(f"make_model.py: unknown kind {kind}")
    with open(output, "wb") as file:
        file.write(model.SerializeToString())


if __name__ == "__main__":
    main()
