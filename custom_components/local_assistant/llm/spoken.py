"""Make streamed model text safe to speak: no markdown, code, URLs or emoji.

A voice satellite reads the answer aloud as it streams, so "**Done!** ✅ See
https://example.com" must reach TTS as "Done! See the link". This filter
rewrites the visible text (after the think filter) incrementally, with the
same contract as :class:`~.think.ThinkFilter`: :meth:`SpokenFilter.feed`
each chunk, :meth:`SpokenFilter.flush` once at the end, and any chunking of
the input gives exactly the output of one ``feed`` of the whole text.

What it does:

- Line starts: drops header marks (``## ``), bullets (``- ``, ``* ``,
  ``+ ``), numbered-list marks (``1. ``, ``2) ``) of lines that count 1, 2,
  3 and do not start with the same word (a lone "24. Dezember", and "1.
  Mai" over "2. Mai", are dates, in every language), quote marks
  (``> ``), horizontal rules (``---``) and indentation.
- A tool call the model wrote as text (Qwen's ``<tool_call>...</tool_call>``
  where the server did not parse it, or a JSON object at a line start whose
  first key is ``"name"``) is dropped, however long: it did nothing, and
  read out it is noise. Its tool's name is kept (``written_calls``): the
  caller treats it as a call that did not run.
- Code fences: the fence lines AND everything between them are dropped. A
  voice user should not hear code read out symbol by symbol, and a small
  home assistant model has no business answering with code; the chat dialog
  loses the block too, which is the price of one always-on filter.
- Inline: drops emphasis marks (``*``, ``**``, ``_``, ``__``, ``~~``) but keeps
  ``2 * 3``, ``2*3`` and ``snake_case`` (struck-through text itself is
  kept: deciding that needs the closing ``~~``, an unbounded hold); drops inline-code backticks and keeps
  their content; ``[text](url)`` becomes ``text``; a bare URL (``http://``,
  ``https://``, ``www.``) becomes the link phrase ("the link"), keeping the
  punctuation that ends its sentence.
- A template slot of the prompt in square brackets (``[value from tool]``,
  from HA's own prompt, given as ``slots``) is dropped and flagged
  (``placeholder``): the caller stops the answer there. The words before a
  slot in the prompt's sentence ("The temperature outside is", given as
  ``slot_leads``) are held while a sentence of the answer may still be them,
  so a copied example is never half said.
- Emoji (and bullet dots, variation selectors, zero-width joiners, keycaps)
  are removed; whitespace left behind collapses to one space, and the output
  never starts with whitespace.

Holding: text is held back only while a construct may still be open and the
decision needs characters that have not arrived: a line start that may
become a marker, a run of ``*``/``_``/``~`` whose next character decides
whether it is emphasis, a word start that may become ``https://``, and a
``[`` whose ``](...)`` may follow. Every decision looks at most
:data:`MAX_HOLD` characters ahead (a link longer than that is left as text),
so at most :data:`MAX_HOLD` characters are ever held (and with slot leads at
most :data:`MAX_HOLD` more, the words that may still be a copied example).

Not handled (rare in spoken-style answers): tables, HTML tags, images
(``![alt](src)`` reads as "!alt"), indented code blocks, backslash escapes.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
import re
import unicodedata

from ..wording import UNSPACED

__all__ = [
    "MAX_HOLD",
    "SpokenFilter",
    "VoiceStyle",
    "slot_leads",
    "speakable",
    "template_slots",
]

# Upper bound of held text, and of how far any decision looks ahead.
MAX_HOLD = 200
# A run of * _ ~ this long is dropped without looking at what follows it.
_LONG_RUN = 32

# Pictographs and the invisible characters that glue emoji together.
_DROP_CLASS = (
    "\U0001f000-\U0001faff"  # emoji, pictographs, flags, skin tones
    "\u2600-\u27bf"  # misc symbols and dingbats (☀ ✅ ❤ ✔)
    "\u2b00-\u2bff"  # stars and arrows used as emoji (⭐ ⬆)
    "\u2300-\u23ff"  # misc technical (⌚ ⏰ ⏳)
    "\u25a0-\u25ff"  # geometric shapes (▶ ● ■)
    "\u2022"  # bullet dot
    "\ufe00-\ufe0f"  # variation selectors
    "\u200d"  # zero-width joiner
    "\u20e3"  # combining keycap
    "\U000e0000-\U000e007f"  # tag characters (subdivision flags)
)
_DROP_RE = re.compile(f"[{_DROP_CLASS}]")
# Where plain text stops: anything the scanner must look at. A URL can only
# start where no Latin letter or digit is before it, so h/w inside words stay
# plain; Chinese and Japanese write it right after a word ("请访问https://").
_SPECIAL_RE = re.compile(
    f"[\\s*_~`<\\[{_DROP_CLASS}]|(?<![A-Za-z0-9])(?<![/@.-])[hHwW]"
)
_URL_STARTS = ("https://", "http://", "www.")
_URL_LOOKAHEAD = max(map(len, _URL_STARTS))
# Punctuation that ends a sentence around a URL rather than belonging to it.
_URL_TRAIL = ".,;:!?)]}'\""
_MAX_URL_TRAIL = 8
_NO_SPACE_BEFORE = ".,;:!?"
_MAX_HEADER = 6
_MAX_LIST_DIGITS = 3  # "2024. was a good year" is not a list
_HSPACE = " \t"
# Qwen's own tool-call tags, written as text where the server does not parse them.
_CALL_OPEN = "<tool_call>"
_CALL_CLOSE = "</tool_call>"
# A line that opens a JSON object with this key is a tool call written out.
_CALL_KEY = '"name"'
# The tool a written call names, looked for in its first MAX_HOLD characters.
_CALL_NAME = re.compile(r'"name"\s*:\s*"([^"\\]*)"')


class _Hold(Exception):
    """More input is needed to decide what the text at this position is."""


@dataclass(frozen=True, slots=True)
class VoiceStyle:
    """How the agent's streamed text is made speakable.

    Its words are the conversation language's (llm/sentences.py,
    ``async_voice_style``).
    """

    # What a bare URL is read as.
    link_text: str = "the link"
    # Said before a tool runs when the model has said nothing yet (None: off);
    # it ends with a space, the answer streams straight after it into TTS.
    filler: str | None = None
    # The template slots of the prompt ("value from tool", case folded): an
    # answer that repeats one is cut there (``SpokenFilter.placeholder``).
    slots: frozenset[str] = frozenset()
    # The words before each slot in its sentence ("the temperature outside
    # is"): an answer's sentence is held while it may still be them.
    slot_leads: frozenset[str] = frozenset()
    # The user's words and the prompt's instruction lines (llm/echo.py): an
    # answer that only repeats one is never shown. And the user's words (from
    # four letters, and numbers): before any tool ran, an answer whose
    # distinctive words all come from them is not shown either.
    echoes: frozenset[str] = frozenset()
    # The session's long earlier answers: said again only when asking again
    # brings nothing else (llm/echo.py), never replayed.
    restatements: frozenset[str] = frozenset()
    echo_words: frozenset[str] = frozenset()
    # The distinctive words of each instruction line: an answer made of one
    # line's words, in any form, is not shown either; of these, the lines
    # whose restatement is never an answer (the answer-language line).
    echo_lines: tuple[frozenset[str], ...] = ()
    unsaid_lines: tuple[frozenset[str], ...] = ()
    # The labels the prompt shows ("Actuellement" of an earlier answer, the
    # live lines'): a repeat after one is one too (``echo.echo_labels``).
    echo_labels: frozenset[str] = frozenset()
    # The live data read out from its start, and the lines the user's words
    # name, said instead (``echo.live_readout``).
    live_readout: tuple[frozenset[str], str] = (frozenset(), "")
    # The live lines the user's words name, as said, and the labels that
    # stand for others ("Tomorrow" for the weekday it is): a sentence naming
    # one of them may state only numbers the model was shown (llm/values.py).
    asked_live_lines: tuple[str, ...] = ()
    live_aliases: tuple[tuple[str, str], ...] = ()


_SLOT = re.compile(r"\[([^\[\]\n]{1,80})\]")
# A prompt's example stands in quotes ('e.g., "The temperature outside is
# [value from tool]."'); brackets elsewhere are no slot: HA's list of the
# home's devices names "Ceiling light [Hall]" as the user named it.
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”|„[^“”\n]*[“”]|«[^»\n]*»')


def _slots(prompt: str) -> Iterator[re.Match[str]]:
    """The square-bracket slots inside the prompt's quoted examples."""
    for quoted in _QUOTED.finditer(prompt):
        yield from _SLOT.finditer(prompt, quoted.start(), quoted.end())


