"""The live-question set (benchmarks/sets/live_questions.yaml) on the bundled model.

    .venv/bin/python -m benchmarks.live_set [--split tuning|held_out|all]
        [--languages en,de,fr,nl,es] [--limit N] [--swama] [--base-url URL]
        [--code DIR] [--baseline REF] [--json OUT] [--real-clock]

Each language runs in its home (benchmarks/_homes.py: the home's `live` block as a
template weather entity and sea sensors, the agent's live-data tools configured on
them and on the kite spot, HA's clock at the home's reference date and time). Each
question is a new voice request: the speaker's session is forgotten first and a new
conversation starts. The reply is timed with a chat log delta listener: the time to
the first streamed text (the whole reply when nothing was streamed) and to the full
reply.

Per question: did a live tool run (`local_weather_forecast`, `local_sea_conditions`,
HA's `GetLiveContext` / `HassGetWeather`); is the reply consistent with the data by
the README's `expect` rules (verdict in the question's language, values within
tolerance in the unit or an equivalent one, conditions, direction, tide trend; the
readers are in benchmarks/_judge.py); does it state a made-up value (a number with a
live-data unit that matches none of the home's live values nor a number of the
question); does it speak a placeholder ("[value from tool]"); did a device change;
and for the questions that need no live data, did the reply bring live data in (a
live tool ran or it states one of the home's live values).

Reported per language and per split half. `--real-clock` leaves HA's clock alone
(forecast day 0 = the real today) and skips the weekday questions, as the README
allows. `--weather-exposed`: the home's weather entity exposed to Assist and no
live-data option set (the agent as a user leaves it who has not picked a weather
entity), and only the questions a weather entity answers (WEATHER_ASKS) and those
that need no live data. `--rejudge OLD.json [...]` reads the replies of earlier runs again with
the current readers (no model). `--swama`: through benchmarks/_swama_filter. `--json OUT`: every question
with its reply, tool calls and results, and each check.
"""

from __future__ import annotations

import argparse
from pathlib import Path
import statistics
import sys
from typing import Any

from benchmarks._real_home import code_path

CODE = code_path(sys.argv)

from benchmarks import _judge as judge  # noqa: E402
from benchmarks._homes import (  # noqa: E402
    LANGUAGE_HOME,
    SEA_OPTIONS,
    SETS,
    BenchHome,
    add_arguments,
    agent_settings,
    code_commit,
    forecast_check,
    forwarded,
    jsonable,
    load_home,
    load_yaml,
    real_home,
    rejudge_files,
    run_cli,
)

LIVE_TOOLS = (
    "local_weather_forecast",
    "local_sea_conditions",
    "GetLiveContext",
    "HassGetWeather",
)
SPLITS = ("tuning", "held_out", "all")
WEEKDAY_ASK = "forecast_weekday"
# What a weather entity alone answers (wind, gusts and the sea come from the
# home's beach sensors in this set).
WEATHER_ASKS = frozenset(
    {
        "weather_now",
        "temperature_now",
        "rain_today",
        "rain_tomorrow",
        "temperature_tomorrow",
        "forecast_tomorrow",
        "forecast_weekday",
        "compare_tomorrow_today",
    }
)
# No live-data option: the agent's own weather and sea tools are off.
NO_LIVE_OPTIONS = {
    "weather_entity": None,
    "sea_entities": [],
    **{option: [] for option in SEA_OPTIONS.values()},
    "sea_other": [],
}


def questions_for(
    data: dict[str, Any],
    language: str,
    split: str,
    limit: int | None,
    weather_only: bool = False,
) -> list[dict[str, Any]]:
    chosen = [
        q
        for q in data["questions"]
        if q["language"] == language
        and split in ("all", q["split"])
        and (not weather_only or _asks(q) <= WEATHER_ASKS or _asks(q) == {"none"})
    ]
    return chosen[:limit] if limit else chosen


def _asks(question: dict[str, Any]) -> set[str]:
    asks = question["asks"]
    return {asks} if isinstance(asks, str) else set(asks)


def needs_live(question: dict[str, Any]) -> bool:
    return question["asks"] != "none"


