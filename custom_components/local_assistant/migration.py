"""Config entry migrations: older entries' data in today's shape."""

from __future__ import annotations

from homeassistant.components.sensor import SensorDeviceClass
from homeassistant.config_entries import ConfigEntry, ConfigSubentry
from homeassistant.const import ATTR_DEVICE_CLASS, ATTR_UNIT_OF_MEASUREMENT, DEGREE
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er, issue_registry as ir
from homeassistant.util.unit_conversion import (
    DistanceConverter,
    DurationConverter,
    TemperatureConverter,
)

from .const import (
    CONF_SEA_ENTITIES,
    CONF_SEA_OTHER,
    CONF_SEA_WATER_TEMPERATURE,
    CONF_SEA_WAVE_HEIGHT,
    CONF_SEA_WAVE_PERIOD,
    CONF_SEA_WIND,
    CONF_SEA_WIND_DIRECTION,
    DOMAIN,
    ISSUE_SEA_SENSORS,
    LOGGER,
)
from .flows.agent import sea_issue_id
from .tools.base import to_knots


async def async_migrate_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
    """Bring an entry of an older version up to date; refuse a newer one."""
    if entry.version > 1:
        return False
    if entry.minor_version < 2:
        # 1.2: one sea option per kind, in place of one list of every sensor.
        for subentry in list(entry.subentries.values()):
            if CONF_SEA_ENTITIES in subentry.data:
                _split_sea_entities(hass, entry, subentry)
        hass.config_entries.async_update_entry(entry, minor_version=2)
        LOGGER.debug("Migrated %s to version 1.2", entry.title)
    return True


def _split_sea_entities(
    hass: HomeAssistant, entry: ConfigEntry, subentry: ConfigSubentry
) -> None:
    """Give each of an agent's sea sensors the option of its kind, as far
    as its device class and unit tell; ask the user to check the guesses."""
    data = dict(subentry.data)
    guessed: list[str] = []
    for entity_id in data.pop(CONF_SEA_ENTITIES) or ():
        option, sure = _sea_option(hass, entity_id)
        data.setdefault(option, []).append(entity_id)
        if not sure:
            guessed.append(entity_id)
    if len(winds := data.get(CONF_SEA_WIND, [])) > 1:
        guessed.extend(winds)  # one may be the gusts, or another station's wind
    hass.config_entries.async_update_subentry(entry, subentry, data=data)
    if guessed:
        ir.async_create_issue(
            hass,
            DOMAIN,
            sea_issue_id(subentry.subentry_id),
            is_fixable=False,
            # Raised once, by the migration: kept until the user saves.
            is_persistent=True,
            severity=ir.IssueSeverity.WARNING,
            translation_key=ISSUE_SEA_SENSORS,
            translation_placeholders={
                "agent": subentry.title,
                "sensors": ", ".join(guessed),
            },
        )


def _sea_option(hass: HomeAssistant, entity_id: str) -> tuple[str, bool]:
    """The sea option a sensor belongs in, and whether that is sure: a
    length may be a tide, a temperature the air's, degrees a swell's."""
    state = hass.states.get(entity_id)
    registered = er.async_get(hass).async_get(entity_id)
    if state is not None:
        device_class = state.attributes.get(ATTR_DEVICE_CLASS)
        unit = state.attributes.get(ATTR_UNIT_OF_MEASUREMENT)
    elif registered is not None:
        device_class = registered.device_class or registered.original_device_class
        unit = registered.unit_of_measurement
    else:
        return CONF_SEA_OTHER, False  # nothing tells what it is
    if device_class == SensorDeviceClass.WIND_SPEED or to_knots(1.0, unit) is not None:
        return CONF_SEA_WIND, True
    if device_class == SensorDeviceClass.WIND_DIRECTION:
        return CONF_SEA_WIND_DIRECTION, True
    if unit == DEGREE:
        return CONF_SEA_WIND_DIRECTION, False
    if (
        device_class == SensorDeviceClass.DURATION
        or unit in DurationConverter.VALID_UNITS
    ):
        return CONF_SEA_WAVE_PERIOD, True
    if (
        device_class == SensorDeviceClass.DISTANCE
        or unit in DistanceConverter.VALID_UNITS
    ):
        return CONF_SEA_WAVE_HEIGHT, False
    if (
        device_class == SensorDeviceClass.TEMPERATURE
        or unit in TemperatureConverter.VALID_UNITS
    ):
        return CONF_SEA_WATER_TEMPERATURE, False
    return CONF_SEA_OTHER, True
