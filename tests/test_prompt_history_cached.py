"""The prompt's per-request lines come after the session history.

The time line HA writes for an agent without its API, and the live lines,
change between requests. Before the history they made a one-slot prompt
cache (Swama) read the whole session again on each new value; after it, the
history stays cached and only the last exchange, those lines and the new
words are read (docs/benchmarks.md, thirty-second pass).
"""

from __future__ import annotations

from datetime import timedelta

from freezegun.api import FrozenDateTimeFactory
from homeassistant.const import CONF_LLM_HASS_API, CONF_MODEL, CONF_PROMPT
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.helpers import fake_openai as fake
from tests.helpers.ha import (
    MODEL,
    converse,
)
from tests.helpers.live import WIND, WIND_ONLY_OPTIONS, set_sensor
from tests.helpers.memory import create_user

# An agent that chats only: no HA API, no live-data tools.
CHAT_ONLY = {
    CONF_MODEL: MODEL,
    CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
    CONF_LLM_HASS_API: [],
    "tool_bias": True,
    "local_intents": False,
    "temperature": 0.6,
    "max_tokens": 512,
}


@pytest.mark.parametrize("agent_options", [CHAT_ONLY])
async def test_the_history_stays_cached_from_one_turn_to_the_next(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    freezer: FrozenDateTimeFactory,
) -> None:
    """A chat-only agent (no HA API, so HA writes "Current time is 14:10:44."
    into its prompt). The user talks a few turns with the same speaker on Swama
    (one cached prompt). The time line changes every second; before the
    history it made the server read the whole session again each turn. The
    history of the previous turns is found cached: only what is new (and the
    time, after it) is read."""
    ada = await create_user(hass, "Ada")
    turns = [
        (
            "¿Qué lleva una paella valenciana?",
            "Arroz, pollo, conejo, judías y azafrán.",
        ),
        (
            "¿Y cuánto tiempo se cuece el arroz?",
            "Unos dieciocho minutos a fuego medio.",
        ),
        (
            "¿Hay que removerlo mientras se cuece?",
            "No, el arroz de la paella no se remueve.",
        ),
    ]
    for words, answer in turns:
        fake_server.queue(fake.text(answer))
        await converse(hass, words, user_id=ada, language="es")
        freezer.tick(timedelta(seconds=25))
    last = fake_server.requests[-1]
    assert [m["role"] for m in last["messages"]][-6:] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "system",
        "user",
    ]
    words = fake.prompt_words(last)
    history_starts = words.index("<|im_start|>user")
    _read, cached = fake_server.prompt_reads[-1]
    # The turns before this one were sent (and answered) by the previous
    # request: they should come from the cache.
    assert cached > history_starts


@pytest.mark.parametrize("agent_options", [WIND_ONLY_OPTIONS])
async def test_a_changed_live_value_does_not_make_the_server_reread_the_session(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The README's kitesurf set-up: an Assist agent with a beach wind sensor.
    The user chats about dinner; meanwhile the wind sensor updates (it does every
    minute). Before the history, each new wind value made Swama's one cached
    prompt useless from there on, and the whole session was read again. The
    history stays cached; only the new live line (after it) and the new words
    are read."""
    ada = await create_user(hass, "Ada")
    turns = [
        ("Was koche ich heute Abend?", "Wie wäre es mit einer Gemüselasagne?"),
        ("Und was brauche ich dafür?", "Nudelplatten, Zucchini, Tomaten und Käse."),
        ("Wie lange kommt sie in den Ofen?", "Etwa vierzig Minuten bei 180 Grad."),
    ]
    for number, (words, answer) in enumerate(turns):
        set_sensor(hass, WIND, 8 + number, "m/s", "wind_speed", "Beach wind")
        fake_server.queue(fake.text(answer))
        await converse(hass, words, user_id=ada, language="de")
    words = fake.prompt_words(fake_server.requests[-1])
    history_starts = words.index("<|im_start|>user")
    _read, cached = fake_server.prompt_reads[-1]
    assert cached > history_starts
