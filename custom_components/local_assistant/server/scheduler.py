"""One queue for a model server that answers one request at a time: replies first.

Swama (and llama.cpp with ``-np 1``) runs one inference at a time; a request
that arrives while another runs waits on the server, where we can no longer
put it behind a reply. So every request of ours that nobody is waiting for (a
warm-up, a fact extraction call, a re-warm of the prompt cache, a keep-alive)
asks :class:`ServerScheduler` for its turn first:

* a **reply** (a conversation turn or an AI task, all its tool rounds) never
  waits here: it marks the server as taken for as long as it runs, and no
  background call starts until it is over;
* a **background call** waits until no reply runs and no other background
  call is in flight, then runs alone; one call, one turn, so an extraction
  of several calls cannot slip between a reply's tool rounds;
* when the server frees up, the most urgent waiting call goes first
  (:class:`Job`: a warm-up while the user talks, then extraction, then
  re-warms and keep-alives), in the order they asked within one kind.

A background call already sent is never cancelled (Swama keeps no cache of a
cancelled request, and llama.cpp notices a disconnect only between batches):
a reply that starts meanwhile queues behind it on the server. A call still
waiting here can be cancelled at no cost.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from enum import IntEnum
import heapq
import itertools

__all__ = ["Job", "ServerScheduler"]


class Job(IntEnum):
    """Background work on the server, most urgent first."""

    # A voice pipeline started: the user is talking now, their reply is next.
    WARM_UP = 0
    # One fact extraction call (the exchange is fresh; a re-warm after it
    # would be replaced by the next one).
    EXTRACTION = 1
    # The conversation's prefix sent again, or a keep-alive: only when
    # nothing else waits.
    REWARM = 2


@dataclass(order=True, slots=True)
class _Waiter:
    job: Job
    number: int
    granted: asyncio.Future[None] = field(compare=False)


class ServerScheduler:
    """Replies first, then one background call at a time, most urgent first."""

    def __init__(self) -> None:
        """Start with the server free."""
        self._replies = 0
        self._background: Job | None = None
        self._waiting: list[_Waiter] = []
        self._numbers = itertools.count()
        self._idle = asyncio.Event()
        self._idle.set()

    # --- replies --------------------------------------------------------------

    @asynccontextmanager
    async def reply(self) -> AsyncIterator[None]:
        """Mark a reply as running for the block; it never waits here."""
        self._replies += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._replies -= 1
            self._next()

    # --- background calls -----------------------------------------------------

    @asynccontextmanager
    async def turn(self, job: Job) -> AsyncIterator[None]:
        """Run one background call in the block, once it is its turn."""
        await self._acquire(job)
        try:
            yield
        finally:
            self._background = None
            self._next()

    async def _acquire(self, job: Job) -> None:
        if self._free and not self._waiting:
            self._take(job)
            return
        waiter = _Waiter(
            job, next(self._numbers), asyncio.get_running_loop().create_future()
        )
        heapq.heappush(self._waiting, waiter)
        try:
            await waiter.granted
        except asyncio.CancelledError:
            if waiter.granted.done() and not waiter.granted.cancelled():
                # Granted in the same moment it was cancelled: pass it on.
                self._background = None
                self._next()
            elif waiter in self._waiting:
                self._waiting.remove(waiter)
                heapq.heapify(self._waiting)
            raise

    def _take(self, job: Job) -> None:
        self._background = job
        self._idle.clear()

    def _next(self) -> None:
        """Hand the free server to the most urgent waiting call."""
        while self._free and self._waiting:
            waiter = heapq.heappop(self._waiting)
            if waiter.granted.done():
                continue  # cancelled while waiting
            self._take(waiter.job)
            waiter.granted.set_result(None)
        if self._free and not self._waiting:
            self._idle.set()

    # --- state ----------------------------------------------------------------

    @property
    def _free(self) -> bool:
        return self._replies == 0 and self._background is None

    @property
    def replying(self) -> bool:
        """Whether a reply is running now."""
        return self._replies > 0

    @property
    def busy(self) -> bool:
        """Whether a reply or a background call is running now."""
        return not self._free

    def waiting(self, job: Job | None = None) -> int:
        """Background calls waiting for their turn (of one kind, or all)."""
        return sum(
            1
            for waiter in self._waiting
            if not waiter.granted.done() and (job is None or waiter.job == job)
        )

    async def async_wait_idle(self) -> None:
        """Return once nothing runs and nothing waits (tests, benchmarks)."""
        await self._idle.wait()
