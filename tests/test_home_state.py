"""The states of what the user's words name go into the prompt's live data.

A small model asked whether a light is on answers "Yes" without calling
GetLiveContext (seen on the leaderboard's questions: "How many lights are
currently on?" answered 1, 3 and 5). Which entities is decided by HA's data
(names, areas, device words), the same in every language.
"""

from __future__ import annotations

from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import area_registry as ar, entity_registry as er
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.home_state import (
    MAX_NAMED_STATES,
    named_state_lines,
)
from custom_components.local_assistant.llm.prompt import LIVE_HEADING
from custom_components.local_assistant.turn.reading import async_named
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse_streaming

# (language, bedroom, kitchen)
AREAS = {
    "en": ("Bedroom", "Kitchen"),
    "de": ("Schlafzimmer", "Küche"),
    "fr": ("Chambre", "Cuisine"),
    "nl": ("Slaapkamer", "Keuken"),
    "es": ("Dormitorio", "Cocina"),
}
BEDROOM_LIGHT = "- Reading Lamp (light, in {bedroom}): on, brightness 50 %"
KITCHEN_LIGHT = "- Spots (light, in {kitchen}): off"
THERMOSTAT = (
    "- Heating (climate, in {bedroom}): heat, temperature set to 21 °C, "
    "current temperature 19.5 °C"
)


async def _setup_home(hass: HomeAssistant, language: str) -> None:
    """Two lights and a thermostat in two areas, and a plug in none."""
    hass.config.language = language
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "conversation", {})
    bedroom, kitchen = AREAS[language]
    areas = ar.async_get(hass)
    entities = er.async_get(hass)
    for entity_id, name, area, state, attributes in (
        ("light.reading_lamp", "Reading Lamp", bedroom, "on", {"brightness": 128}),
        ("light.spots", "Spots", kitchen, "off", {}),
        (
            "climate.heating",
            "Heating",
            bedroom,
            "heat",
            {"temperature": 21, "current_temperature": 19.5},
        ),
        ("switch.plug", "Plug", None, "on", {}),
    ):
        domain, object_id = entity_id.split(".")
        entry = entities.async_get_or_create(
            domain, "test", object_id, suggested_object_id=object_id
        )
        if area:
            place = areas.async_get_area_by_name(area) or areas.async_create(area)
            entities.async_update_entity(entry.entity_id, area_id=place.id)
        hass.states.async_set(entity_id, state, {"friendly_name": name, **attributes})
        async_expose_entity(hass, "conversation", entity_id, True)


async def _lines(hass: HomeAssistant, language: str, text: str) -> list[str]:
    named = await async_named(
        hass,
        conversation.ConversationInput(
            text=text,
            context=Context(),
            conversation_id=None,
            device_id=None,
            satellite_id=None,
            language=language,
            agent_id=None,
        ),
    )
    return named_state_lines(hass, named)


def _filled(line: str, language: str) -> str:
    bedroom, kitchen = AREAS[language]
    return line.format(bedroom=bedroom, kitchen=kitchen)


BEDROOM_ONLY = [BEDROOM_LIGHT]
BOTH_LIGHTS = [BEDROOM_LIGHT, KITCHEN_LIGHT]


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        # By its name.
        ("en", "Is the reading lamp still on?", BEDROOM_ONLY),
        ("de", "Ist die Reading Lamp noch an?", BEDROOM_ONLY),
        ("fr", "Est-ce que la Reading Lamp est encore allumée ?", BEDROOM_ONLY),
        ("nl", "Staat de Reading Lamp nog aan?", BEDROOM_ONLY),
        ("es", "¿Sigue encendida la Reading Lamp?", BEDROOM_ONLY),
        # By HA's device words in the area named: not the kitchen's light.
        ("en", "are any lights on in the bedroom?", BEDROOM_ONLY),
        ("de", "Sind im Schlafzimmer noch Lichter an?", BEDROOM_ONLY),
        ("fr", "Il y a des lumières allumées dans la chambre ?", BEDROOM_ONLY),
        ("nl", "Branden er nog lampen in de slaapkamer?", BEDROOM_ONLY),
        ("es", "¿Hay luces encendidas en el dormitorio?", BEDROOM_ONLY),
        # A device word alone: the whole home.
        ("en", "How many lights are currently on?", BOTH_LIGHTS),
        ("de", "Wie viele Lichter sind gerade an?", BOTH_LIGHTS),
        ("fr", "Combien de lumières sont allumées ?", BOTH_LIGHTS),
        ("nl", "Hoeveel lampen zijn er aan?", BOTH_LIGHTS),
        ("es", "¿Cuántas luces están encendidas?", BOTH_LIGHTS),
    ],
)
async def test_the_devices_the_words_name(
    hass: HomeAssistant, language: str, text: str, expected: list[str]
) -> None:
    await _setup_home(hass, language)
    assert await _lines(hass, language, text) == [
        _filled(line, language) for line in expected
    ]


async def test_a_thermostat_says_its_set_point_and_the_room_temperature(
    hass: HomeAssistant,
) -> None:
    await _setup_home(hass, "en")
    assert await _lines(hass, "en", "Is the heating working?") == [
        _filled(THERMOSTAT, "en")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "What could I cook in the bedroom tonight?",  # an area alone
        "Tell me a joke",
    ],
)
async def test_words_that_name_no_device_add_nothing(
    hass: HomeAssistant, text: str
) -> None:
    await _setup_home(hass, "en")
    assert await _lines(hass, "en", text) == []


async def test_more_devices_than_a_short_list_are_left_to_the_tools(
    hass: HomeAssistant,
) -> None:
    """A partial list would answer "how many lights are on?" wrongly."""
    await _setup_home(hass, "en")
    for number in range(MAX_NAMED_STATES):
        entity_id = f"light.extra_{number}"
        hass.states.async_set(entity_id, "off", {"friendly_name": f"Extra {number}"})
        async_expose_entity(hass, "conversation", entity_id, True)
    assert await _lines(hass, "en", "How many lights are on?") == []
    assert await _lines(hass, "en", "Is the reading lamp on?") == [
        _filled(BEDROOM_LIGHT, "en")
    ]


async def test_the_model_reads_the_named_state_in_its_prompt(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A question HA's sentences do not read reaches the model with the state."""
    await _setup_home(hass, "en")
    fake_server.queue(fake.text("Yes, the reading lamp is on at half brightness."))
    turn = await converse_streaming(hass, "tell me whether the reading lamp is lit")
    assert turn.speech == "Yes, the reading lamp is on at half brightness."
    (request,) = fake_server.requests
    live = [
        message["content"]
        for message in request["messages"]
        if message["role"] == "system" and LIVE_HEADING in message["content"]
    ]
    assert len(live) == 1
    assert _filled(BEDROOM_LIGHT, "en") in live[0].split("\n")
    assert "Spots" not in live[0]
