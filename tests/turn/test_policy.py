"""Which changes the model may make, and when "nothing was changed" is said (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.local_assistant.llm.echo import echo_key
from custom_components.local_assistant.turn.policy import (
    ALREADY_RAN,
    FORGET,
    REFUSED,
    REMEMBER,
    Named,
    TurnPolicy,
    names_a_tool,
    written_tool_call,
)
from custom_components.local_assistant.turn.vocabulary import load_vocabulary
from custom_components.local_assistant.wording import numbers_in

STUDY = Named(
    places=("Study",),
    spellings=("study",),
    device_kinds=frozenset({"light"}),
    text="kill the lights in the study",
)
DESK = Named(
    devices=("Desk Lamp",),
    spellings=("desk lamp",),
    text="switch the desk lamp on",
)
KITCHEN_AREA = Named(
    places=("Kitchen",),
    spellings=("kitchen",),
    text="what could I cook in the kitchen tonight?",
)
NOTHING = Named(text="tell me a joke", asks=True)
LIGHTS = Named(device_kinds=frozenset({"light"}), text="I hate these lights")


@pytest.mark.parametrize(
    ("named", "tool", "args", "runs"),
    [
        # A device the words name, by its name or an alias.
        (DESK, "HassTurnOn", {"name": "Desk Lamp"}, True),
        (DESK, "intent__HassTurnOn", {"name": "desk_lamp"}, True),
        (DESK, "HassTurnOn", {"name": "Porch Light"}, False),
        # An area with a device word: "the lights in the study".
        (STUDY, "HassTurnOff", {"area": "Study", "domain": "light"}, True),
        (STUDY, "HassTurnOff", {"area": "Study"}, True),
        (STUDY, "HassTurnOff", {"area": "Study", "domain": "fan"}, False),
        (STUDY, "HassTurnOff", {"area": "Kitchen", "domain": "light"}, False),
        # A device word alone names no target: every light of the home.
        (LIGHTS, "HassTurnOff", {"domain": "light"}, False),
        (LIGHTS, "HassTurnOff", {"domain": ["light"]}, False),
        # An area alone is not a device.
        (KITCHEN_AREA, "HassTurnOn", {"area": "Kitchen"}, False),
        (KITCHEN_AREA, "HassTurnOn", {"name": "Kitchen Light"}, False),
        # Nothing named: nothing changes, whatever the call.
        (NOTHING, "HassTurnOn", {"name": "Desk Lamp"}, False),
        (NOTHING, "HassTurnOn", {}, False),
        (NOTHING, "movie_time", {}, False),
        # Reading tools always run.
        (NOTHING, "GetLiveContext", {}, True),
        (NOTHING, "intent__HassGetState", {"name": "Desk Lamp"}, True),
        (NOTHING, "local_weather_forecast", {}, True),
    ],
)
def test_a_change_runs_when_the_words_name_its_target(
    named: Named, tool: str, args: dict[str, Any], runs: bool
) -> None:
    policy = TurnPolicy(named, live_tools=frozenset({"local_weather_forecast"}))
    refusal = policy.check_call(tool, args)
    assert (refusal is None) is runs
    if not runs:
        assert refusal is not None
        assert refusal["error"] == REFUSED
        assert tool in refusal["error_text"]


def test_a_call_without_a_target_runs_with_the_values_said() -> None:
    """ "Set the volume to 50": one media player, no name."""
    said = Named(text="set the volume to 50", numbers=frozenset({50.0}))
    assert TurnPolicy(said).check_call("HassSetVolume", {"volume_level": 50}) is None
    assert TurnPolicy(said).check_call("HassSetVolume", {"volume_level": 80})
    items = Named(text="add history homework to my tasks")
    assert (
        TurnPolicy(items).check_call("HassListAddItem", {"item": "History Homework"})
        is None
    )


def test_a_script_runs_when_the_words_name_it() -> None:
    named = Named(
        devices=("Movie time",),
        spellings=("movie time",),
        scripts={"movietime": "Movie time"},
    )
    assert TurnPolicy(named).check_call("movie_time", {}) is None
    assert TurnPolicy(Named(scripts={"movietime": "Movie time"})).check_call(
        "movie_time", {}
    )


def test_a_setting_the_words_spell_out_continues_the_last_change() -> None:
    """ "Dim it to 10 percent" after the bedroom light; "I live by the sea" never."""
    dim = Named(text="Dim it to 10 percent", numbers=frozenset({10.0}))
    policy = TurnPolicy(dim, last_targets=("Bedroom Light",))
    assert (
        policy.check_call("HassLightSet", {"name": "Bedroom Light", "brightness": 10})
        is None
    )
    statement = TurnPolicy(
        Named(text="I live by the sea."), last_targets=("Bedroom Light",)
    )
    assert statement.check_call("HassTurnOn", {"name": "Bedroom Light"})


def test_a_question_changes_nothing_but_a_setting_it_spells_out() -> None:
    """ "Is the desk lamp on?" met with a change is refused; "what about 20
    percent?" right after the desk lamp was dimmed continues it."""
    asked = TurnPolicy(
        Named(devices=("Desk Lamp",), text="Is the desk lamp on?", question=True)
    )
    refusal = asked.check_call("HassTurnOn", {"name": "Desk Lamp"})
    assert refusal is not None
    assert "asked a question" in refusal["error_text"]
    assert not asked.asks_no_change  # named a device: "nothing was changed"
    assert not asked.words_may_claim  # "Yes, the desk lamp is on." answers
    about = TurnPolicy(
        Named(text="What about 20 percent?", numbers=frozenset({20.0}), question=True),
        last_targets=("Desk Lamp",),
    )
    assert (
        about.check_call("HassLightSet", {"name": "Desk Lamp", "brightness": 20})
        is None
    )
    assert about.check_call("HassTurnOff", {"name": "Desk Lamp"}) is not None


