"""Dev-only bootstrap for the scripts/develop Home Assistant instance.

Not part of the integration and never shipped. Once Home Assistant has started it:

1. exposes the demo entities to Assist and puts them in areas (first start only, so
   later changes made in the UI stick);
2. links a person to the owner user, as onboarding would have done, and adds a demo
   voice satellite device ("Kitchen Satellite", in a config entry of this bootstrap) so
   that *Count a satellite as a person* has a satellite to map;
3. adds a ``local_assistant`` server and agent through the integration's own config
   flow when there is no entry yet, or says in one warning why it could not, and gives
   that agent the live-data tools for the demo weather and sea sensors;
4. makes that agent the conversation agent of the preferred Assist pipeline (once).

It lists ``local_assistant`` under ``after_dependencies``, not ``dependencies``: the
integration is set up first when it has an entry, but a missing or broken integration
does not take the demo setup down with it.
"""

from __future__ import annotations

from collections.abc import Mapping
import logging
from typing import Any, Final

import aiohttp
from homeassistant.components import conversation, person
from homeassistant.components.assist_pipeline.pipeline import (
    async_get_pipeline,
    async_update_pipeline,
)
from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.config_entries import (
    SOURCE_IMPORT,
    SOURCE_USER,
    ConfigEntry,
    ConfigFlowResult,
)
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType, UnknownHandler
from homeassistant.helpers import (
    area_registry as ar,
    config_validation as cv,
    device_registry as dr,
    entity_registry as er,
    selector,
)
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.start import async_at_started
from homeassistant.helpers.storage import Store
from homeassistant.helpers.typing import ConfigType
import voluptuous as vol

_LOGGER = logging.getLogger(__name__)

DOMAIN: Final = "local_assistant_dev"
TARGET_DOMAIN: Final = "local_assistant"
PIPELINE_DOMAIN: Final = "assist_pipeline"
PERSON_DOMAIN: Final = "person"
ASSISTANT: Final = conversation.DOMAIN

CONF_BASE_URL: Final = "base_url"
CONF_API_KEY: Final = "api_key"
CONF_MODEL: Final = "model"
CONF_EXPOSE: Final = "expose"
CONF_AREAS: Final = "areas"

DEFAULT_BASE_URL: Final = "http://127.0.0.1:28100/v1"
SATELLITE_ID: Final = "kitchen_satellite"
SATELLITE_NAME: Final = "Kitchen Satellite"
SUBENTRY_CONVERSATION: Final = "conversation"
# The live-data tools of the agent added on the first start: the demo weather and sea
# sensors of configuration.yaml, and Tarifa's kitesurf window (Levante and Poniente).
LIVE_DATA: Final[dict[str, Any]] = {
    "weather_entity": "weather.tarifa",
    "sea_wind": ["sensor.wind_speed"],
    "sea_gusts": ["sensor.wind_gust"],
    "sea_wind_direction": ["sensor.wind_direction"],
    "sea_wave_height": ["sensor.wave_height"],
    "sea_wave_period": ["sensor.wave_period"],
    "sea_water_temperature": ["sensor.water_temperature"],
    "sea_tide": ["sensor.tide_height"],
    "kite_min_wind_kn": 15,
    "kite_max_wind_kn": 30,
    "kite_directions": ["E", "W"],
}
MODEL_AUTO: Final = "auto"
MAX_FLOW_STEPS: Final = 5
MODELS_TIMEOUT: Final = aiohttp.ClientTimeout(total=5)

# One-time actions already done, so the UI stays in charge afterwards.
STORE_VERSION: Final = 1
DONE_EXPOSE: Final = "exposed"
DONE_PERSON: Final = "person"
DONE_PIPELINE: Final = "pipeline"

