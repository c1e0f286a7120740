"""This home's live data right now, as a few short lines for the prompt.

A small model asked "should I bring a jacket tomorrow?" must not first have
to decide to call a tool before it can be right: it answers from its weights
instead. So whenever live-data tools are configured, the weather now, the
next days, the sea and the kitesurf verdict go into the varying part of the
prompt (llm/prompt.py), in the conversation's language (tools/phrases.py).
The tools stay for details: hourly forecasts, every sensor.

Where the agent uses HA's Assist API but has no weather tool, the one weather
entity exposed to Assist gives the weather lines (and the kite verdict its wind):
without them a small model answers "what is the temperature outside?" from its
weights. Exposing it lets the model read its state through HA's GetLiveContext;
the forecast lines are ours, read from the same entity. With several exposed,
none is picked: which is "outside" is the user's choice (the option).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import llm
from homeassistant.util import dt as dt_util

from ..const import CONF_WEATHER_ENTITY, LOGGER
from ..llm.sentences import async_phrases
from .api import stand_in_weather
from .phrases import Phrases, day_line, now_line, wind_line
from .sea import SeaConditionsTool
from .weather import WeatherForecastTool

# Today and the next four days: what a weather service gives and people ask.
FORECAST_DAYS = 5


async def async_live_lines(
    hass: HomeAssistant, tools: Sequence[llm.Tool], language: str | None
) -> list[str]:
    """The live data of ``tools`` now (``live_line_tools``), one fact per line."""
    if not tools:
        return []
    phrases = await async_phrases(hass, language)
    today = dt_util.now().date()
    now: list[str] = []
    sea: list[str] = []
    days: list[str] = []
    # The beach's own wind sensor says it better than the weather service.
    beach_wind = any(
        isinstance(tool, SeaConditionsTool) and _has_wind_sensor(hass, tool)
        for tool in tools
    )
    for tool in tools:
        try:
            if isinstance(tool, WeatherForecastTool):
                weather = await _async_weather_lines(
                    hass, tool, phrases, today, beach_wind
                )
                now += weather.now
                days += weather.days
            elif isinstance(tool, SeaConditionsTool):
                sea += _sea_lines(hass, tool, phrases)
        except Exception:
            # A sensor that cannot be read never ends the turn: the model
            # still has the tool, which reports the error itself.
            LOGGER.exception("Live data of %s could not be read", tool.name)
    return [*now, *sea, *days]


@callback
def live_line_tools(
    hass: HomeAssistant, options: Mapping[str, Any], tools: list[llm.Tool]
) -> list[llm.Tool]:
    """The tools whose data the lines say: the agent's own live ``tools``,
    after the weather of the exposed entity standing in for an unset weather
    option (``stand_in_weather``). The model is offered only the agent's own."""
    if options.get(CONF_WEATHER_ENTITY):
        return tools
    # A sea tool was built with the stand-in already (``live_tools``): the
    # exposed entities are scanned once a turn.
    sea = next((tool for tool in tools if isinstance(tool, SeaConditionsTool)), None)
    stand_in = sea.weather_entity if sea else stand_in_weather(hass, options)
    return [WeatherForecastTool(stand_in), *tools] if stand_in else tools


@dataclass(slots=True)
class _WeatherLines:
    now: list[str] = field(default_factory=list)
    days: list[str] = field(default_factory=list)


async def _async_weather_lines(
    hass: HomeAssistant,
    tool: WeatherForecastTool,
    phrases: Phrases,
    today: date,
    beach_wind: bool,
) -> _WeatherLines:
    lines = _WeatherLines()
    reading = await tool.async_read(hass)
    if reading is None:
        return lines
    lines.now.append(
        now_line(
            phrases, reading.condition, reading.temperature, reading.temperature_unit
        )
    )
    if reading.wind is not None and not beach_wind:
        lines.now.append(wind_line(phrases, reading.wind))
    upcoming = [day for day in reading.days if day.day >= today]
    lines.days = [day_line(phrases, day, today) for day in upcoming[:FORECAST_DAYS]]
    return lines


def _sea_lines(
    hass: HomeAssistant, tool: SeaConditionsTool, phrases: Phrases
) -> list[str]:
    return tool.lines(hass, phrases)


def _has_wind_sensor(hass: HomeAssistant, tool: SeaConditionsTool) -> bool:
    try:
        return tool.has_wind_sensor(hass)
    except Exception:  # logged where its lines are read
        return False
