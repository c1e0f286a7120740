"""A sentence about the live data states only numbers the model was shown (llm/values.py).

The check gets the lines the user's words name; these tests hand it lines
directly (as if the question named them all) unless they test the naming.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from custom_components.local_assistant.llm.spoken import speakable
from custom_components.local_assistant.llm.values import (
    ValueCheck,
    made_up_numbers,
    message_texts,
    named_lines,
    shown_numbers,
)
from custom_components.local_assistant.tools.phrases import (
    DayForecast,
    now_line,
    waves_line,
)
from tests.tools.test_phrases import phrases_of

TODAY = date(2026, 12, 7)


def live_lines(language: str) -> list[str]:
    """A home's lines in ``language``, as said (llm/spoken.py): rain now at
    9 °C, waves 2.1 m every 8 s, tomorrow pouring, 6 to 9 °C, 11.4 mm of
    rain at 90 %."""
    from custom_components.local_assistant.tools.phrases import day_line

    phrases = phrases_of(language)
    tomorrow = DayForecast(
        TODAY + timedelta(days=1), "pouring", 9.0, 6.0, 90.0, 11.4, "°C", "mm"
    )
    return [
        speakable(line)
        for line in (
            now_line(phrases, "rainy", 9.0, "°C"),
            waves_line(phrases, 2.1, "m", 8.0),
            day_line(phrases, tomorrow, TODAY),
        )
    ]


def check(language: str, *texts: str) -> tuple[str, ValueCheck]:
    """What is said of an answer streamed in ``texts``, and the check."""
    lines = live_lines(language)
    values = ValueCheck(shown_numbers(lines), lines)
    said = "".join(values.feed(text) for text in texts) + values.flush()
    return said, values


# The bundled model's made-up wave heights, as people's languages write them;
# each names the waves as the line's label does.
MADE_UP_WAVES = {
    "en": "The waves are 5.5 meters high.",
    "de": "Die Wellen sind 5,5 meters hoch.",
    "es": "Las olas miden 5,5 metros.",
    "fr": "Les vagues font 5,5 mètres.",
    "nl": "De golven zijn 5,5 meter hoog.",
}


@pytest.mark.parametrize("language", sorted(MADE_UP_WAVES))
def test_a_made_up_value_is_replaced_by_the_line_the_sentence_names(
    language: str,
) -> None:
    said, values = check(language, MADE_UP_WAVES[language])
    assert said == live_lines(language)[1]
    assert values.made_up == ["5,5" if language != "en" else "5.5"]


@pytest.mark.parametrize("language", sorted(MADE_UP_WAVES))
def test_values_the_model_was_shown_are_said_as_written(language: str) -> None:
    """2.1 m, and 11 mm for 11.4 (the answer's rounding), in every language."""
    decimal = phrases_of(language).texts["decimal"]
    answer = MADE_UP_WAVES[language].replace(f"5{decimal}5", f"2{decimal}1")
    said, values = check(language, answer)
    assert said == answer
    assert not values.made_up


def test_rounding_is_within_the_last_digit_the_answer_writes() -> None:
    shown = shown_numbers(["11.4 mm, 2.14 m"])
    assert made_up_numbers("11 mm, 12 mm, 2.1 m, 2 m", shown) == []
    assert made_up_numbers("10 mm, 2.3 m, 13 mm", shown) == ["10", "2.3", "13"]


def test_a_thousands_point_reads_as_both() -> None:
    """German and Dutch write 1.013 hPa; 1013 then is no made-up number."""
    assert made_up_numbers("1013 hPa", shown_numbers(["Druck: 1.013 hPa."])) == []
    assert made_up_numbers("1.013 hPa", shown_numbers(["Pressure: 1013 hPa."])) == []


def test_a_sentence_naming_no_live_line_is_not_checked() -> None:
    """A recipe: its numbers are knowledge, not live data."""
    answer = "Etwa vierzig Minuten bei 180 Grad. Guten Appetit!"
    said, values = check("de", answer)
    assert said == answer
    assert not values.made_up


def test_only_the_sentence_with_the_made_up_value_is_replaced() -> None:
    lines = live_lines("en")
    said, values = check(
        "en",
        "It is raining right now. ",
        "Tomorrow it will be 25 °C and sunny. ",
        "Enjoy!",
    )
    assert said == f"It is raining right now. {lines[2]} Enjoy!"
    assert values.made_up == ["25"]


def test_nothing_of_a_replaced_sentence_is_given_before_it_ends() -> None:
    lines = live_lines("de")
    values = ValueCheck(shown_numbers(lines), lines)
    assert values.feed("Die Wellen sind ") == ""
    assert values.feed("5,5 meters") == ""
    assert values.feed(" hoch. Viel") == lines[1] + " "
    assert values.flush() == "Viel"


def test_an_ordinal_date_does_not_end_a_sentence() -> None:
    """ "Morgen, am 24. Dezember, ..." is checked as one sentence."""
    said, values = check("de", "Morgen, am 24. Dezember, werden es 20 Grad.")
    assert said == live_lines("de")[2]
    assert values.made_up == ["24", "20"]


def test_a_line_already_said_is_not_said_again() -> None:
    lines = live_lines("en")
    said, _ = check("en", f"{lines[1]}\n", "The waves will be 4 m.")
    assert said == f"{lines[1]}\n"


def test_a_weekday_is_the_line_it_stands_for() -> None:
    """ "Tuesday" asked on Monday is the "Tomorrow" line."""
    lines = live_lines("en")
    values = ValueCheck(shown_numbers(lines), lines, {"Tomorrow": "Tuesday"})
    said = values.feed("On Tuesday it will be 25 degrees.") + values.flush()
    assert said == lines[2]


def test_without_live_lines_nothing_is_held() -> None:
    values = ValueCheck(frozenset())
    assert values.feed("Waves: 5.5 m") == "Waves: 5.5 m"
    assert values.flush() == ""


def test_the_messages_shown_are_every_content_and_call() -> None:
    messages = [
        {"role": "system", "content": "Wind: 22 kn."},
        {"role": "user", "content": "Is 25 knots too much?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"function": {"name": "x", "arguments": '{"hours": 6}'}}],
        },
        {"role": "tool", "content": '{"gust": 31.5}'},
    ]
    assert shown_numbers(message_texts(messages)) == {22.0, 25.0, 6.0, 31.5}


@pytest.mark.parametrize(
    ("language", "question", "label"),
    [
        ("en", "Is it windy at the beach?", "Wind"),
        ("en", "How big is the wave today?", "Waves"),
        ("de", "Kommt morgen eine hohe Welle?", "Wellen"),
        ("es", "¿Lloverá mañana?", "Mañana"),
        ("fr", "Il pleut demain ?", "Demain"),
        ("nl", "Hoe hoog zijn de golven nu?", "Golven"),
    ],
)
def test_a_question_names_a_line_by_its_label_word(
    language: str, question: str, label: str
) -> None:
    lines = live_lines(language)
    lines.append(f"{label}: 3.")  # the label under test, whatever the phrases say
    assert any(line.startswith(label) for line in named_lines(lines, question))


@pytest.mark.parametrize(
    "text",
    [
        "Open the window for ten minutes.",  # "window" only starts with "Wind"
        "Un aguacate tiene muchas calorías.",  # "aguacate" starts with "Agua"
        "Knowing this helps.",  # "Now" inside a word
    ],
)
def test_a_word_a_label_only_starts_names_no_line(text: str) -> None:
    lines = ["Wind: 8 kn.", "Agua: 16 °C.", "Now: Sunny, 9 °C."]
    assert named_lines(lines, text) == []
