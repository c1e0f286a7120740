"""Benchmark 1: latency added per turn by the agent, against the plain openai client.

Agent: ``conversation.async_converse`` through our agent in a real Home Assistant
(integration set up from a config entry pointing at the fake server, a small
exposed home, 30 facts for the speaker and a full session buffer).
Baseline (the issue's): the very request body the agent sent that turn, sent
again with ``client.chat.completions.create`` (on HA's shared httpx client, as
the agent uses) and read to the end. Floor (stricter): the same body through
``client.post``, the SDK's transport without ``create()``'s per-call parameter
transform: the agent passes its body in ``extra_body``, which the SDK sends as
is. "Agent via create() args" passes the body as typed arguments again, i.e.
the agent before that change.

Reply: Qwen3's empty think block then a 36-word spoken answer, about 45
streamed events with ``--delay-ms`` before each (default 2 ms, i.e. 500
tokens/s: 10-25x faster than Qwen3-4B on a Mac, so the ratio is a worst case).
A second pass with no delay shows the pure CPU cost. The fake server runs in a
process of its own (benchmarks/_server_process.py), as a model server would.

    python -m benchmarks.latency [--runs 200]
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
import contextlib
import functools
import importlib
import inspect
import time
from types import SimpleNamespace
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers.httpx_client import get_async_client
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from benchmarks import _harness as h
from benchmarks._server_process import RemoteServer, server_process

TARGET_ADDED_MS = 5.0
TARGET_RATIO = 1.10
KINDS = ("agent", "agent_create", "baseline", "floor")
LABELS = {
    "agent": "agent (async_converse)",
    "agent_create": "agent, body as create() args (before)",
    "baseline": "baseline: openai chat.completions.create",
    "floor": "floor: openai client.post",
}


class _TypedCompletions:
    """``chat.completions`` whose ``create()`` gets the body as typed arguments."""

    def __init__(self, completions: Any) -> None:
        self._completions = completions

    async def create(
        self, *, extra_body: dict[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        # The agent passes its body in extra_body (sent as is); put it back into
        # the typed arguments, as the agent did before, so the SDK transforms it.
        return await self._completions.create(**{**kwargs, **(extra_body or {})})


class _CreateClient:
    """The agent's client, with the body of its chat request passed the old way."""

    def __init__(self, client: openai.AsyncOpenAI) -> None:
        self._client = client
        self.chat = SimpleNamespace(
            completions=_TypedCompletions(client.chat.completions)
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


async def _consume(stream: Any) -> list[str]:
    parts: list[str] = []
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            parts.append(chunk.choices[0].delta.content)
    return parts


async def _consume_stream(
    client: openai.AsyncOpenAI, body: dict[str, Any]
) -> list[str]:
    """The content pieces of one streamed reply (for the setup line)."""
    return await _consume(await client.chat.completions.create(**body))


async def _run(
    kind: str,
    hass: HomeAssistant,
    entry: Any,
    client: openai.AsyncOpenAI,
    agent_id: str,
    user_id: str,
    body: dict[str, Any],
) -> None:
    if kind in ("agent", "agent_create"):
        data = entry.runtime_data
        real = data.client
        if kind == "agent_create":
            data.client = _CreateClient(real)
        try:
            result = await conversation.async_converse(
                hass,
                "How windy is it at the beach?",
                None,
                Context(user_id=user_id),
                agent_id=agent_id,
            )
        finally:
            data.client = real
        speech = result.response.speech["plain"]["speech"]
        assert speech == h.ANSWER, speech
    elif kind == "baseline":
        await _consume(await client.chat.completions.create(**body))
    else:
        await _consume(
            await client.post(
                "/chat/completions",
                body=body,
                cast_to=ChatCompletion,
                stream=True,
                stream_cls=openai.AsyncStream[ChatCompletionChunk],
            )
        )


async def _measure(
    hass: HomeAssistant,
    server: RemoteServer,
    entry: Any,
    client: openai.AsyncOpenAI,
    agent_id: str,
    user_id: str,
    *,
    runs: int,
    warmup: int,
    delay: float,
) -> dict[str, list[float]]:
    """Wall and CPU milliseconds per kind; the kinds take turns in rotating order."""
    await server.configure(delay=delay)
    times: dict[str, list[float]] = {
        f"{kind}{unit}": [] for kind in KINDS for unit in ("", "_cpu")
    }
    await _run("agent", hass, entry, client, agent_id, user_id, {})
    for index in range(warmup + runs):
        body = await server.last_request()  # the agent's latest request
        shift = index % len(KINDS)
        for kind in KINDS[shift:] + KINDS[:shift]:
            start, cpu_start = time.perf_counter(), time.process_time()
            await _run(kind, hass, entry, client, agent_id, user_id, body)
            if index >= warmup:
                times[kind].append((time.perf_counter() - start) * 1000)
                times[f"{kind}_cpu"].append((time.process_time() - cpu_start) * 1000)
    return times


# Where the agent's own time goes: (label, module, attribute path). Missing names
# are skipped, so the breakdown survives refactoring of the integration.
PARTS = (
    (
        "HA: chat_log.async_provide_llm_data",
        "homeassistant.components.conversation.chat_log",
        "ChatLog.async_provide_llm_data",
    ),
    (
        "tool schemas to JSON schema",
        "custom_components.local_assistant.entity",
        "schema_to_openapi",
    ),
    (
        "memory: speaker key",
        "custom_components.local_assistant.memory.manager",
        "Memory.resolve_speaker",
    ),
    (
        "memory: session history",
        "custom_components.local_assistant.memory.manager",
        "Memory.history",
    ),
    (
        "memory: facts for the prompt",
        "custom_components.local_assistant.memory.manager",
        "Memory.prompt_facts",
    ),
    (
        "system prompt",
        "custom_components.local_assistant.conversation",
        "build_system_prompt",
    ),
    (
        "history to messages",
        "custom_components.local_assistant.conversation",
        "history_messages",
    ),
    (
        "think filter (feed + flush)",
        "custom_components.local_assistant.llm.think",
        "ThinkFilter.feed",
    ),
    (
        "think filter (feed + flush)",
        "custom_components.local_assistant.llm.think",
        "ThinkFilter.flush",
    ),
    (
        "memory: record the exchange",
        "custom_components.local_assistant.memory.manager",
        "Memory.record_exchange",
    ),
)


@contextlib.contextmanager
def _timed_parts() -> Iterator[dict[str, float]]:
    """Wrap PARTS with timers (seconds summed per label) and restore them after."""
    totals: dict[str, float] = {}
    restore: list[tuple[Any, str, Any]] = []
    for label, module_name, path in PARTS:
        owner: Any = importlib.import_module(module_name)
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent, None)
        original = getattr(owner, name, None) if owner is not None else None
        if original is None:
            continue
        totals.setdefault(label, 0.0)
        restore.append((owner, name, original))
        setattr(owner, name, _timer(original, label, totals))
    try:
        yield totals
    finally:
        for owner, name, original in reversed(restore):
            setattr(owner, name, original)


