"""What the user's sentence asks for, as Home Assistant itself understands it.

HA's default agent recognizes commands and questions in every language it
has sentences for ("Enciende la luz de la cocina" is HassTurnOn), and knows
every exposed name, alias, area and floor. That is structure the model's
words cannot fake; the turn guard (guard.py) decides with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
import re

from homeassistant.components import conversation
from homeassistant.components.conversation.agent_manager import get_agent_manager
from homeassistant.components.homeassistant.exposed_entities import (
    async_should_expose,
)
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
    floor_registry as fr,
)

from ..const import ELLIPSIS_WORDS, FOLLOW_UP_TAIL_WORDS, LOGGER
from ..memory.session import Command
from .guard import TurnKind, kind_of, language_code, mentioned, name_key, normalize

# A follow-up is short ("turn it off again"); longer sentences are not tried
# word by word.
MAX_FOLLOW_UP_WORDS = 8
# Words besides the new name in an elliptical follow-up ("and what about the").
MAX_ELLIPSIS_WORDS = 4


@dataclass(frozen=True, slots=True)
class Understanding:
    """HA's reading of one user sentence."""

    intent: str | None
    kind: TurnKind
    # Exposed devices, areas and floors the sentence names; for a follow-up,
    # what the session's last action acted on.
    targets: tuple[str, ...]
    # The sentence HA recognized, when it is not the user's own: a follow-up
    # with the last action's target in place of one of its words, or the last
    # command with the name an elliptical follow-up gave in place of its own.
    resolved: str | None = None
    # Every name a change may aim at: the targets, and the exposed devices in
    # the areas and floors among them.
    scope: tuple[str, ...] = ()
    # Every exposed device, area and floor name and alias of the home.
    home_names: tuple[str, ...] = ()


async def async_understand(
    hass: HomeAssistant,
    user_input: conversation.ConversationInput,
    last_action: tuple[str, ...] = (),
    last_command: Command | None = None,
) -> Understanding:
    """Recognize the sentence with HA's own intents and exposed names."""
    intent = await async_recognize_intent(hass, user_input)
    home_names = tuple(dict.fromkeys(exposed_names(hass)))
    named = tuple(mentioned(user_input.text, home_names))
    kind = kind_of(intent, named, bool(last_action))
    understanding = Understanding(intent=intent, kind=kind, targets=named)
    if kind is TurnKind.FOLLOW_UP:
        understanding = await _async_resolve_follow_up(hass, user_input, last_action)
    elif kind is TurnKind.DEVICE:
        understanding = (
            await _async_read_device_turn(
                hass, user_input, named, home_names, last_command
            )
            or understanding
        )
    return replace(
        understanding,
        scope=scope_of(hass, understanding.targets),
        home_names=home_names,
    )


async def _async_resolve_follow_up(
    hass: HomeAssistant,
    user_input: conversation.ConversationInput,
    last_action: tuple[str, ...],
) -> Understanding:
    """Read "turn it off again" as HA reads "turn Kitchen Light off".

    Each word in turn is replaced by the last action's target and the result
    recognized strictly: HA's own sentences decide, in any language they
    cover, with no list of pronouns. Up to two trailing words may go too, when
    they are the language's FOLLOW_UP_TAIL_WORDS ("again", "please", "otra
    vez"); a negation, which comes before the verb,
    stays, so "don't turn it off" is not a command. One verb HA does not know
    may go before the swapped word, only for a light setting the user spelled
    out: "Dim it to 10 percent" is HA's "Bedroom Light to 10 percent", while
    "was it on?" never becomes "Kitchen on".
    """
    words = user_input.text.split()
    if len(words) > MAX_FOLLOW_UP_WORDS:
        return Understanding(intent=None, kind=TurnKind.FOLLOW_UP, targets=last_action)
    target = last_action[0]
    tail_words = FOLLOW_UP_TAIL_WORDS.get(language_code(user_input.language), ())
    for drop in range(min(3, len(words))):
        kept = words[: len(words) - drop]
        if any(normalize(word) not in tail_words for word in words[len(kept) :]):
            break
        for index in range(len(kept)):
            candidate = " ".join([*kept[:index], target, *kept[index + 1 :]])
            if intent := await async_recognize_intent(
                hass, replace(user_input, text=candidate)
            ):
                return _resolved(intent, target, candidate)
    if len(words) > 2:
        candidate = " ".join([target, *words[2:]])
        intent = await async_recognize_intent(hass, replace(user_input, text=candidate))
        if intent in _SETTING_INTENTS:
            return _resolved(intent, target, candidate)
    return Understanding(intent=None, kind=TurnKind.FOLLOW_UP, targets=last_action)


