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

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
import re
from typing import Final
import unicodedata

from hassil import Intents
from hassil.recognize import recognize_best
from home_assistant_intents import get_intents

from ..turn.rules import used_rules
from ..wording import STEM_LENGTH, stems, words
from .facts import common_to

SENTENCES = Path(__file__).parent / "sentences"
# The languages of sentences/*.yaml (a test keeps this true); the agent's
# own sentences (llm/sentences.py) are in each of them. A regional variant we
# translate (pt-BR) reads its language's commands.
COMMAND_LANGUAGES: Final = (
    "ca",
    "cs",
    "da",
    "de",
    "en",
    "es",
    "fr",
    "it",
    "nb",
    "nl",
    "pl",
    "pt",
    "ru",
    "sv",
    "uk",
)
# The slots of the sentence files: what to remember or forget, what to read.
FACT_SLOT = "fact"
TOPIC_SLOT = "topic"
NUMBER_SLOT = "number"
# The words a fact must start with, where a language needs them to tell a
# fact from an errand (Swedish "kom ihåg att jag ..." against "kom ihåg att
# köpa mjölk"): part of the fact.
SUBJECT_SLOT = "subject"
# A hyphen between letters is a space ("souviens-toi", "Qu'est-ce"): speech to
# text writes either, and the files are written with spaces.
_HYPHEN = re.compile(r"(?<=\w)-(?=\w)")
# HA's number words write an apostrophe inside a word as U+02BC (Ukrainian
# five); speech to text writes U+0027 or U+2019.
_APOSTROPHE = re.compile(r"(?<=\w)['\u2019](?=\w)")
_WORD = re.compile(r"\w+")
# A slot ("{fact}") or a rule ("<my>") of a template: not its words.
_SLOT_OR_RULE = re.compile(r"\{[^}]*\}|<[^>]*>")
# What is cut around a sentence, and what may not come just before a fact.
_EDGE = " \t\n,.;:!?¿¡"
_PAUSES = (",", ";", ".", "!", "?")
# A sentence end inside a fact: "I like jazz. Also turn off the lights."; a
# full stop after a number of one or two digits is an ordinal ("am 4. Mai",
# "den 31. juli"), after a year or a code it ends a sentence.
_SENTENCE_INSIDE = re.compile(r"(?<!\b\d)(?<!\b\d\d)\.\s|[!?]\s")
# Closing marks just after the fact's last word belong to it ("Hey Jude"; a
# French « » has a space inside).
_CLOSING = re.compile(r"(?:[\"'\u201d\u2019)\]]|[ \u00a0\u202f]?\u00bb)+")
_PAUSE_INSIDE = re.compile(r"[,;]")
# Signs a value's last word carries ("A+", "AB-", "C++", "4%", "21°").
_SIGNS = "+-%‰°#"
_NUMBER_SPACES = (" ", "\u00a0", "\u202f")
# A word this short is a function word ("my", "de", "la"), unless a number.
_SHORTEST_WORD = 3


class MemoryAction(StrEnum):
    """What a memory command asks; the values are the sentence files' intents."""

    READ = "LocalAssistantMemoryRead"
    READ_TOPIC = "LocalAssistantMemoryReadTopic"
    # "Forget that I like jazz": the words say the note.
    FORGET = "LocalAssistantMemoryForget"
    # "Forget about the marathon, I gave up": the words touch the note.
    FORGET_ABOUT = "LocalAssistantMemoryForgetAbout"
    # "Forget number 3": a note as a read-back numbered it (memory_which).
    FORGET_NUMBER = "LocalAssistantMemoryForgetNumber"
    REMEMBER = "LocalAssistantMemoryRemember"


@dataclass(frozen=True, slots=True)
class MemoryCommand:
    """A memory command as the sentence matched it."""

    action: MemoryAction
    # The fact to remember or forget, or the topic to read, as said; "" for
    # reading everything.
    words: str = ""
    # The stems the language's reading and forget-about sentences say
    # themselves ("every" of "everything", "mich", "меня"): no topic of a note.
    sentence_stems: frozenset[str] = field(default=frozenset(), compare=False)


@dataclass(frozen=True, slots=True)
class CommandSentences:
    """One language's memory sentences and HA's skip words for it."""

    language: str
    intents: Intents
    skip_words: tuple[str, ...]
    # The stems of the words the reading and "forget about" sentences say
    # outside their slots ("everything", "über mich", "про меня").
    sentence_stems: frozenset[str] = frozenset()


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
    return CommandSentences(language, intents, tuple(skip), _sentence_stems(intents))


