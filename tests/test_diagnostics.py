"""Diagnostics: settings and counts; never keys, fact text or what was said."""

from __future__ import annotations

from collections.abc import AsyncGenerator
import json
from typing import Any

from homeassistant.const import CONF_PROMPT
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.local_assistant.const import (
    CONF_API_KEY,
    CONF_BASE_URL,
    CONF_DEVICE_PEOPLE,
    CONF_EXTRACTION,
    CONF_EXTRACTION_API_KEY,
    CONF_EXTRACTION_BASE_URL,
    CONF_EXTRACTION_MODEL,
    EXTRACTION_HOSTED,
)
from custom_components.local_assistant.memory.store import storage_key
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse
from tests.helpers.memory import (
    create_user,
    facts_answer,
    memory_of,
    responder,
    storage_entry,
)

LOCAL_KEY = "sk-local-SECRET-1"
HOSTED_KEY = "sk-hosted-SECRET-2"
HOSTED_MODEL = "hosted-extractor"
REDACTED = "**REDACTED**"


@pytest.fixture
async def hosted_server(socket_enabled: None) -> AsyncGenerator[fake.FakeOpenAIServer]:
    async with fake.FakeOpenAIServer(
        models=[HOSTED_MODEL], api_key=HOSTED_KEY
    ) as server:
        yield server


@pytest.fixture
def agent_options(agent_options: dict[str, Any]) -> dict[str, Any]:
    """A personal prompt: it may name people, so it is redacted too."""
    return {**agent_options, CONF_PROMPT: "You serve PROMPT-PRIVATE-Ada's household."}


async def test_diagnostics_redact_keys_and_hold_no_personal_text(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    hosted_server: fake.FakeOpenAIServer,
) -> None:
    ada = await create_user(hass, "Ada")
    hass.config_entries.async_update_entry(
        config_entry,
        data={CONF_BASE_URL: fake_server.base_url, CONF_API_KEY: LOCAL_KEY},
        options={
            CONF_EXTRACTION: EXTRACTION_HOSTED,
            CONF_EXTRACTION_BASE_URL: hosted_server.base_url,
            CONF_EXTRACTION_API_KEY: HOSTED_KEY,
            CONF_EXTRACTION_MODEL: HOSTED_MODEL,
            CONF_DEVICE_PEOPLE: {"satellite-PRIVATE-id": "person.ada"},
        },
    )
    hass_storage[storage_key(config_entry.entry_id)] = storage_entry(
        {f"user:{ada}": ["FACT-PRIVATE-cat is called Miso."]}
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    hosted_server.responder = responder(
        lambda _b: facts_answer(
            ["FACT-PRIVATE-cat is called Miso.", "FACT-PRIVATE-extracted."]
        )
    )
    fake_server.queue(fake.text("ANSWER-PRIVATE-Miso is a fine name."))
    await converse(hass, "UTTERANCE-PRIVATE-my cat is Miso", user_id=ada)
    extractor = memory_of(config_entry).extractor
    assert extractor is not None
    await extractor.async_wait_idle()

    diagnostics = await get_diagnostics_for_config_entry(
        hass, hass_client, config_entry
    )
    dumped = json.dumps(diagnostics)

    assert diagnostics["data"][CONF_API_KEY] == REDACTED
    assert diagnostics["options"][CONF_EXTRACTION_API_KEY] == REDACTED
    assert diagnostics["options"][CONF_DEVICE_PEOPLE] == REDACTED
    assert diagnostics["agents"][0]["data"][CONF_PROMPT] == REDACTED
    for secret in ("SECRET", "PRIVATE", "Miso", ada):
        assert secret not in dumped, secret

    memory = diagnostics["memory"]
    assert memory == {  # counts only
        "sessions": {
            "speakers": 1,
            "messages": 2,
            "chars": memory["sessions"]["chars"],
        },
        "facts": {"speakers": 1, "facts": 2, "history": 0},
        "extraction": {
            "pending_exchanges": 0,
            "runs": 1,
            "skipped": 0,
            "calls": 1,
            "call_seconds": memory["extraction"]["call_seconds"],
            "updated": 1,
            "added": 1,
            "rewritten": 0,
            "ungrounded": 0,
            "failed": 0,
            "given_up": 0,
            "rejected_answers": 0,
        },
    }
    assert await hass.config_entries.async_unload(config_entry.entry_id)