def _timer(function: Any, label: str, totals: dict[str, float]) -> Any:
    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return await function(*args, **kwargs)
            finally:
                totals[label] += time.thread_time() - start

        return timed_async

    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            totals[label] += time.thread_time() - start

    return timed


async def _breakdown(
    hass: HomeAssistant,
    server: RemoteServer,
    entry: Any,
    client: openai.AsyncOpenAI,
    agent_id: str,
    user_id: str,
    turns: int,
) -> None:
    """Per-turn CPU time (event loop thread) of the agent's parts, no delay."""
    await server.configure(delay=0.0)
    with _timed_parts() as totals:
        for _ in range(turns):
            await _run("agent", hass, entry, client, agent_id, user_id, {})
    print(f"\nwhere the agent's own time goes (CPU per turn, {turns} turns, no delay)")
    for label, seconds in totals.items():
        print(f"  {label:42s} {seconds / turns * 1000:8.3f} ms")
    print(
        "  the rest of 'agent vs floor' is HA's conversation plumbing (agent lookup, "
        "chat session and log, trace, state write) and the chat log's delta handling"
    )


def _judge(added: float, ratio: float) -> bool:
    return added <= TARGET_ADDED_MS and ratio <= TARGET_RATIO


def _report(label: str, times: dict[str, list[float]], *, judge: bool) -> list[bool]:
    stats = {kind: h.summary(times[kind]) for kind in KINDS}
    cpu = {kind: h.summary(times[f"{kind}_cpu"])["median"] for kind in KINDS}
    print(f"\n{label}  ({len(times['agent'])} runs of each, interleaved)")
    print(f"  {'':42s} {'median':>9s} {'p90':>9s} {'min':>9s} {'CPU med':>9s}")
    for kind in KINDS:
        s = stats[kind]
        print(
            f"  {LABELS[kind]:42s} {s['median']:8.2f}ms {s['p90']:8.2f}ms "
            f"{s['min']:8.2f}ms {cpu[kind]:8.2f}ms"
        )
    verdicts = []
    for other in ("baseline", "floor"):
        added = stats["agent"]["median"] - stats[other]["median"]
        ratio = stats["agent"]["median"] / stats[other]["median"]
        ok = _judge(added, ratio)
        verdicts.append(ok)
        print(
            f"  agent vs {other:8s}: added median {added:+.2f} ms "
            f"(p90 {stats['agent']['p90'] - stats[other]['p90']:+.2f} ms), ratio "
            f"{ratio:.3f}; CPU {cpu['agent'] - cpu[other]:+.2f} ms"
            + (f"  -> {h.verdict(ok)}" if judge else "")
        )
    before = stats["agent_create"]["median"] - stats["baseline"]["median"]
    print(
        f"  agent before the change vs baseline: added median {before:+.2f} ms, ratio "
        f"{stats['agent_create']['median'] / stats['baseline']['median']:.3f}; CPU "
        f"{cpu['agent_create'] - cpu['baseline']:+.2f} ms"
    )
    return verdicts


