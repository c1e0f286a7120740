"""The weather tool: current conditions and forecast of the configured weather entity."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
import math
from typing import Any, Final

from homeassistant.components.weather.const import (
    ATTR_WEATHER_APPARENT_TEMPERATURE,
    ATTR_WEATHER_CLOUD_COVERAGE,
    ATTR_WEATHER_HUMIDITY,
    ATTR_WEATHER_PRECIPITATION_UNIT,
    ATTR_WEATHER_PRESSURE,
    ATTR_WEATHER_PRESSURE_UNIT,
    ATTR_WEATHER_TEMPERATURE,
    ATTR_WEATHER_TEMPERATURE_UNIT,
    ATTR_WEATHER_UV_INDEX,
    ATTR_WEATHER_VISIBILITY,
    ATTR_WEATHER_VISIBILITY_UNIT,
    ATTR_WEATHER_WIND_BEARING,
    ATTR_WEATHER_WIND_GUST_SPEED,
    ATTR_WEATHER_WIND_SPEED,
    ATTR_WEATHER_WIND_SPEED_UNIT,
    WeatherEntityFeature,
)
from homeassistant.const import (
    ATTR_SUPPORTED_FEATURES,
    STATE_UNAVAILABLE,
    STATE_UNKNOWN,
)
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.util import dt as dt_util
import voluptuous as vol

from ..const import (
    DEFAULT_FORECAST_DAILY_PERIODS,
    DEFAULT_FORECAST_HOURLY_PERIODS,
    LOGGER,
    MAX_FORECAST_PERIODS,
)
from ..llm.sentences import async_phrases
from .base import LiveTool, state_name, to_knots, wind_text, with_unit
from .kite import parse_direction
from .phrases import FROZEN_CONDITIONS, DayForecast, Phrases, Wind, day_line, now_line

WEATHER_TOOL_NAME: Final = "local_weather_forecast"

PERIOD_DAILY: Final = "daily"
PERIOD_HOURLY: Final = "hourly"
PERIOD_TWICE_DAILY: Final = "twice_daily"
# Days from today a weekday's name is said for ("Wednesday"), today's too.
DAYS_A_WEEKDAY_NAMES: Final = 7
# Seconds a weather service may take to give its daily forecast.
FORECAST_TIMEOUT: Final = 5

_FEATURES: Final = {
    PERIOD_DAILY: WeatherEntityFeature.FORECAST_DAILY,
    PERIOD_TWICE_DAILY: WeatherEntityFeature.FORECAST_TWICE_DAILY,
    PERIOD_HOURLY: WeatherEntityFeature.FORECAST_HOURLY,
}
# What to use when the entity lacks the requested forecast type.
_FALLBACKS: Final = {
    PERIOD_DAILY: (PERIOD_DAILY, PERIOD_TWICE_DAILY, PERIOD_HOURLY),
    PERIOD_HOURLY: (PERIOD_HOURLY, PERIOD_TWICE_DAILY, PERIOD_DAILY),
}
_DEFAULT_COUNTS: Final = {
    PERIOD_DAILY: DEFAULT_FORECAST_DAILY_PERIODS,
    PERIOD_TWICE_DAILY: 2 * DEFAULT_FORECAST_DAILY_PERIODS,
    PERIOD_HOURLY: DEFAULT_FORECAST_HOURLY_PERIODS,
}
_PERIOD_LENGTH: Final = {
    PERIOD_HOURLY: timedelta(hours=1),
    PERIOD_TWICE_DAILY: timedelta(hours=12),
}

# HA's condition ids, as words a voice assistant can say.
_CONDITION_WORDS: Final = {
    "clear-night": "clear night",
    "exceptional": "exceptional conditions",
    "lightning": "thunderstorm",
    "lightning-rainy": "thunderstorm with rain",
    "partlycloudy": "partly cloudy",
    "pouring": "heavy rain",
    "rainy": "rain",
    "snowy": "snow",
    "snowy-rainy": "sleet",
    "windy-variant": "windy and cloudy",
}


def condition_words(condition: Any) -> Any:
    """HA condition id as words ("partlycloudy" -> "partly cloudy")."""
    return _CONDITION_WORDS.get(condition, condition)


class WeatherForecastTool(LiveTool):
    """Current weather and forecast from one weather entity."""

    name = WEATHER_TOOL_NAME
    description = (
        "Weather at home now and the forecast for the next days or hours: "
        "condition, temperature, rain, wind. Use it for any weather question."
    )
    topics = "weather and forecasts"
    parameters = vol.Schema(
        {
            vol.Optional("period", description="daily (default) or hourly"): vol.In(
                [PERIOD_DAILY, PERIOD_HOURLY]
            ),
            vol.Optional(
                "count",
                description="how many periods (default 3 days or 8 hours)",
            ): vol.All(vol.Coerce(int), vol.Range(min=1, max=MAX_FORECAST_PERIODS)),
        }
    )

    def __init__(self, entity_id: str) -> None:
        """Read ``entity_id``."""
        self.entity_id = entity_id

    @property
    def usage(self) -> str:
        """How to call it right."""
        return (
            'Valid: "period" is "daily" or "hourly", "count" is a whole number '
            f"from 1 to {MAX_FORECAST_PERIODS}; both optional."
        )

    async def async_run(
        self, hass: HomeAssistant, args: dict[str, Any], language: str
    ) -> dict[str, Any]:
        """Current conditions, then the next periods; a summary in ``language``."""
        state = hass.states.get(self.entity_id)
        if state is None:
            return {
                "entity_id": self.entity_id,
                "state": "missing",
                "note": "The weather entity does not exist; no weather data.",
            }
        result: dict[str, Any] = {"location": state_name(state)}
        if state.state in (STATE_UNAVAILABLE, STATE_UNKNOWN):
            result["state"] = state.state
            result["note"] = "The weather service has no data right now."
            return result

        attrs = state.attributes
        result["now"] = current_conditions(state.state, attrs)
        phrases = await async_phrases(hass, language)
        summary = [_now_line(phrases, state.state, attrs)]

        requested = args.get("period", PERIOD_DAILY)
        supported = int(attrs.get(ATTR_SUPPORTED_FEATURES) or 0)
        period = next(
            (p for p in _FALLBACKS[requested] if supported & _FEATURES[p]), None
        )
        if period is None:
            result["note"] = "This weather service gives no forecast."
            result["summary"] = " ".join(summary)
            return result
        if period != requested:
            result["note"] = f"No {requested} forecast; this is the {period} one."
        count = args.get("count", _DEFAULT_COUNTS[period])
        try:
            raw_list = await self._async_forecast(hass, period)
        except HomeAssistantError as err:
            result["forecast_error"] = f"The forecast could not be read: {err}"
            result["summary"] = " ".join(summary)
            return result
        result["period"] = period
        now = dt_util.now()
        result["forecast"] = forecast_periods(raw_list, period, count, attrs, now)
        if period == PERIOD_DAILY:
            # A week at most: a weekday names one day (the forecast's own
            # entries carry each date).
            days = [
                d
                for d in day_forecasts(raw_list, attrs)
                if 0 <= (d.day - now.date()).days < DAYS_A_WEEKDAY_NAMES
            ]
            summary += [day_line(phrases, d, now.date()) for d in days[:count]]
        result["summary"] = " ".join(summary)
        return result

    async def async_read(self, hass: HomeAssistant) -> WeatherNow | None:
        """The weather now and the daily forecast, as numbers (None when unknown)."""
        state = hass.states.get(self.entity_id)
        if state is None or state.state in (STATE_UNAVAILABLE, STATE_UNKNOWN):
            return None
        attrs = state.attributes
        temperature = attrs.get(ATTR_WEATHER_TEMPERATURE)
        return WeatherNow(
            condition=state.state,
            temperature=_float(temperature),
            temperature_unit=attrs.get(ATTR_WEATHER_TEMPERATURE_UNIT),
            wind=wind_reading(
                attrs.get(ATTR_WEATHER_WIND_SPEED),
                attrs.get(ATTR_WEATHER_WIND_SPEED_UNIT),
                attrs.get(ATTR_WEATHER_WIND_BEARING),
                attrs.get(ATTR_WEATHER_WIND_GUST_SPEED),
            ),
            days=await self._async_days(hass, attrs),
        )

    async def _async_days(self, hass: HomeAssistant, attrs: Any) -> list[DayForecast]:
        """The daily forecast (or the daytime half of a twice-daily one)."""
        supported = int(attrs.get(ATTR_SUPPORTED_FEATURES) or 0)
        period = next(
            (p for p in (PERIOD_DAILY, PERIOD_TWICE_DAILY) if supported & _FEATURES[p]),
            None,
        )
        if period is None:
            return []
        try:
            # Read on every voice turn for the live lines: a weather service
            # that does not answer must not hold the reply up.
            async with asyncio.timeout(FORECAST_TIMEOUT):
                raw = await self._async_forecast(hass, period)
        except (HomeAssistantError, TimeoutError):
            return []
        return day_forecasts(raw, attrs)

    async def _async_forecast(self, hass: HomeAssistant, period: str) -> list[Any]:
        """The raw forecast items through `weather.get_forecasts` (logs failures)."""
        try:
            response = await hass.services.async_call(
                "weather",
                "get_forecasts",
                {"entity_id": self.entity_id, "type": period},
                blocking=True,
                return_response=True,
            )
        except HomeAssistantError as err:
            LOGGER.warning("Forecast of %s failed: %s", self.entity_id, err)
            raise
        entity_response = (response or {}).get(self.entity_id)
        raw = (
            entity_response.get("forecast")
            if isinstance(entity_response, dict)
            else None
        )
        return raw if isinstance(raw, list) else []


@dataclass(frozen=True, slots=True)
class WeatherNow:
    """The weather entity's reading: now and the daily forecast."""

    condition: str
    temperature: float | None
    temperature_unit: str | None
    wind: Wind | None
    days: list[DayForecast]


