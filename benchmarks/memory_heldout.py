"""Memory on the held-out sets of issue 22: five languages, rich statements, voice.

    scripts/local-model setup        # once
    flock /tmp/local-model.lock .venv/bin/python -u -m benchmarks.memory_heldout \\
        [--sets extraction,voice] [--extractor local|hosted] [--file PATH] \\
        [--voice-file PATH] [--speakers a,b] [--cases id,id] [--base-url URL] \\
        [--json OUT] [-v]

The held-out sets (benchmarks/sets/memory_set_multilingual.yaml and
benchmarks/sets/memory_voice_commands.yaml, schema in
benchmarks/sets/README_memory.md) were written before the change and are never
tuned on; `--file benchmarks/memory_tuning_multilingual.yaml` runs the tuning
set of the same schema, reported apart. benchmarks/memory_eval.py stays the
English tuning set of issue 12.

A real Home Assistant (benchmarks/_harness.py: a small home exposed to Assist,
HA's intents) with our agent, default memory options, each speaker an HA user
who talks in their own language (HA's intent recognition in that language).

**extraction** (`--extractor local`, the default): the agent and its `local`
extractor on the bundled model (`scripts/local-model start` on a free port,
unless `--base-url`). After every turn the extractor and the server's
scheduler finish before the next turn. Per language:

* recall: facts and rich-statement entries that no later correction replaces,
  matched by one active fact at the end (every keyword group);
* false facts per 10 non-facts: facts added while a non-fact was extracted;
* corrections applied: no active fact matches the replaced fact's keywords,
  one in the history does, and (unless a removal) an active fact matches the
  new keywords;
* repeats kept once: one active fact, not two, matches the repeated fact.

`--extractor hosted`: the replies come from a scripted fake server ("OK.")
and the extractor is `hosted`, pointed at a second fake server that stands
in for a hosted model: it answers every task as a perfect extractor would
from the set's labels (one ADD per fact and per rich entry, the corrected
fact REPLACEd or REMOVEd by the number the task showed, NONE otherwise). It
measures the path after the model (HA's reading of the turn, the request,
the parser, the limits, the merge): whether every fact a hosted model finds
is kept. No model runs, so it needs no lock.

**voice** (bundled model): each case starts from a store holding exactly its
`given_facts` (and the other speaker's), says `text` once as the speaker, waits
for the extractor, and checks the stored facts (and, for `read`, the spoken
answer) as README_memory.md says. A change made by the memory tools shows as a
pinned fact or a history entry "removed"; one the extractor made later as an
extracted fact or "dropped": both are reported.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
import json
import os
from pathlib import Path
import re
import statistics
import sys
import time
from typing import Any
import unicodedata

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import chat_session
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import MockConfigEntry
import yaml

from benchmarks import _harness as h
from benchmarks._judge import agent_sentences, said_any
from benchmarks.memory_eval import MODEL_ALIAS, model_server
from custom_components.local_assistant.const import (
    CONF_EXTRACTION,
    CONF_EXTRACTION_API_KEY,
    CONF_EXTRACTION_BASE_URL,
    CONF_EXTRACTION_MODEL,
    CONF_MAX_TOKENS,
    CONF_TEMPERATURE,
    CONF_TIMEOUT,
    EXTRACTION_HOSTED,
)
from tests.helpers import fake_openai as fake

REPO = Path(__file__).resolve().parents[1]
HELD_OUT = REPO / "benchmarks" / "sets" / "memory_set_multilingual.yaml"
VOICE = REPO / "benchmarks" / "sets" / "memory_voice_commands.yaml"
LANGUAGES = ("en", "es", "de", "fr", "nl")
TARGETS = {"recall": 0.80, "false_per_10": 1.0, "corrections": 0.70}
HOSTED_MODEL = "hosted-stand-in"
# Labels of non-facts that ask for a change: "nothing was changed" may answer them.
ASKS_A_CHANGE = frozenset({"device command", "timer", "one-off request"})
SENTENCES = agent_sentences(REPO)
WITHHELD = SENTENCES.withheld


# --- keywords (README_memory.md) ------------------------------------------------------


def fold(text: str) -> str:
    """Case, accents and punctuation folded; words kept apart by single spaces."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    bare = "".join(char for char in decomposed if not unicodedata.combining(char))
    return " ".join(re.sub(r"[^\w\s]", " ", bare).split())


