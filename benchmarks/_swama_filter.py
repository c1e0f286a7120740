"""A proxy that makes llama-server see requests as Swama would pass them on.

    .venv/bin/python -m benchmarks._swama_filter --upstream http://127.0.0.1:28100/v1 --port 28200

Swama (the reference server) reads only ``model``, ``messages``, ``temperature``,
``top_p``, ``max_tokens``, ``stream`` and ``tools`` of a chat request: ``tool_choice``,
``response_format``, ``stop`` and ``chat_template_kwargs`` are ignored, each message
is reduced to ``role`` and ``content`` (an assistant message loses its ``tool_calls``, a
tool message its ``tool_call_id``), a message without ``content`` fails the request
with HTTP 400, and the temperature defaults to 0.6 (shared/real_llm.md). This proxy
rewrites every ``POST .../chat/completions`` that way and passes everything else, and
every answer (streamed or not), through unchanged. ``GET /filter_stats`` reports what
it dropped.

`swama_filter(upstream)` runs it in a child process for a benchmark and yields its
base URL.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterator
import contextlib
import json
import socket
import subprocess
import sys
import time
from typing import Any
import urllib.request

from aiohttp import ClientSession, ClientTimeout, web

KEPT_FIELDS = (
    "model",
    "messages",
    "temperature",
    "top_p",
    "max_tokens",
    "stream",
    "tools",
)
DEFAULT_TEMPERATURE = 0.6


def swama_request(body: dict[str, Any], dropped: Counter[str]) -> dict[str, Any] | None:
    """The request as Swama reads it; None when Swama would refuse it (HTTP 400)."""
    for key in body:
        if key not in KEPT_FIELDS:
            dropped[key] += 1
    kept = {key: body[key] for key in KEPT_FIELDS if key in body}
    kept.setdefault("temperature", DEFAULT_TEMPERATURE)
    messages: list[dict[str, Any]] = []
    for message in body.get("messages", ()):
        if "content" not in message:
            return None
        for key in message:
            if key not in ("role", "content"):
                dropped[f"message.{key}"] += 1
        messages.append({"role": message["role"], "content": message["content"]})
    kept["messages"] = messages
    return kept


def make_app(upstream: str) -> web.Application:
    """The proxy in front of ``upstream`` (a base URL ending in /v1)."""
    dropped: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    root = upstream.rstrip("/").removesuffix("/v1")

    async def proxy(request: web.Request) -> web.StreamResponse:
        data = await request.read()
        if request.method == "POST" and request.path.endswith("/chat/completions"):
            counts["chat_requests"] += 1
            body = swama_request(json.loads(data), dropped)
            if body is None:
                counts["refused_no_content"] += 1
                return web.json_response(
                    {
                        "error": {
                            "message": "missing content",
                            "type": "invalid_request",
                        }
                    },
                    status=400,
                )
            data = json.dumps(body).encode()
        session: ClientSession = request.app["session"]
        headers = {
            key: value
            for key, value in request.headers.items()
            if key.lower() in ("content-type", "authorization", "accept")
        }
        async with session.request(
            request.method, root + request.path_qs, data=data or None, headers=headers
        ) as upstream_response:
            response = web.StreamResponse(
                status=upstream_response.status,
                headers={
                    key: value
                    for key, value in upstream_response.headers.items()
                    if key.lower() in ("content-type", "cache-control")
                },
            )
            await response.prepare(request)
            async for chunk in upstream_response.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response

    async def stats(_request: web.Request) -> web.Response:
        return web.json_response({"dropped": dict(dropped), **counts})

    async def on_startup(app: web.Application) -> None:
        app["session"] = ClientSession(timeout=ClientTimeout(total=None))

    async def on_cleanup(app: web.Application) -> None:
        await app["session"].close()

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
    app.router.add_get("/filter_stats", stats)
    app.router.add_route("*", "/{tail:.*}", proxy)
    return app


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def swama_filter(upstream: str) -> Iterator[str]:
    """Run the proxy in a child process in front of ``upstream``; yield its base URL."""
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmarks._swama_filter",
            "--upstream",
            upstream,
            "--port",
            str(port),
        ]
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/filter_stats", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the Swama-like filter did not start") from None
                time.sleep(0.1)
        yield f"{url}/v1"
    finally:
        process.terminate()
        process.wait(timeout=10)


def filter_stats(base_url: str) -> dict[str, Any]:
    """What the filter at ``base_url`` (…/v1) dropped and refused so far."""
    root = base_url.rstrip("/").removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/filter_stats", timeout=5) as response:
        result: dict[str, Any] = json.loads(response.read())
        return result


def main() -> None:
    """Run the proxy until killed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--upstream", required=True, help="llama-server base URL (…/v1)"
    )
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    web.run_app(make_app(args.upstream), host="127.0.0.1", port=args.port, print=None)


if __name__ == "__main__":
    main()
