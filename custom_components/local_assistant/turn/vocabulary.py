"""What Home Assistant's own sentences of a language say about its words.

HA ships its sentence templates for every language it speaks
(``home_assistant_intents``). Two things in them are all this agent needs to
know about a language, so no word list of ours is ever needed:

* the words HA's templates mark optional (``turn off [the] lights [again]``),
  the language's skip words ("please", "bitte") and, where HA has a fuzzy
  matcher for the language, its stop words ("too", "also"): HA reads a
  command the same with or without them, so a follow-up may drop them before
  HA reads it again. A negation is never optional in HA's sentences ("nicht", "not"), so
  dropping these never turns "don't turn it off" into a command;
* the device words of its lists (``on_off_domains``, ``cover_classes``):
  "lights", "Licht", "volets", "gordijnen", each with the domain or cover
  class it means. "The lights in the study" names what a change acts on;
  "the study" alone does not.

It reads HA's sentence packages (hassil, home_assistant_intents), never HA.

Pure module: HA's sentence data packages only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
import re
from typing import Any

from hassil.errors import HassilError
from hassil.expression import Alternative, Expression, Group, Sentence, TextChunk
from hassil.parse_expression import parse_sentence
from hassil.parser import ParseError
from hassil.sample import sample_expression
from home_assistant_intents import get_fuzzy_language, get_intents, get_languages

# Words as HA's templates and the user's sentences are compared: letters, with
# an apostrophe inside ("l'eau", "don't"), in any script.
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
# Lists whose values are device words, and what each value means.
_DEVICE_LISTS = ("on_off_domains", "cover_classes")


def words(text: str) -> list[str]:
    """The words of ``text``, case folded, without punctuation or numbers."""
    return [word.casefold() for word in _WORD.findall(text)]


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """HA's words of one language."""

    language: str
    # Words HA's sentences may leave out, and its skip words.
    optional: frozenset[str]
    # Device words ("lights", "rollladen") -> the domains or cover classes they mean.
    device_words: Mapping[str, frozenset[str]]

    def device_words_in(self, text: str) -> frozenset[str]:
        """What the device words of ``text`` mean ("the blinds" -> {"blind"})."""
        padded = f" {' '.join(words(text))} "
        meant: set[str] = set()
        for phrase, kinds in self.device_words.items():
            if f" {phrase} " in padded:
                meant |= kinds
        return frozenset(meant)


def intents_language(language: str) -> str | None:
    """The language of HA's sentences for a language tag ("de-CH", "en-US")."""
    available = set(get_languages())
    for candidate in (language, language.replace("_", "-"), language.split("-")[0]):
        if candidate in available:
            return candidate
    return None


@lru_cache(maxsize=16)
def load_vocabulary(language: str) -> Vocabulary | None:
    """HA's words for ``language``, None where HA has no sentences.

    Reads a file of HA's intents package: call it in an executor.
    """
    code = intents_language(language)
    data = get_intents(code) if code else None
    if code is None or not data:
        return None
    rules = {
        name: parse_sentence(text, keep_text=True)
        for name, text in data.get("expansion_rules", {}).items()
    }
    optional: set[str] = set()
    for template in _templates(data):
        try:
            sentence = parse_sentence(template, keep_text=True)
        except ParseError:  # a template hassil cannot parse adds nothing
            continue
        optional |= _optional_words(sentence.expression)
    for skip in data.get("skip_words", ()):
        optional |= set(words(skip))
    if (fuzzy := get_fuzzy_language(code)) is not None:
        # The stop words of HA's fuzzy matcher ("too", "also", "about"), where
        # the language has one: words it reads a command without.
        optional |= {word.casefold() for word in fuzzy.stop_words}
    return Vocabulary(
        language=code,
        optional=frozenset(optional),
        device_words=_device_words(data, rules),
    )


def _templates(data: Mapping[str, Any]) -> Iterator[str]:
    for intent in data.get("intents", {}).values():
        for block in intent.get("data", ()):
            yield from block.get("sentences", ())
    yield from data.get("expansion_rules", {}).values()


def _optional_words(expression: Expression, optional: bool = False) -> set[str]:
    """Words inside ``[...]`` of a parsed template."""
    found: set[str] = set()
    if isinstance(expression, TextChunk):
        if optional:
            found |= set(words(expression.original_text))
    elif isinstance(expression, Group):
        inner = optional or (
            isinstance(expression, Alternative) and expression.is_optional
        )
        for item in expression.items:
            found |= _optional_words(item, inner)
    return found


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
                expression = parse_sentence(str(value["in"]), keep_text=True)
                phrases = sample_expression(
                    expression.expression, expansion_rules=rules
                )
                for phrase in phrases:
                    if key := " ".join(words(phrase)):
                        device_words.setdefault(key, set()).update(kinds)
            except (ParseError, HassilError):  # a value hassil cannot expand
                continue
    return {phrase: frozenset(kinds) for phrase, kinds in device_words.items()}
