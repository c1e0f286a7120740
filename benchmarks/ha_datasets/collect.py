"""The leaderboard's collect, one case at a time, in process.

As `home_assistant_datasets/tool/assist/collect/test_collect.py` and its fixtures do
it, each case gets a fresh Home Assistant (`async_test_home_assistant`, custom
components allowed) with:

1. the `synthetic_home` custom component loading the case's inventory (its file read
   patched to the merged YAML, covers instant), then the inventory's areas and
   devices registered again as the fixture does, and every entity checked to exist
   and be available (`validate_entities`);
2. `homeassistant`, `conversation` and `ai_task` set up, then the system's agent;
3. a snapshot of every synthetic-home entity (state and all attributes), the
   sentence sent with the `conversation.process` service (agent id and text only:
   no conversation id, no user), under the leaderboard's `RetryableAgent` rules (40 s
   per try, up to 3 tries on a timeout; HA errors become the answer), and the
   entity-state diff (`EntityStateDiffFixture`, imported from the clone);
4. the tool calls read from the conversation trace, as its eval reads them.

The chat log of the turn (the prompt, tool calls and their results) is kept for study,
and from it `calls`: every tool call of the turn with its result. `external` marks the
calls an agent settled itself instead of through HA's tool API: HA's own intent
matching, and in ours the local-intent path and the calls its turn guard refused
(with the refusal as result). The conversation trace, which is what the leaderboard's
tool-call rules read (`tool_calls` in the JSON), has HA's intent matches and the calls
run through HA's tool API, not the refused ones.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import contextlib
from dataclasses import dataclass, field
import json
import tempfile
import time
from typing import Any
from unittest.mock import mock_open, patch

from benchmarks._real_home import MODEL_ALIAS

from .cases import Case

SYSTEMS = ("ours", "ha", "plain")
AGENT_IDS = {
    "ours": "conversation.local_assistant",
    "ha": "conversation.home_assistant",
    # The leaderboard's id for any config-entry agent (MockConfigEntry's title).
    "plain": "conversation.mock_title",
}
TIMEOUT = 40.0  # home_assistant_datasets/agent/retryable.py
TRIES = 3


@dataclass
class Collected:
    """What one case did."""

    answer: str = ""
    seconds: float = 0.0
    setup_seconds: float = 0.0
    tries: int = 0
    unexpected_states: Any = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    chat: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


def jsonable(value: Any) -> Any:
    """`value` with anything JSON cannot hold as text."""
    return json.loads(json.dumps(value, default=str))


def _chat(contents: list[Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A chat log's content as dicts, and its tool calls with their results."""
    chat = []
    calls: dict[str, dict[str, Any]] = {}
    for content in contents:
        item = content.as_dict()
        if tool_calls := getattr(content, "tool_calls", None):
            item["tool_calls"] = [
                {"name": t.tool_name, "args": t.tool_args, "external": t.external}
                for t in tool_calls
            ]
            for t, call in zip(tool_calls, item["tool_calls"], strict=True):
                calls[t.id] = dict(call)
        if (call := calls.get(getattr(content, "tool_call_id", ""))) is not None:
            call["result"] = content.tool_result
        chat.append(item)
    return jsonable(chat), jsonable(list(calls.values()))


async def _setup_ours(
    hass: Any, base_url: str, temperature: float | None = None
) -> None:
    """Our agent with the settings `benchmarks/_real_home.py` uses, Assist API only."""
    from benchmarks._real_home import agent_entry

    entry = agent_entry(
        base_url, agent=None if temperature is None else {"temperature": temperature}
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)


async def _setup_plain(hass: Any, base_url: str) -> None:
    """`vicuna_conversation` as the leaderboard's `models/*.yaml` configure it.

    A version-1 entry with the model and `llm_hass_api: assist` in its options; the
    component's own migration turns it into a conversation subentry.
    """
    from pytest_homeassistant_custom_component.common import MockConfigEntry

    entry = MockConfigEntry(
        domain="vicuna_conversation",
        data={"api_key": "sk-0000000000000000000", "base_url": base_url},
        options={"chat_model": MODEL_ALIAS, "llm_hass_api": "assist"},
        version=1,
        minor_version=0,
    )
    entry.add_to_hass(hass)
    await hass.config_entries.async_setup(entry.entry_id)


