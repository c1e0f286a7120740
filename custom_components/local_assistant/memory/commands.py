"""Memory commands read by sentence matching: read, forget and remember by voice.

"What do you know about me?", "forget that I like jazz", "remember that my
mother's birthday is on 4 May" are read the way Home Assistant reads its own
commands: hassil, HA's sentence matcher, against sentence files in HA's
format (``sentences/<language>.yaml``), so what they do never depends on a
small model choosing a tool. HA's intents have no sentences for a speaker's
notes, so the files are ours, one per language we speak; the politeness
around a command ("please", "kannst du") is HA's own per-language skip
words. In a language without a file, and for words no sentence matches,
the model's memory tools remain (memory/voice.py).

Acting on a command is memory/voice.py's.

Pure module: HA's sentence data packages only, no Home Assistant imports.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
import re

from hassil import Intents
from hassil.recognize import recognize_best
from home_assistant_intents import get_intents

from ..wording import STEM_LENGTH, shared, stems, words
from .facts import is_common

SENTENCES = Path(__file__).parent / "sentences"
# The slots of the sentence files: what to remember or forget, what to read.
FACT_SLOT = "fact"
TOPIC_SLOT = "topic"
# A hyphen between letters is a space ("souviens-toi", "Qu'est-ce"): speech to
# text writes either, and the files are written with spaces.
_HYPHEN = re.compile(r"(?<=\w)-(?=\w)")
# A topic word this short is a function word ("my", "de", "la").
_TOPIC_WORD_LENGTH = 3


class MemoryAction(StrEnum):
    """What a memory command asks; the values are the sentence files' intents."""

    READ = "LocalAssistantMemoryRead"
    READ_TOPIC = "LocalAssistantMemoryReadTopic"
    FORGET = "LocalAssistantMemoryForget"
    REMEMBER = "LocalAssistantMemoryRemember"


@dataclass(frozen=True, slots=True)
class MemoryCommand:
    """A memory command as the sentence matched it."""

    action: MemoryAction
    # The fact to remember or forget, or the topic to read, as said; "" for
    # reading everything.
    words: str = ""


@dataclass(frozen=True, slots=True)
class CommandSentences:
    """One language's memory sentences and HA's skip words for it."""

    intents: Intents
    skip_words: tuple[str, ...]


@lru_cache(maxsize=8)
def load_command_sentences(language: str) -> CommandSentences | None:
    """The sentences of one of our languages ("de"), None without a file.

    Reads files: call it in an executor.
    """
    path = SENTENCES / f"{language}.yaml"
    if not path.is_file():
        return None
    with path.open(encoding="utf-8") as file:
        intents = Intents.from_yaml(file)
    ha_data = get_intents(language) or {}
    skip = sorted(
        {_spaced(word) for word in ha_data.get("skip_words", ())}, key=len, reverse=True
    )
    return CommandSentences(intents, tuple(skip))


def read_command(text: str, sentences: CommandSentences) -> MemoryCommand | None:
    """The memory command the words say, if a sentence matches them whole."""
    spoken = _without_politeness(_spaced(text), sentences.skip_words)
    if not spoken:
        return None
    # No skip words inside the sentence: they would be cut out of the fact
    # too ("ich mag", "noch", "jetzt" are German skip words).
    result = recognize_best(spoken, sentences.intents)
    if result is None:
        return None
    action = MemoryAction(result.intent.name)
    slot = FACT_SLOT if action in (MemoryAction.FORGET, MemoryAction.REMEMBER) else ""
    if action is MemoryAction.READ_TOPIC:
        slot = TOPIC_SLOT
    said = ""
    if slot:
        entity = result.entities.get(slot)
        said = str(entity.text if entity is not None else "").strip()
        if not words(said):
            return None
    return MemoryCommand(action, said)


def _spaced(text: str) -> str:
    return _HYPHEN.sub(" ", text)


def _without_politeness(text: str, skip_words: tuple[str, ...]) -> str:
    """The words without HA's skip words at their start and end ("please")."""
    trimmed = text.strip(" \t\n,.;:!?¿¡")
    changed = True
    while changed and trimmed:
        changed = False
        folded = trimmed.casefold()
        for skip in skip_words:
            key = skip.casefold()
            if folded.startswith(key) and _boundary(folded, len(key)):
                trimmed = trimmed[len(key) :].strip(" \t\n,.;:!?¿¡")
                changed = True
                break
            # At the end only after a comma ("..., please"): a fact may end
            # in a skip word ("... is for me", "... noch").
            before = trimmed[: len(trimmed) - len(key)].rstrip()
            if folded.endswith(key) and before.endswith(","):
                trimmed = before.strip(" \t\n,.;:!?¿¡")
                changed = True
                break
    return trimmed


def _boundary(text: str, index: int) -> bool:
    """Whether ``text[index]`` is past the end of a word."""
    return index >= len(text) or not text[index].isalnum()


# --- which notes the words name ---------------------------------------------------


def notes_named(notes: list[str], said: str) -> list[int]:
    """The indexes of the notes "forget that ..." names; several when unclear.

    A note is named when the words hold more than half of its distinctive
    words, or when every distinctive word said is one of the note's ("forget
    that my sister is Grace" names "My sister Grace lives in Leeds."). Words
    nearly every note shares ("Der Benutzer ...") count for nothing. "Forget
    that I like opera" names neither "I like jazz." nor "I like hiking.": half
    of a note is not enough. Of several notes named, those sharing the most
    words of any length are kept ("cat" in "I have a cat.").
    """
    common = _common_stems(notes)
    wanted = stems([said], common)
    if not wanted:
        return []
    named: list[tuple[int, int]] = []
    for index, note in enumerate(notes):
        own = stems([note], common)
        if not own:
            continue
        covered = shared(own, wanted)
        if covered * 2 > len(own) or shared(wanted, own) == len(wanted):
            named.append((index, len(set(words(note)) & set(words(said)))))
    if not named:
        return []
    most = max(count for _index, count in named)
    return [index for index, count in named if count == most]


def notes_about(notes: list[str], topic: str) -> list[int]:
    """The indexes of the notes that share a word with a topic ("my sister").

    A topic is a word or two ("dog", "job"), so every word of three letters
    or more counts here, not only the distinctive ones.
    """
    common = _common_stems(notes)
    wanted = frozenset(
        word[:STEM_LENGTH]
        for word in words(topic)
        if len(word) >= _TOPIC_WORD_LENGTH and word[:STEM_LENGTH] not in common
    )
    return [
        index
        for index, note in enumerate(notes)
        if shared(wanted, frozenset(word[:STEM_LENGTH] for word in words(note)))
    ]


def _common_stems(notes: list[str]) -> frozenset[str]:
    """The stems nearly every note shares (memory/facts.py: is_common)."""
    counts = Counter(stem for note in notes for stem in stems([note]))
    return frozenset(
        stem for stem, count in counts.items() if is_common(count, len(notes))
    )
