#!/usr/bin/env python3
"""Renders a lethe-mem HTML page in headless Chromium and checks that it drew.

    render_html.py t.html [--expect-measured]

Loads the page from disk, lets its scripts run, and checks the DOM Chromium
dumps: <body data-rendered="ok">, a <path id="memory-curve"> with at least two
points and no NaN (and with --expect-measured, a "measured-curve" as well), no
external script or stylesheet, and no uncaught exception or console error
from the page (Chromium logs console messages without their level, so an
error is one whose text says "error"). Prints one line and exits 0 on
success, 1 on a failed check, 2 when Chromium is not installed.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

# How long the page's timers may run (virtual time, so no real waiting) and
# how long Chromium may take in real time before the check gives up.
VIRTUAL_TIME_BUDGET_MS = 5000
TIMEOUT_SECONDS = 120

# Numbers per point of each SVG path command (Z closes, it adds none), a
# command with its arguments, and one number.
PATH_ARITY = {"M": 2, "L": 2, "T": 2, "H": 1, "V": 1, "S": 4, "Q": 4, "C": 6, "A": 7, "Z": 0}
PATH_COMMAND = re.compile(r"([MLTHVSQCAZ])([^MLTHVSQCAZ]*)", re.IGNORECASE)
PATH_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")

# Chromium logs each console message of a page as
#   [pid:tid:time:INFO:CONSOLE:line] "message", source: file:///... (line)
# at INFO whatever its level, so errors are told by their text.
CONSOLE_LINE = re.compile(r":CONSOLE[:(]")
CONSOLE_ERROR = re.compile(r"Uncaught|\berror\b", re.IGNORECASE)


class PageParser(HTMLParser):
    """Collects <body>'s attributes, the paths by id, and external resources."""

    def __init__(self):
        super().__init__()
        self.body = {}
        self.paths = {}
        self.external = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "body":
            self.body = attributes
        elif tag == "path" and "id" in attributes:
            self.paths[attributes["id"]] = attributes.get("d") or ""
        elif tag == "script" and attributes.get("src"):
            self.external.append(attributes["src"])
        elif tag == "link" and attributes.get("href"):
            self.external.append(attributes["href"])


def path_points(d):
    """Number of points in SVG path data `d`."""
    points = 0
    for command, arguments in PATH_COMMAND.findall(d):
        arity = PATH_ARITY[command.upper()]
        if arity:
            points += len(PATH_NUMBER.findall(arguments)) // arity
    return points


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def render(chromium, page):
    """Chromium's dump of `page`'s DOM and its log, or raises RuntimeError."""
    # A profile of its own keeps parallel runs (lit -j) apart; with
    # XDG_CONFIG_HOME there too, Chromium's crash database stays out of the
    # user's home.
    with tempfile.TemporaryDirectory(prefix="lethe-render-") as profile:
        environment = dict(os.environ, XDG_CONFIG_HOME=profile)
        command = [
            chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
            f"--user-data-dir={profile}", "--no-first-run", "--disable-extensions",
            f"--virtual-time-budget={VIRTUAL_TIME_BUDGET_MS}",
            "--enable-logging=stderr", "--v=0",
            "--dump-dom", Path(page).resolve().as_uri(),
        ]
        try:
            result = subprocess.run(command, env=environment, capture_output=True, text=True,
                                    errors="replace", timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"chromium did not finish within {TIMEOUT_SECONDS} s")
    if result.returncode != 0 or not result.stdout.strip():
        last = result.stderr.strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"chromium failed (exit {result.returncode}): {last[0]}")
    return result.stdout, result.stderr


def page_errors(log, page):
    """Console errors and uncaught exceptions that `page` logged."""
    source = Path(page).resolve().as_uri()
    errors = []
    for line in log.splitlines():
        if CONSOLE_LINE.search(line) and source in line:
            message = line.split("] ", 1)[-1]
            if CONSOLE_ERROR.search(message) or ":ERROR:CONSOLE" in line:
                errors.append(message)
    return errors


def check(dom, log, page, expect_measured):
    """The first problem with the rendered page, or None."""
    errors = page_errors(log, page)
    if errors:
        return f"console error: {errors[0]}"
    parser = PageParser()
    parser.feed(dom)
    if parser.body.get("data-rendered") != "ok":
        state = parser.body.get("data-rendered", "missing")
        reason = parser.body.get("data-error")
        return f'body data-rendered is "{state}", not "ok"' + (f": {reason}" if reason else "")
    if parser.external:
        return f"the page loads an external resource: {parser.external[0]}"
    curves = ["memory-curve"] + (["measured-curve"] if expect_measured else [])
    for curve in curves:
        if curve not in parser.paths:
            return f'no <path id="{curve}">'
        d = parser.paths[curve]
        if re.search(r"NaN|Infinity|undefined", d):
            return f'<path id="{curve}"> has a non-numeric coordinate: {d[:80]}'
        if path_points(d) < 2:
            return f'<path id="{curve}"> has fewer than 2 points: "{d}"'
    return None


def main(argv=None):
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("page", help="the HTML file lethe-mem wrote")
    arguments.add_argument("--expect-measured", action="store_true",
                           help='also require <path id="measured-curve">')
    options = arguments.parse_args(argv)
    if not os.path.isfile(options.page):
        print(f"{options.page}: no such file")
        return 1
    chromium = find_chromium()
    if chromium is None:
        print("chromium not found: install Debian's chromium package")
        return 2
    try:
        dom, log = render(chromium, options.page)
    except RuntimeError as error:
        print(f"{options.page}: {error}")
        return 1
    problem = check(dom, log, options.page, options.expect_measured)
    if problem:
        print(f"{options.page}: {problem}")
        return 1
    curves = "memory and measured curves" if options.expect_measured else "memory curve"
    print(f"{options.page}: rendered, {curves} drawn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