def template_slots(prompt: str) -> frozenset[str]:
    """The square-bracket slots of a prompt's examples, compared loosely."""
    return frozenset(_slot_key(found.group(1)) for found in _slots(prompt))


def _slot_key(text: str) -> str:
    return " ".join(text.casefold().split())


# Where a sentence of a prompt's example starts, looking back from its slot.
_LEAD_START = re.compile(r"[.!?\n\"“”„«»(:]")
# Where a sentence of the answer ends (a copy of an example ends there too).
_SENTENCE_ENDS = frozenset(".!?\n")
# Marks a copied example may open with: the prompt shows it in quotes.
_OPENING_MARKS = "\"'«»“”„([¡¿"


def slot_leads(prompt: str) -> frozenset[str]:
    """The words before each slot in its sentence, compared loosely.

    'e.g., "The temperature outside is [value from tool]."' gives "the
    temperature outside is".
    """
    leads: set[str] = set()
    for found in _slots(prompt):
        before = prompt[: found.start()]
        starts = [match.end() for match in _LEAD_START.finditer(before)]
        if lead := _slot_key(before[starts[-1] if starts else 0 :]):
            leads.add(lead)
    return frozenset(leads)


class _LeadHold:
    """Holds the output from a word where a copy of a slot's lead may start.

    Held while the words from there may still become a lead ("The
    temperature outside", after "Sure, " or an opening quote too), and once
    a lead is said in full, up to its sentence's end: "The temperature
    outside is currently [value from tool]" is a copy too. At most MAX_HOLD
    characters. Which text is held never depends on how it was chunked: a
    word is never taken to start at a chunk's edge, and whitespace at the
    end waits for what follows it.
    """

    __slots__ = ("_before", "_held", "_leads")

    def __init__(self, leads: frozenset[str]) -> None:
        self._leads = leads
        self._held = ""
        # The character before the held text: does a word start there?
        self._before = ""

    @property
    def held(self) -> int:
        return len(self._held)

    def feed(self, text: str) -> str:
        if not self._leads or not text:
            return text
        self._held += text
        start = next(
            (k for k in self._word_starts() if self._may_copy(self._held[k:])),
            len(self._held),
        )
        # The space before a held copy goes with it: no answer ends in one.
        # Trailing space is held too, as a copy may start after it.
        while start and self._held[start - 1].isspace():
            start -= 1
        return self._release(start)

    def flush(self) -> str:
        return self._release(len(self._held))

    def drop(self) -> None:
        self._release(len(self._held))

    def _release(self, end: int) -> str:
        released, self._held = self._held[:end], self._held[end:]
        if released:
            self._before = released[-1]
        return released

    def _word_starts(self) -> Iterator[int]:
        text = self._held
        for k, char in enumerate(text):
            before = text[k - 1] if k else self._before
            if (char.isalpha() or char in _OPENING_MARKS) and not before.isalnum():
                yield k

    def _may_copy(self, rest: str) -> bool:
        if len(rest) > MAX_HOLD:
            return False
        key = _slot_key(rest.lstrip(f"{_OPENING_MARKS} \t"))
        for lead in self._leads:
            if lead.startswith(key):
                return True
            # Said in full: a copy until its sentence ends (whitespace is
            # folded in the key, so a line end is looked for in the text).
            if (
                key.startswith(lead)
                and "\n" not in rest
                and not _SENTENCE_ENDS.intersection(key[len(lead) :])
            ):
                return True
        return False


