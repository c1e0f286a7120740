"""Separate Qwen3-style ``<think>...</think>`` reasoning from spoken text.

Qwen3 writes its reasoning as ordinary streamed text, even when asked not
to (often just an empty ``<think>\\n\\n</think>\\n\\n``), at the start of
every completion, including the ones that follow tool results. Nothing
inside a block may ever reach TTS, and the visible text must still be
released as early as possible because this sits on the time-to-first-word
path.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

__all__ = ["ThinkFilter", "split_think"]

_OPEN = "<think>"
_CLOSE = "</think>"
_OPEN_LEN = len(_OPEN)
_CLOSE_LEN = len(_CLOSE)
# Longest proper tag prefix that may have to be held back ("</think").
_MAX_HOLD = _CLOSE_LEN - 1


def _could_be_tag(tail: str) -> bool:
    """Return True if ``tail`` (starting with "<") may still grow into a tag."""
    return _OPEN.startswith(tail) or _CLOSE.startswith(tail)


class ThinkFilter:
    """Split streamed model text into visible text and reasoning, incrementally.

    Call :meth:`feed` with each chunk and :meth:`flush` once at the end of
    the stream. Each call returns the ``(visible, thinking)`` text it
    produced. Only a trailing fragment that could still become a tag
    (``<``, ``<t``, ... ``</think``) is held back; all other visible text is
    returned immediately. The work per chunk is linear in its length.

    Tags are matched exactly and in lowercase (what Qwen emits). Inside a
    block only ``</think>`` is special; blocks do not nest.

    Whitespace: the visible output of a stream never starts with
    whitespace, and whitespace right after a ``</think>`` is dropped (Qwen
    puts ``\\n\\n`` there). All other whitespace is kept exactly.

    A ``</think>`` outside any block (the chat template already prefilled
    ``<think>``) is removed and recorded in :attr:`saw_bare_close`.

    With ``start_in_think=True`` the stream starts inside a block, for
    servers known to prefill ``<think>``. Because the model may also skip
    reasoning entirely, text is then HELD (nothing is returned) until the
    first ``</think>``, which releases it as thinking; if the stream ends
    without one, :meth:`flush` returns the held text as visible. This adds
    latency, so only use it when the server is known to prefill.
    """

    __slots__ = (
        "_held",
        "_implicit",
        "_in_think",
        "_pending",
        "_saw_bare_close",
        "_skip_ws",
    )

    def __init__(self, *, start_in_think: bool = False) -> None:
        """Initialise the filter, optionally already inside a think block."""
        self._in_think = start_in_think
        # Inside the prefilled block: reasoning is held, not returned, because
        # flush() may still have to turn it into visible text.
        self._implicit = start_in_think
        self._held: list[str] = []
        # Possible tag prefix carried over to the next chunk (<= 7 chars).
        self._pending = ""
        # Drop whitespace until the next non-whitespace visible character.
        self._skip_ws = True
        self._saw_bare_close = False

    @property
    def saw_bare_close(self) -> bool:
        """Whether a ``</think>`` arrived while not inside a block."""
        return self._saw_bare_close

    def feed(self, text: str) -> tuple[str, str]:
        """Consume one chunk; return the ``(visible, thinking)`` it released."""
        if not text:
            return "", ""
        # Fast path for the common case: plain visible text with no "<".
        if (
            not self._in_think
            and not self._pending
            and not self._skip_ws
            and "<" not in text
        ):
            return text, ""
        buf = self._pending + text if self._pending else text
        self._pending = ""
        return self._scan(buf)

    def flush(self) -> tuple[str, str]:
        """End the stream; return whatever was still held back."""
        pending = self._pending
        self._pending = ""
        if self._implicit:
            # No </think> ever came: the model did not reason this time, so
            # the held text is the answer. The held text cannot contain
            # "</think>", so a plain filter over it gives the visible part
            # (and treats any "<think>" it opened as unclosed reasoning).
            raw = "".join(self._held) + pending
            self._held.clear()
            self._implicit = False
            self._in_think = False
            return split_think(raw)
        if not pending:
            return "", ""
        if self._in_think:
            # Unclosed block: a dangling "</thi" is still reasoning.
            return "", pending
        # A tag prefix that never completed is just text.
        return self._visible(pending), ""

    def _visible(self, text: str) -> str:
        """Apply the whitespace-dropping rule to visible text."""
        if self._skip_ws:
            text = text.lstrip()
            if text:
                self._skip_ws = False
        return text

    def _scan(self, buf: str) -> tuple[str, str]:
        """Split ``buf`` at tags, updating state; hold back a tag prefix."""
        visible: list[str] = []
        thinking: list[str] = []
        n = len(buf)
        pos = 0
        while pos < n:
            if self._in_think:
                end = buf.find(_CLOSE, pos)
                if end < 0:
                    # Hold back a suffix that may be the start of "</think>".
                    # "<" occurs only once in the tag, so only the last "<"
                    # in the final 7 characters can start such a suffix.
                    cut = buf.rfind("<", max(pos, n - _MAX_HOLD))
                    if cut < 0 or not _CLOSE.startswith(buf[cut:]):
                        cut = n
                    self._think(buf[pos:cut], thinking)
                    self._pending = buf[cut:]
                    break
                self._think(buf[pos:end], thinking)
                if self._implicit:
                    # The prefilled block closed: release what was held
                    # (all of it went to _held, so `thinking` is empty here).
                    thinking.append("".join(self._held))
                    self._held.clear()
                    self._implicit = False
                self._in_think = False
                self._skip_ws = True
                pos = end + _CLOSE_LEN
                continue

            # Outside a block: visible text runs up to the next real tag.
            search = pos
            while True:
                lt = buf.find("<", search)
                if lt < 0:
                    self._emit(buf[pos:], visible)
                    pos = n
                    break
                if buf.startswith(_OPEN, lt):
                    self._emit(buf[pos:lt], visible)
                    self._in_think = True
                    pos = lt + _OPEN_LEN
                    break
                if buf.startswith(_CLOSE, lt):
                    self._emit(buf[pos:lt], visible)
                    self._saw_bare_close = True
                    self._skip_ws = True
                    pos = lt + _CLOSE_LEN
                    break
                if n - lt <= _MAX_HOLD and _could_be_tag(buf[lt:]):
                    self._emit(buf[pos:lt], visible)
                    self._pending = buf[lt:]
                    pos = n
                    break
                # A "<" that is not a tag ("a < b", "<thinking>"): keep going.
                search = lt + 1
        return "".join(visible), "".join(thinking)

    def _emit(self, text: str, out: list[str]) -> None:
        if text:
            text = self._visible(text)
            if text:
                out.append(text)

    def _think(self, text: str, out: list[str]) -> None:
        if text:
            if self._implicit:
                self._held.append(text)
            else:
                out.append(text)


def split_think(text: str, *, start_in_think: bool = False) -> tuple[str, str]:
    """Split a whole completion into ``(visible, thinking)`` in one call."""
    think_filter = ThinkFilter(start_in_think=start_in_think)
    visible, thinking = think_filter.feed(text)
    tail_visible, tail_thinking = think_filter.flush()
    return visible + tail_visible, thinking + tail_thinking
