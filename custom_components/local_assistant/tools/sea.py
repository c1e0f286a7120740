"""The sea tool: the user's sea and wind sensors, and a kitesurf verdict."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from homeassistant.components.sensor import SensorDeviceClass
from homeassistant.components.weather.const import (
    ATTR_WEATHER_WIND_BEARING,
    ATTR_WEATHER_WIND_GUST_SPEED,
    ATTR_WEATHER_WIND_SPEED,
    ATTR_WEATHER_WIND_SPEED_UNIT,
)
from homeassistant.const import (
    ATTR_DEVICE_CLASS,
    ATTR_UNIT_OF_MEASUREMENT,
    DEGREE,
    STATE_UNAVAILABLE,
    STATE_UNKNOWN,
)
from homeassistant.core import HomeAssistant, State
from homeassistant.util import dt as dt_util
from homeassistant.util.unit_conversion import (
    DistanceConverter,
    DurationConverter,
    TemperatureConverter,
)
import voluptuous as vol

from ..const import (
    CONF_SEA_ENTITIES,
    CONF_SEA_GUSTS,
    CONF_SEA_OTHER,
    CONF_SEA_TIDE,
    CONF_SEA_WATER_TEMPERATURE,
    CONF_SEA_WAVE_HEIGHT,
    CONF_SEA_WAVE_PERIOD,
    CONF_SEA_WIND,
    CONF_SEA_WIND_DIRECTION,
    SEA_STALE_AFTER_SECONDS,
)
from ..llm.sentences import async_phrases
from .base import LiveTool, convert_speed, speed_unit, state_name, to_knots
from .kite import (
    KiteSpot,
    Verdict,
    compass_point,
    format_age,
    kite_verdict,
    parse_direction,
)
from .phrases import (
    KiteFacts,
    Phrases,
    Wind,
    kite_line,
    tide_line,
    water_line,
    waves_line,
    wind_line,
)

SEA_TOOL_NAME: Final = "local_sea_conditions"

KIND_WIND: Final = "wind"
KIND_GUST: Final = "gust"
KIND_DIRECTION: Final = "direction"
KIND_WAVES: Final = "waves"
KIND_WAVE_PERIOD: Final = "wave_period"
KIND_WATER: Final = "water"
KIND_TIDE: Final = "tide"
# A sensor of the one list older agents have: its kind is read with its state.
KIND_OLD_LIST: Final = "old_list"

# What the sensors of each sea option measure: the user says it, in the
# agent's options. The other sensors are said by their own names.
SEA_OPTION_KINDS: Final[dict[str, str | None]] = {
    CONF_SEA_WIND: KIND_WIND,
    CONF_SEA_GUSTS: KIND_GUST,
    CONF_SEA_WIND_DIRECTION: KIND_DIRECTION,
    CONF_SEA_WAVE_HEIGHT: KIND_WAVES,
    CONF_SEA_WAVE_PERIOD: KIND_WAVE_PERIOD,
    CONF_SEA_WATER_TEMPERATURE: KIND_WATER,
    CONF_SEA_TIDE: KIND_TIDE,
    CONF_SEA_OTHER: None,
}
_LENGTH_UNITS: Final = frozenset(str(unit) for unit in DistanceConverter.VALID_UNITS)
_DURATION_UNITS: Final = frozenset(str(unit) for unit in DurationConverter.VALID_UNITS)
_TEMPERATURE_UNITS: Final = frozenset(
    str(unit) for unit in TemperatureConverter.VALID_UNITS
)
_KIND_UNITS: Final = {
    KIND_WAVES: _LENGTH_UNITS,
    KIND_TIDE: _LENGTH_UNITS,
    KIND_WAVE_PERIOD: _DURATION_UNITS,
    KIND_WATER: _TEMPERATURE_UNITS,
}


def sea_sensors(options: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """Each sea sensor of the agent's options, with the kind its option says.

    An agent set up before the options by kind has one list of every sensor
    (``CONF_SEA_ENTITIES``) until its settings are saved; its kinds are
    read with the states (``old_list_kinds``).
    """
    sensors = [
        (entity_id, kind)
        for option, kind in SEA_OPTION_KINDS.items()
        for entity_id in options.get(option) or ()
    ]
    if sensors:
        return sensors
    return [(entity_id, KIND_OLD_LIST) for entity_id in old_sea_list(options)]


def old_sea_list(options: Mapping[str, Any]) -> list[str]:
    """The one list of sea sensors of an agent set up before the options by kind."""
    return list(options.get(CONF_SEA_ENTITIES) or ())


def old_list_as_options(
    options: Mapping[str, Any], states: Callable[[str], State | None]
) -> dict[str, list[str]]:
    """An old list's sensors in the options by kind, as it is read now: a kind
    ``old_list_kinds`` tells in its field, any other in the other sensors.

    Shown so in the agent's form, a save for another reason keeps them all.
    """
    sensors = old_sea_list(options)
    if not sensors or any(options.get(option) for option in SEA_OPTION_KINDS):
        return {}
    option_of = {kind: option for option, kind in SEA_OPTION_KINDS.items()}
    by_option: dict[str, list[str]] = {}
    for entity_id, kind in zip(
        sensors,
        old_list_kinds([states(entity_id) for entity_id in sensors]),
        strict=True,
    ):
        by_option.setdefault(option_of[kind], []).append(entity_id)
    return by_option


def old_list_kinds(states: list[State | None]) -> list[str | None]:
    """The kinds of an old list's sensors, where nothing else can be meant.

    Only HA's wind speed and wind direction device classes say a kind, and
    only for the one sensor of the list that has it (a station's mean wind
    and its gusts are both wind speeds): any other is said by its own name,
    never as something it may not be, until the user picks its field.
    """
    kinds = [_device_class_kind(state) for state in states]
    return [kind if kinds.count(kind) == 1 else None for kind in kinds]


def _device_class_kind(state: State | None) -> str | None:
    device_class = None if state is None else state.attributes.get(ATTR_DEVICE_CLASS)
    if device_class == SensorDeviceClass.WIND_SPEED:
        return KIND_WIND
    if device_class == SensorDeviceClass.WIND_DIRECTION:
        return KIND_DIRECTION
    return None


@dataclass(slots=True)
class Reading:
    """One sensor as the verdict sees it."""

    name: str
    kind: str | None
    knots: float | None = None
    degrees: float | None = None
    problem: str | None = None  # why it cannot be used ("is unavailable")
    value: float | None = None
    unit: str | None = None
    trend: str | None = None  # a tide's "rising" or "falling" attribute


class SeaConditionsTool(LiveTool):
    """Every configured sea sensor, with ages, knots and a kitesurf verdict."""

    name = SEA_TOOL_NAME
    parameters = vol.Schema({})
    topics = "the sea, the beach, wind or kitesurfing"

    def __init__(
        self,
        options: Mapping[str, Any],
        spot: KiteSpot,
        weather_entity: str | None = None,
    ) -> None:
        """Read the sea sensors of ``options`` (``SEA_OPTION_KINDS``); judge
        against ``spot`` when it is configured.

        Without a wind sensor among them, the verdict falls back to the
        current wind of ``weather_entity``.
        """
        self.sensors = sea_sensors(options)
        self.spot = spot
        self.weather_entity = weather_entity
        self.description = (
            "Live sea and wind conditions at the spot from the home's sensors "
            "(wind also in knots, gusts, direction, waves, water temperature, tide)"
            + (", with a kitesurf verdict" if spot.configured else "")
            + ". Use it for any question about the sea, the beach, wind or kitesurfing."
        )

    async def async_run(
        self, hass: HomeAssistant, args: dict[str, Any], language: str
    ) -> dict[str, Any]:
        """Read the sensors now; the summary is in ``language``."""
        sensors, readings = self._read(hass)
        result: dict[str, Any] = {"sensors": sensors}
        if self.spot.configured:
            verdict, source = self._verdict(hass, readings)
            result["kitesurf"] = {
                "verdict": verdict.verdict,
                "reason": verdict.reason,
                "spot": self.spot.describe(),
            }
            if source:
                result["kitesurf"]["wind_from"] = source
        result["summary"] = " ".join(
            self.lines(hass, await async_phrases(hass, language))
        )
        return result

    def lines(self, hass: HomeAssistant, phrases: Phrases) -> list[str]:
        """The sea now in short lines: the kitesurf verdict, wind, waves, water, tide."""
        _, readings = self._read(hass)
        lines: list[str] = []
        if self.spot.configured:
            verdict, _ = self._verdict(hass, readings)
            lines.append(
                kite_line(
                    phrases,
                    KiteFacts(
                        verdict=verdict.verdict,
                        wind_kn=verdict.wind_kn,
                        direction=verdict.direction,
                        gust_kn=verdict.gust_kn,
                        min_kn=self.spot.min_kn,
                        max_kn=self.spot.max_kn,
                        directions=self.spot.directions,
                    ),
                )
            )
        if (wind := _wind(readings)) is not None:
            lines.append(wind_line(phrases, wind))
        waves, _ = _pick_value(readings, KIND_WAVES)
        period, _ = _pick_value(readings, KIND_WAVE_PERIOD)
        if waves is not None and waves.value is not None:
            lines.append(waves_line(phrases, waves.value, waves.unit, _seconds(period)))
        water, _ = _pick_value(readings, KIND_WATER)
        if water is not None and water.value is not None:
            lines.append(water_line(phrases, water.value, water.unit))
        tide, _ = _pick_value(readings, KIND_TIDE)
        if tide is not None and tide.value is not None:
            lines.append(tide_line(phrases, tide.value, tide.unit, tide.trend))
        # A sensor of no kind (a current, a swell direction), or in a unit
        # its kind is not measured in, is said by its own name, in the
        # home's words: never as something it may not be.
        lines.extend(
            phrases.text(
                "sensor",
                name=reading.name,
                value=phrases.with_unit(reading.value, reading.unit),
            )
            for reading in readings
            if reading.kind is None
            and reading.problem is None
            and reading.value is not None
        )
        return lines

    def has_wind_sensor(self, hass: HomeAssistant) -> bool:
        """Whether a wind speed sensor of the spot gives a reading."""
        _, readings = self._read(hass)
        return _wind(readings) is not None

    def _read(self, hass: HomeAssistant) -> tuple[list[dict[str, Any]], list[Reading]]:
        now = dt_util.utcnow()
        sensors: list[dict[str, Any]] = []
        readings: list[Reading] = []
        states = [hass.states.get(entity_id) for entity_id, _ in self.sensors]
        kinds = [kind for _, kind in self.sensors]
        if KIND_OLD_LIST in kinds:
            # sea_sensors: an old list, or none at all.
            kinds = old_list_kinds(states)
        for (entity_id, _), state, kind in zip(
            self.sensors, states, kinds, strict=True
        ):
            entry, reading = read_sensor(state, entity_id, kind, now)
            sensors.append(entry)
            readings.append(reading)
        return sensors, readings

    def _verdict(
        self, hass: HomeAssistant, readings: list[Reading]
    ) -> tuple[Verdict, str | None]:
        """The verdict, and which reading the wind came from."""
        wind, wind_problem = _pick(readings, KIND_WIND)
        gust, _ = _pick(readings, KIND_GUST)
        direction, direction_problem = _pick(readings, KIND_DIRECTION)
        source = wind.name if wind else None
        if wind is None and self.weather_entity:
            # No wind sensor, or none that reads now: the live lines then
            # give the weather service's wind, and the verdict judges it.
            service = _weather_wind(
                hass.states.get(self.weather_entity), self.weather_entity
            )
            if service[0] is not None or wind_problem is None:
                wind, wind_problem, gust, service_direction = service
                if direction is None:  # a direction sensor that reads is kept
                    direction, direction_problem = service_direction, None
                source = f"{wind.name} (weather service)" if wind else None
        calm = wind is not None and wind.knots == 0
        verdict = kite_verdict(
            self.spot,
            wind.knots if wind else None,
            # A vane at rest in a calm is no "good direction".
            direction.degrees if direction and not calm else None,
            gust_kn=gust.knots if gust else None,
            wind_problem=wind_problem,
            direction_problem=direction_problem,
        )
        return verdict, source


def read_sensor(
    state: State | None, entity_id: str, kind: str | None, now: datetime
) -> tuple[dict[str, Any], Reading]:
    """What the model sees of one sensor, and what the verdict uses: the
    ``kind`` its option says, unless its unit is not one that kind is
    measured in ("Waves: 270°", "Water: 31 km/h")."""
    if state is None:
        return (
            {
                "entity_id": entity_id,
                "state": "missing",
                "note": "This entity does not exist.",
            },
            Reading(entity_id, None, problem="does not exist"),
        )
    name = state_name(state)
    attrs = state.attributes
    unit = attrs.get(ATTR_UNIT_OF_MEASUREMENT)
    device_class = attrs.get(ATTR_DEVICE_CLASS)
    if kind is not None and not _measured_in(kind, unit):
        kind = None
    trend = attrs.get("trend")
    reading = Reading(
        name, kind, unit=unit, trend=trend if isinstance(trend, str) else None
    )
    entry: dict[str, Any] = {"name": name}
    age_seconds = (now - state.last_reported).total_seconds()
    age = format_age(age_seconds)

    if state.state in (STATE_UNAVAILABLE, STATE_UNKNOWN):
        entry["state"] = state.state
        entry["note"] = "No current reading."
        reading.problem = f"is {state.state}"
    else:
        value = _value(state.state)
        entry["value"] = value
        if isinstance(value, float | int):
            reading.value = float(value)
        knots = to_knots(value, unit) if isinstance(value, float | int) else None
        if knots is not None:
            entry["knots"] = knots
            reading.knots = knots
        if kind == KIND_DIRECTION:
            reading.degrees = parse_direction(value)
            if reading.degrees is not None and isinstance(value, float | int):
                entry["compass"] = compass_point(reading.degrees)
        if age_seconds > SEA_STALE_AFTER_SECONDS:
            entry["stale"] = True
            entry["note"] = f"Old reading ({age}); it may not match conditions now."
            reading.problem = f"reading is {age} old"
    if unit:
        entry["unit"] = unit
    if device_class:
        entry["device_class"] = device_class
    entry["updated"] = age if age == "just now" else f"{age} ago"
    return entry, reading


def _measured_in(kind: str, unit: str | None) -> bool:
    """Whether a reading of ``kind`` can be in ``unit``."""
    if kind in (KIND_WIND, KIND_GUST):
        return to_knots(1.0, unit) is not None
    if kind == KIND_DIRECTION:
        return unit in (None, DEGREE)  # degrees, or a compass point ("NW")
    return unit in _KIND_UNITS[kind]


def _value(state: str) -> float | int | str:
    """Numbers as numbers (at most 2 decimals), anything else as given."""
    try:
        number = round(float(state), 2)
    except ValueError:
        return state
    return int(number) if number.is_integer() else number


def _pick(readings: list[Reading], kind: str) -> tuple[Reading | None, str | None]:
    """The first usable reading of a kind, or why the first one is unusable."""
    candidates = [r for r in readings if r.kind == kind]
    for reading in candidates:
        if reading.problem is None and (
            reading.knots is not None or reading.degrees is not None
        ):
            return reading, None
    if not candidates:
        return None, None
    first = candidates[0]
    return None, f"{first.name} {first.problem or 'has no usable value'}"


def _pick_value(
    readings: list[Reading], kind: str
) -> tuple[Reading | None, str | None]:
    """The first usable numeric reading of a kind (waves, water, tide)."""
    candidates = [r for r in readings if r.kind == kind]
    for reading in candidates:
        if reading.problem is None and reading.value is not None:
            return reading, None
    if not candidates:
        return None, None
    return None, f"{candidates[0].name} {candidates[0].problem or 'has no value'}"


def _seconds(period: Reading | None) -> float | None:
    """A wave period in seconds, whatever its sensor's unit ("7000 ms")."""
    if period is None or period.value is None or period.unit not in _DURATION_UNITS:
        return None
    return DurationConverter.convert(period.value, period.unit, "s")


