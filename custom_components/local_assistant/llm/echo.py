"""An answer that only repeats the user's words or a line of its instructions.

A small model in a long session sometimes answers "Open the garage." with
"Open the garage." or with the prompt's last line ("Réponds en français.");
kept in the session, such an answer teaches it to do so again. The start of an
answer is held while it may still be such a repeat and released as soon as it
differs; an answer that is one in full is never shown (the caller asks again).
Compared loosely: case, spacing and the closing punctuation do not count.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Iterable
import re

_EDGES = re.compile(r"^[\s\"'«»“”„¡¿]+|[\s\"'«»“”.!?。！？…]+$")


def echo_key(text: str) -> str:
    """``text`` as compared: folded case, one space, no closing punctuation."""
    return _EDGES.sub("", " ".join(text.casefold().split()))


def echo_keys(user_text: str, instructions: Iterable[str]) -> frozenset[str]:
    """The keys of the lines an answer may not merely repeat.

    The user's words count from three words on: "Bonjour !" answers "Bonjour !".
    """
    texts = [*instructions]
    if len(user_text.split()) > 2:
        texts.append(user_text)
    return frozenset(key for text in texts if (key := echo_key(text)))


class EchoHold:
    """Holds an answer's start while it may still be only a repeat."""

    __slots__ = ("_buffer", "_keys", "decided", "echoed")

    def __init__(self, keys: frozenset[str]) -> None:
        self._keys = keys
        self._buffer = ""
        # Nothing to compare with: every answer is decided at once.
        self.decided = not keys
        self.echoed = False

    def feed(self, text: str) -> str:
        """The text that may be shown now."""
        if self.decided:
            return text
        self._buffer += text
        key = echo_key(self._buffer)
        if any(line.startswith(key) for line in self._keys):
            return ""
        self.decided = True
        released, self._buffer = self._buffer, ""
        return released

    def flush(self) -> str:
        """At the answer's end: the held text, unless it was only a repeat."""
        if self.decided:
            return ""
        self.decided = True
        held, self._buffer = self._buffer, ""
        if echo_key(held) in self._keys:
            self.echoed = True
            return ""
        return held

    def drop(self) -> None:
        """Text before tool calls: the answer after their results counts."""
        self.decided = True
        self._buffer = ""
