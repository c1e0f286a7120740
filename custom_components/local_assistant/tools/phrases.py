"""Live data in the conversation's words: short lines a small model can repeat.

The words come from the integration's translations (``exceptions.live_*`` in
``translations/<language>.json``) and the weather conditions from Home
Assistant's own weather translations, so every language reads the same data
the same way; no sentence is written here. What is here is how the values go
into them: numbers with the language's decimal separator and their units,
knots beside other wind units, and facts only (amounts and chances, the
kitesurf verdict with its reason), never a rain verdict that a number could
contradict.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
import unicodedata

from .kite import (
    VERDICT_GOOD,
    VERDICT_TOO_LIGHT,
    VERDICT_TOO_STRONG,
    VERDICT_WRONG_DIRECTION,
    compass_point,
    format_number,
    spot_point,
    unit_after,
)

# Prefix of our phrase keys among the translations' ``exceptions``.
PHRASE_PREFIX = "live_"
KNOTS = "kn"
# HA's weather conditions that fall as snow or ice ("precipitation", not
# "rain"), and all that fall: beside them a dry amount says no "no rain".
FROZEN_CONDITIONS = frozenset({"snowy", "snowy-rainy", "hail"})
WET_CONDITIONS = FROZEN_CONDITIONS | {"rainy", "pouring", "lightning-rainy"}


@dataclass(frozen=True, slots=True)
class Phrases:
    """The phrase templates and condition words of one language."""

    # Template by key without the prefix ("now": "Now: {condition}, {temperature}.").
    texts: Mapping[str, str]
    # HA's weather condition id -> the word HA's own translation uses.
    conditions: Mapping[str, str] = field(default_factory=dict)

    def text(self, key: str, **values: str) -> str:
        """The template ``key`` with ``values`` in it."""
        return self.texts[key].format(**values)

    def number(self, value: float) -> str:
        """A number as the language writes it: 1.6 or 1,6."""
        return format_number(value).replace(".", self.texts.get("decimal", "."))

    def with_unit(self, value: float, unit: str | None) -> str:
        """ "18,9 °C", "60%", "2.1 m"; a share as the language writes it ("%60")."""
        text = self.number(value)
        if unit == "%":
            return self.texts["percent"].format(value=text)
        return unit_after(text, unit)

    def joined(self, parts: list[str]) -> str:
        """Parts of one line, as the language writes a list and ends a
        sentence: "Tomorrow: pouring, 11 mm of rain." in English, its own
        marks in Chinese or Japanese, none at the end in Thai."""
        end = self.texts["end"]
        return self.separator.join(part.removesuffix(end) for part in parts) + end

    @property
    def separator(self) -> str:
        """The mark between the parts of a list, with the space after it that
        the script writes: ", " and "، ", but not after the full-width marks of
        Chinese and Japanese. The translations hold the mark alone: HA's
        translation values have no leading or trailing space."""
        mark = self.texts["separator"]
        if mark and unicodedata.east_asian_width(mark[-1]) in ("F", "W"):
            return mark
        return f"{mark} "

    def point(self, degrees: float) -> str:
        """The compass point the wind comes from, in words ("west-north-west")."""
        return self.point_name(compass_point(degrees))

    def point_name(self, point: str) -> str:
        """A compass point ("WNW") in words; translation keys are lower case."""
        return self.texts.get(f"point_{point.lower()}", point)

    def condition(self, condition: str | None) -> str:
        """A weather condition in HA's own words for the language, else ours.

        HA has no weather words in many languages it speaks (Afrikaans,
        Arabic, Hindi, Swahili ...) and no "windy-variant" in some (Catalan,
        Dutch, Polish): the translations' ``live_condition_*`` say them.
        """
        if not condition:
            return ""
        if condition in self.conditions:
            return self.conditions[condition]
        # Translation keys are slugs: "condition_clear_night".
        return self.texts.get(
            f"condition_{condition.replace('-', '_')}", condition.replace("-", " ")
        )

    def weekday_aliases(self, today: date) -> dict[str, str]:
        """The weekday "Tomorrow" stands for: {"Tomorrow": "Tuesday"}. Not
        "Today": "Monday" asked on a Monday means the next one."""
        tomorrow = today + timedelta(days=1)
        return {self.text("tomorrow"): self.text(f"weekday_{tomorrow.weekday()}")}

    def day_name(self, day: date, today: date) -> str:
        """ "Today", "Tomorrow", or the weekday's name."""
        offset = (day - today).days
        if offset == 0:
            return self.text("today")
        if offset == 1:
            return self.text("tomorrow")
        return self.text(f"weekday_{day.weekday()}")


