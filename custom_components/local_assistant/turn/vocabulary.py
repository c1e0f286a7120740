"""What Home Assistant's own sentences of a language say about its words.

HA ships its sentence templates for every language it speaks
(``home_assistant_intents``), so no word list of ours is ever needed. Read
from them, per language (``Vocabulary``): the words HA reads a command
without (its commands' optional words, its skip phrases, its fuzzy matcher's
stop words; never a negation, so a follow-up may drop them before HA reads it
again), the device words of its lists ("lights", "volets"), the words its
questions open with and those its commands start with, the domains its
sentences change, and how it spells numbers (``unicode_rbnf``: "the second
one", "die zweite" say 2).

It reads HA's sentence packages (hassil, home_assistant_intents,
unicode_rbnf) and matches a language tag as llm/sentences.py does (HA's
matcher), never a running HA.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from functools import lru_cache
import re
from typing import Any

from hassil.errors import HassilError
from hassil.expression import (
    Alternative,
    Expression,
    Group,
    RuleReference,
    Sentence,
    Sequence,
    TextChunk,
)
from hassil.parse_expression import parse_sentence
from hassil.parser import ParseError
from hassil.sample import sample_expression
from home_assistant_intents import get_fuzzy_language, get_intents, get_languages
from unicode_rbnf import FormatPurpose, RbnfEngine

from ..llm.sentences import best_language
from ..wording import (
    CLAUSE_MARK,
    LETTER,
    QUESTION_MARKS,
    ends_asking,
    first_sentence_mark,
)
from .policy import CHAT_INTENTS, READ_ONLY_TOOLS
from .rules import used_rules

# Words as HA's templates and the user's sentences are compared: letters, with
# an apostrophe inside ("l'eau", "don't"), in any script.
_WORD = re.compile(rf"{LETTER}+(?:['’]{LETTER}+)*")
# Lists whose values are device words, and what each value means.
_DEVICE_LISTS = ("on_off_domains", "cover_classes")
# Spelled numbers are read up to this one (a speaker has at most 30 notes by
# default; a light goes to 100 but is set with digits by speech-to-text).
MAX_SPELLED_NUMBER = 50
# HA's rules that list what speech-to-text writes for a word it mishears
# (French "mets_dirty": "mais", "maître"; German "stt_fix_machen": "macht";
# Catalan "apaga_stt_typo"): their words stand for another word, so they are
# no sign of a command or a question ("Et demain, il pleut ?"). A fix written
# into an ordinary rule (Finnish "saada" in "laita") is not seen.
_MISHEARD_RULE = re.compile(r"(?:^|_)(?:dirty|stt|typos?)(?:_|$)")
# A word opens a question, or a command, when at least this many of HA's
# reading, or changing, sentences start with it: a word that starts one or
# two ("on est quel jour", French "we"; German "ich") is no sign of either.
OPENER_TEMPLATES = 3


def words(text: str) -> list[str]:
    """The words of ``text``, case folded, without punctuation or numbers."""
    return [word.casefold() for word in _WORD.findall(text)]


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """HA's words of one language."""

    # Words HA's commands may leave out ("[the]", "[again]"): never a
    # negation or a question's particle, which only HA's chat intents and
    # questions mark optional.
    optional: frozenset[str]
    # Words any of HA's sentences may leave out, its questions' too ("in the",
    # Hindi "में"): what may join the names and device words of one phrase.
    phrase_words: frozenset[str]
    # Device words ("lights", "rollladen") -> the domains or cover classes they mean.
    device_words: Mapping[str, frozenset[str]]
    # Spelled numbers ("zweite", "twenty one") -> the number, longest first.
    number_words: Mapping[str, int] = field(default_factory=dict)
    # The domains HA's sentences change something of (a vacuum, a lock, a
    # to-do list; not the weather, which they only read).
    changed_domains: frozenset[str] = frozenset()
    # The words HA's questions open with and its commands never do, and
    # those only its commands open with.
    question_openers: frozenset[str] = frozenset()
    command_words: frozenset[str] = frozenset()
    # HA's skip phrases ("can you", "ich möchte"), its words each, longest
    # first: HA reads a sentence without them, as whole phrases only.
    skip_phrases: tuple[tuple[str, ...], ...] = ()
    # The stop words of HA's fuzzy matcher ("too", "also"), where the
    # language has one: words it reads a command without, wherever they are.
    stop_words: frozenset[str] = frozenset()
    # HA's answers to its intents, by intent and response ("HassTurnOff":
    # {"default": "{{ slots.name }} ausgeschaltet", "cover": ...}): what its
    # default agent says after it carried one out (turn/what_ran.py).
    responses: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def unskipped(self, text: str) -> list[str]:
        """The words of ``text`` without HA's skip phrases."""
        said = words(text)
        kept: list[str] = []
        index = 0
        while index < len(said):
            phrase = next(
                (
                    phrase
                    for phrase in self.skip_phrases
                    if tuple(said[index : index + len(phrase)]) == phrase
                ),
                None,
            )
            if phrase is None:
                kept.append(said[index])
                index += 1
            else:
                index += len(phrase)
        return kept

    def opens_a_question(self, text: str) -> bool:
        """Whether ``text`` opens as HA's questions do, after optional words.

        "Please tell me, are the sprinklers on?": "please" is optional,
        "tell" opens HA's questions ("tell me the time"). A first sentence
        that ends with a full stop or an exclamation mark states or commands
        ("Il fait beau.": "il" opens HA's "il fait combien ?"); one without a
        mark (speech-to-text often writes none) may ask.
        """
        if first_sentence_mark(text) not in (None, *QUESTION_MARKS):
            return False
        if self.says_a_command_word(text):
            # "Can you turn on the fan?", "Staat hij aan? Zet hem uit.": a
            # clause that starts as HA's commands do is a command in them.
            return False
        return self._opens_with(text, self.question_openers)

    def asks(self, text: str) -> bool:
        """Whether ``text`` asks something: its first sentence ends with a
        question mark, or it opens as HA's questions do, and it says no word
        HA's commands start with ("Will it rain tomorrow?", "Tell me a joke";
        not "Can you turn the volume down?")."""
        if ends_asking(text):
            return not self.says_a_command_word(text)
        return self.opens_a_question(text)

    def says_a_command_word(self, text: str) -> bool:
        """Whether a clause of ``text`` starts as HA's commands do.

        Its first word, after HA's skip phrases (whole: "I'd like to turn on
        the fan") and words its sentences may leave out, is one its commands
        start with: "Can you turn the volume down?", "Ach nee, mach sie
        wieder aus."; not "La puerta chirría cuando se abre." nor "I turn it
        off every night." ("21.5" is one clause.)
        """
        return any(
            self._opens_with(clause, self.command_words)
            for clause in CLAUSE_MARK.split(text)
        )

    def _opens_with(self, text: str, openers: frozenset[str]) -> bool:
        """Whether ``text`` opens with one of ``openers``, after HA's skip
        phrases and words its sentences may leave out."""
        for word in self.unskipped(text):
            if word in openers:
                return True
            if not self.fills(word):
                return False
        return False

    def fills(self, word: str) -> bool:
        """Whether ``word`` is one any of HA's sentences leaves out, or a stop
        word: it may come before the word that opens a question or a command,
        and is never a negation ("nicht", "inte"), nor "nothing"."""
        return word in self.phrase_words or word in self.stop_words

    def skips(self, word: str) -> bool:
        """Whether ``word`` is one of HA's skip phrases' or a stop word."""
        return word in self.stop_words or any(word in p for p in self.skip_phrases)

    def leaves_out(self, word: str) -> bool:
        """Whether HA reads a command without ``word``: optional in its
        commands, or one of its fuzzy matcher's stop words."""
        return word in self.optional or word in self.stop_words

    def device_words_in(self, text: str) -> frozenset[str]:
        """What the device words of ``text`` mean ("the blinds" -> {"blind"})."""
        padded = f" {' '.join(words(text))} "
        meant: set[str] = set()
        for phrase, kinds in self.device_words.items():
            if f" {phrase} " in padded:
                meant |= kinds
        return frozenset(meant)

    def spelled_numbers_in(self, text: str) -> frozenset[int]:
        """The numbers ``text`` spells out ("la deuxième" -> {2}).

        Longest spellings first, each taking its words: "twenty one" is 21,
        not also 20.
        """
        padded = f" {' '.join(words(text))} "
        found: set[int] = set()
        for phrase, number in self.number_words.items():
            if f" {phrase} " in padded:
                found.add(number)
                padded = padded.replace(f" {phrase} ", " | ")
        return frozenset(found)