def group_matches(text: str, group: str) -> bool:
    """One alternative of the group occurs in the text (substring, folded)."""
    folded = fold(text)
    return any(fold(alt) and fold(alt) in folded for alt in str(group).split("|"))


def matches(text: str, keywords: Iterable[Any]) -> bool:
    """Every keyword group matches this one text."""
    groups = [str(group) for group in keywords]
    return bool(groups) and all(group_matches(text, group) for group in groups)


# --- the extraction set ------------------------------------------------------------------


@dataclass
class Item:
    """One judged fact: a plain fact or an entry of a rich statement."""

    id: str
    keywords: list[str]
    category: str
    text: str
    adds_to: str | None = None


@dataclass
class Turn:
    """One line of a speaker's turns."""

    kind: str  # fact, correction, repeat, non_fact
    text: str
    items: list[Item] = field(default_factory=list)  # fact: one, or the rich entries
    replaces: str | None = None
    removes: bool = False
    keywords: list[str] = field(default_factory=list)  # correction: new content
    of: str | None = None
    label: str = ""


@dataclass
class Speaker:
    """A speaker of the set."""

    name: str
    lang: str
    turns: list[Turn]


def load_extraction_set(path: Path) -> list[Speaker]:
    """The set, speaker by speaker, in order."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    speakers = []
    for name, spec in data["speakers"].items():
        turns = []
        for raw in spec["turns"]:
            kind = next(
                k for k in ("fact", "correction", "repeat", "non_fact") if k in raw
            )
            turn = Turn(kind=kind, text=str(raw[kind]), label=str(raw.get("kind", "")))
            if kind == "fact":
                entries = raw.get("facts") or [raw]
                turn.items = [
                    Item(
                        id=str(entry["id"]),
                        keywords=[str(k) for k in entry["keywords"]],
                        category=str(entry.get("category", "")),
                        text=turn.text,
                        adds_to=raw.get("adds_to") if entry is raw else None,
                    )
                    for entry in entries
                ]
            elif kind == "correction":
                turn.replaces = str(raw["replaces"])
                turn.removes = bool(raw.get("removes"))
                turn.keywords = [str(k) for k in raw.get("keywords", [])]
            elif kind == "repeat":
                turn.of = str(raw["of"])
            turns.append(turn)
        speakers.append(Speaker(name, str(spec["lang"]), turns))
    return speakers


@dataclass
class Tally:
    """Figures of one language (or all)."""

    kept: int = 0
    recalled: int = 0
    corrections: int = 0
    applied: int = 0
    removals: int = 0
    removals_applied: int = 0
    repeats: int = 0
    repeats_once: int = 0
    non_facts: int = 0
    false_facts: int = 0
    rich_entries: int = 0
    rich_recalled: int = 0
    unlabelled: int = 0
    # The reply, on turns whose label asks for no change (every turn but a
    # device command, a timer or a one-off request): answered with the agent's
    # own "nothing was changed" instead of an answer.
    plain_turns: int = 0
    withheld: int = 0
    # ... and with the agent's acknowledgment (a statement the model only
    # said back).
    acknowledged: int = 0
    misses: list[str] = field(default_factory=list)
    false_examples: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.recalled / self.kept if self.kept else 0.0

    @property
    def false_per_10(self) -> float:
        return 10 * self.false_facts / self.non_facts if self.non_facts else 0.0

    @property
    def correction_rate(self) -> float:
        return self.applied / self.corrections if self.corrections else 0.0

    def add(self, other: Tally) -> None:
        for name in [
            "kept",
            "recalled",
            "corrections",
            "applied",
            "removals",
            "removals_applied",
            "repeats",
            "repeats_once",
            "non_facts",
            "false_facts",
            "rich_entries",
            "rich_recalled",
            "unlabelled",
            "plain_turns",
            "withheld",
            "acknowledged",
        ]:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.misses += other.misses
        self.false_examples += other.false_examples

    def meets(self) -> bool:
        return (
            self.recall >= TARGETS["recall"]
            and self.false_per_10 <= TARGETS["false_per_10"]
            and self.correction_rate >= TARGETS["corrections"]
        )


def score_speaker(
    speaker: Speaker,
    active: list[str],
    history: list[str],
    false_by_turn: dict[int, list[str]],
) -> Tally:
    """One speaker's final facts against the labels (README_memory.md)."""
    tally = Tally()
    items = {item.id: item for turn in speaker.turns for item in turn.items}
    replaced = {turn.replaces for turn in speaker.turns if turn.kind == "correction"}
    labelled: list[list[str]] = []
    for index, turn in enumerate(speaker.turns):
        if turn.kind == "fact":
            rich = len(turn.items) > 1
            for item in turn.items:
                labelled.append(item.keywords)
                if item.id in replaced:
                    continue
                ok = any(matches(fact, item.keywords) for fact in active)
                tally.kept += 1
                tally.recalled += ok
                tally.rich_entries += rich
                tally.rich_recalled += rich and ok
                if not ok:
                    tally.misses.append(
                        f"{speaker.name} {item.id} {item.keywords}: {turn.text}"
                    )
        elif turn.kind == "correction":
            old = items[turn.replaces or ""].keywords
            tally.corrections += 1
            tally.removals += turn.removes
            gone = not any(matches(fact, old) for fact in active)
            archived = any(matches(fact, old) for fact in history)
            new_ok = turn.removes or any(matches(f, turn.keywords) for f in active)
            ok = gone and archived and new_ok
            tally.applied += ok
            tally.removals_applied += ok and turn.removes
            if turn.keywords:
                labelled.append(turn.keywords)
            if not ok:
                why = ", ".join(
                    reason
                    for reason, bad in (
                        ("old still active", not gone),
                        ("old not in history", not archived),
                        ("new not active", not new_ok),
                    )
                    if bad
                )
                tally.misses.append(f"{speaker.name} correction ({why}): {turn.text}")
        elif turn.kind == "repeat":
            of = items[turn.of or ""].keywords
            count = sum(matches(fact, of) for fact in active)
            tally.repeats += 1
            tally.repeats_once += count == 1
        else:
            tally.non_facts += 1
            added = false_by_turn.get(index, [])
            tally.false_facts += len(added)
            tally.false_examples += [f"{turn.text!r} -> {fact!r}" for fact in added]
    tally.unlabelled += sum(
        not any(matches(fact, keywords) for keywords in labelled) for fact in active
    )
    return tally


