"""Repair the slots small models fill with guesses in HA's intent tools.

A small model (measured with Qwen2.5-Coder-0.5B on llama.cpp) fills every
optional argument of ``HassTurnOn`` and friends, and spells names its own
way: ``{"name": " porch_light", "area": "Kitchen", "floor": "1",
"device_class": [...every class...], "brightness": "100"}``. HA then matches
nothing, the light stays off, and a small model still says it is on. HA knows
every exposed name, alias, area and floor, so the call is mended with that:

* a ``name`` that is an exposed entity's name, alias or entity id, spelled
  loosely (case, spaces, underscores), becomes that name; the call then
  targets the entity, so an ``area`` or ``floor`` that is not the entity's own
  and any ``device_class`` can only make it fail and are dropped, and so is a
  ``domain`` that is not the entity's;
* a ``name`` that is an area, or an ``area`` that is a device, is moved to the
  slot it belongs in;
* an ``area``/``floor`` that names none of this home is dropped when a name is
  given (calls without a name are left alone: there the area IS the target,
  and "the lights in the garage" must not become "all lights");
* an argument the tool does not take is dropped (without a name, a
  ``device_class`` or ``domain`` is left alone: dropping it would widen the
  call to every device of the area);
* a call that names nothing gets the target the turn named: the device or
  area in the user's words, or for a follow-up ("turn it off again") the
  target of the session's last action;
* a light setting the user did not say is dropped: a ``brightness`` or
  ``temperature`` whose number is not in the user's words, and in English a
  ``color`` that is not either ("turn off the living room" became
  ``{"brightness": 50, "color": "red", "temperature": 22}``). A color in
  another language is kept: the model may have translated it. A color and a
  temperature together, which HA's light service refuses, keep the color.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import (
    async_should_expose,
)
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
    floor_registry as fr,
    llm,
)

from ..const import LOGGER
from ..turn.guard import Said, intent_of_tool, language_code, name_key


@dataclass(frozen=True, slots=True)
class _Entity:
    name: str
    domain: str
    area_keys: frozenset[str]
    floor_keys: frozenset[str]


class _Home:
    """This home's exposed names, areas and floors, by lenient key."""

    def __init__(self, hass: HomeAssistant) -> None:
        self.areas: dict[str, str] = {}
        self.floors: dict[str, str] = {}
        area_floor: dict[str, set[str]] = {}
        area_names: dict[str, set[str]] = {}
        floor_names: dict[str, set[str]] = {}
        for floor in fr.async_get(hass).async_list_floors():
            names = {floor.name, *floor.aliases}
            floor_names[floor.floor_id] = {name_key(n) for n in names}
            for name in names:
                self.floors.setdefault(name_key(name), floor.name)
        for area in ar.async_get(hass).async_list_areas():
            names = {area.name, *area.aliases}
            area_names[area.id] = {name_key(n) for n in names}
            area_floor[area.id] = floor_names.get(area.floor_id or "", set())
            for name in names:
                self.areas.setdefault(name_key(name), area.name)
        self.entities: dict[str, _Entity] = {}
        entities = er.async_get(hass)
        devices = dr.async_get(hass)
        for state in hass.states.async_all():
            if not async_should_expose(hass, conversation.DOMAIN, state.entity_id):
                continue
            entry = entities.async_get(state.entity_id)
            area_id = entry.area_id if entry else None
            if entry and not area_id and entry.device_id:
                device = devices.async_get(entry.device_id)
                area_id = device.area_id if device else None
            target = _Entity(
                name=state.name,
                domain=state.domain,
                area_keys=frozenset(area_names.get(area_id or "", ())),
                floor_keys=frozenset(area_floor.get(area_id or "", ())),
            )
            spellings = [state.name, state.object_id, state.entity_id]
            if entry:
                spellings.extend(entry.aliases)
            for spelling in spellings:
                self.entities.setdefault(name_key(spelling), target)


