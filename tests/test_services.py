"""The admin services that manage memory: sessions and facts."""

from __future__ import annotations

from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError, Unauthorized
from homeassistant.helpers import device_registry as dr
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.local_assistant.const import DOMAIN
from custom_components.local_assistant.memory.store import storage_key
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse
from tests.helpers.memory import (
    create_user,
    memory_of,
    storage_entry,
    stored_fact_texts,
)

SPEAKER = "user:ada-id"
FACT_KEYS = {
    "id",
    "text",
    "source",
    "pinned",
    "created",
    "updated",
    "last_used",
    "use_count",
}


@pytest.fixture
def admin(hass_admin_user: MockUser) -> Context:
    return Context(user_id=hass_admin_user.id)


@pytest.fixture(autouse=True)
def ada_user(hass: HomeAssistant) -> MockUser:
    """The HA user behind SPEAKER: services refuse keys of users that do not exist."""
    return MockUser(id="ada-id", name="Ada Byron").add_to_hass(hass)


async def call(
    hass: HomeAssistant,
    service: str,
    data: dict[str, Any],
    context: Context,
    *,
    response: bool = True,
) -> Any:
    return await hass.services.async_call(
        DOMAIN,
        service,
        data,
        blocking=True,
        return_response=response,
        context=context,
    )


def target(
    entry: MockConfigEntry, speaker: str = SPEAKER, **extra: Any
) -> dict[str, Any]:
    return {"config_entry_id": entry.entry_id, "speaker": speaker, **extra}


