"""Prompt cache on a one-slot server: what each voice turn reads again, and its wait.

    .venv/bin/python -m benchmarks.prompt_cache [--base-url URL] [--old-ref db9e897]
                                               [--scenarios a,b,c,d,e] [--turns 10]
                                               [--variants old:on,new:on,new:off]

Swama keeps one cached prompt per model; llama.cpp does the same with
``--cache-ram 0 -np 1``. Without --base-url this starts the bundled model that
way (``LOCAL_ASSISTANT_MODEL_CACHE_RAM=0 scripts/local-model start PORT``; run
``scripts/local-model setup`` once first) and stops it at the end.

Two versions of the integration run the same scenarios against the same
server in the same run, alternately: the code at ``--old-ref`` (checked out
into a temporary ``git worktree``) and this working tree. Each scenario runs
in a child process (``python -m benchmarks.prompt_cache run ...`` with the
version's folder first on ``sys.path``) with a real Home Assistant: one
template light exposed to Assist, HA's Assist API, our agent at temperature
0, two admin users, an AI Task agent. Every request the agent's client sends
(replies, fact extraction, our warm requests, AI tasks) is timed there and
read for llama-server's ``timings`` (``prompt_n`` read, ``cache_n`` reused),
so both versions are measured the same way, without their own figures.

Per turn: the re-read fraction of the turn's first completion, ``prompt_n /
(prompt_n + cache_n)``, and its time to the first streamed token (from
sending the request). Between turns the user pauses until the server has been
idle for 3 s (extraction and re-warm done; their server time is reported).

Scenarios:
  a  one speaker, 10 turns, fact extraction local (and off, for the baseline)
  b  two speakers alternating, 10 turns, extraction local
  c  the turn right after a fact change (a fact added by hand; extraction off)
  d  an AI task, then a voice turn at once: the pipeline's async_prepare, the
     text 2 s later (extraction off)
  e  as a, but the user speaks again 5 s after each answer, whether or not the
     background work is done
  f  one speaker, 10 turns, an agent with a beach wind sensor whose value
     changes before each turn (the live data in the prompt); extraction off
  g  one speaker, 10 turns, a chat-only agent (no HA API: HA writes the time,
     to the second, into its prompt); extraction off

Variants: ``on`` local extraction as the code has it; ``off`` no extraction.
(A third variant, the extractor's task sent after the conversation's prefix,
was removed with that hook in issue 22: see docs/benchmarks.md.)
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
import contextlib
from dataclasses import dataclass
import json
import os
from pathlib import Path
import statistics
import subprocess
import sys
import time
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MODEL_ALIAS = "qwen2.5-coder-0.5b-instruct"
AGENT_ID = "conversation.local_assistant"
TASK_ENTITY = "ai_task.local_assistant_ai_task"
OUT = REPO / "benchmarks" / "out"

TEXTS = [
    "Turn on the kitchen light.",
    "My dog is called Bolt.",
    "I live in Tarifa, by the sea.",
    "Turn off the kitchen light.",
    "I like kitesurfing when the wind is strong.",
    "What is my dog called?",
    "My sister Ana visits us on Sundays.",
    "Turn on the kitchen light.",
    "I drink green tea in the morning.",
    "Where do I live?",
]
FACTS = [
    "The user's favourite colour is green.",
    "The user works night shifts at the hospital.",
    "The user's cat is called Miso.",
]
SCENARIOS: dict[str, list[tuple[str, str]]] = {
    "a": [("old", "on"), ("new", "on"), ("old", "off"), ("new", "off")],
    "b": [("old", "on"), ("new", "on")],
    "c": [("old", "off"), ("new", "off")],
    "d": [("old", "off"), ("new", "off")],
    "e": [("old", "on"), ("new", "on"), ("new", "off")],
    "f": [("old", "off"), ("new", "off")],
    "g": [("old", "off"), ("new", "off")],
}  # fmt: skip
WIND_SENSOR = "sensor.beach_wind"
# f: the wind sensor in the option of code before and after the per-kind
# sea options (today's code reads the old list only without them).
AGENT_OPTIONS: dict[str, dict[str, Any]] = {
    "f": {"sea_entities": [WIND_SENSOR], "sea_wind": [WIND_SENSOR]},
    "g": {"llm_hass_api": []},
}
# Seconds between an answer and the next turn; otherwise until the server idles.
SHORT_PAUSE = {"e": 5.0}
IDLE_SECONDS = 3.0


# --- the child: one scenario with one version of the code --------------------------


@dataclass
class Request:
    """One request the agent's client sent, timed, with llama-server's figures."""

    kind: str  # reply, extraction, warm, task
    step: int
    sent: float
    first: float | None = None
    end: float | None = None
    prompt_n: int | None = None
    cache_n: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "step": self.step,
            "ttft_ms": None if self.first is None else 1000 * (self.first - self.sent),
            "total_ms": None if self.end is None else 1000 * (self.end - self.sent),
            "prompt_n": self.prompt_n,
            "cache_n": self.cache_n,
        }


class Recorder:
    """Wraps the entry's client: every request is timed and its timings read."""

    def __init__(self, client: Any) -> None:
        completions = client.chat.completions
        self._original: Callable[..., Any] = completions.create
        completions.create = self._create
        self.requests: list[Request] = []
        self.step = 0
        self.phase = "background"  # "reply" or "task" while a step runs
        self.in_flight = 0
        self.last_activity = time.monotonic()

    def _read(self, request: Request, payload: Any) -> None:
        timings = (getattr(payload, "model_extra", None) or {}).get("timings")
        if timings:
            request.prompt_n = timings.get("prompt_n")
            request.cache_n = timings.get("cache_n")

    async def _create(self, **kwargs: Any) -> Any:
        body = {k: v for k, v in kwargs.items() if k != "extra_body"}
        body.update(kwargs.get("extra_body") or {})
        if body.get("max_tokens") == 1:
            kind = "warm"
        elif not body.get("stream"):
            kind = "extraction"
        else:
            kind = self.phase if self.phase != "background" else "reply?"
        request = Request(kind, self.step, time.monotonic())
        self.requests.append(request)
        self.in_flight += 1
        try:
            result = await self._original(**kwargs)
        except BaseException:
            self._done(request)
            raise
        if not body.get("stream"):
            self._read(request, result)
            self._done(request)
            return result
        inner = result._iterator

        async def spy() -> Any:
            try:
                async for chunk in inner:
                    self._read(request, chunk)
                    if request.first is None and chunk.choices:
                        delta = chunk.choices[0].delta
                        if delta.content or delta.tool_calls:
                            request.first = time.monotonic()
                    yield chunk
            finally:
                self._done(request)

        result._iterator = spy()
        return result

    def _done(self, request: Request) -> None:
        if request.end is None:
            request.end = time.monotonic()
            self.in_flight -= 1
            self.last_activity = time.monotonic()


