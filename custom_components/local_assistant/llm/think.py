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

import re

__all__ = ["ThinkFilter", "split_think"]

_OPEN = "<think>"
_CLOSE = "</think>"
_OPEN_LEN = len(_OPEN)
_CLOSE_LEN = len(_CLOSE)
# Longest proper tag prefix that may have to be held back ("</think").
_MAX_HOLD = _CLOSE_LEN - 1
# Both tags, found as the scan finds them (leftmost first).
_TAGS = re.compile(f"{_OPEN}|{_CLOSE}")


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

    Tags are matched exactly and in lowercase (what Qwen emits, as single
    special tokens). Blocks nest: a ``<think>`` inside a block opens another
    one, and only the ``</think>`` that closes the outermost block ends the
    reasoning ("<think>a<think>b</think>c</think>Answer" shows "Answer").

    Whitespace: the visible output of a stream never starts with
    whitespace, and whitespace right after a ``</think>`` is dropped (Qwen
    puts ``\\n\\n`` there). All other whitespace is kept exactly.

    A ``</think>`` outside any block (the chat template already prefilled
    ``<think>``) is removed and recorded in :attr:`saw_bare_close`.

    With ``start_in_think=True`` the stream starts inside a block, for
    servers known to prefill ``<think>``. Because the model may also skip
    reasoning entirely, text is then HELD (nothing is returned) until the
    block closes, which releases it as thinking; a ``<think>`` before any
    other text means the model opened its block itself (the server does not
    prefill), and it streams as without prefill. If the stream ends with the
    block still open, :meth:`flush` returns the held text as visible, unless
    the completion was cut (``max_tokens``): then it is reasoning cut short.
    This adds latency, so only use it when the server is known to prefill.
    """

    __slots__ = (
        "_blank",
        "_depth",
        "_held",
        "_implicit",
        "_pending",
        "_saw_bare_close",
        "_skip_ws",
    )

    def __init__(self, *, start_in_think: bool = False) -> None:
        """Initialise the filter, optionally already inside a think block."""
        # How many blocks are open (0: the text is visible).
        self._depth = int(start_in_think)
        # Inside the prefilled block: reasoning is held, not returned, because
        # flush() may still have to turn it into visible text. Held raw, tags
        # of nested blocks included, so that flush() can read it again.
        self._implicit = start_in_think
        self._held: list[str] = []
        # The prefilled block holds nothing but whitespace yet.
        self._blank = True
        # Possible tag prefix carried over to the next chunk (<= 7 chars).
        self._pending = ""
        # Drop whitespace until the next non-whitespace visible character.
        self._skip_ws = True
        self._saw_bare_close = False

    @property
    def saw_bare_close(self) -> bool:
        """Whether a ``</think>`` arrived while not inside a block."""
        return self._saw_bare_close

    @property
    def in_think(self) -> bool:
        """Whether the text so far ends inside a block (before :meth:`flush`)."""
        return self._depth > 0

    def feed(self, text: str) -> tuple[str, str]:
        """Consume one chunk; return the ``(visible, thinking)`` it released."""
        if not text:
            return "", ""
        # Fast path for the common case: plain visible text with no "<".
        if (
            not self._depth
            and not self._pending
            and not self._skip_ws
            and "<" not in text
        ):
            return text, ""
        buf = self._pending + text if self._pending else text
        self._pending = ""
        return self._scan(buf)

    def flush(self, *, cut: bool = False) -> tuple[str, str]:
        """End the stream; return whatever was still held back.

        ``cut``: the server stopped the completion (``max_tokens``), so a
        prefilled block that never closed is reasoning cut short.
        """
        pending = self._pending
        self._pending = ""
        if self._implicit:
            held = "".join(self._held)
            self._held.clear()
            self._implicit = False
            self._depth = 0
            if cut:
                # Not a sign that the model did not reason: it may just not
                # have got to its </think>. Nothing of it may be said.
                return "", _TAGS.sub("", held) + pending
            # No </think> ever came: the model did not reason this time, so
            # the held text is the answer. A plain filter over it gives the
            # visible part (blocks it opened and closed in it are reasoning,
            # one it left open too).
            return split_think(held + pending)
        if not pending:
            return "", ""
        if self._depth:
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
        pos = search = 0
        while True:
            lt = buf.find("<", search)
            if lt < 0:
                self._text(buf[pos:], visible, thinking)
                break
            if buf.startswith(_OPEN, lt):
                self._text(buf[pos:lt], visible, thinking)
                self._open()
                pos = search = lt + _OPEN_LEN
            elif buf.startswith(_CLOSE, lt):
                self._text(buf[pos:lt], visible, thinking)
                self._close(thinking)
                pos = search = lt + _CLOSE_LEN
            elif n - lt <= _MAX_HOLD and _could_be_tag(buf[lt:]):
                # Hold back what may still become a tag. A tag has one "<",
                # so this is the last "<" of the buffer.
                self._text(buf[pos:lt], visible, thinking)
                self._pending = buf[lt:]
                break
            else:
                # A "<" that is not a tag ("a < b", "<thinking>"): keep going.
                search = lt + 1
        return "".join(visible), "".join(thinking)

    def _open(self) -> None:
        if self._implicit and self._blank:
            # "<think>" first: the model opened its block itself, so the
            # server did not prefill one; its reasoning streams from here.
            self._implicit = False
            self._held.clear()
            return
        self._depth += 1
        if self._implicit:
            self._held.append(_OPEN)
            self._blank = False

    def _close(self, thinking: list[str]) -> None:
        if not self._depth:
            self._saw_bare_close = True
            self._skip_ws = True
            return
        self._depth -= 1
        if self._implicit:
            if self._depth:
                self._held.append(_CLOSE)
                return
            # The prefilled block closed: release what was held.
            thinking.append(_TAGS.sub("", "".join(self._held)))
            self._held.clear()
            self._implicit = False
        if not self._depth:
            self._skip_ws = True

    def _text(self, text: str, visible: list[str], thinking: list[str]) -> None:
        """Route text between tags by the depth it is at."""
        if not text:
            return
        if not self._depth:
            text = self._visible(text)
            if text:
                visible.append(text)
        elif self._implicit:
            self._held.append(text)
            self._blank = self._blank and text.isspace()
        else:
            thinking.append(text)


def split_think(text: str, *, start_in_think: bool = False) -> tuple[str, str]:
    """Split a whole completion into ``(visible, thinking)`` in one call."""
    think_filter = ThinkFilter(start_in_think=start_in_think)
    visible, thinking = think_filter.feed(text)
    tail_visible, tail_thinking = think_filter.flush()
    return visible + tail_visible, thinking + tail_thinking
