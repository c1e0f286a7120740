"""Decide whose memory a request belongs to: the pure part of speaker resolution.

The key names both a session buffer and a fact book, so it must be stable
across requests from the same person and distinct between people. Home
Assistant's conversation id is the weakest signal: a new voice request often
carries a new one, so it is only the last resort.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "ANONYMOUS",
    "KEY_PREFIXES",
    "is_lasting_speaker",
    "session_key",
    "session_speaker",
    "speaker_key",
]

ANONYMOUS = "anonymous"
# Between the agent and the speaker in a session buffer's key. Agent ids
# (subentry ids) and speaker keys never contain it.
_SESSION_SEPARATOR = "|"
# Prefixes of every key this module returns (besides ANONYMOUS).
KEY_PREFIXES = ("user:", "person:", "device:", "conversation:")


def is_lasting_speaker(speaker: str) -> bool:
    """Whether facts about the speaker can ever be used again.

    A speaker known only by its conversation id (no user, no satellite) gets a
    new key with the next conversation: its session buffer already holds what
    was said, and distilled facts would only pile up on disk, never read.
    """
    return speaker.startswith(KEY_PREFIXES[:3])


def _mapped_key(value: str) -> str:
    """Turn a device->person mapping value into a key.

    A value that already is a key ("user:<id>", "person:...") is used as is:
    this lets the Home Assistant glue map a satellite straight to the key of
    the HA user linked to the person, so voice requests from that satellite
    and requests from that user's app share one memory. Anything else (a
    person entity id such as "person.anna", or a name) becomes "person:<value>".
    """
    if value.startswith(("user:", "person:")):
        return value
    return f"person:{value}"


def speaker_key(
    *,
    user_id: str | None,
    device_id: str | None,
    conversation_id: str | None,
    device_people: Mapping[str, str],
) -> str:
    """Return the memory key for a request, from the strongest signal available.

    In order: the HA user ("user:<id>"); the satellite/device mapped to a
    person in the options (see :func:`_mapped_key`); the unmapped device
    ("device:<id>"); the conversation ("conversation:<id>"); else "anonymous",
    which every unidentifiable request shares. Empty or blank ids and mapping
    values count as absent.
    """
    if user_id and user_id.strip():
        return f"user:{user_id.strip()}"
    if device_id and device_id.strip():
        device_id = device_id.strip()
        person = device_people.get(device_id, "").strip()
        if person:
            return _mapped_key(person)
        return f"device:{device_id}"
    if conversation_id and conversation_id.strip():
        return f"conversation:{conversation_id.strip()}"
    return ANONYMOUS


def session_key(agent: str, speaker: str) -> str:
    """The key of a session buffer: one per agent and speaker.

    Two agents of one server may have different personas and tools; a
    transcript of one replayed to the other would mislead it. Facts are
    about the person, so they stay keyed by the speaker alone.
    """
    return f"{agent}{_SESSION_SEPARATOR}{speaker}"


def session_speaker(key: str) -> str:
    """The speaker of a session buffer's key."""
    return key.partition(_SESSION_SEPARATOR)[2] or key
