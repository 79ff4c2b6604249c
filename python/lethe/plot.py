"""Plot memory timelines (docs/MemoryTimeline.md, schema version 1) to PNG.

    python3 -m lethe.plot t.json -o timeline.png [--measured m.json]
    python3 -m lethe.plot overhead a.json b.json ... -o overhead.png

The first draws what `lethe-mem --format html` draws: live bytes against
time with the budget and the peak, recomputes and copies, and one bar per
tensor over its lifetime. The second draws the step time of plans made at
different budgets, relative to the unplanned step, one line per strategy.

From Python (both return the matplotlib Figure they drew):

    from lethe.plot import load_timeline, plot_timeline, plot_overhead
    plot_timeline(load_timeline("t.json"), "timeline.png")
    plot_overhead([load_timeline(p) for p in paths], "overhead.png")

Needs Debian's python3-matplotlib; reading and checking a timeline does not.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Dict, List, Optional, Sequence, Tuple

FORMAT = "lethe-memory-timeline"
VERSION = 1

CATEGORY_COLORS = {
    "input": "#8c8c8c",
    "parameter": "#1f77b4",
    "optimizer_state": "#9467bd",
    "activation": "#2ca02c",
    "gradient": "#d62728",
    "temporary": "#e8a33d",
    "workspace": "#8c564b",
}
UNKNOWN_CATEGORY_COLOR = "#bbbbbb"
PREDICTED_COLOR = "#1f4e9c"
MEASURED_COLOR = "#e4572e"
BUDGET_COLOR = "#b00020"
# The lanes under the memory curve: the step kind each shows and its colour.
LANES = [
    ("recompute", "#f28e2b"),
    ("offload", "#4e79a7"),
    ("prefetch", "#12a4b4"),
    ("release", "#7f7f7f"),
]
LANE_COLORS = dict(LANES)

_BYTE_UNITS = [("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10), ("B", 1)]
_TIME_UNITS = [("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)]
# The choice a strategy names after its own name: "auto (greedy)".
_STRATEGY_CHOICE = re.compile(r"\s*\([^()]*\)$")
# Narrowest span drawn, as a fraction of the time axis, so that zero-duration
# steps (releases) stay visible.
_MIN_SPAN_FRACTION = 0.002


class TimelineError(ValueError):
    """A file or document that is not a memory timeline this module reads."""


def load_timeline(path: str) -> dict:
    """Reads a timeline document and checks its format and version."""
    try:
        with open(path, encoding="utf-8") as file:
            document = json.load(file)
    except OSError as error:
        raise TimelineError(f"{path}: cannot read: {error.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise TimelineError(f"{path}: not JSON: {error}") from None
    if not isinstance(document, dict):
        raise TimelineError(f"{path}: not a memory timeline (expected a JSON object)")
    if "format" not in document:
        raise TimelineError(f"{path}: not a memory timeline (no 'format' field)")
    if document["format"] != FORMAT:
        raise TimelineError(f"{path}: format is {document['format']!r}, expected {FORMAT!r}")
    version = document.get("version")
    if isinstance(version, bool) or version != VERSION:
        raise TimelineError(
            f"{path}: version {version!r} is not supported (expected {VERSION})"
        )
    for field in ("steps", "tensors"):
        if not isinstance(document.get(field), list):
            raise TimelineError(f"{path}: {field!r} is missing or not a list")
    return document


def strategy_name(document: dict) -> str:
    """The strategy without the choice it names: "auto (greedy)" is "auto"."""
    return _STRATEGY_CHOICE.sub("", document.get("strategy") or "unplanned")


def overhead_point(document: dict) -> Tuple[str, float, float]:
    """(strategy, budget / unplanned peak, step time / unplanned step time)."""
    values = {}
    for field in ("budget_bytes", "unplanned_peak_bytes", "seconds", "unplanned_seconds"):
        value = document.get(field)
        if not _is_number(value):
            raise TimelineError(f"{field} is {json.dumps(value)}: not a plan's timeline")
        values[field] = value
    for field in ("unplanned_peak_bytes", "unplanned_seconds"):
        if values[field] <= 0:
            raise TimelineError(f"{field} is {values[field]}: nothing to compare with")
    return (
        strategy_name(document),
        values["budget_bytes"] / values["unplanned_peak_bytes"],
        values["seconds"] / values["unplanned_seconds"],
    )


def format_bytes(count: Optional[float]) -> str:
    """`count` bytes in binary units: "617 KiB"."""
    if not _is_number(count):
        return "none"
    name, size = _unit_for(count, _BYTE_UNITS)
    return f"{count} B" if size == 1 else f"{_three_digits(count / size)} {name}"


def format_seconds(seconds: Optional[float]) -> str:
    """A duration in the unit that fits: "10.0 µs"."""
    if not _is_number(seconds):
        return "none"
    if seconds == 0:
        return "0 s"
    name, size = _unit_for(seconds, _TIME_UNITS)
    return f"{_three_digits(seconds / size)} {name}"


def plot_timeline(document: dict, out: str, measured: Optional[dict] = None):
    """Draws `document` (and `measured` over it) to the PNG file `out`.

    Returns the Figure: three axes sharing the time axis, the memory curve
    (live bytes, the budget and the peak), one lane per kind of memory step,
    and one bar per tensor over its lifetime; the axis labels name the units."""
    figure = _new_figure((12, 9))
    curve, lanes, tensors = figure.subplots(
        3, 1, sharex=True, gridspec_kw={"height_ratios": [3, 0.9, 3], "hspace": 0.08}
    )
    documents = [document] + ([measured] if measured else [])
    end = max(_time_end(each) for each in documents)
    time_unit, time_size = _unit_for(end, _TIME_UNITS)
    top = max(_byte_top(each) for each in documents) * 1.1 or 1024
    byte_unit, byte_size = _unit_for(top, _BYTE_UNITS)
    # Axis units from here on; spans keep a minimum width to stay visible.
    min_width = end * _MIN_SPAN_FRACTION / time_size

    def spans(kind: str) -> List[Tuple[float, float]]:
        steps = [step for step in document["steps"] if step.get("kind") == kind]
        return _spans(steps, time_size, min_width)

    # The memory curve with the recomputes shaded behind it.
    _add_boxes(curve, [(x0, x1, 0, 1) for x0, x1 in spans("recompute")],
               LANE_COLORS["recompute"], alpha=0.18, linewidth=0,
               transform=curve.get_xaxis_transform(), label="recompute")
    predicted_label = "predicted live bytes" if measured else "live bytes"
    for each, color, label in ((document, PREDICTED_COLOR, predicted_label),
                               (measured, MEASURED_COLOR, "measured live bytes")):
        if each is None:
            continue
        times, levels = _step_curve(each, end)
        times = [time / time_size for time in times]
        levels = [level / byte_size for level in levels]
        curve.step(times, levels, where="post", color=color, linewidth=1.3, label=label)
        if each is document:
            curve.fill_between(times, levels, step="post", color=color, alpha=0.08, linewidth=0)
    if _is_number(document.get("budget_bytes")):
        curve.axhline(document["budget_bytes"] / byte_size, color=BUDGET_COLOR, linestyle="--",
                      linewidth=1.1, label=f"budget {format_bytes(document['budget_bytes'])}")
    if _is_number(document.get("peak_bytes")) and _is_number(document.get("peak_time")):
        curve.plot([document["peak_time"] / time_size], [document["peak_bytes"] / byte_size],
                   "o", color=BUDGET_COLOR, label=f"peak {format_bytes(document['peak_bytes'])}")
    curve.set_ylim(0, top / byte_size)
    curve.set_ylabel(f"device memory ({byte_unit})")
    curve.set_title(_title(document))
    curve.grid(alpha=0.3)
    curve.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")

    # One lane per kind of memory step, top to bottom.
    for row, (kind, color) in enumerate(LANES):
        _add_boxes(lanes, [(x0, x1, row + 0.15, row + 0.85) for x0, x1 in spans(kind)], color)
    lanes.set_ylim(len(LANES), 0)
    lanes.set_yticks([row + 0.5 for row in range(len(LANES))], [kind for kind, _ in LANES])
    lanes.tick_params(axis="y", length=0)
    lanes.grid(axis="x", alpha=0.3)

    _draw_tensors(tensors, document, time_size, min_width)
    tensors.set_xlim(0, end / time_size)
    tensors.set_xlabel(f"time ({time_unit})")
    _save(figure, out)
    return figure


def plot_overhead(documents: Sequence[dict], out: str):
    """Draws step time against budget, both relative to the unplanned step,
    one line per strategy, to the PNG file `out`; returns the Figure."""
    from matplotlib.ticker import FuncFormatter, PercentFormatter

    lines: Dict[str, List[Tuple[float, float]]] = {}
    for document in documents:
        strategy, budget, overhead = overhead_point(document)
        lines.setdefault(strategy, []).append((budget, overhead))
    figure = _new_figure((8, 5))
    axes = figure.subplots()
    for strategy in sorted(lines):
        points = sorted(lines[strategy])
        axes.plot([b for b, _ in points], [o for _, o in points], marker="o", label=strategy)
    axes.axhline(1.0, color="#999999", linewidth=0.8)
    axes.xaxis.set_major_formatter(PercentFormatter(xmax=1.0))
    # Overheads are often a few percent: a percentage with a decimal keeps
    # neighbouring ticks apart, where a two-decimal factor would repeat.
    axes.yaxis.set_major_formatter(
        FuncFormatter(lambda value, _: f"{100 * (value - 1):+.1f}%"))
    axes.set_xlabel("budget (of the unplanned peak)")
    axes.set_ylabel("step time overhead (against the unplanned step)")
    axes.grid(alpha=0.3)
    axes.legend(title="strategy", fontsize="small")
    functions = sorted({str(document.get("function")) for document in documents})
    axes.set_title(f"Overhead of memory plans for @{', @'.join(functions)}")
    _save(figure, out)
    return figure


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["overhead"]:
            parser = argparse.ArgumentParser(
                prog="python3 -m lethe.plot overhead",
                description="Plot step time against budget for plans of one function.")
            parser.add_argument("timelines", nargs="+",
                                help="timelines of plans (lethe-mem --format json)")
            parser.add_argument("-o", "--output", required=True, help="the PNG file to write")
            options = parser.parse_args(argv[1:])
            plot_overhead(_load_plans(options.timelines), options.output)
        else:
            parser = argparse.ArgumentParser(
                prog="python3 -m lethe.plot",
                description="Plot a memory timeline (or: overhead A.json B.json ... -o OUT.png).")
            parser.add_argument("timeline", help="a timeline (lethe-mem --format json)")
            parser.add_argument("-o", "--output", required=True, help="the PNG file to write")
            parser.add_argument("--measured", help="a measured timeline to draw over it")
            options = parser.parse_args(argv)
            document = load_timeline(options.timeline)
            measured = load_timeline(options.measured) if options.measured else None
            plot_timeline(document, options.output, measured)
    except TimelineError as error:
        print(f"lethe.plot: {error}", file=sys.stderr)
        return 1
    except ImportError as error:
        print(f"lethe.plot: {error.name or 'matplotlib'} not found: install Debian's "
              "python3-matplotlib and run /usr/bin/python3", file=sys.stderr)
        return 1
    return 0


# ---- Helpers ------------------------------------------------------------------


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _unit_for(value: float, units) -> Tuple[str, float]:
    """The largest unit not above `value` (the smallest one for 0)."""
    return next(((name, size) for name, size in units if abs(value) >= size), units[-1])


def _three_digits(value: float) -> str:
    magnitude = abs(value)
    return f"{value:.{0 if magnitude >= 100 or magnitude == 0 else 1 if magnitude >= 10 else 2}f}"


def _load_plans(paths: Sequence[str]) -> List[dict]:
    """The timelines at `paths`, each checked to be a plan's."""
    documents = []
    for path in paths:
        document = load_timeline(path)
        try:
            overhead_point(document)
        except TimelineError as error:
            raise TimelineError(f"{path}: {error}") from None
        documents.append(document)
    return documents


