"""Tests for transform_stream: what one completion shows, and what it teaches."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from openai.types.chat import ChatCompletionChunk
import pytest

from custom_components.local_assistant.llm.spoken import VoiceStyle
from custom_components.local_assistant.llm.stream import (
    StreamOutcome,
    transform_stream,
)

REASONING = "Okay, the user asks about the weather. I should call GetLiveContext and"


async def _chunks(pieces: list[str], finish: str) -> AsyncIterator[ChatCompletionChunk]:
    """A streamed completion: one content delta per piece, then the finish chunk."""
    deltas: list[tuple[dict[str, Any], str | None]] = [
        ({"role": "assistant"}, None),
        *(({"content": piece}, None) for piece in pieces),
        ({}, finish),
    ]
    for delta, reason in deltas:
        yield ChatCompletionChunk.model_validate(
            {
                "id": "c",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
            }
        )


async def _run(
    pieces: list[str], finish: str, *, start_in_think: bool
) -> tuple[list[dict[str, Any]], StreamOutcome]:
    outcome = StreamOutcome()
    deltas = [
        delta
        async for delta in transform_stream(
            _chunks(pieces, finish),
            outcome,
            start_in_think=start_in_think,
            voice=VoiceStyle(),
        )
    ]
    return deltas, outcome


def _content(deltas: list[dict[str, Any]]) -> str:
    return "".join(delta.get("content", "") for delta in deltas)


def _thinking(deltas: list[dict[str, Any]]) -> str:
    return "".join(delta.get("thinking_content", "") for delta in deltas)


async def test_reasoning_cut_by_max_tokens_is_not_spoken() -> None:
    """Review: with <think> prefilled, reasoning cut at max_tokens before its
    </think> was spoken, and taught the agent that the server does not
    prefill (so later turns spoke their reasoning too)."""
    words = REASONING.split(" ")
    pieces = [words[0], *(f" {word}" for word in words[1:])]
    deltas, outcome = await _run(pieces, "length", start_in_think=True)
    assert _content(deltas) == ""
    assert _thinking(deltas) == REASONING
    # Nothing was shown: the caller treats it as an empty answer.
    assert outcome.visible_chars == 0
    assert outcome.reasoning_cut
    assert outcome.received
    # A cut completion shows nothing about the chat template.
    assert outcome.prefills_think is None


async def test_answer_without_think_still_spoken_at_its_end() -> None:
    """The same text ended by the model itself is an answer without reasoning."""
    deltas, outcome = await _run([REASONING], "stop", start_in_think=True)
    assert _content(deltas) == REASONING
    assert not outcome.reasoning_cut
    assert outcome.prefills_think is False


@pytest.mark.parametrize("finish", ["stop", "length"])
async def test_server_without_prefill_streams_a_cut_answer(finish: str) -> None:
    """Known not to prefill: every word is said as it comes, cut or not."""
    pieces = ["The list", " goes on", " and on"]
    deltas, outcome = await _run(pieces, finish, start_in_think=False)
    assert [delta.get("content") for delta in deltas[1:4]] == pieces
    assert outcome.visible_chars
    assert not outcome.reasoning_cut


async def test_prefilled_nested_reasoning_is_not_spoken() -> None:
    """A <think> inside the prefilled block nests: only its own close ends it."""
    pieces = ["a<thi", "nk>b</think>still reason", "ing</think>", "\n\nAnswer"]
    deltas, outcome = await _run(pieces, "stop", start_in_think=True)
    assert _content(deltas) == "Answer"
    assert _thinking(deltas) == "abstill reasoning"
    assert outcome.prefills_think is True
