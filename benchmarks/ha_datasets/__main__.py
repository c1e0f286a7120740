"""`python -m benchmarks.ha_datasets`: the command line (see the package docstring)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from pathlib import Path
import subprocess
import sys
import time
from typing import Any

from benchmarks._real_home import code_path

CODE = code_path(sys.argv)

from benchmarks.ha_datasets.cases import Case, load_cases  # noqa: E402
from benchmarks.ha_datasets.collect import (  # noqa: E402
    SYSTEMS,
    TIMEOUT,
    TRIES,
    collect,
)
from benchmarks.ha_datasets.judge import judge  # noqa: E402
from benchmarks.ha_datasets.report import summary, table  # noqa: E402
from benchmarks.ha_datasets.sources import Sources, sources  # noqa: E402

MODULE = "benchmarks.ha_datasets"


def parse(argv: list[str]) -> argparse.Namespace:
    """The options."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {MODULE}",
        description="The Home LLM Leaderboard's assist datasets on the bundled model.",
    )
    parser.add_argument(
        "--set",
        default="assist-mini,questions",
        help="datasets, comma-separated (default: assist-mini,questions)",
    )
    parser.add_argument(
        "--systems", default="ours,ha,plain", help="of ours, ha, plain (default: all)"
    )
    parser.add_argument(
        "--cache",
        help="folder holding the four clones (default ~/.cache/local_assistant/ha_datasets)",
    )
    parser.add_argument("--datasets", help="home-assistant-datasets clone")
    parser.add_argument("--synthetic-home", help="synthetic-home (library) clone")
    parser.add_argument(
        "--synthetic-home-component", help="home-assistant-synthetic-home clone"
    )
    parser.add_argument(
        "--openai-custom", help="hass-openai-custom-conversation clone (plain agent)"
    )
    parser.add_argument("--count", type=int, help="runs per sentence (default: card)")
    parser.add_argument("--limit", type=int, help="first N sentences per category")
    parser.add_argument("--match", help="only task ids containing this text")
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help="s per try (40)")
    parser.add_argument("--tries", type=int, default=TRIES, help="tries on timeout (3)")
    parser.add_argument("--swama", action="store_true", help="through the Swama filter")
    parser.add_argument(
        "--temperature",
        type=float,
        help="our agent's sampling temperature (default: its option, 0.6); 0 "
        "makes runs repeatable, so two of them differ only by what they change",
    )
    parser.add_argument(
        "--base-url",
        help="a running server (default: start one); never-acts: a fake server "
        "that answers OK and calls no tool (what HA's own reading carries out)",
    )
    parser.add_argument("--code", help="load custom_components from this checkout")
    parser.add_argument("--baseline", help="also run `ours` on this git ref")
    parser.add_argument("--json", help="write everything here as JSON")
    parser.add_argument("--quiet", action="store_true", help="no line per case")
    args = parser.parse_args(argv)
    for system in args.systems.split(","):
        if system not in SYSTEMS:
            parser.error(f"unknown system {system!r} (have {', '.join(SYSTEMS)})")
    return args