def _time_end(document: dict) -> float:
    """The latest time the document mentions (1 µs when all are 0)."""
    ends = [document.get("seconds")] + [
        item.get("end") for item in document["steps"] + document["tensors"]
    ]
    end = max((value for value in ends if _is_number(value)), default=0.0)
    return end if end > 0 else 1e-6


def _byte_top(document: dict) -> float:
    """The highest byte count to show: peak, budget or any step's level."""
    values = [document.get("peak_bytes"), document.get("budget_bytes")] + [
        step.get("live_bytes") for step in document["steps"]
    ]
    return max((value for value in values if _is_number(value)), default=0)


def _spans(items: Sequence[dict], time_size: float,
           min_width: float) -> List[Tuple[float, float]]:
    """(start, end) in units of `time_size` of the items with both, each at
    least `min_width` wide."""
    spans = []
    for item in items:
        if _is_number(item.get("start")) and _is_number(item.get("end")):
            start = item["start"] / time_size
            spans.append((start, start + max(min_width, (item["end"] - item["start"]) / time_size)))
    return spans


def _step_curve(document: dict, end: float) -> Tuple[List[float], List[float]]:
    """Times and levels of live bytes, for a step plot: each step's level
    holds from its issue (non-decreasing along the steps) to the next one's."""
    steps = [step for step in document["steps"]
             if _is_number(step.get("issue")) and _is_number(step.get("live_bytes"))]
    if not steps:
        return [0.0, end], [0, 0]
    times = [step["issue"] for step in steps] + [end]
    levels = [step["live_bytes"] for step in steps] + [steps[-1]["live_bytes"]]
    return times, levels