@dataclass(frozen=True, slots=True)
class Wind:
    """A wind reading: speed in its own unit and in knots, direction, gusts."""

    speed: float
    unit: str | None
    knots: float | None
    degrees: float | None = None
    gust: float | None = None
    gust_knots: float | None = None


def speed_text(
    phrases: Phrases, speed: float, unit: str | None, knots: float | None
) -> str:
    """ "65 km/h (35.1 kn)", or "22 kn" when knots is the unit."""
    text = phrases.with_unit(speed, unit)
    if knots is not None and unit != KNOTS:
        text += f" ({phrases.with_unit(knots, KNOTS)})"
    return text


def wind_line(phrases: Phrases, wind: Wind) -> str:
    """ "Wind: 65 km/h (35.1 kn) from the west-south-west, gusts 90 km/h (48.6 kn)." """
    speed = speed_text(phrases, wind.speed, wind.unit, wind.knots)
    gusts = (
        speed_text(phrases, wind.gust, wind.unit, wind.gust_knots)
        if wind.gust is not None
        else None
    )
    if wind.degrees is None:
        if gusts is None:
            return phrases.text("wind_no_direction", speed=speed)
        return phrases.text("wind_no_direction_gusts", speed=speed, gusts=gusts)
    point = phrases.point(wind.degrees)
    if gusts is None:
        return phrases.text("wind", speed=speed, point=point)
    return phrases.text("wind_gusts", speed=speed, point=point, gusts=gusts)


def now_line(
    phrases: Phrases, condition: str | None, temperature: float | None, unit: str | None
) -> str:
    """ "Now: rainy, 10 °C." """
    words = phrases.condition(condition)
    if temperature is None:
        return phrases.text("now_no_temperature", condition=words)
    return phrases.text(
        "now", condition=words, temperature=phrases.with_unit(temperature, unit)
    )


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
    wind: Wind | None = None


def day_line(phrases: Phrases, forecast: DayForecast, today: date) -> str:
    """ "Tomorrow: heavy rain, 6 °C to 9 °C, 11 mm of rain (90 % chance)."

    Only what the forecast says: the amount and the chance of rain as given,
    so the line can never say "no rain" beside 11 mm. A missing condition or
    temperature has its own template, never an empty slot ("Tomorrow: , 9 °C").
    """
    unit = forecast.temperature_unit
    values = {"day": phrases.day_name(forecast.day, today)}
    if forecast.high is not None and forecast.low is not None:
        key = "day"
        values["low"] = phrases.with_unit(forecast.low, unit)
        values["high"] = phrases.with_unit(forecast.high, unit)
    elif forecast.high is not None:
        key = "day_high"
        values["high"] = phrases.with_unit(forecast.high, unit)
    elif forecast.low is not None:
        key = "day_low"
        values["low"] = phrases.with_unit(forecast.low, unit)
    else:
        key = "day_condition"
    facts = []
    if rain := _rain_text(phrases, forecast, today):
        facts.append(rain)
    if (wind := forecast.wind) is not None and wind.degrees is not None:
        speed = speed_text(phrases, wind.speed, wind.unit, wind.knots)
        facts.append(
            phrases.text("day_wind", speed=speed, point=phrases.point(wind.degrees))
        )
    if condition := phrases.condition(forecast.condition):
        values["condition"] = condition
    elif key != "day_condition":
        key += "_no_condition"
    elif facts:
        # Neither condition nor temperature: the day's other facts lead.
        values["facts"] = phrases.separator.join(facts)
        return phrases.text("day_facts", **values)
    else:
        return phrases.text("day_unknown", **values)
    return phrases.joined([phrases.text(key, **values), *facts])


def _rain_text(phrases: Phrases, forecast: DayForecast, today: date) -> str:
    """The amount and chance as given; snow or hail is no "rain", and a wet
    condition beside a dry amount gets no "no rain" (the condition stands),
    nor does today, already under way (it may be raining now). An amount
    said as 0 ("0.004 mm") is none."""
    amount = forecast.precipitation
    if amount is not None and round(amount, 2) == 0:
        amount = 0
    chance = forecast.rain_chance
    kind = "precipitation" if forecast.condition in FROZEN_CONDITIONS else "rain"
    if amount is not None and amount > 0 and chance is not None:
        return phrases.text(
            f"{kind}_amount_chance",
            amount=phrases.with_unit(amount, forecast.precipitation_unit),
            chance=phrases.with_unit(chance, "%"),
        )
    if amount is not None and amount > 0:
        return phrases.text(
            f"{kind}_amount",
            amount=phrases.with_unit(amount, forecast.precipitation_unit),
        )
    if chance is not None:
        return phrases.text(f"{kind}_chance", chance=phrases.with_unit(chance, "%"))
    if (
        amount is not None
        and forecast.condition not in WET_CONDITIONS
        and forecast.day != today
    ):
        return phrases.text("rain_none")
    return ""


