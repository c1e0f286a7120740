"""Tests for streamed tool call assembly and argument parsing."""

from __future__ import annotations

import dataclasses
import re

import pytest

from custom_components.local_assistant.llm.tool_calls import (
    AssembledToolCall,
    ParsedArguments,
    ToolCallAssembler,
    parse_arguments,
)

_GENERATED_ID = re.compile(r"call_[0-9a-f]{32}")


def _split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def test_empty_assembler() -> None:
    assembler = ToolCallAssembler()
    assert not assembler
    assert assembler.pop_all() == []


def test_complete_call_per_delta() -> None:
    """Swama style: each call arrives whole, with its own index."""
    assembler = ToolCallAssembler()
    assembler.add(0, "call_a", "HassTurnOn", '{"name": "kitchen"}')
    assembler.add(1, "call_b", "HassTurnOff", '{"name": "hall"}')
    assert assembler
    assert assembler.pop_all() == [
        AssembledToolCall("call_a", "HassTurnOn", '{"name": "kitchen"}'),
        AssembledToolCall("call_b", "HassTurnOff", '{"name": "hall"}'),
    ]
    assert not assembler
    assert assembler.pop_all() == []


@pytest.mark.parametrize("size", [1, 2, 3, 7, 100])
def test_arguments_split_over_many_deltas(size: int) -> None:
    """llama.cpp/vLLM/OpenAI style: id and name first, then argument pieces."""
    arguments = '{"name": "kitchen light", "brightness": 50}'
    assembler = ToolCallAssembler()
    assembler.add(0, "call_1", "HassLightSet", "")
    for piece in _split(arguments, size):
        assembler.add(0, None, None, piece)
    assert assembler.pop_all() == [
        AssembledToolCall("call_1", "HassLightSet", arguments)
    ]


def test_interleaved_by_index() -> None:
    """Several calls streamed at once are kept apart by index."""
    first = '{"name": "kitchen"}'
    second = '{"area": "hall", "brightness": 10}'
    assembler = ToolCallAssembler()
    assembler.add(0, "call_0", "HassTurnOn", None)
    assembler.add(1, "call_1", "HassLightSet", None)
    pieces_0, pieces_1 = _split(first, 4), _split(second, 3)
    for i in range(max(len(pieces_0), len(pieces_1))):
        if i < len(pieces_1):
            assembler.add(1, None, None, pieces_1[i])
        if i < len(pieces_0):
            assembler.add(0, None, None, pieces_0[i])
    assert assembler.pop_all() == [
        AssembledToolCall("call_0", "HassTurnOn", first),
        AssembledToolCall("call_1", "HassLightSet", second),
    ]


def test_all_index_zero_complete_calls_with_ids() -> None:
    """Swama may put every complete call at index 0; a new id starts a call."""
    assembler = ToolCallAssembler()
    assembler.add(0, "call_a", "HassTurnOn", '{"name": "a"}')
    assembler.add(0, "call_b", "HassTurnOn", '{"name": "b"}')
    assembler.add(0, "call_c", "HassTurnOff", "{}")
    assert assembler.pop_all() == [
        AssembledToolCall("call_a", "HassTurnOn", '{"name": "a"}'),
        AssembledToolCall("call_b", "HassTurnOn", '{"name": "b"}'),
        AssembledToolCall("call_c", "HassTurnOff", "{}"),
    ]


def test_all_index_zero_complete_calls_without_ids() -> None:
    """No ids: a name after a finished JSON object starts the next call."""
    assembler = ToolCallAssembler()
    assembler.add(0, None, "HassTurnOn", '{"name": "a"}')
    assembler.add(0, None, "HassTurnOn", '{"name": "b"}')
    calls = assembler.pop_all()
    assert [(c.name, c.arguments) for c in calls] == [
        ("HassTurnOn", '{"name": "a"}'),
        ("HassTurnOn", '{"name": "b"}'),
    ]
    assert calls[0].id != calls[1].id


