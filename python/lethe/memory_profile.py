"""Read the memory profile that `lethe-opt --lethe-print-memory-profile` prints.

    from lethe.memory_profile import profile_file
    for function in profile_file("examples/resnet_block.mlir"):
        print(function.name, function.peak_bytes, function.peak_op)

The text format is the one MemoryProfile::print writes (see
include/lethe/Analysis/MemoryProfile.h); its lit tests keep it stable.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
from typing import List, Optional

_HEADER = re.compile(r"^memory profile of @(\S+): (\d+) tensors, (\d+) ops$")
_VALUE = re.compile(r"^\s+(%\S+)\s+(\S+)\s+(\d+) bytes\s+live (\d+)\.\.(\d+)$")
_OP = re.compile(r"^\s+#(\d+)\s+(\S+)\s+(\d+) bytes$")
_WORKSPACE = re.compile(r"^\s+#(\d+)\s+(\S+)\s+(\d+) bytes\s+live (\d+)\.\.(\d+)$")
_PEAK = re.compile(r"^\s+peak: (\d+) bytes(?: at op #(\d+) \((\S+)\))?")


@dataclasses.dataclass
class Tensor:
    """One tensor value and its live range in op positions (both included)."""

    name: str
    type: str
    size_bytes: int
    first_op: int
    last_op: int


@dataclasses.dataclass
class Workspace:
    """The workspace of one op (a convolution's column buffer), live at that
    op only."""

    op_index: int
    op: str
    size_bytes: int


@dataclasses.dataclass
class FunctionProfile:
    """The memory profile of one function."""

    name: str
    tensors: List[Tensor]
    workspaces: List[Workspace]
    ops: List[str]
    live_bytes: List[int]
    peak_bytes: int
    peak_op_index: Optional[int]

    @property
    def peak_op(self) -> Optional[str]:
        """Name of the op at which the peak first occurs."""
        if self.peak_op_index is None:
            return None
        return self.ops[self.peak_op_index]


class ProfileFormatError(ValueError):
    """The text is not a memory profile as lethe-opt prints it."""


def parse(text: str) -> List[FunctionProfile]:
    """Parses the report of every function in `text`, in order."""
    profiles: List[FunctionProfile] = []
    current: Optional[FunctionProfile] = None
    for number, line in enumerate(text.splitlines(), 1):
        if match := _HEADER.match(line):
            current = FunctionProfile(match[1], [], [], [], [], 0, None)
            profiles.append(current)
            continue
        if current is None or line.strip() in (
            "values:", "workspace:", "live bytes by op:", ""):
            continue
        if match := _VALUE.match(line):
            current.tensors.append(
                Tensor(match[1], match[2], int(match[3]), int(match[4]), int(match[5]))
            )
        elif match := _WORKSPACE.match(line):
            current.workspaces.append(Workspace(int(match[1]), match[2], int(match[3])))
        elif match := _OP.match(line):
            if int(match[1]) != len(current.ops):
                raise ProfileFormatError(f"line {number}: ops out of order: {line!r}")
            current.ops.append(match[2])
            current.live_bytes.append(int(match[3]))
        elif match := _PEAK.match(line):
            current.peak_bytes = int(match[1])
            current.peak_op_index = int(match[2]) if match[2] else None
        else:
            raise ProfileFormatError(f"line {number}: unexpected text {line!r}")
    return profiles


def find_tool(name: str) -> str:
    """Path of a Lethe tool: $LETHE_BUILD_DIR/bin, else the repository's build/bin."""
    build = os.environ.get("LETHE_BUILD_DIR") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
        "build",
    )
    path = os.path.join(build, "bin", name)
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(
            f"{path} not found: build Lethe first (scripts/setup.sh) or set LETHE_BUILD_DIR"
        )
    return path


def profile_file(path: str) -> List[FunctionProfile]:
    """Runs lethe-opt --lethe-print-memory-profile on a .mlir file and parses it."""
    result = subprocess.run(
        [find_tool("lethe-opt"), path, "--lethe-print-memory-profile", "-o", os.devnull],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"lethe-opt failed on {path}:\n{result.stderr.strip()}")
    return parse(result.stderr)
