"""Benchmark 3: prompt size on turn N of one speaker, ours against replaying everything.

1,000 turns of one speaker go through our agent in a real Home Assistant
(default caps: 200 messages, 24,000 characters of history). On sampled turns
the request body the fake server received is rendered with the real Qwen3 chat
template, tools included, and tokenized with the real Qwen3 tokenizer (see
benchmarks/_qwen3.py). Baseline: the same system prompt and tools with the raw
transcript (every earlier user and assistant message) replayed. Writes
docs/prompt_growth.png.

    python -m benchmarks.prompt_growth [--turns 1000]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import Context

from benchmarks import _harness as h
from benchmarks._qwen3 import PromptSize, Qwen3
from tests.helpers import fake_openai as fake

TABLE_TURNS = (1, 10, 100, 1000)
SWAMA_CONTEXT = 16_384  # Qwen3-4B on Swama: older turns are silently cut beyond this
PNG = Path(__file__).resolve().parent.parent / "docs" / "prompt_growth.png"
# "Flat": ours may still trend by at most this share of raw's growth per turn.
FLAT_SLOPE = 0.01


def _sampled(turns: int, cap_turn: int) -> list[int]:
    points = {1, 2, 3, 5, 7, *range(10, turns + 1, 10), *TABLE_TURNS, cap_turn}
    return sorted(n for n in points if n <= turns)


async def _collect(turns: int) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Run ``turns`` turns; return every request body and the transcript."""
    transcript: list[tuple[str, str]] = []
    async with (
        fake.FakeOpenAIServer(models=[h.MODEL]) as server,
        h.home_assistant() as hass,
    ):
        _entry, agent_id = await h.async_setup_agent(hass, server.base_url)
        user = await hass.auth.async_create_user("Anna")
        for index in range(turns):
            text, answer = h.conversation_turn(index)
            server.queue(fake.text(answer, think=h.EMPTY_THINK))
            result = await conversation.async_converse(
                hass, text, None, Context(user_id=user.id), agent_id=agent_id
            )
            assert result.response.speech["plain"]["speech"] == answer
            transcript.append((text, answer))
        bodies = list(server.requests)
    assert len(bodies) == turns, len(bodies)
    return bodies, transcript


def _slope(points: list[tuple[int, int]]) -> float:
    """Least-squares slope (tokens per turn)."""
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    var = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / var if var else 0.0


def _raw_messages(
    body: dict[str, Any], transcript: list[tuple[str, str]], turn: int
) -> list[dict[str, Any]]:
    """What replaying the raw transcript sends on ``turn`` (1-based)."""
    messages = [body["messages"][0]]  # the same system prompt
    for text, answer in transcript[: turn - 1]:
        messages += [
            {"role": "user", "content": text},
            {"role": "assistant", "content": answer},
        ]
    messages.append({"role": "user", "content": transcript[turn - 1][0]})
    return messages


def _plot(rows: list[tuple[int, PromptSize, PromptSize]], cap_turn: int) -> None:
    import matplotlib as mpl

    mpl.use("Agg")
    import matplotlib.pyplot as plt

    turns = [n for n, _, _ in rows]
    fig, (tokens_ax, chars_ax) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=110)
    for ax, attr, unit in (
        (tokens_ax, "tokens", "Qwen3 tokens"),
        (chars_ax, "chars", "characters"),
    ):
        ax.plot(
            turns,
            [getattr(raw, attr) for _, _, raw in rows],
            label="raw transcript replay",
            color="tab:red",
        )
        ax.plot(
            turns,
            [getattr(ours, attr) for _, ours, _ in rows],
            label="local_assistant (session buffer)",
            color="tab:blue",
        )
        ax.axvline(cap_turn, color="grey", linestyle=":", linewidth=1)
        ax.annotate(
            "session cap reached",
            (cap_turn, 0),
            xytext=(6, 6),
            textcoords="offset points",
            fontsize=8,
            color="grey",
        )
        ax.set_xlabel("turn N of one speaker")
        ax.set_ylabel(f"prompt size ({unit})")
        ax.grid(visible=True, alpha=0.3)
    tokens_ax.axhline(
        SWAMA_CONTEXT,
        color="black",
        linestyle="--",
        linewidth=1,
        label="16k context (Swama, Qwen3-4B)",
    )
    tokens_ax.set_title("Prompt tokens on turn N (chat template + tools)")
    chars_ax.set_title("Rendered prompt characters on turn N")
    tokens_ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    PNG.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PNG)
    plt.close(fig)


