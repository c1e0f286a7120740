"""Fixtures: real HA, the fake OpenAI-compatible server, and a configured entry."""

from __future__ import annotations

from collections.abc import AsyncGenerator
import socket
from typing import Any

from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_LLM_HASS_API, CONF_MODEL, CONF_PROMPT, STATE_OFF
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import llm
from homeassistant.setup import async_setup_component
from homeassistant.util import slugify
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


def free_port() -> int:
    """A loopback port nothing listens on (now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def make_entry(
    hass: HomeAssistant,
    base_url: str,
    agent_options: dict[str, Any],
    options: dict[str, Any] | None = None,
) -> MockConfigEntry:
    """An entry for `base_url` with one conversation agent, added to hass."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Local Assistant",
        data={CONF_BASE_URL: base_url, CONF_API_KEY: ""},
        options={CONF_EXTRACTION: EXTRACTION_OFF} if options is None else options,
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
def config_entry(
    hass: HomeAssistant,
    fake_server: FakeOpenAIServer,
    agent_options: dict[str, Any],
    entry_options: dict[str, Any],
) -> MockConfigEntry:
    """An entry for the fake server with one conversation agent."""
    return make_entry(hass, fake_server.base_url, agent_options, entry_options)


@pytest.fixture
async def unload_entries(hass: HomeAssistant) -> AsyncGenerator[None]:
    """Unload whatever a test left loaded or retrying, so no timer lingers."""
    yield
    for entry in hass.config_entries.async_entries(DOMAIN):
        if entry.state in (ConfigEntryState.LOADED, ConfigEntryState.SETUP_RETRY):
            await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()


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


async def async_setup_exposed_lights(hass: HomeAssistant, *names: str) -> list[str]:
    """Real template lights, each switching its own input_boolean, exposed to Assist.

    Only the lights are exposed, so a tool call can only reach them. Returns
    their entity ids (`light.<slug of name>`), all off.
    """
    slugs = [slugify(name) for name in names]
    assert await async_setup_component(
        hass, "input_boolean", {"input_boolean": {f"{s}_power": {} for s in slugs}}
    )

    def light(name: str, slug: str) -> dict[str, Any]:
        target = {"entity_id": f"input_boolean.{slug}_power"}
        return {
            "name": name,
            "unique_id": f"test_{slug}",
            "state": f"{{{{ is_state('input_boolean.{slug}_power', 'on') }}}}",
            "turn_on": {"action": "input_boolean.turn_on", "target": target},
            "turn_off": {"action": "input_boolean.turn_off", "target": target},
        }

    assert await async_setup_component(
        hass,
        "template",
        {
            "template": [
                {"light": [light(n, s) for n, s in zip(names, slugs, strict=True)]}
            ]
        },
    )
    await hass.async_block_till_done()
    entity_ids = [f"light.{slug}" for slug in slugs]
    for slug, entity_id in zip(slugs, entity_ids, strict=True):
        assert hass.states.get(entity_id).state == STATE_OFF
        async_expose_entity(hass, "conversation", entity_id, True)
        async_expose_entity(hass, "conversation", f"input_boolean.{slug}_power", False)
    return entity_ids
