"""The turn guard's decisions, directly (pure module)."""

from __future__ import annotations

import pytest

from custom_components.local_assistant.turn.guard import (
    TurnGuard,
    TurnKind,
    action_targets,
    honest_key,
    is_read_only,
    kind_of,
    mentioned,
    result_succeeded,
    written_tool_call,
)

LIVE = frozenset({"local_weather_forecast", "local_sea_conditions"})
INTENT_OK = {
    "speech": {},
    "response_type": "action_done",
    "data": {
        "targets": [],
        "success": [{"name": "Kitchen Light", "type": "entity", "id": "light.k"}],
        "failed": [],
    },
}
INTENT_FAILED = {
    "speech": {},
    "response_type": "action_done",
    "data": {
        "targets": [],
        "success": [],
        "failed": [{"name": "Kitchen Light", "type": "entity", "id": "light.k"}],
    },
}


@pytest.mark.parametrize(
    ("intent", "named", "follow_up", "kind"),
    [
        ("HassTurnOn", (), False, TurnKind.ACTION),
        ("HassLightSet", ("Kitchen",), False, TurnKind.ACTION),
        ("HassStartTimer", (), False, TurnKind.ACTION),
        ("HassGetState", ("Porch light",), False, TurnKind.QUESTION),
        ("HassGetWeather", (), True, TurnKind.QUESTION),
        ("HassNevermind", (), True, TurnKind.OTHER),
        (None, ("Kitchen",), False, TurnKind.DEVICE),
        (None, ("Kitchen",), True, TurnKind.DEVICE),
        (None, (), True, TurnKind.FOLLOW_UP),
        (None, (), False, TurnKind.OTHER),
    ],
)
def test_kind_follows_ha_then_names_then_the_last_action(
    intent: str | None, named: tuple[str, ...], follow_up: bool, kind: TurnKind
) -> None:
    """HA's recognition decides first; names or a recent action only without it."""
    assert kind_of(intent, named, follow_up) is kind


def test_names_match_whole_words_in_any_case_and_punctuation() -> None:
    names = ["Kitchen", "Kitchen Light", "Fan", "Salón", "Living Room"]
    assert mentioned("Turn on the KITCHEN light, please!", names) == [
        "Kitchen",
        "Kitchen Light",
    ]
    assert mentioned("enciende la luz del salón", names) == ["Salón"]
    assert mentioned("is it fantastic?", names) == []  # "fan" inside a word
    assert mentioned("the living-room lamp", names) == ["Living Room"]


@pytest.mark.parametrize(
    ("tool", "read_only"),
    [
        ("GetLiveContext", True),
        ("homeassistant__GetLiveContext", True),  # 2026.11 prefixes names
        ("HassGetState", True),
        ("local_sea_conditions", True),
        ("HassTurnOn", False),
        ("intent__HassTurnOff", False),
        ("HassLightSet", False),
        ("script_movie_night", False),
    ],
)
def test_read_only_tools(tool: str, read_only: bool) -> None:
    assert is_read_only(tool, LIVE) is read_only


@pytest.mark.parametrize(
    ("data", "ok"),
    [
        (INTENT_OK, True),
        (INTENT_FAILED, False),
        ({"error": "HomeAssistantError", "error_text": "nope"}, False),
        ({"speech": {}, "response_type": "error", "data": {"code": "x"}}, False),
        ({"data": INTENT_OK, "error": False}, True),  # 2026.11's ToolResult form
        ({"data": {"error": "x"}, "error": True}, False),
        ({"sensors": [], "summary": "Calm."}, True),
        (None, False),
    ],
)
def test_which_results_count_as_success(data: object, ok: bool) -> None:
    assert result_succeeded(data) is ok


