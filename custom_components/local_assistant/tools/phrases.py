"""Ready-to-speak summaries of live data, in the conversation's language.

A small model asked "can I go kitesurfing?" reads 18.5 kn, 101° and a verdict
of "good", and still says "The waves are 13." The tools therefore add one
sentence it can repeat, and the fast path speaks it without a model call.
English and Spanish are written out; other languages get English.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Final

from .kite import (
    VERDICT_GOOD,
    VERDICT_TOO_LIGHT,
    VERDICT_TOO_STRONG,
    VERDICT_WRONG_DIRECTION,
    compass_point,
    format_number,
)

LANGUAGES: Final = ("en", "es")

_POINTS: Final = {
    "en": {
        "N": "north",
        "NNE": "north-north-east",
        "NE": "north-east",
        "ENE": "east-north-east",
        "E": "east",
        "ESE": "east-south-east",
        "SE": "south-east",
        "SSE": "south-south-east",
        "S": "south",
        "SSW": "south-south-west",
        "SW": "south-west",
        "WSW": "west-south-west",
        "W": "west",
        "WNW": "west-north-west",
        "NW": "north-west",
        "NNW": "north-north-west",
    },
    "es": {
        "N": "norte",
        "NNE": "nornoreste",
        "NE": "noreste",
        "ENE": "estenoreste",
        "E": "este",
        "ESE": "estesureste",
        "SE": "sureste",
        "SSE": "sursureste",
        "S": "sur",
        "SSW": "sursuroeste",
        "SW": "suroeste",
        "WSW": "oestesuroeste",
        "W": "oeste",
        "WNW": "oestenoroeste",
        "NW": "noroeste",
        "NNW": "nornoroeste",
    },
}

# HA's weather condition ids.
_CONDITIONS: Final = {
    "en": {
        "clear-night": "clear",
        "cloudy": "cloudy",
        "exceptional": "exceptional weather",
        "fog": "foggy",
        "hail": "hail",
        "lightning": "thunderstorms",
        "lightning-rainy": "thunderstorms and rain",
        "partlycloudy": "partly cloudy",
        "pouring": "heavy rain",
        "rainy": "rain",
        "snowy": "snow",
        "snowy-rainy": "sleet",
        "sunny": "sunny",
        "windy": "windy",
        "windy-variant": "windy and cloudy",
    },
    "es": {
        "clear-night": "despejado",
        "cloudy": "nublado",
        "exceptional": "tiempo excepcional",
        "fog": "niebla",
        "hail": "granizo",
        "lightning": "tormentas",
        "lightning-rainy": "tormentas con lluvia",
        "partlycloudy": "parcialmente nublado",
        "pouring": "lluvia fuerte",
        "rainy": "lluvia",
        "snowy": "nieve",
        "snowy-rainy": "aguanieve",
        "sunny": "soleado",
        "windy": "ventoso",
        "windy-variant": "ventoso y nublado",
    },
}
_WEEKDAYS: Final = {
    "en": (
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ),
    "es": ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"),
}

_TEXT: Final = {
    "en": {
        "kite_good": "Yes, good for kitesurfing: {wind}, inside your {window} window.",
        "kite_light": "No, not enough wind for kitesurfing: {wind}, and you need at least {min} knots.",
        "kite_strong": "No, too much wind for kitesurfing: {wind}, above your maximum of {max} knots.",
        "kite_direction": "No, the wind comes from the wrong side for your spot: {wind}; good directions are {points}.",
        "kite_unknown": "I can't tell whether it's good for kitesurfing: there is no current wind reading.",
        "kite_unknown_direction": "I can't tell whether it's good for kitesurfing: {wind}, but the wind direction is unknown.",
        "wind": "{speed} knots from the {point}",
        "wind_no_direction": "{speed} knots",
        "gusts": ", gusting {speed}",
        "wind_now": "The wind is {wind}.",
        "waves": "The waves are {height} high{period}.",
        "wave_period": ", every {seconds} seconds",
        "water": "The water is {temperature}.",
        "tide": "The tide is at {height}{trend}.",
        "tide_rising": ", rising",
        "tide_falling": ", falling",
        "no_reading": "There is no current reading for that.",
        "window": "{min} to {max} knot",
        "window_min": "{min} knot minimum",
        "window_max": "{max} knot maximum",
        "now": "Now it's {condition}, {temperature}.",
        "now_no_temp": "Now it's {condition}.",
        "day": "{day}: {condition}, {low} to {high}, {rain}% chance of rain.",
        "day_no_low": "{day}: {condition}, {high}, {rain}% chance of rain.",
        "day_no_rain": "{day}: {condition}, {low} to {high}.",
        "rain_likely": "Yes, rain is likely {day}: {rain}% chance{amount}.",
        "rain_possible": "Maybe: there is a {rain}% chance of rain {day}{amount}.",
        "rain_unlikely": "No, rain is not expected {day}: {rain}% chance.",
        "rain_unknown": "The forecast for {day} gives no chance of rain; it says {condition}.",
        "amount": ", about {amount}",
        "no_forecast": "There is no forecast for {day}.",
        "today": "today",
        "tomorrow": "tomorrow",
        "on_day": "on {weekday}",
    },
    "es": {
        "kite_good": "Sí, buenas condiciones para kitesurf: {wind}, dentro de tu ventana de {window}.",
        "kite_light": "No, no hay viento suficiente para kitesurf: {wind}, y necesitas al menos {min} nudos.",
        "kite_strong": "No, hay demasiado viento para kitesurf: {wind}, por encima de tu máximo de {max} nudos.",
        "kite_direction": "No, el viento entra por mal lado para tu spot: {wind}; las buenas direcciones son {points}.",
        "kite_unknown": "No puedo saber si se puede hacer kitesurf: no hay lectura de viento actual.",
        "kite_unknown_direction": "No puedo saber si se puede hacer kitesurf: {wind}, pero no se sabe la dirección.",
        "wind": "{speed} nudos del {point}",
        "wind_no_direction": "{speed} nudos",
        "gusts": ", con rachas de {speed}",
        "wind_now": "El viento sopla a {wind}.",
        "waves": "Las olas tienen {height}{period}.",
        "wave_period": ", con un periodo de {seconds} segundos",
        "water": "El agua está a {temperature}.",
        "tide": "La marea está a {height}{trend}.",
        "tide_rising": ", subiendo",
        "tide_falling": ", bajando",
        "no_reading": "No hay una lectura actual de eso.",
        "window": "{min} a {max} nudos",
        "window_min": "mínimo {min} nudos",
        "window_max": "máximo {max} nudos",
        "now": "Ahora está {condition}, {temperature}.",
        "now_no_temp": "Ahora está {condition}.",
        "day": "{day}: {condition}, de {low} a {high}, {rain}% de probabilidad de lluvia.",
        "day_no_low": "{day}: {condition}, {high}, {rain}% de probabilidad de lluvia.",
        "day_no_rain": "{day}: {condition}, de {low} a {high}.",
        "rain_likely": "Sí, es probable que llueva {day}: {rain}% de probabilidad{amount}.",
        "rain_possible": "Puede que sí: hay un {rain}% de probabilidad de lluvia {day}{amount}.",
        "rain_unlikely": "No, no se espera lluvia {day}: {rain}% de probabilidad.",
        "rain_unknown": "El pronóstico de {day} no da probabilidad de lluvia; dice {condition}.",
        "amount": ", unos {amount}",
        "no_forecast": "No hay pronóstico para {day}.",
        "today": "hoy",
        "tomorrow": "mañana",
        "on_day": "el {weekday}",
    },
}


def language_of(language: str | None) -> str:
    """Our phrase language for HA's language tag ("es-ES" -> "es"); else "en"."""
    base = (language or "en").split("-")[0].split("_")[0].lower()
    return base if base in LANGUAGES else "en"