def intents_language(language: str) -> str | None:
    """The language of HA's sentences for a language tag ("de-CH", "en-US").

    Read as HA's default agent reads it (its language matcher: "zh-Hant" is
    zh-HK's sentences, "no" nb's), a language before its regions on a tie.
    """
    return best_language(language, get_languages())


@lru_cache(maxsize=16)
def load_vocabulary(language: str) -> Vocabulary | None:
    """HA's words for ``language``, None where HA has no sentences.

    Reads a file of HA's intents package: call it in an executor.
    """
    code = intents_language(language)
    data = get_intents(code) if code else None
    if code is None or not data:
        return None
    rules = _parsed_rules(data)
    optional: set[str] = set()
    phrase_words: set[str] = set()
    for expression, commands in _templates(data, rules):
        found = _optional_words(expression)
        phrase_words |= found
        if commands:
            optional |= found
    fuzzy = get_fuzzy_language(code)
    openers, command_words = _sentence_openers(data, rules)
    return Vocabulary(
        optional=frozenset(optional),
        phrase_words=frozenset(phrase_words),
        skip_phrases=tuple(
            sorted(
                {tuple(words(skip)) for skip in data.get("skip_words", ())} - {()},
                key=len,
                reverse=True,
            )
        ),
        stop_words=frozenset(word.casefold() for word in fuzzy.stop_words)
        if fuzzy is not None
        else frozenset(),
        device_words=_device_words(data, rules),
        number_words=_number_words(code),
        changed_domains=_changed_domains(data),
        question_openers=openers,
        command_words=command_words,
        responses=data.get("responses", {}).get("intents", {}),
    )


