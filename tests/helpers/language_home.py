"""Homes named in one language: lights in areas, HA's language set."""

from __future__ import annotations

from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, entity_registry as er
from homeassistant.setup import async_setup_component

from tests.helpers.ha import async_setup_exposed_lights


async def async_home(
    hass: HomeAssistant, language: str, lights: dict[str, str]
) -> dict[str, str]:
    """Lights named in ``language`` (name -> area name); name -> entity id."""
    hass.config.language = language
    assert await async_setup_component(hass, "conversation", {})
    assert await async_setup_component(hass, "intent", {})
    ids = await async_setup_exposed_lights(hass, *lights)
    areas = ar.async_get(hass)
    entities = er.async_get(hass)
    for entity_id, area_name in zip(ids, lights.values(), strict=True):
        area = areas.async_get_area_by_name(area_name) or areas.async_create(area_name)
        entities.async_update_entity(entity_id, area_id=area.id)
    await hass.async_block_till_done()
    return dict(zip(lights, ids, strict=True))
