"""The agent end to end: real HA, real openai client, real SSE from the fake server.

Streaming is observed the way the Assist pipeline observes it: a chat log
delta listener attached by the caller that opens the chat log (that listener
feeds TTS, so anything it sees as ``content`` would be spoken).
"""

from __future__ import annotations

from collections.abc import Callable
import json
from typing import Any

from homeassistant.const import CONF_LLM_HASS_API, CONF_MODEL, STATE_OFF, STATE_ON
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent, llm
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.helpers import fake_openai as fake
from tests.helpers.ha import (
    MODEL,
    async_setup_exposed_lights,
    converse,
    converse_streaming,
    speech,
)

# --- a plain answer --------------------------------------------------------------


async def test_streams_a_plain_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A plain answer arrives and think text never reaches the user."""
    fake_server.queue(fake.text("The sea is calm today.", think="the user asks"))
    result = await converse(hass, "hello")
    assert result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert speech(result) == "The sea is calm today."
    body = fake_server.last_request
    assert body["stream"] is True
    assert body["model"] == MODEL
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][0]["content"].endswith("/no_think")
    assert body["messages"][-1] == {"role": "user", "content": "hello"}
    assert all("content" in message for message in body["messages"])


async def test_answer_is_streamed_in_pieces(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The listener gets an assistant role first, then several content deltas.

    An answer's first SPEECH_STREAM_CHARS come as one piece, the rest as the
    server sends it (llm/stream.py).
    """
    answer = (
        "It is windy at the beach today, with a strong breeze from the west "
        "all afternoon."
    )
    fake_server.queue(fake.text(answer, think="weather question"))
    turn = await converse_streaming(hass, "how is the beach")
    assert turn.deltas[0] == {"role": "assistant"}
    content_deltas = [d for d in turn.deltas if d.get("content")]
    assert len(content_deltas) > 3
    assert turn.streamed_text == answer
    assert turn.speech == answer
    turn.assert_nothing_hidden_is_spoken("weather question")
    # Reasoning is kept apart, in thinking_content.
    (answer,) = turn.assistant_contents
    assert answer.thinking_content is not None
    assert "weather question" in answer.thinking_content


async def test_reasoning_content_is_never_spoken(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """llama.cpp's delta.reasoning_content goes to thinking_content only."""
    fake_server.queue(fake.reasoning("secret plan about lamps", "Lamps are fine."))
    turn = await converse_streaming(hass, "lamps?")
    assert turn.speech == "Lamps are fine."
    turn.assert_nothing_hidden_is_spoken("secret plan")
    (answer,) = turn.assistant_contents
    assert answer.thinking_content == "secret plan about lamps"


# Raw completions (tags written out) and what the user must hear. Each runs
# through the real server at chunk sizes 1..7, so tags split at every place.
THINK_STREAMS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "think_block": (
        "<think>\nThe user wants the weather.\n</think>\n\nIt is sunny.",
        "It is sunny.",
        ("user wants",),
    ),
    "empty_block": ("<think>\n\n</think>\n\nHello there.", "Hello there.", ()),
    "bare_close": (
        "The user greets me, be nice.</think>\n\nHi, nice to hear you!",
        "Hi, nice to hear you!",
        ("greets me",),
    ),
    "unclosed_at_end": (
        "All done.<think>maybe I should also mention",
        "All done.",
        ("mention",),
    ),
    "several_blocks": (
        "<think>first idea</think>First part. <think>second idea</think>Second part.",
        "First part. Second part.",
        ("idea",),
    ),
    "not_a_tag": (
        "<think></think>Keep a < b and <thinking> as they are.",
        "Keep a < b and <thinking> as they are.",
        (),
    ),
}


@pytest.mark.parametrize("chunk_size", range(1, 8))
@pytest.mark.parametrize("case", THINK_STREAMS)
async def test_think_table(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    case: str,
    chunk_size: int,
) -> None:
    """Think tags split anywhere never reach speech, the listener or the chat log."""
    raw, expected, hidden = THINK_STREAMS[case]
    fake_server.queue(fake.text(raw, chunk_size=chunk_size))
    turn = await converse_streaming(hass, "hi")
    assert turn.result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert turn.speech.strip() == expected
    assert turn.streamed_text.strip() == expected
    turn.assert_nothing_hidden_is_spoken(*hidden)
    assert len(fake_server.requests) == 1


