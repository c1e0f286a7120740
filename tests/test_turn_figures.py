"""Per-turn figures through HA: each server's usage format, a debug line, diagnostics.

The fake server keeps one cached prompt and reports it the way llama.cpp
(`timings`), OpenAI-style servers (`usage.prompt_tokens_details`, when asked
with `stream_options`) or Swama (`usage` on the finish chunk) do.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
import json
import logging
from typing import Any

from homeassistant.components import ai_task
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from tests.helpers import fake_openai as fake
from tests.helpers.ha import MODEL, TASK_ENTITY, converse

LOGGER_NAME = "custom_components.local_assistant"


@pytest.fixture(params=["llama.cpp", "openai", "swama"])
async def fake_server(
    request: pytest.FixtureRequest, socket_enabled: None
) -> AsyncGenerator[fake.FakeOpenAIServer]:
    """The conftest server, reporting its figures in each server's way."""
    async with fake.FakeOpenAIServer(
        models=[MODEL, "qwen3-30b"], usage_format=request.param
    ) as server:
        yield server


async def test_each_turn_has_its_figures(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    task_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A plain reply, a turn with a tool round and an AI task each get their
    figures. The tool round is a read, so the model answers after its result
    in a second completion (after a change alone, what ran answers)."""
    caplog.set_level(logging.DEBUG, logger=LOGGER_NAME)
    fake_server.queue(
        fake.text("SECRET-ANSWER Hello."),
        fake.tool_calls([("GetLiveContext", {})]),
        fake.text("SECRET-ANSWER It is off."),
        fake.text("SECRET-TASK A note."),
    )
    await converse(hass, "SECRET-QUESTION hello", device_id="satellite")
    await converse(hass, "SECRET-QUESTION is the kitchen on", device_id="satellite")
    await ai_task.async_generate_data(
        hass, task_name="Note", entity_id=TASK_ENTITY, instructions="SECRET-TASK"
    )

    # Every reply asks for usage (OpenAI-style servers send it only then).
    for body in fake_server.requests:
        assert body["stream_options"] == {"include_usage": True}
    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, task_entry)
    turns = diagnostics["recent_turns"]
    assert [turn["kind"] for turn in turns] == ["conversation"] * 2 + ["ai_task"]
    assert [turn["completions"] for turn in turns] == [1, 2, 1]
    swama = fake_server.usage_format == "swama"
    for turn, request in zip(turns, (0, 1, 3), strict=True):
        read, cached = fake_server.prompt_reads[request]
        assert turn["prompt_tokens"] == read + cached
        assert turn["cached_tokens"] == (None if swama else cached)
        assert turn["first_token_ms"] >= 0
        assert turn["first_text_ms"] >= turn["first_token_ms"] or request == 1
        assert turn["total_ms"] >= turn["first_text_ms"]
    # The second turn found the first one's prompt cached.
    if not swama:
        assert 0 < turns[1]["reread"] < 0.1
        assert turns[1]["read_tokens_all_completions"] == sum(
            read for read, _cached in fake_server.prompt_reads[1:3]
        )
    if fake_server.usage_format == "llama.cpp":
        assert turns[0]["server_prompt_ms"] is not None

    lines = [r.getMessage() for r in caplog.records if " turn: " in r.getMessage()]
    assert len(lines) == 3
    assert lines[1].startswith("conversation turn: 2 completion(s), prompt ")
    assert "first token" in lines[1]
    assert "total" in lines[1]
    assert "SECRET" not in json.dumps(turns)
    assert not [line for line in lines if "SECRET" in line]


async def test_failed_turns_and_fast_answers_add_no_figures(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A turn is counted when a completion ran; an error still gives its times."""
    fake_server.queue(fake.error(500))
    await converse(hass, "hello")
    turns: list[dict[str, Any]] = loaded_entry.runtime_data.turns.recent()
    assert len(turns) == 1
    assert turns[0]["prompt_tokens"] is None
    assert turns[0]["total_ms"] is not None
