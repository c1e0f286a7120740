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
  the speaker's current facts and session history
  (:meth:`PromptCacheKeeper.conversation_prefix`), built when needed, kept in
  RAM only and never logged. A fact extractor on the same server can send
  its request as that prefix plus its own turn, so the server's cached prompt
  stays the conversation's.
* **What the server holds.** Every request we send is noted with its answer
  (:class:`~.prompt_cache.SentPrompt`); a request that does not start with
  the next turn's prefix (an AI task, an extraction that does not share the
  prefix) has replaced it.
* **Re-warm.** Then, once the server is idle (no reply, none of our requests,
  the local extractor done) and someone talked in the last few minutes, the
  next turn's prefix is sent again as a one-token request, coalesced: the
  next turn finds it cached.
* **Warm-up.** A voice pipeline calls the agent's ``async_prepare`` while the
  user is still talking; the agent's most recent prompt is sent as a
  one-token request unless our last request already started with it
  recently. A reply that starts meanwhile does not wait for it: a pending
  re-warm is cancelled, a warm-up already sent is left to finish on the
  server (abandoned, not cancelled: Swama keeps no cache of a cancelled
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
from dataclasses import dataclass
from datetime import datetime, timedelta
import time
from typing import TYPE_CHECKING, Any

from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers.event import async_call_later, async_track_time_interval
from homeassistant.util import dt as dt_util
import httpx
import openai

from ..const import (
    CONF_EXTRACTION,
    DEFAULT_EXTRACTION,
    EXTRACTION_LOCAL,
    LOGGER,
)
from ..llm.figures import CompletionFigures
from ..llm.messages import history_messages
from ..llm.prompt import Prompt
from ..llm.stream import observe_stream
from .prompt_cache import SentPrompt
from .reply_gate import ReplyGate

if TYPE_CHECKING:
    from .. import LocalAssistantConfigEntry
    from ..memory.extraction import FactExtractor
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
    failed: int = 0
    shared_prefixes: int = 0  # extractor requests built on the conversation prefix


@dataclass(slots=True)
class RequestNote:
    """One request in flight, as noted by :meth:`PromptCacheKeeper.request_started`."""

    model: str
    sent: SentPrompt
    conversation: bool


class PromptCacheKeeper:
    """Keeps what the next turn sends in the server's prompt cache (one per entry)."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: LocalAssistantConfigEntry,
        client: openai.AsyncOpenAI,
        reply_gate: ReplyGate,
        *,
        keep_loaded: bool = False,
    ) -> None:
        """Nothing is sent until someone talks."""
        self._hass = hass
        self._entry = entry
        self._client = client
        self._gate = reply_gate
        self._records: dict[str, ConversationRecord] = {}
        self._sent: dict[str, SentPrompt] = {}
        self._in_flight = 0
        self._warming: dict[str, asyncio.Task[None]] = {}
        self._rewarm_timers: dict[str, CALLBACK_TYPE] = {}
        self._watch: asyncio.Task[None] | None = None
        self._watch_model: str | None = None
        self._provider_called = False
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

    @callback
    def conversation_prefix(
        self, speaker: str
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None] | None:
        """Messages and tools the speaker's next turn starts with, or None.

        For the fact extractor on the agent's own server: it sends this prefix
        plus its own turn, so the server keeps the conversation's prompt
        cached. Calling it notes that such a request is about to be sent.
        """
        record = self._records.get(speaker)
        if record is None:
            return None
        messages = self._prefix_messages(record)
        self.stats.shared_prefixes += 1
        self._provider_called = True
        # The extractor's own turn follows; what comes after is unknown.
        self._sent[record.model] = SentPrompt.of(messages, record.tools, _now())
        return messages, record.tools

    def _memory(self) -> Memory:
        return self._entry.runtime_data.memory

    def _local_extractor(self) -> FactExtractor | None:
        """The fact extractor when it uses this server, else None."""
        if (
            self._entry.options.get(CONF_EXTRACTION, DEFAULT_EXTRACTION)
            != EXTRACTION_LOCAL
        ):
            return None
        return self._memory().extractor

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
        self._in_flight += 1
        return note

    @callback
    def request_finished(
        self, note: RequestNote, answer: dict[str, Any] | None
    ) -> None:
        """The request ended; ``answer`` is the assistant message it produced."""
        self._in_flight -= 1
        if self._sent.get(note.model) is note.sent:
            # Not replaced by a later request: the server holds this one.
            self._sent[note.model] = note.sent.answered(answer, _now())
        if not note.conversation:
            # An AI task read its own prompt: the conversation's is gone.
            self._schedule_rewarm(note.model)

    # --- replies ------------------------------------------------------------

    @callback
    def reply_starting(self) -> None:
        """A reply is about to use the server: nothing of ours may delay it."""
        self._cancel_rewarms()
        abandoned = sum(not task.done() for task in self._warming.values())
        if abandoned:
            # Left to finish on the server: see the module docstring.
            self.stats.abandoned += abandoned
            LOGGER.debug("A reply starts while %s warm request(s) run", abandoned)

    @callback
    def reply_finished(self, model: str) -> None:
        """Call before the exchange is recorded (which starts local extraction).

        Once the server is idle, the next turn's prefix is sent again unless
        it is cached: the reply's own prompt may not hold it (a retry without
        the history, an answer from the live-data tools that used no model),
        and when the agent's own server distils facts the extraction request
        may replace it; then the re-warm waits until the extractor is done.
        """
        extractor = self._local_extractor()
        if extractor is None:
            self._schedule_rewarm(model)
            return
        self._watch_model = model
        if self._watch is not None and not self._watch.done():
            return  # the running watch re-checks when the extractor is idle
        runs = extractor.stats.runs
        self._provider_called = False
        self._watch = self._entry.async_create_background_task(
            self._hass,
            self._async_watch_extraction(runs),
            "local_assistant prompt cache: after extraction",
        )

    async def _async_watch_extraction(self, runs_before: int) -> None:
        # Let the caller record the exchange first (it schedules the extraction).
        await asyncio.sleep(0)
        extractor = self._memory().extractor
        if extractor is None:
            return
        await extractor.async_wait_idle()
        model = self._watch_model
        if model is None:
            return
        if extractor.stats.runs != runs_before and not self._provider_called:
            # It sent a prompt of its own: the server's cache holds that now.
            self._sent.pop(model, None)
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
            self._rewarm(model)

        self._rewarm_timers[model] = async_call_later(
            self._hass, REWARM_DELAY_SECONDS, due
        )

    @callback
    def _cancel_rewarms(self) -> None:
        for unsub in self._rewarm_timers.values():
            unsub()
        self._rewarm_timers.clear()

    @callback
    def _rewarm(self, model: str) -> None:
        if self._busy(model):
            # A reply caches its own prompt; our request or the extractor's
            # schedules another re-warm when it ends.
            return
        record = self._latest(model=model)
        if record is None or not self._talked_within(RECENT_TALK_SECONDS):
            return
        messages = self._prefix_messages(record)
        if self._is_cached(model, messages, record.tools):
            return
        self.stats.rewarms += 1
        self._send_warm(model, messages, record.tools, "re-warm")

    def _busy(self, model: str) -> bool:
        extractor = self._local_extractor()
        return (
            self._gate.busy
            or self._in_flight > 0
            or model in self._warming
            or (self._watch is not None and not self._watch.done())
            or (extractor is not None and extractor.pending_total() > 0)
        )

    # --- warm-up while the user talks -----------------------------------------

    @callback
    def warm_up(self, agent: str) -> None:
        """A voice pipeline started for this agent: have its prompt cached."""
        record = self._latest(agent=agent)
        if record is None or self._gate.busy or record.model in self._warming:
            # Nothing known yet (it is learnt from the first reply), or the
            # server is already reading a prompt of this conversation.
            return
        messages = self._prefix_messages(record)
        if self._is_cached(record.model, messages, record.tools):
            self.stats.warm_ups_skipped += 1
            return
        self.stats.warm_ups += 1
        self._send_warm(record.model, messages, record.tools, "warm-up")

    # --- keep the model loaded ------------------------------------------------

    @callback
    def _async_keep_loaded(self, _now_dt: datetime) -> None:
        now = _now()
        for record in self._talked_within(KEEP_LOADED_WINDOW_SECONDS):
            model = record.model
            sent = self._sent.get(model)
            if self._busy(model) or (
                sent is not None and now - sent.at < KEEP_LOADED_IDLE_SECONDS
            ):
                continue
            latest = self._latest(model=model)
            if latest is not record:
                continue  # one request per model, for its most recent speaker
            self.stats.keep_alives += 1
            self._send_warm(
                model, self._prefix_messages(record), record.tools, "keep-alive"
            )

    # --- sending ----------------------------------------------------------------

    @callback
    def _send_warm(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        why: str,
    ) -> None:
        task = self._entry.async_create_background_task(
            self._hass,
            self._async_warm(model, messages, tools, why),
            f"local_assistant prompt cache: {why}",
        )
        if not task.done():
            self._warming[model] = task
            task.add_done_callback(lambda _task: self._warming.pop(model, None))

    async def _async_warm(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        why: str,
    ) -> None:
        """One request that reads the prompt and generates a single token."""
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
            self._sent.pop(model, None)
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
        """Wait until no warm request or extraction watch runs (tests, benchmarks)."""
        while tasks := [
            *self._warming.values(),
            *(
                [self._watch]
                if self._watch is not None and not self._watch.done()
                else []
            ),
        ]:
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
            "failed": stats.failed,
            "extractor_shared_prefixes": stats.shared_prefixes,
            "keep_model_loaded": self._unsub_keep_loaded is not None,
        }
