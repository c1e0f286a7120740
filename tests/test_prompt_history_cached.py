"""Which part of the prompt a one-slot cache (Swama) reads again each turn.

HA's time line (an agent without its API) changes every second: it comes
after the session history, so the history stays cached. The live lines
change less often than people speak: they come before the history, so a
turn whose live data did not change finds everything but its new words
cached, and one whose data changed reads the session again from there
(docs/benchmarks.md, thirty-third pass: after the history, the block was
read again every turn).
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
from tests.helpers.live import GERMAN_DINNER_CHAT, WIND, WIND_ONLY_OPTIONS, set_sensor
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
async def test_unchanged_live_data_keeps_the_whole_session_cached(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The README's kitesurf set-up: an Assist agent with a beach wind sensor.
    The user chats about dinner; the wind holds at 8 m/s. Each turn finds the
    live data, the history and the last answer cached: only the new words are
    read (after the history, the live block was read again every turn)."""
    ada = await create_user(hass, "Ada")
    for words, answer in GERMAN_DINNER_CHAT:
        set_sensor(hass, WIND, 8, "m/s", "wind_speed", "Beach wind")
        fake_server.queue(fake.text(answer))
        await converse(hass, words, user_id=ada, language="de")
    words = fake.prompt_words(fake_server.requests[-1])
    # The last "<|im_start|>assistant" opens the answer to come.
    answers = [i for i, word in enumerate(words) if word == "<|im_start|>assistant"]
    _read, cached = fake_server.prompt_reads[-1]
    assert cached > answers[-2]


@pytest.mark.parametrize("agent_options", [WIND_ONLY_OPTIONS])
async def test_a_changed_live_value_is_read_with_the_session_after_it(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The same chat while the wind sensor changes every turn: the new value
    is read, and the session after it again (the price of the layout above;
    a voice session is a few turns long)."""
    ada = await create_user(hass, "Ada")
    for number, (words, answer) in enumerate(GERMAN_DINNER_CHAT):
        set_sensor(hass, WIND, 8 + number, "m/s", "wind_speed", "Beach wind")
        fake_server.queue(fake.text(answer))
        await converse(hass, words, user_id=ada, language="de")
    request = fake_server.requests[-1]
    words = fake.prompt_words(request)
    history_starts = words.index("<|im_start|>user")
    _read, cached = fake_server.prompt_reads[-1]
    assert cached < history_starts
    assert "9 m/s" not in str(request["messages"])
    assert any("10 m/s" in str(m["content"]) for m in request["messages"])
