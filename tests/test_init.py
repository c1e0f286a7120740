"""Entry set-up, retry, unload and reload against the real fake server."""

from __future__ import annotations

from datetime import timedelta

from homeassistant.components import conversation
from homeassistant.components.conversation.agent_manager import async_get_agent
from homeassistant.config_entries import (
    SOURCE_REAUTH,
    ConfigEntryState,
    ConfigSubentry,
    ConfigSubentryData,
)
from homeassistant.const import CONF_MODEL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.local_assistant import LocalAssistantData
from custom_components.local_assistant.const import (
    CONF_TIMEOUT,
    DOMAIN,
    SUBENTRY_CONVERSATION,
)
from tests.helpers import fake_openai as fake
from tests.helpers.ha import AGENT_ID, MODEL, converse, free_port, make_entry, speech

pytestmark = pytest.mark.usefixtures("unload_entries")


async def test_setup_and_unload(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Set-up checks the server, exposes the agent; unload removes it."""
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.LOADED
    assert isinstance(config_entry.runtime_data, LocalAssistantData)
    assert hass.states.get(AGENT_ID) is not None

    assert await hass.config_entries.async_unload(config_entry.entry_id)
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.NOT_LOADED
    assert async_get_agent(hass, AGENT_ID) is None


async def test_agent_entity_and_device(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    entity_registry: er.EntityRegistry,
    device_registry: dr.DeviceRegistry,
) -> None:
    """The agent streams, controls the home, and hangs off its subentry's device."""
    (subentry,) = loaded_entry.subentries.values()
    agent = async_get_agent(hass, AGENT_ID)
    assert isinstance(agent, conversation.ConversationEntity)
    assert agent.supports_streaming is True
    assert (
        agent.supported_features & conversation.ConversationEntityFeature.CONTROL
    ) == conversation.ConversationEntityFeature.CONTROL

    entity = entity_registry.async_get(AGENT_ID)
    assert entity is not None
    assert entity.unique_id == subentry.subentry_id
    assert entity.config_subentry_id == subentry.subentry_id
    device = device_registry.async_get_device(
        identifiers={(DOMAIN, subentry.subentry_id)}
    )
    assert device is not None
    assert entity.device_id == device.id
    assert device.name == subentry.title
    assert device.model == subentry.data[CONF_MODEL]
    assert device.entry_type is dr.DeviceEntryType.SERVICE
    assert (
        subentry.subentry_id in device.config_entries_subentries[loaded_entry.entry_id]
    )


@pytest.mark.parametrize("agent_options", [{CONF_MODEL: MODEL}])
async def test_agent_without_llm_api_has_no_control(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """An agent without Assist tools does not claim to control the home."""
    agent = async_get_agent(hass, AGENT_ID)
    assert isinstance(agent, conversation.ConversationEntity)
    assert not agent.supported_features & conversation.ConversationEntityFeature.CONTROL


async def test_not_ready_when_server_down_then_recovers(
    hass: HomeAssistant,
    socket_enabled: None,
    agent_options: dict[str, object],
) -> None:
    """Server down at start: SETUP_RETRY; once it listens, the retry loads the entry."""
    port = free_port()
    entry = make_entry(hass, f"http://127.0.0.1:{port}/v1", agent_options)
    assert not await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.SETUP_RETRY
    assert entry.reason is not None
    assert "unreachable" in entry.reason
    assert hass.states.get(AGENT_ID) is None

    async with fake.FakeOpenAIServer(models=[MODEL], port=port) as server:
        async_fire_time_changed(hass, dt_util.utcnow() + timedelta(minutes=2))
        # The retry runs as a background task of the entry.
        await hass.async_block_till_done(wait_background_tasks=True)
        assert entry.state is ConfigEntryState.LOADED
        server.queue(fake.text("Back online."))
        assert speech(await converse(hass, "hello")) == "Back online."
        await hass.config_entries.async_unload(entry.entry_id)
        await hass.async_block_till_done()


async def test_not_ready_recovers_on_reload(
    hass: HomeAssistant,
    socket_enabled: None,
    agent_options: dict[str, object],
) -> None:
    """A manual reload also picks the server up once it is running."""
    port = free_port()
    entry = make_entry(hass, f"http://127.0.0.1:{port}/v1", agent_options)
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.SETUP_RETRY

    async with fake.FakeOpenAIServer(models=[MODEL], port=port):
        assert await hass.config_entries.async_reload(entry.entry_id)
        await hass.async_block_till_done()
        assert entry.state is ConfigEntryState.LOADED
        await hass.config_entries.async_unload(entry.entry_id)
        await hass.async_block_till_done()


async def test_key_refused_starts_reauth(
    hass: HomeAssistant,
    socket_enabled: None,
    agent_options: dict[str, object],
) -> None:
    """A refused key is an auth failure: no retries, a reauth flow (test_reauth.py)."""
    async with fake.FakeOpenAIServer(models=[MODEL], api_key="secret") as server:
        entry = make_entry(hass, server.base_url, agent_options)
        await hass.config_entries.async_setup(entry.entry_id)
        await hass.async_block_till_done()
        assert entry.state is ConfigEntryState.SETUP_ERROR
        assert entry.reason is not None
        assert "refused the API key" in entry.reason
        (flow,) = entry.async_get_active_flows(hass, {SOURCE_REAUTH})
        assert flow["step_id"] == "reauth_confirm"


async def test_reload_when_agent_added_and_removed(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    entity_registry: er.EntityRegistry,
    agent_options: dict[str, object],
) -> None:
    """The update listener reloads: a new subentry gets an entity, a removed one loses it."""
    old_data = loaded_entry.runtime_data
    subentry = ConfigSubentryData(
        subentry_type=SUBENTRY_CONVERSATION,
        data={**agent_options, CONF_MODEL: "qwen3-30b"},
        title="Second agent",
        unique_id=None,
    )
    new = ConfigSubentry(**subentry)
    assert hass.config_entries.async_add_subentry(loaded_entry, new)
    await hass.async_block_till_done()

    assert loaded_entry.state is ConfigEntryState.LOADED
    assert loaded_entry.runtime_data is not old_data
    entity_id = entity_registry.async_get_entity_id(
        "conversation", DOMAIN, new.subentry_id
    )
    assert entity_id is not None
    assert entity_id != AGENT_ID
    assert hass.states.get(entity_id) is not None
    assert hass.states.get(AGENT_ID) is not None

    assert hass.config_entries.async_remove_subentry(loaded_entry, new.subentry_id)
    await hass.async_block_till_done()
    assert loaded_entry.state is ConfigEntryState.LOADED
    assert entity_registry.async_get(entity_id) is None
    assert hass.states.get(entity_id) is None
    assert hass.states.get(AGENT_ID) is not None


async def test_reload_when_options_change(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """Changed options reload the entry with a client using the new timeout."""
    old_data = loaded_entry.runtime_data
    hass.config_entries.async_update_entry(
        loaded_entry, options={**loaded_entry.options, CONF_TIMEOUT: 7.0}
    )
    await hass.async_block_till_done()
    assert loaded_entry.state is ConfigEntryState.LOADED
    assert loaded_entry.runtime_data is not old_data
    assert loaded_entry.runtime_data.client.timeout == 7.0
