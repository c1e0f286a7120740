"""The one device a sentence points to, put in HA's own name for it.

HA's strict sentences name a device by its name, or an area with a device
word of its lists. People also say "the living room smart curtain" (area
before the name), "start the vacuum in the living room" (a word HA's
vacuum sentences do not list), "add milk to my todo list" (the kind of the
home's one list). When the words around such a phrase name exactly one
exposed entity of this home, :func:`named_readings` gives the sentence with
that phrase replaced by the entity's name ("start Roborock Downstairs");
HA then reads it strictly or not at all (turn/reading.py), so a statement
or a negation stays what it is: HA has no sentence for "the Smart Curtain is
broken" or "don't open the Smart Curtain".

A phrase is a run of names (devices, areas, floors) and device words joined
only by words HA's sentences treat as optional ("in the", "im", "de la").
Device words are those of HA's lists and HA's own name of each domain in the
language (its "Vacuum", "Staubsauger", "Aspirateur").

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
import re

from ..wording import CLAUSE_MARK, LETTER
from .policy import name_key

# A phrase joins at most this many names and device words.
MAX_PHRASE_PARTS = 3
# A said word may carry up to this many more letters than the name's
# (plurals, inflections: "curtains", "Staubsaugers"), when the name's word
# has at least MIN_INFLECTED_LETTERS letters, or one more letter from
# MIN_ONE_MORE_LETTERS on ("fans", "lamps"): "heater" is not "Heat Lamp",
# "fancy" not "Fan", "pc" not "Tapo P100", "fan 12" not "Fan 1".
MAX_EXTRA_LETTERS = 2
MIN_INFLECTED_LETTERS = 5
MIN_ONE_MORE_LETTERS = 3
# Words apart at apostrophes: "l'aspirateur" says "aspirateur". A script
# without spaces is one word per phrase: a name found inside a longer word
# there ("电视" in "电视剧", a TV series) would name a device no one named.
_WORD = re.compile(rf"{LETTER}+|\d+")


@dataclass(frozen=True, slots=True)
class HomeEntity:
    """An exposed entity as the words may point to it."""

    name: str
    spellings: tuple[str, ...]  # its name and aliases
    domain: str
    # Its device class and what the device words of its name mean ("Smart
    # Curtain": curtain), for a cover without a class.
    kinds: frozenset[str]
    places: frozenset[str]  # name_key of its area and floor


@dataclass(frozen=True, slots=True)
class _Mention:
    start: int  # word index
    end: int  # word index after the last word
    entities: frozenset[str] = frozenset()  # a name or alias said: these entities
    place: str | None = None  # an area or floor said: its name_key
    kinds: frozenset[str] = frozenset()  # a device word said: what it means


def named_readings(
    text: str,
    entities: list[HomeEntity],
    places: Mapping[str, str],
    device_words: Mapping[str, frozenset[str]],
    optional: frozenset[str],
) -> Iterator[str]:
    """``text`` with a phrase that points to one entity replaced by its name.

    ``places`` maps each area and floor spelling to its name; ``device_words``
    each device word to what it means. Longest phrases first; a phrase of
    areas alone is not a device and is never replaced.
    """
    tokens = list(_WORD.finditer(text))
    said = _Said.of([token.group() for token in tokens])
    mentions = _mentions(said, entities, places, device_words, optional)
    # The words a clause mark follows: "The kitchen, I turned the light off."
    # says no "kitchen light".
    clause_ends = frozenset(
        index
        for index in range(len(tokens) - 1)
        if CLAUSE_MARK.search(text[tokens[index].end() : tokens[index + 1].start()])
    )
    phrases = sorted(
        _phrases(mentions, said.keys, optional, clause_ends),
        key=lambda run: run[-1].end - run[0].start,
        reverse=True,
    )
    # An entity named like an area would be read as the area.
    place_keys = {name_key(spelling) for spelling in places}
    seen: set[str] = set()
    for phrase in phrases:
        entity = _the_one(phrase, entities)
        if entity is None or name_key(entity.name) in place_keys:
            continue
        start = tokens[phrase[0].start].start()
        end = tokens[phrase[-1].end - 1].end()
        if name_key(text[start:end]) == name_key(entity.name):
            continue  # HA already read the name as said
        reading = f"{text[:start]}{entity.name}{text[end:]}"
        if reading not in seen:
            seen.add(reading)
            yield reading


def said_names(text: str, names: Iterable[str]) -> list[str]:
    """The names (or aliases, areas, floors) that ``text`` says, word by word.

    The rule of the phrase reading: whole words, the last one inflected as
    ``_inflects`` allows ("curtains", "Flurlampen", "desk lamps"), never
    digits: "I fancy a pizza" names no "Fan", "lamp 2" no "Lamp 1".
    """
    said = _Said.of(_WORD.findall(text))
    return [
        name
        for name in names
        if next(said.spans(name_key(name)), None) or said.says_words(name)
    ]


@dataclass(frozen=True, slots=True)
class _Said:
    """The sentence's words as names are compared, indexed by first letter."""

    keys: tuple[str, ...]
    starts: Mapping[str, tuple[int, ...]]

    @classmethod
    def of(cls, words: list[str]) -> _Said:
        keys = tuple(name_key(word) for word in words)
        starts: dict[str, list[int]] = {}
        for index, key in enumerate(keys):
            starts.setdefault(key[:1], []).append(index)
        return cls(keys, {first: tuple(found) for first, found in starts.items()})

    def says_words(self, name: str) -> bool:
        """Whether the words say ``name`` word by word, each maybe inflected
        ("lampes du salon" for "Lampe du salon")."""
        parts = [name_key(part) for part in _WORD.findall(name)]
        if not parts:
            return False
        return any(
            all(
                said == part or _inflects(said, part, said)
                for said, part in zip(self.keys[start:], parts, strict=False)
            )
            for start in self.starts.get(parts[0][:1], ())
            if start + len(parts) <= len(self.keys)
        )

    def spans(self, key: str, *, inflected: bool = True) -> Iterator[tuple[int, int]]:
        """Where the words spell ``key`` (spaces and hyphens aside, "todo list").

        With ``inflected``, the last word may carry a few more letters
        (MAX_EXTRA_LETTERS, MIN_INFLECTED_LETTERS), never digits.
        """
        if not key:
            return
        for start in self.starts.get(key[:1], ()):
            joined = ""
            # Ends at the first word that reaches the key's length.
            for end in range(start + 1, len(self.keys) + 1):
                word = self.keys[end - 1]
                joined += word
                if joined == key:
                    yield start, end
                    break
                if len(joined) >= len(key):
                    if inflected and _inflects(joined, key, word):
                        yield start, end
                    break
                if not key.startswith(joined):
                    break


