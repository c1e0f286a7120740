"""An answer stuck in a loop ends at its last repeat (llm/stream.py)."""

from __future__ import annotations

from homeassistant.core import HomeAssistant
import pytest
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


def test_the_tenth_run_of_the_same_words_is_the_last_thing_said() -> None:
    """Seen on the bundled model in a German session: "Ich kann das momentan
    drin drin drin ..." until max_tokens, all of it spoken."""
    guard = LoopGuard()
    said = "".join(
        guard.feed(piece) for piece in ["Ich kann das momentan dr", "in drin", " drin "]
    )
    assert not guard.looping
    said += guard.feed("drin  " * 20)
    assert said == "Ich kann das momentan drin drin drin " + "drin  " * 6 + "drin "
    assert guard.looping
    guard = LoopGuard()
    assert guard.feed("Ja, " + "das stimmt, " * 30) == "Ja, " + "das stimmt, " * 10


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
    """The user hears the start and ten "drin", not three hundred."""
    fake_server.queue(fake.text("Ich kann das momentan " + "drin " * 300))
    turn = await converse_streaming(hass, "Wie warm ist es drin?", language="de")
    assert turn.speech.count("drin") == 10
    assert turn.streamed_text.count("drin") == 10
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


def _said(text: str) -> tuple[str, bool]:
    guard = LoopGuard()
    return guard.feed(text), guard.looping

    # Found by review of the first word-run rule (cut at four repeats): ordinary
    # answers that repeat words or values.
    return guard.feed(text), guard.looping


@pytest.mark.parametrize(
    "answer",
    [
        "Rain in the next hours: 0 mm, 0 mm, 0 mm, 0 mm, 0 mm, then 4 mm at 6 pm.",
        "Regen: 0 mm, 0 mm, 0 mm, 0 mm, ab 18 Uhr dann 4 mm.",
        "Wind: 0 km/h, 0 km/h, 0 km/h, 0 km/h, vanaf 12 uur 30 km/h.",
        "Highs for the next four days: 12 °C, 12 °C, 12 °C, 12 °C. On Friday only 4 °C.",
        "Prévisions : 12 °C ; 12 °C ; 12 °C ; 12 °C ; puis 3 °C vendredi.",
        "Pronóstico: 20 grados, 20 grados, 20 grados, 20 grados y el viernes 8.",
        "Prognoza: 20 stopni, 20 stopni, 20 stopni, 20 stopni, w piątek 8.",
        "Tonight hour by hour: 5°C, 5°C, 5°C, 5°C, 5°C, 5°C, 5°C, 5°C, and -3°C at six.",
    ],
    ids=["en-rain", "de-rain", "nl-wind", "en-highs", "fr", "es", "pl", "en-hourly"],
)
def test_a_forecast_whose_values_repeat_is_said_whole(answer: str) -> None:
    """The user asks "Will it rain today?" / "Wie wird das Wetter?" and the live
    data really says the same value for four hours or days. They hear "0 mm,
    0 mm, 0 mm, 0 mm," and nothing more: the change that matters ("then 4 mm
    at 6 pm", "Friday only 4 °C") is cut off. They should hear the whole answer.
    ("5°C" is a two-character word: eight of them count as four "5°C 5°C"
    pairs, though the rule says runs under four characters do not count.)
    """
    said, looping = _said(answer)
    assert said == answer
    assert not looping


def test_a_sum_of_equal_numbers_is_not_cut_to_a_wrong_equation() -> None:
    """The user asks "What is 4 times 1500?". The model writes the sum out
    with four 1500s. The first rule heard "4 times 1500 = 1500 + 1500 + 1500"
    (a wrong equation, no result): the signs have no letters or digits and
    were skipped. They should hear the whole sum and 6000.
    """
    answer = "4 × 1500 = 1500 + 1500 + 1500 + 1500 = 6000. So 6000."
    said, looping = _said(answer)
    assert said == answer
    assert not looping


@pytest.mark.parametrize(
    "answer",
    [
        "The default PIN is zero zero zero zero. Change it in the app.",
        "Die Standard-PIN ist null null null null. Ändere sie in der App.",
        "Le code par défaut est zéro zéro zéro zéro. Changez-le dans l'appli.",
        "El PIN es cuatro cuatro cuatro cuatro. Cámbialo en la app.",
    ],
    ids=["en", "de", "fr", "es"],
)
def test_a_spelled_code_is_said_whole(answer: str) -> None:
    """The user asks "What's the router's default PIN?". They hear "... zero
    zero zero zero." and not the advice after it (while "one one one one",
    three letters, would pass). They should hear the whole answer.
    """
    said, looping = _said(answer)
    assert said == answer
    assert not looping


@pytest.mark.parametrize(
    "answer",
    [
        "Buffalo buffalo Buffalo buffalo buffalo buffalo Buffalo buffalo. It means "
        "that bison from Buffalo, whom other bison bully, bully bison too.",
        "James, while John had had had had had had had had had had had a better "
        "effect on the teacher. It shows why punctuation matters.",
        "The clock goes tick tock tick tock tick tock tick tock, and then it rings.",
    ],
    ids=["buffalo", "had-had", "tick-tock"],
)
def test_wordplay_with_repeated_words_is_said_whole(answer: str) -> None:
    """The user asks "What is the buffalo sentence?". They hear "Buffalo
    buffalo Buffalo buffalo" and no explanation; "had had had had had had had
    had" (a three-letter word, counted by pairs) likewise. They should hear the
    whole answer.
    """
    said, looping = _said(answer)
    assert said == answer
    assert not looping


async def test_a_repeating_forecast_is_heard_whole_and_kept(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The user asks "Regnet es heute noch?"; no rain for five hours, then 4 mm.
    They hear "Regen: 0 mm, 0 mm, 0 mm, 0 mm," and not when it rains; the
    answer is taken for a loop, so it is not replayed and "Und wie viel
    genau?" has nothing to refer to. They should hear and keep the whole answer.
    """
    ada = await create_user(hass, "Ada")
    answer = "Regen: 0 mm, 0 mm, 0 mm, 0 mm, 0 mm, ab 18 Uhr dann 4 mm."
    fake_server.queue(fake.text(answer), fake.text("Etwa 4 mm."))
    first = await converse_streaming(
        hass, "Regnet es heute noch?", user_id=ada, language="de"
    )
    assert "18 Uhr" in first.speech
    assert "18 Uhr" in first.streamed_text
    await converse_streaming(
        hass,
        "Und wie viel genau?",
        first.result.conversation_id,
        user_id=ada,
        language="de",
    )
    replayed = [str(m["content"]) for m in fake_server.requests[-1]["messages"]]
    assert "Regnet es heute noch?" in replayed
