"""Tests for the pure speaker key resolution (no Home Assistant)."""

from __future__ import annotations

from hypothesis import given, strategies as st
import pytest

from custom_components.local_assistant.memory.speaker import (
    ANONYMOUS,
    KEY_PREFIXES,
    speaker_key,
)

PEOPLE = {
    "sat_kitchen": "person.anna",
    "sat_office": "user:abc123",  # the glue resolved the person's linked HA user
    "sat_blank": "  ",
}


@pytest.fixture(autouse=True)
def setup_ha() -> None:
    """Override the suite's autouse fixture: these pure tests need no hass."""


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations() -> None:
    """Override the suite's autouse fixture: these pure tests need no hass."""


@pytest.mark.parametrize(
    ("user_id", "device_id", "conversation_id", "expected"),
    [
        pytest.param("u1", "sat_kitchen", "c1", "user:u1", id="user-wins-over-device"),
        pytest.param("u1", None, None, "user:u1", id="user-only"),
        pytest.param(
            None, "sat_kitchen", "c1", "person:person.anna", id="mapped-device"
        ),
        pytest.param(None, "sat_office", "c1", "user:abc123", id="mapped-to-user-key"),
        pytest.param(
            None, "sat_blank", "c1", "device:sat_blank", id="blank-mapping-ignored"
        ),
        pytest.param(
            None, "sat_garage", "c1", "device:sat_garage", id="unmapped-device"
        ),
        pytest.param(None, None, "c1", "conversation:c1", id="conversation"),
        pytest.param(None, None, None, ANONYMOUS, id="anonymous"),
        pytest.param("", "", "", ANONYMOUS, id="empty-strings-are-absent"),
        pytest.param("  ", None, "c1", "conversation:c1", id="blank-user-is-absent"),
    ],
)
def test_speaker_key(
    user_id: str | None,
    device_id: str | None,
    conversation_id: str | None,
    expected: str,
) -> None:
    assert (
        speaker_key(
            user_id=user_id,
            device_id=device_id,
            conversation_id=conversation_id,
            device_people=PEOPLE,
        )
        == expected
    )


def test_person_name_mapping() -> None:
    key = speaker_key(
        user_id=None, device_id="d", conversation_id=None, device_people={"d": "Anna"}
    )
    assert key == "person:Anna"


def test_existing_person_key_is_not_prefixed_twice() -> None:
    key = speaker_key(
        user_id=None,
        device_id="d",
        conversation_id=None,
        device_people={"d": "person:anna"},
    )
    assert key == "person:anna"


_ID = st.one_of(st.none(), st.text(max_size=12))


@given(user_id=_ID, device_id=_ID, conversation_id=_ID, person=st.text(max_size=12))
def test_key_is_always_prefixed_and_deterministic(
    user_id: str | None, device_id: str | None, conversation_id: str | None, person: str
) -> None:
    people = {device_id: person} if device_id else {}
    key = speaker_key(
        user_id=user_id,
        device_id=device_id,
        conversation_id=conversation_id,
        device_people=people,
    )
    assert key == ANONYMOUS or key.startswith(KEY_PREFIXES)
    assert key == speaker_key(
        user_id=user_id,
        device_id=device_id,
        conversation_id=conversation_id,
        device_people=people,
    )
    if user_id and user_id.strip():
        assert key == f"user:{user_id.strip()}"
