"""The entities exposed to Assist, each with the area it is in."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import (
    async_should_expose,
)
from homeassistant.core import HomeAssistant, State, callback
from homeassistant.helpers import device_registry as dr, entity_registry as er


@dataclass(frozen=True, slots=True)
class ExposedEntity:
    """An entity Assist may act on: its state, registry entry and area."""

    state: State
    entry: er.RegistryEntry | None
    # The entity's own area, else its device's (as HA's intents match it).
    area_id: str | None

    @property
    def aliases(self) -> tuple[str, ...]:
        """The names the household gave it besides its own."""
        return tuple(self.entry.aliases) if self.entry else ()


@callback
def async_exposed_entities(hass: HomeAssistant) -> Iterator[ExposedEntity]:
    """Every entity exposed to Assist, with its area."""
    entities = er.async_get(hass)
    devices = dr.async_get(hass)
    for state in hass.states.async_all():
        if not async_should_expose(hass, conversation.DOMAIN, state.entity_id):
            continue
        entry = entities.async_get(state.entity_id)
        area_id = entry.area_id if entry else None
        if entry and not area_id and entry.device_id:
            device = devices.async_get(entry.device_id)
            area_id = device.area_id if device else None
        yield ExposedEntity(state, entry, area_id)
