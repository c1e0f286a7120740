"""After the model's changes ran, what ran answers, in HA's words (turn/what_ran.py).

Real HA carries out the calls of a fake model; the user hears HA's own
response for the intent in their language, as HA's default agent says it,
and the model is not asked for words after its change (a small model says
them in English, or names another device). What the user hears comes from
the chat log's delta listener, as TTS hears it.
"""

from __future__ import annotations

from pathlib import Path

from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.turn.policy import Named
from custom_components.local_assistant.turn.what_ran import Change, async_what_ran
from tests.helpers import fake_openai as fake
from tests.helpers.ha import async_setup_exposed_lights, converse_streaming

TURN_ON = ("HassTurnOn", {"name": "Kitchen"})


@pytest.mark.parametrize(
    ("language", "sentence", "answer"),
    [
        ("en", "turn on the kitchen", "Turned on the switch"),
        ("es", "enciende Kitchen", "Se ha activado el interruptor"),
        ("de", "schalte Kitchen ein", "Kitchen eingeschaltet"),
        ("fr", "allume Kitchen", "Allumé"),
        ("nl", "zet Kitchen aan", "Aangezet"),
    ],
)
async def test_a_command_ha_reads_is_answered_in_its_words_after_one_call(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    language: str,
    sentence: str,
    answer: str,
) -> None:
    """HA reads the whole sentence as the command (its own handling is off
    here): once the model's call ran, HA's response in the user's language
    answers, and the model is not asked for words after it."""
    fake_server.queue(fake.tool_calls([TURN_ON]), fake.text("The kitchen is on."))
    turn = await converse_streaming(hass, sentence, language=language)

    assert hass.states.get(kitchen).state == STATE_ON
    assert turn.speech == answer
    assert turn.streamed_text == answer
    assert len(fake_server.requests) == 1


@pytest.mark.parametrize(
    ("language", "sentence", "answer"),
    [
        ("en", "kitchen on, it's too dark", "Turned on the switch"),
        ("es", "pon Kitchen en marcha", "Se ha activado el interruptor"),
        ("de", "Kitchen an, es ist zu dunkel", "Kitchen eingeschaltet"),
        ("fr", "mets Kitchen en route", "Allumé"),
        ("nl", "doe Kitchen even aan", "Aangezet"),
    ],
)
async def test_words_after_a_change_give_way_to_has_words(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    language: str,
    sentence: str,
    answer: str,
) -> None:
    """Words HA does not read as a command may ask more: the model goes on
    after its change, and its words (English, whatever the user spoke) are
    held; HA's response in the user's language answers."""
    fake_server.queue(fake.tool_calls([TURN_ON]), fake.text("The kitchen is on."))
    turn = await converse_streaming(hass, sentence, language=language)

    assert hass.states.get(kitchen).state == STATE_ON
    assert turn.speech == answer
    assert turn.streamed_text == answer
    assert len(fake_server.requests) == 2
    assert fake_server.requests[1]["tools"]


@pytest.fixture
async def lights(hass: HomeAssistant) -> list[str]:
    """Two real template lights, exposed to Assist."""
    return await async_setup_exposed_lights(hass, "Kitchen", "Porch")


@pytest.fixture
async def dimmable(hass: HomeAssistant) -> str:
    """A real template light whose level is an input_number, exposed to Assist."""
    assert await async_setup_component(
        hass,
        "input_number",
        {"input_number": {"desk_level": {"min": 0, "max": 255, "step": 1}}},
    )
    level = {"entity_id": "input_number.desk_level"}
    assert await async_setup_component(
        hass,
        "template",
        {
            "template": [
                {
                    "light": [
                        {
                            "name": "Desk Lamp",
                            "unique_id": "test_desk_lamp",
                            "state": "{{ states('input_number.desk_level') | int > 0 }}",
                            "level": "{{ states('input_number.desk_level') | int }}",
                            "turn_on": {
                                "action": "input_number.set_value",
                                "target": level,
                                "data": {"value": 255},
                            },
                            "turn_off": {
                                "action": "input_number.set_value",
                                "target": level,
                                "data": {"value": 0},
                            },
                            "set_level": {
                                "action": "input_number.set_value",
                                "target": level,
                                "data": {"value": "{{ brightness }}"},
                            },
                        }
                    ]
                }
            ]
        },
    )
    await hass.async_block_till_done()
    async_expose_entity(hass, "conversation", "light.desk_lamp", True)
    return "light.desk_lamp"


