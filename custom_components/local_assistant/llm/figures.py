"""Per-turn figures: how much of the prompt the server read again, and how long it took.

Each server reports its work on the last chunks of a streamed completion, in
its own shape:

* llama.cpp: ``"timings": {"prompt_n", "cache_n", "prompt_ms", "predicted_n",
  "predicted_ms", ...}`` on the finish chunk: ``prompt_n`` tokens read now,
  ``cache_n`` reused from its prompt cache. With ``stream_options:
  {"include_usage": true}`` it also sends an OpenAI-style usage chunk.
* OpenAI style (vLLM, LM Studio, Ollama, llama.cpp): a last chunk without
  choices carrying ``"usage": {"prompt_tokens", "completion_tokens",
  "prompt_tokens_details": {"cached_tokens"}}``; ``prompt_tokens`` counts the
  whole prompt, cached tokens included. Only sent when the request asks for
  it (``stream_options``).
* Swama: ``"usage"`` on the finish chunk, always: ``prompt_tokens``,
  ``completion_tokens``, ``"response_token/s"`` and ``total_duration``
  (seconds); no cached count.

The figures hold numbers only, never text, so they may be logged and shown
in diagnostics.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

type AgentKind = Literal["conversation", "ai_task"]

# Turns kept for diagnostics.
RECENT_TURNS = 20


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


@dataclass(slots=True)
class CompletionFigures:
    """One completion: what the server read and how long it took."""

    # The whole prompt, and the part the server took from its cache.
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    completion_tokens: int | None = None
    # The server's own times (llama.cpp: prompt and generation; Swama: both
    # together as `server_ms`).
    prompt_ms: float | None = None
    generation_ms: float | None = None
    server_ms: float | None = None
    # Ours: from sending the request to its first streamed token (text,
    # reasoning or tool call) and to the end of the stream.
    first_token_ms: float | None = None
    total_ms: float | None = None

    def read_timings(self, timings: Mapping[str, Any]) -> None:
        """llama.cpp's ``timings``: the most exact figures, they win."""
        read, cached = _int(timings.get("prompt_n")), _int(timings.get("cache_n"))
        if read is not None:
            self.prompt_tokens = read + (cached or 0)
            self.cached_tokens = cached or 0
        if (tokens := _int(timings.get("predicted_n"))) is not None:
            self.completion_tokens = tokens
        if (prompt_ms := _float(timings.get("prompt_ms"))) is not None:
            self.prompt_ms = prompt_ms
        if (predicted_ms := _float(timings.get("predicted_ms"))) is not None:
            self.generation_ms = predicted_ms

    def read_usage(self, usage: Mapping[str, Any]) -> None:
        """OpenAI-style or Swama ``usage``; fills what timings did not."""
        if self.prompt_tokens is None:
            self.prompt_tokens = _int(usage.get("prompt_tokens"))
        details = usage.get("prompt_tokens_details")
        if self.cached_tokens is None and isinstance(details, Mapping):
            self.cached_tokens = _int(details.get("cached_tokens"))
        if self.completion_tokens is None:
            self.completion_tokens = _int(usage.get("completion_tokens"))
        duration = _float(usage.get("total_duration"))
        if self.server_ms is None and duration is not None:
            self.server_ms = duration * 1000

    @property
    def read_tokens(self) -> int | None:
        """Prompt tokens the server read for this completion (not from its cache)."""
        if self.prompt_tokens is None or self.cached_tokens is None:
            return None
        return max(self.prompt_tokens - self.cached_tokens, 0)

    @property
    def reread(self) -> float | None:
        """The share of the prompt read again, 0-1 (None when not reported)."""
        read = self.read_tokens
        if read is None or not self.prompt_tokens:
            return None
        return read / self.prompt_tokens


@dataclass(slots=True)
class TurnFigures:
    """One turn of an agent: its completions and what the user waited for.

    Times run from the first request of the turn; ``first_text_ms`` is when
    the first visible text reached the chat log (what a satellite speaks).
    """

    kind: AgentKind
    at: float  # epoch seconds, when the turn started
    started: float = 0.0  # time.monotonic() then, for the durations
    completions: list[CompletionFigures] = field(default_factory=list)
    first_text_ms: float | None = None
    total_ms: float | None = None

    @property
    def first(self) -> CompletionFigures | None:
        """The turn's first completion: the one a warm prompt cache speeds up."""
        return self.completions[0] if self.completions else None

    def as_dict(self) -> dict[str, Any]:
        """Numbers only, for diagnostics."""
        first = self.first or CompletionFigures()
        return {
            "kind": self.kind,
            "at": self.at,
            "completions": len(self.completions),
            "prompt_tokens": first.prompt_tokens,
            "cached_tokens": first.cached_tokens,
            "reread": None if first.reread is None else round(first.reread, 3),
            "read_tokens_all_completions": _sum(
                c.read_tokens for c in self.completions
            ),
            "completion_tokens": _sum(c.completion_tokens for c in self.completions),
            "first_token_ms": _round(first.first_token_ms),
            "first_text_ms": _round(self.first_text_ms),
            "total_ms": _round(self.total_ms),
            "server_prompt_ms": _round(_sum(c.prompt_ms for c in self.completions)),
            "server_generation_ms": _round(
                _sum(c.generation_ms for c in self.completions)
            ),
        }

    def log_line(self) -> str:
        """One line for the debug log, no text of the conversation."""
        first = self.first or CompletionFigures()
        if first.prompt_tokens is None:
            prompt = "prompt size not reported"
        elif first.cached_tokens is None:
            prompt = f"prompt {first.prompt_tokens} tokens (cache not reported)"
        else:
            prompt = (
                f"prompt {first.prompt_tokens} tokens, {first.cached_tokens} cached "
                f"({_percent(first.reread)} read again)"
            )
        return (
            f"{self.kind} turn: {len(self.completions)} completion(s), {prompt}, "
            f"first token {_ms(first.first_token_ms)}, "
            f"first text {_ms(self.first_text_ms)}, total {_ms(self.total_ms)}"
        )


class TurnLog:
    """The last turns' figures, for diagnostics (RAM only, bounded)."""

    def __init__(self, size: int = RECENT_TURNS) -> None:
        """Keep at most `size` turns."""
        self._turns: deque[TurnFigures] = deque(maxlen=size)

    def add(self, turn: TurnFigures) -> None:
        """Remember a finished turn."""
        self._turns.append(turn)

    def recent(self) -> list[dict[str, Any]]:
        """Oldest first, numbers only."""
        return [turn.as_dict() for turn in self._turns]


def _sum(values: Iterable[float | None]) -> Any:
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _ms(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f} ms"


def _percent(value: float | None) -> str:
    return "?" if value is None else f"{100 * value:.0f}%"
