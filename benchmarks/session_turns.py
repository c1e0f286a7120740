"""The session set (benchmarks/sets/session_turns*.yaml) on the bundled model, per language.

    .venv/bin/python -m benchmarks.session_turns [--set held_out|tuning]
        [--languages en,de,fr,nl,es] [--kinds command,follow_up,...] [--limit N]
        [--swama] [--base-url URL] [--code DIR] [--baseline REF] [--json OUT]
        [--real-clock]

`--set held_out` (the default) runs benchmarks/sets/session_turns.yaml, the held-out
half: report it, never tune on it. `--set tuning` runs
benchmarks/sets/session_turns_tuning.yaml, the tuning half (same schema, written
before the change it tunes and independently of the held-out file). The results'
"set" field names the file that was run; `--rejudge` reads the set named there
(held_out when an older JSON names none it knows). `--baseline` runs the same set.

Each language runs in its own home (benchmarks/_homes.py: a real HA built from
benchmarks/sets/homes/*.yaml, the agent on the bundled model, HA's clock at the
home's reference time). Episode by episode: the home back to its initial states, a
new conversation, then per turn: `before` applied through the helpers, the text sent
through HA's conversation API, states settled (scripts), and the turn judged as
benchmarks/sets/README.md says. The speaker is the same HA user for a whole language,
so the agent's session buffer carries across episodes, as in a real day.

Reported per language and overall: commands carried out (command + follow_up turns:
`after` / `after_any` met and nothing else changed), follow-ups carried out, false
claims (a command not carried out whose reply says it was done: claim phrases per
language in benchmarks/_judge.py), wrong actions (something changed that should not
have, in a command turn), changes by turns that asked for none, answers withheld (a
non-command turn answered with the agent's own "nothing was changed" / "couldn't
check" sentence, read from the measured checkout's translations), state questions
answered right (verdict, values), error replies, made-up values (a number with a
live-data unit that matches no live value of the home, no number of its devices, of
the turn's tool results or of the user's words), live data not asked for (a live value
stated in a turn that is no state question), repeated openings (the model's own
answers, no tool run, that open with the same three words as an earlier one of the
language's session: what a small model copies from its replayed answers), and the
median seconds per turn.
Every reply is printed. `--rejudge OLD.json [...]` reads the replies of earlier
runs again with the current readers (no model). `--kinds` counts only those kinds (episodes without one are
skipped; the other turns of a kept episode still run, for context). `--limit N`:
the first N kept episodes per language. `--swama`: through benchmarks/_swama_filter.
`--json OUT`: every turn with its text, reply, tool calls and results, changes and
verdicts.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
import statistics
import sys
from typing import Any

from benchmarks._real_home import code_path

CODE = code_path(sys.argv)

from benchmarks import _judge as judge  # noqa: E402
from benchmarks._homes import (  # noqa: E402
    LANGUAGE_HOME,
    SETS,
    BenchHome,
    BenchTurn,
    add_arguments,
    agent_settings,
    check_turn_states,
    code_commit,
    entities_of,
    forwarded,
    jsonable,
    load_home,
    load_yaml,
    real_home,
    rejudge_files,
    run_cli,
)

COMMAND_KINDS = ("command", "follow_up")
OTHER_KINDS = ("statement", "question_room", "state_question", "chitchat")
KINDS = COMMAND_KINDS + OTHER_KINDS
ACTIVE_STATES = ("on", "open", "locked")
# --set: which half of the session benchmark (benchmarks/sets/README.md).
SET_FILES = {
    "held_out": "session_turns.yaml",
    "tuning": "session_turns_tuning.yaml",
}
# Words that say a device is off / closed (the facts-only state question).
OFF_WORDS = {
    "en": ("off", "not on", "closed", "dark"),
    "de": ("aus", "ausgeschaltet", "nicht an"),
    "fr": ("éteint*", "fermé*"),
    "nl": ("uit", "niet aan"),
    "es": ("apagad*", "cerrad*"),
}


def set_path(name: str) -> Path:
    """The YAML file of a `--set` name."""
    return SETS / SET_FILES[name]


def set_label(name: str) -> str:
    """What the results' "set" field says for a `--set` name (a repo path)."""
    return f"benchmarks/sets/{SET_FILES[name]}"


