"""The dev bootstrap's own config entry: it holds the demo voice satellite device.

Only created by the bootstrap (an import flow on the first start), never by a person:
a device must belong to a config entry, and the satellite must not belong to
local_assistant's (that one's devices are its agents).
"""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import ConfigFlow, ConfigFlowResult

DOMAIN = "local_assistant_dev"
TITLE = "Demo voice satellite"


class LocalAssistantDevConfigFlow(ConfigFlow, domain=DOMAIN):
    """One entry, from the bootstrap."""

    VERSION = 1

    async def async_step_import(self, import_data: dict[str, Any]) -> ConfigFlowResult:
        """Create the entry that holds the demo devices."""
        await self.async_set_unique_id(DOMAIN)
        self._abort_if_unique_id_configured()
        return self.async_create_entry(title=TITLE, data={})
