"""Our own live-data lines are true to the data, in every language (tools/phrases.py).

Property tests over generated forecasts, sea readings and kitesurf verdicts,
with the real translations of every language we ship: every placeholder
filled, every number written as the language writes it, the rain line never
saying "no rain" beside an amount or a chance, the kitesurf line saying yes
exactly when the wind is inside the window.
"""

from __future__ import annotations

from datetime import date, timedelta
import json
from os.path import commonprefix
from pathlib import Path

from hypothesis import assume, given, settings, strategies as st
import pytest

from custom_components.local_assistant.llm.sentences import SPOKEN_LANGUAGES
from custom_components.local_assistant.tools.kite import (
    VERDICT_GOOD,
    KiteSpot,
    format_number,
    kite_verdict,
)
from custom_components.local_assistant.tools.phrases import (
    FROZEN_CONDITIONS,
    PHRASE_PREFIX,
    WET_CONDITIONS,
    DayForecast,
    KiteFacts,
    Phrases,
    Wind,
    day_line,
    kite_line,
    now_line,
    tide_line,
    water_line,
    waves_line,
    wind_line,
)
from custom_components.local_assistant.wording import words as product_words

PACKAGE = Path(__file__).resolve().parents[2] / "custom_components" / "local_assistant"
WEATHER_TRANSLATIONS = (
    Path(__import__("homeassistant").__file__).parent
    / "components"
    / "weather"
    / "translations"
)
LANGUAGES = SPOKEN_LANGUAGES
CONDITIONS = (
    "clear-night",
    "cloudy",
    "fog",
    "snowy-rainy",
    "hail",
    "lightning-rainy",
    "partlycloudy",
    "pouring",
    "rainy",
    "snowy",
    "sunny",
    "windy-variant",
)
TODAY = date(2026, 12, 1)


def phrases_of(language: str) -> Phrases:
    """The phrases of a language as HA loads them: ours and HA's conditions."""
    ours = json.loads(
        (PACKAGE / "translations" / f"{language}.json").read_text("utf-8")
    )
    texts = {
        key.removeprefix(PHRASE_PREFIX): value["message"]
        for key, value in ours["exceptions"].items()
        if key.startswith(PHRASE_PREFIX)
    }
    return Phrases(texts, ha_conditions(language))


def ha_conditions(language: str) -> dict[str, str]:
    """HA's weather words for a language, as llm/sentences.py reads them: none
    where HA has no file, none that are still its English ones."""
    path = WEATHER_TRANSLATIONS / f"{language}.json"
    if not path.exists():
        return {}
    words = json.loads(path.read_text("utf-8"))["entity_component"]["_"]["state"]
    if language == "en":
        return dict(words)
    english = ha_conditions("en")
    return {key: word for key, word in words.items() if word != english.get(key)}


PHRASES = {language: phrases_of(language) for language in LANGUAGES}
languages = st.sampled_from(LANGUAGES)
amounts = st.one_of(st.none(), st.floats(0, 80).map(lambda v: round(v, 1)))
chances = st.one_of(st.none(), st.integers(0, 100).map(float))
temperatures = st.floats(-30, 45).map(lambda v: round(v, 1))
speeds = st.floats(0, 120).map(lambda v: round(v, 1))
bearings = st.one_of(st.none(), st.floats(0, 359.9))


def written(phrases: Phrases, value: float) -> str:
    return format_number(value).replace(".", phrases.texts["decimal"])


def words(text: str) -> list[str]:
    """Letters only: the product's words (marks included: Bengali "বৃষ্টি")."""
    return [word for word in product_words(text) if not word.isdigit()]


def rain_words(phrases: Phrases) -> set[str]:
    """The word for rain of a language: its rain template's, not its
    precipitation template's ("Regen", "pluie")."""
    return set(words(phrases.texts["rain_amount"])) - set(
        words(phrases.texts["precipitation_amount"])
    )


