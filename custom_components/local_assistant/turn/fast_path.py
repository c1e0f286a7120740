"""The live questions the product exists for, answered with no model call.

"Can I go kitesurfing?", "how big are the waves?", "will it rain tomorrow?":
matched with HA's sentence templates (hassil, the engine of HA's own
intents) from ``sentences/<language>.yaml``, and answered from the agent's
live-data tools in the conversation's language. A small model asked the
same questions picks the wrong tool or none; this answer agrees with the
sensors every time, in a few milliseconds. Anything the templates do not
match goes to the model as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
import re
from typing import Any, Final

from hassil import Intents, recognize
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
from homeassistant.util import dt as dt_util
from homeassistant.util.hass_dict import HassKey
from homeassistant.util.yaml import load_yaml_dict

from ..const import DOMAIN, LOGGER
from ..tools.phrases import language_of
from ..tools.sea import (
    TOPIC_KITE,
    TOPIC_TIDE,
    TOPIC_WATER,
    TOPIC_WAVES,
    TOPIC_WIND,
    SeaConditionsTool,
)
from ..tools.weather import WeatherForecastTool

SENTENCES_DIR: Final = Path(__file__).parent / "sentences"
_SEA_TOPICS: Final = {
    "LocalAssistantKitesurf": TOPIC_KITE,
    "LocalAssistantWind": TOPIC_WIND,
    "LocalAssistantWaves": TOPIC_WAVES,
    "LocalAssistantWater": TOPIC_WATER,
    "LocalAssistantTide": TOPIC_TIDE,
}
_WEEKDAYS: Final = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
# Punctuation (also Spanish ¿ ¡) plays no part in a sentence's meaning here.
_PUNCTUATION: Final = re.compile(r"[¿?¡!.,;:\"“”«»]+")

DATA_SENTENCES: HassKey[dict[str, Intents | None]] = HassKey(
    f"{DOMAIN}_fast_path_sentences"
)


@dataclass(frozen=True, slots=True)
class LiveQuestion:
    """A matched live question."""

    intent: str
    topic: str | None = None  # a sea topic, or None for the weather
    day: int | str | None = None  # 0 today, 1 tomorrow, or "mon".."sun"
    rain: bool = False

    @property
    def about_weather(self) -> bool:
        """Whether the weather tool answers it (else the sea tool)."""
        return self.topic is None


async def async_match(
    hass: HomeAssistant, text: str, language: str | None
) -> LiveQuestion | None:
    """The live question ``text`` asks, if the templates of its language match."""
    intents = await _async_intents(hass, language_of(language))
    if intents is None:
        return None
    cleaned = " ".join(_PUNCTUATION.sub(" ", text).split())
    result = recognize(cleaned, intents)
    if result is None:
        return None
    name = result.intent.name
    day = result.entities["day"].value if "day" in result.entities else None
    if name in _SEA_TOPICS:
        return LiveQuestion(name, topic=_SEA_TOPICS[name])
    return LiveQuestion(
        name,
        day=day if isinstance(day, int | str) else None,
        rain=name.endswith("Rain"),
    )


@dataclass(frozen=True, slots=True)
class FastAnswer:
    """What the fast path said, and which tool it read (for the chat log)."""

    text: str
    tool_name: str
    tool_args: dict[str, Any]


async def async_answer(
    hass: HomeAssistant,
    question: LiveQuestion,
    tools: list[llm.Tool],
    language: str | None,
) -> FastAnswer | None:
    """The spoken answer from the agent's tools; None when none can answer."""
    if question.about_weather:
        weather = next((t for t in tools if isinstance(t, WeatherForecastTool)), None)
        if weather is None:
            return None
        day = target_day(question.day, dt_util.now().date())
        text = await weather.async_answer(hass, language, day=day, rain=question.rain)
        args: dict[str, Any] = {"rain": question.rain}
        if day is not None:
            args["day"] = day.isoformat()
        return FastAnswer(text, weather.name, args)
    sea = next((t for t in tools if isinstance(t, SeaConditionsTool)), None)
    if sea is None or question.topic is None:
        return None
    if question.topic == TOPIC_KITE and not sea.spot.configured:
        return None
    text = sea.answer(hass, question.topic, language)
    return FastAnswer(text, sea.name, {"topic": question.topic})


def target_day(day: int | str | None, today: date) -> date | None:
    """The date a slot value means: an offset from today, or the next weekday."""
    if day is None:
        return None
    if isinstance(day, int):
        return today + timedelta(days=day)
    if day in _WEEKDAYS:
        ahead = (_WEEKDAYS.index(day) - today.weekday()) % 7
        return today + timedelta(days=ahead)
    return None


async def _async_intents(hass: HomeAssistant, language: str) -> Intents | None:
    """The language's templates, loaded once (in the executor: it reads a file)."""
    cache = hass.data.setdefault(DATA_SENTENCES, {})
    if language not in cache:
        cache[language] = await hass.async_add_executor_job(_load, language)
    return cache[language]


def _load(language: str) -> Intents | None:
    path = SENTENCES_DIR / f"{language}.yaml"
    if not path.is_file():
        return None
    try:
        data: dict[str, Any] = load_yaml_dict(str(path))
        return Intents.from_dict(data)
    except Exception:
        LOGGER.exception("The fast-path sentences for %s could not be loaded", language)
        return None
