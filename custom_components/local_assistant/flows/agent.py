"""The agent subentry flows: conversation agents and AI Task agents, on one base.

Both add an agent (``async_step_user``, with the type's defaults) or change one
(``async_step_reconfigure``) through one form, ``async_step_init``, shown only
while the server's entry is loaded; the model list comes from the server and a
typed model name is still accepted. ``config_flow.py`` offers them as the
entry's subentry types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from homeassistant.config_entries import (
    SOURCE_USER,
    ConfigEntryState,
    ConfigSubentryFlow,
    SubentryFlowResult,
)
from homeassistant.const import CONF_LLM_HASS_API, CONF_MODEL, CONF_NAME, CONF_PROMPT
from homeassistant.core import HomeAssistant
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
)
import openai
import voluptuous as vol

from ..const import (
    CONF_KITE_DIRECTIONS,
    CONF_KITE_MAX_WIND_KN,
    CONF_KITE_MIN_WIND_KN,
    CONF_LOCAL_INTENTS,
    CONF_MAX_TOKENS,
    CONF_TEMPERATURE,
    CONF_TOOL_BIAS,
    CONF_TOOL_FILLER,
    CONF_WEATHER_ENTITY,
    DEFAULT_AI_TASK_MAX_TOKENS,
    DEFAULT_AI_TASK_TITLE,
    DEFAULT_LOCAL_INTENTS,
    DEFAULT_MAX_TOKENS,
    DEFAULT_TEMPERATURE,
    DEFAULT_TITLE,
    DEFAULT_TOOL_BIAS,
)
from ..server.client import async_list_models
from ..tools.kite import COMPASS_POINTS
from ..tools.sea import SEA_OPTION_KINDS, old_list_as_options

DEFAULT_CONVERSATION_OPTIONS: dict[str, Any] = {
    CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
    CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
    CONF_TOOL_BIAS: DEFAULT_TOOL_BIAS,
    CONF_TEMPERATURE: DEFAULT_TEMPERATURE,
    CONF_MAX_TOKENS: DEFAULT_MAX_TOKENS,
}

DEFAULT_AI_TASK_OPTIONS: dict[str, Any] = {
    CONF_TEMPERATURE: DEFAULT_TEMPERATURE,
    CONF_MAX_TOKENS: DEFAULT_AI_TASK_MAX_TOKENS,
}

# The sea sensors, one option per kind (tools/sea.py reads each as its
# option says); the first of a kind that reads is used, so each takes
# several in order (two stations' wind, say). No device-class filter: many
# scraped or template sensors have none, and the unit guards each kind.
SEA_SENSOR_SELECTOR = EntitySelector(
    EntitySelectorConfig(domain="sensor", multiple=True, reorder=True)
)


KNOTS_SELECTOR = NumberSelector(
    NumberSelectorConfig(
        min=0, max=100, step=0.5, unit_of_measurement="kn", mode=NumberSelectorMode.BOX
    )
)


def model_selector(models: list[str]) -> SelectSelector:
    """A dropdown of the server's models that still accepts any name."""
    return SelectSelector(
        SelectSelectorConfig(
            options=[SelectOptionDict(value=m, label=m) for m in models],
            mode=SelectSelectorMode.DROPDOWN,
            custom_value=True,
            sort=True,
        )
    )