def test_other_turns_may_only_read() -> None:
    guard = TurnGuard(TurnKind.OTHER, live_tools=LIVE, home_names=("Kitchen Light",))
    # Nothing to hold back: a chat turn streams as it comes.
    assert not guard.hold_text
    assert guard.check_call("GetLiveContext") is None
    assert guard.check_call("local_sea_conditions") is None
    refusal = guard.check_call("HassLightSet")
    assert refusal is not None
    assert refusal["error"] == "NotAskedToChangeDevices"
    assert "HassLightSet was not run" in refusal["error_text"]
    assert "local_sea_conditions" in refusal["error_text"]
    assert guard.refused == ["HassLightSet"]
    # After a refused change nothing is spoken: "The device was turned on."
    # names nothing. The retry's answer, trying no change, may stand.
    assert guard.hold_text
    assert not guard.answer_ok("The device was turned on.")
    assert not guard.answer_ok("Why did the light go out? It was tired.")
    # Asked again without tools where the server honours it; the answer is
    # held to the end, so a tool call written as text is never spoken.
    assert guard.retry_tool_choice == "none"
    guard.retrying()
    assert guard.hold_text
    assert guard.answer_ok("Why did the light go out? It was tired.")
    assert not guard.answer_ok(
        '{"name": "HassTurnOff", "arguments": {"area": "Living Room"}}'
    )


@pytest.mark.parametrize(
    ("answer", "written"),
    [
        ('{"name": "HassTurnOn", "arguments": {"name": "Kitchen"}}', True),
        (
            '<tool_call>\n{"name": "GetLiveContext", "parameters": {}}\n</tool_call>',
            True,
        ),
        ("The kitchen is {on}.", False),
        ('{"name": "Bolt"}', False),
        ("Your dog is called Bolt.", False),
    ],
)
def test_a_tool_call_written_as_text_is_recognized(answer: str, written: bool) -> None:
    assert written_tool_call(answer) is written


def test_a_refused_change_holds_any_answer_until_one_runs() -> None:
    guard = TurnGuard(TurnKind.DEVICE, targets=("Kitchen",))
    assert guard.check_call("HassTurnOn", {"name": "Hall"}) is not None
    guard.record_result("GetLiveContext", {"result": "Kitchen: off"})
    assert guard.hold_text  # reading does not make up for the refused change
    assert not guard.answer_ok("Done!")
    assert guard.check_call("HassTurnOn", {"name": "Kitchen"}) is None
    guard.record_result("HassTurnOn", INTENT_OK)
    assert guard.answer_ok("Done!")


@pytest.mark.parametrize("kind", [TurnKind.ACTION, TurnKind.DEVICE, TurnKind.FOLLOW_UP])
def test_commands_may_change_devices(kind: TurnKind) -> None:
    assert TurnGuard(kind, intent="HassTurnOn").check_call("HassTurnOn") is None


def test_a_follow_up_ha_could_not_read_may_not_change_devices() -> None:
    """ "I live in Tarifa, by the sea." right after a command is no command."""
    guard = TurnGuard(TurnKind.FOLLOW_UP, targets=("Kitchen Light",))
    refusal = guard.check_call("HassTurnOn", {"name": "Kitchen Light"})
    assert refusal is not None
    assert refusal["error"] == "NotAskedToChangeDevices"
    assert guard.check_call("GetLiveContext") is None


def test_an_action_is_honest_only_after_a_successful_change() -> None:
    guard = TurnGuard(TurnKind.ACTION, live_tools=LIVE)
    assert guard.hold_text
    assert not guard.answer_ok("Done, the light is on.")
    guard.record_result("GetLiveContext", {"result": "all off"})
    assert guard.hold_text  # reading is not acting
    guard.record_result("HassTurnOn", INTENT_FAILED)
    assert guard.hold_text  # a failed change is no change
    guard.record_result("HassTurnOn", INTENT_OK)
    assert not guard.hold_text
    assert guard.answer_ok("Done, the light is on.")
    assert guard.retry_tool_choice == "required"
    assert not guard.retry_keeps_history


def test_a_question_is_honest_after_any_tool() -> None:
    guard = TurnGuard(TurnKind.QUESTION, live_tools=LIVE)
    assert guard.hold_text
    assert not guard.answer_ok("Yes, it is on.")
    guard.record_result("GetLiveContext", {"result": "Porch light: on"})
    assert guard.answer_ok("Yes, it is on.")
    assert guard.retry_tool_choice == "required"


def test_a_device_turn_without_a_tool_may_not_talk_about_the_device() -> None:
    """ "Switch kitchen on": no HA intent, but it names a device."""
    guard = TurnGuard(TurnKind.DEVICE, targets=("Kitchen",))
    assert guard.hold_text
    assert not guard.answer_ok("The kitchen is on now.")
    assert guard.answer_ok("Which room do you mean?")
    # Never pushed into a change: "my kitchen light is broken" names one too.
    assert guard.retry_tool_choice is None
    guard.record_result("HassTurnOn", INTENT_OK)
    assert guard.answer_ok("The kitchen is on now.")


