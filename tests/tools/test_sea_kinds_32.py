"""Issue 21: the user says what each sea sensor measures, in any language.

The agent's options have one sensor field per kind (wind speed, gusts, wind
direction, wave height and period, water temperature, tide, other); the sea
tool reads each sensor as its field says, never from words in its name.
Entries made before (one ``sea_entities`` list) are migrated once by device
class and unit, with a repair issue where that is a guess.
"""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_API_KEY
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import issue_registry as ir
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import (
    CONF_BASE_URL,
    DOMAIN,
)
from custom_components.local_assistant.llm.sentences import async_phrases
from custom_components.local_assistant.old_options import sea_issue_id
from custom_components.local_assistant.tools.kite import KiteSpot
from custom_components.local_assistant.tools.phrases import (
    tide_line,
    water_line,
    waves_line,
)
from custom_components.local_assistant.tools.sea import SeaConditionsTool
from tests.helpers import fake_openai as fake
from tests.helpers.live import BASE_OPTIONS, old_sea_list_entry, set_sensor

# --- homes named in their own language ------------------------------------------


async def test_a_german_home_is_read_by_its_fields(hass: HomeAssistant) -> None:
    """A German beach station: every sensor named in German, each picked in
    its field. "Wie ist das Meer?" should hear the waves with their period,
    the water and the tide, and the gusts as gusts (not as the wind).

    Before, "Strand Wellenhöhe" (no English or Spanish wave word) was
    dropped and "Strand Böen" was taken for the mean wind.
    """
    set_sensor(hass, "sensor.strand_wind", 18, "kn", "wind_speed", "Strand Windstärke")
    set_sensor(hass, "sensor.strand_boen", 30, "kn", "wind_speed", "Strand Böen")
    set_sensor(
        hass,
        "sensor.strand_richtung",
        270,
        "°",
        "wind_direction",
        "Strand Windrichtung",
    )
    set_sensor(hass, "sensor.strand_wellen", 1.2, "m", "distance", "Strand Wellenhöhe")
    set_sensor(
        hass, "sensor.strand_periode", 7, "s", "duration", "Strand Wellenperiode"
    )
    set_sensor(
        hass, "sensor.strand_wasser", 16, "°C", "temperature", "Strand Wassertemperatur"
    )
    set_sensor(hass, "sensor.strand_pegel", 2.1, "m", "distance", "Strand Pegel")
    tool = SeaConditionsTool(
        {
            # The gusts listed first: the field says which is which.
            "sea_gusts": ["sensor.strand_boen"],
            "sea_wind": ["sensor.strand_wind"],
            "sea_wind_direction": ["sensor.strand_richtung"],
            "sea_wave_height": ["sensor.strand_wellen"],
            "sea_wave_period": ["sensor.strand_periode"],
            "sea_water_temperature": ["sensor.strand_wasser"],
            "sea_tide": ["sensor.strand_pegel"],
        },
        KiteSpot(min_kn=12, max_kn=25),
    )
    phrases = await async_phrases(hass, "de")
    _kite, wind, *rest = tool.lines(hass, phrases)
    assert rest == [
        waves_line(phrases, 1.2, "m", 7.0),
        water_line(phrases, 16, "°C"),
        tide_line(phrases, 2.1, "m", None),
    ]
    mean, gusts = phrases.with_unit(18, "kn"), phrases.with_unit(30, "kn")
    assert mean in wind, wind
    assert wind.index(mean) < wind.index(gusts), wind
    result = await tool.async_run(hass, {}, "de")
    assert result["kitesurf"]["verdict"] == "good", result["kitesurf"]


async def test_a_dutch_water_temperature_is_not_the_air(hass: HomeAssistant) -> None:
    """A Dutch home: "Strand Watertemperatuur" 16 °C picked as the water,
    "Strand Luchttemperatuur" 22 °C among the other sea sensors.

    Before, both were taken for the water (no English word told them
    apart) and the first, the air, was said as "Water: 22 °C".
    """
    set_sensor(
        hass, "sensor.strand_lucht", 22, "°C", "temperature", "Strand Luchttemperatuur"
    )
    set_sensor(
        hass, "sensor.strand_water", 16, "°C", "temperature", "Strand Watertemperatuur"
    )
    tool = SeaConditionsTool(
        {
            "sea_other": ["sensor.strand_lucht"],
            "sea_water_temperature": ["sensor.strand_water"],
        },
        KiteSpot(),
    )
    phrases = await async_phrases(hass, "nl")
    lines = tool.lines(hass, phrases)
    assert water_line(phrases, 16, "°C") in lines, lines
    assert water_line(phrases, 22, "°C") not in lines, lines
    assert (
        phrases.text(
            "sensor",
            name="Strand Luchttemperatuur",
            value=phrases.with_unit(22, "°C"),
        )
        in lines
    ), lines


