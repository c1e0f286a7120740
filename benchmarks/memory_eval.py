"""Memory quality on the real path: what the extractor keeps of what people say.

    scripts/local-model setup        # once
    flock /tmp/local-model.lock .venv/bin/python -m benchmarks.memory_eval
        [--speakers anna,ben] [--base-url URL] [--no-legacy] [-v]

Without --base-url it starts the bundled model (llama-server with
Qwen2.5-Coder-0.5B) with `scripts/local-model start` on a free port and stops it
at the end.

A real Home Assistant (benchmarks/_harness.py: a small home exposed to Assist,
HA's intent component) with our agent on that server and default memory
settings: `local` extraction on the agent's own server, 30 facts per speaker.
Four household members, each an HA user, talk to the agent through
`conversation.async_converse`, one turn after the other, as in
benchmarks/memory_set.yaml (personal statements, corrections and removals,
repeats, non-facts; some Spanish). The agent answers at temperature 0, so a run
can be repeated.

What each exchange carries besides the words, as the agent will fill it: whether
the turn made a tool call (read from the chat log) and the intent HA's own
recognizer finds in the sentence (`default_agent.async_recognize_intent`, strict
intents only; `--intent loose` or `off` to change). If the agent already passes
them to `Memory.record_exchange`, its values are kept.

Two extractors see the same exchanges, in the same run:

* the entry's own extractor: the production path (since issue 22 one task per
  exchange: the speaker's facts, numbered, and the user's words; the answer
  edits the facts by number);
* the prompt before issue 12: the extractor prompt, parser and merge of
  commit LEGACY_COMMIT, read with `git show`, asked for the whole updated list
  after each exchange; `--no-legacy` skips it.

The multilingual sets of issue 22 (held-out and tuning) run with
benchmarks/memory_heldout.py.

After every turn each extractor finishes before the next turn starts (the
production one first, right after the reply). Reported per extractor:

* recall: statements (not later corrected) whose keywords all occur in one
  active fact at the end;
* false facts per 10 non-facts: facts added while extracting a non-fact;
* corrections applied: the old fact in the history, no active fact still saying
  the old thing (matching the old keywords, not the new ones, and not negated:
  "The user no longer has the Zoe." says it is over), the new content active;
* duplicates: labelled statements matched by more than one active fact;
* extraction calls, their total and median time, exchanges skipped.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
import contextlib
from dataclasses import dataclass, field
import importlib.util
import os
from pathlib import Path
import re
import statistics
import subprocess
import sys
import tempfile
import time
from types import ModuleType
from typing import Any
import unicodedata

from homeassistant.components import conversation
from homeassistant.components.conversation.agent_manager import get_agent_manager
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_API_KEY
from homeassistant.core import Context
from homeassistant.helpers import chat_session, entity_registry as er
from pytest_homeassistant_custom_component.common import MockConfigEntry
import yaml

from benchmarks import _harness as h
from custom_components.local_assistant.const import (
    CONF_BASE_URL,
    CONF_MAX_TOKENS,
    CONF_TEMPERATURE,
    CONF_TIMEOUT,
    DEFAULT_MAX_FACTS,
    DOMAIN,
    SUBENTRY_CONVERSATION,
)
from custom_components.local_assistant.memory.extraction import Exchange

REPO = Path(__file__).resolve().parents[1]
SET_FILE = Path(__file__).with_name("memory_set.yaml")
SCRIPT = REPO / "scripts" / "local-model"
MODEL_ALIAS = "qwen2.5-coder-0.5b-instruct"
# Today's extractor (before issue 12): its prompt, parser and full-list merge.
LEGACY_COMMIT = "db9e897"
LEGACY_MODULES = ("session", "facts", "extraction_prompt")
LEGACY_MAX_TOKENS = 1024  # what it asked for
TARGETS = {"recall": 0.80, "false_per_10": 1.0, "corrections": 0.70, "duplicates": 0}


# --- the labelled set ----------------------------------------------------------------


@dataclass
class Turn:
    """One line of the set."""

    speaker: str
    kind: str  # fact, correction, repeat, non_fact
    text: str
    lang: str = "en"
    id: str | None = None
    keywords: list[str] = field(default_factory=list)
    replaces: str | None = None
    of: str | None = None
    category: str = ""
    label: str = ""


def load_set(path: Path = SET_FILE) -> dict[str, list[Turn]]:
    """The set, per speaker, in order."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    speakers: dict[str, list[Turn]] = {}
    for speaker, items in data["speakers"].items():
        turns = []
        for item in items:
            kind = next(
                k for k in ("fact", "correction", "repeat", "non_fact") if k in item
            )
            turns.append(
                Turn(
                    speaker=speaker,
                    kind=kind,
                    text=item[kind],
                    lang=item.get("lang", "en"),
                    id=item.get("id"),
                    keywords=[str(k) for k in item.get("keywords", [])],
                    replaces=item.get("replaces"),
                    of=item.get("of"),
                    category=item.get("category", ""),
                    label=item.get("kind", ""),
                )
            )
        speakers[speaker] = turns
    return speakers