def test_a_question_is_answered_from_what_was_read_after_its_refusal() -> None:
    """ "Are the sprinklers on?" met with HassTurnOn, then a read: the answer
    is spoken. A read before the refusal, a failed read, a second refused
    change, or the same in words that are no question, answer nothing."""
    question = Named(
        devices=("Sprinklers",), text="Are the sprinklers on?", question=True
    )
    asked = TurnPolicy(question)
    asked.record_result("GetLiveContext", SUCCESS)  # before any refusal
    assert asked.check_call("HassTurnOn", {"name": "Sprinklers"})
    assert asked.hold_text
    asked.record_result("GetLiveContext", FAILURE)
    assert asked.hold_text
    asked.record_result("GetLiveContext", SUCCESS)
    assert not asked.hold_text
    assert asked.check_call("HassTurnOn", {"name": "Sprinklers"})
    assert asked.hold_text

    command = TurnPolicy(Named(devices=("Sprinklers",), text="Sprinklers on, please."))
    assert command.check_call("HassTurnOn", {"name": "Porch"})
    command.record_result("GetLiveContext", SUCCESS)
    assert command.hold_text


TOMORROW = "Tomorrow: Rain, 2 °C to 6 °C, 7 mm of rain (90% chance)."
FRIDAY = "Friday: Sunny, up to 18 °C."
LIVE = frozenset(echo_key(line) for line in (TOMORROW, FRIDAY))


@pytest.mark.parametrize(
    ("answer", "spoken"),
    [
        (TOMORROW, True),
        (f"{TOMORROW}\n{FRIDAY}", True),
        (f" {TOMORROW.upper()} ", True),
        # Words or numbers of the model's own: they may claim the change, or
        # put one line's number in another's place.
        ("Tomorrow: Rain, 7 mm.", False),
        ("I turned on the fan for 7 minutes.", False),
        ("The fan is set to 18.", False),
        ("Tomorrow: up to 90 °C.", False),
        (f"{TOMORROW}\nDer Schirm ist jetzt an.", False),
        ('{"name": "HassTurnOn", "arguments": {"brightness": 18}}', False),
        ("", False),
    ],
)
def test_a_questions_refused_change_is_answered_from_the_live_data(
    answer: str, spoken: bool
) -> None:
    """ "Brauche ich morgen einen Schirm?" ("Schirm" is one of HA's German
    device words) met with HassTurnOn, then the live data's line for
    tomorrow: what was read answers it. Only our own lines, as written."""
    asks = Named(device_kinds=frozenset({"cover"}), text="umbrella?", asks=True)
    policy = TurnPolicy(asks, live_lines=LIVE)
    assert not policy.reads_live_data(answer)  # nothing refused yet
    assert policy.check_call("HassTurnOn", {"name": "Schirm"})
    assert policy.hold_text
    assert policy.reads_live_data(answer) is spoken


