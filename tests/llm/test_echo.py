"""An answer that only repeats the user's words or an instruction (llm/echo.py)."""

from __future__ import annotations

import pytest

from custom_components.local_assistant.llm.echo import (
    EchoHold,
    echo_key,
    echo_keys,
    echo_labels,
    echo_lines,
    echo_words,
    live_readout,
    reads_out_live_lines,
    restatement_keys,
)

KEYS = echo_keys("Open the garage.", ["Réponds en français.", "Answer briefly."])


def stream(hold: EchoHold, pieces: list[str]) -> list[str]:
    """What is shown after each piece, then at the end."""
    return [hold.feed(piece) for piece in pieces] + [hold.flush()]


def test_a_repeat_of_the_users_words_is_never_shown() -> None:
    hold = EchoHold(KEYS)
    assert stream(hold, ["Open", " the gar", "age"]) == ["", "", "", ""]
    assert hold.echoed


def test_a_repeated_instruction_is_never_shown() -> None:
    hold = EchoHold(KEYS)
    assert "".join(stream(hold, ["« Réponds en ", "Français ! »"])) == ""
    assert hold.echoed


def test_an_answer_is_released_as_soon_as_it_differs() -> None:
    hold = EchoHold(KEYS)
    shown = stream(hold, ["Open", "ing the garage", " now."])
    assert shown == ["", "Opening the garage", " now.", ""]
    assert not hold.echoed


def test_the_start_of_an_instruction_alone_is_an_answer() -> None:
    hold = EchoHold(KEYS)
    assert "".join(stream(hold, ["Answer"])) == "Answer"
    assert not hold.echoed


def test_a_short_greeting_may_be_answered_in_kind() -> None:
    keys = echo_keys("Bonjour !", [])
    hold = EchoHold(keys)
    assert stream(hold, ["Bonjour !"]) == ["Bonjour !", ""]


def test_text_before_tool_calls_is_dropped_not_flagged() -> None:
    hold = EchoHold(KEYS)
    assert hold.feed("Open the") == ""
    hold.drop()
    assert hold.feed(" garage.") == " garage."
    assert not hold.echoed


def said(user_text: str, pieces: list[str]) -> tuple[str, bool]:
    """What is shown of an answer streamed in ``pieces``, and whether it echoed."""
    hold = EchoHold(echo_keys(user_text, []), echo_words(user_text))
    return "".join(stream(hold, pieces)), hold.echoed


@pytest.mark.parametrize(
    ("user_text", "answer"),
    [
        ("Open the garage door.", "Yes, the garage door is opened."),
        (
            "Kun je het rolluik boven tot de helft optrekken?",
            "Ja, ik kan het rolluik boven tot de helft optrekken.",
        ),
        ("Knips die Leselampe an, bitte.", "Die Leselampe ist an."),
        ("Ferme le volet de la chambre.", "Le volet de la chambre est fermé."),
        ("Apaga la lamparita del dormitorio.", "Apagada la lamparita del dormitorio."),
        ("Turn the heating to 21 degrees.", "The heating is now set to 21 degrees."),
        (
            "Il fait tout noir dans le bureau, allume.",
            "Oui, le bureau est noir. Il est allumé.",
        ),
    ],
)
def test_the_users_words_made_into_a_claim_are_never_shown(
    user_text: str, answer: str
) -> None:
    """Before any tool ran, an answer with no word of its own says nothing the
    user did not, in any language: seen as claims of actions that never ran."""
    pieces = [answer[i : i + 4] for i in range(0, len(answer), 4)]
    assert said(user_text, pieces) == ("", True)


@pytest.mark.parametrize(
    ("user_text", "answer"),
    [
        ("Close the bedroom blind, please.", "Sure! Close the bedroom blind, please."),
        ("Mach das Licht im Flur an.", "Na klar, mach das Licht im Flur an."),
        ("Allume la lampe du salon.", "D'accord ! Allume la lampe du salon."),
        (
            "Zet de ventilator op de zolder aan.",
            "Oké, zet de ventilator op de zolder aan",
        ),
        ("Pon en marcha el lavavajillas.", "¡Claro! Pon en marcha el lavavajillas."),
    ],
)
def test_the_users_words_after_a_word_or_two_are_never_shown(
    user_text: str, answer: str
) -> None:
    """Seen on the bundled model, held out: six Spanish commands answered
    "¡Claro! <the command>", spoken as claims (nothing ran). Where the words
    may claim, a repeat after up to two words of the model's own is one."""
    pieces = [answer[i : i + 3] for i in range(0, len(answer), 3)]
    assert said(user_text, pieces) == ("", True)