def _fold(text: str) -> str:
    text = text.replace("\u2019", "'").casefold().replace("n't", " not")
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


_NEGATED = re.compile(r"\b(not|no|never|longer|nunca|ya no)\b")


def negated(text: str) -> bool:
    """The fact says something is no longer so ("The user no longer has the Zoe.")."""
    return bool(_NEGATED.search(_fold(text)))


def matches(text: str, keywords: list[str]) -> bool:
    """Every keyword group has an alternative starting a word of the text."""
    folded = _fold(text)
    return all(
        any(
            re.search(r"\b" + re.escape(_fold(alt)), folded) for alt in group.split("|")
        )
        for group in keywords
    )


# --- scoring ------------------------------------------------------------------------------


@dataclass
class Tally:
    """One extractor's results."""

    name: str
    kept: int = 0
    recalled: int = 0
    corrections: int = 0
    applied: int = 0
    non_facts: int = 0
    false_facts: int = 0
    duplicates: int = 0
    unlabelled: int = 0
    calls: int = 0
    seconds: float = 0.0
    call_times: list[float] = field(default_factory=list)
    skipped: int = 0
    rejected: int = 0
    by_category: dict[str, list[int]] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)
    false_examples: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.recalled / self.kept if self.kept else 0.0

    @property
    def false_per_10(self) -> float:
        return 10 * self.false_facts / self.non_facts if self.non_facts else 0.0

    @property
    def corrections_rate(self) -> float:
        return self.applied / self.corrections if self.corrections else 0.0

    def meets(self) -> bool:
        return (
            self.recall >= TARGETS["recall"]
            and self.false_per_10 <= TARGETS["false_per_10"]
            and self.corrections_rate >= TARGETS["corrections"]
            and self.duplicates <= TARGETS["duplicates"]
        )


def score(
    tally: Tally,
    turns: list[Turn],
    active: list[str],
    history: list[str],
    false_by_turn: dict[int, list[str]],
) -> None:
    """Add one speaker's final facts to the tally."""
    by_id = {turn.id: turn for turn in turns if turn.id}
    corrected = {turn.replaces for turn in turns if turn.kind == "correction"}
    items: list[list[str]] = []
    for index, turn in enumerate(turns):
        if turn.kind == "fact" and turn.id not in corrected:
            tally.kept += 1
            ok = any(matches(fact, turn.keywords) for fact in active)
            tally.recalled += ok
            cat = tally.by_category.setdefault(turn.category, [0, 0])
            cat[0] += ok
            cat[1] += 1
            items.append(turn.keywords)
            if not ok:
                tally.misses.append(f"{turn.speaker}: {turn.text}")
        elif turn.kind == "correction":
            old = by_id[turn.replaces or ""].keywords
            tally.corrections += 1
            stale = [
                f for f in active if matches(f, old) and not matches(f, turn.keywords)
            ]
            ok = (
                not stale
                and any(matches(f, old) for f in history)
                and any(matches(f, turn.keywords) for f in active)
            )
            tally.applied += ok
            items.append(turn.keywords)
            if not ok:
                tally.misses.append(f"{turn.speaker} (correction): {turn.text}")
        elif turn.kind == "non_fact":
            tally.non_facts += 1
            added = false_by_turn.get(index, [])
            tally.false_facts += len(added)
            tally.false_examples += [f"{turn.text!r} -> {fact!r}" for fact in added]
    for keywords in items:
        tally.duplicates += max(0, sum(matches(f, keywords) for f in active) - 1)
    tally.unlabelled += sum(
        not any(matches(f, keywords) for keywords in items) for f in active
    )


# --- the model server -------------------------------------------------------------


def _script(*args: str) -> str:
    done = subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"scripts/local-model {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout.strip()


@contextlib.contextmanager
def model_server(base_url: str | None) -> Iterator[str]:
    """The given server, or the bundled model on a free port for this run."""
    if base_url:
        yield base_url
        return
    import socket

    _script("check")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    url = _script("start", str(port)).splitlines()[-1]
    try:
        yield url
    finally:
        _script("stop", str(port))


