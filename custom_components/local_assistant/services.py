"""Admin services to manage memory: sessions and facts."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import (
    HomeAssistant,
    ServiceCall,
    ServiceResponse,
    SupportsResponse,
    callback,
)
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.service import async_register_admin_service
from homeassistant.util import dt as dt_util
import voluptuous as vol

from .const import (
    ATTR_CONFIG_ENTRY_ID,
    ATTR_FACT_ID,
    ATTR_INCLUDE_HISTORY,
    ATTR_SPEAKER,
    ATTR_TEXT,
    DOMAIN,
    SERVICE_ADD_FACT,
    SERVICE_CLEAR_FACTS,
    SERVICE_FORGET_SESSION,
    SERVICE_LIST_FACTS,
    SERVICE_REMOVE_FACT,
    SERVICE_RESTORE_FACT,
)
from .memory.facts import FactRefused

if TYPE_CHECKING:
    from .memory.facts import Fact
    from .memory.manager import Memory

SPEAKER_SCHEMA = vol.Schema(
    {
        vol.Required(ATTR_CONFIG_ENTRY_ID): cv.string,
        vol.Required(ATTR_SPEAKER): cv.string,
    }
)
TEXT_SCHEMA = SPEAKER_SCHEMA.extend({vol.Required(ATTR_TEXT): cv.string})
FACT_ID_SCHEMA = SPEAKER_SCHEMA.extend({vol.Required(ATTR_FACT_ID): cv.string})
CLEAR_SCHEMA = SPEAKER_SCHEMA.extend(
    {vol.Optional(ATTR_INCLUDE_HISTORY, default=False): cv.boolean}
)


_TIMES = ("created", "updated", "last_used")


def _iso(timestamp: float | None) -> str | None:
    """A stored POSIX time as the ISO 8601 text HA's templates and UI read."""
    if timestamp is None:
        return None
    return dt_util.utc_from_timestamp(timestamp).isoformat()


def fact_to_dict(fact: Fact) -> dict[str, Any]:
    """A fact as service response data, its times in ISO 8601."""
    data = asdict(fact)
    for key in _TIMES:
        data[key] = _iso(data[key])
    return data


async def _async_target(hass: HomeAssistant, call: ServiceCall) -> tuple[Memory, str]:
    """The loaded entry's memory and the speaker key the call names."""
    entry_id = call.data[ATTR_CONFIG_ENTRY_ID]
    entry = hass.config_entries.async_get_entry(entry_id)
    if entry is None or entry.domain != DOMAIN:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="entry_not_found",
            translation_placeholders={"entry_id": entry_id},
        )
    if entry.state is not ConfigEntryState.LOADED:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="entry_not_loaded",
            translation_placeholders={"entry_id": entry_id},
        )
    memory: Memory = entry.runtime_data.memory
    ref = call.data[ATTR_SPEAKER]
    if (speaker := await memory.async_resolve_speaker_ref(ref)) is None:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="unknown_speaker",
            translation_placeholders={"speaker": ref},
        )
    return memory, speaker


def _invalid(key: str, **placeholders: str) -> ServiceValidationError:
    return ServiceValidationError(
        translation_domain=DOMAIN,
        translation_key=key,
        translation_placeholders=placeholders or None,
    )


def _refused(err: FactRefused) -> ServiceValidationError:
    """Each refusal has its own message; `limit` fills the one that names it."""
    return ServiceValidationError(
        translation_domain=DOMAIN,
        translation_key=err.reason,
        translation_placeholders={"limit": str(err.limit)},
    )


async def _async_forget_session(call: ServiceCall) -> ServiceResponse:
    memory, speaker = await _async_target(call.hass, call)
    return {"speaker": speaker, "forgotten": memory.forget_session(speaker)}


async def _async_list_facts(call: ServiceCall) -> ServiceResponse:
    memory, speaker = await _async_target(call.hass, call)
    return {
        "speaker": speaker,
        "facts": [fact_to_dict(fact) for fact in memory.list_facts(speaker)],
        "history": [
            {
                "fact": fact_to_dict(entry.fact),
                "reason": entry.reason,
                "at": _iso(entry.at),
                "replaced_by": entry.replaced_by,
            }
            for entry in memory.fact_history(speaker)
        ],
    }


async def _async_add_fact(call: ServiceCall) -> ServiceResponse:
    memory, speaker = await _async_target(call.hass, call)
    try:
        fact = await memory.async_add_fact(speaker, call.data[ATTR_TEXT])
    except FactRefused as err:
        raise _refused(err) from err
    return {"speaker": speaker, "fact": fact_to_dict(fact)}


async def _async_remove_fact(call: ServiceCall) -> ServiceResponse:
    memory, speaker = await _async_target(call.hass, call)
    try:
        fact = await memory.async_remove_fact(speaker, call.data[ATTR_FACT_ID])
    except KeyError as err:
        raise _invalid("fact_not_found", fact_id=call.data[ATTR_FACT_ID]) from err
    return {"speaker": speaker, "fact": fact_to_dict(fact)}


async def _async_clear_facts(call: ServiceCall) -> ServiceResponse:
    memory, speaker = await _async_target(call.hass, call)
    cleared = await memory.async_clear_facts(
        speaker, include_history=call.data[ATTR_INCLUDE_HISTORY]
    )
    return {"speaker": speaker, "cleared": cleared}


async def _async_restore_fact(call: ServiceCall) -> ServiceResponse:
    memory, speaker = await _async_target(call.hass, call)
    try:
        fact = await memory.async_restore_fact(speaker, call.data[ATTR_FACT_ID])
    except KeyError as err:
        raise _invalid("fact_not_found", fact_id=call.data[ATTR_FACT_ID]) from err
    except FactRefused as err:
        raise _refused(err) from err
    return {"speaker": speaker, "fact": fact_to_dict(fact)}


@callback
def async_setup_services(hass: HomeAssistant) -> None:
    """Register the memory services (admin only)."""
    for name, handler, schema, response in (
        (
            SERVICE_FORGET_SESSION,
            _async_forget_session,
            SPEAKER_SCHEMA,
            SupportsResponse.OPTIONAL,
        ),
        (SERVICE_LIST_FACTS, _async_list_facts, SPEAKER_SCHEMA, SupportsResponse.ONLY),
        (SERVICE_ADD_FACT, _async_add_fact, TEXT_SCHEMA, SupportsResponse.OPTIONAL),
        (
            SERVICE_REMOVE_FACT,
            _async_remove_fact,
            FACT_ID_SCHEMA,
            SupportsResponse.OPTIONAL,
        ),
        (
            SERVICE_CLEAR_FACTS,
            _async_clear_facts,
            CLEAR_SCHEMA,
            SupportsResponse.OPTIONAL,
        ),
        (
            SERVICE_RESTORE_FACT,
            _async_restore_fact,
            FACT_ID_SCHEMA,
            SupportsResponse.OPTIONAL,
        ),
    ):
        async_register_admin_service(
            hass, DOMAIN, name, handler, schema, supports_response=response
        )