async def _pause(entry: Any, recorder: Recorder) -> None:
    """The user is silent until the server has been idle for IDLE_SECONDS."""
    extractor = entry.runtime_data.memory.extractor
    keeper = getattr(entry.runtime_data, "prompt_cache", None)
    while True:
        if extractor is not None:
            await extractor.async_wait_idle()
        if keeper is not None:
            await keeper.async_wait_idle()
        idle = time.monotonic() - recorder.last_activity
        if recorder.in_flight == 0 and idle >= IDLE_SECONDS:
            return
        await asyncio.sleep(max(IDLE_SECONDS - idle, 0.2))


def _steps(scenario: str, turns: int) -> list[tuple[str, ...]]:
    texts = [TEXTS[n % len(TEXTS)] for n in range(turns)]
    if scenario in ("a", "e", "f", "g"):
        return [("turn", "ada", text) for text in texts]
    if scenario == "b":
        return [
            ("turn", "ada" if n % 2 == 0 else "kai", text)
            for n, text in enumerate(texts)
        ]
    if scenario == "c":
        steps: list[tuple[str, ...]] = [
            ("turn", "ada", TEXTS[1]),
            ("turn", "ada", TEXTS[2]),
        ]
        for fact, text in zip(FACTS, (TEXTS[4], TEXTS[6], TEXTS[8]), strict=True):
            steps += [("fact", "ada", fact), ("turn", "ada", text)]
        return steps
    if scenario == "d":
        steps = [("turn", "ada", TEXTS[1])]
        for text in (TEXTS[2], TEXTS[4], TEXTS[6]):
            steps += [("task",), ("prepare",), ("sleep", "2"), ("turn", "ada", text)]
        return steps
    raise SystemExit(f"unknown scenario {scenario}")