# --- today's extractor, from git ---------------------------------------------------


def load_legacy() -> ModuleType | None:
    """The memory modules of LEGACY_COMMIT as a package `legacy_memory`, or None."""
    folder = Path(tempfile.mkdtemp(prefix="legacy-memory-")) / "legacy_memory"
    folder.mkdir()
    (folder / "__init__.py").write_text("", encoding="utf-8")
    for name in LEGACY_MODULES:
        path = f"custom_components/local_assistant/memory/{name}.py"
        done = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{LEGACY_COMMIT}:{path}"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            print(f"today's prompt skipped: git show {LEGACY_COMMIT}:{path} failed")
            return None
        (folder / f"{name}.py").write_text(done.stdout, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(
        "legacy_memory",
        folder / "__init__.py",
        submodule_search_locations=[str(folder)],
    )
    assert spec is not None
    assert spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules["legacy_memory"] = package
    spec.loader.exec_module(package)
    for name in LEGACY_MODULES:
        importlib.import_module(f"legacy_memory.{name}")
    return package


class LegacyExtractor:
    """Today's extractor: the whole updated list after every exchange."""

    def __init__(self, client: Any, model: str, max_facts: int) -> None:
        from legacy_memory import facts
        import legacy_memory.extraction_prompt as prompt

        self._prompt = prompt
        self._facts = facts
        self._client = client
        self._model = model
        self._max_facts = max_facts
        self.books: dict[str, Any] = {}
        self.calls = 0
        self.seconds = 0.0
        self.call_times: list[float] = []
        self.rejected = 0

    def book(self, speaker: str) -> Any:
        if speaker not in self.books:
            self.books[speaker] = self._facts.FactBook(max_facts=self._max_facts)
        return self.books[speaker]

    async def extract(self, speaker: str, user_text: str, answer: str) -> None:
        book = self.book(speaker)
        active = book.active()
        messages = self._prompt.build_extraction_messages(
            [f.text for f in active if not f.protected],
            user_text,
            answer,
            max_facts=self._max_facts,
            pinned_facts=[f.text for f in active if f.protected],
        )
        start = time.monotonic()
        response = await self._client.chat.completions.create(
            model=self._model,
            messages=messages,
            temperature=0,
            max_tokens=LEGACY_MAX_TOKENS,
            stream=False,
            timeout=600,
        )
        elapsed = time.monotonic() - start
        self.calls += 1
        self.seconds += elapsed
        self.call_times.append(elapsed)
        try:
            texts = self._prompt.parse_fact_list(
                response.choices[0].message.content or ""
            )
        except self._prompt.ExtractionParseError:
            self.rejected += 1
            return
        book.apply_extraction(texts, time.time())


# --- Home Assistant and the agent -------------------------------------------------------


@dataclass
class Seen:
    """What the agent recorded for the exchange of the current turn."""

    exchange: Any = None


def _tool_calls(chat_log: Any) -> int:
    calls = 0
    for content in reversed(chat_log.content):
        if isinstance(content, conversation.UserContent):
            break
        if isinstance(content, conversation.AssistantContent):
            calls += len(content.tool_calls or ())
    return calls


def _fact_texts(store: Any, speaker: str) -> tuple[dict[str, str], list[str]]:
    book = store.get(speaker)
    if book is None:
        return {}, []
    return {f.id: f.text for f in book.facts}, [h.fact.text for h in book.history]


async def _async_setup_agent(hass: Any, base_url: str) -> tuple[Any, str]:
    """The agent as a user sets it up for this model; replies at temperature 0."""
    data = h.agent_data(model=MODEL_ALIAS)
    data.update({CONF_TEMPERATURE: 0.0, CONF_MAX_TOKENS: 256})
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Local Assistant",
        data={CONF_BASE_URL: base_url, CONF_API_KEY: ""},
        # Default memory options (local extraction, 30 facts); a long timeout
        # for a busy 2-core machine.
        options={CONF_TIMEOUT: 600},
        subentries_data=[
            {
                "subentry_type": SUBENTRY_CONVERSATION,
                "data": data,
                "title": "Local Assistant",
                "unique_id": None,
            }
        ],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED, entry.state
    (entity,) = [
        e
        for e in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
        if e.domain == "conversation"
    ]
    return entry, entity.entity_id


async def run(args: argparse.Namespace) -> int:
    speakers = load_set()
    if args.speakers:
        speakers = {name: speakers[name] for name in args.speakers.split(",")}
    legacy_package = None if args.no_legacy else load_legacy()
    counts = {
        kind: sum(t.kind == kind for ts in speakers.values() for t in ts)
        for kind in ("fact", "correction", "repeat", "non_fact")
    }
    print(f"set: {SET_FILE.name}: {counts}; speakers {', '.join(speakers)}")
    print(h.machine())

    with model_server(args.base_url) as base_url:
        print(f"server: {base_url} (model {MODEL_ALIAS})")
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        async with h.home_assistant() as hass:
            entry, agent_id = await _async_setup_agent(hass, base_url)
            memory = entry.runtime_data.memory
            client = entry.runtime_data.client
            production = memory.extractor
            assert production is not None, "local extraction did not start"
            legacy = (
                LegacyExtractor(client, MODEL_ALIAS, DEFAULT_MAX_FACTS)
                if legacy_package is not None
                else None
            )

            # What the agent will pass: tool calls of the turn, HA's intent.
            seen = Seen()
            current: dict[str, Any] = {}
            original_record = memory.record_exchange

            def record(
                speaker: str, user_text: str, answer: str, **kwargs: Any
            ) -> None:
                kwargs.setdefault("used_tools", _tool_calls(current["chat_log"]) > 0)
                kwargs.setdefault("intent", current["intent"])
                seen.exchange = Exchange(
                    user_text,
                    answer,
                    used_tools=kwargs["used_tools"],
                    intent=kwargs["intent"],
                )
                original_record(speaker, user_text, answer, **kwargs)

            memory.record_exchange = record
            default_agent = get_agent_manager(hass).default_agent
            assert default_agent is not None

            async def recognize(text: str, language: str) -> str | None:
                if args.intent == "off":
                    return None
                user_input = conversation.ConversationInput(
                    text=text,
                    context=Context(),
                    conversation_id=None,
                    device_id=None,
                    satellite_id=None,
                    language=language,
                    agent_id="conversation.home_assistant",
                )
                result = await default_agent.async_recognize_intent(
                    user_input, strict_intents_only=args.intent == "strict"
                )
                intent = getattr(result, "intent", None)
                return None if intent is None else str(intent.name)

            tallies = {"new": Tally("edits by number (production)")}
            if legacy is not None:
                tallies["legacy"] = Tally(f"today's prompt ({LEGACY_COMMIT})")

            def current_facts(speaker: str) -> dict[str, dict[str, str]]:
                """Each extractor's active facts of the speaker: id -> text."""
                return {
                    "new": _fact_texts(memory.facts, speaker)[0],
                    "legacy": {f.id: f.text for f in legacy.book(speaker).facts}
                    if legacy
                    else {},
                }

            users: dict[str, str] = {}
            started = time.monotonic()
            reply_seconds = 0.0
            turn_count = 0
            for name, turns in speakers.items():
                user = await hass.auth.async_create_user(name.capitalize())
                users[name] = user.id
                speaker = f"user:{user.id}"
                false_by_turn: dict[str, dict[int, list[str]]] = {
                    k: {} for k in tallies
                }
                for index, turn in enumerate(turns):
                    intent = await recognize(turn.text, turn.lang)
                    before = current_facts(speaker)
                    seen.exchange = None
                    reply_start = time.monotonic()
                    with (
                        chat_session.async_get_chat_session(hass) as session,
                        conversation.async_get_chat_log(hass, session) as chat_log,
                    ):
                        current.update(chat_log=chat_log, intent=intent)
                        result = await conversation.async_converse(
                            hass,
                            turn.text,
                            session.conversation_id,
                            Context(user_id=user.id),
                            language=turn.lang,
                            agent_id=agent_id,
                        )
                    reply_seconds += time.monotonic() - reply_start
                    turn_count += 1
                    answer = str(
                        result.response.speech.get("plain", {}).get("speech", "")
                    )
                    exchange = seen.exchange
                    await production.async_wait_idle()
                    await entry.runtime_data.scheduler.async_wait_idle()
                    if legacy is not None and exchange is not None:
                        await legacy.extract(speaker, turn.text, answer)
                    after = current_facts(speaker)
                    added = {
                        k: [
                            text
                            for fid, text in after[k].items()
                            if fid not in before[k] and text not in before[k].values()
                        ]
                        for k in tallies
                    }
                    for key in tallies:
                        if turn.kind == "non_fact" and added[key]:
                            false_by_turn[key][index] = added[key]
                    flags = []
                    if exchange is not None and exchange.used_tools:
                        flags.append("tools")
                    if intent:
                        flags.append(intent)
                    if args.verbose:
                        print(
                            f"[{name} {index + 1:2}] {turn.kind:10} {turn.text!r} -> {answer[:70]!r} {' '.join(flags)}"
                        )
                        for key in tallies:
                            if added[key]:
                                print(f"      {key:6} + {added[key]}")
                    else:
                        print(".", end="", flush=True)
                for key, tally in tallies.items():
                    if key == "legacy":
                        assert legacy is not None
                        book = legacy.book(speaker)
                        active = [f.text for f in book.facts]
                        history = [e.fact.text for e in book.history]
                    else:
                        ids, history = _fact_texts(memory.facts, speaker)
                        active = list(ids.values())
                    score(tally, turns, active, history, false_by_turn[key])
                    if args.verbose:
                        print(f"   {key} final {name}: {active}")
            if not args.verbose:
                print()
            total = time.monotonic() - started
            for key, tally in tallies.items():
                if key == "legacy":
                    assert legacy is not None
                    tally.calls, tally.seconds, tally.call_times = (
                        legacy.calls,
                        legacy.seconds,
                        legacy.call_times,
                    )
                    tally.rejected = legacy.rejected
                else:
                    stats = production.stats
                    tally.calls, tally.seconds, tally.call_times = (
                        stats.calls,
                        stats.call_seconds,
                        list(stats.call_times),
                    )
                    tally.skipped, tally.rejected = (
                        stats.skipped,
                        stats.rejected_answers,
                    )
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{turn_count} turns in {total:.0f} s (replies {reply_seconds:.0f} s)")
    report(list(tallies.values()))
    return 0 if tallies["new"].meets() else 1


def report(tallies: list[Tally]) -> None:
    """The comparison table, the misses, and one RESULT line."""
    print()
    header = f"{'':34}" + "".join(f"{t.name[:30]:>32}" for t in tallies)
    print(header)
    rows: list[tuple[str, Callable[[Tally], str]]] = [
        (
            "recall (target >= 80 %)",
            lambda t: f"{t.recall:.0%} ({t.recalled}/{t.kept})",
        ),
        (
            "false facts per 10 non-facts (<= 1)",
            lambda t: f"{t.false_per_10:.1f} ({t.false_facts}/{t.non_facts})",
        ),
        (
            "corrections applied (>= 70 %)",
            lambda t: f"{t.corrections_rate:.0%} ({t.applied}/{t.corrections})",
        ),
        ("duplicates (0)", lambda t: str(t.duplicates)),
        ("unlabelled facts at the end", lambda t: str(t.unlabelled)),
        ("extraction calls", lambda t: str(t.calls)),
        ("  total time", lambda t: f"{t.seconds:.0f} s"),
        (
            "  median per call",
            lambda t: f"{statistics.median(t.call_times):.2f} s"
            if t.call_times
            else "-",
        ),
        ("exchanges skipped (no call)", lambda t: str(t.skipped)),
        ("answers rejected by the parser", lambda t: str(t.rejected)),
        ("targets met", lambda t: "yes" if t.meets() else "no"),
    ]
    for label, cell in rows:
        print(f"{label:34}" + "".join(f"{cell(t):>32}" for t in tallies))
    categories = sorted({c for t in tallies for c in t.by_category})
    print("\nrecall by category:")
    for category in categories:
        cells = "".join(
            f"{t.by_category.get(category, [0, 0])[0]}/{t.by_category.get(category, [0, 0])[1]:<3}".rjust(
                32
            )
            for t in tallies
        )
        print(f"  {category:32}{cells}")
    for tally in tallies:
        print(f"\n{tally.name}: missed {len(tally.misses)}")
        for line in tally.misses:
            print(f"  - {line}")
        for line in tally.false_examples:
            print(f"  false fact: {line}")
    new = tallies[0]
    print(
        f"\nRESULT memory_eval: {new.name}: recall {new.recall:.0%}, "
        f"{new.false_per_10:.1f} false facts per 10 non-facts, corrections "
        f"{new.corrections_rate:.0%}, {new.duplicates} duplicates, {new.calls} calls "
        f"({new.seconds:.0f} s)"
        + "".join(
            f"; {t.name}: recall {t.recall:.0%}, {t.false_per_10:.1f}/10, "
            f"corrections {t.corrections_rate:.0%}, {t.duplicates} dup"
            for t in tallies[1:]
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--speakers", help="a comma-separated subset (anna,ben,carla,dan)"
    )
    parser.add_argument(
        "--intent", choices=("strict", "loose", "off"), default="strict"
    )
    parser.add_argument("--base-url", help="use this server instead of starting one")
    parser.add_argument("--no-legacy", action="store_true", help="skip today's prompt")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    sys.exit(h.run(lambda: run(args)))


if __name__ == "__main__":
    main()