def _sentence_stems(intents: Intents) -> frozenset[str]:
    """The stems of the words the sentences that read all notes and "forget
    about" say, and the rules they use: what names the speaker's memory as a
    whole ("everything", "über mich"), never a note's topic. Not the other
    commands' words: "bear" of "bear in mind" is a dog called Bear."""
    sentences = [
        sentence
        for action in (MemoryAction.READ, MemoryAction.FORGET_ABOUT)
        for block in intents.intents[action.value].data
        for sentence in block.sentences
    ]
    rules = intents.expansion_rules
    used = used_rules((sentence.expression for sentence in sentences), rules)
    texts = [sentence.text for sentence in sentences]
    texts.extend(rules[name].text for name in used)
    return stems([_SLOT_OR_RULE.sub(" ", text or "") for text in texts])


def read_command(text: str, sentences: CommandSentences) -> MemoryCommand | None:
    """The memory command the words say, if a sentence matches them whole.

    Read as said first ("I want you to remember that ..."), then without
    HA's skip words at the start ("Can you remember that ...?"). Skip words
    inside the sentence stay: they would be cut out of the fact too ("ich
    mag", "noch" are German skip words). A change asked as a bare question
    ("Remember that song?") is a question, and a fact of one word ("Note that
    down.") or one that starts after a pause ("Forget that, turn on the
    light.") or holds a second sentence is no command: the model answers.
    """
    ending = _without_trailing_politeness(text.strip(_EDGE), sentences.skip_words)
    for spoken in dict.fromkeys(
        (ending, _without_leading_politeness(ending, sentences.skip_words))
    ):
        # The language spells numbers ("Nummer drei").
        result = recognize_best(
            _spaced(spoken), sentences.intents, language=sentences.language
        )
        if result is None and _APOSTROPHE.search(spoken):
            # Read with HA's apostrophe, the words may say a note's number
            # only: a fact keeps the apostrophe it was said with.
            result = recognize_best(
                _spaced(_APOSTROPHE.sub("\u02bc", spoken)),
                sentences.intents,
                language=sentences.language,
            )
            if result is not None and result.intent.name != MemoryAction.FORGET_NUMBER:
                result = None
        if result is not None:
            break
    else:
        return None
    action = MemoryAction(result.intent.name)
    if action is MemoryAction.READ:
        return MemoryCommand(action)
    if action is MemoryAction.FORGET_NUMBER:
        number = result.entities[NUMBER_SLOT].value
        return MemoryCommand(action, str(int(number)))
    asked_politely = spoken != ending or bool(
        (result.intent_metadata or {}).get("request")
    )
    if (
        action is not MemoryAction.READ_TOPIC
        and text.rstrip().endswith("?")
        and not asked_politely
    ):
        return None
    slots = [
        result.entities[name]
        for name in (SUBJECT_SLOT, FACT_SLOT, TOPIC_SLOT)
        if name in result.entities
    ]
    said = (
        _said_as_written(spoken, " ".join(str(slot.text) for slot in slots))
        if result.entities.get(FACT_SLOT) or result.entities.get(TOPIC_SLOT)
        else None
    )
    if said is not None and action is MemoryAction.FORGET_ABOUT:
        # What to forget is named before a pause; after it the speaker goes
        # on ("forget about the marathon, I gave up"), and "forget about it,
        # I'll ask my wife later" names nothing: the model answers it.
        said = _first_clause(said).strip() or None
    if said is None:
        return None
    if action in (MemoryAction.FORGET, MemoryAction.REMEMBER) and (
        len(words(said)) < 2
        # Only politeness ("Remember that for me", "Onthoud dat voor mij"):
        # the note is what was said before, the model's to answer.
        or not _without_leading_politeness(said, sentences.skip_words)
    ):
        return None
    return MemoryCommand(
        action,
        said.lower() if said.isupper() else said,
        sentence_stems=sentences.sentence_stems,
    )


def _said_as_written(spoken: str, slot: str) -> str | None:
    """The slot's words as the sentence wrote them, or None if it is no fact.

    hassil matches a text without punctuation and hyphens; the fact keeps
    them ("Jean-Marc", "Dr Smith's"). None where the slot follows a comma or
    a sentence end, or holds one.
    """
    tokens = _WORD.findall(slot)
    if not tokens:
        return None
    pattern = r"\W+".join(re.escape(token) for token in tokens)
    found = list(re.finditer(pattern, spoken, re.IGNORECASE))
    if not found:
        return None
    last = found[-1]
    before = spoken[: last.start()].rstrip()
    end = _sign_end(spoken, last.end())
    closing = _CLOSING.match(spoken, end)
    said = spoken[last.start() : closing.end() if closing else end]
    if before.endswith(_PAUSES) or _SENTENCE_INSIDE.search(said):
        return None
    return said


