"""The homes of benchmarks/sets/homes/*.yaml in a real HA, with the agent on the real model.

What `session_turns` and `live_set` share (the schema is benchmarks/sets/README.md):

* `real_home(base_url, home=...)`: HA in process, built from one home file: floors,
  areas (aliases, floors), template lights / switches / fans / covers / locks backed by
  input_boolean / input_number helpers (so they really change and can be set
  directly), template sensors and binary sensors whose values the runner sets, scripts
  whose actions produce their `effects`, entity aliases, exactly the home's entities
  exposed to Assist, HA's language and time zone; the `live` block as a template
  weather entity (current values and the daily forecast) and template sea sensors (not
  exposed), and the agent's live-data options. HA's clock runs from the home's
  `live.reference` date and local time (freezegun; it stands still and moves a fixed
  step at each turn, asyncio on real monotonic time), so forecast day 0 is today, the
  weekday names match and the same code, run on the same selection of turns (each
  turn's time depends on the turns before it in its home), gives the same prompts in
  every run.
* `apply_specs`, `snapshot`, `check_spec`, `check_turn_states`: the `before` /
  `after` / `after_any` / `may_change` rules of the README.
* `BenchHome.converse`: one turn through HA's conversation API (`RealHome.converse`)
  with a chat log delta listener, so the time to the first streamed text is known.
* `run_cli`: the command line the two benchmarks share (server, `--swama`,
  `--baseline`, `--json`).
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator, Callable, Iterator
import contextlib
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time as dt_time, timedelta
import functools
import json
from pathlib import Path
import sys
import tempfile
from typing import Any
import uuid
from zoneinfo import ZoneInfo

import yaml

from benchmarks._real_home import (
    AGENT_ID,
    MODEL_ALIAS,
    NEVER_ACTS,
    REPO,
    RealHome,
    Turn,
    model_server,
    run_baseline,
)

SETS = REPO / "benchmarks" / "sets"
HOMES = SETS / "homes"
RESULTS = Path.home() / ".cache" / "local_assistant" / "results"
LANGUAGE_HOME = {
    "en": "bristol_house",
    "de": "leipzig_altbau",
    "fr": "maison_pornic",
    "nl": "huis_scheveningen",
    "es": "casa_tarifa",
}
LANGUAGES = tuple(LANGUAGE_HOME)
BRIGHTNESS_TOLERANCE = 3
SETTLE_SECONDS = 15.0
# How far HA's clock moves at each turn (a person's pause between sentences).
TURN_STEP = timedelta(seconds=20)
UNITS = {"m": "distance", "s": "duration", "°C": "temperature"}

Spec = Any  # a state spec of the README: str, number or mapping
Snapshot = dict[str, dict[str, Any]]


# ---------------------------------------------------------------------------
# Loading


def load_yaml(path: Path) -> Any:
    """A YAML file of the sets (PyYAML safe_load, as the README says)."""
    with path.open(encoding="utf-8") as file:
        return yaml.safe_load(file)


@functools.cache
def load_home(home_id: str) -> dict[str, Any]:
    """One home file by its id."""
    home: dict[str, Any] = load_yaml(HOMES / f"{home_id}.yaml")
    assert home["home"]["id"] == home_id, home_id
    return home


def entities_of(home: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The home's entities by entity id."""
    return {entity["entity_id"]: entity for entity in home["entities"]}


def domain_of(entity_id: str) -> str:
    return entity_id.partition(".")[0]


def object_of(entity_id: str) -> str:
    return entity_id.partition(".")[2]


# ---------------------------------------------------------------------------
# Helpers behind the devices


def power_helper(entity_id: str) -> str:
    """The input_boolean that holds on / open / locked."""
    return f"input_boolean.bench_{domain_of(entity_id)}_{object_of(entity_id)}"


def number_helper(entity_id: str) -> str:
    """The input_number that holds brightness / position / a sensor value."""
    return f"input_number.bench_{domain_of(entity_id)}_{object_of(entity_id)}"


def _helper_key(helper: str) -> str:
    return object_of(helper)


def _template(value: Any) -> str:
    return "{{ " + json.dumps(value, ensure_ascii=False) + " }}"


def _is_on(helper: str) -> str:
    return f"is_state('{helper}', 'on')"


def _action(service: str, entity_id: str, **data: Any) -> dict[str, Any]:
    action: dict[str, Any] = {"action": service, "target": {"entity_id": entity_id}}
    if data:
        action["data"] = data
    return action


def dimmable(entity: dict[str, Any]) -> bool:
    return domain_of(entity["entity_id"]) == "light" and bool(
        entity.get("supports_brightness")
    )


