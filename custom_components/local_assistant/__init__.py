"""The Local Assistant integration: a conversation agent for small local models."""

from __future__ import annotations

from dataclasses import dataclass

from homeassistant.config_entries import ConfigEntry
from homeassistant.const import CONF_API_KEY, Platform
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConfigEntryAuthFailed, ConfigEntryNotReady
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.typing import ConfigType
import openai

from .const import (
    CONF_BASE_URL,
    CONF_KEEP_MODEL_LOADED,
    CONF_TIMEOUT,
    DEFAULT_KEEP_MODEL_LOADED,
    DEFAULT_TIMEOUT,
    DOMAIN,
    LOGGER,
)
from .llm.figures import TurnLog
from .memory.manager import Memory, async_remove_memory
from .old_options import async_flag_old_options
from .server.client import async_create_client, async_list_models, is_auth_error
from .server.health import (
    async_forget as async_forget_health,
    async_forget_disabled_entries,
    async_report,
)
from .server.scheduler import ServerScheduler
from .server.url import redact_url
from .server.warmth import PromptCacheKeeper
from .services import async_setup_services

PLATFORMS = (Platform.AI_TASK, Platform.CONVERSATION)
CONFIG_SCHEMA = cv.config_entry_only_config_schema(DOMAIN)


@dataclass(slots=True)
class LocalAssistantData:
    """What a loaded entry holds."""

    client: openai.AsyncOpenAI
    memory: Memory
    # Replies first, then one background call at a time (warm-ups, local
    # extraction, re-warms) on the agent's server.
    scheduler: ServerScheduler
    # What the next turn sends stays in the server's prompt cache.
    prompt_cache: PromptCacheKeeper
    # The last turns' figures (tokens, cache, times), for diagnostics.
    turns: TurnLog


type LocalAssistantConfigEntry = ConfigEntry[LocalAssistantData]


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Register the services once for all entries."""
    async_setup_services(hass)
    async_forget_disabled_entries(hass)
    return True


async def async_setup_entry(
    hass: HomeAssistant, entry: LocalAssistantConfigEntry
) -> bool:
    """Connect to the server, load memory and set up the agents."""
    client = await async_create_client(
        hass,
        entry.data[CONF_BASE_URL],
        entry.data.get(CONF_API_KEY),
        entry.options.get(CONF_TIMEOUT, DEFAULT_TIMEOUT),
    )
    try:
        await async_list_models(client)
    except openai.OpenAIError as err:
        async_report(hass, entry, err)
        placeholders = {"base_url": redact_url(entry.data[CONF_BASE_URL])}
        if is_auth_error(err):
            # Starts the reauth flow: the user enters the new key in the UI.
            raise ConfigEntryAuthFailed(
                translation_domain=DOMAIN,
                translation_key="setup_invalid_auth",
                translation_placeholders=placeholders,
            ) from err
        raise ConfigEntryNotReady(
            translation_domain=DOMAIN,
            translation_key="setup_cannot_connect",
            translation_placeholders=placeholders,
        ) from err
    async_report(hass, entry)

    scheduler = ServerScheduler()
    prompt_cache = PromptCacheKeeper(
        hass,
        entry,
        client,
        scheduler,
        keep_loaded=entry.options.get(
            CONF_KEEP_MODEL_LOADED, DEFAULT_KEEP_MODEL_LOADED
        ),
    )
    # Registered before anything else may fail: HA runs these also when the
    # set-up raises, so the keeper's timer never outlives a failed set-up.
    entry.async_on_unload(prompt_cache.async_shutdown)
    memory = await Memory.async_create(hass, entry, client, prompt_cache)
    entry.runtime_data = LocalAssistantData(
        client=client,
        memory=memory,
        scheduler=scheduler,
        prompt_cache=prompt_cache,
        turns=TurnLog(),
    )
    entry.async_on_unload(memory.async_shutdown)

    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    entry.async_on_unload(async_flag_old_options(hass, entry))
    entry.async_on_unload(entry.add_update_listener(_async_update_listener))
    LOGGER.debug("Set up %s", entry.title)
    return True


async def _async_update_listener(
    hass: HomeAssistant, entry: LocalAssistantConfigEntry
) -> None:
    """Reload when options change or an agent is added, changed or removed."""
    await hass.config_entries.async_reload(entry.entry_id)


async def async_unload_entry(
    hass: HomeAssistant, entry: LocalAssistantConfigEntry
) -> bool:
    """Unload the agents; memory shuts down through async_on_unload."""
    return await hass.config_entries.async_unload_platforms(entry, PLATFORMS)


async def async_remove_entry(
    hass: HomeAssistant, entry: LocalAssistantConfigEntry
) -> None:
    """Delete the entry's stored facts (and its repair issue) with the entry."""
    async_forget_health(hass, entry.entry_id)
    await async_remove_memory(hass, entry)