async def _run_child(args: argparse.Namespace) -> None:
    began = time.monotonic()
    code = Path(args.code).resolve()
    from benchmarks.real_model import real_home_assistant

    # After that import, which puts this checkout first: the code to measure.
    sys.path.insert(0, str(code))
    from homeassistant.components import ai_task, conversation
    from homeassistant.const import CONF_MODEL
    from homeassistant.core import Context

    import custom_components.local_assistant as package
    from custom_components.local_assistant.const import (
        CONF_EXTRACTION,
        CONF_MAX_TOKENS,
        CONF_TEMPERATURE,
        CONF_TIMEOUT,
        EXTRACTION_LOCAL,
        EXTRACTION_OFF,
        SUBENTRY_AI_TASK,
    )

    assert Path(package.__file__).resolve().is_relative_to(code)
    extraction = EXTRACTION_OFF if args.variant == "off" else EXTRACTION_LOCAL
    task_agent = {
        "subentry_type": SUBENTRY_AI_TASK,
        "data": {CONF_MODEL: MODEL_ALIAS, CONF_TEMPERATURE: 0.0, CONF_MAX_TOKENS: 48},
        "title": "Local Assistant AI Task",
        "unique_id": None,
    }
    results: list[dict[str, Any]] = []
    async with real_home_assistant(
        args.base_url,
        options={CONF_EXTRACTION: extraction, CONF_TIMEOUT: 600},
        subentries=(task_agent,),
        agent=AGENT_OPTIONS.get(args.scenario),
    ) as (hass, entry):
        users = {
            name: await hass.auth.async_create_user(
                name.title(), group_ids=["system-admin"]
            )
            for name in ("ada", "kai")
        }
        recorder = Recorder(entry.runtime_data.client)
        memory = entry.runtime_data.memory
        # Start from a cache that holds none of our prompts.
        await entry.runtime_data.client.chat.completions.create(
            model=MODEL_ALIAS,
            messages=[{"role": "user", "content": "Say OK."}],
            max_tokens=2,
        )
        await _pause(entry, recorder)
        recorder.requests.clear()

        for number, step in enumerate(_steps(args.scenario, args.turns), 1):
            recorder.step = number
            kind = step[0]
            record: dict[str, Any] = {"step": number, "kind": kind}
            if kind == "turn" and args.scenario == "f":
                # The beach station reports a new wind before each turn.
                hass.states.async_set(
                    WIND_SENSOR,
                    str(8 + number),
                    {
                        "unit_of_measurement": "m/s",
                        "device_class": "wind_speed",
                        "friendly_name": "Beach wind",
                    },
                )
            if kind == "turn":
                _kind, speaker, text = step
                record.update(speaker=speaker, text=text)
                recorder.phase = "reply"
                turn_log = getattr(entry.runtime_data, "turns", None)
                before = len(turn_log.recent()) if turn_log is not None else 0
                started = time.monotonic()
                result = await conversation.async_converse(
                    hass,
                    text,
                    None,
                    Context(user_id=users[speaker].id),
                    agent_id=AGENT_ID,
                )
                record["turn_ms"] = 1000 * (time.monotonic() - started)
                record["answer"] = str(result.response.speech["plain"]["speech"])[:80]
                recorder.phase = "background"
                # None when HA carried the command out itself (no model request).
                if turn_log is not None and len(recent := turn_log.recent()) > before:
                    record["agent_figures"] = recent[-1]
            elif kind == "fact":
                await memory.async_add_fact(f"user:{users[step[1]].id}", step[2])
            elif kind == "task":
                recorder.phase = "task"
                await ai_task.async_generate_data(
                    hass,
                    task_name="Note",
                    entity_id=TASK_ENTITY,
                    instructions="Write a one-line note that the garage door is open.",
                )
                recorder.phase = "background"
            elif kind == "prepare":
                await conversation.async_prepare_agent(hass, AGENT_ID, "en")
            elif kind == "sleep":
                await asyncio.sleep(float(step[1]))
            if args.scenario in SHORT_PAUSE:
                if kind == "turn":
                    await asyncio.sleep(SHORT_PAUSE[args.scenario])
            elif kind in ("turn", "fact") and args.scenario != "d":
                await _pause(entry, recorder)
            results.append(record)
        if args.scenario == "d" or args.scenario in SHORT_PAUSE:
            await _pause(entry, recorder)
        if memory.extractor is not None:
            record = {"extraction": memory.diagnostics().get("extraction")}
            results.append(record)

    Path(args.out).write_text(
        json.dumps(
            {
                "steps": results,
                "requests": [request.as_dict() for request in recorder.requests],
                "load": os.getloadavg(),
                "seconds": time.monotonic() - began,
            },
            indent=1,
        )
    )