async def main(args: argparse.Namespace) -> None:
    """Collect the requests, measure them and print the table."""
    print(f"prompt_growth: {h.machine()}")
    qwen = Qwen3()
    bodies, transcript = await _collect(args.turns)
    # The first turn whose history is no longer the whole transcript: the cap bit.
    cap_turn = next(
        (
            turn
            for turn, body in enumerate(bodies, start=1)
            # minus the system message and this turn's user message
            if len(body["messages"]) - 2 < 2 * (turn - 1)
        ),
        args.turns,
    )
    rows: list[tuple[int, PromptSize, PromptSize]] = []
    for turn in _sampled(args.turns, cap_turn):
        body = bodies[turn - 1]
        tools = body.get("tools")
        ours = qwen.size(body["messages"], tools)
        raw = qwen.size(_raw_messages(body, transcript, turn), tools)
        rows.append((turn, ours, raw))

    print(
        f"one speaker, {args.turns} turns; tools sent: "
        f"{len(bodies[-1].get('tools') or [])}; history cap: 200 messages / 24,000 chars"
    )
    print(
        f"  {'turn N':>7s} {'ours msgs':>9s} {'ours chars':>10s} {'ours tokens':>11s}"
        f" {'raw msgs':>8s} {'raw chars':>10s} {'raw tokens':>10s} {'raw/ours':>8s}"
    )
    by_turn = {n: (ours, raw) for n, ours, raw in rows}
    for turn in (n for n in TABLE_TURNS if n in by_turn):
        ours, raw = by_turn[turn]
        print(
            f"  {turn:7d} {len(bodies[turn - 1]['messages']):9d} {ours.chars:10,d} "
            f"{ours.tokens:11,d} {2 * turn:8d} {raw.chars:10,d} {raw.tokens:10,d} "
            f"{raw.tokens / ours.tokens:7.1f}x"
        )

    after_cap = [(n, ours.tokens) for n, ours, _ in rows if n >= cap_turn]
    ours_slope = _slope(after_cap)
    raw_slope = _slope([(n, raw.tokens) for n, _, raw in rows if n >= 10])
    raw_early = _slope([(n, raw.tokens) for n, _, raw in rows if 10 <= n <= 100])
    raw_late = _slope([(n, raw.tokens) for n, _, raw in rows if n >= 100])
    low, high = min(t for _, t in after_cap), max(t for _, t in after_cap)
    print(
        f"  ours from turn {cap_turn} on (the session cap): {low:,d}-{high:,d} tokens "
        f"(message lengths vary), trend {ours_slope:+.2f} tokens/turn"
    )
    print(
        f"  raw replay: {raw_early:.1f} tokens/turn over turns 10-100, "
        f"{raw_late:.1f} tokens/turn over turns 100-{args.turns}"
    )
    over = next((n for n, _, raw in rows if raw.tokens > SWAMA_CONTEXT), None)
    if over is not None:
        print(
            f"  raw replay exceeds Swama's {SWAMA_CONTEXT:,d}-token context from about "
            f"turn {over}; ours never exceeds {high:,d} tokens"
        )
    flat = abs(ours_slope) <= FLAT_SLOPE * raw_slope
    linear = raw_early > 0 and abs(raw_late - raw_early) <= 0.2 * raw_early
    ok = flat and linear
    print(
        f"  target: ours flat after the cap (trend <= {FLAT_SLOPE:.0%} of raw's) and "
        f"raw linear (tokens/turn early and late within 20%): {h.verdict(ok)}"
    )
    _plot(rows, cap_turn)
    print(f"  plot: {PNG.relative_to(PNG.parent.parent)}")
    print(f"\nRESULT prompt_growth: {h.verdict(ok)}")


def cli() -> None:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    args = parser.parse_args()
    if args.turns < 100:
        parser.error("--turns must be at least 100")
    h.run(lambda: main(args))


if __name__ == "__main__":
    cli()
