"""Words the model writes before a tool call are not heard before the call ran.

The voice pipeline speaks streamed text once a tool call follows it, so "I
turned on the kitchen light." before a call that is then refused or fails
would be heard whatever the turn says next. Until a change ran, an answer's
first characters wait for its end (llm/stream.py, SPEECH_STREAM_CHARS): no
call, and they are said as they came; a call, and they are dropped.
"""

from __future__ import annotations

from typing import Any

from homeassistant.components.assist_pipeline.pipeline import STREAM_RESPONSE_CHARS
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.llm.stream import SPEECH_STREAM_CHARS
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse_streaming
from tests.turn.test_follow_ups import agent_options  # noqa: F401  (HA's intents on)
from tests.turn.test_policy_findings import _states, home  # noqa: F401  (the dev home)


def _content_deltas(deltas: list[dict[str, Any]]) -> list[str]:
    return [str(delta["content"]) for delta in deltas if delta.get("content")]


def test_the_hold_ends_where_the_pipeline_starts_speaking() -> None:
    """Held no longer than HA waits anyway: a long answer is not delayed."""
    assert SPEECH_STREAM_CHARS == STREAM_RESPONSE_CHARS


@pytest.mark.usefixtures("home")
@pytest.mark.parametrize(
    ("language", "sentence", "call", "claim", "answer"),
    [
        # Refused: the words name no change.
        (
            "en",
            "What could I cook in the kitchen tonight?",
            ("HassTurnOn", {"area": "Kitchen"}),
            "I turned on the kitchen light for you.",
            "How about a pasta with tomatoes?",
        ),
        # Run, and failed: the fan has no position.
        (
            "en",
            "could you open the Fan a bit",
            ("HassSetPosition", {"name": "Fan", "position": 30}),
            "Sure, I opened the fan to 30 percent.",
            "Done!",
        ),
        (
            "es",
            "¿Qué podría cocinar esta noche en Kitchen?",
            ("HassTurnOn", {"area": "Kitchen"}),
            "He encendido la luz de la cocina.",
            "Podrías preparar una tortilla de patatas.",
        ),
        (
            "de",
            "Was könnte ich heute Abend in der Kitchen kochen?",
            ("HassTurnOn", {"area": "Kitchen"}),
            "Ich habe das Licht eingeschaltet.",
            "Wie wäre es mit Spätzle?",
        ),
        (
            "fr",
            "Qu'est-ce que je pourrais cuisiner ce soir dans la Kitchen ?",
            ("HassTurnOn", {"area": "Kitchen"}),
            "J'ai allumé la lumière.",
            "Une omelette aux champignons ?",
        ),
        (
            "nl",
            "Wat zou ik vanavond in de Kitchen kunnen koken?",
            ("HassTurnOn", {"area": "Kitchen"}),
            "Ik heb het licht aangedaan.",
            "Wat dacht je van stamppot?",
        ),
    ],
)
async def test_words_before_a_call_that_did_not_run_are_never_heard(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    sentence: str,
    call: tuple[str, dict[str, Any]],
    claim: str,
    answer: str,
) -> None:
    states = _states(hass)
    fake_server.queue(fake.tool_calls([call], content=claim), fake.text(answer))
    turn = await converse_streaming(hass, sentence, language=language)
    assert _states(hass) == states
    assert claim not in turn.streamed_text
    assert claim not in turn.speech


@pytest.mark.usefixtures("home")
async def test_words_before_a_call_that_ran_give_way_to_the_answer_after_it(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The answer after the call's result says what happened; it is heard once.
    HA does not read the words as a command, so the model is asked again
    after its change; it only writes words ("The fan is on."), held, so the
    answer is what ran, in HA's words (turn/what_ran.py)."""
    fake_server.queue(
        fake.tool_calls(
            [("HassTurnOn", {"name": "Fan"})], content="Let me switch on the fan."
        ),
        fake.text("The fan is on."),
    )
    turn = await converse_streaming(hass, "could you maybe get the Fan going for me")
    assert hass.states.get("switch.fan").state == "on"
    assert turn.streamed_text == "Turned on the switch"
    assert turn.speech == "Turned on the switch"
    assert len(fake_server.requests) == 2


@pytest.mark.usefixtures("home")
async def test_a_short_answer_without_a_call_is_said_whole(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    fake_server.queue(
        fake.text("Paris is the capital of France.", think="A capital, no tool.")
    )
    turn = await converse_streaming(hass, "What is the capital of France?")
    assert turn.streamed_text == "Paris is the capital of France."
    assert turn.speech == "Paris is the capital of France."


@pytest.mark.usefixtures("home")
async def test_a_long_answer_still_streams_before_its_end(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Past SPEECH_STREAM_CHARS the words flow as they come: the pipeline
    starts speaking there anyway."""
    answer = (
        "Paris is the capital of France. It lies on the Seine, and about two "
        "million people live in the city itself, twelve million around it."
    )
    # Closed reasoning first: text after it is no longer held as possible
    # reasoning (llm/think.py).
    fake_server.queue(fake.text(answer, think="The user asks about Paris."))
    turn = await converse_streaming(hass, "Tell me about Paris.")
    pieces = _content_deltas(turn.deltas)
    assert "".join(pieces) == answer
    assert len(pieces) > 3
    # The first piece is what waited: just over the pipeline's threshold.
    assert SPEECH_STREAM_CHARS < len(pieces[0]) < SPEECH_STREAM_CHARS + 15
