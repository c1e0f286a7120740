"""The conversation's prompt stays in the server's one-slot cache (server/warmth.py).

The fake server keeps one cached prompt, as Swama does: `prompt_reads` says
for each request how many words it read and how many it found cached.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from types import MappingProxyType
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.components import ai_task, conversation
from homeassistant.config_entries import ConfigSubentry
from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.local_assistant.const import (
    CONF_EXTRACTION,
    CONF_KEEP_MODEL_LOADED,
    CONF_LOCAL_INTENTS,
    DEFAULT_LOCAL_INTENTS,
    EXTRACTION_LOCAL,
    EXTRACTION_OFF,
    SUBENTRY_AI_TASK,
)
from custom_components.local_assistant.server.warmth import (
    KEEP_LOADED_WINDOW_SECONDS,
    PromptCacheKeeper,
)
from tests.helpers import fake_openai as fake
from tests.helpers.ha import (
    AGENT_ID,
    MODEL,
    TASK_ENTITY,
    TASK_OPTIONS,
    converse,
    make_entry,
)
from tests.helpers.memory import create_user, facts_answer, responder

LOCAL = {CONF_EXTRACTION: EXTRACTION_LOCAL}


def keeper_of(entry: MockConfigEntry) -> PromptCacheKeeper:
    keeper: PromptCacheKeeper = entry.runtime_data.prompt_cache
    return keeper


def is_warm(body: dict[str, Any]) -> bool:
    """Our one-token requests: warm-up, re-warm, keep-alive."""
    return body.get("max_tokens") == 1


def kinds(server: fake.FakeOpenAIServer) -> list[str]:
    """What each request was: reply, extraction or warm."""
    return [
        "warm" if is_warm(body) else "reply" if body.get("stream") else "extraction"
        for body in server.requests
    ]


def reread(server: fake.FakeOpenAIServer, index: int) -> float:
    read, cached = server.prompt_reads[index]
    return read / (read + cached)


def starts_with(body: dict[str, Any], prefix: dict[str, Any]) -> bool:
    """`body` sends `prefix`'s messages first, and the same tools."""
    messages = prefix["messages"]
    return body["messages"][: len(messages)] == messages and body.get(
        "tools"
    ) == prefix.get("tools")


async def pause(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    """The user is silent for a while: background work runs and settles."""
    extractor = entry.runtime_data.memory.extractor
    for _ in range(3):
        if extractor is not None:
            await extractor.async_wait_idle()
        await keeper_of(entry).async_wait_idle()
        async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=3))
        await hass.async_block_till_done()
    await keeper_of(entry).async_wait_idle()


def task_subentry() -> ConfigSubentry:
    return ConfigSubentry(
        data=MappingProxyType(TASK_OPTIONS),
        subentry_type=SUBENTRY_AI_TASK,
        title="Local Assistant AI Task",
        unique_id=None,
    )


async def generate(hass: HomeAssistant) -> None:
    await ai_task.async_generate_data(
        hass, task_name="Note", entity_id=TASK_ENTITY, instructions="Write a note."
    )


def chatty(server: fake.FakeOpenAIServer) -> None:
    """Replies say something; extractions return one fact."""
    server.responder = responder(
        lambda _body: facts_answer(["The user has a dog called Bolt."]),
        lambda _body: fake.text("Nice to hear."),
    )


# --- after a local extraction --------------------------------------------------------