def _t(language: str, key: str, **values: str) -> str:
    return _TEXT[language][key].format(**values)


def number(value: float, language: str) -> str:
    """A number as said in the language: 1.6 in English, 1,6 in Spanish."""
    text = format_number(value)
    return text.replace(".", ",") if language == "es" else text


def with_unit(value: float, unit: str | None, language: str) -> str:
    """A value with its unit ("18,9 °C")."""
    text = number(value, language)
    if not unit:
        return text
    return f"{text}{unit}" if unit in ("%", "°") else f"{text} {unit}"


def condition(value: str | None, language: str) -> str:
    """A weather condition in words."""
    if value is None:
        return ""
    return _CONDITIONS[language].get(value, value.replace("-", " "))


def wind_phrase(
    language: str, knots: float, degrees: float | None, gust_kn: float | None = None
) -> str:
    """ "18.5 knots from the east, gusting 24.9" in the language."""
    speed = number(knots, language)
    if degrees is None:
        text = _t(language, "wind_no_direction", speed=speed)
    else:
        point = _POINTS[language][compass_point(degrees)]
        text = _t(language, "wind", speed=speed, point=point)
    if gust_kn is not None:
        text += _t(language, "gusts", speed=number(gust_kn, language))
    return text


@dataclass(frozen=True, slots=True)
class KiteFacts:
    """What the verdict found, as numbers."""

    verdict: str
    wind_kn: float | None
    direction: float | None
    gust_kn: float | None
    min_kn: float | None
    max_kn: float | None
    directions: tuple[str, ...]