def live_tools_of(tool_names: list[str]) -> list[str]:
    """The live tools among a turn's tool calls (HA prefixes some names)."""
    return [name for name in tool_names if name.rpartition("__")[2] in LIVE_TOOLS]


# ---------------------------------------------------------------------------
# Judging one answer


def expectations(question: dict[str, Any], reply: str) -> dict[str, Any]:
    """Each `expect` item of a live question, checked; `consistent` when all hold."""
    expect = question["expect"]
    language = question["language"]
    checks: dict[str, Any] = {}
    unclear: list[str] = []
    if "verdict" in expect:
        read = judge.verdict(reply, language, question["text"])
        checks["verdict"] = {"read": read, "ok": read == expect["verdict"]}
        if read is None:
            unclear.append("verdict")
    if values := expect.get("values"):
        checks["values"] = [
            {"what": v["what"], "ok": judge.value_stated(reply, v)} for v in values
        ]
    if conditions := expect.get("conditions"):
        named = {c: judge.condition_named(reply, c, language) for c in conditions}
        checks["conditions"] = {
            "named": {c: w for c, w in named.items() if w},
            "ok": any(named.values()),
        }
    if direction := expect.get("direction"):
        checks["direction"] = {
            "points": judge.compass_points(reply, language),
            "ok": judge.direction_named(reply, language, direction),
        }
    if trend := expect.get("trend"):
        read = judge.tide_trend(reply, language)
        checks["trend"] = {"read": read, "ok": read == trend}
        if read == "both":
            unclear.append("trend")
    oks = [
        item["ok"]
        for value in checks.values()
        for item in (value if isinstance(value, list) else [value])
    ]
    return {"checks": checks, "consistent": all(oks), "unclear": unclear}


def judge_answer(
    question: dict[str, Any],
    reply: str,
    tool_names: list[str],
    device_change: bool,
    home: dict[str, Any],
    sentences: judge.AgentSentences,
) -> dict[str, Any]:
    """Every check of one question (see the module docstring)."""
    values = judge.live_values(home["live"])
    bearings = judge.bearings(home["live"])
    live_tools = live_tools_of(tool_names)
    out: dict[str, Any] = {
        "withheld": judge.said_any(reply, sentences.withheld) is not None,
        "acknowledged": sentences.acknowledges(reply),
        "live_tools": live_tools,
        "made_up": judge.made_up_values(reply, values, bearings, question["text"]),
        "placeholders": judge.placeholders(reply),
        "device_change": device_change,
        "live_values_stated": judge.stated_live_values(reply, values, bearings),
    }
    if needs_live(question):
        out.update(expectations(question, reply))
    else:
        out["brought_live_data"] = bool(live_tools) or bool(out["live_values_stated"])
    return out


def flags(question: dict[str, Any], checks: dict[str, Any]) -> str:
    out = []
    if needs_live(question):
        out.append("consistent" if checks["consistent"] else "INCONSISTENT")
        out.append("tool" if checks["live_tools"] else "NO TOOL")
        if checks["unclear"]:
            out.append(f"(unclear: {','.join(checks['unclear'])})")
    elif checks["brought_live_data"]:
        out.append("LIVE DATA NOT ASKED FOR")
    else:
        out.append("ok")
    if checks["made_up"]:
        out.append(f"MADE-UP {checks['made_up']}")
    if checks["placeholders"]:
        out.append(f"PLACEHOLDER {checks['placeholders']}")
    if checks["device_change"]:
        out.append("DEVICE CHANGE")
    if checks["withheld"]:
        out.append("WITHHELD")
    return " ".join(out)


# ---------------------------------------------------------------------------
# Running