@pytest.mark.parametrize(
    ("language", "answer"),
    [("en", "Brightness set"), ("de", "Helligkeit eingestellt")],
)
async def test_the_response_named_after_a_value_of_the_call_is_said(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    dimmable: str,
    language: str,
    answer: str,
) -> None:
    """HassLightSet has no default response: the one for its brightness is it."""
    fake_server.queue(
        fake.tool_calls([("HassLightSet", {"name": "Desk Lamp", "brightness": 30})])
    )
    turn = await converse_streaming(hass, "Desk Lamp 30 %", language=language)

    assert float(hass.states.get("input_number.desk_level").state) == round(
        255 * 30 / 100
    )
    assert turn.speech == answer


async def test_a_value_of_the_call_fills_the_response(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """HA's response names the temperature the call set ("Temperatur auf 21
    Grad gestellt"), from the call's own value."""
    hass.states.async_set(
        "sensor.hall_temperature", "18", {"unit_of_measurement": "°C"}
    )
    assert await async_setup_component(
        hass,
        "input_boolean",
        {"input_boolean": {"heater": {"name": "Heater power"}}},
    )
    assert await async_setup_component(
        hass,
        "climate",
        {
            "climate": {
                "platform": "generic_thermostat",
                "name": "Hall Thermostat",
                "unique_id": "test_hall_thermostat",
                "heater": "input_boolean.heater",
                "target_sensor": "sensor.hall_temperature",
                "target_temp": 19,
            }
        },
    )
    await hass.async_block_till_done()
    async_expose_entity(hass, "conversation", "climate.hall_thermostat", True)
    fake_server.queue(
        fake.tool_calls(
            [
                (
                    "HassClimateSetTemperature",
                    {"name": "Hall Thermostat", "temperature": 21},
                )
            ]
        )
    )
    turn = await converse_streaming(hass, "Hall Thermostat auf 21 Grad", language="de")

    assert hass.states.get("climate.hall_thermostat").attributes["temperature"] == 21
    assert turn.speech == "Temperatur auf 21 Grad gestellt"


async def test_changes_of_two_devices_are_answered_by_name(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    lights: list[str],
) -> None:
    """HA's "Turned on the light" would hide that two ran: they are named."""
    fake_server.queue(
        fake.tool_calls(
            [("HassTurnOn", {"name": "Kitchen"}), ("HassTurnOn", {"name": "Porch"})]
        ),
        fake.text("The kitchen light is on."),
    )
    turn = await converse_streaming(hass, "kitchen and porch on please")

    assert [hass.states.get(light).state for light in lights] == [STATE_ON, STATE_ON]
    assert turn.speech == "Done: Kitchen, Porch."
    assert turn.streamed_text == "Done: Kitchen, Porch."
    assert len(fake_server.requests) == 2


async def test_the_model_goes_on_after_a_change(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    lights: list[str],
) -> None:
    """One call a round, as small models do: asked again with its tools after
    the first change, the model makes the second, and what ran answers."""
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.tool_calls([("HassTurnOn", {"name": "Porch"})]),
        fake.text("Both lights are on."),
    )
    turn = await converse_streaming(hass, "kitchen and porch on please")

    assert [hass.states.get(light).state for light in lights] == [STATE_ON, STATE_ON]
    assert turn.speech == "Done: Kitchen, Porch."
    assert "Both" not in turn.streamed_text
    assert len(fake_server.requests) == 3
    assert fake_server.requests[1]["tools"]


async def test_words_after_a_change_are_never_heard(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    lights: list[str],
) -> None:
    """Asked again for the porch, the model claims it in words: they are held,
    and what ran is said, by name, so the porch that stayed off is not
    claimed."""
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.text("Both lights are on."),
    )
    turn = await converse_streaming(hass, "kitchen and porch on please")

    assert [hass.states.get(light).state for light in lights] == [STATE_ON, STATE_OFF]
    assert turn.speech == "Done: Kitchen."
    assert "Both" not in turn.streamed_text