def test_repeated_name_before_arguments_complete_continues() -> None:
    """A name repeated mid-arguments (no new id) does not split the call."""
    assembler = ToolCallAssembler()
    assembler.add(0, None, "HassTurnOn", '{"name": ')
    assembler.add(0, None, "HassTurnOn", '"kitchen"}')
    calls = assembler.pop_all()
    assert [(c.name, c.arguments) for c in calls] == [
        ("HassTurnOn", '{"name": "kitchen"}')
    ]


def test_repeated_id_continues() -> None:
    """Servers that repeat the id (and name) on every fragment stay one call."""
    assembler = ToolCallAssembler()
    assembler.add(0, "call_x", "HassTurnOn", '{"name": "kitchen"}')
    assembler.add(0, "call_x", "HassTurnOn", "")
    assembler.add(0, "call_x", None, " ")
    assert assembler.pop_all() == [
        AssembledToolCall("call_x", "HassTurnOn", '{"name": "kitchen"} ')
    ]


def test_missing_index_complete_calls() -> None:
    """No index: a fragment with a name is a new call."""
    assembler = ToolCallAssembler()
    assembler.add(None, "call_a", "HassTurnOn", '{"name": "a"}')
    assembler.add(None, "call_b", "HassTurnOff", '{"name": "b"}')
    assembler.add(None, None, "HassTurnOn", '{"name": "c"}')
    calls = assembler.pop_all()
    assert [(c.name, c.arguments) for c in calls] == [
        ("HassTurnOn", '{"name": "a"}'),
        ("HassTurnOff", '{"name": "b"}'),
        ("HassTurnOn", '{"name": "c"}'),
    ]
    assert calls[0].id == "call_a"
    assert calls[1].id == "call_b"
    assert _GENERATED_ID.fullmatch(calls[2].id)


def test_missing_index_fragments_continue_last_call() -> None:
    """No index and no name: the fragment continues the last call."""
    assembler = ToolCallAssembler()
    assembler.add(None, "call_a", "HassTurnOn", '{"na')
    assembler.add(None, None, None, 'me": "a"}')
    assembler.add(None, None, "HassTurnOff", "{")
    assembler.add(None, None, None, "}")
    calls = assembler.pop_all()
    assert [(c.name, c.arguments) for c in calls] == [
        ("HassTurnOn", '{"name": "a"}'),
        ("HassTurnOff", "{}"),
    ]


def test_missing_id_is_generated() -> None:
    assembler = ToolCallAssembler()
    assembler.add(0, None, "HassTurnOn", '{"name": "a"}')
    assembler.add(1, "", "HassTurnOff", "{}")  # "" counts as no id
    calls = assembler.pop_all()
    assert all(_GENERATED_ID.fullmatch(call.id) for call in calls)
    assert calls[0].id != calls[1].id


def test_late_id_is_kept() -> None:
    """An id that only arrives on a later fragment is still used."""
    assembler = ToolCallAssembler()
    assembler.add(0, None, "HassTurnOn", '{"name"')
    assembler.add(0, "call_late", None, ': "a"}')
    assert assembler.pop_all() == [
        AssembledToolCall("call_late", "HassTurnOn", '{"name": "a"}')
    ]


def test_missing_name_gives_empty_name() -> None:
    assembler = ToolCallAssembler()
    assembler.add(0, "call_a", None, '{"x": 1}')
    assert assembler.pop_all() == [AssembledToolCall("call_a", "", '{"x": 1}')]


def test_no_arguments_gives_empty_text() -> None:
    assembler = ToolCallAssembler()
    assembler.add(0, "call_a", "GetTime", None)
    assert assembler.pop_all() == [AssembledToolCall("call_a", "GetTime", "")]


def test_empty_fragments_are_ignored() -> None:
    assembler = ToolCallAssembler()
    assembler.add(0, None, None, None)
    assembler.add(None, "", "", "")
    assert not assembler
    assert assembler.pop_all() == []