# --- Home Assistant and the agent ---------------------------------------------------


async def async_setup_entry(
    hass: HomeAssistant, base_url: str, options: dict[str, Any]
) -> tuple[MockConfigEntry, str]:
    """The agent as a user sets it up; replies at temperature 0."""
    data = h.agent_data(model=MODEL_ALIAS)
    data.update({CONF_TEMPERATURE: 0.0, CONF_MAX_TOKENS: 256})
    return await h.async_setup_agent(
        hass, base_url, options={CONF_TIMEOUT: 600, **options}, data=data
    )


async def say(
    hass: HomeAssistant, agent_id: str, user_id: str, text: str, language: str
) -> str:
    """One turn in its own conversation; the spoken answer."""
    answer, _ = await say_with_calls(hass, agent_id, user_id, text, language)
    return answer


async def say_with_calls(
    hass: HomeAssistant, agent_id: str, user_id: str, text: str, language: str
) -> tuple[str, list[str]]:
    """One turn in its own conversation; the spoken answer and the tool calls.

    Each call as ``name {args} -> result``, read from the turn's chat log.
    """
    with chat_session.async_get_chat_session(hass) as session:
        result = await conversation.async_converse(
            hass,
            text,
            session.conversation_id,
            Context(user_id=user_id),
            language=language,
            agent_id=agent_id,
        )
        with conversation.async_get_chat_log(hass, session) as chat_log:
            calls = {
                call.id: f"{call.tool_name} {json.dumps(call.tool_args)}"
                for item in chat_log.content
                if isinstance(item, conversation.AssistantContent)
                for call in item.tool_calls or ()
            }
            shown = [
                f"{calls.pop(item.tool_call_id, item.tool_name)} -> "
                f"{json.dumps(item.tool_result, default=str)[:100]}"
                for item in chat_log.content
                if isinstance(item, conversation.ToolResultContent)
            ]
    speech = str(result.response.speech.get("plain", {}).get("speech", ""))
    return speech, [*shown, *(f"{call} -> (no result)" for call in calls.values())]


