"""The request starts the same for every speaker, satellite and turn (prompt caching).

Servers reuse their cached prompt only as far as the next prompt starts the same
way; a fact change, another speaker or another satellite must only change what
comes after the tools (llm/prompt.py).
"""

from __future__ import annotations

from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, device_registry as dr
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.llm.prompt import CONTEXT_HEADING
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse
from tests.helpers.memory import create_user, memory_of


async def test_stable_prefix_across_speakers_satellites_and_facts(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    kitchen_area = ar.async_get(hass).async_create("Kitchen area")
    satellite = dr.async_get(hass).async_get_or_create(
        config_entry_id=loaded_entry.entry_id, identifiers={("test", "satellite")}
    )
    dr.async_get(hass).async_update_device(satellite.id, area_id=kitchen_area.id)
    ada = await create_user(hass, "Ada")
    memory = memory_of(loaded_entry)
    await memory.async_add_fact(f"user:{ada}", "The user has a dog called Rex.")

    fake_server.queue(*(fake.text(f"Answer {n}.") for n in range(4)))
    await converse(hass, "hello there", user_id=ada)
    await converse(hass, "hello again", user_id=ada)
    await memory.async_add_fact(f"user:{ada}", "The user is vegetarian.")
    await converse(hass, "and once more", user_id=ada)
    await converse(hass, "hello from the kitchen", device_id=satellite.id)

    stable = {request["messages"][0]["content"] for request in fake_server.requests}
    assert len(stable) == 1
    assert "You are in area" not in stable.pop()
    tools = {str(request["tools"]) for request in fake_server.requests}
    assert len(tools) == 1
    ada_notes = [r["messages"][1]["content"] for r in fake_server.requests[:3]]
    assert "Rex" in ada_notes[0]
    assert ada_notes[0] == ada_notes[1]  # unchanged facts: the same text
    assert "vegetarian" in ada_notes[2]
    satellite_context = fake_server.requests[3]["messages"][1]["content"]
    assert satellite_context.startswith(CONTEXT_HEADING)
    assert "You are in area Kitchen area" in satellite_context
    assert "Rex" not in satellite_context
    # Without a satellite, HA's advice for requests without an area varies instead.
    assert "ask user to specify an area" in ada_notes[0]
