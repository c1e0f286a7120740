"""Options of older versions: still read, and the user asked to update them.

An agent set up before the sea options by kind has one list of every sea
sensor. It is read as it is (tools/sea.py ``old_list_kinds``), and a repair
issue asks the user to put each sensor in its field. The agent's form shows
the list's sensors in the fields by kind, as they are read (flows/agent.py), so
saving it for any reason keeps them there and drops the list, and the reload
that follows drops the issue. The
issues are not persistent: each set-up raises them again while a list is
left, and the entry's unload removes them, so they never outlive the agent
or the entry.
"""

from __future__ import annotations

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir

from .const import DOMAIN, ISSUE_SEA_SENSORS, SUBENTRY_CONVERSATION
from .tools.sea import old_sea_list


def sea_issue_id(subentry_id: str) -> str:
    """The repair issue asking to sort an agent's sea sensors by kind."""
    return f"{ISSUE_SEA_SENSORS}_{subentry_id}"


@callback
def async_flag_old_options(hass: HomeAssistant, entry: ConfigEntry) -> CALLBACK_TYPE:
    """Raise the issue of each agent with an old sea list; undo it on unload."""
    raised: list[str] = []
    for subentry in entry.subentries.values():
        if subentry.subentry_type != SUBENTRY_CONVERSATION:
            continue
        if sensors := old_sea_list(subentry.data):
            issue_id = sea_issue_id(subentry.subentry_id)
            ir.async_create_issue(
                hass,
                DOMAIN,
                issue_id,
                is_fixable=False,
                severity=ir.IssueSeverity.WARNING,
                translation_key=ISSUE_SEA_SENSORS,
                translation_placeholders={
                    "agent": subentry.title,
                    "sensors": ", ".join(sensors),
                },
            )
            raised.append(issue_id)

    @callback
    def _async_clear() -> None:
        for issue_id in raised:
            ir.async_delete_issue(hass, DOMAIN, issue_id)

    return _async_clear