CONFIG_SCHEMA = vol.Schema(
    {
        DOMAIN: vol.Schema(
            {
                vol.Optional(CONF_BASE_URL, default=DEFAULT_BASE_URL): cv.string,
                vol.Optional(CONF_MODEL, default=MODEL_AUTO): cv.string,
                vol.Optional(CONF_EXPOSE, default=list): cv.entity_ids,
                vol.Optional(CONF_AREAS, default=dict): vol.Schema(
                    {cv.entity_id: cv.string}
                ),
            }
        )
    },
    extra=vol.ALLOW_EXTRA,
)


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Run the bootstrap once Home Assistant has started."""
    conf: dict[str, Any] = config.get(DOMAIN) or CONFIG_SCHEMA({DOMAIN: {}})[DOMAIN]

    async def _at_started(hass: HomeAssistant) -> None:
        await _async_bootstrap(hass, conf)

    async_at_started(hass, _at_started)
    return True


async def _async_bootstrap(hass: HomeAssistant, conf: Mapping[str, Any]) -> None:
    """Do every step; one failing step does not stop the others."""
    store: Store[dict[str, bool]] = Store(hass, STORE_VERSION, DOMAIN)
    done: dict[str, bool] = await store.async_load() or {}

    if not done.get(DONE_EXPOSE):
        done[DONE_EXPOSE] = _expose_demo_entities(
            hass, conf[CONF_EXPOSE], conf[CONF_AREAS]
        )
    if not done.get(DONE_PERSON):
        done[DONE_PERSON] = await _async_ensure_owner_person(hass)
    if not hass.config_entries.async_entries(DOMAIN):
        await hass.config_entries.flow.async_init(
            DOMAIN, context={"source": SOURCE_IMPORT}, data={}
        )

    if hass.config_entries.async_entries(TARGET_DOMAIN):
        _LOGGER.debug("A %s entry exists; not adding another", TARGET_DOMAIN)
    else:
        await _async_add_entry(hass, conf[CONF_BASE_URL], conf[CONF_MODEL])

    if not done.get(DONE_PIPELINE):
        done[DONE_PIPELINE] = await _async_prefer_agent(hass)

    await store.async_save(done)


async def async_setup_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
    """The demo voice satellite: a device with no entity, like a satellite would have."""
    dr.async_get(hass).async_get_or_create(
        config_entry_id=entry.entry_id,
        identifiers={(DOMAIN, SATELLITE_ID)},
        name=SATELLITE_NAME,
        manufacturer="Local Assistant dev",
        model="Demo voice satellite",
        suggested_area="Kitchen",
    )
    return True


async def async_unload_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
    """Nothing runs."""
    return True


def _expose_demo_entities(
    hass: HomeAssistant, entity_ids: list[str], areas: Mapping[str, str]
) -> bool:
    """Expose the demo entities to Assist and put them in their areas."""
    missing = [eid for eid in entity_ids if hass.states.get(eid) is None]
    if missing:
        # Typo in configuration.yaml or a template that failed: say so, try next start.
        _LOGGER.warning("Demo entities not found, not exposed: %s", ", ".join(missing))
    for entity_id in entity_ids:
        if entity_id not in missing:
            async_expose_entity(hass, ASSISTANT, entity_id, True)

    area_registry = ar.async_get(hass)
    entity_registry = er.async_get(hass)
    for entity_id, area_name in areas.items():
        entry = entity_registry.async_get(entity_id)
        if entry is None:
            _LOGGER.warning("%s has no unique_id, cannot put it in an area", entity_id)
            continue
        if entry.area_id is None:
            area = area_registry.async_get_or_create(area_name)
            entity_registry.async_update_entity(entity_id, area_id=area.id)

    _LOGGER.info("Exposed %d demo entities to Assist", len(entity_ids) - len(missing))
    return not missing


async def _async_ensure_owner_person(hass: HomeAssistant) -> bool:
    """Link a person to the owner, as the onboarding user step does."""
    owner = await hass.auth.async_get_owner()
    if owner is None:
        return False
    if not any(
        state.attributes.get("user_id") == owner.id
        for state in hass.states.async_all(PERSON_DOMAIN)
    ):
        await person.async_create_person(hass, owner.name or "Dev", user_id=owner.id)
    return True


async def _async_add_entry(hass: HomeAssistant, base_url: str, model: str) -> None:
    """Run the integration's config flow as a user would, without the UI."""
    flow_manager = hass.config_entries.flow
    try:
        result: ConfigFlowResult = await flow_manager.async_init(
            TARGET_DOMAIN, context={"source": SOURCE_USER}
        )
        for _ in range(MAX_FLOW_STEPS):
            if result["type"] is not FlowResultType.FORM:
                break
            flow_id = result["flow_id"]
            if errors := result.get("errors"):
                flow_manager.async_abort(flow_id)
                _warn_flow_errors(base_url, result["step_id"], errors)
                return
            user_input = await _async_fill_form(hass, result, base_url, model)
            if user_input is None:
                flow_manager.async_abort(flow_id)
                return
            result = await flow_manager.async_configure(flow_id, user_input)
    except UnknownHandler:
        # Missing, or failed to import (HA has logged why): nothing to add.
        _LOGGER.warning(
            "The %s integration could not be loaded, so no agent was added; see the "
            "errors above",
            TARGET_DOMAIN,
        )
        return
    except Exception:
        # A half-written integration must not break the dev instance: log and go on.
        _LOGGER.exception(
            "Could not add %s through its config flow; add it in Settings > "
            "Devices & services",
            TARGET_DOMAIN,
        )
        return

    match result["type"]:
        case FlowResultType.CREATE_ENTRY:
            _LOGGER.info(
                "Added %s for %s with model %s",
                TARGET_DOMAIN,
                base_url,
                _submitted_model(result) or "?",
            )
            if isinstance(entry := result.get("result"), ConfigEntry):
                _add_live_data_tools(hass, entry)
        case FlowResultType.ABORT:
            _LOGGER.warning(
                "The %s config flow aborted: %s", TARGET_DOMAIN, result.get("reason")
            )
        case _:
            _LOGGER.warning(
                "The %s config flow did not finish (last step %s); add it in "
                "Settings > Devices & services",
                TARGET_DOMAIN,
                result.get("step_id"),
            )
            if flow_id := result.get("flow_id"):
                flow_manager.async_abort(flow_id)


