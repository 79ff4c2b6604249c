"""Tests of lethe.plot on the sample timelines of lethe-mem's tests."""

import contextlib
import importlib.util
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(HERE, "..")
sys.path.insert(0, PYTHON_DIR)

from lethe import plot  # noqa: E402

INPUTS = os.path.join(HERE, "..", "..", "test", "Tools", "lethe-mem", "Inputs")
TIMELINE = os.path.join(INPUTS, "timeline.json")
MEASURED = os.path.join(INPUTS, "measured.json")
HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def png_size(path):
    """(width, height) of a PNG file; fails the test if it is not one."""
    with open(path, "rb") as file:
        header = file.read(24)
    if header[:8] != b"\x89PNG\r\n\x1a\n" or header[12:16] != b"IHDR":
        raise AssertionError(f"{path} is not a PNG file")
    return struct.unpack(">II", header[16:24])


def sample():
    with open(TIMELINE, encoding="utf-8") as file:
        return json.load(file)


class ScratchTest(unittest.TestCase):
    """A test with a scratch directory and helpers to write files into it."""

    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.scratch = scratch.name

    def path(self, name):
        return os.path.join(self.scratch, name)

    def write(self, name, content):
        with open(self.path(name), "w", encoding="utf-8") as file:
            file.write(content if isinstance(content, str) else json.dumps(content))
        return self.path(name)


@unittest.skipUnless(HAVE_MATPLOTLIB,
                     "matplotlib not installed (apt-get install python3-matplotlib)")
class PlotTest(ScratchTest):
    def assertPng(self, path):
        width, height = png_size(path)
        self.assertTrue(400 <= width <= 4000 and 300 <= height <= 4000, (width, height))

    def test_timeline(self):
        plot.plot_timeline(plot.load_timeline(TIMELINE), self.path("t.png"))
        self.assertPng(self.path("t.png"))

    def test_timeline_with_measured_from_the_command_line(self):
        code = plot.main([TIMELINE, "--measured", MEASURED, "-o", self.path("t.png")])
        self.assertEqual(code, 0)
        self.assertPng(self.path("t.png"))

    def test_degenerate_timelines(self):
        no_budget = sample()
        no_budget.update(budget_bytes=None, strategy=None)
        no_tensors = sample()
        no_tensors.update(tensors=[], largest_at_peak=[])
        single_step = sample()
        single_step["steps"] = single_step["steps"][:1]
        zero_durations = sample()
        for step in zero_durations["steps"]:
            step["issue"] = step["start"] = step["end"] = 0.0
        for tensor in zero_durations["tensors"]:
            tensor["start"] = tensor["end"] = 0.0
        zero_durations.update(seconds=0.0, peak_time=0.0)
        no_steps = sample()
        no_steps.update(steps=[], tensors=[])
        cases = {"no budget": no_budget, "no tensors": no_tensors, "single step": single_step,
                 "zero durations": zero_durations, "no steps": no_steps}
        for name, document in cases.items():
            with self.subTest(name):
                out = self.path(f"{name}.png")
                plot.plot_timeline(document, out)
                self.assertPng(out)

    def test_overhead(self):
        paths = []
        for strategy, slowdown in (("auto (greedy)", 0.2), ("auto (chain)", 0.25), ("sqrt", 0.5)):
            for budget in (0.9, 0.7, 0.8):
                document = sample()
                unplanned_seconds = document["unplanned_seconds"]
                document.update(strategy=strategy,
                                budget_bytes=int(budget * document["unplanned_peak_bytes"]),
                                seconds=unplanned_seconds * (1 + slowdown * (1 - budget)))
                paths.append(self.write(f"{strategy}-{budget}.json", document))
        self.assertEqual(plot.main(["overhead", *paths, "-o", self.path("o.png")]), 0)
        self.assertPng(self.path("o.png"))

    def test_unwritable_output(self):
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            code = plot.main([TIMELINE, "-o", self.path("missing/t.png")])
        self.assertEqual(code, 1)
        self.assertRegex(stderr.getvalue(), r"^lethe\.plot: .*missing/t\.png: cannot write: .*\n$")


class ReadTest(ScratchTest):
    """Reading and checking timelines, which needs no matplotlib."""

    def run_plot(self, *arguments):
        """Runs `python3 -m lethe.plot` as a user would; returns (code, stderr)."""
        result = subprocess.run(
            [sys.executable, "-m", "lethe.plot", *arguments], cwd=PYTHON_DIR,
            env=dict(os.environ, PYTHONPATH=PYTHON_DIR), capture_output=True, text=True)
        return result.returncode, result.stderr

    def assertOneLineError(self, arguments, *fragments):
        code, stderr = self.run_plot(*arguments)
        self.assertEqual(code, 1, stderr)
        self.assertEqual(len(stderr.splitlines()), 1, stderr)
        self.assertTrue(stderr.startswith("lethe.plot: "), stderr)
        for fragment in fragments:
            self.assertIn(fragment, stderr)

    def test_bad_inputs(self):
        wrong_format = sample()
        wrong_format["format"] = "lethe-plan"
        wrong_version = sample()
        wrong_version["version"] = 2
        cases = {
            "wrong format": (self.write("format.json", wrong_format),
                             "format is 'lethe-plan'"),
            "wrong version": (self.write("version.json", wrong_version),
                              "version 2 is not supported"),
            "malformed JSON": (self.write("malformed.json", '{"format": '), "not JSON"),
            "not an object": (self.write("list.json", "[]"), "expected a JSON object"),
            "no format": (self.write("trace.json", {"traceEvents": []}), "no 'format' field"),
            "missing file": (self.path("absent.json"), "cannot read"),
        }
        for name, (path, problem) in cases.items():
            with self.subTest(name):
                self.assertOneLineError([path, "-o", self.path("t.png")], path, problem)
                self.assertFalse(os.path.exists(self.path("t.png")))

    def test_bad_measured_timeline(self):
        bad = self.write("measured.json", "not json")
        self.assertOneLineError([TIMELINE, "--measured", bad, "-o", self.path("t.png")],
                                bad, "not JSON")

    def test_overhead_needs_plans(self):
        unplanned = sample()
        unplanned.update(budget_bytes=None, strategy=None)
        path = self.write("unplanned.json", unplanned)
        self.assertOneLineError(["overhead", TIMELINE, path, "-o", self.path("o.png")],
                                path, "budget_bytes is null")

    def test_strategy_name(self):
        self.assertEqual(plot.strategy_name({"strategy": "auto (greedy)"}), "auto")
        self.assertEqual(plot.strategy_name({"strategy": "chain-offload"}), "chain-offload")
        self.assertEqual(plot.strategy_name({"strategy": None}), "unplanned")

    def test_overhead_point(self):
        strategy, budget, overhead = plot.overhead_point(plot.load_timeline(TIMELINE))
        self.assertEqual(strategy, "auto")
        self.assertAlmostEqual(budget, 700000 / 831492)
        self.assertAlmostEqual(overhead, 10.0 / 7.8)

    def test_formats(self):
        self.assertEqual(plot.format_bytes(631300), "617 KiB")
        self.assertEqual(plot.format_bytes(4), "4 B")
        self.assertEqual(plot.format_bytes(None), "none")
        self.assertEqual(plot.format_seconds(1e-05), "10.0 µs")
        self.assertEqual(plot.format_seconds(0.0), "0 s")


if __name__ == "__main__":
    unittest.main()
