"""Tests for the RAM-only per-speaker session buffers (pure, no Home Assistant)."""

from __future__ import annotations

import sys
import tracemalloc

from hypothesis import given, settings, strategies as st
import pytest

from custom_components.local_assistant.memory.session import (
    ELLIPSIS,
    Command,
    SessionBuffers,
    Turn,
    truncate,
)

IDLE = 7200.0


@pytest.fixture(autouse=True)
def setup_ha() -> None:
    """Override the suite's autouse fixture: these pure tests need no hass."""


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations() -> None:
    """Override the suite's autouse fixture: these pure tests need no hass."""


def _buffers(max_messages: int = 200, max_chars: int = 24_000) -> SessionBuffers:
    return SessionBuffers(
        idle_seconds=IDLE, max_messages=max_messages, max_chars=max_chars
    )


def _texts(turns: list[Turn]) -> list[str]:
    return [turn.text for turn in turns]


def test_history_of_unknown_speaker_is_empty() -> None:
    buffers = _buffers()
    assert buffers.history("user:a", 0.0) == []
    assert len(buffers) == 0


def test_exchange_is_replayed_as_user_then_assistant() -> None:
    buffers = _buffers()
    buffers.append("user:a", "turn on the light", "Done.", 10.0)
    assert buffers.history("user:a", 11.0) == [
        Turn("user", "turn on the light"),
        Turn("assistant", "Done."),
    ]


def test_history_is_a_copy() -> None:
    buffers = _buffers()
    buffers.append("user:a", "u", "a", 0.0)
    buffers.history("user:a", 0.0).clear()
    assert len(buffers.history("user:a", 0.0)) == 2


def test_speakers_are_isolated() -> None:
    buffers = _buffers()
    buffers.append("user:a", "I am A", "Hi A", 0.0)
    buffers.append("device:kitchen", "I am K", "Hi K", 1.0)
    assert _texts(buffers.history("user:a", 2.0)) == ["I am A", "Hi A"]
    assert _texts(buffers.history("device:kitchen", 2.0)) == ["I am K", "Hi K"]
    assert buffers.forget("user:a") is True
    assert buffers.history("user:a", 3.0) == []
    assert _texts(buffers.history("device:kitchen", 3.0)) == ["I am K", "Hi K"]
    assert sorted(buffers.speakers()) == ["device:kitchen"]


def test_forget_unknown_speaker() -> None:
    assert _buffers().forget("user:nobody") is False


def test_idle_reset_on_read() -> None:
    buffers = _buffers()
    buffers.append("user:a", "u", "a", 100.0)
    # Exactly idle_seconds is still the same session; a moment later it is not.
    assert len(buffers.history("user:a", 100.0 + IDLE)) == 2
    assert buffers.history("user:a", 100.0 + IDLE + 0.001) == []
    assert len(buffers) == 0  # the read freed the buffer, not just hid it


def test_reading_does_not_extend_the_session() -> None:
    buffers = _buffers()
    buffers.append("user:a", "u", "a", 0.0)
    assert buffers.history("user:a", IDLE - 1) != []
    assert buffers.history("user:a", IDLE + 1) == []


def test_append_extends_the_session() -> None:
    buffers = _buffers()
    buffers.append("user:a", "u1", "a1", 0.0)
    buffers.append("user:a", "u2", "a2", IDLE - 1)
    assert _texts(buffers.history("user:a", 2 * IDLE - 2)) == ["u1", "a1", "u2", "a2"]


def test_append_after_idle_gap_starts_fresh() -> None:
    buffers = _buffers()
    buffers.append("user:a", "old", "old answer", 0.0)
    buffers.append("user:a", "new", "new answer", IDLE + 1)
    assert _texts(buffers.history("user:a", IDLE + 2)) == ["new", "new answer"]
    assert buffers.stats()["chars"] == len("new") + len("new answer")


def test_sweep_drops_only_idle_buffers() -> None:
    buffers = _buffers()
    buffers.append("user:old1", "u", "a", 0.0)
    buffers.append("user:old2", "u", "a", 10.0)
    buffers.append("user:live", "u", "a", 5000.0)
    assert buffers.sweep(IDLE + 11) == 2
    assert buffers.speakers() == ["user:live"]
    assert len(buffers) == 1
    assert buffers.sweep(IDLE + 11) == 0