def set_of_results(results: dict[str, Any]) -> str:
    """The `--set` name of stored results (held_out when the file is not known)."""
    stored = Path(str(results.get("set") or "")).name
    for name, file in SET_FILES.items():
        if stored == file:
            return name
    return "held_out"


def episodes_for(
    data: dict[str, Any], language: str, kinds: tuple[str, ...], limit: int | None
) -> list[dict[str, Any]]:
    """The language's episodes that have a turn of `kinds`, at most `limit`."""
    chosen = [
        episode
        for episode in data["episodes"]
        if episode["language"] == language
        and any(turn["kind"] in kinds for turn in episode["turns"])
    ]
    return chosen[:limit] if limit else chosen


# ---------------------------------------------------------------------------
# Judging one turn


def facts_named(reply: str, language: str, home: dict[str, Any], facts: list) -> bool:
    """Facts-only state question (heuristic): every active device named, no
    inactive one named unless the reply also says off / closed."""
    entities = entities_of(home)
    for fact in facts:
        entity = entities[fact["entity"]]
        names = [entity["name"], *(entity.get("aliases") or ())]
        named = judge.has_words(reply, names) is not None
        if str(fact["state"]) in ACTIVE_STATES and not named:
            return False
        if (
            str(fact["state"]) not in ACTIVE_STATES
            and named
            and not judge.has_words(reply, OFF_WORDS[language])
        ):
            return False
    return True


def judge_state_question(
    turn: dict[str, Any], reply: str, language: str, home: dict[str, Any]
) -> dict[str, Any]:
    """Verdict read, values found and whether the answer is right."""
    expect = turn.get("expect") or {}
    out: dict[str, Any] = {}
    right = True
    if "verdict" in expect:
        read = judge.verdict(reply, language, turn["text"])
        out["verdict_read"] = read
        out["verdict_unclear"] = read is None
        right &= read == expect["verdict"]
    if values := expect.get("values"):
        found = [judge.value_stated(reply, value) for value in values]
        out["values_found"] = found
        right &= all(found)
    if "verdict" not in expect and not values and expect.get("facts"):
        out["facts_heuristic"] = facts_named(reply, language, home, expect["facts"])
        right &= out["facts_heuristic"]
    out["right"] = bool(right)
    return out


def judge_reply(
    turn: dict[str, Any],
    reply: str,
    response_type: str,
    language: str,
    home: dict[str, Any],
    sentences: judge.AgentSentences,
    tool_results: Any = None,
) -> dict[str, Any]:
    """What the reply says: withheld, error, claim, the state question's answer,
    made-up values, live data no one asked for."""
    withheld = judge.said_any(reply, sentences.withheld)
    error = withheld is None and (
        response_type == "error" or judge.said_any(reply, sentences.errors) is not None
    )
    out: dict[str, Any] = {
        "error": error,
        "withheld": withheld is not None,
        "acknowledged": sentences.acknowledges(reply),
        "claim_phrase": None
        if error or withheld
        else judge.claim_phrase(reply, language, turn["text"]),
    }
    if turn["kind"] == "state_question":
        out["state_question"] = judge_state_question(turn, reply, language, home)
    out.update(judge_values(turn, reply, home, tool_results))
    return out


def judge_values(
    turn: dict[str, Any], reply: str, home: dict[str, Any], tool_results: Any
) -> dict[str, Any]:
    """Numbers with a live-data unit ("15,1 kn", "17 °C") that match nothing the
    turn could know: no live value of the home, no number of its devices (as set
    by the turn's `before`), of this turn's tool results or of the user's words.
    And for turns that are no state question, live values stated anyway."""
    live = home.get("live")
    values = judge.live_values(live) if live else []
    bearings = judge.bearings(live) if live else []
    known = [
        *numbers_in(home.get("entities")),
        *numbers_in(turn.get("before")),
        *numbers_in(tool_results),
    ]
    # Brightness is 0-255 in HA and a percentage when spoken.
    known += [round(n * 100 / 255) for n in known if 0 < n <= 255]
    made_up = [
        text
        for text in judge.made_up_values(reply, values, bearings, turn["text"])
        if not any(
            abs(number - value) <= 0.51
            for value in judge.bare_numbers(text)
            for number in known
        )
    ]
    stated = judge.stated_live_values(reply, values, bearings) if values else []
    return {
        "made_up": made_up,
        "live_not_asked": stated if turn["kind"] != "state_question" else [],
    }