async def main(args: argparse.Namespace) -> None:
    """Set up HA and the agent, then time agent and baseline turn by turn."""
    print(f"latency: {h.machine()}")
    async with (
        server_process([h.MODEL], content=h.ANSWER, think=h.EMPTY_THINK) as server,
        h.home_assistant() as hass,
    ):
        entry, agent_id = await h.async_setup_agent(hass, server.base_url)
        user = await hass.auth.async_create_user("Anna")
        speaker = f"user:{user.id}"
        held = await h.async_fill_session(hass, entry, speaker)
        facts = await h.async_add_facts(entry, speaker)
        # No client.close() at the end: it would close HA's shared httpx client.
        client = openai.AsyncOpenAI(
            base_url=server.base_url,
            api_key="not-needed",
            http_client=get_async_client(hass),
            max_retries=0,
        )
        passes = (
            (
                f"reply streamed with {args.delay_ms:g} ms per event",
                args.delay_ms,
                True,
            ),
            ("reply with no delay (pure CPU cost, ratio not meaningful)", 0.0, False),
        )
        verdicts: list[bool] = []
        for index, (label, delay_ms, judge) in enumerate(passes):
            times = await _measure(
                hass,
                server,
                entry,
                client,
                agent_id,
                user.id,
                runs=args.runs,
                warmup=args.warmup,
                delay=delay_ms / 1000,
            )
            if index == 0:
                body = await server.last_request()
                chars = sum(len(m["content"]) for m in body["messages"])
                events = len(await _consume_stream(client, body))
                print(
                    f"setup: {facts} facts, session buffer {held} messages "
                    f"(cap {entry.runtime_data.memory.sessions.max_messages}), "
                    f"{len(h.HOME)} exposed entities; request: "
                    f"{len(body['messages'])} messages, {chars:,d} content chars, "
                    f"{len(body.get('tools', []))} tools; reply: {events} content events"
                )
            result = _report(label, times, judge=judge)
            if judge:
                verdicts = result
        await _breakdown(
            hass, server, entry, client, agent_id, user.id, max(20, args.runs // 4)
        )
    print(
        f"  target: added <= {TARGET_ADDED_MS:g} ms and ratio <= {TARGET_RATIO} "
        f"(median, {args.delay_ms:g} ms pass)"
    )
    print(
        f"\nRESULT latency: {h.verdict(verdicts[0])} against the openai client's "
        f"create() (the issue's baseline); {h.verdict(verdicts[1])} against the "
        "client.post floor"
    )


def cli() -> None:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--delay-ms", type=float, default=2.0)
    args = parser.parse_args()
    h.run(lambda: main(args))


if __name__ == "__main__":
    cli()
