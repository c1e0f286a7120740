"""Benchmark 6: ThinkFilter throughput for 1-character and 64-character chunks.

Input: 200 Qwen3-style completions of about 5,000 characters each (``<think>``,
about 1,200 characters of reasoning, ``</think>\\n\\n``, then about 3,800
characters of answer with an occasional ``<`` that is not a tag), each fed to a
fresh filter in chunks of 1 or 64 characters (64-character chunks split tags
across chunks), then flushed. Baseline: a plain ``str`` concatenation pass
over the same chunks. Median of 7 repetitions.

    python -m benchmarks.think_throughput
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

from custom_components.local_assistant.llm.think import ThinkFilter

REASONING = (
    "The user wants to know if the wind is good for kitesurfing. I should check "
    "the live sensor first, then compare it with their usual 18 knot minimum. "
)
ANSWER = (
    "The wind at the beach is twenty two knots from the west, so conditions are "
    "good this afternoon; gusts stay below 28 knots, which is < your limit. "
)
# Slower than 2 ms per chunk would be audible at Qwen3's token rate (20-50 ms).
TARGET_US_PER_CHUNK = 100.0


def _completion(index: int) -> tuple[str, str]:
    """One completion and its expected visible text."""
    reasoning = (REASONING * 9)[: 1200 + index % 7]
    answer = (ANSWER * 28)[: 3800 + index % 11].strip()
    return f"<think>\n{reasoning}\n</think>\n\n{answer}", answer


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _filter_pass(streams: list[list[str]]) -> list[str]:
    visible_out = []
    for chunks in streams:
        think = ThinkFilter()
        visible: list[str] = []
        for chunk in chunks:
            shown, _thinking = think.feed(chunk)
            if shown:
                visible.append(shown)
        shown, _thinking = think.flush()
        visible.append(shown)
        visible_out.append("".join(visible))
    return visible_out


def _concat_pass(streams: list[list[str]]) -> list[str]:
    out = []
    for chunks in streams:
        text = ""
        for chunk in chunks:
            text += chunk
        out.append(text)
    return out


def _timed(function: object, streams: list[list[str]], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        function(streams)  # type: ignore[operator]
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main(args: argparse.Namespace) -> None:
    """Time both passes for each chunk size and print the table."""
    print(f"think_throughput: python {platform.python_version()}, {platform.machine()}")
    completions = [_completion(i) for i in range(args.completions)]
    total_chars = sum(len(text) for text, _ in completions)
    visible_chars = sum(len(answer) for _, answer in completions)
    print(
        f"input: {len(completions)} completions, {total_chars:,d} characters "
        f"({1 - visible_chars / total_chars:.0%} inside think blocks); "
        f"median of {args.repeats} runs"
    )
    print(
        f"  {'chunk':>5s} {'chunks':>9s} {'ThinkFilter':>14s} {'per chunk':>10s}"
        f" {'str concat':>14s} {'per chunk':>10s} {'filter/concat':>13s}"
    )
    ok = True
    for size in (1, 64):
        streams = [_chunks(text, size) for text, _ in completions]
        visible = _filter_pass(streams)
        assert visible == [answer for _, answer in completions], "filter output changed"
        chunks = sum(len(chunks) for chunks in streams)
        filt = _timed(_filter_pass, streams, args.repeats)
        base = _timed(_concat_pass, streams, args.repeats)
        per_chunk = filt / chunks * 1e6
        print(
            f"  {size:5d} {chunks:9,d} {total_chars / filt / 1e6:9.2f} Mch/s "
            f"{per_chunk:8.3f}us {total_chars / base / 1e6:9.2f} Mch/s "
            f"{base / chunks * 1e6:8.3f}us {filt / base:12.1f}x"
        )
        ok = ok and per_chunk <= TARGET_US_PER_CHUNK
    print(
        "  a model streams 20-100 chunks/s; the filter's time per chunk is what it adds "
        "to each token's way to TTS"
    )
    print(
        f"  target (ours, not in the issue): <= {TARGET_US_PER_CHUNK:g} us per chunk: "
        f"{'PASS' if ok else 'MISS'}"
    )
    print(f"\nRESULT think_throughput: {'PASS' if ok else 'MISS'}")


def cli() -> None:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--completions", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    main(parser.parse_args())


if __name__ == "__main__":
    cli()