def assert_filled(line: str) -> None:
    assert line.strip()
    assert "{" not in line
    assert "}" not in line
    # An empty value leaves its marks behind: "Tomorrow: , 9 °C", "window ( )".
    assert "  " not in line
    assert " ." not in line
    assert "()" not in line
    assert "（）" not in line


def assert_no_empty_day_slot(phrases: Phrases, line: str) -> None:
    """No "Tomorrow: , 5 °C" nor "Tomorrow: .": the day's own marks
    ("{day}: {condition}") are never followed by a separator or the end."""
    lead = phrases.texts["day"].split("{day}")[1].split("{condition}")[0]
    for mark in (phrases.separator, phrases.texts["end"]):
        if mark:
            assert lead + mark not in line
            assert lead.rstrip() + mark not in line
    assert phrases.separator * 2 not in line


def kite_yes(phrases: Phrases) -> str:
    """The opening every kitesurf yes shares ("Kitesurfing now: yes, ")."""
    return commonprefix(
        [text for key, text in phrases.texts.items() if key.startswith("kite_good")]
    ).split("{")[0]


@settings(max_examples=300)
@given(
    language=languages,
    offset=st.integers(0, 6),
    condition=st.one_of(st.none(), st.sampled_from(CONDITIONS)),
    high=st.one_of(st.none(), temperatures),
    low=st.one_of(st.none(), temperatures),
    amount=amounts,
    chance=chances,
    wind=st.one_of(st.none(), speeds),
    bearing=bearings,
)
def test_a_day_line_says_what_the_forecast_says(
    language: str,
    offset: int,
    condition: str | None,
    high: float | None,
    low: float | None,
    amount: float | None,
    chance: float | None,
    wind: float | None,
    bearing: float | None,
) -> None:
    phrases = PHRASES[language]
    forecast = DayForecast(
        day=TODAY + timedelta(days=offset),
        condition=condition,
        high=high,
        low=low,
        rain_chance=chance,
        precipitation=amount,
        temperature_unit="°C",
        precipitation_unit="mm",
        wind=Wind(wind, "km/h", round(wind / 1.852, 1), bearing)
        if wind is not None
        else None,
    )
    line = day_line(phrases, forecast, TODAY)
    assert_filled(line)
    assert_no_empty_day_slot(phrases, line)
    assert line.startswith(phrases.day_name(forecast.day, TODAY))
    if condition is not None:
        assert phrases.condition(condition) in line
    if high is not None:
        assert f"{written(phrases, high)} °C" in line
    if low is not None:
        assert f"{written(phrases, low)} °C" in line
    no_rain = phrases.texts["rain_none"]
    if amount and round(amount, 2):
        assert f"{written(phrases, amount)} mm" in line
    if chance is not None:
        assert phrases.texts["percent"].format(value=written(phrases, chance)) in line
    # "No rain" only when the forecast gives a dry amount, no chance at all
    # and a condition that does not fall ("Pouring, no rain." contradicts),
    # and never for today, under way (it may be raining now).
    assert (no_rain in line) == (
        amount is not None
        and round(amount, 2) == 0
        and chance is None
        and condition not in WET_CONDITIONS
        and offset != 0
    )
    if condition in FROZEN_CONDITIONS:
        assert condition is not None
        # Snow and hail are no rain: the rain templates' own word is not said.
        said = set(words(line)) - set(words(phrases.condition(condition)))
        assert not said & rain_words(phrases)
    if wind is not None and bearing is not None:
        assert f"{written(phrases, wind)} km/h" in line


