"""Compares the losses two planned executables printed for the same training.

    compare_losses.py EXPECTED.txt ACTUAL.txt [--rtol R]

Reads each file's `step N  loss X ...` lines (docs/Executables.md); the two
must have the same steps, and each loss must agree within R relative to the
expected loss (at least 1). Prints one line saying how many agreed and the
largest relative difference, or what differs; exits 1 on a difference.
"""

import argparse
import re
import sys

STEP = re.compile(r"^step (\d+)  loss (\S+) ")


def read_losses(path):
    losses = []
    with open(path) as lines:
        for line in lines:
            match = STEP.match(line)
            if match:
                losses.append((int(match.group(1)), float(match.group(2))))
    return losses


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("expected")
    parser.add_argument("actual")
    parser.add_argument("--rtol", type=float, default=1e-4)
    args = parser.parse_args(argv[1:])
    expected, actual = read_losses(args.expected), read_losses(args.actual)
    if not expected:
        print("%s has no step lines" % args.expected)
        return 1
    if [step for step, _ in expected] != [step for step, _ in actual]:
        print("%s has steps %s, %s has %s" % (
            args.expected, [step for step, _ in expected], args.actual,
            [step for step, _ in actual]))
        return 1
    largest = 0.0
    for (step, want), (_, got) in zip(expected, actual):
        difference = abs(got - want) / max(1.0, abs(want))
        if not difference <= args.rtol:
            print("step %d: loss %.7g, expected %.7g (relative difference "
                  "%.3g > %g)" % (step, got, want, difference, args.rtol))
            return 1
        largest = max(largest, difference)
    print("%d losses agree within %g (largest relative difference %.3g)" % (
        len(expected), args.rtol, largest))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
