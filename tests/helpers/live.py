"""The live-data home of the tool tests: template weather and sea sensors.

Time is meant to be frozen at NOW (Monday 2 March 2026, 10:00 in the test
time zone, US/Pacific), so forecast labels and reading ages are exact.
"""

from __future__ import annotations

import json
from typing import Any

from homeassistant.const import CONF_API_KEY, CONF_LLM_HASS_API, CONF_MODEL, CONF_PROMPT
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import llm
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import (
    CONF_BASE_URL,
    CONF_EXTRACTION,
    DOMAIN,
    EXTRACTION_OFF,
    SUBENTRY_CONVERSATION,
)
from custom_components.local_assistant.llm.prompt import LIVE_HEADING
from custom_components.local_assistant.tools.weather import (
    WEATHER_TOOL_NAME,
    WeatherForecastTool,
)
from tests.helpers import fake_openai as fake
from tests.helpers.ha import MODEL

NOW = "2026-03-02T18:00:00+00:00"  # 10:00 in US/Pacific

WEATHER = "weather.home"
WEATHER_DAILY_ONLY = "weather.daily_only"
WIND = "sensor.beach_wind"
GUSTS = "sensor.beach_gusts"
DIRECTION = "sensor.beach_wind_direction"
WAVES = "sensor.wave_height"
WATER = "sensor.water_temperature"
TIDE = "sensor.tide"
BUOY = "sensor.buoy_wave_period"
# The sea options of the live home: each sensor under the kind it measures.
SEA_OPTIONS: dict[str, list[str]] = {
    "sea_wind": [WIND],
    "sea_gusts": [GUSTS],
    "sea_wind_direction": [DIRECTION],
    "sea_wave_height": [WAVES],
    "sea_wave_period": [BUOY],
    "sea_water_temperature": [WATER],
    "sea_tide": [TIDE],
}
SEA = [entity_id for entity_ids in SEA_OPTIONS.values() for entity_id in entity_ids]

DAILY = [
    # Yesterday: already over, never shown.
    {"datetime": "2026-03-01T00:00:00-08:00", "condition": "sunny", "temperature": 20},
    {
        "datetime": "2026-03-02T00:00:00-08:00",
        "condition": "rainy",
        "temperature": 14.2,
        "templow": 8,
        "precipitation": 3.5,
        "precipitation_probability": 80,
        "wind_speed": 20,
        "wind_bearing": 225,
    },
    {
        "datetime": "2026-03-03T00:00:00-08:00",
        "condition": "partlycloudy",
        "temperature": 16,
        "templow": 9.5,
        "precipitation": 0,
        "precipitation_probability": 10,
        "wind_speed": 30,
        "wind_gust_speed": 45,
        "wind_bearing": 315,
    },
    {"datetime": "2026-03-04T00:00:00-08:00", "condition": "sunny", "temperature": 18},
    {"datetime": "2026-03-05T00:00:00-08:00", "condition": "sunny", "temperature": 19},
]
HOURLY = [
    {"datetime": f"2026-03-02T{hour:02d}:00:00-08:00", "temperature": 10 + hour % 5}
    for hour in range(9, 22)
]


BASE_OPTIONS: dict[str, Any] = {
    CONF_MODEL: MODEL,
    CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
    CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
    "tool_bias": True,
    "temperature": 0.6,
    "max_tokens": 512,
}
# An agent with only a beach wind sensor, the model answering every turn.
WIND_ONLY_OPTIONS: dict[str, Any] = {
    **BASE_OPTIONS,
    "local_intents": False,
    "sea_wind": [WIND],
}

# Three German turns about dinner: a session that asks for no live data.
GERMAN_DINNER_CHAT = [
    ("Was koche ich heute Abend?", "Wie wäre es mit einer Gemüselasagne?"),
    ("Und was brauche ich dafür?", "Nudelplatten, Zucchini, Tomaten und Käse."),
    ("Wie lange kommt sie in den Ofen?", "Etwa vierzig Minuten bei 180 Grad."),
]

LIVE_OPTIONS: dict[str, Any] = {
    **BASE_OPTIONS,
    "weather_entity": WEATHER,
    **SEA_OPTIONS,
    "kite_min_wind_kn": 12,
    "kite_max_wind_kn": 25,
    "kite_directions": ["W", "NW", "N"],
}

# A weather tool that reads an entity this home lacks: every call runs and
# reports that, whatever its arguments (HA's own intents off).
PAGING_OPTIONS: dict[str, Any] = {
    **BASE_OPTIONS,
    "local_intents": False,
    "weather_entity": "weather.gone",
}


def forecast_page_after_page(body: dict[str, Any]) -> fake.Reply:
    """A model that reads one more forecast period each round, without end:
    every call differs from the ones before (the same call again ends the
    turn: turn/policy.py)."""
    rounds = len([m for m in body["messages"] if m["role"] == "tool"])
    return fake.tool_calls([(WEATHER_TOOL_NAME, {"count": rounds + 1})])


def template_value(value: Any) -> str:
    """A template that renders ``value`` (a template entity's option)."""
    return "{{ " + json.dumps(value) + " }}"