def test_a_follow_up_retries_with_its_history() -> None:
    guard = TurnGuard(TurnKind.FOLLOW_UP, targets=("Kitchen Light",))
    assert guard.retry_keeps_history
    assert not guard.answer_ok("The kitchen light is off again.")
    assert guard.answer_ok("You're welcome!")


def test_action_targets_prefer_what_ha_reports() -> None:
    assert action_targets("HassTurnOn", {"name": "kitchen"}, INTENT_OK, LIVE) == (
        "Kitchen Light",
    )
    assert action_targets(
        "HassTurnOff", {"area": "Kitchen", "name": 3}, {"data": {}}, LIVE
    ) == ("Kitchen",)
    assert action_targets("HassTurnOn", {"name": "x"}, INTENT_FAILED, LIVE) == ()
    assert action_targets("GetLiveContext", {}, INTENT_OK, LIVE) == ()


def test_honest_sentences_are_spoken_sentences() -> None:
    """The sentence's key; its text per language is tests/llm/test_sentences.py."""
    assert honest_key(TurnKind.ACTION) == "nothing_changed"
    assert honest_key(TurnKind.DEVICE) == "nothing_changed"
    assert honest_key(TurnKind.FOLLOW_UP) == "nothing_changed"
    assert honest_key(TurnKind.QUESTION) == "could_not_check"


def test_a_change_must_aim_at_what_the_user_named() -> None:
    """ "And the living room?" may not set the bedroom light."""
    guard = TurnGuard(
        TurnKind.FOLLOW_UP,
        targets=("Living Room",),
        scope=("Living Room", "Living Room Lamp"),
        intent="HassTurnOn",
    )
    assert guard.check_call("HassTurnOn", {"area": "living room"}) is None
    assert guard.check_call("HassTurnOn", {"name": "living_room_lamp"}) is None
    # No target of its own: tool repair gives it the turn's.
    assert guard.check_call("HassTurnOn", {}) is None
    refusal = guard.check_call("HassTurnOn", {"name": "Bedroom Light"})
    assert refusal is not None
    assert refusal["error"] == "NotWhatTheUserNamed"
    assert "the user spoke of Living Room" in refusal["error_text"]
    assert guard.refused == ["HassTurnOn"]
    # Reading anything stays allowed.
    assert guard.check_call("GetLiveContext", {"name": "Bedroom Light"}) is None


def test_a_turn_that_named_nothing_may_aim_anywhere() -> None:
    guard = TurnGuard(TurnKind.ACTION)
    assert guard.check_call("HassTurnOn", {"name": "Bedroom Light"}) is None


def test_a_device_turn_that_did_nothing_may_not_talk_about_any_device() -> None:
    """ "And turn off the fan too" answered "Turn off the coffee machine." is held."""
    guard = TurnGuard(
        TurnKind.DEVICE,
        targets=("Fan",),
        home_names=("Fan", "Coffee Machine", "Kitchen"),
    )
    assert not guard.answer_ok("Turn off the coffee machine.")
    assert guard.answer_ok("Which one do you mean?")
    guard.record_result("HassTurnOff", INTENT_OK)
    assert guard.answer_ok("Done, and the coffee machine is off too.")


def test_a_change_must_be_the_one_ha_recognized() -> None:
    """ "Turn off the kitchen light" answered with HassTurnOn is refused."""
    guard = TurnGuard(TurnKind.ACTION, targets=("Kitchen Light",), intent="HassTurnOff")
    assert guard.check_call("HassTurnOff", {"name": "Kitchen Light"}) is None
    refusal = guard.check_call("HassTurnOn", {"name": "Kitchen Light"})
    assert refusal is not None
    assert refusal["error"] == "NotWhatTheUserAsked"
    assert "the user asked for HassTurnOff" in refusal["error_text"]
    # Other tools (a script, the live data) are not HA intents: the model may use them.
    assert guard.check_call("movie_time", {}) is None
    assert guard.check_call("GetLiveContext", {}) is None
