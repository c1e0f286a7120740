"""Prove the fake OpenAI server against the real ``openai.AsyncOpenAI`` client.

How faults surface in openai 2.15 (it does not wrap errors raised while a
stream is being iterated):

- ``hang()`` + client timeout: ``openai.APITimeoutError`` from ``create()``;
  ``hang(after_events=n)`` stalls mid-stream: ``httpx.ReadTimeout`` while iterating.
- ``disconnect(n)`` streaming: ``httpx.RemoteProtocolError`` while iterating;
  non-streaming: ``openai.APIConnectionError`` from ``create()``.
- ``malformed([...])``: ``json.JSONDecodeError`` while iterating.
- ``stream_error(...)``: ``openai.APIError`` (the base class itself) while iterating.
- ``no_done(...)``: no error; iteration simply ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import itertools
import json
import os
from pathlib import Path
import subprocess
import sys
import time
from typing import Any

import aiohttp
import httpx
import openai
from openai.types.chat import ChatCompletionChunk
import pytest

from tests.helpers.fake_openai import (
    FakeOpenAIServer,
    Reply,
    disconnect,
    error,
    hang,
    malformed,
    no_done,
    reasoning,
    stream_error,
    text,
    tool_calls,
)

MODEL = "qwen3-4b"
MESSAGES: list[Any] = [{"role": "user", "content": "Turn on the kitchen light"}]
TOOL: Any = {
    "type": "function",
    "function": {
        "name": "HassTurnOn",
        "parameters": {"type": "object", "properties": {}},
    },
}


@pytest.fixture
async def server(socket_enabled: None) -> AsyncIterator[FakeOpenAIServer]:
    """A running fake server."""
    async with FakeOpenAIServer(models=[MODEL, "qwen3-1.7b"]) as fake:
        yield fake


@pytest.fixture
async def client(server: FakeOpenAIServer) -> AsyncIterator[openai.AsyncOpenAI]:
    """A real OpenAI client pointed at the fake, without retries."""
    async with openai.AsyncOpenAI(
        base_url=server.base_url, api_key="x", max_retries=0, timeout=5.0
    ) as real_client:
        yield real_client


async def _stream(
    client: openai.AsyncOpenAI, **kwargs: Any
) -> list[ChatCompletionChunk]:
    stream = await client.chat.completions.create(
        model=kwargs.pop("model", MODEL), messages=MESSAGES, stream=True, **kwargs
    )
    return [chunk async for chunk in stream]


async def _drain(
    stream: AsyncIterator[ChatCompletionChunk], into: list[ChatCompletionChunk]
) -> None:
    async for chunk in stream:
        into.append(chunk)


def _content(chunks: list[ChatCompletionChunk]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def _finish_reasons(chunks: list[ChatCompletionChunk]) -> list[str]:
    return [
        c.choices[0].finish_reason
        for c in chunks
        if c.choices and c.choices[0].finish_reason
    ]


def _accumulate_tool_calls(
    chunks: list[ChatCompletionChunk],
) -> dict[int, dict[str, str]]:
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        if not chunk.choices:
            continue
        for delta in chunk.choices[0].delta.tool_calls or []:
            entry = calls.setdefault(
                delta.index, {"id": "", "name": "", "arguments": ""}
            )
            if delta.id:
                entry["id"] = delta.id
            if delta.function and delta.function.name:
                entry["name"] += delta.function.name
            if delta.function and delta.function.arguments:
                entry["arguments"] += delta.function.arguments
    return calls


async def test_models_listed(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """GET /v1/models lists the configured models."""
    page = await client.models.list()
    assert [m.id for m in page.data] == [MODEL, "qwen3-1.7b"]
    assert page.data[0].owned_by == "fake"
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    assert server.port > 0


async def test_raw_sse_wire_format(server: FakeOpenAIServer) -> None:
    """The body is real SSE: content type, ``data:`` events and ``[DONE]``."""
    server.queue(text("Hello kitchen world"))
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            f"{server.base_url}/chat/completions",
            json={"model": MODEL, "messages": MESSAGES, "stream": True},
        ) as response,
    ):
        assert response.status == 200
        assert response.headers["Content-Type"] == "text/event-stream"
        assert response.headers["Transfer-Encoding"] == "chunked"
        raw = (await response.read()).decode()
    events = raw.split("\n\n")
    assert events[-1] == ""
    assert events[-2] == "data: [DONE]"
    payloads = [json.loads(e.removeprefix("data: ")) for e in events[:-2]]
    assert all(e.startswith("data: ") for e in events[:-1])
    first = payloads[0]
    assert first["object"] == "chat.completion.chunk"
    assert first["id"].startswith("chatcmpl-")
    assert first["model"] == MODEL
    assert isinstance(first["created"], int)
    assert first["choices"] == [
        {"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}
    ]
    assert [p["choices"][0]["delta"].get("content") for p in payloads[1:-1]] == [
        "Hello",
        " kitchen",
        " world",
    ]
    assert payloads[-1]["choices"][0] == {
        "index": 0,
        "delta": {},
        "finish_reason": "stop",
    }


async def test_stream_text_reassembles(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """Streamed words reassemble exactly; the first chunk carries the role."""
    answer = "The kitchen light is on.\nAnything else?"
    server.queue(text(answer))
    chunks = await _stream(client)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert _content(chunks) == answer
    assert len(chunks) > 5
    assert _finish_reasons(chunks) == ["stop"]


async def test_chunk_size_and_think(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """``think`` arrives as content; tags are own tokens unless chunk_size is set."""
    server.queue(text("Done.", think="User wants light"), text("abcdefg", chunk_size=3))
    chunks = await _stream(client)
    deltas = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
    assert _content(chunks) == "<think>User wants light</think>\n\nDone."
    assert deltas[0] == "<think>"
    assert "</think>" in deltas

    chunks = await _stream(client)
    assert [
        c.choices[0].delta.content for c in chunks if c.choices[0].delta.content
    ] == [
        "abc",
        "def",
        "g",
    ]


async def test_split_tool_calls_reassemble_by_index(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """llama.cpp style fragments rebuild two calls, also when interleaved."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("HassTurnOn", {"name": "kitchen light", "area": "kitchen"}),
        ("HassLightSet", {"name": "desk lamp", "brightness": 40}),
    ]
    server.queue(
        tool_calls(calls, split_arguments=True, content="Sure."),
        tool_calls(calls, split_arguments=True, interleave=True),
    )
    for _ in range(2):
        chunks = await _stream(client)
        rebuilt = _accumulate_tool_calls(chunks)
        assert [rebuilt[i]["name"] for i in (0, 1)] == ["HassTurnOn", "HassLightSet"]
        assert json.loads(rebuilt[0]["arguments"]) == calls[0][1]
        assert json.loads(rebuilt[1]["arguments"]) == calls[1][1]
        assert rebuilt[0]["id"] != rebuilt[1]["id"]
        assert _finish_reasons(chunks) == ["tool_calls"]
        fragments = [
            d
            for c in chunks
            for d in (c.choices[0].delta.tool_calls or [])
            if d.id is None
        ]
        assert len(fragments) > 4
        assert all(
            f.function and f.function.name is None and f.type is None for f in fragments
        )
    assert _content(chunks) == ""