def numbers_in(data: Any) -> list[float]:
    """Every number in a nested structure (numbers written as text too)."""
    if isinstance(data, bool) or data is None:
        return []
    if isinstance(data, int | float):
        return [float(data)]
    if isinstance(data, str):
        return judge.bare_numbers(data)
    if isinstance(data, dict):
        return [n for value in data.values() for n in numbers_in(value)]
    if isinstance(data, list | tuple):
        return [n for value in data for n in numbers_in(value)]
    return []


def combine(
    kind: str, states: dict[str, Any], said: dict[str, Any], reply: str
) -> dict[str, Any]:
    """The turn's verdicts from what the home did (`states`) and what was said."""
    verdicts = {**states, **said}
    if kind in COMMAND_KINDS:
        verdicts["false_claim"] = (
            not verdicts["carried_out"] and said["claim_phrase"] is not None
        )
    else:
        verdicts["ordinary"] = (
            bool(reply.strip())
            and not verdicts["changed"]
            and not said["withheld"]
            and not said["error"]
        )
    return verdicts


def heard_before(
    turn: dict[str, Any],
    streamed: str,
    reply: str,
    language: str,
    verdicts: dict[str, Any],
) -> dict[str, Any] | None:
    """Text streamed before the final answer (words before a tool call): the
    voice pipeline speaks it as soon as a call follows it, so it is heard even
    though the turn's speech is the answer after the call. None when nothing
    but the answer streamed; else the text, and whether it claims a change
    that did not happen (a command not carried out, or any turn that changed
    nothing)."""
    before = streamed.removesuffix(reply) if streamed.endswith(reply) else streamed
    if not any(char.isalpha() for char in before):
        return None
    done = verdicts.get("carried_out", verdicts.get("changed"))
    return {
        "text": before,
        "false_claim": not done
        and judge.claim_phrase(before, language, turn["text"]) is not None,
    }


def judge_states(
    turn: dict[str, Any], result: BenchTurn, home: dict[str, Any]
) -> dict[str, Any]:
    """What the turn did to the home, against `after` / `after_any` / `after: none`."""
    states = check_turn_states(home, turn, result.before, result.after)
    out: dict[str, Any] = {
        "unexpected_changes": {k: list(v) for k, v in states.unexpected.items()},
        "scripts_run": result.scripts_run,
    }
    if turn["kind"] in COMMAND_KINDS:
        out.update(
            expected_met=states.expected_met,
            missed=states.missed,
            carried_out=bool(states.expected_met) and not states.unexpected,
            wrong_action=bool(states.unexpected),
        )
    else:
        out["changed"] = bool(states.unexpected) or bool(result.scripts_run)
    return out


STATE_KEYS = (
    "unexpected_changes",
    "scripts_run",
    "expected_met",
    "missed",
    "carried_out",
    "wrong_action",
    "changed",
)


def turn_flags(kind: str, verdicts: dict[str, Any]) -> str:
    """A short label for the printed line."""
    flags = []
    if kind in COMMAND_KINDS:
        flags.append("DONE" if verdicts["carried_out"] else "not done")
        if verdicts["false_claim"]:
            flags.append("FALSE CLAIM")
        if verdicts["wrong_action"]:
            flags.append("WRONG ACTION")
    else:
        if verdicts["changed"]:
            flags.append("CHANGED")
        if verdicts["withheld"]:
            flags.append("WITHHELD")
        if sq := verdicts.get("state_question"):
            flags.append("right" if sq["right"] else "WRONG ANSWER")
            if sq.get("verdict_unclear"):
                flags.append("(verdict unclear)")
    if verdicts.get("made_up"):
        flags.append(f"MADE-UP {verdicts['made_up']}")
    if verdicts.get("live_not_asked"):
        flags.append(f"LIVE DATA NOT ASKED FOR {verdicts['live_not_asked']}")
    if verdicts["error"]:
        flags.append("ERROR")
    return " ".join(flags) or "ok"


