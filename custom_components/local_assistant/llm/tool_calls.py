"""Assemble streamed OpenAI ``delta.tool_calls`` fragments into whole calls.

OpenAI-compatible servers disagree on how tool calls are streamed:

* llama.cpp, vLLM and OpenAI split ``function.arguments`` over many deltas
  and interleave several calls by ``index``; only the first fragment of a
  call carries ``id`` and ``function.name``.
* Swama sends every call as one complete delta, sometimes all with index 0,
  sometimes with no index at all (and sometimes after the chunk carrying
  ``finish_reason``, which the caller has to allow for).

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import json
from typing import Any
import uuid

__all__ = [
    "AssembledToolCall",
    "ParsedArguments",
    "ToolCallAssembler",
    "parse_arguments",
]


@dataclass(frozen=True, slots=True)
class AssembledToolCall:
    """One complete tool call."""

    id: str  # server id, or "call_" + uuid4 hex when the server sent none
    name: str  # "" when no fragment named it (caller reports an unknown tool)
    arguments: str  # raw JSON text as received ("" if none)


@dataclass(slots=True)
class _Slot:
    """A call being assembled."""

    id: str | None = None
    name: str | None = None
    parts: list[str] = field(default_factory=list)

    def has_complete_object(self) -> bool:
        """Whether the arguments so far already form a whole JSON object."""
        if not self.parts:
            return False
        try:
            return isinstance(json.loads("".join(self.parts)), dict)
        except (ValueError, RecursionError):
            return False


class ToolCallAssembler:
    """Collect tool call fragments from one streamed completion.

    Call :meth:`add` for every ``delta.tool_calls`` entry, then
    :meth:`pop_all` once the stream has ended.
    """

    __slots__ = ("_by_index", "_last", "_slots")

    def __init__(self) -> None:
        """Start with nothing pending."""
        self._slots: list[_Slot] = []  # arrival order
        self._by_index: dict[int, _Slot] = {}  # the current slot per index
        self._last: _Slot | None = None

    def __bool__(self) -> bool:
        """Whether any call is pending."""
        return bool(self._slots)

    def add(
        self,
        index: int | None,
        call_id: str | None,
        name: str | None,
        arguments: str | None,
    ) -> None:
        """Record one fragment (``index``, ``id``, ``function.name/arguments``)."""
        # Some servers send "" instead of null for the fields they omit.
        call_id = call_id or None
        name = name or None
        if call_id is None and name is None and not arguments:
            return  # nothing to record (e.g. a keep-alive or empty delta)

        slot = self._by_index.get(index) if index is not None else self._last
        if slot is None or self._starts_new_call(slot, index, call_id, name):
            slot = _Slot()
            self._slots.append(slot)
            if index is not None:
                self._by_index[index] = slot

        if slot.id is None:
            slot.id = call_id
        # A name repeated on a continuation fragment is not appended: servers
        # send the name whole, never in pieces.
        if slot.name is None:
            slot.name = name
        if arguments:
            slot.parts.append(arguments)
        self._last = slot

    @staticmethod
    def _starts_new_call(
        slot: _Slot, index: int | None, call_id: str | None, name: str | None
    ) -> bool:
        """Decide whether a fragment begins a new call instead of continuing."""
        if call_id is not None and slot.id is not None:
            # Ids are authoritative: a repeated id continues the call (some
            # servers repeat it on every fragment), a different one is new.
            return call_id != slot.id
        if index is None:
            # Without an index only a name can announce a new call.
            return name is not None
        # Swama sends complete calls all at index 0 and may omit ids: a new
        # name after a finished JSON object is the next call.
        return name is not None and slot.name is not None and slot.has_complete_object()

    def pop_all(self) -> list[AssembledToolCall]:
        """Return the complete calls in arrival order and clear the state."""
        calls = [
            AssembledToolCall(
                id=slot.id or f"call_{uuid.uuid4().hex}",
                name=slot.name or "",
                arguments="".join(slot.parts),
            )
            for slot in self._slots
        ]
        self._slots.clear()
        self._by_index.clear()
        self._last = None
        return calls


@dataclass(frozen=True, slots=True)
class ParsedArguments:
    """Decoded tool arguments, or why they could not be decoded."""

    args: dict[str, Any] | None  # None when invalid
    error: str | None  # short reason for the model when invalid


_JSON_TYPE_NAMES: dict[type, str] = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


def _not_an_object(value: object) -> ParsedArguments:
    kind = _JSON_TYPE_NAMES.get(type(value), type(value).__name__)
    return ParsedArguments(None, f"arguments must be a JSON object, got {kind}")


def _loads(raw: str) -> tuple[Any, str | None]:
    """Decode JSON, turning failures into a short message."""
    try:
        return json.loads(raw), None
    except json.JSONDecodeError as err:
        return None, f"arguments are not valid JSON: {err.msg} at char {err.pos}"
    except RecursionError:
        return None, "arguments are nested too deeply"


def parse_arguments(raw: str) -> ParsedArguments:
    """Decode a tool call's ``arguments`` text into a dict.

    Empty or whitespace means no arguments. Some small models double-encode
    (send a JSON string containing the JSON object), so a string is decoded
    once more. Anything that is not finally a JSON object is an error.
    """
    if not raw or raw.isspace():
        return ParsedArguments({}, None)
    value, error = _loads(raw)
    if error is not None:
        return ParsedArguments(None, error)
    if isinstance(value, str):
        if not value or value.isspace():
            return ParsedArguments({}, None)
        inner, error = _loads(value)
        if error is not None:
            if value.lstrip().startswith("{"):
                # Meant as a double-encoded object: say what is wrong inside.
                return ParsedArguments(None, f"double-encoded {error}")
            return _not_an_object(value)
        if not isinstance(inner, dict):
            return _not_an_object(inner)
        value = inner
    if not isinstance(value, dict):
        return _not_an_object(value)
    return ParsedArguments(value, None)