def waves_line(
    phrases: Phrases, height: float, unit: str | None, period_s: float | None
) -> str:
    """ "Waves: 2.4 m, every 7 seconds." """
    if period_s is None:
        return phrases.text("waves", height=phrases.with_unit(height, unit))
    return phrases.text(
        "waves_period",
        height=phrases.with_unit(height, unit),
        seconds=phrases.number(period_s),
    )


def water_line(phrases: Phrases, temperature: float, unit: str | None) -> str:
    """ "Water: 10.5 °C." """
    return phrases.text("water", temperature=phrases.with_unit(temperature, unit))


def tide_line(
    phrases: Phrases, height: float, unit: str | None, trend: str | None
) -> str:
    """ "Tide: 8.9 m, rising." """
    key = f"tide_{trend}" if trend in ("rising", "falling") else "tide"
    return phrases.text(key, height=phrases.with_unit(height, unit))


@dataclass(frozen=True, slots=True)
class KiteFacts:
    """What the kitesurf verdict found, as numbers (knots)."""

    verdict: str
    wind_kn: float | None
    direction: float | None
    gust_kn: float | None
    min_kn: float | None
    max_kn: float | None
    directions: tuple[str, ...]


def kite_line(phrases: Phrases, facts: KiteFacts) -> str:
    """The kitesurf verdict now, with its reason, as one line."""
    if facts.wind_kn is None:
        return phrases.text("kite_unknown")
    wind = phrases.with_unit(facts.wind_kn, KNOTS)
    if facts.direction is not None:
        # The point the verdict judged, as precise as the spot (tools/kite.py).
        point = spot_point(facts.direction, facts.directions)
        wind = phrases.text("wind_from", speed=wind, point=phrases.point_name(point))
    verdict = facts.verdict
    if verdict == VERDICT_GOOD:
        return _kite_good(phrases, facts, wind)
    if verdict == VERDICT_TOO_LIGHT and facts.min_kn is not None:
        return phrases.text(
            "kite_too_light", wind=wind, min=phrases.with_unit(facts.min_kn, KNOTS)
        )
    if verdict == VERDICT_TOO_STRONG and facts.max_kn is not None:
        return phrases.text(
            "kite_too_strong", wind=wind, max=phrases.with_unit(facts.max_kn, KNOTS)
        )
    if verdict == VERDICT_WRONG_DIRECTION:
        return phrases.text(
            "kite_wrong_direction", wind=wind, points=_points(phrases, facts)
        )
    return phrases.text("kite_unknown_direction", wind=wind)


def _kite_good(phrases: Phrases, facts: KiteFacts, wind: str) -> str:
    """Yes, with what it was judged on: the speed window, else the directions.

    kite.py judges the mean wind, so gusts above the maximum leave a yes, but
    its reason names them: the line says them too, never a bare yes.
    """
    window = _window(phrases, facts)
    if not window:
        # A spot of directions only: no speed window to name.
        return phrases.text(
            "kite_good_direction", wind=wind, points=_points(phrases, facts)
        )
    if (
        facts.gust_kn is not None
        and facts.max_kn is not None
        and facts.gust_kn > facts.max_kn
    ):
        return phrases.text(
            "kite_good_gusts",
            wind=wind,
            window=window,
            gusts=phrases.with_unit(facts.gust_kn, KNOTS),
            max=phrases.with_unit(facts.max_kn, KNOTS),
        )
    return phrases.text("kite_good", wind=wind, window=window)


def _points(phrases: Phrases, facts: KiteFacts) -> str:
    """The spot's good directions in words ("west, north-west")."""
    return phrases.separator.join(
        phrases.point_name(point) for point in facts.directions
    )


def _window(phrases: Phrases, facts: KiteFacts) -> str:
    """The spot's speed window in words; "" for a spot of directions only."""
    low = phrases.with_unit(facts.min_kn, KNOTS) if facts.min_kn is not None else None
    high = phrases.with_unit(facts.max_kn, KNOTS) if facts.max_kn is not None else None
    if low is not None and high is not None:
        return phrases.text("window", min=low, max=high)
    if low is not None:
        return phrases.text("window_min", min=low)
    if high is not None:
        return phrases.text("window_max", max=high)
    return ""