def _git_commit(path: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(path), "describe", "--always", "--dirty", "--abbrev=40"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or "?"


@contextlib.contextmanager
def model_url(args: argparse.Namespace, needed: bool) -> Any:
    """The server URL the agents use (None when no system needs a model)."""
    from benchmarks._real_home import started_server

    if not needed:
        yield None
        return
    with started_server(args.base_url) as (url, _port):
        if not args.swama:
            yield url
            return
        from benchmarks._swama_filter import swama_filter

        with swama_filter(url) as filtered:
            yield filtered


def case_record(case: Case, system: str, collected: Any) -> dict[str, Any]:
    """One case's sentence, answer, calls, state diff and verdict, for the JSON."""
    task = case.expected()
    rules = (
        []
        if collected.error is not None
        else judge(
            task, collected.answer, collected.unexpected_states, collected.tool_calls
        )
    )
    return {
        "system": system,
        "dataset": case.dataset,
        "task_id": case.task_id,
        "record": str(case.task.record_source.record_id),
        "categories": case.categories,
        "sentence": case.sentence,
        "expected": json.loads(json.dumps(task, default=str)),
        "answer": collected.answer,
        "tool_calls": collected.tool_calls,
        "calls": collected.calls,
        "unexpected_states": collected.unexpected_states,
        "chat": collected.chat,
        "tries": collected.tries,
        "seconds": round(collected.seconds, 3),
        "setup_seconds": round(collected.setup_seconds, 3),
        "rules": [rule.__dict__ for rule in rules],
        "verdict": (
            "error"
            if collected.error is not None
            else "pass"
            if rules and all(rule.passed for rule in rules)
            else "fail"
            if rules
            else "not counted"
        ),
        "error": collected.error,
    }


async def run_cases(
    cases: list[Case],
    systems: list[str],
    base_url: str | None,
    args: argparse.Namespace,
) -> list[dict[str, Any]]:
    """Every case through every system, one after another."""
    from benchmarks.ha_datasets.collect import Collected

    records = []
    for system in systems:
        for number, case in enumerate(cases, 1):
            try:
                collected = await collect(
                    case,
                    system,
                    base_url,
                    timeout=args.timeout,
                    tries=args.tries,
                    temperature=args.temperature,
                )
            except Exception as err:  # a broken case is reported, not fatal
                collected = Collected(error=f"{type(err).__name__}: {err}")
            record = case_record(case, system, collected)
            records.append(record)
            if not args.quiet:
                print(
                    f"{system} {number}/{len(cases)} {record['verdict'].upper()} "
                    f"{collected.seconds:.1f}s {case.task_id}: {case.sentence!r} -> "
                    f"{(collected.error or collected.answer)[:120]!r}",
                    flush=True,
                )
    return records


def forwarded(args: argparse.Namespace, src: Sources) -> list[str]:
    """The options a baseline run of `ours` gets (besides --code, --base-url, --json)."""
    extra = ["--set", args.set, "--systems", "ours", "--quiet"]
    extra += ["--timeout", str(args.timeout), "--tries", str(args.tries)]
    for name, path in src.paths().items():
        extra += [f"--{name.replace('_', '-')}", str(path)]
    if args.count is not None:
        extra += ["--count", str(args.count)]
    if args.limit is not None:
        extra += ["--limit", str(args.limit)]
    if args.match:
        extra += ["--match", args.match]
    if args.temperature is not None:
        extra += ["--temperature", str(args.temperature)]
    return extra


def main() -> None:
    """Collect, judge, report."""
    from benchmarks._harness import machine, run

    args = parse(sys.argv[1:])
    src = sources(
        args.cache,
        args.datasets,
        args.synthetic_home,
        args.synthetic_home_component,
        args.openai_custom,
    )
    src.check()
    src.install()
    names = args.set.split(",")
    cases = [
        case
        for name in names
        for case in load_cases(src.datasets, name, args.count, args.limit)
    ]
    if args.match:
        cases = [case for case in cases if args.match in case.task_id]
    systems = args.systems.split(",")
    import homeassistant.const

    meta: dict[str, Any] = {
        "machine": machine(),
        "home_assistant": homeassistant.const.__version__,
        "code": str(CODE),
        "code_commit": _git_commit(CODE),
        "sources": {
            name: {"path": str(path), "commit": commit}
            for (name, path), commit in zip(
                src.paths().items(), src.commits().values(), strict=True
            )
        },
        "sets": names,
        "count": args.count,
        "limit": args.limit,
        "timeout": args.timeout,
        "tries": args.tries,
        "swama": args.swama,
        "temperature": args.temperature,
        "load_average_start": [round(x, 2) for x in os.getloadavg()],
    }
    print(meta["machine"])
    print(f"our code: {CODE} ({meta['code_commit']}); {len(cases)} cases of {names}")
    started = time.perf_counter()
    with model_url(args, any(s != "ha" for s in systems)) as base_url:
        meta["base_url"] = base_url
        if base_url:
            print(f"server: {base_url}{' (Swama filter)' if args.swama else ''}")
        records = run(lambda: run_cases(cases, systems, base_url, args))
        if args.swama and base_url:
            from benchmarks._swama_filter import filter_stats

            meta["swama_filter"] = filter_stats(base_url)
            print(f"Swama filter: {meta['swama_filter']}")
        results: dict[str, Any] = {}
        for system in systems:
            mine = [r for r in records if r["system"] == system]
            results[system] = {"summary": summary(mine), "cases": mine}
        if args.baseline and base_url:
            from benchmarks._real_home import run_baseline

            other = run_baseline(MODULE, args.baseline, base_url, forwarded(args, src))
            results[f"ours@{args.baseline}"] = other["systems"]["ours"]
            meta["baseline_commit"] = other["meta"]["code_commit"]
    meta["minutes"] = round((time.perf_counter() - started) / 60, 1)
    meta["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    print()
    print(table({name: part["summary"] for name, part in results.items()}))
    print(f"({meta['minutes']} min; passed/total (median seconds per case))")
    if args.json:
        Path(args.json).expanduser().write_text(
            json.dumps({"meta": meta, "systems": results}, indent=1, default=str),
            encoding="utf-8",
        )
        print(f"JSON: {args.json}")


if __name__ == "__main__":
    main()
