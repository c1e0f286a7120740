"""Home Assistant's own reading of the user's sentence.

HA's default agent recognizes commands and questions strictly in every
language it has sentences for, and knows every exposed name, alias, area and
floor: structure the model's words cannot fake. Nothing here runs an intent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from itertools import combinations, islice, takewhile
import re

from homeassistant.components import conversation
from homeassistant.components.conversation.agent_manager import get_agent_manager
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import (
    area_registry as ar,
    floor_registry as fr,
    translation,
)
from homeassistant.util.hass_dict import HassKey

from ..const import DOMAIN, LOGGER
from ..exposed import async_exposed_entities
from ..llm.sentences import ha_language
from ..memory.session import Command
from ..wording import CLAUSE_MARK, ends_asking, numbers_in
from .policy import CHAT_INTENTS, Named, name_key
from .targets import HomeEntity, named_readings, said_names
from .vocabulary import Vocabulary, load_vocabulary, words

# A follow-up is short ("turn it off again"); longer sentences are not tried
# word by word.
MAX_FOLLOW_UP_WORDS = 8
# How many of HA's optional words a follow-up may lose before HA reads it.
MAX_DROPPED_WORDS = 2
# How many phrase readings HA is asked to read strictly, longest first.
MAX_NAMED_READINGS = 3

DATA_VOCABULARIES: HassKey[dict[str, Vocabulary | None]] = HassKey(
    f"{DOMAIN}_vocabularies"
)


async def async_vocabulary(hass: HomeAssistant, language: str) -> Vocabulary | None:
    """HA's words of ``language`` (read once, in the executor)."""
    cache = hass.data.setdefault(DATA_VOCABULARIES, {})
    if language not in cache:
        cache[language] = await hass.async_add_executor_job(load_vocabulary, language)
    return cache[language]


async def async_recognize_intent(
    hass: HomeAssistant, user_input: conversation.ConversationInput
) -> str | None:
    """The intent HA's default agent recognizes strictly, or None; nothing runs.

    Strict matching only, as HA's "prefer handling commands locally" does:
    HA's lenient stages read statements as commands ("My kitchen light is
    broken." is its HassTurnOff) and ignore negations ("don't turn the
    kitchen light off" too).
    """
    agent = get_agent_manager(hass).default_agent
    if agent is None:
        return None
    try:
        result = await agent.async_recognize_intent(
            user_input, strict_intents_only=True
        )
    except HomeAssistantError as err:
        LOGGER.debug("HA's intent recognition failed: %s", err)
        return None
    name = getattr(getattr(result, "intent", None), "name", None)
    return name if isinstance(name, str) else None


async def async_named_reading(
    hass: HomeAssistant, user_input: conversation.ConversationInput
) -> str | None:
    """The sentence with the one device it points to in HA's name, as HA reads it.

    "Open the living room smart curtain" is HA's "Open the Smart Curtain";
    "start the vacuum in the living room" its "start Roborock Downstairs".
    Only a sentence HA then reads strictly counts, so statements, questions
    HA has no sentence for and negations stay what they are. None otherwise.
    """
    vocabulary = await async_vocabulary(hass, user_input.language)
    if vocabulary is None:
        return None
    entities = _home_entities(hass, vocabulary)
    # HA's name of a domain it reads only ("weer", the weather) is no device
    # word: "zet het weer uit" is "turn it off again".
    domain_words = await _async_domain_words(
        hass,
        user_input.language,
        {entity.domain for entity in entities} & vocabulary.changed_domains,
    )
    candidates = named_readings(
        user_input.text,
        entities,
        _place_spellings(hass),
        {**domain_words, **vocabulary.device_words},
        vocabulary.phrase_words,
    )
    return await _async_first_read(
        hass, user_input, islice(candidates, MAX_NAMED_READINGS)
    )