def _now_line(phrases: Phrases, condition: str, attrs: Any) -> str:
    return now_line(
        phrases,
        condition,
        _float(attrs.get(ATTR_WEATHER_TEMPERATURE)),
        attrs.get(ATTR_WEATHER_TEMPERATURE_UNIT),
    )


def wind_reading(
    speed: Any, unit: str | None, bearing: Any = None, gust: Any = None
) -> Wind | None:
    """A wind reading with its knots, or None without a speed."""
    speed_value = _float(speed)
    if speed_value is None:
        return None
    gust_value = _float(gust)
    return Wind(
        speed=speed_value,
        unit=unit,
        knots=to_knots(speed_value, unit),
        # A calm blows from nowhere: a vane at rest is no direction.
        degrees=parse_direction(bearing) if speed_value else None,
        gust=gust_value,
        gust_knots=to_knots(gust_value, unit) if gust_value is not None else None,
    )


def _float(value: Any) -> float | None:
    """A number, also one written as text (a template weather's "80")."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip().replace(",", "."))
        except ValueError:
            return None
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def day_forecasts(raw: list[Any], attrs: Any) -> list[DayForecast]:
    """Forecast items as days in local time.

    A daily forecast gives one item a day (the first counts). A twice-daily
    one (NWS) gives a daytime and a night half: the day is both, so the
    night's rain is never left out of "tomorrow" (the day's condition,
    high and wind are the daytime half's, its low the night's, the chance
    the higher and the amount the sum).
    """
    halves: dict[date, list[dict[str, Any]]] = {}
    for item in raw:
        if not isinstance(item, dict):
            continue
        start = forecast_start(item)
        if start is None:
            continue
        if "is_daytime" in item:
            # A half day is for the local date it starts on (a night from
            # 19:00 in New York starts at 00:00 UTC of the next date).
            day = dt_util.as_local(start).date()
        elif (day := forecast_day(start)) in halves:
            continue  # a daily forecast: its first item for the day
        halves.setdefault(day, []).append(item)
    return [_day(day, items, attrs) for day, items in sorted(halves.items())]


def _day(day: date, items: list[dict[str, Any]], attrs: Any) -> DayForecast:
    """One day from its items (one, or a twice-daily forecast's halves)."""
    nights = [item for item in items if item.get("is_daytime") is False]
    main = next((item for item in items if item not in nights), None)
    first = main or items[0]
    condition = first.get("condition")
    lows = _numbers(items, "templow") + _numbers(nights, "temperature")
    chances = _numbers(items, "precipitation_probability")
    amounts = _numbers(items, "precipitation")
    return DayForecast(
        day=day,
        condition=condition if isinstance(condition, str) else None,
        high=_float(main.get("temperature")) if main is not None else None,
        low=min(lows) if lows else None,
        rain_chance=max(chances) if chances else None,
        precipitation=sum(amounts) if amounts else None,
        temperature_unit=attrs.get(ATTR_WEATHER_TEMPERATURE_UNIT),
        precipitation_unit=attrs.get(ATTR_WEATHER_PRECIPITATION_UNIT),
        wind=wind_reading(
            first.get("wind_speed"),
            attrs.get(ATTR_WEATHER_WIND_SPEED_UNIT),
            first.get("wind_bearing"),
        ),
    )


def _numbers(items: list[dict[str, Any]], key: str) -> list[float]:
    """The numbers the items give for ``key``."""
    return [value for item in items if (value := _float(item.get(key))) is not None]


def forecast_start(item: dict[str, Any]) -> datetime | None:
    """When a forecast item starts; a time without an offset is HA's local
    time (a template weather fed by a local API: "2026-03-02T14:00:00")."""
    start = dt_util.parse_datetime(str(item.get("datetime", "")))
    if start is not None and start.tzinfo is None:
        return start.replace(tzinfo=dt_util.get_default_time_zone())
    return start


def forecast_day(start: datetime) -> date:
    """The day a daily forecast item is for.

    HA's Open-Meteo dates each day at 00:00 UTC, which is the evening
    before west of UTC: an item written at midnight in its own offset is
    for the day it is written with; any other, for its local date.
    """
    if start.time() == time(0):
        return start.date()
    return dt_util.as_local(start).date()


def current_conditions(condition: str, attrs: Any) -> dict[str, Any]:
    """The state and attributes of a weather entity, each value with its unit."""
    temp_unit = attrs.get(ATTR_WEATHER_TEMPERATURE_UNIT)
    now: dict[str, Any] = {"condition": condition_words(condition)}
    _put(now, "temperature", attrs.get(ATTR_WEATHER_TEMPERATURE), temp_unit)
    _put(now, "feels_like", attrs.get(ATTR_WEATHER_APPARENT_TEMPERATURE), temp_unit)
    _put(now, "humidity", attrs.get(ATTR_WEATHER_HUMIDITY), "%")
    wind = wind_text(
        attrs.get(ATTR_WEATHER_WIND_SPEED),
        attrs.get(ATTR_WEATHER_WIND_SPEED_UNIT),
        attrs.get(ATTR_WEATHER_WIND_BEARING),
        attrs.get(ATTR_WEATHER_WIND_GUST_SPEED),
    )
    if wind:
        now["wind"] = wind
    _put(
        now,
        "pressure",
        attrs.get(ATTR_WEATHER_PRESSURE),
        attrs.get(ATTR_WEATHER_PRESSURE_UNIT),
    )
    _put(now, "cloud_cover", attrs.get(ATTR_WEATHER_CLOUD_COVERAGE), "%")
    _put(
        now,
        "visibility",
        attrs.get(ATTR_WEATHER_VISIBILITY),
        attrs.get(ATTR_WEATHER_VISIBILITY_UNIT),
    )
    _put(now, "uv_index", attrs.get(ATTR_WEATHER_UV_INDEX), None)
    return now


def forecast_periods(
    raw: list[Any], period: str, count: int, attrs: Any, now: datetime
) -> list[dict[str, Any]]:
    """The next ``count`` periods that have not ended, labelled in local time."""
    periods: list[dict[str, Any]] = []
    for item in raw:
        if len(periods) >= count:
            break
        if not isinstance(item, dict):
            continue
        start = forecast_start(item)
        if start is None or _has_ended(start, period, now):
            continue
        periods.append(_period(item, start, period, attrs, now))
    return periods


def _has_ended(start: datetime, period: str, now: datetime) -> bool:
    if period == PERIOD_DAILY:
        return forecast_day(start) < now.date()
    return start + _PERIOD_LENGTH[period] <= now


def _period(
    item: dict[str, Any], start: datetime, period: str, attrs: Any, now: datetime
) -> dict[str, Any]:
    temp_unit = attrs.get(ATTR_WEATHER_TEMPERATURE_UNIT)
    local = (
        dt_util.start_of_local_day(forecast_day(start))
        if period == PERIOD_DAILY
        else dt_util.as_local(start)
    )
    entry: dict[str, Any] = {
        "when": when_label(local, period, now, item.get("is_daytime")),
        "datetime": local.isoformat(),
    }
    if (condition := item.get("condition")) is not None:
        entry["condition"] = condition_words(condition)
    if item.get("templow") is not None:
        _put(entry, "high", item.get("temperature"), temp_unit)
        _put(entry, "low", item.get("templow"), temp_unit)
    else:
        _put(entry, "temperature", item.get("temperature"), temp_unit)
    _put(
        entry,
        "precipitation",
        item.get("precipitation"),
        attrs.get(ATTR_WEATHER_PRECIPITATION_UNIT),
    )
    chance = (
        "chance_of_precipitation"
        if condition in FROZEN_CONDITIONS
        else "chance_of_rain"
    )
    _put(entry, chance, item.get("precipitation_probability"), "%")
    wind = wind_text(
        item.get("wind_speed"),
        attrs.get(ATTR_WEATHER_WIND_SPEED_UNIT),
        item.get("wind_bearing"),
        item.get("wind_gust_speed"),
    )
    if wind:
        entry["wind"] = wind
    _put(entry, "humidity", item.get("humidity"), "%")
    _put(entry, "uv_index", item.get("uv_index"), None)
    return entry


def when_label(
    local: datetime, period: str, now: datetime, is_daytime: Any = None
) -> str:
    """When a period starts, in words: "today", "tomorrow 14:00", "tonight"."""
    today = dt_util.as_local(now).date()
    if period == PERIOD_TWICE_DAILY and is_daytime is False:
        return _night_label(local, today)
    day = _day_words(local.date(), today)
    if period == PERIOD_HOURLY:
        return f"{day} {local:%H:%M}"
    if period == PERIOD_TWICE_DAILY and is_daytime:
        return f"{day} daytime"
    return day


def _night_label(local: datetime, today: date) -> str:
    """A night named by the evening it begins: a half that starts after
    midnight (NWS's "Overnight", 01:00-06:00) ends the night before, which
    is the night now when that evening was yesterday, never "tonight"."""
    evening = local.date() - timedelta(days=1) if local.hour < 12 else local.date()
    if evening < today:
        return "overnight"
    if evening == today:
        return "tonight"
    return f"{_day_words(evening, today)} night"


def _day_words(day: date, today: date) -> str:
    """ "today", "tomorrow", or the date ("Thursday 5 March")."""
    days = (day - today).days
    if days == 0:
        return "today"
    if days == 1:
        return "tomorrow"
    return f"{day:%A} {day.day} {day:%B}"


def _put(target: dict[str, Any], key: str, value: Any, unit: str | None) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        target[key] = with_unit(value, unit)
