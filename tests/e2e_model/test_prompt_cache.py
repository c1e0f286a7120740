"""The conversation's prompt stays cached on a real one-slot server (server/warmth.py).

llama.cpp's llama-server with ``--cache-ram 0 -np 1`` keeps one cached prompt,
as Swama does. Fact extraction runs on the same server between the turns, as
in life, and replaces that prompt; the agent sends the next turn's prefix
again while the user pauses, so each turn reads only what is new. The figures
are llama.cpp's own (``timings`` on the last chunk), as the agent reports them.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import timedelta
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.local_assistant.const import CONF_EXTRACTION, EXTRACTION_LOCAL
from custom_components.local_assistant.server.warmth import REWARM_DELAY_SECONDS
from tests.helpers.ha import async_setup_exposed_lights

from .conftest import AGENT_ID, loaded_entry

# HA carries out the command itself (local intents): no model request, but
# its exchange is in the next turn's history and the extractor sees it.
COMMAND = "Turn on the kitchen light."
TEXTS = (
    "My dog is called Bolt.",
    COMMAND,
    "I live in Tarifa, by the sea.",
    "What is my dog called?",
    "I like kitesurfing when the wind is strong.",
)
# Measured: 1-2 % (the new message and the few tokens a template renders
# differently for a generated answer). Without the re-warm: 99-100 %.
MAX_REREAD = 0.25


@pytest.fixture
async def one_slot_entry(
    hass: HomeAssistant,
    socket_enabled: None,
    one_slot_server: str,
    real_agent_options: dict[str, Any],
) -> AsyncGenerator[MockConfigEntry]:
    """Our agent on the one-slot server, distilling facts on it too."""
    options = {CONF_EXTRACTION: EXTRACTION_LOCAL}
    async with loaded_entry(
        hass, one_slot_server, real_agent_options, options
    ) as entry:
        yield entry


async def pause(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    """The user is silent: extraction runs, then the prefix is sent again."""
    data = entry.runtime_data
    assert data.memory.extractor is not None
    await data.memory.extractor.async_wait_idle()
    await data.prompt_cache.async_wait_idle()  # the extraction watch
    # The re-warm's delay passes (its timer fires), then the re-warm runs.
    async_fire_time_changed(
        hass, dt_util.utcnow() + timedelta(seconds=REWARM_DELAY_SECONDS + 1)
    )
    await hass.async_block_till_done()
    await data.prompt_cache.async_wait_idle()


async def test_turns_read_only_what_is_new_with_extraction_on(
    hass: HomeAssistant, one_slot_entry: MockConfigEntry
) -> None:
    await async_setup_exposed_lights(hass, "Kitchen light")
    user = await hass.auth.async_create_user("Ada", group_ids=["system-admin"])
    data = one_slot_entry.runtime_data
    turns: list[dict[str, Any]] = []  # the turns that asked the model
    for text in TEXTS:
        before = len(data.turns.recent())
        result = await conversation.async_converse(
            hass, text, None, Context(user_id=user.id), agent_id=AGENT_ID
        )
        await pause(hass, one_slot_entry)
        asked = data.turns.recent()[before:]
        turns.extend(asked)
        figures = (
            f"re-read {asked[0]['reread']} of {asked[0]['prompt_tokens']} tokens, "
            f"first token {asked[0]['first_token_ms']} ms"
            if asked
            else "no model request"
        )
        # Shown with -rP.
        print(f"{text!r}: {result.response.speech['plain']['speech']!r}; {figures}")

    # HA carries out the command itself; the other turns ask the model.
    assert len(turns) >= len(TEXTS) - 2, turns
    # Extraction ran between turns (questions and commands need none), and
    # each run replaced the server's cached prompt.
    assert data.memory.extractor is not None
    assert data.memory.extractor.stats.runs >= 2
    for turn in turns[1:]:
        assert turn["prompt_tokens"] > 1000, turn  # HA's prompt and tools
        assert turn["cached_tokens"] is not None, turn
        assert turn["reread"] <= MAX_REREAD, turn