def test_a_lead_word_then_something_new_streams() -> None:
    """The hold lasts while the answer may still become such a repeat."""
    hold = EchoHold(
        echo_keys("Pon en marcha el lavavajillas.", []),
        echo_words("Pon en marcha el lavavajillas."),
    )
    assert hold.feed("¡Claro! ") == ""
    assert hold.feed("Pon en ") == ""
    assert hold.feed("cuanto pueda.") == "¡Claro! Pon en cuanto pueda."
    # Without the user's words to compare (a question), nothing is held for it.
    question = EchoHold(echo_keys("Il va pleuvoir demain ?", []))
    assert question.feed("Oui ! ") == "Oui ! "


@pytest.mark.parametrize(
    ("user_text", "answer"),
    [
        (
            "The oil heater in the office is ticking.",
            "That's the metal expanding as it warms up.",
        ),
        (
            "Der Heizlüfter im Bad rattert so komisch.",
            "Das klingt nach einem lockeren Lüfterrad.",
        ),
        (
            "La hotte fait un boucan pas possible.",
            "Il faut peut-être nettoyer le filtre de la hotte.",
        ),
        ("De vaatwasser staat te piepen.", "Misschien is het zoutreservoir leeg."),
        ("¿Qué puedo preparar de cena para seis?", "Una paella o unas tapas variadas."),
        ("Is the hall light on?", "Yes."),
    ],
)
def test_an_answer_with_a_word_of_its_own_is_shown_as_it_streams(
    user_text: str, answer: str
) -> None:
    pieces = [answer[i : i + 5] for i in range(0, len(answer), 5)]
    hold = EchoHold(echo_keys(user_text, []), echo_words(user_text))
    shown = [hold.feed(piece) for piece in pieces]
    assert "".join(shown) + hold.flush() == answer
    assert not hold.echoed
    if len(answer.split()) > 3:
        # Released while it streams, not at its end.
        assert "".join(shown[:-1])


def test_an_answer_streams_once_it_says_something_new() -> None:
    hold = EchoHold(
        echo_keys("Open the garage door.", []), echo_words("Open the garage door.")
    )
    assert hold.feed("The garage ") == ""
    assert hold.feed("door needs a ") == "The garage door needs a "
    assert hold.feed("code.") == "code."


def test_greetings_and_short_words_may_be_answered_in_kind() -> None:
    assert said("Guten Morgen!", ["Guten ", "Morgen!"]) == ("Guten Morgen!", False)
    assert said("Muchas gracias", ["¡Muchas ", "gracias!"]) == (
        "¡Muchas gracias!",
        False,
    )


def test_an_earlier_line_of_the_session_is_no_answer() -> None:
    """Seen through the Swama filter: a German session answered 40 turns with
    an earlier command of the user's, "Deckenlampe im Wohnzimmer auf 20 Prozent."."""
    keys = echo_keys(
        "Zieh den Vorhang im Schlafzimmer zu.",
        [],
        earlier=["Deckenlampe im Wohnzimmer auf 20 Prozent.", "Gern.", "Ja"],
    )
    hold = EchoHold(keys)
    assert stream(hold, ["Deckenlampe im ", "Wohnzimmer auf 20 Prozent."]) == [
        "",
        "",
        "",
    ]
    assert hold.echoed
    # Short earlier answers may come again.
    assert said_with(keys, "Gern.") == "Gern."


def said_with(keys: frozenset[str], answer: str) -> str:
    hold = EchoHold(keys)
    return hold.feed(answer) + hold.flush()


INSTRUCTIONS = [
    "Réponds en français.",
    "This device is not able to start timers.",
    "When controlling Home Assistant always call the intent tools.",
    "Current time is 15:30:00. Today's date is 2026-12-03.",
]


@pytest.mark.parametrize(
    "answer",
    ["Répondez en français.", "The device was not able to start timers."],
)
def test_an_instruction_said_in_other_forms_is_never_shown(answer: str) -> None:
    """Seen on the bundled model: "Répondez en français." spoken, replayed, and
    then said to every turn of a French session; "The device was not able to
    start timers." for a leaderboard question."""
    hold = EchoHold(
        echo_keys("Quel temps fait-il ?", INSTRUCTIONS),
        frozenset(),
        echo_lines(INSTRUCTIONS),
    )
    assert "".join(stream(hold, [answer[:7], answer[7:]])) == ""
    assert hold.echoed


@pytest.mark.parametrize(
    "answer",
    [
        # A few words of a long line: an answer of its own.
        "I can control Home Assistant for you.",
        # Lines with a number are data: an answer may say them.
        "Current time is 15:30:00. Today's date is 2026-12-03.",
        "Oui.",
    ],
)
def test_an_answer_with_some_words_of_an_instruction_is_shown(answer: str) -> None:
    hold = EchoHold(
        echo_keys("What can you do?", []), frozenset(), echo_lines(INSTRUCTIONS)
    )
    assert "".join(stream(hold, [answer[:5], answer[5:]])) == answer
    assert not hold.echoed


