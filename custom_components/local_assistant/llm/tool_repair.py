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
* a ``name`` that is an area (also beside the same ``area``), an ``area``
  that is a device or a floor, a ``floor`` that is an area, is moved to the
  slot it belongs in (``{"name": "living_room", "area": "Living Room"}`` is
  the area);
* an ``area``/``floor`` that names none of this home is dropped when a name is
  given (calls without a name are left alone: there the area IS the target,
  and "the lights in the garage" must not become "all lights");
* an argument the tool does not take is dropped (without a name, a
  ``device_class`` or ``domain`` is left alone: dropping it would widen the
  call to every device of the area);
* a call that names nothing gets the one device or area the user's words
  name, or, when they name none, what the last change acted on ("dim it to
  10 percent"; turn/policy.py decides whether it may run);
* an area call without a kind gets the one kind the user's device words
  mean ("the lights in the study": ``domain: light``), so it never switches
  the study's fan;
* a light setting the user did not say is dropped when another setting
  stays: a ``brightness`` or ``temperature`` whose number is not in the
  user's words ("set the light to red" became ``{"color": "red",
  "brightness": 100}``). A setting the tool requires, or the only one, is
  never dropped: the call would do nothing. A color and a temperature
  together, which HA's light service refuses, keep the color.

Whatever is mended, a slot the tool requires is never emptied (a to-do
list's name that is also an area's stays the name), and no slot the tool
does not offer is added.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import (
    area_registry as ar,
    floor_registry as fr,
    llm,
)

from ..const import LOGGER
from ..exposed import async_exposed_entities
from ..turn.policy import Named, intent_of_tool, name_key


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
        for exposed in async_exposed_entities(hass):
            state, area_id = exposed.state, exposed.area_id
            target = _Entity(
                name=state.name,
                domain=state.domain,
                area_keys=frozenset(area_names.get(area_id or "", ())),
                floor_keys=frozenset(area_floor.get(area_id or "", ())),
            )
            spellings = [state.name, state.object_id, state.entity_id]
            spellings.extend(exposed.aliases)
            for spelling in spellings:
                self.entities.setdefault(name_key(spelling), target)


@dataclass(frozen=True, slots=True)
class ToolArguments:
    """What a tool's schema offers the model: every argument, and the required ones."""

    offered: frozenset[str]
    required: frozenset[str] = frozenset()


def call_repairer(
    hass: HomeAssistant,
    arguments: Mapping[str, ToolArguments] | None = None,
    named: Named | None = None,
    last_target: str | None = None,
) -> Callable[[llm.ToolInput], llm.ToolInput]:
    """What the stream calls on each tool call (llm/stream.py).

    ``arguments`` maps each offered tool to its schema's arguments;
    ``named`` is what the user's words name (a call that names nothing gets
    the one device or area they name, else ``last_target``, what the last
    change acted on; settings they did not say may go).
    """
    keys = arguments or {}

    def repair(tool_input: llm.ToolInput) -> llm.ToolInput:
        if tool_input.tool_name not in keys:
            return tool_input  # not offered: HA answers "not found", untouched
        return repair_tool_input(
            hass, tool_input, keys[tool_input.tool_name], named, last_target
        )

    return repair


@callback
def repair_tool_input(
    hass: HomeAssistant,
    tool_input: llm.ToolInput,
    arguments: ToolArguments | None = None,
    named: Named | None = None,
    last_target: str | None = None,
) -> llm.ToolInput:
    """The call with its guessed slots mended (see the module's docstring)."""
    if tool_input.external or intent_of_tool(tool_input.tool_name) is None:
        return tool_input
    args = dict(tool_input.tool_args)
    if arguments is not None:
        args = {key: value for key, value in args.items() if key in arguments.offered}
    home = _Home(hass)
    only = named.only_name if named is not None else None
    names_nothing = named is None or not named.spellings
    _mend_targets(args, home, only or (last_target if names_nothing else None))
    if named is not None:
        _mend_kind(args, named, arguments)
        _drop_unsaid_settings(
            args, named, arguments.required if arguments is not None else frozenset()
        )
    if arguments is not None:
        # A slot the tool requires is mended, never emptied (a list's name
        # that is also an area's stays the name), and nothing the tool does
        # not offer is added.
        for key in arguments.required & tool_input.tool_args.keys():
            args.setdefault(key, tool_input.tool_args[key])
        args = {key: value for key, value in args.items() if key in arguments.offered}
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