@settings(max_examples=200)
@given(
    language=languages,
    speed=speeds,
    unit=st.sampled_from(["km/h", "m/s", "kn", "mph"]),
    bearing=bearings,
    gust=st.one_of(st.none(), speeds),
)
def test_a_wind_line_gives_its_unit_and_knots(
    language: str, speed: float, unit: str, bearing: float | None, gust: float | None
) -> None:
    phrases = PHRASES[language]
    knots = round(
        speed * {"km/h": 1 / 1.852, "m/s": 1.943844, "kn": 1, "mph": 0.868976}[unit], 1
    )
    line = wind_line(phrases, Wind(speed, unit, knots, bearing, gust, gust))
    assert_filled(line)
    assert f"{written(phrases, speed)} {unit}" in line
    if unit != "kn":
        assert f"({written(phrases, knots)} kn)" in line
    if bearing is not None:
        assert phrases.point(bearing) in line


@settings(max_examples=300)
@given(
    language=languages,
    wind=st.one_of(st.none(), st.floats(0, 60).map(lambda v: round(v, 1))),
    bearing=bearings,
    gust=st.one_of(st.none(), st.floats(0, 70).map(lambda v: round(v, 1))),
    low=st.one_of(st.none(), st.integers(5, 20).map(float)),
    span=st.integers(0, 25),
    directions=st.lists(
        st.sampled_from(["N", "E", "SW", "W", "NW"]), max_size=3, unique=True
    ),
)
def test_the_kitesurf_line_says_yes_exactly_inside_the_window(
    language: str,
    wind: float | None,
    bearing: float | None,
    gust: float | None,
    low: float | None,
    span: int,
    directions: list[str],
) -> None:
    phrases = PHRASES[language]
    spot = KiteSpot(
        min_kn=low,
        max_kn=(low or 10) + span if span else None,
        directions=tuple(directions),
    )
    assume(spot.configured)  # an unconfigured spot has no verdict (tools/sea.py)
    verdict = kite_verdict(spot, wind, bearing, gust_kn=gust)
    line = kite_line(
        phrases,
        KiteFacts(
            verdict.verdict,
            verdict.wind_kn,
            verdict.direction,
            verdict.gust_kn,
            spot.min_kn,
            spot.max_kn,
            spot.directions,
        ),
    )
    assert_filled(line)
    assert line.startswith(kite_yes(phrases)) == (verdict.verdict == VERDICT_GOOD)
    if verdict.verdict == VERDICT_GOOD:
        assert wind is not None
        assert spot.min_kn is None or wind >= spot.min_kn
        assert spot.max_kn is None or wind <= spot.max_kn
        assert f"{written(phrases, wind)} kn" in line
        # The yes says what it was judged on: the window, else the directions.
        for limit in (spot.min_kn, spot.max_kn):
            if limit is not None:
                assert f"{written(phrases, limit)} kn" in line
        if spot.min_kn is None and spot.max_kn is None:
            for point in spot.directions:
                assert phrases.point_name(point) in line
        # Gusts above the maximum are in the verdict's reason: the line says them.
        if gust is not None and spot.max_kn is not None and gust > spot.max_kn:
            assert "above the maximum" in verdict.reason
            assert f"{written(phrases, gust)} kn" in line