def _warn_flow_errors(base_url: str, step_id: str, errors: Mapping[str, str]) -> None:
    """One clear warning; the most likely case gets its own words."""
    if "cannot_connect" in errors.values():
        _LOGGER.warning(
            "No OpenAI-compatible model server answers at %s, so the Local Assistant "
            "agent was not added. Start the server (e.g. Swama) and restart, or add "
            "the agent later in Settings > Devices & services > Add integration > "
            "Local Assistant. Another URL: LOCAL_ASSISTANT_BASE_URL=... scripts/develop",
            base_url,
        )
        return
    _LOGGER.warning(
        "The %s config flow refused step %s with %s; add the agent later in "
        "Settings > Devices & services",
        TARGET_DOMAIN,
        step_id,
        dict(errors),
    )


async def _async_fill_form(
    hass: HomeAssistant, result: ConfigFlowResult, base_url: str, model: str
) -> dict[str, Any] | None:
    """Answer a form from the values we know, leaving the rest to its defaults."""
    schema = result.get("data_schema")
    if schema is None:
        return {}
    user_input: dict[str, Any] = {}
    for marker, validator in schema.schema.items():
        key = str(marker)
        if key == CONF_BASE_URL:
            user_input[key] = base_url
        elif key == CONF_API_KEY:
            user_input[key] = ""
        elif key == CONF_MODEL:
            chosen = await _async_pick_model(hass, marker, validator, base_url, model)
            if chosen is None:
                _LOGGER.warning(
                    "The server at %s lists no model; set LOCAL_ASSISTANT_MODEL or add "
                    "the agent later in Settings > Devices & services",
                    base_url,
                )
                return None
            user_input[key] = chosen
        elif isinstance(marker, vol.Required) and _default(marker) is None:
            _LOGGER.warning(
                "The %s config flow asks for %r in step %s, which this bootstrap "
                "cannot answer; add the agent in Settings > Devices & services",
                TARGET_DOMAIN,
                key,
                result.get("step_id"),
            )
            return None
    return user_input


