"""Benchmark 4: reply latency with a slow hosted fact extractor, against extraction off.

Two config entries in one real Home Assistant talk to the same fake model
server (the latency benchmark's reply: empty think block and a 36-word answer,
``--delay-ms`` per event). One has extraction off; the other has extraction
"hosted", pointing at a SECOND fake server whose every answer takes 5 s. Both
servers run in processes of their own (benchmarks/_server_process.py). Turns
alternate between the two agents (off, hosted, off, ...) for the four speakers
of a household, so the comparison is free of drift, and the hosted agent keeps
several extractions in flight the whole time: the figure is what extraction
adds to a reply while it is running. Afterwards, with no reply running, the
CPU that one extraction run costs in the background is measured too. At the
end every extraction task is awaited (bounded), then the entries unload (which
cancels anything still running), and the number of tasks left is printed.

    python -m benchmarks.extraction_offpath [--runs 300]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant

from benchmarks import _harness as h
from benchmarks._server_process import server_process
from custom_components.local_assistant.const import (
    CONF_EXTRACTION,
    CONF_EXTRACTION_API_KEY,
    CONF_EXTRACTION_BASE_URL,
    CONF_EXTRACTION_MODEL,
    EXTRACTION_HOSTED,
    EXTRACTION_OFF,
)
from custom_components.local_assistant.memory.extraction import Exchange

TARGET_RATIO = 1.05
EXTRACTOR_SECONDS = 5.0
EXTRACTOR_MODEL = "hosted-extractor"
SPEAKERS = 4
BACKGROUND_RUNS = 20
EXTRACTED = '["The user kitesurfs at the beach when the wind is west."]'
TASK_NAME = "local_assistant fact extraction"


def _extraction_tasks() -> int:
    """Extraction tasks alive now (the extractor names its tasks)."""
    return sum(
        1
        for task in asyncio.all_tasks()
        if task.get_name().startswith(TASK_NAME) and not task.done()
    )


async def _turn(
    hass: HomeAssistant, agent_id: str, user_id: str
) -> tuple[float, float]:
    start, cpu = time.perf_counter(), time.process_time()
    result = await conversation.async_converse(
        hass,
        "Is it windy enough to kite at the beach?",
        None,
        Context(user_id=user_id),
        agent_id=agent_id,
    )
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert result.response.speech["plain"]["speech"] == h.ANSWER
    return wall * 1000, cpu * 1000


async def _background_cost(extractor: Any, runs: int) -> tuple[float, float]:
    """CPU ms per extraction run with nothing else going on, and its wall time."""
    await asyncio.sleep(0.5)  # let timers and saves of the timed part settle
    idle_start = time.process_time()
    await asyncio.sleep(1.0)
    idle_cpu_per_s = time.process_time() - idle_start
    start, cpu = time.perf_counter(), time.process_time()
    for index in range(runs):
        extractor.schedule(
            f"user:background-{index}",
            Exchange(
                "I only go out when it blows more than eighteen knots.",
                "Noted, eighteen knots is your minimum.",
            ),
        )
    async with asyncio.timeout(60):
        await extractor.async_wait_idle()
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu - idle_cpu_per_s * wall
    return cpu * 1000 / runs, wall


async def main(args: argparse.Namespace) -> None:
    """Alternate turns of the two agents, then measure extraction's own cost."""
    print(f"extraction_offpath: {h.machine()}")
    async with (
        server_process(
            [h.MODEL],
            content=h.ANSWER,
            think=h.EMPTY_THINK,
            delay=args.delay_ms / 1000,
        ) as server,
        # One piece, so the fake server's per-piece delay is the whole 5 s.
        server_process(
            [EXTRACTOR_MODEL],
            content=EXTRACTED,
            delay=EXTRACTOR_SECONDS,
            chunk_size=len(EXTRACTED),
        ) as extractor_server,
        h.home_assistant() as hass,
    ):
        off_entry, off_agent = await h.async_setup_agent(
            hass,
            server.base_url,
            options={CONF_EXTRACTION: EXTRACTION_OFF},
            title="Extraction off",
        )
        hosted_entry, hosted_agent = await h.async_setup_agent(
            hass,
            server.base_url,
            options={
                CONF_EXTRACTION: EXTRACTION_HOSTED,
                CONF_EXTRACTION_BASE_URL: extractor_server.base_url,
                CONF_EXTRACTION_API_KEY: "",
                CONF_EXTRACTION_MODEL: EXTRACTOR_MODEL,
            },
            title="Extraction hosted",
        )
        extractor = hosted_entry.runtime_data.memory.extractor
        assert extractor is not None
        assert off_entry.runtime_data.memory.extractor is None
        users = [
            await hass.auth.async_create_user(f"Person {i}") for i in range(SPEAKERS)
        ]
        for entry in (off_entry, hosted_entry):
            for user in users:
                await h.async_fill_session(hass, entry, f"user:{user.id}")
                await h.async_add_facts(entry, f"user:{user.id}", count=25)

        times: dict[str, list[tuple[float, float]]] = {"off": [], "hosted": []}
        in_flight: list[int] = []
        for index in range(args.warmup + args.runs):
            user = users[index % SPEAKERS]
            order = [("off", off_agent), ("hosted", hosted_agent)]
            if index % 2:
                order.reverse()
            for mode, agent_id in order:
                in_flight.append(_extraction_tasks())
                sample = await _turn(hass, agent_id, user.id)
                if index >= args.warmup:
                    times[mode].append(sample)
        requests_while_timing = await extractor_server.request_count()

        async with asyncio.timeout(120):
            await extractor.async_wait_idle()
        runs_before = extractor.stats.runs
        cpu_per_run, background_wall = await _background_cost(
            extractor, BACKGROUND_RUNS
        )
        stats = extractor.stats
        leftover_before_unload = _extraction_tasks()
    leftover_after_unload = _extraction_tasks()

    off = h.summary([wall for wall, _ in times["off"]])
    hosted = h.summary([wall for wall, _ in times["hosted"]])
    off_cpu = h.summary([cpu for _, cpu in times["off"]])
    hosted_cpu = h.summary([cpu for _, cpu in times["hosted"]])
    ratio = hosted["median"] / off["median"]
    print(
        f"reply: empty think block + 36-word answer, {args.delay_ms:g} ms per event; "
        f"extractor answers after {EXTRACTOR_SECONDS:g} s; {SPEAKERS} speakers with "
        f"25 facts and a full session buffer; {len(times['off'])} turns per agent, "
        "alternating"
    )
    print(
        f"  {'reply latency':28s} {'median':>9s} {'p90':>9s} {'max':>9s} {'CPU median':>11s}"
    )
    for label, stats_wall, stats_cpu in (
        ("extraction off", off, off_cpu),
        ("extraction hosted (5 s)", hosted, hosted_cpu),
    ):
        print(
            f"  {label:28s} {stats_wall['median']:8.2f}ms {stats_wall['p90']:8.2f}ms "
            f"{stats_wall['max']:8.2f}ms {stats_cpu['median']:10.2f}ms"
        )
    print(
        f"  ratio hosted/off: median {ratio:.3f}, p90 {hosted['p90'] / off['p90']:.3f}; "
        f"added median {hosted['median'] - off['median']:+.2f} ms, CPU "
        f"{hosted_cpu['median'] - off_cpu['median']:+.2f} ms"
    )
    print(
        f"  extraction while timing: {requests_while_timing} requests to the hosted "
        f"server, extraction tasks alive at each turn's start: up to {max(in_flight)} "
        f"(mean {sum(in_flight) / len(in_flight):.1f})"
    )
    print(
        f"  in the background, alone: {cpu_per_run:.2f} ms CPU per extraction run "
        f"({BACKGROUND_RUNS} speakers' runs in {background_wall:.1f} s: each answered "
        f"after {EXTRACTOR_SECONDS:g} s, runs limited by the hosted concurrency cap)"
    )
    print(
        f"  all: {stats.runs} runs ({stats.runs - runs_before} in the background "
        f"phase), {stats.updated} updated facts, {stats.failed} failed; extraction "
        f"tasks left: {leftover_before_unload} before unload, "
        f"{leftover_after_unload} after"
    )
    ok = (
        ratio <= TARGET_RATIO
        and leftover_before_unload == 0
        and leftover_after_unload == 0
        and requests_while_timing > 0
    )
    print(
        f"  target: ratio <= {TARGET_RATIO} with extractions running, none left "
        f"running: {h.verdict(ok)}"
    )
    print(f"\nRESULT extraction_offpath: {h.verdict(ok)}")


def cli() -> None:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--delay-ms", type=float, default=2.0)
    args = parser.parse_args()
    h.run(lambda: main(args))


if __name__ == "__main__":
    cli()
