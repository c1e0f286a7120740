"""Background fact extraction after each exchange, off the reply path.

Runs are serialized per speaker and coalesced: exchanges that arrive while a
run is under way wait in a small bounded queue and go to the extractor
together in the next run. A failed run leaves the facts exactly as they were
and keeps its exchanges for the next attempt (still bounded), so an extractor
that is down for an hour neither loses facts nor grows a queue.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from typing import Any, cast

from homeassistant.core import HomeAssistant, callback
from homeassistant.util import dt as dt_util
import httpx
import openai

from ..const import EXTRACTION_MAX_TOKENS, LOGGER
from ..reply_gate import ReplyGate
from .extraction_prompt import (
    ExtractionParseError,
    build_extraction_messages,
    parse_fact_list,
)
from .store import FactStore

# Exchanges kept per speaker while the extractor is busy or down.
MAX_PENDING_EXCHANGES = 6


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
    ) -> None:
        """`reply_gate` is set when the extractor shares the agent's server."""
        self._hass = hass
        self._client = client
        self._model = model
        self._facts = facts
        self._max_facts = max_facts
        self._timeout = timeout
        self._gate = reply_gate
        self._pending: dict[str, deque[Exchange]] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self.stats = ExtractionStats()

    @callback
    def schedule(self, speaker: str, exchange: Exchange) -> None:
        """Queue an exchange; start a run for the speaker unless one is going."""
        queue = self._pending.setdefault(speaker, deque(maxlen=MAX_PENDING_EXCHANGES))
        queue.append(exchange)
        if speaker not in self._tasks:
            self._tasks[speaker] = self._hass.async_create_background_task(
                self._async_drain(speaker),
                name=f"local_assistant fact extraction {len(self._tasks)}",
            )

    def pending(self, speaker: str) -> int:
        """Exchanges waiting for the speaker (bounded)."""
        return len(self._pending.get(speaker, ()))

    async def async_wait_idle(self) -> None:
        """Wait until every scheduled run has finished (tests, benchmarks, unload)."""
        while self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def async_shutdown(self) -> None:
        """Cancel runs in progress; facts stay as they were."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()

    async def _async_drain(self, speaker: str) -> None:
        try:
            while queue := self._pending[speaker]:
                batch = list(queue)
                queue.clear()
                if not await self._async_extract(speaker, batch):
                    # Keep the exchanges for the next attempt; when space runs
                    # out the oldest go first.
                    self._pending[speaker] = deque(
                        [*batch, *queue], maxlen=MAX_PENDING_EXCHANGES
                    )
                    break
        finally:
            self._tasks.pop(speaker, None)

    async def _async_extract(self, speaker: str, batch: list[Exchange]) -> bool:
        """One extractor call; True when the answer was usable (or rejected as junk)."""
        if self._gate is not None:
            await self._gate.async_wait_idle()
        self.stats.runs += 1
        book = self._facts.book(speaker)
        messages = build_extraction_messages(
            [fact.text for fact in book.active()],
            "\n".join(exchange.user_text for exchange in batch),
            "\n".join(exchange.assistant_text for exchange in batch),
            max_facts=self._max_facts,
        )
        try:
            response = await self._client.chat.completions.create(
                model=self._model,
                messages=cast(Any, messages),
                temperature=0,
                max_tokens=EXTRACTION_MAX_TOKENS,
                stream=False,
                timeout=self._timeout,
            )
            answer = (
                response.choices[0].message.content or "" if response.choices else ""
            )
        except (openai.OpenAIError, httpx.HTTPError, ValueError) as err:
            self.stats.failed += 1
            LOGGER.warning(
                "Fact extraction failed, facts unchanged: %s", type(err).__name__
            )
            return False
        try:
            texts = parse_fact_list(answer)
        except ExtractionParseError as err:
            # A junk answer will not get better by asking again with the same input.
            self.stats.rejected_answers += 1
            LOGGER.warning("Fact extractor answer ignored, facts unchanged: %s", err)
            return True
        # Re-read the book: a user may have edited facts while the model worked.
        change = self._facts.book(speaker).apply_extraction(
            texts, dt_util.utcnow().timestamp()
        )
        if change.changed:
            self.stats.updated += 1
            self._facts.async_schedule_save()
        LOGGER.debug(
            "Facts updated: %s added, %s dropped, %s rewritten",
            len(change.added),
            len(change.dropped),
            len(change.rewritten),
        )
        return True