def call_repairer(
    hass: HomeAssistant,
    arguments: Mapping[str, set[str]] | None = None,
    targets: Sequence[str] = (),
    said: Said | None = None,
) -> Callable[[llm.ToolInput], llm.ToolInput]:
    """What the stream calls on each tool call (llm/stream.py).

    ``arguments`` maps each offered tool to the argument names its schema
    offers the model; ``targets`` holds what the turn named (the devices or
    areas of the user's words, or a follow-up's last action), for a call that
    names nothing; ``said`` the user's sentence, for the settings they asked.
    """
    keys = arguments or {}

    def repair(tool_input: llm.ToolInput) -> llm.ToolInput:
        if tool_input.tool_name not in keys:
            return tool_input  # not offered: HA answers "not found", untouched
        return repair_tool_input(
            hass, tool_input, keys[tool_input.tool_name], targets, said
        )

    return repair


@callback
def repair_tool_input(
    hass: HomeAssistant,
    tool_input: llm.ToolInput,
    accepted: Iterable[str] | None = None,
    follow_up: Sequence[str] = (),
    said: Said | None = None,
) -> llm.ToolInput:
    """The call with its guessed slots mended (see the module's docstring)."""
    if tool_input.external or intent_of_tool(tool_input.tool_name) is None:
        return tool_input
    args = dict(tool_input.tool_args)
    if accepted is not None:
        accepted = set(accepted)
        args = {key: value for key, value in args.items() if key in accepted}
    home = _Home(hass)
    _mend_targets(args, home, follow_up)
    if said is not None:
        _drop_unsaid_settings(args, said)
    if args == tool_input.tool_args:
        return tool_input
    LOGGER.debug(
        "Repaired the %s call: %s -> %s",
        tool_input.tool_name,
        sorted(tool_input.tool_args),
        sorted(args),
    )
    return llm.ToolInput(
        tool_name=tool_input.tool_name,
        tool_args=args,
        id=tool_input.id,
        external=tool_input.external,
    )


def _mend_targets(args: dict[str, Any], home: _Home, follow_up: Sequence[str]) -> None:
    if follow_up and not any(args.get(key) for key in ("name", "area", "floor")):
        # "Turn it off again": the target the turn's words or last action named.
        args["name"] = follow_up[0]
    name = args.get("name")
    name = name.strip() if isinstance(name, str) else ""
    area = args.get("area")
    entity = home.entities.get(name_key(name)) if name else None
    if name and entity is None and not area and name_key(name) in home.areas:
        # "Living room" is an area, not a device.
        del args["name"]
        args["area"] = home.areas[name_key(name)]
        return
    if not name and isinstance(area, str) and name_key(area) in home.entities:
        # "Porch light" is a device, not an area.
        entity = home.entities[name_key(area)]
        del args["area"]
        name = entity.name
    if not name:
        return
    args.pop("device_class", None)
    if entity is None:
        # An unknown name: only areas and floors of this home can narrow it.
        _keep_if(args, "area", lambda value: name_key(value) in home.areas)
        _keep_if(args, "floor", lambda value: name_key(value) in home.floors)
        return
    args["name"] = entity.name
    _keep_if(args, "area", lambda value: name_key(value) in entity.area_keys)
    _keep_if(args, "floor", lambda value: name_key(value) in entity.floor_keys)
    domain = args.get("domain")
    values = domain if isinstance(domain, list) else [domain]
    if domain is not None and entity.domain not in values:
        del args["domain"]


def _drop_unsaid_settings(args: dict[str, Any], said: Said) -> None:
    for key in ("brightness", "temperature"):
        if key in args and _as_number(args[key]) not in said.numbers:
            del args[key]
    color = args.get("color")
    if (
        isinstance(color, str)
        and language_code(said.language) == "en"
        and color.casefold() not in said.text.casefold()
    ):
        del args["color"]
    if "color" in args and "temperature" in args:
        del args["temperature"]


def _as_number(value: Any) -> float | None:
    try:
        return float(str(value).strip().rstrip("%").replace(",", "."))
    except ValueError:
        return None


def _keep_if(args: dict[str, Any], key: str, known: Any) -> None:
    if key in args and not (isinstance(args[key], str) and known(args[key])):
        del args[key]
