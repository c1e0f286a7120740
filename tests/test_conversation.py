"""The agent end to end: real HA, real openai client, real SSE from the fake server."""

from __future__ import annotations

from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
from pytest_homeassistant_custom_component.common import MockConfigEntry

from . import fake_openai as fake
from .conftest import converse, speech


async def test_streams_a_plain_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A plain answer arrives and think text never reaches the user."""
    fake_server.queue(fake.text("The sea is calm today.", think="the user asks"))
    result = await converse(hass, "hello")
    assert result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert speech(result) == "The sea is calm today."
    body = fake_server.last_request
    assert body["stream"] is True
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][0]["content"].endswith("/no_think")
    assert body["messages"][-1] == {"role": "user", "content": "hello"}
    assert all("content" in message for message in body["messages"])
