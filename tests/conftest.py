"""Fixtures for every test folder: real HA, the fake model server, configured entries.

Plain helpers (no fixtures) are in tests/helpers/.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Generator
from pathlib import Path
from typing import Any
from unittest.mock import patch

from aiohttp import web
from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import (
    CONF_API_KEY,
    CONF_LLM_HASS_API,
    CONF_MODEL,
    CONF_PROMPT,
    STATE_OFF,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
from homeassistant.helpers.storage import Store
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

# Import before the `hass` fixture puts the plugin's testing_config first on sys.path.
import custom_components.local_assistant  # noqa: F401
from custom_components.local_assistant.const import (
    CONF_BASE_URL,
    CONF_EXTRACTION,
    DOMAIN,
    EXTRACTION_OFF,
    SUBENTRY_AI_TASK,
    SUBENTRY_CONVERSATION,
)
from tests.helpers.fake_openai import FakeOpenAIServer
from tests.helpers.ha import MODEL, TASK_OPTIONS, make_entry, models_only_server

# The real Store methods, captured before any `hass` fixture mocks them (see storage_dir).
_REAL_LOAD = Store._async_load
_REAL_WRITE = Store._async_write_data
_REAL_REMOVE = Store.async_remove


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
    """The agent subentry's data; override in a test module to change it.

    HA's own intents are off here so that commands reach the (fake) model: most
    tests are about the model's tool loop. tests/turn/test_local_intents.py
    tests the default, where HA carries out the commands it recognizes.
    """
    return {
        CONF_MODEL: MODEL,
        CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
        CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
        "tool_bias": True,
        "local_intents": False,
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


@pytest.fixture
async def task_entry(
    hass: HomeAssistant,
    fake_server: FakeOpenAIServer,
    agent_options: dict[str, Any],
) -> AsyncGenerator[MockConfigEntry]:
    """An entry with a conversation agent and an AI Task agent, loaded."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Local Assistant",
        data={CONF_BASE_URL: fake_server.base_url, CONF_API_KEY: ""},
        options={CONF_EXTRACTION: EXTRACTION_OFF},
        subentries_data=[
            {
                "subentry_type": SUBENTRY_CONVERSATION,
                "data": agent_options,
                "title": "Local Assistant",
                "unique_id": None,
            },
            {
                "subentry_type": SUBENTRY_AI_TASK,
                "data": TASK_OPTIONS,
                "title": "Local Assistant AI Task",
                "unique_id": None,
            },
        ],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    yield entry
    if entry.state.recoverable:
        await hass.config_entries.async_unload(entry.entry_id)
        await hass.async_block_till_done()


@pytest.fixture
async def broken_models_url(socket_enabled: None) -> AsyncIterator[str]:
    """A server whose /v1/models answers HTTP 500 (the fake has no such mode)."""

    async def models(_request: web.Request) -> web.Response:
        return web.json_response(
            {"error": {"message": "boom", "type": "server_error"}}, status=500
        )

    async with models_only_server(models) as url:
        yield url


@pytest.fixture
async def kitchen(hass: HomeAssistant) -> str:
    """An exposed switchable entity for the tool loop tests."""
    assert await async_setup_component(
        hass, "input_boolean", {"input_boolean": {"kitchen": {"name": "Kitchen"}}}
    )
    await hass.async_block_till_done()
    async_expose_entity(hass, "conversation", "input_boolean.kitchen", True)
    assert hass.states.get("input_boolean.kitchen").state == STATE_OFF
    return "input_boolean.kitchen"


@pytest.fixture
def storage_dir(hass: HomeAssistant, tmp_path: Path) -> Generator[Path]:
    """Real `.storage` files under a temporary config dir."""
    hass.config.config_dir = str(tmp_path)
    with (
        patch.object(Store, "_async_load", _REAL_LOAD),
        patch.object(Store, "_async_write_data", _REAL_WRITE),
        patch.object(Store, "async_remove", _REAL_REMOVE),
    ):
        yield tmp_path / ".storage"