def _draw_tensors(axes, document: dict, time_size: float, min_width: float) -> None:
    """One row per tensor, a bar over its lifetime coloured by category and
    outlined when it is a recomputed or prefetched copy."""
    from matplotlib.patches import Patch

    tensors = document["tensors"]
    boxes, fills, edges = [], [], []
    for row, tensor in enumerate(tensors):
        for start, end in _spans([tensor], time_size, min_width):
            boxes.append((start, end, row + 0.1, row + 0.9))
            fills.append(CATEGORY_COLORS.get(tensor.get("category"), UNKNOWN_CATEGORY_COLOR))
            edges.append(LANE_COLORS.get(tensor.get("origin"), "none"))
    # Outlines thin out as rows do, so that they never hide the fill.
    _add_boxes(axes, boxes, fills, edgecolors=edges,
               linewidths=min(1.2, 50 / max(len(tensors), 1)))
    axes.set_ylim(max(len(tensors), 1), 0)
    if 0 < len(tensors) <= 40:
        axes.set_yticks([row + 0.5 for row in range(len(tensors))],
                        [str(tensor.get("name")) for tensor in tensors], fontsize="x-small")
    else:
        axes.set_yticks([])
    axes.set_ylabel(f"tensors ({len(tensors)})")
    if _is_number(document.get("peak_time")):
        axes.axvline(document["peak_time"] / time_size, color=BUDGET_COLOR, linestyle=":",
                     linewidth=1)
    axes.grid(axis="x", alpha=0.3)
    used = {tensor.get("category") for tensor in tensors}
    handles = [Patch(color=color, label=category.replace("_", " "))
               for category, color in CATEGORY_COLORS.items() if category in used]
    if used - CATEGORY_COLORS.keys():
        handles.append(Patch(color=UNKNOWN_CATEGORY_COLOR, label="other"))
    for origin, label in (("recompute", "recomputed copy"), ("prefetch", "prefetched copy")):
        handles.append(Patch(facecolor="white", edgecolor=LANE_COLORS[origin], label=label))
    axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")