def _sign_end(spoken: str, end: int) -> int:
    """Where the fact ends with the signs its last word carries: blood type
    "A+", "C++", "4%", "900 €" (hassil matches words only)."""
    while end < len(spoken) and spoken[end] in _SIGNS:
        end += 1
    after = end + 1 if spoken[end : end + 1] in _NUMBER_SPACES else end
    if after < len(spoken) and unicodedata.category(spoken[after]) == "Sc":
        return after + 1  # a currency
    return end


def _spaced(text: str) -> str:
    return _HYPHEN.sub(" ", text)


def _without_leading_politeness(text: str, skip_words: tuple[str, ...]) -> str:
    """The words without HA's skip words at their start ("Can you ...")."""
    return _trimmed(text, skip_words, _cut_start)


def _without_trailing_politeness(text: str, skip_words: tuple[str, ...]) -> str:
    """The words without HA's skip words at their end ("..., please")."""
    return _trimmed(text, skip_words, _cut_end)


def _trimmed(
    text: str, skip_words: tuple[str, ...], cut: Callable[[str, str], str | None]
) -> str:
    """Cut skip words with ``cut`` until none is left to cut."""
    trimmed = text
    while trimmed:
        for skip in skip_words:
            if (rest := cut(trimmed, skip.casefold())) is not None:
                trimmed = rest.strip(_EDGE)
                break
        else:
            break
    return trimmed


def _cut_start(text: str, key: str) -> str | None:
    # HA's skip words are written spaced ("peux tu", "pots dir me").
    folded = _spaced(text).casefold()
    if folded.startswith(key) and _boundary(folded, len(key)):
        return text[len(key) :]
    return None


def _cut_end(text: str, key: str) -> str | None:
    """A skip word of one word goes ("bitte", "please"); one of several only
    after a comma: a fact may end in one ("... is for me")."""
    folded = text.casefold()
    before = text[: len(text) - len(key)].rstrip()
    if (
        before
        and folded.endswith(key)
        and _boundary(folded, len(folded) - len(key) - 1)
        and (" " not in key or before.endswith(","))
    ):
        return before
    return None


def _boundary(text: str, index: int) -> bool:
    """Whether ``text[index]`` lies outside a word (or outside the text)."""
    return not 0 <= index < len(text) or not text[index].isalnum()


# --- which notes the words name ---------------------------------------------------


def notes_named(notes: list[str], said: str) -> list[int] | None:
    """The notes "forget that ..." names; several when unclear, None for none.

    Words are compared by their stems (:func:`content_stems`). A note is
    named when the words say more than half of it ("I love country music"),
    or when all the words are in the note and say half of it ("my sister is
    Grace" names "My sister Grace lives in Leeds."), no number differs ("the
    code is 9999" names no "The code is 4411.") and the words say no
    distinctive word (four letters or more, a name, a number) the note does
    not in its first clause (what comes after a pause says why: "I like
    jazz, I don't listen to it any more"): "my mother's birthday ..." names
    no "My father's birthday ...", "I asked you if you like jazz" no "I like
    jazz.", "I like country music" no "I love country music." (a wrong note
    forgotten is worse than none).
    Half of a note is not enough: "I like opera" names neither "I like
    jazz." nor "I like hiking.", "I have a dog" not "I have a cat.". The
    same holds for the note's distinctive words alone: "Vergiss, dass ich
    Oper mag" shares "ich" and "mag" with "Ich mag Jazz." but not "Jazz", so
    it names no note.
    ``[]`` when the words share something with a note but name none; None
    when they share nothing with any ("forget that I asked"): not about a
    note at all.
    """
    common = _common_stems(notes)
    wanted = content_stems(said, common)
    if not wanted:
        return None
    said_marked = stems([said], common)
    # What names the note is the first clause: "..., I gave it up" says why.
    naming = stems([_first_clause(said)], common)
    named: list[int] = []
    touched = False
    for index, note in enumerate(notes):
        own = content_stems(note, common)
        marked = stems([note], common)
        touched = touched or bool(wanted & own)
        numbers_differ = _numbers(wanted - own) and _numbers(own - wanted)
        if (
            own
            and not numbers_differ
            # The words say no distinctive word the note does not: "I asked
            # you if you like jazz", "my mother's birthday", "einen Termin"
            # name no "I like jazz.", "My father's birthday ...", "Ich habe
            # einen Hund.".
            # (a name the note starts with is a word of it: "Leo has judo")
            and naming <= marked | own
            and _says_most_of(wanted, own)
            # A short name is distinctive by its capital after the first word:
            # "max" said in lower case, or "Tom" first ("Tom is my son"), is
            # still the note's "Max", "Tom".
            and _says_most_of(said_marked | (wanted & marked), marked)
        ):
            named.append(index)
    return named if named or touched else None


