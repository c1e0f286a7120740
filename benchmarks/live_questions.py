"""Live questions on the bundled model: answered from live data, no device changed.

    .venv/bin/python -m benchmarks.live_questions [--baseline db9e897] [--keep-session]

The dev home (benchmarks/_real_home.py: five lights and switches, a script, the
Tarifa weather and sea sensors, a kitesurf spot of 15-30 kn from E or W), 44
questions in English and Spanish: kitesurf, wind, waves, water, tide, rain,
forecast, temperature, device state, and general knowledge. By default the
session is forgotten before each question (as a new voice request would be);
`--keep-session` asks them all in one session.

Per question: did it read a live tool (ours, HA's GetLiveContext, or the fast path,
which puts the tool it read in the chat log), does the answer agree with the data
(keywords checked against the sensors and the tools' own verdicts), and did any
exposed device change.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

from benchmarks._real_home import add_common_arguments, code_path

CODE = code_path(sys.argv)

from benchmarks._real_home import (  # noqa: E402
    RealHome,
    Turn,
    real_home,
    run_and_report,
)

# HassGetState is HA reading the live state of the home (its local intents).
LIVE_TOOLS = (
    "local_weather_forecast",
    "local_sea_conditions",
    "GetLiveContext",
    "HassGetState",
)
# (question, language, topic). Topics: kite, wind, waves, water, tide, rain_today,
# rain_tomorrow, forecast_tomorrow, temperature, state:<entity>, general.
QUESTIONS: tuple[tuple[str, str, str], ...] = (
    ("Can I go kitesurfing now?", "en", "kite"),
    ("Is it a good day for kitesurfing?", "en", "kite"),
    ("Should I go kiting this afternoon?", "en", "kite"),
    ("How are the kitesurf conditions?", "en", "kite"),
    ("¿Puedo ir a hacer kitesurf hoy?", "es", "kite"),
    ("¿Hay buen viento para kite ahora?", "es", "kite"),
    ("Is it windy at the beach?", "en", "wind"),
    ("How strong is the wind?", "en", "wind"),
    ("Where is the wind coming from?", "en", "wind"),
    ("¿Hace viento en la playa?", "es", "wind"),
    ("¿Cuánto viento hace?", "es", "wind"),
    ("How big are the waves?", "en", "waves"),
    ("What's the swell like?", "en", "waves"),
    ("Are there any waves today?", "en", "waves"),
    ("¿Cómo están las olas?", "es", "waves"),
    ("How warm is the water?", "en", "water"),
    ("What's the water temperature?", "en", "water"),
    ("¿A qué temperatura está el agua?", "es", "water"),
    ("What's the tide doing?", "en", "tide"),
    ("¿Cómo está la marea?", "es", "tide"),
    ("Will it rain tomorrow?", "en", "rain_tomorrow"),
    ("Is it going to rain today?", "en", "rain_today"),
    ("Do I need an umbrella tomorrow?", "en", "rain_tomorrow"),
    ("¿Va a llover mañana?", "es", "rain_tomorrow"),
    ("¿Lloverá hoy?", "es", "rain_today"),
    ("What's the weather like tomorrow?", "en", "forecast_tomorrow"),
    ("What's the forecast for tomorrow?", "en", "forecast_tomorrow"),
    ("¿Qué tiempo hará mañana?", "es", "forecast_tomorrow"),
    ("What's the temperature outside?", "en", "temperature"),
    ("How warm is it outside?", "en", "temperature"),
    ("¿Qué temperatura hace fuera?", "es", "temperature"),
    ("Is the porch light on?", "en", "state:light.porch_light"),
    ("Is the kitchen light on?", "en", "state:light.kitchen_light"),
    ("Is the fan running?", "en", "state:switch.fan"),
    ("Is the coffee machine on?", "en", "state:switch.coffee_machine"),
    ("¿Está encendida la Porch Light?", "es", "state:light.porch_light"),
    ("What is the capital of France?", "en", "general"),
    ("Tell me a joke", "en", "general"),
    ("How many legs does a spider have?", "en", "general"),
    ("Who wrote Don Quixote?", "en", "general"),
    ("What does a kitesurfer need to start?", "en", "general"),
    ("¿Cuál es la capital de Italia?", "es", "general"),
    ("Cuéntame un chiste", "es", "general"),
    ("¿Cuántos días tiene una semana?", "es", "general"),
)
YES = ("yes", "good", "sí", "buen", "perfect")
NO = ("no", "not", "too ", "demasiad", "wrong")


def _numbers(value: float) -> list[str]:
    """How a value may be written: 18.5, 18,5, 18 (rounded), 19."""
    text = f"{value:.1f}".rstrip("0").rstrip(".")
    return [text, text.replace(".", ","), str(round(value)), str(int(value))]


def _has_number(speech: str, value: float) -> bool:
    return any(form in speech for form in _numbers(value))


def _said(speech: str, words: tuple[str, ...]) -> bool:
    padded = f" {speech.casefold()} "
    return any(word in padded for word in words)


async def truth(home: RealHome) -> dict[str, Any]:
    """What the sensors and the tools say right now (read directly, not via the model)."""
    from homeassistant.core import Context
    from homeassistant.helpers import llm
    from homeassistant.util import dt as dt_util
    from homeassistant.util.unit_conversion import SpeedConverter

    from custom_components.local_assistant.const import DOMAIN
    from custom_components.local_assistant.tools.api import async_build_llm_api

    hass = home.hass
    api = async_build_llm_api(
        hass, home.entry.subentries[next(iter(home.entry.subentries))].data
    )
    instance = await api.async_get_api_instance(  # type: ignore[union-attr]
        llm.LLMContext(
            platform=DOMAIN,
            context=Context(),
            language="en",
            assistant="conversation",
            device_id=None,
        )
    )
    sea = await instance.async_call_tool(llm.ToolInput("local_sea_conditions", {}))
    sea = getattr(sea, "data", sea)
    response = await hass.services.async_call(
        "weather",
        "get_forecasts",
        {"entity_id": "weather.tarifa", "type": "daily"},
        blocking=True,
        return_response=True,
    )
    days = {
        dt_util.as_local(dt_util.parse_datetime(item["datetime"])).date(): item
        for item in response["weather.tarifa"]["forecast"]
    }
    today = dt_util.now().date()
    tomorrow = sorted(d for d in days if d > today)[0]
    state = hass.states.get
    return {
        "kite": sea["kitesurf"]["verdict"],
        "wind_kn": SpeedConverter.convert(
            float(state("sensor.wind_speed").state), "km/h", "kn"
        ),
        "wind_kmh": float(state("sensor.wind_speed").state),
        "waves": float(state("sensor.wave_height").state),
        "water": float(state("sensor.water_temperature").state),
        "tide": float(state("sensor.tide_height").state),
        "rain_today": days.get(today, {}).get("precipitation_probability"),
        "rain_tomorrow": days[tomorrow].get("precipitation_probability"),
        "tomorrow_high": days[tomorrow].get("temperature"),
        "temperature": float(state("weather.tarifa").attributes["temperature"]),
    }


def consistent(topic: str, turn: Turn, facts: dict[str, Any], home: RealHome) -> bool:
    """Does the spoken answer agree with the data?"""
    speech = turn.speech
    if topic == "kite":
        return _said(speech, YES if facts["kite"] == "good" else NO)
    if topic == "wind":
        return _has_number(speech, facts["wind_kn"]) or _has_number(
            speech, facts["wind_kmh"]
        )
    if topic in ("waves", "water", "tide", "temperature"):
        return _has_number(speech, facts[topic])
    if topic.startswith("rain_"):
        chance = facts[topic]
        return chance is not None and (
            _has_number(speech, chance) or _said(speech, YES if chance >= 50 else NO)
        )
    if topic == "forecast_tomorrow":
        return _has_number(speech, facts["tomorrow_high"])
    if topic.startswith("state:"):
        on = home.hass.states.get(topic.partition(":")[2]).state == "on"
        on_words = ("yes", " on", "sí", "encendid", "running")
        off_words = (" no", " off", "not", "apagad")
        return _said(speech, on_words if on else off_words) and not _said(
            speech, off_words if on else on_words
        )
    return True


async def ask_all(home: RealHome, keep_session: bool) -> dict[str, Any]:
    """Every question once; the per-question records and totals."""
    await home.set_state("light.porch_light", True)
    await home.set_state("light.kitchen_light", False)
    await home.set_state("switch.fan", False)
    await home.set_state("switch.coffee_machine", True)
    facts = await truth(home)
    records = []
    for text, language, topic in QUESTIONS:
        if not keep_session:
            await home.forget_session()
        turn = await home.converse(text, language=language)
        live = topic != "general"
        read = any(name.rpartition("__")[2] in LIVE_TOOLS for name in turn.tool_names)
        records.append(
            {
                "question": text,
                "topic": topic,
                "speech": turn.speech,
                "tools": turn.tool_names,
                "live": live,
                "read_live_tool": read,
                "consistent": consistent(topic, turn, facts, home) if live else None,
                "changed": turn.changed,
                "seconds": round(turn.seconds, 2),
            }
        )
    live_records = [r for r in records if r["live"]]
    return {
        "facts": facts,
        "records": records,
        "live": len(live_records),
        "from_tool": sum(r["read_live_tool"] for r in live_records),
        "from_tool_and_consistent": sum(
            r["read_live_tool"] and r["consistent"] for r in live_records
        ),
        "device_changes": sum(bool(r["changed"]) for r in records),
        "median_seconds": statistics.median(r["seconds"] for r in records),
    }


async def main(args: argparse.Namespace, base_url: str) -> dict[str, Any]:
    async with real_home(base_url) as home:
        results = await ask_all(home, args.keep_session)
    results["code"] = str(CODE)
    return results


def report(label: str, results: dict[str, Any]) -> None:
    live = results["live"]
    print(f"\n== {label} ({results['code']})")
    print(
        f"live questions answered from a live tool: {results['from_tool']}/{live}; "
        f"from a live tool and consistent with the data: "
        f"{results['from_tool_and_consistent']}/{live} "
        f"({100 * results['from_tool_and_consistent'] / live:.0f} %); "
        f"questions that changed a device: {results['device_changes']}/"
        f"{len(results['records'])}; median turn {results['median_seconds']} s"
    )
    for record in results["records"]:
        flag = "ok "
        if record["changed"]:
            flag = "CHG"
        elif record["live"] and not (record["read_live_tool"] and record["consistent"]):
            flag = "-- "
        print(
            f"  {flag} {record['question']!r} -> {record['speech']!r} "
            f"tools={record['tools']}"
            + (f" CHANGED {record['changed']}" if record["changed"] else "")
        )


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_arguments(parser)
    parser.add_argument("--keep-session", action="store_true")
    args = parser.parse_args()
    run_and_report(
        "benchmarks.live_questions",
        args,
        ["--keep-session"] if args.keep_session else [],
        lambda base_url: main(args, base_url),
        report,
        f"{len(QUESTIONS)} questions",
    )


if __name__ == "__main__":
    cli()
