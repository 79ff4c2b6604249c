"""Validates a Chrome trace written by lethe-mem against the rules of the
Trace Event Format that chrome://tracing and Perfetto's JSON importer apply.

    check_chrome_trace.py TRACE.json

The document is an object with a `traceEvents` array; every event has a
string `name`, a known phase `ph` and an integer `pid`; complete events (X)
have a thread, a timestamp and a non-negative duration; instant events (i)
a thread, a timestamp and a scope; counters (C) a timestamp and numeric
arguments; metadata (M) name a process or thread. Complete events on one
thread must not overlap (a stream runs one thing at a time). Prints one line
and exits 1 on the first broken rule.
"""

import json
import sys

PHASES = {"X", "i", "C", "M"}


def fail(message):
    print("check_chrome_trace.py: " + message)
    sys.exit(1)


def number(event, key, where):
    value = event.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        fail(f"{where}: '{key}' must be a number, got {value!r}")
    if value < 0:
        fail(f"{where}: '{key}' is negative ({value})")
    return value


def main(path):
    with open(path) as handle:
        document = json.load(handle)
    if not isinstance(document, dict) or not isinstance(
            document.get("traceEvents"), list):
        fail("the trace must be an object with a 'traceEvents' array")
    spans = {}
    counts = {phase: 0 for phase in PHASES}
    threads = set()
    for index, event in enumerate(document["traceEvents"]):
        where = f"event {index}"
        if not isinstance(event, dict):
            fail(f"{where} is not an object")
        if not isinstance(event.get("name"), str):
            fail(f"{where} has no string 'name'")
        phase = event.get("ph")
        if phase not in PHASES:
            fail(f"{where} has phase {phase!r}, not one of {sorted(PHASES)}")
        counts[phase] += 1
        if not isinstance(event.get("pid"), int):
            fail(f"{where} has no integer 'pid'")
        if phase == "M":
            if event["name"] not in ("process_name", "thread_name",
                                     "thread_sort_index"):
                fail(f"{where}: unknown metadata {event['name']!r}")
            if not isinstance(event.get("args"), dict):
                fail(f"{where}: metadata without 'args'")
            if event["name"] == "thread_name":
                threads.add(event.get("tid"))
            continue
        timestamp = number(event, "ts", where)
        if phase == "C":
            args = event.get("args")
            if not isinstance(args, dict) or not args or not all(
                    isinstance(v, (int, float)) for v in args.values()):
                fail(f"{where}: a counter needs numeric 'args'")
            continue
        if not isinstance(event.get("tid"), int):
            fail(f"{where} has no integer 'tid'")
        if phase == "i":
            if event.get("s") not in ("g", "p", "t"):
                fail(f"{where}: an instant event needs a scope 's'")
            continue
        duration = number(event, "dur", where)
        spans.setdefault(event["tid"], []).append(
            (timestamp, timestamp + duration, index))
    for thread, intervals in spans.items():
        if thread not in threads:
            fail(f"thread {thread} has events but no thread_name")
        intervals.sort()
        for (start, end, first), (next_start, _, second) in zip(
                intervals, intervals[1:]):
            # Timestamps are microseconds printed from doubles.
            if next_start < end - 1e-6 * max(1.0, end):
                fail(f"events {first} and {second} overlap on thread {thread}")
    if counts["X"] == 0 or counts["C"] == 0:
        fail("the trace has no complete events or no counter")
    print("valid: %d spans, %d counter samples, %d threads" %
          (counts["X"], counts["C"], len(threads)))


if __name__ == "__main__":
    main(sys.argv[1])
