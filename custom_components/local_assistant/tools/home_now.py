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
from typing import Any

from homeassistant.const import ATTR_UNIT_OF_MEASUREMENT
from homeassistant.core import HomeAssistant, State
from homeassistant.generated.languages import LANGUAGES
from homeassistant.helpers import area_registry as ar, floor_registry as fr, translation

from ..exposed import ExposedEntity, async_exposed_entities
from ..llm.sentences import best_language
from .phrases import Phrases

# A question about a room gets that room's devices; a few lines are enough
# for a small model to find the one asked about.
MAX_STATE_LINES = 8
# Attributes that say how a device is, beside its state, and how each reads:
# "percent_of_255" (a light's brightness), "percent_of_1" (a volume),
# "percent" (a position), "temperature" (in the home's unit).
_ATTRIBUTES: Mapping[str, tuple[tuple[str, str], ...]] = {
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
    floor names, used when no device is named; ``kinds`` the domains and
    device classes the words' device words mean.
    """
    if not devices and not places:
        return []
    chosen = _chosen(hass, set(devices), set(places), set(kinds))
    if not chosen:
        return []
    domains = {exposed.state.domain for exposed in chosen}
    words = await translation.async_get_translations(
        hass,
        best_language(language, LANGUAGES) or "en",
        "entity_component",
        domains,
    )
    areas = ar.async_get(hass)
    lines = []
    for exposed in chosen:
        area = areas.async_get_area(exposed.area_id) if exposed.area_id else None
        where = f" ({area.name})" if area and area.name != exposed.state.name else ""
        described = _described(hass, exposed.state, words, phrases)
        lines.append(f"- {exposed.state.name}{where}: {described}")
    return lines


def _chosen(
    hass: HomeAssistant, devices: set[str], places: set[str], kinds: set[str]
) -> list[ExposedEntity]:
    """The named devices; else the devices in the named places, of the named kinds."""
    exposed = list(async_exposed_entities(hass))
    named = [entity for entity in exposed if entity.state.name in devices]
    if named:
        return named[:MAX_STATE_LINES]
    areas = ar.async_get(hass)
    floors = fr.async_get(hass)
    inside = []
    for entity in exposed:
        area = areas.async_get_area(entity.area_id) if entity.area_id else None
        if area is None:
            continue
        floor = floors.async_get_floor(area.floor_id) if area.floor_id else None
        if area.name not in places and (floor is None or floor.name not in places):
            continue
        state = entity.state
        if kinds and not {state.domain, state.attributes.get("device_class")} & kinds:
            continue
        inside.append(entity)
    inside.sort(key=lambda entity: entity.state.name.casefold())
    return inside[:MAX_STATE_LINES]


def _described(
    hass: HomeAssistant, state: State, words: Mapping[str, str], phrases: Phrases
) -> str:
    """The state in HA's words for the language, with the attributes that matter."""
    prefix = f"component.{state.domain}.entity_component"
    device_class = state.attributes.get("device_class")
    said = (
        words.get(f"{prefix}.{device_class}.state.{state.state}")
        or words.get(f"{prefix}._.state.{state.state}")
        or _value(state.state, state.attributes.get(ATTR_UNIT_OF_MEASUREMENT), phrases)
    )
    parts = [said]
    for attribute, reads in _ATTRIBUTES.get(state.domain, ()):
        value = state.attributes.get(attribute)
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        name = words.get(
            f"{prefix}._.state_attributes.{attribute}.name",
            attribute.replace("_", " "),
        )
        parts.append(f"{name} {_attribute_value(hass, value, reads, phrases)}")
    return ", ".join(parts)


def _value(value: str, unit: Any, phrases: Phrases) -> str:
    """A state as said: a number with the language's decimal mark and its unit."""
    try:
        number = float(value)
    except ValueError:
        return value.replace("_", " ")
    return phrases.with_unit(number, unit if isinstance(unit, str) else None)


def _attribute_value(
    hass: HomeAssistant, value: float, reads: str, phrases: Phrases
) -> str:
    if reads == "percent_of_255":
        return phrases.with_unit(round(value * 100 / 255), "%")
    if reads == "percent_of_1":
        return phrases.with_unit(round(value * 100), "%")
    if reads == "percent":
        return phrases.with_unit(value, "%")
    return phrases.with_unit(value, hass.config.units.temperature_unit)
