"""A fake OpenAI-compatible chat server that speaks real HTTP and real SSE.

It imitates Swama (Qwen3 on a Mac), llama.cpp and vLLM closely enough that the
real ``openai.AsyncOpenAI`` client can talk to it. It has no Home Assistant
imports so that plain asyncio scripts (benchmarks) can use it too.

Typical use::

    async with FakeOpenAIServer(models=["qwen3-4b"]) as server:
        server.queue(text("Hello there"), tool_calls([("HassTurnOn", {"name": "x"})]))
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x")

Real Swama sends complete tool calls without ``index``, possibly after the
finish chunk: ``tool_calls(calls, no_index=True, after_finish=True)``.

Like Swama and llama.cpp with ``--cache-ram 0 -np 1``, it keeps ONE cached
prompt: the last request's prompt and answer, as words of a Qwen-like
rendering (first system message, tools, the other messages). Each request
reuses it as far as it starts the same way; ``prompt_reads`` records
``(read, cached)`` per chat request. ``usage_format`` picks how the figures
are reported: ``"openai"`` (a usage chunk with
``prompt_tokens_details.cached_tokens``, only when ``stream_options``
asks), ``"llama.cpp"`` (``timings`` on the finish chunk, and the usage chunk
when asked) or ``"swama"`` (``usage`` on the finish chunk, no cached count).
``one_at_a_time=True`` serves one chat request at a time, queueing the
others, and ``read_seconds_per_token`` makes reading each prompt token that
is not cached take time (before the first event), as on a real server.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
import contextlib
from dataclasses import dataclass
import inspect
import json
import re
import time
from types import TracebackType
from typing import Any, Literal, Self

from aiohttp import web

__all__ = [
    "FakeOpenAIServer",
    "Reply",
    "Responder",
    "ToolCallSpec",
    "disconnect",
    "error",
    "hang",
    "malformed",
    "no_done",
    "reasoning",
    "stream_error",
    "text",
    "tool_calls",
]

type ReplyKind = Literal[
    "text",
    "tool_calls",
    "reasoning",
    "error",
    "hang",
    "disconnect",
    "no_done",
    "malformed",
    "stream_error",
]
type Responder = Callable[[dict[str, Any]], Reply | Awaitable[Reply]]
type UsageFormat = Literal["openai", "llama.cpp", "swama"]

_WORD_RE = re.compile(r"\s*\S+|\s+")
_JSON_TOKEN_RE = re.compile(r"\w+|\s+|[^\w\s]+")


@dataclass(frozen=True, slots=True)
class ToolCallSpec:
    """One scripted tool call; ``arguments`` is the exact string sent."""

    name: str
    arguments: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """A scripted answer to one chat request; build it with the module functions."""

    kind: ReplyKind
    content: str = ""
    think: str | None = None
    reasoning_content: str = ""
    calls: tuple[ToolCallSpec, ...] = ()
    split_arguments: bool = False
    all_index_zero: bool = False
    no_index: bool = False
    after_finish: bool = False
    interleave: bool = False
    delay: float = 0.0
    chunk_size: int | None = None
    status: int = 200
    message: str = ""
    code: str | None = None
    after_events: int = 0
    lines: tuple[str, ...] = ()
    # The finish_reason of a text answer ("length": cut at max_tokens).
    finish: str = "stop"


# --------------------------------------------------------------------------
# Reply builders
# --------------------------------------------------------------------------


def text(
    content: str,
    *,
    delay: float = 0.0,
    think: str | None = None,
    chunk_size: int | None = None,
    status: int = 200,
    finish: str = "stop",
) -> Reply:
    """Answer with plain text, streamed roughly one word per event."""
    return Reply(
        kind="text",
        content=content,
        delay=delay,
        think=think,
        chunk_size=chunk_size,
        status=status,
        finish=finish,
    )


def tool_calls(
    calls: Sequence[tuple[str, dict[str, Any] | str]],
    *,
    split_arguments: bool = False,
    all_index_zero: bool = False,
    no_index: bool = False,
    after_finish: bool = False,
    interleave: bool = False,
    content: str = "",
    delay: float = 0.0,
    think: str | None = None,
    chunk_size: int | None = None,
    status: int = 200,
) -> Reply:
    """Answer with tool calls; dict arguments are JSON-dumped, str sent verbatim.

    ``split_arguments``: llama.cpp/OpenAI style fragments (header with id and
    name, then argument pieces); otherwise Swama style, one delta per call.
    ``interleave`` alternates the fragments of several calls (needs split).
    """
    specs = tuple(
        ToolCallSpec(name, args if isinstance(args, str) else json.dumps(args))
        for name, args in calls
    )
    return Reply(
        kind="tool_calls",
        calls=specs,
        split_arguments=split_arguments,
        all_index_zero=all_index_zero,
        no_index=no_index,
        after_finish=after_finish,
        interleave=interleave,
        content=content,
        delay=delay,
        think=think,
        chunk_size=chunk_size,
        status=status,
    )


def reasoning(
    reasoning_content: str,
    content: str,
    *,
    delay: float = 0.0,
    think: str | None = None,
    chunk_size: int | None = None,
    status: int = 200,
) -> Reply:
    """Answer llama.cpp style: ``delta.reasoning_content`` pieces, then content."""
    return Reply(
        kind="reasoning",
        reasoning_content=reasoning_content,
        content=content,
        delay=delay,
        think=think,
        chunk_size=chunk_size,
        status=status,
    )


def error(
    status: int, message: str = "Fake server error", code: str | None = None
) -> Reply:
    """Answer with an OpenAI-style JSON error body and this HTTP status."""
    return Reply(kind="error", status=status, message=message, code=code)


def hang(after_events: int = 0, content: str = "") -> Reply:
    """Never answer (released when the server closes).

    With ``after_events`` > 0 the stream sends that many events of
    ``text(content)`` first and then stalls.
    """
    return Reply(kind="hang", after_events=after_events, content=content)


def disconnect(
    after_events: int,
    content: str = "This answer is cut off before it ends",
    *,
    delay: float = 0.0,
    chunk_size: int | None = None,
) -> Reply:
    """Stream ``after_events`` events (role chunk included), then drop TCP."""
    return Reply(
        kind="disconnect",
        after_events=after_events,
        content=content,
        delay=delay,
        chunk_size=chunk_size,
    )


def no_done(
    content: str,
    *,
    delay: float = 0.0,
    think: str | None = None,
    chunk_size: int | None = None,
) -> Reply:
    """Stream text and the finish chunk, then end the body without ``[DONE]``."""
    return Reply(
        kind="no_done", content=content, delay=delay, think=think, chunk_size=chunk_size
    )


def malformed(lines: Iterable[str], *, delay: float = 0.0) -> Reply:
    """Stream raw SSE text verbatim, then end the body.

    Each entry gets ``\\n\\n`` appended unless it already ends with a newline.
    """
    return Reply(kind="malformed", lines=tuple(lines), delay=delay)


def stream_error(
    after_content: str,
    message: str = "Fake mid-stream failure",
    *,
    delay: float = 0.0,
    chunk_size: int | None = None,
) -> Reply:
    """Stream some text, then a llama.cpp ``data: {"error": ...}`` event, then end."""
    return Reply(
        kind="stream_error",
        content=after_content,
        message=message,
        delay=delay,
        chunk_size=chunk_size,
    )


def _default_responder(_body: dict[str, Any]) -> Reply:
    return text("OK")


# --------------------------------------------------------------------------
# Splitting helpers
# --------------------------------------------------------------------------


def _split(
    value: str, chunk_size: int | None, pattern: re.Pattern[str] = _WORD_RE
) -> list[str]:
    if not value:
        return []
    if chunk_size is not None:
        if chunk_size < 1:
            raise ValueError("chunk_size must be >= 1")
        return [value[i : i + chunk_size] for i in range(0, len(value), chunk_size)]
    return pattern.findall(value)


def _full_content(reply: Reply) -> str:
    if reply.think is None:
        return reply.content
    return f"<think>{reply.think}</think>\n\n{reply.content}"


def _content_pieces(reply: Reply) -> list[str]:
    """Content deltas; by default the think tags are tokens of their own."""
    if reply.chunk_size is not None or reply.think is None:
        return _split(_full_content(reply), reply.chunk_size)
    return [
        "<think>",
        *_split(reply.think, None),
        "</think>",
        "\n\n",
        *_split(reply.content, None),
    ]


def _error_type(status: int) -> str:
    if status == 429:
        return "rate_limit_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


def _error_body(status: int, message: str, code: str | None) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "type": _error_type(status),
            "param": None,
            "code": code,
        }
    }


def invalid_conversation(body: dict[str, Any]) -> str | None:
    """Why llama.cpp would refuse these messages with HTTP 400 (None: it accepts them).

    A conversation may not end in an assistant message that calls tools: llama.cpp
    then has no tool result to continue from ("Cannot continue an assistant message
    that contains tool calls"), and OpenAI-style servers refuse it too.
    """
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return None
    last = messages[-1]
    if (
        isinstance(last, dict)
        and last.get("role") == "assistant"
        and last.get("tool_calls")
    ):
        return "Cannot continue an assistant message that contains tool calls"
    return None


def prompt_words(body: dict[str, Any]) -> list[str]:
    """The request as a Qwen-like template renders it, cut into words ("tokens").

    The first system message comes first, then the tools, then every other
    message, then the assistant's turn; a change anywhere changes the words
    from there on.
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    parts = ["<|im_start|>system"]
    if messages and messages[0].get("role") == "system":
        parts.append(str(messages[0].get("content") or ""))
        messages = messages[1:]
    if tools := body.get("tools"):
        parts.append("# Tools " + json.dumps(tools, sort_keys=True))
    parts.append("<|im_end|>")
    for message in messages:
        parts.append(f"<|im_start|>{message.get('role')}")
        parts.append(str(message.get("content") or ""))
        if calls := message.get("tool_calls"):
            parts.append(json.dumps(calls, sort_keys=True))
        parts.append("<|im_end|>")
    parts.append("<|im_start|>assistant")
    return "\n".join(parts).split()


def _common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    count = 0
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        count += 1
    return count


# --------------------------------------------------------------------------
# One response being produced
# --------------------------------------------------------------------------


@dataclass(slots=True)
class _Event:
    """One SSE event: the raw bytes to write and the content text it carries."""

    raw: str
    content: str | None = None


class _Exchange:
    """Builds the chunks for one chat request."""

    def __init__(
        self,
        body: dict[str, Any],
        reply: Reply,
        seq: int,
        default_model: str,
        *,
        prompt: tuple[int, int] = (0, 0),
        usage_format: UsageFormat = "openai",
    ) -> None:
        self.body = body
        self.reply = reply
        # Prompt words read now, and taken from the cache.
        self.read, self.cached = prompt
        self.usage_format = usage_format
        model = body.get("model")
        self.model = model if isinstance(model, str) else default_model
        self.completion_id = f"chatcmpl-fake{seq}"
        self.call_id_prefix = f"call_fake{seq}_"
        self.created = int(time.time())
        options = body.get("stream_options")
        self.include_usage = isinstance(options, dict) and bool(
            options.get("include_usage")
        )
        self.completion_tokens = 0

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> _Event:
        payload = {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }
        return _Event(f"data: {json.dumps(payload)}\n\n", delta.get("content"))

    def _usage(self) -> dict[str, Any]:
        prompt = self.read + self.cached
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": self.completion_tokens,
            "total_tokens": prompt + self.completion_tokens,
        }
        if self.usage_format == "swama":
            usage["response_token/s"] = 42.0
            usage["total_duration"] = 0.5
        else:
            usage["prompt_tokens_details"] = {"cached_tokens": self.cached}
        return usage

    def _timings(self) -> dict[str, Any]:
        """llama.cpp's figures of one completion."""
        return {
            "cache_n": self.cached,
            "prompt_n": self.read,
            "prompt_ms": 2.0 * self.read,
            "prompt_per_token_ms": 2.0,
            "prompt_per_second": 500.0,
            "predicted_n": self.completion_tokens,
            "predicted_ms": 20.0 * self.completion_tokens,
            "predicted_per_token_ms": 20.0,
            "predicted_per_second": 50.0,
        }

    def _finish(self, reason: str) -> _Event:
        """The finish chunk, with the figures llama.cpp and Swama put on it."""
        event = self._chunk({}, reason)
        if self.usage_format == "openai":
            return event
        payload = json.loads(event.raw.removeprefix("data: "))
        if self.usage_format == "llama.cpp":
            payload["timings"] = self._timings()
        else:
            payload["usage"] = self._usage()
        return _Event(f"data: {json.dumps(payload)}\n\n")

    def _content_events(self) -> list[_Event]:
        pieces = _content_pieces(self.reply)
        self.completion_tokens += len(pieces)
        return [self._chunk({"content": piece}) for piece in pieces]

    def _tool_events(self) -> list[_Event]:
        reply = self.reply
        per_call: list[list[dict[str, Any]]] = []
        for i, call in enumerate(reply.calls):
            index = 0 if reply.all_index_zero else i
            header: dict[str, Any] = {
                "index": index,
                "id": f"{self.call_id_prefix}{i}",
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            if not reply.split_arguments:
                header["function"]["arguments"] = call.arguments
                fragments: list[dict[str, Any]] = [header]
            else:
                fragments = [header]
                for piece in _split(call.arguments, reply.chunk_size, _JSON_TOKEN_RE):
                    fragments.append({"index": index, "function": {"arguments": piece}})
            if reply.no_index:
                for fragment in fragments:
                    del fragment["index"]
            self.completion_tokens += len(fragments)
            per_call.append(fragments)

        ordered: list[dict[str, Any]] = []
        if reply.interleave:
            ordered.extend(fragments[0] for fragments in per_call)
            rests = [fragments[1:] for fragments in per_call]
            for step in range(max((len(rest) for rest in rests), default=0)):
                ordered.extend(rest[step] for rest in rests if step < len(rest))
        else:
            for fragments in per_call:
                ordered.extend(fragments)
        return [self._chunk({"tool_calls": [fragment]}) for fragment in ordered]

    def stream_events(self) -> list[_Event]:
        """All events of the streamed answer, in order."""
        reply = self.reply
        if reply.kind == "malformed":
            return [
                _Event(line if line.endswith("\n") else f"{line}\n\n")
                for line in reply.lines
            ]

        events = [self._chunk({"role": "assistant"})]
        if reply.kind == "reasoning":
            pieces = _split(reply.reasoning_content, reply.chunk_size)
            self.completion_tokens += len(pieces)
            events.extend(self._chunk({"reasoning_content": piece}) for piece in pieces)
        events.extend(self._content_events())

        if reply.kind in ("disconnect", "hang"):
            return events
        if reply.kind == "stream_error":
            payload: dict[str, Any] = {
                "error": {"message": reply.message, "type": "server_error"}
            }
            events.append(_Event(f"data: {json.dumps(payload)}\n\n"))
            return events

        if reply.kind == "tool_calls":
            calls = self._tool_events()
            if reply.after_finish:
                events.append(self._finish("tool_calls"))
                events.extend(calls)
            else:
                events.extend(calls)
                events.append(self._finish("tool_calls"))
        else:
            events.append(self._finish(reply.finish))

        if self.include_usage and self.usage_format != "swama":
            usage_chunk: dict[str, Any] = {
                "id": self.completion_id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model,
                "choices": [],
                "usage": self._usage(),
            }
            if self.usage_format == "llama.cpp":
                usage_chunk["timings"] = self._timings()
            events.append(_Event(f"data: {json.dumps(usage_chunk)}\n\n"))
        if reply.kind != "no_done":
            events.append(_Event("data: [DONE]\n\n"))
        return events

    def completion(self) -> dict[str, Any]:
        """The non-streaming ``chat.completion`` object."""
        reply = self.reply
        content = _full_content(reply)
        self.completion_tokens = len(_content_pieces(reply))
        message: dict[str, Any] = {"role": "assistant", "content": content}
        finish_reason = "stop"
        if reply.kind == "reasoning":
            message["reasoning_content"] = reply.reasoning_content
            self.completion_tokens += len(
                _split(reply.reasoning_content, reply.chunk_size)
            )
        if reply.kind == "tool_calls":
            finish_reason = "tool_calls"
            message["content"] = content or None
            message["tool_calls"] = [
                {
                    "id": f"{self.call_id_prefix}{i}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for i, call in enumerate(reply.calls)
            ]
            self.completion_tokens += len(reply.calls)
        completion: dict[str, Any] = {
            "id": self.completion_id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish_reason}
            ],
            "usage": self._usage(),
        }
        if self.usage_format == "llama.cpp":
            completion["timings"] = self._timings()
        return completion


