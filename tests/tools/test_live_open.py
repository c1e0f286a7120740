"""Open: the live block read out, and the lines the user's words name.

From the thirty-first hunt (its other findings are fixed: tests/tools/
test_live_findings_31.py). When the model reads out the whole live block,
llm/echo.py ``live_readout`` says the lines whose label the question names
(a shared 5-letter word start, or the label's words as said). No rule was
found that passes these without words of one language:

* "kiting" shares only "kit" with "Kitesurfing", as "sunny" shares "sun"
  with "Sunday": a shorter shared start that names the kite line names
  Sunday's for "Will it be sunny tomorrow?" (4 letters: German "Sonne" and
  "Sonntag", French "merci" and "mercredi").
* "jetzt"/"maintenant" are words of the kite label only: the weather-now
  line's labels are "Aktuell"/"Actuellement". In most languages the kite
  label's time word is the now line's label ("Kitesurfing now", "Now"), so
  a rule "a label word that is another line's label names that line" would
  hold once German, French, Hebrew, Japanese, Korean and Vietnamese use one
  word for both (a translation change with its tests and benchmarks).
"""

from __future__ import annotations

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse, converse_streaming
from tests.helpers.live import (
    LIVE_OPTIONS,
    NOW,
    async_setup_live_entities,
    live_lines,
)

# --- twice-daily forecasts after midnight -------------------------------------------


# --- the kitesurf verdict against the wind it says ------------------------------------


# --- the live block read out: the kitesurf answer replaced ---------------------------


@pytest.fixture
async def live_home(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    freezer.move_to(NOW)
    await hass.config.async_set_time_zone("US/Pacific")
    await async_setup_live_entities(hass)


@pytest.mark.usefixtures("live_home")
@pytest.mark.parametrize("agent_options", [LIVE_OPTIONS])
@pytest.mark.parametrize(
    ("language", "question", "label"),
    [
        ("en", "Can I go kiting now?", "Kitesurfing now:"),
        ("de", "Kann ich heute kiten?", "Kitesurfen jetzt:"),
        ("nl", "Kan ik nu kiten?", "Kitesurfen nu:"),
        ("fr", "Je peux aller kiter ?", "Kitesurf maintenant :"),
    ],
)
@pytest.mark.xfail(
    strict=True,
    reason="no language-independent rule matches kiting/kiten/kiter to "
    "Kitesurfing without a shorter shared start that also names Sunday for sunny",
)
async def test_a_kiting_question_read_out_keeps_the_kitesurf_line(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    question: str,
    label: str,
) -> None:
    """The kite spot is configured; the user asks "Can I go kiting now?"
    ("Kann ich heute kiten?", "Kan ik nu kiten?", "Je peux aller kiter ?").
    The model answers by reading out the whole live block, whose second
    line is the answer ("Kitesurfing now: yes, 16.5 kn from the north-west
    is inside your 12 kn to 25 kn window.").

    Our code replaces that answer with the lines the question "names": none
    for "kiting"/"kiten"/"kiter" (they share no 5-letter stem with
    "Kitesurfing"), so the user hears only "Now: Partly cloudy, 12.5 °C."
    (German: "Heute: ..." the day's forecast) - the answer the model gave
    is dropped for one that does not answer. The kitesurf line should be
    said. Cause: llm/echo.py ``live_readout`` names lines by shared word
    stems of their label only, and falls back to the first line.
    """
    fake_server.queue(fake.text("OK."))
    await converse(hass, "Hi there, how are you?", language=language)
    block = live_lines(fake_server.requests[-1])
    (kite,) = [line for line in block if line.startswith(label)]
    fake_server.queue(fake.text("\n".join(block)))
    turn = await converse_streaming(hass, question, language=language)
    assert kite.split(":")[1].strip()[:8] in turn.speech, turn.speech


@pytest.mark.usefixtures("live_home")
@pytest.mark.parametrize("agent_options", [LIVE_OPTIONS])
@pytest.mark.parametrize(
    ("language", "question", "label"),
    [
        ("de", "Wie warm ist es jetzt draußen?", "Aktuell:"),
        ("de", "Wie ist das Wetter jetzt?", "Aktuell:"),
        ("fr", "Quel temps fait-il maintenant ?", "Actuellement :"),
    ],
)
@pytest.mark.xfail(
    strict=True,
    reason="jetzt/maintenant are words of the kite label only (the now line is "
    "Aktuell/Actuellement); needs the translations to share the now word",
)
async def test_a_weather_now_question_read_out_is_not_answered_with_kitesurfing(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    question: str,
    label: str,
) -> None:
    """German "Wie warm ist es jetzt draußen?" (how warm is it outside now?)
    or French "Quel temps fait-il maintenant ?"; the model reads the whole
    live block out, whose first line answers ("Aktuell: Teilweise bewölkt,
    12,5 °C.").

    Heard: only "Kitesurfen jetzt: ja, 16,5 kn aus Nordwest liegt in deinem
    Windbereich von 12 kn bis 25 kn." ("Kitesurf maintenant : oui, ...") -
    no temperature, no weather: the question's "jetzt"/"maintenant" is in
    the kitesurf line's label, not in the weather-now line's ("Aktuell",
    "Actuellement"), so the kite verdict is said and the answer dropped.
    The weather-now line should be said. Cause: llm/echo.py
    ``live_readout`` (lines named by their label's words only).
    """
    fake_server.queue(fake.text("OK."))
    await converse(hass, "Hi there, how are you?", language=language)
    block = live_lines(fake_server.requests[-1])
    (now,) = [line for line in block if line.startswith(label)]
    assert "12,5 °C" in now, now
    fake_server.queue(fake.text("\n".join(block)))
    turn = await converse_streaming(hass, question, language=language)
    assert "12,5 °C" in turn.speech, turn.speech
