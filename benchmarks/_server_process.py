"""The fake OpenAI-compatible server in a process of its own, like a real model server.

In the benchmark's own process the fake server would share the event loop with
Home Assistant: the time the agent spends on each streamed chunk would then
also delay the server's next chunk (the loop's timers wake up on whole
milliseconds after the agent's work), which a real server never does. So the
latency benchmarks run it here, on 127.0.0.1, with a small control endpoint
beside it to change the scripted reply and read what was received.

Child: ``python -m benchmarks._server_process CONFIG_JSON``; it prints one JSON
line with its URLs and runs until its stdin closes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
import contextlib
from dataclasses import dataclass
import json
from pathlib import Path
import subprocess
import sys
from typing import Any

from aiohttp import web
import httpx

from tests.helpers import fake_openai as fake

REPO = Path(__file__).resolve().parent.parent


@dataclass(slots=True)
class Reply:
    """What the server answers to every chat request."""

    content: str = "OK"
    think: str | None = None
    delay: float = 0.0
    chunk_size: int | None = None

    def build(self) -> fake.Reply:
        """The fake server's reply object."""
        return fake.text(
            self.content, think=self.think, delay=self.delay, chunk_size=self.chunk_size
        )


async def _child(config: dict[str, Any]) -> None:
    reply = Reply(**config.get("reply", {}))
    async with fake.FakeOpenAIServer(models=config["models"]) as server:
        server.responder = lambda _body: reply.build()

        async def configure(request: web.Request) -> web.Response:
            for key, value in (await request.json()).items():
                setattr(reply, key, value)
            return web.json_response({})

        async def last(_request: web.Request) -> web.Response:
            return web.json_response(server.requests[-1] if server.requests else None)

        async def count(_request: web.Request) -> web.Response:
            return web.json_response(len(server.requests))

        app = web.Application()
        app.router.add_post("/configure", configure)
        app.router.add_get("/last_request", last)
        app.router.add_get("/request_count", count)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        control_port = runner.addresses[0][1]
        print(
            json.dumps(
                {
                    "base_url": server.base_url,
                    "control": f"http://127.0.0.1:{control_port}",
                }
            ),
            flush=True,
        )
        # Run until the parent closes our stdin (or dies).
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        await runner.cleanup()


@contextlib.contextmanager
def answering_ok(models: list[str]) -> Iterator[str]:
    """The base URL of a server that answers every request "OK", never a tool call.

    A model that never acts: a run against it measures what Home Assistant's
    own reading of the sentences carries out.
    """
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmarks._server_process",
            json.dumps({"models": models}),
        ],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        yield str(json.loads(process.stdout.readline())["base_url"])
    finally:
        process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


class RemoteServer:
    """The parent's handle on a fake server running in a child process."""

    def __init__(self, base_url: str, control: httpx.AsyncClient) -> None:
        """Use server_process()."""
        self.base_url = base_url
        self._control = control

    async def configure(self, **reply: Any) -> None:
        """Change the scripted reply (fields of Reply)."""
        (await self._control.post("/configure", json=reply)).raise_for_status()

    async def last_request(self) -> dict[str, Any]:
        """The body of the latest chat request."""
        response = await self._control.get("/last_request")
        response.raise_for_status()
        body: dict[str, Any] = response.json()
        return body

    async def request_count(self) -> int:
        """How many chat requests arrived."""
        response = await self._control.get("/request_count")
        response.raise_for_status()
        return int(response.json())


@contextlib.asynccontextmanager
async def server_process(
    models: list[str], **reply: Any
) -> AsyncIterator[RemoteServer]:
    """Start the server in a child process; stop it (bounded) at the end."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "benchmarks._server_process",
        json.dumps({"models": models, "reply": reply}),
        cwd=REPO,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        line = await asyncio.wait_for(process.stdout.readline(), 60)
        info = json.loads(line)
        async with httpx.AsyncClient(base_url=info["control"], timeout=30) as control:
            yield RemoteServer(info["base_url"], control)
    finally:
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()


if __name__ == "__main__":
    asyncio.run(_child(json.loads(sys.argv[1])))