def _sentence_openers(
    data: Mapping[str, Any], rules: dict[str, Sentence]
) -> tuple[frozenset[str], frozenset[str]]:
    """How HA's questions open, and the words its commands open with.

    Question openers: first words of HA's reading sentences that start at
    least OPENER_TEMPLATES of them and none of its others. Command
    words: words at least as many of its changing sentences must start with
    ("<turn> on", not "[the]"), that start none of its reading ones and
    that its sentences say inside no more often, and no value of its lists
    ("turn", "schalte", "allume", "zet"; not "alle", said inside far more,
    "open", a state that reads in "is the garage open", or German "ich",
    which starts two).
    """
    reading: Counter[str] = Counter()
    changing: Counter[str] = Counter()
    # Templates that say a word after their start ("schalte alle Lichter
    # aus", "pon un temporizador para 5 minutos").
    inside: Counter[str] = Counter()
    rules = _heard_rules(rules)
    for name, intent in data.get("intents", {}).items():
        if name in CHAT_INTENTS:
            continue
        for block in intent.get("data", ()):
            # A block may define rules of its own ("<heizung>" of German
            # HassClimateSetTemperature).
            block_rules = {**rules, **_heard_rules(_parsed_rules(block))}
            for template in block.get("sentences", ()):
                try:
                    expression = parse_sentence(template, keep_text=True).expression
                except ParseError:
                    continue
                first = _first_words(expression, block_rules)
                inside.update(_said_words(expression, block_rules) - first)
                if name in READ_ONLY_TOOLS:
                    reading.update(first)
                else:
                    changing.update(
                        _first_words(expression, block_rules, said_only=True)
                    )
    openers = frozenset(
        word
        for word, count in reading.items()
        if count >= OPENER_TEMPLATES and word not in changing
    )
    # A word HA's sentences say inside more often than they start a command
    # with it is a word of any sentence (an article, "alle", "para", a device
    # noun), no sign of a command.
    commands = {
        word
        for word, count in changing.items()
        if count >= OPENER_TEMPLATES and count >= inside[word]
    }
    return openers, frozenset(commands - set(reading) - _list_words(data, rules))