@callback
def _home_entities(hass: HomeAssistant, vocabulary: Vocabulary) -> list[HomeEntity]:
    """The exposed entities with their names, kinds, areas and floors."""
    areas = ar.async_get(hass)
    floors = fr.async_get(hass)
    found: list[HomeEntity] = []
    for exposed in async_exposed_entities(hass):
        state, area_id = exposed.state, exposed.area_id
        places: set[str] = set()
        if area_id and (area := areas.async_get_area(area_id)):
            places.add(name_key(area.name))
            if area.floor_id and (floor := floors.async_get_floor(area.floor_id)):
                places.add(name_key(floor.name))
        device_class = state.attributes.get("device_class")
        kinds = vocabulary.device_words_in(state.name)
        if isinstance(device_class, str):
            kinds |= {device_class}
        found.append(
            HomeEntity(
                name=state.name,
                spellings=(state.name, *exposed.aliases),
                domain=state.domain,
                kinds=kinds,
                places=frozenset(places),
            )
        )
    return found


async def _async_domain_words(
    hass: HomeAssistant, language: str, domains: set[str]
) -> dict[str, frozenset[str]]:
    """HA's own name of each domain in the language ("Staubsauger": vacuum)."""
    # HA's translations are per language ("de"), a conversation's may be
    # regional ("de-DE"): a tag HA has no file for would read English.
    names = await translation.async_get_translations(
        hass, ha_language(language), "entity_component", domains
    )
    return {
        name: frozenset({domain})
        for domain in domains
        if (name := names.get(f"component.{domain}.entity_component._.name"))
    }


async def async_continuation(
    hass: HomeAssistant,
    user_input: conversation.ConversationInput,
    last_targets: tuple[str, ...],
    last_command: Command | None,
    named: Named,
) -> str | None:
    """The sentence HA reads as this turn's continuation of the last command.

    * "turn it off again": the last target in place of a command's object
      ("it"), and up to two words HA's commands leave out left out ("again");
    * "and the living room?": the last command HA read, with the one name
      this sentence ends with in place of an old one of its kind, when every
      other word is one HA's commands leave out ("and", "the");
    * "and turn off the fan too": the sentence without such words at its
      ends (at its start only where it starts as HA's commands do).

    Only what HA recognizes strictly counts (for the ellipsis, as the same
    intent), so a negation or a question never becomes the command: no
    word HA's commands leave out is a negation, and words that ask are
    never made a command here. None when nothing is read.
    """
    vocabulary = await async_vocabulary(hass, user_input.language)
    if vocabulary is None:
        return None  # HA reads nothing in this language
    # "Éteins-la": a pronoun joined by a hyphen is a word of its own.
    said = [part for word in user_input.text.split() for part in _HYPHEN.split(word)]
    trimmed = await _async_first_read(hass, user_input, _trimmed(said, vocabulary))
    if trimmed is not None:
        return trimmed
    if named.places or named.devices:
        if last_command is None:
            return None
        return (
            await _async_ellipsis(hass, user_input, named, last_command, vocabulary)
            or None
        )
    if not last_targets or len(said) > MAX_FOLLOW_UP_WORDS:
        return None
    return await _async_first_read(
        hass, user_input, _with_target(said, last_targets[0], vocabulary)
    )


async def _async_first_read(
    hass: HomeAssistant,
    user_input: conversation.ConversationInput,
    candidates: Iterable[str],
    intent: str | None = None,
) -> str | None:
    """The first of ``candidates`` HA reads strictly (as ``intent``, if given)."""
    for candidate in candidates:
        as_read = replace(user_input, text=candidate)
        recognized = await async_recognize_intent(hass, as_read)
        # "hello there" is not HA's "hello".
        if recognized not in (None, *CHAT_INTENTS) and intent in (None, recognized):
            return candidate
    return None


