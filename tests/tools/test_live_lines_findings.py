"""Live-data text our own code builds that a user would hear as false,
missing or confusing (an independent hunt; no model involved, no benchmark
set read).

Each test failed on the code as it was found (45d66a6), for the reason its
docstring gives; the docstrings tell what was heard then. Real HA: template weather entities, real
sensor states, the real translations.
"""

from __future__ import annotations

import re
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
from hypothesis import given, settings, strategies as st
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.llm.sentences import async_phrases
from custom_components.local_assistant.tools.kite import KiteSpot
from custom_components.local_assistant.tools.live_now import async_live_lines
from custom_components.local_assistant.tools.phrases import (
    waves_line,
    wind_line,
)
from custom_components.local_assistant.tools.sea import SeaConditionsTool
from custom_components.local_assistant.tools.weather import (
    wind_reading,
)
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse, converse_streaming
from tests.helpers.live import (
    LIVE_OPTIONS,
    NOW as NOW_LIVE,
    async_setup_live_entities,
    async_setup_template_weather,
    live_lines,
    set_sensor,
    template_value,
)
from tests.tools.test_phrases import phrases_of

LANGUAGES = ("en", "es", "de", "fr", "nl")
# Monday 2 March 2026, 10:00 in US/Pacific.
NOW = "2026-03-02T18:00:00+00:00"
PACIFIC = "US/Pacific"


