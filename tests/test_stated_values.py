"""A sentence about the live data says only numbers the model was shown (llm/values.py).

Real HA (the `hass` fixture), the real openai client, real HTTP and SSE from
the fake server of tests/helpers; the sea and weather entities are template
entities (tests/helpers/live.py).
"""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.llm.spoken import speakable
from custom_components.local_assistant.tools.sea import SEA_TOOL_NAME
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse_streaming
from tests.helpers.live import LIVE_OPTIONS, async_setup_live_entities, live_lines


@pytest.fixture
def agent_options() -> dict[str, Any]:
    return dict(LIVE_OPTIONS)


def line_with(block: list[str], label: str) -> str:
    return next(line for line in block if line.startswith(label))


@pytest.mark.parametrize(
    ("language", "question", "answer", "label"),
    [
        ("en", "How big are the waves?", "The waves are 5.5 meters high.", "Waves:"),
        (
            "de",
            "Wie hoch sind die Wellen?",
            "Die Wellen sind 5,5 meters hoch.",
            "Wellen:",
        ),
        ("es", "¿Qué tal las olas?", "Las olas miden 5,5 metros.", "Olas:"),
        ("fr", "Les vagues sont comment ?", "Les vagues font 5,5 mètres.", "Vagues"),
        ("nl", "Hoe hoog zijn de golven?", "De golven zijn 5,5 meter hoog.", "Golven:"),
    ],
)
async def test_a_made_up_wave_height_is_never_heard(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    question: str,
    answer: str,
    label: str,
) -> None:
    """The issue's German answer, in five languages: the waves are 1.2 m; the
    model says 5.5 without reading anything. Heard: the waves line, in the
    conversation's language; nothing of the made-up sentence, not even
    streamed before it ended."""
    await async_setup_live_entities(hass)
    fake_server.queue(fake.text(answer, chunk_size=3))
    turn = await converse_streaming(hass, question, language=language)
    # As said: French writes no space before the colon when spoken.
    waves = speakable(line_with(live_lines(fake_server.requests[-1]), label))
    assert "1,2" in waves or "1.2" in waves
    assert turn.speech == waves
    assert "5" not in turn.streamed_text
    assert [c.content for c in turn.assistant_contents] == [waves]


async def test_values_a_tool_returned_are_said(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The model reads the sea tool and says a number of its result (the
    wave period, 7 s, that no line shows): shown this turn, so said."""
    await async_setup_live_entities(hass)
    fake_server.queue(fake.tool_calls([(SEA_TOOL_NAME, {})]))
    fake_server.queue(fake.text("The waves are 1.2 m, with 16.4 °C water."))
    turn = await converse_streaming(hass, "How are the waves?", language="en")
    assert turn.speech == "The waves are 1.2 m, with 16.4 °C water."


async def test_an_answer_that_names_no_live_line_is_said_as_given(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A recipe's numbers are knowledge: no live line's label, no check."""
    await async_setup_live_entities(hass)
    answer = "Bake it for 40 minutes at 180 °C. Let it cool for 10 minutes."
    fake_server.queue(fake.text(answer))
    turn = await converse_streaming(hass, "How do I bake a lemon cake?", language="en")
    assert turn.speech == answer