async def async_setup_template_weather(
    hass: HomeAssistant, **config: Any
) -> WeatherForecastTool:
    """weather.home: a template weather entity (cloudy, 8 °C unless given)."""
    entity = {
        "name": "Home",
        "condition": "{{ 'cloudy' }}",
        "temperature": "{{ 8 }}",
        "humidity": "{{ 50 }}",
        "temperature_unit": "°C",
        "precipitation_unit": "mm",
        "wind_speed_unit": "km/h",
        **config,
    }
    assert await async_setup_component(
        hass, "template", {"template": [{"weather": [entity]}]}
    )
    await hass.async_block_till_done()
    assert hass.states.get("weather.home") is not None
    return WeatherForecastTool("weather.home")


def set_sensor(
    hass: HomeAssistant,
    entity_id: str,
    state: Any,
    unit: str | None = None,
    device_class: str | None = None,
    name: str | None = None,
) -> None:
    """A sensor's state with the attributes given."""
    attrs: dict[str, Any] = {}
    if unit:
        attrs["unit_of_measurement"] = unit
    if device_class:
        attrs["device_class"] = device_class
    if name:
        attrs["friendly_name"] = name
    hass.states.async_set(entity_id, str(state), attrs)


async def async_setup_live_entities(hass: HomeAssistant) -> None:
    """Template weather (daily+hourly, and daily only) and template sea sensors."""
    weather_common = {
        "condition": "{{ 'partlycloudy' }}",
        "temperature": "{{ 12.5 }}",
        "humidity": "{{ 71 }}",
        "temperature_unit": "°C",
        "wind_speed": "{{ 18 }}",
        "wind_speed_unit": "km/h",
        "wind_bearing": "{{ 225 }}",
        "precipitation_unit": "mm",
        "forecast_daily": template_value(DAILY),
    }
    sensors = [
        ("Beach wind", 8.5, "m/s", "wind_speed"),
        ("Beach gusts", 11, "m/s", "wind_speed"),
        ("Beach wind direction", 315, "°", "wind_direction"),
        ("Wave height", 1.2, "m", "distance"),
        ("Water temperature", 16.4, "°C", "temperature"),
    ]
    config = {
        "template": [
            {
                "weather": [
                    {
                        "name": "Home",
                        **weather_common,
                        "forecast_hourly": template_value(HOURLY),
                    },
                    {"name": "Daily only", **weather_common},
                ]
            },
            {
                "sensor": [
                    *(
                        {
                            "name": name,
                            "state": template_value(value),
                            "unit_of_measurement": unit,
                            "device_class": device_class,
                        }
                        for name, value, unit, device_class in sensors
                    ),
                    {"name": "Tide", "state": "{{ 'rising' }}"},
                    {
                        "name": "Buoy wave period",
                        "state": "{{ 7 }}",
                        "unit_of_measurement": "s",
                        "availability": "{{ false }}",
                    },
                ]
            },
        ]
    }
    assert await async_setup_component(hass, "template", config)
    await hass.async_block_till_done()
    assert hass.states.get(WEATHER) is not None
    assert hass.states.get(BUOY).state == "unavailable"


def live_lines(body: dict[str, Any]) -> list[str]:
    """The live data the model was sent (in the system message before the history)."""
    text = next(
        m["content"]
        for m in body["messages"]
        if m["role"] == "system" and LIVE_HEADING in m["content"]
    )
    assert text.startswith(LIVE_HEADING) or f"\n{LIVE_HEADING}" in text
    block = text[text.index(LIVE_HEADING) + len(LIVE_HEADING) :]
    return block.strip().split("\n\n")[0].split("\n")


def tool_result(body: dict[str, Any]) -> dict[str, Any]:
    """The last tool result the model read, as data."""
    content = [m for m in body["messages"] if m["role"] == "tool"][-1]["content"]
    payload = json.loads(content[content.index("): {") + 3 :])
    if isinstance(payload, dict) and set(payload) == {"data", "error"}:
        payload = payload["data"]
    return payload


def old_sea_list_entry(
    hass: HomeAssistant, base_url: str, sea: list[str]
) -> MockConfigEntry:
    """An entry whose agent lists its sea sensors in one list (before the fields)."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Local Assistant",
        data={CONF_BASE_URL: base_url, CONF_API_KEY: ""},
        options={CONF_EXTRACTION: EXTRACTION_OFF},
        subentries_data=[
            {
                "subentry_type": SUBENTRY_CONVERSATION,
                "data": {**BASE_OPTIONS, "sea_entities": sea},
                "title": "Playa",
                "unique_id": None,
            }
        ],
    )
    entry.add_to_hass(hass)
    return entry


async def async_save_agent_form(
    hass: HomeAssistant, entry: MockConfigEntry, changes: dict[str, Any]
) -> None:
    """Open the agent's reconfigure form, keep every value it shows, change
    ``changes`` (the one thing the user came for) and save."""
    (subentry,) = entry.subentries.values()
    result = await entry.start_subentry_reconfigure_flow(hass, subentry.subentry_id)
    assert result["type"] is FlowResultType.FORM
    shown: dict[str, Any] = {}
    for key in result["data_schema"].schema:
        value = (key.description or {}).get("suggested_value")
        if value is None and callable(getattr(key, "default", None)):
            value = key.default()
        if value is not None:
            shown[str(key)] = value
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {**shown, **changes}
    )
    assert result["type"] is FlowResultType.ABORT
    await hass.async_block_till_done()
