"""Short-term memory: one small, RAM-only conversation buffer per speaker.

Home Assistant's own chat log is keyed by conversation id and expires after a
few minutes; a new voice request often carries a new id, so without this
buffer the assistant forgets the previous sentence. The buffer holds only
user text and final assistant text (never tool calls or results: those are
live data and stale on replay).

A turn that used a tool (a device command, a state or live-data question) is
kept as the user's words alone. Replaying "Turn on the light" / "The light is
on." without the tool call between them teaches a small model to confirm
without acting: measured on the bundled 0.5B model, the next command got a
tool call 0 of 8 times after such a replay, 8 of 8 after the user's words
alone (docs/benchmarks.md). Follow-ups ("turn it off again") still see what
was asked, and the buffer remembers the targets of the last action.

Replaying too much makes a 4B model parrot itself, so every buffer is bounded:

* idle reset: a buffer untouched for ``idle_seconds`` is dropped, both when
  it is read (or appended to) and by :meth:`SessionBuffers.sweep`, so memory
  stays bounded even for speakers who never come back;
* a message cap and a character budget, enforced by dropping whole exchanges
  from the oldest end so history never starts with an assistant turn;
* one oversized exchange is truncated (with an ellipsis) to fit the budget
  instead of flooding the prompt.

Nothing here is persisted. Times are floats of epoch seconds supplied by the
caller, so tests need no clock patching. Not thread-safe: it is meant to be
used from Home Assistant's event loop only.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Literal

__all__ = ["ELLIPSIS", "Command", "SessionBuffers", "Turn", "truncate"]

ELLIPSIS = "…"


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a session: who said it and the visible text."""

    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True, slots=True)
class Command:
    """A device command HA's intents recognized, as HA read it.

    The user's words, or the sentence a follow-up was read as ("turn Kitchen
    off again"); an elliptical follow-up ("and the living room?") is read as
    this sentence with another name in it.
    """

    sentence: str
    intent: str


