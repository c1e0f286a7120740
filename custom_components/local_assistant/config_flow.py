"""Config flow: one entry per model server, one subentry per agent.

The agent subentry flows live in ``flows/agent.py``, the options flow in
``flows/options.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from homeassistant.config_entries import (
    ConfigEntry,
    ConfigFlow,
    ConfigFlowResult,
    ConfigSubentryFlow,
    OptionsFlow,
)
from homeassistant.const import CONF_API_KEY, CONF_MODEL
from homeassistant.core import callback
from homeassistant.helpers.selector import (
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)
from homeassistant.helpers.typing import UNDEFINED, UndefinedType
import voluptuous as vol

from .const import (
    CONF_BASE_URL,
    CONF_EXTRACTION_API_KEY,
    CONF_EXTRACTION_BASE_URL,
    DEFAULT_AI_TASK_TITLE,
    DEFAULT_BASE_URL,
    DEFAULT_TITLE,
    DOMAIN,
    EXTRACTION_HOSTED,
    REAUTH_TARGET,
    SUBENTRY_AI_TASK,
    SUBENTRY_CONVERSATION,
)
from .flows.agent import (
    DEFAULT_AI_TASK_OPTIONS,
    DEFAULT_CONVERSATION_OPTIONS,
    AITaskSubentryFlow,
    ConversationSubentryFlow,
    model_errors,
    model_selector,
)
from .flows.options import LocalAssistantOptionsFlow
from .flows.server_check import async_check_server
from .server.url import normalize_base_url, redact_url, url_without_credentials

SECRET_TEXT = TextSelector(TextSelectorConfig(type=TextSelectorType.PASSWORD))


def _generated_title(base_url: str) -> str:
    """The entry's title names its server, never the credentials in its URL."""
    return f"{DEFAULT_TITLE} ({url_without_credentials(base_url)})"


