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


@dataclass(frozen=True, slots=True)
class SentPrompt:
    """A request as the server's cache holds it: messages, answer, tools.

    It keeps the request's own message dicts (they are not changed after
    sending) and compares them only when asked: noting a request costs
    nothing on the reply path.
    """

    messages: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...]
    at: float  # when it was sent, or answered (epoch seconds)

    @classmethod
    def of(
        cls,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None,
        at: float,
    ) -> SentPrompt:
        """A request as sent (messages after these are unknown)."""
        return cls(tuple(messages), tuple(tools or ()), at)

    def answered(self, answer: dict[str, Any] | None, at: float) -> SentPrompt:
        """The request once answered (at `at`), with the answer the server cached."""
        answers = () if answer is None else (answer,)
        return SentPrompt((*self.messages, *answers), self.tools, at)

    def covers(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None,
    ) -> bool:
        """Whether a request with these messages and tools finds them all cached."""
        if len(messages) > len(self.messages) or tuple(tools or ()) != self.tools:
            return False
        return all(
            message is cached or message_key(message) == message_key(cached)
            for message, cached in zip(messages, self.messages, strict=False)
        )
