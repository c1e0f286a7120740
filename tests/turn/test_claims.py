"""The assistant never claims an action it did not take (the claimed-actions issue).

Real HA recognizes the user's sentence; the fake server plays a small model that
confirms without calling the tool. What the user hears comes from the chat log's
delta listener, as TTS hears it.
"""

from __future__ import annotations

from typing import Any

from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import SUBENTRY_CONVERSATION
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse_streaming
from tests.helpers.memory import create_user

HONEST_EN = "Sorry, I couldn't do that, so nothing was changed."
HONEST_ES = "Lo siento, no he podido hacerlo, así que no se ha cambiado nada."
TURN_ON = ("HassTurnOn", {"name": "Kitchen"})


def non_system(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] != "system"]


async def test_a_claim_without_the_action_is_retried_and_never_spoken(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """The first answer says "on" without a tool call: asked again, it acts."""
    ada = await create_user(hass, "Ada")
    fake_server.queue(fake.text("How are you?"))
    await converse_streaming(hass, "hello", user_id=ada)  # some history to drop
    fake_server.queue(
        fake.text("The kitchen is on now."),
        fake.tool_calls([TURN_ON]),
        fake.text("Done, the kitchen is on."),
    )
    turn = await converse_streaming(hass, "turn on the kitchen", user_id=ada)

    assert hass.states.get(kitchen).state == STATE_ON
    assert turn.speech == "Done, the kitchen is on."
    assert "The kitchen is on now." not in turn.streamed_text
    assert turn.streamed_text == "Done, the kitchen is on."
    first, retry, after_tool = fake_server.requests[-3:]
    assert "tool_choice" not in first
    assert non_system(first)[0] == {"role": "user", "content": "hello"}
    # The retry drops the replayed history and requires a tool (llama.cpp honours it).
    assert retry["tool_choice"] == "required"
    assert non_system(retry) == [{"role": "user", "content": "turn on the kitchen"}]
    assert "tool_choice" not in after_tool


@pytest.mark.parametrize(
    ("language", "sentence", "honest"),
    [
        ("en", "turn on the kitchen", HONEST_EN),
        ("es", "enciende Kitchen", HONEST_ES),
    ],
)
async def test_claiming_twice_gets_an_honest_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    language: str,
    sentence: str,
    honest: str,
) -> None:
    """HA's own intent recognition, in the user's language, tells a command."""
    fake_server.queue(fake.text("Listo, encendida."), fake.text("Ya está encendida."))
    turn = await converse_streaming(hass, sentence, language=language)

    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.speech == honest
    assert turn.streamed_text == honest
    assert turn.result.response.response_type is intent.IntentResponseType.ERROR
    assert len(fake_server.requests) == 2


