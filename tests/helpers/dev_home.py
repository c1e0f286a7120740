"""The home of `scripts/develop`, set up in a test or benchmark Home Assistant.

One source for the dev instance, the real-model tests (tests/e2e_model) and the
real-model benchmarks: `scripts/dev/configuration.yaml`'s lights, switches,
script, weather and sea sensors, exposed and in areas as the dev bootstrap does,
and the live-data settings that bootstrap gives its agent.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, entity_registry as er
from homeassistant.setup import async_setup_component
from homeassistant.util.yaml import load_yaml_dict

REPO = Path(__file__).resolve().parents[2]
DEV_CONFIG = REPO / "scripts" / "dev" / "configuration.yaml"
DEV_BOOTSTRAP = (
    REPO
    / "scripts"
    / "dev"
    / "custom_components"
    / "local_assistant_dev"
    / "__init__.py"
)
DOMAINS = ("input_boolean", "input_number", "template", "script")


def dev_config() -> dict[str, Any]:
    """scripts/dev/configuration.yaml (its !env_var tags get their defaults)."""
    os.environ.setdefault("LOCAL_ASSISTANT_BASE_URL", "http://127.0.0.1:28100/v1")
    return load_yaml_dict(str(DEV_CONFIG))


def live_data_options() -> dict[str, Any]:
    """The live-data settings `scripts/develop` gives its agent."""
    spec = importlib.util.spec_from_file_location("_dev_bootstrap", DEV_BOOTSTRAP)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.LIVE_DATA)


async def async_setup_dev_home(hass: HomeAssistant) -> dict[str, Any]:
    """The dev home's entities, exposure and areas; returns the configuration."""
    config = dev_config()
    await hass.config.async_update(
        time_zone=config["homeassistant"]["time_zone"],
        latitude=config["homeassistant"]["latitude"],
        longitude=config["homeassistant"]["longitude"],
    )
    for domain in DOMAINS:
        assert await async_setup_component(hass, domain, {domain: config[domain]})
    assert await async_setup_component(hass, "conversation", {})
    assert await async_setup_component(hass, "intent", {})
    await hass.async_block_till_done()
    dev = config["local_assistant_dev"]
    for state in hass.states.async_all():
        async_expose_entity(
            hass, "conversation", state.entity_id, state.entity_id in dev["expose"]
        )
    areas = ar.async_get(hass)
    entities = er.async_get(hass)
    for entity_id, area_name in dev["areas"].items():
        area = areas.async_get_area_by_name(area_name) or areas.async_create(area_name)
        entities.async_update_entity(entity_id, area_id=area.id)
    return config
