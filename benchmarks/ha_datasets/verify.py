"""Check `judge.py` against the leaderboard's own published verdicts.

    .venv/bin/python -m benchmarks.ha_datasets.verify [--datasets DIR]

The datasets repository keeps every collected output it scored
(`reports/<set>/<HA version>/<model>/*.yaml`) next to its scores (`reports.yaml`).
This judges each output again with `judge.py` and compares passed / total per model
with the published figures; it exits 1 on any difference.
"""

from __future__ import annotations

import argparse
from pathlib import Path
import sys
from typing import Any

import yaml

from benchmarks.ha_datasets.judge import judge
from benchmarks.ha_datasets.sources import CACHE


class _Loader(yaml.SafeLoader):
    """A safe loader that reads the outputs' Python-object tags as None."""


_Loader.add_multi_constructor("", lambda _loader, _suffix, _node: None)


def rejudge(output: dict[str, Any]) -> tuple[int, int]:
    """(passed, counted) rules for one published output."""
    context = output.get("context") or {}
    calls = [
        {
            "name": (event.get("data") or {}).get("tool_name"),
            "args": (event.get("data") or {}).get("tool_args"),
            "intent": "tool_name" not in (event.get("data") or {}),
        }
        for event in context.get("conversation_trace") or []
        if event.get("event_type") in ("tool_call", "llm_tool_call")
    ]
    rules = judge(
        output["task"], str(output["response"]), context.get("unexpected_states"), calls
    )
    return sum(rule.passed for rule in rules), len(rules)


def main() -> None:
    """Compare every published model run of assist-mini and questions."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--datasets", default=str(CACHE / "home-assistant-datasets"), help="clone"
    )
    reports = Path(parser.parse_args().datasets).expanduser() / "reports"
    differ = runs = 0
    for summary in sorted(reports.glob("*/*/reports.yaml")):
        if summary.parts[-3] not in ("assist-mini", "questions"):
            continue
        for row in yaml.load(summary.read_text(), Loader=_Loader) or []:
            files = [
                path
                for path in (summary.parent / row["model_id"]).glob("*.yaml")
                if path.name != "_scrape_context.yaml"
            ]
            if not files:
                continue
            passed = counted = 0
            for path in files:
                good, total = rejudge(yaml.load(path.read_text(), Loader=_Loader))
                passed, counted = passed + good, counted + total
            runs += 1
            same = (passed, counted) == (row["good"], row["total"])
            differ += not same
            print(
                f"{'ok  ' if same else 'DIFF'} {summary.parts[-3]} {summary.parts[-2]} "
                f"{row['model_id']}: {passed}/{counted} (published {row['good']}/{row['total']})"
            )
    print(f"{runs - differ} of {runs} published runs judged the same")
    sys.exit(1 if differ or not runs else 0)


if __name__ == "__main__":
    main()