class SpokenFilter:
    """Rewrite streamed text into plain speakable text, incrementally.

    See the module docstring for the rules. Work per chunk is linear in the
    chunk plus the (bounded) held text.
    """

    __slots__ = (
        "_call_text",
        "_fence",
        "_in_call",
        "_in_url",
        "_json_depth",
        "_json_escaped",
        "_json_quoted",
        "_last_out",
        "_lead",
        "_line_start",
        "_link_text",
        "_next_item",
        "_out",
        "_pending",
        "_prev",
        "_skip_line",
        "_slots",
        "_space",
        "_url_open",
        "_url_trail",
        "placeholder",
        "written_calls",
    )

    def __init__(
        self,
        *,
        link_text: str = "the link",
        slots: frozenset[str] = frozenset(),
        slot_leads: frozenset[str] = frozenset(),
    ) -> None:
        """Start at the beginning of a line, with nothing emitted yet."""
        self._link_text = link_text
        self._slots = slots
        self._lead = _LeadHold(slot_leads)
        self._pending = ""
        # Last input character consumed (emitted or dropped); "" at the start.
        self._prev = ""
        # Last output character; "" until something was emitted.
        self._last_out = ""
        # A space waiting for the next word (dropped before punctuation).
        self._space = False
        self._line_start = True
        # Inside a fenced code block: its fence character ("`" or "~").
        self._fence = ""
        # Inside a tool call written as text (<tool_call>...</tool_call>).
        self._in_call = False
        # Inside one written as a JSON object ({"name": ...}): its nesting
        # (0: not inside one), and whether a string or an escape is open.
        self._json_depth = 0
        self._json_quoted = self._json_escaped = False
        # The start of the written call being dropped, for its tool's name.
        self._call_text = ""
        # The tools named by the calls written as text so far ("" unnamed).
        self.written_calls: list[str] = []
        # The number the next item of a numbered list would have.
        self._next_item: int | None = None
        # Dropping input up to and including the next newline.
        self._skip_line = False
        # Inside a bare URL, and the punctuation seen at its (current) end.
        self._in_url = False
        self._url_trail = ""
        # Brackets the URL opened and has not closed ("wiki/Foo_(bar)").
        self._url_open = 0
        self._out: list[str] = []
        # A template slot ("[value from tool]") was dropped: the answer repeats
        # the prompt and must not be spoken on.
        self.placeholder = False

    @property
    def held(self) -> int:
        """How many characters are held back right now."""
        return len(self._pending) + self._lead.held

    def drop_lead(self) -> None:
        """Before a tool call: words that may be a copied example are not said."""
        self._lead.drop()

    def feed(self, text: str) -> str:
        """Consume one chunk; return the speakable text it released."""
        if not text:
            return ""
        buf = self._pending + text if self._pending else text
        self._pending = ""
        return self._after_leads(self._scan(buf, final=False))

    def flush(self) -> str:
        """End the stream; return whatever was still held back."""
        buf, self._pending = self._pending, ""
        out = self._scan(buf, final=True) if buf else ""
        if self._in_call or self._json_depth:
            self._end_call()  # cut off, it is a call all the same
        if self._in_url:
            self._end_url()
            out += "".join(self._out)
            self._out = []
        self._space = False  # no trailing space
        out = self._after_leads(out)
        return out if self.placeholder else out + self._lead.flush()

    def _after_leads(self, out: str) -> str:
        """What a slot's lead held lets through; a lead before a slot is dropped."""
        out = self._lead.feed(out)
        if self.placeholder:
            self._lead.drop()
        return out

    # -- scanning ---------------------------------------------------------------

    def _scan(self, buf: str, *, final: bool) -> str:
        self._out = []
        i = 0
        while i < len(buf):
            start = i
            try:
                i, buf = self._step(buf, i, final)
            except _Hold:
                self._pending = buf[i:]
                break
            if i > start:
                self._prev = buf[i - 1]
        out = "".join(self._out)
        self._out = []
        return out

    def _step(self, buf: str, i: int, final: bool) -> tuple[int, str]:
        """Consume input at ``i``; return the next position and the buffer.

        Raises _Hold without changing any state when more input is needed.
        The buffer changes only when a link is replaced by its text.
        """
        if self.placeholder:
            return len(buf), buf  # nothing after a template slot is said
        if self._skip_line:
            newline = buf.find("\n", i)
            if newline < 0:
                return len(buf), buf
            self._skip_line = False
            self._line_start = True
            return newline + 1, buf
        if self._fence:
            return self._fenced(buf, i, final), buf
        if self._in_call:
            return self._written_call(buf, i, final), buf
        if self._json_depth:
            return self._written_json(buf, i), buf
        if self._in_url:
            return self._url(buf, i), buf
        if self._line_start:
            nxt = self._line_marker(buf, i, final)
            if nxt is not None:
                return nxt, buf
        return self._inline(buf, i, final)

    def _need(self, buf: str, pos: int, origin: int, final: bool) -> str:
        """The character at ``pos``, "" if the text (or the window) ends first."""
        if pos >= origin + MAX_HOLD:
            return ""
        if pos < len(buf):
            return buf[pos]
        if final:
            return ""
        raise _Hold

    def _run(self, buf: str, i: int, char: str, final: bool, limit: int) -> int:
        """Length of the run of ``char`` at ``i``, up to ``limit``; may hold."""
        end = min(len(buf), i + limit)
        j = i
        while j < end and buf[j] == char:
            j += 1
        if j == len(buf) and j < i + limit and not final:
            raise _Hold
        return j - i

    def _fenced(self, buf: str, i: int, final: bool) -> int:
        """Inside a code block: drop everything, watch line starts for the fence."""
        char = buf[i]
        if not self._line_start:
            self._skip_line = True
            return i
        if char in _HSPACE or char == "\r":
            return i + 1
        if char == "\n":
            return i + 1
        if char == self._fence and self._run(buf, i, char, final, 3) == 3:
            self._fence = ""
        self._line_start = False
        self._skip_line = True
        return i

    def _written_call(self, buf: str, i: int, final: bool) -> int:
        """Inside ``<tool_call>``: drop everything up to and with its closing tag."""
        end = buf.find(_CALL_CLOSE, i)
        if end >= 0:
            self._note_call(buf[i:end])
            self._end_call()
            return end + len(_CALL_CLOSE)
        if final:
            self._note_call(buf[i:])
            return len(buf)
        # Keep what may still become the closing tag.
        for k in range(max(i, len(buf) - len(_CALL_CLOSE) + 1), len(buf)):
            if _CALL_CLOSE.startswith(buf[k:]):
                if k == i:
                    raise _Hold
                self._note_call(buf[i:k])
                return k
        self._note_call(buf[i:])
        return len(buf)

    def _note_call(self, text: str) -> None:
        """Keep the start of a written call (bounded): it names the tool."""
        self._call_text += text[: max(MAX_HOLD - len(self._call_text), 0)]

    def _end_call(self) -> None:
        """A written call ended: note the tool it names."""
        found = _CALL_NAME.search(self._call_text)
        self.written_calls.append(found.group(1) if found else "")
        self._call_text = ""
        self._in_call = False
        self._json_depth = 0

    def _names_a_tool(self, buf: str, i: int, final: bool) -> bool:
        """Whether the JSON object at ``i`` opens with a "name" (may hold)."""
        j = i + 1
        while (char := self._need(buf, j, i, final)) and char.isspace():
            j += 1
        for k, expected in enumerate(_CALL_KEY):
            if self._need(buf, j + k, i, final) != expected:
                return False
        return True

    def _written_json(self, buf: str, i: int) -> int:
        """Inside a JSON tool call: drop it up to the brace that closes it,
        however long it is and however it is chunked."""
        j = i
        while j < len(buf):
            char = buf[j]
            j += 1
            if self._json_escaped:
                self._json_escaped = False
            elif self._json_quoted:
                self._json_escaped = char == "\\"
                self._json_quoted = char != '"'
            elif char == '"':
                self._json_quoted = True
            elif char in "{[":
                self._json_depth += 1
            elif char in "}]":
                self._json_depth -= 1
                if not self._json_depth:
                    break
        self._note_call(buf[i:j])
        if not self._json_depth:
            self._end_call()
        return j

    def _url(self, buf: str, i: int) -> int:
        """Inside a bare URL: drop it up to whitespace, punctuation no URL is
        written with or a wide character ("。谢谢", Arabic "،"), keep trailing
        punctuation. Letters of any script are part of it ("wiki/München")."""
        j = i
        while j < len(buf) and _in_url(buf[j]):
            j += 1
        segment = buf[i:j]
        body = segment.rstrip(_URL_TRAIL)
        trail = segment[len(body) :]
        if body:
            inside = self._url_trail + body
            # Not clamped: chunked or whole, "a)b(c" ends as it began.
            self._url_open += inside.count("(") - inside.count(")")
        self._url_trail = (trail if body else self._url_trail + trail)[-_MAX_URL_TRAIL:]
        if j < len(buf):
            self._end_url()
        return j

    def _end_url(self) -> None:
        """Leave the URL; say its trailing punctuation but the brackets it closes."""
        trail = self._url_trail
        while trail.startswith(")") and self._url_open > 0:
            trail = trail[1:]
            self._url_open -= 1
        self._emit(trail)
        self._in_url = False
        self._url_trail = ""
        self._url_open = 0

    def _line_marker(self, buf: str, i: int, final: bool) -> int | None:
        """At a line start: consume a markdown marker, or return None for text."""
        char = buf[i]
        if char in _HSPACE or char == "\r":
            return i + 1
        if char == "\n":
            self._emit_space("\n")
            return i + 1
        if char in "`~":
            if self._run(buf, i, char, final, 3) == 3:
                self._fence = char
                self._line_start = False
                self._skip_line = True  # the info string ("```python")
                return i + 3
        elif char == "#":
            run = self._run(buf, i, char, final, _MAX_HEADER + 1)
            if run <= _MAX_HEADER:
                after = self._need(buf, i + run, i, final)
                if after == "" or after.isspace():
                    self._line_start = False
                    return i + run
        elif char in "-*_+":
            if char != "+" and (end := self._rule_end(buf, i, char, final)):
                self._skip_line = True
                self._line_start = False
                return end
            if char != "_" and self._need(buf, i + 1, i, final) in (*_HSPACE, ""):
                self._line_start = False
                return i + 1
        elif char == "{":
            if self._names_a_tool(buf, i, final):
                # Its own brace opens it; the object closes as it opened, so
                # no string or escape is left open after it.
                self._json_depth = 1
                self._call_text = char
                return i + 1
        elif char == ">":
            if self._need(buf, i + 1, i, final) in (*_HSPACE, ">", ""):
                return i + 1  # still at the line start: "> - item", "> > quote"
        elif char.isdigit():
            j = i
            while j < len(buf) and j - i <= _MAX_LIST_DIGITS and buf[j].isdigit():
                j += 1
            if j - i <= _MAX_LIST_DIGITS:
                mark = self._need(buf, j, i, final)
                if (
                    mark
                    and mark in ".)"
                    and self._need(buf, j + 1, i, final) in (*_HSPACE, "")
                    and self._list_item(buf, i, int(buf[i:j]), j, final)
                ):
                    self._line_start = False
                    return j + 1
        self._line_start = False
        return None

    def _list_item(self, buf: str, i: int, number: int, end: int, final: bool) -> bool:
        """Whether "N." at a line start numbers a list item, not a date or a year.

        A list counts 1, 2, 3 on consecutive lines; "24. Dezember" (German,
        Danish, Polish, Czech dates) and a lone "1. Januar" are text. Item 1
        is a list item only when the next line starts with "2" and the same
        mark, so up to that line is held (at most MAX_HOLD characters), and
        the two lines do not start with the same word: "1. Mai ist Feiertag."
        over "2. Mai ist Brückentag." are dates, whatever the month is
        called. Steps that start alike ("1. Add the flour" over "2. Add the
        eggs") keep their numbers too: heard, a step's number is harmless, a
        date without its day is wrong.
        """
        if self._next_item is not None and number == self._next_item:
            self._next_item = number + 1
            return True
        if number != 1:
            return False
        mark = buf[end]
        k = end + 1
        while (here := self._need(buf, k, i, final)) not in ("\n", ""):
            k += 1
        if here == "":
            return False
        k += 1
        while (here := self._need(buf, k, i, final)) in _HSPACE and here:
            k += 1
        if here != "2" or self._need(buf, k + 1, i, final) != mark:
            return False
        first = self._first_word(buf, end + 1, i, final)
        if first and first == self._first_word(buf, k + 2, i, final):
            return False
        self._next_item = 2
        return True

    def _first_word(self, buf: str, k: int, origin: int, final: bool) -> str:
        """The first word of the line from ``k`` on (may hold), folded.

        Marks before it ("**", spaces) are passed over.
        """
        while (here := self._need(buf, k, origin, final)) and not (
            here.isalnum() or here == "\n"
        ):
            k += 1
        start = k
        while (here := self._need(buf, k, origin, final)) and here.isalnum():
            k += 1
        return buf[start:k].casefold()

    def _rule_end(self, buf: str, i: int, char: str, final: bool) -> int:
        """End of a horizontal rule (``---``, ``* * *``) starting at ``i``, or 0."""
        count = 0
        j = i
        while True:
            here = self._need(buf, j, i, final)
            if here == char:
                count += 1
            elif here not in _HSPACE or here == "":
                break
            j += 1
        if count >= 3 and (here in "\r\n"):
            return j
        return 0

    def _inline(self, buf: str, i: int, final: bool) -> tuple[int, str]:
        match = _SPECIAL_RE.search(buf, i)
        if match is None:
            self._emit(buf[i:])
            return len(buf), buf
        if (j := match.start()) > i:
            self._emit(buf[i:j])
            return j, buf
        char = buf[i]
        prev = buf[i - 1] if i else self._prev
        if char == "\n":
            self._emit_space("\n")
            self._line_start = True
            return i + 1, buf
        if char.isspace():
            if char != "\r":
                self._emit_space(" ")
            return i + 1, buf
        if char == "`":
            return i + 1, buf
        if char == "<":
            head = buf[i : i + len(_CALL_OPEN)]
            if head == _CALL_OPEN:
                self._in_call = True
                self._call_text = ""
                return i + len(_CALL_OPEN), buf
            if not final and i + len(head) == len(buf) and _CALL_OPEN.startswith(head):
                raise _Hold
            self._emit(char)
            return i + 1, buf
        if char in "*_~":
            run = self._run(buf, i, char, final, _LONG_RUN)
            if run < _LONG_RUN and self._keep_run(
                char, run, prev, self._last_out, buf, i + run
            ):
                self._emit(buf[i : i + run])
            return i + run, buf
        if char == "[":
            if (text := self._link(buf, i, final)) is not None:
                return i, text
            if (end := self._placeholder_end(buf, i, final)) is not None:
                self.placeholder = True
                return end, buf
            self._emit(char)
            return i + 1, buf
        if char in "hHwW":
            return self._maybe_url(buf, i, prev, final), buf
        # A pictograph or an invisible emoji joiner: drop it.
        return i + 1, buf

    @staticmethod
    def _keep_run(
        char: str, run: int, prev: str, last_out: str, buf: str, after: int
    ) -> bool:
        """Whether a run of * _ ~ is literal text rather than markup."""
        nxt = buf[after] if after < len(buf) else ""
        if run > 1:
            return False  # "**", "__", "~~" are always markup
        if char == "*":
            if (prev == "" or prev.isspace()) and (nxt == "" or nxt.isspace()):
                return True  # "2 * 3"
            return prev.isdigit() and nxt.isdigit()  # "2*3"
        if char == "_":
            return prev.isalnum() and nxt.isalnum()  # snake_case
        return "~" not in (prev, last_out)  # "~5 minutes", never "~~"

    def _link(self, buf: str, i: int, final: bool) -> str | None:
        """For ``[text](url)`` at ``i``: the buffer with the link replaced by text."""
        j = i + 1
        while (char := self._need(buf, j, i, final)) not in ("]", "[", "\n", ""):
            j += 1
        if char != "]" or self._need(buf, j + 1, i, final) != "(":
            return None
        k = j + 2
        depth = 0  # brackets of the URL's own ("wiki/Foo_(bar)")
        while (char := self._need(buf, k, i, final)) not in ("\n", "") and (
            char != ")" or depth
        ):
            depth += (char == "(") - (char == ")")
            k += 1
        if char != ")":
            return None
        return buf[:i] + buf[i + 1 : j] + buf[k + 1 :]

    def _placeholder_end(self, buf: str, i: int, final: bool) -> int | None:
        """For a template slot of the prompt at ``i``: the index after it.

        HA's own prompt shows the model "The temperature outside is [value from
        tool]." and a small model repeats it: a slot of the prompt is never an
        answer. Other words in brackets ("[1, 2]") are text.
        """
        if not self._slots:
            return None
        j = i + 1
        while (char := self._need(buf, j, i, final)) not in ("]", "[", "\n", ""):
            j += 1
        if char != "]" or _slot_key(buf[i + 1 : j]) not in self._slots:
            return None
        return j + 1

    def _maybe_url(self, buf: str, i: int, prev: str, final: bool) -> int:
        if prev and ((prev.isascii() and prev.isalnum()) or prev in "/@.-"):
            self._emit(buf[i])
            return i + 1
        head = buf[i : i + _URL_LOOKAHEAD].lower()
        for start in _URL_STARTS:
            if head.startswith(start):
                self._emit(self._link_text)
                self._in_url = True
                self._url_trail = ""
                self._url_open = 0
                return i + len(start)
        if (
            not final
            and i + len(head) == len(buf)
            and any(start.startswith(head) for start in _URL_STARTS)
        ):
            raise _Hold
        self._emit(buf[i])
        return i + 1

    # -- output -----------------------------------------------------------------

    def _emit(self, text: str) -> None:
        if text:
            if self._space:
                self._space = False
                if text[0] not in _NO_SPACE_BEFORE:
                    self._out.append(" ")
            self._out.append(text)
            self._last_out = text[-1]

    def _emit_space(self, space: str) -> None:
        """Collapse whitespace; never start or end the output with a space.

        A space is only written before the next text, so the gap a dropped
        emoji leaves before punctuation ("Done ✅!") closes up.
        """
        if not self._last_out:
            return
        if space == "\n":
            self._space = False
            self._emit(space)
        elif not self._last_out.isspace():
            self._space = True


def _in_url(char: str) -> bool:
    """Whether a URL goes on through ``char``: ASCII, or a letter, digit or
    mark of a script written with spaces (not a wide CJK character)."""
    if char.isspace():
        return False
    if char.isascii():
        return True
    # A script without spaces ("https://www.tmd.go.thครับ": the word after
    # is no URL).
    if unicodedata.east_asian_width(char) in ("W", "F") or UNSPACED.search(char):
        return False
    return char.isalnum() or unicodedata.category(char).startswith("M")


def speakable(
    text: str,
    *,
    link_text: str = "the link",
    slots: frozenset[str] = frozenset(),
    slot_leads: frozenset[str] = frozenset(),
) -> str:
    """Rewrite a whole text in one call."""
    spoken = SpokenFilter(link_text=link_text, slots=slots, slot_leads=slot_leads)
    return spoken.feed(text) + spoken.flush()
