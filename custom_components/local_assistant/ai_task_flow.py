"""Subentry flow for AI Task agents: the model and its sampling settings."""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import (
    SOURCE_USER,
    ConfigEntryState,
    ConfigSubentryFlow,
    SubentryFlowResult,
)
from homeassistant.const import CONF_MODEL, CONF_NAME
from homeassistant.helpers.selector import (
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
)
import openai
import voluptuous as vol

from .client import async_list_models
from .const import (
    CONF_MAX_TOKENS,
    CONF_TEMPERATURE,
    DEFAULT_AI_TASK_MAX_TOKENS,
    DEFAULT_AI_TASK_TITLE,
    DEFAULT_TEMPERATURE,
)

DEFAULT_AI_TASK_OPTIONS: dict[str, Any] = {
    CONF_TEMPERATURE: DEFAULT_TEMPERATURE,
    CONF_MAX_TOKENS: DEFAULT_AI_TASK_MAX_TOKENS,
}


def ai_task_schema(is_new: bool, models: list[str]) -> vol.Schema:
    """The AI Task form: name (new only), model, temperature, max tokens."""
    schema: dict[Any, Any] = {}
    if is_new:
        schema[vol.Required(CONF_NAME, default=DEFAULT_AI_TASK_TITLE)] = str
    schema.update(
        {
            vol.Required(CONF_MODEL): SelectSelector(
                SelectSelectorConfig(
                    options=[SelectOptionDict(value=m, label=m) for m in models],
                    mode=SelectSelectorMode.DROPDOWN,
                    custom_value=True,
                    sort=True,
                )
            ),
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


class AITaskSubentryFlow(ConfigSubentryFlow):
    """Add or reconfigure an AI Task agent."""

    def __init__(self) -> None:
        """Start with defaults."""
        self._options: dict[str, Any] = {}

    async def async_step_user(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Add an AI Task agent."""
        self._options = dict(DEFAULT_AI_TASK_OPTIONS)
        return await self.async_step_init(user_input)

    async def async_step_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Change an AI Task agent."""
        self._options = dict(self._get_reconfigure_subentry().data)
        return await self.async_step_init(user_input)

    async def async_step_init(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Show and store the settings."""
        entry = self._get_entry()
        if entry.state != ConfigEntryState.LOADED:
            return self.async_abort(reason="entry_not_loaded")
        is_new = self.source == SOURCE_USER

        if user_input is not None:
            data = {**user_input}
            data[CONF_MODEL] = str(data[CONF_MODEL]).strip()
            data[CONF_MAX_TOKENS] = int(data[CONF_MAX_TOKENS])
            if is_new:
                title = data.pop(CONF_NAME)
                return self.async_create_entry(title=title, data=data)
            return self.async_update_and_abort(
                entry, self._get_reconfigure_subentry(), data=data
            )

        try:
            models = await async_list_models(entry.runtime_data.client)
        except openai.OpenAIError:
            models = []  # a typed model name still works
        if (current := self._options.get(CONF_MODEL)) and current not in models:
            models.append(current)
        if not self._options.get(CONF_MODEL) and models:
            self._options[CONF_MODEL] = models[0]

        return self.async_show_form(
            step_id="init",
            data_schema=self.add_suggested_values_to_schema(
                ai_task_schema(is_new, models), self._options
            ),
        )
