"""The live data in the prompt: a small model answers from it, in the user's language.

Real HA, template weather and sea sensors (tests/helpers/live.py), the clock
frozen at Monday 2 March 2026, 10:00 (US/Pacific); the fake server records
what the model was sent.
"""

from __future__ import annotations

from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.const import CONF_LLM_HASS_API
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.llm.prompt import LIVE_HEADING
from custom_components.local_assistant.llm.spoken import speakable
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse, converse_streaming, speech, spoken_sentence
from tests.helpers.live import (
    BASE_OPTIONS,
    LIVE_OPTIONS,
    NOW,
    WATER,
    WAVES,
    WEATHER,
    WEATHER_DAILY_ONLY,
    async_setup_live_entities,
    live_lines,
)


@pytest.fixture(autouse=True)
def frozen(freezer: FrozenDateTimeFactory) -> FrozenDateTimeFactory:
    freezer.move_to(NOW)
    return freezer


@pytest.fixture
def agent_options() -> dict[str, Any]:
    return dict(LIVE_OPTIONS)


@pytest.fixture
async def live_entities(hass: HomeAssistant) -> None:
    await hass.config.async_set_time_zone("US/Pacific")
    await async_setup_live_entities(hass)


async def live_block(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer, language: str = "en"
) -> list[str]:
    """The live lines a first request of the test was sent (a greeting)."""
    fake_server.queue(fake.text("OK."))
    await converse(hass, "Hi there, how are you?", language=language)
    return live_lines(fake_server.requests[-1])


def has_live_data(body: dict[str, Any]) -> bool:
    return any(LIVE_HEADING in message["content"] for message in body["messages"])


def expose_weather(hass: HomeAssistant, *exposed: str) -> None:
    """Of the two weather entities, expose to Assist only ``exposed``."""
    for entity_id in (WEATHER, WEATHER_DAILY_ONLY):
        async_expose_entity(hass, "conversation", entity_id, entity_id in exposed)


