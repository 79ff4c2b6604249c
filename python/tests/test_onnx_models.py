"""The test models import and run through Lethe's tools."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import onnx  # noqa: E402

from lethe import onnx_models  # noqa: E402
from lethe.memory_profile import find_tool, parse  # noqa: E402

REPOSITORY = os.path.dirname(os.path.dirname(HERE))


class OnnxModelsTest(unittest.TestCase):
    def test_every_model_imports_runs_and_profiles(self):
        with tempfile.TemporaryDirectory() as scratch:
            for name, build in onnx_models.MODELS.items():
                with self.subTest(model=name):
                    model_path = os.path.join(scratch, f"{name}.onnx")
                    mlir_path = os.path.join(scratch, f"{name}.mlir")
                    onnx.save(build(), model_path)
                    subprocess.run([find_tool("lethe-translate"), "--import-onnx",
                                    model_path, "-o", mlir_path], check=True)
                    run = subprocess.run([find_tool("lethe-run"), mlir_path,
                                          "--random-inputs", "1"],
                                         capture_output=True, text=True)
                    self.assertEqual(run.returncode, 0, run.stderr)
                    self.assertIn("peak tensor bytes held:", run.stdout)
                    profile = subprocess.run(
                        [find_tool("lethe-opt"), mlir_path,
                         "--lethe-print-memory-profile", "-o", os.devnull],
                        capture_output=True, text=True, check=True)
                    (function,) = parse(profile.stderr)
                    self.assertGreater(function.peak_bytes, 0)

    def test_bundled_example_is_the_cnn_builder(self):
        bundled = onnx.load(os.path.join(REPOSITORY, "examples", "cnn.onnx"))
        self.assertEqual(bundled.graph, onnx_models.cnn().graph,
                         "regenerate examples/cnn.onnx with "
                         "python3 -m lethe.onnx_models --out examples --models cnn")


if __name__ == "__main__":
    unittest.main()