def _wind(readings: list[Reading]) -> Wind | None:
    """The wind sensors' reading, with gusts and direction, or None."""
    wind, _ = _pick(readings, KIND_WIND)
    if wind is None or wind.value is None:
        return None
    gust, _ = _pick(readings, KIND_GUST)
    direction, _ = _pick(readings, KIND_DIRECTION)
    return Wind(
        speed=wind.value,
        # As HA writes it: a sensor's "kts" is said "kn", once.
        unit=speed_unit(wind.unit) or wind.unit,
        knots=wind.knots,
        # A calm blows from nowhere: a vane at rest is no direction.
        degrees=direction.degrees if direction and wind.value else None,
        # Said in the wind's unit, whatever the gust sensor's is.
        gust=convert_speed(gust.value, gust.unit, wind.unit)
        if gust and gust.value is not None
        else None,
        gust_knots=gust.knots if gust else None,
    )


def _weather_wind(
    state: State | None, entity_id: str
) -> tuple[Reading | None, str | None, Reading | None, Reading | None]:
    """Wind, why it is missing, gusts and direction from a weather entity."""
    if state is None or state.state in (STATE_UNAVAILABLE, STATE_UNKNOWN):
        what = "does not exist" if state is None else f"is {state.state}"
        return None, f"the weather service {what}", None, None
    name = state_name(state)
    attrs = state.attributes
    unit = attrs.get(ATTR_WEATHER_WIND_SPEED_UNIT)
    speed = attrs.get(ATTR_WEATHER_WIND_SPEED)
    knots = to_knots(speed, unit) if isinstance(speed, int | float) else None
    if knots is None:
        return None, "the weather service gives no wind speed", None, None
    gust_speed = attrs.get(ATTR_WEATHER_WIND_GUST_SPEED)
    gust_knots = (
        to_knots(gust_speed, unit) if isinstance(gust_speed, int | float) else None
    )
    degrees = parse_direction(attrs.get(ATTR_WEATHER_WIND_BEARING)) if knots else None
    return (
        Reading(name, KIND_WIND, knots=knots),
        None,
        Reading(name, KIND_GUST, knots=gust_knots) if gust_knots is not None else None,
        Reading(name, KIND_DIRECTION, degrees=degrees) if degrees is not None else None,
    )
