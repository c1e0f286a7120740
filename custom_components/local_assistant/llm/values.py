"""Numbers an answer about the live data states, checked against what the model read.

A small model answers "Wie hoch sind die Wellen?" with "Die Wellen sind 5,5
meters hoch." beside a live line saying 2,1 m: a value from its weights.
Where the user's words name a live line (its label: "Wellen", "Tomorrow",
"Kitesurfing now"; tools/phrases.py, in the conversation's language), a
sentence of the answer that names that line too may hold only numbers the
model was shown this turn: the prompt (its live lines, facts, date), the
session, the user's words and the tool results. Compared are digits, within
the rounding the answer shows ("7 mm" for 7.4), whatever the words around
them: the same in every language, units in symbols or in words.

Such a sentence is never said; in its place go the lines it names that were
not said yet: true values in the conversation's language. Both the question
and the sentence must name the line, and a label is named by its own word
(or one letter more or less: "windy", "Welle"), never by a word it only
starts ("window", "aguacate"): "How do I bake a cake?" - "Now bake it at 180
°C." is a recipe, not the weather now. The price: a number the model works
out from the data ("about 31 km/h" from 8.5 m/s) is replaced by the line. Only
where the words name a line is each sentence held until it ends, so nothing
of a replaced one is heard first.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
import re
from typing import Any

from ..wording import UNSPACED, words

# Digits after a Latin letter are a name ("H2O", "A7"); after a letter of a
# script written without spaces they are a number ("浪高5.5米").
_NUMBER = re.compile(r"(?<![0-9A-Za-z.,])\d+(?:[.,]\d+)*")
# A sentence ends at its mark and the space after it, or at a full-width mark
# (Chinese and Japanese write no space). "24. Dezember" and "the 2. line" go
# on: a mark after a digit ends nothing here, the sentence is checked later
# with the next one.
_SENTENCE_END = re.compile(r"(?<!\d)[.!?…]+[\"'»”)\]]*\s+|[。！？]+[」』”)）]*\s*|\n+")
# A label's own word counts with one letter more or less ("windy", "Welle").
_INFLECTION = 1
# From this many letters a label word may be inflected; shorter ones ("Now",
# "Nu", "Hoy") only as they are.
_MIN_INFLECTED = 4


def readings(number: str) -> set[float]:
    """The values a written number may mean: "2,1" and "2.1" are 2.1;
    "1.013" is also 1013 (German and Dutch group thousands with a point);
    with both marks the last is the decimal one ("1.013,2", "1,013.2")."""
    values: set[float] = set()
    parts = re.split(r"[.,]", number)
    marks = re.findall(r"[.,]", number)
    if len(parts) <= 2:
        values.add(float(".".join(parts)))
    if len(parts) > 1 and all(len(part) == 3 for part in parts[1:]):
        values.add(float("".join(parts)))
    if (
        len(set(marks)) == 2
        and marks[-1] not in marks[:-1]
        and all(len(part) == 3 for part in parts[1:-1])
    ):
        values.add(float(f"{''.join(parts[:-1])}.{parts[-1]}"))
    return values


def shown_numbers(texts: Iterable[str]) -> frozenset[float]:
    """Every value a number in ``texts`` may mean."""
    return frozenset(
        value
        for text in texts
        for found in _NUMBER.findall(text)
        for value in readings(found)
    )


def message_texts(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    """The text of each message (its content, and a call's arguments)."""
    texts: list[str] = []
    for message in messages:
        if isinstance(content := message.get("content"), str):
            texts.append(content)
        for call in message.get("tool_calls") or ():
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


def _label(line: str) -> str:
    """A live line's label: before its colon (full-width in Chinese and Japanese)."""
    head = re.split(r"[:：]", line, maxsplit=1)
    return head[0] if len(head) == 2 else ""


def _names_word(label_word: str, said: frozenset[str]) -> bool:
    if len(label_word) < _MIN_INFLECTED:
        return label_word in said
    return any(
        (word.startswith(label_word) or label_word.startswith(word))
        and len(word) >= _MIN_INFLECTED
        and abs(len(word) - len(label_word)) <= _INFLECTION
        for word in said
    )


def _names(label: str, text: str, said: frozenset[str]) -> bool:
    if UNSPACED.search(label):
        # A script written without spaces: the label as it stands.
        return label in text
    return any(_names_word(word, said) for word in words(label))


def named_lines(
    lines: Sequence[str], text: str, aliases: Mapping[str, str] | None = None
) -> list[str]:
    """The lines of ``lines`` whose label ``text`` names (or the label it
    stands for: "Tomorrow" for the weekday it is)."""
    said = frozenset(words(text))
    aliases = aliases or {}
    return [
        line
        for line in lines
        if (label := _label(line).strip())
        and (
            _names(label, text, said)
            or ((alias := aliases.get(label)) is not None and _names(alias, text, said))
        )
    ]


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
        # The live lines the user's words name, as said (llm/spoken.py):
        # none, nothing to check.
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
