"""The GPU benchmark's models and scripts (bench/gpu), at their tiny sizes
on the CPU: the ONNX builders compile with lethec and train from random
weights; the PyTorch baselines compute what Lethe's interpreter computes on
the same weights (skipped without torch); prepare and run.py go through
their whole flow with --target cpu executables."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(os.path.dirname(HERE))
BENCH = os.path.join(REPOSITORY, "bench", "gpu")
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, BENCH)

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

import suite  # noqa: E402
from lethe.memory_profile import find_tool  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

# Small batches: the graphs of the benchmark at the tiny dimensions.
BATCHES = {"mlp": 8, "resnet50": 4, "gpt2": 2, "unet": 2}


def tiny_size(name):
    """The tiny dimensions, with ResNet-50's image large enough that the
    last batch normalizations see more than one value per sample: over
    two values, (x - mean) / std turns rounding differences into signs."""
    return dict(suite.SIZES["tiny"][name], **({"image": 64} if name == "resnet50" else {}))


def tiny_model(name):
    return suite.onnx_model(name, BATCHES[name], tiny_size(name))


class BenchModelsTest(unittest.TestCase):
    def test_models_compile_and_train_from_random_weights(self):
        with tempfile.TemporaryDirectory() as scratch:
            for name in suite.MODELS:
                with self.subTest(model=name):
                    path = os.path.join(scratch, name + ".onnx")
                    onnx.save(tiny_model(name), path)
                    output, loss = suite.LOSSES[name]
                    exe = os.path.join(scratch, name)
                    subprocess.run([find_tool("lethec"), path, "--loss",
                                    f"output={output} kind={loss}", "--optimizer",
                                    suite.OPTIMIZER, "--budget", "1.0", "--time-limit", "1",
                                    "--target", "cpu",
                                    "-o", exe],
                                   check=True, capture_output=True)
                    os.remove(exe + ".weights")
                    run = subprocess.run([exe, "--steps", "2", "--random-weights", "3"],
                                         capture_output=True, text=True)
                    self.assertEqual(run.returncode, 0, run.stderr)
                    losses = [float(line.split()[3]) for line in run.stdout.splitlines()
                              if line.startswith("step ")]
                    self.assertEqual(len(losses), 2, run.stdout)
                    self.assertTrue(all(np.isfinite(losses)), run.stdout)

    @unittest.skipIf(torch is None, "PyTorch is not installed (apt-get install python3-torch)")
    def test_pytorch_models_compute_what_lethe_computes(self):
        import torch_models

        rng = np.random.default_rng(0)
        with tempfile.TemporaryDirectory() as scratch:
            for name in suite.MODELS:
                with self.subTest(model=name):
                    size = tiny_size(name)
                    model = tiny_model(name)
                    path = os.path.join(scratch, name + ".onnx")
                    mlir = os.path.join(scratch, name + ".mlir")
                    onnx.save(model, path)
                    subprocess.run([find_tool("lethe-translate"), "--import-onnx", path, "-o",
                                    mlir], check=True)
                    shape = [dim.dim_value for dim in
                             model.graph.input[0].type.tensor_type.shape.dim]
                    if name == "gpt2":
                        x = rng.integers(0, size["vocab"], size=shape, dtype=np.int64)
                    else:
                        x = rng.uniform(-1, 1, size=shape).astype(np.float32)
                    inputs = os.path.join(scratch, name + "-in")
                    outputs = os.path.join(scratch, name + "-out")
                    os.makedirs(inputs)
                    os.makedirs(outputs)
                    with open(os.path.join(inputs, "input_0.pb"), "wb") as handle:
                        handle.write(numpy_helper.from_array(x).SerializeToString())
                    subprocess.run([find_tool("lethe-run"), mlir, "--inputs-from", inputs,
                                    "--dump-outputs", outputs], check=True, capture_output=True)
                    expected = numpy_helper.to_array(onnx.load_tensor(
                        os.path.join(outputs, "output_0.pb")))

                    network = torch_models.build(name, **size)
                    load_onnx_weights(self, network, model)
                    network.train()
                    with torch.no_grad():
                        actual = network(torch.from_numpy(x)).numpy()
                    self.assertEqual(actual.shape, expected.shape)
                    np.testing.assert_allclose(actual, expected, rtol=2e-3, atol=2e-4)

    def test_prepare_and_run_tiny_flow(self):
        with tempfile.TemporaryDirectory() as scratch:
            bundle = os.path.join(scratch, "bundle")
            out = os.path.join(scratch, "out")
            prepare = subprocess.run(
                [sys.executable, os.path.join(BENCH, "prepare"), "--bin",
                 os.path.dirname(find_tool("lethec")), "--size", "tiny", "--target", "cpu",
                 "--models", "mlp", "--budgets", "1.0,0.5", "--largest", "on",
                 "--time-limit", "2", "--search-time-limit", "2", "--out", bundle],
                capture_output=True, text=True)
            self.assertEqual(prepare.returncode, 0, prepare.stdout + prepare.stderr)
            with open(os.path.join(bundle, "manifest.json")) as handle:
                manifest = json.load(handle)
            entry = manifest["models"]["mlp"]
            # The benchmark batch's unplanned arena fills at most half of the
            # (tiny) device, and at least 90% of that.
            full = entry["plans"][0]
            self.assertEqual((full["budget"], full["status"]), ("1.0", "ok"))
            half = manifest["device_memory_bytes"] * manifest["fill"]
            self.assertLessEqual(full["arena_bytes"], half)
            self.assertGreater(full["arena_bytes"], 0.9 * half)
            largest = entry["largest"]["on"]
            self.assertEqual(largest["status"], "ok")
            self.assertGreater(largest["batch"], entry["batch"])
            self.assertLessEqual(largest["arena_bytes"], manifest["device_memory_bytes"])

            run = subprocess.run(
                [sys.executable, os.path.join(BENCH, "run.py"), "--bundle", bundle, "--device",
                 "cpu", "--steps", "2", "--warmup", "1", "--out", out],
                capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.assertIn("| Lethe 100%, recompute only | 1.0 (", run.stdout)
            self.assertIn("#### Largest batch that fits in the device's memory", run.stdout)
            with open(os.path.join(out, "results.json")) as handle:
                results = json.load(handle)["results"]
            rows = results["lethe"]["mlp"]
            self.assertEqual(rows[0]["status"], "ok")
            self.assertEqual(rows[0]["peak_bytes"], full["arena_bytes"])
            self.assertEqual(results["lethe_largest"]["mlp"]["on"]["status"], "ok")
            self.assertTrue(os.path.exists(os.path.join(out, "profiles.tar.gz")))
            self.assertIn("#### Where mlp's 100% plan spends its step", run.stdout)
            self.assertIn("| outside the ops |", run.stdout)
            self.assertEqual(results["breakdown"]["mlp"]["rows"][-1]["label"],
                             "outside the ops")

            # A second process that runs only the profiles prints the first
            # run's Lethe rows from its results.json, but not its profiles.
            merged = os.path.join(scratch, "merged")
            run = subprocess.run(
                [sys.executable, os.path.join(BENCH, "run.py"), "--bundle", bundle, "--device",
                 "cpu", "--steps", "2", "--warmup", "1", "--parts", "profiles", "--merge",
                 os.path.join(out, "results.json"), "--out", merged],
                capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.assertIn("lethe, mlp: from ", run.stdout)
            self.assertNotIn("profiles, mlp: from ", run.stdout)
            with open(os.path.join(merged, "results.json")) as handle:
                again = json.load(handle)["results"]
            self.assertEqual(again["lethe"]["mlp"][0]["step_seconds"], rows[0]["step_seconds"])
            self.assertEqual(again["lethe_largest"]["mlp"]["on"]["status"], "ok")
            self.assertEqual(set(again["profiles"]), {"mlp"})
            # Results of another bundle are refused, in one line.
            with open(os.path.join(out, "results.json")) as handle:
                foreign = json.load(handle)
            foreign["bundle"]["lethe_commit"] = "another"
            foreign_path = os.path.join(scratch, "foreign.json")
            with open(foreign_path, "w") as handle:
                json.dump(foreign, handle)
            run = subprocess.run(
                [sys.executable, os.path.join(BENCH, "run.py"), "--bundle", bundle, "--device",
                 "cpu", "--steps", "1", "--warmup", "0", "--parts", "profiles", "--merge",
                 foreign_path], capture_output=True, text=True)
            self.assertEqual(run.returncode, 1)
            self.assertIn("was measured on another bundle", run.stderr)
            self.assertEqual(len(run.stderr.strip().splitlines()), 1, run.stderr)
            run = subprocess.run(
                [sys.executable, os.path.join(BENCH, "run.py"), "--bundle", bundle, "--device",
                 "cpu", "--parts", "profiles", "--merge", os.path.join(scratch, "missing.json")],
                capture_output=True, text=True)
            self.assertEqual(run.returncode, 1)
            self.assertIn("cannot read the results to merge from", run.stderr)
            self.assertEqual(len(run.stderr.strip().splitlines()), 1, run.stderr)

            # Planned again from the measured profile, at its batch.
            measured = os.path.join(scratch, "measured")
            prepare = subprocess.run(
                [sys.executable, os.path.join(BENCH, "prepare"), "--bin",
                 os.path.dirname(find_tool("lethec")), "--size", "tiny", "--target", "cpu",
                 "--models", "mlp", "--budgets", "1.0", "--largest", "none", "--time-limit",
                 "2", "--measured", os.path.join(out, "profiles.tar.gz"), "--out", measured],
                capture_output=True, text=True)
            self.assertEqual(prepare.returncode, 0, prepare.stdout + prepare.stderr)
            with open(os.path.join(measured, "manifest.json")) as handle:
                replanned = json.load(handle)["models"]["mlp"]
            self.assertEqual(replanned["batch"], entry["batch"])
            self.assertTrue(replanned["measured_profile"].endswith(
                "mlp-b%d.profile.json" % entry["batch"]))
            self.assertIn(replanned["prediction"].split()[0], ("measured", "roofline"))

            # A failing executable is one line and the run goes on.
            os.remove(os.path.join(bundle, "manifest.json"))
            entry["plans"][0]["exe"] = "missing"
            with open(os.path.join(bundle, "manifest.json"), "w") as handle:
                json.dump(manifest, handle)
            run = subprocess.run(
                [sys.executable, os.path.join(BENCH, "run.py"), "--bundle", bundle, "--device",
                 "cpu", "--steps", "1", "--warmup", "0", "--parts", "lethe"],
                capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("mlp: Lethe 100%, recompute only: FAILED: ", run.stdout)


class TimeBreakdownTest(unittest.TestCase):
    def test_ops_grouped_by_name_against_their_prediction(self):
        import run

        profile = {"format": "lethe-program-profile", "version": 1, "steps": 4,
                   "step_seconds": 1.0,
                   "ops": [
                       {"index": 0, "kind": "compute", "op": "lethe.matmul", "seconds": 0.3,
                        "predicted_seconds": 0.1, "calls": 4},
                       {"index": 1, "kind": "compute", "op": "lethe.add", "seconds": 0.1,
                        "predicted_seconds": 0.1, "calls": 4},
                       {"index": 2, "kind": "offload", "op": "offload", "seconds": 0.05,
                        "predicted_seconds": 0.2, "calls": 4},
                       {"index": 3, "kind": "release", "op": "release", "seconds": 0.0,
                        "calls": 0},
                       {"index": 4, "kind": "recompute", "op": "lethe.matmul",
                        "seconds": 0.2, "predicted_seconds": 0.1, "calls": 4},
                       {"index": 5, "kind": "compute", "op": "lethe.matmul", "seconds": 0.2,
                        "predicted_seconds": 0.1, "calls": 4},
                       {"index": 6, "kind": "compute", "op": "lethe.relu", "seconds": 0.05,
                        "calls": 4}]}
        breakdown = run.time_breakdown(profile, top=3)
        rows = {row["label"]: row for row in breakdown["rows"]}
        self.assertEqual([row["label"] for row in breakdown["rows"]],
                         ["lethe.matmul", "lethe.matmul (recompute)", "lethe.add",
                          "2 other kinds", "outside the ops"])
        self.assertEqual(rows["lethe.matmul"]["ops"], 2)
        self.assertAlmostEqual(rows["lethe.matmul"]["calls_per_step"], 2)
        self.assertAlmostEqual(rows["lethe.matmul"]["seconds"], 0.5)
        self.assertAlmostEqual(rows["lethe.matmul"]["predicted_seconds"], 0.2)
        # An op without a prediction, or a copy (its time is its issue),
        # leaves its group without one.
        self.assertIsNone(rows["2 other kinds"]["predicted_seconds"])
        self.assertAlmostEqual(rows["2 other kinds"]["seconds"], 0.1)
        self.assertAlmostEqual(rows["outside the ops"]["seconds"], 0.1)
        lines = []
        run.breakdown_table("mlp", breakdown, lines)
        self.assertIn("| lethe.matmul | 2 | 2 | 500.0 | 50.0% | 200.0 | 2.50 |", lines)
        self.assertIn("| outside the ops |  |  | 100.0 | 10.0% |  |  |", lines)


class SteadyProfileTest(unittest.TestCase):
    def test_the_first_step_is_left_out(self):
        import run

        def profile(steps, first, later):
            # Op 0 takes `first` at the first step and `later` after it.
            mean = (first + later * (steps - 1)) / steps
            return {"format": "lethe-program-profile", "version": 1, "steps": steps,
                    "step_seconds": mean + 0.5,
                    "ops": [{"index": 0, "kind": "compute", "seconds": mean, "calls": steps},
                            {"index": 1, "kind": "compute", "seconds": 0.5, "calls": steps}]}

        steady = run.steady_profile(profile(6, 3.0, 1.0), profile(1, 3.0, 1.0))
        self.assertEqual(steady["steps"], 5)
        self.assertAlmostEqual(steady["ops"][0]["seconds"], 1.0)
        self.assertAlmostEqual(steady["ops"][1]["seconds"], 0.5)
        self.assertEqual(steady["ops"][0]["calls"], 5)
        self.assertAlmostEqual(steady["step_seconds"], 1.5)

    def test_the_workspace_asked_for_is_kept(self):
        # An op that asked for workspace in the long run asked for it in its
        # later steps too (the short run's are among them): prepare --measured
        # must see it.
        import run

        def profile(steps):
            return {"format": "lethe-program-profile", "version": 1, "steps": steps,
                    "step_seconds": 1.0,
                    "ops": [{"index": 0, "kind": "compute", "seconds": 1.0, "calls": steps,
                             "workspace_bytes": 1 << 20},
                            {"index": 1, "kind": "compute", "seconds": 0.5, "calls": steps}]}

        steady = run.steady_profile(profile(6), profile(1))
        self.assertEqual(steady["ops"][0]["workspace_bytes"], 1 << 20)
        self.assertNotIn("workspace_bytes", steady["ops"][1])


def load_onnx_weights(test, network, model):
    """Copies the ONNX initializers into the PyTorch model by name (NAME or
    NAME.weight; a MatMul weight transposed into its nn.Linear), checking
    that the shapes agree and that every parameter gets one."""
    state = network.state_dict()
    assigned = set()
    resize_scales = {node.input[2] for node in model.graph.node if node.op_type == "Resize"}
    # x W with W (in, out) is an nn.Linear holding W^T; Gemm's transB
    # weights already are (out, in).
    matmul_weights = {node.input[1] for node in model.graph.node if node.op_type == "MatMul"}
    for initializer in model.graph.initializer:
        value = numpy_helper.to_array(initializer)
        if value.dtype != np.float32 or value.ndim == 0 or initializer.name in resize_scales:
            continue  # shapes, scalars and scales: constants, not weights
        key = initializer.name if initializer.name in state else initializer.name + ".weight"
        test.assertIn(key, state, f"no PyTorch tensor for the ONNX initializer {initializer.name}")
        target = state[key]
        if initializer.name in matmul_weights:
            value = value.T
        test.assertEqual(tuple(target.shape), value.shape, key)
        target.copy_(torch.from_numpy(np.array(value)))
        assigned.add(key)
    for key, _ in network.named_parameters():
        test.assertIn(key, assigned, f"the ONNX model has no weight for {key}")


if __name__ == "__main__":
    unittest.main()