async def test_french_gusts_are_no_mean_wind(hass: HomeAssistant) -> None:
    """A French station: "Plage Rafales" 45 km/h picked as the gusts,
    "Plage Vitesse du vent" 20 km/h (10.8 kn) as the wind; spot 12-20 kn.

    Before, "Rafales" (no "gust" in it) was read as the mean wind: "too
    strong" on a day that is too light.
    """
    set_sensor(hass, "sensor.plage_rafales", 45, "km/h", "wind_speed", "Plage Rafales")
    set_sensor(
        hass, "sensor.plage_vent", 20, "km/h", "wind_speed", "Plage Vitesse du vent"
    )
    tool = SeaConditionsTool(
        {"sea_wind": ["sensor.plage_vent"], "sea_gusts": ["sensor.plage_rafales"]},
        KiteSpot(min_kn=12, max_kn=20),
    )
    result = await tool.async_run(hass, {}, "fr")
    assert result["kitesurf"]["verdict"] == "too light", result["kitesurf"]
    assert result["kitesurf"]["wind_from"] == "Plage Vitesse du vent"


# --- a value in a unit its field's kind is not measured in ---------------------


@pytest.mark.parametrize(
    ("field", "value", "unit", "device_class"),
    [
        ("sea_water_temperature", 31, "km/h", "wind_speed"),
        ("sea_wave_height", 270, "°", "wind_direction"),
        ("sea_tide", 16, "°C", "temperature"),
        ("sea_wave_period", 1.5, "m", "distance"),
        ("sea_wind", 16, "°C", "temperature"),
        ("sea_wind_direction", 12, "kn", "wind_speed"),
    ],
)
async def test_a_value_in_a_wrong_unit_is_not_said_as_its_field(
    hass: HomeAssistant, field: str, value: float, unit: str, device_class: str
) -> None:
    """A sensor picked in the wrong field ("Water: 31 km/h", "Waves: 270°",
    a wind of 16 °C): never said or judged as that kind; it is said by its
    own name, with its own unit, as any other sea sensor."""
    set_sensor(hass, "sensor.beach_thing", value, unit, device_class, "Beach thing")
    tool = SeaConditionsTool({field: ["sensor.beach_thing"]}, KiteSpot(12, 25))
    phrases = await async_phrases(hass, "en")
    _kite, *lines = tool.lines(hass, phrases)
    assert lines == [
        phrases.text("sensor", name="Beach thing", value=phrases.with_unit(value, unit))
    ], lines
    result = await tool.async_run(hass, {}, "en")
    assert result["kitesurf"]["verdict"] == "unknown", result["kitesurf"]


# --- the form ------------------------------------------------------------------------


