"""What the user hears when the model or the server misbehaves.

Every failure ends in one short spoken sentence (an ERROR response, never a
traceback), is logged once, and leaves the agent working for the next turn.
"""

from __future__ import annotations

from collections.abc import Callable
import logging
from typing import Any

from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.const import CONF_MODEL, STATE_OFF, STATE_ON
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import chat_session, intent
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_capture_events,
)

from custom_components.local_assistant.const import (
    CONF_EXTRACTION,
    CONF_TIMEOUT,
    EXTRACTION_OFF,
    MAX_TOOL_ITERATIONS,
)
from tests.helpers import fake_openai as fake
from tests.helpers.ha import AGENT_ID, MODEL, NOTHING_CHANGED, converse, speech
from tests.helpers.live import PAGING_OPTIONS, forecast_page_after_page

ENTITY_LOGGER = "custom_components.local_assistant"


def assert_short_error(result: conversation.ConversationResult) -> str:
    """An ERROR response with one short, plain sentence."""
    assert result.response.response_type is intent.IntentResponseType.ERROR
    said = speech(result)
    assert said
    assert len(said) < 120
    assert "Traceback" not in said
    assert not said.lower().startswith("error")
    assert "Fake" not in said  # the server's own message is not read out
    assert "{" not in said
    return said


def non_system(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] != "system"]


def model_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name.startswith(ENTITY_LOGGER) and r.levelno >= logging.WARNING
    ]


@pytest.fixture
async def porch(hass: HomeAssistant, kitchen: str) -> str:
    """A second exposed device, beside the kitchen: a real template light.

    After a change ran, the model is asked again only while the user's words
    name a device no change acted on yet (``TurnPolicy.names_more``): words
    that name the porch too let a test reach the round after the kitchen's
    change. Optimistic (it keeps its own state): ``input_boolean`` is set up
    once, by ``kitchen``, so no second input_boolean can switch it.
    """
    assert await async_setup_component(
        hass,
        "template",
        {
            "template": [
                {
                    "light": [
                        {
                            "name": "Porch",
                            "unique_id": "test_porch",
                            "turn_on": {"event": "test_porch_on"},
                            "turn_off": {"event": "test_porch_off"},
                        }
                    ]
                }
            ]
        },
    )
    await hass.async_block_till_done()
    async_expose_entity(hass, "conversation", "light.porch", True)
    assert hass.states.get("light.porch").state == STATE_OFF
    return "light.porch"


# --- HTTP and stream failures ---------------------------------------------------------

FAILURES: dict[str, tuple[Callable[[], fake.Reply], str]] = {
    "http_401": (lambda: fake.error(401, "Fake bad key"), "API key"),
    "http_403": (lambda: fake.error(403, "Fake forbidden"), "API key"),
    "http_404": (lambda: fake.error(404, "Fake no such model"), "model"),
    "http_429": (lambda: fake.error(429, "Fake busy"), "busy"),
    "http_500": (lambda: fake.error(500, "Fake crash"), "error"),
    "http_503": (lambda: fake.error(503, "Fake unavailable"), "error"),
    "disconnect_mid_stream": (lambda: fake.disconnect(after_events=4), "reach"),
    "malformed_sse": (
        lambda: fake.malformed(
            [
                'data: {"id":"x","object":"chat.completion.chunk","created":0,'
                '"model":"m","choices":[{"index":0,"delta":{"content":"Hel"},'
                '"finish_reason":null}]}',
                "data: {this is not json",
            ]
        ),
        "broken",
    ),
    "llamacpp_stream_error": (
        lambda: fake.stream_error("Partial answer", "Fake context overflow"),
        "broken",
    ),
}