@pytest.mark.parametrize(
    "policy",
    [
        # Words that ask for nothing, and a command HA read.
        TurnPolicy(Named(devices=("Desk Lamp",), text="lamp on"), live_lines=LIVE),
        TurnPolicy(
            Named(devices=("Desk Lamp",), text="lamp on?", asks=True),
            live_lines=LIVE,
            asked_intent="HassTurnOn",
        ),
    ],
)
def test_only_a_question_is_answered_from_the_live_data(policy: TurnPolicy) -> None:
    assert policy.check_call("HassTurnOff", {"name": "Porch"})
    assert not policy.reads_live_data(TOMORROW)
    assert policy.hold_text


def test_after_a_change_that_failed_no_answer_reads_the_live_data() -> None:
    policy = TurnPolicy(
        Named(devices=("Desk Lamp",), text="lamp?", asks=True), live_lines=LIVE
    )
    assert policy.check_call("HassTurnOff", {"name": "Porch"})
    assert policy.check_call("HassTurnOn", {"name": "Desk Lamp"}) is None
    policy.record_result("HassTurnOn", {"error": "boom"})
    assert not policy.reads_live_data(TOMORROW)
    assert policy.hold_text


def test_after_a_refused_memory_change_no_answer_reads_the_live_data() -> None:
    """A refused forget or remember is never answered but by "nothing was changed"."""
    policy = TurnPolicy(
        Named(text="was it sunny?", asks=True),
        live_lines=LIVE,
        memory_tools={"forget_note": FORGET},
        notes=("The user likes jazz.",),
    )
    assert policy.check_call("forget_note", {"number": 1})
    assert policy.refused_memory
    assert not policy.reads_live_data(TOMORROW)


def test_another_intent_than_ha_read_is_refused() -> None:
    policy = TurnPolicy(DESK, asked_intent="HassTurnOn")
    refusal = policy.check_call("HassTurnOff", {"name": "Desk Lamp"})
    assert refusal is not None
    assert "HassTurnOn" in refusal["error_text"]
    assert policy.check_call("intent__HassTurnOn", {"name": "Desk Lamp"}) is None


SUCCESS = {
    "response_type": "action_done",
    "data": {"success": [{"name": "x"}], "failed": []},
}
FAILURE = {"error": "MatchFailedError", "error_text": "no device"}


def test_text_is_held_only_where_a_change_was_asked_or_tried() -> None:
    chat = TurnPolicy(NOTHING)
    assert not chat.hold_text

    asked = TurnPolicy(DESK, asked_intent="HassTurnOn")
    assert asked.hold_text
    asked.record_result("HassTurnOn", SUCCESS)
    # What ran answers (turn/what_ran.py): the model's words after it are held,
    # and HA read the sentence as that command, so nothing more is asked.
    assert asked.what_ran_answers
    assert asked.asked_no_more
    assert asked.hold_text
    # After a read, what was read is the model's to say.
    asked.record_result("GetLiveContext", SUCCESS)
    assert not asked.what_ran_answers
    assert not asked.hold_text
    # A script's result, too.
    scripted = TurnPolicy(DESK)
    scripted.record_result("HassTurnOn", SUCCESS)
    assert scripted.what_ran_answers
    assert not scripted.asked_no_more
    scripted.record_result("bedtime", SUCCESS)
    assert not scripted.what_ran_answers
    assert not scripted.hold_text

    failed = TurnPolicy(DESK)
    assert not failed.hold_text
    failed.record_result("HassTurnOn", FAILURE)
    assert failed.hold_text
    # Every device of the area failed: HA still lists the area as a success,
    # and says "The lock was successfully turned on." Nothing changed.
    area_only = TurnPolicy(DESK)
    area_only.record_result(
        "HassTurnOn",
        {
            "response_type": "action_done",
            "data": {
                "success": [{"name": "Entry", "type": "area", "id": "entry"}],
                "failed": [{"name": "Smart Lock", "type": "entity", "id": "x.lock"}],
            },
        },
    )
    assert area_only.hold_text
    assert not area_only.changed
    # One device of two failed: one changed.
    partly = TurnPolicy(DESK)
    partly.record_result(
        "HassTurnOn",
        {
            "response_type": "action_done",
            "data": {
                "success": [
                    {"name": "Study", "type": "area", "id": "study"},
                    {"name": "Desk Lamp", "type": "entity", "id": "light.desk"},
                ],
                "failed": [{"name": "Fan", "type": "entity", "id": "fan.study"}],
            },
        },
    )
    assert partly.changed
    # A read that fails is no change.
    read = TurnPolicy(DESK)
    read.record_result("GetLiveContext", FAILURE)
    assert not read.hold_text


