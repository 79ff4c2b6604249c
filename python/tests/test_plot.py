"""Tests of lethe.plot on the sample timelines of lethe-mem's tests."""

import contextlib
import importlib.util
import io
import json
import math
import os
import re
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
# The units an axis label may name, written out here rather than taken from
# lethe.plot, so that data scaled by the wrong unit fails the tests.
BYTE_UNITS = {"GiB": 2**30, "MiB": 2**20, "KiB": 2**10, "B": 1}
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}


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


def label_unit(label, units):
    """The size of the unit an axis label names in parentheses: "time (µs)"."""
    match = re.search(r"\(([^()]+)\)$", label)
    if not match or match.group(1) not in units:
        raise AssertionError(f"axis label {label!r} names no known unit")
    return units[match.group(1)]


def labelled(axes, prefix):
    """The lines of `axes` whose label starts with `prefix`."""
    return [line for line in axes.get_lines() if line.get_label().startswith(prefix)]


def boxes(axes, label=None):
    """(x0, x1, y0, y1) of every rectangle of the collections of `axes`
    (only those of the collection labelled `label` when given)."""
    found = []
    for collection in axes.collections:
        if label is not None and collection.get_label() != label:
            continue
        for path in collection.get_paths():
            xs, ys = path.vertices[:, 0], path.vertices[:, 1]
            found.append((min(xs), max(xs), min(ys), max(ys)))
    return found


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

    def assertClose(self, actual, expected, message=None):
        """Numbers, or equally long sequences of them, equal to 1e-9 relative."""
        actual = [float(a) for a in (actual if hasattr(actual, "__len__") else [actual])]
        expected = list(expected) if hasattr(expected, "__len__") else [expected]
        details = f"{message + ': ' if message else ''}drawn {actual}, expected {expected}"
        self.assertEqual(len(actual), len(expected), details)
        self.assertTrue(all(math.isclose(a, e, rel_tol=1e-9, abs_tol=1e-20)
                            for a, e in zip(actual, expected)), details)

    def assertTimelineDrawn(self, figure, document, end, measured=None):
        """Checks that `figure` draws `document` (and `measured`) over the
        time span [0, end] seconds; returns {label: (times, levels)} of the
        memory curves in seconds and bytes."""
        self.assertEqual(len(figure.axes), 3)
        curve, lanes, tensors = figure.axes
        byte_size = label_unit(curve.get_ylabel(), BYTE_UNITS)
        time_size = label_unit(tensors.get_xlabel(), TIME_UNITS)

        # The memory curve: each step's live_bytes from its issue to the next
        # step's, the last one's up to the end (docs/MemoryTimeline.md).
        curves = {}
        predicted = "predicted live bytes" if measured else "live bytes"
        for label, each in ((predicted, document), ("measured live bytes", measured)):
            lines = [line for line in curve.get_lines() if line.get_label() == label]
            if each is None:
                self.assertEqual(lines, [], label)
                continue
            self.assertEqual(len(lines), 1, label)
            self.assertEqual(lines[0].get_drawstyle(), "steps-post", label)
            times = [x * time_size for x in lines[0].get_xdata()]
            levels = [y * byte_size for y in lines[0].get_ydata()]
            steps = each["steps"]
            if steps:
                self.assertClose(times, [step["issue"] for step in steps] + [end], label)
                self.assertClose(levels, [step["live_bytes"] for step in steps]
                                 + [steps[-1]["live_bytes"]], label)
            else:
                self.assertClose(times, [0.0, end], label)
                self.assertClose(levels, [0, 0], label)
            curves[label] = (times, levels)

        # The budget: a dashed line across the whole width, only with a budget.
        budgets = labelled(curve, "budget")
        if document.get("budget_bytes") is None:
            self.assertEqual(budgets, [])
        else:
            self.assertEqual(len(budgets), 1)
            self.assertClose([y * byte_size for y in budgets[0].get_ydata()],
                             [document["budget_bytes"]] * 2)
            self.assertEqual(list(budgets[0].get_xdata()), [0, 1])  # axes coordinates
            self.assertEqual(budgets[0].get_linestyle(), "--")
            self.assertEqual(budgets[0].get_label(),
                             f"budget {plot.format_bytes(document['budget_bytes'])}")

        # The peak: one marker at (peak_time, peak_bytes).
        peaks = labelled(curve, "peak")
        self.assertEqual(len(peaks), 1)
        self.assertClose([x * time_size for x in peaks[0].get_xdata()], [document["peak_time"]])
        self.assertClose([y * byte_size for y in peaks[0].get_ydata()], [document["peak_bytes"]])

        # Everything above fits under the top of the axis, and the shared time
        # axis spans the timeline.
        highest = max([document["peak_bytes"], document.get("budget_bytes") or 0]
                      + [max(levels) for _, levels in curves.values()])
        bottom, top = curve.get_ylim()
        self.assertEqual(bottom, 0)
        self.assertGreaterEqual(top * byte_size, highest)
        for axes in figure.axes:
            self.assertClose([x * time_size for x in axes.get_xlim()], [0.0, end])

        # One box per memory step in its kind's lane, starting at the step's
        # start; the recomputes also shade the memory curve.
        kinds = [label.get_text() for label in lanes.get_yticklabels()]
        self.assertEqual(kinds, ["recompute", "offload", "prefetch", "release"])
        drawn = boxes(lanes)
        for row, kind in enumerate(kinds):
            starts = [step["start"] for step in document["steps"] if step["kind"] == kind]
            in_lane = [x0 * time_size for x0, _, y0, _ in drawn if row < y0 < row + 1]
            self.assertClose(sorted(in_lane), sorted(starts), kind)
        self.assertEqual(len(drawn), sum(1 for step in document["steps"]
                                         if step["kind"] in kinds))
        recomputes = [step["start"] for step in document["steps"] if step["kind"] == "recompute"]
        self.assertClose(sorted(x0 * time_size for x0, *_ in boxes(curve, "recompute")),
                         sorted(recomputes))

        # One bar per tensor, in its row, from the tensor's start to its end
        # (zero-length lifetimes are drawn a little wider to stay visible).
        bars = boxes(tensors)
        self.assertEqual(len(bars), len(document["tensors"]))
        for row, (tensor, (x0, x1, y0, y1)) in enumerate(zip(document["tensors"], bars)):
            self.assertTrue(row < y0 < y1 < row + 1, (tensor["name"], row, y0, y1))
            self.assertClose(x0 * time_size, tensor["start"], tensor["name"])
            self.assertGreaterEqual(x1 * time_size, tensor["end"] * (1 - 1e-9), tensor["name"])
        return curves

    def test_timeline(self):
        document = plot.load_timeline(TIMELINE)
        figure = plot.plot_timeline(document, self.path("t.png"))
        self.assertPng(self.path("t.png"))
        curves = self.assertTimelineDrawn(figure, document, end=document["seconds"])
        times, levels = curves["live bytes"]
        # The curve reaches the timeline's peak, there and nowhere higher, and
        # spans the step.
        self.assertClose(max(levels), document["peak_bytes"])
        self.assertClose(levels[times.index(document["peak_time"])], document["peak_bytes"])
        self.assertClose([times[0], times[-1]], [0.0, document["seconds"]])
        self.assertEqual(len(times), len(document["steps"]) + 1)
        self.assertLess(document["peak_bytes"], document["budget_bytes"])

    def test_timeline_with_measured(self):
        document, measured = plot.load_timeline(TIMELINE), plot.load_timeline(MEASURED)
        figure = plot.plot_timeline(document, self.path("t.png"), measured)
        self.assertPng(self.path("t.png"))
        # The measured step is the longer: the time axis runs to its end.
        self.assertGreater(measured["seconds"], document["seconds"])
        curves = self.assertTimelineDrawn(figure, document, end=measured["seconds"],
                                          measured=measured)
        self.assertClose(max(curves["predicted live bytes"][1]), document["peak_bytes"])
        self.assertClose(max(curves["measured live bytes"][1]), measured["peak_bytes"])

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
        # The time span each is drawn over: the step's, or 1 µs when all
        # times are 0.
        seconds = sample()["seconds"]
        cases = {"no budget": (no_budget, seconds), "no tensors": (no_tensors, seconds),
                 "single step": (single_step, seconds), "zero durations": (zero_durations, 1e-6),
                 "no steps": (no_steps, seconds)}
        for name, (document, end) in cases.items():
            with self.subTest(name):
                out = self.path(f"{name}.png")
                figure = plot.plot_timeline(document, out)
                self.assertPng(out)
                self.assertTimelineDrawn(figure, document, end)

    def test_overhead(self):
        paths, documents = [], []
        expected = {}  # strategy: [(budget fraction, step time factor)]
        for strategy, slowdown in (("auto (greedy)", 0.2), ("auto (chain)", 0.25), ("sqrt", 0.5)):
            for budget in (0.9, 0.7, 0.8):
                document = sample()
                unplanned_seconds = document["unplanned_seconds"]
                document.update(strategy=strategy,
                                budget_bytes=int(budget * document["unplanned_peak_bytes"]),
                                seconds=unplanned_seconds * (1 + slowdown * (1 - budget)))
                paths.append(self.write(f"{strategy}-{budget}.json", document))
                documents.append(document)
                expected.setdefault(strategy.split(" ")[0], []).append(
                    (document["budget_bytes"] / document["unplanned_peak_bytes"],
                     1 + slowdown * (1 - budget)))
        self.assertEqual(plot.main(["overhead", *paths, "-o", self.path("o.png")]), 0)
        self.assertPng(self.path("o.png"))

        figure = plot.plot_overhead(documents, self.path("o2.png"))
        self.assertPng(self.path("o2.png"))
        [axes] = figure.axes
        # One line per strategy ("auto (greedy)" and "auto (chain)" are both
        # "auto"), its points in order of budget.
        lines = {line.get_label(): line for line in axes.get_lines()
                 if not line.get_label().startswith("_")}
        self.assertEqual(sorted(lines), ["auto", "sqrt"])
        for strategy, points in expected.items():
            points.sort()
            self.assertClose(lines[strategy].get_xdata(), [b for b, _ in points], strategy)
            self.assertClose(lines[strategy].get_ydata(), [o for _, o in points], strategy)
        # And the unplanned step's time as a reference.
        references = [line for line in axes.get_lines() if line.get_label().startswith("_")]
        self.assertEqual(len(references), 1)
        self.assertClose(references[0].get_ydata(), [1.0, 1.0])

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
