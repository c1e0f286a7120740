"""Live-data tools end to end: real HA, template weather and sensors, real SSE.

Time is frozen at Monday 2 March 2026, 10:00 in the test time zone
(US/Pacific), so forecast labels and reading ages are exact.
"""

from __future__ import annotations

from datetime import timedelta
import json
import logging
from pathlib import Path
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
    async_should_expose,
)
from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import CONF_LLM_HASS_API, CONF_MODEL
from homeassistant.core import Context, HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import llm
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import DOMAIN
from custom_components.local_assistant.memory.voice import (
    FORGET_TOOL_NAME,
    REMEMBER_TOOL_NAME,
)
from custom_components.local_assistant.tools.api import (
    SEA_TOOL_NAME,
    WEATHER_TOOL_NAME,
    LocalAssistantAPI,
    async_build_llm_api,
    live_tools,
)
from tests.helpers import fake_openai as fake
from tests.helpers.ha import MODEL, converse, speech
from tests.helpers.live import (
    BASE_OPTIONS,
    BUOY,
    DIRECTION,
    LIVE_OPTIONS,
    NOW,
    SEA,
    WATER,
    WAVES,
    WEATHER,
    WEATHER_DAILY_ONLY,
    WIND,
    async_setup_live_entities,
)

TRANSLATIONS = (
    Path(__file__).resolve().parents[2]
    / "custom_components"
    / "local_assistant"
    / "translations"
)


@pytest.fixture
def agent_options() -> dict[str, Any]:
    """Both tools and a kitesurf spot unless a test says otherwise."""
    return dict(LIVE_OPTIONS)


@pytest.fixture(autouse=True)
def frozen(freezer: FrozenDateTimeFactory) -> FrozenDateTimeFactory:
    """Fix the clock before any entity writes its state."""
    freezer.move_to(NOW)
    return freezer


@pytest.fixture
async def live_entities(hass: HomeAssistant) -> None:
    """Template weather (daily+hourly, and daily only) and template sea sensors."""
    await async_setup_live_entities(hass)


def tool_names(body: dict[str, Any]) -> list[str]:
    """Names of the tools a request offered the model."""
    return [tool["function"]["name"] for tool in body.get("tools", [])]


def offered(body: dict[str, Any], name: str) -> dict[str, Any]:
    """The function definition of one offered tool."""
    return next(t["function"] for t in body["tools"] if t["function"]["name"] == name)


def seen_result(body: dict[str, Any]) -> tuple[str, Any]:
    """The last tool message the model got: its text, and the result as data."""
    content = [m for m in body["messages"] if m["role"] == "tool"][-1]["content"]
    payload = json.loads(content[content.index("): {") + 3 :])
    if isinstance(payload, dict) and set(payload) == {"data", "error"}:
        payload = payload["data"]  # HA 2026.11 wraps results
    return content, payload


async def ask_with_tool(
    hass: HomeAssistant,
    fake_server: fake.FakeOpenAIServer,
    name: str,
    args: dict[str, Any] | str,
    answer: str = "Here you go.",
) -> tuple[str, Any]:
    """One turn where the model calls ``name``; what the model saw of the result."""
    fake_server.queue(fake.tool_calls([(name, args)]), fake.text(answer))
    result = await converse(hass, "What is it like outside?")
    assert speech(result) == answer
    assert len(fake_server.requests) == 2
    return seen_result(fake_server.requests[1])


def build_api(
    hass: HomeAssistant, options: dict[str, Any]
) -> LocalAssistantAPI | list[str] | None:
    """What one turn hands HA: the API of the tools it built once."""
    return async_build_llm_api(hass, options, live_tools(hass, options))


async def call_tool(
    hass: HomeAssistant, options: dict[str, Any], name: str, args: dict[str, Any]
) -> Any:
    """Call a tool through our API object the way the chat log does."""
    api = build_api(hass, options)
    assert isinstance(api, LocalAssistantAPI)
    instance = await api.async_get_api_instance(
        llm.LLMContext(
            platform=DOMAIN,
            context=Context(),
            language="en",
            assistant="conversation",
            device_id=None,
        )
    )
    result = await instance.async_call_tool(llm.ToolInput(name, args))
    return getattr(result, "data", result)


