"""Show a long build's progress and a time estimate; keep its full output in a log.

    cmake --build ... 2>&1 | python build_progress.py LOG EXPECTED_SECONDS [WHAT]

Reads the build's output (CMake's Makefile lines "[ 45%] Building ..." or Ninja's
"[120/310] Building ..."), appends every line to LOG, and prints to stderr a line
like "local-model: llama-server build 40% after 3:42, about 5 min left" each time the
build passes another 10 %, and at least every minute. Until 5 % are done the estimate
is EXPECTED_SECONDS (measured on the reference machine, scaled by the caller); after
that it follows the build's own pace. Exits with the build's status when the caller
uses ``set -o pipefail``; this filter itself always exits 0.

Standard library only (it runs before the venv exists, with any Python 3).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
import re
import sys
import time
from typing import TextIO

PREFIX = "local-model:"
STEP_PERCENT = 10
EVERY_SECONDS = 60.0
TRUST_PACE_FROM_PERCENT = 5
_MAKE = re.compile(r"^\[\s*(\d{1,3})%\]")
_NINJA = re.compile(r"^\[(\d+)/(\d+)\]")


def percent_of(line: str) -> int | None:
    """The build's progress a line reports, if it reports one."""
    if match := _MAKE.match(line):
        return min(int(match[1]), 100)
    if (match := _NINJA.match(line)) and int(match[2]) > 0:
        return min(100 * int(match[1]) // int(match[2]), 100)
    return None


def clock(seconds: float) -> str:
    """Elapsed time as m:ss."""
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def remaining(percent: int, elapsed: float, expected: float) -> float:
    """Seconds left: the build's own pace once it has done enough, else the estimate."""
    if percent >= TRUST_PACE_FROM_PERCENT and elapsed > 0:
        return elapsed * (100 - percent) / percent
    return max(expected - elapsed, 0.0)


def about(seconds: float) -> str:
    """A rough duration for people: "about 5 min left", "less than a minute left"."""
    if seconds < 60:
        return "less than a minute left"
    return f"about {round(seconds / 60)} min left"


def progress_line(what: str, percent: int, elapsed: float, expected: float) -> str:
    """One progress line."""
    left = about(remaining(percent, elapsed, expected))
    return f"{PREFIX} {what} {percent}% after {clock(elapsed)}, {left}"


def run(
    lines: Iterable[str],
    log: TextIO,
    out: TextIO,
    expected: float,
    what: str,
    monotonic: Callable[[], float] = time.monotonic,
) -> int:
    """Copy `lines` to `log`, report progress to `out`; the last percent seen."""
    start = last_report = monotonic()
    percent = 0
    next_step = 0  # the first percent line is reported: it gives the estimate
    for line in lines:
        log.write(line)
        if (found := percent_of(line)) is not None:
            percent = max(percent, found)
        now = monotonic()
        if (found is not None and percent >= next_step) or (
            now - last_report >= EVERY_SECONDS
        ):
            out.write(progress_line(what, percent, now - start, expected) + "\n")
            out.flush()
            last_report = now
            next_step = (percent // STEP_PERCENT + 1) * STEP_PERCENT
    log.flush()
    out.write(f"{PREFIX} {what} finished after {clock(monotonic() - start)}\n")
    out.flush()
    return percent


def main(argv: list[str]) -> int:
    """Entry point."""
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__ or "")
        return 2
    log_path, expected = argv[0], float(argv[1])
    what = argv[2] if len(argv) == 3 else "build"
    sys.stdin.reconfigure(errors="replace")  # type: ignore[union-attr]
    with open(log_path, "a", encoding="utf-8", errors="replace") as log:
        run(sys.stdin, log, sys.stderr, expected, what)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
