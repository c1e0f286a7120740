"""Background fact extraction after each exchange, off the reply path.

Per exchange the extractor asks the model for little (see
``extraction_prompt``): first the facts in what the user said, then, for at
most :data:`MAX_UPDATE_CANDIDATES` remembered facts that share words with it,
each fact as it is true now. Code decides the rest: a new fact must share a
content word with the user's words (grounding), one that repeats an active
fact is not added, and a changed version supersedes the old fact into the
history. Exchanges that cannot carry a personal fact (a tool ran, Home
Assistant recognised an intent, only questions) cost no call at all.

Runs are serialized per speaker: exchanges that arrive while a run is under
way wait in a small bounded queue and are taken one after the other. A failed
call leaves the facts exactly as they were and keeps the exchange for the next
attempt (still bounded), so an extractor that is down for an hour neither
loses facts nor grows a queue; an exchange the server keeps answering with an
error is given up after :data:`MAX_ATTEMPTS`, so it cannot block the ones
after it.

On the agent's own server (``local``) at most one extraction runs at a time,
and only while no reply is running: Swama answers one request at a time, so
an extraction may delay a reply by at most one extractor call, never by a
queue of them. There an optional ``prefix_provider`` puts the tasks after the
speaker's own conversation (its system message, tools and history), so the
server's cached prompt of that conversation is reused instead of replaced.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum, auto
import time
from typing import Any, cast

from homeassistant.core import HomeAssistant, callback
from homeassistant.util import dt as dt_util
import httpx
import openai

from ..const import EXTRACTION_MAX_TOKENS, LOGGER
from ..server.client import is_auth_error
from ..server.reply_gate import ReplyGate
from .extraction_prompt import (
    ExtractionParseError,
    fact_task,
    parse_fact_answer,
    parse_update_answer,
    standalone,
    update_task,
    worth_extracting,
)
from .facts import (
    DUPLICATE_SIMILARITY,
    ExtractionChange,
    Fact,
    content_words,
    grounded,
    same_polarity,
    says_no_more,
    text_similarity,
)
from .store import FactStore

# Exchanges kept per speaker while the extractor is busy or down.
MAX_PENDING_EXCHANGES = 6
# Extractor calls in flight at once over all speakers. The local server runs
# one inference at a time, so more would only queue there, ahead of replies.
LOCAL_CONCURRENCY = 1
HOSTED_CONCURRENCY = 4
# Remembered facts per exchange the extractor is asked to bring up to date.
MAX_UPDATE_CANDIDATES = 2
# Calls for one exchange that the server refused before the exchange is given
# up. Only refusals that may be the request's own fault count (llama.cpp
# answers 500 when a small model writes broken tool-call JSON after a
# conversation's tools): a server that is down, overloaded, slow or refuses the
# key fails every exchange alike, and those stay queued for later.
MAX_ATTEMPTS = 2
_REQUEST_FAULTS = frozenset({400, 413, 422, 500})

type PrefixProvider = Callable[
    [str], tuple[list[dict[str, Any]], list[dict[str, Any]] | None] | None
]


class _Outcome(Enum):
    """How one exchange's extraction ended."""

    DONE = auto()  # merged, or a junk answer ignored
    FAILED = auto()  # HTTP error or timeout: retry with the next exchange
    STALE = auto()  # facts were edited meanwhile: ask again now


@dataclass(frozen=True, slots=True)
class Exchange:
    """One user message and the assistant's final answer, and what the turn did.

    ``used_tools``: the turn made at least one tool call (a device command, a
    state or live-data question). ``intent``: the name of the Home Assistant
    intent recognised in the user's sentence ("HassTurnOn"), if any. Either
    means the exchange cannot carry a personal fact.
    """

    user_text: str
    assistant_text: str
    used_tools: bool = False
    intent: str | None = None


@dataclass(slots=True)
class _Pending:
    exchange: Exchange
    errors: int = 0