async def settle(entry: MockConfigEntry) -> None:
    """The extractor and every background call of ours are done."""
    runtime = entry.runtime_data
    if runtime.memory.extractor is not None:
        await runtime.memory.extractor.async_wait_idle()
    await runtime.prompt_cache.async_wait_idle()
    await runtime.scheduler.async_wait_idle()


def facts_of(entry: MockConfigEntry, speaker: str) -> tuple[dict[str, str], list[str]]:
    """Active facts (id -> text) and history texts of a speaker."""
    book = entry.runtime_data.memory.facts.get(speaker)
    if book is None:
        return {}, []
    return {f.id: f.text for f in book.facts}, [e.fact.text for e in book.history]


# --- the hosted stand-in -------------------------------------------------------------


def _shown(body: dict[str, Any]) -> tuple[list[str], str]:
    """The notes and the quoted message of an extraction request."""
    content = str(body["messages"][-1]["content"])
    notes: list[str] = []
    said = ""
    for line in content.splitlines():
        if line.startswith("Message: "):
            said = json.loads(line.removeprefix("Message: "))
        else:
            number, dot, quoted = line.partition(". ")
            if dot and number.isdigit():
                notes.append(json.loads(quoted))
    return notes, said


def keyword_sentence(keywords: list[str]) -> str:
    """A fact a perfect extractor could write: each group's first alternative.

    With a word in front, so that a fact of numbers only ("82") is still a
    sentence, as a real model would write it.
    """
    return "Fact: " + " ".join(str(group).split("|")[0] for group in keywords) + "."


def oracle(speakers: list[Speaker]) -> Callable[[dict[str, Any]], fake.Reply]:
    """A stand-in for a hosted model that extracts exactly what the labels say."""
    by_text: dict[str, tuple[Speaker, Turn]] = {
        turn.text: (speaker, turn) for speaker in speakers for turn in speaker.turns
    }

    def number_of(notes: list[str], keywords: list[str]) -> int | None:
        for number, note in enumerate(notes, 1):
            if matches(note, keywords):
                return number
        return None

    def answer(body: dict[str, Any]) -> fake.Reply:
        notes, said = _shown(body)
        found = by_text.get(said)
        if found is None:
            return fake.text("NONE")
        speaker, turn = found
        items = {item.id: item for t in speaker.turns for item in t.items}
        lines: list[str] = []
        if turn.kind == "fact":
            lines = [f"ADD: {keyword_sentence(item.keywords)}" for item in turn.items]
        elif turn.kind == "correction":
            old = items[turn.replaces or ""].keywords
            number = number_of(notes, old)
            if turn.removes:
                lines = [f"REMOVE {number}"] if number else []
            elif number:
                lines = [f"REPLACE {number}: {keyword_sentence(turn.keywords)}"]
            else:
                lines = [f"ADD: {keyword_sentence(turn.keywords)}"]
        return fake.text("\n".join(lines) or "NONE")

    return answer


# --- running the extraction set -------------------------------------------------------------