def _heard_rules(rules: dict[str, Sentence]) -> dict[str, Sentence]:
    """``rules`` without those listing misheard words: a template that uses
    one starts, in its place, with no word of HA's (an unknown rule)."""
    return {
        name: rule for name, rule in rules.items() if not _MISHEARD_RULE.search(name)
    }


def _list_words(data: Mapping[str, Any], rules: dict[str, Sentence]) -> set[str]:
    """The words of HA's lists: states and device kinds ("open", "lights")."""
    found: set[str] = set()
    for values in data.get("lists", {}).values():
        for value in values.get("values", ()) if isinstance(values, dict) else ():
            spoken = value.get("in") if isinstance(value, dict) else value
            if not isinstance(spoken, str):
                continue
            try:
                expression = parse_sentence(spoken, keep_text=True).expression
                for phrase in sample_expression(expression, expansion_rules=rules):
                    found |= set(words(phrase))
            except (ParseError, HassilError):  # a value hassil cannot expand
                found |= set(words(spoken))
    return found


def _parsed_rules(data: Mapping[str, Any]) -> dict[str, Sentence]:
    """The expansion rules of a sentence file or a block, parsed."""
    parsed: dict[str, Sentence] = {}
    for name, text in (data.get("expansion_rules") or {}).items():
        with suppress(ParseError):  # a rule hassil cannot parse: unknown, not empty
            parsed[name] = parse_sentence(text, keep_text=True)
    return parsed


# A template read up to its first word: the letters read so far, and whether
# the word has ended (a space, a slot or punctuation came after them).
_Start = tuple[str, bool]


def _first_words(
    expression: Expression, rules: Mapping[str, Sentence], said_only: bool = False
) -> set[str]:
    """The words a template can start with.

    A word may be glued from parts: "apag(a|ue|ar|á)" starts with "apaga",
    "apague", "apagar", "apagá"; "enc[i]end(a|e)" with "enciende", "encenda".
    A slot ("{name}") or an unknown rule starts with no word of HA's: it adds
    none. ``said_only``: not the words of optional parts at a word's start
    ("[<turn>] [the] {area} lights on" starts with no word a sentence must
    say).
    """
    starts = _read_start(expression, rules, {("", False)}, frozenset(), said_only)
    return {letters.casefold() for letters, _ended in starts if letters}


def _read_start(
    expression: Expression,
    rules: Mapping[str, Sentence],
    starts: set[_Start],
    expanding: frozenset[str],
    said_only: bool,
) -> set[_Start]:
    """``starts`` read on through ``expression``."""
    open_starts = {start for start in starts if not start[1]}
    if not open_starts:
        return starts
    done = starts - open_starts
    if isinstance(expression, TextChunk):
        return done | {_read_text(expression.original_text, s) for s in open_starts}
    if isinstance(expression, RuleReference):
        rule = rules.get(expression.rule_name)
        if rule is not None and expression.rule_name not in expanding:
            return done | _read_start(
                rule.expression,
                rules,
                open_starts,
                expanding | {expression.rule_name},
                said_only,
            )
    if not isinstance(expression, Group):
        # A slot, or a rule we do not know: something that is no word of ours.
        return done | {(letters, True) for letters, _ended in open_starts}
    if isinstance(expression, Sequence):
        for item in expression.items:
            open_starts = _read_start(item, rules, open_starts, expanding, said_only)
        return done | open_starts
    # An alternative or a permutation: any item may come first.
    read = set(done)
    for item in expression.items:
        read |= _read_start(item, rules, open_starts, expanding, said_only)
    if isinstance(expression, Alternative) and expression.is_optional:
        if said_only and all(letters == "" for letters, _ended in open_starts):
            return done | open_starts  # only what a sentence must say
        read |= open_starts
    return read


