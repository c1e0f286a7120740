"""Independent review of the thirtieth pass's fixes (spoken filter,
restatements, memory by voice, live data): each test failed on the code
under review for the reason its docstring gives.

Real HA (the ``hass`` fixture), real hassil, real translations, the fake
OpenAI server over HTTP where a model answers.
"""

from __future__ import annotations

import json
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.llm.sentences import async_phrases
from custom_components.local_assistant.llm.spoken import SpokenFilter, speakable
from custom_components.local_assistant.tools.kite import KiteSpot
from custom_components.local_assistant.tools.live_now import async_live_lines
from custom_components.local_assistant.tools.sea import SeaConditionsTool
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse, converse_streaming, spoken_sentence
from tests.helpers.live import (
    LIVE_OPTIONS,
    NOW as NOW_LIVE,
    async_setup_live_entities,
    async_setup_template_weather,
    live_lines,
    template_value,
)
from tests.helpers.memory import (
    ada_memory_turn,
    create_user,
)

PACIFIC = "US/Pacific"


def _chunked(text: str, size: int) -> str:
    """``text`` through the spoken filter in chunks of ``size`` characters."""
    spoken = SpokenFilter()
    out = "".join(
        spoken.feed(text[start : start + size]) for start in range(0, len(text), size)
    )
    return out + spoken.flush()


# Memory: "forget that ..." removed a note the words say more than: those cases
# are with the others in tests/memory/test_voice_findings.py.


# =====================================================================================
# Memory: the new trailing [<please>] rule cuts the end off a fact
# =====================================================================================


@pytest.mark.parametrize(
    ("language", "sentence", "tail"),
    [
        # "per piacere" is also "for pleasure": it is no closing politeness.
        # (A fact that ends in "por favor" or "s'il te plaît" itself, "my son
        # never says please", does lose it: rarer than the politeness said
        # after a fact without a pause, which speech to text writes so.)
        ("it", "Ricorda che suono il violino solo per piacere", "per piacere"),
    ],
)
async def test_remember_keeps_a_fact_that_ends_in_a_politeness_phrase(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    sentence: str,
    tail: str,
) -> None:
    """Stored: "Suono il violino solo." / "Mi hijo nunca dice." / "Ma fille
    oublie toujours de dire." - the fact cut in half, or its meaning lost.

    Cause: memory/sentences/{it,es,fr}.yaml now end every remember/forget
    sentence with ``[<please>]``; hassil takes the phrase as politeness even
    where the fact ends in it without a pause. commands._cut_end kept a skip
    word of several words unless a comma came before it, for exactly this
    ("a fact may end in one"); the new rule undoes that.
    """
    _left, pinned, heard = await ada_memory_turn(
        hass,
        hass_storage,
        config_entry,
        fake_server,
        ["Qx unrelated note."],
        sentence,
        language,
    )
    assert len(pinned) == 1, f"said {heard!r}"
    assert tail.casefold() in pinned[0].casefold(), pinned


# =====================================================================================
# Spoken filter: a tool call written as JSON, longer than the hold window
# =====================================================================================


def test_a_long_tool_call_written_as_json_is_never_read_out() -> None:
    """The model writes a remember call as a JSON line (the server did not
    parse it) with a note of some 150 characters.

    Heard: the whole JSON, braces, quotes, "name", "local_memory_remember",
    "arguments" and all, read out by TTS. A shorter call is dropped.

    Cause: llm/spoken.py ``_json_call_end`` reads the object through
    ``_need``, which gives "" once MAX_HOLD (200) characters are passed: the
    object never closes, so the line is text.
    """
    fact = (
        "My daughter Lucía has her piano lesson every Tuesday at five in the "
        "afternoon at the music school next to the old church in the town centre, "
        "and I pick her up."
    )
    call = json.dumps(
        {"name": "local_memory_remember", "arguments": {"fact": fact}},
        ensure_ascii=False,
    )
    assert len(call) > 200
    text = f"{call}\nI'll remember that."
    for heard in (speakable(text), _chunked(text, 7)):
        assert "arguments" not in heard, heard
        assert heard == "I'll remember that.", heard


# =====================================================================================
# Spoken filter: a URL runs on through Thai, written without spaces
# =====================================================================================