# --------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------


class FakeOpenAIServer:
    """Fake OpenAI-compatible server on 127.0.0.1 (random port by default).

    Every chat body is recorded, also those then rejected (401/404); rejected
    ones consume no reply. The openai client retries 408/409/429/5xx and
    connection errors by default, and each retry consumes a reply: give test
    clients ``max_retries=0`` unless retries are what is tested. Tool-call ids
    are ``call_fake{n}_{i}`` (n counts chat requests from 1, i the call).
    """

    def __init__(
        self,
        models: Sequence[str] = ("qwen3-4b",),
        *,
        api_key: str | None = None,
        strict_models: bool = False,
        host: str = "127.0.0.1",
        port: int = 0,
        usage_format: UsageFormat = "openai",
        one_at_a_time: bool = False,
        read_seconds_per_token: float = 0.0,
    ) -> None:
        """Configure the server; nothing listens until ``start()``."""
        self.models: list[str] = list(models)
        self.api_key = api_key
        self.strict_models = strict_models
        # An HTTP status /v1/models answers with instead of the list (None: the list).
        self.models_status: int | None = None
        self.host = host
        self.port = port
        self.usage_format: UsageFormat = usage_format
        self.one_at_a_time = one_at_a_time
        self.read_seconds_per_token = read_seconds_per_token
        # The one cached prompt (words, see prompt_words) and, per chat
        # request, (words read, words taken from the cache).
        self.cached_words: list[str] = []
        self.prompt_reads: list[tuple[int, int]] = []
        # When each chat request began and ended being served (perf_counter).
        self.served: list[tuple[float, float]] = []
        self._serving = asyncio.Lock()
        self.responder: Responder = _default_responder
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self.events_sent_at: list[tuple[float, str]] = []
        self._replies: deque[Reply] = deque()
        self._runner: web.AppRunner | None = None
        self._closing = asyncio.Event()
        self._arrived = asyncio.Condition()
        self._seq = 0

    # -- scripting and inspection ------------------------------------------

    def queue(self, *replies: Reply) -> None:
        """Append replies; each chat request consumes the oldest one."""
        self._replies.extend(replies)

    @property
    def pending(self) -> int:
        """Number of queued replies not consumed yet."""
        return len(self._replies)

    @property
    def last_request(self) -> dict[str, Any]:
        """Body of the most recent chat request."""
        if not self.requests:
            raise LookupError("the fake server has received no chat request")
        return self.requests[-1]

    def chat_requests_for(self, model: str) -> list[dict[str, Any]]:
        """Bodies of the chat requests that asked for ``model``."""
        return [body for body in self.requests if body.get("model") == model]

    async def wait_for_requests(
        self,
        n: int = 1,
        timeout: float = 5.0,
    ) -> list[dict[str, Any]]:
        """Wait until at least ``n`` chat requests arrived; raise TimeoutError otherwise."""
        async with asyncio.timeout(timeout), self._arrived:
            await self._arrived.wait_for(lambda: len(self.requests) >= n)
        return self.requests[:n]

    @property
    def base_url(self) -> str:
        """The ``base_url`` to give the OpenAI client (``http://127.0.0.1:PORT/v1``)."""
        return f"http://{self.host}:{self.port}/v1"

    # -- lifecycle ---------------------------------------------------------

    async def start(self) -> None:
        """Start listening; ``port`` is filled in when it was 0."""
        app = web.Application()
        app.router.add_get("/v1/models", self._handle_models)
        app.router.add_post("/v1/chat/completions", self._handle_chat)
        self._closing = asyncio.Event()
        self._arrived = asyncio.Condition()
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        await site.start()
        self._runner = runner
        self.port = int(runner.addresses[0][1])

    async def close(self) -> None:
        """Release hung requests and stop the server."""
        self._closing.set()
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    async def __aenter__(self) -> Self:
        """Start the server."""
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the server."""
        await self.close()

    # -- handlers ----------------------------------------------------------

    def _unauthorized(self, request: web.Request) -> web.Response | None:
        if self.api_key is None:
            return None
        if request.headers.get("Authorization") == f"Bearer {self.api_key}":
            return None
        body = {
            "error": {
                "message": "Incorrect API key provided.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        }
        return web.json_response(body, status=401)

    async def _handle_models(self, request: web.Request) -> web.Response:
        if (denied := self._unauthorized(request)) is not None:
            return denied
        if self.models_status is not None:
            error = {"message": "models failed", "type": "server_error"}
            return web.json_response({"error": error}, status=self.models_status)
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "fake"}
            for m in self.models
        ]
        return web.json_response({"object": "list", "data": data})

    async def _handle_chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return web.json_response(
                _error_body(400, "Request body is not a JSON object", None), status=400
            )

        self.requests.append(body)
        self.request_headers.append(dict(request.headers))
        self._seq += 1
        async with self._arrived:
            self._arrived.notify_all()

        if (denied := self._unauthorized(request)) is not None:
            return denied
        if (invalid := invalid_conversation(body)) is not None:
            return web.json_response(_error_body(400, invalid, None), status=400)
        model = body.get("model")
        if self.strict_models and model not in self.models:
            return web.json_response(
                _error_body(
                    404, f"The model `{model}` does not exist.", "model_not_found"
                ),
                status=404,
            )

        if self._replies:
            reply = self._replies.popleft()
        else:
            result = self.responder(body)
            reply = await result if inspect.isawaitable(result) else result

        if reply.kind == "error":
            return web.json_response(
                _error_body(reply.status, reply.message, reply.code),
                status=reply.status,
            )
        seq = self._seq
        if not self.one_at_a_time:
            return await self._serve(request, body, reply, seq)
        async with self._serving:
            return await self._serve(request, body, reply, seq)

    async def _serve(
        self, request: web.Request, body: dict[str, Any], reply: Reply, seq: int
    ) -> web.StreamResponse:
        """Read the prompt (its cached part is free), then answer."""
        began = time.perf_counter()
        words = prompt_words(body)
        # Like Swama and llama.cpp, at least the last word is always read.
        cached = min(_common_prefix(self.cached_words, words), len(words) - 1)
        read = len(words) - cached
        self.prompt_reads.append((read, cached))
        # Read whatever happens next: a server keeps what it read.
        self.cached_words = words
        if self.read_seconds_per_token and not await self._pause(
            read * self.read_seconds_per_token
        ):
            self._drop(request)
            return web.Response(status=503)
        exchange = _Exchange(
            body,
            reply,
            seq,
            self.models[0] if self.models else "",
            prompt=(read, cached),
            usage_format=self.usage_format,
        )
        try:
            if body.get("stream"):
                return await self._stream(request, exchange)
            return await self._respond(request, exchange)
        finally:
            self.cached_words = [*words, *_full_content(reply).split()]
            self.served.append((began, time.perf_counter()))

    async def _pause(self, seconds: float) -> bool:
        """Sleep; return False at once if the server is closing."""
        if self._closing.is_set():
            return False
        if seconds <= 0:
            return True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._closing.wait(), seconds)
        return not self._closing.is_set()

    @staticmethod
    def _drop(request: web.Request) -> None:
        if request.transport is not None:
            request.transport.close()

    async def _stream(
        self, request: web.Request, exchange: _Exchange
    ) -> web.StreamResponse:
        reply = exchange.reply
        if reply.kind == "hang" and reply.after_events == 0:
            await self._closing.wait()
            self._drop(request)
            return web.Response(status=503)

        response = web.StreamResponse(
            status=reply.status,
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
        )
        await response.prepare(request)
        events = exchange.stream_events()
        if reply.kind in ("disconnect", "hang"):
            events = events[: reply.after_events]
        try:
            for event in events:
                if not await self._pause(reply.delay):
                    self._drop(request)
                    return response
                await response.write(event.raw.encode())
                if event.content:
                    self.events_sent_at.append((time.perf_counter(), event.content))
        except ConnectionError:
            return response
        if reply.kind == "disconnect":
            self._drop(request)
        elif reply.kind == "hang":
            await self._closing.wait()
            self._drop(request)
        return response

    async def _respond(
        self, request: web.Request, exchange: _Exchange
    ) -> web.StreamResponse:
        reply = exchange.reply
        if reply.kind in ("hang", "disconnect"):
            if reply.kind == "hang":
                await self._closing.wait()
            self._drop(request)
            return web.Response(status=503)
        if reply.kind == "malformed":
            return web.Response(
                status=reply.status,
                text="".join(reply.lines),
                content_type="application/json",
            )
        if reply.kind == "stream_error":
            return web.json_response(_error_body(500, reply.message, None), status=500)
        completion = exchange.completion()
        if not await self._pause(reply.delay * max(exchange.completion_tokens, 1)):
            self._drop(request)
            return web.Response(status=503)
        return web.json_response(completion, status=reply.status)
