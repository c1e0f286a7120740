"""Hunt 36: defects found in set-up, flows, memory store and lifecycle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from homeassistant import config_entries
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_API_KEY
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import (
    CONF_BASE_URL,
    CONF_EXTRACTION,
    CONF_MAX_FACTS,
    DOMAIN,
    EXTRACTION_OFF,
)
from custom_components.local_assistant.memory.store import storage_key
from tests.helpers import fake_openai as fake
from tests.helpers.ha import MODEL
from tests.helpers.live import async_save_agent_form, old_sea_list_entry, set_sensor
from tests.helpers.memory import (
    facts_file,
    kept_copies,
    memory_of,
    our_repair_issues,
    storage_entry,
    write,
)


async def _open_speaker_menu(
    hass: HomeAssistant, entry: MockConfigEntry, speaker: str
) -> Any:
    result = await hass.config_entries.options.async_init(entry.entry_id)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": "pick_speaker"}
    )
    assert result["type"] is FlowResultType.FORM
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"speaker": speaker}
    )
    assert result["type"] is FlowResultType.MENU
    assert result["step_id"] == "speaker"
    return result


async def test_fact_manager_left_open_while_the_entry_unloads_does_not_crash(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """The user has "Manage remembered facts" open on a person's menu; meanwhile
    the entry unloads (disabled in another tab, or a reload while the model server
    is asleep leaves it retrying). Clicking "Edit a fact" (or submitting "Add a
    fact") then shows "Unknown error occurred" in the UI and an AttributeError
    traceback in the log: flows/options.py `_memory` reads
    `config_entry.runtime_data`, which HA deletes on unload, and only
    `async_step_pick_speaker` checks the entry is loaded. The flow should abort
    with its own `not_loaded` reason ("the server is not connected"), as
    pick_speaker does.
    """
    hass.states.async_set("person.bob", "home", {"friendly_name": "Bob"})
    speaker = "person:person.bob"
    await memory_of(loaded_entry).async_add_fact(speaker, "The user likes tea.")
    result = await _open_speaker_menu(hass, loaded_entry, speaker)
    assert "edit_fact" in result["menu_options"]

    assert await hass.config_entries.async_unload(loaded_entry.entry_id)
    await hass.async_block_till_done()

    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": "edit_fact"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "not_loaded"


async def test_deleting_the_entry_deletes_the_facts_it_set_aside(
    hass: HomeAssistant, storage_dir: Path, config_entry: MockConfigEntry
) -> None:
    """A facts file from a newer version (after a downgrade) or one with a broken
    record is renamed to `local_assistant.facts.<entry>.corrupt-<time>` and kept.
    The user then deletes the integration; the README promises "This removes the
    agents, their devices and the stored facts". But async_remove_entry
    (memory/manager.py async_remove_memory -> memory/store.py async_remove_store)
    deletes only `local_assistant.facts.<entry>`: every person's facts stay on
    disk in the kept copy, orphaned (no entry, no UI, no service reaches them),
    and go into every backup. Facts are personal data; deleting the integration
    must delete every file of the entry.
    """
    newer = storage_entry({"user:ada": ["The user takes insulin at 8."]})
    newer["version"] = 2  # written by a newer release, read after a downgrade
    path = facts_file(storage_dir, config_entry)
    write(path, json.dumps(newer))
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.LOADED
    assert len(kept_copies(path)) == 1  # set aside, as designed

    await hass.config_entries.async_remove(config_entry.entry_id)
    await hass.async_block_till_done()

    left = [
        file.name
        for file in storage_dir.iterdir()
        if file.name.startswith(path.name)
        and "insulin" in file.read_text(encoding="utf-8")
    ]
    assert left == [], (
        f"personal facts left on disk after the entry was deleted: {left}"
    )
    # The repair issue naming the copy went with it.
    assert not our_repair_issues(hass)


@pytest.mark.xfail(
    strict=True,
    reason="open: a speaker's key changes when a person gets a login (or a "
    "satellite a person); moving facts on the next lookup was tried and reverted "
    "(review: a shared satellite's notes became one member's, a wrong mapping "
    "for a minute moved them for good, a fact distilled meanwhile was stranded); "
    "a move belongs to the admin's change, with the extractor drained (README)",
)
async def test_linking_a_person_to_a_login_keeps_what_was_remembered_about_them(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """Bob has no HA login yet: his satellite is mapped to person.bob, and his
    facts are stored under `person:person.bob`. The admin then gives Bob a login
    and links it to his person (Settings -> People), as HA suggests. From then
    on memory/manager.py `person_key` answers `user:<id>` for person.bob, and
    nothing moves or reads the facts kept under the old key: `list_facts` for
    person.bob and every prompt of Bob's turns (satellite or app) show no facts,
    and "Manage remembered facts" now lists two "Bob"s told apart only by raw
    keys, the one with the facts being the one Bob never speaks as again. The
    assistant has forgotten everything about Bob because his person got
    linked. (The same happens to a satellite's `device:<id>` facts once the
    satellite is mapped to a person in the options.)
    """
    hass.states.async_set("person.bob", "home", {"friendly_name": "Bob"})
    await hass.services.async_call(
        "local_assistant",
        "add_fact",
        {
            "config_entry_id": loaded_entry.entry_id,
            "speaker": "person.bob",
            "text": "Bob is allergic to peanuts.",
        },
        blocking=True,
        return_response=True,
    )
    bob = await hass.auth.async_create_user("Bob")
    hass.states.async_set(
        "person.bob", "home", {"friendly_name": "Bob", "user_id": bob.id}
    )

    response = await hass.services.async_call(
        "local_assistant",
        "list_facts",
        {"config_entry_id": loaded_entry.entry_id, "speaker": "person.bob"},
        blocking=True,
        return_response=True,
    )
    assert [fact["text"] for fact in response["facts"]] == [
        "Bob is allergic to peanuts."
    ]


async def test_a_pasted_key_with_a_trailing_newline_is_not_a_dead_server(
    hass: HomeAssistant, socket_enabled: None
) -> None:
    """The user copies the server's API key from a terminal or a password
    manager; it comes with a trailing newline (or space). The flow answers
    "Cannot reach the server. Check the URL and that the server is running."
    although the URL is right and the server is up: the key goes unstripped
    (config_flow.py `api_key = user_input.get(CONF_API_KEY) or ""`) into the
    Authorization header, httpx refuses the header value, and
    flows/server_check.py reads the resulting APIConnectionError as
    `cannot_connect`. The user hunts a network problem that does not exist.
    The URL and the model name are trimmed for exactly this reason; the key
    is not (same in reauth, reconfigure and the hosted extractor step).
    """
    async with fake.FakeOpenAIServer(models=[MODEL], api_key="sk-local-1") as server:
        result = await hass.config_entries.flow.async_init(
            DOMAIN, context={"source": config_entries.SOURCE_USER}
        )
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"],
            {CONF_BASE_URL: server.base_url, CONF_API_KEY: "sk-local-1\n"},
        )
        assert result.get("errors") != {"base": "cannot_connect"}
        assert result["step_id"] == "model"
        hass.config_entries.flow.async_abort(result["flow_id"])


async def test_facts_set_aside_at_start_are_reported_in_repairs(
    hass: HomeAssistant, storage_dir: Path, config_entry: MockConfigEntry
) -> None:
    """After a downgrade (a facts file a newer release wrote) the file is moved to
    `…corrupt-<time>` and the assistant starts with no facts at all: "Manage
    remembered facts" says nobody has facts, the voice assistant no longer knows
    anyone. The only trace is one ERROR line in the log (memory/store.py
    `_async_set_aside`). For the same situation with a file that is not JSON,
    HA's own Store raises a repair issue naming the kept copy; ours raises
    none, so a user who never reads the log cannot learn that every person's
    facts are sitting in a side file, nor where.
    """
    newer = storage_entry({"user:ada": ["The user takes insulin at 8."]})
    newer["version"] = 2
    path = facts_file(storage_dir, config_entry)
    write(path, json.dumps(newer))
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    assert memory_of(config_entry).facts.speakers() == []  # facts gone from view
    (copy,) = kept_copies(path)

    issues = our_repair_issues(hass)
    assert issues, (
        f"no repair issue tells the user their facts were moved to {copy.name}"
    )
    # HA's own issue for a store it cannot parse: its text in every language.
    (issue,) = issues
    assert issue.translation_key == "storage_corruption"
    assert issue.translation_placeholders is not None
    assert issue.translation_placeholders["corrupt_path"] == str(copy)


async def test_saving_an_old_agent_for_another_reason_keeps_its_sea_sensors(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer
) -> None:
    """An agent set up before the sea fields keeps its sensors in one old
    `sea_entities` list (old_options.py). The user opens the agent's settings to
    change something else (here the temperature; the repair issue is elsewhere,
    in Settings -> Repairs) and saves the form as it is shown. The form shows the
    old sensors in no field (flows/agent.py builds the suggested values from the
    subentry data, where no by-kind field exists yet) and `_agent_data` stores
    only what the form returned, so the save silently deletes every sea sensor
    of the agent: the sea tool and the kitesurf verdict are gone, and the
    repair issue that named them disappears with the reload. An old option
    must not be lost by an unrelated save; the form should at least carry the
    list (e.g. in "other sea sensors") so the user sees and keeps it.
    """
    set_sensor(hass, "sensor.beach_wind", 12, "kn", "wind_speed", "Beach wind")
    set_sensor(hass, "sensor.beach_tide", 1.8, "m", "distance", "Beach tide")
    sea = ["sensor.beach_wind", "sensor.beach_tide"]
    entry = old_sea_list_entry(hass, fake_server.base_url, sea)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    (subentry,) = entry.subentries.values()
    await async_save_agent_form(hass, entry, {"temperature": 0.3})

    data = entry.subentries[subentry.subentry_id].data
    kept = {
        sensor
        for value in data.values()
        if isinstance(value, list)
        for sensor in value
        if str(sensor).startswith("sensor.")
    }
    assert set(sea) <= kept, f"sea sensors lost by an unrelated save: {dict(data)}"
    await hass.config_entries.async_unload(entry.entry_id)


@pytest.mark.parametrize(
    "entry_options", [{CONF_EXTRACTION: EXTRACTION_OFF, CONF_MAX_FACTS: 10}]
)
async def test_lowering_the_fact_limit_destroys_no_fact(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
) -> None:
    """A household ran with "Remembered facts per person" at 100 (the form allows
    200) and Ada has 70 facts. The prompts get long on the small model, so the
    user lowers the limit to 10. The project's own contract (tests/memory/
    test_store.py: "Nothing is destroyed when the limit is lowered: the extra
    fact is in the history") holds only while the overflow fits the history:
    memory/store.py `async_load` -> FactBook.enforce_limits moves 60 facts to
    a history capped at MAX_HISTORY = 50 (facts.py `_trim_history`), so 10 of
    Ada's facts are deleted outright and the trimmed book is written back to
    disk at once. Raising the limit again brings nothing back, and the
    settings form warns of nothing.
    """
    texts = [f"Ada fact number {number}." for number in range(70)]
    hass_storage[storage_key(config_entry.entry_id)] = storage_entry(
        {"user:ada": texts}
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    memory = memory_of(config_entry)
    kept = {fact.text for fact in memory.list_facts("user:ada")} | {
        entry.fact.text for entry in memory.fact_history("user:ada")
    }
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    lost = [text for text in texts if text not in kept]
    assert lost == [], f"{len(lost)} facts destroyed by lowering the limit"