async def test_list_facts_response_shape(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    admin: Context,
) -> None:
    """`{"facts": [{"id", "text", "source", ...}], "history": [...]}`."""
    hass_storage[storage_key(config_entry.entry_id)] = storage_entry(
        {SPEAKER: ["The user has a cat."]}
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await call(
        hass, "add_fact", target(config_entry, text="The user is left-handed."), admin
    )

    result = await call(hass, "list_facts", target(config_entry), admin)
    assert result["speaker"] == SPEAKER
    assert [fact.keys() for fact in result["facts"]] == [FACT_KEYS, FACT_KEYS]
    # Manual (pinned) facts come first.
    assert [
        (fact["text"], fact["source"], fact["pinned"]) for fact in result["facts"]
    ] == [
        ("The user is left-handed.", "manual", True),
        ("The user has a cat.", "extracted", False),
    ]
    assert result["history"] == []
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_times_are_iso_8601(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    admin: Context,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Times read as dates in templates and the UI, not as POSIX seconds."""
    freezer.move_to("2026-05-04 09:30:00+00:00")
    added = await call(
        hass, "add_fact", target(loaded_entry, text="The user rows."), admin
    )
    assert added["fact"]["created"] == "2026-05-04T09:30:00+00:00"
    assert added["fact"]["updated"] == "2026-05-04T09:30:00+00:00"
    assert added["fact"]["last_used"] is None

    freezer.move_to("2026-05-05 18:00:00+00:00")
    await call(
        hass, "remove_fact", target(loaded_entry, fact_id=added["fact"]["id"]), admin
    )
    listed = await call(hass, "list_facts", target(loaded_entry), admin)
    (entry,) = listed["history"]
    assert entry["at"] == "2026-05-05T18:00:00+00:00"
    assert entry["fact"]["created"] == "2026-05-04T09:30:00+00:00"


async def test_list_facts_needs_a_response(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, admin: Context
) -> None:
    with pytest.raises(ServiceValidationError):
        await call(hass, "list_facts", target(loaded_entry), admin, response=False)


async def test_add_remove_restore_clear(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    loaded_entry: MockConfigEntry,
    admin: Context,
) -> None:
    """The whole life of a fact through the services, saved to the store."""
    added = await call(
        hass, "add_fact", target(loaded_entry, text="  The user   sails. "), admin
    )
    fact = added["fact"]
    assert fact["text"] == "The user sails."
    assert (fact["source"], fact["pinned"]) == ("manual", True)

    removed = await call(
        hass, "remove_fact", target(loaded_entry, fact_id=fact["id"]), admin
    )
    assert removed["fact"]["id"] == fact["id"]
    listed = await call(hass, "list_facts", target(loaded_entry), admin)
    assert listed["facts"] == []
    (entry,) = listed["history"]
    assert entry["fact"]["text"] == "The user sails."
    assert entry["reason"] == "removed"
    assert set(entry) == {"fact", "reason", "at", "replaced_by"}

    restored = await call(
        hass, "restore_fact", target(loaded_entry, fact_id=fact["id"]), admin
    )
    assert restored["fact"]["text"] == "The user sails."
    listed = await call(hass, "list_facts", target(loaded_entry), admin)
    assert [item["text"] for item in listed["facts"]] == ["The user sails."]
    assert listed["history"] == []

    await call(
        hass, "add_fact", target(loaded_entry, text="The user likes tea."), admin
    )
    cleared = await call(hass, "clear_facts", target(loaded_entry), admin)
    assert cleared["cleared"] == 2
    listed = await call(hass, "list_facts", target(loaded_entry), admin)
    assert listed["facts"] == []
    assert {item["reason"] for item in listed["history"]} == {"cleared"}

    # Without asking for a response the services still work.
    await call(
        hass,
        "add_fact",
        target(loaded_entry, text="The user skis."),
        admin,
        response=False,
    )
    await memory_of(loaded_entry).facts.async_flush()
    assert stored_fact_texts(hass_storage, loaded_entry.entry_id, SPEAKER) == [
        "The user skis."
    ]


async def test_forget_session(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    admin: Context,
) -> None:
    """The speaker's buffer is dropped: the next request replays nothing."""
    ada = await create_user(hass, "Ada")
    fake_server.queue(fake.text("Hi."), fake.text("Hello again."))
    await converse(hass, "remember me", user_id=ada)
    result = await call(hass, "forget_session", target(loaded_entry, "Ada"), admin)
    assert result == {"speaker": f"user:{ada}", "forgotten": True}
    await converse(hass, "who am I?", user_id=ada)
    assert fake_server.last_request["messages"][1:] == [
        {"role": "user", "content": "who am I?"}
    ]
    again = await call(
        hass, "forget_session", target(loaded_entry, f"user:{ada}"), admin
    )
    assert again["forgotten"] is True
    nothing = await call(
        hass, "forget_session", target(loaded_entry, f"user:{ada}"), admin
    )
    assert nothing["forgotten"] is False


async def test_speaker_references(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    admin: Context,
    device_registry: dr.DeviceRegistry,
) -> None:
    """A key, a person entity (its user's key when linked), a user's or a person's name."""
    ada = await create_user(hass, "Ada Lovelace")
    hass.states.async_set(
        "person.ada", "home", {"user_id": ada, "friendly_name": "Ada"}
    )
    hass.states.async_set("person.bob", "home", {"friendly_name": "Bob"})
    satellite = device_registry.async_get_or_create(
        config_entry_id=loaded_entry.entry_id, identifiers={(DOMAIN, "kitchen")}
    )
    expectations = {
        f"user:{ada}": f"user:{ada}",
        "person.ada": f"user:{ada}",
        "ada lovelace": f"user:{ada}",
        "Ada": f"user:{ada}",
        "person.bob": "person:person.bob",
        "person:person.bob": "person:person.bob",
        "bob": "person:person.bob",
        f"device:{satellite.id}": f"device:{satellite.id}",
    }
    for ref, key in expectations.items():
        result = await call(hass, "list_facts", target(loaded_entry, ref), admin)
        assert result["speaker"] == key, ref


@pytest.mark.parametrize(
    "ref",
    [
        "nobody",
        "person.nobody",
        "   ",
        "user:typo",
        "device:no-such-device",
        "person:person.nobody",
        "person:",
        "conversation:01J0000000",
        "anonymous",
    ],
)
async def test_unknown_speaker(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, admin: Context, ref: str
) -> None:
    """A reference that names nobody is refused instead of creating a phantom speaker."""
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "add_fact", target(loaded_entry, ref, text="A fact."), admin)
    assert err.value.translation_key == "unknown_speaker"
    assert err.value.translation_placeholders == {"speaker": ref}
    assert memory_of(loaded_entry).facts.speakers() == []


async def test_a_system_user_is_no_speaker(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, admin: Context
) -> None:
    system = await hass.auth.async_create_system_user("Supervisor")
    with pytest.raises(ServiceValidationError):
        await call(hass, "list_facts", target(loaded_entry, f"user:{system.id}"), admin)


async def test_speakers_memory_knows_are_accepted_after_they_are_gone(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    admin: Context,
) -> None:
    """Facts of a deleted user, or a conversation's live session, stay manageable."""
    hass_storage[storage_key(config_entry.entry_id)] = storage_entry(
        {"user:deleted-user": ["The user has a cat."]}
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    listed = await call(
        hass, "list_facts", target(config_entry, "user:deleted-user"), admin
    )
    assert [fact["text"] for fact in listed["facts"]] == ["The user has a cat."]
    cleared = await call(
        hass, "clear_facts", target(config_entry, "user:deleted-user"), admin
    )
    assert cleared["cleared"] == 1

    fake_server.queue(fake.text("Hi."))
    result = await converse(hass, "hello")
    key = f"conversation:{result.conversation_id}"
    forgotten = await call(hass, "forget_session", target(config_entry, key), admin)
    assert forgotten == {"speaker": key, "forgotten": True}
    assert await hass.config_entries.async_unload(config_entry.entry_id)


@pytest.mark.parametrize(
    ("service", "extra", "key"),
    [
        ("remove_fact", {"fact_id": "missing"}, "fact_not_found"),
        ("restore_fact", {"fact_id": "missing"}, "fact_not_found"),
        ("add_fact", {"text": "   "}, "fact_empty"),
        ("add_fact", {"text": "x" * 500}, "fact_too_long"),
    ],
)
async def test_validation_errors(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    admin: Context,
    service: str,
    extra: dict[str, Any],
    key: str,
) -> None:
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, service, target(loaded_entry, **extra), admin)
    assert err.value.translation_key == key
    assert err.value.translation_domain == DOMAIN


async def test_duplicate_fact_and_restore_conflict(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, admin: Context
) -> None:
    first = await call(
        hass, "add_fact", target(loaded_entry, text="The user sails."), admin
    )
    with pytest.raises(ServiceValidationError) as err:
        await call(
            hass, "add_fact", target(loaded_entry, text="the user SAILS."), admin
        )
    assert err.value.translation_key == "fact_duplicate"

    await call(
        hass, "remove_fact", target(loaded_entry, fact_id=first["fact"]["id"]), admin
    )
    await call(hass, "add_fact", target(loaded_entry, text="The user sails."), admin)
    with pytest.raises(ServiceValidationError) as err:
        await call(
            hass,
            "restore_fact",
            target(loaded_entry, fact_id=first["fact"]["id"]),
            admin,
        )
    assert err.value.translation_key == "fact_duplicate"


async def test_unknown_and_unloaded_entries(
    hass: HomeAssistant, config_entry: MockConfigEntry, admin: Context
) -> None:
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    with pytest.raises(ServiceValidationError) as err:
        await call(
            hass, "list_facts", {"config_entry_id": "nope", "speaker": SPEAKER}, admin
        )
    assert err.value.translation_key == "entry_not_found"

    assert await hass.config_entries.async_unload(config_entry.entry_id)
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "list_facts", target(config_entry), admin)
    assert err.value.translation_key == "entry_not_loaded"


