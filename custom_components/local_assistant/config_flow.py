"""Config flow: one entry per model server, one subentry per agent."""

from __future__ import annotations

from collections.abc import Mapping
import logging
from typing import Any

from homeassistant.config_entries import (
    ConfigEntry,
    ConfigFlow,
    ConfigFlowResult,
    ConfigSubentryFlow,
    OptionsFlow,
    SubentryFlowResult,
)
from homeassistant.const import CONF_LLM_HASS_API, CONF_MODEL, CONF_NAME, CONF_PROMPT
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import llm
from homeassistant.helpers.selector import (
    BooleanSelector,
    EntitySelector,
    EntitySelectorConfig,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TemplateSelector,
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)
import voluptuous as vol

from .const import (
    CONF_API_KEY,
    CONF_BASE_URL,
    CONF_KITE_DIRECTIONS,
    CONF_KITE_MAX_WIND_KN,
    CONF_KITE_MIN_WIND_KN,
    CONF_MAX_TOKENS,
    CONF_SEA_ENTITIES,
    CONF_TEMPERATURE,
    CONF_TOOL_BIAS,
    CONF_TOOL_FILLER,
    CONF_WEATHER_ENTITY,
    DEFAULT_AI_TASK_TITLE,
    DEFAULT_BASE_URL,
    DEFAULT_MAX_TOKENS,
    DEFAULT_TEMPERATURE,
    DEFAULT_TITLE,
    DEFAULT_TOOL_BIAS,
    DOMAIN,
    SUBENTRY_AI_TASK,
    SUBENTRY_CONVERSATION,
)
from .flows.agent import AgentSubentryFlow, model_selector
from .flows.ai_task import DEFAULT_AI_TASK_OPTIONS, AITaskSubentryFlow
from .flows.options import LocalAssistantOptionsFlow
from .flows.server_check import async_check_server, normalize_base_url
from .tools.kite import COMPASS_POINTS

_LOGGER = logging.getLogger(__name__)

DEFAULT_CONVERSATION_OPTIONS: dict[str, Any] = {
    CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
    CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
    CONF_TOOL_BIAS: DEFAULT_TOOL_BIAS,
    CONF_TEMPERATURE: DEFAULT_TEMPERATURE,
    CONF_MAX_TOKENS: DEFAULT_MAX_TOKENS,
}