@pytest.mark.parametrize("failure", FAILURES)
async def test_server_failure_is_one_short_sentence(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
    failure: str,
) -> None:
    """HTTP errors and broken streams: a short sentence, logged once, no retry storm."""
    build, hint = FAILURES[failure]
    fake_server.queue(build(), fake.text("Recovered."))
    said = assert_short_error(await converse(hass, "hello"))
    assert hint in said
    assert len(fake_server.requests) == 1
    (warning,) = model_warnings(caplog)
    assert warning.exc_info is None  # one line, not a traceback
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]

    # Nothing is stuck: the next turn works.
    result = await converse(hass, "hello again")
    assert result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert speech(result) == "Recovered."


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("es", "El servidor del modelo local ha informado de un error."),
        ("es-ES", "El servidor del modelo local ha informado de un error."),
        ("es-419", "El servidor del modelo local ha informado de un error."),
        ("en", "The local model server reported an error."),
        ("en-GB", "The local model server reported an error."),
        ("de", "Der lokale Modellserver hat einen Fehler gemeldet."),
        ("de-CH", "Der lokale Modellserver hat einen Fehler gemeldet."),
        ("it", "Il server del modello locale ha segnalato un errore."),
        ("pl-PL", "Serwer lokalnego modelu zgłosił błąd."),
        ("hu", "A helyi modellszerver hibát jelzett."),
        ("zh-TW", "本地模型伺服器回報了一個錯誤，請再試一次。"),
        ("tlh", "The local model server reported an error."),  # no file of ours
        ("*", "The local model server reported an error."),
    ],
)
async def test_error_sentence_follows_the_conversation_language(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    expected: str,
) -> None:
    """Spoken errors are in the conversation's language, as the tool filler is, not
    in Home Assistant's; both the response and the streamed text."""
    fake_server.queue(fake.error(500))
    result = await converse(hass, "hola", language=language)
    said = assert_short_error(result)
    assert said.startswith(expected)
    with (
        chat_session.async_get_chat_session(hass, result.conversation_id) as session,
        conversation.async_get_chat_log(hass, session) as chat_log,
    ):
        assert chat_log.content[-1].content == said


