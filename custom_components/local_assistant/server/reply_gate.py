"""Lets background work on the model server wait until no reply is running.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class ReplyGate:
    """Count replies in flight; background jobs wait for zero.

    Swama runs one inference at a time, so an extraction that starts first
    would make the user wait for it. Extraction waits here instead.
    """

    def __init__(self) -> None:
        """Start with no reply running."""
        self._active = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @asynccontextmanager
    async def reply(self) -> AsyncIterator[None]:
        """Mark a reply as running for the duration of the block."""
        self._active += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._active -= 1
            if not self._active:
                self._idle.set()

    async def async_wait_idle(self) -> None:
        """Return once no reply is running."""
        await self._idle.wait()

    @property
    def busy(self) -> bool:
        """Whether a reply is running now."""
        return self._active > 0