def _add_boxes(axes, boxes, colors, **style) -> None:
    """Adds rectangles (x0, x1, y0, y1) as one collection, fast for thousands."""
    from matplotlib.collections import PolyCollection

    if boxes:
        vertices = [[(x0, y0), (x0, y1), (x1, y1), (x1, y0)] for x0, x1, y0, y1 in boxes]
        axes.add_collection(PolyCollection(vertices, facecolors=colors, **style))


def _title(document: dict) -> str:
    strategy = document.get("strategy") or "unplanned"
    seconds, unplanned = document.get("seconds"), document.get("unplanned_seconds")
    overhead = ""
    if _is_number(seconds) and _is_number(unplanned) and unplanned > 0:
        overhead = f" ({(seconds / unplanned - 1) * 100:+.1f}% vs unplanned)"
    return (f"@{document.get('function')}: {strategy},"
            f" peak {format_bytes(document.get('peak_bytes'))}"
            f" (budget {format_bytes(document.get('budget_bytes'))}),"
            f" step {format_seconds(seconds)}{overhead}")


def _new_figure(size: Tuple[float, float]):
    """A figure drawn by Agg, without pyplot: no display and no global state."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=size, dpi=100)
    FigureCanvasAgg(figure)  # becomes figure.canvas
    return figure


def _save(figure, out: str) -> None:
    try:
        figure.savefig(out, format="png", bbox_inches="tight")
    except OSError as error:
        raise TimelineError(f"{out}: cannot write: {error.strerror}") from None


if __name__ == "__main__":
    sys.exit(main())
