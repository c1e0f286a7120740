"""Flow defects found by a review as an HA core reviewer would (2026-12-06, a
helper session): each test failed before its fix."""

from __future__ import annotations

from typing import Any

from homeassistant import config_entries
from homeassistant.const import CONF_MODEL, CONF_NAME
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import (
    CONF_BASE_URL,
    DOMAIN,
    SUBENTRY_AI_TASK,
    SUBENTRY_CONVERSATION,
)
from tests.helpers import fake_openai as fake
from tests.helpers.ha import MODEL

pytestmark = pytest.mark.usefixtures("unload_entries")


async def _to_model_step(hass: HomeAssistant, base_url: str) -> dict[str, Any]:
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: base_url}
    )
    assert result["step_id"] == "model"
    return dict(result)


async def test_two_flows_for_one_server_make_one_entry(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer
) -> None:
    """The duplicate check ran only in the user step: two flows that passed it
    before either finished both made an entry (quality scale: unique config
    entry)."""
    first = await _to_model_step(hass, fake_server.base_url)
    second = await _to_model_step(hass, fake_server.base_url + "/")
    done = await hass.config_entries.flow.async_configure(
        first["flow_id"], {CONF_MODEL: MODEL}
    )
    assert done["type"] is FlowResultType.CREATE_ENTRY
    again = await hass.config_entries.flow.async_configure(
        second["flow_id"], {CONF_MODEL: MODEL}
    )
    await hass.async_block_till_done()
    assert again["type"] is FlowResultType.ABORT
    assert again["reason"] == "already_configured"
    assert len(hass.config_entries.async_entries(DOMAIN)) == 1


async def test_a_blank_model_name_is_a_form_error(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer
) -> None:
    """The dropdown takes any text: "   " was stripped to "" and saved as the
    model of both agents, so every request named no model."""
    result = await _to_model_step(hass, fake_server.base_url)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "   "}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {CONF_MODEL: "model_not_found"}
    assert not hass.config_entries.async_entries(DOMAIN)


@pytest.mark.parametrize(
    ("subentry_type", "user_input"),
    [
        (
            SUBENTRY_CONVERSATION,
            {
                CONF_NAME: "Blank",
                CONF_MODEL: " ",
                "temperature": 0.5,
                "max_tokens": 256,
            },
        ),
        (
            SUBENTRY_AI_TASK,
            {
                CONF_NAME: "Blank",
                CONF_MODEL: " ",
                "temperature": 0.5,
                "max_tokens": 256,
            },
        ),
    ],
)
async def test_a_blank_model_name_is_a_form_error_for_a_new_agent(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    subentry_type: str,
    user_input: dict[str, Any],
) -> None:
    result = await hass.config_entries.subentries.async_init(
        (loaded_entry.entry_id, subentry_type),
        context={"source": config_entries.SOURCE_USER},
    )
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], user_input
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {CONF_MODEL: "model_not_found"}
    assert all(sub.title != "Blank" for sub in loaded_entry.subentries.values())
