"""The server's config flow (config_flow.py) against the real fake server over HTTP.

The agent subentry flows are tested in tests/flows/test_agent.py, the options
flow in tests/flows/test_options.py, reauth and reconfigure in test_reauth.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from homeassistant import config_entries
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_API_KEY, CONF_LLM_HASS_API, CONF_MODEL, CONF_PROMPT
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import entity_registry as er, llm
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import (
    CONF_BASE_URL,
    CONF_MAX_TOKENS,
    CONF_TEMPERATURE,
    CONF_TOOL_BIAS,
    DOMAIN,
    SUBENTRY_CONVERSATION,
)
from tests.helpers import fake_openai as fake
from tests.helpers.ha import MODEL, closed_port_url, make_entry, selector_config

pytestmark = pytest.mark.usefixtures("unload_entries")


async def start_user_flow(hass: HomeAssistant) -> dict[str, Any]:
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "user"
    assert result["errors"] == {}
    return dict(result)


async def test_user_flow_creates_entry_with_agent(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer
) -> None:
    """Server check, then a dropdown of its models, then an entry with one agent."""
    result = await start_user_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: f"  {fake_server.base_url}/ "}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "model"
    model_config = selector_config(result, CONF_MODEL)
    assert [o["value"] for o in model_config["options"]] == [MODEL, "qwen3-30b"]
    assert model_config["custom_value"] is True

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "qwen3-30b"}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    entry = result["result"]
    # The URL is normalized so the duplicate check works.
    assert entry.data == {CONF_BASE_URL: fake_server.base_url, CONF_API_KEY: ""}
    # One conversation agent and one AI Task agent, on the same model.
    subentries = {s.subentry_type: s for s in entry.subentries.values()}
    assert set(subentries) == {SUBENTRY_CONVERSATION, "ai_task_data"}
    assert len(entry.subentries) == 2
    assert subentries["ai_task_data"].data[CONF_MODEL] == "qwen3-30b"
    agent = subentries[SUBENTRY_CONVERSATION]
    assert agent.data[CONF_MODEL] == "qwen3-30b"
    assert agent.data[CONF_LLM_HASS_API] == [llm.LLM_API_ASSIST]
    assert agent.data[CONF_TOOL_BIAS] is True
    assert CONF_PROMPT in agent.data
    assert CONF_TEMPERATURE in agent.data
    assert CONF_MAX_TOKENS in agent.data
    assert entry.state is ConfigEntryState.LOADED
    assert (
        er.async_get(hass).async_get_entity_id(
            "conversation", DOMAIN, agent.subentry_id
        )
        is not None
    )


async def test_model_step_accepts_a_typed_model_name(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer
) -> None:
    """A model the server does not list can still be typed."""
    result = await start_user_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: fake_server.base_url}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: " my-own-model "}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    models = {s.data[CONF_MODEL] for s in result["result"].subentries.values()}
    assert models == {"my-own-model"}


async def test_user_flow_keeps_a_valid_api_key(
    hass: HomeAssistant, socket_enabled: None
) -> None:
    """The right key passes and is stored in the entry data."""
    async with fake.FakeOpenAIServer(models=[MODEL], api_key="secret") as server:
        result = await start_user_flow(hass)
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"],
            {CONF_BASE_URL: server.base_url, CONF_API_KEY: "secret"},
        )
        assert result["step_id"] == "model"
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_MODEL: MODEL}
        )
        await hass.async_block_till_done()
        assert result["type"] is FlowResultType.CREATE_ENTRY
        assert result["result"].data[CONF_API_KEY] == "secret"
        assert result["result"].state is ConfigEntryState.LOADED
        await hass.config_entries.async_unload(result["result"].entry_id)


async def test_user_flow_cannot_connect_then_recovers(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer
) -> None:
    """Nothing listening gives cannot_connect; a working URL then continues."""
    result = await start_user_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: closed_port_url()}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "user"
    assert result["errors"] == {"base": "cannot_connect"}

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: fake_server.base_url}
    )
    await finish_with_a_model(hass, result)


async def finish_with_a_model(hass: HomeAssistant, result: Any) -> MockConfigEntry:
    """The model step after the server step; the created, loaded entry."""
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "model"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: MODEL}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    entry = result["result"]
    assert entry.state is ConfigEntryState.LOADED
    return entry


async def test_user_flow_invalid_auth(
    hass: HomeAssistant, socket_enabled: None
) -> None:
    """A wrong key (and a missing one) is invalid_auth; the right one then goes on."""
    async with fake.FakeOpenAIServer(models=[MODEL], api_key="secret") as server:
        result = await start_user_flow(hass)
        for key in ("wrong", ""):
            result = await hass.config_entries.flow.async_configure(
                result["flow_id"], {CONF_BASE_URL: server.base_url, CONF_API_KEY: key}
            )
            assert result["type"] is FlowResultType.FORM
            assert result["errors"] == {"base": "invalid_auth"}
        assert not hass.config_entries.async_entries(DOMAIN)

        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_BASE_URL: server.base_url, CONF_API_KEY: "secret"}
        )
        entry = await finish_with_a_model(hass, result)
        assert entry.data[CONF_API_KEY] == "secret"
        await hass.config_entries.async_unload(entry.entry_id)


async def test_user_flow_unknown_error(
    hass: HomeAssistant,
    fake_server: fake.FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A server error while listing models is unknown (and logged); once the server
    lists its models again, the same URL goes on to an entry."""
    fake_server.models_status = 500
    result = await start_user_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: fake_server.base_url}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "unknown"}
    assert "answered HTTP 500" in caplog.text

    fake_server.models_status = None
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: fake_server.base_url}
    )
    await finish_with_a_model(hass, result)


SPELLINGS: dict[str, Callable[[str], str]] = {
    "trailing_slash": lambda url: f"{url}/",
    "spaces_and_slashes": lambda url: f"  {url}// ",
    "upper_case_scheme": lambda url: url.replace("http://", "HTTP://"),
    "upper_case_path_kept": lambda url: url.replace("/v1", "/V1"),
}


@pytest.mark.parametrize("spelling", SPELLINGS)
async def test_duplicate_base_url_aborts(
    hass: HomeAssistant, config_entry: MockConfigEntry, spelling: str
) -> None:
    """The same server, however its URL is written, cannot be added twice (a path
    in other case is another URL: servers may tell paths apart)."""
    url = config_entry.data[CONF_BASE_URL]  # http://127.0.0.1:PORT/v1
    result = await start_user_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: SPELLINGS[spelling](url)}
    )
    if spelling == "upper_case_path_kept":
        assert result["type"] is FlowResultType.FORM  # checked as a new server
        return
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"
    assert len(hass.config_entries.async_entries(DOMAIN)) == 1


async def test_an_old_entry_spelled_otherwise_is_still_a_duplicate(
    hass: HomeAssistant,
    socket_enabled: None,
    agent_options: dict[str, Any],
) -> None:
    """An entry saved before URLs were normalized (upper-case scheme and host, a
    default port, a trailing slash) still blocks the same server."""
    make_entry(hass, "HTTP://Mac.Local:80/v1/", agent_options)
    result = await start_user_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: "http://mac.local/v1"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"
