"""A question the live data answers is answered from it when the model's answer is not said.

Real HA (the `hass` fixture), the real openai client, real HTTP and SSE from
the fake server of tests/helpers; the sea and weather entities are template
entities (tests/helpers/live.py). Issue 21: the bundled model's answers to
such questions were often said back words, broken tool calls or a refused
change, and the user heard an apology where the data answered the question.
"""

from __future__ import annotations

from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.llm.spoken import speakable
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse_streaming, spoken_sentence
from tests.helpers.live import (
    LIVE_OPTIONS,
    NOW,
    async_setup_live_entities,
    live_lines,
)

# "Will it rain tomorrow?" in five languages, and the label of tomorrow's line.
TOMORROW_QUESTIONS = [
    ("en", "Will it rain tomorrow?", "Tomorrow:"),
    ("es", "¿Va a llover mañana?", "Mañana:"),
    ("de", "Wird es morgen regnen?", "Morgen:"),
    ("fr", "Est-ce qu'il va pleuvoir demain ?", "Demain"),
    ("nl", "Gaat het morgen regenen?", "Morgen:"),
]


@pytest.fixture
def agent_options() -> dict[str, Any]:
    return dict(LIVE_OPTIONS)


@pytest.fixture(autouse=True)
def frozen(freezer: FrozenDateTimeFactory) -> FrozenDateTimeFactory:
    """The forecast's days are today, tomorrow and the days after."""
    freezer.move_to(NOW)
    return freezer


@pytest.fixture(autouse=True)
async def live_entities(hass: HomeAssistant, frozen: FrozenDateTimeFactory) -> None:
    await async_setup_live_entities(hass)


def said_line(body: dict[str, Any], label: str) -> str:
    """The live line of a request with ``label``, as the agent says it."""
    return speakable(next(line for line in live_lines(body) if line.startswith(label)))


@pytest.mark.parametrize(("language", "question", "label"), TOMORROW_QUESTIONS)
async def test_a_question_answered_with_its_own_words_gets_the_line_it_names(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    question: str,
    label: str,
) -> None:
    """The model says the question back, asked again the same: tomorrow's line
    is said, in the conversation's language, not "the model gave no answer"."""
    fake_server.queue(fake.text(question), fake.text(question))
    turn = await converse_streaming(hass, question, language=language)
    line = said_line(fake_server.requests[0], label)
    assert turn.speech == turn.streamed_text == line
    assert turn.result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert len(fake_server.requests) == 2


@pytest.mark.parametrize(("language", "question", "label"), TOMORROW_QUESTIONS)
async def test_a_broken_answer_to_such_a_question_gets_the_line(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    question: str,
    label: str,
) -> None:
    """llama.cpp could not read the model's tool call, twice (an error event
    before any text): the line the question names, not "a broken answer"."""
    fake_server.queue(
        fake.stream_error("", "Failed to parse tool call"),
        fake.stream_error("", "Failed to parse tool call"),
    )
    turn = await converse_streaming(hass, question, language=language)
    assert turn.speech == said_line(fake_server.requests[0], label)


async def test_a_placeholder_answer_gets_the_line(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """HA's prompt shows "[value from tool]"; the model copies it. Never said:
    tomorrow's line is, where "Sorry, I couldn't check that" was."""
    fake_server.queue(fake.text("Tomorrow it will be [value from tool]."))
    turn = await converse_streaming(hass, "Will it rain tomorrow?")
    assert turn.speech == said_line(fake_server.requests[0], "Tomorrow:")
    assert "[" not in turn.streamed_text


async def test_the_line_is_not_replayed_but_the_words_are(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Its values go stale and the next answers would copy it."""
    question = "Will it rain tomorrow?"
    fake_server.queue(fake.text(question), fake.text(question))
    first = await converse_streaming(hass, question)
    line = said_line(fake_server.requests[0], "Tomorrow:")
    assert first.speech == line
    fake_server.queue(fake.text("You're welcome."))
    await converse_streaming(
        hass, "Thanks.", first.result.conversation_id, language="en"
    )
    replayed = [
        m["content"]
        for m in fake_server.requests[-1]["messages"]
        if m["role"] != "system"
    ]
    assert replayed == [question, "Thanks."]
    assert line not in replayed


@pytest.mark.parametrize(
    ("language", "words", "why"),
    [
        ("en", "What should I cook tonight?", "names no line"),
        ("en", "Tell me a joke about tomorrow.", "asks nothing"),
        ("de", "Erzähl mir einen Witz über morgen.", "asks nothing"),
        ("en", "Is the porch light on tomorrow?", "names a device of the home"),
    ],
)
async def test_otherwise_the_error_is_said(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    words: str,
    why: str,
) -> None:
    """No line answers words that ask nothing, name none, or ask about the home."""
    hass.states.async_set("light.porch_light", "off", {"friendly_name": "Porch light"})
    fake_server.queue(fake.text(words), fake.text(words))
    turn = await converse_streaming(hass, words, language=language)
    assert turn.speech == spoken_sentence("no_answer", language), why
    assert turn.result.response.response_type is intent.IntentResponseType.ERROR


@pytest.mark.parametrize(
    ("reply", "key"),
    [
        (lambda: fake.error(500, "Fake crash"), "model_error"),
        (lambda: fake.error(429, "Fake busy"), "model_busy"),
    ],
)
async def test_the_servers_faults_are_still_said(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    reply: Any,
    key: str,
) -> None:
    """The server's faults are the user's to know: never hidden behind the data."""
    fake_server.queue(reply(), reply(), reply())
    turn = await converse_streaming(hass, "Will it rain tomorrow?")
    assert turn.speech == spoken_sentence(key)