def test_a_refusal_where_the_words_ask_for_no_change_asks_again_without_tools() -> None:
    policy = TurnPolicy(NOTHING)
    assert policy.check_call("HassTurnOn", {"name": "Desk Lamp"})
    assert policy.stop_after_refusal
    assert policy.ask_again_without_tools
    assert not policy.hold_text
    policy.ask_without_tools()
    assert policy.hold_text  # the whole answer, checked before it is said
    assert not policy.ask_again_without_tools


def test_a_refusal_where_the_words_ask_nothing_ends_with_nothing_changed() -> None:
    """ "Turn the volume down to 50%" names no device and commands: asked
    without tools, the model said "The volume has been reduced to 50%." """
    policy = TurnPolicy(Named(text="Turn the volume down to 50%", commands=True))
    assert policy.check_call("HassSetVolume", {"name": "50"})
    assert not policy.stop_after_refusal  # it may correct its call once
    assert not policy.ask_again_without_tools
    assert policy.hold_text


def test_a_refusal_where_the_words_name_a_device_ends_with_nothing_changed() -> None:
    """The model may correct itself once; what it says meanwhile is held."""
    policy = TurnPolicy(DESK)
    assert policy.check_call("HassTurnOn", {"name": "Porch Light"})
    assert not policy.stop_after_refusal  # one more round, text held
    assert policy.hold_text
    assert policy.check_call("HassTurnOn", {"name": "Porch Light"})
    assert policy.stop_after_refusal
    assert policy.hold_text
    assert not policy.ask_again_without_tools


def test_a_statement_after_a_change_is_not_asked_again_without_tools() -> None:
    """Right after a change, a refused call may have been meant as a follow-up:
    asked without tools the model would most likely say it made it."""
    policy = TurnPolicy(
        Named(text="Schalte es wieder aus"), last_targets=("Flurlampe",)
    )
    assert policy.check_call("HassTurnOff", {"name": "Flurlampe"})
    assert not policy.asks_no_change
    assert not policy.ask_again_without_tools


@pytest.mark.parametrize(
    ("answer", "written"),
    [
        ('{"name": "HassTurnOff", "arguments": {"name": "Kitchen"}}', True),
        ('```json\n{"name": "HassTurnOn", "parameters": {}}\n```', True),
        ("The kitchen is off.", False),
        ('{"name": "Bolt"}', False),
    ],
)
def test_a_tool_call_written_as_text(answer: str, written: bool) -> None:
    assert written_tool_call(answer) is written


MEMORY_TOOLS = {"forget_note": FORGET, "remember_note": REMEMBER}