async def ask(
    bench: BenchHome, question: dict[str, Any], sentences: judge.AgentSentences
) -> dict[str, Any]:
    """One question as a new voice request; its record."""
    await bench.forget_session()
    result = await bench.converse(
        question["text"], language=question["language"], conversation_id=None
    )
    checks = judge_answer(
        question,
        result.reply,
        result.turn.tool_names,
        bool(result.changed) or bool(result.scripts_run),
        bench.home,
        sentences,
    )
    first = result.first_text_seconds
    record = {
        "id": question["id"],
        "split": question["split"],
        "asks": question["asks"],
        "text": question["text"],
        "expect": question["expect"],
        "reply": result.reply,
        "streamed": first is not None,
        "response_type": result.turn.response_type,
        "first_text_seconds": round(result.turn.seconds if first is None else first, 2),
        "seconds": round(result.turn.seconds, 2),
        "tool_calls": jsonable(result.turn.tool_calls),
        "tool_results": jsonable(result.turn.tool_results),
        "changed": result.changed,
        "scripts_run": result.scripts_run,
        "checks": checks,
    }
    print(
        f"[{question['language']}] {question['id']:<11} {question['split']:<8} "
        f"{question['text']!r}\n    -> {result.reply!r}\n"
        f"    {flags(question, checks)}; first text {record['first_text_seconds']} s, "
        f"full {record['seconds']} s; tools={result.turn.tool_names}",
        flush=True,
    )
    return record


def skipped(question: dict[str, Any], why: str) -> dict[str, Any]:
    return {
        "id": question["id"],
        "split": question["split"],
        "asks": question["asks"],
        "text": question["text"],
        "skipped": why,
    }