async def test_interleaved_order(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """``interleave`` really alternates fragments of different calls."""
    server.queue(
        tool_calls(
            [("a", {"k": "v v v"}), ("b", {"k": "w w w"})],
            split_arguments=True,
            interleave=True,
        )
    )
    chunks = await _stream(client)
    order = [d.index for c in chunks for d in (c.choices[0].delta.tool_calls or [])]
    assert order[:4] == [0, 1, 0, 1]


async def test_swama_style_after_finish_without_index(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """Swama: complete calls, no ``index``, sent after the finish chunk."""
    server.queue(
        tool_calls(
            [("HassTurnOn", {"name": "a"}), ("HassTurnOff", {"name": "b"})],
            no_index=True,
            after_finish=True,
        )
    )
    chunks = await _stream(client)
    kinds = [
        "finish"
        if c.choices[0].finish_reason
        else "call"
        if c.choices[0].delta.tool_calls
        else "other"
        for c in chunks
    ]
    assert kinds == ["other", "finish", "call", "call"]
    assert chunks[1].choices[0].finish_reason == "tool_calls"
    deltas = [d for c in chunks for d in (c.choices[0].delta.tool_calls or [])]
    assert [d.index for d in deltas] == [None, None]
    assert [d.function.name for d in deltas if d.function] == [
        "HassTurnOn",
        "HassTurnOff",
    ]
    assert [json.loads(d.function.arguments or "") for d in deltas if d.function] == [
        {"name": "a"},
        {"name": "b"},
    ]


async def test_all_index_zero_and_raw_arguments(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """Badly numbered calls share index 0; str arguments are sent verbatim."""
    server.queue(tool_calls([("a", '{"broken": '), ("b", "{}")], all_index_zero=True))
    chunks = await _stream(client)
    deltas = [d for c in chunks for d in (c.choices[0].delta.tool_calls or [])]
    assert [d.index for d in deltas] == [0, 0]
    assert deltas[0].id != deltas[1].id
    assert [d.function.arguments for d in deltas if d.function] == ['{"broken": ', "{}"]


async def test_reasoning_content(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """llama.cpp ``reasoning_content`` deltas precede the content."""
    server.queue(reasoning("Check the lights first", "All on."))
    chunks = await _stream(client)
    extras = [getattr(c.choices[0].delta, "reasoning_content", None) for c in chunks]
    assert "".join(e for e in extras if e) == "Check the lights first"
    assert _content(chunks) == "All on."
    last_reasoning = max(i for i, e in enumerate(extras) if e)
    first_content = min(i for i, c in enumerate(chunks) if c.choices[0].delta.content)
    assert last_reasoning < first_content


async def test_usage_chunk_when_requested(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """``stream_options.include_usage`` adds an OpenAI-style usage chunk."""
    server.queue(text("one two three"))
    chunks = await _stream(client, stream_options={"include_usage": True})
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == 3


async def test_non_streaming(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """The same replies work without streaming."""
    server.queue(
        text("Hello", think="hmm"),
        tool_calls([("HassTurnOn", {"name": "x"})]),
        reasoning("why", "because"),
    )
    first = await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert first.object == "chat.completion"
    assert first.choices[0].message.content == "<think>hmm</think>\n\nHello"
    assert first.choices[0].finish_reason == "stop"
    assert first.usage is not None

    second = await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    message = second.choices[0].message
    assert second.choices[0].finish_reason == "tool_calls"
    assert message.content is None
    assert message.tool_calls is not None
    call = message.tool_calls[0]
    assert call.type == "function"
    assert call.function.name == "HassTurnOn"
    assert json.loads(call.function.arguments) == {"name": "x"}

    third = await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert third.choices[0].message.content == "because"
    assert getattr(third.choices[0].message, "reasoning_content", None) == "why"


async def test_default_and_custom_responders(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """Queue first, then the responder (sync or async); default answers OK."""
    assert _content(await _stream(client)) == "OK"

    server.responder = lambda body: text(f"echo {body['model']}")
    server.queue(text("queued"))
    assert _content(await _stream(client)) == "queued"
    assert _content(await _stream(client)) == f"echo {MODEL}"

    async def async_responder(body: dict[str, Any]) -> Reply:
        return text(str(len(body["messages"])))

    server.responder = async_responder
    assert _content(await _stream(client)) == "1"
    assert server.pending == 0


async def test_requests_recorded(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """Chat bodies are recorded in order, per model, with headers."""
    with pytest.raises(LookupError):
        _ = server.last_request
    await _stream(client, temperature=0.2, tools=[TOOL])
    await client.chat.completions.create(model="qwen3-1.7b", messages=MESSAGES)
    assert len(server.requests) == 2
    assert server.requests[0]["stream"] is True
    assert server.requests[0]["temperature"] == 0.2
    assert server.requests[0]["tools"][0]["function"]["name"] == "HassTurnOn"
    assert server.requests[0]["messages"] == MESSAGES
    assert server.last_request["model"] == "qwen3-1.7b"
    assert [r["model"] for r in server.chat_requests_for(MODEL)] == [MODEL]
    assert server.request_headers[0]["Authorization"] == "Bearer x"


async def test_wait_for_requests(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """Tests can wait for a request to arrive without sleeping."""
    server.queue(hang())
    with pytest.raises(TimeoutError):
        await server.wait_for_requests(1, timeout=0.05)
    pending = asyncio.ensure_future(
        client.chat.completions.create(model=MODEL, messages=MESSAGES)
    )
    bodies = await server.wait_for_requests(1, timeout=5)
    assert bodies[0]["model"] == MODEL
    await server.close()
    with pytest.raises(openai.APIConnectionError):
        await pending


async def test_events_sent_at_and_delay(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """Each content delta is timestamped; ``delay`` spaces the events."""
    server.queue(text("a b c", delay=0.05))
    start = time.perf_counter()
    chunks = await _stream(client)
    elapsed = time.perf_counter() - start
    assert _content(chunks) == "a b c"
    assert [t for _, t in server.events_sent_at] == ["a", " b", " c"]
    stamps = [s for s, _ in server.events_sent_at]
    assert stamps[0] >= start + 0.09  # role chunk and first token each wait 0.05
    assert all(b - a >= 0.04 for a, b in itertools.pairwise(stamps))
    assert elapsed >= 0.25


async def test_auth(server: FakeOpenAIServer) -> None:
    """A set api_key rejects wrong keys with an OpenAI-style 401."""
    server.api_key = "secret"
    async with openai.AsyncOpenAI(
        base_url=server.base_url, api_key="wrong", max_retries=0
    ) as bad:
        with pytest.raises(openai.AuthenticationError) as err:
            await _stream(bad)
        assert err.value.status_code == 401
        assert err.value.code == "invalid_api_key"
        with pytest.raises(openai.AuthenticationError):
            await bad.models.list()
    async with openai.AsyncOpenAI(
        base_url=server.base_url, api_key="secret", max_retries=0
    ) as ok:
        assert _content(await _stream(ok)) == "OK"


async def test_strict_models(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """An unknown model is a 404 when strict_models is set."""
    server.strict_models = True
    with pytest.raises(openai.NotFoundError) as err:
        await _stream(client, model="llama-70b")
    assert err.value.code == "model_not_found"
    assert _content(await _stream(client, model="qwen3-1.7b")) == "OK"


@pytest.mark.parametrize(
    ("status", "exc_type"),
    [
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (404, openai.NotFoundError),
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
        (503, openai.InternalServerError),
    ],
)
@pytest.mark.parametrize("stream", [True, False])
async def test_error_replies(
    server: FakeOpenAIServer,
    client: openai.AsyncOpenAI,
    status: int,
    exc_type: type[openai.APIStatusError],
    stream: bool,
) -> None:
    """``error()`` maps onto the client's status exceptions."""
    server.queue(error(status, "nope", code="some_code"))
    with pytest.raises(exc_type) as err:
        await client.chat.completions.create(
            model=MODEL, messages=MESSAGES, stream=stream
        )
    assert err.value.status_code == status
    assert err.value.code == "some_code"
    assert "nope" in err.value.message


@pytest.mark.parametrize("stream", [True, False])
async def test_hang_times_out_and_close_is_fast(
    server: FakeOpenAIServer, stream: bool
) -> None:
    """A hung request makes the client time out; closing releases it at once."""
    server.queue(hang())
    async with openai.AsyncOpenAI(
        base_url=server.base_url, api_key="x", max_retries=0, timeout=0.3
    ) as client:
        with pytest.raises(openai.APITimeoutError):
            await client.chat.completions.create(
                model=MODEL, messages=MESSAGES, stream=stream
            )
    start = time.perf_counter()
    await server.close()
    assert time.perf_counter() - start < 1.0


async def test_hang_mid_stream(server: FakeOpenAIServer) -> None:
    """``hang(after_events=n)`` stalls after some tokens: httpx.ReadTimeout."""
    server.queue(hang(after_events=2, content="partial answer here"))
    async with openai.AsyncOpenAI(
        base_url=server.base_url, api_key="x", max_retries=0, timeout=0.3
    ) as client:
        received: list[ChatCompletionChunk] = []
        stream = await client.chat.completions.create(
            model=MODEL, messages=MESSAGES, stream=True
        )
        with pytest.raises(httpx.ReadTimeout):
            await _drain(stream, received)
    assert _content(received) == "partial"


async def test_disconnect_streaming(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """A dropped connection mid-stream raises httpx.RemoteProtocolError."""
    server.queue(disconnect(3, "one two three four"))
    received: list[ChatCompletionChunk] = []
    stream = await client.chat.completions.create(
        model=MODEL, messages=MESSAGES, stream=True
    )
    with pytest.raises(httpx.RemoteProtocolError):
        await _drain(stream, received)
    assert _content(received) == "one two"


async def test_disconnect_non_streaming(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """Without streaming a dropped connection is an APIConnectionError."""
    server.queue(disconnect(0))
    with pytest.raises(openai.APIConnectionError):
        await client.chat.completions.create(model=MODEL, messages=MESSAGES)


async def test_malformed_line(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """Invalid JSON in a data line raises json.JSONDecodeError while iterating."""
    good = 'data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}'
    server.queue(malformed([good, "data: {not json", "data: [DONE]"]))
    received: list[ChatCompletionChunk] = []
    stream = await client.chat.completions.create(
        model=MODEL, messages=MESSAGES, stream=True
    )
    with pytest.raises(json.JSONDecodeError):
        await _drain(stream, received)
    assert _content(received) == "hi"


async def test_stream_error_event(
    server: FakeOpenAIServer, client: openai.AsyncOpenAI
) -> None:
    """A mid-stream error event raises openai.APIError with its message."""
    server.queue(stream_error("Working on", "model crashed"))
    received: list[ChatCompletionChunk] = []
    stream = await client.chat.completions.create(
        model=MODEL, messages=MESSAGES, stream=True
    )
    with pytest.raises(openai.APIError, match="model crashed") as err:
        await _drain(stream, received)
    assert type(err.value) is openai.APIError
    assert _content(received) == "Working on"


async def test_no_done(server: FakeOpenAIServer, client: openai.AsyncOpenAI) -> None:
    """Without ``[DONE]`` the stream just ends after the finish chunk."""
    server.queue(no_done("All done"))
    chunks = await _stream(client)
    assert _content(chunks) == "All done"
    assert _finish_reasons(chunks) == ["stop"]


def test_standalone_without_home_assistant() -> None:
    """The module works from a plain asyncio script and imports no HA code."""
    script = """
import asyncio, sys
import aiohttp
from tests.helpers.fake_openai import FakeOpenAIServer, text

async def main():
    async with FakeOpenAIServer() as server:
        server.queue(text("standalone"))
        async with aiohttp.ClientSession() as session:
            async with session.post(server.base_url + "/chat/completions",
                                    json={"model": "qwen3-4b", "messages": []}) as resp:
                body = await resp.json()
    assert body["choices"][0]["message"]["content"] == "standalone", body
    assert not [m for m in sys.modules if m.startswith("homeassistant")]
    print("ok")

asyncio.run(main())
"""
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
