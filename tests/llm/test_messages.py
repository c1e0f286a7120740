"""HA chat log content as messages a local server accepts, whatever HA left in it."""

from __future__ import annotations

from homeassistant.components import conversation
from homeassistant.helpers import llm

from custom_components.local_assistant.llm.messages import to_messages

AGENT = "conversation.local_assistant"


def _call(call_id: str, name: str = "HassTurnOn") -> llm.ToolInput:
    return llm.ToolInput(
        tool_name=name, tool_args={"name": "Smart Lock"}, id=call_id, external=True
    )


def test_a_tool_call_without_a_result_is_left_out() -> None:
    """HA's failed intent handling leaves its call unanswered (HTTP 400 in llama.cpp)."""
    messages = to_messages(
        [
            conversation.UserContent("turn on the smart lock"),
            conversation.AssistantContent(AGENT, tool_calls=[_call("a")]),
        ]
    )
    assert messages == [{"role": "user", "content": "turn on the smart lock"}]


def test_answered_calls_stay_and_unanswered_ones_go() -> None:
    messages = to_messages(
        [
            conversation.UserContent("lock both"),
            conversation.AssistantContent(
                AGENT, content="One moment.", tool_calls=[_call("a"), _call("b")]
            ),
            conversation.ToolResultContent(AGENT, "a", "HassTurnOn", {"success": True}),
        ]
    )
    assistant = messages[1]
    assert assistant["content"] == "One moment."
    assert [call["id"] for call in assistant["tool_calls"]] == ["a"]
    assert messages[2]["role"] == "tool"
    assert messages[2]["content"].startswith(
        'Result of HassTurnOn({"name": "Smart Lock"})'
    )


def test_text_of_an_unanswered_call_is_kept() -> None:
    messages = to_messages(
        [
            conversation.UserContent("hi"),
            conversation.AssistantContent(
                AGENT, content="Hello", tool_calls=[_call("a")]
            ),
        ]
    )
    assert messages[-1] == {"role": "assistant", "content": "Hello"}