def test_a_url_stops_before_thai_words() -> None:
    """Thai answer (th is one of the integration's languages): "see the
    forecast at https://www.tmd.go.th, thank you" written, as Thai is,
    without a space before the polite particle.

    Heard: "ดูพยากรณ์ได้ที่ the link" - the Thai words after the URL are
    dropped with it (before the change they were said).

    Cause: llm/spoken.py ``_in_url`` continues a URL through any non-wide
    letter "of a script written with spaces"; Thai (also Lao, Khmer,
    Myanmar) is narrow and written without spaces between words.
    """
    text = "ดูพยากรณ์ได้ที่ https://www.tmd.go.thครับ"
    assert speakable(text).endswith("ครับ"), speakable(text)


# =====================================================================================
# Sea: two wind sensors of two stations are no wind and its gusts
# =====================================================================================


async def test_two_stations_winds_are_not_said_as_wind_and_gusts(
    hass: HomeAssistant,
) -> None:
    """Two wind speed sensors, of the beach station and of the harbour's
    (both plainly "wind speed", in English), listed beach first. Beach 15
    kn, harbour 22 kn; spot 12-20 kn.

    Heard: "Wind: 15 kn, gusts 22 kn" and "Kitesurfing now: yes ... gusts
    22 kn above your 20 kn maximum" - the harbour's mean wind said as gusts
    at the beach, which no sensor measured. Before the change the first
    listed wind was the wind and no gust was invented.

    Cause: tools/sea.py ``_gusts_by_value`` (sea.py:343-361) takes the
    higher of ANY two wind readings as the gusts, also where their names
    say both are a mean wind; it could keep to two sensors of one station
    (one device, or one name before the sensors' own words). Now both are
    listed as the wind (two stations): the first that reads is the wind.
    """
    for entity_id, name, value in (
        ("sensor.beach_wind_speed", "Beach wind speed", 15),
        ("sensor.harbour_wind_speed", "Harbour wind speed", 22),
    ):
        hass.states.async_set(
            entity_id,
            str(value),
            {
                "unit_of_measurement": "kn",
                "device_class": "wind_speed",
                "friendly_name": name,
            },
        )
    tool = SeaConditionsTool(
        {"sea_wind": ["sensor.beach_wind_speed", "sensor.harbour_wind_speed"]},
        KiteSpot(min_kn=12, max_kn=20),
    )
    phrases = await async_phrases(hass, "en")
    lines = tool.lines(hass, phrases)
    assert not any("gust" in line.casefold() for line in lines), lines
    result = await tool.async_run(hass, {}, "en")
    assert "gust" not in str(result["kitesurf"]).casefold(), result["kitesurf"]


# =====================================================================================
# The live block read out: "Monday" asked on a Monday is no "Today"
# =====================================================================================


@pytest.fixture
def agent_options() -> dict[str, Any]:
    return dict(LIVE_OPTIONS)


