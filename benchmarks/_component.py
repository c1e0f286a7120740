"""What the one-component benchmarks share: the command line, the run, the table.

`fact_task` and `update_step` each measure one part of the extractor on the
bundled model over memory sets: `--file` (default: the held-out set),
`--base-url`, `--json`, `-v`, then a table of tallies per language and all.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable, Sequence
import json
from pathlib import Path
from typing import Any

from benchmarks._real_home import model_server

type Measure = Callable[[str, list[Path], bool], Awaitable[dict[str, Any]]]


def run(
    doc: str, held_out: Path, measure: Measure
) -> tuple[list[Path], dict[str, Any]]:
    """Parse the command line, measure the sets on a server, write --json."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--file", action="append", type=Path)
    parser.add_argument("--base-url", help="use this server instead of starting one")
    parser.add_argument(
        "--json", type=Path, help="write the tallies and each result here"
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    paths = args.file or [held_out]
    with model_server(args.base_url) as base_url:
        result = asyncio.run(measure(base_url, paths, args.verbose))
    if args.json:
        args.json.write_text(
            json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8"
        )
    return paths, result


def print_tallies(
    paths: Sequence[Path],
    tallies: dict[str, dict[str, list[int]]],
    columns: Sequence[tuple[str, str, int]],
) -> None:
    """The sets, then one row per language and "all" last: (key, label, width)."""
    print(f"sets: {', '.join(str(path) for path in paths)}")
    print(f"{'':6}" + "".join(f"{label:>{width}}" for _, label, width in columns))
    for group, tally in sorted(tallies.items(), key=lambda item: item[0] == "all"):
        cells = [
            f"{f'{tally[key][0]}/{tally[key][1]}':>{width}}"
            for key, _, width in columns
        ]
        print(f"{group:6}" + "".join(cells))
