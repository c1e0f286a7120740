"""A device command on the real local model: our agent versus a direct openai call.

    .venv/bin/python benchmarks/real_model.py [--runs 5] [--base-url URL]

Without --base-url it starts llama-server with `scripts/local-model start` on a free
port (run `scripts/local-model setup` once first) and stops it at the end.

Through our agent: a real Home Assistant (the test harness's instance, in a temp
config dir) with one template light exposed to Assist; the turn goes through
`conversation.async_converse` with a chat log delta listener, like the Assist
pipeline, which feeds TTS from it. Times are from the call to
  - the first visible character reaching the delta listener (first spoken token),
  - the result (full answer).
Directly: the exact requests our agent sent in that turn (recorded on its client:
the tool-call completion, then the one after the tool result), replayed in order
with a fresh `openai.AsyncOpenAI` streaming from the same server; times are from the
first request to the first content token of the last one, and to its end.
The difference is what the agent adds: HA, tool execution, stream transform.

Both sides run alternately against the same server, whose prompt cache then holds
the shared prefix; the first (cold) agent turn is reported on its own.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator, Callable
import contextlib
import copy
from dataclasses import dataclass
import os
from pathlib import Path
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks._real_home import local_model, started_server  # noqa: E402

MODEL_ALIAS = "qwen2.5-coder-0.5b-instruct"
COMMAND = "Turn on the kitchen light."
AGENT_ID = "conversation.local_assistant"


@dataclass
class Timing:
    """One turn: seconds to the first spoken token and to the full answer."""

    first: float
    full: float
    answer: str
    tool_calls: int
    server: float = 0.0  # llama-server's own prompt + generation time (its `timings`)

    @property
    def outside(self) -> float:
        """Everything but the model's compute: HTTP, HA, tools, stream handling."""
        return self.full - self.server


def _server_rss_mb(port: int | None) -> float | None:
    if port is None:
        return None
    run_dir = Path(local_model("path")) / "run"
    pid = (run_dir / f"server-{port}.pid").read_text().strip()
    rss = subprocess.run(
        ["ps", "-p", pid, "-o", "rss="], capture_output=True, text=True, check=True
    ).stdout
    return int(rss) / 1024


@contextlib.asynccontextmanager
async def real_home_assistant(
    base_url: str,
    *,
    options: dict[str, Any] | None = None,
    subentries: tuple[dict[str, Any], ...] = (),
    agent: dict[str, Any] | None = None,
) -> AsyncIterator[Any]:
    """A real HA with an exposed template light and our agent on the server.

    ``options`` are added to the entry's (extraction off, timeout 120 s),
    ``subentries`` to its conversation agent, ``agent`` to the agent's data. It imports the integration when
    called, so prompt_cache.py can run it on another checkout of the code.
    """
    # Before HA puts its config dir first on sys.path (see tests/conftest.py).
    from homeassistant import loader
    from homeassistant.components.homeassistant.exposed_entities import (
        async_expose_entity,
    )
    from homeassistant.const import (
        CONF_API_KEY,
        CONF_LLM_HASS_API,
        CONF_MODEL,
        CONF_PROMPT,
    )
    from homeassistant.helpers import llm
    from homeassistant.setup import async_setup_component
    from pytest_homeassistant_custom_component.common import (
        MockConfigEntry,
        async_test_home_assistant,
    )

    import custom_components.local_assistant  # noqa: F401
    from custom_components.local_assistant.const import (
        CONF_BASE_URL,
        CONF_EXTRACTION,
        CONF_MAX_TOKENS,
        CONF_TEMPERATURE,
        CONF_TIMEOUT,
        CONF_TOOL_BIAS,
        DOMAIN,
        EXTRACTION_OFF,
        SUBENTRY_CONVERSATION,
    )

    with tempfile.TemporaryDirectory() as config_dir:
        async with async_test_home_assistant(config_dir=config_dir) as hass:
            hass.data.pop(loader.DATA_CUSTOM_COMPONENTS)  # enable custom integrations
            assert await async_setup_component(hass, "homeassistant", {})
            assert await async_setup_component(
                hass, "input_boolean", {"input_boolean": {"kitchen_power": {}}}
            )
            target = {"entity_id": "input_boolean.kitchen_power"}
            light = {
                "name": "Kitchen",
                "state": "{{ is_state('input_boolean.kitchen_power', 'on') }}",
                "turn_on": {"action": "input_boolean.turn_on", "target": target},
                "turn_off": {"action": "input_boolean.turn_off", "target": target},
            }
            assert await async_setup_component(
                hass, "template", {"template": [{"light": [light]}]}
            )
            await hass.async_block_till_done()
            async_expose_entity(hass, "conversation", "light.kitchen", True)
            async_expose_entity(
                hass, "conversation", "input_boolean.kitchen_power", False
            )
            entry = MockConfigEntry(
                domain=DOMAIN,
                title="Local Assistant",
                data={CONF_BASE_URL: base_url, CONF_API_KEY: ""},
                options={
                    CONF_EXTRACTION: EXTRACTION_OFF,
                    CONF_TIMEOUT: 120,
                    **(options or {}),
                },
                subentries_data=[
                    {
                        "subentry_type": SUBENTRY_CONVERSATION,
                        "data": {
                            CONF_MODEL: MODEL_ALIAS,
                            CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
                            CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
                            CONF_TOOL_BIAS: True,
                            CONF_TEMPERATURE: 0.0,
                            CONF_MAX_TOKENS: 256,
                            **(agent or {}),
                        },
                        "title": "Local Assistant",
                        "unique_id": None,
                    },
                    *subentries,
                ],
            )
            entry.add_to_hass(hass)
            assert await hass.config_entries.async_setup(entry.entry_id)
            await hass.async_block_till_done()
            try:
                yield hass, entry
            finally:
                await hass.config_entries.async_unload(entry.entry_id)
                await hass.async_block_till_done()


