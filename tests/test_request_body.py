"""The exact JSON body the server gets, pinned against the openai SDK.

The agent builds the request body itself and hands it to the SDK as
``extra_body`` with ``messages=[]`` (the typed arguments cost a TypedDict
transform per message on the event loop; docs/benchmarks.md). That relies on
the SDK sending ``extra_body`` as is and letting it win over ``messages=[]``.
These tests hold the SDK to it: what reaches the server is exactly the body we
built, with nothing added, dropped or reordered, for a reply with tools, a tool
round and an AI task with ``response_format``. The SDK's version is bounded in
the manifest (tests/test_hygiene.py); a new major version must pass these first.
"""

from __future__ import annotations

from collections.abc import Generator
import copy
from typing import Any
from unittest.mock import ANY, patch

from homeassistant.components import ai_task
from homeassistant.core import HomeAssistant
import openai.resources.chat.completions as chat_completions
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
import voluptuous as vol

from tests.helpers import fake_openai as fake
from tests.helpers.ha import MODEL, TASK_ENTITY, TASK_OPTIONS, converse

REPLY_KEYS = {
    "model",
    "messages",
    "stream",
    "stream_options",
    "temperature",
    "max_tokens",
    "tools",
}


@pytest.fixture
def built() -> Generator[list[dict[str, Any]]]:
    """The keyword arguments of each chat completion call, as our code made them."""
    calls: list[dict[str, Any]] = []
    real = chat_completions.AsyncCompletions.create

    async def spy(self: Any, **kwargs: Any) -> Any:
        # A copy: the agent extends its message list after each round.
        calls.append(copy.deepcopy(kwargs))
        return await real(self, **kwargs)

    with patch.object(chat_completions.AsyncCompletions, "create", spy):
        yield calls


def sent_as_built(call: dict[str, Any]) -> dict[str, Any]:
    """What the server must get for a streamed call: our body, plus stream."""
    assert call["messages"] == []
    assert call["stream"] is True
    assert set(call) == {"model", "messages", "stream", "extra_body"}
    assert call["model"] == call["extra_body"]["model"]
    return {**call["extra_body"], "stream": True}


async def test_a_reply_with_a_tool_round_is_sent_exactly_as_built(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    built: list[dict[str, Any]],
) -> None:
    """The tool round is a read: the model answers after its result (after a
    change alone, what ran answers and there is no second request)."""
    fake_server.queue(
        fake.tool_calls([("GetLiveContext", {})]),
        fake.text("No, the kitchen is off."),
    )
    await converse(hass, "is the kitchen on?")

    first, second = fake_server.requests
    assert first == sent_as_built(built[0])
    assert second == sent_as_built(built[1])
    # The body itself, key by key: nothing the SDK could have added or dropped.
    assert set(first) == REPLY_KEYS
    assert first == {
        "model": MODEL,
        "stream": True,
        # OpenAI-style servers report prompt and cached tokens only when asked.
        "stream_options": {"include_usage": True},
        "temperature": 0.6,
        "max_tokens": 512,
        # The part that is the same for every speaker, then (after the tools, as
        # the server renders them) what varies: facts, area, time.
        "messages": [
            {"role": "system", "content": ANY},
            {"role": "system", "content": ANY},
            {"role": "user", "content": "is the kitchen on?"},
        ],
        "tools": ANY,
    }
    assert first["tools"]
    for tool in first["tools"]:
        assert set(tool) == {"type", "function"}
        assert tool["type"] == "function"
        assert set(tool["function"]) == {"name", "description", "parameters"}
    assert second["tools"] == first["tools"]
    assert second["messages"][:3] == first["messages"]
    assistant, result = second["messages"][3:]
    assert assistant == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_fake1_0",
                "type": "function",
                "function": {"name": "GetLiveContext", "arguments": "{}"},
            }
        ],
    }
    assert set(result) == {"role", "tool_call_id", "content"}
    assert result["tool_call_id"] == "call_fake1_0"


@pytest.mark.parametrize("agent_options", [{"model": MODEL, "llm_hass_api": []}])
async def test_a_reply_without_tools_has_no_tools_key(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    built: list[dict[str, Any]],
) -> None:
    fake_server.queue(fake.text("Hi."))
    await converse(hass, "hello")
    (body,) = fake_server.requests
    assert body == sent_as_built(built[0])
    assert body == {
        "model": MODEL,
        "stream": True,
        # OpenAI-style servers report prompt and cached tokens only when asked.
        "stream_options": {"include_usage": True},
        "temperature": 0.6,  # the defaults of an agent that never stored them
        "max_tokens": 512,
        "messages": [
            {"role": "system", "content": ANY},
            {"role": "system", "content": ANY},
            {"role": "user", "content": "hello"},
        ],
    }


async def test_an_ai_task_body_carries_its_response_format(
    hass: HomeAssistant,
    task_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    built: list[dict[str, Any]],
) -> None:
    fake_server.queue(fake.text('{"name": "Ada"}'))
    await ai_task.async_generate_data(
        hass,
        task_name="Name",
        entity_id=TASK_ENTITY,
        instructions="Invent a name.",
        structure=vol.Schema({vol.Required("name"): str}),
    )
    (body,) = fake_server.requests
    assert body == sent_as_built(built[0])
    assert body == {
        "model": MODEL,
        "stream": True,
        # OpenAI-style servers report prompt and cached tokens only when asked.
        "stream_options": {"include_usage": True},
        "temperature": TASK_OPTIONS["temperature"],
        "max_tokens": TASK_OPTIONS["max_tokens"],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "Name", "schema": ANY},
        },
        "messages": [
            {"role": "system", "content": ANY},
            {"role": "user", "content": "Invent a name."},
        ],
    }
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["name"]


def _enums(schema: Any) -> list[list[Any]]:
    """Every enum of a JSON schema."""
    if isinstance(schema, dict):
        found = [schema["enum"]] if isinstance(schema.get("enum"), list) else []
        return found + [e for value in schema.values() for e in _enums(value)]
    if isinstance(schema, list):
        return [e for item in schema for e in _enums(item)]
    return []


async def test_tool_enums_are_written_the_same_on_every_start(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """HA builds device-class and domain enums from sets, whose order follows
    the per-start string hashing: sorted, the tools (a cached part of every
    prompt) and a small model's answers stay the same across restarts."""
    fake_server.queue(fake.text("Hello."))
    await converse(hass, "hello there")

    enums = _enums(fake_server.requests[0]["tools"])
    assert any(len(enum) > 2 for enum in enums)
    for enum in enums:
        assert enum == sorted(set(enum), key=str)