async def test_a_failed_tool_is_not_claimed_as_done(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """The tool ran and failed; "Done!" after it is withheld like a skipped tool."""
    wrong = ("HassTurnOn", {"name": "Garage"})
    fake_server.queue(
        fake.tool_calls([wrong]),
        fake.text("Done!"),
        fake.tool_calls([wrong]),
        fake.text("Done, it is on."),
    )
    turn = await converse_streaming(hass, "turn on the kitchen")
    assert turn.speech == HONEST_EN
    assert "Done" not in turn.streamed_text
    assert hass.states.get(kitchen).state == STATE_OFF


async def test_a_question_never_changes_a_device(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """No device named, nothing asked: a device change is refused, not run, and
    what the model says right after it is not spoken (it is asked again)."""
    fake_server.queue(
        fake.tool_calls([TURN_ON]),
        fake.text("The device was turned on."),
        fake.text("Why did the light go out? It was tired."),
    )
    turn = await converse_streaming(hass, "tell me a joke")

    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.speech == "Why did the light go out? It was tired."
    assert "turned on" not in turn.streamed_text
    assert len(fake_server.requests) == 3
    assert fake_server.requests[2]["tool_choice"] == "none"
    (refusal,) = [m for m in fake_server.requests[1]["messages"] if m["role"] == "tool"]
    assert "NotAskedToChangeDevices" in refusal["content"]
    assert "HassTurnOn was not run" in refusal["content"]


async def test_a_tool_call_written_as_text_is_never_spoken(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Seen on the bundled model: "Turn it off again" with nothing before it; the
    change refused, the retry without tools wrote the call as JSON text."""
    fake_server.queue(
        fake.tool_calls([("HassTurnOff", {"name": "Kitchen"})]),
        fake.text("The device was turned off."),
        fake.text('{"name": "HassTurnOff", "arguments": {"name": "Kitchen"}}'),
    )
    turn = await converse_streaming(hass, "Turn it off again")

    assert fake_server.requests[2]["tool_choice"] == "none"
    assert turn.speech == HONEST_EN
    assert turn.streamed_text == HONEST_EN


async def test_a_state_question_needs_a_tool(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """HA recognizes a state question: an answer from memory is asked again."""
    fake_server.queue(
        fake.text("Yes, the kitchen is on."),
        fake.tool_calls([("GetLiveContext", {})]),
        fake.text("No, the kitchen is off."),
    )
    turn = await converse_streaming(hass, "is the kitchen on?")
    assert turn.speech == "No, the kitchen is off."
    assert "Yes" not in turn.streamed_text
    assert fake_server.requests[1]["tool_choice"] == "required"


async def test_an_action_is_replayed_as_the_users_words_only(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """The confirmation without the tool call would teach the model to skip it."""
    ada = await create_user(hass, "Ada")
    fake_server.queue(
        fake.text("Hello Ada."),
        fake.tool_calls([TURN_ON]),
        fake.text("The kitchen is on."),
        fake.tool_calls([("HassTurnOff", {"name": "Kitchen"})]),
        fake.text("The kitchen is off again."),
    )
    await converse_streaming(hass, "hi", user_id=ada)
    await converse_streaming(hass, "turn on the kitchen", user_id=ada)
    # No device named, right after an action: HA reads it with the last target.
    turn = await converse_streaming(hass, "turn it off again", user_id=ada)

    assert turn.speech == "The kitchen is off again."
    assert hass.states.get(kitchen).state == STATE_OFF
    follow_up = fake_server.requests[3]
    assert non_system(follow_up) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello Ada."},
        {"role": "user", "content": "turn on the kitchen"},
        {"role": "user", "content": "turn it off again"},
    ]


async def test_a_statement_after_a_command_changes_nothing(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Seen on the bundled model: "I live in Tarifa, by the sea." right after
    "turn off the kitchen" turned the light on again and said so."""
    ada = await create_user(hass, "Ada")
    turn_off = ("HassTurnOff", {"name": "Kitchen"})
    fake_server.queue(
        fake.tool_calls([TURN_ON]),
        fake.text("The kitchen is on."),
        fake.tool_calls([turn_off]),
        fake.text("The kitchen is off."),
        fake.tool_calls([TURN_ON]),
        fake.text("The kitchen was turned on."),
        fake.text("The kitchen was turned on."),
    )
    await converse_streaming(hass, "turn on the kitchen", user_id=ada)
    await converse_streaming(hass, "turn off the kitchen", user_id=ada)
    turn = await converse_streaming(hass, "I live in Tarifa, by the sea.", user_id=ada)

    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.speech == HONEST_EN
    assert "turned on" not in turn.streamed_text
    (refusal,) = [m for m in fake_server.requests[5]["messages"] if m["role"] == "tool"]
    assert "NotAskedToChangeDevices" in refusal["content"]


async def test_session_buffers_are_per_agent(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    agent_options: dict[str, Any],
) -> None:
    """Two agents (two personas) of one server never share a transcript."""
    hass.config_entries.async_add_subentry(
        config_entry,
        ConfigSubentry(
            data=agent_options,
            subentry_type=SUBENTRY_CONVERSATION,
            title="Pirate",
            unique_id=None,
        ),
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    ada = await create_user(hass, "Ada")
    fake_server.queue(fake.text("Hello."), fake.text("Arr."))
    await converse_streaming(hass, "my first words", user_id=ada)
    await converse_streaming(hass, "ahoy", user_id=ada, agent_id="conversation.pirate")
    assert non_system(fake_server.requests[1]) == [{"role": "user", "content": "ahoy"}]


async def test_a_change_to_another_device_than_named_is_refused(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """The user names the kitchen; the model's call for another device never runs."""
    hass.states.async_set("light.hall", STATE_OFF, {"friendly_name": "Hall"})
    async_expose_entity(hass, "conversation", "light.hall", True)
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Hall"})]),
        fake.tool_calls([TURN_ON]),
        fake.text("Done, the kitchen is on."),
    )
    turn = await converse_streaming(hass, "switch the kitchen please")

    assert hass.states.get("light.hall").state == STATE_OFF
    assert hass.states.get(kitchen).state == STATE_ON
    assert turn.speech == "Done, the kitchen is on."
    (refusal, _) = [
        m for m in fake_server.requests[2]["messages"] if m["role"] == "tool"
    ]
    assert "NotWhatTheUserNamed" in refusal["content"]
    assert "the user spoke of Kitchen" in refusal["content"]


async def test_a_tool_call_the_server_could_not_read_is_asked_again(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """llama.cpp ends the stream with an error event when the model's tool call
    does not parse (seen on the bundled model); a turn that needs a tool asks once more."""
    fake_server.queue(
        fake.stream_error("", "Failed to parse input at pos 12"),
        fake.tool_calls([TURN_ON]),
        fake.text("Done, the kitchen is on."),
    )
    turn = await converse_streaming(hass, "turn on the kitchen")

    assert hass.states.get(kitchen).state == STATE_ON
    assert turn.speech == "Done, the kitchen is on."
    assert len(fake_server.requests) == 3
    assert fake_server.requests[1]["tool_choice"] == "required"


async def test_a_second_unreadable_answer_is_the_spoken_error(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    fake_server.queue(
        fake.stream_error("", "Failed to parse input at pos 12"),
        fake.stream_error("", "Failed to parse input at pos 3"),
    )
    turn = await converse_streaming(hass, "turn on the kitchen")

    assert hass.states.get(kitchen).state == STATE_OFF
    assert "broken answer" in turn.speech
    assert len(fake_server.requests) == 2
