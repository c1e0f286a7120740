"""The devices a question names, as they are now: short lines for the prompt.

A small model asked "Hoe warm is het in de woonkamer?" or "Is the porch
light still on?" answers from its weights unless it first calls
GetLiveContext, which the bundled model mostly does not. So when the words
ask something and name exposed devices, or an area or floor, their states go
into the varying part of the prompt, as the weather does (tools/live_now.py):
the devices named, else the area's devices (of the kind a device word says,
"the blinds in the study"). States and attribute names are HA's own words
for the conversation's language; GetLiveContext stays for anything else.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
import json
from typing import Any, Literal

from homeassistant.const import (
    ATTR_UNIT_OF_MEASUREMENT,
    STATE_UNAVAILABLE,
    STATE_UNKNOWN,
)
from homeassistant.core import HomeAssistant, State
from homeassistant.generated.languages import LANGUAGES
from homeassistant.helpers import area_registry as ar, floor_registry as fr, translation

from ..const import LOGGER
from ..exposed import ExposedEntity, async_exposed_entities
from ..llm.sentences import best_language
from .phrases import Phrases

# A question about a room gets that room's devices; a few lines are enough
# for a small model to find the one asked about, and the rest is counted.
MAX_STATE_LINES = 8
# A state HA has no word for is data, quoted, and never longer than this.
MAX_STATE_TEXT = 40
# Attributes that say how a device is, beside its state, and how each reads:
# "percent_of_255" (a light's brightness), "percent_of_1" (a volume),
# "percent" (a position), "temperature" (in the home's unit). Only those HA
# names in the language are said (a water heater's target has no name).
type Reads = Literal["percent_of_255", "percent_of_1", "percent", "temperature"]
_ATTRIBUTES: Mapping[str, tuple[tuple[str, Reads], ...]] = {
    "light": (("brightness", "percent_of_255"),),
    "cover": (("current_position", "percent"),),
    "valve": (("current_position", "percent"),),
    "fan": (("percentage", "percent"),),
    "media_player": (("volume_level", "percent_of_1"),),
    "climate": (
        ("current_temperature", "temperature"),
        ("temperature", "temperature"),
        ("current_humidity", "percent"),
    ),
    "water_heater": (
        ("current_temperature", "temperature"),
        ("temperature", "temperature"),
    ),
    "humidifier": (("humidity", "percent"),),
}


async def async_home_lines(
    hass: HomeAssistant,
    *,
    devices: Collection[str],
    places: Collection[str],
    kinds: Collection[str],
    language: str | None,
    phrases: Phrases,
) -> list[str]:
    """One line per device the words point to: "- Name (Area): state, attribute value".

    ``devices`` are the entity names the words name; ``places`` the area and
    floor names; ``kinds`` the domains and device classes the words' device
    words mean. A state that cannot be read leaves the lines out: the model
    still has the tools.
    """
    if not devices and not places:
        return []
    try:
        return await _async_lines(
            hass, set(devices), set(places), set(kinds), language, phrases
        )
    except Exception:
        LOGGER.exception("The state of the devices named could not be read")
        return []


async def _async_lines(
    hass: HomeAssistant,
    devices: set[str],
    places: set[str],
    kinds: set[str],
    language: str | None,
    phrases: Phrases,
) -> list[str]:
    chosen = _chosen(hass, devices, places, kinds)
    if not chosen:
        return []
    shown = chosen[:MAX_STATE_LINES]
    words = await translation.async_get_translations(
        hass,
        best_language(language, LANGUAGES) or "en",
        "entity_component",
        {exposed.state.domain for exposed in shown},
    )
    areas = ar.async_get(hass)
    lines = []
    for exposed in shown:
        area = areas.async_get_area(exposed.area_id) if exposed.area_id else None
        where = f" ({area.name})" if area and area.name != exposed.state.name else ""
        described = _described(hass, exposed.state, words, phrases)
        lines.append(f"- {exposed.state.name}{where}: {described}")
    if len(chosen) > len(shown):
        lines.append(f"- ({len(chosen) - len(shown)} more, not listed)")
    return lines


def _chosen(
    hass: HomeAssistant, devices: set[str], places: set[str], kinds: set[str]
) -> list[ExposedEntity]:
    """The devices named (in the places named, if any are there), else the places'.

    A device named like its room ("Living Room", a speaker group) is the room.
    """
    areas = ar.async_get(hass)
    floors = fr.async_get(hass)
    located: list[tuple[ExposedEntity, set[str]]] = []
    for entity in async_exposed_entities(hass):
        area = areas.async_get_area(entity.area_id) if entity.area_id else None
        floor = (
            floors.async_get_floor(area.floor_id) if area and area.floor_id else None
        )
        where = {place.name for place in (area, floor) if place is not None}
        located.append((entity, where))
    named = [
        (entity, where)
        for entity, where in located
        if entity.state.name in devices - places
    ]
    if in_places := [entity for entity, where in named if where & places]:
        return in_places
    if named:
        return [entity for entity, _where in named]
    inside = [
        entity
        for entity, where in located
        if where & places and (not kinds or _kinds(entity.state) & kinds)
    ]
    return sorted(inside, key=lambda entity: entity.state.name.casefold())


def _kinds(state: State) -> set[str]:
    device_class = state.attributes.get("device_class")
    return {state.domain} | ({device_class} if isinstance(device_class, str) else set())


def _described(
    hass: HomeAssistant, state: State, words: Mapping[str, str], phrases: Phrases
) -> str:
    """The state in HA's words for the language, with the attributes that matter."""
    if state.state in (STATE_UNAVAILABLE, STATE_UNKNOWN):
        return phrases.texts.get(f"state_{state.state}", state.state)
    prefix = f"component.{state.domain}.entity_component"
    device_class = state.attributes.get("device_class")
    keys = [f"{prefix}._.state.{state.state}"]
    if isinstance(device_class, str):
        keys.insert(0, f"{prefix}.{device_class}.state.{state.state}")
    said = next((words[key] for key in keys if words.get(key)), None)
    unit = state.attributes.get(ATTR_UNIT_OF_MEASUREMENT)
    parts = [said or _value(state.state, unit, phrases)]
    for attribute, reads in _ATTRIBUTES.get(state.domain, ()):
        value = state.attributes.get(attribute)
        name = words.get(f"{prefix}._.state_attributes.{attribute}.name")
        if name and isinstance(value, int | float) and not isinstance(value, bool):
            parts.append(f"{name} {_attribute_value(hass, value, reads, phrases)}")
    return ", ".join(parts)


def _value(value: str, unit: Any, phrases: Phrases) -> str:
    """A state as said: a number with the language's decimal mark and its unit.

    Any other text HA has no word for is quoted: it is data, never an
    instruction to the model.
    """
    try:
        number = float(value)
    except ValueError:
        return json.dumps(value[:MAX_STATE_TEXT], ensure_ascii=False)
    return phrases.with_unit(number, unit if isinstance(unit, str) else None)


def _attribute_value(
    hass: HomeAssistant, value: float, reads: Reads, phrases: Phrases
) -> str:
    if reads == "percent_of_255":
        return phrases.with_unit(round(value * 100 / 255), "%")
    if reads == "percent_of_1":
        return phrases.with_unit(round(value * 100), "%")
    if reads == "percent":
        return phrases.with_unit(value, "%")
    return phrases.with_unit(value, hass.config.units.temperature_unit)
