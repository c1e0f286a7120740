"""Turn a streamed chat completion into HA chat log deltas.

Reasoning is split off by the think filter before anything reaches the chat
log (the pipeline speaks `content` as it arrives). Tool calls are assembled
from fragments and released at the finish chunk and again at stream end,
because some servers send them after the finish chunk.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from homeassistant.helpers import llm
from openai.types.chat import ChatCompletionChunk

from .compat import tool_result_delta
from .think import ThinkFilter
from .tool_calls import ToolCallAssembler, parse_arguments


@dataclass(slots=True)
class StreamOutcome:
    """What one completion produced, for the loop's decisions."""

    visible_chars: int = 0
    tool_calls: int = 0
    saw_bare_close: bool = False
    invalid_calls: list[str] = field(default_factory=list)


async def transform_stream(
    stream: AsyncIterable[ChatCompletionChunk],
    outcome: StreamOutcome,
    *,
    start_in_think: bool = False,
) -> AsyncIterator[dict[str, Any]]:
    """Yield chat log deltas for one streamed completion."""
    # The pipeline forwards content to TTS only after an assistant role delta.
    yield {"role": "assistant"}
    think = ThinkFilter(start_in_think=start_in_think)
    calls = ToolCallAssembler()
    error_results: list[dict[str, Any]] = []

    async for chunk in stream:
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        delta = choice.delta
        out: dict[str, Any] = {}
        if delta.content:
            visible, thinking = think.feed(delta.content)
            _put_text(out, visible, thinking, outcome)
        if reasoning := (delta.model_extra or {}).get("reasoning_content"):
            out["thinking_content"] = out.get("thinking_content", "") + str(reasoning)
        for fragment in delta.tool_calls or ():
            function = fragment.function
            calls.add(
                fragment.index,
                fragment.id,
                function.name if function else None,
                function.arguments if function else None,
            )
        if choice.finish_reason and calls:
            out["tool_calls"] = _release_calls(calls, outcome, error_results)
        if out:
            yield out

    tail: dict[str, Any] = {}
    _put_text(tail, *think.flush(), outcome)
    if calls:
        tail["tool_calls"] = _release_calls(calls, outcome, error_results)
    if tail:
        yield tail
    outcome.saw_bare_close = think.saw_bare_close
    # Answered after the assistant message is complete: a role delta closes it.
    for result in error_results:
        yield result


def _put_text(
    out: dict[str, Any], visible: str, thinking: str, outcome: StreamOutcome
) -> None:
    if visible:
        out["content"] = visible
        outcome.visible_chars += len(visible.strip())
    if thinking:
        out["thinking_content"] = thinking


def _release_calls(
    calls: ToolCallAssembler,
    outcome: StreamOutcome,
    error_results: list[dict[str, Any]],
) -> list[llm.ToolInput]:
    """Hand complete calls to HA; answer unusable ones ourselves with an error.

    A call with broken arguments is marked external so HA does not run it, and
    the model gets a tool error it can correct instead of the turn failing.
    """
    inputs: list[llm.ToolInput] = []
    for call in calls.pop_all():
        outcome.tool_calls += 1
        parsed = parse_arguments(call.arguments)
        if parsed.args is not None:
            inputs.append(
                llm.ToolInput(id=call.id, tool_name=call.name, tool_args=parsed.args)
            )
            continue
        outcome.invalid_calls.append(call.name)
        inputs.append(
            llm.ToolInput(id=call.id, tool_name=call.name, tool_args={}, external=True)
        )
        error_results.append(
            tool_result_delta(
                call.id,
                call.name,
                {
                    "error": "InvalidToolArguments",
                    "error_text": f"{parsed.error}. Call {call.name} again with a JSON object.",
                },
            )
        )
    return inputs