def kite_sentence(language: str, facts: KiteFacts) -> str:
    """The kitesurf verdict as one sentence."""
    if facts.wind_kn is None:
        return _t(language, "kite_unknown")
    wind = wind_phrase(language, facts.wind_kn, facts.direction, facts.gust_kn)
    verdict = facts.verdict
    if verdict == VERDICT_GOOD:
        return _t(language, "kite_good", wind=wind, window=_window(language, facts))
    if verdict == VERDICT_TOO_LIGHT and facts.min_kn is not None:
        return _t(language, "kite_light", wind=wind, min=number(facts.min_kn, language))
    if verdict == VERDICT_TOO_STRONG and facts.max_kn is not None:
        return _t(
            language, "kite_strong", wind=wind, max=number(facts.max_kn, language)
        )
    if verdict == VERDICT_WRONG_DIRECTION:
        points = ", ".join(_POINTS[language].get(p, p) for p in facts.directions)
        return _t(language, "kite_direction", wind=wind, points=points)
    return _t(language, "kite_unknown_direction", wind=wind)


def _window(language: str, facts: KiteFacts) -> str:
    low = number(facts.min_kn, language) if facts.min_kn is not None else None
    high = number(facts.max_kn, language) if facts.max_kn is not None else None
    if low is not None and high is not None:
        return _t(language, "window", min=low, max=high)
    if low is not None:
        return _t(language, "window_min", min=low)
    if high is not None:
        return _t(language, "window_max", max=high)
    return ""


def wind_sentence(
    language: str, knots: float | None, degrees: float | None, gust_kn: float | None
) -> str:
    """ "The wind is 18.5 knots from the east, gusting 24.9." """
    if knots is None:
        return _t(language, "no_reading")
    return _t(language, "wind_now", wind=wind_phrase(language, knots, degrees, gust_kn))


def waves_sentence(
    language: str,
    height: float | None,
    unit: str | None,
    period_s: float | None = None,
) -> str:
    """ "The waves are 1.6 m high, every 9 seconds." """
    if height is None:
        return _t(language, "no_reading")
    period = (
        _t(language, "wave_period", seconds=number(period_s, language))
        if period_s is not None
        else ""
    )
    return _t(
        language, "waves", height=with_unit(height, unit, language), period=period
    )


