"""Background fact extraction in a running HA, against real HTTP.

The extractor's requests are non-streamed; replies stream. A `responder` on
the fake server tells them apart. Tests wait for extraction through the
extractor's own handle (`async_wait_idle`), never by sleeping.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
import json
import logging
import re
import time
from typing import Any

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import (
    CONF_EXTRACTION,
    CONF_EXTRACTION_API_KEY,
    CONF_EXTRACTION_BASE_URL,
    CONF_EXTRACTION_MODEL,
    CONF_MAX_FACTS,
    EXTRACTION_HOSTED,
    EXTRACTION_LOCAL,
    LOGGER,
)
from custom_components.local_assistant.llm.prompt import FACTS_HEADING
from custom_components.local_assistant.memory.extraction import (
    MAX_PENDING_EXCHANGES,
    FactExtractor,
)
from custom_components.local_assistant.memory.store import storage_key
from tests.helpers import fake_openai as fake
from tests.helpers.ha import MODEL, converse, speech, system_text
from tests.helpers.memory import (
    chat_requests,
    create_user,
    current_facts,
    extraction_requests,
    fact_texts,
    facts_answer,
    latest_exchange,
    memory_of,
    pinned_facts,
    responder,
    storage_entry,
    stored_fact_texts,
)

LOCAL = {CONF_EXTRACTION: EXTRACTION_LOCAL}
HOSTED_MODEL = "hosted-extractor"
HOSTED_KEY = "sk-hosted-secret"
_TOKEN = re.compile(r"\s*\S+|\s+")


@pytest.fixture
def entry_options() -> dict[str, Any]:
    """Extraction on the agent's own server."""
    return dict(LOCAL)


def extractor_of(entry: MockConfigEntry) -> FactExtractor:
    extractor = memory_of(entry).extractor
    assert extractor is not None
    return extractor


def slow_answer(texts: list[str], seconds: float) -> fake.Reply:
    """An extractor answer that takes `seconds` in total (the fake delays per token)."""
    content = json.dumps(texts)
    return fake.text(content, delay=seconds / len(_TOKEN.findall(content)))


def stored_order(entry: MockConfigEntry, speaker: str) -> list[str]:
    """A speaker's fact texts in storage order (the extractor's order)."""
    book = memory_of(entry).facts.get(speaker)
    return [] if book is None else [fact.text for fact in book.facts]


def warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        record
        for record in caplog.records
        if record.name == LOGGER.name and record.levelno >= logging.WARNING
    ]


async def preload(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    entry: MockConfigEntry,
    speakers: dict[str, list[str]],
) -> None:
    """Start the entry with facts a previous run stored."""
    hass_storage[storage_key(entry.entry_id)] = storage_entry(speakers)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()


def echo_and_add(body: dict[str, Any]) -> fake.Reply:
    """An extractor that keeps the current facts and adds one per user line."""
    facts = current_facts(body)
    for line in latest_exchange(body)["user"].splitlines():
        facts.append(f"The user said {line}.")
    return facts_answer(facts)


# --- the normal path ---------------------------------------------------------------


