"""Benchmark 2: time to the first spoken character, against the server's send time.

The fake server streams Qwen3-style: ``<think>``, 40 reasoning words, ``</think>``,
``\\n\\n`` and a short answer, one token per SSE event, 10 ms apart. The turn runs
like the Assist pipeline runs it: a chat session and a chat log with a delta
listener (what feeds streaming TTS), then ``conversation.async_converse``
through our agent. Measured: listener time of the first delta with visible text
minus the server's write time of that token (``events_sent_at``), and the same
for every later visible token. Baseline in the same run: the same request read
with the bare ``openai`` client (transport and SDK parsing only, no think
filtering, no HA).

    python -m benchmarks.first_token [--runs 60]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import Context
from homeassistant.helpers import chat_session
from homeassistant.helpers.httpx_client import get_async_client
import openai

from benchmarks import _harness as h
from tests.helpers import fake_openai as fake

TARGET_ADDED_MS = 2.0
# 40 reasoning words, streamed one token (event) each.
THINK = (
    "The user asks whether the wind at the beach is good for kitesurfing right "
    "now. That is live data, so I should call the tool first and then answer in "
    "one short spoken sentence without any markdown or bullet lists."
)
ANSWER = "It is blowing twenty two knots from the west, good for your nine metre kite."


def _visible_events(events: list[tuple[float, str]]) -> list[tuple[float, str]]:
    """The server's events after ``</think>`` that carry visible text."""
    out: list[tuple[float, str]] = []
    closed = False
    for sent, content in events:
        if closed and content.strip():
            out.append((sent, content))
        closed = closed or content == "</think>"
    return out


async def _agent_turn(
    hass: Any, server: fake.FakeOpenAIServer, agent_id: str, user_id: str
) -> tuple[list[float], bool]:
    """One pipeline-style turn; per visible token: listener time - send time (ms)."""
    received: list[tuple[float, str]] = []

    def listener(_chat_log: conversation.ChatLog, delta: dict[str, Any]) -> None:
        if content := delta.get("content"):
            received.append((time.perf_counter(), content))

    first_event = len(server.events_sent_at)
    with (
        chat_session.async_get_chat_session(hass, None) as session,
        conversation.async_get_chat_log(
            hass,
            session,
            conversation.ConversationInput(
                text="Can I kite now?",
                context=Context(user_id=user_id),
                conversation_id=session.conversation_id,
                device_id=None,
                satellite_id=None,
                language="en",
                agent_id=agent_id,
            ),
            chat_log_delta_listener=listener,
        ),
    ):
        result = await conversation.async_converse(
            hass,
            "Can I kite now?",
            session.conversation_id,
            Context(user_id=user_id),
            agent_id=agent_id,
        )
    assert result.response.speech["plain"]["speech"] == ANSWER
    sent = _visible_events(server.events_sent_at[first_event:])
    # No buffering beyond a partial tag: every visible token reaches the listener
    # as its own delta, the first one included.
    unbuffered = [c for _, c in received] == [c.lstrip() for _, c in sent[:1]] + [
        c for _, c in sent[1:]
    ]
    latencies = [
        (got - at) * 1000 for (got, _), (at, _) in zip(received, sent, strict=False)
    ]
    return latencies, unbuffered


async def _client_turn(
    server: fake.FakeOpenAIServer, client: openai.AsyncOpenAI, body: dict[str, Any]
) -> list[float]:
    """The same request with the bare client: receive time - send time (ms)."""
    first_event = len(server.events_sent_at)
    received: list[float] = []
    stream = await client.chat.completions.create(**body)
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            received.append(time.perf_counter())
    events = server.events_sent_at[first_event:]
    assert len(events) == len(received)
    # Same tokens as the agent's measurement: the visible ones after </think>.
    closed, out = False, []
    for got, (at, content) in zip(received, events, strict=True):
        if closed and content.strip():
            out.append((got - at) * 1000)
        closed = closed or content == "</think>"
    return out


async def main(args: argparse.Namespace) -> None:
    """Alternate pipeline-style agent turns and bare-client reads of the same request."""
    print(f"first_token: {h.machine()}")
    async with (
        fake.FakeOpenAIServer(models=[h.MODEL]) as server,
        h.home_assistant() as hass,
    ):
        entry, agent_id = await h.async_setup_agent(hass, server.base_url)
        user = await hass.auth.async_create_user("Anna")
        speaker = f"user:{user.id}"
        await h.async_fill_session(hass, entry, speaker)
        await h.async_add_facts(entry, speaker)
        client = openai.AsyncOpenAI(
            base_url=server.base_url,
            api_key="not-needed",
            http_client=get_async_client(hass),
            max_retries=0,
        )
        delay = args.token_ms / 1000
        server.responder = lambda _body: fake.text(ANSWER, think=THINK, delay=delay)
        think_tokens = len(THINK.split())
        assert think_tokens == 40, think_tokens
        first: dict[str, list[float]] = {"agent": [], "client": []}
        later: dict[str, list[float]] = {"agent": [], "client": []}
        unbuffered_turns = 0
        for index in range(args.warmup + args.runs):
            agent_lat, unbuffered = await _agent_turn(hass, server, agent_id, user.id)
            client_lat = await _client_turn(server, client, dict(server.last_request))
            if index < args.warmup:
                continue
            unbuffered_turns += unbuffered
            for kind, lat in (("agent", agent_lat), ("client", client_lat)):
                first[kind].append(lat[0])
                later[kind].extend(lat[1:])

    print(
        f"reply: <think> + {think_tokens} think tokens + </think> + \\n\\n + "
        f"{len(ANSWER.split())} answer tokens, "
        f"{args.token_ms:g} ms per token; {args.runs} turns each"
    )
    print(
        f"  {'time after the server sent the token':48s} {'median':>8s} {'p90':>8s} {'max':>8s}"
    )
    rows = (
        ("first visible token, agent -> chat log listener", first["agent"]),
        ("first visible token, bare openai client", first["client"]),
        ("every later visible token, agent", later["agent"]),
        ("every later visible token, bare openai client", later["client"]),
    )
    for label, values in rows:
        stats = h.summary(values)
        print(
            f"  {label:48s} {stats['median']:7.3f}ms {stats['p90']:7.3f}ms {stats['max']:7.3f}ms"
        )
    agent = h.summary(first["agent"])
    client_first = h.summary(first["client"])
    print(
        f"  added by HA + agent over the bare client (first token): median "
        f"{agent['median'] - client_first['median']:+.3f} ms"
    )
    print(
        f"  tokens delivered one delta each, no extra buffering: "
        f"{unbuffered_turns}/{args.runs} turns"
    )
    ok = agent["median"] <= TARGET_ADDED_MS and unbuffered_turns == args.runs
    print(
        f"  target: first visible character <= {TARGET_ADDED_MS} ms after the server "
        f"sent it (median), no buffering: {h.verdict(ok)}"
    )
    print(f"\nRESULT first_token: {h.verdict(ok)}")


def cli() -> None:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--token-ms", type=float, default=10.0)
    args = parser.parse_args()
    h.run(lambda: main(args))


if __name__ == "__main__":
    cli()
