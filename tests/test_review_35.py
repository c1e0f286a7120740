"""Review of bcc2179 (reverted): live lines said where the model's answer is not.

Real HA (the `hass` fixture), the real openai client, real HTTP and SSE from
the fake server of tests/helpers; the weather and sea entities are template
entities (tests/helpers/live.py), the clock frozen at Monday 2 March 2026.

bcc2179 took a question for one about the live data when a word of it is
(or nearly is) a word of a live line's label. Labels are everyday words
("Today", "Now", "Nu", "Hoy", "Water", "Agua", "Eau", "Tomorrow"), so
questions about cooking, drinking water or a fan of the home, and questions
about the day after tomorrow, were met with a weather or sea line where the
model gave no answer. It was reverted; these tests keep any later fallback
from doing the same, and keep the server's faults heard.
"""

from __future__ import annotations

from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.llm.spoken import speakable
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse_streaming, spoken_sentence
from tests.helpers.live import (
    LIVE_OPTIONS,
    NOW,
    async_setup_live_entities,
    live_lines,
)


@pytest.fixture
def agent_options() -> dict[str, Any]:
    return dict(LIVE_OPTIONS)


@pytest.fixture(autouse=True)
def frozen(freezer: FrozenDateTimeFactory) -> FrozenDateTimeFactory:
    """The forecast's days are today, tomorrow and the days after."""
    freezer.move_to(NOW)
    return freezer


@pytest.fixture(autouse=True)
async def live_entities(hass: HomeAssistant, frozen: FrozenDateTimeFactory) -> None:
    await async_setup_live_entities(hass)


def said_lines(body: dict[str, Any]) -> list[str]:
    """The live lines of a request, as the agent says them."""
    return [speakable(line) for line in live_lines(body)]


async def said_back(
    hass: HomeAssistant,
    fake_server: fake.FakeOpenAIServer,
    words: str,
    language: str,
) -> Any:
    """The model says the user's words back, asked again the same (no answer)."""
    fake_server.queue(fake.text(words), fake.text(words))
    return await converse_streaming(hass, words, language=language)


def assert_no_answer_said(turn: Any, body: dict[str, Any], language: str) -> None:
    heard = turn.speech
    spoken_live = [line for line in said_lines(body) if line in heard]
    assert not spoken_live, f"live data said for a question not about it: {heard!r}"
    assert heard == spoken_sentence("no_answer", language)
    assert turn.result.response.response_type is intent.IntentResponseType.ERROR


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", "What should I cook today?"),
        ("es", "¿Qué cocino hoy?"),
        ("de", "Was koche ich heute?"),
        ("fr", "Qu'est-ce que je cuisine aujourd'hui ?"),
        ("nl", "Wat moet ik vandaag koken?"),
        # The short labels, as they are ("Now", "Nu").
        ("en", "What should I do now?"),
        ("nl", "Wat moet ik nu koken?"),
    ],
)
async def test_a_question_that_only_says_when_gets_no_weather(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    words: str,
) -> None:
    """ "What should I cook today?" the model fails to answer. bcc2179 said:
    "Today: Rainy, 8 °C to 14.2 °C, 3.5 mm of rain ..." ("What should I do
    now?": the weather now and "Kitesurfing now: yes ..."), said as the
    answer. Should be: the model gave no answer (as before that change; as
    "What should I cook tonight?" still gets). A day or "now" in a question
    does not make it a question about the weather: the live data must not
    answer a question that is not about it, and the user is not told that
    their question went unanswered."""
    turn = await said_back(hass, fake_server, words, language)
    assert_no_answer_said(turn, fake_server.requests[0], language)


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", "How much water should I drink a day?"),
        ("es", "¿Cuánta agua debo beber al día?"),
        ("de", "Wie viel Wasser soll ich am Tag trinken?"),
        ("fr", "Combien d'eau dois-je boire par jour ?"),
        ("nl", "Hoeveel water moet ik per dag drinken?"),
    ],
)
async def test_a_question_about_drinking_water_is_not_answered_with_the_sea(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    words: str,
) -> None:
    """ "How much water should I drink a day?" - bcc2179 said: "Water: 16.4 °C."
    (the sea's temperature, "Agua: 16,4 °C.", "Eau: 16,4 °C." ...) as the
    answer to a health question. Should be: the model gave no answer. A
    label word ("Water", "Agua", "Wasser", "Eau") said in any question is
    taken for a question about that line: an answer not asked for, said as
    if it answered."""
    turn = await said_back(hass, fake_server, words, language)
    assert_no_answer_said(turn, fake_server.requests[0], language)


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", "Is the fan on now?"),
        ("es", "¿Está encendido el ventilador ahora?"),
        ("de", "Ist der Ventilator jetzt an?"),
        ("fr", "Est-ce que le ventilateur est allumé maintenant ?"),
        ("nl", "Staat de ventilator nu aan?"),
    ],
)
async def test_a_question_about_a_device_of_the_home_gets_no_weather(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    words: str,
) -> None:
    """ "Is the fan on now?" (a device word of HA's sentence data; the
    question is about the home) - bcc2179 said: "Now: Partly cloudy, 12.5 °C.
    Kitesurfing now: yes, ..." (German and French: only the kitesurfing
    line, their "now" line's label being "Aktuell"/"Actuellement"). Should
    be: the model gave no answer, as "Is the porch light on now?" gets (the
    change's own rule: a question about the home is not about the weather
    now). _asked_live_lines checks named devices and places, not device
    words."""
    turn = await said_back(hass, fake_server, words, language)
    assert_no_answer_said(turn, fake_server.requests[0], language)


