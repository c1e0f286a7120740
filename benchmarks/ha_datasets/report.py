"""Figures per system, dataset and category, from the case records (pure).

Pure module: standard library only, no Home Assistant imports.

`passed / total` counts the eval's counted rule results as the leaderboard does (one
per case in assist-mini and questions); a case whose collect failed (`error`) has no
output in the leaderboard and is not counted, but is listed. A record with several
categories (questions: `[light, question]`) counts in each, as the leaderboard's
`reports-by-category.yaml` does. Seconds are the agent's time for the turn (all tries),
not the Home Assistant set-up around it.
"""

from __future__ import annotations

from collections import defaultdict
import statistics
from typing import Any


def _figures(cases: list[dict[str, Any]]) -> dict[str, Any]:
    rules = [rule for case in cases for rule in case.get("rules", [])]
    seconds = [case["seconds"] for case in cases if case.get("error") is None]
    return {
        "passed": sum(1 for rule in rules if rule["passed"]),
        "total": len(rules),
        "cases": len(cases),
        "errors": sum(1 for case in cases if case.get("error") is not None),
        "timeouts": sum(1 for case in cases if case.get("tries", 1) > 1),
        "median_seconds": round(statistics.median(seconds), 2) if seconds else None,
    }


def summary(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """{dataset: {"all": figures, "categories": {category: figures}}}."""
    by_dataset: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for case in cases:
        by_dataset[case["dataset"]].append(case)
    result: dict[str, Any] = {}
    for dataset, items in by_dataset.items():
        by_category: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for case in items:
            for category in case["categories"]:
                by_category[category].append(case)
        result[dataset] = {
            "all": _figures(items),
            "categories": {
                category: _figures(by_category[category])
                for category in sorted(by_category)
            },
        }
    return result


def _cell(figures: dict[str, Any] | None) -> str:
    if figures is None:
        return "-"
    median = figures["median_seconds"]
    seconds = "-" if median is None else f"{median:.1f} s"
    cell = f"{figures['passed']}/{figures['total']} ({seconds})"
    if figures["errors"]:
        cell += f" {figures['errors']} err"
    return cell


def table(summaries: dict[str, dict[str, Any]]) -> str:
    """A text table: one row per dataset and category, one column per system."""
    systems = list(summaries)
    datasets = sorted({d for s in summaries.values() for d in s})
    rows = [["set", "category", *systems]]
    for dataset in datasets:
        categories = sorted(
            {
                c
                for s in summaries.values()
                for c in s.get(dataset, {}).get("categories", {})
            }
        )
        for category in [*categories, "all"]:
            cells = []
            for system in systems:
                part = summaries[system].get(dataset)
                if part is None:
                    cells.append("-")
                elif category == "all":
                    cells.append(_cell(part["all"]))
                else:
                    cells.append(_cell(part["categories"].get(category)))
            rows.append([dataset, category, *cells])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)