def _server_seconds(chunk: Any) -> float:
    """llama-server puts `timings` (prompt_ms, predicted_ms) on its last chunk."""
    timings = (chunk.model_extra or {}).get("timings") or {}
    return (timings.get("prompt_ms", 0) + timings.get("predicted_ms", 0)) / 1000


class _Recorder:
    """Records every completion request the agent's client makes, and the
    server time of its streams (the agent's code is not changed)."""

    def __init__(self, entry: Any) -> None:
        completions = entry.runtime_data.client.chat.completions
        self._original: Callable[..., Any] = completions.create
        self.requests: list[dict[str, Any]] = []
        self.server = 0.0
        completions.create = self._create

    def clear(self) -> None:
        self.requests.clear()
        self.server = 0.0

    async def _create(self, **kwargs: Any) -> Any:
        # The agent passes the body in extra_body (entity.py); replay it as a
        # plain call: the JSON on the wire is the same.
        body = {k: v for k, v in kwargs.items() if k != "extra_body"}
        body.update(kwargs.get("extra_body") or {})
        self.requests.append(copy.deepcopy(body))
        stream = await self._original(**kwargs)
        inner = stream._iterator

        async def spy() -> AsyncIterator[Any]:
            async for chunk in inner:
                self.server += _server_seconds(chunk)
                yield chunk

        stream._iterator = spy()
        return stream


async def _agent_turn(hass: Any) -> Timing:
    from homeassistant.components import conversation
    from homeassistant.core import Context
    from homeassistant.helpers import chat_session

    await hass.services.async_call(
        "input_boolean", "turn_off", {"entity_id": "input_boolean.kitchen_power"}
    )
    await hass.async_block_till_done()
    first: float | None = None
    start = time.perf_counter()

    def listener(_chat_log: Any, delta: dict[str, Any]) -> None:
        nonlocal first
        if (
            first is None
            and delta.get("role") in (None, "assistant")
            and str(delta.get("content") or "").strip()
        ):
            first = time.perf_counter() - start

    with (
        chat_session.async_get_chat_session(hass) as session,
        conversation.async_get_chat_log(
            hass, session, chat_log_delta_listener=listener
        ) as chat_log,
    ):
        result = await conversation.async_converse(
            hass, COMMAND, session.conversation_id, Context(), agent_id=AGENT_ID
        )
    full = time.perf_counter() - start
    calls = sum(
        len(c.tool_calls or ())
        for c in chat_log.content
        if isinstance(c, conversation.AssistantContent)
    )
    if hass.states.get("light.kitchen").state != "on":
        print("  warning: the light did not turn on in this run")
    answer = str(result.response.speech["plain"]["speech"])
    return Timing(first if first is not None else full, full, answer, calls)


