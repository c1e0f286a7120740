"""Config, subentry and options flows against the real fake server over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web
from homeassistant import config_entries
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_LLM_HASS_API, CONF_MODEL, CONF_NAME, CONF_PROMPT
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import entity_registry as er, llm
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import (
    CONF_API_KEY,
    CONF_BASE_URL,
    CONF_EXTRACTION,
    CONF_EXTRACTION_API_KEY,
    CONF_EXTRACTION_BASE_URL,
    CONF_EXTRACTION_MODEL,
    CONF_MAX_FACTS,
    CONF_MAX_TOKENS,
    CONF_SESSION_IDLE_MINUTES,
    CONF_SESSION_MAX_CHARS,
    CONF_SESSION_MAX_MESSAGES,
    CONF_TEMPERATURE,
    CONF_TIMEOUT,
    CONF_TOOL_BIAS,
    DOMAIN,
    EXTRACTION_HOSTED,
    EXTRACTION_LOCAL,
    EXTRACTION_OFF,
    SUBENTRY_CONVERSATION,
)

from . import fake_openai as fake
from .conftest import MODEL, converse, free_port, speech

pytestmark = pytest.mark.usefixtures("unload_entries")


def closed_port_url() -> str:
    """A base URL where nothing listens (connection refused)."""
    return f"http://127.0.0.1:{free_port()}/v1"


@pytest.fixture
async def broken_models_url(socket_enabled: None) -> AsyncIterator[str]:
    """A server whose /v1/models answers HTTP 500 (the fake has no such mode)."""

    async def models(_request: web.Request) -> web.Response:
        return web.json_response(
            {"error": {"message": "boom", "type": "server_error"}}, status=500
        )

    app = web.Application()
    app.router.add_get("/v1/models", models)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield f"http://127.0.0.1:{port}/v1"
    await runner.cleanup()


async def start_user_flow(hass: HomeAssistant) -> dict[str, Any]:
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "user"
    assert result["errors"] == {}
    return dict(result)


def selector_config(result: Any, key: str) -> dict[str, Any]:
    """The selector config of one field of a shown form."""
    for marker, value in result["data_schema"].schema.items():
        if marker == key:
            return dict(value.config)
    raise AssertionError(f"{key} not in the form")


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
    assert result["step_id"] == "model"


async def test_user_flow_invalid_auth(
    hass: HomeAssistant, socket_enabled: None
) -> None:
    """A wrong key (and a missing one) is invalid_auth."""
    async with fake.FakeOpenAIServer(models=[MODEL], api_key="secret") as server:
        result = await start_user_flow(hass)
        for key in ("wrong", ""):
            result = await hass.config_entries.flow.async_configure(
                result["flow_id"], {CONF_BASE_URL: server.base_url, CONF_API_KEY: key}
            )
            assert result["type"] is FlowResultType.FORM
            assert result["errors"] == {"base": "invalid_auth"}
        assert not hass.config_entries.async_entries(DOMAIN)


async def test_user_flow_unknown_error(
    hass: HomeAssistant, broken_models_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A server error while listing models is unknown (and logged)."""
    result = await start_user_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: broken_models_url}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "unknown"}
    assert "answered HTTP 500" in caplog.text