# ---------------------------------------------------------------------------
# Running


async def run_episode(
    bench: BenchHome,
    episode: dict[str, Any],
    kinds: tuple[str, ...],
    sentences: judge.AgentSentences,
) -> list[dict[str, Any]]:
    """One episode in one new conversation; a record per turn."""
    language = episode["language"]
    reset_missed = await bench.reset()
    conversation_id = f"session-turns-{episode['id']}-{id(bench):x}"
    records = []
    for turn in episode["turns"]:
        before_missed = await bench.apply(turn.get("before"))
        result = await bench.converse(
            turn["text"], language=language, conversation_id=conversation_id
        )
        said = judge_reply(
            turn,
            result.reply,
            result.turn.response_type,
            language,
            bench.home,
            sentences,
            jsonable(result.turn.tool_results),
        )
        verdicts = combine(
            turn["kind"], judge_states(turn, result, bench.home), said, result.reply
        )
        verdicts["heard_before"] = heard_before(
            turn, result.streamed_text, result.reply, language, verdicts
        )
        record = {
            "id": turn["id"],
            "episode": episode["id"],
            "kind": turn["kind"],
            "counted": turn["kind"] in kinds,
            "text": turn["text"],
            "reply": result.reply,
            "streamed_text": result.streamed_text,
            "response_type": result.turn.response_type,
            "seconds": round(result.turn.seconds, 2),
            "first_text_seconds": None
            if result.first_text_seconds is None
            else round(result.first_text_seconds, 2),
            "tool_calls": jsonable(result.turn.tool_calls),
            "tool_results": jsonable(result.turn.tool_results),
            "by_home_assistant": result.turn.by_home_assistant,
            "changed": result.changed,
            "before_not_reached": reset_missed + before_missed,
            "verdicts": verdicts,
        }
        reset_missed = []
        records.append(record)
        print(
            f"[{language}] {turn['id']:<8} {turn['kind']:<14} {turn['text']!r}\n"
            f"    -> {result.reply!r}\n"
            f"    {turn_flags(turn['kind'], verdicts)}; {result.turn.seconds:.1f} s; "
            f"tools={result.turn.tool_names}; changed={result.changed}",
            flush=True,
        )
    return records


def repeated_openings(records: list[dict[str, Any]]) -> int:
    """The model's own answers (no tool ran, not the agent's sentences) that open
    with the same three words as an earlier such answer of the language's session:
    what a small model copies from its replayed answers ("Yes, I would ...")."""
    seen: set[tuple[str, tuple[str, ...]]] = set()
    repeated = 0
    for record in records:
        verdicts = record["verdicts"]
        if record["tool_calls"] or verdicts["error"] or verdicts["withheld"]:
            continue
        opening = tuple(judge.words(record["reply"] or "")[:3])
        if len(opening) < 3:
            continue
        key = (record["id"].split("-")[0], opening)
        repeated += key in seen
        seen.add(key)
    return repeated


