"""Our LLM API: HA's selected APIs (Assist by default) plus our live-data tools.

HA's Assist API offers no weather forecast and nothing knows about the sea, so
a small model would answer "is it windy at the beach?" from its weights. The
agent passes a ``LocalAssistantAPI`` object to ``ChatLog.async_provide_llm_data``;
our tools are added next to HA's, not through ``llm.async_register_api``, so
their names are never namespaced (on 2026.2 nor on 2026.11) and no other agent
gets them. Home status stays with HA's Assist API (exposed entities and
``GetLiveContext``); nothing of it is duplicated here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
import hashlib
import json
from typing import Any

from homeassistant.const import CONF_LLM_HASS_API
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm

from ..const import (
    CONF_KITE_DIRECTIONS,
    CONF_KITE_MAX_WIND_KN,
    CONF_KITE_MIN_WIND_KN,
    CONF_SEA_ENTITIES,
    CONF_WEATHER_ENTITY,
    DOMAIN,
    LOGGER,
)
from .kite import KiteSpot
from .sea import SEA_TOOL_NAME, SeaConditionsTool
from .weather import WEATHER_TOOL_NAME, WeatherForecastTool

__all__ = [
    "SEA_TOOL_NAME",
    "WEATHER_TOOL_NAME",
    "LocalAssistantAPI",
    "async_build_llm_api",
    "kite_spot",
    "live_tool_names",
    "live_tools",
]

LIVE_TOOLS_PROMPT = "Live data of this home: {calls}. Answer from what they return."


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def kite_spot(options: Mapping[str, Any]) -> KiteSpot:
    """The agent's kitesurf window (empty when not configured)."""
    return KiteSpot(
        min_kn=_number(options.get(CONF_KITE_MIN_WIND_KN)),
        max_kn=_number(options.get(CONF_KITE_MAX_WIND_KN)),
        directions=tuple(options.get(CONF_KITE_DIRECTIONS) or ()),
    )


def live_tools(options: Mapping[str, Any]) -> list[llm.Tool]:
    """Our tools whose entities are configured, in a stable order."""
    tools: list[llm.Tool] = []
    weather_entity = options.get(CONF_WEATHER_ENTITY) or None
    if weather_entity:
        tools.append(WeatherForecastTool(weather_entity))
    if sea_entities := list(options.get(CONF_SEA_ENTITIES) or ()):
        tools.append(
            SeaConditionsTool(sea_entities, kite_spot(options), weather_entity)
        )
    return tools


def live_tool_names(options: Mapping[str, Any]) -> list[str]:
    """Names of the live-data tools this agent offers (for the tool-bias text)."""
    return [tool.name for tool in live_tools(options)]


@dataclass(slots=True, kw_only=True)
class LocalAssistantAPI(llm.API):
    """HA's selected APIs merged with our live-data tools."""

    api_ids: list[str]
    live_tools: list[llm.Tool]
    # Tools of other parts of the agent (memory/voice.py), after ours.
    extra_tools: list[llm.Tool] = field(default_factory=list)

    async def async_get_api_instance(
        self, llm_context: llm.LLMContext
    ) -> llm.APIInstance:
        """HA's tools first (their order is HA's), then ours."""
        base: llm.APIInstance | None = None
        if self.api_ids:
            try:
                base = await llm.async_get_api(self.hass, self.api_ids, llm_context)
            except HomeAssistantError as err:
                # Keep the live-data tools working; say plainly what is missing.
                LOGGER.warning(
                    "LLM API %s is not available (%s); offering only the "
                    "live-data tools",
                    self.api_ids,
                    err,
                )
        prompts = [base.api_prompt] if base and base.api_prompt else []
        if self.live_tools:
            calls = "; ".join(
                f"for {getattr(tool, 'topics', '') or tool.name} call {tool.name}"
                for tool in self.live_tools
            )
            prompts.append(LIVE_TOOLS_PROMPT.format(calls=calls))
        return llm.APIInstance(
            api=self,
            api_prompt="\n".join(prompts),
            llm_context=llm_context,
            tools=[*(base.tools if base else ()), *self.live_tools, *self.extra_tools],
            custom_serializer=base.custom_serializer if base else None,
        )


@callback
def async_build_llm_api(
    hass: HomeAssistant,
    options: Mapping[str, Any],
    extra_tools: Sequence[llm.Tool] = (),
) -> LocalAssistantAPI | list[str] | None:
    """What the agent passes to ``async_provide_llm_data``.

    Our API object when live-data tools are configured or ``extra_tools``
    are given (the memory tools); otherwise exactly what HA would get (the
    selected API ids). An agent that offers no tools at all (no HA API, no
    live data) gets none of ours either: its server may not call tools.
    """
    api_ids = list(options.get(CONF_LLM_HASS_API) or ())
    tools = live_tools(options)
    if not api_ids and not tools:
        return None
    if not tools and not extra_tools:
        return api_ids
    return LocalAssistantAPI(
        hass=hass,
        id=_api_id(api_ids, options, [tool.name for tool in extra_tools]),
        name="Local Assistant",
        api_ids=api_ids,
        live_tools=tools,
        extra_tools=list(extra_tools),
    )


def _api_id(api_ids: list[str], options: Mapping[str, Any], extra: list[str]) -> str:
    """An id that changes with the configuration.

    HA 2026.11 reuses a chat log's API instance while the API id stays the
    same; a changed configuration must not keep serving the old tools.
    """
    config = {
        key: options.get(key)
        for key in (
            CONF_WEATHER_ENTITY,
            CONF_SEA_ENTITIES,
            CONF_KITE_MIN_WIND_KN,
            CONF_KITE_MAX_WIND_KN,
            CONF_KITE_DIRECTIONS,
        )
    }
    digest = hashlib.sha256(
        json.dumps([api_ids, config, extra], sort_keys=True, default=str).encode()
    ).hexdigest()[:12]
    return f"{DOMAIN}-{digest}"
