"""The facts file: real files for corruption, the mocked Store for the rest.

HA's `hass` fixture mocks `Store` in memory (`hass_storage`). The corrupt-file
tests need the real load and write: the `storage_dir` fixture (tests/conftest.py)
puts back the real methods, captured before any fixture patches them, and
points the config dir at a temporary directory.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
import json
from pathlib import Path
from typing import Any
from unittest.mock import patch

from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import CoreState, HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.storage import Store
from homeassistant.util.file import WriteError
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.local_assistant.const import (
    CONF_EXTRACTION,
    CONF_MAX_FACTS,
    EXTRACTION_OFF,
    FACTS_MAX_RETRY_SAVE_DELAY_SECONDS,
    FACTS_RETRY_SAVE_DELAY_SECONDS,
    FACTS_SAVE_DELAY_SECONDS,
)
from custom_components.local_assistant.memory.store import storage_key
from tests.helpers.memory import (
    GOOD,
    fact_texts,
    facts_file,
    kept_copies,
    memory_of,
    storage_entry,
    stored,
    stored_book,
    write,
)

LEFT_HANDED = "The user is left-handed."


async def setup_and_check_loaded(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED


# --- real files -----------------------------------------------------------------------


async def test_good_file_round_trip(
    hass: HomeAssistant, storage_dir: Path, config_entry: MockConfigEntry
) -> None:
    """A real file is read at start and written back, atomically, on unload."""
    path = facts_file(storage_dir, config_entry)
    write(path, json.dumps(GOOD))
    await setup_and_check_loaded(hass, config_entry)
    memory = memory_of(config_entry)
    assert sorted(fact_texts(memory, "user:ada")) == [
        "The user has a cat.",
        "The user likes tea.",
    ]
    await memory.async_add_fact("user:ada", LEFT_HANDED)
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["version"] == 1
    texts = [fact["text"] for fact in written["data"]["speakers"]["user:ada"]["facts"]]
    assert texts == [
        "The user has a cat.",
        "The user likes tea.",
        LEFT_HANDED,
    ]
    assert kept_copies(path) == []


@pytest.mark.parametrize(
    "content",
    [
        "{this is not json",
        json.dumps(GOOD)[: len(json.dumps(GOOD)) // 2],  # truncated mid-write
        "",
        "\x00\x00\x00",
    ],
    ids=["not json", "truncated", "empty file", "binary"],
)
async def test_unparsable_file_is_kept_aside_and_the_integration_starts(
    hass: HomeAssistant,
    storage_dir: Path,
    config_entry: MockConfigEntry,
    content: str,
) -> None:
    """HA's Store renames a file it cannot parse; we start empty and write a new file."""
    path = facts_file(storage_dir, config_entry)
    write(path, content)
    await setup_and_check_loaded(hass, config_entry)
    memory = memory_of(config_entry)
    assert memory.facts.speakers() == []

    (copy,) = kept_copies(path)
    assert copy.read_text(encoding="utf-8") == content
    assert not path.exists()
    assert ir.async_get(hass).issues  # HA raised a repair issue about it

    await memory.async_add_fact("user:ada", "The user is new here.")
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    written = json.loads(path.read_text(encoding="utf-8"))
    assert [
        fact["text"] for fact in written["data"]["speakers"]["user:ada"]["facts"]
    ] == ["The user is new here."]
    assert copy.read_text(encoding="utf-8") == content


@pytest.mark.parametrize(
    "content",
    [
        json.dumps([1, 2, 3]),
        json.dumps({"data": {"speakers": {}}}),  # no version
        json.dumps({"version": 1, "minor_version": 1}),  # no data
        json.dumps({"version": 1, "minor_version": 1, "key": "k", "data": ["x"]}),
        json.dumps(
            {"version": 1, "minor_version": 1, "key": "k", "data": {"speakers": []}}
        ),
        "null",
        json.dumps({**GOOD, "version": 2}),  # from a newer version (downgrade)
    ],
    ids=[
        "a list",
        "no version",
        "no data",
        "data not an object",
        "speakers not an object",
        "null",
        "newer version",
    ],
)
async def test_unexpected_file_is_moved_aside(
    hass: HomeAssistant,
    storage_dir: Path,
    config_entry: MockConfigEntry,
    caplog: pytest.LogCaptureFixture,
    content: str,
) -> None:
    """Valid JSON that is not our layout is kept as `<file>.corrupt-<time>`."""
    path = facts_file(storage_dir, config_entry)
    write(path, content)
    await setup_and_check_loaded(hass, config_entry)
    assert memory_of(config_entry).facts.speakers() == []
    (copy,) = kept_copies(path)
    assert copy.name.startswith(f"{path.name}.corrupt-")
    assert copy.read_text(encoding="utf-8") == content
    assert "a copy is kept at" in caplog.text
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert copy.read_text(encoding="utf-8") == content


