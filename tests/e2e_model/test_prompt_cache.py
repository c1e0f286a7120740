"""The conversation's prompt stays cached on a real one-slot server (server/warmth.py).

llama.cpp's llama-server with ``--cache-ram 0 -np 1`` keeps one cached prompt,
as Swama does. Fact extraction runs on the same server between the turns, as
in life, and replaces that prompt; the agent sends the next turn's prefix
again while the user pauses, so each turn reads only what is new. The figures
are llama.cpp's own (``timings`` on the last chunk), as the agent reports them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import CONF_EXTRACTION, EXTRACTION_LOCAL
from custom_components.local_assistant.server.warmth import REWARM_DELAY_SECONDS
from tests.helpers.ha import async_setup_exposed_lights

from .conftest import AGENT_ID, loaded_entry

TEXTS = (
    "Turn on the kitchen light.",
    "My dog is called Bolt.",
    "I live in Tarifa, by the sea.",
    "What is my dog called?",
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


async def pause(entry: MockConfigEntry) -> None:
    """The user is silent: extraction runs, then the prefix is sent again."""
    data = entry.runtime_data
    assert data.memory.extractor is not None
    await data.memory.extractor.async_wait_idle()
    await data.prompt_cache.async_wait_idle()  # the extraction watch
    await asyncio.sleep(REWARM_DELAY_SECONDS + 0.5)
    await data.prompt_cache.async_wait_idle()  # the re-warm


async def test_turns_read_only_what_is_new_with_extraction_on(
    hass: HomeAssistant, one_slot_entry: MockConfigEntry
) -> None:
    await async_setup_exposed_lights(hass, "Kitchen light")
    user = await hass.auth.async_create_user("Ada", group_ids=["system-admin"])
    data = one_slot_entry.runtime_data
    for text in TEXTS:
        await conversation.async_converse(
            hass, text, None, Context(user_id=user.id), agent_id=AGENT_ID
        )
        await pause(one_slot_entry)

    turns = data.turns.recent()
    assert len(turns) == len(TEXTS)
    assert data.memory.extractor is not None
    assert data.memory.extractor.stats.runs >= len(TEXTS)
    # Each extraction replaced the cached prompt; each was followed by a re-warm.
    assert data.prompt_cache.stats.rewarms >= len(TEXTS) - 1
    for turn in turns:  # shown with -rP
        print(
            f"re-read {turn['reread']:.1%} of {turn['prompt_tokens']} tokens, "
            f"first token {turn['first_token_ms']:.0f} ms"
        )
    for turn in turns[1:]:
        assert turn["prompt_tokens"] > 1000, turn  # HA's prompt and tools
        assert turn["cached_tokens"] is not None, turn
        assert turn["reread"] <= MAX_REREAD, turn