def test_an_answer_streams_once_it_leaves_the_instructions() -> None:
    hold = EchoHold(frozenset(), frozenset(), echo_lines(INSTRUCTIONS))
    assert stream(hold, ["Réponds ", "plutôt ", "demain."]) == [
        "",
        "Réponds plutôt ",
        "demain.",
        "",
    ]


LIVE = [
    "Now: Partly cloudy, 12.5 °C.",
    "Wind: 8.5 m/s (16.5 kn) from the north-west.",
    "Today: Rainy, 8 °C to 14.2 °C.",
    "Friday: Sunny, up to 18 °C.",
]
LIVE_DE = [
    "Aktuell: Bewölkt, 12,5 °C.",
    "Wind: 8,5 m/s.",
    "Freitag: Sonnig, bis 18 °C.",
]


@pytest.mark.parametrize(
    ("live", "question", "said"),
    [
        (LIVE, "What's the forecast for Friday?", LIVE[3]),
        (LIVE, "How windy is it today?", "\n".join([LIVE[1], LIVE[2]])),
        (LIVE_DE, "Wie wird das Wetter am Freitag?", LIVE_DE[2]),
        # Asking and naming no line: its first line, the weather now (found
        # by review: "What's the weather like?" ended in "no answer").
        (LIVE, "What's the weather like?", LIVE[0]),
        # Words that do not ask (the agent passes none): nothing is said, the
        # answer is asked for again.
        (LIVE, "", ""),
    ],
)
def test_the_live_data_read_out_says_the_lines_the_words_name(
    live: list[str], question: str, said: str
) -> None:
    hold = EchoHold(frozenset(), live=live_readout(live, question))
    pieces = [line + "\n" for line in live[:-1]] + [live[-1]]
    assert "".join(stream(hold, pieces)) == said
    assert hold.echoed is (not said)


def test_one_line_of_the_live_data_or_more_than_it_is_an_answer() -> None:
    readout = live_readout(LIVE, "Tell me a joke about Friday.")
    assert "".join(stream(EchoHold(frozenset(), live=readout), [LIVE[0]])) == LIVE[0]
    answer = "\n".join(LIVE[:2]) + "\nThat is all."
    assert "".join(stream(EchoHold(frozenset(), live=readout), [answer])) == answer


def test_a_space_before_a_colon_is_no_difference() -> None:
    """French writes "Mercredi : ..."; the speakable filter says "Mercredi: ..."."""
    assert echo_key("Mercredi : Ensoleillé !") == echo_key("mercredi: ensoleillé")


def test_the_live_data_after_a_lead_word_is_still_no_answer() -> None:
    """ "Sure! Now: ..." then the block: no line is said for it, as before."""
    readout = live_readout(LIVE, "What's the forecast for Friday?")
    hold = EchoHold(frozenset(), frozenset({"forec", "frida"}), live=readout)
    assert "".join(stream(hold, ["Sure! " + "\n".join(LIVE)])) == ""


@pytest.mark.parametrize(
    "answer", ["Actuellement: Ik drink geen alcohol.", "Antwort: ik drink geen alcohol"]
)
def test_the_users_words_after_a_label_are_never_shown(answer: str) -> None:
    """Seen on the bundled model (e2e, a statement): "Ik drink geen alcohol."
    answered "Actuellement: Ik drink geen alcohol.", a label of the live data
    in another language before the words said back."""
    text = "Ik drink geen alcohol."
    pieces = [answer[i : i + 4] for i in range(0, len(answer), 4)]
    hold = EchoHold(echo_keys(text, []), labels=frozenset({"actuellement", "antwort"}))
    assert stream(hold, pieces) == [""] * (len(pieces) + 1)
    assert hold.echoed


LABELS = echo_labels(["Tip: wear a coat.", *LIVE])


def test_the_labels_the_prompt_shows() -> None:
    assert echo_labels(["Actuellement : Clair, 23 °C.", "Just text."]) == {
        "actuellement"
    }
    assert {"tip", "now", "wind"} <= LABELS


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Il va pleuvoir demain ?", "Oui : il va pleuvoir demain."),
        ("¿Va a llover esta tarde?", "Sí: va a llover esta tarde."),
        # Speech-to-text may write no question mark.
        ("va a llover esta tarde", "Sí: va a llover esta tarde."),
        ("Il va pleuvoir demain.", "Oui : il va pleuvoir demain."),
    ],
)
def test_a_question_said_back_after_a_yes_answers(question: str, answer: str) -> None:
    """A lead word before a colon that no label of the prompt is: the answer's own."""
    hold = EchoHold(echo_keys(question, []), labels=LABELS)
    assert (
        "".join(stream(hold, [answer[i : i + 4] for i in range(0, len(answer), 4)]))
        == answer
    )
    assert not hold.echoed