# Intents a follow-up may reach without its first word: they set what the
# user's own words say (a brightness, a colour), never just on or off.
_SETTING_INTENTS = frozenset({"HassLightSet"})


async def _async_read_device_turn(
    hass: HomeAssistant,
    user_input: conversation.ConversationInput,
    named: tuple[str, ...],
    home_names: tuple[str, ...],
    last_command: Command | None,
) -> Understanding | None:
    """A sentence that names a device but has no intent, read once more.

    "And turn off the fan too" is HA's "turn off the fan" once the
    ELLIPSIS_WORDS at its ends go. A bare name ("And the living room?") is
    the last command with that name in it, or no command at all: with
    nothing to continue, the bundled model guessed and switched on the
    living room's fan. None when the sentence stays a DEVICE turn.
    """
    trimmed = _trim_ellipsis_words(user_input.text, user_input.language)
    if trimmed is not None and (
        intent := await async_recognize_intent(hass, replace(user_input, text=trimmed))
    ):
        return Understanding(
            intent=intent,
            kind=kind_of(intent, named, False),
            targets=named,
            resolved=trimmed,
        )
    target = _ellipsis_target(user_input.text, named, user_input.language)
    if target is None:
        return None
    if last_command is not None and (
        resolved := await _async_resolve_ellipsis(
            hass, user_input, target, home_names, last_command
        )
    ):
        return resolved
    return Understanding(intent=None, kind=TurnKind.OTHER, targets=named)


def _trim_ellipsis_words(text: str, language: str) -> str | None:
    """``text`` without the ELLIPSIS_WORDS at its start and end, or None if none."""
    allowed = ELLIPSIS_WORDS.get(language_code(language))
    words = text.split()
    if not allowed or not words:
        return None
    start, end = 0, len(words)
    while start < end and normalize(words[start]) in allowed:
        start += 1
    while end > start and normalize(words[end - 1]) in allowed:
        end -= 1
    if (start, end) == (0, len(words)) or start == end:
        return None
    return " ".join(words[start:end])


async def _async_resolve_ellipsis(
    hass: HomeAssistant,
    user_input: conversation.ConversationInput,
    target: str,
    home_names: tuple[str, ...],
    last_command: Command,
) -> Understanding | None:
    """Read "and the living room?" as HA reads the last command with that name.

    "Turn off the bedroom light" becomes "Turn off the living room light":
    the new name takes the place of an old one of its kind (an area or floor
    for an area or floor, a device for a device), and HA must recognize the
    result strictly as the same intent. The sentence itself has no intent
    (it is a DEVICE turn) and holds only a few words of ELLIPSIS_WORDS
    besides the name, so "not the living room" or "is the living room warm?"
    never become the command (``target``: see _ellipsis_target). None when
    it cannot be read so.
    """
    places = _place_keys(hass)
    is_place = name_key(target) in places
    old_names = sorted(
        (
            name
            for name in mentioned(last_command.sentence, home_names)
            if (name_key(name) in places) == is_place
            and name_key(name) != name_key(target)
        ),
        key=len,
        reverse=True,
    )
    for old in old_names:
        candidate = _swap_name(last_command.sentence, old, target)
        if candidate is None:
            continue
        recognized = await async_recognize_intent(
            hass, replace(user_input, text=candidate)
        )
        if recognized == last_command.intent:
            return _resolved(recognized, target, candidate)
    return None


