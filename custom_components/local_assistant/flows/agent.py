"""What every agent subentry flow shares: add and reconfigure steps, the model list."""

from __future__ import annotations

from typing import Any, ClassVar

from homeassistant.config_entries import (
    SOURCE_USER,
    ConfigEntryState,
    ConfigSubentryFlow,
    SubentryFlowResult,
)
from homeassistant.const import CONF_MODEL
from homeassistant.helpers.selector import (
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
)
import openai

from ..server.client import async_list_models


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