async def test_bad_speaker_record_keeps_the_readable_ones(
    hass: HomeAssistant, storage_dir: Path, config_entry: MockConfigEntry
) -> None:
    """One broken record: the others load, the original file is kept, a clean one is written."""
    data = storage_entry({"user:ada": ["The user has a cat."], "user:kai": ["Kai."]})
    data["data"]["speakers"]["user:kai"]["facts"][0]["created"] = "yesterday"
    data["data"]["speakers"]["user:bob"] = "not a record"
    content = json.dumps(data)
    path = facts_file(storage_dir, config_entry)
    write(path, content)

    await setup_and_check_loaded(hass, config_entry)
    memory = memory_of(config_entry)
    assert memory.facts.speakers() == ["user:ada"]
    (copy,) = kept_copies(path)
    assert copy.read_text(encoding="utf-8") == content

    assert await hass.config_entries.async_unload(config_entry.entry_id)
    written = json.loads(path.read_text(encoding="utf-8"))
    assert list(written["data"]["speakers"]) == ["user:ada"]


async def test_file_that_cannot_be_moved_aside_is_never_overwritten(
    hass: HomeAssistant,
    storage_dir: Path,
    config_entry: MockConfigEntry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """If the bad file cannot be kept, facts are not saved over it."""
    content = json.dumps({"version": 1, "data": ["x"]})
    path = facts_file(storage_dir, config_entry)
    write(path, content)
    with patch(
        "custom_components.local_assistant.memory.store._move_aside",
        side_effect=PermissionError("read-only folder"),
    ):
        await setup_and_check_loaded(hass, config_entry)
    memory = memory_of(config_entry)
    await memory.async_add_fact("user:ada", "The user is new here.")
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert path.read_text(encoding="utf-8") == content
    assert "will not be saved" in caplog.text


async def test_two_bad_starts_in_the_same_second_keep_both_copies(
    hass: HomeAssistant,
    storage_dir: Path,
    config_entry: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """A kept copy is never overwritten by the next one."""
    path = facts_file(storage_dir, config_entry)
    write(path, "[1]")
    await setup_and_check_loaded(hass, config_entry)
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    write(path, "[2]")
    await setup_and_check_loaded(hass, config_entry)
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert sorted(copy.read_text(encoding="utf-8") for copy in kept_copies(path)) == [
        "[1]",
        "[2]",
    ]


async def test_removing_the_entry_deletes_the_real_file(
    hass: HomeAssistant, storage_dir: Path, config_entry: MockConfigEntry
) -> None:
    path = facts_file(storage_dir, config_entry)
    write(path, json.dumps(GOOD))
    await setup_and_check_loaded(hass, config_entry)
    await hass.config_entries.async_remove(config_entry.entry_id)
    await hass.async_block_till_done()
    assert not path.exists()


# --- mocked Store -------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry_options", [{CONF_EXTRACTION: EXTRACTION_OFF, CONF_MAX_FACTS: 1}]
)
async def test_lowered_max_facts_moves_extra_facts_to_history_on_load(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
) -> None:
    """Nothing is destroyed when the limit is lowered: the extra fact is in the history."""
    hass_storage[storage_key(config_entry.entry_id)] = GOOD
    await setup_and_check_loaded(hass, config_entry)
    memory = memory_of(config_entry)
    assert fact_texts(memory, "user:ada") == ["The user has a cat."]
    (entry,) = memory.fact_history("user:ada")
    assert (entry.fact.text, entry.reason) == ("The user likes tea.", "over_limit")
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    book = stored_book(hass_storage, config_entry.entry_id, "user:ada")
    assert [fact["text"] for fact in book["facts"]] == ["The user has a cat."]
    assert [item["fact"]["text"] for item in book["history"]] == ["The user likes tea."]


async def test_file_without_minor_version_loads(
    hass: HomeAssistant, hass_storage: dict[str, Any], config_entry: MockConfigEntry
) -> None:
    """A version-1 file from before minor versions goes through the migration hook."""
    old = {key: value for key, value in GOOD.items() if key != "minor_version"}
    hass_storage[storage_key(config_entry.entry_id)] = old
    await setup_and_check_loaded(hass, config_entry)
    assert len(fact_texts(memory_of(config_entry), "user:ada")) == 2
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_newer_minor_version_with_extra_keys_loads(
    hass: HomeAssistant, hass_storage: dict[str, Any], config_entry: MockConfigEntry
) -> None:
    """Minor bumps only add optional keys: a newer minor file still loads."""
    newer = json.loads(json.dumps(GOOD))
    newer["minor_version"] = 5
    newer["data"]["speakers"]["user:ada"]["facts"][0]["confidence"] = 0.9
    newer["data"]["future"] = {"anything": True}
    hass_storage[storage_key(config_entry.entry_id)] = newer
    await setup_and_check_loaded(hass, config_entry)
    assert len(fact_texts(memory_of(config_entry), "user:ada")) == 2
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_saves_are_debounced(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    loaded_entry: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Several changes in a row become one write, a few seconds later."""
    memory = memory_of(loaded_entry)
    key = storage_key(loaded_entry.entry_id)
    writes: list[int] = []
    original = Store._async_write_data

    async def counting(store: Store[Any], data: dict[str, Any]) -> None:
        if store.key == key:
            writes.append(1)
        await original(store, data)

    with patch.object(Store, "_async_write_data", counting):
        for number in range(5):
            await memory.async_add_fact("user:ada", f"Fact number {number}.")
        await hass.async_block_till_done()
        assert key not in hass_storage
        await _tick(hass, freezer, FACTS_SAVE_DELAY_SECONDS + 1)
    assert len(writes) == 1
    book = stored_book(hass_storage, loaded_entry.entry_id, "user:ada")
    assert len(book["facts"]) == 5


async def test_empty_books_are_not_written(
    hass: HomeAssistant, hass_storage: dict[str, Any], loaded_entry: MockConfigEntry
) -> None:
    """A speaker whose facts were all removed and whose history is empty is dropped."""
    memory = memory_of(loaded_entry)
    fact = await memory.async_add_fact("user:ada", "Temporary.")
    await memory.async_add_fact("user:kai", "Kai likes jazz.")
    await memory.async_remove_fact("user:ada", fact.id)
    memory.facts.book("user:ada").clear_history()
    await memory.facts.async_flush()
    data = stored(hass_storage, loaded_entry.entry_id)
    assert data is not None
    speakers = data["data"]["speakers"]
    assert list(speakers) == ["user:kai"]
    assert memory.facts.speakers() == ["user:kai"]


async def _set_up_with_good_file(
    hass: HomeAssistant, storage_dir: Path, config_entry: MockConfigEntry
) -> Path:
    """The entry, set up on a real facts file (GOOD); the file's path."""
    path = facts_file(storage_dir, config_entry)
    write(path, json.dumps(GOOD))
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    return path


async def _tick(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, seconds: float
) -> None:
    freezer.tick(timedelta(seconds=seconds))
    async_fire_time_changed(hass)
    await hass.async_block_till_done()


def _disk_full(entry: MockConfigEntry, refusals: list[int]) -> Any:
    """While in it, writes of this entry's facts fail as long as
    ``refusals[0]`` > 0, as on a full or read-only disk (the data is taken
    first, as a real write takes it); other stores write as usual."""
    key = storage_key(entry.entry_id)
    original = Store._async_write_data

    async def write_data(store: Store, data: dict[str, Any]) -> None:
        if store.key == key and refusals[0] > 0:
            refusals[0] -= 1
            if "data_func" in data:
                data["data"] = data.pop("data_func")()
            raise WriteError("No space left on device")
        await original(store, data)

    return patch.object(Store, "_async_write_data", write_data)


async def _set_up_with_a_new_fact(
    hass: HomeAssistant, storage_dir: Path, config_entry: MockConfigEntry
) -> Path:
    """The entry on a real facts file, and a fact added since (not yet written)."""
    path = await _set_up_with_good_file(hass, storage_dir, config_entry)
    await memory_of(config_entry).async_add_fact("user:ada", LEFT_HANDED)
    return path


@asynccontextmanager
async def _first_write_refused(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, entry: MockConfigEntry
) -> AsyncIterator[None]:
    """The save delay passes and the disk refuses that one write; later
    writes in the block succeed."""
    refusals = [1]
    with _disk_full(entry, refusals):
        await _tick(hass, freezer, FACTS_SAVE_DELAY_SECONDS + 1)
        assert refusals == [0]
        yield


def _texts_on_disk(path: Path, speaker: str) -> list[str]:
    written = json.loads(path.read_text(encoding="utf-8"))
    return [fact["text"] for fact in written["data"]["speakers"][speaker]["facts"]]


async def test_a_refused_write_is_written_again_a_minute_later(
    hass: HomeAssistant,
    storage_dir: Path,
    config_entry: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Found by review: HA logs a failed write and drops the data it took, and
    the store took its facts for saved; the new fact was lost on restart."""
    path = await _set_up_with_a_new_fact(hass, storage_dir, config_entry)
    async with _first_write_refused(hass, freezer, config_entry):
        assert LEFT_HANDED not in _texts_on_disk(path, "user:ada")
        await _tick(hass, freezer, FACTS_RETRY_SAVE_DELAY_SECONDS + 1)
    assert LEFT_HANDED in _texts_on_disk(path, "user:ada")
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_a_refused_write_is_written_on_unload(
    hass: HomeAssistant,
    storage_dir: Path,
    config_entry: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    path = await _set_up_with_a_new_fact(hass, storage_dir, config_entry)
    async with _first_write_refused(hass, freezer, config_entry):
        assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert LEFT_HANDED in _texts_on_disk(path, "user:ada")


async def test_a_write_refused_on_unload_leaves_no_store_writing(
    hass: HomeAssistant,
    storage_dir: Path,
    config_entry: MockConfigEntry,
) -> None:
    """The last flush fails: HA logs it; no retry outlives the entry (it would
    overwrite what the entry writes when it is set up again)."""
    path = await _set_up_with_good_file(hass, storage_dir, config_entry)
    memory = memory_of(config_entry)
    await memory.async_add_fact("user:ada", LEFT_HANDED)
    refusals = [1]
    with _disk_full(config_entry, refusals):
        assert await hass.config_entries.async_unload(config_entry.entry_id)
        await hass.async_block_till_done()
    assert refusals == [0]
    assert memory.facts._store._data is None  # no save pending, no timer
    assert LEFT_HANDED not in _texts_on_disk(path, "user:ada")


async def test_a_use_count_after_a_refused_write_does_not_delay_the_retry(
    hass: HomeAssistant,
    storage_dir: Path,
    config_entry: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Use counts alone wait a day; the retry of refused facts does not."""
    path = await _set_up_with_a_new_fact(hass, storage_dir, config_entry)
    async with _first_write_refused(hass, freezer, config_entry):
        memory_of(config_entry).facts.async_usage_changed()
        await _tick(hass, freezer, FACTS_RETRY_SAVE_DELAY_SECONDS + 1)
    assert LEFT_HANDED in _texts_on_disk(path, "user:ada")
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_a_real_change_after_two_use_counts_is_written_soon(
    hass: HomeAssistant,
    storage_dir: Path,
    config_entry: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Found by review (older than the retry): a second use count asked HA's
    Store for a write a day later, and the Store then put off the real
    change's write to that day."""
    path = await _set_up_with_good_file(hass, storage_dir, config_entry)
    memory = memory_of(config_entry)
    memory.facts.async_usage_changed()
    await _tick(hass, freezer, 10)
    memory.facts.async_usage_changed()
    await memory.async_add_fact("user:ada", LEFT_HANDED)
    await _tick(hass, freezer, FACTS_SAVE_DELAY_SECONDS + 1)
    await _tick(hass, freezer, 60)
    assert LEFT_HANDED in _texts_on_disk(path, "user:ada")
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_a_disk_that_stays_full_is_tried_less_and_less_often(
    hass: HomeAssistant,
    storage_dir: Path,
    config_entry: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Found by review: a retry every minute logged HA's error 1,440 times a
    day. From a minute, twice as long each time, then hourly; the facts are
    written once the disk takes them."""
    path = await _set_up_with_good_file(hass, storage_dir, config_entry)
    await memory_of(config_entry).async_add_fact("user:ada", LEFT_HANDED)
    refusals = [10**6]
    with _disk_full(config_entry, refusals):
        await _tick(hass, freezer, FACTS_SAVE_DELAY_SECONDS + 1)
        for _ in range(180):  # three hours, a minute at a time
            await _tick(hass, freezer, 60)
        # 5 s, then after 1, 2, 4, 8, 16, 32 and 60 minutes: 8 writes, not 181.
        assert 10**6 - refusals[0] == 8
        refusals[0] = 0  # the disk has room again
        await _tick(hass, freezer, FACTS_MAX_RETRY_SAVE_DELAY_SECONDS + 1)
    assert LEFT_HANDED in _texts_on_disk(path, "user:ada")
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_a_write_refused_as_ha_stops_leaves_no_retry(
    hass: HomeAssistant,
    storage_dir: Path,
    config_entry: MockConfigEntry,
) -> None:
    """Found by review: HA's final write failed and a retry was armed after it."""
    await _set_up_with_good_file(hass, storage_dir, config_entry)
    memory = memory_of(config_entry)
    await memory.async_add_fact("user:ada", LEFT_HANDED)
    refusals = [1]
    with _disk_full(config_entry, refusals):
        await hass.async_stop(force=True)
    assert refusals == [0]
    assert memory.facts._store._data is None  # nothing pending, no timer


async def test_a_write_refused_while_ha_starts_is_written_again(
    hass: HomeAssistant,
    storage_dir: Path,
    config_entry: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Found by a second review: only stopping HA arms no retry; a slow start
    (HA "starting") does."""
    path = await _set_up_with_a_new_fact(hass, storage_dir, config_entry)
    hass.set_state(CoreState.starting)
    async with _first_write_refused(hass, freezer, config_entry):
        pass
    hass.set_state(CoreState.running)
    await _tick(hass, freezer, FACTS_RETRY_SAVE_DELAY_SECONDS + 1)
    assert LEFT_HANDED in _texts_on_disk(path, "user:ada")
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_a_change_made_during_a_refused_write_keeps_its_own_write(
    hass: HomeAssistant,
    storage_dir: Path,
    config_entry: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Found by a second review: the retry's later deadline put off the 5 s
    write of a change made while the refused write was under way."""
    path = await _set_up_with_good_file(hass, storage_dir, config_entry)
    memory = memory_of(config_entry)
    await memory.async_add_fact("user:ada", LEFT_HANDED)
    key = storage_key(config_entry.entry_id)
    original = Store._async_write_data
    refused: list[bool] = []

    async def write_data(store: Store, data: dict[str, Any]) -> None:
        if store.key == key and not refused:
            refused.append(True)
            data["data"] = data.pop("data_func")()
            # A real change lands while the write runs in the executor.
            await memory.async_add_fact("user:ada", "The user owns a red bicycle.")
            raise WriteError("No space left on device")
        await original(store, data)

    with patch.object(Store, "_async_write_data", write_data):
        await _tick(hass, freezer, FACTS_SAVE_DELAY_SECONDS + 1)
        assert refused
        await _tick(hass, freezer, FACTS_SAVE_DELAY_SECONDS + 1)
    written = _texts_on_disk(path, "user:ada")
    assert "The user owns a red bicycle." in written
    assert LEFT_HANDED in written
    assert await hass.config_entries.async_unload(config_entry.entry_id)