def test_sweep_leaves_no_large_table_behind() -> None:
    """A dict keeps its largest table after deletions: the sweep shrinks it."""
    buffers = _buffers()
    for speaker in range(5_000):
        buffers.append(f"user:{speaker}", "u", "a", 0.0)
    full = sys.getsizeof(buffers._buffers)
    assert buffers.sweep(IDLE + 1) == 5_000
    assert sys.getsizeof(buffers._buffers) < full / 100


def test_message_cap_drops_oldest_exchanges() -> None:
    buffers = _buffers(max_messages=4)
    for i in range(3):
        buffers.append("user:a", f"u{i}", f"a{i}", float(i))
    assert _texts(buffers.history("user:a", 3.0)) == ["u1", "a1", "u2", "a2"]


def test_odd_message_cap_keeps_whole_exchanges() -> None:
    buffers = _buffers(max_messages=5)
    for i in range(3):
        buffers.append("user:a", f"u{i}", f"a{i}", float(i))
    history = buffers.history("user:a", 3.0)
    assert _texts(history) == ["u1", "a1", "u2", "a2"]
    assert history[0].role == "user"


def test_char_budget_drops_oldest_exchanges() -> None:
    buffers = _buffers(max_chars=25)
    buffers.append("user:a", "aaaaa", "bbbbb", 0.0)  # 10
    buffers.append("user:a", "ccccc", "ddddd", 1.0)  # 20
    buffers.append("user:a", "eeeee", "fffff", 2.0)  # 30 > 25: drop the first
    assert _texts(buffers.history("user:a", 3.0)) == [
        "ccccc",
        "ddddd",
        "eeeee",
        "fffff",
    ]
    assert buffers.stats()["chars"] == 20


def test_char_budget_never_leaves_an_assistant_turn_first() -> None:
    buffers = _buffers(max_chars=30)
    buffers.append("user:a", "u" * 5, "a" * 20, 0.0)
    buffers.append(
        "user:a", "x" * 2, "y" * 20, 1.0
    )  # 47: must drop the whole first pair
    history = buffers.history("user:a", 2.0)
    assert [turn.role for turn in history] == ["user", "assistant"]
    assert _texts(history) == ["xx", "y" * 20]


def test_single_huge_user_message_is_truncated() -> None:
    buffers = _buffers(max_chars=100)
    buffers.append("user:a", "earlier", "reply", 0.0)
    buffers.append("user:a", "essay " * 1000, "Nice essay.", 1.0)
    history = buffers.history("user:a", 2.0)
    # The old exchange cannot share the budget with a full-size one.
    assert [turn.role for turn in history] == ["user", "assistant"]
    user, assistant = history
    assert user.text.endswith(ELLIPSIS)
    assert user.text.startswith("essay essay")
    assert assistant.text == "Nice essay."  # the short side is kept whole
    assert len(user.text) + len(assistant.text) <= 100
    assert buffers.stats()["chars"] <= 100


def test_single_huge_assistant_message_is_truncated() -> None:
    buffers = _buffers(max_chars=50)
    buffers.append("user:a", "tell me everything", "x" * 500, 0.0)
    user, assistant = buffers.history("user:a", 1.0)
    assert user.text == "tell me everything"
    assert assistant.text.endswith(ELLIPSIS)
    assert len(user.text) + len(assistant.text) <= 50


def test_both_huge_share_the_budget() -> None:
    buffers = _buffers(max_chars=100)
    buffers.append("user:a", "u" * 500, "a" * 500, 0.0)
    user, assistant = buffers.history("user:a", 1.0)
    assert len(user.text) == 50
    assert len(assistant.text) == 50
    assert user.text.endswith(ELLIPSIS)
    assert assistant.text.endswith(ELLIPSIS)