@pytest.mark.usefixtures("live_entities")
async def test_the_live_data_is_in_the_prompt(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """ "Should I bring a jacket tomorrow?" needs no tool call to be right."""
    fake_server.queue(fake.text("Yes, it will rain."))
    result = await converse(hass, "Should I bring a jacket tomorrow?")
    assert speech(result) == "Yes, it will rain."
    (request,) = fake_server.requests
    assert live_lines(request) == [
        "Now: Partly cloudy, 12.5 °C.",
        "Kitesurfing now: yes, 16.5 kn from the north-west is inside your 12 kn to 25 kn window.",
        "Wind: 8.5 m/s (16.5 kn) from the north-west, gusts 11 m/s (21.4 kn).",
        "Waves: 1.2 m.",
        "Water: 16.4 °C.",
        "Today: Rainy, 8 °C to 14.2 °C, 3.5 mm of rain (80% chance), wind 20 km/h (10.8 kn) from the south-west.",
        "Tomorrow: Partly cloudy, 9.5 °C to 16 °C, 10% chance of rain, wind 30 km/h (16.2 kn) from the north-west.",
        "Wednesday: Sunny, up to 18 °C.",
        "Thursday: Sunny, up to 19 °C.",
    ]
    # The stable part stays the same for every reading: the server's cache holds.
    assert "Partly cloudy" not in request["messages"][0]["content"]


@pytest.mark.usefixtures("live_entities")
async def test_the_live_data_read_out_whole_is_no_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Seen on the bundled model at temperature 0: "Pff, wat een dag zeg." met
    with the whole block, which the session then taught every next answer to
    repeat. It is never spoken; one line of it answers ("how windy is it?")."""
    fake_server.queue(fake.text("Fine."))
    await converse(hass, "How windy is it?")
    block = live_lines(fake_server.requests[0])
    fake_server.queue(
        fake.text("\n".join(block)),
        fake.text("What a day indeed!"),
        fake.text(block[2]),
    )
    turn = await converse_streaming(hass, "Phew, what a day.")
    assert turn.speech == "What a day indeed!"
    assert block[0] not in turn.streamed_text
    result = await converse(hass, "How windy is it?")
    assert speech(result) == block[2]


@pytest.mark.usefixtures("live_entities")
@pytest.mark.parametrize(
    ("language", "question", "label"),
    [
        ("en", "What's the forecast for Wednesday?", "Wednesday:"),
        ("de", "Wie wird das Wetter am Mittwoch?", "Mittwoch:"),
        ("fr", "Quel temps fera-t-il mercredi ?", "Mercredi :"),
    ],
)
async def test_the_live_data_read_out_says_the_line_the_question_names(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    question: str,
    label: str,
) -> None:
    """Seen on the bundled model at temperature 0: "What's the forecast for
    Friday?" answered with the whole block, asked again, the same again, and
    the user heard "the local model gave no answer". The line the question's
    words name is said instead, with no second request."""
    block = await live_block(hass, fake_server, language=language)
    (line,) = [line for line in block if line.startswith(label)]
    fake_server.queue(fake.text("\n".join(block)))
    turn = await converse_streaming(hass, question, language=language)
    assert turn.speech == turn.streamed_text == speakable(line)
    assert len(fake_server.requests) == 2


@pytest.mark.usefixtures("live_entities")
async def test_the_live_data_read_out_for_a_question_naming_no_line(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Found by review: "What's the weather like?" answered with the whole
    block ended in "the local model gave no answer" (no line's label is
    named). Its first line, the weather now, is said."""
    block = await live_block(hass, fake_server)
    fake_server.queue(fake.text("\n".join(block)))
    turn = await converse_streaming(hass, "What's the weather like?")
    assert turn.speech == turn.streamed_text == speakable(block[0])
    assert len(fake_server.requests) == 2


@pytest.mark.usefixtures("live_entities")
async def test_the_live_data_is_in_the_users_language(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    fake_server.queue(fake.text("Ja."))
    await converse(hass, "Brauche ich morgen eine Jacke?", language="de")
    lines = live_lines(fake_server.requests[0])
    assert lines[0] == "Aktuell: Teilweise bewölkt, 12,5 °C."
    # Small models drift into English: the varying part ends with the language.
    system = [m for m in fake_server.requests[0]["messages"] if m["role"] == "system"]
    assert system[-1]["content"].endswith("\n\nAntworte auf Deutsch.")
    assert lines[-2].startswith("Mittwoch: Sonnig")
    assert any("1,2 m" in line for line in lines)


@pytest.mark.usefixtures("live_entities")
async def test_a_repeated_instruction_is_asked_again_and_never_kept(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The bundled model answered a French session with the prompt's last line
    ("Réponds en français."), and, kept in the session, with nothing else."""
    fake_server.queue(
        fake.text("Réponds en français."),
        fake.text("Oui, il va pleuvoir demain."),
        fake.text("Réponds en français."),
        fake.text("Réponds en français."),
    )
    turn = await converse_streaming(hass, "Il va pleuvoir demain ?", language="fr")
    assert turn.speech == "Oui, il va pleuvoir demain."
    assert "Réponds" not in turn.streamed_text
    assert len(fake_server.requests) == 2

    second = await converse_streaming(
        hass,
        "Et après-demain, il fera beau ?",
        turn.result.conversation_id,
        language="fr",
    )
    assert second.speech == spoken_sentence("no_answer", "fr")
    assert "Réponds" not in second.streamed_text
    # Neither repeat joins the session the next request replays.
    fake_server.queue(fake.text("Oui."))
    await converse(
        hass,
        "Et samedi ?",
        conversation_id=second.result.conversation_id,
        language="fr",
    )
    replayed = [
        m["content"]
        for m in fake_server.requests[-1]["messages"]
        if m["role"] != "system"
    ]
    assert "Réponds en français." not in replayed


@pytest.mark.usefixtures("live_entities")
async def test_a_line_of_the_live_data_may_be_the_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    fake_server.queue(fake.text("Waves: 1.2 m."))
    turn = await converse_streaming(hass, "How big are the waves?")
    assert turn.speech == "Waves: 1.2 m."
    assert len(fake_server.requests) == 1


@pytest.mark.usefixtures("live_entities")
@pytest.mark.parametrize(
    ("language", "question", "label", "answer", "heard"),
    [
        ("en", "Do I need the fan tomorrow?", "Tomorrow:", "line", True),
        ("de", "Brauche ich morgen den Ventilator?", "Morgen:", "line", True),
        # The whole block read out: the line the words name is said.
        ("en", "Do I need the fan tomorrow?", "Tomorrow:", "block", True),
        ("en", "Do I need the fan tomorrow?", "Tomorrow:", "The fan is on now.", False),
        # A number of the live data in the model's own words is no reading.
        (
            "en",
            "Do I need the fan tomorrow?",
            "Tomorrow:",
            "The fan is set to 16.",
            False,
        ),
    ],
)
async def test_a_questions_refused_change_is_answered_from_the_live_data(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    question: str,
    label: str,
    answer: str,
    heard: bool,
) -> None:
    """Seen on the bundled model: "Brauche ich morgen einen Schirm?" met with
    HassTurnOn(name="schirm"), refused (the words name no device), then
    answered with the live data's line for tomorrow, which was held: the user
    heard that nothing was changed. An answer made of the live data's lines
    is what was read, and is spoken; anything else may claim the change."""
    block = await live_block(hass, fake_server, language=language)
    (line,) = [line for line in block if line.startswith(label)]
    text = {"line": line, "block": "\n".join(block)}.get(answer, answer)
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "fan"})]), fake.text(text)
    )
    turn = await converse_streaming(hass, question, language=language)
    if heard:
        assert turn.speech == speakable(line)
        assert turn.result.response.response_type is not intent.IntentResponseType.ERROR
    else:
        assert turn.speech == spoken_sentence("nothing_changed", language)
        assert text not in turn.streamed_text
    assert len(fake_server.requests) == 3
    (tool_result,) = [
        content
        for content in turn.chat_log.content
        if isinstance(content, conversation.ToolResultContent)
    ]
    assert tool_result.tool_result["error"] == "NotNamedByTheUser"


@pytest.mark.usefixtures("live_entities")
@pytest.mark.parametrize("language", ["en", "es", "de", "fr", "nl"])
async def test_an_answer_reading_out_live_lines_is_said_but_not_replayed(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
) -> None:
    """Seen on the bundled model (e2e statements, dev home): "Ma mère s'appelle
    Odile et elle vit à Annecy." answered with a made-up first line and the
    live block after it; replayed, the next (Dutch) statement got the same
    French block. Such an answer is said, never replayed; one line is."""
    block = await live_block(hass, fake_server, language=language)
    read_out = "\n".join(["Local weather forecast: Annecy, 23,8 °C.", *block[2:5]])
    fake_server.queue(fake.text(read_out), fake.text("OK."))
    first = await converse_streaming(
        hass, "My mother lives in Annecy.", language=language
    )
    assert first.speech == speakable(read_out)
    conversation_id = first.result.conversation_id
    await converse(hass, "Thanks.", conversation_id=conversation_id, language=language)
    replayed = [
        m["content"]
        for m in fake_server.requests[-1]["messages"]
        if m["role"] != "system"
    ]
    # The answer never joins the session; the words do, as for a tool turn.
    assert replayed == ["My mother lives in Annecy.", "Thanks."]
    # One line of the live data is an answer like any other, and replayed.
    fake_server.queue(fake.text(block[0]), fake.text("Bye."))
    await converse(hass, "And now?", conversation_id=conversation_id, language=language)
    await converse(hass, "Bye.", conversation_id=conversation_id, language=language)
    replayed = [
        m["content"]
        for m in fake_server.requests[-1]["messages"]
        if m["role"] != "system"
    ]
    assert speakable(block[0]) in replayed


@pytest.mark.usefixtures("live_entities")
async def test_the_live_data_read_out_after_a_command_is_no_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Words that ask nothing ("Tell me a joke about Wednesday.") name no line:
    the block is asked for again, as before."""
    block = await live_block(hass, fake_server)
    fake_server.queue(fake.text("\n".join(block)), fake.text("Why did the sun shine?"))
    turn = await converse_streaming(hass, "Tell me a joke about Wednesday.")
    assert turn.speech == "Why did the sun shine?"
    assert "Wednesday:" not in turn.streamed_text


@pytest.mark.parametrize("agent_options", [BASE_OPTIONS])
async def test_no_live_data_without_live_tools(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    fake_server.queue(fake.text("Hello."))
    await converse(hass, "hello")
    assert not has_live_data(fake_server.requests[0])


@pytest.mark.usefixtures("live_entities")
@pytest.mark.parametrize("agent_options", [BASE_OPTIONS])
async def test_the_one_exposed_weather_entity_gives_the_weather_lines(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """No weather tool picked: the weather exposed to Assist is read instead."""
    expose_weather(hass, WEATHER)
    fake_server.queue(fake.text("It is 12.5 °C."))
    result = await converse(hass, "What is the temperature outside?")
    assert speech(result) == "It is 12.5 °C."
    (request,) = fake_server.requests
    lines = live_lines(request)
    assert lines[0] == "Now: Partly cloudy, 12.5 °C."
    assert lines[2].startswith("Today: Rainy, 8 °C to 14.2 °C")
    # Lines only: the agent offers no weather tool it was not given.
    assert "local_weather_forecast" not in {
        tool["function"]["name"] for tool in request.get("tools") or ()
    }


@pytest.mark.usefixtures("live_entities")
@pytest.mark.parametrize("agent_options", [BASE_OPTIONS])
@pytest.mark.parametrize("exposed", [(), (WEATHER, WEATHER_DAILY_ONLY)])
async def test_no_weather_lines_unless_exactly_one_weather_entity_is_exposed(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    exposed: tuple[str, ...],
) -> None:
    """Unexposed, the entity is not the model's to read; of two, which is
    outside is the user's choice (the weather option)."""
    expose_weather(hass, *exposed)
    fake_server.queue(fake.text("Hello."))
    await converse(hass, "hello")
    assert not has_live_data(fake_server.requests[0])


NO_API_OPTIONS = {
    key: value for key, value in BASE_OPTIONS.items() if key != CONF_LLM_HASS_API
}
SEA_WITHOUT_WIND = {
    **BASE_OPTIONS,
    "sea_wave_height": [WAVES],
    "sea_water_temperature": [WATER],
    "kite_min_wind_kn": 12,
    "kite_max_wind_kn": 25,
    "kite_directions": ["W", "NW", "N"],
}


@pytest.mark.usefixtures("live_entities")
@pytest.mark.parametrize("agent_options", [NO_API_OPTIONS])
async def test_an_agent_without_assist_never_reads_the_exposed_weather(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Exposure is a permission of HA's Assist API, not of every agent."""
    expose_weather(hass, WEATHER)
    fake_server.queue(fake.text("Hello."))
    await converse(hass, "hello")
    assert not has_live_data(fake_server.requests[0])


@pytest.mark.usefixtures("live_entities")
@pytest.mark.parametrize(
    "agent_options", [{**LIVE_OPTIONS, "weather_entity": WEATHER_DAILY_ONLY}]
)
async def test_the_weather_option_wins_over_an_exposed_weather_entity(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    expose_weather(hass, WEATHER)
    exposed = hass.states.get(WEATHER)
    assert exposed is not None
    hass.states.async_set(WEATHER, "sunny", {**exposed.attributes, "temperature": 30})
    fake_server.queue(fake.text("It is 12.5 °C."))
    await converse(hass, "What is the temperature outside?")
    lines = live_lines(fake_server.requests[0])
    assert lines[0] == "Now: Partly cloudy, 12.5 °C."
    assert not any("30 °C" in line for line in lines)


@pytest.mark.usefixtures("live_entities")
@pytest.mark.parametrize("agent_options", [SEA_WITHOUT_WIND])
async def test_the_exposed_weather_gives_the_kite_verdict_its_wind(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """No wind sensor at the beach: the weather's wind decides, as with the option."""
    expose_weather(hass, WEATHER)
    fake_server.queue(fake.text("No."))
    await converse(hass, "Can I go kitesurfing now?")
    lines = live_lines(fake_server.requests[0])
    kite = [line for line in lines if line.startswith("Kitesurfing now:")]
    assert kite == [
        "Kitesurfing now: no, 9.7 kn from the south-west is below your minimum of 12 kn."
    ], lines


@pytest.mark.usefixtures("live_entities")
async def test_a_sensor_that_cannot_be_read_never_ends_the_turn(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(*_args: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(
        "custom_components.local_assistant.tools.sea.read_sensor", broken
    )
    fake_server.queue(fake.text("It is partly cloudy."))
    result = await converse(hass, "What is it like outside?")
    assert speech(result) == "It is partly cloudy."
    lines = live_lines(fake_server.requests[0])
    assert lines[0] == "Now: Partly cloudy, 12.5 °C."
    assert "Live data of local_sea_conditions could not be read" in caplog.text


@pytest.mark.usefixtures("live_entities")
async def test_a_template_slot_of_the_prompt_is_never_spoken(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """HA's own prompt shows "The temperature outside is [value from tool]." and
    the bundled model repeats it: the slot is never spoken, nor anything after
    it, and the user hears that the agent could not check."""
    fake_server.queue(
        fake.text("The temperature outside is [value from tool]. Enjoy the day!")
    )
    turn = await converse_streaming(hass, "How warm is it outside?")
    # Not half said either: "The temperature outside isSorry, ..." was streamed.
    assert turn.streamed_text == spoken_sentence("could_not_check")
    assert "[" not in turn.streamed_text
    assert "value from tool" not in turn.streamed_text
    assert "Enjoy" not in turn.streamed_text
    assert turn.speech == spoken_sentence("could_not_check")


@pytest.mark.usefixtures("live_entities")
async def test_words_that_may_be_a_copied_example_end_at_a_tool_call(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Found by review: held example words came out after the tool call."""
    fake_server.queue(
        fake.tool_calls([("GetLiveContext", {})], content="The temperature outside is"),
        fake.text("It is 12.5 °C."),
    )
    turn = await converse_streaming(hass, "How warm is it outside?")
    assert "The temperature outside is" not in turn.streamed_text
    assert turn.speech == "It is 12.5 °C."


@pytest.mark.usefixtures("live_entities")
@pytest.mark.parametrize("language", ["en", "de", "nl"])
async def test_the_live_data_read_out_with_its_heading_is_said_without_it(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
) -> None:
    """Seen on the bundled model (session set, this pass): a statement ("That
    oil heater up in the office has started ticking") answered with the
    prompt's live block, heading first: "Live data, read just now (answer
    questions about the weather ...):" was spoken. The data may be said; the
    heading is our instruction and never is."""
    block = await live_block(hass, fake_server, language=language)
    fake_server.queue(fake.text("\n".join([LIVE_HEADING, *block[:3]])))
    turn = await converse_streaming(
        hass, "The heater in the office makes a noise.", language=language
    )
    assert "answer questions" not in turn.speech
    assert not turn.speech.startswith("Live data")
    assert turn.speech == speakable("\n".join(block[:3]))