async def run_extraction(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    agent_id: str,
    speakers: list[Speaker],
    verbose: bool,
) -> dict[str, Tally]:
    """Every speaker's turns in order; the tallies per language and overall."""
    tallies: dict[str, Tally] = defaultdict(Tally)
    for speaker in speakers:
        user = await hass.auth.async_create_user(speaker.name.capitalize())
        key = f"user:{user.id}"
        false_by_turn: dict[int, list[str]] = {}
        replies = Tally()
        for index, turn in enumerate(speaker.turns):
            before, _ = facts_of(entry, key)
            answer, calls = await say_with_calls(
                hass, agent_id, user.id, turn.text, speaker.lang
            )
            if turn.label not in ASKS_A_CHANGE:
                replies.plain_turns += 1
                replies.withheld += said_any(answer, WITHHELD) is not None
                replies.acknowledged += SENTENCES.acknowledges(answer)
            await settle(entry)
            after, _ = facts_of(entry, key)
            added = [
                text
                for fid, text in after.items()
                if fid not in before and text not in before.values()
            ]
            if turn.kind == "non_fact" and added:
                false_by_turn[index] = added
            if verbose:
                print(
                    f"[{speaker.name} {speaker.lang} {index + 1:2}] {turn.kind:10} "
                    f"{turn.text!r}\n      answer {answer[:80]!r}"
                )
                for call in calls:
                    print(f"      tool {call}")
                for text in added:
                    print(f"      + {text!r}")
                for fid, text in before.items():
                    if fid not in after:
                        print(f"      - {text!r}")
            else:
                print(".", end="", flush=True)
        active, history = facts_of(entry, key)
        tally = score_speaker(speaker, list(active.values()), history, false_by_turn)
        tally.add(replies)
        tallies[speaker.lang].add(tally)
        if verbose:
            print(f"   final {speaker.name}: {list(active.values())}")
    if not verbose:
        print()
    return dict(tallies)


def report_extraction(title: str, tallies: dict[str, Tally]) -> dict[str, Any]:
    """The table per language, the misses, and a JSON-able summary."""
    total = Tally()
    for tally in tallies.values():
        total.add(tally)
    rows = [*(lang for lang in LANGUAGES if lang in tallies), "all"]
    print(f"\n{title}")
    print(
        f"{'':6}{'recall':>16}{'rich entries':>16}{'false/10':>14}"
        f"{'corrections':>16}{'removals':>12}{'repeats once':>14}{'unlabelled':>12}"
        f"{'withheld':>10}{'acknowledged':>14}"
    )
    summary: dict[str, Any] = {}
    for lang in rows:
        t = total if lang == "all" else tallies[lang]
        print(
            f"{lang:6}{f'{t.recall:.0%} ({t.recalled}/{t.kept})':>16}"
            f"{f'{t.rich_recalled}/{t.rich_entries}':>16}"
            f"{f'{t.false_per_10:.1f} ({t.false_facts}/{t.non_facts})':>14}"
            f"{f'{t.correction_rate:.0%} ({t.applied}/{t.corrections})':>16}"
            f"{f'{t.removals_applied}/{t.removals}':>12}"
            f"{f'{t.repeats_once}/{t.repeats}':>14}{t.unlabelled:>12}"
            f"{f'{t.withheld}/{t.plain_turns}':>10}"
            f"{f'{t.acknowledged}/{t.plain_turns}':>14}"
        )
        summary[lang] = {
            "recall": [t.recalled, t.kept],
            "rich_entries": [t.rich_recalled, t.rich_entries],
            "false_facts": [t.false_facts, t.non_facts],
            "corrections": [t.applied, t.corrections],
            "removals": [t.removals_applied, t.removals],
            "repeats_once": [t.repeats_once, t.repeats],
            "unlabelled": t.unlabelled,
            "withheld": [t.withheld, t.plain_turns],
            "acknowledged": [t.acknowledged, t.plain_turns],
        }
    every = all(tallies[lang].meets() for lang in tallies)
    print(
        f"targets (recall >= 80 % in every language, <= 1 false fact per 10, "
        f"corrections >= 70 %): {'met' if every else 'not met'}"
    )
    print(f"missed ({len(total.misses)}):")
    for line in total.misses:
        print(f"  - {line}")
    for line in total.false_examples:
        print(f"  false fact: {line}")
    summary["targets_met"] = every
    return summary


# --- the voice set -----------------------------------------------------------------------


def load_voice_set(path: Path) -> list[dict[str, Any]]:
    """The voice commands, as written."""
    return list(yaml.safe_load(path.read_text(encoding="utf-8"))["commands"])


@dataclass
class VoiceResult:
    """One case's outcome."""

    id: str
    lang: str
    action: str
    ok: bool
    how: str
    answer: str
    detail: str = ""


