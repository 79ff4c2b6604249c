"""scripts/gpu-check on the build machine: the weights it perturbs by one ulp,
and its prepare and run halves with --target cuda executables where there is
no GPU (run then fails, one line per executable, and exits 1). Skipped where
Lethe was built without the CUDA backend or where there is a GPU."""

import ctypes
import importlib.machinery
import importlib.util
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(REPOSITORY, "scripts", "gpu-check")
sys.path.insert(0, os.path.join(HERE, ".."))

import numpy as np  # noqa: E402

from lethe.memory_profile import find_tool  # noqa: E402


def load_script():
    loader = importlib.machinery.SourceFileLoader("gpu_check", SCRIPT)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("gpu_check", loader))
    loader.exec_module(module)
    return module


def weights_file(path, tensors):
    """Writes runtime/driver/WeightsFile.h's format: (name, dtype, array)."""
    out = bytearray(b"LETHEWTS" + struct.pack("<II", 1, len(tensors)))
    for name, dtype, array in tensors:
        for text in (name, dtype):
            out += struct.pack("<I", len(text)) + text.encode()
        out += struct.pack("<I", array.ndim) + struct.pack(f"<{array.ndim}q", *array.shape)
        out += struct.pack("<Q", array.nbytes) + array.tobytes()
    with open(path, "wb") as handle:
        handle.write(out)


def has_gpu():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value


class PerturbWeightsTest(unittest.TestCase):
    def test_floats_move_one_ulp_and_the_rest_stays(self):
        script = load_script()
        f32 = np.array([[1.0, -2.5, 0.0]], dtype=np.float32)
        f64 = np.array([3.0, -1e-300], dtype=np.float64)
        i64 = np.array([7, -1], dtype=np.int64)
        with tempfile.TemporaryDirectory() as scratch:
            source, target = os.path.join(scratch, "a"), os.path.join(scratch, "b")
            weights_file(source, [("w", "f32", f32), ("d", "f64", f64), ("step", "i64", i64)])
            script.perturb_weights(source, target)
            expected = os.path.join(scratch, "c")
            weights_file(expected, [("w", "f32", np.nextafter(f32, np.float32(np.inf))),
                                    ("d", "f64", np.nextafter(f64, np.inf)),
                                    ("step", "i64", i64)])
            with open(target, "rb") as got, open(expected, "rb") as want:
                self.assertEqual(got.read(), want.read())
            with open(source, "wb") as handle:
                handle.write(b"NOTWEIGHTS")
            with self.assertRaisesRegex(script.Failure, "is not a weights file"):
                script.perturb_weights(source, target)


class PrepareAndRunTest(unittest.TestCase):
    def test_prepare_without_the_tools_says_what_to_build(self):
        with tempfile.TemporaryDirectory() as scratch:
            run = subprocess.run([sys.executable, SCRIPT, "prepare", "--bin", scratch, "--out",
                                  os.path.join(scratch, "out")], capture_output=True, text=True)
            self.assertEqual(run.returncode, 1)
            self.assertEqual(run.stderr.strip(),
                             f"gpu-check: error: {os.path.join(scratch, 'lethec')} not found: "
                             "build Lethe with LETHE_ENABLE_CUDA (ninja -C build)")
            self.assertFalse(os.path.exists(os.path.join(scratch, "out")))

    def test_without_a_gpu_every_executable_fails_in_one_line(self):
        build = os.path.dirname(os.path.dirname(find_tool("lethec")))
        tests = os.path.join(build, "unittests", "RuntimeCuda", "LetheRuntimeCudaTests")
        if not os.access(tests, os.X_OK):
            self.skipTest("Lethe was built without the CUDA backend")
        if has_gpu():
            self.skipTest("there is a GPU: scripts/gpu-check run would pass")
        with tempfile.TemporaryDirectory() as scratch:
            bundle, out = os.path.join(scratch, "bundle"), os.path.join(scratch, "out")
            prepare = subprocess.run(
                [sys.executable, SCRIPT, "prepare", "--bin", os.path.dirname(find_tool("lethec")),
                 "--models", "mlp", "--steps", "2", "--out", bundle],
                capture_output=True, text=True)
            self.assertEqual(prepare.returncode, 0, prepare.stdout + prepare.stderr)
            with open(os.path.join(bundle, "manifest.json")) as handle:
                runs = json.load(handle)["runs"]
            self.assertEqual([run["exe"] for run in runs],
                             ["mlp-none", "mlp-recompute", "mlp-offload"])
            for run in runs:
                self.assertEqual(len(run["cpu_losses"]), 2)
                self.assertEqual(len(run["cpu_ulp_losses"]), 2)
                # The MLP is stable: one ulp moves its losses by rounding.
                np.testing.assert_allclose(run["cpu_ulp_losses"], run["cpu_losses"], rtol=1e-5)
                self.assertLessEqual(run["arena_bytes"], run["budget_bytes"] or run["arena_bytes"])

            run = subprocess.run([sys.executable, SCRIPT, "run", "--bundle", bundle, "--out", out,
                                  "--parts", "models"], capture_output=True, text=True)
            self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
            self.assertIn("mlp-none: FAILED: mlp-none: error: cannot allocate the step's memory",
                          run.stdout)
            self.assertIn("gpu-check: 3 failed: mlp-none mlp-recompute mlp-offload", run.stdout)
            with open(os.path.join(out, "check.json")) as handle:
                report = json.load(handle)
            self.assertEqual(report["failures"], ["mlp-none", "mlp-recompute", "mlp-offload"])


if __name__ == "__main__":
    unittest.main()
