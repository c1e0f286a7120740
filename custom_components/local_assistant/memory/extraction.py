"""Background fact extraction after each exchange, off the reply path.

Runs are serialized per speaker and coalesced: exchanges that arrive while a
run is under way wait in a small bounded queue and go to the extractor
together in the next run. A failed run leaves the facts exactly as they were
and keeps its exchanges for the next attempt (still bounded), so an extractor
that is down for an hour neither loses facts nor grows a queue.

On the agent's own server (``local``) at most one extraction runs at a time,
and only while no reply is running: Swama answers one request at a time, so
an extraction may delay a reply by at most one extractor call, never by a
queue of them.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, auto
from typing import Any, cast

from homeassistant.core import HomeAssistant, callback
from homeassistant.util import dt as dt_util
import httpx
import openai

from ..const import EXTRACTION_MAX_TOKENS, LOGGER
from ..server.client import is_auth_error
from ..server.reply_gate import ReplyGate
from .extraction_prompt import (
    MAX_EXCHANGE_TEXT_CHARS,
    ExtractionParseError,
    build_extraction_messages,
    parse_fact_list,
)
from .session import truncate
from .store import FactStore

# Exchanges kept per speaker while the extractor is busy or down.
MAX_PENDING_EXCHANGES = 6
# Extractor calls in flight at once over all speakers. The local server runs
# one inference at a time, so more would only queue there, ahead of replies.
LOCAL_CONCURRENCY = 1
HOSTED_CONCURRENCY = 4


class _Outcome(Enum):
    """How one extractor run ended."""

    DONE = auto()  # merged, or a junk answer ignored
    FAILED = auto()  # HTTP error or timeout: retry with the next exchange
    STALE = auto()  # facts were edited meanwhile: ask again now


@dataclass(frozen=True, slots=True)
class Exchange:
    """One user message and the assistant's final answer."""

    user_text: str
    assistant_text: str


@dataclass(slots=True)
class ExtractionStats:
    """Counters for diagnostics and benchmarks."""

    runs: int = 0
    updated: int = 0
    failed: int = 0
    rejected_answers: int = 0


class FactExtractor:
    """Distils facts with a second model call, in the background."""

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
        on_auth_error: Callable[[], None] | None = None,
    ) -> None:
        """`reply_gate` is set when the extractor shares the agent's server.

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
        self._slots = asyncio.Semaphore(
            LOCAL_CONCURRENCY if reply_gate is not None else HOSTED_CONCURRENCY
        )
        self._pending: dict[str, deque[Exchange]] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        # Runs cancelled by forget() that may not have finished unwinding yet.
        self._cancelled: set[asyncio.Task[None]] = set()
        self._closed = False
        self.stats = ExtractionStats()
        self._unavailable = False

    @callback
    def schedule(self, speaker: str, exchange: Exchange) -> None:
        """Queue an exchange; start a run for the speaker unless one is going."""
        if self._closed:
            # A reply that finished while the entry unloads: nothing to start.
            return
        queue = self._pending.setdefault(speaker, deque(maxlen=MAX_PENDING_EXCHANGES))
        queue.append(exchange)
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
                batch = list(queue)
                queue.clear()
                outcome = await self._async_extract(speaker, batch)
                if outcome is _Outcome.DONE:
                    continue
                # Keep the exchanges for the next attempt; when space runs out
                # the oldest go first.
                self._pending[speaker] = deque(
                    [*batch, *queue], maxlen=MAX_PENDING_EXCHANGES
                )
                if outcome is _Outcome.FAILED:
                    break
                # STALE: ask again at once, with the facts as they are now.
        finally:
            if self._tasks.get(speaker) is asyncio.current_task():
                del self._tasks[speaker]
            if not self._pending.get(speaker):
                # Many speakers come and go: keep no empty queue around.
                self._pending.pop(speaker, None)

    async def _async_extract(self, speaker: str, batch: list[Exchange]) -> _Outcome:
        """One extractor call and, when the answer is usable, the merge."""
        async with self._slots:
            if self._gate is not None:
                await self._gate.async_wait_idle()
            self.stats.runs += 1
            revision = self._facts.revision(speaker)
            try:
                answer = await self._async_ask(speaker, batch)
            except (openai.OpenAIError, httpx.HTTPError, ValueError) as err:
                self.stats.failed += 1
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
        try:
            texts = parse_fact_list(answer)
        except ExtractionParseError as err:
            # A junk answer will not get better by asking again with the same input.
            self.stats.rejected_answers += 1
            LOGGER.warning("Fact extractor answer ignored, facts unchanged: %s", err)
            return _Outcome.DONE
        if self._facts.revision(speaker) != revision:
            # A person edited the facts while the model worked: its answer is
            # based on the old list and would undo the edit (bring back a
            # removed fact). Ask again instead.
            LOGGER.debug("Facts changed during extraction; asking again")
            return _Outcome.STALE
        change = self._facts.book(speaker).apply_extraction(
            texts, dt_util.utcnow().timestamp()
        )
        if change.changed:
            self.stats.updated += 1
            self._facts.async_schedule_save()
        LOGGER.debug(
            "Facts updated: %s added, %s dropped, %s rewritten, %s over the limit",
            len(change.added),
            len(change.dropped),
            len(change.rewritten),
            len(change.over_limit),
        )
        return _Outcome.DONE

    async def _async_ask(self, speaker: str, batch: list[Exchange]) -> str:
        """Send the current facts and the batch; return the answer text."""
        book = self._facts.get(speaker)
        active = book.active() if book is not None else []
        # Each exchange gets its share of the text budget, so the newest one
        # is never cut off by older ones.
        share = max(MAX_EXCHANGE_TEXT_CHARS // len(batch), 1)
        # Pinned facts are shown separately so the model does not repeat them.
        messages = build_extraction_messages(
            [fact.text for fact in active if not fact.protected],
            "\n".join(truncate(exchange.user_text, share) for exchange in batch),
            "\n".join(truncate(exchange.assistant_text, share) for exchange in batch),
            max_facts=self._max_facts,
            pinned_facts=[fact.text for fact in active if fact.protected],
        )
        response = await self._client.chat.completions.create(
            model=self._model,
            messages=cast(Any, messages),
            temperature=0,
            max_tokens=EXTRACTION_MAX_TOKENS,
            stream=False,
            timeout=self._timeout,
        )
        # A server that answers with some other JSON object gives a response
        # without choices or message: that is a broken answer, not a crash.
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise ValueError("answer without choices")
        message = getattr(choices[0], "message", None)
        content = getattr(message, "content", None)
        if content is not None and not isinstance(content, str):
            raise ValueError("answer content is not text")
        return content or ""


def _describe(err: BaseException) -> str:
    """Class and status of an error; never a body (it may quote the user)."""
    if isinstance(err, openai.APIStatusError):
        return f"{type(err).__name__} (HTTP {err.status_code})"
    return type(err).__name__
