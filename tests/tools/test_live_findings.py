"""Untrue live-data text our own code built, found by an independent hunt
(2026-12-06, a helper session that read no benchmark set), with its fixes.

Each test asserts what the text must (not) say; its docstring says what was
said before the fix, and why. Left (docs/benchmarks.md, twenty-seventh pass):
an air temperature among the sea sensors read as the water's, "esta mañana" /
"deze morgen" (this morning) naming the "tomorrow" line, knots and inches
written as symbols.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.llm.echo import live_readout
from custom_components.local_assistant.llm.sentences import async_phrases
from custom_components.local_assistant.llm.spoken import speakable
from custom_components.local_assistant.tools.kite import KiteSpot
from custom_components.local_assistant.tools.live_now import async_live_lines
from custom_components.local_assistant.tools.phrases import (
    DayForecast,
    day_line,
    now_line,
)
from custom_components.local_assistant.tools.sea import SeaConditionsTool
from custom_components.local_assistant.tools.weather import WeatherForecastTool
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse, converse_streaming
from tests.helpers.live import (
    LIVE_OPTIONS,
    NOW,
    async_setup_live_entities,
    live_lines,
    set_sensor,
)
from tests.tools.test_phrases import phrases_of

TODAY = date(2026, 12, 1)
TOMORROW = date(2026, 12, 2)


# --- sea sensors read as something they are not ------------------------------


async def test_gusts_in_another_unit_than_the_wind_are_said_in_the_winds(
    hass: HomeAssistant,
) -> None:
    """Beach wind 20 km/h, gust sensor 8 m/s (15.6 kn), direction 270.

    Was said: "Wind: 20 km/h (10.8 kn) from the west, gusts 8 km/h (15.6
    kn)." The gust's value was written with the WIND sensor's unit (8 km/h
    is 4.3 kn). Now the gust is converted to the wind's unit.
    """
    set_sensor(hass, "sensor.beach_wind", 20, "km/h", "wind_speed", "Beach wind")
    set_sensor(hass, "sensor.beach_gust", 8, "m/s", "wind_speed", "Beach gust")
    set_sensor(hass, "sensor.beach_wind_direction", 270, "°", "wind_direction")
    tool = SeaConditionsTool(
        {
            "sea_wind": ["sensor.beach_wind"],
            "sea_gusts": ["sensor.beach_gust"],
            "sea_wind_direction": ["sensor.beach_wind_direction"],
        },
        KiteSpot(),
    )
    (line,) = tool.lines(hass, await async_phrases(hass, "en"))
    assert "gusts 8 km/h" not in line, line
    assert "gusts 28.8 km/h (15.6 kn)" in line, line


async def test_a_swell_direction_sensor_is_no_wave_height(hass: HomeAssistant) -> None:
    """A buoy's "Swell direction" sensor, 270 °, listed before its wave height.

    Was said: "Waves: 270°." - a direction read out as the height of the waves
    (and "Waves: 1.2 m." never said). Cause: tools/sea.py ``_kind`` classes
    any sensor whose name holds "swell"/"wave" as KIND_WAVES (only a period
    is told apart), whatever its unit ("°"). Now the user lists the wave
    sensors; one in degrees among them is still no wave height.
    """
    set_sensor(hass, "sensor.swell_direction", 270, "°", None, "Swell direction")
    set_sensor(hass, "sensor.wave_height", 1.2, "m", "distance", "Wave height")
    tool = SeaConditionsTool(
        {"sea_wave_height": ["sensor.swell_direction", "sensor.wave_height"]},
        KiteSpot(),
    )
    lines = tool.lines(hass, await async_phrases(hass, "en"))
    assert "Waves: 270°." not in lines, lines
    assert "Waves: 1.2 m." in lines, lines


async def test_a_buoy_water_temperature_is_no_wave_height(hass: HomeAssistant) -> None:
    """A "Wave buoy water temperature" sensor (16.4 °C, device class temperature).

    Was said: "Waves: 16.4 °C." - a water temperature read out as the waves, and
    no "Water:" line at all. Cause: tools/sea.py ``_kind`` checks the wave
    words of the name before the temperature device class.
    """
    set_sensor(
        hass,
        "sensor.wave_buoy_water_temperature",
        16.4,
        "°C",
        "temperature",
        "Wave buoy water temperature",
    )
    tool = SeaConditionsTool(
        {"sea_water_temperature": ["sensor.wave_buoy_water_temperature"]},
        KiteSpot(),
    )
    lines = tool.lines(hass, await async_phrases(hass, "en"))
    assert not any(line.startswith("Waves:") for line in lines), lines
    assert lines == ["Water: 16.4 °C."]


async def test_a_wind_chill_sensor_is_no_water_temperature(
    hass: HomeAssistant,
) -> None:
    """A "Wind chill" sensor, -5 °C (device class temperature), among the sea
    sensors.

    Was said: "Water: -5 °C.": every sensor of device class temperature was
    the water's. A temperature named for the wind is not. (An air
    temperature named in words, "Beach air temperature", still is: left.)
    Now the user says what each sensor is: a wind chill listed among the
    other sea sensors is said by its name, never as the water.
    """
    set_sensor(hass, "sensor.wind_chill", -5, "°C", "temperature", "Wind chill")
    tool = SeaConditionsTool({"sea_other": ["sensor.wind_chill"]}, KiteSpot())
    lines = tool.lines(hass, await async_phrases(hass, "en"))
    assert not any(line.startswith("Water:") for line in lines), lines


async def test_a_wave_period_in_milliseconds_is_not_said_as_seconds(
    hass: HomeAssistant,
) -> None:
    """Wave height 1.5 m; "Wave period" 7000 ms (device class duration).

    Was said: "Waves: 1.5 m, every 7000 seconds." (about two hours). The period's
    unit is never read: tools/sea.py passes ``period.value`` alone and
    phrases.waves_line always says "seconds" (HA's duration sensors may be in
    ms, s, min, h).
    """
    set_sensor(hass, "sensor.wave_height", 1.5, "m", "distance", "Wave height")
    set_sensor(hass, "sensor.wave_period", 7000, "ms", "duration", "Wave period")
    tool = SeaConditionsTool(
        {
            "sea_wave_height": ["sensor.wave_height"],
            "sea_wave_period": ["sensor.wave_period"],
        },
        KiteSpot(),
    )
    lines = tool.lines(hass, await async_phrases(hass, "en"))
    assert "Waves: 1.5 m, every 7000 seconds." not in lines, lines
    assert lines == ["Waves: 1.5 m, every 7 seconds."]


# --- the kitesurf verdict beside the wind ------------------------------------


async def test_kite_verdict_is_not_unknown_beside_a_wind_line(
    hass: HomeAssistant,
) -> None:
    """The beach wind sensor is unavailable; the weather entity reads 36 km/h
    (19.4 kn) from the west. Spot 12-25 kn, W/NW.

    The live block said both "Kitesurfing now: unknown, there is no current
    wind reading." and "Wind: 36 km/h (19.4 kn) from the west." - a
    contradiction in one prompt (the weather wind line is shown because the
    beach sensor gives no reading, tools/live_now.py ``_has_wind_sensor``, but
    the verdict falls back to the weather entity only when NO wind sensor is
    configured at all, tools/sea.py ``SeaConditionsTool._verdict``).
    """
    hass.states.async_set(
        "weather.home",
        "sunny",
        {
            "temperature": 18,
            "temperature_unit": "°C",
            "wind_speed": 36,
            "wind_speed_unit": "km/h",
            "wind_bearing": 270,
            "precipitation_unit": "mm",
            "supported_features": 0,
        },
    )
    hass.states.async_set(
        "sensor.beach_wind",
        "unavailable",
        {"unit_of_measurement": "km/h", "device_class": "wind_speed"},
    )
    tools = [
        WeatherForecastTool("weather.home"),
        SeaConditionsTool(
            {"sea_wind": ["sensor.beach_wind"]},
            KiteSpot(12, 25, ("W", "NW")),
            "weather.home",
        ),
    ]
    lines = await async_live_lines(hass, tools, "en")
    has_wind = any(line.startswith("Wind: 36 km/h") for line in lines)
    kite_unknown = (
        "Kitesurfing now: unknown, there is no current wind reading." in lines
    )
    assert not (has_wind and kite_unknown), lines


# --- day lines ----------------------------------------------------------------


@pytest.mark.parametrize("language", ["en", "de", "es"])
def test_a_trace_of_rain_is_not_said_as_zero(language: str) -> None:
    """Tomorrow: rainy, 0.004 mm, 90% chance.

    Was said: "Tomorrow: Rainy, 0 mm of rain (90% chance)." ("0 mm Regen",
    "0 mm de lluvia"): an amount said as zero, chosen by the "amount" branch
    because it is > 0, then rounded to "0" by kite.format_number (2 decimals).
    Cause: tools/phrases.py ``_rain_text`` tests ``amount > 0`` on the raw
    value but writes the rounded one.
    """
    phrases = phrases_of(language)
    line = day_line(
        phrases,
        DayForecast(TOMORROW, "rainy", 9, 4, 90, 0.004, "°C", "mm"),
        TODAY,
    )
    assert " 0 mm" not in line, line


# --- the live data read out: the line the question names ---------------------


def live_block(language: str, today: DayForecast, tomorrow: DayForecast) -> list[str]:
    """The live lines as spoken: now sunny at 11 °C, then ``today``, ``tomorrow``."""
    phrases = phrases_of(language)
    return [
        speakable(line)
        for line in (
            now_line(phrases, "sunny", 11, "°C"),
            day_line(phrases, today, TODAY),
            day_line(phrases, tomorrow, TODAY),
        )
    ]


@pytest.fixture
def agent_options() -> dict[str, Any]:
    return dict(LIVE_OPTIONS)


@pytest.fixture
async def live_home(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    freezer.move_to(NOW)
    await hass.config.async_set_time_zone("US/Pacific")
    await async_setup_live_entities(hass)


# --- the wrong day -------------------------------------------------------------


async def _template_weather(
    hass: HomeAssistant, daily: list[dict[str, Any]], **extra: str
) -> None:
    """weather.home: a template weather entity with this daily forecast."""
    import json

    from homeassistant.setup import async_setup_component

    assert await async_setup_component(
        hass,
        "template",
        {
            "template": [
                {
                    "weather": [
                        {
                            "name": "Home",
                            "condition": "{{ 'sunny' }}",
                            "temperature": "{{ 8 }}",
                            "humidity": "{{ 50 }}",
                            "temperature_unit": "°C",
                            "precipitation_unit": "mm",
                            "forecast_daily": "{{ " + json.dumps(daily) + " }}",
                            **extra,
                        }
                    ]
                }
            ]
        },
    )
    await hass.async_block_till_done()


async def test_a_daily_forecast_dated_utc_midnight_keeps_its_day(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """HA's Open-Meteo integration dates each day of its daily forecast at
    00:00 UTC (homeassistant/components/open_meteo/weather.py:
    ``datetime.combine(date, time(0), tzinfo=UTC)``). A home in New York,
    Sunday 6 December 2026, 10:00: today sunny and dry, tomorrow pouring.

    Was said: "Today: Pouring, 2 °C to 6 °C, 30 mm of rain (100% chance)." and
    "Tomorrow: <Tuesday's forecast>" - every day one day off, and today's own
    forecast never said. Cause: tools/weather.py ``day_forecasts`` takes the
    day as ``dt_util.as_local(start).date()``: 2026-12-07T00:00Z is Sunday
    19:00 in New York, so Monday's forecast becomes "Today" (and the real
    Sunday item, Saturday 19:00 local, is dropped as past).
    """
    await hass.config.async_set_time_zone("America/New_York")
    freezer.move_to("2026-12-06T15:00:00+00:00")
    daily = [
        {
            "datetime": "2026-12-06T00:00:00+00:00",
            "condition": "sunny",
            "temperature": 12,
            "templow": 3,
            "precipitation": 0,
            "precipitation_probability": 0,
        },
        {
            "datetime": "2026-12-07T00:00:00+00:00",
            "condition": "pouring",
            "temperature": 6,
            "templow": 2,
            "precipitation": 30,
            "precipitation_probability": 100,
        },
        {
            "datetime": "2026-12-08T00:00:00+00:00",
            "condition": "snowy",
            "temperature": -1,
            "templow": -6,
            "precipitation": 5,
            "precipitation_probability": 90,
        },
    ]
    await _template_weather(hass, daily)
    lines = await async_live_lines(hass, [WeatherForecastTool("weather.home")], "en")
    today = [line for line in lines if line.startswith("Today:")]
    assert today, lines
    assert today[0].startswith("Today: Sunny"), lines


async def test_a_solar_radiation_sensor_is_no_wave_height(hass: HomeAssistant) -> None:
    """A beach weather station's "Solar radiation" (850 W/m², device class
    irradiance) among the sea sensors.

    Was said: "Waves: 850 W/m²." - "solar" holds the Spanish wave word "ola", so
    the sensor is taken for the waves (a "Microwave ..." sensor too: "wave").
    Cause: tools/sea.py ``_names``/``_NAME_WORDS`` match the words as
    substrings anywhere in ``"<entity_id> <name>"``.
    """
    set_sensor(
        hass,
        "sensor.beach_solar_radiation",
        850,
        "W/m²",
        "irradiance",
        "Beach solar radiation",
    )
    # Listed as a wave height by mistake: W/m² is no length.
    tool = SeaConditionsTool(
        {"sea_wave_height": ["sensor.beach_solar_radiation"]}, KiteSpot()
    )
    lines = tool.lines(hass, await async_phrases(hass, "en"))
    # Said by its own name since the thirtieth pass, never as the waves.
    assert lines == ["Beach solar radiation: 850 W/m²."], lines


# --- units and directions -------------------------------------------------------


async def test_the_tool_summary_never_gives_two_days_one_name(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """The weather tool asked for 10 days (count 10; up to 48 allowed) on
    Monday 30 November: every day sunny and dry except Tuesday 8 December
    (pouring, 25 mm).

    The summary the model reads and repeats: "... Tomorrow: Sunny, up to
    15 °C, no rain. Wednesday: Sunny, ... Tuesday: Pouring, up to 15 °C,
    25 mm of rain. Wednesday: Sunny, ..." - "Wednesday" names two days, and
    the only "Tuesday" is NEXT week's, so "will it rain on Tuesday?"
    (tomorrow, dry) reads "Tuesday: Pouring, 25 mm". Cause: tools/phrases.py
    ``Phrases.day_name`` names every day from the third on by its weekday
    alone, whatever the offset, and tools/weather.py ``async_run`` writes
    ``days[:count]`` of them.
    """
    await hass.config.async_set_time_zone("Europe/Madrid")
    freezer.move_to("2026-11-30T09:00:00+00:00")
    daily = [
        {
            "datetime": f"2026-{11 + (29 + i) // 30:02d}-{(29 + i) % 30 + 1:02d}T00:00:00+01:00",
            "condition": "pouring" if i == 8 else "sunny",
            "temperature": 15,
            "precipitation": 25 if i == 8 else 0,
        }
        for i in range(10)
    ]
    await _template_weather(hass, daily)

    result = await WeatherForecastTool("weather.home").async_run(
        hass, {"period": "daily", "count": 10}, "en"
    )
    labels = [
        sentence.split(":")[0]
        for sentence in result["summary"].split(". ")
        if ":" in sentence
    ]
    assert len(labels) == len(set(labels)), result["summary"]


@pytest.mark.parametrize(
    ("language", "question"),
    [
        ("es", "¿Va a llover hoy?"),
        ("sv", "Kommer det att regna i dag?"),
        ("da", "Kommer det til at regne i dag?"),
        ("nb", "Kommer det til å regne i dag?"),
    ],
)
def test_will_it_rain_today_is_answered_with_todays_forecast(
    language: str, question: str
) -> None:
    """ "Will it rain today?" answered with the whole block (now sunny and
    dry; today's forecast: pouring, 22 mm, 95 %).

    English says "Today: Pouring, ..., 22 mm of rain (95% chance)." (the
    same question in English passes this test). Spanish,
    Swedish, Danish and Norwegian say only the weather NOW: "Ahora: Soleado,
    11 °C." / "Nu: Soligt, 11 °C." - a sunny answer to "will it rain today?"
    on a day of 22 mm. Their label for today ("Hoy", "I dag") has no word of
    four letters, so it is never "named" and the first line is said. Cause:
    llm/echo.py ``live_readout`` names lines by wording.stems, which keep only
    words of 4+ letters (``_MIN_DISTINCTIVE_LENGTH``).
    """
    block = live_block(
        language,
        DayForecast(TODAY, "pouring", 14, 6, 95, 22, "°C", "mm"),
        DayForecast(TOMORROW, "sunny", 9, 4, 0, 0, "°C", "mm"),
    )
    _, answer = live_readout(block, question)
    assert block[1] in answer.splitlines(), answer


async def test_a_snowy_day_has_no_chance_of_rain_in_the_tool_result(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """The weather tool's result for a snowy tomorrow (-1 °C, 8 mm, 90 %).

    The summary says "Tomorrow: Snowy, ..., 8 mm of precipitation (90%
    chance)." but the forecast entry the model reads beside it says
    ``"condition": "snow", "chance_of_rain": "90%"`` - a 90 % chance of RAIN
    on a day of snow at -1 °C, which the model repeats. Cause:
    tools/weather.py ``_period`` always names the probability
    "chance_of_rain" (phrases.py says "precipitation" for snow and hail).
    """
    await hass.config.async_set_time_zone("Europe/Madrid")
    freezer.move_to("2026-11-30T09:00:00+00:00")
    daily = [
        {
            "datetime": "2026-11-30T00:00:00+01:00",
            "condition": "sunny",
            "temperature": 3,
        },
        {
            "datetime": "2026-12-01T00:00:00+01:00",
            "condition": "snowy",
            "temperature": -1,
            "templow": -5,
            "precipitation": 8,
            "precipitation_probability": 90,
        },
    ]
    await _template_weather(hass, daily)
    result = await WeatherForecastTool("weather.home").async_run(
        hass, {"period": "daily"}, "en"
    )
    tomorrow = result["forecast"][1]
    assert tomorrow["condition"] == "snow"
    assert "chance_of_rain" not in tomorrow, tomorrow


async def test_a_wind_wave_direction_is_no_wind_direction(hass: HomeAssistant) -> None:
    """A beach wind sensor (15 kn) and a marine "Wind wave direction" sensor
    (90°: the wind-driven waves come from the east; e.g. Open-Meteo
    Marine's ``wind_wave_direction``), no wind direction sensor. Spot: W/NW.

    Was said: "Wind: 15 kn from the east." and "Kitesurfing now: no, 15 kn from
    the east is the wrong direction for your spot" - the WAVES' direction
    given and judged as the wind's (the true wind direction is unknown).
    Cause: tools/sea.py ``_kind`` takes any name with "wind" and "direction"
    for KIND_DIRECTION before it looks for wave words. Now the user lists
    it among the other sea sensors, not as the wind's direction.
    """
    set_sensor(hass, "sensor.beach_wind", 15, "kn", "wind_speed", "Beach wind")
    set_sensor(hass, "sensor.wind_wave_direction", 90, "°", None, "Wind wave direction")
    tool = SeaConditionsTool(
        {
            "sea_wind": ["sensor.beach_wind"],
            "sea_other": ["sensor.wind_wave_direction"],
        },
        KiteSpot(directions=("W", "NW")),
    )
    lines = tool.lines(hass, await async_phrases(hass, "en"))
    assert not any("from the east" in line for line in lines), lines


async def test_no_rain_today_is_not_said_while_it_rains_now(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """The weather entity says "rainy" now (drizzle); its daily forecast for
    today says cloudy with 0 mm (no probability given).

    The live block said "Now: Rainy, 10 °C." and then "Today: Cloudy, 7 °C
    to 12 °C, no rain." - "no rain" today while it is raining. The data say
    0 mm; "no rain" is a verdict of ours that the current condition
    contradicts. Cause: tools/phrases.py ``_rain_text`` turns a zero amount
    into ``rain_none`` looking only at the DAY's condition, not at the
    weather now (tools/live_now.py puts both lines in one block).
    """
    await hass.config.async_set_time_zone("Europe/Madrid")
    freezer.move_to("2026-11-30T09:00:00+00:00")
    daily = [
        {
            "datetime": "2026-11-30T00:00:00+01:00",
            "condition": "cloudy",
            "temperature": 12,
            "templow": 7,
            "precipitation": 0,
        },
    ]
    await _template_weather(
        hass, daily, condition="{{ 'rainy' }}", temperature="{{ 10 }}"
    )
    lines = await async_live_lines(hass, [WeatherForecastTool("weather.home")], "en")
    assert lines[0] == "Now: Rainy, 10 °C.", lines
    assert not any("no rain" in line for line in lines), lines


@pytest.mark.usefixtures("live_home")
async def test_the_water_temperature_is_not_answered_with_the_air(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """French: "Quelle est la température de l'eau ?" (air 12.5 °C, water
    16.4 °C), and the model reads the whole live block out.

    Heard: "Actuellement: Éclaircies, 12,5 °C." - the AIR temperature, as
    the answer to a question about the water (the "Eau : 16,4 °C." line is
    never said). "Eau" has three letters, so no line is named and the first
    line stands in. Cause: llm/echo.py ``live_readout`` (wording.stems keeps
    words of 4+ letters only); the same for Spanish "Hoy", Swedish/Danish/
    Norwegian "I dag" (test_will_it_rain_today_...).
    """
    fake_server.queue(fake.text("D'accord."))
    await converse(hass, "Bonjour, ça va ?", language="fr")
    block = live_lines(fake_server.requests[-1])
    assert "Eau : 16,4 °C." in block
    fake_server.queue(fake.text("\n".join(block)))
    turn = await converse_streaming(
        hass, "Quelle est la température de l'eau ?", language="fr"
    )
    assert "16,4" in turn.speech, turn.speech