async def test_the_weekday_of_today_does_not_name_todays_forecast(
    hass: HomeAssistant,
    freezer: FrozenDateTimeFactory,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Monday 2 March (tests/helpers/live.py): "Will it rain next Monday?";
    the model reads the whole live block out, which our code replaces with
    the lines the question names. No line is next Monday's (the forecast
    covers this week).

    Heard: "Today: Rain, 8 °C to 14.2 °C, 3.5 mm of rain (80% chance)." -
    today's forecast given as next Monday's. Before the change the weather
    now was said (no claim about Monday).

    Cause: tools/phrases.py ``weekday_aliases`` (phrases.py:107-114) lets
    "Today" stand for today's weekday too; a weekday asked on that day is
    next week's ("on Monday" said on a Monday), so only "Tomorrow" should.
    """
    freezer.move_to(NOW_LIVE)
    await hass.config.async_set_time_zone(PACIFIC)
    await async_setup_live_entities(hass)
    fake_server.queue(fake.text("OK."))
    await converse(hass, "Hello, how are you?", language="en")
    block = live_lines(fake_server.requests[-1])
    assert any(line.startswith("Today:") and "80%" in line for line in block), block
    fake_server.queue(fake.text("\n".join(block)))
    turn = await converse_streaming(hass, "Will it rain next Monday?", language="en")
    assert "80%" not in turn.speech, turn.speech


# =====================================================================================
# Restatements: said when asking again brings nothing else
# =====================================================================================


async def test_a_restated_earlier_answer_with_old_values_is_not_said(
    hass: HomeAssistant,
    freezer: FrozenDateTimeFactory,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """An hour ago: "What's the temperature outside?" - "It is 12.5 °C and
    partly cloudy outside right now." Now it is 18 °C and sunny; asked
    again, the model repeats its earlier answer (the session shows it), and
    asked without the session it gives nothing.

    Heard: "It is 12.5 °C and partly cloudy outside right now." - an hour
    old, and false. Before the change: the "no answer" sentence.

    Cause: llm/entity.py keeps ``restated`` from any round
    (entity.py:272) and conversation.py (lines 454-464) says it whenever the
    words ask for no change; nothing checks that the restatement's values
    are still the live data's (the empty second round is "nothing else").
    """
    freezer.move_to(NOW_LIVE)
    await hass.config.async_set_time_zone(PACIFIC)
    await async_setup_live_entities(hass)
    ada = await create_user(hass, "Ada")
    old = "It is 12.5 °C and partly cloudy outside right now."
    fake_server.queue(fake.text(old))
    first = await converse_streaming(
        hass, "What's the temperature outside?", user_id=ada, language="en"
    )
    assert first.speech == old
    state = hass.states.get("weather.home")
    hass.states.async_set(
        "weather.home", "sunny", {**state.attributes, "temperature": 18}
    )
    fake_server.queue(fake.text(old), fake.text(""))
    turn = await converse_streaming(
        hass, "What's the temperature outside now?", user_id=ada, language="en"
    )
    assert "12.5" not in turn.speech, turn.speech


async def test_the_answer_language_line_is_never_said_as_an_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """The failure llm/echo.py was written for (bundled model, French
    session): "Répondez en français." for the prompt's "Réponds en
    français.", and asked again without the session, the same.

    Heard: "Répondez en français." - an order from the system prompt, said
    to a user who asked for a joke. Before the change: the "no answer"
    sentence.

    Cause: llm/echo.py ``EchoHold.flush`` (echo.py:299-306) keeps any
    instruction line said in other forms as ``restated``, and conversation.py
    says it where the words ask for no change. An instruction on how to
    answer is never an answer; only lines the user's question is about
    (or earlier answers) could be.
    """
    ada = await create_user(hass, "Ada")
    fake_server.queue(
        fake.text("Répondez en français."), fake.text("Répondez en français.")
    )
    turn = await converse_streaming(
        hass, "Raconte-moi une blague", user_id=ada, language="fr"
    )
    assert "Répondez" not in turn.speech, turn.speech
    assert turn.speech == spoken_sentence("no_answer", "fr")


# =====================================================================================
# Twice-daily merge: a night half dated 00:00 UTC is tonight, not tomorrow
# =====================================================================================


async def test_a_night_half_starting_at_midnight_utc_is_tonight(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """A US East Coast home (America/New_York, EST = UTC-5) on Google Weather,
    whose twice-daily halves start at 07:00 and 19:00 local time and are
    given in UTC: tonight's half starts "2026-03-03T00:00:00Z" (19:00
    Monday). Monday 10:00; tonight 90 % rain, tomorrow daytime 10 %.

    Heard: "Today: Sunny, up to 10 °C, 0% chance of rain." and "Tomorrow:
    Sunny, 2 °C to 12 °C, 90% chance of rain." - tonight's rain and low
    moved to tomorrow, today said dry.

    Cause: tools/weather.py ``day_forecasts`` (weather.py:300-321) dates
    each half with ``forecast_day``, whose rule for daily items ("written at
    midnight in its own offset: the day it is written with") takes a half
    that starts at 00:00 UTC for the UTC date; a half (an item with
    ``is_daytime``) is for its local date.
    """
    await hass.config.async_set_time_zone("America/New_York")
    freezer.move_to("2026-03-02T15:00:00+00:00")  # Monday 10:00 EST
    twice = [
        {"datetime": "2026-03-02T12:00:00Z", "is_daytime": True,
         "condition": "sunny", "temperature": 10, "precipitation_probability": 0},
        {"datetime": "2026-03-03T00:00:00Z", "is_daytime": False,
         "condition": "rainy", "temperature": 2, "precipitation_probability": 90},
        {"datetime": "2026-03-03T12:00:00Z", "is_daytime": True,
         "condition": "sunny", "temperature": 12, "precipitation_probability": 10},
        {"datetime": "2026-03-04T00:00:00Z", "is_daytime": False,
         "condition": "clear-night", "temperature": 3, "precipitation_probability": 0},
    ]  # fmt: skip
    tool = await async_setup_template_weather(
        hass, forecast_twice_daily=template_value(twice)
    )
    lines = await async_live_lines(hass, [tool], "en")
    today = [line for line in lines if line.startswith("Today:")]
    tomorrow = [line for line in lines if line.startswith("Tomorrow:")]
    assert today, lines
    assert tomorrow, lines
    assert "90%" in today[0], lines
    assert "90%" not in tomorrow[0], lines
