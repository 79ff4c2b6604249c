"""Checks that lethe-mem's JSON timeline agrees with the IR's own figures.

    check_agree.py TIMELINE.json --plan PLANNED.mlir
    check_agree.py TIMELINE.json --profile PROFILE.txt

With --plan, the peak, step time, budget, strategy and unplanned figures must
equal the function's `lethe.plan`, and the arena and liveness peak its
`lethe.arena`. With --profile (the output of --lethe-print-memory-profile on
an unplanned step) the peak must equal the profile's, its tensors rounded up
to 256-byte blocks as the planner counts them (the op workspaces it lists
too). Either way the memory curve in `steps` must peak at `peak_bytes`, the
categories at the peak must add up to it, and so must the tensors live at the
peak with the workspace of the peak step, which must be the `workspace`
category. Prints one line and exits
1 on the first disagreement.
"""

import json
import re
import sys


def fail(message):
    print("check_agree.py: " + message)
    sys.exit(1)


def expect_equal(what, actual, expected, relative=0.0):
    if relative:
        if abs(actual - expected) > relative * max(abs(expected), 1e-300):
            fail(f"{what}: the timeline says {actual}, the IR {expected}")
    elif actual != expected:
        fail(f"{what}: the timeline says {actual!r}, the IR {expected!r}")


def attribute(text, name, field, kind):
    """The integer or float `field` of the dictionary attribute `name`."""
    match = re.search(name + r" = \{([^}]*)\}", text)
    if not match:
        fail(f"no {name} attribute in the IR")
    pattern = r"(?<![\w])" + field + (r" = (-?\d+) : i64" if kind == "int"
                       else r" = ([-+0-9.eE]+) : f64")
    value = re.search(pattern, match.group(1))
    if not value:
        fail(f"no {field} in {name}")
    return int(value.group(1)) if kind == "int" else float(value.group(1))


def main(argv):
    with open(argv[1]) as handle:
        timeline = json.load(handle)
    mode, path = argv[2], argv[3]
    with open(path) as handle:
        text = handle.read()

    steps = timeline["steps"]
    curve = [step["live_bytes"] for step in steps]
    expect_equal("peak of the steps' live bytes", max(curve),
                 timeline["peak_bytes"])
    peak_step = timeline["peak_step"]
    expect_equal("live bytes at the peak step", curve[peak_step],
                 timeline["peak_bytes"])
    expect_equal("categories at the peak", sum(
        timeline["categories_at_peak"].values()), timeline["peak_bytes"])
    workspace = steps[peak_step].get("workspace_bytes", 0)
    expect_equal("workspace at the peak",
                 timeline["categories_at_peak"]["workspace"], workspace)
    live = sum(tensor["bytes"] for tensor in timeline["tensors"]
               if tensor["first_step"] <= peak_step <= tensor["last_step"])
    expect_equal("tensors and workspace live at the peak", live + workspace,
                 timeline["peak_bytes"])
    issues = [step["issue"] for step in steps]
    if issues != sorted(issues):
        fail("the steps' issue times decrease")

    if mode == "--plan":
        expect_equal("peak", timeline["peak_bytes"],
                     attribute(text, "lethe.plan", "peak", "int"))
        expect_equal("budget", timeline["budget_bytes"],
                     attribute(text, "lethe.plan", "budget", "int"))
        expect_equal("unplanned peak", timeline["unplanned_peak_bytes"],
                     attribute(text, "lethe.plan", "unplanned_peak", "int"))
        expect_equal("step time", timeline["seconds"],
                     attribute(text, "lethe.plan", "seconds", "float"), 1e-5)
        expect_equal("unplanned step time", timeline["unplanned_seconds"],
                     attribute(text, "lethe.plan", "unplanned_seconds",
                               "float"), 1e-5)
        expect_equal("arena", timeline["arena_bytes"],
                     attribute(text, "lethe.arena", "size", "int"))
        expect_equal("liveness peak", timeline["liveness_peak_bytes"],
                     attribute(text, "lethe.arena", "liveness_peak", "int"))
        strategy = re.search(r'strategy = "([^"]*)"', text)
        expect_equal("strategy", timeline["strategy"], strategy.group(1))
    elif mode == "--profile":
        # The profile lists each tensor's and each op workspace's bytes and
        # live ops; the planner counts sizes rounded up to the arena's
        # 256-byte blocks.
        tensors = re.findall(r"(\d+) bytes  live (\d+)\.\.(\d+)", text)
        if not tensors:
            fail("no tensors in the memory profile")
        end = max(int(last) for _, _, last in tensors)
        curve = [0] * (end + 1)
        for size, first, last in tensors:
            for op in range(int(first), int(last) + 1):
                curve[op] += (int(size) + 255) // 256 * 256
        expect_equal("peak", timeline["peak_bytes"], max(curve))
        expect_equal("unplanned peak", timeline["unplanned_peak_bytes"],
                     max(curve))
    else:
        fail("expected --plan or --profile, got " + mode)
    print("agree: peak %d bytes" % timeline["peak_bytes"])


if __name__ == "__main__":
    main(sys.argv)