def positional(entity: dict[str, Any]) -> bool:
    return domain_of(entity["entity_id"]) == "cover" and bool(
        entity.get("supports_position")
    )


def _helpers(entity: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(input_boolean, input_number) configuration for one entity."""
    entity_id = entity["entity_id"]
    domain = domain_of(entity_id)
    booleans: dict[str, Any] = {}
    numbers: dict[str, Any] = {}
    name = f"bench {entity_id}"
    if domain in ("light", "switch", "fan", "lock", "binary_sensor") or (
        domain == "cover" and not positional(entity)
    ):
        booleans[_helper_key(power_helper(entity_id))] = {"name": name}
    if dimmable(entity):
        numbers[_helper_key(number_helper(entity_id))] = {
            "name": name,
            "min": 1,
            "max": 255,
            "step": 1,
            "initial": int(entity.get("brightness") or 255),
            "mode": "box",
        }
    if positional(entity):
        numbers[_helper_key(number_helper(entity_id))] = {
            "name": name,
            "min": 0,
            "max": 100,
            "step": 1,
            "initial": int(entity.get("position") or 0),
            "mode": "box",
        }
    if domain == "sensor":
        numbers[_helper_key(number_helper(entity_id))] = {
            "name": name,
            "min": -100,
            "max": 1000,
            "step": 0.1,
            "initial": float(entity["state"]),
            "mode": "box",
        }
    return booleans, numbers


def _common(entity: dict[str, Any]) -> dict[str, Any]:
    entity_id = entity["entity_id"]
    return {
        "name": entity["name"],
        "unique_id": f"bench_{domain_of(entity_id)}_{object_of(entity_id)}",
        "default_entity_id": entity_id,
    }


def _template_entity(entity: dict[str, Any]) -> dict[str, Any] | None:
    """The template entity config of one home entity (None for scripts)."""
    entity_id = entity["entity_id"]
    domain = domain_of(entity_id)
    power = power_helper(entity_id)
    number = number_helper(entity_id)
    config = _common(entity)
    if domain in ("light", "switch", "fan"):
        config["state"] = "{{ " + _is_on(power) + " }}"
        config["turn_on"] = [_action("input_boolean.turn_on", power)]
        config["turn_off"] = [_action("input_boolean.turn_off", power)]
        if dimmable(entity):
            config["level"] = "{{ states('" + number + "') | int(0) }}"
            # With a brightness HA runs set_level instead of turn_on.
            config["set_level"] = [
                _action("input_boolean.turn_on", power),
                _action("input_number.set_value", number, value="{{ brightness }}"),
            ]
        return config
    if domain == "cover":
        config["device_class"] = entity["device_class"]
        if positional(entity):
            config["position"] = "{{ states('" + number + "') | int(0) }}"
            config["open_cover"] = [
                _action("input_number.set_value", number, value=100)
            ]
            config["close_cover"] = [_action("input_number.set_value", number, value=0)]
            config["set_cover_position"] = [
                _action("input_number.set_value", number, value="{{ position }}")
            ]
        else:
            config["state"] = "{{ 'open' if " + _is_on(power) + " else 'closed' }}"
            config["open_cover"] = [_action("input_boolean.turn_on", power)]
            config["close_cover"] = [_action("input_boolean.turn_off", power)]
        return config
    if domain == "lock":
        config["state"] = "{{ 'locked' if " + _is_on(power) + " else 'unlocked' }}"
        config["lock"] = [_action("input_boolean.turn_on", power)]
        config["unlock"] = [_action("input_boolean.turn_off", power)]
        return config
    if domain == "sensor":
        config["device_class"] = entity["device_class"]
        config["unit_of_measurement"] = entity["unit"]
        config["state_class"] = "measurement"
        config["state"] = (
            "{% set v = states('" + number + "') | float(0) | round(1) %}"
            "{{ v | int if v == v | int else v }}"
        )
        return config
    if domain == "binary_sensor":
        config["device_class"] = entity["device_class"]
        config["state"] = "{{ " + _is_on(power) + " }}"
        return config
    if domain == "script":
        return None
    raise ValueError(f"no template for {entity_id}")


def _effect_actions(
    entities: dict[str, dict[str, Any]], effects: dict[str, Spec]
) -> list[dict[str, Any]]:
    """Service calls on the devices that leave them as `effects` says."""
    actions = []
    for entity_id, spec in effects.items():
        target = normalized(spec)
        state = target.get("state")
        domain = domain_of(entity_id)
        if domain in ("light", "switch", "fan"):
            if state == "off":
                actions.append(_action(f"{domain}.turn_off", entity_id))
            elif "brightness" in target:
                actions.append(
                    _action("light.turn_on", entity_id, brightness=target["brightness"])
                )
            else:
                actions.append(_action(f"{domain}.turn_on", entity_id))
        elif domain == "cover":
            if "position" in target and positional(entities[entity_id]):
                actions.append(
                    _action(
                        "cover.set_cover_position",
                        entity_id,
                        position=target["position"],
                    )
                )
            else:
                service = "open_cover" if state == "open" else "close_cover"
                actions.append(_action(f"cover.{service}", entity_id))
        elif domain == "lock":
            service = "lock" if state == "locked" else "unlock"
            actions.append(_action(f"lock.{service}", entity_id))
        else:
            raise ValueError(f"no script effect for {entity_id}")
    return actions


def _weather_config(home: dict[str, Any], today: date) -> dict[str, Any]:
    """The template weather entity of the `live` block; day 0 is `today`."""
    weather = home["live"]["weather"]
    zone = ZoneInfo(home["home"]["time_zone"])
    forecast = []
    for day in weather["forecast_daily"]:
        midnight = datetime.combine(
            today + timedelta(days=day["day"]), dt_time(0), tzinfo=zone
        )
        item = {"datetime": midnight.isoformat()}
        for key in (
            "condition",
            "temperature",
            "templow",
            "precipitation",
            "precipitation_probability",
            "wind_speed",
            "wind_bearing",
        ):
            if key in day:
                item[key] = day[key]
        forecast.append(item)
    return {
        "name": weather["name"],
        "unique_id": "bench_weather",
        "default_entity_id": weather["entity_id"],
        "condition": _template(weather["condition"]),
        "temperature": _template(weather["temperature"]),
        "temperature_unit": weather["temperature_unit"],
        "humidity": _template(weather["humidity"]),
        "wind_speed": _template(weather["wind_speed"]),
        "wind_speed_unit": weather["wind_speed_unit"],
        "wind_bearing": _template(weather["wind_bearing"]),
        "wind_gust_speed": _template(weather["wind_gust_speed"]),
        "precipitation_unit": weather["precipitation_unit"],
        "forecast_daily": _template(forecast),
    }


def sea_sensors(home: dict[str, Any]) -> list[dict[str, Any]]:
    """The `live.sea` values in file order (empty for an inland home)."""
    sea = home["live"].get("sea") or {}
    return [value for key, value in sea.items() if key != "location"]


def _sea_config(sensor: dict[str, Any]) -> dict[str, Any]:
    config = {
        "name": sensor["name"],
        "unique_id": f"bench_{object_of(sensor['entity_id'])}",
        "default_entity_id": sensor["entity_id"],
        "state": _template(sensor["value"]),
    }
    if unit := sensor.get("unit"):
        config["unit_of_measurement"] = unit
        config["device_class"] = UNITS[unit]
        config["state_class"] = "measurement"
    return config


def home_configuration(home: dict[str, Any], today: date) -> dict[str, Any]:
    """input_boolean, input_number, script and template configuration of a home."""
    entities = entities_of(home)
    booleans: dict[str, Any] = {}
    numbers: dict[str, Any] = {}
    templates: dict[str, list[dict[str, Any]]] = {}
    scripts: dict[str, Any] = {}
    for entity_id, entity in entities.items():
        more_booleans, more_numbers = _helpers(entity)
        booleans.update(more_booleans)
        numbers.update(more_numbers)
        if (config := _template_entity(entity)) is not None:
            templates.setdefault(domain_of(entity_id), []).append(config)
        else:
            scripts[object_of(entity_id)] = {
                "alias": entity["name"],
                "description": entity.get("description", ""),
                "sequence": _effect_actions(entities, entity["effects"]),
            }
    templates["weather"] = [_weather_config(home, today)]
    templates.setdefault("sensor", []).extend(
        _sea_config(sensor) for sensor in sea_sensors(home)
    )
    return {
        "input_boolean": booleans,
        "input_number": numbers,
        "script": scripts,
        "template": [templates],
    }


# A home file's sea keys and the agent's sea option of each kind.
SEA_OPTIONS = {
    "wind_speed": "sea_wind",
    "wind_gust": "sea_gusts",
    "wind_direction": "sea_wind_direction",
    "wave_height": "sea_wave_height",
    "wave_period": "sea_wave_period",
    "water_temperature": "sea_water_temperature",
    "tide_height": "sea_tide",
}


def live_options(home: dict[str, Any]) -> dict[str, Any]:
    """The agent's live-data options for the home (see const.py)."""
    live = home["live"]
    options: dict[str, Any] = {"weather_entity": live["weather"]["entity_id"]}
    # Each sensor in the option of its kind, as the home's file names it (the
    # user picks the field); a tide's trend and the like: said by name.
    sea = home["live"].get("sea") or {}
    for key, sensor in sea.items():
        if key != "location":
            option = SEA_OPTIONS.get(key, "sea_other")
            options.setdefault(option, []).append(sensor["entity_id"])
    # Code before the per-kind options (an A/B against an older ref) reads
    # one list; today's code reads it only when no option by kind is set.
    if sensors := sea_sensors(home):
        options["sea_entities"] = [sensor["entity_id"] for sensor in sensors]
    if spot := live.get("kite_spot"):
        options["kite_min_wind_kn"] = spot["min_wind_kn"]
        options["kite_max_wind_kn"] = spot["max_wind_kn"]
        options["kite_directions"] = list(spot["good_directions"])
    return options


# ---------------------------------------------------------------------------
# Time


def reference_time(home: dict[str, Any]) -> datetime:
    """`live.reference` date and local time, in UTC."""
    reference = home["live"]["reference"]
    local = datetime.combine(
        date.fromisoformat(reference["date"]),
        dt_time.fromisoformat(reference["local_time"]),
        tzinfo=ZoneInfo(home["home"]["time_zone"]),
    )
    return local.astimezone(UTC)


def _utcnow() -> datetime:
    """`dt_util.utcnow` that freezegun can move (HA's own is a partial)."""
    return datetime.now(UTC)


@functools.cache
def _make_utcnow_patchable() -> None:
    """Replace HA's `utcnow` partial, wherever it was imported, by `_utcnow`.

    As pytest-homeassistant-custom-component's patch_time does for tests.
    """
    from homeassistant.util import dt as dt_util

    original = dt_util.utcnow
    for module in list(sys.modules.values()):
        try:
            names = [n for n, v in vars(module).items() if v is original]
        except TypeError:
            continue
        for name in names:
            setattr(module, name, _utcnow)
    dt_util.utcnow = _utcnow


@contextlib.contextmanager
def home_clock(
    home: dict[str, Any], real_clock: bool
) -> Iterator[tuple[datetime | None, Callable[[], None]]]:
    """HA's clock at the home's reference time (None: the real clock), and a step.

    The clock stands still and moves TURN_STEP at each step (a turn): HA's
    prompt says the time to the second, so a clock ticking in real time
    made each prompt depend on how long the turns before it took, and the
    same code at temperature 0 gave different sessions on a loaded machine.
    Timers run on the event loop's real monotonic time (``real_asyncio``);
    the runner times turns with the loop's clock, not ``time``'s. Frozen
    too: ``time.monotonic``, so the agent's own timing figures (diagnostics)
    read 0 here, and the prompt cache keeper's ages (HA's clock) grow by
    TURN_STEP a turn, not by the real time a turn took.
    """
    if real_clock:
        yield None, lambda: None
        return
    import freezegun

    _make_utcnow_patchable()
    start = reference_time(home)
    with freezegun.freeze_time(start, tick=False, real_asyncio=True) as frozen:
        yield start, lambda: frozen.tick(TURN_STEP)


# ---------------------------------------------------------------------------
# State specs


def normalized(spec: Spec) -> dict[str, Any]:
    """A spec as a mapping: {"state": ..., "brightness": ..., "position": ...}."""
    if isinstance(spec, dict):
        return dict(spec)
    if isinstance(spec, bool):
        raise TypeError(f"unquoted on/off in a spec: {spec!r}")
    if isinstance(spec, int | float):
        return {"value": float(spec)}
    return {"state": str(spec)}


def entity_snapshot(hass: Any, entity_id: str) -> dict[str, Any]:
    """State, brightness (lights that are on) and position (covers) of one entity."""
    state = hass.states.get(entity_id)
    if state is None:
        return {"state": "missing"}
    snap: dict[str, Any] = {"state": state.state}
    domain = domain_of(entity_id)
    if domain == "light" and state.attributes.get("brightness") is not None:
        snap["brightness"] = int(state.attributes["brightness"])
    if domain == "cover" and state.attributes.get("current_position") is not None:
        snap["position"] = int(state.attributes["current_position"])
    return snap


def snapshot(hass: Any, home: dict[str, Any]) -> Snapshot:
    """Every exposed entity of the home (scripts included)."""
    return {
        entity_id: entity_snapshot(hass, entity_id) for entity_id in entities_of(home)
    }


def _number_ok(actual: Any, want: Any, tolerance: float) -> bool:
    if actual is None:
        return False
    if isinstance(want, dict):
        if "min" in want or "max" in want:
            return bool(want.get("min", -1e9) <= actual <= want.get("max", 1e9))
        return bool(abs(actual - want["value"]) <= want.get("tolerance", 0))
    return bool(abs(actual - want) <= tolerance)


def check_spec(entity: dict[str, Any], actual: dict[str, Any], spec: Spec) -> bool:
    """Does one entity's snapshot satisfy a state spec (README: "State spec")?"""
    want = normalized(spec)
    if "value" in want:
        try:
            return abs(float(actual["state"]) - want["value"]) <= 0.05
        except ValueError:
            return False
    if "state" in want and actual["state"] != want["state"]:
        return False
    if "brightness" in want and not _number_ok(
        actual.get("brightness"), want["brightness"], BRIGHTNESS_TOLERANCE
    ):
        return False
    return not (
        "position" in want
        and positional(entity)
        and not _number_ok(actual.get("position"), want["position"], 0)
    )


@dataclass
class StateVerdict:
    """What a turn did to the home, judged against its `after`."""

    expected_met: bool | None  # None: the turn asks for no state (`after: none`)
    unexpected: dict[str, tuple[dict[str, Any], dict[str, Any]]] = field(
        default_factory=dict
    )
    missed: list[str] = field(default_factory=list)


def check_turn_states(
    home: dict[str, Any], turn: dict[str, Any], before: Snapshot, after: Snapshot
) -> StateVerdict:
    """`after` / `after_any` / `after: none` / `may_change` and the unchanged rule."""
    entities = entities_of(home)
    alternatives: list[dict[str, Spec]] = []
    if isinstance(turn.get("after"), dict):
        alternatives = [turn["after"]]
    elif turn.get("after_any"):
        alternatives = list(turn["after_any"])
    allowed = set(turn.get("may_change") or ())
    for alternative in alternatives:
        allowed.update(alternative)
    verdict = StateVerdict(expected_met=None)
    if alternatives:
        misses = [
            [
                entity_id
                for entity_id, spec in alternative.items()
                if not check_spec(entities[entity_id], after[entity_id], spec)
            ]
            for alternative in alternatives
        ]
        verdict.expected_met = any(not miss for miss in misses)
        if not verdict.expected_met:
            verdict.missed = min(misses, key=len)
    for entity_id, now in after.items():
        if entity_id in allowed or domain_of(entity_id) == "script":
            continue
        if now != before[entity_id]:
            verdict.unexpected[entity_id] = (before[entity_id], now)
    return verdict


# ---------------------------------------------------------------------------
# Setting states through the helpers


async def _set_boolean(hass: Any, helper: str, on: bool) -> None:
    await hass.services.async_call(
        "input_boolean",
        "turn_on" if on else "turn_off",
        {"entity_id": helper},
        blocking=True,
    )


async def _set_number(hass: Any, helper: str, value: float) -> None:
    await hass.services.async_call(
        "input_number",
        "set_value",
        {"entity_id": helper, "value": value},
        blocking=True,
    )


async def apply_spec(hass: Any, entity: dict[str, Any], spec: Spec) -> None:
    """Set one entity to a spec through its helpers (not through the entity)."""
    entity_id = entity["entity_id"]
    domain = domain_of(entity_id)
    want = normalized(spec)
    state = want.get("state")
    if domain == "script":
        return
    if domain == "sensor":
        await _set_number(hass, number_helper(entity_id), want["value"])
        return
    if positional(entity):
        position = want.get("position")
        if not isinstance(position, int):
            current = entity_snapshot(hass, entity_id).get("position") or 0
            position = 0 if state == "closed" else current or 100
        await _set_number(hass, number_helper(entity_id), position)
        return
    if isinstance(want.get("brightness"), int):
        await _set_number(hass, number_helper(entity_id), want["brightness"])
    on_states = {"on", "open", "locked"}
    await _set_boolean(hass, power_helper(entity_id), state in on_states)


async def apply_specs(
    hass: Any, home: dict[str, Any], specs: dict[str, Spec] | None
) -> list[str]:
    """Apply a turn's `before`; the entities that did not end as asked."""
    if not specs:
        return []
    entities = entities_of(home)
    for entity_id, spec in specs.items():
        await apply_spec(hass, entities[entity_id], spec)
    await hass.async_block_till_done()
    return [
        entity_id
        for entity_id, spec in specs.items()
        if domain_of(entity_id) != "script"
        and not check_spec(entities[entity_id], entity_snapshot(hass, entity_id), spec)
    ]


def initial_specs(home: dict[str, Any]) -> dict[str, Spec]:
    """The home file's initial states as specs."""
    specs: dict[str, Spec] = {}
    for entity_id, entity in entities_of(home).items():
        spec: dict[str, Any] = {"state": entity["state"]}
        if domain_of(entity_id) == "sensor":
            specs[entity_id] = float(entity["state"])
            continue
        if entity.get("brightness") is not None:
            spec["brightness"] = int(entity["brightness"])
        if entity.get("position") is not None:
            spec["position"] = int(entity["position"])
        specs[entity_id] = spec
    return specs


# ---------------------------------------------------------------------------
# Building the home in HA


async def async_setup_home(hass: Any, home: dict[str, Any], today: date) -> None:
    """The home's registries, devices, live entities and exposure in `hass`."""
    from homeassistant.components.homeassistant.exposed_entities import (
        async_expose_entity,
    )
    from homeassistant.helpers import (
        area_registry as ar,
        entity_registry as er,
        floor_registry as fr,
    )
    from homeassistant.setup import async_setup_component

    about = home["home"]
    await hass.config.async_update(
        time_zone=about["time_zone"], language=about["language"]
    )
    floors = fr.async_get(hass)
    floor_ids = {
        floor["id"]: floors.async_create(
            floor["name"],
            aliases=set(floor.get("aliases") or ()),
            level=floor.get("level"),
        ).floor_id
        for floor in home.get("floors") or ()
    }
    areas = ar.async_get(hass)
    area_ids = {
        area["id"]: areas.async_create(
            area["name"],
            aliases=set(area.get("aliases") or ()),
            floor_id=floor_ids.get(area.get("floor", "")),
        ).id
        for area in home["areas"]
    }
    config = home_configuration(home, today)
    for domain in ("input_boolean", "input_number", "script", "template"):
        assert await async_setup_component(hass, domain, {domain: config[domain]})
    assert await async_setup_component(hass, "conversation", {})
    assert await async_setup_component(hass, "intent", {})
    await hass.async_block_till_done()

    registry = er.async_get(hass)
    exposed = set(entities_of(home))
    for entity_id, entity in entities_of(home).items():
        assert hass.states.get(entity_id) is not None, f"{entity_id} was not created"
        registry.async_update_entity(
            entity_id,
            area_id=area_ids.get(entity.get("area", "")),
            aliases=set(entity.get("aliases") or ()),
        )
    live_ids = [home["live"]["weather"]["entity_id"]] + [
        sensor["entity_id"] for sensor in sea_sensors(home)
    ]
    for entity_id in live_ids:
        assert hass.states.get(entity_id) is not None, f"{entity_id} was not created"
    for state in hass.states.async_all():
        async_expose_entity(
            hass, "conversation", state.entity_id, state.entity_id in exposed
        )
    missed = await apply_specs(hass, home, initial_specs(home))
    assert not missed, f"initial states not reached: {missed}"


# ---------------------------------------------------------------------------
# One turn


@dataclass
class BenchTurn:
    """One turn: `Turn` of _real_home plus what the home did and the timing."""

    turn: Turn
    conversation_id: str
    first_text_seconds: float | None  # None: nothing was streamed
    streamed_text: str
    before: Snapshot
    after: Snapshot
    scripts_run: list[str]

    @property
    def reply(self) -> str:
        return self.turn.speech

    @property
    def changed(self) -> dict[str, list[dict[str, Any]]]:
        """Entities whose state / brightness / position changed (scripts aside)."""
        return {
            entity_id: [self.before[entity_id], now]
            for entity_id, now in self.after.items()
            if now != self.before[entity_id] and domain_of(entity_id) != "script"
        }


class BenchHome:
    """A running HA with one home of the sets and the agent (a `RealHome` inside)."""

    def __init__(
        self,
        real: RealHome,
        home: dict[str, Any],
        clock: datetime | None,
        step_clock: Callable[[], None] = lambda: None,
    ):
        self.real = real
        self.hass = real.hass
        self.home = home
        self.clock = clock
        # Moves HA's clock by one turn (home_clock).
        self.step_clock = step_clock
        self.language = home["home"]["language"]

    def snapshot(self) -> Snapshot:
        return snapshot(self.hass, self.home)

    async def reset(self) -> list[str]:
        """Every device back to the home file's initial state."""
        return await apply_specs(self.hass, self.home, initial_specs(self.home))

    async def apply(self, specs: dict[str, Spec] | None) -> list[str]:
        return await apply_specs(self.hass, self.home, specs)

    async def forget_session(self) -> None:
        await self.real.forget_session()

    async def settle(self) -> None:
        """Wait until no script runs and every state change is done."""
        await self.hass.async_block_till_done()
        deadline = self.hass.loop.time() + SETTLE_SECONDS
        scripts = [e for e in entities_of(self.home) if domain_of(e) == "script"]
        while self.hass.loop.time() < deadline and any(
            self.hass.states.is_state(script, "on") for script in scripts
        ):
            await self.hass.async_block_till_done()
            import asyncio

            await asyncio.sleep(0.05)
        await self.hass.async_block_till_done()

    async def converse(
        self, text: str, *, language: str | None = None, conversation_id: str | None
    ) -> BenchTurn:
        """One turn through HA's conversation API, timed to the first streamed text."""
        from homeassistant.components import conversation
        from homeassistant.helpers import chat_session

        conversation_id = conversation_id or f"bench-{uuid.uuid4().hex}"
        deltas: list[tuple[float, str]] = []
        scripts_run: list[str] = []

        def listener(_chat_log: Any, delta: dict[str, Any]) -> None:
            if delta.get("role") in (None, "assistant") and delta.get("content"):
                deltas.append((self.hass.loop.time(), str(delta["content"])))

        def on_state(event: Any) -> None:
            entity_id = event.data["entity_id"]
            new = event.data.get("new_state")
            if (
                entity_id.startswith("script.")
                and new is not None
                and new.state == "on"
            ):
                scripts_run.append(entity_id)

        unsubscribe = self.hass.bus.async_listen("state_changed", on_state)
        self.step_clock()
        before = self.snapshot()
        start = self.hass.loop.time()
        try:
            with (
                chat_session.async_get_chat_session(
                    self.hass, conversation_id
                ) as session,
                conversation.async_get_chat_log(
                    self.hass, session, chat_log_delta_listener=listener
                ),
            ):
                turn = await self.real.converse(
                    text,
                    language=language or self.language,
                    conversation_id=conversation_id,
                )
            await self.settle()
        finally:
            unsubscribe()
        return BenchTurn(
            turn=turn,
            conversation_id=conversation_id,
            first_text_seconds=deltas[0][0] - start if deltas else None,
            streamed_text="".join(text for _, text in deltas),
            before=before,
            after=self.snapshot(),
            scripts_run=scripts_run,
        )


@contextlib.asynccontextmanager
async def real_home(
    base_url: str,
    *,
    home: dict[str, Any],
    agent: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    real_clock: bool = False,
) -> AsyncIterator[BenchHome]:
    """HA with `home` built in it; the agent on `base_url` as `_real_home` sets it."""
    from homeassistant import loader
    from homeassistant.const import CONF_LLM_HASS_API, CONF_MODEL, CONF_PROMPT
    from homeassistant.helpers import llm
    from homeassistant.setup import async_setup_component
    from homeassistant.util import dt as dt_util
    from pytest_homeassistant_custom_component.common import (
        MockConfigEntry,
        async_test_home_assistant,
    )

    from custom_components.local_assistant.const import DOMAIN

    with (
        home_clock(home, real_clock) as (clock, step_clock),
        tempfile.TemporaryDirectory(prefix="local-assistant-home-") as config_dir,
    ):
        async with async_test_home_assistant(config_dir=config_dir) as hass:
            hass.data.pop(loader.DATA_CUSTOM_COMPONENTS)  # allow custom_components
            assert await async_setup_component(hass, "homeassistant", {})
            await hass.config.async_set_time_zone(home["home"]["time_zone"])
            await async_setup_home(hass, home, dt_util.now().date())
            user = await hass.auth.async_create_user("Dev", group_ids=["system-admin"])
            data = {
                CONF_MODEL: MODEL_ALIAS,
                CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
                CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
                "tool_bias": True,
                "temperature": 0.6,
                "max_tokens": 512,
                **live_options(home),
                **(agent or {}),
            }
            entry = MockConfigEntry(
                domain=DOMAIN,
                title="Local Assistant",
                data={"base_url": base_url, "api_key": ""},
                options={"extraction": "off", "timeout": 600, **(options or {})},
                subentries_data=[
                    {
                        "subentry_type": "conversation",
                        "data": data,
                        "title": "Local Assistant",
                        "unique_id": None,
                    }
                ],
            )
            entry.add_to_hass(hass)
            assert await hass.config_entries.async_setup(entry.entry_id)
            await hass.async_block_till_done()
            assert hass.states.get(AGENT_ID) is not None
            try:
                yield BenchHome(RealHome(hass, entry, user.id), home, clock, step_clock)
            finally:
                await hass.config_entries.async_unload(entry.entry_id)
                await hass.async_block_till_done()


async def forecast_check(bench: BenchHome) -> dict[str, Any]:
    """What `weather.get_forecasts` returns now, and today's date in HA's clock."""
    from homeassistant.util import dt as dt_util

    weather = bench.home["live"]["weather"]["entity_id"]
    response = await bench.hass.services.async_call(
        "weather",
        "get_forecasts",
        {"entity_id": weather, "type": "daily"},
        blocking=True,
        return_response=True,
    )
    days = response[weather]["forecast"]
    first = dt_util.as_local(dt_util.parse_datetime(days[0]["datetime"])).date()
    return {
        "now": dt_util.now().isoformat(),
        "today": dt_util.now().date().isoformat(),
        "forecast_day0": first.isoformat(),
        "forecast": days,
    }


# ---------------------------------------------------------------------------
# Command line


def code_commit(code: Path) -> str:
    """The commit of the checkout being measured (with "+dirty" when it differs)."""
    import subprocess

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(code), *args],
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout.strip()

    commit = git("rev-parse", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--", "custom_components")
    return commit + ("+dirty" if dirty else "")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options both set runners take."""
    parser.add_argument(
        "--base-url",
        help="a running server (default: start one); never-acts: a fake server "
        "that answers OK and calls no tool (what HA's own reading carries out)",
    )
    parser.add_argument("--code", help="load custom_components from this checkout")
    parser.add_argument("--json", help="write every record here as JSON")
    parser.add_argument(
        "--baseline",
        help="also run a git ref of this repo (temporary worktree), same server",
    )
    parser.add_argument(
        "--languages",
        default=",".join(LANGUAGES),
        help=f"comma-separated, of {','.join(LANGUAGES)}",
    )
    parser.add_argument(
        "--swama",
        action="store_true",
        help="send the requests through benchmarks/_swama_filter (as Swama passes them)",
    )
    parser.add_argument(
        "--temperature",
        type=float,
        help="the agent's sampling temperature (default: its option, 0.6); 0 "
        "makes a run repeat, so two runs differ only by what they change",
    )
    parser.add_argument(
        "--real-clock",
        action="store_true",
        help="do not move HA's clock to the homes' reference time (weekday items skipped)",
    )
    parser.add_argument(
        "--rejudge",
        nargs="+",
        metavar="JSON",
        help="judge the replies of earlier --json outputs again (no model run)",
    )


def rejudge_files(
    args: argparse.Namespace,
    rejudge: Callable[[dict[str, Any], Path], dict[str, Any]],
    report: Callable[[str, dict[str, Any]], None],
) -> None:
    """`--rejudge`: each earlier JSON read again with the current readers."""
    for path in args.rejudge:
        results = json.loads(Path(path).read_text(encoding="utf-8"))
        results = rejudge(results, Path(results["code"]))
        if args.json:
            Path(args.json).write_text(
                json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8"
            )
        report(f"rejudged {path}", results)


def forwarded(args: argparse.Namespace, extra: list[str]) -> list[str]:
    """Options for the baseline's subprocess (server and output are set there)."""
    out = ["--languages", args.languages, *extra]
    if args.real_clock:
        out.append("--real-clock")
    if args.temperature is not None:
        out += ["--temperature", str(args.temperature)]
    return out


def agent_settings(args: argparse.Namespace) -> dict[str, Any] | None:
    """The agent's settings the command line overrides (for `real_home`)."""
    return None if args.temperature is None else {"temperature": args.temperature}


def run_cli(
    module: str,
    args: argparse.Namespace,
    extra: list[str],
    main: Callable[[str], Any],
    report: Callable[[str, dict[str, Any]], None],
    describe: str,
) -> None:
    """Server (or --base-url), optional Swama filter, baseline, this code, report.

    Unlike `_real_home.run_and_report`, `--json` writes the records *and* the
    report is printed.
    """
    from benchmarks._harness import machine, run
    from benchmarks._swama_filter import filter_stats, swama_filter

    with model_server(args.base_url) as server_url:
        with contextlib.ExitStack() as stack:
            base_url = server_url
            if args.swama:
                base_url = stack.enter_context(swama_filter(server_url))
            print(machine())
            print(
                f"server: {server_url} "
                + (
                    "(never acts: answers OK, calls no tool)"
                    if args.base_url == NEVER_ACTS
                    else "(bundled model)"
                )
                + (f", through the Swama filter {base_url}" if args.swama else "")
                + f", {describe}"
            )
            baseline = (
                run_baseline(module, args.baseline, base_url, extra)
                if args.baseline
                else None
            )
            results = run(lambda: main(base_url))
            if args.swama:
                results["swama_filter"] = filter_stats(base_url)
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(
                json.dumps(results, ensure_ascii=False, default=str, indent=1),
                encoding="utf-8",
            )
            print(f"records: {args.json}")
        if baseline is not None:
            report(f"baseline {args.baseline}", baseline)
        report("this code", results)


def jsonable(value: Any) -> Any:
    """Tool results and the like, as JSON can hold them."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))