@pytest.mark.parametrize("entry_options", [LOCAL])
async def test_a_standalone_extraction_is_followed_by_a_rewarm(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """The extractor sends a prompt of its own: the prefix is sent again after it.

    The re-warm has the next turn's prefix: the current facts and the session
    history included.
    """
    ada = await create_user(hass, "Ada")
    chatty(fake_server)
    await converse(hass, "My dog is called Bolt.", user_id=ada)
    await pause(hass, loaded_entry)
    await converse(hass, "I like tea.", user_id=ada)

    assert kinds(fake_server) == ["reply", "extraction", "warm", "reply"]
    warm, turn = fake_server.requests[2], fake_server.requests[3]
    assert "The user has a dog called Bolt." in str(warm["messages"])
    assert warm["stream"] is True
    assert starts_with(turn, warm)
    assert warm["messages"][-1] == {"role": "assistant", "content": "Nice to hear."}
    assert reread(fake_server, 1) > 0.5  # the extraction: a prompt of its own
    assert reread(fake_server, 2) > 0.9  # so the re-warm reads it all again
    assert reread(fake_server, 3) < 0.05  # and the turn finds it cached
    assert keeper_of(loaded_entry).stats.rewarms == 1


@pytest.mark.parametrize("entry_options", [LOCAL])
async def test_a_withheld_answer_is_followed_by_a_rewarm(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Seen on the bundled model: "My dog is called Bolt." right after a command
    was answered honestly (its change refused, its claim withheld); its
    extraction replaced the cached prompt, and the next turn read all of it
    again. The command before it ran and is answered by what ran, with no
    second request."""
    ada = await create_user(hass, "Ada")
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.text("The kitchen is on, Bolt."),
    )
    chatty(fake_server)
    await converse(hass, "turn on the kitchen", user_id=ada)
    await pause(hass, loaded_entry)
    await converse(hass, "My dog is called Bolt.", user_id=ada)
    await pause(hass, loaded_entry)
    await converse(hass, "I like tea.", user_id=ada)

    assert kinds(fake_server) == [
        "reply",  # the command: its change ran, what ran answers
        "reply",  # a change the words do not name: refused
        "reply",  # the claim after it: withheld, the honest sentence is said
        "extraction",
        "warm",
        "reply",
    ]
    assert reread(fake_server, len(fake_server.requests) - 1) < 0.05


async def test_ai_tasks_are_followed_by_one_rewarm(
    hass: HomeAssistant,
    task_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    ada = await create_user(hass, "Ada")
    chatty(fake_server)
    await converse(hass, "hello", user_id=ada)
    await generate(hass)
    await generate(hass)
    assert keeper_of(task_entry).rewarm_pending
    await pause(hass, task_entry)
    await converse(hass, "hello again", user_id=ada)

    assert kinds(fake_server) == ["reply", "reply", "reply", "warm", "reply"]
    assert starts_with(fake_server.requests[4], fake_server.requests[3])
    assert reread(fake_server, 4) < 0.05


async def test_no_rewarm_when_the_next_prefix_is_cached(
    hass: HomeAssistant,
    task_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """After a reply the server holds the next turn's prefix (the reply's
    prompt and its answer): nothing is sent."""
    chatty(fake_server)
    ada = await create_user(hass, "Ada")
    await converse(hass, "hello", user_id=ada)
    await pause(hass, task_entry)
    await converse(hass, "hello again", user_id=ada)
    await pause(hass, task_entry)
    assert kinds(fake_server) == ["reply", "reply"]
    assert keeper_of(task_entry).stats.rewarms == 0


async def test_no_rewarm_when_nobody_talked_recently(
    hass: HomeAssistant,
    task_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    freezer: FrozenDateTimeFactory,
) -> None:
    chatty(fake_server)
    await converse(hass, "hello", user_id=await create_user(hass, "Ada"))
    freezer.tick(timedelta(minutes=6))
    await generate(hass)
    assert not keeper_of(task_entry).rewarm_pending
    await pause(hass, task_entry)
    assert kinds(fake_server) == ["reply", "reply"]


async def test_a_reply_cancels_a_pending_rewarm(
    hass: HomeAssistant,
    task_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Nothing of ours is sent while a reply runs or after it (it caches its prompt)."""
    ada = await create_user(hass, "Ada")
    chatty(fake_server)
    await converse(hass, "hello", user_id=ada)
    await generate(hass)
    assert keeper_of(task_entry).rewarm_pending
    await converse(hass, "hello again", user_id=ada)
    await pause(hass, task_entry)
    assert kinds(fake_server) == ["reply", "reply", "reply"]


async def test_a_reply_that_left_the_prefix_uncached_is_followed_by_a_rewarm(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """A change the words did not ask for is refused and the model asked again
    without tools: the server then holds a prompt without them."""
    fake_server.queue(
        fake.text("Hello."),
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),  # unasked
        fake.text("Why did the light go out? It was tired."),
    )
    await converse(hass, "hello", device_id="satellite")
    await converse(hass, "tell me a joke", device_id="satellite")
    await pause(hass, loaded_entry)
    assert kinds(fake_server) == ["reply", "reply", "reply", "warm"]
    again, warm = fake_server.requests[2], fake_server.requests[3]
    assert "tools" not in again
    assert "tools" in warm
    assert keeper_of(loaded_entry).stats.rewarms == 1


async def test_a_command_ha_carries_out_is_followed_by_a_rewarm(
    hass: HomeAssistant,
    agent_options: dict[str, Any],
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    unload_entries: None,
) -> None:
    """HA's own intents answer without the model; the prefix grows by the command.

    The next turn's prefix (with the command's words in its history) is sent
    once the server idles, so that turn reads only its own message.
    """
    options = {**agent_options, CONF_LOCAL_INTENTS: DEFAULT_LOCAL_INTENTS}
    entry = make_entry(
        hass, fake_server.base_url, options, {CONF_EXTRACTION: EXTRACTION_OFF}
    )
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    ada = await create_user(hass, "Ada")
    chatty(fake_server)
    await converse(hass, "hello", user_id=ada)
    await pause(hass, entry)  # the reply's own prompt is the next prefix: no re-warm
    await converse(hass, "turn on the kitchen", user_id=ada)
    assert hass.states.get(kitchen).state == "on"  # HA did it, no model request
    assert kinds(fake_server) == ["reply"]
    await pause(hass, entry)
    await converse(hass, "thanks", user_id=ada)

    assert kinds(fake_server) == ["reply", "warm", "reply"]
    warm, turn = fake_server.requests[1], fake_server.requests[2]
    assert {"role": "user", "content": "turn on the kitchen"} in warm["messages"]
    assert starts_with(turn, warm)
    assert reread(fake_server, 2) < 0.05
    assert keeper_of(entry).stats.rewarms == 1


# --- warm-up while the user talks ---------------------------------------------------


async def test_warm_up_sends_the_agents_latest_prompt(
    hass: HomeAssistant,
    task_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    keeper = keeper_of(task_entry)
    ada = await create_user(hass, "Ada")
    chatty(fake_server)
    # Nothing is known before the first reply.
    await conversation.async_prepare_agent(hass, AGENT_ID, "en")
    assert fake_server.requests == []

    await converse(hass, "hello", user_id=ada)
    # Cached by the reply itself: nothing to send.
    await conversation.async_prepare_agent(hass, AGENT_ID, "en")
    await keeper.async_wait_idle()
    assert keeper.stats.warm_ups_skipped == 1

    # An automation's AI task took the server's cache; the user starts talking.
    await generate(hass)
    await conversation.async_prepare_agent(hass, AGENT_ID, "en")
    await keeper.async_wait_idle()
    await converse(hass, "hello again", user_id=ada)

    assert kinds(fake_server) == ["reply", "reply", "warm", "reply"]
    warm = fake_server.requests[2]
    assert warm["max_tokens"] == 1
    assert starts_with(fake_server.requests[3], warm)
    assert reread(fake_server, 3) < 0.05
    assert keeper.stats.warm_ups == 1
    # The warm-up did the re-warm's job: nothing more is sent.
    await pause(hass, task_entry)
    assert len(fake_server.requests) == 4


@pytest.fixture
async def one_at_a_time(socket_enabled: None) -> Any:
    """A server that reads 1 ms per prompt word not cached, one request at a time."""
    async with fake.FakeOpenAIServer(
        models=[MODEL],
        usage_format="llama.cpp",
        one_at_a_time=True,
        read_seconds_per_token=0.001,
    ) as server:
        yield server


async def test_a_warm_up_in_flight_never_delays_the_reply(
    hass: HomeAssistant,
    one_at_a_time: fake.FakeOpenAIServer,
    agent_options: dict[str, Any],
    kitchen: str,
    unload_entries: None,
) -> None:
    """The reply does not wait for the warm-up; it queues behind it on the server.

    The warm-up is left to finish (a server drops or keeps half-read prompts
    its own way), so the reply finds the prefix they share cached: its time
    to the first token is below the same turn's without a warm-up.
    """
    server = one_at_a_time
    entry = make_entry(
        hass, server.base_url, agent_options, {CONF_EXTRACTION: EXTRACTION_OFF}
    )
    hass.config_entries.async_add_subentry(entry, task_subentry())
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    keeper = keeper_of(entry)
    ada = await create_user(hass, "Ada")
    server.responder = lambda _body: fake.text("Fine.")

    def first_token_ms() -> float:
        figures = entry.runtime_data.turns.recent()[-1]
        return float(figures["first_token_ms"])

    await converse(hass, "hello", user_id=ada)
    await generate(hass)  # an automation's AI task takes the cache
    await converse(hass, "how are you", user_id=ada)
    cold = first_token_ms()
    read_seconds = server.prompt_reads[-1][0] * server.read_seconds_per_token
    assert read_seconds > 0.3  # a prompt long enough to measure

    await generate(hass)
    await conversation.async_prepare_agent(hass, AGENT_ID, "en")
    await server.wait_for_requests(5)  # the warm-up is being read
    await asyncio.sleep(read_seconds / 3)  # the user is still talking
    await converse(hass, "tell me more", user_id=ada)
    warmed = first_token_ms()
    await keeper.async_wait_idle()

    assert kinds(server) == ["reply", "reply", "reply", "reply", "warm", "reply"]
    assert keeper.stats.abandoned == 1
    # Served in order: the warm-up first (to its end), then the reply.
    assert server.served[4][1] <= server.served[5][0] + 0.01
    assert server.prompt_reads[5][0] < 0.1 * sum(server.prompt_reads[5])
    assert warmed < cold


# --- keep the model loaded -----------------------------------------------------------


async def minutes_pass(
    hass: HomeAssistant,
    freezer: FrozenDateTimeFactory,
    entry: MockConfigEntry,
    minutes: float,
) -> None:
    """Two minutes at a time, letting the timers and our requests run."""
    for _ in range(int(minutes // 2)):
        freezer.tick(timedelta(minutes=2))
        async_fire_time_changed(hass)
        await hass.async_block_till_done()
        await keeper_of(entry).async_wait_idle()


@pytest.mark.parametrize(
    "entry_options", [{CONF_EXTRACTION: EXTRACTION_OFF, CONF_KEEP_MODEL_LOADED: True}]
)
async def test_keep_loaded_sends_a_tiny_request_while_someone_talks(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Every 2 minutes when the server idled 90 s; only within 30 minutes of a talk."""
    chatty(fake_server)
    await converse(hass, "hello", user_id=await create_user(hass, "Ada"))
    await minutes_pass(
        hass, freezer, loaded_entry, KEEP_LOADED_WINDOW_SECONDS / 60 + 10
    )

    warm = [index for index, kind in enumerate(kinds(fake_server)) if kind == "warm"]
    assert len(warm) == int(KEEP_LOADED_WINDOW_SECONDS // 120)
    for index in warm:  # cached: only the last word is read
        assert fake_server.prompt_reads[index][0] <= 2
    assert keeper_of(loaded_entry).stats.keep_alives == len(warm)


async def test_keep_loaded_is_off_by_default(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    freezer: FrozenDateTimeFactory,
) -> None:
    chatty(fake_server)
    await converse(hass, "hello", user_id=await create_user(hass, "Ada"))
    await minutes_pass(hass, freezer, loaded_entry, 10)
    assert kinds(fake_server) == ["reply"]