@pytest.mark.parametrize(
    ("text", "notes", "tool", "args", "runs"),
    [
        (
            "Forget that I like jazz.",
            ("I own a boat.", "I like jazz."),
            "forget_note",
            {"number": 2},
            True,
        ),
        (
            "Vergiss, dass ich Jazz mag.",
            ("Ich mag Jazz.",),
            "forget_note",
            {"number": 1},
            True,
        ),
        (
            "Olvida que me gusta el jazz.",
            ("Me gusta el jazz.",),
            "forget_note",
            {"number": "1"},
            True,
        ),
        (
            "Vergeet dat ik van jazz hou.",
            ("Ik hou van jazz.",),
            "forget_note",
            {"number": 1},
            True,
        ),
        (
            "Oublie la note 2.",
            ("J'ai un chat.", "J'aime le jazz."),
            "forget_note",
            {"number": 2},
            True,
        ),
        # A question about something else, or another note than the words name.
        (
            "Dimanche, il va pleuvoir ?",
            ("J'aime le jazz.",),
            "forget_note",
            {"number": 1},
            False,
        ),
        (
            "Forget that I like jazz.",
            ("I own a boat.", "I like jazz."),
            "forget_note",
            {"number": 1},
            False,
        ),
        (
            "Wird es morgen regnen?",
            ("Ich mag Jazz.",),
            "forget_note",
            {"number": "Ich mag Jazz."},
            False,
        ),
        # Remembered when the note is made of the words, in any language.
        (
            "Remember that my mother's birthday is on 4 May.",
            (),
            "remember_note",
            {"fact": "My mother's birthday is on 4 May."},
            True,
        ),
        (
            "Merk dir, dass meine Mutter am 4. Mai Geburtstag hat.",
            (),
            "remember_note",
            {"fact": "Meine Mutter hat am 4. Mai Geburtstag."},
            True,
        ),
        ("Il fait beau.", (), "remember_note", {"fact": "J'aime le soleil."}, False),
        # The model's own wording of what was said (found by review).
        (
            "Remember that I'm allergic to nuts.",
            (),
            "remember_note",
            {"fact": "The user is allergic to nuts."},
            True,
        ),
        (
            "Merk dir, dass ich Nüsse nicht vertrage.",
            (),
            "remember_note",
            {"fact": "Ich vertrage keine Nüsse."},
            True,
        ),
        # A number in the words that is not the note's: the words name another.
        (
            "Forget that I have 2 cats.",
            ("I like jazz.", "I have two cats."),
            "forget_note",
            {"number": 1},
            False,
        ),
        (
            "Forget that I have 2 cats.",
            ("I like jazz.", "I have two cats."),
            "forget_note",
            {"number": 2},
            True,
        ),
        (
            "What's the weather?",
            ("I like jazz.",),
            "forget_note",
            {"number": 1.0},
            False,
        ),
        (
            "What's the weather?",
            ("I like jazz.",),
            "forget_note",
            {"number": True},
            False,
        ),
    ],
)
def test_a_memory_change_runs_when_the_words_name_it(
    text: str, notes: tuple[str, ...], tool: str, args: dict[str, Any], runs: bool
) -> None:
    policy = TurnPolicy(
        Named(text=text, numbers=frozenset(numbers_in(text))),
        memory_tools=MEMORY_TOOLS,
        notes=notes,
    )
    refusal = policy.check_call(tool, args)
    assert (refusal is None) is runs
    assert policy.refused is not runs


@pytest.mark.parametrize(
    ("language", "text", "number", "runs"),
    [
        ("en", "Forget the second one.", 2, True),
        ("de", "Vergiss die zweite Notiz.", 2, True),
        ("fr", "Oublie la troisième.", 3, True),
        ("nl", "Vergeet de eerste maar.", 1, True),
        ("es", "Olvida la segunda, por favor.", 2, True),
        ("en", "Forget note twenty-one.", 21, True),
        # Another number than the words spell, or an article that is no "one".
        ("en", "Forget the second one.", 3, False),
        ("fr", "Oublie une note.", 1, False),
        ("de", "Vergiss eine Notiz.", 1, False),
        ("en", "Forget note twenty-one.", 20, False),
    ],
)
def test_a_note_is_named_by_its_number_in_words(
    language: str, text: str, number: int, runs: bool
) -> None:
    """Ordinals and numbers as HA's number rules spell them, in each language."""
    vocabulary = load_vocabulary(language)
    assert vocabulary is not None
    notes = tuple(f"Qx{index}" for index in range(1, 31))  # no word of the texts
    policy = TurnPolicy(
        Named(
            text=text,
            numbers=frozenset(numbers_in(text)),
            spelled_numbers=frozenset(
                float(n) for n in vocabulary.spelled_numbers_in(text)
            ),
        ),
        memory_tools=MEMORY_TOOLS,
        notes=notes,
    )
    assert (policy.check_call("forget_note", {"number": number}) is None) is runs


def test_a_change_made_again_right_after_it_ran_is_not_run_again() -> None:
    """A small model repeats a change that ran until the loop's limit: the
    same call in the next round (its arguments in any order) is answered with
    an error and ends the model's part; twice in one answer it runs twice
    ("skip two songs")."""
    policy = TurnPolicy(DESK)
    assert (
        policy.check_call("HassTurnOn", {"name": "Desk Lamp", "domain": "light"})
        is None
    )
    assert (
        policy.check_call("HassTurnOn", {"name": "Desk Lamp", "domain": "light"})
        is None
    )
    policy.record_result("HassTurnOn", {"response_type": "action_done"})
    assert not policy.repeated
    policy.next_round()
    again = policy.check_call("HassTurnOn", {"domain": "light", "name": "Desk Lamp"})
    assert again is not None
    assert again["error"] == ALREADY_RAN
    assert "already ran" in again["error_text"]
    assert policy.repeated
    # Its result is no result of a change.
    policy.record_result("HassTurnOn", again)
    assert policy.changed_cleanly
    assert not policy.answer_from_results
    # What ran answers: the model's words are held.
    assert policy.what_ran_answers
    assert policy.hold_text