def _read_text(text: str, start: _Start) -> _Start:
    """A start read on through a piece of a template's text."""
    letters = start[0]
    if not letters:
        # A word starts at the first letter ("¿qué": "qué").
        first = _WORD.search(text)
        if first is None:
            return start
        text = text[first.start() :]
    word = _WORD.match(text)
    said = word.group() if word else ""
    return (letters + said, len(said) < len(text))


def _said_words(expression: Expression, rules: Mapping[str, Sentence]) -> set[str]:
    """Every word a template can say, glued ones whole ("apag(a|ue)")."""
    found: set[str] = set()
    found |= _read_words(expression, rules, found, frozenset({""}), frozenset())
    return {word.casefold() for word in found if word}


def _read_words(
    expression: Expression,
    rules: Mapping[str, Sentence],
    found: set[str],
    glued: frozenset[str],
    expanding: frozenset[str],
) -> frozenset[str]:
    """Add the words ``expression`` says to ``found``.

    ``glued``: the letters of a word begun before it. Returns those of a word
    it may leave unfinished.
    """
    if isinstance(expression, TextChunk):
        return _said_in_text(expression.original_text, glued, found)
    if isinstance(expression, RuleReference):
        rule = rules.get(expression.rule_name)
        if rule is not None and expression.rule_name not in expanding:
            return _read_words(
                rule.expression,
                rules,
                found,
                glued,
                expanding | {expression.rule_name},
            )
    if not isinstance(expression, Group):
        found.update(letters for letters in glued if letters)
        return frozenset({""})
    if isinstance(expression, Sequence):
        for item in expression.items:
            glued = _read_words(item, rules, found, glued, expanding)
        return glued
    unfinished: set[str] = set()
    for item in expression.items:
        unfinished |= _read_words(item, rules, found, glued, expanding)
    if isinstance(expression, Alternative) and expression.is_optional:
        unfinished |= glued
    return frozenset(unfinished)


def _said_in_text(text: str, glued: frozenset[str], found: set[str]) -> frozenset[str]:
    """Add the words a piece of a template's text ends to ``found``.

    ``glued``: the letters of a word begun before it; returns those of the
    word it leaves unfinished ("" when it ends with no letter).
    """
    unfinished = set(glued)
    end = 0
    for match in _WORD.finditer(text):
        if match.start() > end:  # no letter between: the word before ended
            found.update(unfinished)
            unfinished = {""}
        unfinished = {letters + match.group() for letters in unfinished}
        end = match.end()
    if end < len(text):
        found.update(unfinished)
        unfinished = {""}
    return frozenset(unfinished)


def _changed_domains(data: Mapping[str, Any]) -> frozenset[str]:
    """The domains an intent that changes something requires or names."""
    found: set[str] = set()
    for name, intent in data.get("intents", {}).items():
        if name in READ_ONLY_TOOLS:
            continue
        for block in intent.get("data", ()):
            for where in ("requires_context", "slots"):
                domain = (block.get(where) or {}).get("domain")
                found.update([domain] if isinstance(domain, str) else domain or ())
    return frozenset(found)


def _number_words(language: str) -> dict[str, int]:
    """Every spelling of 2..MAX_SPELLED_NUMBER and of every ordinal up to it.

    "One" is left out as a cardinal: it is the article of most languages
    ("un", "eine", "een", "una"), so it would be said in nearly every
    sentence. Longest spelling first, sorted once here rather than on every
    sentence read. Empty where the number rules do not know the language.
    """
    try:
        engine = RbnfEngine.for_language(language.split("-")[0])
    except ValueError:
        return {}
    found: dict[str, int] = {}
    for number in range(1, MAX_SPELLED_NUMBER + 1):
        purposes = [FormatPurpose.ORDINAL]
        if number > 1:
            purposes.append(FormatPurpose.CARDINAL)
        for purpose in purposes:
            try:
                result = engine.format_number(number, purpose)
            except (ValueError, KeyError, IndexError):  # a rule set it cannot use
                continue
            for text in result.text_by_ruleset.values():
                if key := " ".join(words(text)):
                    found.setdefault(key, number)
    return dict(sorted(found.items(), key=lambda item: len(item[0]), reverse=True))


