"""The assistant never claims an action it did not take (issues 15 and 20).

Real HA recognizes the user's sentence; the fake server plays a small model that
confirms without calling the tool, or calls one the user's words do not ask for.
What ran decides what the user hears, never the words of the answer. What the
user hears comes from the chat log's delta listener, as TTS hears it.
"""

from __future__ import annotations

from typing import Any

from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, entity_registry as er, intent
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import SUBENTRY_CONVERSATION
from custom_components.local_assistant.memory.voice import FORGET_TOOL_NAME
from tests.helpers import fake_openai as fake
from tests.helpers.ha import NOTHING_CHANGED, converse_streaming, spoken_sentence
from tests.helpers.memory import create_user, fact_texts, memory_of, start_with_facts

TURN_ON = ("HassTurnOn", {"name": "Kitchen"})


def tool_results(
    chat_log: conversation.ChatLog,
) -> list[conversation.ToolResultContent]:
    return [
        c for c in chat_log.content if isinstance(c, conversation.ToolResultContent)
    ]


def assert_one_call_required(requests: list[dict[str, Any]]) -> None:
    """Three requests: the second alone requires a tool call."""
    first, required, answer = requests
    assert "tool_choice" not in first
    assert required["tool_choice"] == "required"
    # Still required after the call, a real server would call tools forever.
    assert "tool_choice" not in answer


def non_system(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] != "system"]


