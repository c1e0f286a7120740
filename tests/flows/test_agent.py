"""The agent subentry flows (flows/agent.py): add and reconfigure agents of a loaded entry.

Conversation agents and AI Task agents, against the real fake server over HTTP.
"""

from __future__ import annotations

from homeassistant import config_entries
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_LLM_HASS_API, CONF_MODEL, CONF_NAME, CONF_PROMPT
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import entity_registry as er, llm
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import (
    CONF_KITE_MAX_WIND_KN,
    CONF_KITE_MIN_WIND_KN,
    CONF_MAX_TOKENS,
    CONF_TEMPERATURE,
    CONF_TOOL_BIAS,
    DOMAIN,
    SUBENTRY_AI_TASK,
    SUBENTRY_CONVERSATION,
)
from tests.helpers import fake_openai as fake
from tests.helpers.ha import MODEL, converse, selector_config, speech, task_subentry_id

pytestmark = pytest.mark.usefixtures("unload_entries")


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
    # HA's own intents carry out what they recognize unless the user unticks it.
    assert dict(new.data) == {**AGENT_FORM, CONF_MAX_TOKENS: 256, "local_intents": True}
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
        "local_intents": True,
    }
    # The reloaded agent uses the new model.
    assert loaded_entry.state is ConfigEntryState.LOADED
    fake_server.queue(fake.text("Hi."))
    result_turn = await converse(hass, "hello")
    assert speech(result_turn) == "Hi."
    assert fake_server.last_request["model"] == "qwen3-30b"
    assert fake_server.last_request["temperature"] == 0.2
    assert fake_server.last_request["max_tokens"] == 256


async def test_typed_model_name_is_stored_without_spaces(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A model name typed with spaces around it is stored bare, as the config flow
    and the AI Task flow store it, so the agent's turns reach the model."""
    result = await hass.config_entries.subentries.async_init(
        (loaded_entry.entry_id, SUBENTRY_CONVERSATION),
        context={"source": config_entries.SOURCE_USER},
    )
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {CONF_NAME: "Typed", **AGENT_FORM, CONF_MODEL: " qwen3-30b "}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    new = next(s for s in loaded_entry.subentries.values() if s.title == "Typed")
    assert new.data[CONF_MODEL] == "qwen3-30b"

    (first_id,) = (s for s in loaded_entry.subentries if s != new.subentry_id)
    result = await loaded_entry.start_subentry_reconfigure_flow(hass, first_id)
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {**AGENT_FORM, CONF_MODEL: f"{MODEL}\t "}
    )
    await hass.async_block_till_done()
    assert loaded_entry.subentries[first_id].data[CONF_MODEL] == MODEL
    fake_server.queue(fake.text("Hi."))
    assert speech(await converse(hass, "hello")) == "Hi."
    assert fake_server.last_request["model"] == MODEL


async def test_upside_down_kite_range_is_refused_then_saved(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """A maximum wind below the minimum is a field error, for a new agent and a
    reconfigured one; corrected, the agent is saved."""
    result = await hass.config_entries.subentries.async_init(
        (loaded_entry.entry_id, SUBENTRY_CONVERSATION),
        context={"source": config_entries.SOURCE_USER},
    )
    kite = {CONF_KITE_MIN_WIND_KN: 30, CONF_KITE_MAX_WIND_KN: 15}
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {CONF_NAME: "Kite", **AGENT_FORM, **kite}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {CONF_KITE_MAX_WIND_KN: "kite_range"}
    # What was typed stays in the form.
    suggested = {
        str(key): key.description["suggested_value"]
        for key in result["data_schema"].schema
        if key.description and "suggested_value" in key.description
    }
    assert suggested[CONF_KITE_MAX_WIND_KN] == 15
    assert suggested[CONF_NAME] == "Kite"

    kite[CONF_KITE_MAX_WIND_KN] = 35
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {CONF_NAME: "Kite", **AGENT_FORM, **kite}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    new = next(s for s in loaded_entry.subentries.values() if s.title == "Kite")
    assert new.data[CONF_KITE_MIN_WIND_KN] == 30
    assert new.data[CONF_KITE_MAX_WIND_KN] == 35

    result = await loaded_entry.start_subentry_reconfigure_flow(hass, new.subentry_id)
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {**AGENT_FORM, **kite, CONF_KITE_MAX_WIND_KN: 10}
    )
    assert result["errors"] == {CONF_KITE_MAX_WIND_KN: "kite_range"}
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {**AGENT_FORM, **kite, CONF_KITE_MIN_WIND_KN: 12}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert loaded_entry.subentries[new.subentry_id].data[CONF_KITE_MIN_WIND_KN] == 12


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