def _trimmed(said: list[str], vocabulary: Vocabulary) -> Iterator[str]:
    """The sentence without up to two words HA leaves out at each end.

    Fewest words left out first: "and turn off the fan too" is "turn off
    the fan", never "fan". Words go from its start (words HA's commands
    leave out) only where it starts as HA's commands do and does not ask:
    "Il éteint la lumière." reports, "So you turn off the fan?" asks. From
    its end only HA's skip and stop words go ("too", "please"): "turn the
    fan off and on" keeps its "and on".
    """
    text = " ".join(said)
    lead = (
        _run(said, lambda word: _left_out(word, vocabulary))
        if vocabulary.says_a_command_word(text) and not ends_asking(text)
        else 0
    )
    tail = _run(said[::-1], lambda word: _skipped(word, vocabulary))
    cuts = sorted(
        (
            (start, end)
            for start in range(min(lead, MAX_DROPPED_WORDS) + 1)
            for end in range(min(tail, MAX_DROPPED_WORDS) + 1)
            if (start or end) and start + end < len(said)
        ),
        key=sum,
    )
    for start, end in cuts:
        yield " ".join(said[start : len(said) - end])


def _run(said: list[str], counts: Callable[[str], bool]) -> int:
    """How many words at the start of ``said`` ``counts``."""
    return sum(1 for _ in takewhile(counts, said))


def _with_target(said: list[str], target: str, vocabulary: Vocabulary) -> Iterator[str]:
    """The command's object swapped for the target, with up to two words
    HA's commands leave out left out.

    The object is the word after the command's first word (after words HA
    leaves out: "und mach es aus", "please switch it off"), and only a word
    HA's sentences themselves leave out ("it", "es", "het", "la"): "Mach
    nicht aus", "Släck inte" and "turn nothing off" keep their word. Words
    that ask ("is it on?") are no command.
    """
    if vocabulary.asks(" ".join(said)):
        return
    first = _run(
        said,
        lambda word: (
            not any(part in vocabulary.command_words for part in words(word))
            and (_left_out(word, vocabulary) or _skipped(word, vocabulary))
        ),
    )
    index = first + 1
    if index >= len(said) or not _only(said[index], vocabulary.fills):
        return
    rest = [i for i in range(len(said)) if i not in (first, index)]
    droppable = [i for i in rest if _left_out(said[i], vocabulary)]
    for count in range(MAX_DROPPED_WORDS + 1):
        for dropped in combinations(droppable, count):
            yield " ".join(
                target if i == index else word
                for i, word in enumerate(said)
                if i not in dropped
            )


def _skipped(word: str, vocabulary: Vocabulary) -> bool:
    """Whether a written word is only HA's skip or stop words ("too", "bitte")."""
    return _only(word, vocabulary.skips)


def _left_out(word: str, vocabulary: Vocabulary) -> bool:
    """Whether a written word ("again?", "¿Y") is only words HA's commands omit."""
    return _only(word, vocabulary.leaves_out)


def _only(word: str, test: Callable[[str], bool]) -> bool:
    """Whether a written word has words and ``test`` holds for each."""
    found = words(word)
    return bool(found) and all(test(part) for part in found)


async def _async_ellipsis(
    hass: HomeAssistant,
    user_input: conversation.ConversationInput,
    named: Named,
    last_command: Command,
    vocabulary: Vocabulary,
) -> str | None:
    """The last command with the one new name of "and the living room?" in it.

    Only where the words end asking (a question mark), only HA's skip and
    stop words follow the name ("and the kitchen too?"), and the words
    before it, in one clause, are ones HA's commands leave out, the first
    one they mark optional, and start neither its questions nor its
    commands: "Living room on", "Is the living room on?", "To the kitchen",
    "Sono in cucina?" (am I in the kitchen?), "You in the kitchen?" and
    "Moi, salon ?" continue nothing; "And now the living room?" does.
    """
    new = named.only_name
    if new is None or not ends_asking(user_input.text):
        return None
    rest = _before(user_input.text, new, vocabulary)
    if (
        rest is None
        # Words HA's commands leave out, the first one a word they mark
        # optional: "And now the living room?", not "You in the kitchen?"
        # (a fuzzy stop word only).
        or not all(_left_out(word, vocabulary) for word in rest)
        or (rest and not _only(rest[0], lambda part: part in vocabulary.optional))
        # "Moi, salon ?": two clauses; Spanish opens a question with "¿".
        or CLAUSE_MARK.search(" ".join(rest).lstrip("¿¡")) is not None
        or not vocabulary.question_openers.isdisjoint(
            words(rest[0])[:1] if rest else ()
        )
        or vocabulary.says_a_command_word(" ".join(rest))
    ):
        return None
    is_place = name_key(new) in named.place_keys
    old_names = sorted(
        (
            name
            for name in said_names(last_command.sentence, named.home_names)
            if (name_key(name) in named.place_keys) == is_place
            and name_key(name) != name_key(new)
        ),
        key=len,
        reverse=True,
    )
    swapped = (swap_name(last_command.sentence, old, new) for old in old_names)
    return await _async_first_read(
        hass, user_input, (c for c in swapped if c is not None), last_command.intent
    )


