"""Guessed area/floor/device_class slots from small models are dropped, nothing else."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, floor_registry as fr, llm
import pytest

from custom_components.local_assistant.llm.tool_repair import (
    repair_tool_calls,
    repair_tool_input,
)

ALL_CLASSES = ["tv", "speaker", "awning", "identify", "outlet", "switch"]


@pytest.fixture
def home(hass: HomeAssistant) -> None:
    """One floor and one area, with aliases."""
    floor = fr.async_get(hass).async_create("Ground floor", aliases={"downstairs"})
    ar.async_get(hass).async_create(
        "Kitchen", floor_id=floor.floor_id, aliases={"cooking area"}
    )


@pytest.mark.usefixtures("home")
@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        # Measured from Qwen2.5-Coder-0.5B: every optional slot filled with a guess.
        (
            "HassTurnOn",
            {
                "name": "Kitchen light",
                "area": "Kitchen",
                "floor": "1",
                "domain": "light",
            },
            {"name": "Kitchen light", "area": "Kitchen", "domain": "light"},
        ),
        (
            "HassTurnOn",
            {
                "name": "Kitchen light",
                "area": "Kitchen",
                "floor": "None",
                "domain": "light",
                "device_class": ALL_CLASSES,
            },
            {"name": "Kitchen light", "area": "Kitchen", "domain": "light"},
        ),
        (
            "HassTurnOff",
            {"name": "desk lamp", "area": "desk", "floor": "floor"},
            {"name": "desk lamp"},
        ),
        # Real areas and floors stay, by name or alias, case and spacing aside.
        (
            "HassLightSet",
            {
                "name": "Lamp",
                "area": "KITCHEN",
                "floor": "ground-floor",
                "brightness": 5,
            },
            {
                "name": "Lamp",
                "area": "KITCHEN",
                "floor": "ground-floor",
                "brightness": 5,
            },
        ),
        (
            "intent__HassTurnOn",
            {"name": "Lamp", "area": "Cooking area", "floor": "Downstairs"},
            {"name": "Lamp", "area": "Cooking area", "floor": "Downstairs"},
        ),
        (
            "intent__HassTurnOn",
            {"name": "Lamp", "area": "Garage"},
            {"name": "Lamp"},
        ),
        # Without a name the area is the target: an unknown one must still fail in HA.
        (
            "HassTurnOn",
            {"area": "Garage", "domain": "light", "device_class": ["identify"]},
            {"area": "Garage", "domain": "light", "device_class": ["identify"]},
        ),
        (
            "HassTurnOn",
            {"name": " ", "area": "Garage"},
            {"name": " ", "area": "Garage"},
        ),
        # Not an intent tool: a script's own "area" field is not ours to judge.
        (
            "announce",
            {"name": "Lamp", "area": "Garage"},
            {"name": "Lamp", "area": "Garage"},
        ),
        ("HassTurnOn", {"name": "Lamp"}, {"name": "Lamp"}),
    ],
)
async def test_repair(
    hass: HomeAssistant, tool: str, args: dict[str, Any], expected: dict[str, Any]
) -> None:
    call = llm.ToolInput(tool_name=tool, tool_args=dict(args), id="call_1")
    repaired = repair_tool_input(hass, call)
    assert repaired.tool_args == expected
    assert (repaired.id, repaired.tool_name, repaired.external) == (
        "call_1",
        tool,
        False,
    )
    if expected == args:
        assert repaired is call


async def test_external_calls_are_left_alone(hass: HomeAssistant) -> None:
    """Calls we answer ourselves (broken arguments) are not HA's to run."""
    call = llm.ToolInput(
        tool_name="HassTurnOn", tool_args={"name": "x", "floor": "1"}, external=True
    )
    assert repair_tool_input(hass, call) is call


async def test_stream_wrapper_repairs_only_tool_calls(hass: HomeAssistant) -> None:
    async def deltas() -> Any:
        yield {"role": "assistant"}
        yield {"content": "One moment."}
        yield {
            "tool_calls": [
                llm.ToolInput(
                    tool_name="HassTurnOn", tool_args={"name": "Lamp", "floor": "1"}
                )
            ]
        }

    out = [delta async for delta in repair_tool_calls(hass, deltas())]
    assert out[:2] == [{"role": "assistant"}, {"content": "One moment."}]
    assert [call.tool_args for call in out[2]["tool_calls"]] == [{"name": "Lamp"}]
