"""Chat templates rendered as the servers render them, for prompt layout checks.

jinja2 in a sandbox with ``trim_blocks`` and ``lstrip_blocks`` and a ``tojson``
that keeps non-ASCII text, the way ``transformers`` (and so Swama's
swift-jinja and llama.cpp's minja, for these templates) render them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jinja2 import Template
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = Path(__file__).resolve().parents[2]
QWEN3_TEMPLATE = ROOT / "tests" / "data" / "qwen3-chat-template.jinja"
QWEN25_TEMPLATE = ROOT / "scripts" / "model" / "qwen2.5-tools.jinja"


def _tojson(value: Any, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)


def _raise(message: str) -> None:
    raise ValueError(message)


def compile_template(source: str) -> Template:
    """A chat template ready to render messages and tools."""
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    return env.from_string(source)


def load_template(path: Path) -> Template:
    """A chat template from a file."""
    return compile_template(path.read_text(encoding="utf-8"))


def render(
    template: Template,
    body: dict[str, Any],
    *,
    add_generation_prompt: bool = True,
) -> str:
    """A request body (messages, tools) as the model reads it."""
    return template.render(
        messages=body["messages"],
        tools=body.get("tools") or None,
        add_generation_prompt=add_generation_prompt,
    )