@pytest.mark.parametrize("agent_options", [BASE_OPTIONS])
async def test_each_sea_field_takes_any_sensors(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """The agent form has one sensor field per kind, several sensors each (two
    stations' wind), and no device-class filter: a scraped or template sensor
    often has none, and a reading in a unit its field's kind is not measured
    in is never used as that kind."""
    subentry = next(iter(loaded_entry.subentries.values()))
    result = await loaded_entry.start_subentry_reconfigure_flow(
        hass, subentry.subentry_id
    )
    assert result["type"] is FlowResultType.FORM
    configs = {
        str(key): selector.config
        for key, selector in result["data_schema"].schema.items()
        if str(key).startswith("sea_")
    }
    assert set(configs) == {
        "sea_wind",
        "sea_gusts",
        "sea_wind_direction",
        "sea_wave_height",
        "sea_wave_period",
        "sea_water_temperature",
        "sea_tide",
        "sea_other",
    }
    assert all(config["multiple"] for config in configs.values())
    assert all(config["domain"] == ["sensor"] for config in configs.values())
    assert not any(config.get("device_class") for config in configs.values())


# --- agents set up before: one list of sea sensors ---------------------------------


async def _set_up(hass: HomeAssistant, entry: MockConfigEntry) -> dict[str, Any]:
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED
    return dict(next(iter(entry.subentries.values())).data)


async def test_an_old_list_is_read_safely_and_the_user_asked_to_sort_it(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer
) -> None:
    """An agent set up before the fields, with its sea sensors in one list,
    named in Spanish. After the update the list is read as it is: only the
    one sensor HA knows as a wind speed and the one it knows as a wind
    direction are read as such; every other (a length may be the tide, a
    temperature the air's, a bare angle a swell's, a speed with no device
    class the gusts) is said by its own name, never as something it may not
    be. A repair issue names the list and asks the user to pick the fields;
    saving the agent's settings drops the list, and the issue with it."""
    set_sensor(hass, "sensor.viento", 18, "kn", "wind_speed", "Playa Viento")
    set_sensor(hass, "sensor.racha", 25, "km/h", None, "Playa Racha")
    set_sensor(hass, "sensor.direccion", 270, "°", "wind_direction", "Playa Dirección")
    set_sensor(hass, "sensor.altura", 1.2, "m", "distance", "Playa Altura")
    set_sensor(hass, "sensor.agua", 16, "°C", "temperature", "Playa Agua")
    set_sensor(hass, "sensor.mar_de_fondo", 200, "°", None, "Playa Mar de fondo")
    sea = [
        "sensor.viento",
        "sensor.racha",
        "sensor.direccion",
        "sensor.altura",
        "sensor.agua",
        "sensor.mar_de_fondo",
    ]
    entry = old_sea_list_entry(hass, fake_server.base_url, sea)
    data = await _set_up(hass, entry)
    assert data["sea_entities"] == sea

    tool = SeaConditionsTool(data, KiteSpot())
    lines = tool.lines(hass, await async_phrases(hass, "es"))
    assert lines[0].startswith("Viento: 18 kn del oeste"), lines
    assert not any(line.startswith(("Olas", "Marea", "Agua")) for line in lines)
    for name in ("Playa Racha", "Playa Altura", "Playa Agua", "Playa Mar de fondo"):
        assert any(line.startswith(name) for line in lines), (name, lines)

    subentry = next(iter(entry.subentries.values()))
    issue_id = sea_issue_id(subentry.subentry_id)
    issue = ir.async_get(hass).async_get_issue(DOMAIN, issue_id)
    assert issue is not None
    assert issue.translation_key == "sea_sensors_by_kind"
    assert not issue.is_persistent
    assert issue.translation_placeholders == {
        "agent": "Playa",
        "sensors": ", ".join(sea),
    }

    # Saving the agent's settings, each sensor in its field: the list and
    # the issue go.
    result = await entry.start_subentry_reconfigure_flow(hass, subentry.subentry_id)
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {
            **{k: v for k, v in data.items() if k != "sea_entities"},
            "sea_wind": ["sensor.viento"],
            "sea_gusts": ["sensor.racha"],
            "sea_wind_direction": ["sensor.direccion"],
            "sea_wave_height": ["sensor.altura"],
            "sea_water_temperature": ["sensor.agua"],
            "sea_other": ["sensor.mar_de_fondo"],
        },
    )
    assert result["type"] is FlowResultType.ABORT
    await hass.async_block_till_done()
    assert "sea_entities" not in next(iter(entry.subentries.values())).data
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is None
    await hass.config_entries.async_unload(entry.entry_id)


async def test_two_wind_speeds_in_an_old_list_are_said_by_name(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer
) -> None:
    """A station's mean wind and its gusts, both HA wind speeds, in an old
    list: which is the wind is not known, so neither is said or judged as
    the wind (a gust said as the wind turns the kitesurf verdict)."""
    set_sensor(hass, "sensor.mean", 14, "kn", "wind_speed", "Strand A")
    set_sensor(hass, "sensor.peak", 22, "kn", "wind_speed", "Strand B")
    entry = old_sea_list_entry(
        hass, fake_server.base_url, ["sensor.mean", "sensor.peak"]
    )
    data = await _set_up(hass, entry)
    tool = SeaConditionsTool(data, KiteSpot())
    lines = tool.lines(hass, await async_phrases(hass, "de"))
    assert not any(line.startswith("Wind") for line in lines), lines
    assert any(line.startswith("Strand A") for line in lines), lines
    await hass.config_entries.async_unload(entry.entry_id)


async def test_an_entry_of_a_newer_version_is_refused(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer
) -> None:
    """Data written by a newer version (after a downgrade) is not read."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        version=2,
        data={CONF_BASE_URL: fake_server.base_url, CONF_API_KEY: ""},
    )
    entry.add_to_hass(hass)
    assert not await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.MIGRATION_ERROR