@pytest.mark.parametrize("agent_options", [PAGING_OPTIONS])
async def test_every_turn_failure_is_spoken_in_spanish(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The tool loop's own sentences too (no answer, endless tools)."""
    fake_server.queue(fake.text("", think="hmm"), fake.text("", think="hmm"))
    said = assert_short_error(await converse(hass, "hola", language="es"))
    assert said == (
        "Lo siento, el modelo local no ha dado ninguna respuesta. Inténtalo de nuevo."
    )
    fake_server.responder = forecast_page_after_page
    said = assert_short_error(await converse(hass, "hola", language="es"))
    assert said == "Lo siento, no he podido terminar esa petición. Inténtalo de nuevo."


@pytest.mark.parametrize(
    "entry_options", [{CONF_EXTRACTION: EXTRACTION_OFF, CONF_TIMEOUT: 0.5}]
)
@pytest.mark.parametrize(
    "reply",
    [fake.hang(), fake.hang(after_events=3, content="I was about to say")],
    ids=["before_headers", "mid_stream"],
)
async def test_timeout_is_one_short_sentence(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
    reply: fake.Reply,
) -> None:
    """A hung server is cut off after the configured timeout."""
    fake_server.queue(reply)
    said = assert_short_error(await converse(hass, "hello"))
    assert "too long" in said
    assert len(model_warnings(caplog)) == 1


async def test_server_down_mid_session(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The server goes away after a good turn: the user is told, nothing crashes."""
    fake_server.queue(fake.text("First answer."))
    assert speech(await converse(hass, "one", user_id="u1")) == "First answer."
    await fake_server.close()
    said = assert_short_error(await converse(hass, "two", user_id="u1"))
    assert "reach" in said


async def test_error_after_a_tool_round(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    porch: str,
) -> None:
    """A server failure in the round after a change ran: what ran answers
    (an error alone hid that the kitchen is on), and the turn is answered.

    The words name the porch too, so the model is asked again after the
    kitchen's change (it may still call for the porch); that round fails.
    What ran names the kitchen only: the porch stayed off."""
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]), fake.error(500)
    )
    result = await converse(hass, "kitchen and porch on")
    assert speech(result) == "Done: Kitchen."
    assert result.response.response_type is not intent.IntentResponseType.ERROR
    assert hass.states.get(kitchen).state == STATE_ON
    assert hass.states.get(porch).state == STATE_OFF
    assert len(fake_server.requests) == 2


async def test_error_before_any_change_is_a_short_sentence(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """A failure in the round after a read (no change ran) is a short error."""
    fake_server.queue(fake.tool_calls([("GetLiveContext", {})]), fake.error(500))
    assert_short_error(await converse(hass, "is the kitchen on"))
    assert hass.states.get(kitchen).state == STATE_OFF


# --- the model misbehaves -------------------------------------------------------------


async def test_invalid_tool_json_goes_back_to_the_model(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Broken arguments become a tool error the model reads; its retry works."""
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", '{"name": "Kitchen"')]),
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.text("The kitchen is on now."),
    )
    result = await converse(hass, "kitchen on")
    assert result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert speech(result) == "The kitchen is on now."
    assert hass.states.get(kitchen).state == STATE_ON
    assert len(fake_server.requests) == 3

    second = fake_server.requests[1]["messages"]
    assert all("content" in message for message in second)
    (error_result,) = [m for m in second if m["role"] == "tool"]
    assert "HassTurnOn" in error_result["content"]
    assert "not valid JSON" in error_result["content"]
    assert "Call HassTurnOn again" in error_result["content"]


async def test_invalid_tool_json_then_plain_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Arguments that are JSON but not an object are an error too, never an exception.

    HA recognizes "turn on the kitchen" as a command, so an answer without a
    change that ran is not spoken: the user hears that nothing was changed.
    """
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", '["Kitchen"]')], split_arguments=True),
        fake.text("The kitchen is on."),
    )
    result = await converse(hass, "turn on the kitchen")
    assert speech(result) == NOTHING_CHANGED
    assert hass.states.get(kitchen).state == STATE_OFF
    (error_result,) = [
        m for m in fake_server.requests[1]["messages"] if m["role"] == "tool"
    ]
    assert "JSON object" in error_result["content"]


async def test_one_valid_and_one_invalid_call(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """The valid call runs, the broken one is answered with an error, in call order."""
    fake_server.queue(
        fake.tool_calls(
            [("HassTurnOn", {"name": "Kitchen"}), ("HassTurnOff", "{name: Porch}")],
            split_arguments=True,
            interleave=True,
        ),
        fake.text("The kitchen is on; I could not read the porch request."),
    )
    result = await converse(hass, "kitchen on, porch off")
    assert speech(result).startswith("The kitchen is on")
    assert hass.states.get(kitchen).state == STATE_ON
    tools = [m for m in fake_server.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["content"].split("(")[0] for m in tools] == [
        "Result of HassTurnOn",
        "Result of HassTurnOff",
    ]
    assert "not valid JSON" in tools[1]["content"]


async def test_unknown_tool_goes_back_to_the_model(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """A tool that does not exist is answered with HA's error; nothing ran, so the
    user hears that nothing was changed (the model's words would be a guess)."""
    fake_server.queue(
        fake.tool_calls([("HassTeleport", {"where": "Mars"})]),
        fake.text("Teleported."),
    )
    result = await converse(hass, "beam me and the kitchen to Mars")
    assert speech(result) == NOTHING_CHANGED
    (tool_result,) = [
        m for m in fake_server.requests[1]["messages"] if m["role"] == "tool"
    ]
    assert tool_result["content"].startswith(
        'Result of HassTeleport({"where": "Mars"})'
    )
    assert "not found" in tool_result["content"]


@pytest.mark.parametrize("agent_options", [PAGING_OPTIONS])
async def test_endless_tool_loop_stops_after_ten_rounds(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A model that never stops calling tools is cut off with a short sentence."""
    fake_server.responder = forecast_page_after_page
    said = assert_short_error(await converse(hass, "what's the weather?"))
    assert said
    assert len(fake_server.requests) == MAX_TOOL_ITERATIONS == 10
    # Every round saw the previous results (the loop really went on).
    assert (
        len([m for m in fake_server.requests[-1]["messages"] if m["role"] == "tool"])
        == 9
    )
    assert len(model_warnings(caplog)) == 1


async def test_empty_answer_is_retried_once_then_explained(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Think-only answers: one retry, then a short sentence; no third request."""
    fake_server.queue(
        fake.text("", think="hmm"),
        fake.text("", think="\n\n"),
        fake.text("never requested"),
    )
    said = assert_short_error(await converse(hass, "hello"))
    assert "no answer" in said
    assert len(fake_server.requests) == 2
    assert fake_server.pending == 1
    # The retry is the same question, not a conversation with an empty answer.
    assert fake_server.requests[1]["messages"] == fake_server.requests[0]["messages"]


async def test_empty_then_good_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A retry that answers is what the user hears."""
    fake_server.queue(fake.text("  ", think="nothing"), fake.text("Here you go."))
    result = await converse(hass, "hello")
    assert result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert speech(result) == "Here you go."
    assert len(fake_server.requests) == 2
    assert fake_server.requests[1]["messages"] == fake_server.requests[0]["messages"]


async def test_empty_answer_after_tool_round_is_retried(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Swama drops a malformed follow-up call: the empty answer is retried.

    The tool round is a read: after a read the model's words answer (after
    a change that ran, what ran would, and an empty answer is not asked for
    again: test_a_change_that_ran_then_no_answer_is_answered_by_what_ran)."""
    fake_server.queue(
        fake.tool_calls([("GetLiveContext", {})]),
        fake.text("", think="\n\n"),
        fake.text("The kitchen is off."),
    )
    result = await converse(hass, "is the kitchen on?")
    assert speech(result) == "The kitchen is off."
    assert hass.states.get(kitchen).state == STATE_OFF
    assert len(fake_server.requests) == 3
    assert fake_server.requests[2]["messages"] == fake_server.requests[1]["messages"]
    assert [m["role"] for m in fake_server.requests[2]["messages"]][-2:] == [
        "assistant",
        "tool",
    ]


async def test_failed_turn_is_not_remembered(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The error sentence is not replayed as if the model had said it."""
    fake_server.queue(fake.error(500), fake.text("Fine."))
    assert_short_error(await converse(hass, "first", user_id="u1"))
    await converse(hass, "second", user_id="u1")
    contents = [m["content"] for m in fake_server.last_request["messages"][1:]]
    assert not any("reported an error" in c for c in contents)


# --- streaming TTS ------------------------------------------------------------------


async def converse_listening(
    hass: HomeAssistant, text: str
) -> tuple[conversation.ConversationResult, list[dict[str, Any]]]:
    """A turn with a chat log delta listener, as the Assist pipeline runs it."""
    deltas: list[dict[str, Any]] = []
    with (
        chat_session.async_get_chat_session(hass) as session,
        conversation.async_get_chat_log(
            hass, session, chat_log_delta_listener=lambda _log, d: deltas.append(d)
        ),
    ):
        result = await conversation.async_converse(
            hass, text, session.conversation_id, Context(), agent_id=AGENT_ID
        )
    return result, deltas


def last_streamed_message(deltas: list[dict[str, Any]]) -> str:
    """The content of the last assistant message the listener saw."""
    start = max(i for i, d in enumerate(deltas) if d.get("role") == "assistant")
    return "".join(
        str(d.get("content") or "")
        for d in deltas[start:]
        if d.get("role") in (None, "assistant")
    )


STREAMED_FAILURES: dict[str, Callable[[fake.FakeOpenAIServer], None]] = {
    "error_first_round": lambda s: s.queue(fake.error(500)),
    "error_after_tool_round": lambda s: s.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})], content="Let me see."),
        fake.error(503),
    ),
    "long_text_then_disconnect": lambda s: s.queue(
        fake.disconnect(
            after_events=30,
            content="<think>\n\n</think>\n\n"
            "This is a long answer that starts streaming to the speaker "
            "right away and then the connection is lost in the middle of it",
        )
    ),
    "empty_twice": lambda s: s.queue(fake.text("", think="a"), fake.text("")),
    "endless_tools": lambda s: setattr(
        s,
        "responder",
        lambda _body: fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
    ),
}


@pytest.mark.parametrize("failure", STREAMED_FAILURES)
async def test_error_sentence_is_streamed_too(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    failure: str,
) -> None:
    """The pipeline speaks streamed deltas once streaming TTS has started
    (long text, or text before a tool call); the error sentence must be one of them."""
    STREAMED_FAILURES[failure](fake_server)
    result, deltas = await converse_listening(hass, "hello")
    said = assert_short_error(result)
    assert last_streamed_message(deltas) == said


@pytest.mark.parametrize("agent_options", [{CONF_MODEL: MODEL}])
async def test_tool_call_without_tools_offered(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A model that calls a tool although none was offered does not crash the
    turn: the call never runs, and the model answers once more without tools."""
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.text("I can't control devices."),
    )
    result = await converse(hass, "tell me a joke")
    assert "tools" not in fake_server.requests[0]
    assert result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert speech(result) == "I can't control devices."
    assert non_system(fake_server.requests[1]) == [
        {"role": "user", "content": "tell me a joke"}
    ]


@pytest.mark.parametrize(
    ("language", "sentence", "done"),
    [
        ("en", "Kitchen and Porch", "Done: Kitchen."),
        ("es", "Kitchen y Porch", "Hecho: Kitchen."),
        ("de", "Kitchen und Porch", "Erledigt: Kitchen."),
        ("fr", "Kitchen et Porch", "C'est fait : Kitchen."),
        ("nl", "Kitchen en Porch", "Is gebeurd: Kitchen."),
    ],
    ids=[
        "en-Done: Kitchen.",
        "es-Hecho: Kitchen.",
        "de-Erledigt: Kitchen.",
        "fr-C'est fait : Kitchen.",
        "nl-Is gebeurd: Kitchen.",
    ],
)
async def test_a_change_made_again_is_answered_by_what_ran(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    porch: str,
    language: str,
    sentence: str,
    done: str,
) -> None:
    """The bundled model repeated a change that ran until the loop's limit,
    then "I couldn't finish that request" with the change done. The same call
    again is not run; what ran answers, by what it acted on, in the user's
    language.

    The words name the porch too, so the model is asked again after the
    kitchen's change (with the kitchen alone, what ran answers at once);
    there it makes the kitchen's change again. What ran names the kitchen
    only, not HA's response for one device: the words name the porch, which
    stayed off."""
    turned_on = async_capture_events(hass, "call_service")

    def always_a_tool(_body: dict[str, Any]) -> fake.Reply:
        return fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})])

    fake_server.responder = always_a_tool
    result = await converse(hass, sentence, language=language)
    assert speech(result) == done
    assert result.response.response_type is not intent.IntentResponseType.ERROR
    assert hass.states.get(kitchen).state == STATE_ON
    assert hass.states.get(porch).state == STATE_OFF
    assert len(fake_server.requests) == 2
    assert [(e.data["domain"], e.data["service"]) for e in turned_on] == [
        ("homeassistant", "turn_on"),
        ("input_boolean", "turn_on"),
    ]