async def test_prefilled_think_template_across_turns(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """After a bare </think> the agent expects one; a turn without reasoning is still spoken."""
    fake_server.queue(
        fake.text("I reason first.</think>\n\nFirst answer.", chunk_size=3),
        fake.text("Second reasoning.</think>\n\nSecond answer.", chunk_size=2),
        fake.text("Third answer without reasoning.", chunk_size=4),
    )
    first = await converse_streaming(hass, "one")
    second = await converse_streaming(hass, "two")
    third = await converse_streaming(hass, "three")
    assert first.speech == "First answer."
    assert second.speech == "Second answer."
    assert third.speech == "Third answer without reasoning."
    first.assert_nothing_hidden_is_spoken("reason first")
    second.assert_nothing_hidden_is_spoken("Second reasoning")


async def test_reasoning_cut_by_max_tokens_is_never_spoken(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Review: with <think> prefilled, reasoning cut at max_tokens before its
    </think> was spoken, and the agent then took the server for one that does
    not prefill, so the next turn spoke its reasoning too.

    The cut reasoning is an empty answer (asked again), and the next turn
    still waits for its </think>.
    """
    fake_server.queue(
        fake.text(
            "Okay, the user asks about the weather. I should call GetLiveContext and",
            finish="length",
            chunk_size=5,
        ),
        fake.text("Short this time.</think>\n\nIt is sunny.", chunk_size=4),
        fake.text("More reasoning here.</think>\n\nStill sunny.", chunk_size=3),
    )
    first = await converse_streaming(hass, "weather?")
    second = await converse_streaming(hass, "and now?")
    assert first.speech == "It is sunny."
    assert len(fake_server.requests) == 3
    first.assert_nothing_hidden_is_spoken("GetLiveContext", "Short this time")
    assert second.speech == "Still sunny."
    second.assert_nothing_hidden_is_spoken("More reasoning")


async def test_model_without_think_tags_streams_after_first_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Until the server shows how it thinks, text waits for </think> or the end.

    A model that never writes think tags gets its first answer whole; from
    then on the agent knows and streams word by word.
    """
    # Past SPEECH_STREAM_CHARS (llm/stream.py): a short answer comes whole.
    streamed = (
        "Second answer: once its first sixty characters are out, it streams "
        "word by word to the end."
    )
    fake_server.queue(
        fake.text("First answer, held until the end."), fake.text(streamed)
    )
    first = await converse_streaming(hass, "one")
    second = await converse_streaming(hass, "two")
    assert first.speech == "First answer, held until the end."
    assert len([d for d in first.deltas if d.get("content")]) == 1
    assert second.speech == streamed
    assert len([d for d in second.deltas if d.get("content")]) > 3


async def test_explicit_think_streams_from_the_first_answer(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Qwen3's own empty think block settles it at once: no answer is held."""
    # Past SPEECH_STREAM_CHARS (llm/stream.py): a short answer comes whole.
    answers = (
        "Streaming right away after the block: once sixty characters are out, "
        "word by word to the end.",
        "And again after the next block: once sixty characters are out, word "
        "by word to the end.",
    )
    fake_server.queue(*(fake.text(answer, think="\n\n") for answer in answers))
    for question, answer in zip(("one", "two"), answers, strict=True):
        turn = await converse_streaming(hass, question)
        assert turn.speech == answer
        assert len([d for d in turn.deltas if d.get("content")]) > 3


async def test_stream_without_done_marker(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Some servers end the body without [DONE]: the answer is still complete."""
    fake_server.queue(fake.no_done("Finished anyway.", think="x"))
    result = await converse(hass, "hi")
    assert result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert speech(result) == "Finished anyway."


async def test_history_replays_only_visible_text(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The next request carries the previous exchange without its reasoning."""
    fake_server.queue(
        fake.text("Your name is Ada.", think="recall the name"),
        fake.text("Yes."),
    )
    await converse(hass, "my name is Ada", user_id="user-1")
    await converse(hass, "did you get it?", user_id="user-1")
    messages = fake_server.last_request["messages"]
    assert messages[1:] == [
        {"role": "user", "content": "my name is Ada"},
        {"role": "assistant", "content": "Your name is Ada."},
        {"role": "user", "content": "did you get it?"},
    ]


# --- tool bias ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("agent_options", "biased"),
    [
        (
            {CONF_MODEL: MODEL, CONF_LLM_HASS_API: [llm.LLM_API_ASSIST]},
            True,
        ),
        (
            {
                CONF_MODEL: MODEL,
                CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
                "tool_bias": True,
            },
            True,
        ),
        (
            {
                CONF_MODEL: MODEL,
                CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
                "tool_bias": False,
            },
            False,
        ),
    ],
    ids=["default", "on", "off"],
)
async def test_tool_bias_in_system_prompt(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    biased: bool,
) -> None:
    """The override is on by default, ends with /no_think, and can be turned off."""
    fake_server.queue(fake.text("Okay."))
    await converse(hass, "hello there")
    system = fake_server.last_request["messages"][0]
    assert system["role"] == "system"
    if biased:
        assert "never answer from memory" in system["content"]
        assert system["content"].endswith("/no_think")
    else:
        assert "never answer from memory" not in system["content"]
        assert "/no_think" not in system["content"]
    # HA's own prompt and the Assist API prompt are there either way.
    assert "Home Assistant" in system["content"]
    tool_names = {t["function"]["name"] for t in fake_server.last_request["tools"]}
    assert "HassTurnOn" in tool_names


@pytest.mark.parametrize("agent_options", [{CONF_MODEL: MODEL}])
async def test_agent_without_api_sends_no_tools(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """No LLM API selected: no tools offered, the answer still streams."""
    fake_server.queue(fake.text("Just chatting."))
    result = await converse(hass, "hi")
    assert speech(result) == "Just chatting."
    assert "tools" not in fake_server.last_request


# --- tool calls --------------------------------------------------------------------


@pytest.fixture
async def lights(hass: HomeAssistant) -> list[str]:
    """Two real template lights (backed by input_booleans), exposed to Assist."""
    return await async_setup_exposed_lights(hass, "Kitchen", "Porch")


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


KITCHEN = ("HassTurnOn", {"name": "Kitchen"})
PORCH = ("HassTurnOn", {"name": "Porch"})
LIVE_CONTEXT: tuple[str, dict[str, Any]] = ("GetLiveContext", {})

TOOL_FORMS: dict[str, Callable[[], fake.Reply]] = {
    "swama_complete_delta": lambda: fake.tool_calls([KITCHEN]),
    "swama_no_index_after_finish": lambda: fake.tool_calls(
        [KITCHEN], no_index=True, after_finish=True
    ),
    "swama_two_calls_no_index": lambda: fake.tool_calls(
        [KITCHEN, PORCH], no_index=True
    ),
    "swama_two_calls_index_zero_after_finish": lambda: fake.tool_calls(
        [KITCHEN, PORCH], all_index_zero=True, after_finish=True
    ),
    "llamacpp_split_arguments": lambda: fake.tool_calls(
        [KITCHEN], split_arguments=True, chunk_size=3
    ),
    "llamacpp_two_calls_interleaved": lambda: fake.tool_calls(
        [KITCHEN, PORCH], split_arguments=True, interleave=True, chunk_size=2
    ),
}


@pytest.fixture
async def three_lights(hass: HomeAssistant) -> list[str]:
    """Three real template lights (backed by input_booleans), exposed to Assist."""
    return await async_setup_exposed_lights(hass, "Kitchen", "Porch", "Garden")


@pytest.mark.parametrize("form", TOOL_FORMS)
async def test_tool_call_turns_on_lights(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    three_lights: list[str],
    form: str,
) -> None:
    """Both streaming forms of tool calls really switch lights, and the next
    request replays them with their results.

    The words also name the garden light, which no call acts on, so the model
    is asked again (with its tools); its claim then is held, and what ran
    answers, by name.
    """
    reply = TOOL_FORMS[form]()
    fake_server.queue(reply, fake.text("Done, the lights are on."))
    turn = await converse_streaming(
        hass, "turn on the kitchen, porch and garden lights"
    )

    assert turn.result.response.response_type is intent.IntentResponseType.ACTION_DONE
    names = [call.name for call in reply.calls]
    expected_on = {"light.kitchen"} | ({"light.porch"} if len(names) == 2 else set())
    for entity_id in three_lights:
        state = STATE_ON if entity_id in expected_on else STATE_OFF
        assert hass.states.get(entity_id).state == state
    done = "Done: Kitchen, Porch." if len(names) == 2 else "Done: Kitchen."
    assert turn.speech == done
    assert turn.streamed_text == done

    assert len(fake_server.requests) == 2
    second = fake_server.requests[1]
    assert second["tools"]
    assert all("content" in message for message in second["messages"])
    results = tool_messages(second)
    assert len(results) == len(reply.calls)
    for call, message in zip(reply.calls, results, strict=True):
        args = json.dumps(json.loads(call.arguments), sort_keys=True)
        assert message["content"].startswith(f"Result of {call.name}({args}): ")
    assistant = [m for m in second["messages"] if m["role"] == "assistant"]
    assert len(assistant) == 1
    assert assistant[0]["content"] == ""
    assert [c["function"]["name"] for c in assistant[0]["tool_calls"]] == names


async def test_think_before_and_after_tool_results(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    lights: list[str],
) -> None:
    """Qwen3 thinks at the start of every completion, also after the tool results.

    The first round also reads (GetLiveContext), so the model is asked for the
    answer after its tool results, and that answer is spoken without its think.
    """
    fake_server.queue(
        fake.tool_calls(
            [KITCHEN, LIVE_CONTEXT], think="I should use HassTurnOn", chunk_size=3
        ),
        fake.text(
            "The kitchen light is on; the porch light is off.",
            think="The tool worked",
            chunk_size=2,
        ),
    )
    turn = await converse_streaming(hass, "kitchen light on, and is the porch on?")
    assert turn.speech == "The kitchen light is on; the porch light is off."
    assert turn.streamed_text == "The kitchen light is on; the porch light is off."
    assert hass.states.get("light.kitchen").state == STATE_ON
    assert hass.states.get("light.porch").state == STATE_OFF
    turn.assert_nothing_hidden_is_spoken("HassTurnOn", "tool worked")
    assert len(fake_server.requests) == 2
    # The reasoning of the tool round is not sent back either.
    second = fake_server.requests[1]
    for message in second["messages"][1:]:
        assert "I should use" not in message["content"]
        assert "<think>" not in message["content"]
    # Each completion started with an assistant role (the pipeline needs it).
    roles = [d["role"] for d in turn.deltas if "role" in d]
    assert roles.count("assistant") == 2


async def test_prefilled_think_in_a_tool_loop(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    lights: list[str],
) -> None:
    """A template that prefills <think>: only bare </think> tags, in every round.

    The first round also reads (GetLiveContext), so the model is asked for the
    answer after its tool results, and that answer is spoken without its think.
    """
    fake_server.queue(
        fake.tool_calls(
            [KITCHEN, LIVE_CONTEXT],
            content="I need the light tool.</think>\n\n",
            chunk_size=2,
        ),
        fake.text(
            "It worked, say so.</think>\n\nThe kitchen is lit, the porch is not.",
            chunk_size=3,
        ),
    )
    turn = await converse_streaming(hass, "kitchen on, and is the porch on?")
    assert turn.speech == "The kitchen is lit, the porch is not."
    assert turn.streamed_text == "The kitchen is lit, the porch is not."
    assert hass.states.get("light.kitchen").state == STATE_ON
    assert hass.states.get("light.porch").state == STATE_OFF
    assert len(fake_server.requests) == 2
    turn.assert_nothing_hidden_is_spoken("light tool", "say so")


async def test_text_and_tool_call_in_one_completion(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    lights: list[str],
) -> None:
    """Short text next to a tool call is not said; what ran is.

    Until a change ran, the pipeline would speak text before a call before
    the call ran ("It's on." may not come true): an answer's first
    SPEECH_STREAM_CHARS wait for its end and are dropped when calls follow
    (llm/stream.py). HA did not read the words as a command, so the model is
    asked again after each change, and the next request replays the call
    without them; its words after the changes ("Both lights are on.") are held,
    and what ran answers.
    """
    fake_server.queue(
        fake.tool_calls([KITCHEN], content="One moment, please.", think="plan"),
        fake.tool_calls([PORCH]),
        fake.text("Both lights are on."),
    )
    turn = await converse_streaming(hass, "the kitchen and porch lights, I need them")
    assert turn.speech == "Done: Kitchen, Porch."
    assert hass.states.get("light.kitchen").state == STATE_ON
    assert hass.states.get("light.porch").state == STATE_ON
    assert len(fake_server.requests) == 3
    assistant = [
        m for m in fake_server.requests[1]["messages"] if m["role"] == "assistant"
    ]
    assert assistant[0]["content"] == ""
    assert turn.streamed_text == "Done: Kitchen, Porch."
    turn.assert_nothing_hidden_is_spoken("plan")

    # HA reads "kitchen on" as that command: after it ran, the model is not
    # asked again.
    fake_server.queue(fake.tool_calls([KITCHEN], content="It's on now."))
    turn = await converse_streaming(hass, "kitchen on")
    assert turn.streamed_text == "Turned on the light"
    assert len(fake_server.requests) == 4
