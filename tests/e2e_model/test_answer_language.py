"""After a tool ran, the real model answers in the user's language.

The bundled template ends the last tool result with an English line asking for a
short answer; after it alone the 0.5B model answered German and French users in
English ("The light in the Flur was turned off."), and HA speaks that answer. The
template now repeats the prompt's answer-language line after it
(docs/benchmarks.md, fourteenth pass).

The dev home's kitchen light and its area are renamed as a German or French home
names them; HA's own intents are off so that the model makes every call.
"""

from __future__ import annotations

import re
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, entity_registry as er, intent
import pytest

from custom_components.local_assistant.compat import tool_result_data
from custom_components.local_assistant.const import (
    CONF_LOCAL_INTENTS,
    CONF_TEMPERATURE,
)
from custom_components.local_assistant.turn.policy import base_name, result_succeeded

from .conftest import DevHome, converse

KITCHEN = "light.kitchen_light"
# English words an answer about a light that was switched would use; none of them
# is a German or French word ("was" is German).
ENGLISH = re.compile(
    r"\b(the|light|done|turned|switched|has been|is (now|on|off))\b", re.IGNORECASE
)
HOMES = {
    "de": (
        "Küchenlampe",
        "Küche",
        ["Schalte die Küchenlampe ein.", "Schalte die Küchenlampe aus."],
    ),
    "fr": (
        "Lampe de cuisine",
        "Cuisine",
        ["Allume la lampe de cuisine.", "Éteins la lampe de cuisine."],
    ),
}


@pytest.fixture
def dev_agent_options() -> dict[str, Any]:
    """Every command to the model, at temperature 0."""
    return {CONF_LOCAL_INTENTS: False, CONF_TEMPERATURE: 0.0}


@pytest.mark.parametrize("language", list(HOMES))
async def test_answers_after_a_tool_are_in_the_users_language(
    hass: HomeAssistant, dev_home: DevHome, language: str
) -> None:
    light_name, area_name, commands = HOMES[language]
    entities = er.async_get(hass)
    areas = ar.async_get(hass)
    area_id = entities.async_get(KITCHEN).area_id
    areas.async_update(area_id, name=area_name)
    entities.async_update_entity(KITCHEN, name=light_name)

    answers_after_a_change: list[str] = []
    for text in commands:
        turn = await converse(hass, text, user_id=dev_home.user_id, language=language)
        switched = {
            call.id
            for call in turn.tool_calls
            if base_name(call.tool_name).startswith("HassTurn")
        }
        # The model's own answer after a switch that ran; our own sentences (an
        # error, "nothing was changed") are translated and prove nothing here.
        if (
            turn.result.response.response_type is not intent.IntentResponseType.ERROR
            and any(
                result.tool_call_id in switched
                and result_succeeded(tool_result_data(result))
                for result in turn.tool_results
            )
        ):
            answers_after_a_change.append(turn.speech)

    # Without a tool run the check below would say nothing: the model at
    # temperature 0 switches this light for each of these commands.
    assert answers_after_a_change, "the model ran no tool for any command"
    english = [answer for answer in answers_after_a_change if ENGLISH.search(answer)]
    assert not english, english