def test_stats_are_counts_without_text() -> None:
    buffers = _buffers()
    secret = "my door code is 4711"
    buffers.append("user:a", secret, "I will not store secrets", 0.0)
    buffers.append("user:b", "hi", "hello", 0.0)
    stats = buffers.stats()
    assert stats == {
        "speakers": 2,
        "messages": 4,
        "chars": len(secret)
        + len("I will not store secrets")
        + len("hi")
        + len("hello"),
    }
    assert all(type(value) is int for value in stats.values())
    assert "4711" not in repr(stats)
    assert "user:a" not in repr(stats)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"idle_seconds": 0, "max_messages": 10, "max_chars": 100}, "idle_seconds"),
        ({"idle_seconds": 1, "max_messages": 1, "max_chars": 100}, "max_messages"),
        ({"idle_seconds": 1, "max_messages": 10, "max_chars": 1}, "max_chars"),
    ],
)
def test_invalid_limits(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SessionBuffers(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short", 10, "short"),
        ("exactly10!", 10, "exactly10!"),
        ("abcdefghijk", 5, "abcd…"),
        ("abc   defgh", 5, "abc…"),  # no dangling space before the ellipsis
        ("abc", 1, "…"),
        ("abc", 0, ""),
    ],
)
def test_truncate(text: str, limit: int, expected: str) -> None:
    assert truncate(text, limit) == expected


def test_memory_stays_small_with_many_speakers() -> None:
    """10,000 speakers x 20 messages: bookkeeping costs well under 100 bytes a message."""
    texts = [
        [
            (f"turn on lamp {speaker}-{i}", f"Lamp {speaker}-{i} is on.")
            for i in range(10)
        ]
        for speaker in range(10_000)
    ]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        buffers = SessionBuffers(idle_seconds=IDLE, max_messages=20, max_chars=24_000)
        for speaker, exchanges in enumerate(texts):
            for i, (user, assistant) in enumerate(exchanges):
                buffers.append(f"user:{speaker}", user, assistant, float(i))
        overhead = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert buffers.stats()["messages"] == 200_000
    # The texts already exist (kept by `texts`): this is the buffers' own cost.
    assert overhead / 200_000 < 100, f"{overhead / 200_000:.0f} bytes per message"
    assert buffers.sweep(10 + IDLE) == 10_000
    assert buffers.stats() == {"speakers": 0, "messages": 0, "chars": 0}


_EXCHANGE = st.tuples(st.text(max_size=60), st.text(max_size=60))


@settings(max_examples=200, deadline=None)
@given(
    max_messages=st.integers(2, 9),
    max_chars=st.integers(2, 120),
    steps=st.lists(st.tuples(_EXCHANGE, st.floats(0, 50)), max_size=25),
)
def test_caps_always_hold(
    max_messages: int, max_chars: int, steps: list[tuple[tuple[str, str], float]]
) -> None:
    buffers = SessionBuffers(
        idle_seconds=100, max_messages=max_messages, max_chars=max_chars
    )
    now = 0.0
    for (user, assistant), gap in steps:
        now += gap
        buffers.append("s", user, assistant, now)
        history = buffers.history("s", now)
        assert 2 <= len(history) <= max_messages
        assert [turn.role for turn in history] == ["user", "assistant"] * (
            len(history) // 2
        )
        assert sum(len(turn.text) for turn in history) <= max_chars
        assert buffers.stats()["chars"] == sum(len(turn.text) for turn in history)
        # The latest exchange is always there, possibly shortened.
        last_user, last_assistant = history[-2:]
        assert user.startswith(last_user.text.removesuffix(ELLIPSIS).rstrip())
        assert assistant.startswith(last_assistant.text.removesuffix(ELLIPSIS).rstrip())


def test_the_last_command_lasts_one_exchange() -> None:
    """An elliptical follow-up reads the command right before it, nothing older."""
    buffers = _buffers()
    command = Command("Turn off the bedroom light", "HassTurnOff")
    buffers.append(
        "user:a",
        command.sentence,
        None,
        0.0,
        action_targets=("Bedroom Light",),
        command=command,
    )
    assert buffers.last_command("user:a", 1.0) == command
    assert buffers.last_command("user:b", 1.0) is None
    # A command that changed nothing is no command to follow.
    buffers.append("user:a", "Turn on the moon", None, 2.0, command=command)
    assert buffers.last_command("user:a", 3.0) is None
    buffers.append(
        "user:a",
        command.sentence,
        None,
        4.0,
        action_targets=("Bedroom Light",),
        command=command,
    )
    buffers.append("user:a", "Is the porch light on?", None, 5.0)
    assert buffers.last_command("user:a", 6.0) is None
    buffers.append(
        "user:a",
        command.sentence,
        None,
        7.0,
        action_targets=("Bedroom Light",),
        command=command,
    )
    assert buffers.last_command("user:a", 7.0 + IDLE + 1) is None
