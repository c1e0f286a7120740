"""Finding the JSON in a small model's answer to a structured AI task (llm/json_answer.py)."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.local_assistant.llm.json_answer import (
    JsonAnswerError,
    parse_json_answer,
)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("[1, 2]", [1, 2]),
        ('<think>hmm {"no": 1}</think>\n{"a": 1}', {"a": 1}),
        ('</think>\n\n{"a": 1}', {"a": 1}),  # prefilled <think>
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('Sure! Here you go:\n```json\n{"a": 1}\n```\nAnything else?', {"a": 1}),
        ('The result is {"a": {"b": [1, 2]}} as asked.', {"a": {"b": [1, 2]}}),
        ('{"text": "braces } inside"}', {"text": "braces } inside"}),
    ],
)
def test_parse_json_answer(answer: str, expected: Any) -> None:
    assert parse_json_answer(answer) == expected


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "empty answer"),
        ("<think>only reasoning</think>", "empty answer"),
        ("No JSON here.", "no valid JSON object or array"),
        ('{"a": 1', "no valid JSON object or array"),
        ('"just a string"', "not a JSON object or array"),
        ("42", "not a JSON object or array"),
        ("[" * 100_000, "JSON nested too deeply"),
    ],
)
def test_parse_json_answer_rejects(answer: str, reason: str) -> None:
    with pytest.raises(JsonAnswerError) as err:
        parse_json_answer(answer)
    assert err.value.reason == reason
    assert err.value.answer_length == len(answer)
