"""The current state of what the user's words name, for the prompt's live data.

A small model asked "is the bedroom light still on?" answers from nothing
unless it first decides to call GetLiveContext; it often does not, and says
"Yes". When the words name devices (by name, or by a device word with or
without an area or floor), their states are put in the prompt's live data,
read just now, so the answer can come from them. Which entities is decided
from structure only (the names, areas and device words HA's data gave
`Named`), the same in every language; the states are HA's own values.

A selection larger than MAX_NAMED_STATES is left to the model's tools: a
partial list would answer "how many lights are on?" wrongly.
"""

from __future__ import annotations

from typing import Any

from homeassistant.components.light import ATTR_BRIGHTNESS
from homeassistant.const import ATTR_DEVICE_CLASS, ATTR_UNIT_OF_MEASUREMENT
from homeassistant.core import HomeAssistant, State, callback
from homeassistant.helpers import area_registry as ar, floor_registry as fr

from .exposed import ExposedEntity, async_exposed_entities
from .turn.policy import Named, name_key

MAX_NAMED_STATES = 12
# Attributes that answer "how warm", "how far open", "how loud", "what plays"
# (about those HA's GetLiveContext shows), with their units; a thermostat's
# "temperature" is the one it is set to, a weather entity's the one outside.
_TEMPERATURE = "temperature"
_SET_POINT_DOMAINS = frozenset({"climate", "water_heater", "humidifier"})
_ATTRIBUTES = (
    ("current_temperature", "current temperature", _TEMPERATURE),
    ("current_humidity", "current humidity", "%"),
    ("current_position", "position", "%"),
    ("percentage", "speed", "%"),
    ("media_title", "playing", None),
    ("media_artist", "by", None),
)


@callback
def named_state_lines(hass: HomeAssistant, named: Named) -> list[str]:
    """One line per exposed entity the words name: its name, area and state now."""
    if not (named.devices or named.device_kinds):
        return []
    exposed = list(async_exposed_entities(hass))
    by_name = {name_key(name) for name in named.devices}
    chosen = [e for e in exposed if _named_by_name(e, by_name)]
    if named.device_kinds and (named.places or not chosen):
        # "The lights in the study": the kinds in the named places; "how
        # many lights are on?": in the whole home, unless a name says which
        # (a device word inside it: "Staat de Reading Lamp aan?").
        areas = _area_ids(hass, named.places) if named.places else None
        chosen += [
            e
            for e in exposed
            if e not in chosen
            and _is_kind(e.state, named.device_kinds)
            and (areas is None or e.area_id in areas)
        ]
    if len(chosen) > MAX_NAMED_STATES:
        return []
    area_names = {area.id: area.name for area in ar.async_get(hass).async_list_areas()}
    degrees = hass.config.units.temperature_unit
    return [
        _line(e, area_names, degrees)
        for e in sorted(chosen, key=lambda e: e.state.name)
    ]


def _named_by_name(entity: ExposedEntity, keys: set[str]) -> bool:
    return any(
        name_key(spelling) in keys for spelling in (entity.state.name, *entity.aliases)
    )


def _is_kind(state: State, kinds: frozenset[str]) -> bool:
    """The domain or device class is one of the device words' meanings."""
    return state.domain in kinds or state.attributes.get(ATTR_DEVICE_CLASS) in kinds


@callback
def _area_ids(hass: HomeAssistant, places: tuple[str, ...]) -> set[str]:
    """The areas the named areas and floors cover."""
    keys = {name_key(place) for place in places}
    areas = ar.async_get(hass)
    floor_ids = {
        floor.floor_id
        for floor in fr.async_get(hass).async_list_floors()
        if name_key(floor.name) in keys
    }
    return {
        area.id
        for area in areas.async_list_areas()
        if name_key(area.name) in keys or area.floor_id in floor_ids
    }


def _line(entity: ExposedEntity, area_names: dict[str, str], degrees: str) -> str:
    state = entity.state
    where = area_names.get(entity.area_id or "")
    head = f"{state.name} ({state.domain}{f', in {where}' if where else ''})"
    return f"- {head}: {', '.join(_values(state, degrees))}"


def _values(state: State, degrees: str) -> list[str]:
    """The state with its unit, then the attributes that say more."""
    attributes = state.attributes
    values = [_with_unit(state.state, attributes.get(ATTR_UNIT_OF_MEASUREMENT))]
    if isinstance(brightness := attributes.get(ATTR_BRIGHTNESS), int | float):
        values.append(f"brightness {round(brightness * 100 / 255)} %")
    # A weather entity says its own unit; a thermostat's is the system's.
    degrees = attributes.get("temperature_unit") or degrees
    prefix = "set to " if state.domain in _SET_POINT_DOMAINS else ""
    for key in ("temperature", "humidity"):
        if (value := attributes.get(key)) is not None:
            unit = degrees if key == "temperature" else "%"
            values.append(f"{key} {prefix}{_with_unit(value, unit)}")
    for key, label, unit_kind in _ATTRIBUTES:
        if (value := attributes.get(key)) is not None:
            unit = degrees if unit_kind == _TEMPERATURE else unit_kind
            values.append(f"{label} {_with_unit(value, unit)}")
    if isinstance(volume := attributes.get("volume_level"), int | float):
        values.append(f"volume {round(volume * 100)} %")
    return values


def _with_unit(value: Any, unit: Any) -> str:
    return f"{value} {unit}" if unit else str(value)
