"""An answer stuck in a loop ends at its last repeat (llm/stream.py)."""

from __future__ import annotations

from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.llm.stream import LoopGuard
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse_streaming
from tests.helpers.memory import create_user


def test_the_third_repeat_is_the_last_thing_said() -> None:
    guard = LoopGuard()
    said = [
        guard.feed(piece)
        for piece in ["Cherry tomatoes\nSpin", "ach\nSpinach\n", "Spinach\nSpinach\n"]
    ]
    assert "".join(said) == "Cherry tomatoes\nSpinach\nSpinach\nSpinach\n"
    assert guard.looping
    assert guard.feed("Spinach\n") == ""


def test_repeats_are_compared_loosely_and_short_ones_do_not_count() -> None:
    guard = LoopGuard()
    text = "No. No. No. No. Try it. try  it! TRY IT?\n"
    assert guard.feed(text) == text
    assert guard.looping


def test_repeats_apart_and_decimals_are_no_loop() -> None:
    """Found by review: "5 mm of rain." thrice, and a recipe's "Stir well."."""
    for text in (
        "Monday: 12.5 mm of rain. Tuesday: 3.5 mm of rain. Wednesday: 7.5 mm of "
        "rain. Thursday stays dry.",
        "Stir well. Add salt. Stir well. Add pepper. Stir well. Serve.",
    ):
        guard = LoopGuard()
        assert guard.feed(text) == text
        assert not guard.looping


def test_the_fourth_run_of_the_same_words_is_the_last_thing_said() -> None:
    """Seen on the bundled model in a German session: "Ich kann das momentan
    drin drin drin ..." until max_tokens; and "0 km/h, 0 km/h, ..."."""
    guard = LoopGuard()
    said = "".join(
        guard.feed(piece) for piece in ["Ich kann das momentan dr", "in drin", " drin "]
    )
    assert not guard.looping
    said += guard.feed("drin drin drin drin")
    assert said == "Ich kann das momentan drin drin drin drin "
    assert guard.looping
    guard = LoopGuard()
    assert guard.feed("Heute: " + "0 km/h, " * 20) == "Heute: " + "0 km/h, " * 4


def test_short_or_interrupted_word_repeats_are_no_loop() -> None:
    for text in (
        "ha ha ha ha ha, that is a good one.",
        "It was very, very, very cold.",
        "Rain, then rain, then rain, then rain again.",
    ):
        guard = LoopGuard()
        assert guard.feed(text) == text
        assert not guard.looping


def test_an_ordinary_answer_passes_whole() -> None:
    guard = LoopGuard()
    text = "It will rain tomorrow. Take a jacket. It will be windy too."
    assert guard.feed(text) == text
    assert not guard.looping


async def test_a_looping_answer_is_cut_at_the_third_repeat(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    fake_server.queue(fake.text("Sure. " + "Try the spinach. " * 200))
    turn = await converse_streaming(hass, "what should I plant on the balcony")
    assert turn.speech.count("spinach") == 3
    assert turn.streamed_text.count("spinach") == 3
    assert len(fake_server.requests) == 1


async def test_a_word_loop_is_cut_and_the_server_stops_writing(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The user hears the start and four "drin", not three hundred."""
    fake_server.queue(fake.text("Ich kann das momentan " + "drin " * 300))
    turn = await converse_streaming(hass, "Wie warm ist es drin?", language="de")
    assert turn.speech.count("drin") == 4
    assert turn.streamed_text.count("drin") == 4
    assert len(fake_server.requests) == 1


async def test_a_looping_answer_is_never_replayed(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Seen on the bundled model: the loop, kept in the session, made every
    later answer loop the same way."""
    ada = await create_user(hass, "Ada")
    fake_server.queue(fake.text("Try the spinach. " * 50), fake.text("Hello."))
    first = await converse_streaming(hass, "what should I plant", user_id=ada)
    await converse_streaming(hass, "hello", first.result.conversation_id, user_id=ada)
    replayed = [m["content"] for m in fake_server.requests[-1]["messages"]]
    assert "what should I plant" not in replayed
    assert not any("spinach" in str(content) for content in replayed)


async def test_an_answer_that_names_a_tool_is_never_replayed(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Seen on the bundled model (Spanish tuning session): "Para ..., puedes
    usar la función HassLightSet ...", kept in the session, made the next
    answers describe tools the same way instead of answering."""
    ada = await create_user(hass, "Ada")
    fake_server.queue(
        fake.text("Para encender la luz, puedes usar la función HassLightSet."),
        fake.text("Hola."),
    )
    first = await converse_streaming(
        hass, "¿cómo enciendo la luz?", user_id=ada, language="es"
    )
    assert "HassLightSet" in first.speech  # said once, as the model gave it
    await converse_streaming(
        hass, "hola", first.result.conversation_id, user_id=ada, language="es"
    )
    replayed = [str(m["content"]) for m in fake_server.requests[-1]["messages"]]
    assert not any("HassLightSet" in content for content in replayed[1:])
    assert "¿cómo enciendo la luz?" not in replayed