def says_the_note(note: str, said: str) -> bool:
    """Whether the words say the note: its words and no other, however short.

    A note named (``notes_named``) may still hold a word the speaker did not
    say, or miss one they did, and that word may be whose it is or that it
    is the opposite: "I'm allergic to nuts" against "My wife is allergic to
    nuts.", "my son is allergic to nuts" against "I'm allergic to nuts.",
    "I eat pork" against "I don't eat pork.", "me gusta el jazz" against
    "No me gusta el jazz." Such a note is read back for the speaker to name
    by its number, never forgotten at once. Words are compared by their
    first letters, in any order ("dass ich keinen Kaffee trinke" says "Ich
    trinke keinen Kaffee."); what follows a pause says why ("I like jazz, I
    don't listen to it any more"), and so does what follows one in the
    note ("I have two cats, Luna and Sol.").
    """
    return _word_stems(_first_clause(note)) == _word_stems(_first_clause(said))


def _first_clause(text: str) -> str:
    """What comes before the first pause: what names a note, not why."""
    return _PAUSE_INSIDE.split(text, maxsplit=1)[0]


def _word_stems(text: str) -> frozenset[str]:
    return frozenset(word[:STEM_LENGTH] for word in words(text))


def _says_most_of(wanted: frozenset[str], own: frozenset[str]) -> bool:
    """More than half of a note's stems said, or only its stems and half of them.

    One word is never half: "I have to go" says only "have" of "I have a
    cat.". A note with no stems of the kind compared is not told apart by
    them.
    """
    said = len(wanted & own)
    return (
        not own
        or 2 * said > len(own)
        or (wanted <= own and said > 1 and 2 * said >= len(own))
    )


def _numbers(stems: frozenset[str]) -> bool:
    return any(stem.isdigit() for stem in stems)


def notes_touched(
    notes: list[str], said: str, sentence_stems: frozenset[str] = frozenset()
) -> list[int]:
    """The notes "forget about ..." means: those sharing most distinctive words.

    The words hold more than the note ("the marathon, I gave up"), so one
    shared distinctive word (four letters or more, a number, a name) is
    enough; none shared means no note ("forget about the weather"), and
    several equally shared are all returned. A word of ``sentence_stems``
    (what the reading and forget-about sentences say themselves) is no topic
    ("Forget about everything", "Vergiss alles über mich": never the one note
    that says "every" or "mich").
    """
    common = _common_stems(notes) | sentence_stems
    wanted = stems([said], common)
    counts = [len(wanted & content_stems(note, common)) for note in notes]
    most = max(counts, default=0)
    return (
        [index for index, count in enumerate(counts) if count == most] if most else []
    )


def says_the_topic(
    note: str, topic: str, left_out: frozenset[str] = frozenset()
) -> bool:
    """Whether the note says the topic: its words together, in its order.

    "Forget about my birthday" names "My birthday is on 4 June." but not "My
    wife's birthday is in May." (another word between), "El cumpleaños de mi
    esposa ..." nor "Der Geburtstag meiner Frau ..." (the other order), nor
    "L'anniversaire de ma femme ..." ("mon" is not in it). A word of the
    topic the note does not say may only be one of ``left_out``, the words
    HA's sentences of the language leave out, folded ("the marathon" names
    "I run a marathon every year.", "die Geige" names "Ich spiele Geige.").
    Words are compared by stems.
    """
    own = [word[:STEM_LENGTH] for word in words(_first_clause(note))]
    said = words(_first_clause(topic))
    held = [word[:STEM_LENGTH] for word in said if word[:STEM_LENGTH] in own]
    if not held or any(
        word[:STEM_LENGTH] not in own and word not in left_out for word in said
    ):
        return False
    return any(
        own[start : start + len(held)] == held
        for start in range(len(own) - len(held) + 1)
    )


def notes_about(notes: list[str], topic: str) -> list[int]:
    """The indexes of the notes that share a word with a topic ("my sister").

    A topic is a word or two ("dog", "job"), so every word of three letters
    or more counts here, whole: "son" is not "song".
    """
    common = _common_stems(notes)
    wanted = content_stems(topic, common)
    return [
        index
        for index, note in enumerate(notes)
        if wanted & content_stems(note, common)
    ]


def content_stems(text: str, common: frozenset[str] = frozenset()) -> frozenset[str]:
    """The words of three letters or more and the numbers, as stems, minus ``common``.

    A word is cut to its first :data:`STEM_LENGTH` letters ("lives",
    "living"); a shorter one is compared whole ("son" is not "song", "car"
    not "career").
    """
    return frozenset(
        word[:STEM_LENGTH]
        for word in words(text)
        if (len(word) >= _SHORTEST_WORD or word.isdigit())
        and word[:STEM_LENGTH] not in common
    )


def _common_stems(notes: list[str]) -> frozenset[str]:
    """The stems nearly every note shares (memory/facts.py: common_to)."""
    return common_to([content_stems(note) for note in notes])