@dataclass(slots=True)
class ExtractionStats:
    """Counters for diagnostics and benchmarks (no text)."""

    runs: int = 0  # exchanges taken to the extractor
    skipped: int = 0  # exchanges that could not carry a fact: no call
    calls: int = 0  # requests to the model
    call_seconds: float = 0.0  # their total time
    updated: int = 0  # runs that changed the facts
    added: int = 0
    rewritten: int = 0
    ungrounded: int = 0  # facts dropped: nothing in common with the user's words
    failed: int = 0
    given_up: int = 0  # exchanges dropped after MAX_ATTEMPTS server errors
    rejected_answers: int = 0
    call_times: list[float] = field(default_factory=list, repr=False)


class FactExtractor:
    """Distils facts with short model calls, in the background."""

    def __init__(
        self,
        hass: HomeAssistant,
        *,
        client: openai.AsyncOpenAI,
        model: str,
        facts: FactStore,
        max_facts: int,
        timeout: float,
        reply_gate: ReplyGate | None,
        prefix_provider: PrefixProvider | None = None,
        on_auth_error: Callable[[], None] | None = None,
    ) -> None:
        """`reply_gate` is set when the extractor shares the agent's server.

        ``prefix_provider`` (local mode only) returns, for a speaker, the
        messages and tools of that speaker's conversation (the request of its
        last reply, then that reply as an assistant message), or None; the
        tasks then follow it instead of a standalone system message.
        `on_auth_error` runs when the extractor's server refuses the key.
        """
        self._on_auth_error = on_auth_error
        self._hass = hass
        self._client = client
        self._model = model
        self._facts = facts
        self._max_facts = max_facts
        self._timeout = timeout
        self._gate = reply_gate
        self.prefix_provider = prefix_provider
        self._slots = asyncio.Semaphore(
            LOCAL_CONCURRENCY if reply_gate is not None else HOSTED_CONCURRENCY
        )
        self._pending: dict[str, deque[_Pending]] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        # Runs cancelled by forget() that may not have finished unwinding yet.
        self._cancelled: set[asyncio.Task[None]] = set()
        self._closed = False
        self.stats = ExtractionStats()
        self._unavailable = False

    @callback
    def schedule(self, speaker: str, exchange: Exchange) -> None:
        """Queue an exchange; start a run for the speaker unless one is going.

        An exchange that cannot carry a personal fact is counted and dropped.
        """
        if self._closed:
            # A reply that finished while the entry unloads: nothing to start.
            return
        if not worth_extracting(
            exchange.user_text, used_tools=exchange.used_tools, intent=exchange.intent
        ):
            self.stats.skipped += 1
            return
        queue = self._pending.setdefault(speaker, deque(maxlen=MAX_PENDING_EXCHANGES))
        queue.append(_Pending(exchange))
        if speaker not in self._tasks:
            task = self._hass.async_create_background_task(
                self._async_drain(speaker),
                name="local_assistant fact extraction",
            )
            # Tasks start eagerly: one that already finished must not be kept.
            if not task.done():
                self._tasks[speaker] = task

    def pending(self, speaker: str) -> int:
        """Exchanges waiting for the speaker (bounded)."""
        return len(self._pending.get(speaker, ()))

    def pending_total(self) -> int:
        """Exchanges waiting over all speakers (diagnostics)."""
        return sum(len(queue) for queue in self._pending.values())

    async def async_wait_idle(self) -> None:
        """Wait until every scheduled run has finished (tests, benchmarks, unload)."""
        while self._tasks or self._cancelled:
            await asyncio.gather(
                *self._tasks.values(), *self._cancelled, return_exceptions=True
            )

    async def async_shutdown(self) -> None:
        """Cancel runs in progress; facts stay as they were."""
        self._closed = True
        tasks = [*self._tasks.values(), *self._cancelled]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        self._pending.clear()

    @callback
    def forget(self, speaker: str) -> None:
        """Drop the speaker's pending exchanges and any run in progress."""
        self._pending.pop(speaker, None)
        if (task := self._tasks.pop(speaker, None)) is not None:
            task.cancel()
            self._cancelled.add(task)
            task.add_done_callback(self._cancelled.discard)

    async def _async_drain(self, speaker: str) -> None:
        try:
            while queue := self._pending.get(speaker):
                item = queue[0]
                outcome = await self._async_extract(speaker, item)
                if outcome is _Outcome.STALE:
                    continue  # ask again at once, with the facts as they are now
                if outcome is _Outcome.FAILED and item.errors < MAX_ATTEMPTS:
                    # Keep it for the next attempt, when the next exchange
                    # arrives; when space runs out the oldest go first.
                    break
                if outcome is _Outcome.FAILED:
                    self.stats.given_up += 1
                    LOGGER.debug(
                        "Fact extraction gave up on one exchange after %s server "
                        "errors; facts unchanged",
                        item.errors,
                    )
                # The queue may have dropped it (maxlen) while the call ran.
                if queue and queue[0] is item:
                    queue.popleft()
        finally:
            if self._tasks.get(speaker) is asyncio.current_task():
                del self._tasks[speaker]
            if not self._pending.get(speaker):
                # Many speakers come and go: keep no empty queue around.
                self._pending.pop(speaker, None)

    async def _async_extract(self, speaker: str, item: _Pending) -> _Outcome:
        """The extractor calls for one exchange and, when usable, the merge."""
        exchange = item.exchange
        async with self._slots:
            if self._gate is not None:
                await self._gate.async_wait_idle()
            self.stats.runs += 1
            revision = self._facts.revision(speaker)
            try:
                texts = await self._async_find_facts(speaker, exchange)
                updates = await self._async_find_updates(speaker, exchange, texts)
            except ExtractionParseError as err:
                # A junk answer will not get better by asking again with the same input.
                self.stats.rejected_answers += 1
                LOGGER.warning(
                    "Fact extractor answer ignored, facts unchanged: %s", err
                )
                return _Outcome.DONE
            except (openai.OpenAIError, httpx.HTTPError, ValueError) as err:
                self.stats.failed += 1
                if (
                    isinstance(err, openai.APIStatusError)
                    and err.status_code in _REQUEST_FAULTS
                ):
                    item.errors += 1  # it may be this exchange, not the server
                # Once per outage, not once per exchange: an hour down is one line.
                log = LOGGER.debug if self._unavailable else LOGGER.warning
                log(
                    "Fact extraction failed, facts unchanged; will retry with the "
                    "next exchanges: %s",
                    _describe(err),
                )
                self._unavailable = True
                if self._on_auth_error is not None and is_auth_error(err):
                    self._on_auth_error()
                return _Outcome.FAILED
            if self._unavailable:
                self._unavailable = False
                LOGGER.info("The fact extractor answers again")
        if self._facts.revision(speaker) != revision:
            # A person edited the facts while the model worked: the answers
            # may be based on facts that are gone or changed. Ask again.
            LOGGER.debug("Facts changed during extraction; asking again")
            return _Outcome.STALE
        change = self._merge(speaker, texts, updates)
        if change.changed:
            self.stats.updated += 1
            self.stats.added += len(change.added)
            self.stats.rewritten += len(change.rewritten)
            self._facts.async_schedule_save()
        LOGGER.debug(
            "Facts: %s added, %s rewritten, %s over the limit, %s repeated",
            len(change.added),
            len(change.rewritten),
            len(change.over_limit),
            change.duplicates,
        )
        return _Outcome.DONE

    async def _async_find_facts(self, speaker: str, exchange: Exchange) -> list[str]:
        """Ask for the facts in what the user said; keep the grounded ones."""
        answer = await self._async_ask(speaker, fact_task(exchange.user_text))
        texts = parse_fact_answer(answer)
        kept = [text for text in texts if grounded(text, exchange.user_text)]
        self.stats.ungrounded += len(texts) - len(kept)
        return kept

    async def _async_find_updates(
        self, speaker: str, exchange: Exchange, texts: list[str]
    ) -> list[tuple[Fact, str]]:
        """Ask how each related remembered fact reads now; return the changed ones.

        Only when the user said something personal (a grounded fact): a
        message with no fact changes none. A fact the new ones merely repeat
        is not asked about. An unusable answer means "unchanged".
        """
        book = self._facts.get(speaker)
        if not texts or book is None:
            return []
        candidates = [
            fact
            for fact in book.related(
                [exchange.user_text, *texts], MAX_UPDATE_CANDIDATES + len(texts)
            )
            # A fact a new one repeats or refines needs no question.
            if not any(
                says_no_more(text, fact.text) or says_no_more(fact.text, text)
                for text in texts
            )
        ][:MAX_UPDATE_CANDIDATES]
        updates: list[tuple[Fact, str]] = []
        for fact in candidates:
            answer = await self._async_ask(
                speaker, update_task(fact.text, exchange.user_text)
            )
            try:
                text = parse_update_answer(answer)
            except ExtractionParseError:
                self.stats.rejected_answers += 1
                continue
            unchanged = says_no_more(text, fact.text) or (
                text_similarity(text, fact.text) >= DUPLICATE_SIMILARITY
                and same_polarity(text, fact.text)
            )
            # A new version is about the same thing (shares words with the
            # old fact) and comes from what the user said. The same version
            # for a second fact is the statement put in its place, not news
            # about it ("Laura is a doctor." turned into "Laura moved to
            # Munich." too): only the most related fact takes it.
            if (
                not unchanged
                and grounded(text, fact.text)
                and grounded(text, exchange.user_text)
                and not any(says_no_more(text, new) for _, new in updates)
            ):
                updates.append((fact, text))
        return updates

    def _merge(
        self, speaker: str, texts: list[str], updates: list[tuple[Fact, str]]
    ) -> ExtractionChange:
        """Supersede with the new versions first, then add the other new facts.

        A new fact about what an update just changed (it shares a content word
        with the old fact or its new version: "The user no longer has the Zoe."
        next to "The user's car is a Tesla.") is the same news twice: not added.
        """
        book = self._facts.book(speaker)
        now = dt_util.utcnow().timestamp()
        change = ExtractionChange()
        changed_words: set[str] = set()
        for old, text in updates:
            if any(fact.id == old.id for fact in book.facts) and not old.protected:
                change.merge(book.supersede(old.id, text, now))
                changed_words |= content_words(old.text) | content_words(text)
        for text in texts:
            if content_words(text) & changed_words:
                change.duplicates += 1
                continue
            change.merge(book.add_extracted(text, now))
        return change

    async def _async_ask(self, speaker: str, task: list[dict[str, str]]) -> str:
        """Send one task (after the conversation or on its own); return the answer."""
        messages: list[dict[str, Any]] = standalone(task)
        extra: dict[str, Any] = {}
        if self._gate is not None and self.prefix_provider is not None:
            prefix = self.prefix_provider(speaker)
            if prefix is not None:
                prefix_messages, tools = prefix
                messages = [*prefix_messages, *task]
                if tools:
                    # The same tools as the reply, so the server's cached
                    # prompt (tools render into its start) still matches.
                    extra["tools"] = tools
        start = time.monotonic()
        self.stats.calls += 1
        try:
            response = await self._client.chat.completions.create(
                model=self._model,
                messages=cast(Any, messages),
                temperature=0,
                max_tokens=EXTRACTION_MAX_TOKENS,
                stream=False,
                timeout=self._timeout,
                **extra,
            )
        finally:
            elapsed = time.monotonic() - start
            self.stats.call_seconds += elapsed
            self.stats.call_times.append(elapsed)
            del self.stats.call_times[:-1000]
        # A server that answers with some other JSON object gives a response
        # without choices or message: that is a broken answer, not a crash.
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise ValueError("answer without choices")
        message = getattr(choices[0], "message", None)
        content = getattr(message, "content", None)
        if content is not None and not isinstance(content, str):
            raise ValueError("answer content is not text")
        # A tool call instead of text (possible after the conversation, whose
        # tools are offered) is no answer to the task: parsing rejects "".
        return content or ""


def _describe(err: BaseException) -> str:
    """Class and status of an error; never a body (it may quote the user)."""
    if isinstance(err, openai.APIStatusError):
        return f"{type(err).__name__} (HTTP {err.status_code})"
    return type(err).__name__