async def test_a_read_made_again_is_answered_with_an_error_and_the_model_goes_on(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """What it read is in the chat log: the same read again is not run, and
    the model answers in its next round, with its tools."""
    fake_server.queue(
        fake.tool_calls([("GetDateTime", {})]),
        fake.tool_calls([("GetDateTime", {})]),
        fake.text("It is ten past nine."),
    )
    result = await converse(hass, "how late is it?")
    assert speech(result) == "It is ten past nine."
    assert len(fake_server.requests) == 3
    last = fake_server.requests[2]
    assert "tools" in last
    read, again = [m for m in last["messages"] if m["role"] == "tool"]
    assert read["content"].startswith("Result of GetDateTime({}): ")
    assert "already ran" in again["content"]


async def test_a_change_that_ran_then_no_answer_is_answered_by_what_ran(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    porch: str,
) -> None:
    """Seen on the bundled model: the change ran, its words after it showed
    nothing twice, and the user heard "the local model gave no answer".

    The words name the porch too, so the model is asked again after the
    kitchen's change; it answers nothing. Its words would be held anyway
    (what ran answers a round without calls), so the empty answer is not
    asked for again: what ran answers at once, by name (the porch stayed
    off)."""
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.text("", think="done"),
        fake.text("", think="done"),
    )
    result = await converse(hass, "Kitchen und Porch", language="de")
    assert speech(result) == "Erledigt: Kitchen."
    assert result.response.response_type is not intent.IntentResponseType.ERROR
    assert hass.states.get(kitchen).state == STATE_ON
    assert hass.states.get(porch).state == STATE_OFF
    assert len(fake_server.requests) == 2
    assert fake_server.pending == 1