@contextlib.asynccontextmanager
async def synthetic_home(case: Case) -> AsyncIterator[tuple[Any, Any]]:
    """A fresh HA with the case's synthetic home: (hass, its config entry)."""
    from homeassistant import loader
    from homeassistant.config_entries import ConfigEntryState
    from homeassistant.helpers import area_registry as ar, device_registry as dr
    from homeassistant.setup import async_setup_component
    from pytest_homeassistant_custom_component.common import (
        MockConfigEntry,
        async_test_home_assistant,
    )
    import synthetic_home.inventory as inv

    with tempfile.TemporaryDirectory(prefix="ha-datasets-") as config_dir:
        async with async_test_home_assistant(config_dir=config_dir) as hass:
            hass.data.pop(loader.DATA_CUSTOM_COMPONENTS)  # allow custom_components
            try:
                assert await async_setup_component(hass, "homeassistant", {})
                entry = MockConfigEntry(
                    domain="synthetic_home", data={"config_filename": "ignored"}
                )
                entry.add_to_hass(hass)
                with (
                    patch(
                        "synthetic_home.inventory.read_config_content",
                        mock_open(read_data=case.home_yaml),
                    ),
                    patch("custom_components.synthetic_home.cover.COVER_INSTANT", True),
                ):
                    await hass.config_entries.async_setup(entry.entry_id)
                    assert entry.state == ConfigEntryState.LOADED
                    inventory = inv.decode_inventory(case.home_yaml)
                    areas = ar.async_get(hass)
                    for area in inventory.areas or []:
                        areas.async_get_or_create(area.name)
                    devices = dr.async_get(hass)
                    for device in inventory.devices or []:
                        info = device.info
                        devices.async_get_or_create(
                            config_entry_id=entry.entry_id,
                            identifiers={("synthetic_home", device.id)},
                            name=device.name,
                            manufacturer=getattr(info, "manufacturer", None),
                            model=getattr(info, "model", None),
                            sw_version=getattr(info, "sw_version", None),
                            suggested_area=device.area,
                        )
                    for entity in inventory.entities or []:
                        state = hass.states.get(entity.id)
                        if state is None or state.state in ("unavailable", "unknown"):
                            raise RuntimeError(
                                f"synthetic home: {entity.id} is {state}"
                            )
                    yield hass, entry
            finally:
                for loaded in hass.config_entries.async_entries():
                    if loaded.state is ConfigEntryState.LOADED:
                        await hass.config_entries.async_unload(loaded.entry_id)
                await hass.async_block_till_done()
                await hass.async_stop(force=True)


async def _process(
    hass: Any, agent_id: str, text: str, timeout: float, tries: int
) -> tuple[str, int]:
    """The leaderboard's ServiceCall agent inside its RetryableAgent: answer, tries."""
    from homeassistant.exceptions import HomeAssistantError, ServiceValidationError

    answer = ""
    done = 0
    retry = True
    while done < tries and retry:
        done += 1
        retry = False
        try:
            async with asyncio.timeout(timeout):
                response = await hass.services.async_call(
                    "conversation",
                    "process",
                    {"agent_id": agent_id, "text": text},
                    blocking=True,
                    return_response=True,
                )
            answer = str(response["response"]["speech"]["plain"]["speech"])
        except (
            HomeAssistantError,
            ServiceValidationError,
            TypeError,
            json.JSONDecodeError,
        ) as err:
            answer = str(err)
        except (TimeoutError, asyncio.CancelledError):
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # we are being stopped (Ctrl-C), not a timed-out turn
            answer = f"Timeout (after {done} tries)"
            retry = True
        await hass.async_block_till_done()
    return answer, done


def _trace_tool_calls() -> list[dict[str, Any]]:
    """The tool calls of the last conversation trace, as the eval reads them."""
    from homeassistant.components.conversation import trace

    traces = trace.async_get_traces()
    if not traces:
        return []
    calls = []
    for event in traces[-1].as_dict()["events"]:
        if event["event_type"] != trace.ConversationTraceEventType.TOOL_CALL:
            continue
        data = event["data"] or {}
        if "intent_name" in data:
            calls.append(
                {"name": data["intent_name"], "args": data.get("slots"), "intent": True}
            )
        else:
            calls.append({"name": data.get("tool_name"), "args": data.get("tool_args")})
    return jsonable(calls)


async def collect(
    case: Case,
    system: str,
    base_url: str | None,
    timeout: float = TIMEOUT,
    tries: int = TRIES,
    temperature: float | None = None,
) -> Collected:
    """Run one case through one system; what it answered and changed."""
    from home_assistant_datasets.entity_state import EntityStateFixture
    from home_assistant_datasets.entity_state.diff import EntityStateDiffFixture
    from homeassistant.components.conversation.chat_log import DATA_CHAT_LOGS
    from homeassistant.helpers import entity_registry as er
    from homeassistant.setup import async_setup_component

    action = case.task.action
    if action.context_device is not None:
        raise NotImplementedError("context_device (no assist-mini or questions case)")
    result = Collected()
    start = time.perf_counter()
    now = (
        patch("homeassistant.util.dt.now", return_value=action.context_now)
        if action.context_now is not None
        else contextlib.nullcontext()
    )
    with now:
        async with synthetic_home(case) as (hass, home_entry):
            for domain in ("homeassistant", "conversation", "ai_task"):
                assert await async_setup_component(hass, domain, {})
            if system == "ours":
                assert base_url is not None
                await _setup_ours(hass, base_url, temperature)
            elif system == "plain":
                assert base_url is not None
                await _setup_plain(hass, base_url)
            await hass.async_block_till_done()
            diff = EntityStateDiffFixture(
                EntityStateFixture(hass, home_entry, er.async_get(hass))
            )
            if action.expect_changes:
                diff.prepare(action.expect_changes or {}, action.ignore_changes or {})
            result.setup_seconds = time.perf_counter() - start
            turn = time.perf_counter()
            result.answer, result.tries = await _process(
                hass, AGENT_IDS[system], case.sentence, timeout, tries
            )
            result.seconds = time.perf_counter() - turn
            # Every chat log of the turn (one per try): prompt, calls, results.
            for chat_log in hass.data.get(DATA_CHAT_LOGS, {}).values():
                chat, calls = _chat(chat_log.content)
                result.chat += chat
                result.calls += calls
            if action.expect_changes:
                result.unexpected_states = jsonable(diff.get_unexpected_changes())
            result.tool_calls = _trace_tool_calls()
    return result
