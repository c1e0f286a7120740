"""What the benchmarks share: a real Home Assistant, the agent's config entry, numbers.

Run the benchmarks from the repository root with ``python -m benchmarks.NAME`` so
that ``custom_components`` and ``tests.helpers.fake_openai`` import from this checkout.
Everything talks to 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
import contextlib
import logging
import platform
import statistics
import tempfile
import time
from typing import Any

from homeassistant import loader
from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_API_KEY, CONF_LLM_HASS_API, CONF_MODEL, CONF_PROMPT
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er, frame, llm
from homeassistant.runner import HassEventLoopPolicy
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_test_home_assistant,
)

from benchmarks._texts import conversation_turn
from custom_components.local_assistant.const import (
    CONF_BASE_URL,
    CONF_EXTRACTION,
    DOMAIN,
    EXTRACTION_OFF,
    SUBENTRY_CONVERSATION,
)

MODEL = "qwen3-4b"

# What Qwen3 on Swama streams first even with /no_think.
EMPTY_THINK = "\n\n"

# A spoken-style answer of typical length: 36 words, about 45 streamed events.
ANSWER = (
    "The living room lights are on at sixty percent and the kitchen is off. "
    "It is nineteen degrees inside and the wind at the beach is twenty two knots "
    "from the west, which is good for kitesurfing this afternoon."
)

# A small but realistic home, exposed to Assist: it sizes HA's own prompt part.
HOME: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("light.living_room", "on", {"friendly_name": "Living room", "brightness": 153}),
    ("light.kitchen", "off", {"friendly_name": "Kitchen"}),
    ("light.bedroom", "off", {"friendly_name": "Bedroom"}),
    ("light.hallway", "on", {"friendly_name": "Hallway"}),
    ("light.office", "off", {"friendly_name": "Office desk lamp"}),
    ("switch.coffee_machine", "off", {"friendly_name": "Coffee machine"}),
    ("switch.garden_pump", "off", {"friendly_name": "Garden pump"}),
    ("fan.bedroom", "off", {"friendly_name": "Bedroom fan"}),
    (
        "climate.living_room",
        "heat",
        {
            "friendly_name": "Thermostat",
            "current_temperature": 19.0,
            "temperature": 21.0,
            "hvac_modes": ["off", "heat"],
        },
    ),
    (
        "sensor.outside_temperature",
        "12.5",
        {
            "friendly_name": "Outside temperature",
            "unit_of_measurement": "°C",
            "device_class": "temperature",
        },
    ),
    (
        "sensor.wind_speed_beach",
        "22",
        {"friendly_name": "Wind at the beach", "unit_of_measurement": "kn"},
    ),
    ("cover.garage_door", "closed", {"friendly_name": "Garage door"}),
    ("lock.front_door", "locked", {"friendly_name": "Front door"}),
    ("media_player.kitchen_speaker", "idle", {"friendly_name": "Kitchen speaker"}),
)

FACTS = tuple(
    text
    for text in (
        "The user's name is Anna.",
        "Anna kitesurfs and prefers west wind above 18 knots.",
        "Anna owns a 9 m and a 12 m kite.",
        "Anna's partner is called Sam.",
        "Anna works from home on Mondays and Fridays.",
        "Anna drinks her coffee black, first cup at 7:00.",
        "Anna is vegetarian.",
        "Anna's daughter Mia is seven years old.",
        "Mia goes to swimming lessons on Wednesday afternoons.",
        "Anna likes the bedroom at 18 degrees at night.",
        "Anna's car is an electric Renault Zoe.",
        "The car charges overnight in the garage.",
        "Anna's favourite beach is Scheveningen.",
        "Anna speaks Dutch and English.",
        "Anna prefers short answers without small talk.",
        "Anna is allergic to cats.",
        "The dog is called Bram and needs a walk at 18:00.",
        "Anna's mother lives in Utrecht.",
        "Anna plays padel on Thursday evenings.",
        "Anna reads science fiction before sleeping.",
        "Anna waters the garden with the pump on dry days.",
        "Anna's birthday is on 14 March.",
        "Anna dislikes loud music in the morning.",
        "Anna's office is the small room upstairs.",
        "Anna uses the kitchen speaker for news at breakfast.",
        "Anna's dentist is Dr. de Vries.",
        "Anna takes the train to Amsterdam on Tuesdays.",
        "Anna wants the hallway light on when she comes home after dark.",
        "Anna's favourite radio station is NPO Radio 2.",
        "Anna is learning Spanish.",
    )
)


def run(main: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``main`` on Home Assistant's own event loop setup."""
    logging.basicConfig(
        level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    # Known, harmless start-up notices ("custom integration not tested by HA",
    # "zlib_ng not available", "no libturbojpeg") would only clutter the numbers.
    for name in ("homeassistant.loader", "aiohttp_fast_zlib"):
        logging.getLogger(name).setLevel(logging.ERROR)
    logging.getLogger("homeassistant.components.camera.img_util").setLevel(
        logging.CRITICAL
    )
    return asyncio.run(main(), loop_factory=HassEventLoopPolicy(False).new_event_loop)


def machine() -> str:
    """One line naming the machine and versions, printed by every benchmark."""
    import homeassistant.const as ha_const
    import openai

    return (
        f"python {platform.python_version()}, HA {ha_const.__version__}, "
        f"openai {openai.__version__}, {platform.machine()}, "
        f"{_cpu_count()} CPU(s)"
    )


def _cpu_count() -> int:
    import os

    return len(os.sched_getaffinity(0))


@contextlib.asynccontextmanager
async def home_assistant() -> AsyncIterator[HomeAssistant]:
    """A real, running HomeAssistant in a temporary config dir, stopped at the end."""
    with tempfile.TemporaryDirectory(prefix="local-assistant-bench-") as config_dir:
        async with async_test_home_assistant(config_dir=config_dir) as hass:
            frame.async_setup(hass)
            hass.data.pop(loader.DATA_CUSTOM_COMPONENTS)  # allow custom_components
            try:
                assert await async_setup_component(hass, "homeassistant", {})
                assert await async_setup_component(hass, "intent", {})
                _add_home(hass)
                yield hass
            finally:
                for entry in hass.config_entries.async_entries():
                    if entry.state is ConfigEntryState.LOADED:
                        await hass.config_entries.async_unload(entry.entry_id)
                await hass.async_block_till_done()
                await hass.async_stop(force=True)


def _add_home(hass: HomeAssistant) -> None:
    for entity_id, state, attributes in HOME:
        hass.states.async_set(entity_id, state, attributes)
        async_expose_entity(hass, "conversation", entity_id, True)


def agent_data(**overrides: Any) -> dict[str, Any]:
    """The conversation subentry's data, as tests/conftest.py builds it."""
    return {
        CONF_MODEL: MODEL,
        CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
        CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
        "tool_bias": True,
        "temperature": 0.6,
        "max_tokens": 512,
        **overrides,
    }


async def async_setup_agent(
    hass: HomeAssistant,
    base_url: str,
    *,
    options: dict[str, Any] | None = None,
    title: str = "Local Assistant",
    data: dict[str, Any] | None = None,
) -> tuple[MockConfigEntry, str]:
    """Add and set up an entry for ``base_url``; return it and the agent's entity id.

    ``data``: the agent's settings (``agent_data()`` by default).
    """
    entry = MockConfigEntry(
        domain=DOMAIN,
        title=title,
        data={CONF_BASE_URL: base_url, CONF_API_KEY: ""},
        options=options if options is not None else {CONF_EXTRACTION: EXTRACTION_OFF},
        subentries_data=[
            {
                "subentry_type": SUBENTRY_CONVERSATION,
                "data": data if data is not None else agent_data(),
                "title": title,
                "unique_id": None,
            }
        ],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED, entry.state
    registry = er.async_get(hass)
    (entity,) = [
        e
        for e in er.async_entries_for_config_entry(registry, entry.entry_id)
        if e.domain == "conversation"
    ]
    return entry, entity.entity_id


async def async_fill_session(
    hass: HomeAssistant, entry: MockConfigEntry, speaker: str
) -> int:
    """Fill the speaker's session buffer to its cap; return the messages held."""
    memory = entry.runtime_data.memory
    sessions = memory.sessions
    now = time.time()
    # Enough exchanges to hit the message cap (or the character budget first).
    for index in range(sessions.max_messages):
        user, answer = conversation_turn(index)
        sessions.append(speaker, user, answer, now)
    return len(memory.history(speaker))


async def async_add_facts(entry: MockConfigEntry, speaker: str, count: int = 30) -> int:
    """Add ``count`` pinned facts for the speaker through the Memory API."""
    memory = entry.runtime_data.memory
    for text in FACTS[:count]:
        await memory.async_add_fact(speaker, text)
    return len(memory.list_facts(speaker))


# --- numbers ------------------------------------------------------------------


def percentile(samples: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (``fraction`` in 0..1)."""
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), round(fraction * len(ordered) + 0.5)))
    return ordered[rank - 1]


def summary(samples: Sequence[float]) -> dict[str, float]:
    """Median, p90, mean, min and max of ``samples``."""
    return {
        "median": statistics.median(samples),
        "p90": percentile(samples, 0.9),
        "mean": statistics.fmean(samples),
        "min": min(samples),
        "max": max(samples),
    }


def verdict(ok: bool) -> str:
    """PASS or MISS, as docs/benchmarks.md prints it."""
    return "PASS" if ok else "MISS"
