"""The weather exposed to Assist answers "how warm is it outside?", on the real model.

The dev home's agent with no live-data option set (as a user leaves it who has
not picked a weather entity); `weather.tarifa` is exposed to Assist. Its now and
forecast lines are in the prompt (tools/live_now.py), so the model can state the
temperature without deciding to call a tool. Without them it stated a number
from its weights (docs/benchmarks.md, "Sixteenth pass").
"""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
import pytest

from custom_components.local_assistant.const import (
    CONF_TEMPERATURE,
    CONF_WEATHER_ENTITY,
)
from custom_components.local_assistant.tools.sea import SEA_OPTION_KINDS

from .conftest import DevHome, converse, devices, states_one_of

WEATHER = "weather.tarifa"
QUESTIONS = [
    ("What is the temperature outside?", "en"),
    ("¿Qué temperatura hace fuera?", "es"),
    ("Wie warm ist es draußen?", "de"),
    ("Quelle température fait-il dehors ?", "fr"),
    ("Hoe warm is het buiten?", "nl"),
]
# Answers stating the weather's temperature (25.9 °C on the fixed afternoon), of 5:
# 5, 5 and 5 in three runs of this module alone; 3 in a run of the whole suite,
# where the server's prompt cache holds other tests' prompts and French and Dutch
# read out today's forecast line instead (18 °C to 25 °C). Without the weather
# lines: 1 (HA's own HassGetWeather answered the German one; the others said
# "25 degrees" from the weights).
AT_LEAST_RIGHT = 3


@pytest.fixture
def dev_agent_options() -> dict[str, Any]:
    """No live-data option, at temperature 0."""
    return {
        CONF_WEATHER_ENTITY: None,
        **{option: [] for option in SEA_OPTION_KINDS},
        CONF_TEMPERATURE: 0.0,
    }


async def test_the_exposed_weather_answers_the_temperature(
    afternoon: None, hass: HomeAssistant, dev_home: DevHome
) -> None:
    before = devices(hass)
    temperature = float(hass.states.get(WEATHER).attributes["temperature"])
    right: list[str] = []
    answers: dict[str, str] = {}
    for text, language in QUESTIONS:
        turn = await converse(hass, text, user_id=dev_home.user_id, language=language)
        answers[text] = turn.speech
        assert devices(hass) == before, f"{text!r} changed a device: {turn.speech!r}"
        if states_one_of(turn.speech, [temperature]):
            right.append(text)
    print(f"right {len(right)}/{len(QUESTIONS)} ({temperature} °C): {answers}")
    assert len(right) >= AT_LEAST_RIGHT, (temperature, right, answers)
