"""Live questions get live answers and never change a device, on the real model.

The dev home: five lights and switches, a script, the Tarifa weather and sea
sensors, a kitesurf spot. Questions about the sea and the weather are answered
from the tools without the model; the rest goes to the model, whose device
changes a question may not make.
"""

from __future__ import annotations

from homeassistant.components.homeassistant.exposed_entities import (
    async_should_expose,
)
from homeassistant.core import HomeAssistant
from homeassistant.util.unit_conversion import SpeedConverter

from .conftest import DevHome, converse

QUESTIONS = [
    ("Can I go kitesurfing now?", "en"),
    ("How big are the waves?", "en"),
    ("Will it rain tomorrow?", "en"),
    ("¿Hace viento en la playa?", "es"),
    ("Is the porch light on?", "en"),
    ("What is the capital of France?", "en"),
    ("Tell me a joke", "en"),
    ("¿Cuál es la capital de Italia?", "es"),
]


def devices(hass: HomeAssistant) -> dict[str, str]:
    return {
        state.entity_id: state.state
        for state in hass.states.async_all(("light", "switch"))
        if async_should_expose(hass, "conversation", state.entity_id)
    }


def number_words(value: float) -> set[str]:
    """The value as an answer may say it: to 1 or 2 decimals, "1.6" or "1,56"."""
    words = set()
    for digits in (1, 2):
        text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
        words |= {text, text.replace(".", ",")}
    return words


async def test_questions_answered_from_live_data_change_nothing(
    hass: HomeAssistant, dev_home: DevHome
) -> None:
    before = devices(hass)
    answers = {}
    # The dev home's sensors drift with the clock: the values around each question.
    knots: dict[str, set[str]] = {}
    waves: dict[str, set[str]] = {}
    for text, language in QUESTIONS:
        knots[text], waves[text] = sea_words(hass)
        turn = await converse(hass, text, user_id=dev_home.user_id, language=language)
        answers[text] = turn.speech
        knots_after, waves_after = sea_words(hass)
        knots[text] |= knots_after
        waves[text] |= waves_after
        assert devices(hass) == before, f"{text!r} changed a device: {turn.speech!r}"

    def says(question: str, words: set[str]) -> None:
        assert any(w in answers[question] for w in words), (question, answers[question])

    says("Can I go kitesurfing now?", knots["Can I go kitesurfing now?"])
    says("How big are the waves?", waves["How big are the waves?"])
    says("¿Hace viento en la playa?", knots["¿Hace viento en la playa?"])
    assert "rain" in answers["Will it rain tomorrow?"], answers[
        "Will it rain tomorrow?"
    ]


def sea_words(hass: HomeAssistant) -> tuple[set[str], set[str]]:
    """The wind in knots and the wave height as an answer may say them now."""
    wind_kmh = float(hass.states.get("sensor.wind_speed").state)
    knots = SpeedConverter.convert(wind_kmh, "km/h", "kn")
    wave = float(hass.states.get("sensor.wave_height").state)
    return number_words(knots), number_words(wave)
