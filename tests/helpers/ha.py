"""Helpers for tests that run a real Home Assistant: an entry, one Assist turn, lights.

The fixtures that use them (``config_entry``, ``loaded_entry``, ...) are in
tests/conftest.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
import json
from pathlib import Path
import socket
from typing import Any

from aiohttp import web
from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.const import CONF_API_KEY, CONF_MODEL, STATE_OFF
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import chat_session
from homeassistant.setup import async_setup_component
from homeassistant.util import slugify
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import (
    CONF_BASE_URL,
    CONF_EXTRACTION,
    CONF_MAX_TOKENS,
    CONF_TEMPERATURE,
    DOMAIN,
    EXTRACTION_OFF,
    SUBENTRY_AI_TASK,
    SUBENTRY_CONVERSATION,
)

TAGS = ("<think>", "</think>")
_TRANSLATIONS = (
    Path(__file__).resolve().parents[2]
    / "custom_components"
    / "local_assistant"
    / "translations"
)


def spoken_sentence(key: str, language: str = "en") -> str:
    """A sentence the agent says itself (translations/<language>.json)."""
    texts = json.loads((_TRANSLATIONS / f"{language}.json").read_text("utf-8"))
    return str(texts["exceptions"][key]["message"])


NOTHING_CHANGED = spoken_sentence("nothing_changed")
MODEL = "qwen3-4b"
AGENT_ID = "conversation.local_assistant"


def sse_chunk(delta: Any, finish: str | None = None) -> str:
    """One OpenAI chat.completion.chunk SSE line, for replies written by hand
    (``fake.malformed``): any delta, also one a real server never sends."""
    payload = {
        "id": "chatcmpl-x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return "data: " + json.dumps(payload)


TASK_ENTITY = "ai_task.local_assistant_ai_task"
# The AI Task agent of the `task_entry` fixture.
TASK_OPTIONS = {CONF_MODEL: MODEL, CONF_TEMPERATURE: 0.2, CONF_MAX_TOKENS: 700}


def free_port() -> int:
    """A loopback port nothing listens on (now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# Ports held bound and never listened on, for the whole test run: connecting is
# refused, and no other test (another xdist worker) can start a server there.
_HELD_CLOSED: list[socket.socket] = []


def closed_port_url() -> str:
    """A base URL where nothing listens (connection refused)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    _HELD_CLOSED.append(sock)
    return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def make_entry(
    hass: HomeAssistant,
    base_url: str,
    agent_options: dict[str, Any],
    options: dict[str, Any] | None = None,
) -> MockConfigEntry:
    """An entry for `base_url` with one conversation agent, added to hass."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Local Assistant",
        data={CONF_BASE_URL: base_url, CONF_API_KEY: ""},
        options={CONF_EXTRACTION: EXTRACTION_OFF} if options is None else options,
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
    return entry


async def converse(
    hass: HomeAssistant,
    text: str,
    *,
    user_id: str | None = None,
    device_id: str | None = None,
    conversation_id: str | None = None,
    agent_id: str = AGENT_ID,
    language: str | None = None,
) -> conversation.ConversationResult:
    """Run one turn through HA's conversation API (language: HA's by default)."""
    return await conversation.async_converse(
        hass,
        text,
        conversation_id,
        Context(user_id=user_id),
        language=language,
        agent_id=agent_id,
        device_id=device_id,
    )


def speech(result: conversation.ConversationResult) -> str:
    """What the user hears."""
    return str(result.response.speech["plain"]["speech"])


async def async_setup_exposed_lights(hass: HomeAssistant, *names: str) -> list[str]:
    """Real template lights, each switching its own input_boolean, exposed to Assist.

    Only the lights are exposed, so a tool call can only reach them. Returns
    their entity ids (`light.<slug of name>`), all off.
    """
    slugs = [slugify(name) for name in names]
    assert await async_setup_component(
        hass, "input_boolean", {"input_boolean": {f"{s}_power": {} for s in slugs}}
    )

    def light(name: str, slug: str) -> dict[str, Any]:
        target = {"entity_id": f"input_boolean.{slug}_power"}
        return {
            "name": name,
            "unique_id": f"test_{slug}",
            "state": f"{{{{ is_state('input_boolean.{slug}_power', 'on') }}}}",
            "turn_on": {"action": "input_boolean.turn_on", "target": target},
            "turn_off": {"action": "input_boolean.turn_off", "target": target},
        }

    assert await async_setup_component(
        hass,
        "template",
        {
            "template": [
                {"light": [light(n, s) for n, s in zip(names, slugs, strict=True)]}
            ]
        },
    )
    await hass.async_block_till_done()
    entity_ids = [f"light.{slug}" for slug in slugs]
    for slug, entity_id in zip(slugs, entity_ids, strict=True):
        assert hass.states.get(entity_id).state == STATE_OFF
        async_expose_entity(hass, "conversation", entity_id, True)
        async_expose_entity(hass, "conversation", f"input_boolean.{slug}_power", False)
    return entity_ids


def selector_config(result: Any, key: str) -> dict[str, Any]:
    """The selector config of one field of a shown form."""
    for marker, value in result["data_schema"].schema.items():
        if marker == key:
            return dict(value.config)
    raise AssertionError(f"{key} not in the form")


def task_subentry_id(entry: MockConfigEntry) -> str:
    return next(
        s.subentry_id
        for s in entry.subentries.values()
        if s.subentry_type == SUBENTRY_AI_TASK
    )


def system_text(body: dict[str, Any]) -> str:
    """Every system message of a request, joined (the stable and the varying one)."""
    return "\n\n".join(
        str(message["content"])
        for message in body["messages"]
        if message["role"] == "system"
    )


@dataclass
class StreamedTurn:
    """One turn as the pipeline sees it."""

    result: conversation.ConversationResult
    deltas: list[dict[str, Any]]
    chat_log: conversation.ChatLog

    @property
    def speech(self) -> str:
        return speech(self.result)

    @property
    def streamed_text(self) -> str:
        """Everything the delta listener got as content (what TTS would speak)."""
        return "".join(
            str(delta["content"])
            for delta in self.deltas
            if delta.get("role") in (None, "assistant") and delta.get("content")
        )

    @property
    def assistant_contents(self) -> list[conversation.AssistantContent]:
        return [
            c
            for c in self.chat_log.content
            if isinstance(c, conversation.AssistantContent)
        ]

    def assert_nothing_hidden_is_spoken(self, *hidden: str) -> None:
        """No tag and no reasoning text in speech, streamed deltas or chat log content."""
        spoken = [
            self.speech,
            self.streamed_text,
            *(c.content or "" for c in self.assistant_contents),
        ]
        for text in spoken:
            for needle in (*TAGS, *hidden):
                assert needle not in text, f"{needle!r} leaked into {text!r}"


async def converse_streaming(
    hass: HomeAssistant,
    text: str,
    conversation_id: str | None = None,
    *,
    user_id: str | None = None,
    language: str | None = None,
    device_id: str | None = None,
    agent_id: str = AGENT_ID,
) -> StreamedTurn:
    """Run a turn like the Assist pipeline does, with a delta listener."""
    deltas: list[dict[str, Any]] = []

    def listener(_chat_log: conversation.ChatLog, delta: dict[str, Any]) -> None:
        deltas.append(delta)

    with (
        chat_session.async_get_chat_session(hass, conversation_id) as session,
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
            agent_id=agent_id,
            device_id=device_id,
        )
    return StreamedTurn(result, deltas, chat_log)


@asynccontextmanager
async def models_only_server(
    models: Callable[[web.Request], Awaitable[web.Response]],
) -> AsyncIterator[str]:
    """A base URL on 127.0.0.1 whose /v1/models answers with ``models``."""
    app = web.Application()
    app.router.add_get("/v1/models", models)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()
