"""Benchmark 5: memory of the session buffers for 10,000 speakers, and after the sweep.

Each scenario runs in a fresh child process (so RSS numbers do not mix):

* ``empty``: the same imports, nothing stored (baseline RSS);
* ``buffers``: our ``SessionBuffers`` (default caps) with 10,000 speakers of 20
  messages (10 exchanges) of realistic text, then the idle sweep, then the same
  load again (is freed memory reused, so the process stays bounded?), plus one
  speaker who talks for 1,000 exchanges (is a single buffer capped?);
* ``plain``: the naive baseline, a dict of lists of ``{"role", "content"}``
  dicts holding the same texts, then cleared.

RSS is VmRSS from /proc/self/status; per-speaker bytes come from tracemalloc in
a separate child run (tracing costs memory of its own). After freeing, RSS is
shown as is and after glibc's ``malloc_trim(0)`` (which returns free heap pages
to the OS); either way freed memory is reused by the next load.

    python -m benchmarks.memory_bound [--speakers 10000]
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
from pathlib import Path
import subprocess
import sys
import time
import tracemalloc
from typing import Any

from benchmarks._texts import conversation_turn
from custom_components.local_assistant.const import (
    DEFAULT_SESSION_IDLE_MINUTES,
    DEFAULT_SESSION_MAX_CHARS,
    DEFAULT_SESSION_MAX_MESSAGES,
)
from custom_components.local_assistant.memory.session import SessionBuffers

MESSAGES_PER_SPEAKER = 20
IDLE_SECONDS = DEFAULT_SESSION_IDLE_MINUTES * 60
REPO = Path(__file__).resolve().parent.parent


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def _trim() -> None:
    gc.collect()
    # Not glibc: RSS stays as the allocator leaves it.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _texts(speaker: int, exchange: int, wave: int) -> tuple[str, str]:
    user, answer = conversation_turn(speaker * 10 + exchange)
    # Unique objects per speaker and wave, as real transcripts are.
    return f"{user} [{wave}.{speaker}]", f"{answer} [{wave}.{speaker}]"


def _fill_buffers(
    buffers: SessionBuffers, speakers: int, now: float, wave: int
) -> None:
    for speaker in range(speakers):
        key = f"device:{wave:02d}{speaker:030x}"
        for exchange in range(MESSAGES_PER_SPEAKER // 2):
            buffers.append(key, *_texts(speaker, exchange, wave), now)


def _fill_plain(plain: dict[str, list[dict[str, str]]], speakers: int) -> None:
    for speaker in range(speakers):
        messages = plain.setdefault(f"device:00{speaker:030x}", [])
        for exchange in range(MESSAGES_PER_SPEAKER // 2):
            user, answer = _texts(speaker, exchange, 0)
            messages += (
                {"role": "user", "content": user},
                {"role": "assistant", "content": answer},
            )


def _new_buffers() -> SessionBuffers:
    return SessionBuffers(
        idle_seconds=IDLE_SECONDS,
        max_messages=DEFAULT_SESSION_MAX_MESSAGES,
        max_chars=DEFAULT_SESSION_MAX_CHARS,
    )


def child(scenario: str, speakers: int, trace: bool) -> dict[str, Any]:
    """Run one scenario in this (fresh) process and return its numbers."""
    _trim()
    out: dict[str, Any] = {"rss_start": _rss_bytes()}
    if trace:
        tracemalloc.start()
    traced0 = tracemalloc.get_traced_memory()[0] if trace else 0

    def mark(name: str) -> None:
        if trace:
            out[f"traced_{name}"] = tracemalloc.get_traced_memory()[0] - traced0
        else:
            out[f"rss_{name}"] = _rss_bytes()

    now = 1_800_000_000.0
    if scenario == "buffers":
        buffers = _new_buffers()
        start = time.perf_counter()
        _fill_buffers(buffers, speakers, now, wave=1)
        out["fill_seconds"] = time.perf_counter() - start
        out["stats_full"] = buffers.stats()
        gc.collect()
        mark("full")
        out["swept_early"] = buffers.sweep(now + IDLE_SECONDS / 2)  # nobody idle yet
        start = time.perf_counter()
        out["swept"] = buffers.sweep(now + IDLE_SECONDS + 1)
        out["sweep_seconds"] = time.perf_counter() - start
        out["stats_swept"] = buffers.stats()
        gc.collect()
        mark("swept")
        if not trace:
            _trim()
            mark("swept_trimmed")
        # The same load again: freed memory is reused, the process stays bounded.
        later = now + 2 * IDLE_SECONDS
        _fill_buffers(buffers, speakers, later, wave=2)
        gc.collect()
        mark("refilled")
        buffers.sweep(later + IDLE_SECONDS + 1)
        gc.collect()
        mark("swept_again")
        # One speaker who never stops talking: the buffer is capped.
        chatty = _new_buffers()
        before = tracemalloc.get_traced_memory()[0] if trace else 0
        for exchange in range(1000):
            user, answer = conversation_turn(exchange)
            chatty.append("user:chatty", user, answer, later + exchange)
        out["chatty_stats"] = chatty.stats()
        if trace:
            out["chatty_traced"] = tracemalloc.get_traced_memory()[0] - before
    elif scenario == "plain":
        plain: dict[str, list[dict[str, str]]] = {}
        _fill_plain(plain, speakers)
        gc.collect()
        mark("full")
        plain.clear()
        gc.collect()
        mark("swept")
        if not trace:
            _trim()
            mark("swept_trimmed")
    elif scenario != "empty":
        raise ValueError(scenario)
    return out


def _run_child(scenario: str, speakers: int, trace: bool) -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "benchmarks.memory_bound",
        "--child",
        scenario,
        "--speakers",
        str(speakers),
    ]
    if trace:
        command.append("--trace")
    done = subprocess.run(
        command, cwd=REPO, check=True, capture_output=True, text=True, timeout=600
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _mib(value: float) -> str:
    return f"{value / 2**20:8.1f} MiB"


def main(speakers: int) -> None:
    """Run the scenarios in child processes and print the comparison."""
    import platform

    print(
        f"memory_bound: python {platform.python_version()}, {platform.machine()}; "
        f"{speakers:,d} speakers x {MESSAGES_PER_SPEAKER} messages; caps "
        f"{DEFAULT_SESSION_MAX_MESSAGES} messages / {DEFAULT_SESSION_MAX_CHARS:,d} chars, "
        f"idle {DEFAULT_SESSION_IDLE_MINUTES} min"
    )
    empty = _run_child("empty", speakers, trace=False)
    ours = _run_child("buffers", speakers, trace=False)
    ours_t = _run_child("buffers", speakers, trace=True)
    plain = _run_child("plain", speakers, trace=False)
    plain_t = _run_child("plain", speakers, trace=True)

    stats = ours["stats_full"]
    text_chars = stats["chars"]
    print(
        f"  load: {stats['speakers']:,d} speakers, {stats['messages']:,d} messages, "
        f"{text_chars:,d} characters of text ({text_chars / stats['messages']:.0f} per message)"
    )
    base = empty["rss_start"]
    print(f"  {'process RSS (VmRSS)':44s} {'RSS':>12s} {'above start':>12s}")
    print(f"  {'empty process (same imports, nothing stored)':44s} {_mib(base)}")
    rows = (
        ("SessionBuffers, 10k speakers loaded", ours, "rss_full"),
        ("SessionBuffers, after the idle sweep", ours, "rss_swept"),
        ("  ... and malloc_trim(0)", ours, "rss_swept_trimmed"),
        ("SessionBuffers, same load again", ours, "rss_refilled"),
        ("SessionBuffers, swept again", ours, "rss_swept_again"),
        ("plain dict of lists, loaded", plain, "rss_full"),
        ("plain dict of lists, cleared", plain, "rss_swept"),
        ("  ... and malloc_trim(0)", plain, "rss_swept_trimmed"),
    )
    for label, run, key in rows:
        # "Above start": against the same child process before it stored anything.
        print(f"  {label:44s} {_mib(run[key])} {_mib(run[key] - run['rss_start'])}")
    per_ours = ours_t["traced_full"] / speakers
    per_plain = plain_t["traced_full"] / speakers
    print(
        f"  per speaker (tracemalloc): SessionBuffers {per_ours:,.0f} B, plain "
        f"{per_plain:,.0f} B ({per_ours / per_plain:.2f}x); text itself "
        f"{text_chars / speakers:,.0f} chars"
    )
    print(
        f"  traced after the sweep: SessionBuffers {ours_t['traced_swept']:,d} B "
        f"({ours['stats_swept']['speakers']} speakers left); plain after clear "
        f"{plain_t['traced_swept']:,d} B"
    )
    print(
        f"  sweep: {ours['swept']:,d} idle buffers freed in "
        f"{ours['sweep_seconds'] * 1000:.1f} ms (a sweep before the idle time freed "
        f"{ours['swept_early']}); fill took {ours['fill_seconds']:.2f} s. A sweep "
        "copies the buffers' dict, so its table fits what is left"
    )
    chatty = ours_t["chatty_stats"]
    print(
        f"  one speaker, 1,000 exchanges: {chatty['messages']} messages / "
        f"{chatty['chars']:,d} chars kept, {ours_t['chatty_traced']:,d} B traced"
    )
    freed = ours_t["traced_swept"] < 0.01 * ours_t["traced_full"]
    start = ours["rss_start"]
    reused = ours["rss_refilled"] - start <= 1.10 * (ours["rss_full"] - start)
    capped = (
        chatty["messages"] <= DEFAULT_SESSION_MAX_MESSAGES
        and chatty["chars"] <= DEFAULT_SESSION_MAX_CHARS
    )
    ok = freed and reused and capped and ours["stats_swept"]["speakers"] == 0
    print(
        "  target: bounded (cap per speaker; a second load of 10k speakers needs no "
        f"more than 10% extra RSS) and freed (< 1% traced left after the sweep): "
        f"{h_verdict(ok)}"
    )
    print(f"\nRESULT memory_bound: {h_verdict(ok)}")


def h_verdict(ok: bool) -> str:
    """PASS or MISS (no HA import here: see benchmarks._harness.verdict)."""
    return "PASS" if ok else "MISS"


def cli() -> None:
    """Parse arguments; --child runs one scenario and prints JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speakers", type=int, default=10_000)
    parser.add_argument("--child", choices=("empty", "buffers", "plain"))
    parser.add_argument("--trace", action="store_true")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.speakers, args.trace)))
    else:
        main(args.speakers)


if __name__ == "__main__":
    cli()
