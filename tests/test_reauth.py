"""Reauthentication (a refused key at set-up asks for a new key) and reconfiguration
(another server URL or key for an existing entry)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any
from unittest.mock import patch

from homeassistant.config_entries import SOURCE_REAUTH, ConfigEntry, ConfigEntryState
from homeassistant.const import CONF_API_KEY
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components import local_assistant
from custom_components.local_assistant.const import (
    CONF_BASE_URL,
    CONF_EXTRACTION,
    CONF_EXTRACTION_API_KEY,
    CONF_EXTRACTION_BASE_URL,
    CONF_EXTRACTION_MODEL,
    DOMAIN,
    EXTRACTION_HOSTED,
    EXTRACTION_OFF,
    SUBENTRY_CONVERSATION,
)
from tests.helpers import fake_openai as fake
from tests.helpers.ha import MODEL, closed_port_url, converse, make_entry, speech
from tests.helpers.memory import create_user, memory_of


async def test_reauth_with_a_new_key(
    hass: HomeAssistant, socket_enabled: None, agent_options: dict[str, Any]
) -> None:
    """Wrong key: error in the form; right key: saved, entry reloaded and loaded."""
    async with fake.FakeOpenAIServer(models=[MODEL], api_key="new-key") as server:
        entry = MockConfigEntry(
            domain=DOMAIN,
            title="Local Assistant",
            data={CONF_BASE_URL: server.base_url, CONF_API_KEY: "old-key"},
            options={CONF_EXTRACTION: EXTRACTION_OFF},
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
        await hass.config_entries.async_setup(entry.entry_id)
        await hass.async_block_till_done()
        assert entry.state is ConfigEntryState.SETUP_ERROR

        (flow,) = entry.async_get_active_flows(hass, {SOURCE_REAUTH})
        result = await hass.config_entries.flow.async_configure(
            flow["flow_id"], {CONF_API_KEY: "still-wrong"}
        )
        assert result["type"] is FlowResultType.FORM
        assert result["step_id"] == "reauth_confirm"
        assert result["errors"] == {"base": "invalid_auth"}
        assert result["description_placeholders"]["base_url"] == server.base_url

        result = await hass.config_entries.flow.async_configure(
            flow["flow_id"], {CONF_API_KEY: "new-key"}
        )
        await hass.async_block_till_done()
        assert result["type"] is FlowResultType.ABORT
        assert result["reason"] == "reauth_successful"
        assert entry.data[CONF_API_KEY] == "new-key"
        assert entry.data[CONF_BASE_URL] == server.base_url
        assert entry.state is ConfigEntryState.LOADED
        assert server.request_headers == []  # only /models was called, no chat
        await hass.config_entries.async_unload(entry.entry_id)
        await hass.async_block_till_done()


async def test_reauth_server_gone(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A server that no longer answers gives cannot_connect, and the form stays;
    once it is back, the same form finishes."""
    result = await loaded_entry.start_reauth_flow(hass)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "reauth_confirm"
    await fake_server.close()
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_API_KEY: ""}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "cannot_connect"}

    await fake_server.start()  # the same port
    fake_server.api_key = "new-key"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_API_KEY: "new-key"}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reauth_successful"
    assert loaded_entry.data[CONF_API_KEY] == "new-key"
    assert loaded_entry.state is ConfigEntryState.LOADED