def _inflects(joined: str, key: str, last_word: str) -> bool:
    """Whether ``joined`` is ``key`` with a few letters more on its last word."""
    extra = joined[len(key) :]
    stem = last_word[: len(last_word) - len(extra)]
    least = MIN_ONE_MORE_LETTERS if len(extra) == 1 else MIN_INFLECTED_LETTERS
    return (
        joined.startswith(key)
        and 0 < len(extra) <= MAX_EXTRA_LETTERS
        and extra.isalpha()
        and len(stem) >= least
        and stem.isalpha()
    )


def _mentions(
    said: _Said,
    entities: list[HomeEntity],
    places: Mapping[str, str],
    device_words: Mapping[str, frozenset[str]],
    optional: frozenset[str],
) -> list[_Mention]:
    """Every name, place and device word said, the longest where they overlap.

    A word of a name that no other name, no place and no device word has
    and that HA's sentences do not treat as optional ("tasks" of "Personal
    Tasks") names its entity too, said exactly as the name has it.
    """
    by_spelling: dict[str, set[str]] = {}
    for entity in entities:
        for spelling in entity.spellings:
            by_spelling.setdefault(name_key(spelling), set()).add(entity.name)
    found: list[_Mention] = []
    for key, names in by_spelling.items():
        found += [
            _Mention(start, end, entities=frozenset(names))
            for start, end in said.spans(key)
        ]
    taken = {
        name_key(part)
        for phrase in (*places, *device_words)
        for part in _WORD.findall(phrase)
    }
    for word, names in _name_words(entities).items():
        if word not in by_spelling and word not in optional and word not in taken:
            found += [
                _Mention(start, end, entities=frozenset(names))
                for start, end in said.spans(word, inflected=False)
            ]
    for spelling, place in places.items():
        found += [
            _Mention(start, end, place=name_key(place))
            for start, end in said.spans(name_key(spelling))
        ]
    for phrase, kinds in device_words.items():
        found += [
            _Mention(start, end, kinds=kinds)
            for start, end in said.spans(name_key(phrase))
        ]
    return [
        mention
        for mention in found
        if not any(
            other is not mention
            and other.start <= mention.start
            and mention.end <= other.end
            and other.end - other.start > mention.end - mention.start
            for other in found
        )
    ]


