"""An answer asked without tools never names a device whose change was refused.

Real HA (the `hass` fixture), the real openai client, real HTTP and SSE from
the fake server of tests/helpers. Found by the review of the thirty-fifth
pass: "Could the garden be watered today?" (the words name no device) met
with HassTurnOn on the garden sprinkler, refused (rule 1: the words do not
name it); asked once more without tools, the model said "The garden
sprinkler is on now." and it was heard: a claim of a change that did not
run. Decided from what was refused (the device the call named, by the home's
names), not from the answer's words about it.
"""

from __future__ import annotations

from homeassistant.const import STATE_OFF
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.helpers import fake_openai as fake
from tests.helpers.ha import (
    async_setup_exposed_lights,
    converse_streaming,
    spoken_sentence,
)

CASES = [
    (
        "en",
        "Garden sprinkler",
        "Could the garden be watered today?",
        "The garden sprinkler is on now.",
    ),
    (
        "de",
        "Rasensprenger",
        "Könnte der Garten heute gegossen werden?",
        "Der Rasensprenger läuft jetzt.",
    ),
    (
        "es",
        "Aspersor",
        "¿Se podría regar el jardín hoy?",
        "El aspersor ya está regando.",
    ),
    (
        "fr",
        "Arroseur",
        "Le jardin pourrait-il être arrosé aujourd'hui ?",
        "L'arroseur fonctionne maintenant.",
    ),
    (
        "nl",
        "Sproeier",
        "Kan de tuin vandaag water krijgen?",
        "De sproeier staat nu aan.",
    ),
]


# The same turns answered about watering: said as the model gave them.
OTHER_ANSWERS = {
    "en": "Early morning is the best time to water.",
    "de": "Am besten gießt man früh am Morgen.",
    "es": "Lo mejor es regar temprano por la mañana.",
    "fr": "Le mieux est d'arroser tôt le matin.",
    "nl": "Je kunt het beste 's ochtends vroeg water geven.",
}


@pytest.mark.parametrize("claims", [True, False], ids=["claim", "other answer"])
@pytest.mark.parametrize(("language", "device", "question", "claim"), CASES)
async def test_an_answer_naming_the_refused_device_is_not_heard(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    device: str,
    question: str,
    claim: str,
    claims: bool,
) -> None:
    (entity_id,) = await async_setup_exposed_lights(hass, device)
    answer = claim if claims else OTHER_ANSWERS[language]
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": device})]), fake.text(answer)
    )
    turn = await converse_streaming(hass, question, language=language)
    assert hass.states.get(entity_id).state == STATE_OFF
    # The model was asked once more, without tools: the path the claim took.
    assert len(fake_server.requests) == 2
    assert "tools" not in fake_server.requests[1]
    if not claims:
        assert turn.speech == answer
        return
    assert turn.speech == spoken_sentence("nothing_changed", language)
    assert claim not in turn.streamed_text


async def test_a_refused_area_is_no_device(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Issue 20's own example: a call on the area the words name (the tool
    repair moves it to the area slot, and the policy counts no area among
    the refused devices) holds no answer that says "the kitchen"."""
    ar.async_get(hass).async_create("Kitchen")
    await async_setup_exposed_lights(hass, "Kitchen light")
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.text("In the kitchen tonight you could make a risotto."),
    )
    turn = await converse_streaming(hass, "What could I cook in the kitchen tonight?")
    assert turn.speech == "In the kitchen tonight you could make a risotto."