async def test_a_claim_without_the_action_is_never_spoken(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """HA reads a command (its own handling is off here): only a change that
    runs may answer it. The claim is held, never streamed; the model is asked
    once more with a tool call required, and when it claims again the user
    hears that nothing changed."""
    fake_server.queue(
        fake.text("The kitchen is on now."), fake.text("The kitchen is on now.")
    )
    turn = await converse_streaming(hass, "turn on the kitchen")

    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.speech == NOTHING_CHANGED
    assert turn.streamed_text == NOTHING_CHANGED
    assert turn.result.response.response_type is intent.IntentResponseType.ERROR
    first, second = fake_server.requests
    assert "tool_choice" not in first
    assert second["tool_choice"] == "required"
    assert second["messages"] == first["messages"]


async def test_a_command_answered_in_words_is_asked_for_once_more(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """The second answer, with a tool call required, carries the command out;
    the first answer's claim is never heard. With its change the model read
    the home, so it answers after the calls (a change alone is answered by
    what ran): that request no longer requires a call."""
    fake_server.queue(
        fake.text("Sure, the kitchen is on."),
        fake.tool_calls([TURN_ON, ("GetLiveContext", {})]),
        fake.text("The kitchen light is on."),
    )
    turn = await converse_streaming(hass, "turn on the kitchen")

    assert hass.states.get(kitchen).state == STATE_ON
    assert turn.speech == "The kitchen light is on."
    assert "Sure" not in turn.streamed_text
    _first, required, after_the_call = fake_server.requests
    assert required["tool_choice"] == "required"
    # Still required after the call, a real server would call tools forever.
    assert "tool_choice" not in after_the_call


@pytest.mark.parametrize(
    ("language", "sentence"),
    [
        ("en", "turn on the kitchen"),
        ("es", "enciende Kitchen"),
        ("de", "schalte Kitchen ein"),
        ("fr", "allume Kitchen"),
        ("nl", "zet Kitchen aan"),
    ],
)
async def test_the_command_is_read_in_the_users_language(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    language: str,
    sentence: str,
) -> None:
    """HA's own recognition, in the user's language, tells a command; the
    sentence is the agent's own, in that language."""
    fake_server.queue(fake.text("Listo, encendida."), fake.text("Listo."))
    turn = await converse_streaming(hass, sentence, language=language)

    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.speech == spoken_sentence("nothing_changed", language)


async def test_a_command_carried_out_is_answered_by_what_ran(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """The change ran: HA's own response answers (turn/what_ran.py), and the
    model is not asked for words after it."""
    fake_server.queue(fake.tool_calls([TURN_ON]), fake.text("Done, the kitchen is on."))
    turn = await converse_streaming(hass, "turn on the kitchen")
    assert hass.states.get(kitchen).state == STATE_ON
    assert turn.speech == "Turned on the switch"
    assert turn.streamed_text == "Turned on the switch"
    assert len(fake_server.requests) == 1


async def test_the_correction_of_a_refused_command_is_a_call(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """ "Turn off" met with HassTurnOn is refused; the correction round
    requires a tool call, and its HassTurnOff runs."""
    await hass.services.async_call(
        "homeassistant", "turn_on", {"entity_id": kitchen}, blocking=True
    )
    fake_server.queue(
        fake.tool_calls([TURN_ON]),
        fake.tool_calls([("HassTurnOff", {"name": "Kitchen"})]),
        fake.text("The kitchen is off."),
    )
    turn = await converse_streaming(hass, "turn off the kitchen")

    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.speech == "The kitchen is off."
    assert_one_call_required(fake_server.requests)


async def test_a_failed_tool_is_not_claimed_as_done(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """The tool ran and failed; "Done!" after it is never spoken."""
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Garage"})]),
        fake.text("Done!"),
    )
    turn = await converse_streaming(hass, "turn on the kitchen")
    assert turn.speech == NOTHING_CHANGED
    assert "Done" not in turn.streamed_text
    assert hass.states.get(kitchen).state == STATE_OFF


async def test_a_question_never_changes_a_device(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Words that name nothing ask for no change: the change is refused, never
    run, and the model is asked once more without tools; its answer is spoken."""
    fake_server.queue(
        fake.tool_calls([TURN_ON]),
        fake.text("Why did the light go out? It was tired."),
    )
    turn = await converse_streaming(hass, "tell me a joke")

    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.speech == "Why did the light go out? It was tired."
    first, again = fake_server.requests
    assert "tools" in first
    assert "tools" not in again
    assert non_system(again) == [{"role": "user", "content": "tell me a joke"}]


async def test_a_refused_change_restated_as_done_is_never_spoken(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Seen on the leaderboard run: "Turn the volume down to 50%" names no
    device, the model's HassSetVolume(name="50") was refused, and the answer
    asked for without tools, "The volume has been reduced to 50%.", was
    spoken. The words ask nothing: the model may correct its call, and its
    words are held; no change ran, so nothing was changed."""
    fake_server.queue(
        fake.tool_calls([("HassSetVolume", {"name": "50"})]),
        fake.text("The volume has been reduced to 50%."),
    )
    turn = await converse_streaming(hass, "Turn the volume down to 50%")

    assert "tools" in fake_server.requests[1]
    assert turn.speech == NOTHING_CHANGED
    assert turn.streamed_text == NOTHING_CHANGED


@pytest.mark.parametrize(
    ("language", "question", "answer"),
    [
        ("en", "Is the kitchen still on by any chance?", "No, the kitchen is off."),
        ("de", "Ist Kitchen eigentlich noch an?", "Nein, Kitchen ist aus."),
        ("fr", "Combien de temps Kitchen reste encore allumé ?", "Kitchen est éteint."),
        ("nl", "Staat Kitchen eigenlijk nog aan?", "Nee, Kitchen staat uit."),
        ("es", "¿Está Kitchen todavía encendido, por casualidad?", "No, está apagado."),
    ],
)
@pytest.mark.parametrize("reads", [False, True])
async def test_a_question_that_names_a_device_never_changes_it(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    language: str,
    question: str,
    answer: str,
    reads: bool,
) -> None:
    """Seen on the leaderboard's questions: "Are the sprinklers on?" met with
    HassTurnOn, which ran, since the words name the sprinklers. Words that open
    as HA's questions ask for no change: the call is refused, and the refusal
    asks for a read. The answer after a read that ran is what was read, and is
    spoken (before, 3 runs of 3 ended in "nothing was changed"). Without one,
    the model's next words may claim the change ("Done, the kitchen is on."
    for a command misread as a question): the user hears that nothing
    changed."""
    fake_server.queue(
        fake.tool_calls([TURN_ON]),
        *(
            (fake.tool_calls([("GetLiveContext", {})]), fake.text(answer))
            if reads
            else (fake.text("Done, the kitchen is on now."),)
        ),
    )
    turn = await converse_streaming(hass, question, language=language)

    assert hass.states.get(kitchen).state == STATE_OFF
    results = tool_results(turn.chat_log)
    assert "asked a question" in results[0].tool_result["error_text"]
    if reads:
        assert turn.speech == turn.streamed_text == answer
        assert "Kitchen" in str(results[1].tool_result)  # what the answer says
    else:
        assert turn.speech == spoken_sentence("nothing_changed", language)
        assert "Done" not in turn.streamed_text


async def test_a_question_is_answered_in_its_own_words(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """An answer made of a question's words answers it; the same words after
    a command that names the device would claim the change."""
    fake_server.queue(fake.text("Yes, the kitchen is still on."))
    turn = await converse_streaming(hass, "Is the kitchen still on by any chance?")
    assert turn.speech == "Yes, the kitchen is still on."
    assert len(fake_server.requests) == 1


async def test_a_command_that_opens_like_a_question_still_runs(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """ "Can you turn on the kitchen?": "can you" may be left out of HA's
    commands, and "turn" starts them: the change runs, and what ran answers."""
    fake_server.queue(fake.tool_calls([TURN_ON]), fake.text("The kitchen is on."))
    turn = await converse_streaming(hass, "Can you turn on the kitchen for me?")
    assert hass.states.get(kitchen).state == STATE_ON
    assert turn.speech == "Turned on the switch"
    assert len(fake_server.requests) == 1


async def test_a_command_inside_a_question_is_never_claimed(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """ "Is it possible to turn on the kitchen?" opens as HA's questions do,
    and no clause starts as its commands ("La puerta chirría cuando se abre."
    says "abre" too): read as a question, its change is refused and the
    answer claiming it never heard."""
    fake_server.queue(fake.tool_calls([TURN_ON]), fake.text("The kitchen is on."))
    turn = await converse_streaming(hass, "Is it possible to turn on the kitchen?")
    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.speech == NOTHING_CHANGED


async def test_a_question_met_with_a_broken_call_is_answered(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Seen on the leaderboard's questions: "Is today sunny or cloudy?" met
    with a call whose arguments were not JSON ended in "nothing was changed".
    A call that never ran is refused like any other: where the words name no
    device, the model is asked again without tools."""
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", '{"name": "Kitchen"')]),
        fake.text("It is sunny today."),
    )
    turn = await converse_streaming(hass, "Is today sunny or cloudy?")

    assert turn.speech == "It is sunny today."
    assert "tools" not in fake_server.requests[1]
    assert hass.states.get(kitchen).state == STATE_OFF


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("fr", "Et aujourd'hui, il fait beau ou nuageux ?"),
        ("de", "Was macht das Wetter heute, sonnig oder bewölkt?"),
    ],
)
async def test_a_question_with_a_misheard_word_is_answered(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    language: str,
    text: str,
) -> None:
    """French "et" and German "macht" are words HA's sentences accept for a
    misheard "éteins" and "mach": read as command words, they made these
    questions ask for a change, and the refused call ended in "nothing was
    changed". They ask: the model answers once more, without tools."""
    fake_server.queue(
        fake.tool_calls([TURN_ON]),
        fake.text("Sunny."),
    )
    turn = await converse_streaming(hass, text, language=language)

    assert turn.speech == "Sunny."
    assert "tools" not in fake_server.requests[1]
    assert hass.states.get(kitchen).state == STATE_OFF


async def test_a_question_that_names_a_room_is_answered(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Issue 20: with an area called Kitchen, "What could I cook in the kitchen
    tonight?" got "nothing was changed". An area is not a device: the answer
    streams, with one model call."""
    ar.async_get(hass).async_create("Kitchen")
    fake_server.queue(fake.text("A mushroom risotto."))
    turn = await converse_streaming(hass, "What could I cook in the kitchen tonight?")
    assert turn.speech == "A mushroom risotto."
    assert turn.streamed_text == "A mushroom risotto."
    assert len(fake_server.requests) == 1


async def test_a_tool_call_written_as_text_is_never_spoken(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Seen on the bundled model: a change refused, the answer without tools
    wrote the call as JSON text."""
    fake_server.queue(
        fake.tool_calls([("HassTurnOff", {"name": "Kitchen"})]),
        fake.text('{"name": "HassTurnOff", "arguments": {"name": "Kitchen"}}'),
    )
    turn = await converse_streaming(hass, "tell me a joke")

    assert "tools" not in fake_server.requests[1]
    assert turn.speech == NOTHING_CHANGED
    assert turn.streamed_text == NOTHING_CHANGED


async def test_an_action_is_replayed_as_the_users_words_only(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """The confirmation without the tool call would teach the model to skip it
    (here it is what ran, "Turned on the switch": HA read "turn on the
    kitchen" as that command, so the model is not asked again after it).
    "now switch the kitchen off" is no sentence HA reads: the model is asked
    again after its change, its words ("The kitchen is off.") held, and what
    ran answers."""
    ada = await create_user(hass, "Ada")
    fake_server.queue(
        fake.text("Hello Ada."),
        fake.tool_calls([TURN_ON]),
        fake.tool_calls([("HassTurnOff", {"name": "Kitchen"})]),
        fake.text("The kitchen is off."),
    )
    await converse_streaming(hass, "hi", user_id=ada)
    await converse_streaming(hass, "turn on the kitchen", user_id=ada)
    turn = await converse_streaming(hass, "now switch the kitchen off", user_id=ada)

    assert turn.speech == "Turned off the switch"
    assert hass.states.get(kitchen).state == STATE_OFF
    assert len(fake_server.requests) == 4
    assert non_system(fake_server.requests[2]) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello Ada."},
        {"role": "user", "content": "turn on the kitchen"},
        {"role": "user", "content": "now switch the kitchen off"},
    ]


async def test_a_statement_after_a_command_changes_nothing(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Seen on the bundled model: "I live in Tarifa, by the sea." right after
    "turn off the kitchen" turned the light on again and said so."""
    ada = await create_user(hass, "Ada")
    fake_server.queue(
        fake.tool_calls([("HassTurnOff", {"name": "Kitchen"})]),
        fake.tool_calls([TURN_ON]),
        fake.text("The kitchen was turned on."),
    )
    await converse_streaming(hass, "turn off the kitchen", user_id=ada)
    turn = await converse_streaming(hass, "I live in Tarifa, by the sea.", user_id=ada)

    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.speech == NOTHING_CHANGED
    assert "turned on" not in turn.streamed_text
    # The command's change ran and what ran answered it (one request); the
    # refusal answers the call in the chat log; what the model says after it
    # is held and never spoken.
    assert len(fake_server.requests) == 3
    results = tool_results(turn.chat_log)
    assert results[-1].tool_result["error"] == "NotNamedByTheUser"


async def test_the_users_words_made_into_a_claim_are_never_spoken(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Seen on the bundled model through the Swama filter: "Open the garage."
    answered "Yes, the garage is opened." with no tool call. HA reads no
    command here, so only the answer's own words tell: none of them is new."""
    claim = "Yes, the kitchen is flicked on for you."
    fake_server.queue(fake.text(claim), fake.text(claim))
    turn = await converse_streaming(hass, "could you flick the kitchen on for me")

    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.speech == spoken_sentence("no_answer")
    assert "kitchen" not in turn.streamed_text
    assert len(fake_server.requests) == 2


async def test_a_question_after_a_command_may_be_answered_in_its_words(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Found by review: right after a command, "Yes, it will rain tomorrow."
    was held as a claim. The words name no device: it is an answer. (HA does
    not read "could you flick the kitchen on", so the model is asked again
    after that change; its words are held, and what ran answers it.)"""
    ada = await create_user(hass, "Ada")
    fake_server.queue(
        fake.tool_calls([TURN_ON]),
        fake.text("The kitchen is on."),
        fake.text("Yes, it will rain tomorrow."),
    )
    command = await converse_streaming(
        hass, "could you flick the kitchen on", user_id=ada
    )
    assert hass.states.get(kitchen).state == STATE_ON
    assert command.speech == "Turned on the switch"
    turn = await converse_streaming(hass, "Will it rain tomorrow?", user_id=ada)
    assert turn.speech == "Yes, it will rain tomorrow."
    assert len(fake_server.requests) == 3


async def test_an_earlier_line_of_the_session_is_never_the_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    ada = await create_user(hass, "Ada")
    fake_server.queue(
        fake.text("Good to hear, enjoy the sunshine."),
        fake.text("My sister lives in Leiden now."),
        fake.text("My sister lives in Leiden now."),
    )
    await converse_streaming(hass, "My sister lives in Leiden now.", user_id=ada)
    turn = await converse_streaming(hass, "Tell me a joke please", user_id=ada)
    assert turn.speech == spoken_sentence("no_answer")
    assert "Leiden" not in turn.streamed_text


async def test_the_answer_language_line_in_other_forms_is_no_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Seen on the bundled model (held-out session, French): "Répondez en
    français." for the prompt's "Réponds en français.", spoken, replayed, and
    then said to every turn after. It is held as a repeat and asked for anew
    without the session; it never reaches the user or the session."""
    ada = await create_user(hass, "Ada")
    fake_server.queue(
        fake.text("Répondez en français."),
        fake.text("Pourquoi pas, une blague."),
        fake.text("Il fait doux."),
    )
    turn = await converse_streaming(
        hass, "Raconte-moi une blague", user_id=ada, language="fr"
    )
    assert turn.speech == "Pourquoi pas, une blague."
    assert "Répondez" not in turn.streamed_text
    await converse_streaming(hass, "Il fait quel temps ?", user_id=ada, language="fr")
    assert "Répondez" not in str(fake_server.requests[2]["messages"])


async def test_a_long_earlier_answer_said_again_is_no_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Seen on the bundled model (held-out session, Dutch): one garbled line of
    the live data answered a follow-up, and the session then taught it to
    every turn after. Said again, a long answer is held and asked for anew
    without the session; a short one ("Done.") may be said again."""
    ada = await create_user(hass, "Ada")
    loop = "Kitesurfing now: no, 6 kn from the east is below your 14 kn."
    fake_server.queue(
        fake.text(loop), fake.text(loop), fake.text("Why did the fan blush? Air.")
    )
    await converse_streaming(hass, "Thanks, that is all for today", user_id=ada)
    turn = await converse_streaming(hass, "Tell me a joke please", user_id=ada)
    assert turn.speech == "Why did the fan blush? Air."
    assert "Kitesurfing" not in turn.streamed_text
    # Asked again without the session: the loop is not shown to it.
    assert loop not in str(fake_server.requests[2]["messages"])
    fake_server.queue(fake.text("Done."), fake.text("Done."))
    await converse_streaming(hass, "Goodnight my friend", user_id=ada)
    turn = await converse_streaming(hass, "Sleep well yourself", user_id=ada)
    assert turn.speech == "Done."


@pytest.mark.parametrize(
    ("language", "statement", "question", "answer"),
    [
        ("en", "My sister lives in Leiden now.", "Tell me a joke please", "Why?"),
        (
            "de",
            "Meine Schwester wohnt jetzt in Leiden.",
            "Erzähl mir einen Witz",
            "Na?",
        ),
        ("fr", "Ma sœur habite à Leyde maintenant.", "Raconte-moi une blague", "Bon."),
        ("nl", "Mijn zus woont nu in Leiden.", "Vertel eens een mop", "Nou."),
        ("es", "Mi hermana vive ahora en Leiden.", "Cuéntame un chiste", "Vale."),
    ],
)
async def test_a_repeat_is_asked_for_again_without_the_session(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    language: str,
    statement: str,
    question: str,
    answer: str,
) -> None:
    """Seen on the bundled model: asked again with the same session, it repeats
    again, and the user heard "the local model gave no answer". The session
    it repeats from is left out of the second request."""
    ada = await create_user(hass, "Ada")
    fake_server.queue(
        fake.text("Good to hear."), fake.text(statement), fake.text(answer)
    )
    await converse_streaming(hass, statement, user_id=ada, language=language)
    turn = await converse_streaming(hass, question, user_id=ada, language=language)
    assert turn.speech == answer
    assert statement not in turn.streamed_text
    repeated, again = fake_server.requests[1:]
    assert non_system(repeated) == [
        {"role": "user", "content": statement},
        {"role": "assistant", "content": "Good to hear."},
        {"role": "user", "content": question},
    ]
    assert non_system(again) == [{"role": "user", "content": question}]
    assert again["messages"][0] == repeated["messages"][0]


@pytest.mark.parametrize(
    ("language", "earlier", "statement", "answer"),
    [
        ("en", "My sister lives in Leiden now.", "I'm so tired today.", "Rest!"),
        (
            "de",
            "Meine Schwester wohnt jetzt in Leiden.",
            "Ich bin Diabetiker.",
            "Gut zu wissen.",
        ),
        ("fr", "Ma sœur habite à Leyde.", "Je suis allergique aux noix.", "Noté."),
        ("nl", "Mijn zus woont nu in Leiden.", "Mijn broer woont in Utrecht.", "Leuk!"),
        (
            "es",
            "Mi hermana vive en Leiden.",
            "Los jueves voy a cerámica.",
            "¡Qué bien!",
        ),
    ],
)
async def test_a_statement_said_back_without_tools_is_asked_for_without_the_session(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    language: str,
    earlier: str,
    statement: str,
    answer: str,
) -> None:
    """Seen on the bundled model (memory tuning set, 14 of 48 turns): a
    statement met with a refused change, asked again without tools, said the
    user's words back; that was never shown, and the user heard "nothing was
    changed" for "I'm so tired today.". Asked once more without the session
    it repeats from, its answer is spoken."""
    ada = await create_user(hass, "Ada")
    fake_server.queue(
        fake.text("Good to hear."),
        fake.tool_calls([TURN_ON]),
        fake.text(statement),
        fake.text(answer),
    )
    await converse_streaming(hass, earlier, user_id=ada, language=language)
    turn = await converse_streaming(hass, statement, user_id=ada, language=language)

    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.speech == answer
    assert statement not in turn.streamed_text
    refused, repeated, again = fake_server.requests[1:]
    assert "tools" in refused
    assert "tools" not in repeated
    assert "tools" not in again
    assert non_system(repeated) == [
        {"role": "user", "content": earlier},
        {"role": "assistant", "content": "Good to hear."},
        {"role": "user", "content": statement},
    ]
    assert non_system(again) == [{"role": "user", "content": statement}]


async def test_a_statement_said_back_twice_is_acknowledged(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Asked without the session too, the words said back are still never
    spoken, after one request more, not a loop. Nothing was asked, so nothing
    is apologised for: the statement is acknowledged (memory tuning set: such
    turns ended "nothing was changed")."""
    ada = await create_user(hass, "Ada")
    statement = "I'm so tired today."
    fake_server.queue(
        fake.text("Good to hear."),
        fake.tool_calls([TURN_ON]),
        fake.text(statement),
        fake.text(statement),
    )
    await converse_streaming(hass, "My sister lives in Leiden now.", user_id=ada)
    turn = await converse_streaming(hass, statement, user_id=ada)

    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.speech == spoken_sentence("acknowledged")
    assert turn.result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert statement not in turn.streamed_text
    assert len(fake_server.requests) == 4


async def test_without_a_session_a_statement_said_back_is_not_asked_again(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """With no session to leave out, the request would be the same one again:
    it is not sent."""
    statement = "I'm so tired today."
    fake_server.queue(fake.tool_calls([TURN_ON]), fake.text(statement))
    turn = await converse_streaming(hass, statement)

    assert turn.speech == spoken_sentence("acknowledged")
    assert len(fake_server.requests) == 2


@pytest.mark.parametrize(
    ("language", "statement", "answer"),
    [
        ("nl", "Ik drink geen alcohol.", "Goed om te weten."),
        ("en", "I don't drink alcohol.", "Good to know."),
        ("de", "Ich trinke keinen Alkohol.", "Gut zu wissen."),
        ("fr", "Je ne bois pas d'alcool.", "C'est noté."),
        ("es", "No bebo alcohol.", "Entendido."),
    ],
)
async def test_a_statement_said_back_after_a_label_is_never_spoken(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    statement: str,
    answer: str,
) -> None:
    """Seen on the bundled model (e2e, a clean-clone CI run): "Ik drink geen
    alcohol." answered "Actuellement: Ik drink geen alcohol.", the label of an
    earlier French answer of the session before the statement said back. It
    is a repeat: never shown, asked for again."""
    fake_server.queue(
        fake.text("Actuellement : ensoleillé, 20 °C."),
        fake.text(f"Actuellement: {statement}"),
        fake.text(answer),
    )
    first = await converse_streaming(hass, "Quel temps fait-il ?", language="fr")
    turn = await converse_streaming(
        hass, statement, first.result.conversation_id, language=language
    )

    assert turn.speech == turn.streamed_text == answer
    assert len(fake_server.requests) == 3


async def test_a_question_said_back_after_a_yes_and_a_colon_is_an_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """ "Oui : il va pleuvoir demain." answers: "Oui" is no label the prompt
    shows, even where speech-to-text wrote no question mark."""
    fake_server.queue(fake.text("Oui : il va pleuvoir demain."))
    turn = await converse_streaming(hass, "Il va pleuvoir demain.", language="fr")

    # The speakable filter writes no space before the colon.
    assert turn.speech == "Oui: il va pleuvoir demain."
    assert len(fake_server.requests) == 1


async def test_a_repeat_of_a_command_is_asked_for_again_with_the_session(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Measured on the tuning half: asked without the session, a command the
    model had only repeated was answered with a claim ("Los farolillos deben
    estar encendidos.", nothing ran). Where the words may ask for a change, the
    second request keeps the session; a second repeat is no answer."""
    ada = await create_user(hass, "Ada")
    claim = "Yes, the kitchen is flicked on for you."
    fake_server.queue(fake.text("Good to hear."), fake.text(claim), fake.text(claim))
    await converse_streaming(hass, "My sister lives in Leiden now.", user_id=ada)
    turn = await converse_streaming(
        hass, "could you flick the kitchen on for me", user_id=ada
    )
    assert turn.speech == spoken_sentence("no_answer")
    assert hass.states.get(kitchen).state == STATE_OFF
    first, again = fake_server.requests[1:]
    assert non_system(again) == non_system(first)
    assert {"role": "assistant", "content": "Good to hear."} in non_system(again)


async def test_after_a_call_the_users_words_may_confirm_it(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Held as a claim before any call, the user's words said back confirm the
    change once a call ran. The model read the home with its change, so it
    answers (a change alone is answered by what ran)."""
    fake_server.queue(
        fake.tool_calls([TURN_ON, ("GetLiveContext", {})]),
        fake.text("Yes, the kitchen is flicked on."),
    )
    turn = await converse_streaming(hass, "could you flick the kitchen on for me")

    assert hass.states.get(kitchen).state == STATE_ON
    assert turn.speech == "Yes, the kitchen is flicked on."
    assert turn.streamed_text == "Yes, the kitchen is flicked on."
    assert len(fake_server.requests) == 2


async def test_session_buffers_are_per_agent(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    agent_options: dict[str, Any],
) -> None:
    """Two agents (two personas) of one server never share a transcript."""
    hass.config_entries.async_add_subentry(
        config_entry,
        ConfigSubentry(
            data=agent_options,
            subentry_type=SUBENTRY_CONVERSATION,
            title="Pirate",
            unique_id=None,
        ),
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    ada = await create_user(hass, "Ada")
    fake_server.queue(fake.text("Hello."), fake.text("Arr."))
    await converse_streaming(hass, "my first words", user_id=ada)
    await converse_streaming(hass, "ahoy", user_id=ada, agent_id="conversation.pirate")
    assert non_system(fake_server.requests[1]) == [{"role": "user", "content": "ahoy"}]


async def test_a_change_to_another_device_than_named_is_refused(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """The user names the kitchen; the model's call for the hall never runs."""
    hass.states.async_set("light.hall", STATE_OFF, {"friendly_name": "Hall"})
    async_expose_entity(hass, "conversation", "light.hall", True)
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Hall"})]),
        fake.tool_calls([TURN_ON]),
        fake.text("Done, the kitchen is on."),
    )
    turn = await converse_streaming(hass, "switch the kitchen please")

    assert hass.states.get("light.hall").state == STATE_OFF
    assert hass.states.get(kitchen).state == STATE_ON
    assert turn.speech == "Done, the kitchen is on."
    (refusal, _) = [
        m for m in fake_server.requests[2]["messages"] if m["role"] == "tool"
    ]
    assert "NotNamedByTheUser" in refusal["content"]


async def test_a_second_refused_change_ends_the_turn(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """The model may correct a refused change once; a second one ends the turn."""
    hass.states.async_set("light.hall", STATE_OFF, {"friendly_name": "Hall"})
    async_expose_entity(hass, "conversation", "light.hall", True)
    hall = fake.tool_calls([("HassTurnOn", {"name": "Hall"})])
    fake_server.queue(hall, hall, fake.text("The hall is on."))
    turn = await converse_streaming(hass, "switch the kitchen please")

    assert hass.states.get("light.hall").state == STATE_OFF
    assert turn.speech == NOTHING_CHANGED
    assert len(fake_server.requests) == 2


async def test_a_tool_call_the_server_could_not_read_is_asked_again(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """llama.cpp ends the stream with an error event when the model's tool call
    does not parse (seen on the bundled model): asked once more."""
    fake_server.queue(
        fake.stream_error("", "Failed to parse input at pos 12"),
        fake.tool_calls([TURN_ON]),
        fake.text("Done, the kitchen is on."),
    )
    turn = await converse_streaming(hass, "turn on the kitchen")

    # Asked again, the call runs, and what ran answers (no third request).
    assert hass.states.get(kitchen).state == STATE_ON
    assert turn.speech == "Turned on the switch"
    assert len(fake_server.requests) == 2


async def test_a_second_unreadable_answer_is_the_spoken_error(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    fake_server.queue(
        fake.stream_error("", "Failed to parse input at pos 12"),
        fake.stream_error("", "Failed to parse input at pos 3"),
    )
    turn = await converse_streaming(hass, "turn on the kitchen")

    assert hass.states.get(kitchen).state == STATE_OFF
    assert "broken answer" in turn.speech
    assert len(fake_server.requests) == 2


async def test_an_area_that_succeeded_around_a_failed_device_is_no_change(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """HA's result for a device it could not switch lists the area as a
    success and says "The lock was successfully turned on.": nothing changed,
    and the model's copy of that sentence is never spoken (seen on the Home
    LLM Leaderboard's lock home: a binary sensor named like the lock)."""
    assert await async_setup_component(
        hass,
        "template",
        {
            "template": [
                {
                    "binary_sensor": [
                        {
                            "name": "Smart Lock",
                            "unique_id": "lock_contact",
                            "state": "off",
                        }
                    ]
                }
            ]
        },
    )
    await hass.async_block_till_done()
    sensor = "binary_sensor.smart_lock"
    entry = ar.async_get(hass).async_create("Entry")
    er.async_get(hass).async_update_entity(sensor, area_id=entry.id)
    async_expose_entity(hass, "conversation", sensor, True)
    fake_server.queue(
        fake.tool_calls(
            [
                (
                    "HassTurnOn",
                    {
                        "name": "Smart Lock",
                        "area": "Entry",
                        "domain": ["binary_sensor"],
                    },
                )
            ]
        ),
        fake.text("The lock was successfully turned on."),
    )
    turn = await converse_streaming(hass, "lock the smart lock")
    result = tool_results(turn.chat_log)
    assert result[-1].tool_result["data"]["success"][0]["type"] == "area"
    assert turn.speech == NOTHING_CHANGED
    assert "successfully" not in turn.streamed_text


@pytest.mark.parametrize(
    ("device", "text"),
    [
        ("Fan", "I fancy a pizza tonight."),
        ("Zone 1", "Zone 12 is where the roses grow."),
    ],
)
async def test_a_word_a_name_only_begins_names_nothing(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    device: str,
    text: str,
) -> None:
    """Found by review: a said word named any device it began with ("fancy"
    the "Fan", "12" dropped so "Zone 12" was "Zone 1"), and the model's
    change of it ran."""
    assert await async_setup_component(
        hass, "input_boolean", {"input_boolean": {"device": {"name": device}}}
    )
    await hass.async_block_till_done()
    async_expose_entity(hass, "conversation", "input_boolean.device", True)
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": device})]),
        fake.text("Sounds good."),
    )
    turn = await converse_streaming(hass, text)

    assert hass.states.get("input_boolean.device").state == STATE_OFF
    assert turn.speech == "Sounds good."
    assert tool_results(turn.chat_log)[0].tool_result["error"] == "NotNamedByTheUser"


@pytest.mark.parametrize(
    ("language", "statement"),
    [
        ("en", "I'm so tired today."),
        ("es", "Los jueves voy a clase de cerámica."),
        ("de", "Ich bin Diabetiker."),
        ("fr", "Je suis allergique aux fruits à coque."),
        ("nl", "Mijn broer woont in Utrecht."),
    ],
)
async def test_a_statement_met_with_a_change_and_said_back_is_acknowledged(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    language: str,
    statement: str,
) -> None:
    """Seen on the bundled model (memory tuning set, every language): a
    statement met with a device change, refused, then said back when asked
    without tools. The words asked nothing, so the user hears the
    acknowledgment in their language, not "nothing was changed"."""
    fake_server.queue(
        fake.tool_calls([TURN_ON]), fake.text(statement), fake.text(statement)
    )
    turn = await converse_streaming(hass, statement, language=language)

    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.speech == spoken_sentence("acknowledged", language)
    assert turn.result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert statement not in turn.streamed_text
    assert len(fake_server.requests) == 2


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", "I'm so tired today."),
        # Requests HA's sentence data has no command word for (review).
        ("en", "Wake me up at 7."),
        ("en", "Tell me a joke."),
        ("en", "Forget my bicycle."),
        # Questions without a question mark (speech-to-text often writes none).
        ("en", "why is the sky blue"),
        ("de", "Warum ist der Himmel blau"),
        ("fr", "Pourquoi le ciel est bleu"),
    ],
)
async def test_words_only_said_back_with_no_change_tried_are_no_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    words: str,
) -> None:
    """Words that ask nothing and say no command word HA knows may still be a
    request ("Wake me up at 7."): where the model tried no change, its words
    said back twice are no answer, never "I see." as if it were taken on."""
    fake_server.queue(fake.text(words), fake.text(words))
    turn = await converse_streaming(hass, words, language=language)

    assert turn.speech == spoken_sentence("no_answer", language)
    assert len(fake_server.requests) == 2


async def test_a_follow_up_said_back_after_a_refused_change_is_not_acknowledged(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """After a change that ran, "a bit more" continues it: a refused change
    then ends "nothing was changed", as for any command."""
    ada = await create_user(hass, "Ada")
    fake_server.queue(
        fake.tool_calls([TURN_ON]),
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen", "brightness": 80})]),
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen", "brightness": 80})]),
    )
    first = await converse_streaming(hass, "turn on the kitchen", user_id=ada)
    assert hass.states.get(kitchen).state == STATE_ON
    turn = await converse_streaming(
        hass, "a bit more", first.result.conversation_id, user_id=ada
    )
    assert turn.speech == NOTHING_CHANGED


async def test_a_refused_forget_said_back_says_nothing_was_changed(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A memory change is no device change: "Forget my bicycle." met with a
    refused forget and said back is a command that did not run (review)."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    await start_with_facts(
        hass, hass_storage, config_entry, {speaker: ["I like jazz."]}
    )
    fake_server.queue(
        fake.tool_calls([(FORGET_TOOL_NAME, {"number": 1})]),
        fake.text("Forget my bicycle."),
        fake.text("Forget my bicycle."),
    )
    turn = await converse_streaming(hass, "Forget my bicycle.", user_id=ada)

    assert fact_texts(memory_of(config_entry), speaker) == ["I like jazz."]
    assert turn.speech == NOTHING_CHANGED
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_a_template_slot_asked_without_tools_is_could_not_check(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Asked again without tools, the answer repeats the prompt's template
    slot: "Sorry, I couldn't check that right now.", as before (review)."""
    fake_server.queue(
        fake.tool_calls([("HassTurnOff", {"name": "Kitchen"})]),
        fake.text("Here is one. The temperature outside is [value from tool]."),
    )
    turn = await converse_streaming(hass, "What could I cook tonight?")

    assert "tools" not in fake_server.requests[1]
    assert turn.speech == spoken_sentence("could_not_check")


@pytest.mark.parametrize("words", ["I'm so tired today.", "What's new today?"])
async def test_an_answer_that_shows_nothing_after_a_reading_tool_is_no_loop(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    words: str,
) -> None:
    """Seen on the bundled model: a reading tool, then the user's words said
    back. Nothing of it reached the chat log, whose last entry was still the
    tool's result, so the model was asked again until the tool loop's limit
    (ten requests, then "I couldn't finish that request"). It is asked once
    more, as any answer that shows nothing."""
    fake_server.queue(
        fake.tool_calls([("GetLiveContext", {})]), fake.text(words), fake.text(words)
    )
    turn = await converse_streaming(hass, words)

    assert turn.speech == spoken_sentence("no_answer")
    assert len(fake_server.requests) == 3


@pytest.mark.parametrize(
    ("language", "sentence"),
    [
        ("en", "The Kitchen was painted blue last spring."),
        ("en", "I turn on the Kitchen every evening at six."),
        ("es", "Porfa, enciende un rato la Kitchen que no veo nada"),
        ("de", "Mach mal kurz die Kitchen an, ich seh nichts"),
    ],
)
async def test_words_said_back_are_asked_for_again_as_they_were(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    language: str,
    sentence: str,
) -> None:
    """An answer that only said the words back is asked for once more, with
    no tool call required, a command HA could not read too: under
    `tool_choice: "required"` llama.cpp lets prose come first, and the
    bundled model wrote "Yes, the heater is now off in the study." there
    (session set, held out, tried in 8f61df3 and reverted); a statement
    that names a device would have it changed."""
    fake_server.queue(fake.text(sentence), fake.text("What a nice colour."))
    turn = await converse_streaming(hass, sentence, language=language)

    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.speech == "What a nice colour."
    said_back, again = fake_server.requests
    assert "tool_choice" not in said_back
    assert "tool_choice" not in again


@pytest.mark.parametrize(
    ("language", "sentence", "answer"),
    [
        ("en", "Make me laugh", "Why did the scarecrow win an award?"),
        ("en", "I start work at nine tomorrow", "Good luck with the early start."),
        (
            "en",
            "Set a reminder for tomorrow at nine",
            "I can't set reminders, but you could add it to your calendar.",
        ),
        ("de", "Mach dir keine Sorgen", "Danke, das ist nett von dir."),
        ("de", "Ich mache heute Sport", "Viel Spaß beim Training."),
        ("fr", "Passe une bonne journée", "Merci, toi aussi."),
        ("es", "Escuchar música me relaja", "Es una buena forma de descansar."),
        ("nl", "Ik ga naar bed", "Slaap lekker."),
        ("it", "Crea una poesia", "Le foglie cadono piano sul sentiero."),
        ("pt", "Continua a chover?", "Segundo a previsão, já não chove."),
    ],
)
async def test_everyday_words_that_start_like_a_command_are_answered(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    sentence: str,
    answer: str,
) -> None:
    """Found by review of a rule tried and reverted (c017c78: words that start
    with one of HA's command words asked a change, so with none run the model's
    answer was held). HA's command words are everyday words ("make", "mach",
    "passe", "ga", "crea", "continua"), its skip words hold pronouns ("I
    start ..."): these ordinary answers were replaced by "nothing was
    changed". They are spoken as the model gave them."""
    fake_server.queue(fake.text(answer))
    turn = await converse_streaming(hass, sentence, language=language)
    assert turn.speech == answer
    assert len(fake_server.requests) == 1


async def test_a_request_answered_after_a_read_is_spoken(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Found by the same review: "Check ..." starts like a command; the model
    read the live data and answered, and that answer was replaced."""
    fake_server.queue(
        fake.tool_calls([("GetLiveContext", {})]),
        fake.text("Tomorrow will be sunny with a high of 21 degrees."),
    )
    turn = await converse_streaming(hass, "Check the weather for tomorrow")
    assert turn.speech == "Tomorrow will be sunny with a high of 21 degrees."
