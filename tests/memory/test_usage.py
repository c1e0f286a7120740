"""Facts earn their place: "used" means relevant, and replies do not write to disk.

Every fact is in every prompt, so being in the prompt proves nothing. A fact
counts as used when the user's words or the answer share content words with
it; use ranks it. Use counts stay in RAM until the facts really change, the
entry unloads, HA stops, or a day has passed: 50 replies write nothing.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
from homeassistant.helpers import storage
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.local_assistant.const import (
    CONF_EXTRACTION,
    EXTRACTION_LOCAL,
    FACTS_SAVE_DELAY_SECONDS,
    FACTS_USAGE_SAVE_DELAY_SECONDS,
)
from custom_components.local_assistant.memory.store import storage_key
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse, system_text
from tests.helpers.memory import (
    create_user,
    facts_answer,
    memory_of,
    responder,
    storage_entry,
    stored_book,
)

FACTS = [
    "The user is vegetarian.",
    "The user's dog is called Bolt.",
    "The user kitesurfs at Tarifa.",
]


@pytest.fixture
def entry_options() -> dict[str, Any]:
    """Local extraction: the default a new user gets."""
    return {CONF_EXTRACTION: EXTRACTION_LOCAL}


def writes(entry: MockConfigEntry) -> int:
    """How often the entry's facts file was written (the mocked Store records it)."""
    key = storage_key(entry.entry_id)
    write = storage.Store._async_write_data  # patched by the hass_storage fixture
    return sum(1 for call in write.call_args_list if call.args[0].key == key)  # type: ignore[attr-defined]


async def _start(
    hass: HomeAssistant, hass_storage: dict[str, Any], entry: MockConfigEntry
) -> str:
    """Ada, with FACTS stored by an earlier run; returns her user id."""
    ada = await create_user(hass, "Ada")
    hass_storage[storage_key(entry.entry_id)] = storage_entry({f"user:{ada}": FACTS})
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    return ada


async def _turn(
    hass: HomeAssistant,
    freezer: FrozenDateTimeFactory,
    entry: MockConfigEntry,
    ada: str,
    text: str,
    *,
    seconds: float = FACTS_SAVE_DELAY_SECONDS * 2,
) -> None:
    """One reply and its extraction, then time passes (delayed saves fall due)."""
    await converse(hass, text, user_id=ada)
    extractor = memory_of(entry).extractor
    assert extractor is not None
    await extractor.async_wait_idle()
    freezer.tick(timedelta(seconds=seconds))
    async_fire_time_changed(hass, dt_util.utcnow())
    await hass.async_block_till_done()


def _stored_counts(
    hass_storage: dict[str, Any], entry: MockConfigEntry, ada: str
) -> dict[str, int]:
    book = stored_book(hass_storage, entry.entry_id, f"user:{ada}")
    return {fact["text"]: fact["use_count"] for fact in book["facts"]}


async def test_fifty_replies_write_nothing_until_unload(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    freezer: FrozenDateTimeFactory,
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """50 replies, half of them about food: no write; unload writes the counts once."""
    ada = await _start(hass, hass_storage, config_entry)

    def chat(body: dict[str, Any]) -> fake.Reply:
        if "cook" in body["messages"][-1]["content"]:
            return fake.text("How about a vegetarian curry?")
        return fake.text("Sure, done.")

    fake_server.responder = responder(lambda _b: facts_answer([]), chat)
    assert writes(config_entry) == 0
    for number in range(50):
        text = "What should I cook tonight?" if number % 2 else "Good evening, house."
        await _turn(hass, freezer, config_entry, ada, text)
    assert writes(config_entry) == 0

    veg, *others = memory_of(config_entry).list_facts(f"user:{ada}")
    assert (veg.text, veg.use_count) == ("The user is vegetarian.", 25)
    assert [fact.use_count for fact in others] == [0, 0]

    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert writes(config_entry) == 1
    assert _stored_counts(hass_storage, config_entry, ada) == {
        FACTS[0]: 25,
        FACTS[1]: 0,
        FACTS[2]: 0,
    }


async def test_use_counts_ride_along_with_the_next_real_change(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    freezer: FrozenDateTimeFactory,
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A new fact is written after the short delay, with the use counts so far."""
    ada = await _start(hass, hass_storage, config_entry)
    about_bolt = responder(
        lambda _b: facts_answer([]), lambda _b: fake.text("Bolt is a good dog.")
    )
    fake_server.responder = about_bolt
    await _turn(hass, freezer, config_entry, ada, "Good morning.")
    assert writes(config_entry) == 0

    fake_server.responder = responder(
        lambda _b: facts_answer(["The user has a sailing boat."])
    )
    # A use only (already pending, due in a day) does not hold up the change.
    await _turn(
        hass,
        freezer,
        config_entry,
        ada,
        "I have a sailing boat.",
        seconds=FACTS_SAVE_DELAY_SECONDS + 1,
    )
    assert writes(config_entry) == 1
    counts = _stored_counts(hass_storage, config_entry, ada)
    assert counts["The user's dog is called Bolt."] == 1
    assert "The user has a sailing boat." in counts

    # A reply after the write does not schedule a quick one...
    fake_server.responder = about_bolt
    await _turn(hass, freezer, config_entry, ada, "Hello again.")
    assert writes(config_entry) == 1
    # ...and a day later the counts are written on their own.
    await _turn(
        hass,
        freezer,
        config_entry,
        ada,
        "Good night.",
        seconds=FACTS_USAGE_SAVE_DELAY_SECONDS,
    )
    assert writes(config_entry) == 2
    assert _stored_counts(hass_storage, config_entry, ada)[FACTS[1]] == 3
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert writes(config_entry) == 2  # nothing new to write


async def test_ha_stop_writes_pending_use_counts(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """HA's final write stage saves use counts that waited in RAM."""
    ada = await _start(hass, hass_storage, config_entry)
    fake_server.responder = responder(
        lambda _b: facts_answer([]), lambda _b: fake.text("Tarifa is windy today.")
    )
    await converse(hass, "Morning!", user_id=ada)
    await hass.async_block_till_done()
    assert writes(config_entry) == 0
    await hass.async_stop()
    assert _stored_counts(hass_storage, config_entry, ada)[FACTS[2]] == 1


async def test_the_most_used_fact_ranks_first_in_the_prompt(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Facts a conversation relied on come first in the next prompt."""
    ada = await _start(hass, hass_storage, config_entry)
    fake_server.responder = responder(lambda _b: facts_answer([]))
    for _ in range(3):
        await converse(hass, "Is it windy at Tarifa today?", user_id=ada)
    await converse(hass, "Thanks.", user_id=ada)
    system = system_text(fake_server.last_request)
    positions = [system.index(fact) for fact in FACTS]
    assert positions[2] < min(positions[:2])
    assert await hass.config_entries.async_unload(config_entry.entry_id)
