"""Faults around the conversation turn (set-up, flows, memory admin), found by
an independent hunt (2026-12-06, a helper session), each with its fix.

Each docstring says what went wrong before the fix, how a user met it and why
it mattered.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web
from homeassistant import config_entries
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_API_KEY
from homeassistant.core import Context, HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.local_assistant.const import (
    CONF_BASE_URL,
    DOMAIN,
)
from custom_components.local_assistant.memory.voice import REMEMBER_TOOL_NAME
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse, make_entry, models_only_server, speech
from tests.helpers.memory import create_user, fact_texts, memory_of

pytestmark = pytest.mark.usefixtures("unload_entries")


@pytest.fixture
async def html_models_url(socket_enabled: None) -> AsyncIterator[str]:
    """A base URL whose /v1/models answers 200 with an HTML page.

    What a reverse proxy's maintenance or login page, or a web UI mounted
    where the API used to be, answers.
    """

    async def models(_request: web.Request) -> web.Response:
        return web.Response(
            text="<html><body>Service starting</body></html>",
            content_type="text/html",
        )

    async with models_only_server(models) as url:
        yield url


@pytest.mark.parametrize(
    "typed_url",
    [
        # A typo in the port: a letter l for the digit 1.
        "http://127.0.0.1:28l00/v1",
        # An IPv6 address with its closing bracket forgotten.
        "http://[::1:28100/v1",
    ],
)
async def test_user_flow_typo_in_url_is_a_form_error_not_a_crash(
    hass: HomeAssistant, typed_url: str
) -> None:
    """A mistyped server URL crashes the config flow instead of showing an error.

    ``async_step_user`` normalizes the URL (``urlsplit`` raises ValueError on an
    unclosed IPv6 bracket) and ``async_check_server`` builds the OpenAI client
    outside its ``try`` (httpx raises ``InvalidURL`` on a non-numeric port).
    The exception leaves the step, so the user who mistypes the URL in the
    "Connect to your local model server" form gets HA's generic "Unknown error
    occurred" and a traceback in the log instead of the form again with
    "Cannot reach the server. Check the URL". The same happens in the
    reconfigure form and the hosted extractor's options step. The standard:
    bad input gets a clear error.
    """
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: typed_url, CONF_API_KEY: ""}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "user"
    assert result["errors"] == {"base": "cannot_connect"}


async def test_setup_with_html_models_answer_retries_instead_of_failing_for_good(
    hass: HomeAssistant, html_models_url: str, agent_options: dict[str, Any]
) -> None:
    """A server answering /models with a page instead of JSON breaks set-up for good.

    ``async_setup_entry`` catches only ``openai.OpenAIError`` around
    ``async_list_models``. When the URL answers 200 with HTML (a reverse proxy's
    "starting" or login page while the model server restarts, a web UI on the
    same port), the OpenAI client raises ``AttributeError`` (``'str' object has
    no attribute '_set_private_attributes'``). HA logs "Error setting up entry"
    with a traceback and leaves the entry in SETUP_ERROR: it is never retried,
    so after a Home Assistant restart during the proxy's maintenance the
    assistant stays dead until the user reloads it by hand. A malformed answer
    should be a clear, retried ConfigEntryNotReady (the config flow already
    treats it as "unknown").
    """
    entry = make_entry(hass, html_models_url, agent_options)
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.SETUP_RETRY


async def test_fact_remembered_by_voice_while_the_entry_reloads_is_kept(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A fact the assistant confirms remembering is lost when a reload overlaps.

    The memory tools are bound to the ``Memory`` of the set-up that started
    the turn (``memory.tools`` -> ``MemoryTool._memory``). When the entry
    reloads while the local model is still answering (someone saves the
    options, adds an agent, completes a reauth; a 4B model takes seconds to
    answer), the model's ``local_memory_remember`` call lands in the OLD,
    already shut-down memory: its ``FactStore`` was closed and flushed, yet it
    accepts the fact and schedules a delayed write of its stale snapshot
    (nothing refuses saves after ``async_close``). The user hears "Noted."
    but the fact is not in the live memory, so it is never in a prompt, and the
    old store's late write races the new store over the same file. Stored
    facts must not be lost, and unload must release the old store.
    """
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    gate = asyncio.Event()
    replies = [
        fake.tool_calls([(REMEMBER_TOOL_NAME, {"fact": "I like jazz."})]),
        fake.text("Noted."),
    ]

    async def responder(_body: dict[str, Any]) -> fake.Reply:
        if len(replies) == 2:
            await gate.wait()  # the model is still reading the prompt
        return replies.pop(0)

    fake_server.responder = responder
    # Not a hass task: async_block_till_done in the reload must not wait for it.
    turn = asyncio.ensure_future(converse(hass, "Remember I like jazz.", user_id=ada))
    await fake_server.wait_for_requests(1)
    assert await hass.config_entries.async_reload(loaded_entry.entry_id)
    assert loaded_entry.state is ConfigEntryState.LOADED
    gate.set()
    result = await turn
    await hass.async_block_till_done()

    assert speech(result) == "Noted."
    assert fact_texts(memory_of(loaded_entry), speaker) == ["I like jazz."]


async def test_add_fact_with_the_person_key_of_a_linked_person_reaches_that_person(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """``add_fact`` accepts ``person:person.ada`` for Ada, but stores it where she never reads.

    ``async_resolve_speaker_ref`` maps the person entity ``person.ada`` to her
    user's key (``user:<id>``, the key her app, chat and mapped satellite talk
    as), but takes a ``person:person.ada`` key as is because the person exists.
    The integration never talks as that key for a person linked to a user,
    so an admin automation that adds "Is allergic to nuts" for
    ``person:person.ada`` (the key format the service's own description and
    the options UI show for people) gets a success response, yet the fact
    never reaches Ada's prompt and ``list_facts`` for ``person.ada`` does not
    show it. A key that names a real person must reach that person's memory
    (or be refused), not create a phantom book.
    """
    admin = Context(user_id=hass_admin_user.id)
    ada = await create_user(hass, "Ada")
    hass.states.async_set(
        "person.ada", "home", {"user_id": ada, "friendly_name": "Ada"}
    )
    await hass.services.async_call(
        DOMAIN,
        "add_fact",
        {
            "config_entry_id": loaded_entry.entry_id,
            "speaker": "person:person.ada",
            "text": "Is allergic to nuts.",
        },
        blocking=True,
        return_response=True,
        context=admin,
    )
    listed = await hass.services.async_call(
        DOMAIN,
        "list_facts",
        {"config_entry_id": loaded_entry.entry_id, "speaker": "person.ada"},
        blocking=True,
        return_response=True,
        context=admin,
    )
    assert [fact["text"] for fact in listed["facts"]] == ["Is allergic to nuts."]
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == [
        "Is allergic to nuts."
    ]
