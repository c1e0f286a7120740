"""Diagnostics: settings, server health and counts, secrets and personal data redacted.

They must work while the entry is not loaded (the server was down at start, or
refused the key): that is when people download them. Memory counts, the prompt
cache's counters and the last turns' figures (numbers only) are only there while
the entry is loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_API_KEY
from homeassistant.core import HomeAssistant

from .const import (
    CONF_BASE_URL,
    CONF_EXTRACTION_API_KEY,
    CONF_EXTRACTION_BASE_URL,
)
from .server.health import DATA_HEALTH
from .server.url import redact_url

if TYPE_CHECKING:
    from . import LocalAssistantConfigEntry

TO_REDACT = {CONF_API_KEY, CONF_EXTRACTION_API_KEY, "device_people", "prompt"}
# URLs stay readable (scheme, host, port, path); credentials inside them go.
URL_KEYS = (CONF_BASE_URL, CONF_EXTRACTION_BASE_URL)


def _redacted(data: Mapping[str, Any]) -> dict[str, Any]:
    redacted: dict[str, Any] = async_redact_data(dict(data), TO_REDACT)
    for key in URL_KEYS:
        if isinstance(url := redacted.get(key), str):
            redacted[key] = redact_url(url)
    return redacted


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: LocalAssistantConfigEntry
) -> dict[str, Any]:
    """Settings, server health and memory counts; never keys, transcripts or fact text."""
    loaded = entry.state is ConfigEntryState.LOADED
    health = hass.data.get(DATA_HEALTH, {}).get(entry.entry_id)
    return {
        "state": entry.state.value,
        "data": _redacted(entry.data),
        "options": _redacted(entry.options),
        "agents": [
            {"type": subentry.subentry_type, "data": _redacted(subentry.data)}
            for subentry in entry.subentries.values()
        ],
        "server": None
        if health is None
        else {
            "reachable": health.down_since is None,
            "failed_attempts": health.failures,
            "down_since": health.down_since,
        },
        "memory": entry.runtime_data.memory.diagnostics() if loaded else None,
        "prompt_cache": entry.runtime_data.prompt_cache.diagnostics()
        if loaded
        else None,
        # Numbers only: tokens, cache use and times of the last turns.
        "recent_turns": entry.runtime_data.turns.recent() if loaded else None,
    }
