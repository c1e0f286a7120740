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

from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import (
    async_should_expose,
)
from homeassistant.components.weather.const import DOMAIN as WEATHER_DOMAIN
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
from .sea import SEA_OPTION_KINDS, SEA_TOOL_NAME, SeaConditionsTool, sea_sensors
from .weather import WEATHER_TOOL_NAME, WeatherForecastTool

__all__ = [
    "SEA_TOOL_NAME",
    "WEATHER_TOOL_NAME",
    "LocalAssistantAPI",
    "async_build_llm_api",
    "kite_spot",
    "live_tools",
    "stand_in_weather",
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


def live_tools(hass: HomeAssistant, options: Mapping[str, Any]) -> list[llm.Tool]:
    """Our tools whose entities are configured, in a stable order: those the
    model is offered, and those whose data the live lines say (with
    ``stand_in_weather``'s in front, tools/live_now.py).

    The sea tool judges the kitesurf verdict on the weather option's wind,
    else on the stand-in's, as the lines do: the tool and the prompt must
    not answer one question two ways.
    """
    tools: list[llm.Tool] = []
    weather_entity = options.get(CONF_WEATHER_ENTITY) or None
    if weather_entity:
        tools.append(WeatherForecastTool(weather_entity))
    if sea_sensors(options):
        tools.append(
            SeaConditionsTool(
                options,
                kite_spot(options),
                weather_entity or stand_in_weather(hass, options),
            )
        )
    return tools


@callback
def stand_in_weather(hass: HomeAssistant, options: Mapping[str, Any]) -> str | None:
    """The weather entity exposed to Assist, in place of an unset weather
    option where the agent uses the Assist API: exactly one, or none (of
    several, which is "outside" is the user's choice, the option)."""
    if options.get(CONF_WEATHER_ENTITY) or llm.LLM_API_ASSIST not in (
        options.get(CONF_LLM_HASS_API) or ()
    ):
        return None
    exposed = [
        entity_id
        for entity_id in hass.states.async_entity_ids(WEATHER_DOMAIN)
        if async_should_expose(hass, conversation.DOMAIN, entity_id)
    ]
    return exposed[0] if len(exposed) == 1 else None


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
    tools: list[llm.Tool],
    extra_tools: Sequence[llm.Tool] = (),
) -> LocalAssistantAPI | list[str] | None:
    """What the agent passes to ``async_provide_llm_data``.

    Our API object when live-data ``tools`` are configured or ``extra_tools``
    are given (the memory tools); otherwise exactly what HA would get (the
    selected API ids). An agent that offers no tools at all (no HA API, no
    live data) gets none of ours either: its server may not call tools.
    """
    api_ids = list(options.get(CONF_LLM_HASS_API) or ())
    if not api_ids and not tools:
        return None
    if not tools and not extra_tools:
        return api_ids
    return LocalAssistantAPI(
        hass=hass,
        id=_api_id(api_ids, options, tools, [tool.name for tool in extra_tools]),
        name="Local Assistant",
        api_ids=api_ids,
        live_tools=tools,
        extra_tools=list(extra_tools),
    )


def _api_id(
    api_ids: list[str],
    options: Mapping[str, Any],
    tools: list[llm.Tool],
    extra: list[str],
) -> str:
    """An id that changes with the configuration.

    HA 2026.11 reuses a chat log's API instance while the API id stays the
    same; a changed configuration must not keep serving the old tools.
    """
    config = {
        key: options.get(key)
        for key in (
            CONF_WEATHER_ENTITY,
            *SEA_OPTION_KINDS,
            CONF_SEA_ENTITIES,
            CONF_KITE_MIN_WIND_KN,
            CONF_KITE_MAX_WIND_KN,
            CONF_KITE_DIRECTIONS,
        )
    }
    # The weather whose wind the verdict judges may be the exposed one.
    config["wind_weather"] = [
        tool.weather_entity for tool in tools if isinstance(tool, SeaConditionsTool)
    ]
    digest = hashlib.sha256(
        json.dumps([api_ids, config, extra], sort_keys=True, default=str).encode()
    ).hexdigest()[:12]
    return f"{DOMAIN}-{digest}"