# --- the parent: the server, both versions, the tables --------------------------------


@contextlib.contextmanager
def _one_slot_server(base_url: str | None) -> Any:
    from benchmarks._real_home import started_server

    one_slot = {"LOCAL_ASSISTANT_MODEL_CACHE_RAM": "0"}
    with started_server(base_url, one_slot) as (url, _port):
        yield url


def _run(
    code: Path,
    scenario: str,
    variant: str,
    base_url: str,
    turns: int,
    lock: str | None,
) -> dict[str, Any]:
    OUT.mkdir(exist_ok=True)
    name = "new" if code == REPO else "old"
    out = OUT / f"prompt_cache-{scenario}-{name}-{variant}.json"
    subprocess.run(
        [
            *(["flock", lock] if lock else []),
            sys.executable,
            "-m",
            "benchmarks.prompt_cache",
            "run",
            "--code",
            str(code),
            "--scenario",
            scenario,
            "--variant",
            variant,
            "--base-url",
            base_url,
            "--turns",
            str(turns),
            "--out",
            str(out),
        ],
        cwd=REPO,
        check=True,
    )
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def _turns(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Per turn: its first reply request and the background work after it."""
    requests = data["requests"]
    rows = []
    for step in data["steps"]:
        if step.get("kind") != "turn":
            continue
        mine = [r for r in requests if r["step"] == step["step"]]
        replies = [r for r in mine if r["kind"] == "reply"]
        first = replies[0] if replies else {}
        read, cached = first.get("prompt_n"), first.get("cache_n")
        background = [r for r in mine if r["kind"] in ("extraction", "warm")]
        rows.append(
            {
                "step": step["step"],
                "speaker": step["speaker"],
                "text": step["text"],
                "reread": None if read is None else read / (read + (cached or 0)),
                "prompt": None if read is None else read + (cached or 0),
                "read": read,
                "ttft_ms": first.get("ttft_ms"),
                "replies": len(replies),
                "background_ms": sum(r["total_ms"] or 0 for r in background),
                "background_read": sum(r["prompt_n"] or 0 for r in background),
                "kinds": [r["kind"] for r in mine],
            }
        )
    return rows


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f} %"


def _sec(value: float | None) -> str:
    return "-" if value is None else f"{value / 1000:.2f} s"


def _report(
    scenario: str, runs: dict[tuple[str, str], dict[str, Any]]
) -> dict[str, Any]:
    print(f"\n## Scenario {scenario}")
    turns = {key: _turns(data) for key, data in runs.items()}
    keys = list(runs)
    header = " | ".join(f"{code} {variant}: re-read, TTFT" for code, variant in keys)
    print(f"| # | speaker | text | {header} |")
    print("|---|---|---|" + "---|" * len(keys))
    length = max(len(rows) for rows in turns.values())
    for index in range(length):
        cells = []
        label = ("", "", "")
        for key in keys:
            rows = turns[key]
            if index >= len(rows):
                cells.append("-")
                continue
            row = rows[index]
            label = (str(index + 1), row["speaker"], row["text"])
            cells.append(
                f"{_pct(row['reread'])} ({row['read']}/{row['prompt']}), {_sec(row['ttft_ms'])}"
            )
        print(f"| {' | '.join(label)} | {' | '.join(cells)} |")
    summary: dict[str, Any] = {}
    print()
    for key in keys:
        rows = turns[key][1:]  # turns 2+
        if scenario == "c":
            rows = [
                r for r in turns[key] if r["text"] in (TEXTS[4], TEXTS[6], TEXTS[8])
            ]
        if scenario == "d":
            rows = turns[key][1:]
        figures = {
            "median_reread": _median([r["reread"] for r in rows]),
            "median_ttft_ms": _median([r["ttft_ms"] for r in rows]),
            "median_background_ms": _median([r["background_ms"] for r in turns[key]]),
            "median_background_read": _median(
                [r["background_read"] for r in turns[key]]
            ),
            "load": runs[key]["load"],
            "seconds": runs[key]["seconds"],
        }
        summary[f"{key[0]} {key[1]}"] = figures
        print(
            f"{key[0]} {key[1]}: median re-read {_pct(figures['median_reread'])}, "
            f"median TTFT {_sec(figures['median_ttft_ms'])}, background per turn "
            f"{_sec(figures['median_background_ms'])} ({figures['median_background_read']} "
            f"tokens read), load after {' '.join(f'{x:.2f}' for x in figures['load'])}, "
            f"run {figures['seconds']:.0f} s"
        )
    if ("new", "on") in turns and ("new", "off") in turns:
        for variant in ("on",):
            ratios = [
                on["ttft_ms"] / off["ttft_ms"]
                for on, off in zip(
                    turns[("new", variant)][1:], turns[("new", "off")][1:], strict=False
                )
                if on["ttft_ms"] and off["ttft_ms"]
            ]
            ratio = _median(ratios)
            summary[f"ttft_ratio_new_{variant}_vs_off"] = ratio
            print(
                f"TTFT new {variant} / new off, same turn: median "
                f"{'-' if ratio is None else f'{ratio:.2f}'}x, max "
                f"{max(ratios):.2f}x"
                if ratios
                else "no ratios"
            )
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command")
    child = sub.add_parser("run")
    child.add_argument("--code", required=True)
    child.add_argument("--scenario", required=True)
    child.add_argument("--variant", required=True)
    child.add_argument("--base-url", required=True)
    child.add_argument("--turns", type=int, default=10)
    child.add_argument("--out", required=True)
    parser.add_argument("--base-url", help="a one-slot server to use instead")
    parser.add_argument("--old-ref", default="db9e897")
    parser.add_argument("--scenarios", default="a,b,c,d,e")
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument(
        "--variants",
        help="only these runs, e.g. old:on,new:on,new:off (default: each scenario's all)",
    )
    parser.add_argument(
        "--lock",
        help="run each scenario under `flock LOCK` (a machine shared with other model runs)",
    )
    args = parser.parse_args()
    if args.command == "run":
        asyncio.run(_run_child(args))
        return
    from benchmarks._real_home import baseline_checkout

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    summaries: dict[str, Any] = {}
    with (
        _one_slot_server(args.base_url) as base_url,
        baseline_checkout(args.old_ref) as old,
    ):
        print(f"server: {base_url}; old code: {args.old_ref} in {old}")
        for scenario in args.scenarios.split(","):
            runs: dict[tuple[str, str], dict[str, Any]] = {}
            for code, variant in SCENARIOS[scenario]:
                if args.variants and f"{code}:{variant}" not in args.variants.split(
                    ","
                ):
                    continue
                folder = old if code == "old" else REPO
                print(
                    f"scenario {scenario}: {code} code, extraction {variant} ...",
                    flush=True,
                )
                runs[(code, variant)] = _run(
                    folder, scenario, variant, base_url, args.turns, args.lock
                )
            summaries[scenario] = _report(scenario, runs)
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    (OUT / "prompt_cache-summary.json").write_text(json.dumps(summaries, indent=1))


if __name__ == "__main__":
    main()