def kite_good_line(
    language: str, spot: KiteSpot, wind: float, bearing: float, gust: float | None
) -> str:
    """The line of a yes, as tools/sea.py makes it."""
    verdict = kite_verdict(spot, wind, bearing, gust_kn=gust)
    assert verdict.verdict == VERDICT_GOOD
    return kite_line(
        PHRASES[language],
        KiteFacts(
            verdict.verdict,
            verdict.wind_kn,
            verdict.direction,
            verdict.gust_kn,
            spot.min_kn,
            spot.max_kn,
            spot.directions,
        ),
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_yes_for_a_spot_of_directions_only_is_whole(language: str) -> None:
    """Found by review: a spot with directions and no speeds said "inside
    your  window." ("ventana de .", "Windbereich von ."): the window was empty.
    The yes names the spot's directions instead."""
    phrases = PHRASES[language]
    line = kite_good_line(language, KiteSpot(directions=("W", "NW")), 18, 270, 22)
    assert_filled(line)
    assert line.startswith(kite_yes(phrases))
    assert f"{written(phrases, 18)} kn" in line
    assert phrases.texts["point_w"] in line
    assert phrases.texts["point_nw"] in line
    assert line != phrases.text(
        "kite_good", wind=f"{written(phrases, 18)} kn", window=""
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_yes_says_gusts_above_the_maximum(language: str) -> None:
    """Found by review: the reason said "Gusts 34 kn, above the maximum of
    25 kn" and the line only "yes, 18 kn ... inside your 12 kn to 25 kn
    window". kite.py judges the mean wind, so the yes stands: with its gusts."""
    phrases = PHRASES[language]
    spot = KiteSpot(min_kn=12, max_kn=25, directions=("W",))
    line = kite_good_line(language, spot, 18, 270, 34)
    assert_filled(line)
    assert line.startswith(kite_yes(phrases))
    for knots in (18, 12, 25, 34):
        assert f"{written(phrases, knots)} kn" in line
    # Gusts up to the maximum change nothing: the plain yes.
    calm = kite_good_line(language, spot, 18, 270, 25)
    assert f"{written(phrases, 34)} kn" not in calm
    assert calm.startswith(kite_yes(phrases))


def test_the_kitesurf_yes_in_english() -> None:
    """The review's cases, as they read."""
    assert kite_good_line("en", KiteSpot(directions=("W", "NW")), 18, 270, None) == (
        "Kitesurfing now: yes, 18 kn from the west is a good direction for your"
        " spot; good directions are west, north-west."
    )
    assert kite_good_line("en", KiteSpot(12, 25, ("W",)), 18, 270, 34) == (
        "Kitesurfing now: yes, 18 kn from the west is inside your 12 kn to 25 kn"
        " window, but gusts reach 34 kn, above your maximum of 25 kn."
    )


def forecast_of(
    condition: str | None,
    high: float | None,
    low: float | None,
    amount: float | None = None,
    wind: Wind | None = None,
) -> DayForecast:
    return DayForecast(
        day=TODAY + timedelta(days=1),
        condition=condition,
        high=high,
        low=low,
        rain_chance=None,
        precipitation=amount,
        temperature_unit="°C",
        precipitation_unit="mm",
        wind=wind,
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_day_without_a_condition_has_no_empty_slot(language: str) -> None:
    """Found by review: "Tomorrow: , 5 °C to 10 °C." when the forecast gave
    no condition (tools/weather.py allows none)."""
    phrases = PHRASES[language]
    tomorrow = phrases.text("tomorrow")
    for high, low in ((10, 5), (10, None), (None, -4), (None, None)):
        for amount in (None, 3.5):
            line = day_line(phrases, forecast_of(None, high, low, amount), TODAY)
            assert_filled(line)
            assert_no_empty_day_slot(phrases, line)
            assert line.startswith(tomorrow)
            for value in (high, low, amount):
                if value is not None:
                    assert written(phrases, value) in line
    # A day the forecast says nothing of says so, in whole words.
    line = day_line(phrases, forecast_of(None, None, None), TODAY)
    assert line == phrases.text("day_unknown", day=tomorrow)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_day_with_only_a_low_says_it(language: str) -> None:
    """Found by review: "Tomorrow: Rainy." when the low was -4 °C."""
    phrases = PHRASES[language]
    line = day_line(phrases, forecast_of("rainy", None, -4), TODAY)
    assert_filled(line)
    assert f"{written(phrases, -4)} °C" in line
    assert phrases.condition("rainy") in line


def test_the_days_in_english() -> None:
    """The review's cases, as they read."""
    english = PHRASES["en"]
    assert day_line(english, forecast_of(None, 10, 5), TODAY) == (
        "Tomorrow: 5 °C to 10 °C."
    )
    assert day_line(english, forecast_of("rainy", None, -4), TODAY) == (
        "Tomorrow: Rainy, down to -4 °C."
    )
    assert day_line(english, forecast_of(None, None, None, 0.4), TODAY) == (
        "Tomorrow: 0.4 mm of rain."
    )
    assert day_line(english, forecast_of(None, None, None), TODAY) == (
        "Tomorrow: no forecast."
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_other_lines(language: str) -> None:
    phrases = PHRASES[language]
    for line in (
        now_line(phrases, "pouring", 9.5, "°C"),
        now_line(phrases, "sunny", None, None),
        waves_line(phrases, 2.1, "m", 9),
        waves_line(phrases, 2.1, "m", None),
        water_line(phrases, 14.5, "°C"),
        tide_line(phrases, 1.2, "m", "rising"),
        tide_line(phrases, 1.2, "m", "falling"),
        tide_line(phrases, 1.2, "m", None),
    ):
        assert_filled(line)
    assert written(phrases, 2.1) in waves_line(phrases, 2.1, "m", None)
    assert phrases.condition("pouring") in now_line(phrases, "pouring", 9.5, "°C")


def test_every_language_has_every_phrase() -> None:
    keys = set(PHRASES["en"].texts)
    for language in LANGUAGES:
        assert set(PHRASES[language].texts) == keys, language
        assert PHRASES[language].texts["decimal"] in (".", ",")
        assert PHRASES[language].texts["separator"]


@pytest.mark.parametrize(
    ("language", "said"), [("en", "90%"), ("de", "90%"), ("tr", "%90"), ("eu", "% 90")]
)
def test_a_chance_is_written_as_the_language_writes_a_share(
    language: str, said: str
) -> None:
    """Turkish and Basque put the sign first: "80%" is no Turkish share.

    German typesets "90 %"; spoken, the space is no difference, so the files
    keep "90%" where the sign follows the number."""
    forecast = DayForecast(
        day=TODAY + timedelta(days=1),
        condition="rainy",
        high=9.0,
        low=None,
        rain_chance=90.0,
        precipitation=None,
        temperature_unit="°C",
        precipitation_unit="mm",
        wind=None,
    )
    line = day_line(PHRASES[language], forecast, TODAY)
    assert said in line
    assert said == PHRASES[language].with_unit(90, "%")


@pytest.mark.parametrize("language", [lang for lang in LANGUAGES if lang != "en"])
def test_every_condition_is_said_in_the_language(language: str) -> None:
    """Found by review: HA's Catalan and Polish have no "windy-variant", and
    the line said "windy variant" in English. Many languages HA speaks have
    no weather words of HA's at all: ours are said there."""
    phrases = PHRASES[language]
    english = PHRASES["en"]
    for condition in (*CONDITIONS, "windy", "lightning", "exceptional"):
        said = phrases.condition(condition)
        assert said not in (condition.replace("-", " "), english.condition(condition))
        assert said in (
            phrases.conditions.get(condition),
            phrases.texts[f"condition_{condition.replace('-', '_')}"],
        )


@pytest.mark.parametrize(
    ("language", "separator", "end"),
    [("en", ", ", "."), ("zh-Hans", "，", "。"), ("ja", "、", "。"), ("th", ", ", "")],
)
def test_a_day_line_parts_and_ends_as_the_language_writes(
    language: str, separator: str, end: str
) -> None:
    """Found by a translator: the parts were joined with ", " and ended with
    ".", so a Chinese line mixed its own marks with ours."""
    phrases = PHRASES[language]
    forecast = DayForecast(
        day=TODAY + timedelta(days=1),
        condition="pouring",
        high=9,
        low=None,
        rain_chance=None,
        precipitation=11,
        temperature_unit="°C",
        precipitation_unit="mm",
        wind=Wind(18, "km/h", 9.7, 300),
    )
    line = day_line(phrases, forecast, TODAY)
    assert line.count(separator) >= 2
    assert line.endswith(end)
    assert not line.endswith(end + end) or not end
    if end != ".":
        assert ", ." not in line
        assert not line.endswith(".")