# --- which tools are offered -------------------------------------------------------


async def test_tools_offered_next_to_assist(
    hass: HomeAssistant,
    live_entities: None,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Both tools, un-namespaced, after HA's Assist tools; the prompt names them.

    The memory tools (memory/voice.py) come last.
    """
    fake_server.queue(fake.text("Hi."))
    await converse(hass, "hello")
    body = fake_server.last_request
    names = tool_names(body)
    assert names[-4:] == [
        WEATHER_TOOL_NAME,
        SEA_TOOL_NAME,
        REMEMBER_TOOL_NAME,
        FORGET_TOOL_NAME,
    ]
    assert "HassTurnOn" in names  # Assist is still there
    assert all("__" not in name for name in (WEATHER_TOOL_NAME, SEA_TOOL_NAME))

    weather = offered(body, WEATHER_TOOL_NAME)
    assert "forecast" in weather["description"]
    props = weather["parameters"]["properties"]
    assert props["period"]["enum"] == ["daily", "hourly"]
    assert props["count"]["type"] == "integer"
    assert not weather["parameters"].get("required")
    sea = offered(body, SEA_TOOL_NAME)
    assert "kitesurf verdict" in sea["description"]
    assert sea["parameters"].get("properties", {}) == {}

    system = body["messages"][0]["content"]
    assert f"(such as {WEATHER_TOOL_NAME}, {SEA_TOOL_NAME})" in system
    assert (
        f"Live data of this home: for weather and forecasts call {WEATHER_TOOL_NAME}; "
        f"for the sea, the beach, wind or kitesurfing call {SEA_TOOL_NAME}."
    ) in system
    assert system.endswith("/no_think")


@pytest.mark.parametrize("agent_options", [BASE_OPTIONS])
async def test_tools_absent_when_not_configured(
    hass: HomeAssistant,
    live_entities: None,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Without entities configured only HA's tools are offered."""
    fake_server.queue(fake.text("Hi."))
    await converse(hass, "hello")
    body = fake_server.last_request
    names = tool_names(body)
    assert "HassTurnOn" in names
    assert WEATHER_TOOL_NAME not in names
    assert SEA_TOOL_NAME not in names
    assert "local_" not in body["messages"][0]["content"]


@pytest.mark.parametrize(
    ("agent_options", "expected"),
    [
        (
            {**BASE_OPTIONS, CONF_LLM_HASS_API: [], "sea_wave_height": [WAVES]},
            [SEA_TOOL_NAME, REMEMBER_TOOL_NAME, FORGET_TOOL_NAME],
        ),
        (
            {**BASE_OPTIONS, CONF_LLM_HASS_API: [], "weather_entity": WEATHER},
            [WEATHER_TOOL_NAME, REMEMBER_TOOL_NAME, FORGET_TOOL_NAME],
        ),
        ({**BASE_OPTIONS, CONF_LLM_HASS_API: [], "sea_wind": []}, []),
    ],
    ids=["sea_only", "weather_only", "nothing"],
)
async def test_only_configured_tools_without_ha_api(
    hass: HomeAssistant,
    live_entities: None,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    expected: list[str],
) -> None:
    """No HA API selected: the configured live tools and the memory tools, or no
    tools at all (the server may not call tools)."""
    fake_server.queue(fake.text("Hi."))
    await converse(hass, "hello")
    body = fake_server.last_request
    assert tool_names(body) == expected
    if not expected:
        assert "tools" not in body


@pytest.mark.parametrize(
    "agent_options",
    [{**LIVE_OPTIONS, CONF_LLM_HASS_API: ["no_such_api"]}],
)
async def test_missing_ha_api_keeps_live_tools(
    hass: HomeAssistant,
    live_entities: None,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A selected API that no longer exists is logged; the live tools still work."""
    fake_server.queue(fake.text("Hi."))
    with caplog.at_level(logging.WARNING):
        result = await converse(hass, "hello")
    assert speech(result) == "Hi."
    assert tool_names(fake_server.last_request) == [
        WEATHER_TOOL_NAME,
        SEA_TOOL_NAME,
        REMEMBER_TOOL_NAME,
        FORGET_TOOL_NAME,
    ]
    assert "no_such_api" in caplog.text


def test_api_id_follows_configuration(hass: HomeAssistant) -> None:
    """A changed configuration gives a new API id (2026.11 caches by id)."""
    first = build_api(hass, LIVE_OPTIONS)
    same = build_api(hass, dict(LIVE_OPTIONS))
    other = build_api(hass, {**LIVE_OPTIONS, "kite_max_wind_kn": 30})
    assert isinstance(first, LocalAssistantAPI)
    assert isinstance(same, LocalAssistantAPI)
    assert isinstance(other, LocalAssistantAPI)
    assert first.id == same.id != other.id
    assert first.id.startswith(f"{DOMAIN}-")
    assert all(tool.integration == DOMAIN for tool in first.live_tools)
    # Nothing live configured: exactly what a core agent passes.
    assert build_api(hass, BASE_OPTIONS) == [llm.LLM_API_ASSIST]
    assert build_api(hass, {**BASE_OPTIONS, CONF_LLM_HASS_API: []}) is None


# --- the weather tool --------------------------------------------------------------


async def test_weather_forecast_daily(
    hass: HomeAssistant,
    live_entities: None,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Default call: current conditions and the next 3 days with units and dates."""
    text, data = await ask_with_tool(
        hass, fake_server, WEATHER_TOOL_NAME, {}, "Rain today, drier tomorrow."
    )
    assert text.startswith(f"Result of {WEATHER_TOOL_NAME}({{}}): ")
    assert data["location"] == "Home"
    assert data["now"] == {
        "condition": "partly cloudy",
        "temperature": "12.5 °C",
        "humidity": "71%",
        "wind": "18 km/h (9.7 kn) from SW",
    }
    assert data["period"] == "daily"
    assert data["forecast"] == [
        {
            "when": "today",
            "datetime": "2026-03-02T00:00:00-08:00",
            "condition": "rain",
            "high": "14.2 °C",
            "low": "8 °C",
            "precipitation": "3.5 mm",
            "chance_of_rain": "80%",
            "wind": "20 km/h (10.8 kn) from SW",
        },
        {
            "when": "tomorrow",
            "datetime": "2026-03-03T00:00:00-08:00",
            "condition": "partly cloudy",
            "high": "16 °C",
            "low": "9.5 °C",
            "precipitation": "0 mm",
            "chance_of_rain": "10%",
            "wind": "30 km/h (16.2 kn) from NW, gusts 45 km/h (24.3 kn)",
        },
        {
            "when": "Wednesday 4 March",
            "datetime": "2026-03-04T00:00:00-08:00",
            "condition": "sunny",
            "temperature": "18 °C",
        },
    ]


async def test_weather_forecast_hourly_with_count(
    hass: HomeAssistant,
    live_entities: None,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Hourly periods start with the current hour; the count is honoured."""
    _, data = await ask_with_tool(
        hass, fake_server, WEATHER_TOOL_NAME, {"period": "hourly", "count": "3"}
    )
    assert data["period"] == "hourly"
    assert [(p["when"], p["temperature"]) for p in data["forecast"]] == [
        ("today 10:00", "10 °C"),
        ("today 11:00", "11 °C"),
        ("today 12:00", "12 °C"),
    ]


async def test_weather_default_hourly_count(
    hass: HomeAssistant, live_entities: None
) -> None:
    """Without a count, hourly gives 8 periods."""
    data = await call_tool(hass, LIVE_OPTIONS, WEATHER_TOOL_NAME, {"period": "hourly"})
    assert len(data["forecast"]) == 8
    assert data["forecast"][-1]["when"] == "today 17:00"


@pytest.mark.parametrize(
    "agent_options", [{**LIVE_OPTIONS, "weather_entity": WEATHER_DAILY_ONLY}]
)
async def test_weather_falls_back_to_supported_period(
    hass: HomeAssistant,
    live_entities: None,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """An entity without an hourly forecast answers with its daily one, and says so."""
    _, data = await ask_with_tool(
        hass, fake_server, WEATHER_TOOL_NAME, {"period": "hourly"}
    )
    assert data["period"] == "daily"
    assert data["note"] == "No hourly forecast; this is the daily one."
    assert [p["when"] for p in data["forecast"]] == [
        "today",
        "tomorrow",
        "Wednesday 4 March",
    ]


async def test_weather_unavailable_and_missing(hass: HomeAssistant) -> None:
    """An unavailable or missing weather entity is reported, not guessed."""
    hass.states.async_set(WEATHER, "unavailable", {"friendly_name": "Home"})
    data = await call_tool(hass, LIVE_OPTIONS, WEATHER_TOOL_NAME, {})
    assert data == {
        "location": "Home",
        "state": "unavailable",
        "note": "The weather service has no data right now.",
    }
    options = {**LIVE_OPTIONS, "weather_entity": "weather.gone"}
    data = await call_tool(hass, options, WEATHER_TOOL_NAME, {})
    assert data["state"] == "missing"


async def test_weather_without_forecast_support(hass: HomeAssistant) -> None:
    """A weather entity with no forecast feature still gives current conditions."""
    hass.states.async_set(
        WEATHER,
        "sunny",
        {"temperature": 68, "temperature_unit": "°F", "supported_features": 0},
    )
    data = await call_tool(hass, LIVE_OPTIONS, WEATHER_TOOL_NAME, {})
    assert data["now"] == {"condition": "sunny", "temperature": "68 °F"}
    assert data["note"] == "This weather service gives no forecast."
    assert "forecast" not in data


# --- the sea tool ------------------------------------------------------------------


async def test_sea_conditions_with_units_knots_and_verdict(
    hass: HomeAssistant,
    live_entities: None,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    frozen: FrozenDateTimeFactory,
) -> None:
    """Every sensor with value, unit, device class and age; wind in knots; verdict."""
    frozen.tick(timedelta(minutes=12))
    text, data = await ask_with_tool(
        hass, fake_server, SEA_TOOL_NAME, {}, "Yes, go kiting: 16 knots from the NW."
    )
    assert text.startswith(f"Result of {SEA_TOOL_NAME}({{}}): ")
    assert data["sensors"] == [
        {
            "name": "Beach wind",
            "value": 8.5,
            "knots": 16.5,
            "unit": "m/s",
            "device_class": "wind_speed",
            "updated": "12 min ago",
        },
        {
            "name": "Beach gusts",
            "value": 11,
            "knots": 21.4,
            "unit": "m/s",
            "device_class": "wind_speed",
            "updated": "12 min ago",
        },
        {
            "name": "Beach wind direction",
            "value": 315,
            "compass": "NW",
            "unit": "°",
            "device_class": "wind_direction",
            "updated": "12 min ago",
        },
        {
            "name": "Wave height",
            "value": 1.2,
            "unit": "m",
            "device_class": "distance",
            "updated": "12 min ago",
        },
        {
            "name": "Buoy wave period",
            "state": "unavailable",
            "note": "No current reading.",
            "unit": "s",
            "updated": "12 min ago",
        },
        {
            "name": "Water temperature",
            "value": 16.4,
            "unit": "°C",
            "device_class": "temperature",
            "updated": "12 min ago",
        },
        {
            "name": "Tide",
            "value": "rising",
            "updated": "12 min ago",
        },
    ]
    assert data["kitesurf"] == {
        "verdict": "good",
        "reason": "Wind 16.5 kn from NW (315°) is within the spot's window "
        "(12-25 kn from W, NW, N). Gusts 21.4 kn.",
        "spot": "12-25 kn from W, NW, N",
        "wind_from": "Beach wind",
    }


async def test_stale_and_unavailable_readings(
    hass: HomeAssistant,
    live_entities: None,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    frozen: FrozenDateTimeFactory,
) -> None:
    """Old readings are flagged and not used for the verdict: the weather
    service's wind is judged instead, as the live lines give it then."""
    frozen.tick(timedelta(hours=4, minutes=5))
    # The wave sensor reports again; the wind sensor has been silent for 4 h.
    hass.states.async_set(
        WAVES, "1.4", {"unit_of_measurement": "m", "friendly_name": "Wave height"}
    )
    _, data = await ask_with_tool(hass, fake_server, SEA_TOOL_NAME, {})
    by_id = dict(zip(SEA, data["sensors"], strict=True))
    assert by_id[WIND]["stale"] is True
    assert by_id[WIND]["updated"] == "4 h 5 min ago"
    assert by_id[WIND]["note"] == (
        "Old reading (4 h 5 min); it may not match conditions now."
    )
    assert by_id[WIND]["value"] == 8.5  # still shown, with the warning
    assert "stale" not in by_id[WAVES]
    assert by_id[WAVES]["updated"] == "just now"
    assert by_id[BUOY]["state"] == "unavailable"
    assert "stale" not in by_id[BUOY]
    assert data["kitesurf"]["wind_from"].endswith("(weather service)")
    assert data["kitesurf"]["verdict"] == "too light"


async def test_stale_wind_without_a_weather_service_gives_no_verdict(
    hass: HomeAssistant, live_entities: None, frozen: FrozenDateTimeFactory
) -> None:
    """Without a weather service to fall back on, a stale wind reading
    leaves the verdict unknown, and says why."""
    frozen.tick(timedelta(hours=4, minutes=5))
    options = {k: v for k, v in LIVE_OPTIONS.items() if k != "weather_entity"}
    data = await call_tool(hass, options, SEA_TOOL_NAME, {})
    assert data["kitesurf"]["verdict"] == "unknown"
    assert data["kitesurf"]["reason"] == (
        "No current wind speed: Beach wind reading is 4 h 5 min old."
    )


async def test_missing_sensor_is_reported(hass: HomeAssistant) -> None:
    """A configured sensor that no longer exists is listed as missing."""
    options = {
        **{k: v for k, v in LIVE_OPTIONS.items() if not k.startswith("sea_")},
        "sea_wind": ["sensor.removed"],
    }
    data = await call_tool(hass, options, SEA_TOOL_NAME, {})
    assert data["sensors"] == [
        {
            "entity_id": "sensor.removed",
            "state": "missing",
            "note": "This entity does not exist.",
        }
    ]
    assert data["kitesurf"]["verdict"] == "unknown"


KNOTS_SENSORS = {
    "sensor.wind_ms": ("10", "m/s", 19.4),
    "sensor.wind_kmh": ("36", "km/h", 19.4),
    "sensor.wind_mph": ("23", "mph", 20.0),
    "sensor.wind_kn": ("19", "kn", 19.0),
    "sensor.wind_fts": ("30", "ft/s", 17.8),
    "sensor.wind_kts_alias": ("12", "kts", 12.0),
}


@pytest.mark.parametrize(
    "agent_options",
    [{**BASE_OPTIONS, CONF_LLM_HASS_API: [], "sea_wind": list(KNOTS_SENSORS)}],
)
async def test_wind_in_knots(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """m/s, km/h, mph, ft/s and kn all come with knots; no spot, no verdict."""
    for entity_id, (value, unit, _) in KNOTS_SENSORS.items():
        hass.states.async_set(
            entity_id,
            value,
            {"unit_of_measurement": unit, "device_class": "wind_speed"},
        )
    _, data = await ask_with_tool(hass, fake_server, SEA_TOOL_NAME, {})
    assert [(s["unit"], s["knots"]) for s in data["sensors"]] == [
        (unit, knots) for _, unit, knots in KNOTS_SENSORS.values()
    ]
    assert "kitesurf" not in data


def _spot_states(
    hass: HomeAssistant, wind: str, direction: str, gust: str | None = None
) -> None:
    hass.states.async_set(
        "sensor.spot_wind",
        wind,
        {
            "unit_of_measurement": "kn",
            "device_class": "wind_speed",
            "friendly_name": "Spot wind",
        },
    )
    hass.states.async_set(
        "sensor.spot_direction",
        direction,
        {"device_class": "wind_direction", "friendly_name": "Spot direction"},
    )
    if gust is not None:
        hass.states.async_set("sensor.spot_gust", gust, {"unit_of_measurement": "km/h"})


SPOT_OPTIONS = {
    **BASE_OPTIONS,
    "sea_wind": ["sensor.spot_wind"],
    "sea_gusts": ["sensor.spot_gust"],
    "sea_wind_direction": ["sensor.spot_direction"],
    "kite_min_wind_kn": 12,
    "kite_max_wind_kn": 25,
    "kite_directions": ["NW", "N", "NE"],
}


@pytest.mark.parametrize(
    ("wind", "direction", "verdict", "reason"),
    [
        ("18", "0", "good", "Wind 18 kn from N (0°) is within"),
        ("15", "340", "good", "Wind 15 kn from N (340°) is within"),
        ("15", "20", "good", "Wind 15 kn from N (20°) is within"),
        ("15", "NNE", "good", "Wind 15 kn from NE (22.5°) is within"),
        ("15", "80", "wrong direction", "good directions here are NW, N, NE"),
        ("15", "SW", "wrong direction", "Wind 15 kn from SW (225°);"),
        ("8", "0", "too light", "below the minimum of 12 kn"),
        ("30.5", "0", "too strong", "above the maximum of 25 kn"),
        (
            "unavailable",
            "0",
            "unknown",
            "No current wind speed: Spot wind is unavailable",
        ),
        ("unknown", "0", "unknown", "Spot wind is unknown"),
        (
            "18",
            "unavailable",
            "unknown",
            "direction is unknown: Spot direction is unavailable",
        ),
    ],
)
async def test_every_verdict_through_the_tool(
    hass: HomeAssistant, wind: str, direction: str, verdict: str, reason: str
) -> None:
    """Each branch, from real sensor states; sectors wrap around north."""
    _spot_states(hass, wind, direction)
    data = await call_tool(hass, SPOT_OPTIONS, SEA_TOOL_NAME, {})
    assert data["kitesurf"]["verdict"] == verdict
    assert reason in data["kitesurf"]["reason"]


async def test_gust_sensor_read_as_gusts(hass: HomeAssistant) -> None:
    """A speed sensor picked as gusts is read as gusts, converted to knots."""
    _spot_states(hass, "18", "0", gust="50")
    data = await call_tool(hass, SPOT_OPTIONS, SEA_TOOL_NAME, {})
    assert data["kitesurf"]["verdict"] == "good"
    assert data["kitesurf"]["reason"].endswith(
        "Gusts 27 kn, above the maximum of 25 kn."
    )


async def test_verdict_falls_back_to_weather_wind(
    hass: HomeAssistant, live_entities: None
) -> None:
    """Without a wind sensor the weather entity's current wind is judged."""
    options = {
        **{k: v for k, v in LIVE_OPTIONS.items() if not k.startswith("sea_")},
        "sea_wave_height": [WAVES],
        "sea_water_temperature": [WATER],
    }
    data = await call_tool(hass, options, SEA_TOOL_NAME, {})
    assert data["kitesurf"] == {
        "verdict": "too light",
        "reason": "Wind 9.7 kn from SW (225°) is below the minimum of 12 kn.",
        "spot": "12-25 kn from W, NW, N",
        "wind_from": "Home (weather service)",
    }


# --- bad arguments -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({"period": "weekly"}, "got 'weekly'"),
        ({"count": 0}, "got 0"),
        ({"count": "three"}, "got 'three'"),
    ],
)
async def test_bad_arguments_give_a_readable_tool_error(
    hass: HomeAssistant,
    live_entities: None,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    args: dict[str, Any],
    fragment: str,
) -> None:
    """The model reads what was wrong and how to call the tool right."""
    text, data = await ask_with_tool(hass, fake_server, WEATHER_TOOL_NAME, args)
    assert data["error"] == "Invalid"
    assert data["error_text"].startswith(f"Invalid arguments for {WEATHER_TOOL_NAME}: ")
    assert fragment in data["error_text"]
    assert '"period" is "daily" or "hourly"' in data["error_text"]
    assert "forecast" not in data
    assert WEATHER_TOOL_NAME in text


async def test_unknown_arguments_are_ignored_and_listed(
    hass: HomeAssistant,
    live_entities: None,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Invented argument names do not fail the call; the model is told."""
    _, data = await ask_with_tool(
        hass, fake_server, SEA_TOOL_NAME, {"location": "the beach"}
    )
    assert data["ignored_arguments"] == ["location"]
    assert len(data["sensors"]) == len(SEA)


# --- configuration -----------------------------------------------------------------


def _conversation_subentry(entry: MockConfigEntry) -> ConfigSubentry:
    return next(iter(entry.subentries.values()))


@pytest.mark.parametrize("agent_options", [BASE_OPTIONS])
async def test_reconfigure_stores_live_data_settings(
    hass: HomeAssistant,
    live_entities: None,
    loaded_entry: MockConfigEntry,
) -> None:
    """The agent form has the contract keys; an upside-down range is refused."""
    subentry = _conversation_subentry(loaded_entry)
    result = await loaded_entry.start_subentry_reconfigure_flow(
        hass, subentry.subentry_id
    )
    assert result["type"] is FlowResultType.FORM
    keys = {str(key) for key in result["data_schema"].schema}
    assert {
        "weather_entity",
        "sea_wind",
        "sea_gusts",
        "sea_wind_direction",
        "sea_wave_height",
        "sea_wave_period",
        "sea_water_temperature",
        "sea_tide",
        "sea_other",
        "kite_min_wind_kn",
        "kite_max_wind_kn",
        "kite_directions",
    } <= keys

    form = {
        CONF_MODEL: MODEL,
        CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
        "tool_bias": True,
        "temperature": 0.6,
        "max_tokens": 512,
        "weather_entity": WEATHER,
        "sea_wind": [WIND],
        "sea_wind_direction": [DIRECTION],
        "kite_min_wind_kn": 20,
        "kite_max_wind_kn": 15,
        "kite_directions": ["NW", "N"],
    }
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], form
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"kite_max_wind_kn": "kite_range"}

    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {**form, "kite_min_wind_kn": 12, "kite_max_wind_kn": 25}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    data = _conversation_subentry(loaded_entry).data
    assert data["weather_entity"] == WEATHER
    assert data["sea_wind"] == [WIND]
    assert data["sea_wind_direction"] == [DIRECTION]
    assert data["kite_min_wind_kn"] == 12
    assert data["kite_max_wind_kn"] == 25
    assert data["kite_directions"] == ["NW", "N"]


async def test_unexpected_failure_is_a_tool_error(
    hass: HomeAssistant,
    live_entities: None,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bug while reading sensors does not end the turn; the model is told."""

    def broken(*_args: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(
        "custom_components.local_assistant.tools.sea.read_sensor", broken
    )
    _, data = await ask_with_tool(hass, fake_server, SEA_TOOL_NAME, {})
    assert data["error"] == "HomeAssistantError"
    assert data["error_text"].startswith(f"{SEA_TOOL_NAME} failed: RuntimeError.")


async def test_tools_read_picked_entities_that_are_not_exposed(
    hass: HomeAssistant,
    live_entities: None,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Picking an entity in the agent is the permission (README, "Live-data tools");
    exposure to Assist is not required, and the form says so in both languages."""
    for entity_id in (WEATHER, *SEA):
        async_expose_entity(hass, "conversation", entity_id, False)
        assert not async_should_expose(hass, "conversation", entity_id)
    seen = await call_tool(hass, LIVE_OPTIONS, SEA_TOOL_NAME, {})
    assert {sensor["name"] for sensor in seen["sensors"]} >= {"Beach wind"}
    forecast = await call_tool(hass, LIVE_OPTIONS, WEATHER_TOOL_NAME, {})
    assert forecast["forecast"]

    section = "config_subentries.conversation.step.init.data_description"
    for language, word in (("en", "exposed"), ("es", "expuest")):
        texts = json.loads(
            (TRANSLATIONS / f"{language}.json").read_text(encoding="utf-8")
        )
        for key in ("weather_entity", "sea_wind"):
            node: Any = texts
            for part in f"{section}.{key}".split("."):
                node = node[part]
            assert word in node, (language, key)


def test_api_id_follows_an_old_sea_list(hass: HomeAssistant) -> None:
    """An agent set up before the sea options by kind keeps its one list
    until it is saved: another list is another configuration, so another
    API id (2026.11 would keep serving the tools of the first)."""
    first = build_api(hass, {**BASE_OPTIONS, "sea_entities": ["sensor.a"]})
    other = build_api(hass, {**BASE_OPTIONS, "sea_entities": ["sensor.b"]})
    assert isinstance(first, LocalAssistantAPI)
    assert isinstance(other, LocalAssistantAPI)
    assert first.id != other.id
