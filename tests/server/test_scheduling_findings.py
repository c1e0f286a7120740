"""Background work and the entry's life around a reply, on a one-request-at-a-
time server: defects found by an independent hunt (2026-12-06, a helper session
that read no benchmark set). Each test failed before its fix.

Left (docs/benchmarks.md, twenty-ninth pass): a voice warm-up is dropped while
a re-warm of the same model waits or any reply (an AI task too) runs.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from homeassistant.components import ai_task, conversation
from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

import custom_components.local_assistant as integration
from custom_components.local_assistant.const import CONF_EXTRACTION, EXTRACTION_LOCAL
from tests.helpers import fake_openai as fake
from tests.helpers.ha import AGENT_ID, TASK_ENTITY, converse, speech
from tests.helpers.memory import create_user

LOCAL = {CONF_EXTRACTION: EXTRACTION_LOCAL}


def kinds(server: fake.FakeOpenAIServer) -> list[str]:
    return [
        "warm"
        if body.get("max_tokens") == 1
        else "reply"
        if body.get("stream")
        else "extraction"
        for body in server.requests
    ]


async def generate(hass: HomeAssistant) -> None:
    await ai_task.async_generate_data(
        hass, task_name="Note", entity_id=TASK_ENTITY, instructions="Write a note."
    )


async def pause(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    keeper = entry.runtime_data.prompt_cache
    for _ in range(3):
        await hass.async_block_till_done()
        await keeper.async_wait_idle()
        async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=3))
        await hass.async_block_till_done()
    await hass.async_block_till_done()
    await keeper.async_wait_idle()


async def test_a_failed_warm_up_forgets_the_replys_prompt(
    hass: HomeAssistant,
    task_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Pipeline warm-up, then the turn at once; the warm-up then fails.

    The failure dropped what the keeper knew the server holds, also the
    reply's prompt sent after it, so an extra re-warm went out though the
    server held the next turn's prefix (the reply's prompt and answer).
    """
    ada = await create_user(hass, "Ada")
    release = asyncio.Event()

    async def answer(body: dict[str, Any]) -> fake.Reply:
        if body.get("max_tokens") == 1:
            await release.wait()
            return fake.error(503, "busy")
        return fake.text("Fine.")

    fake_server.responder = answer
    await converse(hass, "hello", user_id=ada)
    await generate(hass)  # an automation's AI task takes the cache
    await conversation.async_prepare_agent(hass, AGENT_ID, "en")
    await fake_server.wait_for_requests(3)  # the warm-up is on the server
    await converse(hass, "hello again", user_id=ada)
    release.set()
    await pause(hass, task_entry)
    assert kinds(fake_server) == ["reply", "reply", "warm", "reply"], kinds(fake_server)


async def _a_reply_held_on_the_server(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer
) -> tuple[asyncio.Event, asyncio.Task[Any]]:
    """A satellite's turn whose reply the server holds until the event is set."""
    release = asyncio.Event()

    async def answer(body: dict[str, Any]) -> fake.Reply:
        await release.wait()
        return fake.text("Fine, thanks.")

    fake_server.responder = answer
    turn = asyncio.create_task(converse(hass, "how are you", device_id="sat1"))
    await fake_server.wait_for_requests(1)
    return release, turn


async def test_unload_during_a_reply(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The entry unloads while a reply streams: the user still gets the answer
    (an AttributeError before: the turn read the deleted runtime data)."""
    release, turn = await _a_reply_held_on_the_server(hass, fake_server)
    assert await hass.config_entries.async_unload(loaded_entry.entry_id)
    release.set()
    result = await turn
    assert speech(result) == "Fine, thanks."


async def test_reload_during_a_reply(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Options saved (a reload) while a satellite's reply streams.

    The reply's stream ends while the entry is set up again (its model list
    is being read): the turn ended in an AttributeError instead of the answer
    (HA deletes the unloaded entry's runtime data; the rounds read it again).
    """
    reply_done = asyncio.Event()
    listing = asyncio.Event()
    real_list = integration.async_list_models

    async def slow_list(client: Any) -> list[str]:
        listing.set()
        await reply_done.wait()
        return await real_list(client)

    release, turn = await _a_reply_held_on_the_server(hass, fake_server)
    monkeypatch.setattr(integration, "async_list_models", slow_list)
    reload = asyncio.create_task(
        hass.config_entries.async_reload(loaded_entry.entry_id)
    )
    await listing.wait()  # unloaded; set-up is reading the model list
    release.set()
    try:
        result = await turn
    finally:
        reply_done.set()
        await reload
    assert speech(result) == "Fine, thanks."