async def test_a_change_with_a_read_is_answered_by_the_model(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    lights: list[str],
) -> None:
    """A read in the turn has a result only the model can say: it answers."""
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"}), ("GetLiveContext", {})]),
        fake.text("The kitchen light is on; the porch light is off."),
    )
    turn = await converse_streaming(hass, "kitchen on, and is the porch on?")

    assert hass.states.get("light.kitchen").state == STATE_ON
    assert turn.speech == "The kitchen light is on; the porch light is off."
    assert len(fake_server.requests) == 2


@pytest.mark.parametrize(
    ("language", "answer"),
    [("en", "Added oat milk"), ("de", "oat milk hinzugefügt")],
)
async def test_a_response_with_no_default_is_its_only_one(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    answer: str,
    tmp_path: Path,
) -> None:
    """HassListAddItem has one response ("item_added"), filled with the
    call's item: it answers."""
    # The list is a file in the config dir: one of this test's own.
    hass.config.config_dir = str(tmp_path)
    shopping_list = MockConfigEntry(domain="shopping_list")
    shopping_list.add_to_hass(hass)
    assert await hass.config_entries.async_setup(shopping_list.entry_id)
    await hass.async_block_till_done()
    async_expose_entity(hass, "conversation", "todo.shopping_list", True)
    fake_server.queue(
        fake.tool_calls(
            [("HassListAddItem", {"item": "oat milk", "name": "Shopping List"})]
        ),
        fake.text("I added oat milk."),
    )
    turn = await converse_streaming(
        hass, "oat milk on the Shopping List", language=language
    )

    assert hass.states.get("todo.shopping_list").state == "1"
    assert turn.speech == answer
    assert turn.streamed_text == answer


@pytest.mark.parametrize(
    ("change", "answer"),
    [
        # What the handler found is a slot of HA's response, as its agent adds it.
        (
            Change(
                "HassMediaSearchAndPlay",
                {"search_query": "jazz"},
                {
                    "speech": {},
                    "speech_slots": {"media": {"title": "Jazz"}},
                    "response_type": "action_done",
                    "data": {"success": [], "failed": [], "targets": []},
                },
            ),
            "Playing media",
        ),
        # HA 2026.11's result shape.
        (
            Change(
                "intent__HassMediaSearchAndPlay",
                {"search_query": "jazz"},
                {
                    "data": {
                        "speech": {},
                        "speech_slots": {"media": {"title": "Jazz"}},
                        "response_type": "action_done",
                        "data": {"success": [], "failed": [], "targets": []},
                    },
                    "error": None,
                },
            ),
            "Playing media",
        ),
        # A number is a slot as HA holds it, text: "1 minute", not "1 minutes".
        (
            Change(
                "HassStartTimer",
                {"minutes": 1},
                {"speech": {}, "response_type": "action_done", "data": {}},
            ),
            "Timer set for 1 minute",
        ),
        # What the handler said itself is said.
        (
            Change(
                "HassStartTimer",
                {"minutes": 5},
                {
                    "speech": {"plain": {"speech": "Five minutes, starting now"}},
                    "response_type": "action_done",
                    "data": {},
                },
            ),
            "Five minutes, starting now",
        ),
    ],
)
async def test_has_response_takes_what_the_result_holds(
    hass: HomeAssistant, change: Change, answer: str
) -> None:
    assert await async_what_ran(hass, [change], Named(), "en", cleanly=True) == answer


async def test_a_question_beside_a_change_is_answered_by_the_model(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """The model may answer a question from its prompt, without a read: where
    the words ask one beside the change, its answer is said."""
    fake_server.queue(
        fake.tool_calls([TURN_ON]),
        fake.text("The kitchen is on. The capital of France is Paris."),
    )
    turn = await converse_streaming(
        hass, "kitchen on, and what is the capital of France?"
    )

    assert hass.states.get(kitchen).state == STATE_ON
    assert turn.speech == "The kitchen is on. The capital of France is Paris."
