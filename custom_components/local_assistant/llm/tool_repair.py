"""Repair the optional slots small models fill with guesses in HA's intent tools.

A small model (measured with Qwen2.5-Coder-0.5B on llama.cpp) fills every
optional argument of ``HassTurnOn`` and friends: ``{"name": "Kitchen light",
"area": "Kitchen", "floor": "1", "device_class": [...every class...]}``. HA
then matches nothing (there is no floor "1"; a light has no device class), the
light stays off, and the model still tells the user it is on.

When the call names a device, ``area`` and ``floor`` only narrow that name
down, so a value that names no area or floor of this home can only make the
call fail: it is dropped. ``device_class`` is dropped too when a name is given.
Calls without a name are left alone: there the area or floor IS the target,
and "the lights in the garage" must not become "all lights" when no garage
exists.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable
import re
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, floor_registry as fr, llm

from ..const import LOGGER

_NOT_WORD = re.compile(r"[\W_]+")


def _key(text: str) -> str:
    """Lenient: a value kept here may still fail in HA, never the reverse."""
    return _NOT_WORD.sub("", text.casefold())


def _known(value: Any, names: Iterable[str]) -> bool:
    return isinstance(value, str) and _key(value) in {_key(name) for name in names}


def _is_intent_tool(tool_name: str) -> bool:
    """HA's intent tools: HassTurnOn (2026.2) or intent__HassTurnOn (2026.11)."""
    return tool_name.rpartition("__")[2].startswith("Hass")


async def repair_tool_calls(
    hass: HomeAssistant, deltas: AsyncIterable[dict[str, Any]]
) -> AsyncIterator[dict[str, Any]]:
    """Pass chat log deltas on, with their tool calls repaired."""
    async for delta in deltas:
        if calls := delta.get("tool_calls"):
            yield {**delta, "tool_calls": [repair_tool_input(hass, c) for c in calls]}
        else:
            yield delta


def repair_tool_input(hass: HomeAssistant, tool_input: llm.ToolInput) -> llm.ToolInput:
    """The call with guessed area/floor/device_class slots removed (see above)."""
    args = tool_input.tool_args
    name = args.get("name")
    if (
        tool_input.external
        or not _is_intent_tool(tool_input.tool_name)
        or not (isinstance(name, str) and name.strip())
    ):
        return tool_input
    dropped: list[str] = []
    if "area" in args and not _known(
        args["area"],
        (
            text
            for area in ar.async_get(hass).async_list_areas()
            for text in (area.name, *area.aliases)
        ),
    ):
        dropped.append("area")
    if "floor" in args and not _known(
        args["floor"],
        (
            text
            for floor in fr.async_get(hass).async_list_floors()
            for text in (floor.name, *floor.aliases)
        ),
    ):
        dropped.append("floor")
    if "device_class" in args:
        dropped.append("device_class")
    if not dropped:
        return tool_input
    LOGGER.debug(
        "Dropped guessed %s from the %s call for %r",
        ", ".join(dropped),
        tool_input.tool_name,
        name,
    )
    return llm.ToolInput(
        tool_name=tool_input.tool_name,
        tool_args={key: value for key, value in args.items() if key not in dropped},
        id=tool_input.id,
        external=tool_input.external,
    )
