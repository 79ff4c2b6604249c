"""Checks a planned executable's output against its manifest.

    check_peak.py NAME.manifest.json OUTPUT.txt

Every step line's measured peak device bytes must be the arena's size
(lethe.arena), which must be within the plan's budget. Prints one line.
"""

import json
import re
import sys


def main(argv):
    with open(argv[1]) as handle:
        manifest = json.load(handle)
    with open(argv[2]) as handle:
        output = handle.read()
    arena = manifest["arena_bytes"]
    budget = manifest["plan"]["budget_bytes"]
    peaks = [int(p) for p in re.findall(r"^step \d+ .*peak device (\d+) bytes",
                                        output, re.M)]
    if not peaks:
        sys.exit("check_peak.py: no step lines in " + argv[2])
    for peak in peaks:
        if peak != arena:
            sys.exit("check_peak.py: a step peaked at %d bytes, the arena is "
                     "%d" % (peak, arena))
    if budget >= 0 and arena > budget:
        sys.exit("check_peak.py: the arena of %d bytes is over the budget of "
                 "%d" % (arena, budget))
    print("%d steps at the arena's %d bytes, within the budget of %d bytes" %
          (len(peaks), arena, budget))


if __name__ == "__main__":
    main(sys.argv)