def _word(text: str, word: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None


# --- twice-daily forecasts (NWS): the night half is never said -----------------


async def test_a_twice_daily_forecast_does_not_hide_the_nights_rain(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """US home on NWS (twice-daily forecast only: a daytime and a night item
    per day, a chance and no amount). Monday 10:00; tonight 80 % rain,
    tomorrow daytime 10 %, tomorrow night 90 %.

    Heard: "Today: Sunny, up to 15 °C, 0% chance of rain." and "Tomorrow:
    Sunny, up to 16 °C, 10% chance of rain." - tonight's 80 % and tomorrow
    night's 90 % are in no line, so "will it rain tomorrow?" is answered
    with 10 %. Cause: tools/weather.py ``_async_days`` (weather.py:223-228)
    keeps only the ``is_daytime`` items and ``day_forecasts`` labels each
    as the whole day.
    """
    await hass.config.async_set_time_zone(PACIFIC)
    freezer.move_to(NOW)
    twice = [
        {"datetime": "2026-03-02T06:00:00-08:00", "is_daytime": True,
         "condition": "sunny", "temperature": 15, "precipitation_probability": 0},
        {"datetime": "2026-03-02T18:00:00-08:00", "is_daytime": False,
         "condition": "rainy", "temperature": 6, "precipitation_probability": 80},
        {"datetime": "2026-03-03T06:00:00-08:00", "is_daytime": True,
         "condition": "sunny", "temperature": 16, "precipitation_probability": 10},
        {"datetime": "2026-03-03T18:00:00-08:00", "is_daytime": False,
         "condition": "pouring", "temperature": 7, "precipitation_probability": 90},
    ]  # fmt: skip
    tool = await async_setup_template_weather(
        hass, forecast_twice_daily=template_value(twice)
    )
    lines = await async_live_lines(hass, [tool], "en")
    block = "\n".join(lines)
    assert "Tomorrow" in block, lines
    assert "80%" in block, lines  # tonight
    assert "90%" in block, lines  # tomorrow night


# --- a chance of rain written as text ------------------------------------------


@pytest.mark.parametrize(
    ("language", "no_rain"),
    [("en", "no rain"), ("es", "sin lluvia"), ("de", "kein Regen"),
     ("fr", "pas de pluie"), ("nl", "geen regen")],
)  # fmt: skip
async def test_a_chance_of_rain_given_as_text_is_no_dry_day(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, language: str, no_rain: str
) -> None:
    """A template weather whose daily forecast is built with ``states()``:
    tomorrow cloudy, 0 mm, precipitation_probability "80" (a string; HA
    converts temperatures and amounts of a forecast to numbers, never the
    probability).

    Heard: "Tomorrow: Cloudy, 3 °C to 14 °C, no rain." beside an 80 %
    chance. Cause: tools/weather.py ``_float`` (weather.py:290-293) drops
    every string, so the chance is lost and ``_rain_text`` turns the 0 mm
    into "no rain".
    """
    await hass.config.async_set_time_zone(PACIFIC)
    freezer.move_to(NOW)
    daily = [
        {"datetime": "2026-03-03T00:00:00-08:00", "condition": "cloudy",
         "temperature": 14, "templow": 3, "precipitation": 0,
         "precipitation_probability": "80"},
    ]  # fmt: skip
    tool = await async_setup_template_weather(
        hass, forecast_daily=template_value(daily)
    )
    phrases = await async_phrases(hass, language)
    lines = await async_live_lines(hass, [tool], language)
    tomorrow = [line for line in lines if line.startswith(phrases.text("tomorrow"))]
    assert tomorrow, lines
    assert no_rain not in tomorrow[0], tomorrow
    assert "80%" in tomorrow[0], tomorrow


# --- a calm wind has no direction ----------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
async def test_a_calm_has_no_wind_direction(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, language: str
) -> None:
    """The weather service reports 0 km/h with its last bearing, 90°
    (Open-Meteo and met.no always give a bearing), and tomorrow 0 km/h, 180°.

    Heard: "Wind: 0 km/h (0 kn) from the east." and "Tomorrow: ..., wind 0
    km/h (0 kn) from the south." - a calm blows from nowhere. Cause:
    tools/weather.py ``wind_reading`` (weather.py:284) keeps the bearing of
    a zero speed; tools/phrases.py ``wind_line``/``day_line`` say it.
    """
    await hass.config.async_set_time_zone(PACIFIC)
    freezer.move_to(NOW)
    daily = [
        {"datetime": "2026-03-03T00:00:00-08:00", "condition": "sunny",
         "temperature": 14, "templow": 3, "wind_speed": 0, "wind_bearing": 180},
    ]  # fmt: skip
    tool = await async_setup_template_weather(
        hass,
        wind_speed="{{ 0 }}",
        wind_bearing="{{ 90 }}",
        forecast_daily=template_value(daily),
    )
    phrases = await async_phrases(hass, language)
    lines = await async_live_lines(hass, [tool], language)
    east, south = phrases.point_name("E"), phrases.point_name("S")
    assert len(lines) == 3, lines
    assert not _word(lines[1], east), lines
    assert not _word(lines[2], south), lines


@settings(max_examples=60, deadline=None)
@given(
    language=st.sampled_from(LANGUAGES),
    bearing=st.floats(min_value=0, max_value=359.9),
    unit=st.sampled_from(["km/h", "m/s", "mph", "kn"]),
)
def test_no_calm_is_said_with_a_compass_point(
    language: str, bearing: float, unit: str
) -> None:
    """Property: a wind of 0 is never said to come from a compass point
    (tools/weather.py ``wind_reading`` + tools/phrases.py ``wind_line``)."""
    phrases = phrases_of(language)
    wind = wind_reading(0, unit, bearing)
    assert wind is not None
    line = wind_line(phrases, wind)
    points = [
        phrases.point_name(p) for p in ("N", "E", "S", "W", "NE", "SE", "SW", "NW")
    ]
    assert not any(_word(line, point) for point in points), line


async def test_no_yes_to_kitesurfing_in_a_calm(hass: HomeAssistant) -> None:
    """A spot set by its good directions only (north); the beach wind sensor
    reads 0 kn, its direction sensor 0° (the vane rests where it stopped).

    Heard: "Kitesurfing now: yes, 0 kn from the north is a good direction
    for your spot; good directions are north." - a yes in a dead calm.
    Cause: tools/sea.py ``read_sensor`` / ``_verdict`` pass the direction of
    a 0 kn wind on, and tools/kite.py ``_judge`` (kite.py:217-231) calls any
    in-sector direction good.
    """
    set_sensor(hass, "sensor.beach_wind", 0, "kn", "wind_speed")
    set_sensor(hass, "sensor.beach_wind_direction", 0, "°", "wind_direction")
    tool = SeaConditionsTool(
        {
            "sea_wind": ["sensor.beach_wind"],
            "sea_wind_direction": ["sensor.beach_wind_direction"],
        },
        KiteSpot(directions=("N",)),
    )
    result = await tool.async_run(hass, {}, "en")
    kite = result["summary"].split(". ")[0]
    assert kite.startswith("Kitesurfing now:"), result["summary"]
    assert "yes" not in kite, kite
    assert result["kitesurf"]["verdict"] != "good", result["kitesurf"]


# --- gusts dropped when there is no direction ----------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
async def test_gusts_are_said_without_a_wind_direction(
    hass: HomeAssistant, language: str
) -> None:
    """Beach wind 20 kn and gusts 35 kn, no direction sensor (or one that is
    unavailable).

    Heard: "Wind: 20 kn." - the 35 kn gusts, read and configured, are never
    said. Cause: tools/phrases.py ``wind_line`` (phrases.py:142-143) returns
    the ``wind_no_direction`` template, which has no gust slot, before it
    looks at the gusts.
    """
    set_sensor(hass, "sensor.beach_wind", 20, "kn", "wind_speed")
    set_sensor(hass, "sensor.beach_gust", 35, "kn", "wind_speed")
    set_sensor(hass, "sensor.beach_wind_direction", "unavailable")
    tool = SeaConditionsTool(
        {
            "sea_wind": ["sensor.beach_wind"],
            "sea_gusts": ["sensor.beach_gust"],
            "sea_wind_direction": ["sensor.beach_wind_direction"],
        },
        KiteSpot(),
    )
    (line,) = tool.lines(hass, await async_phrases(hass, language))
    assert "35" in line, line


async def test_the_weather_services_gusts_are_said_without_a_bearing(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """The weather entity: wind 20 km/h, gusts 65 km/h, no bearing.

    Heard: "Wind: 20 km/h (10.8 kn)." - no word of 65 km/h gusts. Same
    cause (tools/phrases.py ``wind_line``).
    """
    await hass.config.async_set_time_zone(PACIFIC)
    freezer.move_to(NOW)
    tool = await async_setup_template_weather(
        hass, wind_speed="{{ 20 }}", wind_gust_speed="{{ 65 }}"
    )
    lines = await async_live_lines(hass, [tool], "en")
    wind = [line for line in lines if line.startswith("Wind:")]
    assert wind, lines
    assert "65" in wind[0], wind


# --- knots said twice ------------------------------------------------------------


@pytest.mark.parametrize("unit", ["kts", "knots", "kt"])
async def test_a_wind_in_knots_spelt_otherwise_is_said_once(
    hass: HomeAssistant, unit: str
) -> None:
    """A beach wind sensor in "kts" (tools/base.py ``_SPEED_ALIASES`` reads
    it as knots).

    Heard: "Wind: 15 kts (15 kn) from the west." - the same speed twice, in
    two spellings of one unit. Cause: tools/phrases.py ``speed_text``
    (phrases.py:134) compares the raw unit with "kn"; tools/sea.py ``_wind``
    passes the sensor's spelling on.
    """
    set_sensor(hass, "sensor.beach_wind", 15, unit, "wind_speed")
    set_sensor(hass, "sensor.beach_wind_direction", 270, "°", "wind_direction")
    tool = SeaConditionsTool(
        {
            "sea_wind": ["sensor.beach_wind"],
            "sea_wind_direction": ["sensor.beach_wind_direction"],
        },
        KiteSpot(),
    )
    (line,) = tool.lines(hass, await async_phrases(hass, "en"))
    assert line.count("15") == 1, line


# --- a bearing written as text in the tool result --------------------------------


async def test_a_forecast_bearing_given_as_text_is_no_bare_number(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """A template weather whose forecast gives ``wind_bearing`` as "180"
    (HA converts a forecast's speeds, never its bearing).

    The model is given "wind": "10 km/h (5.4 kn) from 180" - a number
    without its unit, which it repeats ("from 180"); the summary of the same
    result says "from the south". Cause: tools/base.py ``wind_text``
    (base.py:72-73) writes a text bearing as it is instead of reading it
    with ``parse_direction``.
    """
    await hass.config.async_set_time_zone(PACIFIC)
    freezer.move_to(NOW)
    daily = [
        {"datetime": "2026-03-03T00:00:00-08:00", "condition": "sunny",
         "temperature": 14, "wind_speed": 10, "wind_bearing": "180"},
    ]  # fmt: skip
    tool = await async_setup_template_weather(
        hass, forecast_daily=template_value(daily)
    )
    result = await tool.async_run(hass, {}, "en")
    (tomorrow,) = result["forecast"]
    # A compass point ("from S") or the bearing with its unit ("from 180°").
    assert not re.search(r"from 180(?!°)", tomorrow["wind"]), tomorrow


# --- the live block read out: a weekday that is tomorrow ---------------------------


@pytest.fixture
def agent_options() -> dict[str, Any]:
    return dict(LIVE_OPTIONS)


@pytest.mark.parametrize(
    ("language", "question"),
    [
        ("en", "Will it rain on Tuesday?"),
        ("es", "¿Va a llover el martes?"),
        ("de", "Regnet es am Dienstag?"),
        ("fr", "Va-t-il pleuvoir mardi ?"),
        ("nl", "Gaat het dinsdag regenen?"),
    ],
)
async def test_a_weekday_that_is_tomorrow_is_answered_with_tomorrows_line(
    hass: HomeAssistant,
    freezer: FrozenDateTimeFactory,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    question: str,
) -> None:
    """Monday 2 March (tests/helpers/live.py); "Will it rain on Tuesday?"
    and the model reads the whole live block out, which our code replaces
    with the line the question names. Tuesday is tomorrow: "Tomorrow:
    Partly cloudy, 9.5 °C to 16 °C, 10% chance of rain, ...".

    Heard: "Now: Partly cloudy, 12.5 °C." - the weather now, not Tuesday's
    forecast. The tomorrow line is labelled "Tomorrow" (and today's
    "Today"), never with its weekday, so no line is named and the first
    stands in. Cause: llm/echo.py ``live_readout`` (echo.py:163-165)
    matches only the label before ":", and tools/phrases.py ``day_name``
    (phrases.py:107-115) gives today and tomorrow no weekday.
    """
    freezer.move_to(NOW_LIVE)
    await hass.config.async_set_time_zone(PACIFIC)
    await async_setup_live_entities(hass)
    fake_server.queue(fake.text("OK."))
    await converse(hass, "Hello, how are you?", language=language)
    block = live_lines(fake_server.requests[-1])
    assert any("10%" in line for line in block), block
    fake_server.queue(fake.text("\n".join(block)))
    turn = await converse_streaming(hass, question, language=language)
    assert "10%" in turn.speech, turn.speech


# --- sea sensors named in the user's language ------------------------------------


@pytest.mark.parametrize(
    ("language", "gust_id", "gust_name", "wind_id", "wind_name"),
    [
        ("es", "sensor.playa_racha_de_viento", "Playa Racha de viento",
         "sensor.playa_velocidad_del_viento", "Playa Velocidad del viento"),
        ("de", "sensor.strand_boenstarke", "Strand Böenstärke",
         "sensor.strand_windstarke", "Strand Windstärke"),
        ("fr", "sensor.plage_rafales", "Plage Rafales",
         "sensor.plage_vitesse_du_vent", "Plage Vitesse du vent"),
        ("nl", "sensor.strand_windstoten", "Strand Windstoten",
         "sensor.strand_windsnelheid", "Strand Windsnelheid"),
    ],
)  # fmt: skip
async def test_a_gust_sensor_named_in_the_users_language_is_no_mean_wind(
    hass: HomeAssistant,
    language: str,
    gust_id: str,
    gust_name: str,
    wind_id: str,
    wind_name: str,
) -> None:
    """A Spanish (German, French, Dutch) home: HA named the station's
    sensors in its language. Gusts 45 km/h (listed first), wind 20 km/h
    (10.8 kn); spot 12-20 kn.

    Heard: "Kitesurf ahora: no, 24,3 kn está por encima de tu máximo de 20
    kn." and "Viento: 45 km/h (24,3 kn)." - the GUST said as the wind and
    judged as it: a "too strong" no on a day that is too light. (Listed
    after the wind, the gusts are never said at all.) Cause: tools/sea.py
    ``_kind`` (sea.py:295) tells a gust from the wind only by the English
    word "gust"; a sensor of device class wind_speed is otherwise "wind".
    Now the user lists the gusts under their own option (first here).
    """
    for entity_id, name, value in ((gust_id, gust_name, 45), (wind_id, wind_name, 20)):
        hass.states.async_set(
            entity_id,
            str(value),
            {
                "unit_of_measurement": "km/h",
                "device_class": "wind_speed",
                "friendly_name": name,
            },
        )
    tool = SeaConditionsTool(
        {"sea_gusts": [gust_id], "sea_wind": [wind_id]},
        KiteSpot(min_kn=12, max_kn=20),
    )
    result = await tool.async_run(hass, {}, language)
    assert result["kitesurf"]["verdict"] == "too light", result["kitesurf"]
    phrases = await async_phrases(hass, language)
    lines = tool.lines(hass, phrases)
    wind = lines[1]  # after the kitesurf line
    mean, gust = phrases.with_unit(20, "km/h"), phrases.with_unit(45, "km/h")
    assert mean in wind, lines
    # The wind is said as the wind; the gusts, if said, after it.
    assert gust not in wind or wind.index(mean) < wind.index(gust), lines


@pytest.mark.parametrize(
    ("language", "entity_id", "name"),
    [
        ("de", "sensor.strand_wellenhohe", "Strand Wellenhöhe"),
        ("fr", "sensor.plage_hauteur_des_vagues", "Plage Hauteur des vagues"),
        ("fr", "sensor.plage_houle", "Plage Houle"),
        ("nl", "sensor.strand_golfhoogte", "Strand Golfhoogte"),
    ],
)
async def test_a_wave_height_named_in_the_users_language_is_said(
    hass: HomeAssistant, language: str, entity_id: str, name: str
) -> None:
    """A German (French, Dutch) home's wave height sensor, 1.2 m (device
    class distance), named in its language.

    Heard: nothing of the waves - no "Wellen: 1,2 m." line, and "how big
    are the waves?" is answered without it. English and Spanish names are
    read. Cause: tools/sea.py ``_NAME_WORDS`` (sea.py:67-71) holds English
    and Spanish words only ("wave", "swell", "ola"...; not "Welle",
    "vague", "houle", "golf"); ``_kind`` then drops a length sensor. Tide
    ("marée", "getij") and wave period names are missed the same way.
    Now the user lists it as a wave height: it is said as the waves.
    """
    hass.states.async_set(
        entity_id,
        "1.2",
        {"unit_of_measurement": "m", "device_class": "distance", "friendly_name": name},
    )
    tool = SeaConditionsTool({"sea_wave_height": [entity_id]}, KiteSpot())
    phrases = await async_phrases(hass, language)
    lines = tool.lines(hass, phrases)
    assert lines == [waves_line(phrases, 1.2, "m", None)], lines
