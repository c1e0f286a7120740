"""A real llama-server for the whole session, and an entry per test that uses it.

The server comes from `scripts/local-model` (built once into a cache outside the
repo). Without that cache the tests are skipped, unless LOCAL_ASSISTANT_REQUIRE_MODEL
is set (scripts/test in CI): then a missing model is a failure.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator
import contextlib
from dataclasses import dataclass
import os
from pathlib import Path
import re
import subprocess
import sys
from typing import Any

from freezegun import freeze_time
from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import (
    async_should_expose,
)
from homeassistant.const import CONF_API_KEY, CONF_LLM_HASS_API, CONF_MODEL, CONF_PROMPT
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import chat_session, llm
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

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
from tests.helpers.dev_home import async_setup_dev_home, live_data_options

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "local-model"
REQUIRE_ENV = "LOCAL_ASSISTANT_REQUIRE_MODEL"
# The alias scripts/local-model gives the model (`-a`).
MODEL_ALIAS = "qwen2.5-coder-0.5b-instruct"
AGENT_ID = "conversation.local_assistant"
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
# 16:00 in the dev home (Europe/Madrid, summer time): daylight, a sea breeze.
AFTERNOON = "2026-07-15 14:00:00+00:00"


def _script(
    *args: str, timeout: float = 60, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **(env or {})},
    )


def _free_port() -> int:
    # In a child process: pytest-socket blocks sockets in this one outside tests.
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0));"
            " print(s.getsockname()[1])",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout)


@pytest.fixture(scope="session")
def model_server() -> Generator[str]:
    """Base URL of a llama-server started for this session; stopped at the end."""
    yield from _started_server()


@pytest.fixture(scope="session")
def one_slot_server() -> Generator[str]:
    """A llama-server that keeps one cached prompt, as Swama does (--cache-ram 0)."""
    yield from _started_server({"LOCAL_ASSISTANT_MODEL_CACHE_RAM": "0"})


def _started_server(env: dict[str, str] | None = None) -> Generator[str]:
    check = _script("check")
    if check.returncode != 0:
        message = (
            "the local model is not set up (run `scripts/local-model setup`, once: "
            f"5-15 minutes on 2 cores): {check.stderr.strip()}"
        )
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"{REQUIRE_ENV} is set but {message}", pytrace=False)
        pytest.skip(message)
    port = _free_port()
    started = _script("start", str(port), timeout=180, env=env)
    if started.returncode != 0:
        pytest.fail(
            f"scripts/local-model start {port} failed:\n{started.stderr}",
            pytrace=False,
        )
    try:
        yield started.stdout.strip().splitlines()[-1]
    finally:
        _script("stop", str(port))


@pytest.fixture
def real_agent_options() -> dict[str, Any]:
    """The agent as a user would set it up for this model, at temperature 0."""
    return {
        CONF_MODEL: MODEL_ALIAS,
        CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
        CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
        CONF_TOOL_BIAS: True,
        CONF_TEMPERATURE: 0.0,
        CONF_MAX_TOKENS: 256,
    }


@pytest.fixture
def real_entry_options() -> dict[str, Any]:
    """The entry's options: extraction off (override in a test module to change it)."""
    return {CONF_EXTRACTION: EXTRACTION_OFF, CONF_TIMEOUT: 600}


@contextlib.asynccontextmanager
async def loaded_entry(
    hass: HomeAssistant,
    base_url: str,
    agent_options: dict[str, Any],
    options: dict[str, Any] | None = None,
) -> AsyncGenerator[MockConfigEntry]:
    """An entry for a real server, loaded; unloaded at the end."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Local Assistant",
        data={CONF_BASE_URL: base_url, CONF_API_KEY: ""},
        # The first prompt with HA's tools takes ~17 s on an idle 2-core CPU (cold
        # prompt cache), several times that on a busy one: a generous timeout.
        options={CONF_EXTRACTION: EXTRACTION_OFF, CONF_TIMEOUT: 600, **(options or {})},
        subentries_data=[
            {
                "subentry_type": SUBENTRY_CONVERSATION,
                "data": agent_options,
                "title": "Local Assistant",
                "unique_id": None,
            }
        ],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    yield entry
    if entry.state.recoverable:
        await hass.config_entries.async_unload(entry.entry_id)
        await hass.async_block_till_done()


@pytest.fixture
async def real_entry(
    hass: HomeAssistant,
    socket_enabled: None,
    model_server: str,
    real_agent_options: dict[str, Any],
    real_entry_options: dict[str, Any],
) -> AsyncGenerator[MockConfigEntry]:
    """A loaded entry for the real server; unloaded at the end."""
    async with loaded_entry(
        hass, model_server, real_agent_options, real_entry_options
    ) as entry:
        yield entry


@dataclass
class DevHome:
    """The dev instance's home with the agent on the real model, and its user."""

    entry: MockConfigEntry
    user_id: str


