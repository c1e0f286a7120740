"""Is the model server reachable? One log line each way, and a repair issue.

Every call to the server reports here: entry set-up (and each set-up retry)
and every streamed completion of a reply or an AI task.

* The first failure to reach the server logs one info line, the first success
  after that another; nothing in between (``log-when-unavailable``).
* When the server has stayed unreachable for at least
  :data:`UNREACHABLE_AFTER` (10 minutes) **and** at least
  :data:`UNREACHABLE_MIN_FAILURES` (3) attempts in a row failed, a repair issue
  is raised. Both conditions: one failed request long ago is not "down for a
  while", and three quick retries are not either. Set-up retries (HA backs off
  up to a few minutes apart) reach both within about 10 minutes; with
  voice use, the third failed reply at least 10 minutes after the first.
* The next successful call deletes the issue (also one left over from before a
  restart). A disabled entry calls the server no more: disabling it deletes the
  issue, which could never go away by itself.

Only transport failures count as unreachable: refused connections, DNS
errors, timeouts, a stream cut off. An HTTP error status proves the server is
there, so it counts as reachable.

The state lives in ``hass.data`` per entry, not in ``runtime_data``, because it
must survive failed set-up attempts (which have no runtime data).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from homeassistant.config_entries import (
    SIGNAL_CONFIG_ENTRY_CHANGED,
    ConfigEntry,
    ConfigEntryChange,
)
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.util import dt as dt_util
from homeassistant.util.hass_dict import HassKey
import httpx
import openai

from ..const import CONF_BASE_URL, DOMAIN, LOGGER
from .url import redact_url

UNREACHABLE_AFTER: Final = timedelta(minutes=10)
UNREACHABLE_MIN_FAILURES: Final = 3
ISSUE_UNREACHABLE: Final = "server_unreachable"

DATA_HEALTH: HassKey[dict[str, ServerHealth]] = HassKey(f"{DOMAIN}_health")


def is_unreachable(err: BaseException) -> bool:
    """Whether an error means the server could not be reached at all."""
    return isinstance(
        err, openai.APIConnectionError | httpx.TransportError | httpx.TimeoutException
    )


def issue_id(entry_id: str) -> str:
    """The repair issue of one entry."""
    return f"{ISSUE_UNREACHABLE}_{entry_id}"


@dataclass(slots=True)
class ServerHealth:
    """Reachability of one entry's server."""

    entry_id: str
    failures: int = 0
    down_since: datetime | None = None
    # Whether an issue may exist (also one raised before a restart).
    issue_may_exist: bool = True

    @callback
    def async_failed(
        self, hass: HomeAssistant, entry: ConfigEntry, err: BaseException
    ) -> None:
        """Count a failed attempt; raise the issue when it has lasted."""
        now = dt_util.utcnow()
        if self.down_since is None:
            self.down_since = now
            # Info, as HA's log-when-unavailable rule asks: the failed request
            # itself is already logged as a warning where it happened.
            LOGGER.info(
                "The model server at %s is unreachable (%s)",
                redact_url(entry.data[CONF_BASE_URL]),
                type(err).__name__,
            )
        self.failures += 1
        if (
            self.failures >= UNREACHABLE_MIN_FAILURES
            and now - self.down_since >= UNREACHABLE_AFTER
        ):
            minutes = int((now - self.down_since).total_seconds() // 60)
            ir.async_create_issue(
                hass,
                DOMAIN,
                issue_id(self.entry_id),
                is_fixable=False,
                severity=ir.IssueSeverity.ERROR,
                translation_key=ISSUE_UNREACHABLE,
                translation_placeholders={
                    "title": entry.title,
                    "base_url": redact_url(entry.data[CONF_BASE_URL]),
                    "minutes": str(minutes),
                    "failures": str(self.failures),
                },
            )
            self.issue_may_exist = True

    @callback
    def async_reached(self, hass: HomeAssistant, entry: ConfigEntry) -> None:
        """The server answered: forget the outage and delete the issue."""
        if self.down_since is not None:
            LOGGER.info(
                "The model server at %s answers again",
                redact_url(entry.data[CONF_BASE_URL]),
            )
        self.failures = 0
        self.down_since = None
        if self.issue_may_exist:
            ir.async_delete_issue(hass, DOMAIN, issue_id(self.entry_id))
            self.issue_may_exist = False


@callback
def async_get_health(hass: HomeAssistant, entry: ConfigEntry) -> ServerHealth:
    """The entry's tracker, created on first use."""
    trackers = hass.data.setdefault(DATA_HEALTH, {})
    if (health := trackers.get(entry.entry_id)) is None:
        health = trackers[entry.entry_id] = ServerHealth(entry.entry_id)
    return health


@callback
def async_report(
    hass: HomeAssistant, entry: ConfigEntry, err: BaseException | None = None
) -> None:
    """Report one call to the server: ``err`` is what it raised, if anything."""
    health = async_get_health(hass, entry)
    if err is not None and is_unreachable(err):
        health.async_failed(hass, entry, err)
    else:
        health.async_reached(hass, entry)


@callback
def async_forget(hass: HomeAssistant, entry_id: str) -> None:
    """The entry is removed: drop its tracker and its issue."""
    hass.data.get(DATA_HEALTH, {}).pop(entry_id, None)
    ir.async_delete_issue(hass, DOMAIN, issue_id(entry_id))


@callback
def async_forget_disabled_entries(hass: HomeAssistant) -> None:
    """Forget an entry the user disables, even one still retrying its set-up.

    HA unloads no entry that never loaded, so the signal of its changed
    state, not the unload, tells it.
    """

    @callback
    def _entry_changed(_change: ConfigEntryChange, entry: ConfigEntry) -> None:
        if entry.domain == DOMAIN and entry.disabled_by is not None:
            async_forget(hass, entry.entry_id)

    async_dispatcher_connect(hass, SIGNAL_CONFIG_ENTRY_CHANGED, _entry_changed)
