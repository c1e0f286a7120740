"""Turn HA chat log content into chat-completion messages a local server accepts.

Swama drops `tool_call_id` and assistant `tool_calls` from the history and fails
a request when a message has no `content`; so every message carries `content`,
and tool results name the tool and its arguments in their text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
import json
from typing import Any

from homeassistant.components import conversation
from homeassistant.helpers.json import json_dumps

from ..compat import tool_result_data
from ..memory.session import Turn


def history_messages(turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """The speaker's remembered exchanges (user and final assistant text only)."""
    return [{"role": turn.role, "content": turn.text} for turn in turns]


def current_turn_messages(
    content: Sequence[conversation.Content],
) -> list[dict[str, Any]]:
    """This request's messages: the last user message and any tool rounds after it.

    Earlier turns of HA's chat log are left out on purpose: the speaker's
    session buffer is the single source of history.
    """
    start = 0
    for index in range(len(content) - 1, -1, -1):
        if isinstance(content[index], conversation.UserContent):
            start = index
            break
    return to_messages(content[start:])


def to_messages(content: Iterable[conversation.Content]) -> list[dict[str, Any]]:
    """Convert user, assistant and tool-result content (system is built elsewhere).

    A tool call without a result is left out: HA's own intent handling writes
    its call into the chat log before it runs and leaves it unanswered when
    the intent fails to match ("two devices are called Smart Lock"), and a
    conversation that ends in a tool call is refused by llama.cpp (HTTP 400).
    """
    content = list(content)
    answered = {
        item.tool_call_id
        for item in content
        if isinstance(item, conversation.ToolResultContent)
    }
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    messages: list[dict[str, Any]] = []
    for item in content:
        if isinstance(item, conversation.UserContent):
            messages.append({"role": "user", "content": item.content or ""})
        elif isinstance(item, conversation.AssistantContent):
            kept = [call for call in item.tool_calls or () if call.id in answered]
            if not kept and not item.content:
                continue
            messages.append(assistant_message(replace(item, tool_calls=kept or None)))
            for call in kept:
                calls[call.id] = (call.tool_name, call.tool_args)
        elif isinstance(item, conversation.ToolResultContent):
            name, args = calls.get(item.tool_call_id, (item.tool_name, {}))
            messages.append(
                tool_message(item.tool_call_id, name, args, tool_result_data(item))
            )
    return messages


def assistant_message(item: conversation.AssistantContent) -> dict[str, Any]:
    """An assistant message; reasoning is never sent back."""
    message: dict[str, Any] = {"role": "assistant", "content": item.content or ""}
    if item.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.tool_name,
                    "arguments": json_dumps(call.tool_args),
                },
            }
            for call in item.tool_calls
        ]
    return message


def tool_message(
    call_id: str, name: str, args: dict[str, Any], result: Any
) -> dict[str, Any]:
    """A tool result that still makes sense when the server drops the call id."""
    call = f"{name}({json.dumps(args, ensure_ascii=False, sort_keys=True)})"
    return {
        "role": "tool",
        "tool_call_id": call_id,
        "content": f"Result of {call}: {json_dumps(result)}",
    }