SECRET_TEXT = TextSelector(TextSelectorConfig(type=TextSelectorType.PASSWORD))
KNOTS_SELECTOR = NumberSelector(
    NumberSelectorConfig(
        min=0, max=100, step=0.5, unit_of_measurement="kn", mode=NumberSelectorMode.BOX
    )
)


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
            api_key = user_input.get(CONF_API_KEY) or ""
            self._async_abort_entries_match({CONF_BASE_URL: base_url})
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
        if user_input is not None:
            model = user_input[CONF_MODEL].strip()
            return self.async_create_entry(
                title=f"{DEFAULT_TITLE} ({self._server[CONF_BASE_URL]})",
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
        return self.async_show_form(step_id="model", data_schema=vol.Schema(schema))

    async def async_step_reauth(
        self, entry_data: Mapping[str, Any]
    ) -> ConfigFlowResult:
        """The server refused the key at set-up (ConfigEntryAuthFailed)."""
        return await self.async_step_reauth_confirm()

    async def async_step_reauth_confirm(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for the new API key and check the server accepts it."""
        entry = self._get_reauth_entry()
        base_url = entry.data[CONF_BASE_URL]
        errors: dict[str, str] = {}
        if user_input is not None:
            api_key = user_input.get(CONF_API_KEY) or ""
            _models, error = await async_check_server(self.hass, base_url, api_key)
            if error:
                errors["base"] = error
            else:
                return self.async_update_reload_and_abort(
                    entry, data_updates={CONF_API_KEY: api_key}
                )
        return self.async_show_form(
            step_id="reauth_confirm",
            data_schema=vol.Schema({vol.Optional(CONF_API_KEY): SECRET_TEXT}),
            description_placeholders={"base_url": base_url},
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
            api_key = user_input.get(CONF_API_KEY) or ""
            if base_url != entry.data[CONF_BASE_URL]:
                self._async_abort_entries_match({CONF_BASE_URL: base_url})
            _models, error = await async_check_server(self.hass, base_url, api_key)
            if error:
                errors["base"] = error
            else:
                # A title the user chose stays; the generated one follows the URL.
                generated = f"{DEFAULT_TITLE} ({entry.data[CONF_BASE_URL]})"
                return self.async_update_reload_and_abort(
                    entry,
                    title=f"{DEFAULT_TITLE} ({base_url})"
                    if entry.title == generated
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


class ConversationSubentryFlow(AgentSubentryFlow):
    """Add or reconfigure a conversation agent."""

    DEFAULTS = DEFAULT_CONVERSATION_OPTIONS

    async def async_step_init(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Show and store the agent's settings."""
        if not self._entry_loaded():
            return self.async_abort(reason="entry_not_loaded")
        entry = self._get_entry()

        errors: dict[str, str] = {}
        if user_input is not None and not (errors := live_data_errors(user_input)):
            data = {**user_input}
            data[CONF_LLM_HASS_API] = data.get(CONF_LLM_HASS_API) or []
            data[CONF_MAX_TOKENS] = int(data[CONF_MAX_TOKENS])
            if self._is_new:
                title = data.pop(CONF_NAME)
                return self.async_create_entry(title=title, data=data)
            return self.async_update_and_abort(
                entry, self._get_reconfigure_subentry(), data=data
            )

        models = await self._async_model_choices()
        return self.async_show_form(
            step_id="init",
            data_schema=self.add_suggested_values_to_schema(
                conversation_schema(self.hass, self._is_new, models),
                suggested_agent_values(
                    self.hass, {**self._options, **(user_input or {})}
                ),
            ),
            errors=errors,
        )


def live_data_errors(user_input: Mapping[str, Any]) -> dict[str, str]:
    """The kitesurf wind range must not be upside down."""
    low = user_input.get(CONF_KITE_MIN_WIND_KN)
    high = user_input.get(CONF_KITE_MAX_WIND_KN)
    if low is not None and high is not None and low > high:
        return {CONF_KITE_MAX_WIND_KN: "kite_range"}
    return {}


def suggested_agent_values(
    hass: HomeAssistant, options: Mapping[str, Any]
) -> dict[str, Any]:
    """Current values, minus LLM APIs that no longer exist."""
    valid_api_ids = {api.id for api in llm.async_get_apis(hass)}
    return {
        **options,
        CONF_LLM_HASS_API: [
            api for api in options.get(CONF_LLM_HASS_API, []) if api in valid_api_ids
        ],
    }


def conversation_schema(
    hass: HomeAssistant, is_new: bool, models: list[str]
) -> vol.Schema:
    """Build the agent form."""
    apis = [
        SelectOptionDict(value=api.id, label=api.name)
        for api in llm.async_get_apis(hass)
    ]
    schema: dict[Any, Any] = {}
    if is_new:
        schema[vol.Required(CONF_NAME, default=DEFAULT_TITLE)] = str
    schema.update(
        {
            vol.Required(CONF_MODEL): model_selector(models),
            vol.Optional(CONF_PROMPT): TemplateSelector(),
            vol.Optional(CONF_LLM_HASS_API): SelectSelector(
                SelectSelectorConfig(options=apis, multiple=True)
            ),
            vol.Required(CONF_TOOL_BIAS, default=DEFAULT_TOOL_BIAS): BooleanSelector(),
            # Off when absent (DEFAULT_TOOL_FILLER); no default, so older data stays as is.
            vol.Optional(CONF_TOOL_FILLER): BooleanSelector(),
            vol.Required(CONF_TEMPERATURE, default=DEFAULT_TEMPERATURE): NumberSelector(
                NumberSelectorConfig(
                    min=0, max=2, step=0.05, mode=NumberSelectorMode.SLIDER
                )
            ),
            vol.Required(CONF_MAX_TOKENS, default=DEFAULT_MAX_TOKENS): NumberSelector(
                NumberSelectorConfig(
                    min=16, max=8192, step=1, mode=NumberSelectorMode.BOX
                )
            ),
            # Live-data tools: a tool is offered only when its entities are set.
            vol.Optional(CONF_WEATHER_ENTITY): EntitySelector(
                EntitySelectorConfig(domain="weather")
            ),
            vol.Optional(CONF_SEA_ENTITIES): EntitySelector(
                EntitySelectorConfig(domain="sensor", multiple=True)
            ),
            vol.Optional(CONF_KITE_MIN_WIND_KN): KNOTS_SELECTOR,
            vol.Optional(CONF_KITE_MAX_WIND_KN): KNOTS_SELECTOR,
            vol.Optional(CONF_KITE_DIRECTIONS): SelectSelector(
                SelectSelectorConfig(
                    options=list(COMPASS_POINTS),
                    multiple=True,
                    mode=SelectSelectorMode.DROPDOWN,
                )
            ),
        }
    )
    return vol.Schema(schema)
