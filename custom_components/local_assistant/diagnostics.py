"""Diagnostics: settings and counts, with secrets and personal data redacted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.core import HomeAssistant

from .const import CONF_API_KEY, CONF_EXTRACTION_API_KEY

if TYPE_CHECKING:
    from . import LocalAssistantConfigEntry

TO_REDACT = {CONF_API_KEY, CONF_EXTRACTION_API_KEY, "device_people", "prompt"}


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: LocalAssistantConfigEntry
) -> dict[str, Any]:
    """Settings and memory counts; never keys, transcripts or fact text."""
    return {
        "data": async_redact_data(dict(entry.data), TO_REDACT),
        "options": async_redact_data(dict(entry.options), TO_REDACT),
        "agents": [
            {
                "type": subentry.subentry_type,
                "data": async_redact_data(dict(subentry.data), TO_REDACT),
            }
            for subentry in entry.subentries.values()
        ],
        "memory": entry.runtime_data.memory.diagnostics(),
        "prompt_cache": entry.runtime_data.prompt_cache.diagnostics(),
        # Numbers only: tokens, cache use and times of the last turns.
        "recent_turns": entry.runtime_data.turns.recent(),
    }