async def run_voice_case(
    hass: HomeAssistant, entry: MockConfigEntry, agent_id: str, case: dict[str, Any]
) -> VoiceResult:
    """One case from its given facts; judged on the stored facts afterwards."""
    memory = entry.runtime_data.memory
    now = dt_util.utcnow().timestamp()
    tag = case["id"].replace("-", "")
    user = await hass.auth.async_create_user(f"{case['speaker']} {tag}")
    key = f"user:{user.id}"
    given = [str(text) for text in case["given_facts"]]
    for text in given:
        memory.facts.book(key).add_extracted(text, now)
    other_key = None
    other_given: list[str] = []
    if other := case.get("other_speaker_facts"):
        other_user = await hass.auth.async_create_user(f"{other['speaker']} {tag}")
        other_key = f"user:{other_user.id}"
        other_given = [str(text) for text in other["facts"]]
        for text in other_given:
            memory.facts.book(other_key).add_extracted(text, now)
    ids = {text: fid for fid, text in facts_of(entry, key)[0].items()}
    answer = await say(hass, agent_id, user.id, case["text"], case["lang"])
    await settle(entry)
    active, _history = facts_of(entry, key)
    book = memory.facts.get(key)
    expect = case.get("expect", {})
    action = case["action"]
    problems: list[str] = []
    how = "-"
    if action == "read":
        missing = [
            g for g in expect.get("keywords", []) if not group_matches(answer, g)
        ]
        if missing:
            problems.append(f"answer lacks {missing}")
        leaked = [
            g for g in expect.get("must_not_contain", []) if group_matches(answer, g)
        ]
        if leaked:
            problems.append(f"answer names {leaked}")
        if sorted(active.values()) != sorted(given):
            problems.append("the store changed")
    elif action == "forget":
        gone = given[int(expect["gone"])]
        if ids[gone] in active:
            problems.append(f"still active: {gone!r}")
        for index in expect.get("kept", []):
            if ids[given[int(index)]] not in active:
                problems.append(f"lost: {given[int(index)]!r}")
        reasons = [
            e.reason for e in (book.history if book else []) if e.fact.text == gone
        ]
        how = ",".join(reasons) or "-"
    elif action == "remember":
        new = [
            fact
            for fact in (book.facts if book else [])
            if fact.id not in ids.values() and matches(fact.text, expect["keywords"])
        ]
        if not new:
            problems.append(f"no fact matches {expect['keywords']}")
        else:
            how = "tool (pinned)" if new[0].pinned else "extraction"
        for index in expect.get("kept", []):
            if ids[given[int(index)]] not in active:
                problems.append(f"lost: {given[int(index)]!r}")
    elif action == "none":
        changed = sorted(active.values()) != sorted(given)
        if changed:
            problems.append(f"memory changed: {sorted(active.values())}")
    if other_key is not None:
        other_active, _ = facts_of(entry, other_key)
        if sorted(other_active.values()) != sorted(other_given):
            problems.append("the other speaker's facts changed")
        if any(text in active.values() for text in other_given):
            problems.append("another speaker's fact was given to the speaker")
    return VoiceResult(
        case["id"], case["lang"], action, not problems, how, answer, "; ".join(problems)
    )


def report_voice(results: list[VoiceResult]) -> dict[str, Any]:
    """Per action and language, and every case that failed."""
    print("\nvoice memory commands")
    actions = ("read", "forget", "remember", "none")
    print(f"{'':6}" + "".join(f"{a:>12}" for a in actions) + f"{'all':>12}")
    summary: dict[str, Any] = {}
    # The set's own languages, in its order (a set may hold others than ours).
    for lang in [*dict.fromkeys(r.lang for r in results), "all"]:
        cells = []
        row: dict[str, Any] = {}
        for action in (*actions, None):
            chosen = [
                r
                for r in results
                if lang in ("all", r.lang) and (action is None or r.action == action)
            ]
            ok = sum(r.ok for r in chosen)
            cells.append(f"{ok}/{len(chosen)}" if chosen else "-")
            row[action or "all"] = [ok, len(chosen)]
        print(f"{lang:6}" + "".join(f"{cell:>12}" for cell in cells))
        summary[lang] = row
    for result in results:
        mark = "ok " if result.ok else "MISS"
        print(
            f"  {mark} {result.id:12} {result.action:8} via {result.how:14} "
            f"{result.answer[:70]!r} {result.detail}"
        )
    return summary