@pytest.mark.parametrize(
    ("service", "extra"),
    [
        ("list_facts", {}),
        ("add_fact", {"text": "The user is an admin."}),
        ("remove_fact", {"fact_id": "x"}),
        ("clear_facts", {}),
        ("restore_fact", {"fact_id": "x"}),
        ("forget_session", {}),
    ],
)
async def test_services_are_admin_only(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    hass_read_only_user: MockUser,
    service: str,
    extra: dict[str, Any],
) -> None:
    """A non-admin user gets Unauthorized and nothing changes."""
    context = Context(user_id=hass_read_only_user.id)
    with pytest.raises(Unauthorized):
        await call(
            hass,
            service,
            target(loaded_entry, **extra),
            context,
            response=service == "list_facts",
        )
    assert memory_of(loaded_entry).facts.speakers() == []


async def test_services_are_registered_with_descriptions(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """services.yaml and the translations describe every service."""
    from homeassistant.helpers.service import async_get_all_descriptions

    descriptions = (await async_get_all_descriptions(hass))[DOMAIN]
    assert set(descriptions) == {
        "forget_session",
        "list_facts",
        "add_fact",
        "remove_fact",
        "clear_facts",
        "restore_fact",
    }
    assert set(descriptions["add_fact"]["fields"]) == {
        "config_entry_id",
        "speaker",
        "text",
    }


async def test_clear_facts_completely(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    loaded_entry: MockConfigEntry,
    admin: Context,
) -> None:
    """`include_history` leaves nothing about the speaker, on disk either."""
    fact = await call(
        hass, "add_fact", target(loaded_entry, text="The user is Ada."), admin
    )
    await call(
        hass, "remove_fact", target(loaded_entry, fact_id=fact["fact"]["id"]), admin
    )
    await call(hass, "add_fact", target(loaded_entry, text="The user sails."), admin)
    result = await call(
        hass, "clear_facts", target(loaded_entry, include_history=True), admin
    )
    assert result["cleared"] == 1
    listed = await call(hass, "list_facts", target(loaded_entry), admin)
    assert listed["facts"] == listed["history"] == []
    await memory_of(loaded_entry).facts.async_flush()
    assert "Ada" not in str(hass_storage)
    assert "sails" not in str(hass_storage)