@pytest.mark.parametrize("agent_options", [PAGING_OPTIONS])
async def test_a_change_that_ran_then_endless_reads_is_answered_by_what_ran(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    porch: str,
) -> None:
    """The change ran, then the model read and read until the loop's limit:
    what ran answers, not "the model kept calling tools".

    The words name the porch too, so the model is asked again after the
    kitchen's change (with the kitchen alone, what ran answers at once);
    after a read it goes on. What ran names the kitchen only."""

    def change_then_reads(body: dict[str, Any]) -> fake.Reply:
        if not any(m["role"] == "tool" for m in body["messages"]):
            return fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})])
        return forecast_page_after_page(body)

    fake_server.responder = change_then_reads
    result = await converse(hass, "Kitchen et Porch", language="fr")
    assert speech(result) == "C'est fait : Kitchen."
    assert result.response.response_type is not intent.IntentResponseType.ERROR
    assert hass.states.get(kitchen).state == STATE_ON
    assert hass.states.get(porch).state == STATE_OFF
    assert len(fake_server.requests) == MAX_TOOL_ITERATIONS


async def test_a_refused_change_then_no_answer_is_an_error(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Garage"})]),
        fake.text("", think="hmm"),
        fake.text("", think="hmm"),
    )
    result = await converse(hass, "turn on the kitchen")
    assert_short_error(result)
    assert not speech(result).startswith("Done")
    assert hass.states.get(kitchen).state == STATE_OFF


