"""Per-turn figures from each server's way of reporting them (pure)."""

from __future__ import annotations

import json

from custom_components.local_assistant.llm.figures import (
    CompletionFigures,
    TurnFigures,
    TurnLog,
)

LLAMA_TIMINGS = {
    "cache_n": 1185,
    "prompt_n": 27,
    "prompt_ms": 130.5,
    "predicted_n": 9,
    "predicted_ms": 410.0,
}


def test_llama_cpp_timings() -> None:
    figures = CompletionFigures()
    figures.read_timings(LLAMA_TIMINGS)
    assert figures.prompt_tokens == 1212
    assert figures.cached_tokens == 1185
    assert figures.read_tokens == 27
    assert figures.reread == 27 / 1212
    assert figures.completion_tokens == 9
    assert figures.prompt_ms == 130.5
    assert figures.generation_ms == 410.0


def test_timings_win_over_an_openai_usage_chunk_that_follows() -> None:
    """llama.cpp sends both when asked; the numbers agree, timings have times."""
    figures = CompletionFigures()
    figures.read_timings(LLAMA_TIMINGS)
    figures.read_usage(
        {
            "prompt_tokens": 1,
            "completion_tokens": 1,
            "prompt_tokens_details": {"cached_tokens": 0},
        }
    )
    assert (figures.prompt_tokens, figures.cached_tokens) == (1212, 1185)


def test_openai_usage_with_cached_tokens() -> None:
    figures = CompletionFigures()
    figures.read_usage(
        {
            "prompt_tokens": 2000,
            "completion_tokens": 12,
            "total_tokens": 2012,
            "prompt_tokens_details": {"cached_tokens": 1900},
        }
    )
    assert (figures.prompt_tokens, figures.cached_tokens) == (2000, 1900)
    assert figures.reread == 0.05
    assert figures.completion_tokens == 12


def test_swama_usage_has_no_cached_count() -> None:
    figures = CompletionFigures()
    figures.read_usage(
        {
            "prompt_tokens": 1678,
            "completion_tokens": 20,
            "total_tokens": 1698,
            "response_token/s": 31.5,
            "total_duration": 2.25,
        }
    )
    assert figures.prompt_tokens == 1678
    assert figures.cached_tokens is None
    assert figures.reread is None
    assert figures.server_ms == 2250.0


def test_junk_is_ignored() -> None:
    figures = CompletionFigures()
    figures.read_timings({"prompt_n": "many", "cache_n": True, "prompt_ms": None})
    figures.read_usage({"prompt_tokens": [1], "prompt_tokens_details": "x"})
    assert figures == CompletionFigures()


def test_turn_summary_and_log_line_hold_numbers_only() -> None:
    first, second = CompletionFigures(), CompletionFigures()
    first.read_timings(LLAMA_TIMINGS)
    first.first_token_ms = 480.25
    second.read_timings({**LLAMA_TIMINGS, "cache_n": 1230, "prompt_n": 40})
    turn = TurnFigures(
        kind="conversation",
        at=1.0,
        completions=[first, second],
        first_text_ms=2100.0,
        total_ms=2600.0,
    )
    summary = turn.as_dict()
    assert summary == {
        "kind": "conversation",
        "at": 1.0,
        "completions": 2,
        "prompt_tokens": 1212,
        "cached_tokens": 1185,
        "reread": 0.022,
        "read_tokens_all_completions": 67,
        "completion_tokens": 18,
        "first_token_ms": 480.2,
        "first_text_ms": 2100.0,
        "total_ms": 2600.0,
        "server_prompt_ms": 261.0,
        "server_generation_ms": 820.0,
    }
    assert turn.log_line() == (
        "conversation turn: 2 completion(s), prompt 1212 tokens, 1185 cached "
        "(2% read again), first token 480 ms, first text 2100 ms, total 2600 ms"
    )


def test_log_line_without_server_figures() -> None:
    turn = TurnFigures(kind="ai_task", at=0.0, completions=[CompletionFigures()])
    assert turn.log_line() == (
        "ai_task turn: 1 completion(s), prompt size not reported, "
        "first token ?, first text ?, total ?"
    )
    swama = CompletionFigures(prompt_tokens=100)
    turn = TurnFigures(kind="ai_task", at=0.0, completions=[swama])
    assert "prompt 100 tokens (cache not reported)" in turn.log_line()


def test_turn_log_is_bounded() -> None:
    log = TurnLog(size=3)
    for number in range(5):
        log.add(TurnFigures(kind="conversation", at=float(number)))
    recent = log.recent()
    assert [turn["at"] for turn in recent] == [2.0, 3.0, 4.0]
    json.dumps(recent)  # plain data