def truncate(text: str, limit: int) -> str:
    """Return ``text`` cut to at most ``limit`` characters, marked with an ellipsis."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    return text[: limit - 1].rstrip() + ELLIPSIS


def _fit_exchange(user: str, assistant: str, budget: int) -> tuple[str, str]:
    """Shrink one exchange so both texts together fit in ``budget`` characters.

    A short side keeps its full text and the long side gets the rest; when
    both are long each gets about half, so a pasted essay cannot crowd out
    the answer (or the other way round).
    """
    if len(user) + len(assistant) <= budget:
        return user, assistant
    half = budget // 2
    if len(user) <= half:
        return user, truncate(assistant, budget - len(user))
    if len(assistant) <= budget - half:
        return truncate(user, budget - len(assistant)), assistant
    return truncate(user, half), truncate(assistant, budget - half)


class _Buffer:
    """Texts of one speaker plus the bookkeeping needed to enforce the caps.

    Only the texts are stored, in (user, assistant) pairs; a tool turn stores
    None for its answer, which is never replayed. Slots and bare strings keep
    10,000 not-yet-swept buffers cheap; Turn objects are built on read.
    """

    __slots__ = ("chars", "last_action", "last_active", "last_command", "texts")

    def __init__(self, now: float) -> None:
        self.texts: deque[str | None] = deque()
        self.chars = 0
        self.last_active = now
        # Targets of the latest exchange when it was a device action, else ().
        self.last_action: tuple[str, ...] = ()
        # The latest exchange's command when HA recognized it and it acted.
        self.last_command: Command | None = None

    def push_exchange(self, user_text: str, assistant_text: str | None) -> None:
        self.texts += (user_text, assistant_text)
        self.chars += len(user_text) + len(assistant_text or "")

    def pop_oldest_exchange(self) -> None:
        # Removing a pair keeps the buffer exchange-aligned: history never
        # starts with an assistant turn.
        user, assistant = self.texts.popleft(), self.texts.popleft()
        self.chars -= len(user or "") + len(assistant or "")

    def turns(self) -> list[Turn]:
        turns: list[Turn] = []
        for index, text in enumerate(self.texts):
            if text is not None:
                turns.append(Turn("assistant" if index % 2 else "user", text))
        return turns


class SessionBuffers:
    """Per-speaker conversation buffers with idle reset and hard caps."""

    __slots__ = ("_buffers", "idle_seconds", "max_chars", "max_messages")

    def __init__(
        self, *, idle_seconds: float, max_messages: int, max_chars: int
    ) -> None:
        """Create empty buffers.

        ``max_messages`` counts turns; because whole exchanges are dropped an
        odd value behaves like the even number below it. ``max_chars`` is the
        per-speaker budget for the text of all kept turns.
        """
        if idle_seconds <= 0:
            raise ValueError("idle_seconds must be positive")
        if max_messages < 2:
            raise ValueError("max_messages must allow at least one exchange (2)")
        if max_chars < 2:
            raise ValueError("max_chars must be at least 2")
        self.idle_seconds = idle_seconds
        self.max_messages = max_messages
        self.max_chars = max_chars
        self._buffers: dict[str, _Buffer] = {}

    def __len__(self) -> int:
        """Return the number of buffers currently held (idle ones included until swept)."""
        return len(self._buffers)

    def history(self, speaker: str, now: float) -> list[Turn]:
        """Return the speaker's turns, oldest first; empty after an idle gap.

        Reading does not count as activity: only :meth:`append` does.
        """
        buffer = self._live(speaker, now)
        return [] if buffer is None else buffer.turns()

    def append(
        self,
        speaker: str,
        user_text: str,
        assistant_text: str | None,
        now: float,
        *,
        action_targets: tuple[str, ...] = (),
        command: Command | None = None,
    ) -> None:
        """Record one exchange, enforce the caps and mark the speaker active.

        ``assistant_text`` is None for a turn that used a tool: only the
        user's words are replayed. ``action_targets`` names what a device
        action of this exchange acted on (empty when it changed nothing);
        ``command`` is that action as HA recognized it, if it did.
        """
        buffer = self._live(speaker, now)
        if buffer is None:
            buffer = self._buffers[speaker] = _Buffer(now)
        if assistant_text is None:
            user_text = truncate(user_text, self.max_chars)
        else:
            user_text, assistant_text = _fit_exchange(
                user_text, assistant_text, self.max_chars
            )
        buffer.push_exchange(user_text, assistant_text)
        buffer.last_action = action_targets
        buffer.last_command = command if action_targets else None
        # The new exchange fits the budget on its own, so this stops at the
        # latest exchange at the very latest.
        while len(buffer.texts) > self.max_messages or buffer.chars > self.max_chars:
            buffer.pop_oldest_exchange()
        buffer.last_active = max(buffer.last_active, now)

    def last_action(self, speaker: str, now: float) -> tuple[str, ...]:
        """Targets of the speaker's latest exchange if it was a device action."""
        buffer = self._live(speaker, now)
        return () if buffer is None else buffer.last_action

    def last_command(self, speaker: str, now: float) -> Command | None:
        """The speaker's latest exchange as HA recognized it, if it acted."""
        buffer = self._live(speaker, now)
        return None if buffer is None else buffer.last_command

    def forget(self, speaker: str) -> bool:
        """Drop the speaker's buffer; return whether there was one."""
        return self._buffers.pop(speaker, None) is not None

    def sweep(self, now: float) -> int:
        """Drop every idle buffer and return how many were dropped."""
        live = {
            key: buffer
            for key, buffer in self._buffers.items()
            if not self._is_idle(buffer, now)
        }
        dropped = len(self._buffers) - len(live)
        if dropped:
            # A new dict, not deletions: a dict keeps its table at its largest
            # size (10,000 idle speakers would leave 200 KB behind).
            self._buffers = live
        return dropped

    def speakers(self) -> list[str]:
        """Return the keys of the buffers currently held."""
        return list(self._buffers)

    def stats(self) -> dict[str, int]:
        """Return counts for diagnostics; never any text (it is personal data)."""
        return {
            "speakers": len(self._buffers),
            "messages": sum(
                sum(text is not None for text in b.texts)
                for b in self._buffers.values()
            ),
            "chars": sum(b.chars for b in self._buffers.values()),
        }

    def _is_idle(self, buffer: _Buffer, now: float) -> bool:
        # Either way: a last activity further ahead than the gap is from a
        # clock since set back, and how long the silence was is unknown.
        return abs(now - buffer.last_active) > self.idle_seconds

    def _live(self, speaker: str, now: float) -> _Buffer | None:
        """Return the speaker's buffer, dropping it first if it went idle."""
        buffer = self._buffers.get(speaker)
        if buffer is not None and self._is_idle(buffer, now):
            del self._buffers[speaker]
            return None
        return buffer