def test_index_order_is_arrival_order() -> None:
    """Calls come back in the order their first fragment arrived."""
    assembler = ToolCallAssembler()
    assembler.add(0, "call_0", "A", "{}")
    assembler.add(1, "call_1", "B", "{")
    assembler.add(2, "call_2", "C", "{}")
    assembler.add(1, None, None, "}")
    assert [call.id for call in assembler.pop_all()] == ["call_0", "call_1", "call_2"]


def test_pop_all_resets_index_tracking() -> None:
    """After pop_all, index 0 starts a fresh call (next completion)."""
    assembler = ToolCallAssembler()
    assembler.add(0, None, "A", '{"a"')
    assembler.pop_all()
    assembler.add(0, None, None, ": 1}")
    assert [(c.name, c.arguments) for c in assembler.pop_all()] == [("", ": 1}")]


def test_assembled_call_is_frozen() -> None:
    call = AssembledToolCall("call_a", "A", "{}")
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.name = "B"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("", {}, id="empty"),
        pytest.param("  \n", {}, id="whitespace"),
        pytest.param("{}", {}, id="empty_object"),
        pytest.param(
            '{"name": "kitchen", "brightness": 50}',
            {"name": "kitchen", "brightness": 50},
            id="object",
        ),
        pytest.param(
            ' {"a": [1, {"b": null}]}\n', {"a": [1, {"b": None}]}, id="nested"
        ),
        pytest.param('"{\\"name\\": \\"kitchen\\"}"', {"name": "kitchen"}, id="double"),
        pytest.param('"  "', {}, id="double_encoded_empty"),
    ],
)
def test_parse_arguments_valid(raw: str, expected: dict[str, object]) -> None:
    assert parse_arguments(raw) == ParsedArguments(expected, None)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param(
            "[1, 2]", "arguments must be a JSON object, got an array", id="list"
        ),
        pytest.param("42", "arguments must be a JSON object, got a number", id="int"),
        pytest.param(
            "4.5", "arguments must be a JSON object, got a number", id="float"
        ),
        pytest.param(
            "true", "arguments must be a JSON object, got a boolean", id="bool"
        ),
        pytest.param("null", "arguments must be a JSON object, got null", id="null"),
        pytest.param(
            '"kitchen"', "arguments must be a JSON object, got a string", id="string"
        ),
        pytest.param(
            '"[1]"', "arguments must be a JSON object, got an array", id="double_list"
        ),
        pytest.param(
            '"\\"x\\""', "arguments must be a JSON object, got a string", id="triple"
        ),
        pytest.param(
            '{"name": "kitchen"',
            "arguments are not valid JSON: Expecting ',' delimiter at char 18",
            id="truncated",
        ),
        pytest.param(
            '{"a": 1} trailing',
            "arguments are not valid JSON: Extra data at char 9",
            id="trailing_garbage",
        ),
        pytest.param(
            '{"a": 1}{"b": 2}',
            "arguments are not valid JSON: Extra data at char 8",
            id="two_objects",
        ),
        pytest.param(
            "{'a': 1}",
            "arguments are not valid JSON: Expecting property name enclosed in double quotes at char 1",
            id="single_quotes",
        ),
        pytest.param(
            '"{\\"a\\": "',
            "double-encoded arguments are not valid JSON: Expecting value at char 6",
            id="double_truncated",
        ),
        pytest.param(
            "[" * 100_000,
            "arguments are nested too deeply",
            id="too_deep",
        ),
    ],
)
def test_parse_arguments_invalid(raw: str, message: str) -> None:
    parsed = parse_arguments(raw)
    assert parsed.args is None
    assert parsed.error == message


def test_assembled_arguments_round_trip() -> None:
    """Streamed pieces reassemble into arguments that parse."""
    assembler = ToolCallAssembler()
    assembler.add(0, "call_a", "HassTurnOn", "")
    for piece in _split('{"name": "kitchen", "area": "downstairs"}', 1):
        assembler.add(0, None, None, piece)
    (call,) = assembler.pop_all()
    assert parse_arguments(call.arguments) == ParsedArguments(
        {"name": "kitchen", "area": "downstairs"}, None
    )