def _before(text: str, name: str, vocabulary: Vocabulary) -> list[str] | None:
    """The words of ``text`` before ``name``, where only HA's skip and stop
    words follow it ("and the kitchen too?"); None otherwise."""
    said = text.split()
    key = words(name)
    for start in range(len(said) - len(key) + 1):
        if [w for word in said[start : start + len(key)] for w in words(word)] == key:
            after = said[start + len(key) :]
            if not all(_skipped(word, vocabulary) or not words(word) for word in after):
                return None
            return said[:start]
    return None


def swap_name(sentence: str, old: str, new: str) -> str | None:
    """``sentence`` with its first mention of ``old`` (whole words) replaced by ``new``."""
    parts = map(re.escape, words(old))
    pattern = r"(?<![^\W_])" + r"[\W_]+".join(parts) + r"(?![^\W_])"
    swapped, count = re.subn(
        pattern, lambda _: new, sentence, count=1, flags=re.IGNORECASE
    )
    return swapped if count else None


async def async_named(
    hass: HomeAssistant, user_input: conversation.ConversationInput
) -> Named:
    """The exposed devices, areas and floors and the device words the sentence names."""
    vocabulary = await async_vocabulary(hass, user_input.language)
    text = user_input.text
    devices: dict[str, str] = {}  # each spelling -> the entity's name
    places = _place_spellings(hass)
    object_ids: dict[str, str] = {}
    for exposed in async_exposed_entities(hass):
        state = exposed.state
        for spelling in (state.name, *exposed.aliases):
            devices.setdefault(spelling, state.name)
        object_ids[state.object_id] = state.name
    said_devices = said_names(text, devices)
    said_places = said_names(text, places)
    return Named(
        devices=tuple(dict.fromkeys(devices[s] for s in said_devices)),
        places=tuple(dict.fromkeys(places[s] for s in said_places)),
        spellings=tuple(dict.fromkeys([*said_devices, *said_places])),
        device_kinds=vocabulary.device_words_in(text) if vocabulary else frozenset(),
        numbers=frozenset(numbers_in(text)),
        spelled_numbers=frozenset(
            float(n)
            for n in (vocabulary.spelled_numbers_in(text) if vocabulary else ())
        ),
        text=text,
        question=vocabulary.opens_a_question(text) if vocabulary else False,
        # Without HA's sentences for the language, as before: any words may ask.
        asks=vocabulary.asks(text) if vocabulary else True,
        commands=vocabulary.says_a_command_word(text) if vocabulary else False,
        home_names=tuple(dict.fromkeys([*devices, *places])),
        place_keys=frozenset(name_key(name) for name in places),
        scripts={name_key(object_id): name for object_id, name in object_ids.items()},
    )


@callback
def _place_spellings(hass: HomeAssistant) -> dict[str, str]:
    """Each spelling of an area or floor (name, alias) -> its name; areas first."""
    places: dict[str, str] = {}
    for area in ar.async_get(hass).async_list_areas():
        for spelling in (area.name, *area.aliases):
            places.setdefault(spelling, area.name)
    for floor in fr.async_get(hass).async_list_floors():
        for spelling in (floor.name, *floor.aliases):
            places.setdefault(spelling, floor.name)
    return places


_HYPHEN = re.compile(r"(?<=\w)-(?=\w)")