class LocalAssistantConfigFlow(ConfigFlow, domain=DOMAIN):
    """Add a model server and its first agent."""

    VERSION = 1
    MINOR_VERSION = 1

    def __init__(self) -> None:
        """Start with nothing known."""
        self._server: dict[str, Any] = {}
        self._models: list[str] = []

    @staticmethod
    @callback
    def async_get_options_flow(config_entry: ConfigEntry) -> OptionsFlow:
        """Memory and connection settings for the whole server."""
        return LocalAssistantOptionsFlow()

    @classmethod
    @callback
    def async_get_supported_subentry_types(
        cls, config_entry: ConfigEntry
    ) -> dict[str, type[ConfigSubentryFlow]]:
        """Agents are subentries."""
        return {
            SUBENTRY_CONVERSATION: ConversationSubentryFlow,
            SUBENTRY_AI_TASK: AITaskSubentryFlow,
        }

    async def async_step_user(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for the server and check it answers."""
        errors: dict[str, str] = {}
        if user_input is not None:
            base_url = normalize_base_url(user_input[CONF_BASE_URL])
            api_key = (user_input.get(CONF_API_KEY) or "").strip()
            if self._server_known(base_url):
                return self.async_abort(reason="already_configured")
            self._models, error = await async_check_server(self.hass, base_url, api_key)
            if error:
                errors["base"] = error
            else:
                self._server = {CONF_BASE_URL: base_url, CONF_API_KEY: api_key}
                return await self.async_step_model()

        return self.async_show_form(
            step_id="user",
            data_schema=self.add_suggested_values_to_schema(
                vol.Schema(
                    {
                        vol.Required(CONF_BASE_URL): str,
                        vol.Optional(CONF_API_KEY): SECRET_TEXT,
                    }
                ),
                user_input or {CONF_BASE_URL: DEFAULT_BASE_URL},
            ),
            errors=errors,
        )

    async def async_step_model(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Pick the model the first agent talks to."""
        errors: dict[str, str] = {}
        if user_input is not None and self._server_known(self._server[CONF_BASE_URL]):
            # Another flow for the same server finished while this one waited.
            return self.async_abort(reason="already_configured")
        if user_input is not None and not (errors := model_errors(user_input)):
            model = user_input[CONF_MODEL].strip()
            return self.async_create_entry(
                title=_generated_title(self._server[CONF_BASE_URL]),
                data=self._server,
                subentries=[
                    {
                        "subentry_type": SUBENTRY_CONVERSATION,
                        "data": {CONF_MODEL: model, **DEFAULT_CONVERSATION_OPTIONS},
                        "title": DEFAULT_TITLE,
                        "unique_id": None,
                    },
                    {
                        "subentry_type": SUBENTRY_AI_TASK,
                        "data": {CONF_MODEL: model, **DEFAULT_AI_TASK_OPTIONS},
                        "title": DEFAULT_AI_TASK_TITLE,
                        "unique_id": None,
                    },
                ],
            )
        schema: dict[Any, Any] = {
            vol.Required(
                CONF_MODEL, default=self._models[0] if self._models else vol.UNDEFINED
            ): model_selector(self._models)
        }
        return self.async_show_form(
            step_id="model", data_schema=vol.Schema(schema), errors=errors
        )

    def _server_known(self, base_url: str, *, but: ConfigEntry | None = None) -> bool:
        """Whether another entry has this server, however its URL was written.

        Entries saved before URLs were normalized may be spelled otherwise
        ("HTTP://Host/v1/"), so both sides are normalized.
        """
        return any(
            normalize_base_url(entry.data.get(CONF_BASE_URL, "")) == base_url
            for entry in self._async_current_entries(include_ignore=False)
            if but is None or entry.entry_id != but.entry_id
        )

    def _async_update_and_reload(
        self,
        entry: ConfigEntry,
        *,
        data_updates: Mapping[str, Any] | UndefinedType = UNDEFINED,
        options: Mapping[str, Any] | UndefinedType = UNDEFINED,
        title: str | UndefinedType = UNDEFINED,
    ) -> ConfigFlowResult:
        """Update the entry and finish; it reloads once.

        A loaded entry has our update listener, which reloads it when the update
        changes it: async_update_reload_and_abort would reload it a second time
        (HA 2026.11 reports that use). An entry that is not loaded (set-up failed
        or retrying) has no listener and is set up again here.
        """
        if entry.update_listeners:
            return self.async_update_and_abort(
                entry, title=title, data_updates=data_updates, options=options
            )
        return self.async_update_reload_and_abort(
            entry, title=title, data_updates=data_updates, options=options
        )

    async def async_step_reauth(
        self, entry_data: Mapping[str, Any]
    ) -> ConfigFlowResult:
        """A server refused a key: at set-up, in a reply, or in fact extraction."""
        if entry_data.get(REAUTH_TARGET) == EXTRACTION_HOSTED:
            return await self.async_step_reauth_extraction()
        return await self.async_step_reauth_confirm()

    async def async_step_reauth_extraction(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for the hosted fact extractor's new key and check it is accepted."""
        entry = self._get_reauth_entry()
        base_url = entry.options.get(CONF_EXTRACTION_BASE_URL, "")
        errors: dict[str, str] = {}
        if user_input is not None:
            api_key = user_input.get(CONF_EXTRACTION_API_KEY) or ""
            _models, error = await async_check_server(self.hass, base_url, api_key)
            if error:
                errors["base"] = error
            else:
                return self._async_update_and_reload(
                    entry, options={**entry.options, CONF_EXTRACTION_API_KEY: api_key}
                )
        return self.async_show_form(
            step_id="reauth_extraction",
            data_schema=vol.Schema(
                {vol.Optional(CONF_EXTRACTION_API_KEY): SECRET_TEXT}
            ),
            description_placeholders={"base_url": redact_url(base_url)},
            errors=errors,
        )

    async def async_step_reauth_confirm(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for the new API key and check the server accepts it."""
        entry = self._get_reauth_entry()
        base_url = entry.data[CONF_BASE_URL]
        errors: dict[str, str] = {}
        if user_input is not None:
            api_key = (user_input.get(CONF_API_KEY) or "").strip()
            _models, error = await async_check_server(self.hass, base_url, api_key)
            if error:
                errors["base"] = error
            else:
                return self._async_update_and_reload(
                    entry, data_updates={CONF_API_KEY: api_key}
                )
        return self.async_show_form(
            step_id="reauth_confirm",
            data_schema=vol.Schema({vol.Optional(CONF_API_KEY): SECRET_TEXT}),
            description_placeholders={"base_url": redact_url(base_url)},
            errors=errors,
        )

    async def async_step_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Move the entry to another server URL or key; agents and facts stay."""
        entry = self._get_reconfigure_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            base_url = normalize_base_url(user_input[CONF_BASE_URL])
            api_key = (user_input.get(CONF_API_KEY) or "").strip()
            if self._server_known(base_url, but=entry):
                return self.async_abort(reason="already_configured")
            _models, error = await async_check_server(self.hass, base_url, api_key)
            if error:
                errors["base"] = error
            else:
                # A title the user chose stays; the generated one follows the URL.
                old_titles = {
                    _generated_title(entry.data[CONF_BASE_URL]),
                    # Before credentials were left out of titles.
                    f"{DEFAULT_TITLE} ({entry.data[CONF_BASE_URL]})",
                }
                return self._async_update_and_reload(
                    entry,
                    title=_generated_title(base_url)
                    if entry.title in old_titles
                    else entry.title,
                    data_updates={CONF_BASE_URL: base_url, CONF_API_KEY: api_key},
                )
        return self.async_show_form(
            step_id="reconfigure",
            data_schema=self.add_suggested_values_to_schema(
                vol.Schema(
                    {
                        vol.Required(CONF_BASE_URL): str,
                        vol.Optional(CONF_API_KEY): SECRET_TEXT,
                    }
                ),
                user_input or dict(entry.data),
            ),
            errors=errors,
        )