@pytest.fixture
def afternoon() -> Generator[None]:
    """A fixed afternoon in the dev home that ticks (the loop's timers work).

    The dev home's weather and sea follow the time of day: request this before
    `dev_home` and its sensors read the same in every run. HA's loop reads the
    frozen clock too (its `time` is bound to `time.monotonic`), so loop time
    jumps at the freeze: a timer set before it fires at once. Only `hass`'s own
    start-up runs before it; the agent and the dev home are set up after.
    """
    with freeze_time(AFTERNOON, tick=True):
        yield


@pytest.fixture
def dev_agent_options() -> dict[str, Any]:
    """Changes to the dev agent's settings; override in a test module."""
    return {}


@pytest.fixture
async def dev_home(
    hass: HomeAssistant,
    socket_enabled: None,
    model_server: str,
    dev_agent_options: dict[str, Any],
) -> AsyncGenerator[DevHome]:
    """`scripts/develop`'s home and agent (live-data tools, default temperature)."""
    await async_setup_dev_home(hass)
    user = await hass.auth.async_create_user("Dev", group_ids=["system-admin"])
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Local Assistant",
        data={CONF_BASE_URL: model_server, CONF_API_KEY: ""},
        options={CONF_EXTRACTION: EXTRACTION_OFF, CONF_TIMEOUT: 600},
        subentries_data=[
            {
                "subentry_type": SUBENTRY_CONVERSATION,
                "data": {
                    CONF_MODEL: MODEL_ALIAS,
                    CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
                    CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
                    CONF_TOOL_BIAS: True,
                    **live_data_options(),
                    **dev_agent_options,
                },
                "title": "Local Assistant",
                "unique_id": None,
            }
        ],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    yield DevHome(entry, user.id)
    if entry.state.recoverable:
        await hass.config_entries.async_unload(entry.entry_id)
        await hass.async_block_till_done()


@dataclass
class Turn:
    """One turn as the Assist pipeline sees it (the delta listener feeds TTS)."""

    result: conversation.ConversationResult
    deltas: list[dict[str, Any]]
    chat_log: conversation.ChatLog

    @property
    def speech(self) -> str:
        return str(self.result.response.speech["plain"]["speech"])

    @property
    def streamed_chunks(self) -> list[str]:
        return [
            str(delta["content"])
            for delta in self.deltas
            if delta.get("role") in (None, "assistant") and delta.get("content")
        ]

    @property
    def tool_calls(self) -> list[llm.ToolInput]:
        return [
            call
            for content in self.chat_log.content
            if isinstance(content, conversation.AssistantContent)
            for call in content.tool_calls or ()
        ]

    @property
    def tool_results(self) -> list[conversation.ToolResultContent]:
        return [
            content
            for content in self.chat_log.content
            if isinstance(content, conversation.ToolResultContent)
        ]


async def converse(
    hass: HomeAssistant,
    text: str,
    *,
    user_id: str | None = None,
    language: str | None = None,
) -> Turn:
    """Run a turn like the Assist pipeline does, with a delta listener."""
    deltas: list[dict[str, Any]] = []

    def listener(_chat_log: conversation.ChatLog, delta: dict[str, Any]) -> None:
        deltas.append(delta)

    with (
        chat_session.async_get_chat_session(hass) as session,
        conversation.async_get_chat_log(
            hass, session, chat_log_delta_listener=listener
        ) as chat_log,
    ):
        result = await conversation.async_converse(
            hass,
            text,
            session.conversation_id,
            Context(user_id=user_id),
            language=language,
            agent_id=AGENT_ID,
        )
    return Turn(result, deltas, chat_log)


def devices(hass: HomeAssistant) -> dict[str, str]:
    """The exposed lights and switches and their states."""
    return {
        state.entity_id: state.state
        for state in hass.states.async_all(("light", "switch"))
        if async_should_expose(hass, "conversation", state.entity_id)
    }


def states_one_of(answer: str, wanted: list[float]) -> bool:
    """Whether the answer states one of ``wanted`` (rounded as people do)."""
    said = [float(number.replace(",", ".")) for number in _NUMBER.findall(answer)]
    return any(abs(number - value) <= 0.55 for number in said for value in wanted)
