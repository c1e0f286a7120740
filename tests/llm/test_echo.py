"""An answer that only repeats the user's words or an instruction (llm/echo.py)."""

from __future__ import annotations

from custom_components.local_assistant.llm.echo import EchoHold, echo_keys

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