class AgentSubentryFlow(ConfigSubentryFlow):
    """Add an agent with `DEFAULTS`, or reconfigure one; `async_step_init` shows the form."""

    DEFAULTS: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        """Start with nothing chosen."""
        self._options: dict[str, Any] = {}

    @property
    def _is_new(self) -> bool:
        return self.source == SOURCE_USER

    async def async_step_user(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Add an agent."""
        self._options = dict(self.DEFAULTS)
        return await self.async_step_init(user_input)

    async def async_step_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Change an agent."""
        self._options = dict(self._get_reconfigure_subentry().data)
        return await self.async_step_init(user_input)

    async def async_step_init(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Show and store the agent's settings (each agent type has its own)."""
        raise NotImplementedError

    @staticmethod
    def _agent_data(user_input: Mapping[str, Any]) -> dict[str, Any]:
        """What is stored: the model name without stray spaces, max tokens whole.

        A typed model name (the dropdown accepts any) keeps the spaces typed
        around it; "qwen3 " would then fail every request.
        """
        data = {**user_input}
        data[CONF_MODEL] = str(data[CONF_MODEL]).strip()
        data[CONF_MAX_TOKENS] = int(data[CONF_MAX_TOKENS])
        return data

    def _entry_loaded(self) -> bool:
        """Agents are configured against a connected server."""
        return self._get_entry().state is ConfigEntryState.LOADED

    async def _async_model_choices(self) -> list[str]:
        """The server's models plus the current one, so a typed name stays choosable."""
        try:
            models = await async_list_models(self._get_entry().runtime_data.client)
        except openai.OpenAIError:
            models = []  # a typed model name still works
        if (current := self._options.get(CONF_MODEL)) and current not in models:
            models.append(current)
        return models


# --- conversation agents ---------------------------------------------------------


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
        if user_input is not None and not (
            errors := model_errors(user_input) | live_data_errors(user_input)
        ):
            data = self._agent_data(user_input)
            data[CONF_LLM_HASS_API] = data.get(CONF_LLM_HASS_API) or []
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


def model_errors(user_input: Mapping[str, Any]) -> dict[str, str]:
    """A model name of spaces only (the dropdown takes any text) names none:
    every request would fail."""
    if not str(user_input.get(CONF_MODEL, "")).strip():
        return {CONF_MODEL: "model_not_found"}
    return {}


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
    """Current values, minus LLM APIs that no longer exist; an old list of sea
    sensors in the fields by kind (a save drops the list)."""
    valid_api_ids = {api.id for api in llm.async_get_apis(hass)}
    return {
        **options,
        **old_list_as_options(options, hass.states.get),
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
            vol.Required(
                CONF_LOCAL_INTENTS, default=DEFAULT_LOCAL_INTENTS
            ): BooleanSelector(),
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
        }
    )
    schema.update(
        {vol.Optional(option): SEA_SENSOR_SELECTOR for option in SEA_OPTION_KINDS}
    )
    schema.update(
        {
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


# --- AI Task agents ---------------------------------------------------------------


def ai_task_schema(is_new: bool, models: list[str]) -> vol.Schema:
    """The AI Task form: name (new only), model, temperature, max tokens."""
    schema: dict[Any, Any] = {}
    if is_new:
        schema[vol.Required(CONF_NAME, default=DEFAULT_AI_TASK_TITLE)] = str
    schema.update(
        {
            vol.Required(CONF_MODEL): model_selector(models),
            vol.Required(CONF_TEMPERATURE, default=DEFAULT_TEMPERATURE): NumberSelector(
                NumberSelectorConfig(
                    min=0, max=2, step=0.05, mode=NumberSelectorMode.SLIDER
                )
            ),
            vol.Required(
                CONF_MAX_TOKENS, default=DEFAULT_AI_TASK_MAX_TOKENS
            ): NumberSelector(
                NumberSelectorConfig(
                    min=16, max=32768, step=1, mode=NumberSelectorMode.BOX
                )
            ),
        }
    )
    return vol.Schema(schema)


class AITaskSubentryFlow(AgentSubentryFlow):
    """Add or reconfigure an AI Task agent."""

    DEFAULTS = DEFAULT_AI_TASK_OPTIONS

    async def async_step_init(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Show and store the settings."""
        if not self._entry_loaded():
            return self.async_abort(reason="entry_not_loaded")
        entry = self._get_entry()
        is_new = self._is_new

        errors: dict[str, str] = {}
        if user_input is not None and not (errors := model_errors(user_input)):
            data = self._agent_data(user_input)
            if is_new:
                title = data.pop(CONF_NAME)
                return self.async_create_entry(title=title, data=data)
            return self.async_update_and_abort(
                entry, self._get_reconfigure_subentry(), data=data
            )

        models = await self._async_model_choices()
        if not self._options.get(CONF_MODEL) and models:
            self._options[CONF_MODEL] = models[0]

        return self.async_show_form(
            step_id="init",
            data_schema=self.add_suggested_values_to_schema(
                ai_task_schema(is_new, models), {**self._options, **(user_input or {})}
            ),
            errors=errors,
        )
