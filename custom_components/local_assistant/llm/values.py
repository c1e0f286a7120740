"""Numbers an answer about the live data states, checked against what the model read.

A small model answers "Wie hoch sind die Wellen?" with "Die Wellen sind 5,5
meters hoch." beside a live line saying 2,1 m: a value from its weights. A
sentence that names a live line's label ("Wellen", "Tomorrow", "Kitesurfing
now": tools/phrases.py, in the conversation's language) may hold only
numbers the model was shown this turn: the prompt (its live lines, facts,
date), the session, the user's words and the tool results. Compared are
digits, within the rounding the answer shows ("7 mm" for 7.4), whatever the
words around them: the same in every language, units in symbols or in words.

Such a sentence is never said; in its place go the live lines it names that
were not said yet: true values in the conversation's language. A sentence
that names no label is not checked: "Etwa vierzig Minuten bei 180 Grad." is
a recipe, and the user's words naming "heute" make no answer about the
weather. Only where live lines are shown, each sentence is held until it
ends, so nothing of a replaced one is heard first.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
import re

from .echo import named_lines

_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*")
# A sentence ends at its mark and the space after it; "24. Dezember" and
# "the 2. line" go on (a mark after a digit ends nothing here: the sentence
# is only checked later, with the next one).
_SENTENCE_END = re.compile(r"(?<!\d)[.!?。！？…]+[\"'»”)\]]*\s+|\n+")


def readings(number: str) -> set[float]:
    """The values a written number may mean: "2,1" and "2.1" are 2.1;
    "1.013" is also 1013 (German and Dutch group thousands with a point)."""
    values: set[float] = set()
    parts = re.split(r"[.,]", number)
    if len(parts) <= 2:
        values.add(float(".".join(parts)))
    if len(parts) > 1 and all(len(part) == 3 for part in parts[1:]):
        values.add(float("".join(parts)))
    return values


def shown_numbers(texts: Iterable[str]) -> frozenset[float]:
    """Every value a number in ``texts`` may mean."""
    return frozenset(
        value
        for text in texts
        for found in _NUMBER.findall(text)
        for value in readings(found)
    )


def message_texts(messages: Iterable[Mapping[str, object]]) -> list[str]:
    """The text of each message (its content, and a call's arguments)."""
    texts: list[str] = []
    for message in messages:
        if isinstance(content := message.get("content"), str):
            texts.append(content)
        for call in message.get("tool_calls") or ():  # type: ignore[attr-defined]
            if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping):
                texts.append(str(call["function"].get("arguments") or ""))
    return texts


def _is_shown(number: str, shown: frozenset[float]) -> bool:
    """Whether ``number`` is one of ``shown`` as the answer rounds it: within
    one unit of its last written digit ("7" for 7.4 or 6.6, "2.1" for 2.14)."""
    decimals = len(re.split(r"[.,]", number)[-1]) if re.search(r"[.,]", number) else 0
    step = 10.0**-decimals
    return any(
        abs(value - said) < step - 1e-9 for said in readings(number) for value in shown
    )


def made_up_numbers(sentence: str, shown: frozenset[float]) -> list[str]:
    """The numbers of ``sentence`` that nothing shown holds."""
    return [found for found in _NUMBER.findall(sentence) if not _is_shown(found, shown)]


class ValueCheck:
    """Holds each sentence of an answer until it ends; one that speaks of
    the live data with a number the model was not shown is replaced."""

    __slots__ = ("_aliases", "_buffer", "_lines", "_said", "_shown", "made_up")

    def __init__(
        self,
        shown: frozenset[float],
        lines: Sequence[str] = (),
        aliases: Mapping[str, str] | None = None,
    ) -> None:
        self._shown = shown
        # The live lines as said (llm/spoken.py); none: nothing to check.
        self._lines = lines
        # "Tomorrow" for the weekday it is (tools/phrases.py).
        self._aliases = aliases
        self._buffer = ""
        self._said: list[str] = []
        # The numbers that were not said, for the log.
        self.made_up: list[str] = []

    def feed(self, text: str) -> str:
        """The whole sentences of ``text`` (and what came before) that may be said."""
        if not self._lines:
            return text
        self._buffer += text
        out = ""
        while (end := _SENTENCE_END.search(self._buffer)) is not None:
            sentence = self._buffer[: end.end()]
            self._buffer = self._buffer[end.end() :]
            out += self._checked(sentence)
        return out

    def flush(self) -> str:
        """At the answer's end: the last sentence, checked."""
        held, self._buffer = self._buffer, ""
        return self._checked(held) if held else ""

    def drop(self) -> None:
        """Text before tool calls: the answer after their results counts."""
        self._buffer = ""

    def _checked(self, sentence: str) -> str:
        named = named_lines(self._lines, sentence, self._aliases)
        if not named or not (made_up := made_up_numbers(sentence, self._shown)):
            self._said.append(sentence)
            return sentence
        self.made_up += made_up
        said = " ".join(self._said)
        instead = [line for line in named if line not in said]
        if not instead:
            return ""
        self._said += instead
        # The lines end as sentences; the space or line break after the
        # sentence replaced stays, for the next one.
        return " ".join(instead) + sentence[len(sentence.rstrip()) :]