def _templates(
    data: Mapping[str, Any], rules: Mapping[str, Sentence]
) -> Iterator[tuple[Expression, bool]]:
    """HA's templates, parsed, but its chat intents', and the rules they are
    made of; each with whether it may be a command's.

    A question's particle (Vietnamese "[không]") is a negation elsewhere,
    and only a command's optional words may be left out of a command: a
    rule only HA's questions use (Italian "how_many", "[ci] sono") is none
    of a command's.
    """
    templates: list[tuple[Expression, bool]] = []
    for name, intent in data.get("intents", {}).items():
        if name in CHAT_INTENTS:  # "[non] rien": never mind
            continue
        for block in intent.get("data", ()):
            for template in block.get("sentences", ()):
                # A template hassil cannot parse adds nothing.
                with suppress(ParseError):
                    sentence = parse_sentence(template, keep_text=True)
                    templates.append((sentence.expression, name not in READ_ONLY_TOOLS))
    used = used_rules([found for found, command in templates if command], rules)
    yield from templates
    for name, rule in rules.items():
        yield rule.expression, name in used


def _optional_words(expression: Expression, optional: bool = False) -> set[str]:
    """Words inside ``[...]`` of a parsed template.

    Not the letters of an optional ending glued to a word ("kakš[na|ne|en]"
    says no word "ne").
    """
    found: set[str] = set()
    if isinstance(expression, TextChunk):
        if optional:
            found |= set(words(expression.original_text))
    elif isinstance(expression, Group):
        inner = optional or (
            isinstance(expression, Alternative) and expression.is_optional
        )
        items = expression.items
        for index, item in enumerate(items):
            if isinstance(expression, Sequence) and _glued(items, index):
                continue
            found |= _optional_words(item, inner)
    return found


def _glued(items: list[Expression], index: int) -> bool:
    """Whether the group at ``index`` of a sequence is part of a word: text
    or a slot touches it with no space between ("kater[a|e]",
    "<timer_start>[ne[ga]]"; not "[und ]{timer_seconds}")."""
    group = items[index]
    if not isinstance(group, Group):
        return False
    return (
        index > 0
        and _edge(items[index - 1], last=True).isalnum()
        and _edge(group, last=False).isalnum()
    ) or (
        index + 1 < len(items)
        and _edge(items[index + 1], last=False).isalnum()
        and _edge(group, last=True).isalnum()
    )


def _edge(item: Expression, *, last: bool) -> str:
    """The character at one end of an expression; a slot's is a letter, a
    space where one of its alternatives ends in one."""
    if isinstance(item, TextChunk):
        return item.original_text[-1:] if last else item.original_text[:1]
    if isinstance(item, Alternative):
        # An optional group's empty alternative has no edge.
        edges = [edge for part in item.items if (edge := _edge(part, last=last))]
        return " " if any(not edge.isalnum() for edge in edges) else "a"
    if isinstance(item, Group):
        return _edge(item.items[-1 if last else 0], last=last) if item.items else " "
    return "a"  # a list or a rule: a word


def _device_words(
    data: Mapping[str, Any], rules: dict[str, Sentence]
) -> dict[str, frozenset[str]]:
    device_words: dict[str, set[str]] = {}
    lists = data.get("lists", {})
    for list_name in _DEVICE_LISTS:
        for value in lists.get(list_name, {}).get("values", ()):
            if not isinstance(value, dict):
                continue
            out = value.get("out")
            kinds = {out} if isinstance(out, str) else set(out or ())
            if list_name == "cover_classes":
                kinds.add("cover")
            try:
                expression = parse_sentence(str(value["in"]), keep_text=True).expression
                for phrase in sample_expression(expression, expansion_rules=rules):
                    if key := " ".join(words(phrase)):
                        device_words.setdefault(key, set()).update(kinds)
            except (ParseError, HassilError):  # a value hassil cannot expand
                continue
    return {phrase: frozenset(kinds) for phrase, kinds in device_words.items()}
