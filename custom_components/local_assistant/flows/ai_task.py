"""Subentry flow for AI Task agents: the model and its sampling settings."""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import (
    SubentryFlowResult,
)
from homeassistant.const import CONF_MODEL, CONF_NAME
from homeassistant.helpers.selector import (
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
)
import voluptuous as vol

from ..const import (
    CONF_MAX_TOKENS,
    CONF_TEMPERATURE,
    DEFAULT_AI_TASK_MAX_TOKENS,
    DEFAULT_AI_TASK_TITLE,
    DEFAULT_TEMPERATURE,
)
from .agent import AgentSubentryFlow, model_selector

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

        models = await self._async_model_choices()
        if not self._options.get(CONF_MODEL) and models:
            self._options[CONF_MODEL] = models[0]

        return self.async_show_form(
            step_id="init",
            data_schema=self.add_suggested_values_to_schema(
                ai_task_schema(is_new, models), self._options
            ),
        )
