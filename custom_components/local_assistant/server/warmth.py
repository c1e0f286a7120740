"""Keeps the conversation's prompt in the model server's cache.

Swama (and llama.cpp with ``--cache-ram 0 -np 1``) caches one prompt per
model and reuses it when the next prompt starts the same way. Any other
request in between replaces it, and the next voice turn reads its whole
prompt again: seconds before the first word on a Mac mini, tens of seconds
on a small CPU. This module keeps that cache holding what the next turn will
send:

* **What the next turn sends.** After each reply the agent records the
  speaker's prompt (:meth:`PromptCacheKeeper.remember`): its stable part and
  varying lines, and the tools. The next turn's prefix is that prompt with
  the speaker's current facts and session history, built when needed, kept
  in RAM only and never logged.
* **What the server holds.** Every request we send is noted with its answer
  (:class:`~.prompt_cache.SentPrompt`); a request that does not start with
  the next turn's prefix (an AI task, a local fact extraction, sent through
  :meth:`PromptCacheKeeper.background_request`) has replaced it.
* **Re-warm.** Then, when it is its turn in the server scheduler (no reply
  runs, no other background call, no extraction waiting) and someone talked
  in the last few minutes, the next turn's prefix is sent again as a
  one-token request, coalesced: the next turn finds it cached.
* **Warm-up.** A voice pipeline calls the agent's ``async_prepare`` while the
  user is still talking; the agent's most recent prompt is sent as a
  one-token request (first among background calls) unless our last request
  already started with it recently. A reply that starts meanwhile does not
  wait for it: a re-warm or warm-up still waiting for its turn is
  cancelled, one already sent is left to finish on the server (abandoned, not cancelled: Swama keeps no cache of a cancelled
  request, and llama.cpp only notices a disconnect between batches), so the
  reply, queued behind it on a one-request-at-a-time server, finds the prefix
  it shares cached instead of reading it itself.
* **Keep the model loaded** (an option, off by default): Swama unloads a
  model idle for 5 minutes. While someone talked in the last 30 minutes, the
  prefix is sent again as a one-token request whenever the server has been
  idle for 90 s (checked every 2 minutes); it is cached, so that request is
  tiny.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
import time
from typing import TYPE_CHECKING, Any

from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers.event import async_call_later, async_track_time_interval
from homeassistant.util import dt as dt_util
import httpx
import openai

from ..const import LOGGER
from ..llm.figures import CompletionFigures
from ..llm.messages import history_messages
from ..llm.prompt import Prompt
from ..llm.stream import observe_stream
from .prompt_cache import SentPrompt
from .scheduler import Job, ServerScheduler

if TYPE_CHECKING:
    from .. import LocalAssistantConfigEntry
    from ..memory.manager import Memory

# A re-warm waits this long after the request that made it necessary, so a
# burst of AI tasks is followed by one re-warm.
REWARM_DELAY_SECONDS = 2.0
# Re-warm only while someone talked this recently.
RECENT_TALK_SECONDS = 300.0
# A prompt we sent longer ago may be gone: Swama unloads a model idle for 5 minutes.
CACHE_FRESH_SECONDS = 240.0
# The keep-loaded option.
KEEP_LOADED_CHECK = timedelta(minutes=2)
KEEP_LOADED_IDLE_SECONDS = 90.0
KEEP_LOADED_WINDOW_SECONDS = 30 * 60.0
# Speakers whose prompt is kept (RAM), the most recent ones.
MAX_RECORDS = 64

WARM_ERRORS = (openai.OpenAIError, httpx.HTTPError, ValueError)

type WarmRequest = tuple[list[dict[str, Any]], list[dict[str, Any]] | None]


def _now() -> float:
    # HA's clock, so frozen-time tests drive it.
    return dt_util.utcnow().timestamp()


@dataclass(slots=True)
class ConversationRecord:
    """A speaker's last reply request, enough to build the next turn's prefix."""

    agent: str
    speaker: str
    model: str
    prompt: Prompt
    tools: list[dict[str, Any]] | None
    at: float


@dataclass(slots=True)
class WarmthStats:
    """Counters for diagnostics."""

    warm_ups: int = 0
    warm_ups_skipped: int = 0  # the prefix was cached already
    rewarms: int = 0
    keep_alives: int = 0
    abandoned: int = 0  # warm requests still running when a reply started
    withdrawn: int = 0  # warm requests still waiting when a reply started
    failed: int = 0
    background_requests: int = 0  # other requests of ours (local extraction)


@dataclass(slots=True)
class RequestNote:
    """One request in flight, as noted by :meth:`PromptCacheKeeper.request_started`."""

    model: str
    sent: SentPrompt
    conversation: bool


@dataclass(slots=True)
class _Warming:
    """A warm request: waiting for its turn in the scheduler, or sent."""

    task: asyncio.Task[None] | None = None
    sent: bool = False


class PromptCacheKeeper:
    """Keeps what the next turn sends in the server's prompt cache (one per entry)."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: LocalAssistantConfigEntry,
        client: openai.AsyncOpenAI,
        scheduler: ServerScheduler,
        *,
        keep_loaded: bool = False,
    ) -> None:
        """Nothing is sent until someone talks."""
        self._hass = hass
        self._entry = entry
        self._client = client
        self._scheduler = scheduler
        self._records: dict[str, ConversationRecord] = {}
        self._sent: dict[str, SentPrompt] = {}
        self._warming: dict[str, _Warming] = {}
        self._rewarm_timers: dict[str, CALLBACK_TYPE] = {}
        self._closed = False
        self.stats = WarmthStats()
        self._unsub_keep_loaded: CALLBACK_TYPE | None = None
        if keep_loaded:
            self._unsub_keep_loaded = async_track_time_interval(
                hass, self._async_keep_loaded, KEEP_LOADED_CHECK
            )

    # --- what the next turn sends -------------------------------------------

    @callback
    def remember(
        self,
        agent: str,
        speaker: str,
        model: str,
        prompt: Prompt,
        tools: list[dict[str, Any]] | None,
    ) -> None:
        """Record the speaker's reply request; the next turn's prefix is built from it."""
        self._records.pop(speaker, None)
        self._records[speaker] = ConversationRecord(
            agent, speaker, model, prompt, tools, _now()
        )
        while len(self._records) > MAX_RECORDS:
            del self._records[next(iter(self._records))]

    def _memory(self) -> Memory:
        return self._entry.runtime_data.memory

    def _prefix_messages(self, record: ConversationRecord) -> list[dict[str, Any]]:
        memory = self._memory()
        facts = memory.active_fact_texts(record.speaker)
        history = history_messages(memory.history(record.agent, record.speaker))
        return record.prompt.with_facts(facts).messages(history)

    def _latest(
        self, *, agent: str | None = None, model: str | None = None
    ) -> ConversationRecord | None:
        for record in reversed(self._records.values()):
            if (agent is None or record.agent == agent) and (
                model is None or record.model == model
            ):
                return record
        return None

    def _talked_within(self, seconds: float) -> list[ConversationRecord]:
        now = _now()
        return [r for r in self._records.values() if now - r.at <= seconds]

    def _is_cached(
        self, model: str, messages: list[dict[str, Any]], tools: Any
    ) -> bool:
        sent = self._sent.get(model)
        return (
            sent is not None
            and _now() - sent.at <= CACHE_FRESH_SECONDS
            and sent.covers(messages, tools)
        )

    # --- every request we send ----------------------------------------------

    @callback
    def request_started(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        conversation: bool,
    ) -> RequestNote:
        """Note a request to the server; pass the note to request_finished."""
        note = RequestNote(model, SentPrompt.of(messages, tools, _now()), conversation)
        self._sent[model] = note.sent
        return note

    @callback
    def request_finished(
        self, note: RequestNote, answer: dict[str, Any] | None
    ) -> None:
        """The request ended; ``answer`` is the assistant message it produced."""
        if self._sent.get(note.model) is note.sent:
            # Not replaced by a later request: the server holds this one.
            self._sent[note.model] = note.sent.answered(answer, _now())
        if not note.conversation:
            # An AI task or an extraction read its own prompt: the
            # conversation's is gone.
            self._schedule_rewarm(note.model)

    @asynccontextmanager
    async def background_request(
        self, model: str, messages: list[dict[str, Any]], job: Job
    ) -> AsyncIterator[None]:
        """One background request of another kind (a local fact extraction call).

        It waits for its turn in the scheduler; the server's cache holds its
        prompt afterwards, so the conversation's prefix is sent again once
        the server is free.
        """
        async with self._scheduler.turn(job):
            self.stats.background_requests += 1
            note = self.request_started(model, messages, None, conversation=False)
            try:
                yield
            finally:
                self.request_finished(note, None)

    # --- replies ------------------------------------------------------------

    @callback
    def reply_starting(self) -> None:
        """A reply is about to use the server: nothing of ours may delay it."""
        self._cancel_rewarms()
        abandoned = 0
        for model, warming in list(self._warming.items()):
            if warming.sent:
                # Left to finish on the server: see the module docstring.
                abandoned += 1
            else:
                if warming.task is not None:
                    warming.task.cancel()
                self._warming.pop(model, None)
                self.stats.withdrawn += 1
        if abandoned:
            self.stats.abandoned += abandoned
            LOGGER.debug("A reply starts while %s warm request(s) run", abandoned)

    @callback
    def reply_finished(self, model: str) -> None:
        """Once the server is free, the next turn's prefix is sent again unless cached.

        The reply's own prompt may not hold it (a retry without the history,
        an answer from the live-data tools that used no model), and a local
        extraction after it replaces it; the re-warm waits for its turn
        behind the extraction calls.
        """
        self._schedule_rewarm(model)

    # --- re-warm ------------------------------------------------------------

    @callback
    def _schedule_rewarm(self, model: str) -> None:
        if self._closed or not self._talked_within(RECENT_TALK_SECONDS):
            return
        if (unsub := self._rewarm_timers.pop(model, None)) is not None:
            unsub()

        @callback
        def due(_now_dt: datetime) -> None:
            self._rewarm_timers.pop(model, None)
            self._send_warm(model, Job.REWARM, "re-warm", self._rewarm_request)

        self._rewarm_timers[model] = async_call_later(
            self._hass, REWARM_DELAY_SECONDS, due
        )

    @callback
    def _cancel_rewarms(self) -> None:
        for unsub in self._rewarm_timers.values():
            unsub()
        self._rewarm_timers.clear()

    def _rewarm_request(self, model: str) -> WarmRequest | None:
        """What a re-warm sends, decided at its turn; None when nothing is needed."""
        if self._scheduler.waiting(Job.EXTRACTION):
            # It would be replaced at once; the extraction's end asks again.
            return None
        record = self._latest(model=model)
        if record is None or not self._talked_within(RECENT_TALK_SECONDS):
            return None
        messages = self._prefix_messages(record)
        if self._is_cached(model, messages, record.tools):
            return None
        self.stats.rewarms += 1
        return messages, record.tools

    # --- warm-up while the user talks -----------------------------------------

    @callback
    def warm_up(self, agent: str) -> None:
        """A voice pipeline started for this agent: have its prompt cached."""
        record = self._latest(agent=agent)
        if record is None or self._scheduler.replying:
            # Nothing known yet (it is learnt from the first reply), or a
            # reply is reading a prompt of this conversation already.
            return

        def request(model: str) -> WarmRequest | None:
            messages = self._prefix_messages(record)
            if self._is_cached(model, messages, record.tools):
                self.stats.warm_ups_skipped += 1
                return None
            self.stats.warm_ups += 1
            return messages, record.tools

        self._send_warm(record.model, Job.WARM_UP, "warm-up", request)

    # --- keep the model loaded ------------------------------------------------

    @callback
    def _async_keep_loaded(self, _now_dt: datetime) -> None:
        now = _now()
        for record in self._talked_within(KEEP_LOADED_WINDOW_SECONDS):
            model = record.model
            sent = self._sent.get(model)
            if self._scheduler.busy or (
                sent is not None and now - sent.at < KEEP_LOADED_IDLE_SECONDS
            ):
                continue
            latest = self._latest(model=model)
            if latest is not record:
                continue  # one request per model, for its most recent speaker

            def request(
                _model: str, record: ConversationRecord = record
            ) -> WarmRequest:
                self.stats.keep_alives += 1
                return self._prefix_messages(record), record.tools

            self._send_warm(model, Job.REWARM, "keep-alive", request)

    # --- sending ----------------------------------------------------------------

    @callback
    def _send_warm(
        self,
        model: str,
        job: Job,
        why: str,
        request: Callable[[str], WarmRequest | None],
    ) -> None:
        """Send a one-token request when it is its turn (one per model at a time)."""
        if self._closed or model in self._warming:
            return
        warming = _Warming()
        task = self._entry.async_create_background_task(
            self._hass,
            self._async_warm(warming, model, job, why, request),
            f"local_assistant prompt cache: {why}",
        )
        if not task.done():
            warming.task = task
            self._warming[model] = warming

            def done(_task: asyncio.Task[None]) -> None:
                if self._warming.get(model) is warming:
                    del self._warming[model]

            task.add_done_callback(done)

    async def _async_warm(
        self,
        warming: _Warming,
        model: str,
        job: Job,
        why: str,
        request: Callable[[str], WarmRequest | None],
    ) -> None:
        """One request that reads the prompt and generates a single token."""
        async with self._scheduler.turn(job):
            # Decided now, at its turn: the facts, the history and what the
            # server holds may have changed while it waited.
            prepared = request(model)
            if prepared is None:
                return
            warming.sent = True
            messages, tools = prepared
            await self._async_send_warm(model, messages, tools, why)

    async def _async_send_warm(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        why: str,
    ) -> None:
        body: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "max_tokens": 1,
            "temperature": 0,
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = tools
        note = self.request_started(model, messages, tools, conversation=True)
        figures = CompletionFigures()
        try:
            sent_at = time.monotonic()
            stream = await self._client.chat.completions.create(
                model=model, messages=[], stream=True, extra_body=body
            )
            try:
                async for _chunk in observe_stream(stream, figures, sent_at):
                    pass
            finally:
                await stream.close()
        except WARM_ERRORS as err:
            self.stats.failed += 1
            LOGGER.debug("Prompt cache %s failed: %s", why, type(err).__name__)
            # Only our own note: a reply sent since holds the server's cache.
            if self._sent.get(model) is note.sent:
                del self._sent[model]
        else:
            LOGGER.debug(
                "Prompt cache %s: %s prompt tokens, %s cached, %.0f ms",
                why,
                figures.prompt_tokens,
                figures.cached_tokens,
                figures.total_ms or 0,
            )
        finally:
            self.request_finished(note, None)

    # --- lifecycle ------------------------------------------------------------

    async def async_wait_idle(self) -> None:
        """Wait until no warm request waits or runs (tests, benchmarks)."""
        while tasks := [
            warming.task
            for warming in self._warming.values()
            if warming.task is not None and not warming.task.done()
        ]:
            # gather() on done tasks returns without yielding to the loop, so
            # the done callbacks that clear _warming would never run: only
            # tasks still running are awaited.
            await asyncio.gather(*tasks, return_exceptions=True)

    @property
    def rewarm_pending(self) -> bool:
        """Whether a re-warm is waiting for its delay (tests, benchmarks)."""
        return bool(self._rewarm_timers)

    @callback
    def async_shutdown(self) -> None:
        """Stop timers; the entry cancels its background tasks itself."""
        self._closed = True
        self._cancel_rewarms()
        if self._unsub_keep_loaded is not None:
            self._unsub_keep_loaded()
            self._unsub_keep_loaded = None

    def diagnostics(self) -> dict[str, Any]:
        """Counts only: no prompt text."""
        stats = self.stats
        return {
            "speakers_remembered": len(self._records),
            "warm_ups": stats.warm_ups,
            "warm_ups_skipped_cached": stats.warm_ups_skipped,
            "rewarms": stats.rewarms,
            "keep_alives": stats.keep_alives,
            "abandoned_for_a_reply": stats.abandoned,
            "withdrawn_for_a_reply": stats.withdrawn,
            "failed": stats.failed,
            "background_requests": stats.background_requests,
            "keep_model_loaded": self._unsub_keep_loaded is not None,
        }
