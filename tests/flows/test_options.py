"""The options flow (flows/options.py): settings, hosted extractor, people, and fact management."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import device_registry as dr
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
import voluptuous as vol

from custom_components.local_assistant.const import (
    CONF_DEVICE_PEOPLE,
    CONF_EXTRACTION,
    CONF_EXTRACTION_API_KEY,
    CONF_EXTRACTION_BASE_URL,
    CONF_EXTRACTION_MODEL,
    CONF_KEEP_MODEL_LOADED,
    CONF_MAX_FACTS,
    CONF_SESSION_IDLE_MINUTES,
    CONF_SESSION_MAX_CHARS,
    CONF_SESSION_MAX_MESSAGES,
    CONF_TIMEOUT,
    EXTRACTION_HOSTED,
    EXTRACTION_LOCAL,
    EXTRACTION_OFF,
)
from tests.helpers import fake_openai as fake
from tests.helpers.ha import closed_port_url, converse, free_port
from tests.helpers.memory import (
    create_user,
    extraction_requests,
    fact_texts,
    facts_answer,
    memory_of,
    responder,
)

HOSTED_MODEL = "hosted-extractor"
HOSTED_KEY = "sk-hosted"

SETTINGS = {
    CONF_SESSION_IDLE_MINUTES: 45.0,
    CONF_SESSION_MAX_MESSAGES: 40.0,
    CONF_SESSION_MAX_CHARS: 8000.0,
    CONF_MAX_FACTS: 20.0,
    CONF_EXTRACTION: EXTRACTION_OFF,
    CONF_TIMEOUT: 30.0,
}


@pytest.fixture
async def hosted_server(socket_enabled: None) -> AsyncGenerator[fake.FakeOpenAIServer]:
    async with fake.FakeOpenAIServer(
        models=[HOSTED_MODEL], api_key=HOSTED_KEY
    ) as server:
        yield server


async def open_menu(hass: HomeAssistant, entry: MockConfigEntry, step: str) -> Any:
    result = await hass.config_entries.options.async_init(entry.entry_id)
    assert result["type"] is FlowResultType.MENU
    assert result["menu_options"] == ["settings", "people", "pick_speaker"]
    return await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": step}
    )


def suggested(result: Any, field: str) -> Any:
    """The value a form shows in a field before anyone types."""
    (key,) = [key for key in result["data_schema"].schema if key == field]
    return (key.description or {}).get("suggested_value")


async def choose(hass: HomeAssistant, result: Any, step: str) -> Any:
    assert result["type"] is FlowResultType.MENU
    assert step in result["menu_options"]
    return await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": step}
    )


async def submit(hass: HomeAssistant, result: Any, data: dict[str, Any]) -> Any:
    return await hass.config_entries.options.async_configure(result["flow_id"], data)


# --- settings ---------------------------------------------------------------------


async def test_settings_are_saved_and_applied(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """Saving settings reloads the entry with the new limits (numbers as integers)."""
    before = loaded_entry.runtime_data
    result = await open_menu(hass, loaded_entry, "settings")
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "settings"
    result = await submit(hass, result, SETTINGS)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()

    options = loaded_entry.options
    assert options[CONF_SESSION_MAX_MESSAGES] == 40
    assert isinstance(options[CONF_SESSION_MAX_MESSAGES], int)
    assert options[CONF_MAX_FACTS] == 20
    assert loaded_entry.runtime_data is not before
    memory = memory_of(loaded_entry)
    assert memory.sessions.max_messages == 40
    assert memory.sessions.idle_seconds == 45 * 60
    assert memory.sessions.max_chars == 8000
    assert memory.extractor is None


async def test_settings_local_extraction(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    result = await open_menu(hass, loaded_entry, "settings")
    result = await submit(hass, result, {**SETTINGS, CONF_EXTRACTION: EXTRACTION_LOCAL})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    assert memory_of(loaded_entry).extractor is not None


async def test_hosted_extractor_is_validated(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    hosted_server: fake.FakeOpenAIServer,
) -> None:
    """Unreachable, refused key and unknown model are errors; a good endpoint is saved and used."""
    result = await open_menu(hass, loaded_entry, "settings")
    result = await submit(
        hass, result, {**SETTINGS, CONF_EXTRACTION: EXTRACTION_HOSTED}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "hosted"

    cases = [
        (
            {
                CONF_EXTRACTION_BASE_URL: f"http://127.0.0.1:{free_port()}/v1",
                CONF_EXTRACTION_API_KEY: HOSTED_KEY,
                CONF_EXTRACTION_MODEL: HOSTED_MODEL,
            },
            {"base": "cannot_connect"},
        ),
        (
            {
                CONF_EXTRACTION_BASE_URL: hosted_server.base_url,
                CONF_EXTRACTION_API_KEY: "wrong",
                CONF_EXTRACTION_MODEL: HOSTED_MODEL,
            },
            {"base": "invalid_auth"},
        ),
        (
            {
                CONF_EXTRACTION_BASE_URL: hosted_server.base_url,
                CONF_EXTRACTION_API_KEY: HOSTED_KEY,
                CONF_EXTRACTION_MODEL: "no-such-model",
            },
            {CONF_EXTRACTION_MODEL: "model_not_found"},
        ),
    ]
    for user_input, errors in cases:
        result = await submit(hass, result, user_input)
        assert result["type"] is FlowResultType.FORM
        assert result["step_id"] == "hosted"
        assert result["errors"] == errors
    assert loaded_entry.options[CONF_EXTRACTION] == EXTRACTION_OFF

    result = await submit(
        hass,
        result,
        {
            CONF_EXTRACTION_BASE_URL: f"  {hosted_server.base_url}/ ",
            CONF_EXTRACTION_API_KEY: HOSTED_KEY,
            CONF_EXTRACTION_MODEL: f" {HOSTED_MODEL}",
        },
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    options = loaded_entry.options
    assert options[CONF_EXTRACTION] == EXTRACTION_HOSTED
    assert options[CONF_EXTRACTION_BASE_URL] == hosted_server.base_url
    assert options[CONF_EXTRACTION_MODEL] == HOSTED_MODEL

    # The reloaded entry sends extraction to the hosted server only.
    ada = await create_user(hass, "Ada")
    hosted_server.responder = responder(lambda _b: facts_answer(["The user sails."]))
    await converse(hass, "I sail", user_id=ada)
    extractor = memory_of(loaded_entry).extractor
    assert extractor is not None
    await extractor.async_wait_idle()
    assert len(hosted_server.requests) == 1
    assert extraction_requests(fake_server) == []
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == ["The user sails."]


async def test_hosted_server_that_lists_no_models_accepts_any_model(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    hosted_server: fake.FakeOpenAIServer,
) -> None:
    hosted_server.models = []
    result = await open_menu(hass, loaded_entry, "settings")
    result = await submit(
        hass, result, {**SETTINGS, CONF_EXTRACTION: EXTRACTION_HOSTED}
    )
    result = await submit(
        hass,
        result,
        {
            CONF_EXTRACTION_BASE_URL: hosted_server.base_url,
            CONF_EXTRACTION_API_KEY: HOSTED_KEY,
            CONF_EXTRACTION_MODEL: "anything",
        },
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()


async def test_the_hosted_key_is_never_shown_and_never_kept_unused(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    hosted_server: fake.FakeOpenAIServer,
) -> None:
    """Found by a review as an HA core reviewer would: the stored key was the
    form's suggested value (sent to the browser) and stayed in the options
    after extraction was switched to local or off."""
    result = await open_menu(hass, loaded_entry, "settings")
    result = await submit(
        hass, result, {**SETTINGS, CONF_EXTRACTION: EXTRACTION_HOSTED}
    )
    hosted = {
        CONF_EXTRACTION_BASE_URL: hosted_server.base_url,
        CONF_EXTRACTION_API_KEY: HOSTED_KEY,
        CONF_EXTRACTION_MODEL: HOSTED_MODEL,
    }
    assert (await submit(hass, result, hosted))["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()

    # Again: the key field is empty; left empty for the same server, it stays.
    result = await open_menu(hass, loaded_entry, "settings")
    result = await submit(
        hass, result, {**SETTINGS, CONF_EXTRACTION: EXTRACTION_HOSTED}
    )
    assert result["step_id"] == "hosted"
    assert suggested(result, CONF_EXTRACTION_API_KEY) is None
    assert suggested(result, CONF_EXTRACTION_MODEL) == HOSTED_MODEL
    result = await submit(hass, result, {**hosted, CONF_EXTRACTION_API_KEY: ""})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    assert loaded_entry.options[CONF_EXTRACTION_API_KEY] == HOSTED_KEY

    # Off: the key goes.
    result = await open_menu(hass, loaded_entry, "settings")
    result = await submit(hass, result, {**SETTINGS, CONF_EXTRACTION: EXTRACTION_OFF})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    assert CONF_EXTRACTION_API_KEY not in loaded_entry.options


# --- people -------------------------------------------------------------------------


@pytest.fixture
def satellite(hass: HomeAssistant) -> str:
    other = MockConfigEntry(domain="test")
    other.add_to_hass(hass)
    device = dr.async_get(hass).async_get_or_create(
        config_entry_id=other.entry_id,
        identifiers={("test", "kitchen")},
        name="Kitchen satellite",
    )
    return device.id


async def test_map_a_satellite_to_a_person_and_back(
    hass: HomeAssistant,
    satellite: str,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The mapping is saved, used for speaker resolution, and can be removed."""
    ada = await create_user(hass, "Ada")
    hass.states.async_set(
        "person.ada", "home", {"user_id": ada, "friendly_name": "Ada"}
    )
    result = await open_menu(hass, loaded_entry, "people")
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "people"
    # No mapping yet: an empty list, not a lone "-" bullet.
    assert result["description_placeholders"] == {"mapping": "", "mapping_count": "0"}
    # Only real devices are offered, not our agents' service devices.
    schema = result["data_schema"].schema
    (device_key,) = [key for key in schema if key == "device"]
    offered = [option["value"] for option in schema[device_key].config["options"]]
    assert offered == [satellite]

    result = await submit(hass, result, {"device": satellite, "person": "person.ada"})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    assert loaded_entry.options[CONF_DEVICE_PEOPLE] == {satellite: "person.ada"}

    fake_server.queue(fake.text("Hi Ada."), fake.text("Yes, Ada."))
    await converse(hass, "from the app", user_id=ada)
    await converse(hass, "from the kitchen", device_id=satellite)
    assert fake_server.last_request["messages"][1]["content"] == "from the app"

    result = await open_menu(hass, loaded_entry, "people")
    assert result["description_placeholders"] == {
        "mapping": "- Kitchen satellite → Ada",  # the person's name, not its id
        "mapping_count": "1",
    }
    result = await submit(hass, result, {"device": satellite})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    assert loaded_entry.options[CONF_DEVICE_PEOPLE] == {}


