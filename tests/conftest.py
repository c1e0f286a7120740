"""Fixtures: real HA, the fake OpenAI-compatible server, and a configured entry."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from homeassistant.components import conversation
from homeassistant.const import CONF_LLM_HASS_API, CONF_MODEL, CONF_PROMPT
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import llm
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

# Import before the `hass` fixture puts the plugin's testing_config first on sys.path.
import custom_components.local_assistant  # noqa: F401
from custom_components.local_assistant.const import (
    CONF_API_KEY,
    CONF_BASE_URL,
    CONF_EXTRACTION,
    DOMAIN,
    EXTRACTION_OFF,
    SUBENTRY_CONVERSATION,
)

from .fake_openai import FakeOpenAIServer

MODEL = "qwen3-4b"
AGENT_ID = "conversation.local_assistant"


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(enable_custom_integrations: None) -> None:
    """Let HA load our integration from custom_components."""


@pytest.fixture(autouse=True)
async def setup_ha(hass: HomeAssistant) -> None:
    """`conversation` needs `homeassistant` (exposed entities) set up first."""
    assert await async_setup_component(hass, "homeassistant", {})


@pytest.fixture
async def fake_server(socket_enabled: None) -> AsyncGenerator[FakeOpenAIServer]:
    """A Swama-like server on 127.0.0.1 streaming real SSE."""
    async with FakeOpenAIServer(models=[MODEL, "qwen3-30b"]) as server:
        yield server


@pytest.fixture
def agent_options() -> dict[str, Any]:
    """The agent subentry's data; override in a test module to change it."""
    return {
        CONF_MODEL: MODEL,
        CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
        CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
        "tool_bias": True,
        "temperature": 0.6,
        "max_tokens": 512,
    }


@pytest.fixture
def entry_options() -> dict[str, Any]:
    """Entry options; extraction is off unless a test turns it on."""
    return {CONF_EXTRACTION: EXTRACTION_OFF}


@pytest.fixture
def config_entry(
    hass: HomeAssistant,
    fake_server: FakeOpenAIServer,
    agent_options: dict[str, Any],
    entry_options: dict[str, Any],
) -> MockConfigEntry:
    """An entry for the fake server with one conversation agent."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Local Assistant",
        data={CONF_BASE_URL: fake_server.base_url, CONF_API_KEY: ""},
        options=entry_options,
        subentries_data=[
            {
                "subentry_type": SUBENTRY_CONVERSATION,
                "data": agent_options,
                "title": "Local Assistant",
                "unique_id": None,
            }
        ],
    )
    entry.add_to_hass(hass)
    return entry


@pytest.fixture
async def loaded_entry(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> AsyncGenerator[MockConfigEntry]:
    """The entry, set up; unloaded at the end so no task or timer lingers."""
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    yield config_entry
    if config_entry.state.recoverable:
        await hass.config_entries.async_unload(config_entry.entry_id)
        await hass.async_block_till_done()


async def converse(
    hass: HomeAssistant,
    text: str,
    *,
    user_id: str | None = None,
    device_id: str | None = None,
    conversation_id: str | None = None,
    agent_id: str = AGENT_ID,
) -> conversation.ConversationResult:
    """Run one turn through HA's conversation API."""
    return await conversation.async_converse(
        hass,
        text,
        conversation_id,
        Context(user_id=user_id),
        agent_id=agent_id,
        device_id=device_id,
    )


def speech(result: conversation.ConversationResult) -> str:
    """What the user hears."""
    return str(result.response.speech["plain"]["speech"])