def _name_words(entities: list[HomeEntity]) -> dict[str, set[str]]:
    """Each word of a name that only one entity's names have (no digits)."""
    owners: dict[str, set[str]] = {}
    for entity in entities:
        for spelling in entity.spellings:
            for word in _WORD.findall(spelling):
                if not word.isdigit():
                    owners.setdefault(name_key(word), set()).add(entity.name)
    return {word: names for word, names in owners.items() if len(names) == 1}


def _phrases(
    mentions: list[_Mention],
    said: tuple[str, ...],
    optional: frozenset[str],
    clause_ends: frozenset[int],
) -> Iterator[list[_Mention]]:
    """Runs of mentions joined only by optional words within one clause, up
    to MAX_PHRASE_PARTS (``clause_ends``: the words a clause mark follows).

    Two mentions of the same words (a name that is also a device word) are
    alternatives, never parts of one phrase.
    """
    ordered = sorted(mentions, key=lambda mention: (mention.start, mention.end))
    for first, mention in enumerate(ordered):
        run = [mention]
        yield list(run)
        for following in ordered[first + 1 :]:
            if following.start < run[-1].end:
                continue
            gap = said[run[-1].end : following.start]
            if (
                len(run) == MAX_PHRASE_PARTS
                or not all(word in optional for word in gap)
                or not clause_ends.isdisjoint(range(run[-1].end - 1, following.start))
            ):
                break
            run.append(following)
            yield list(run)


def _the_one(phrase: list[_Mention], entities: list[HomeEntity]) -> HomeEntity | None:
    """The one entity every part of the phrase fits, or None."""
    if all(mention.place is not None for mention in phrase):
        return None  # an area is not a device
    domains = {entity.domain for entity in entities}
    fitting = [
        entity
        for entity in entities
        if all(_fits(mention, entity, domains) for mention in phrase)
    ]
    if len(fitting) != 1:
        return None
    # A name two entities share ("Deckenlampe" in two rooms) names neither:
    # without the area that told them apart, HA could not act.
    key = name_key(fitting[0].name)
    sharing = [
        entity
        for entity in entities
        if any(name_key(spelling) == key for spelling in entity.spellings)
    ]
    return fitting[0] if len(sharing) == 1 else None


def _fits(mention: _Mention, entity: HomeEntity, domains: set[str]) -> bool:
    """Whether one part of a phrase fits the entity.

    A device word fits an entity of a domain it means, and, where it also
    means a device class ("curtains": a cover of class curtain), only one of
    that class: "the living room curtains" is not its blind.
    """
    if mention.entities:
        return entity.name in mention.entities
    if mention.place is not None:
        return mention.place in entity.places
    classes = mention.kinds - domains
    return entity.domain in mention.kinds and (
        not classes or bool(classes & entity.kinds)
    )
