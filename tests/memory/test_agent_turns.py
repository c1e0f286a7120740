"""The agent tells memory what a turn was: commands and questions cost no extraction.

Through the real agent and HA's Assist API: a sentence HA's own intents carry out
(local intents on, the default), a command the model carried out with a tool
call, and a device sentence HA does not recognize that the model acted on. Each
stays in the session buffer; none costs an extraction call. A personal
statement next to them still does.
"""

from __future__ import annotations

from typing import Any

from homeassistant.const import STATE_ON
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import CONF_EXTRACTION, EXTRACTION_LOCAL
from custom_components.local_assistant.memory.extraction import FactExtractor
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse, speech
from tests.helpers.memory import (
    create_user,
    extraction_requests,
    fact_texts,
    facts_answer,
    memory_of,
    responder,
    said,
)


@pytest.fixture
def entry_options() -> dict[str, Any]:
    """Extraction on the agent's own server."""
    return {CONF_EXTRACTION: EXTRACTION_LOCAL}


@pytest.fixture
def agent_options(
    agent_options: dict[str, Any], request: pytest.FixtureRequest
) -> dict[str, Any]:
    """The test's `local_intents` (off unless parametrized)."""
    return {**agent_options, "local_intents": getattr(request, "param", False)}


def extractor_of(entry: MockConfigEntry) -> FactExtractor:
    extractor = memory_of(entry).extractor
    assert extractor is not None
    return extractor


def learn_anything(body: dict[str, Any]) -> fake.Reply:
    """An extractor that would store whatever it is sent (so a skip shows)."""
    return facts_answer([f"The user said: {said(body)}"])


@pytest.mark.parametrize("agent_options", [True], indirect=True)
async def test_a_command_ha_carried_out_costs_no_extraction(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """HA recognized and ran it: the agent passes its intent, nothing is sent."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(learn_anything)
    await converse(hass, "turn on the kitchen", user_id=ada)
    assert hass.states.get(kitchen).state == STATE_ON
    extractor = extractor_of(loaded_entry)
    await extractor.async_wait_idle()
    assert fake_server.requests == []
    assert extractor.stats.skipped == 1
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == []
    agent = next(iter(loaded_entry.subentries))
    assert [t.text for t in memory_of(loaded_entry).history(agent, f"user:{ada}")] == [
        "turn on the kitchen"
    ]


@pytest.mark.parametrize(
    "sentence",
    [
        "turn on the kitchen",  # HA recognizes it (HassTurnOn), the model acts
        "the kitchen please, now",  # no intent: the tool call alone tells
    ],
)
async def test_a_turn_with_a_tool_call_costs_no_extraction(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    sentence: str,
) -> None:
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(learn_anything)
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.text("The kitchen is on."),
    )
    await converse(hass, sentence, user_id=ada)
    assert hass.states.get(kitchen).state == STATE_ON
    extractor = extractor_of(loaded_entry)
    await extractor.async_wait_idle()
    assert extraction_requests(fake_server) == []
    assert extractor.stats.skipped == 1

    # A personal statement afterwards is sent, and only its words.
    await converse(hass, "My dog is called Bolt.", user_id=ada)
    await extractor.async_wait_idle()
    assert [said(body) for body in extraction_requests(fake_server)] == [
        "My dog is called Bolt."
    ]
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == [
        "The user said: My dog is called Bolt."
    ]


async def test_a_sentence_ha_recognizes_costs_no_extraction(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """HA's intent alone (HassNevermind: the model answers, no tool) tells."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(
        learn_anything, chat=lambda _b: fake.text("Okay.")
    )
    await converse(hass, "Never mind", user_id=ada)
    extractor = extractor_of(loaded_entry)
    await extractor.async_wait_idle()
    assert len(fake_server.requests) == 1  # the reply, no extraction
    assert extraction_requests(fake_server) == []
    assert extractor.stats.skipped == 1
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == []


async def test_a_tool_call_the_guard_refused_still_gets_extraction(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """The bundled model calls tools after personal statements too; the turn
    guard refuses the change, and the statement is still a statement."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(learn_anything)
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.text("Bolt is a nice name."),
    )
    await converse(hass, "My dog is called Bolt.", user_id=ada)
    assert hass.states.get(kitchen).state == "off"
    extractor = extractor_of(loaded_entry)
    await extractor.async_wait_idle()
    assert extractor.stats.skipped == 0
    assert [said(body) for body in extraction_requests(fake_server)] == [
        "My dog is called Bolt."
    ]
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == [
        "The user said: My dog is called Bolt."
    ]
    # The buffer still replays it as a tool turn: the user's words only.
    agent = next(iter(loaded_entry.subentries))
    assert [t.text for t in memory_of(loaded_entry).history(agent, f"user:{ada}")] == [
        "My dog is called Bolt."
    ]


async def test_a_refused_action_in_a_turn_that_named_nothing_still_gets_extraction(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Right after a command the bundled model acts on a statement as if it
    were a follow-up; the guard refuses (HA cannot read it as one), and the
    statement is still sent to the extractor."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(learn_anything)
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.text("The kitchen is on."),
        fake.tool_calls([("HassTurnOff", {"name": "Kitchen"})]),
        fake.text("A pilot, how exciting."),
    )
    await converse(hass, "turn on the kitchen", user_id=ada)
    await converse(hass, "My wife Elena works as a pilot.", user_id=ada)
    assert hass.states.get(kitchen).state == "on"  # the guard refused the change
    extractor = extractor_of(loaded_entry)
    await extractor.async_wait_idle()
    assert [said(body) for body in extraction_requests(fake_server)] == [
        "My wife Elena works as a pilot."
    ]


async def test_a_statement_met_with_device_calls_still_gets_extraction(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Seen on the bundled model: "My dog is called Bolt." got a device call.
    The words ask for no change: the call is refused, the model answers once
    more without tools, and the statement is still read for facts."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(learn_anything)
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.text("Bolt is a lovely name."),
    )
    result = await converse(hass, "My dog is called Bolt.", user_id=ada)
    assert speech(result) == "Bolt is a lovely name."
    assert hass.states.get(kitchen).state == "off"
    extractor = extractor_of(loaded_entry)
    await extractor.async_wait_idle()
    assert [said(body) for body in extraction_requests(fake_server)] == [
        "My dog is called Bolt."
    ]


async def test_a_failed_reply_still_gets_extraction(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The model broke its answer (llama.cpp's error event mid-stream): the user
    hears a short error, the buffer gets nothing, the statement is still read."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(learn_anything)
    fake_server.queue(fake.stream_error(""), fake.stream_error(""))
    result = await converse(hass, "My parrot is called Kiwi.", user_id=ada)
    assert result.response.error_code is not None
    extractor = extractor_of(loaded_entry)
    await extractor.async_wait_idle()
    assert [said(body) for body in extraction_requests(fake_server)] == [
        "My parrot is called Kiwi."
    ]
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == [
        "The user said: My parrot is called Kiwi."
    ]
    agent = next(iter(loaded_entry.subentries))
    assert memory_of(loaded_entry).history(agent, f"user:{ada}") == []


async def test_a_device_request_withheld_twice_costs_no_extraction(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """HA read a command; the model claimed it without a tool: the user hears
    that nothing changed, and a command is no statement about the user."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(learn_anything)
    fake_server.queue(fake.text("The kitchen is on."))
    result = await converse(hass, "turn on the kitchen", user_id=ada)
    assert result.response.error_code is not None
    assert hass.states.get(kitchen).state == "off"
    extractor = extractor_of(loaded_entry)
    await extractor.async_wait_idle()
    assert extraction_requests(fake_server) == []
