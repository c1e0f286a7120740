"""Diagnostics: settings and counts; never keys, fact text or what was said."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import timedelta
from http import HTTPStatus
import json
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_API_KEY, CONF_PROMPT
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component
import httpx
import openai
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.local_assistant.const import (
    CONF_BASE_URL,
    CONF_DEVICE_PEOPLE,
    CONF_EXTRACTION,
    CONF_EXTRACTION_API_KEY,
    CONF_EXTRACTION_BASE_URL,
    CONF_EXTRACTION_MODEL,
    DOMAIN,
    EXTRACTION_HOSTED,
)
from custom_components.local_assistant.memory.store import storage_key
from custom_components.local_assistant.server.health import async_report, issue_id
from tests.helpers import fake_openai as fake
from tests.helpers.ha import closed_port_url, converse, make_entry
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
            "dropped": 0,
            "copied_examples": 0,
            "over_limit": 0,
            "refused_edits": 0,
            "failed": 0,
            "given_up": 0,
            "rejected_answers": 0,
            "repeats": 0,
            "removals_not_taken": 0,
        },
    }
    # The prompt cache and the last turns: numbers only.
    assert diagnostics["prompt_cache"]["speakers_remembered"] == 1
    assert diagnostics["prompt_cache"]["keep_model_loaded"] is False
    [turn] = diagnostics["recent_turns"]
    assert turn["kind"] == "conversation"
    assert turn["completions"] == 1
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def diagnostics_file(
    hass: HomeAssistant, hass_client: ClientSessionGenerator, entry: MockConfigEntry
) -> dict[str, Any]:
    """The whole downloaded file (its `data` and HA's `issues`), as a user gets it."""
    assert await async_setup_component(hass, "diagnostics", {})
    client = await hass_client()
    response = await client.get(f"/api/diagnostics/config_entry/{entry.entry_id}")
    assert response.status == HTTPStatus.OK, await response.text()
    return dict(await response.json())


@pytest.mark.usefixtures("unload_entries")
async def test_diagnostics_while_the_server_is_down(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    agent_options: dict[str, Any],
    freezer: FrozenDateTimeFactory,
) -> None:
    """Server down at start (setup_retry): diagnostics download, with the outage in
    them and no credentials, also none from inside the URLs."""
    down_url = closed_port_url().replace("http://", "http://ada:URLPASS-SECRET@")
    entry = make_entry(
        hass,
        f"{down_url}?token=QUERY-SECRET",
        agent_options,
        {
            CONF_EXTRACTION: EXTRACTION_HOSTED,
            CONF_EXTRACTION_BASE_URL: "https://bob:HOSTED-SECRET@api.example.com/v1",
            CONF_EXTRACTION_API_KEY: HOSTED_KEY,
            CONF_EXTRACTION_MODEL: HOSTED_MODEL,
        },
    )
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.SETUP_RETRY
    # Down for over 10 minutes and 3 attempts: the repair issue is up (HA lists it in
    # the diagnostics file; its text, shown under Repairs, names the URL redacted).
    for _ in range(2):
        freezer.tick(timedelta(minutes=6))
        async_report(
            hass, entry, openai.APIConnectionError(request=httpx.Request("GET", "x"))
        )
    # The clock moved past HA's setup retry: fire it now and let it finish (the
    # server is still down; HA runs the retry as a background task), so it
    # cannot run while the file is read.
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert entry.state is ConfigEntryState.SETUP_RETRY
    issue = ir.async_get(hass).async_get_issue(DOMAIN, issue_id(entry.entry_id))
    assert issue is not None
    assert issue.translation_placeholders is not None
    assert issue.translation_placeholders["base_url"].startswith(f"http://{REDACTED}@")

    payload = await diagnostics_file(hass, hass_client, entry)
    dumped = json.dumps(payload)
    for secret in ("URLPASS", "QUERY-SECRET", "HOSTED-SECRET", HOSTED_KEY, "ada:"):
        assert secret not in dumped, secret

    diagnostics = payload["data"]
    assert diagnostics["state"] == "setup_retry"
    assert diagnostics["data"][CONF_BASE_URL].startswith(f"http://{REDACTED}@127.0.0.1")
    assert diagnostics["options"][CONF_EXTRACTION_BASE_URL] == (
        f"https://{REDACTED}@api.example.com/v1"
    )
    assert diagnostics["server"] == {
        "reachable": False,
        "failed_attempts": diagnostics["server"]["failed_attempts"],
        "down_since": diagnostics["server"]["down_since"],
    }
    assert diagnostics["server"]["failed_attempts"] >= 3
    assert diagnostics["memory"] is None  # only while loaded
    assert [i["issue_id"] for i in payload["issues"]] == [issue.issue_id]