def count(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of a set of turn records (only those counted)."""
    counted = [r for r in records if r["counted"]]
    commands = [r for r in counted if r["kind"] in COMMAND_KINDS]
    follow_ups = [r for r in commands if r["kind"] == "follow_up"]
    others = [r for r in counted if r["kind"] not in COMMAND_KINDS]
    questions = [r for r in others if r["kind"] == "state_question"]
    seconds = [r["seconds"] for r in counted]
    first = [
        r["first_text_seconds"] if r["first_text_seconds"] is not None else r["seconds"]
        for r in counted
    ]
    v = [r["verdicts"] for r in counted]
    return {
        "turns": len(counted),
        "kinds": dict(Counter(r["kind"] for r in counted)),
        "commands": len(commands),
        "carried_out": sum(r["verdicts"]["carried_out"] for r in commands),
        # Of those, carried out by HA's own reading of the words (strict, the
        # follow-up and phrase readings), not by a call of the model's. Older
        # records (before this count) count as none.
        "carried_out_by_ha": sum(
            r["verdicts"]["carried_out"] and bool(r.get("by_home_assistant"))
            for r in commands
        ),
        "follow_ups": len(follow_ups),
        "follow_ups_carried_out": sum(r["verdicts"]["carried_out"] for r in follow_ups),
        "false_claims": sum(r["verdicts"]["false_claim"] for r in commands),
        # Text heard before the answer (before a tool call), and of it, claims
        # of a change that did not happen; older records count as none.
        "heard_before": sum(bool(x.get("heard_before")) for x in v),
        "heard_false_claims": sum(
            bool((x.get("heard_before") or {}).get("false_claim")) for x in v
        ),
        "wrong_actions": sum(r["verdicts"]["wrong_action"] for r in commands),
        "non_commands": len(others),
        "non_command_changes": sum(r["verdicts"]["changed"] for r in others),
        "withheld": sum(r["verdicts"]["withheld"] for r in others),
        # Older records (before the acknowledgment) count as none.
        "acknowledged": sum(bool(r["verdicts"].get("acknowledged")) for r in others),
        "ordinary": sum(r["verdicts"]["ordinary"] for r in others),
        "state_questions": len(questions),
        "state_questions_right": sum(
            r["verdicts"]["state_question"]["right"] for r in questions
        ),
        "verdicts_unclear": sum(
            bool(r["verdicts"]["state_question"].get("verdict_unclear"))
            for r in questions
        ),
        "errors": sum(x["error"] for x in v),
        # Older records (before the value checks) count as none: --rejudge them.
        "made_up": sum(bool(x.get("made_up")) for x in v),
        "live_not_asked": sum(bool(x.get("live_not_asked")) for x in v),
        "before_not_reached": sum(bool(r["before_not_reached"]) for r in counted),
        # Every turn: an uncounted one is still in the session the model copies.
        "repeated_openings": repeated_openings(records),
        "median_seconds": round(statistics.median(seconds), 2) if seconds else None,
        "median_first_text_seconds": round(statistics.median(first), 2)
        if first
        else None,
    }


async def main(args: argparse.Namespace, base_url: str) -> dict[str, Any]:
    """Every chosen language in its home, on this checkout's code."""
    data = load_yaml(set_path(args.set))
    sentences = judge.agent_sentences(CODE)
    kinds = tuple(args.kinds.split(","))
    results: dict[str, Any] = {
        "code": str(CODE),
        "commit": code_commit(CODE),
        "set": set_label(args.set),
        "swama": args.swama,
        "temperature": args.temperature,
        "kinds": list(kinds),
        "languages": {},
    }
    for language in args.languages.split(","):
        chosen = episodes_for(data, language, kinds, args.limit)
        home = load_home(LANGUAGE_HOME[language])
        assert all(e["home"] == home["home"]["id"] for e in chosen)
        records: list[dict[str, Any]] = []
        async with real_home(
            base_url,
            home=home,
            agent=agent_settings(args),
            real_clock=args.real_clock,
        ) as bench:
            results["clock"] = "real" if bench.clock is None else "reference"
            await bench.forget_session()
            for episode in chosen:
                records += await run_episode(bench, episode, kinds, sentences)
        results["languages"][language] = {
            "home": home["home"]["id"],
            "clock": None if bench.clock is None else bench.clock.isoformat(),
            "counts": count(records),
            "records": records,
        }
    every = [r for lang in results["languages"].values() for r in lang["records"]]
    results["overall"] = count(every)
    return results


def rejudge(results: dict[str, Any], code: Path) -> dict[str, Any]:
    """The records of an earlier run judged again (replies only; states as stored).

    For a change of the readers in benchmarks/_judge.py without running the model:
    the agent's sentences are read from `code` (the checkout that was measured).
    The turns come from the set named in `results["set"]` (held_out if unknown).
    """
    data = load_yaml(set_path(set_of_results(results)))
    turns = {t["id"]: t for e in data["episodes"] for t in e["turns"]}
    sentences = judge.agent_sentences(code)
    every = []
    for language, one in results["languages"].items():
        home = load_home(one["home"])
        for record in one["records"]:
            turn = turns[record["id"]]
            states = {k: v for k, v in record["verdicts"].items() if k in STATE_KEYS}
            said = judge_reply(
                turn,
                record["reply"],
                record["response_type"],
                language,
                home,
                sentences,
                record.get("tool_results"),
            )
            record["verdicts"] = combine(turn["kind"], states, said, record["reply"])
        one["counts"] = count(one["records"])
        every += one["records"]
    results["overall"] = count(every)
    results["rejudged"] = True
    return results


# ---------------------------------------------------------------------------
# Report


def _share(done: int, total: int) -> str:
    return f"{done}/{total}" + (f" ({100 * done / total:.0f} %)" if total else "")


def report_line(label: str, c: dict[str, Any]) -> str:
    return (
        f"{label:<8} commands carried out {_share(c['carried_out'], c['commands'])}"
        f" (by HA's reading {c.get('carried_out_by_ha', 0)}); "
        f"follow-ups {c['follow_ups_carried_out']}/{c['follow_ups']}; "
        f"false claims {c['false_claims']}; wrong actions {c['wrong_actions']}; "
        f"heard before the answer {c.get('heard_before', 0)} "
        f"(false claims {c.get('heard_false_claims', 0)}); "
        f"changes by non-commands {c['non_command_changes']}/{c['non_commands']}; "
        f"withheld {c['withheld']}/{c['non_commands']}; "
        f"acknowledged {c.get('acknowledged', 0)}/{c['non_commands']}; "
        f"state questions right {c['state_questions_right']}/{c['state_questions']}"
        f" (verdict unclear {c['verdicts_unclear']}); errors {c['errors']}; "
        f"made-up values {c.get('made_up', 0)}; "
        f"live data not asked for {c.get('live_not_asked', 0)}/{c['turns'] - c['state_questions']}; "
        f"repeated openings {c.get('repeated_openings', 0)}; "
        f"median turn {c['median_seconds']} s, first text {c['median_first_text_seconds']} s"
    )


def report(label: str, results: dict[str, Any]) -> None:
    """Per language and overall, then the turns that went wrong."""
    print(
        f"\n== {label} ({results['code']}, {results['commit']}"
        + f", set {results.get('set')}"
        + (", through the Swama filter" if results.get("swama") else "")
        + f", clock: {results.get('clock')})"
    )
    for language, one in results["languages"].items():
        print(report_line(language, one["counts"]))
    print(report_line("all", results["overall"]))
    for language, one in results["languages"].items():
        for r in one["records"]:
            if not r["counted"]:
                continue
            flags = turn_flags(r["kind"], r["verdicts"])
            if flags in ("DONE", "ok", "right"):
                continue
            print(f"  [{language}] {r['id']} {flags}: {r['text']!r} -> {r['reply']!r}")


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"of {KINDS}")
    parser.add_argument("--limit", type=int, help="episodes per language")
    parser.add_argument(
        "--set",
        default="held_out",
        choices=tuple(SET_FILES),
        help="held_out: sets/session_turns.yaml (report only); "
        "tuning: sets/session_turns_tuning.yaml",
    )
    args = parser.parse_args()
    if args.rejudge:
        rejudge_files(args, rejudge, report)
        return
    extra = ["--set", args.set, "--kinds", args.kinds]
    if args.limit:
        extra += ["--limit", str(args.limit)]
    run_cli(
        "benchmarks.session_turns",
        args,
        forwarded(args, extra),
        lambda base_url: main(args, base_url),
        report,
        f"session turns, set {args.set}, languages {args.languages}",
    )


if __name__ == "__main__":
    cli()