# --- main ---------------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> int:
    sets = args.sets.split(",")
    summary: dict[str, Any] = {"machine": h.machine(), "extractor": args.extractor}
    print(summary["machine"])
    started = time.monotonic()
    if "extraction" in sets:
        speakers = load_extraction_set(Path(args.file))
        if args.speakers:
            wanted = set(args.speakers.split(","))
            speakers = [s for s in speakers if s.name in wanted]
        print(f"extraction set: {args.file} ({len(speakers)} speakers)")
        if args.extractor == "hosted":
            summary["extraction"] = await _hosted_extraction(speakers, args)
        else:
            with model_server(args.base_url) as base_url:
                async with h.home_assistant() as hass:
                    entry, agent_id = await async_setup_entry(hass, base_url, {})
                    tallies = await run_extraction(
                        hass, entry, agent_id, speakers, args.verbose
                    )
                    summary["extraction"] = report_extraction(
                        f"{Path(args.file).name}, local extractor (bundled model)",
                        tallies,
                    )
                    _print_calls(entry)
    if "voice" in sets:
        cases = load_voice_set(Path(args.voice_file))
        if args.cases:
            wanted = set(args.cases.split(","))
            cases = [c for c in cases if c["id"] in wanted]
        print(f"voice set: {args.voice_file} ({len(cases)} cases)")
        with model_server(args.base_url) as base_url:
            async with h.home_assistant() as hass:
                entry, agent_id = await async_setup_entry(hass, base_url, {})
                results = []
                for case in cases:
                    result = await run_voice_case(hass, entry, agent_id, case)
                    results.append(result)
                    if args.verbose:
                        print(f"  {case['id']}: {result.ok} {result.answer!r}")
                summary["voice"] = report_voice(results)
                summary["voice_cases"] = [vars(result) for result in results]
    summary["seconds"] = round(time.monotonic() - started)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return 0


async def _hosted_extraction(
    speakers: list[Speaker], args: argparse.Namespace
) -> dict[str, Any]:
    async with (
        fake.FakeOpenAIServer(models=[MODEL_ALIAS]) as replies,
        fake.FakeOpenAIServer(models=[HOSTED_MODEL], api_key="sk-hosted") as hosted,
        h.home_assistant() as hass,
    ):
        replies.responder = lambda _body: fake.text("OK.")
        hosted.responder = oracle(speakers)
        entry, agent_id = await async_setup_entry(
            hass,
            replies.base_url,
            {
                CONF_EXTRACTION: EXTRACTION_HOSTED,
                CONF_EXTRACTION_BASE_URL: hosted.base_url,
                CONF_EXTRACTION_API_KEY: "sk-hosted",
                CONF_EXTRACTION_MODEL: HOSTED_MODEL,
            },
        )
        tallies = await run_extraction(hass, entry, agent_id, speakers, args.verbose)
        result = report_extraction(
            f"{Path(args.file).name}, hosted path (a scripted stand-in that extracts "
            "what the labels say)",
            tallies,
        )
        _print_calls(entry)
        return result


def _print_calls(entry: MockConfigEntry) -> None:
    extractor = entry.runtime_data.memory.extractor
    if extractor is None:
        return
    stats = extractor.stats
    median = statistics.median(stats.call_times) if stats.call_times else 0.0
    print(
        f"extraction: {stats.calls} calls ({stats.call_seconds:.0f} s, median "
        f"{median:.2f} s), {stats.skipped} exchanges skipped, {stats.rejected_answers} "
        f"answers rejected, {stats.copied_examples} copied examples, "
        f"{stats.over_limit} additions over the limit, {stats.refused_edits} refused edits"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sets", default="extraction,voice")
    parser.add_argument("--extractor", choices=("local", "hosted"), default="local")
    parser.add_argument("--file", default=str(HELD_OUT))
    parser.add_argument("--voice-file", default=str(VOICE))
    parser.add_argument("--speakers", help="a comma-separated subset of the speakers")
    parser.add_argument("--cases", help="a comma-separated subset of the voice cases")
    parser.add_argument("--base-url", help="use this server instead of starting one")
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    sys.exit(h.run(lambda: run(args)))


if __name__ == "__main__":
    main()