async def test_people_without_devices_aborts(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    result = await open_menu(hass, loaded_entry, "people")
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "no_devices"


# --- facts --------------------------------------------------------------------------


async def test_no_speakers_aborts(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    result = await open_menu(hass, loaded_entry, "pick_speaker")
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "no_speakers"


async def test_people_who_never_talked_can_be_picked(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """Facts can be added for a person before their first conversation."""
    hass.states.async_set("person.bob", "home", {"friendly_name": "Bob"})
    result = await open_menu(hass, loaded_entry, "pick_speaker")
    options = result["data_schema"].schema["speaker"].config["options"]
    assert options == [{"value": "person:person.bob", "label": "Bob"}]
    result = await submit(hass, result, {"speaker": "person:person.bob"})
    result = await choose(hass, result, "add_fact")
    result = await submit(hass, result, {"text": "The user is called Bob."})
    assert result["type"] is FlowResultType.MENU
    assert fact_texts(memory_of(loaded_entry), "person:person.bob") == [
        "The user is called Bob."
    ]


async def test_manage_a_speakers_facts(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """Pick a speaker, then add, edit, remove, restore, clear, done: no reload."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    memory = memory_of(loaded_entry)
    tea = await memory.async_add_fact(speaker, "The user likes tea.")
    options_before = dict(loaded_entry.options)
    data_before = loaded_entry.runtime_data

    result = await open_menu(hass, loaded_entry, "pick_speaker")
    assert result["type"] is FlowResultType.FORM
    options = result["data_schema"].schema["speaker"].config["options"]
    assert options == [{"value": speaker, "label": "Ada"}]  # the key out of sight
    result = await submit(hass, result, {"speaker": speaker})
    assert result["type"] is FlowResultType.MENU
    assert result["step_id"] == "speaker"
    assert result["menu_options"] == [
        "add_fact",
        "edit_fact",
        "remove_facts",
        "clear_facts",
        "done",
    ]
    assert result["description_placeholders"] == {
        "speaker": "Ada",
        "fact_count": "1",
        "facts": "1. The user likes tea. ★",
        "history_count": "0",
    }

    # Add, and a duplicate is refused.
    result = await choose(hass, result, "add_fact")
    result = await submit(hass, result, {"text": "The user has a dog called Rex."})
    assert result["type"] is FlowResultType.MENU
    result = await choose(hass, result, "add_fact")
    result = await submit(hass, result, {"text": "the user likes TEA."})
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"text": "fact_duplicate"}
    result = await submit(hass, result, {"text": "The user sails."})
    assert result["type"] is FlowResultType.MENU
    assert sorted(fact_texts(memory, speaker)) == [
        "The user has a dog called Rex.",
        "The user likes tea.",
        "The user sails.",
    ]

    # Edit: pick the fact, then its text is there to change; the old wording goes
    # to the history.
    result = await choose(hass, result, "edit_fact")
    result = await submit(hass, result, {"fact_id": tea.id})
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "edit_fact_text"
    assert suggested(result, "text") == "The user likes tea."
    result = await submit(hass, result, {"text": "the user SAILS."})
    assert result["errors"] == {"text": "fact_duplicate"}
    assert suggested(result, "text") == "the user SAILS."  # what was typed
    result = await submit(hass, result, {"text": "The user likes green tea."})
    assert result["type"] is FlowResultType.MENU
    assert "The user likes green tea." in fact_texts(memory, speaker)
    assert [entry.reason for entry in memory.fact_history(speaker)] == ["rewritten"]
    assert "restore_fact" in result["menu_options"]
    assert result["description_placeholders"]["history_count"] == "1"

    # Remove two at once. Nothing is ticked beforehand (the frontend would tick the
    # first fact of a required field), and submitting none removes none.
    ids = {fact.text: fact.id for fact in memory.list_facts(speaker)}
    result = await choose(hass, result, "remove_facts")
    (field,) = result["data_schema"].schema
    assert isinstance(field, vol.Optional)
    assert field.default is vol.UNDEFINED
    result = await submit(hass, result, {})
    assert len(fact_texts(memory, speaker)) == 3
    result = await choose(hass, result, "remove_facts")
    result = await submit(
        hass,
        result,
        {"fact_ids": [ids["The user sails."], ids["The user has a dog called Rex."]]},
    )
    assert fact_texts(memory, speaker) == ["The user likes green tea."]

    # Restore one from the history (newest first in the list).
    result = await choose(hass, result, "restore_fact")
    history_options = result["data_schema"].schema["fact_id"].config["options"]
    # The text and when it left (local time); no English reason code.
    label = history_options[0]["label"]
    assert label.startswith("The user has a dog called Rex. · 20")
    assert "removed" not in label
    result = await submit(
        hass, result, {"fact_id": ids["The user has a dog called Rex."]}
    )
    assert result["type"] is FlowResultType.MENU
    assert sorted(fact_texts(memory, speaker)) == [
        "The user has a dog called Rex.",
        "The user likes green tea.",
    ]
    # Restoring a fact that duplicates an active one is refused.
    result = await choose(hass, result, "add_fact")
    result = await submit(hass, result, {"text": "The user sails."})
    result = await choose(hass, result, "restore_fact")
    result = await submit(hass, result, {"fact_id": ids["The user sails."]})
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"fact_id": "fact_duplicate"}
    result = await submit(hass, result, {"fact_id": tea.id})
    assert result["type"] is FlowResultType.MENU
    assert "The user likes tea." in fact_texts(memory, speaker)

    # Clear all.
    result = await choose(hass, result, "clear_facts")
    assert result["type"] is FlowResultType.FORM
    result = await submit(hass, result, {})
    assert result["type"] is FlowResultType.MENU
    assert fact_texts(memory, speaker) == []
    assert result["menu_options"] == ["add_fact", "restore_fact", "done"]
    # No facts: a count of 0 and no list (a "-" rendered as a lone bullet).
    assert result["description_placeholders"]["facts"] == ""
    assert result["description_placeholders"]["fact_count"] == "0"

    result = await choose(hass, result, "done")
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    # Facts are saved directly; the options and the loaded entry are untouched.
    assert dict(loaded_entry.options) == options_before
    assert loaded_entry.runtime_data is data_before
    await memory.facts.async_flush()


async def test_speakers_are_listed_by_name(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Names, not keys; a key only tells apart two of the same name; a speaker
    known only by a conversation id (it gets no facts) is not offered."""
    ada = await create_user(hass, "Ada")
    hass.states.async_set("person.ada_2", "home", {"friendly_name": "Ada"})
    fake_server.queue(fake.text("Hi."), fake.text("Hi."))
    await converse(hass, "hello", user_id=ada)
    await converse(hass, "hello")  # no user, no satellite: the conversation id
    result = await open_menu(hass, loaded_entry, "pick_speaker")
    options = result["data_schema"].schema["speaker"].config["options"]
    assert sorted(option["label"] for option in options) == [
        "Ada (person:person.ada_2)",
        f"Ada (user:{ada})",
    ]


async def test_clear_completely_from_the_flow(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """ "Forget completely" also erases the history."""
    memory = memory_of(loaded_entry)
    await memory.async_add_fact("device:kitchen", "The kitchen has a Moka pot.")
    result = await open_menu(hass, loaded_entry, "pick_speaker")
    result = await submit(hass, result, {"speaker": "device:kitchen"})
    result = await choose(hass, result, "clear_facts")
    result = await submit(hass, result, {"include_history": True})
    assert result["type"] is FlowResultType.MENU
    assert result["menu_options"] == ["add_fact", "done"]
    assert memory.fact_history("device:kitchen") == []


async def test_facts_of_an_entry_that_is_not_loaded(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """No crash when the server is down: the flow says why."""
    hass.states.async_set("person.bob", "home", {"friendly_name": "Bob"})
    result = await open_menu(hass, config_entry, "pick_speaker")
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "not_loaded"


# --- settings, step by step: stored types, defaults, every hosted-extractor error ---


FORM_SETTINGS = {
    CONF_SESSION_IDLE_MINUTES: 30.0,
    CONF_SESSION_MAX_MESSAGES: 50.0,
    CONF_SESSION_MAX_CHARS: 8000.0,
    CONF_MAX_FACTS: 10.0,
    CONF_EXTRACTION: EXTRACTION_OFF,
    CONF_TIMEOUT: 30.0,
}


async def start_settings(hass: HomeAssistant, entry: MockConfigEntry) -> Any:
    result = await hass.config_entries.options.async_init(entry.entry_id)
    assert result["type"] is FlowResultType.MENU
    assert "settings" in result["menu_options"]
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": "settings"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "settings"
    return result


async def test_options_settings_saved_and_entry_reloaded(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """Settings are stored as numbers of the right type and the entry reloads."""
    old_client = loaded_entry.runtime_data.client
    result = await start_settings(hass, loaded_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], FORM_SETTINGS
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert loaded_entry.options == {
        CONF_SESSION_IDLE_MINUTES: 30,
        CONF_SESSION_MAX_MESSAGES: 50,
        CONF_SESSION_MAX_CHARS: 8000,
        CONF_MAX_FACTS: 10,
        CONF_EXTRACTION: EXTRACTION_OFF,
        CONF_TIMEOUT: 30.0,
        CONF_KEEP_MODEL_LOADED: False,
    }
    assert isinstance(loaded_entry.options[CONF_SESSION_IDLE_MINUTES], int)
    # Reloaded: a new client with the new timeout.
    assert loaded_entry.state is ConfigEntryState.LOADED
    assert loaded_entry.runtime_data.client is not old_client
    assert loaded_entry.runtime_data.client.timeout == 30.0


async def test_options_defaults_include_session_settings(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """A fresh entry's settings form suggests the documented defaults."""
    result = await start_settings(hass, loaded_entry)
    defaults = {
        str(marker): marker.default()
        for marker in result["data_schema"].schema
        if callable(getattr(marker, "default", None))
    }
    assert defaults[CONF_SESSION_IDLE_MINUTES] == 120
    assert defaults[CONF_SESSION_MAX_MESSAGES] == 200
    assert defaults[CONF_KEEP_MODEL_LOADED] is False


async def test_keep_model_loaded_is_saved_and_applied(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """Off by default; turned on, the reloaded entry keeps the model loaded."""
    assert not loaded_entry.runtime_data.prompt_cache.diagnostics()["keep_model_loaded"]
    result = await start_settings(hass, loaded_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {**FORM_SETTINGS, CONF_KEEP_MODEL_LOADED: True}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert loaded_entry.options[CONF_KEEP_MODEL_LOADED] is True
    assert loaded_entry.runtime_data.prompt_cache.diagnostics()["keep_model_loaded"]


@pytest.fixture
async def hosted_gpt(socket_enabled: None) -> AsyncIterator[fake.FakeOpenAIServer]:
    """A second server standing in for the hosted extractor (key required)."""
    async with fake.FakeOpenAIServer(
        models=["gpt-4o-mini"], api_key="hosted-key"
    ) as server:
        yield server


async def start_hosted(hass: HomeAssistant, entry: MockConfigEntry) -> Any:
    result = await start_settings(hass, entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {**FORM_SETTINGS, CONF_EXTRACTION: EXTRACTION_HOSTED}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "hosted"
    return result


@pytest.mark.parametrize(
    ("url_kind", "api_key", "model", "errors"),
    [
        ("closed", "hosted-key", "gpt-4o-mini", {"base": "cannot_connect"}),
        ("hosted", "wrong", "gpt-4o-mini", {"base": "invalid_auth"}),
        ("broken", "hosted-key", "gpt-4o-mini", {"base": "unknown"}),
        ("hosted", "hosted-key", "gpt-5", {CONF_EXTRACTION_MODEL: "model_not_found"}),
    ],
)
async def test_options_hosted_validation_errors(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    hosted_gpt: fake.FakeOpenAIServer,
    broken_models_url: str,
    url_kind: str,
    api_key: str,
    model: str,
    errors: dict[str, str],
) -> None:
    """The hosted extractor is checked before anything is saved."""
    urls = {
        "closed": closed_port_url(),
        "hosted": hosted_gpt.base_url,
        "broken": broken_models_url,
    }
    options_before = dict(loaded_entry.options)
    result = await start_hosted(hass, loaded_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {
            CONF_EXTRACTION_BASE_URL: urls[url_kind],
            CONF_EXTRACTION_API_KEY: api_key,
            CONF_EXTRACTION_MODEL: model,
        },
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "hosted"
    assert result["errors"] == errors
    assert dict(loaded_entry.options) == options_before


async def test_options_hosted_saved(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    hosted_gpt: fake.FakeOpenAIServer,
) -> None:
    """A working hosted endpoint is stored with the settings."""
    result = await start_hosted(hass, loaded_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {
            CONF_EXTRACTION_BASE_URL: hosted_gpt.base_url + "/",
            CONF_EXTRACTION_API_KEY: "hosted-key",
            CONF_EXTRACTION_MODEL: "gpt-4o-mini",
        },
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert loaded_entry.options[CONF_EXTRACTION] == EXTRACTION_HOSTED
    assert loaded_entry.options[CONF_EXTRACTION_BASE_URL] == hosted_gpt.base_url
    assert loaded_entry.options[CONF_EXTRACTION_API_KEY] == "hosted-key"
    assert loaded_entry.options[CONF_EXTRACTION_MODEL] == "gpt-4o-mini"
    assert loaded_entry.state is ConfigEntryState.LOADED


async def test_options_local_extraction_needs_no_endpoint(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """Choosing the local model finishes at the settings step."""
    result = await start_settings(hass, loaded_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {**FORM_SETTINGS, CONF_EXTRACTION: EXTRACTION_LOCAL}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert loaded_entry.options[CONF_EXTRACTION] == EXTRACTION_LOCAL