def water_sentence(language: str, temperature: float | None, unit: str | None) -> str:
    """ "The water is 18.9 °C." """
    if temperature is None:
        return _t(language, "no_reading")
    return _t(language, "water", temperature=with_unit(temperature, unit, language))


def tide_sentence(
    language: str, height: float | None, unit: str | None, trend: str | None
) -> str:
    """ "The tide is at 1.42 m, rising." """
    if height is None:
        return _t(language, "no_reading")
    suffix = ""
    if trend in ("rising", "falling"):
        suffix = _t(language, f"tide_{trend}")
    return _t(language, "tide", height=with_unit(height, unit, language), trend=suffix)


@dataclass(frozen=True, slots=True)
class DayForecast:
    """One day of a forecast, as numbers."""

    day: date
    condition: str | None
    high: float | None
    low: float | None
    rain_chance: float | None
    precipitation: float | None
    temperature_unit: str | None
    precipitation_unit: str | None


def day_name(language: str, day: date, today: date) -> str:
    """ "today", "tomorrow", "on Friday" (Spanish: "hoy", "mañana", "el viernes")."""
    offset = (day - today).days
    if offset == 0:
        return _t(language, "today")
    if offset == 1:
        return _t(language, "tomorrow")
    return _t(language, "on_day", weekday=_WEEKDAYS[language][day.weekday()])


def now_sentence(
    language: str, condition_id: str | None, temperature: float | None, unit: str | None
) -> str:
    """ "Now it's sunny, 24 °C." """
    words = condition(condition_id, language)
    if temperature is None:
        return _t(language, "now_no_temp", condition=words)
    return _t(
        language,
        "now",
        condition=words,
        temperature=with_unit(temperature, unit, language),
    )


def day_sentence(language: str, forecast: DayForecast, today: date) -> str:
    """ "Tomorrow: windy, 17 °C to 24 °C, 0% chance of rain." """
    day = day_name(language, forecast.day, today)
    day = day[:1].upper() + day[1:]
    unit = forecast.temperature_unit
    high = (
        with_unit(forecast.high, unit, language) if forecast.high is not None else "?"
    )
    words = condition(forecast.condition, language)
    if forecast.rain_chance is None:
        low = (
            with_unit(forecast.low, unit, language) if forecast.low is not None else "?"
        )
        return _t(language, "day_no_rain", day=day, condition=words, low=low, high=high)
    rain = number(forecast.rain_chance, language)
    if forecast.low is None:
        return _t(
            language, "day_no_low", day=day, condition=words, high=high, rain=rain
        )
    low = with_unit(forecast.low, unit, language)
    return _t(language, "day", day=day, condition=words, low=low, high=high, rain=rain)


def rain_sentence(language: str, forecast: DayForecast, today: date) -> str:
    """Will it rain that day? Yes, maybe or no, with the chance."""
    day = day_name(language, forecast.day, today)
    if forecast.rain_chance is None:
        return _t(
            language,
            "rain_unknown",
            day=day,
            condition=condition(forecast.condition, language),
        )
    chance = forecast.rain_chance
    amount = ""
    if forecast.precipitation:
        amount = _t(
            language,
            "amount",
            amount=with_unit(
                forecast.precipitation, forecast.precipitation_unit, language
            ),
        )
    rain = number(chance, language)
    if chance >= 50:
        return _t(language, "rain_likely", day=day, rain=rain, amount=amount)
    if chance >= 20:
        return _t(language, "rain_possible", day=day, rain=rain, amount=amount)
    return _t(language, "rain_unlikely", day=day, rain=rain)


def no_forecast_sentence(language: str, day: date, today: date) -> str:
    """When the forecast does not reach that day."""
    return _t(language, "no_forecast", day=day_name(language, day, today))
