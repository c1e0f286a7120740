"""An answer that only repeats the user's words or a line of its instructions.

A small model in a long session sometimes answers "Open the garage." with
"Open the garage.", with the prompt's last line ("Réponds en français."), or
with the user's words turned into a claim: "Yes, the garage is opened."
(nothing ran). Kept in the session, such an answer teaches it to do so again.
Two kinds of repeat are never shown:

* the user's words, an instruction line or an earlier request of the
  session, compared loosely (case, spacing and the closing punctuation do
  not count);
* a restatement: a long earlier answer (a loop the session would teach), or
  an instruction line said in other forms, an answer whose distinctive
  words all come from one line of the instructions and say at least half of
  that line's ("Répondez en français." for "Réponds en français.", "The
  device was not able to start timers." for "This device is not able to
  start timers."; seen on the bundled model, the first spoken and replayed
  until a French session answered every turn with it). Lines that hold a
  number (a time, a date) are data, which an answer may repeat. A
  restatement may also be the true answer ("Who are you?" - "I am a voice
  assistant for Home Assistant.", "Say that again?"): it is kept
  (``EchoHold.restated``), and where asking again brings nothing else the
  caller says it, never replayed;
* before any tool ran this turn, where the words may ask for a change (the
  caller decides: turn/policy.py), an answer whose distinctive words all come
  from the user's words, in any order and inflection, or one that is such a
  line after a word or two of its own ("¡Claro! Pon en marcha el
  lavavajillas.": nothing ran). Distinctive words are
  the memory's (``memory/facts.py``: by length, case and numbers, the same in
  every language), compared by their first letters. An answer that adds a
  word of its own ("That sounds lovely") is no repeat; neither, by this
  rule, is a claim that adds a long word ("ist jetzt an", "están").

The user's words count from three words on: "Bonjour !" answers "Bonjour !".
The start of an answer is held while it may still be a repeat and released as
soon as it cannot be; an answer that is one in full is never shown (the
caller asks again).

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
import re

from ..wording import (
    ALNUM,
    STEM_LENGTH,
    says_no_more,
    shared,
    stems,
    word_count,
    words,
)

_EDGES = re.compile(r"^[\s\"'«»“”„¡¿]+|[\s\"'«»“”.!?。！？…]+$")
_SPACE_BEFORE_MARK = re.compile(r"\s+(?=[:;!?])")
# A word still being written: the answer so far ends inside it.
_OPEN_WORD = re.compile(rf"{ALNUM}+$")
# The user's words count from this many on (a greeting may be answered in kind).
MIN_WORDS = 3
# An earlier answer of the model's counts from this many words on: "The light
# is on." may be said again; a long line said again to another request is the
# session teaching a loop (seen: one garbled line of the live data answered
# every Dutch turn after it).
MIN_REPEATED_ANSWER_WORDS = 6
# Where a sentence ends: the next one's first word is no name for its capital.
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
# A user's word this short starts too many others to stand for them ("the"
# would stand for "thermostat"); numbers count whatever their length.
MIN_SAID_LETTERS = 4
# Where the words may claim, a repeat after this many words of the model's
# own ("Claro", "Sure thing") is still a repeat: seen on the bundled model,
# six Spanish commands said back after "¡Claro!" in one held-out session.
MAX_LEAD_WORDS = 2
# A label the prompt shows (a live line's, an earlier answer's) before a
# repeat is no word of the answer's own: "Actuellement: Ik drink geen
# alcohol." (bundled model, a French label of an earlier answer before a
# Dutch statement said back); "Oui : il va pleuvoir demain." answers. While
# the answer is one word of a label's length, it may still become one (a
# language written without spaces is held no longer than that).
_LABEL = re.compile(r"[^\s:]+(?: [^\s:]+)?: ?")
_ONE_OPEN_WORD = re.compile(r"\s*[^\s:]{1,24}")


def echo_key(text: str) -> str:
    """``text`` as compared: folded case, one space, no closing punctuation.

    No space before a colon, semicolon, "!" or "?": French writes one there
    and the speakable filter (llm/spoken.py) drops it.
    """
    return _EDGES.sub("", _SPACE_BEFORE_MARK.sub("", " ".join(text.casefold().split())))


def echo_keys(
    user_text: str,
    instructions: Iterable[str],
    earlier: Iterable[str] = (),
) -> frozenset[str]:
    """The keys of the lines an answer may not merely repeat.

    The user's words, the instruction lines, and the session's earlier
    requests (the caller's choice), each from three words on.
    """
    texts = [*instructions]
    texts += [text for text in (user_text, *earlier) if word_count(text) >= MIN_WORDS]
    return frozenset(key for text in texts if (key := echo_key(text)))


def restatement_keys(earlier_answers: Iterable[str]) -> frozenset[str]:
    """The keys of the session's earlier answers an answer may restate only
    when nothing else comes: from MIN_REPEATED_ANSWER_WORDS words on."""
    return frozenset(
        key
        for text in earlier_answers
        if word_count(text) >= MIN_REPEATED_ANSWER_WORDS and (key := echo_key(text))
    )


def echo_lines(instructions: Iterable[str]) -> tuple[frozenset[str], ...]:
    """The distinctive words of each instruction line an answer may not be
    made of (llm/echo.py); lines with a number are data."""
    return tuple(
        dict.fromkeys(
            line_stems
            for line in instructions
            if not any(char.isdigit() for char in line)
            and (line_stems := _answer_stems(line))
        )
    )


def echo_words(user_text: str) -> frozenset[str]:
    """The user's words (stems) an answer may not be made of only.

    All of them, not only the distinctive ones: "pop the kitchen on" is
    repeated as "the kitchen is popped on".
    """
    if len(user_text.split()) < MIN_WORDS:
        return frozenset()
    return frozenset(
        word[:STEM_LENGTH]
        for word in words(user_text)
        if len(word) >= MIN_SAID_LETTERS or any(char.isdigit() for char in word)
    )


def live_readout(
    live: Sequence[str], user_text: str, aliases: Mapping[str, str] | None = None
) -> tuple[frozenset[str], str]:
    """The live data read out from its start (two lines or more), and what to say then.

    At temperature 0 the bundled model answered "What's the forecast for
    Friday?" with the whole block, asked again, with the same; and "Pff,
    wat een dag zeg." too, which the session then taught every next answer
    to repeat. Such an answer is never said as it is: said instead are the
    lines whose label (before the ":", in the conversation's language: tools/
    phrases.py) the user's words name ("Friday: Sunny, ..."), or, naming
    none, its first line, the weather now ("What's the weather like?": an
    error there would replace a true answer). A label also stands for what
    ``aliases`` gives it: "Tomorrow" for the weekday it is ("Will it rain on
    Tuesday?" asked on Monday). Without words that ask (an
    empty ``user_text``) nothing is said: the answer is asked for again.
    One line answers as it is.
    """
    runs = frozenset(echo_key("\n".join(live[:end])) for end in range(2, len(live) + 1))
    said = stems([user_text])
    said_words = f" {' '.join(words(user_text))} "

    def names(label: str) -> bool:
        # A stem in common ("Friday", "vendredi"), or the label's words as
        # said, however short ("Hoy", "I dag", "l'eau"), or written as one.
        return bool(shared(stems([label]), said)) or (
            bool(label_words := words(label))
            and (
                f" {' '.join(label_words)} " in said_words
                # Swedish "idag" for "I dag".
                or f" {''.join(label_words)} " in said_words
            )
        )

    aliases = aliases or {}

    def named_line(line: str) -> bool:
        label = line.partition(":")[0]
        return names(label) or (
            (alias := aliases.get(label.strip())) is not None and names(alias)
        )

    named = [line for line in live if ":" in line and named_line(line)]
    if not named and user_text.strip() and live:
        named = [live[0]]
    return runs, "\n".join(named)


def reads_out_live_lines(answer: str, live_keys: frozenset[str]) -> bool:
    """Whether ``answer`` holds two lines or more of the live data as written,
    on lines of their own or run together.

    Said, such an answer may answer ("What's the weather like?"); replayed,
    it teaches the next answers to read the block out (seen on the bundled
    model: a French statement answered with the block, then a Dutch one with
    the same French block), and its values go stale. ``live_keys``: the
    ``echo_key`` of each live line as spoken.
    """
    said = echo_key(answer)
    return sum(key in said for key in live_keys) >= 2


def echo_labels(lines: Iterable[str]) -> frozenset[str]:
    """The labels of ``lines`` ("wind" of "Wind: 8 kn."), as ``echo_key`` gives them."""
    return frozenset(
        label
        for text in lines
        for line in text.splitlines()
        if (label := _label(echo_key(line))[0])
    )


def _label(key: str) -> tuple[str, str]:
    """A compared text's label and what follows it ("wind", "8 kn"); no label: ""."""
    found = _LABEL.match(key)
    if found is None:
        return "", key
    return found.group().rstrip()[:-1], key[found.end() :]


class EchoHold:
    """Holds an answer's start while it may still be only a repeat."""

    __slots__ = (
        "_buffer",
        "_keys",
        "_labels",
        "_lines",
        "_live_answer",
        "_live_runs",
        "_restatements",
        "_unsaid_lines",
        "_words",
        "decided",
        "echoed",
        "restated",
    )

    def __init__(
        self,
        keys: frozenset[str],
        words: frozenset[str] = frozenset(),
        lines: tuple[frozenset[str], ...] = (),
        live: tuple[frozenset[str], str] = (frozenset(), ""),
        *,
        labels: frozenset[str] = frozenset(),
        restatements: frozenset[str] = frozenset(),
        unsaid_lines: tuple[frozenset[str], ...] = (),
    ) -> None:
        self._live_runs, self._live_answer = live
        self._labels = labels
        self._restatements = restatements
        # Lines of ``lines`` no restatement of which is ever an answer (the
        # prompt's "Réponds en français.").
        self._unsaid_lines = unsaid_lines
        self._keys = keys | self._live_runs | restatements
        self._words = words
        self._lines = lines
        self._buffer = ""
        # Nothing to compare with: every answer is decided at once.
        self.decided = not self._keys and not words and not lines
        self.echoed = False
        # A restatement not shown (an earlier answer, an instruction in other
        # forms): the answer, should asking again bring nothing else.
        self.restated = ""

    def feed(self, text: str) -> str:
        """The text that may be shown now."""
        if self.decided:
            return text
        self._buffer += text
        if self._labels and _ONE_OPEN_WORD.fullmatch(self._buffer):
            return ""  # it may still become a label ("Actuellement:")
        key = echo_key(self._buffer)
        if any(
            line.startswith(rest) for rest in self._rests(key) for line in self._keys
        ):
            return ""
        written = _answer_stems(_OPEN_WORD.sub("", self._buffer))
        if (self._words or self._lines) and not written:
            return ""  # nothing distinctive yet: it may still be a repeat
        if self._words and says_no_more(written, self._words):
            return ""
        if any(says_no_more(written, line) for line in self._lines):
            return ""
        self.decided = True
        released, self._buffer = self._buffer, ""
        return self._without_leading_instructions(released)

    def flush(self) -> str:
        """At the answer's end: the held text, unless it was only a repeat."""
        if self.decided:
            return ""
        self.decided = True
        held, self._buffer = self._buffer, ""
        if self._live_answer and echo_key(held) in self._live_runs:
            return self._live_answer
        said = _answer_stems(held)
        rests = self._rests(echo_key(held))
        if any(
            rest in self._keys and rest not in self._restatements for rest in rests
        ) or (self._words and says_no_more(said, self._words)):
            self.echoed = True
            return ""
        restated_lines = [line for line in self._lines if _restates(said, line)]
        if restated_lines or any(rest in self._restatements for rest in rests):
            self.echoed = True
            if not any(line in self._unsaid_lines for line in restated_lines):
                self.restated = held
            return ""
        return self._without_leading_instructions(held)

    def _without_leading_instructions(self, text: str) -> str:
        """``text`` without the prompt's instruction lines it starts with.

        The bundled model reads out the live data with its heading ("Live
        data, read just now (answer questions about ...):"): the data may be
        said, the heading is ours and never is.
        """
        while "\n" in text:
            first, rest = text.split("\n", 1)
            said = _answer_stems(first)
            if not said or not any(_restates(said, line) for line in self._lines):
                break
            text = rest.lstrip("\n")
        return text

    def drop(self) -> None:
        """Text before tool calls: the answer after their results counts."""
        self.decided = True
        self._buffer = ""

    def _rests(self, key: str) -> list[str]:
        """``key``, ``key`` after a label the prompt shows, and where the
        words may claim, ``key`` after its first words."""
        rests = [key]
        label, rest = _label(key)
        if label in self._labels:
            rests.append(rest)
        if not self._words:
            return rests
        parts = key.split(" ", MAX_LEAD_WORDS)
        # A lead still being written: the repeat may follow it ("" starts all).
        return rests + [
            _EDGES.sub("", " ".join(parts[lead:]))
            for lead in range(1, MAX_LEAD_WORDS + 1)
        ]


def _restates(said: frozenset[str], line: frozenset[str]) -> bool:
    """Whether words said are an instruction line's, at least half of them."""
    return says_no_more(said, line) and 2 * shared(line, said) >= len(line)


def _answer_stems(text: str) -> frozenset[str]:
    """The distinctive words of an answer, sentence by sentence ("Il est allumé."
    after another sentence: "Il" is no name)."""
    return stems(_SENTENCE_END.split(text))
