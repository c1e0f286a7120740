"""Benchmark 4: reply latency with a slow hosted fact extractor, against extraction off.

Two config entries in one real Home Assistant talk to the same fake model
server (the latency benchmark's reply: empty think block and a 36-word answer,
``--delay-ms`` per event). One has extraction off; the other has extraction
"hosted", pointing at a SECOND fake server whose every answer takes 5 s. Turns
run in alternating blocks (off, hosted, off, hosted, ...) for four speakers of
a household, so several extractions are in flight while hosted turns are
timed. After each hosted block the extractions are awaited (not timed) so they
cannot slow the next "off" block; at the end every extraction task is awaited,
and the entries unload (which cancels anything still running).

    python -m benchmarks.extraction_offpath [--runs 100]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import Context

from benchmarks import _harness as h
from custom_components.local_assistant.const import (
    CONF_EXTRACTION,
    CONF_EXTRACTION_API_KEY,
    CONF_EXTRACTION_BASE_URL,
    CONF_EXTRACTION_MODEL,
    EXTRACTION_HOSTED,
    EXTRACTION_OFF,
)
from tests import fake_openai as fake

TARGET_RATIO = 1.05
EXTRACTOR_SECONDS = 5.0
EXTRACTOR_MODEL = "hosted-extractor"
SPEAKERS = 4
BLOCKS = 4
EXTRACTED = '["The user kitesurfs at the beach when the wind is west."]'


def _slow_extractor(_body: dict[str, Any]) -> fake.Reply:
    # One piece, so the fake server's per-piece delay is the whole 5 s.
    return fake.text(EXTRACTED, delay=EXTRACTOR_SECONDS, chunk_size=len(EXTRACTED))


def _extraction_tasks() -> int:
    """Extraction tasks alive now (the extractor names its tasks)."""
    return sum(
        1
        for task in asyncio.all_tasks()
        if task.get_name().startswith("local_assistant fact extraction")
        and not task.done()
    )


async def _turn(hass: Any, agent_id: str, user_id: str) -> tuple[float, float]:
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


async def main(args: argparse.Namespace) -> None:
    """Time blocks of turns with extraction off and hosted."""
    print(f"extraction_offpath: {h.machine()}")
    async with (
        fake.FakeOpenAIServer(models=[h.MODEL]) as server,
        fake.FakeOpenAIServer(models=[EXTRACTOR_MODEL]) as extractor_server,
        h.home_assistant() as hass,
    ):
        delay = args.delay_ms / 1000
        server.responder = lambda _body: fake.text(
            h.ANSWER, think=h.EMPTY_THINK, delay=delay
        )
        extractor_server.responder = _slow_extractor
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

        for index in range(args.warmup):  # warm both paths, then drain
            await _turn(hass, off_agent, users[0].id)
            await _turn(hass, hosted_agent, users[index % SPEAKERS].id)
        async with asyncio.timeout(60):
            await extractor.async_wait_idle()

        times: dict[str, list[tuple[float, float]]] = {"off": [], "hosted": []}
        in_flight: list[int] = []
        per_block = max(1, args.runs // BLOCKS)
        turn = 0
        for _block in range(BLOCKS):
            for mode, agent_id in (("off", off_agent), ("hosted", hosted_agent)):
                for _ in range(per_block):
                    user = users[turn % SPEAKERS]
                    turn += 1
                    times[mode].append(await _turn(hass, agent_id, user.id))
                    if mode == "hosted":
                        in_flight.append(_extraction_tasks())
                if mode == "hosted":
                    # Not timed: let this block's extractions finish first.
                    async with asyncio.timeout(120):
                        await extractor.async_wait_idle()

        async with asyncio.timeout(120):
            await extractor.async_wait_idle()
        stats = extractor.stats
        extractor_requests = len(extractor_server.requests)
        leftover = _extraction_tasks()
        facts_now = len(
            hosted_entry.runtime_data.memory.list_facts(f"user:{users[0].id}")
        )

    off = h.summary([wall for wall, _ in times["off"]])
    hosted = h.summary([wall for wall, _ in times["hosted"]])
    off_cpu = h.summary([cpu for _, cpu in times["off"]])
    hosted_cpu = h.summary([cpu for _, cpu in times["hosted"]])
    ratio = hosted["median"] / off["median"]
    print(
        f"reply: empty think block + 36-word answer, {args.delay_ms:g} ms per event; "
        f"extractor answers after {EXTRACTOR_SECONDS:g} s; {SPEAKERS} speakers with "
        f"25 facts and a full session buffer; {len(times['off'])} turns per mode in "
        f"{BLOCKS} alternating blocks"
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
        f"  ratio hosted/off (median): {ratio:.3f}; p90 ratio "
        f"{hosted['p90'] / off['p90']:.3f}; added median "
        f"{hosted['median'] - off['median']:+.2f} ms"
    )
    print(
        f"  extractions: {stats.runs} runs ({extractor_requests} requests to the hosted "
        f"server), {stats.updated} updated facts, {stats.failed} failed; "
        f"in flight while timing: up to {max(in_flight)} "
        f"(mean {sum(in_flight) / len(in_flight):.1f}); tasks left at the end: {leftover}; "
        f"facts of one speaker now: {facts_now}"
    )
    ok = ratio <= TARGET_RATIO and leftover == 0 and stats.runs > 0
    print(
        f"  target: ratio <= {TARGET_RATIO}, extraction ran, nothing left running: {h.verdict(ok)}"
    )
    print(f"\nRESULT extraction_offpath: {h.verdict(ok)}")


def cli() -> None:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=8)
    parser.add_argument("--delay-ms", type=float, default=2.0)
    args = parser.parse_args()
    h.run(lambda: main(args))


if __name__ == "__main__":
    cli()