def _mend_targets(args: dict[str, Any], home: _Home, named: str | None) -> None:
    if named and not any(args.get(key) for key in ("name", "area", "floor")):
        # "Turn off the fan, it's too loud": the one name the words give.
        args["name"] = named
    name = args.get("name")
    name = name.strip() if isinstance(name, str) else ""
    entity = home.entities.get(name_key(name)) if name else None
    # "Living room" is an area, not a device; often given as both.
    name_was_area = (
        bool(name) and entity is None and _move_place(args, "name", "area", home.areas)
    )
    _mend_places(args, home)
    if name_was_area:
        return
    area = args.get("area")
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


def _mend_places(args: dict[str, Any], home: _Home) -> None:
    """An area given as a floor, or a floor as an area, goes to its own slot.

    "Close the living room curtain" came as ``{"floor": "Living Room",
    "area": "Living Room"}``, "the lights upstairs" as ``{"area":
    "upstairs"}``: HA matches neither. Only a value that is no place of its
    own slot's kind moves, and only into an empty slot or one that already
    says the same place.
    """
    floor, area = args.get("floor"), args.get("area")
    if isinstance(floor, str) and name_key(floor) not in home.floors:
        _move_place(args, "floor", "area", home.areas)
    if isinstance(area, str) and name_key(area) not in home.areas:
        _move_place(args, "area", "floor", home.floors)


def _move_place(
    args: dict[str, Any], source: str, slot: str, places: Mapping[str, str]
) -> bool:
    """Move ``args[source]`` to ``slot`` when it is one of ``places``.

    The slot must be empty or already hold that place (spelled any way,
    "living_room").
    """
    value = args.get(source)
    place = places.get(name_key(value)) if isinstance(value, str) else None
    if place is None:
        return False
    present = args.get(slot)
    if present and not (
        isinstance(present, str) and places.get(name_key(present)) == place
    ):
        return False
    del args[source]
    args[slot] = place  # HA matches a place by its name or an alias
    return True


# Domains whose devices HA's intents switch by area and kind.
_SWITCHED_DOMAINS = frozenset({"light", "fan", "switch", "cover"})
_SETTINGS = ("brightness", "temperature", "color")


def _mend_kind(
    args: dict[str, Any], named: Named, arguments: ToolArguments | None
) -> None:
    if args.get("name") or not (args.get("area") or args.get("floor")):
        return
    if args.get("domain") or args.get("device_class"):
        return
    domains = named.device_kinds & _SWITCHED_DOMAINS
    if len(domains) != 1 or (arguments and "domain" not in arguments.offered):
        return
    (domain,) = domains
    args["domain"] = domain
    classes = named.device_kinds - _SWITCHED_DOMAINS
    if (
        domain == "cover"
        and len(classes) == 1
        and (arguments is None or "device_class" in arguments.offered)
    ):
        args["device_class"] = sorted(classes)
    return


def _drop_unsaid_settings(
    args: dict[str, Any], named: Named, required: frozenset[str]
) -> None:
    for key in ("brightness", "temperature"):
        others = [other for other in _SETTINGS if other != key and other in args]
        if (
            key in args
            and key not in required
            and others
            and _as_number(args[key]) not in named.numbers
        ):
            del args[key]
    if "color" in args and "temperature" in args and "temperature" not in required:
        del args["temperature"]


def _as_number(value: Any) -> float | None:
    try:
        return float(str(value).strip().rstrip("%").replace(",", "."))
    except ValueError:
        return None


def _keep_if(args: dict[str, Any], key: str, known: Any) -> None:
    if key in args and not (isinstance(args[key], str) and known(args[key])):
        del args[key]
