"""The server scheduler: replies first, then one background call at a time."""

from __future__ import annotations

import asyncio

import pytest

from custom_components.local_assistant.server.scheduler import Job, ServerScheduler


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_free_server_runs_a_call_at_once() -> None:
    scheduler = ServerScheduler()
    async with scheduler.turn(Job.EXTRACTION):
        assert scheduler.busy
        assert not scheduler.replying
    assert not scheduler.busy
    await scheduler.async_wait_idle()


async def test_background_calls_wait_for_every_reply() -> None:
    """Two replies overlapping: a call waits until the last one ends."""
    scheduler = ServerScheduler()
    ran: list[str] = []

    async def call() -> None:
        async with scheduler.turn(Job.EXTRACTION):
            ran.append("call")

    first = scheduler.reply()
    second = scheduler.reply()
    await first.__aenter__()
    await second.__aenter__()
    waiting = asyncio.create_task(call())
    await _settle()
    await first.__aexit__(None, None, None)
    await _settle()
    assert ran == []
    assert scheduler.waiting(Job.EXTRACTION) == 1
    await second.__aexit__(None, None, None)
    await waiting
    assert ran == ["call"]


async def test_a_reply_never_waits_for_a_background_call() -> None:
    scheduler = ServerScheduler()
    release = asyncio.Event()

    async def call() -> None:
        async with scheduler.turn(Job.REWARM):
            await release.wait()

    running = asyncio.create_task(call())
    await _settle()
    async with asyncio.timeout(1):
        async with scheduler.reply():
            assert scheduler.replying
    release.set()
    await running


async def test_one_call_at_a_time_most_urgent_first() -> None:
    """When the server frees up: warm-ups, then extraction, then re-warms, each in order."""
    scheduler = ServerScheduler()
    order: list[str] = []
    in_flight = 0

    async def call(job: Job, name: str) -> None:
        nonlocal in_flight
        async with scheduler.turn(job):
            in_flight += 1
            assert in_flight == 1
            order.append(name)
            await asyncio.sleep(0)
            in_flight -= 1

    async with scheduler.reply():
        tasks = [
            asyncio.create_task(call(job, name))
            for job, name in (
                (Job.REWARM, "rewarm"),
                (Job.EXTRACTION, "extract 1"),
                (Job.WARM_UP, "warm-up"),
                (Job.EXTRACTION, "extract 2"),
            )
        ]
        await _settle()
        assert scheduler.waiting() == 4
    await asyncio.gather(*tasks)
    assert order == ["warm-up", "extract 1", "extract 2", "rewarm"]
    await scheduler.async_wait_idle()


async def test_a_reply_between_calls_goes_first() -> None:
    """A call of several requests takes one turn per request: a reply fits between."""
    scheduler = ServerScheduler()
    order: list[str] = []
    reply_started = asyncio.Event()

    async def extraction() -> None:
        for number in (1, 2):
            async with scheduler.turn(Job.EXTRACTION):
                order.append(f"call {number}")
                if number == 1:
                    reply_started.set()
                    await asyncio.sleep(0)

    async def reply() -> None:
        await reply_started.wait()
        async with scheduler.reply():
            order.append("reply")
            await _settle()
            order.append("reply done")

    await asyncio.gather(extraction(), reply())
    assert order == ["call 1", "reply", "reply done", "call 2"]


async def test_a_waiting_call_can_be_cancelled() -> None:
    scheduler = ServerScheduler()
    ran: list[str] = []

    async def call(name: str) -> None:
        async with scheduler.turn(Job.REWARM):
            ran.append(name)

    async with scheduler.reply():
        cancelled = asyncio.create_task(call("cancelled"))
        kept = asyncio.create_task(call("kept"))
        await _settle()
        cancelled.cancel()
        await _settle()
        assert scheduler.waiting() == 1
    await kept
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert ran == ["kept"]
    assert not scheduler.busy


async def test_a_call_cancelled_as_it_is_granted_passes_the_turn_on() -> None:
    scheduler = ServerScheduler()
    ran: list[str] = []

    async def call(name: str) -> None:
        async with scheduler.turn(Job.EXTRACTION):
            ran.append(name)

    reply = scheduler.reply()
    await reply.__aenter__()
    first = asyncio.create_task(call("first"))
    second = asyncio.create_task(call("second"))
    await _settle()
    await reply.__aexit__(None, None, None)  # grants "first"...
    first.cancel()  # ...which is cancelled before it runs
    await asyncio.gather(first, second, return_exceptions=True)
    assert ran == ["second"]
    assert not scheduler.busy