async def run_language(
    bench: BenchHome,
    questions: list[dict[str, Any]],
    sentences: judge.AgentSentences,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every question of one language in its home; the records and the clock seen."""
    clock = await forecast_check(bench)
    clock.pop("forecast")
    records = []
    for question in questions:
        if bench.clock is None and WEEKDAY_ASK in question["asks"]:
            records.append(skipped(question, "weekday question on the real clock"))
            continue
        records.append(await ask(bench, question, sentences))
    return records, clock


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def count(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of a set of question records (skipped ones left out)."""
    asked = [r for r in records if "skipped" not in r]
    live = [r for r in asked if r["asks"] != "none"]
    general = [r for r in asked if r["asks"] == "none"]
    return {
        "asked": len(asked),
        "skipped": len(records) - len(asked),
        "live": len(live),
        "consistent": sum(r["checks"]["consistent"] for r in live),
        "live_tool": sum(bool(r["checks"]["live_tools"]) for r in live),
        "consistent_with_tool": sum(
            r["checks"]["consistent"] and bool(r["checks"]["live_tools"]) for r in live
        ),
        "unclear": sum(bool(r["checks"]["unclear"]) for r in live),
        "made_up": sum(bool(r["checks"]["made_up"]) for r in asked),
        "placeholders": sum(bool(r["checks"]["placeholders"]) for r in asked),
        "device_changes": sum(r["checks"]["device_change"] for r in asked),
        "general": len(general),
        "general_with_live_data": sum(
            r["checks"]["brought_live_data"] for r in general
        ),
        "withheld": sum(r["checks"]["withheld"] for r in asked),
        # Older records (before the acknowledgment) count as none.
        "acknowledged": sum(bool(r["checks"].get("acknowledged")) for r in asked),
        "errors": sum(
            r["response_type"] == "error" and not r["checks"]["withheld"] for r in asked
        ),
        "median_first_text_seconds": _median([r["first_text_seconds"] for r in asked]),
        "median_seconds": _median([r["seconds"] for r in asked]),
        "streamed": sum(r["streamed"] for r in asked),
    }


def counts_by(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "all": count(records),
        "tuning": count([r for r in records if r["split"] == "tuning"]),
        "held_out": count([r for r in records if r["split"] == "held_out"]),
    }


async def main(args: argparse.Namespace, base_url: str) -> dict[str, Any]:
    data = load_yaml(SETS / "live_questions.yaml")
    sentences = judge.agent_sentences(CODE)
    results: dict[str, Any] = {
        "code": str(CODE),
        "commit": code_commit(CODE),
        "set": "benchmarks/sets/live_questions.yaml",
        "split": args.split,
        "swama": args.swama,
        "temperature": args.temperature,
        "weather_exposed": args.weather_exposed,
        "languages": {},
    }
    every: list[dict[str, Any]] = []
    for language in args.languages.split(","):
        questions = questions_for(
            data, language, args.split, args.limit, args.weather_exposed
        )
        home = load_home(LANGUAGE_HOME[language])
        assert all(q["home"] == home["home"]["id"] for q in questions)
        agent = agent_settings(args) or {}
        if args.weather_exposed:
            agent |= NO_LIVE_OPTIONS
        async with real_home(
            base_url, home=home, agent=agent, real_clock=args.real_clock
        ) as bench:
            if args.weather_exposed:
                expose_weather(bench)
            records, clock = await run_language(bench, questions, sentences)
        results["clock"] = "real" if bench.clock is None else "reference"
        results["languages"][language] = {
            "home": home["home"]["id"],
            "clock": clock,
            "counts": counts_by(records),
            "records": records,
        }
        every += records
    results["overall"] = counts_by(every)
    return results


def expose_weather(bench: BenchHome) -> None:
    """The home's weather entity exposed to Assist (the set's homes do not)."""
    from homeassistant.components.homeassistant.exposed_entities import (
        async_expose_entity,
    )

    weather = bench.home["live"]["weather"]["entity_id"]
    async_expose_entity(bench.real.hass, "conversation", weather, True)


def rejudge(results: dict[str, Any], code: Path) -> dict[str, Any]:
    """The records of an earlier run judged again with the current readers."""
    data = load_yaml(SETS / "live_questions.yaml")
    questions = {q["id"]: q for q in data["questions"]}
    sentences = judge.agent_sentences(code)
    every: list[dict[str, Any]] = []
    for one in results["languages"].values():
        home = load_home(one["home"])
        for record in one["records"]:
            if "skipped" in record:
                continue
            record["checks"] = judge_answer(
                questions[record["id"]],
                record["reply"],
                [name for name, _ in record["tool_calls"]],
                bool(record["changed"]) or bool(record["scripts_run"]),
                home,
                sentences,
            )
        one["counts"] = counts_by(one["records"])
        every += one["records"]
    results["overall"] = counts_by(every)
    results["rejudged"] = True
    return results


# ---------------------------------------------------------------------------
# Report


def report_line(label: str, c: dict[str, Any]) -> str:
    return (
        f"{label:<14} consistent {c['consistent']}/{c['live']} "
        f"(from a live tool {c['consistent_with_tool']}; a live tool ran "
        f"{c['live_tool']}/{c['live']}; unclear {c['unclear']}); "
        f"made-up {c['made_up']}; placeholders {c['placeholders']}; "
        f"device changes {c['device_changes']}; no-live answered with live data "
        f"{c['general_with_live_data']}/{c['general']}; withheld {c['withheld']}; "
        f"acknowledged {c.get('acknowledged', 0)}; "
        f"errors {c['errors']}; "
        f"first text {c['median_first_text_seconds']} s, full {c['median_seconds']} s"
        + (f"; skipped {c['skipped']}" if c["skipped"] else "")
    )


def report(label: str, results: dict[str, Any]) -> None:
    print(
        f"\n== {label} ({results['code']}, {results['commit']}, split {results['split']}"
        + (", through the Swama filter" if results.get("swama") else "")
        + f", clock: {results.get('clock')})"
    )
    for language, one in results["languages"].items():
        for half in ("tuning", "held_out", "all"):
            if one["counts"][half]["asked"] or half == "all":
                print(report_line(f"{language} {half}", one["counts"][half]))
    for half in ("tuning", "held_out", "all"):
        print(report_line(f"overall {half}", results["overall"][half]))
    for language, one in results["languages"].items():
        for r in one["records"]:
            if "skipped" in r:
                continue
            line = flags({"asks": r["asks"]}, r["checks"])
            if line in ("consistent tool", "ok"):
                continue
            print(f"  [{language}] {r['id']} {line}: {r['text']!r} -> {r['reply']!r}")


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--split", default="all", choices=SPLITS)
    parser.add_argument("--limit", type=int, help="questions per language")
    parser.add_argument(
        "--weather-exposed",
        action="store_true",
        help="the weather entity exposed, no live-data option; weather questions only",
    )
    args = parser.parse_args()
    if args.rejudge:
        rejudge_files(args, rejudge, report)
        return
    extra = ["--split", args.split]
    if args.limit:
        extra += ["--limit", str(args.limit)]
    if args.weather_exposed:
        extra.append("--weather-exposed")
    run_cli(
        "benchmarks.live_set",
        args,
        forwarded(args, extra),
        lambda base_url: main(args, base_url),
        report,
        f"live questions, split {args.split}, languages {args.languages}",
    )


if __name__ == "__main__":
    cli()