@pytest.mark.usefixtures("unload_entries")
async def test_reauth_unexpected_answer(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer
) -> None:
    """A server that answers /models with an HTTP error gives `unknown`; once it
    answers again, the key is saved and the entry set up."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Local Assistant",
        data={CONF_BASE_URL: fake_server.base_url, CONF_API_KEY: "k"},
        options={CONF_EXTRACTION: EXTRACTION_OFF},
    )
    entry.add_to_hass(hass)
    fake_server.models_status = 500
    result = await entry.start_reauth_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_API_KEY: "k2"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "unknown"}
    assert entry.data[CONF_API_KEY] == "k"

    fake_server.models_status = None
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_API_KEY: "k2"}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reauth_successful"
    assert entry.data[CONF_API_KEY] == "k2"
    assert entry.state is ConfigEntryState.LOADED


async def test_reconfigure_to_another_server(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A new URL and key: checked, saved, reloaded; agents and title follow."""
    hass.config_entries.async_update_entry(
        loaded_entry, title=f"Local Assistant ({fake_server.base_url})"
    )
    await hass.async_block_till_done()
    subentries = dict(loaded_entry.subentries)
    result = await loaded_entry.start_reconfigure_flow(hass)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "reconfigure"

    async with fake.FakeOpenAIServer(models=[MODEL], api_key="k2") as other:
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_BASE_URL: other.base_url, CONF_API_KEY: "bad"}
        )
        assert result["type"] is FlowResultType.FORM
        assert result["errors"] == {"base": "invalid_auth"}

        result = await hass.config_entries.flow.async_configure(
            result["flow_id"],
            {CONF_BASE_URL: f" {other.base_url}/ ", CONF_API_KEY: "k2"},
        )
        await hass.async_block_till_done()
        assert result["type"] is FlowResultType.ABORT
        assert result["reason"] == "reconfigure_successful"
        assert loaded_entry.data[CONF_BASE_URL] == other.base_url
        assert loaded_entry.data[CONF_API_KEY] == "k2"
        assert loaded_entry.title == f"Local Assistant ({other.base_url})"
        assert dict(loaded_entry.subentries) == subentries
        assert loaded_entry.state is ConfigEntryState.LOADED
        await hass.config_entries.async_unload(loaded_entry.entry_id)
        await hass.async_block_till_done()


async def test_reconfigure_keeps_a_custom_title_and_refuses_duplicates(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Another entry's URL aborts; an unreachable URL is a form error."""
    MockConfigEntry(
        domain=DOMAIN, data={CONF_BASE_URL: "http://other:1/v1", CONF_API_KEY: ""}
    ).add_to_hass(hass)
    result = await loaded_entry.start_reconfigure_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: "http://other:1/v1"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"

    result = await loaded_entry.start_reconfigure_flow(hass)
    await fake_server.close()
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: fake_server.base_url}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "cannot_connect"}
    assert loaded_entry.title == "Local Assistant"

    await fake_server.start()  # back on the same port
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: fake_server.base_url, CONF_API_KEY: "k"}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert loaded_entry.title == "Local Assistant"  # a custom title stays
    assert loaded_entry.data[CONF_API_KEY] == "k"
    assert loaded_entry.state is ConfigEntryState.LOADED


@pytest.fixture
def count_setups() -> Generator[list[str]]:
    """Entry ids, one per set-up of an entry (a reload is one set-up)."""
    calls: list[str] = []
    real = local_assistant.async_setup_entry

    async def counting(hass: HomeAssistant, entry: ConfigEntry) -> bool:
        calls.append(entry.entry_id)
        return await real(hass, entry)

    with patch.object(local_assistant, "async_setup_entry", counting):
        yield calls


async def test_reconfigure_and_reauth_reload_a_loaded_entry_once(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    count_setups: list[str],
) -> None:
    """The update listener reloads a loaded entry; the flow must not reload it again."""
    async with fake.FakeOpenAIServer(models=[MODEL], api_key="k2") as other:
        result = await loaded_entry.start_reconfigure_flow(hass)
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_BASE_URL: other.base_url, CONF_API_KEY: "k2"}
        )
        await hass.async_block_till_done()
        assert result["reason"] == "reconfigure_successful"
        assert count_setups == [loaded_entry.entry_id]
        assert loaded_entry.state is ConfigEntryState.LOADED

        result = await loaded_entry.start_reauth_flow(hass)
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_API_KEY: "k2"}
        )
        await hass.async_block_till_done()
        assert result["reason"] == "reauth_successful"
        # The same key: nothing changed, and a loaded entry needs no reload.
        assert count_setups == [loaded_entry.entry_id]

        other.api_key = "k3"
        result = await loaded_entry.start_reauth_flow(hass)
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_API_KEY: "k3"}
        )
        await hass.async_block_till_done()
        assert result["reason"] == "reauth_successful"
        assert count_setups == [loaded_entry.entry_id] * 2
        assert loaded_entry.data[CONF_API_KEY] == "k3"
        assert loaded_entry.state is ConfigEntryState.LOADED
        await hass.config_entries.async_unload(loaded_entry.entry_id)
        await hass.async_block_till_done()


