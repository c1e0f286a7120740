"""Background fact extraction after each exchange, off the reply path.

Per exchange the extractor turns what the user said into edits of the
speaker's facts by id (add, replace fact N, remove fact N), as
``extraction_plan`` asks for them: a hosted model in one task (the facts
numbered, the answer's numbers made ids), the small model on the agent's own
server in two small ones (the facts in the words, then a few related facts
as they are now). Code checks every answer structurally
(``extraction_prompt``) and lets the fact book make the edits
(``FactBook.apply_edits``: protected facts are never removed or rewritten,
a fact is never stored twice). Exchanges that cannot carry a personal fact
(a tool ran, Home Assistant recognised an intent, only questions) cost no
call at all.

Runs are serialized per speaker: exchanges that arrive while a run is under
way wait in a small bounded queue and are taken one after the other. A failed
call leaves the facts exactly as they were and keeps the exchange for the next
attempt (still bounded), taken :data:`RETRY_SECONDS` later, when the server
answers again, the speaker talks again or the next extractor starts (a
reload), so an extractor that is
down for an hour neither loses facts nor grows a queue; an exchange the server keeps answering with an
error is given up after :data:`MAX_ATTEMPTS`, so it cannot block the ones
after it; on that last try a refused update call of the small model only
keeps its fact and that fact's possible news out, the rest is stored.

On the agent's own server (``local``) each call waits for its turn in the
entry's server scheduler (``server/scheduler.py``): never while a reply runs,
one background call at a time, so a reply waits for at most one extractor
call on a one-request-at-a-time server such as Swama. A hosted extractor
runs a few calls at once and never touches the local server.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum, auto
import time
from typing import Any, cast

from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers.event import async_call_later
from homeassistant.util import dt as dt_util
import httpx
import openai

from ..const import EXTRACTION_MAX_TOKENS, LOGGER
from ..server.client import is_auth_error
from .extraction_plan import async_plan_hosted, async_plan_small
from .extraction_prompt import (
    HOSTED_MAX_ADDS,
    LOCAL_MAX_ADDS,
    ExtractionParseError,
    worth_extracting,
)
from .facts import ExtractionChange
from .store import FactStore

# Exchanges kept per speaker while the extractor is busy or down.
MAX_PENDING_EXCHANGES = 6
# Extractor calls in flight at once on a hosted endpoint.
HOSTED_CONCURRENCY = 4
# Calls for one exchange that the server refused before the exchange is given
# up. Only refusals that may be the request's own fault count (llama.cpp
# answers 500 when a small model writes broken output): a server that is
# down, overloaded, slow or refuses the key fails every exchange alike, and
# those stay queued for later.
MAX_ATTEMPTS = 2
_REQUEST_FAULTS = frozenset({400, 413, 422, 500})
# After a failed call, the exchanges kept are tried again this much later, so
# they are distilled once the server is back though nobody talks.
RETRY_SECONDS = 300

# The turn of one call on the agent's own server: an async context manager
# made for the call's messages (the server scheduler, noting the request).
type CallTurn = Callable[[list[dict[str, Any]]], AbstractAsyncContextManager[None]]


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
class PendingExchange:
    exchange: Exchange
    # When it was said: a fact the person removes later is not added back.
    said_at: float = field(default_factory=lambda: dt_util.utcnow().timestamp())
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
    dropped: int = 0  # facts the extractor found no longer true
    removals_not_taken: int = 0  # the small model's REMOVE with no new version
    copied_examples: int = 0  # additions that were the prompt's examples
    repeats: int = 0  # new facts that said no more than a remembered one
    over_limit: int = 0  # additions beyond max_adds, left out
    refused_edits: int = (
        0  # edits that could not be made (gone, protected, no sentence)
    )
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
        timeout: float,
        local_turn: CallTurn | None,
        on_auth_error: Callable[[], None] | None = None,
        pending: dict[str, deque[PendingExchange]] | None = None,
    ) -> None:
        """`local_turn` is set when the extractor shares the agent's server.

        Each call then runs inside ``local_turn(messages)``: the server
        scheduler's turn for an extraction call, which also tells the prompt
        cache keeper what the server read. `on_auth_error` runs when the
        extractor's server refuses the key. `pending`: the exchanges waiting
        per speaker, kept by the caller across a reload (a reauth with a new
        key is one); :meth:`resume` starts their runs again.
        """
        self._on_auth_error = on_auth_error
        self._hass = hass
        self._client = client
        self._model = model
        self._facts = facts
        self._timeout = timeout
        self._local_turn = local_turn
        self.max_adds = LOCAL_MAX_ADDS if local_turn is not None else HOSTED_MAX_ADDS
        self._hosted_slots = asyncio.Semaphore(HOSTED_CONCURRENCY)
        self._pending: dict[str, deque[PendingExchange]] = (
            {} if pending is None else pending
        )
        self._tasks: dict[str, asyncio.Task[None]] = {}
        # Runs cancelled by forget() that may not have finished unwinding yet.
        self._cancelled: set[asyncio.Task[None]] = set()
        self._closed = False
        self.stats = ExtractionStats()
        self._unavailable = False
        self._cancel_retry: CALLBACK_TYPE | None = None

    @callback
    def schedule(self, speaker: str, exchange: Exchange) -> None:
        """Queue an exchange; start a run for the speaker unless one is going.

        An exchange that cannot carry a personal fact is counted and dropped.
        """
        if not worth_extracting(
            exchange.user_text, used_tools=exchange.used_tools, intent=exchange.intent
        ):
            self.stats.skipped += 1
            return
        queue = self._pending.setdefault(speaker, deque(maxlen=MAX_PENDING_EXCHANGES))
        queue.append(PendingExchange(exchange))
        # Closed (a reply that finished while the entry reloads), the exchange
        # waits in the kept queue for the next extractor.
        if not self._closed:
            self._start(speaker)

    @callback
    def resume(self) -> None:
        """Start a run for every speaker with exchanges waiting.

        At the start, for those an earlier extractor kept (a reload during a
        run, a server that was down); and when the server answers again.
        """
        for speaker in list(self._pending):
            self._start(speaker)

    @callback
    def _retry_later(self) -> None:
        if self._cancel_retry is None and not self._closed:
            self._cancel_retry = async_call_later(
                self._hass, RETRY_SECONDS, self._async_retry
            )

    @callback
    def _async_retry(self, _now: datetime) -> None:
        self._cancel_retry = None
        self.resume()

    @callback
    def _start(self, speaker: str) -> None:
        if speaker in self._tasks:
            return
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
        # Only tasks still running: gather() on done ones returns without
        # yielding, so the callbacks that clear them would never run.
        while running := [
            task
            for task in (*self._tasks.values(), *self._cancelled)
            if not task.done()
        ]:
            await asyncio.gather(*running, return_exceptions=True)

    async def async_shutdown(self) -> None:
        """Cancel runs in progress; facts stay as they were, and so do the
        exchanges waiting (the caller keeps them for the next extractor)."""
        self._closed = True
        if self._cancel_retry is not None:
            self._cancel_retry()
            self._cancel_retry = None
        tasks = [*self._tasks.values(), *self._cancelled]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()

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
                    # Keep it for the next attempt: a while later, when the
                    # server answers again, or when the speaker's next
                    # exchange arrives; when space runs out the oldest go first.
                    self._retry_later()
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

    async def _async_extract(self, speaker: str, item: PendingExchange) -> _Outcome:
        """The extractor call for one exchange and, when usable, the edits."""
        exchange = item.exchange
        book = self._facts.get(speaker)
        shown = book.active() if book is not None else []
        revision = self._facts.revision(speaker)
        self.stats.runs += 1
        try:
            if self._local_turn is not None:
                plan = await async_plan_small(
                    self._async_ask,
                    shown,
                    exchange.user_text,
                    max_adds=self.max_adds,
                    # Its last try: what a refused update call cannot spoil
                    # is kept rather than the whole exchange given up.
                    ask_update=(
                        self._async_ask_update
                        if item.errors + 1 >= MAX_ATTEMPTS
                        else None
                    ),
                )
            else:
                plan = await async_plan_hosted(
                    self._async_ask, shown, exchange.user_text, max_adds=self.max_adds
                )
        except ExtractionParseError as err:
            # A junk answer will not get better by asking again with the same input.
            self.stats.rejected_answers += 1
            LOGGER.warning("Fact extractor answer ignored, facts unchanged: %s", err)
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
            self.resume()  # the exchanges kept while it did not
        if self._facts.revision(speaker) != revision:
            # A person edited the facts while the model worked: the numbers
            # may name facts that are gone or changed. Ask again.
            LOGGER.debug("Facts changed during extraction; asking again")
            return _Outcome.STALE
        self.stats.over_limit += plan.over_limit
        self.stats.copied_examples += plan.copied
        self.stats.repeats += plan.repeats
        self.stats.rejected_answers += plan.unusable_updates
        self.stats.removals_not_taken += plan.removals_not_taken
        change = (
            self._facts.book(speaker).apply_edits(
                plan.edits, dt_util.utcnow().timestamp(), said_at=item.said_at
            )
            if plan.edits
            else ExtractionChange()
        )
        self.stats.refused_edits += plan.skipped
        if change.changed:
            self.stats.updated += 1
            self.stats.added += len(change.added)
            self.stats.rewritten += len(change.rewritten)
            self.stats.dropped += len(change.dropped)
            self._facts.async_schedule_save()
        self.stats.refused_edits += change.rejected
        LOGGER.debug(
            "Facts: %s added, %s rewritten, %s dropped, %s over the limit, "
            "%s repeated, %s refused",
            len(change.added),
            len(change.rewritten),
            len(change.dropped),
            len(change.over_limit),
            change.duplicates,
            change.rejected,
        )
        return _Outcome.DONE

    async def _async_ask_update(self, task: list[dict[str, str]]) -> str | None:
        """An update call; None when the server refuses it as the request's fault."""
        try:
            return await self._async_ask(task)
        except openai.APIStatusError as err:
            if err.status_code not in _REQUEST_FAULTS:
                raise
            self.stats.failed += 1
            LOGGER.debug("Fact update refused again, fact kept: %s", _describe(err))
            return None

    async def _async_ask(self, task: list[dict[str, str]]) -> str:
        """Send one request, when it is its turn; return the answer's text."""
        messages: list[dict[str, Any]] = list(task)
        turn = (
            self._local_turn(messages)
            if self._local_turn is not None
            else self._hosted_slots
        )
        async with turn:
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
        # No text (a tool call, say) is no answer to the task: parsing rejects "".
        return content or ""


def _describe(err: BaseException) -> str:
    """Class and status of an error; never a body (it may quote the user)."""
    if isinstance(err, openai.APIStatusError):
        return f"{type(err).__name__} (HTTP {err.status_code})"
    return type(err).__name__