async def test_extraction_after_a_turn(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """After a reply, the local model gets the facts and the exchange, as quoted data."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(
        lambda _body: facts_answer(["The user has a dog called Rex."]),
        lambda _body: fake.text("Rex is a fine name."),
    )
    result = await converse(hass, "My dog is called Rex", user_id=ada)
    assert speech(result) == "Rex is a fine name."
    await extractor_of(loaded_entry).async_wait_idle()

    (request,) = extraction_requests(fake_server)
    assert request["model"] == MODEL
    assert request["stream"] is False
    assert request["temperature"] == 0
    assert current_facts(request) == []
    assert latest_exchange(request) == {
        "user": "My dog is called Rex",
        "assistant": "Rex is a fine name.",
    }
    assert "Return ONLY a JSON array of strings" in request["messages"][0]["content"]
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == [
        "The user has a dog called Rex."
    ]

    # The next reply carries the fact in its prompt.
    await converse(hass, "what is my dog called?", user_id=ada)
    await extractor_of(loaded_entry).async_wait_idle()
    system = system_text(chat_requests(fake_server)[-1])
    assert FACTS_HEADING in system
    assert '- "The user has a dog called Rex."' in system
    assert current_facts(extraction_requests(fake_server)[-1]) == [
        "The user has a dog called Rex."
    ]


async def test_extracted_facts_are_saved_debounced(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """An update is written by the debounced save, and at the latest on unload."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(lambda _b: facts_answer(["The user sails."]))
    await converse(hass, "I sail", user_id=ada)
    await extractor_of(loaded_entry).async_wait_idle()
    assert storage_key(loaded_entry.entry_id) not in hass_storage
    assert await hass.config_entries.async_unload(loaded_entry.entry_id)
    assert stored_fact_texts(hass_storage, loaded_entry.entry_id, f"user:{ada}") == [
        "The user sails."
    ]


async def test_no_extraction_for_a_speaker_known_only_by_conversation(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Facts about a conversation id could never be used again: none are extracted."""
    fake_server.responder = responder(lambda _b: facts_answer(["Never stored."]))
    await converse(hass, "I like tea")
    await extractor_of(loaded_entry).async_wait_idle()
    assert extraction_requests(fake_server) == []
    assert memory_of(loaded_entry).facts.speakers() == []


async def test_satellite_speaker_gets_facts(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A satellite without a person mapping still has long-term facts of its own."""
    fake_server.responder = responder(
        lambda _b: facts_answer(["The kitchen has a Moka pot."])
    )
    await converse(hass, "we use a Moka pot", device_id="kitchen-satellite")
    await extractor_of(loaded_entry).async_wait_idle()
    assert fact_texts(memory_of(loaded_entry), "device:kitchen-satellite") == [
        "The kitchen has a Moka pot."
    ]


@pytest.mark.parametrize("entry_options", [{**LOCAL, CONF_MAX_FACTS: 30}])
async def test_cap_keeps_30_of_45_returned_facts(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The extractor orders by importance: the first 30 of 45 are kept."""
    ada = await create_user(hass, "Ada")
    many = [f"The user likes topic number {number}." for number in range(45)]
    fake_server.responder = responder(lambda _b: facts_answer(many))
    await converse(hass, "I like many things", user_id=ada)
    await extractor_of(loaded_entry).async_wait_idle()

    memory = memory_of(loaded_entry)
    assert fact_texts(memory, f"user:{ada}") == many[:30]
    assert memory.fact_history(f"user:{ada}") == []
    await converse(hass, "tell me", user_id=ada)
    system = system_text(chat_requests(fake_server)[-1])
    assert system.count("The user likes topic number") == 30


async def test_manual_facts_survive_an_empty_list(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """`[]` drops extracted facts into the history; manual facts stay, shown as pinned."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    memory = memory_of(loaded_entry)
    fake_server.responder = responder(lambda _b: facts_answer(["The user likes tea."]))
    await converse(hass, "I like tea", user_id=ada)
    await extractor_of(loaded_entry).async_wait_idle()
    manual = await memory.async_add_fact(speaker, "The user's birthday is 3 May.")

    fake_server.responder = responder(lambda _b: facts_answer([]))
    await converse(hass, "forget it", user_id=ada)
    await extractor_of(loaded_entry).async_wait_idle()

    request = extraction_requests(fake_server)[-1]
    assert current_facts(request) == ["The user likes tea."]
    assert pinned_facts(request) == ["The user's birthday is 3 May."]
    assert [fact.id for fact in memory.list_facts(speaker)] == [manual.id]
    (entry,) = memory.fact_history(speaker)
    assert (entry.fact.text, entry.reason) == ("The user likes tea.", "dropped")


# --- bad answers of every kind -----------------------------------------------------

BAD_ANSWERS = {
    "prose": fake.text("Sure! The user likes tea and has a dog."),
    "prose with brackets": fake.text("The user [probably] likes tea."),
    "object": fake.text('{"facts": ["The user likes tea."]}'),
    "non-strings": fake.text('["The user likes tea.", 42, null]'),
    "nested": fake.text('[["The user likes tea."]]'),
    "empty strings": fake.text('["", "  "]'),
    "truncated": fake.text('["The user likes tea.", "The user'),
    "two arrays": fake.text('["a"] ["b"]'),
    "only thinking": fake.text("", think="the user likes tea"),
    "empty": fake.text(""),
    "http 500": fake.error(500),
    "http 404": fake.error(404, "model not found", "model_not_found"),
    "not json": fake.malformed(["<html>Bad Gateway</html>"]),
    "json without choices": fake.malformed(
        ['{"id": "x", "object": "chat.completion"}']
    ),
    "disconnect": fake.disconnect(0),
    "timeout": fake.text('["The user likes tea."]', delay=30),
    "hang": fake.hang(),
}


@pytest.fixture
def short_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The extractor gives up after 0.3 s (set before the entry loads)."""
    monkeypatch.setattr(
        "custom_components.local_assistant.memory.manager.EXTRACTION_TIMEOUT", 0.3
    )


@pytest.mark.parametrize("answer", BAD_ANSWERS.values(), ids=BAD_ANSWERS.keys())
async def test_bad_answers_leave_facts_untouched(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
    short_timeout: None,
    answer: fake.Reply,
) -> None:
    """Junk, HTTP errors, timeouts and hangs change nothing and log one warning."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    await preload(hass, hass_storage, config_entry, {speaker: ["The user has a cat."]})
    memory = memory_of(config_entry)
    before = [(fact.id, fact.text, fact.source) for fact in memory.list_facts(speaker)]
    fake_server.responder = responder(lambda _b: answer)
    caplog.clear()

    result = await converse(hass, "I like tea", user_id=ada)
    assert speech(result) == "OK"
    await extractor_of(config_entry).async_wait_idle()

    assert len(extraction_requests(fake_server)) == 1
    after = [(fact.id, fact.text, fact.source) for fact in memory.list_facts(speaker)]
    assert after == before
    assert memory.fact_history(speaker) == []
    (warning,) = warnings(caplog)
    assert "facts unchanged" in warning.getMessage()
    # The log never quotes what was said or answered.
    assert "tea" not in warning.getMessage()
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert stored_fact_texts(hass_storage, config_entry.entry_id, speaker) == [
        "The user has a cat."
    ]


async def test_answer_with_think_and_fence_is_accepted(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Qwen3's think block and a code fence around the array are tolerated."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(
        lambda _b: fake.text(
            '```json\n["The user plays chess."]\n```', think="chess is stable"
        )
    )
    await converse(hass, "I play chess every Sunday", user_id=ada)
    await extractor_of(loaded_entry).async_wait_idle()
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == [
        "The user plays chess."
    ]


# --- off the reply path ------------------------------------------------------------


async def test_slow_extractor_does_not_delay_the_reply(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A 3-second extractor: the reply is back long before the extractor answers."""
    ada = await create_user(hass, "Ada")
    extractor = extractor_of(loaded_entry)
    fake_server.responder = responder(lambda _b: facts_answer(["The user likes tea."]))

    # Baseline: an instant extractor.
    started = time.perf_counter()
    await converse(hass, "hello", user_id=ada)
    baseline = time.perf_counter() - started
    await extractor.async_wait_idle()

    fake_server.responder = responder(
        lambda _b: slow_answer(["The user likes tea.", "The user sails."], 3.0)
    )
    started = time.perf_counter()
    result = await converse(hass, "I sail too", user_id=ada)
    reply_time = time.perf_counter() - started
    assert speech(result) == "OK"

    # The extractor's request is on the wire but not answered yet.
    await fake_server.wait_for_requests(4)
    assert extractor.stats.runs == 2
    assert extractor.stats.updated == 1
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == ["The user likes tea."]

    await extractor.async_wait_idle()
    extraction_time = time.perf_counter() - started
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == [
        "The user likes tea.",
        "The user sails.",
    ]
    assert extraction_time >= 3.0
    assert reply_time < 1.0
    assert reply_time < baseline + 0.5
    # The measurement is part of the report (run with -s to see it).
    print(
        f"\nreply latency: {reply_time * 1000:.0f} ms with a 3 s extractor, "
        f"{baseline * 1000:.0f} ms with an instant one; "
        f"extraction finished after {extraction_time:.2f} s"
    )


async def test_extraction_waits_while_a_reply_runs(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """On the local server, extraction starts only once no reply is running."""
    ada = await create_user(hass, "Ada")
    kai = await create_user(hass, "Kai")
    release = asyncio.Event()

    async def chat(body: dict[str, Any]) -> fake.Reply:
        if body["messages"][-1]["content"] == "slow question":
            await release.wait()
            return fake.text("Slow answer.")
        return fake.text("Fast answer.")

    fake_server.responder = responder(lambda _b: facts_answer(["A fact."]), chat)
    slow = asyncio.create_task(converse(hass, "slow question", user_id=kai))
    await fake_server.wait_for_requests(1)
    await converse(hass, "fast question", user_id=ada)
    for _ in range(10):
        await asyncio.sleep(0)
    # Ada's extraction waits behind Kai's reply, still running.
    assert not slow.done()
    assert extraction_requests(fake_server) == []
    assert extractor_of(loaded_entry).stats.runs == 0

    release.set()
    await slow
    await extractor_of(loaded_entry).async_wait_idle()
    requests = fake_server.requests
    assert [body["stream"] for body in requests[:2]] == [True, True]
    assert len(extraction_requests(fake_server)) == 2


async def test_runs_are_serialized_and_coalesced_per_speaker(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Exchanges arriving during a run go to the extractor together, in one next run."""
    ada = await create_user(hass, "Ada")
    release = asyncio.Event()
    in_flight = 0
    most_in_flight = 0

    async def extract(body: dict[str, Any]) -> fake.Reply:
        nonlocal in_flight, most_in_flight
        in_flight += 1
        most_in_flight = max(most_in_flight, in_flight)
        await release.wait()
        in_flight -= 1
        return echo_and_add(body)

    fake_server.responder = responder(extract)
    await converse(hass, "one", user_id=ada)
    await fake_server.wait_for_requests(2)
    for text in ("two", "three", "four"):
        await converse(hass, text, user_id=ada)
    extractor = extractor_of(loaded_entry)
    assert extractor.pending(f"user:{ada}") == 3
    assert len(extraction_requests(fake_server)) == 1

    release.set()
    await extractor.async_wait_idle()
    first, second = extraction_requests(fake_server)
    assert latest_exchange(first)["user"] == "one"
    assert latest_exchange(second) == {
        "user": "two\nthree\nfour",
        "assistant": "OK\nOK\nOK",
    }
    assert most_in_flight == 1
    assert stored_order(loaded_entry, f"user:{ada}") == [
        f"The user said {text}." for text in ("one", "two", "three", "four")
    ]


async def test_fifty_concurrent_speakers_lose_no_update(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """50 speakers talking at once, two exchanges each: every fact lands on its speaker."""
    users = [await create_user(hass, f"Person {number}") for number in range(50)]
    fake_server.responder = responder(echo_and_add)

    async def talk(number: int, user_id: str) -> None:
        await converse(hass, f"p{number} first", user_id=user_id)
        await converse(hass, f"p{number} second", user_id=user_id)

    await asyncio.gather(*(talk(number, user) for number, user in enumerate(users)))
    extractor = extractor_of(loaded_entry)
    await extractor.async_wait_idle()

    for number, user in enumerate(users):
        assert stored_order(loaded_entry, f"user:{user}") == [
            f"The user said p{number} first.",
            f"The user said p{number} second.",
        ]
    assert extractor.stats.failed == 0
    assert extractor.pending_total() == 0
    assert await hass.config_entries.async_unload(loaded_entry.entry_id)
    for number, user in enumerate(users):
        assert stored_fact_texts(
            hass_storage, loaded_entry.entry_id, f"user:{user}"
        ) == [
            f"The user said p{number} first.",
            f"The user said p{number} second.",
        ]


async def test_local_extraction_runs_one_at_a_time(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Several speakers' extractions never queue up on the one-inference local server."""
    users = [await create_user(hass, f"Person {number}") for number in range(5)]
    in_flight = 0
    most_in_flight = 0

    async def extract(body: dict[str, Any]) -> fake.Reply:
        nonlocal in_flight, most_in_flight
        in_flight += 1
        most_in_flight = max(most_in_flight, in_flight)
        await asyncio.sleep(0)  # let any other extraction request arrive
        in_flight -= 1
        return echo_and_add(body)

    fake_server.responder = responder(extract)
    await asyncio.gather(*(converse(hass, "hi", user_id=user) for user in users))
    await extractor_of(loaded_entry).async_wait_idle()
    assert len(extraction_requests(fake_server)) == 5
    assert most_in_flight == 1


# --- failure and shutdown ----------------------------------------------------------


async def test_extractor_down_for_many_exchanges_then_back(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """While down: facts intact, queue bounded. Back: the recent exchanges are distilled."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    await preload(hass, hass_storage, config_entry, {speaker: ["The user has a cat."]})
    extractor = extractor_of(config_entry)
    memory = memory_of(config_entry)
    fake_server.responder = responder(lambda _b: fake.error(503, "overloaded"))
    caplog.clear()

    for number in range(1, 16):
        await converse(hass, f"message {number}", user_id=ada)
        await extractor.async_wait_idle()
        assert extractor.pending(speaker) == min(number, MAX_PENDING_EXCHANGES)
        assert fact_texts(memory, speaker) == ["The user has a cat."]
    # One line for the whole outage, not one per exchange.
    assert len(warnings(caplog)) == 1
    assert extractor.stats.failed == 15
    # Each retry sent at most the bounded queue.
    assert all(
        len(latest_exchange(body)["user"].splitlines()) <= MAX_PENDING_EXCHANGES
        for body in extraction_requests(fake_server)
    )

    fake_server.responder = responder(echo_and_add)
    await converse(hass, "message 16", user_id=ada)
    await extractor.async_wait_idle()
    last = extraction_requests(fake_server)[-1]
    assert latest_exchange(last)["user"].splitlines() == [
        f"message {number}" for number in range(11, 17)
    ]
    assert stored_order(config_entry, speaker) == [
        "The user has a cat.",
        *(f"The user said message {number}." for number in range(11, 17)),
    ]
    assert extractor.pending(speaker) == 0
    assert extractor.pending_total() == 0
    assert "The fact extractor answers again" in caplog.text
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_unload_cancels_a_hanging_extraction(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Unload does not wait for a hung extractor and keeps the facts."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    await preload(hass, hass_storage, config_entry, {speaker: ["The user has a cat."]})
    fake_server.responder = responder(lambda _b: fake.hang())
    extractor = extractor_of(config_entry)
    memory = memory_of(config_entry)
    await converse(hass, "I like tea", user_id=ada)
    await fake_server.wait_for_requests(2)
    assert extractor.stats.runs == 1

    assert await hass.config_entries.async_unload(config_entry.entry_id)
    await extractor.async_wait_idle()  # nothing left to wait for
    assert stored_fact_texts(hass_storage, config_entry.entry_id, speaker) == [
        "The user has a cat."
    ]
    # A reply finishing during unload schedules nothing any more.
    memory.record_exchange(
        speaker, "late", "late answer", agent=next(iter(config_entry.subentries))
    )
    await extractor.async_wait_idle()
    assert len(extraction_requests(fake_server)) == 1


async def test_ha_stop_during_extraction_keeps_the_facts(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """HA stopping cancels the run; stored facts are intact and pending saves written."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    await preload(hass, hass_storage, config_entry, {speaker: ["The user has a cat."]})
    memory = memory_of(config_entry)
    added = await memory.async_add_fact(speaker, "The user is left-handed.")
    fake_server.responder = responder(lambda _b: slow_answer(["Replaced."], 3.0))
    await converse(hass, "I like tea", user_id=ada)
    await fake_server.wait_for_requests(2)

    await hass.async_stop()
    extractor = extractor_of(config_entry)
    assert extractor.stats.runs == 1
    assert extractor.stats.updated == 0
    # The debounced save (the manual fact, use counts) was written at the
    # final-write stage; the extractor's answer never arrived.
    assert stored_fact_texts(hass_storage, config_entry.entry_id, speaker) == [
        "The user has a cat.",
        added.text,
    ]


# --- hosted extractor --------------------------------------------------------------


@pytest.fixture
async def hosted_server(socket_enabled: None) -> AsyncGenerator[fake.FakeOpenAIServer]:
    """A second server standing in for a hosted OpenAI-compatible endpoint."""
    async with fake.FakeOpenAIServer(
        models=[HOSTED_MODEL], api_key=HOSTED_KEY
    ) as server:
        yield server


async def test_hosted_extractor_gets_the_exchange_not_the_local_server(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    hosted_server: fake.FakeOpenAIServer,
) -> None:
    """With `hosted`, extraction goes to the hosted model with its key; replies stay local."""
    hass.config_entries.async_update_entry(
        config_entry,
        options={
            CONF_EXTRACTION: EXTRACTION_HOSTED,
            CONF_EXTRACTION_BASE_URL: hosted_server.base_url,
            CONF_EXTRACTION_API_KEY: HOSTED_KEY,
            CONF_EXTRACTION_MODEL: HOSTED_MODEL,
        },
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    ada = await create_user(hass, "Ada")
    hosted_server.responder = responder(
        lambda _b: facts_answer(["The user kitesurfs."])
    )
    await converse(hass, "I kitesurf", user_id=ada)
    await extractor_of(config_entry).async_wait_idle()

    assert extraction_requests(fake_server) == []
    assert len(chat_requests(fake_server)) == 1
    (request,) = hosted_server.requests
    assert request["model"] == HOSTED_MODEL
    assert hosted_server.request_headers[0]["Authorization"] == f"Bearer {HOSTED_KEY}"
    assert latest_exchange(request)["user"] == "I kitesurf"
    assert fact_texts(memory_of(config_entry), f"user:{ada}") == ["The user kitesurfs."]
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_hosted_extractor_down_does_not_touch_replies(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    hosted_server: fake.FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A refused key at the hosted service: replies work, one warning per run."""
    hass.config_entries.async_update_entry(
        config_entry,
        options={
            CONF_EXTRACTION: EXTRACTION_HOSTED,
            CONF_EXTRACTION_BASE_URL: hosted_server.base_url,
            CONF_EXTRACTION_API_KEY: "wrong",
            CONF_EXTRACTION_MODEL: HOSTED_MODEL,
        },
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    ada = await create_user(hass, "Ada")
    caplog.clear()
    result = await converse(hass, "I kitesurf", user_id=ada)
    assert speech(result) == "OK"
    await extractor_of(config_entry).async_wait_idle()
    (warning,) = warnings(caplog)
    assert "HTTP 401" in warning.getMessage()
    assert "wrong" not in caplog.text
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_hosted_without_url_means_no_extraction(
    hass: HomeAssistant, config_entry: MockConfigEntry, caplog: pytest.LogCaptureFixture
) -> None:
    """A half-configured hosted extractor is off, and says so."""
    hass.config_entries.async_update_entry(
        config_entry, options={CONF_EXTRACTION: EXTRACTION_HOSTED}
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    assert memory_of(config_entry).extractor is None
    assert "no server URL" in caplog.text
    assert await hass.config_entries.async_unload(config_entry.entry_id)


# --- people editing facts while the extractor works --------------------------------


async def test_an_edit_during_extraction_is_not_undone(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A fact removed while the model works is not brought back by its stale answer."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    await preload(
        hass,
        hass_storage,
        config_entry,
        {speaker: ["The user has a cat.", "The user has a parrot."]},
    )
    memory = memory_of(config_entry)
    release = asyncio.Event()

    async def extract(body: dict[str, Any]) -> fake.Reply:
        if len(extraction_requests(fake_server)) == 1:
            await release.wait()
        return echo_and_add(body)

    fake_server.responder = responder(extract)
    await converse(hass, "I like tea", user_id=ada)
    await fake_server.wait_for_requests(2)
    parrot = next(f for f in memory.list_facts(speaker) if "parrot" in f.text)
    await memory.async_remove_fact(speaker, parrot.id)

    release.set()
    await extractor_of(config_entry).async_wait_idle()
    first, second = extraction_requests(fake_server)
    assert "The user has a parrot." in current_facts(first)
    assert current_facts(second) == ["The user has a cat."]
    assert latest_exchange(second)["user"] == "I like tea"
    assert stored_order(config_entry, speaker) == [
        "The user has a cat.",
        "The user said I like tea.",
    ]
    assert [(e.fact.text, e.reason) for e in memory.fact_history(speaker)] == [
        ("The user has a parrot.", "removed")
    ]
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_forget_completely_stops_extraction_in_flight(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Clearing with the history also drops the buffer and the pending exchanges."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    memory = memory_of(loaded_entry)
    extractor = extractor_of(loaded_entry)
    await memory.async_add_fact(speaker, "The user's PIN hint is blue.")
    release = asyncio.Event()

    async def extract(body: dict[str, Any]) -> fake.Reply:
        await release.wait()
        return echo_and_add(body)

    fake_server.responder = responder(extract)
    await converse(hass, "my secret is X", user_id=ada)
    await fake_server.wait_for_requests(2)
    await converse(hass, "and another one", user_id=ada)
    assert extractor.pending(speaker) == 1

    cleared = await memory.async_clear_facts(speaker, include_history=True)
    assert cleared == 1
    await extractor.async_wait_idle()
    release.set()
    assert memory.list_facts(speaker) == []
    assert memory.fact_history(speaker) == []
    assert memory.history(next(iter(loaded_entry.subentries)), speaker) == []
    assert extractor.pending(speaker) == 0
    assert len(extraction_requests(fake_server)) == 1
    assert memory.facts.speakers() == []