def _ellipsis_target(text: str, named: tuple[str, ...], language: str) -> str | None:
    """The one name of an elliptical follow-up, or None when other words are there.

    The longest name the sentence mentions (a device named after its area
    contains the area's name); every other word must be one of the
    language's ELLIPSIS_WORDS.
    """
    allowed = ELLIPSIS_WORDS.get(language_code(language))
    if not allowed or not named:
        return None
    target = max(named, key=lambda name: len(normalize(name)))
    words = normalize(text).split()
    name = normalize(target).split()
    for start in range(len(words) - len(name) + 1):
        if words[start : start + len(name)] == name:
            rest = words[:start] + words[start + len(name) :]
            if len(rest) <= MAX_ELLIPSIS_WORDS and set(rest) <= allowed:
                return target
            return None
    return None


def _swap_name(sentence: str, old: str, new: str) -> str | None:
    """``sentence`` with its first mention of ``old`` (whole words) replaced by ``new``.

    None when ``old`` is not found: the unchanged sentence would repeat the
    last command.
    """
    words = map(re.escape, normalize(old).split())
    pattern = r"(?<![^\W_])" + r"[\W_]+".join(words) + r"(?![^\W_])"
    swapped, count = re.subn(
        pattern, lambda _: new, sentence, count=1, flags=re.IGNORECASE
    )
    return swapped if count else None


@callback
def _place_keys(hass: HomeAssistant) -> set[str]:
    """Names and aliases of every area and floor, compared loosely."""
    names: list[str] = []
    for area in ar.async_get(hass).async_list_areas():
        names += (area.name, *area.aliases)
    for floor in fr.async_get(hass).async_list_floors():
        names += (floor.name, *floor.aliases)
    return {name_key(name) for name in names}


def _resolved(intent: str, target: str, candidate: str) -> Understanding:
    return Understanding(
        intent=intent,
        kind=kind_of(intent, (target,), True),
        targets=(target,),
        resolved=candidate,
    )


async def async_recognize_intent(
    hass: HomeAssistant, user_input: conversation.ConversationInput
) -> str | None:
    """The name of the intent HA's default agent recognizes, or None.

    Recognition only: nothing runs. Strict matching (HA's sentences with
    exposed names), the same HA uses to handle commands locally: its lenient
    stage matches unknown names too, and takes "Remember: I kitesurf at
    Tarifa" for HassTurnOn. A command in other words still names a device,
    which ``kind_of`` counts.
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
    intent = getattr(result, "intent", None)
    name = getattr(intent, "name", None)
    return name if isinstance(name, str) else None


@callback
def exposed_names(hass: HomeAssistant) -> Iterator[str]:
    """Names and aliases of exposed entities, and of every area and floor."""
    entities = er.async_get(hass)
    for state in hass.states.async_all():
        if not async_should_expose(hass, conversation.DOMAIN, state.entity_id):
            continue
        yield state.name
        if (entry := entities.async_get(state.entity_id)) is not None:
            yield from entry.aliases
    for area in ar.async_get(hass).async_list_areas():
        yield area.name
        yield from area.aliases
    for floor in fr.async_get(hass).async_list_floors():
        yield floor.name
        yield from floor.aliases


@callback
def scope_of(hass: HomeAssistant, targets: tuple[str, ...]) -> tuple[str, ...]:
    """The targets and the names of exposed devices in the areas or floors among them."""
    if not targets:
        return ()
    wanted = {name_key(target) for target in targets}
    areas = ar.async_get(hass)
    floors = fr.async_get(hass)
    floor_ids = {
        floor.floor_id
        for floor in floors.async_list_floors()
        if wanted & {name_key(n) for n in (floor.name, *floor.aliases)}
    }
    area_ids = {
        area.id
        for area in areas.async_list_areas()
        if wanted & {name_key(n) for n in (area.name, *area.aliases)}
        or area.floor_id in floor_ids
    }
    if not area_ids:
        return targets
    entities = er.async_get(hass)
    devices = dr.async_get(hass)
    inside: list[str] = []
    for state in hass.states.async_all():
        if not async_should_expose(hass, conversation.DOMAIN, state.entity_id):
            continue
        entry = entities.async_get(state.entity_id)
        area_id = entry.area_id if entry else None
        if entry and not area_id and entry.device_id:
            device = devices.async_get(entry.device_id)
            area_id = device.area_id if device else None
        if area_id in area_ids:
            inside.append(state.name)
            if entry:
                inside.extend(entry.aliases)
    return (*targets, *inside)