# --- AI Task agents ---------------------------------------------------------------


async def test_add_and_reconfigure_an_ai_task_agent(
    hass: HomeAssistant,
    task_entry: MockConfigEntry,
    entity_registry: er.EntityRegistry,
) -> None:
    """The subentry flow offers the server's models, creates and updates an agent."""
    result = await hass.config_entries.subentries.async_init(
        (task_entry.entry_id, SUBENTRY_AI_TASK), context={"source": "user"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "init"
    schema = result["data_schema"].schema
    model_key = next(k for k in schema if k == CONF_MODEL)
    options = schema[model_key].config["options"]
    assert [o["value"] for o in options] == [MODEL, "qwen3-30b"]

    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {
            CONF_NAME: "Big task",
            CONF_MODEL: " qwen3-30b ",
            CONF_TEMPERATURE: 0.1,
            CONF_MAX_TOKENS: 2048.0,
        },
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    new = next(s for s in task_entry.subentries.values() if s.title == "Big task")
    assert new.subentry_type == SUBENTRY_AI_TASK
    assert dict(new.data) == {
        CONF_MODEL: "qwen3-30b",
        CONF_TEMPERATURE: 0.1,
        CONF_MAX_TOKENS: 2048,
    }
    assert task_entry.state is ConfigEntryState.LOADED
    entity_id = entity_registry.async_get_entity_id("ai_task", DOMAIN, new.subentry_id)
    assert entity_id is not None
    assert hass.states.get(entity_id) is not None

    result = await task_entry.start_subentry_reconfigure_flow(hass, new.subentry_id)
    assert result["type"] is FlowResultType.FORM
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {CONF_MODEL: MODEL, CONF_TEMPERATURE: 0.5, CONF_MAX_TOKENS: 100},
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert dict(task_entry.subentries[new.subentry_id].data) == {
        CONF_MODEL: MODEL,
        CONF_TEMPERATURE: 0.5,
        CONF_MAX_TOKENS: 100,
    }


async def test_reconfigure_while_the_server_is_down(
    hass: HomeAssistant, task_entry: MockConfigEntry, fake_server: fake.FakeOpenAIServer
) -> None:
    """No model list: the form still opens, offering the configured model."""
    await fake_server.close()
    result = await task_entry.start_subentry_reconfigure_flow(
        hass, task_subentry_id(task_entry)
    )
    assert result["type"] is FlowResultType.FORM
    schema = result["data_schema"].schema
    model_key = next(k for k in schema if k == CONF_MODEL)
    assert [o["value"] for o in schema[model_key].config["options"]] == [MODEL]


async def test_flow_aborts_when_entry_not_loaded(
    hass: HomeAssistant, task_entry: MockConfigEntry
) -> None:
    """Like the conversation agent flow, an unloaded server cannot get agents."""
    await hass.config_entries.async_unload(task_entry.entry_id)
    await hass.async_block_till_done()
    result = await hass.config_entries.subentries.async_init(
        (task_entry.entry_id, SUBENTRY_AI_TASK), context={"source": "user"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "entry_not_loaded"