async def test_reconfigure_sets_up_an_entry_that_is_not_loaded(
    hass: HomeAssistant,
    fake_server: fake.FakeOpenAIServer,
    agent_options: dict[str, Any],
    count_setups: list[str],
) -> None:
    """No listener while set-up fails: the flow itself sets the entry up, once."""
    entry = make_entry(hass, closed_port_url(), agent_options)
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.SETUP_RETRY
    count_setups.clear()

    result = await entry.start_reconfigure_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: fake_server.base_url}
    )
    await hass.async_block_till_done()
    assert result["reason"] == "reconfigure_successful"
    assert count_setups == [entry.entry_id]
    assert entry.state is ConfigEntryState.LOADED
    await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()


# --- a key refused while the entry runs ---------------------------------------------


def reauth_flow(hass: HomeAssistant, entry: MockConfigEntry) -> dict[str, Any]:
    (flow,) = entry.async_get_active_flows(hass, {SOURCE_REAUTH})
    return dict(flow)


async def test_a_key_refused_during_a_reply_starts_reauth(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    count_setups: list[str],
) -> None:
    """The server's key changed while HA runs: the reply fails with a short sentence,
    HA asks for the new key (as openai_conversation does), and the entry works again."""
    fake_server.api_key = "rotated"
    result = await converse(hass, "hello")
    assert result.response.error_code is not None
    assert speech(result) == "The local model server refused the API key."
    await hass.async_block_till_done()

    flow = reauth_flow(hass, loaded_entry)
    assert flow["step_id"] == "reauth_confirm"
    result = await hass.config_entries.flow.async_configure(
        flow["flow_id"], {CONF_API_KEY: "still-wrong"}
    )
    assert result["errors"] == {"base": "invalid_auth"}
    result = await hass.config_entries.flow.async_configure(
        flow["flow_id"], {CONF_API_KEY: "rotated"}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reauth_successful"
    assert loaded_entry.data[CONF_API_KEY] == "rotated"
    assert count_setups == [loaded_entry.entry_id]  # reloaded once, with the new key
    fake_server.queue(fake.text("Hi again."))
    assert speech(await converse(hass, "hello")) == "Hi again."


async def test_a_key_refused_by_the_hosted_extractor_starts_its_reauth(
    hass: HomeAssistant,
    socket_enabled: None,
    fake_server: fake.FakeOpenAIServer,
    agent_options: dict[str, Any],
) -> None:
    """The hosted extractor's key is asked for in its own reauth step; the server's
    own key is left alone."""
    async with fake.FakeOpenAIServer(models=["hosted"], api_key="hosted-key") as hosted:
        entry = make_entry(
            hass,
            fake_server.base_url,
            agent_options,
            {
                CONF_EXTRACTION: EXTRACTION_HOSTED,
                CONF_EXTRACTION_BASE_URL: hosted.base_url,
                CONF_EXTRACTION_API_KEY: "hosted-key",
                CONF_EXTRACTION_MODEL: "hosted",
            },
        )
        assert await hass.config_entries.async_setup(entry.entry_id)
        await hass.async_block_till_done()
        hosted.api_key = "rotated"
        ada = await create_user(hass, "Ada")
        fake_server.queue(fake.text("Nice."))
        assert speech(await converse(hass, "I have a dog", user_id=ada)) == "Nice."
        extractor = memory_of(entry).extractor
        assert extractor is not None
        await extractor.async_wait_idle()
        await hass.async_block_till_done()

        flow = reauth_flow(hass, entry)
        assert flow["step_id"] == "reauth_extraction"
        result = await hass.config_entries.flow.async_configure(
            flow["flow_id"], {CONF_EXTRACTION_API_KEY: "wrong"}
        )
        assert result["errors"] == {"base": "invalid_auth"}
        assert result["description_placeholders"]["base_url"] == hosted.base_url
        result = await hass.config_entries.flow.async_configure(
            flow["flow_id"], {CONF_EXTRACTION_API_KEY: "rotated"}
        )
        await hass.async_block_till_done()
        assert result["type"] is FlowResultType.ABORT
        assert result["reason"] == "reauth_successful"
        assert entry.options[CONF_EXTRACTION_API_KEY] == "rotated"
        assert entry.data[CONF_API_KEY] == ""
        assert entry.state is ConfigEntryState.LOADED
        await hass.config_entries.async_unload(entry.entry_id)
        await hass.async_block_till_done()