@pytest.mark.parametrize(
    ("language", "words", "tomorrow"),
    [
        ("en", "Will it rain the day after tomorrow?", "Tomorrow:"),
        ("fr", "Est-ce qu'il va pleuvoir après-demain ?", "Demain"),
        ("es", "¿Va a llover pasado mañana?", "Mañana:"),
    ],
)
async def test_the_day_after_tomorrow_is_not_answered_with_tomorrow(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    words: str,
    tomorrow: str,
) -> None:
    """ "Will it rain the day after tomorrow?" (Wednesday) - bcc2179 said:
    "Tomorrow: Partly cloudy, ... 10% chance of rain ..." (Tuesday's line;
    "après-demain" gets "Demain: ...", "pasado mañana" gets "Mañana: ...").
    Should be: Wednesday's line or the no-answer apology, never the line of
    a day that was not asked about. German "übermorgen" and Dutch
    "overmorgen" get the apology: the answer depends on whether the
    language writes the day as one word."""
    turn = await said_back(hass, fake_server, words, language)
    (line,) = [
        line
        for line in said_lines(fake_server.requests[0])
        if line.startswith(tomorrow)
    ]
    assert line not in turn.speech, f"tomorrow's line said: {turn.speech!r}"
    assert line not in turn.streamed_text


@pytest.mark.xfail(
    strict=True,
    reason="open: text streamed before a copied template slot cannot be taken "
    "back; holding every sentence to its end would delay every answer's first "
    "words (the slot's lead from HA's prompt is held, llm/spoken.py)",
)
async def test_a_placeholder_answer_streams_only_what_is_said(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """ "Tomorrow it will be [value from tool]." (a lead HA's prompt does not
    show): the pipeline speaks the streamed deltas, "Tomorrow it will be"
    then the apology glued on: "Tomorrow it will beSorry, I couldn't check
    that right now." Found by the review, there before bcc2179 too."""
    fake_server.queue(fake.text("Tomorrow it will be [value from tool]."))
    turn = await converse_streaming(hass, "Will it rain tomorrow?")
    assert turn.speech == spoken_sentence("could_not_check")
    assert turn.streamed_text == turn.speech


async def test_a_servers_broken_body_is_still_said(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The server (or a proxy before it) answers with a body that is no JSON,
    every time: no model wrote that. bcc2179 said "Tomorrow: Partly cloudy,
    ..." as a successful answer, the fault hidden. Should be: "The local
    model server sent a broken answer. Please try again." (the server's
    faults are the user's to hear, as 5xx and busy still are)."""
    fake_server.queue(*[fake.malformed(["data: {not json\n\n"])] * 3)
    turn = await converse_streaming(hass, "Will it rain tomorrow?")
    assert turn.speech == spoken_sentence("model_broken_answer")
    assert turn.result.response.response_type is intent.IntentResponseType.ERROR
