"""The agent against a real OpenAI-compatible server nobody here wrote.

llama.cpp's llama-server with Qwen2.5-Coder-0.5B, temperature 0, through real HA.
Assertions are on shape (a tool ran, the state changed, a short answer without
markup), never on wording: the model, not this repo, chooses the words.
"""

from __future__ import annotations

import logging
import re

from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, entity_registry as er, intent
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.llm.stream import SPEECH_STREAM_CHARS
from tests.helpers.ha import async_setup_exposed_lights

from .conftest import Turn, converse

# Tags, JSON, code fences, Markdown emphasis and headings: nothing a TTS should read.
MARKUP = re.compile(r"[<>{}`*#]|\btool_call\b")
# A spoken error is one sentence or two, not a stack trace.
SHORT = 200


def assert_speakable(turn: Turn) -> None:
    """A non-empty answer a voice satellite can say as is."""
    assert turn.speech.strip(), "empty answer"
    assert not MARKUP.search(turn.speech), f"markup in {turn.speech!r}"
    assert "<think>" not in "".join(turn.streamed_chunks)


@pytest.fixture
async def kitchen_light(hass: HomeAssistant) -> str:
    """A template light (backed by an input_boolean) in the Kitchen, exposed to Assist."""
    [entity_id] = await async_setup_exposed_lights(hass, "Kitchen light")
    area = ar.async_get(hass).async_create("Kitchen")
    er.async_get(hass).async_update_entity(entity_id, area_id=area.id)
    return entity_id


async def test_turns_on_an_exposed_light(
    hass: HomeAssistant, real_entry: MockConfigEntry, kitchen_light: str
) -> None:
    """A device command: a real tool call switches the light, then a short answer."""
    turn = await converse(hass, "Turn on the kitchen light.")

    assert turn.tool_calls, f"no tool call; the model said {turn.speech!r}"
    assert turn.tool_results, "the tool call did not run"
    assert hass.states.get(kitchen_light).state == STATE_ON
    assert turn.result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert_speakable(turn)
    assert len(turn.speech) < SHORT


async def test_plain_question_is_streamed(
    hass: HomeAssistant, real_entry: MockConfigEntry
) -> None:
    """A question the model answers itself arrives in several streamed pieces.

    A fresh agent holds its first answer until it knows whether the server's
    template prefills `<think>` (entity.py); Qwen2.5 writes no think block, so
    from the second answer on the text streams as it is generated, past its
    first SPEECH_STREAM_CHARS (llm/stream.py: until then it waits, as HA's
    voice pipeline does): a long answer is asked for.
    """
    first = await converse(hass, "What is the capital of France?")
    assert_speakable(first)

    turn = await converse(
        hass, "Tell me about the history of Rome in three or four sentences."
    )
    assert_speakable(turn)
    assert len(turn.speech) > 2 * SPEECH_STREAM_CHARS, turn.speech
    assert len(turn.streamed_chunks) > 1, "the answer was not streamed"
    assert "".join(turn.streamed_chunks).strip() == turn.speech.strip()


async def test_small_talk_with_invalid_tool_json_is_survived(
    hass: HomeAssistant,
    real_entry: MockConfigEntry,
    kitchen_light: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Small talk with tools offered makes this model write broken tool JSON.

    llama.cpp then sends an error event mid-stream; the user must hear a short
    sentence (an error or, should the model manage, a normal answer), and nothing
    crashes.
    """
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        turn = await converse(hass, "Tell me a joke.")

    assert_speakable(turn)
    if turn.result.response.response_type is intent.IntentResponseType.ERROR:
        assert len(turn.speech) < SHORT
    assert hass.states.get(kitchen_light).state == STATE_OFF
    crashes = [
        record
        for record in caplog.records
        if record.levelno >= logging.ERROR or record.exc_info
    ]
    assert not crashes, [record.getMessage() for record in crashes]
