"""What the model server holds in its prompt cache, as far as our requests tell.

Swama keeps one cached prompt per model, llama.cpp with ``--cache-ram 0 -np
1`` one per server: the last prompt read plus the answer generated to it. The
next request reuses it as far as it starts the same way. We cannot ask the
server, but we know what we sent last: :class:`SentPrompt` is that request
(and its answer), compared message by message. Rendering by the server's
chat template keeps this order, so a request whose messages and tools start
with a cached request's finds them cached (up to the few tokens a template
renders differently for the answer it generated, e.g. Qwen3's empty think
block).

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import json
from typing import Any


def message_key(message: dict[str, Any]) -> str:
    """What of a message the chat template renders, as comparable text."""
    key: dict[str, Any] = {
        "role": message.get("role"),
        "content": message.get("content") or "",
    }
    if message.get("tool_calls"):
        key["tool_calls"] = [
            call.get("function", call) for call in message["tool_calls"]
        ]
    return json.dumps(key, ensure_ascii=False, sort_keys=True)


def tools_key(tools: Sequence[dict[str, Any]] | None) -> str:
    """The tool list as comparable text (order matters: it is rendered in order)."""
    return json.dumps(list(tools or ()), ensure_ascii=False, sort_keys=True)


# Stands for a message we did not see (e.g. the fact extractor's own turn
# after a conversation prefix): it never equals a real message.
UNKNOWN_MESSAGE = "\x00unknown"


@dataclass(frozen=True, slots=True)
class SentPrompt:
    """A request as the server's cache holds it: messages, answer, tools."""

    messages: tuple[str, ...]
    tools: str
    at: float  # when it was sent, or answered (epoch seconds)

    @classmethod
    def of(
        cls,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None,
        at: float,
        *,
        more: int = 0,
    ) -> SentPrompt:
        """A request; ``more`` unknown messages follow the given ones."""
        keys = [message_key(message) for message in messages]
        return cls((*keys, *[UNKNOWN_MESSAGE] * more), tools_key(tools), at)

    def answered(self, answer: dict[str, Any] | None, at: float) -> SentPrompt:
        """The request once answered (at `at`), with the answer the server cached."""
        answer_keys = () if answer is None else (message_key(answer),)
        return SentPrompt((*self.messages, *answer_keys), self.tools, at)

    def covers(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None,
    ) -> bool:
        """Whether a request with these messages and tools finds them all cached."""
        if tools_key(tools) != self.tools or len(messages) > len(self.messages):
            return False
        return all(
            message_key(message) == cached
            for message, cached in zip(messages, self.messages, strict=False)
        )