async def test_reads_made_again_after_a_command_never_claim_it(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """HA read a command and the model only read, twice: no change ran, so
    its words would claim one; the turn ends "nothing was changed"."""
    fake_server.queue(
        fake.tool_calls([("GetLiveContext", {})]),
        fake.tool_calls([("GetLiveContext", {})]),
        fake.text("The kitchen is on now."),
    )
    result = await converse(hass, "turn on the kitchen")
    assert speech(result) == NOTHING_CHANGED
    assert hass.states.get(kitchen).state == STATE_OFF


async def test_a_read_made_again_after_a_refusal_gets_the_models_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """A question met with HassTurnOn (refused), then the same read twice
    ("Is the kitchen on?"): the read made again is no repeat of a change,
    and what was read answers it, in the model's words."""
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.tool_calls([("GetLiveContext", {})]),
        fake.tool_calls([("GetLiveContext", {})]),
        fake.text("No, the kitchen is off."),
    )
    result = await converse(hass, "Is the kitchen on?")
    assert speech(result) == "No, the kitchen is off."
    assert hass.states.get(kitchen).state == STATE_OFF
    assert len(fake_server.requests) == 4


async def test_a_change_made_again_after_another_change_is_no_repeat(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    porch: str,
) -> None:
    """Only a change made again right after it ran is a repeat: on, off, on
    is three changes, and each runs (the third, taken for a repeat, would
    leave the kitchen off and end the turn a round early).

    The words name the porch too, so the model is asked again after each of
    the kitchen's changes (with the kitchen alone, what ran answers after
    the first). Its words after them are held: what ran answers, by name."""
    switched = async_capture_events(hass, "call_service")
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.tool_calls([("HassTurnOff", {"name": "Kitchen"})]),
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.text("The kitchen blinked and is on."),
    )
    result = await converse(hass, "make the kitchen and the porch blink once")
    assert speech(result) == "Done: Kitchen."
    assert hass.states.get(kitchen).state == STATE_ON
    assert hass.states.get(porch).state == STATE_OFF
    assert len(fake_server.requests) == 4
    assert [
        (e.data["domain"], e.data["service"])
        for e in switched
        if e.data["domain"] == "input_boolean"
    ] == [
        ("input_boolean", "turn_on"),
        ("input_boolean", "turn_off"),
        ("input_boolean", "turn_on"),
    ]


async def test_a_change_made_again_after_another_was_refused_is_answered_from_the_results(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """One change ran, another was refused: "Done: Kitchen." would pass the
    refused one over; the model answers from the turn's results, without
    tools."""
    fake_server.queue(
        fake.tool_calls(
            [("HassTurnOn", {"name": "Kitchen"}), ("HassTurnOn", {"name": "Garage"})]
        ),
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.text("The kitchen is on; I could not switch the garage."),
    )
    result = await converse(hass, "Kitchen")
    assert speech(result) == "The kitchen is on; I could not switch the garage."
    assert hass.states.get(kitchen).state == STATE_ON
    assert len(fake_server.requests) == 3
    last = fake_server.requests[2]
    assert "tools" not in last
    assert len([m for m in last["messages"] if m["role"] == "tool"]) == 3


async def test_a_change_that_ran_then_broken_calls_is_answered_by_what_ran(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    porch: str,
) -> None:
    """Seen on the bundled model in CI: the change ran, then llama.cpp could
    not read the model's next tool call, twice (a stream error before any
    text): the model's failure, not the server's, so what ran answers.

    The words name the porch too, so the model is asked again after the
    kitchen's change (with the kitchen alone, what ran answers at once);
    its unreadable call is asked for once more, then what ran answers, by
    name (the porch stayed off)."""
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen"})]),
        fake.stream_error("", "Failed to parse tool call"),
        fake.stream_error("", "Failed to parse tool call"),
    )
    result = await converse(hass, "Kitchen en Porch", language="nl")
    assert speech(result) == "Is gebeurd: Kitchen."
    assert result.response.response_type is not intent.IntentResponseType.ERROR
    assert hass.states.get(kitchen).state == STATE_ON
    assert hass.states.get(porch).state == STATE_OFF
    assert len(fake_server.requests) == 3