async def _direct_turn(client: Any, requests: list[dict[str, Any]]) -> Timing:
    first: float | None = None
    answer = ""
    calls = 0
    server = 0.0
    start = time.perf_counter()
    for index, request in enumerate(requests):
        last = index == len(requests) - 1
        stream = await client.chat.completions.create(**request)
        async for chunk in stream:
            server += _server_seconds(chunk)
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            calls += len(delta.tool_calls or ()) if delta.tool_calls else 0
            if last and delta.content:
                answer += delta.content
                if first is None and delta.content.strip():
                    first = time.perf_counter() - start
    full = time.perf_counter() - start
    return Timing(first if first is not None else full, full, answer, calls, server)


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:7.0f} ms (min {min(values) * 1000:5.0f})"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--base-url", help="use this server instead of starting one")
    args = parser.parse_args()

    import openai

    with started_server(args.base_url) as (base_url, port):
        print(f"server: {base_url} (model {MODEL_ALIAS}); command: {COMMAND!r}")
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        async with real_home_assistant(base_url) as (hass, entry):
            recorder = _Recorder(entry)
            cold = await _agent_turn(hass)
            print(
                f"cold first turn through the agent: first spoken token {cold.first:.2f} s,"
                f" full {cold.full:.2f} s, server compute {recorder.server:.2f} s,"
                f" {cold.tool_calls} tool call(s): {cold.answer!r}"
            )
            direct_client = openai.AsyncOpenAI(
                base_url=base_url, api_key="not-needed", max_retries=0, timeout=600
            )
            agent: list[Timing] = []
            direct: list[Timing] = []
            for run in range(args.runs):
                recorder.clear()
                turn = await _agent_turn(hass)
                turn.server = recorder.server
                agent.append(turn)
                same = await _direct_turn(direct_client, [*recorder.requests])
                direct.append(same)
                print(
                    f"run {run + 1}: agent {turn.first * 1000:.0f}/{turn.full * 1000:.0f} ms"
                    f" (server {turn.server * 1000:.0f} ms, {len(recorder.requests)} requests,"
                    f" {turn.tool_calls} tool call(s)), direct"
                    f" {same.first * 1000:.0f}/{same.full * 1000:.0f} ms"
                    f" (server {same.server * 1000:.0f} ms); agent said {turn.answer!r}"
                )
            await direct_client.close()
        rss = _server_rss_mb(port)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    rows = {
        "first spoken token": lambda t: t.first,
        "full answer": lambda t: t.full,
        "server compute": lambda t: t.server,
        "outside the server": lambda t: t.outside,
    }
    print()
    print(f"medians of {args.runs} warm runs (min in brackets):")
    print(f"  {'':20} {'our agent via HA':>26} {'direct openai':>26}")
    for label, get in rows.items():
        print(
            f"  {label:20} {_ms([get(t) for t in agent]):>26}"
            f" {_ms([get(t) for t in direct]):>26}"
        )
    added = [a.outside - d.outside for a, d in zip(agent, direct, strict=True)]
    print(f"  added by the agent outside the server (paired): {_ms(added)}")
    if rss is not None:
        print(f"llama-server RSS after the runs: {rss:.0f} MB")

    def median_ms(values: list[float]) -> str:
        return f"{statistics.median(values) * 1000:.0f}"

    print(
        "RESULT real_model: first spoken token / full answer, agent"
        f" {median_ms([t.first for t in agent])} / {median_ms([t.full for t in agent])} ms,"
        f" direct {median_ms([t.first for t in direct])} / {median_ms([t.full for t in direct])} ms;"
        f" added outside the server {median_ms(added)} ms"
    )


if __name__ == "__main__":
    asyncio.run(main())