def test_a_label_then_an_answer_streams() -> None:
    hold = EchoHold(echo_keys("Ik heb het koud vandaag.", []), labels=LABELS)
    assert hold.feed("Tip") == ""
    assert hold.feed(": doe een trui aan, ") == "Tip: doe een trui aan, "
    assert hold.feed("het is 6 °C.") == "het is 6 °C."
    assert hold.flush() == ""
    assert not hold.echoed


def test_an_answer_without_spaces_streams_after_a_labels_length() -> None:
    """A language written without spaces is held no longer than a label."""
    hold = EchoHold(echo_keys("我今天很冷。", []), labels=LABELS)
    answer = "穿一件毛衣吧，外面只有六度，风也很大，晚上会更冷，请注意保暖。"
    shown = [hold.feed(answer[i : i + 4]) for i in range(0, len(answer), 4)]
    assert "".join(shown[:-1])
    assert "".join(shown) + hold.flush() == answer


def test_two_lines_of_the_live_data_are_a_read_out() -> None:
    keys = frozenset(echo_key(line) for line in LIVE)
    assert reads_out_live_lines("\n".join(["Made up: 3 °C.", *LIVE[:2]]), keys)
    assert reads_out_live_lines("\n".join(LIVE[1::-1]), keys)
    assert not reads_out_live_lines(LIVE[0], keys)
    assert not reads_out_live_lines(f"{LIVE[0]}\nThat is all.", keys)
    # Run together on one line, or after a dash.
    assert reads_out_live_lines(f"Made up. {LIVE[0]} {LIVE[1]}", keys)
    assert reads_out_live_lines(f"– {LIVE[0]}\n– {LIVE[1]}", keys)


def test_a_restatement_is_kept_for_the_caller() -> None:
    """An instruction in other forms or a long earlier answer is not shown,
    but kept: asked again, the model may have nothing else to say ("Who are
    you?", "Say that again?"). The user's words said back are not kept."""
    earlier = "Soft boiled eggs need about six minutes in boiling water."
    hold = EchoHold(
        echo_keys("Say that again?", INSTRUCTIONS),
        frozenset(),
        echo_lines(INSTRUCTIONS),
        restatements=restatement_keys([earlier, "Yes."]),
    )
    assert stream(hold, [earlier[:9], earlier[9:]]) == ["", "", ""]
    assert (hold.echoed, hold.restated) == (True, earlier)

    other_forms = EchoHold(frozenset(), frozenset(), echo_lines(INSTRUCTIONS))
    assert other_forms.feed("The device was not able to start timers.") == ""
    assert other_forms.flush() == ""
    assert other_forms.restated == "The device was not able to start timers."

    # The answer-language line restated is never an answer (review).
    language_line = EchoHold(
        frozenset(),
        frozenset(),
        echo_lines(INSTRUCTIONS),
        unsaid_lines=echo_lines(["Réponds en français."]),
    )
    assert language_line.feed("Répondez en français.") + language_line.flush() == ""
    assert (language_line.echoed, language_line.restated) == (True, "")

    said_back = EchoHold(echo_keys("Open the garage door.", INSTRUCTIONS))
    assert said_back.feed("Open the garage door.") + said_back.flush() == ""
    assert (said_back.echoed, said_back.restated) == (True, "")


@pytest.mark.parametrize(
    "question",
    ["明天会下雨吗？", "明日は雨が降りますか？", "พรุ่งนี้ฝนจะตกไหม"],
)
def test_a_question_said_back_in_a_script_without_spaces_is_never_shown(
    question: str,
) -> None:
    """Found by review (thirty-fifth pass): such a question is one "word" to
    a count by spaces, below the three a repeat needs, so the bundled model's
    answer "明天会下雨吗" was said and replayed."""
    hold = EchoHold(echo_keys(question, []))
    assert "".join(stream(hold, [question[:3], question[3:]])) == ""
    assert hold.echoed


@pytest.mark.parametrize("greeting", ["你好！", "こんにちは", "谢谢你"])
def test_a_short_greeting_without_spaces_may_be_answered_in_kind(
    greeting: str,
) -> None:
    hold = EchoHold(echo_keys(greeting, []))
    assert "".join(stream(hold, [greeting])) == greeting
    assert not hold.echoed


def test_a_long_earlier_answer_without_spaces_is_a_restatement() -> None:
    """Six words or more, as in a script with spaces."""
    answer = "明天多云，气温九到十六度，降雨概率百分之十。"
    assert restatement_keys([answer]) == {echo_key(answer)}
    assert not restatement_keys(["好的。"])
