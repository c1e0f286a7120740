"""What the server's one cached prompt covers, from what we sent (pure)."""

from __future__ import annotations

from custom_components.local_assistant.server.prompt_cache import SentPrompt

SYSTEM = {"role": "system", "content": "Be brief. /no_think"}
FACTS = {"role": "system", "content": "Notes about the user: ..."}
TOOLS = [{"type": "function", "function": {"name": "HassTurnOn", "parameters": {}}}]
USER = {"role": "user", "content": "Turn on the light"}
ANSWER = {"role": "assistant", "content": "Done."}


def test_a_request_covers_its_own_prefixes() -> None:
    sent = SentPrompt.of([SYSTEM, FACTS, USER], TOOLS, 10.0)
    assert sent.covers([SYSTEM, FACTS, USER], TOOLS)
    assert sent.covers([SYSTEM, FACTS], TOOLS)
    assert not sent.covers([SYSTEM, FACTS, USER, ANSWER], TOOLS)
    assert not sent.covers([SYSTEM, USER], TOOLS)


def test_the_answer_is_cached_too() -> None:
    """The next turn replays the answer; the server generated (and cached) it."""
    sent = SentPrompt.of([SYSTEM, FACTS, USER], TOOLS, 10.0).answered(ANSWER, 12.0)
    assert sent.at == 12.0
    assert sent.covers([SYSTEM, FACTS, USER, ANSWER], TOOLS)
    assert sent.answered(None, 13.0).messages == sent.messages


def test_tools_must_be_the_same_in_the_same_order() -> None:
    sent = SentPrompt.of([SYSTEM], TOOLS, 0.0)
    other = [{"type": "function", "function": {"name": "HassTurnOff"}}]
    assert not sent.covers([SYSTEM], None)
    assert not sent.covers([SYSTEM], [*TOOLS, *other])
    assert not SentPrompt.of([SYSTEM], [*other, *TOOLS], 0.0).covers(
        [SYSTEM], [*TOOLS, *other]
    )


def test_tool_call_messages_compare_by_their_calls() -> None:
    call = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "a",
                "type": "function",
                "function": {"name": "X", "arguments": "{}"},
            }
        ],
    }
    same_call_other_id = {
        **call,
        "tool_calls": [{**call["tool_calls"][0], "id": "b"}],
    }
    sent = SentPrompt.of([SYSTEM, USER, call], TOOLS, 0.0)
    assert sent.covers([SYSTEM, USER, same_call_other_id], TOOLS)
    assert not sent.covers([SYSTEM, USER, {"role": "assistant", "content": ""}], TOOLS)


def test_nothing_after_what_was_sent_is_known() -> None:
    """An extractor turn after the prefix: the prefix is cached, nothing after it."""
    sent = SentPrompt.of([SYSTEM, FACTS, USER, ANSWER], TOOLS, 0.0)
    assert sent.covers([SYSTEM, FACTS, USER, ANSWER], TOOLS)
    assert not sent.covers(
        [SYSTEM, FACTS, USER, ANSWER, {"role": "user", "content": ""}], TOOLS
    )


def test_equal_copies_are_covered() -> None:
    """The next turn builds new message dicts with the same content."""
    sent = SentPrompt.of([SYSTEM, FACTS, USER], TOOLS, 0.0)
    assert sent.covers([dict(SYSTEM), dict(FACTS), dict(USER)], [dict(TOOLS[0])])
    assert not sent.covers([SYSTEM, {**FACTS, "content": "other"}], TOOLS)