async def _async_pick_model(
    hass: HomeAssistant, marker: Any, validator: Any, base_url: str, model: str
) -> str | None:
    """Configured model, else the form's default, else the first one offered."""
    if model and model != MODEL_AUTO:
        return model
    if (default := _default(marker)) is not None:
        return str(default)
    if isinstance(validator, selector.SelectSelector):
        for option in validator.config.get("options", []):
            return str(option["value"] if isinstance(option, Mapping) else option)
    return await _async_first_server_model(hass, base_url)


def _default(marker: Any) -> Any:
    """The default a voluptuous marker fills in, or None."""
    default = getattr(marker, "default", vol.UNDEFINED)
    if default is vol.UNDEFINED:
        return None
    return default() if callable(default) else default


async def _async_first_server_model(hass: HomeAssistant, base_url: str) -> str | None:
    """GET {base_url}/models, the OpenAI way, and return the first id."""
    session = async_get_clientsession(hass)
    try:
        async with session.get(
            f"{base_url.rstrip('/')}/models", timeout=MODELS_TIMEOUT
        ) as resp:
            resp.raise_for_status()
            payload = await resp.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as err:
        _LOGGER.debug("Listing models at %s failed: %s", base_url, err)
        return None
    models = payload.get("data") if isinstance(payload, dict) else None
    if models and isinstance(models[0], dict) and models[0].get("id"):
        return str(models[0]["id"])
    return None


def _add_live_data_tools(hass: HomeAssistant, entry: ConfigEntry) -> None:
    """Give the new agent the demo's weather, sea and kitesurf settings.

    The config flow creates the agent with defaults only; this is what a user would
    then set in the agent's reconfigure form. Updating reloads the entry.
    """
    for subentry in list(entry.subentries.values()):
        if subentry.subentry_type == SUBENTRY_CONVERSATION:
            hass.config_entries.async_update_subentry(
                entry, subentry, data={**subentry.data, **LIVE_DATA}
            )
            _LOGGER.info("Agent %s has the live-data tools", subentry.title)


def _submitted_model(result: ConfigFlowResult) -> str | None:
    """The model of the agent subentry the flow created, if any."""
    entry = result.get("result")
    for subentry in getattr(entry, "subentries", {}).values():
        if model := subentry.data.get(CONF_MODEL):
            return str(model)
    return None


async def _async_prefer_agent(hass: HomeAssistant) -> bool:
    """Make our agent the conversation agent of the preferred Assist pipeline."""
    if PIPELINE_DOMAIN not in hass.config.components:
        return False
    entity_registry = er.async_get(hass)
    agent_ids = sorted(
        entry.entity_id
        for entry in entity_registry.entities.values()
        if entry.platform == TARGET_DOMAIN and entry.domain == conversation.DOMAIN
    )
    if not agent_ids:
        return False  # no agent yet: try again on the next start
    pipeline = async_get_pipeline(hass)  # the preferred one
    if pipeline.conversation_engine not in (conversation.HOME_ASSISTANT_AGENT, None):
        _LOGGER.debug(
            "Pipeline %s already uses %s; leaving it",
            pipeline.name,
            pipeline.conversation_engine,
        )
        return True
    await async_update_pipeline(hass, pipeline, conversation_engine=agent_ids[0])
    _LOGGER.info("Assist pipeline %s now uses %s", pipeline.name, agent_ids[0])
    return True
