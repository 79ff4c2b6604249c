"""Writes the inputs and numpy's expected outputs of gradient.onnxtxt:
y = sum(tanh((a + b) z)), dy/dh = z (1 - tanh(h z)^2) with h = a + b,
dy/da = dy/dh, dy/db = its sum over the rows (b is broadcast along them).

usage: make_data.py (in this directory)
"""

import numpy as np
from onnx import numpy_helper


def write(name, value):
    with open(name, "wb") as file:
        file.write(numpy_helper.from_array(np.asarray(value, np.float32)).SerializeToString())


def main():
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (3,)).astype(np.float32)
    z = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    t = np.tanh((a + b).astype(np.float64) * z)
    dh = (1 - t * t) * z
    for index, value in enumerate([a, b, z]):
        write(f"input_{index}.pb", value)
    for index, value in enumerate([t.sum(), dh, dh.sum(0), dh]):
        write(f"output_{index}.pb", value)


if __name__ == "__main__":
    main()
