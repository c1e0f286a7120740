"""Shims so one code base runs on HA 2026.2 and on 2026.11.

2026.11 replaced voluptuous with probatio (and dropped voluptuous-openapi) and
wraps tool results in ``llm.ToolResult``. Everything version-dependent lives here.

Lines that only run on one version carry ``# compat: <version>``: that is how
``scripts/check-ha-compat`` knows the old (or new) API use is deliberate.
"""

from __future__ import annotations

from collections.abc import Callable
import importlib
from typing import Any, cast

from homeassistant.components import conversation
from homeassistant.helpers import llm
import voluptuous as vol


def _load_openapi_converter() -> Callable[..., Any]:
    try:
        probatio = importlib.import_module("probatio")  # compat: 2026.11
    except ImportError:
        probatio = None
    if probatio is not None and vol.Schema is probatio.Schema:
        converter: Callable[..., Any] = probatio.to_openapi
        return converter
    # compat: 2026.2 (voluptuous-openapi is gone in 2026.11)
    return cast(
        Callable[..., Any], importlib.import_module("voluptuous_openapi").convert
    )


_to_openapi = _load_openapi_converter()


def schema_to_openapi(
    schema: vol.Schema, custom_serializer: Callable[[Any], Any] | None = None
) -> dict[str, Any]:
    """Convert a tool's parameter schema to a JSON schema for the model."""
    result: dict[str, Any] = _to_openapi(schema, custom_serializer=custom_serializer)
    return result


def tool_result(data: dict[str, Any]) -> Any:
    """Wrap what a tool returns the way the running HA expects."""
    result_cls = getattr(llm, "ToolResult", None)
    return result_cls(data=data) if result_cls is not None else data


def tool_result_data(content: conversation.ToolResultContent) -> Any:
    """Read the data of a tool result on either HA version."""
    result = getattr(content, "result", None)
    if result is not None:
        return {"data": result.data, "error": result.error}
    return content.tool_result  # compat: 2026.2


def tool_result_delta(
    tool_call_id: str, tool_name: str, data: dict[str, Any], *, error: bool = True
) -> dict[str, Any]:
    """Build a ``tool_result`` delta for a call we answer ourselves."""
    delta: dict[str, Any] = {
        "role": "tool_result",
        "tool_call_id": tool_call_id,
        "tool_name": tool_name,
    }
    if hasattr(llm, "ToolResult"):
        delta["result"] = llm.ToolResult(data=data, error=error)  # compat: 2026.11
    else:
        delta["tool_result"] = data  # compat: 2026.2
    return delta