def test_on_off_on_runs_each_time() -> None:
    policy = TurnPolicy(DESK)
    for tool in ("HassTurnOn", "HassTurnOff", "HassTurnOn"):
        assert policy.check_call(tool, {"name": "Desk Lamp"}) is None
        policy.record_result(tool, {"response_type": "action_done"})
        policy.next_round()
    assert not policy.repeated


def test_a_read_made_again_is_not_run_again_until_a_change_ran() -> None:
    """What it read is in the chat log; after a change ("turn on the desk lamp
    and tell me if it's on", in one answer or two) what it reads changed.
    A read made again never ends the model's part."""
    policy = TurnPolicy(DESK)
    assert policy.check_call("GetLiveContext", {}) is None
    assert policy.check_call("GetLiveContext", {}) is None
    policy.record_result("GetLiveContext", {"success": True})
    policy.next_round()
    again = policy.check_call("GetLiveContext", {})
    assert again is not None
    assert again["error"] == ALREADY_RAN
    assert not policy.repeated
    assert policy.check_call("HassTurnOn", {"name": "Desk Lamp"}) is None
    policy.record_result("HassTurnOn", {"response_type": "action_done"})
    policy.next_round()
    assert policy.check_call("GetLiveContext", {}) is None
    assert not policy.repeated


def test_a_refused_call_is_no_call_made() -> None:
    policy = TurnPolicy(DESK)
    assert policy.check_call("HassTurnOn", {"name": "Porch Light"}) is not None
    policy.next_round()
    refused_again = policy.check_call("HassTurnOn", {"name": "Porch Light"})
    assert refused_again is not None
    assert refused_again["error"] == REFUSED
    assert not policy.repeated


def _lamp_made_again(policy: TurnPolicy, result: dict[str, str]) -> TurnPolicy:
    """The desk lamp switched on with ``result``, then the same call again."""
    assert policy.check_call("HassTurnOn", {"name": "Desk Lamp"}) is None
    policy.record_result("HassTurnOn", result)
    policy.next_round()
    assert policy.check_call("HassTurnOn", {"name": "Desk Lamp"}) is not None
    assert policy.repeated
    return policy


def test_what_answers_a_change_made_again() -> None:
    """What ran answers only where nothing was refused or failed."""
    # One change ran, another was refused: the model answers from the results.
    mixed = TurnPolicy(DESK)
    assert mixed.check_call("HassTurnOn", {"name": "Porch Light"}) is not None
    _lamp_made_again(mixed, {"response_type": "action_done"})
    assert not mixed.changed_cleanly
    assert mixed.answer_from_results
    mixed.ask_without_tools()
    assert not mixed.repeated
    assert not mixed.answer_from_results
    # The change failed: made again, it ends "nothing was changed" (rule 2).
    failed = _lamp_made_again(
        TurnPolicy(DESK, asked_intent="HassTurnOn"), {"error": "NoStatesMatched"}
    )
    assert not failed.answer_from_results
    assert failed.hold_text
    assert failed.asked_or_tried


@pytest.mark.parametrize(
    ("answer", "names"),
    [
        ("Para encender la luz, puedes usar la función HassLightSet.", True),
        # An intent the model made up is an intent name too.
        ("Pour la sieste, utilise HassModeSiesta.", True),
        ("Ich rufe GetLiveContext auf.", True),
        ("Call local_weather_forecast for that.", True),
        # Another API's tool, said without its namespace.
        ("Ask find_recipe for it.", True),
        # A script's tool is named by its entity: a word people say.
        ("So eight is a good bedtime.", False),
        ("Hassan is at the door, and the weather is fine.", False),
        ("Het is 12 graden.", False),
    ],
)
def test_an_answer_that_names_a_tool(answer: str, names: bool) -> None:
    offered = [
        "intent__HassTurnOn",
        "GetLiveContext",
        "local_weather_forecast",
        "recipes__find_recipe",
        "bedtime",
    ]
    assert names_a_tool(answer, offered) is names