async def test_duplicate_base_url_aborts(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """The same server (even with a trailing slash) cannot be added twice."""
    result = await start_user_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: config_entry.data[CONF_BASE_URL] + "/"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"


# --- agents (conversation subentries) -------------------------------------------


AGENT_FORM = {
    CONF_MODEL: "qwen3-30b",
    CONF_PROMPT: "Be brief.",
    CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
    CONF_TOOL_BIAS: False,
    CONF_TEMPERATURE: 0.2,
    CONF_MAX_TOKENS: 256.0,
}


async def test_add_second_agent(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """A new agent subentry gets its own conversation entity after the reload."""
    result = await hass.config_entries.subentries.async_init(
        (loaded_entry.entry_id, SUBENTRY_CONVERSATION),
        context={"source": config_entries.SOURCE_USER},
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "init"
    models = selector_config(result, CONF_MODEL)["options"]
    assert {o["value"] for o in models} == {MODEL, "qwen3-30b"}

    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {CONF_NAME: "Big brain", **AGENT_FORM}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Big brain"

    new = next(s for s in loaded_entry.subentries.values() if s.title == "Big brain")
    assert dict(new.data) == {**AGENT_FORM, CONF_MAX_TOKENS: 256}
    assert isinstance(new.data[CONF_MAX_TOKENS], int)
    assert loaded_entry.state is ConfigEntryState.LOADED
    entity_id = er.async_get(hass).async_get_entity_id(
        "conversation", DOMAIN, new.subentry_id
    )
    assert entity_id is not None
    assert hass.states.get(entity_id) is not None


async def test_add_agent_without_tools(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """Leaving the LLM API empty stores an empty list (no tools)."""
    result = await hass.config_entries.subentries.async_init(
        (loaded_entry.entry_id, SUBENTRY_CONVERSATION),
        context={"source": config_entries.SOURCE_USER},
    )
    form = {k: v for k, v in AGENT_FORM.items() if k != CONF_LLM_HASS_API}
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {CONF_NAME: "Chatty", **form}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    new = next(s for s in loaded_entry.subentries.values() if s.title == "Chatty")
    assert new.data[CONF_LLM_HASS_API] == []


async def test_reconfigure_agent(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Reconfigure shows the current values and stores the new ones."""
    (subentry_id,) = loaded_entry.subentries
    result = await loaded_entry.start_subentry_reconfigure_flow(hass, subentry_id)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "init"
    # Reconfigure has no name field.
    assert CONF_NAME not in result["data_schema"].schema

    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], AGENT_FORM
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert dict(loaded_entry.subentries[subentry_id].data) == {
        **AGENT_FORM,
        CONF_MAX_TOKENS: 256,
    }
    # The reloaded agent uses the new model.
    assert loaded_entry.state is ConfigEntryState.LOADED
    fake_server.queue(fake.text("Hi."))
    result_turn = await converse(hass, "hello")
    assert speech(result_turn) == "Hi."
    assert fake_server.last_request["model"] == "qwen3-30b"
    assert fake_server.last_request["temperature"] == 0.2
    assert fake_server.last_request["max_tokens"] == 256


async def test_reconfigure_keeps_a_model_the_server_no_longer_lists(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The current model stays selectable when the server stopped listing it."""
    fake_server.models = ["other-model"]
    (subentry_id,) = loaded_entry.subentries
    result = await loaded_entry.start_subentry_reconfigure_flow(hass, subentry_id)
    options = {o["value"] for o in selector_config(result, CONF_MODEL)["options"]}
    assert options == {"other-model", MODEL}


async def test_agent_flows_abort_when_entry_not_loaded(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """Without a connected server no agent can be added or changed."""
    assert config_entry.state is ConfigEntryState.NOT_LOADED
    result = await hass.config_entries.subentries.async_init(
        (config_entry.entry_id, SUBENTRY_CONVERSATION),
        context={"source": config_entries.SOURCE_USER},
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "entry_not_loaded"

    (subentry_id,) = config_entry.subentries
    result = await config_entry.start_subentry_reconfigure_flow(hass, subentry_id)
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "entry_not_loaded"


# --- entry options ------------------------------------------------------------------


SETTINGS = {
    CONF_SESSION_IDLE_MINUTES: 30.0,
    CONF_SESSION_MAX_MESSAGES: 50.0,
    CONF_SESSION_MAX_CHARS: 8000.0,
    CONF_MAX_FACTS: 10.0,
    CONF_EXTRACTION: EXTRACTION_OFF,
    CONF_TIMEOUT: 30.0,
}


async def start_settings(hass: HomeAssistant, entry: MockConfigEntry) -> Any:
    result = await hass.config_entries.options.async_init(entry.entry_id)
    assert result["type"] is FlowResultType.MENU
    assert "settings" in result["menu_options"]
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": "settings"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "settings"
    return result


async def test_options_settings_saved_and_entry_reloaded(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """Settings are stored as numbers of the right type and the entry reloads."""
    old_client = loaded_entry.runtime_data.client
    result = await start_settings(hass, loaded_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], SETTINGS
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert loaded_entry.options == {
        CONF_SESSION_IDLE_MINUTES: 30,
        CONF_SESSION_MAX_MESSAGES: 50,
        CONF_SESSION_MAX_CHARS: 8000,
        CONF_MAX_FACTS: 10,
        CONF_EXTRACTION: EXTRACTION_OFF,
        CONF_TIMEOUT: 30.0,
    }
    assert isinstance(loaded_entry.options[CONF_SESSION_IDLE_MINUTES], int)
    # Reloaded: a new client with the new timeout.
    assert loaded_entry.state is ConfigEntryState.LOADED
    assert loaded_entry.runtime_data.client is not old_client
    assert loaded_entry.runtime_data.client.timeout == 30.0


async def test_options_defaults_include_session_settings(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """A fresh entry's settings form suggests the documented defaults."""
    result = await start_settings(hass, loaded_entry)
    defaults = {
        str(marker): marker.default()
        for marker in result["data_schema"].schema
        if callable(getattr(marker, "default", None))
    }
    assert defaults[CONF_SESSION_IDLE_MINUTES] == 120
    assert defaults[CONF_SESSION_MAX_MESSAGES] == 200


@pytest.fixture
async def hosted_server(socket_enabled: None) -> AsyncIterator[fake.FakeOpenAIServer]:
    """A second server standing in for the hosted extractor (key required)."""
    async with fake.FakeOpenAIServer(
        models=["gpt-4o-mini"], api_key="hosted-key"
    ) as server:
        yield server


async def start_hosted(hass: HomeAssistant, entry: MockConfigEntry) -> Any:
    result = await start_settings(hass, entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {**SETTINGS, CONF_EXTRACTION: EXTRACTION_HOSTED}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "hosted"
    return result


@pytest.mark.parametrize(
    ("url_kind", "api_key", "model", "errors"),
    [
        ("closed", "hosted-key", "gpt-4o-mini", {"base": "cannot_connect"}),
        ("hosted", "wrong", "gpt-4o-mini", {"base": "invalid_auth"}),
        ("broken", "hosted-key", "gpt-4o-mini", {"base": "unknown"}),
        ("hosted", "hosted-key", "gpt-5", {CONF_EXTRACTION_MODEL: "model_not_found"}),
    ],
)
async def test_options_hosted_validation_errors(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    hosted_server: fake.FakeOpenAIServer,
    broken_models_url: str,
    url_kind: str,
    api_key: str,
    model: str,
    errors: dict[str, str],
) -> None:
    """The hosted extractor is checked before anything is saved."""
    urls = {
        "closed": closed_port_url(),
        "hosted": hosted_server.base_url,
        "broken": broken_models_url,
    }
    options_before = dict(loaded_entry.options)
    result = await start_hosted(hass, loaded_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {
            CONF_EXTRACTION_BASE_URL: urls[url_kind],
            CONF_EXTRACTION_API_KEY: api_key,
            CONF_EXTRACTION_MODEL: model,
        },
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "hosted"
    assert result["errors"] == errors
    assert dict(loaded_entry.options) == options_before


async def test_options_hosted_saved(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    hosted_server: fake.FakeOpenAIServer,
) -> None:
    """A working hosted endpoint is stored with the settings."""
    result = await start_hosted(hass, loaded_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {
            CONF_EXTRACTION_BASE_URL: hosted_server.base_url + "/",
            CONF_EXTRACTION_API_KEY: "hosted-key",
            CONF_EXTRACTION_MODEL: "gpt-4o-mini",
        },
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert loaded_entry.options[CONF_EXTRACTION] == EXTRACTION_HOSTED
    assert loaded_entry.options[CONF_EXTRACTION_BASE_URL] == hosted_server.base_url
    assert loaded_entry.options[CONF_EXTRACTION_API_KEY] == "hosted-key"
    assert loaded_entry.options[CONF_EXTRACTION_MODEL] == "gpt-4o-mini"
    assert loaded_entry.state is ConfigEntryState.LOADED


async def test_options_local_extraction_needs_no_endpoint(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """Choosing the local model finishes at the settings step."""
    result = await start_settings(hass, loaded_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {**SETTINGS, CONF_EXTRACTION: EXTRACTION_LOCAL}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert loaded_entry.options[CONF_EXTRACTION] == EXTRACTION_LOCAL
