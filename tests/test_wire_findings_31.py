"""The model server's wire behaviour and failures, and what the user hears.

Found by the thirty-first hunt. Real HA (the `hass` fixture), the real
openai client, real HTTP and SSE from the fake server of tests/helpers.
"""

from __future__ import annotations

import json
from typing import Any

from homeassistant.const import STATE_OFF
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.helpers import fake_openai as fake
from tests.helpers.ha import (
    async_setup_exposed_lights,
    converse,
    converse_streaming,
    speech,
    sse_chunk,
)
from tests.helpers.memory import create_user


def _written_call(name: str) -> str:
    """A Hermes/Qwen tool call written as text (a server without a tool parser)."""
    call = {"name": "HassTurnOn", "arguments": {"name": name}}
    return f"<tool_call>\n{json.dumps(call, ensure_ascii=False)}\n</tool_call>"


# ---------------------------------------------------------------------------
# 1. A tool call written as text is a call that did not run: no claim is said.
# ---------------------------------------------------------------------------

WRITTEN_CALLS = {
    "es": (
        "Cafetera",
        "¿Me pones la cafetera en marcha, porfa?",
        "¡Claro! Ya pongo la cafetera en marcha. ",
    ),
    "de": (
        "Kaffeemaschine",
        "Wirf mal die Kaffeemaschine an",
        "Klar, ich schalte die Kaffeemaschine ein. ",
    ),
    "fr": (
        "Lampe de lecture",
        "Il fait trop sombre pour lire ici",
        "J'allume la lampe de lecture. ",
    ),
    "nl": (
        "Leeslamp",
        "Het is hier veel te donker om te lezen",
        "Ik doe de leeslamp aan. ",
    ),
}


@pytest.mark.parametrize("language", WRITTEN_CALLS)
async def test_a_claim_before_a_tool_call_written_as_text_is_not_spoken(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
) -> None:
    """The user asks, in words HA's own sentences do not read ("Wirf mal die
    Kaffeemaschine an"), to switch on a device. The server has no tool-call
    parser for this model (llama.cpp without --jinja, vLLM without
    --enable-auto-tool-choice, an Ollama template without tools), so the model's
    call arrives as text: "Klar, ich schalte die Kaffeemaschine ein.
    <tool_call>{...}</tool_call>". SpokenFilter drops the written call (it
    never runs) but the claim before it is streamed and spoken as the answer,
    and it joins the session: the user hears that the coffee machine is being
    switched on, and it stays off. A written call is structurally a call: the
    words before it should be dropped as they are before a real call, and the
    user should hear that nothing was changed (or the call should run)."""
    name, words, claim = WRITTEN_CALLS[language]
    (device,) = await async_setup_exposed_lights(hass, name)
    fake_server.queue(
        fake.text(claim + _written_call(name)), fake.text(claim + _written_call(name))
    )
    turn = await converse_streaming(hass, words, language=language)
    assert hass.states.get(device).state == STATE_OFF
    assert claim.strip() not in turn.streamed_text
    assert claim.strip() not in turn.speech


# ---------------------------------------------------------------------------
# 5. The session outgrows the server's context: sent again without it.
# ---------------------------------------------------------------------------

CAKE = [
    ("Wie lange backe ich einen Käsekuchen?", "Etwa eine Stunde bei mittlerer Hitze."),
    ("Und bei welcher Temperatur?", "Bei hundertsechzig Grad im vorgeheizten Ofen."),
    ("Umluft oder Ober- und Unterhitze?", "Ober- und Unterhitze ist dafür besser."),
]


async def test_a_session_too_long_for_the_context_does_not_lock_the_user_out(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A long chat with llama.cpp (-c 8192, as scripts/local-model starts it):
    the session buffer keeps up to 24,000 characters for 120 idle minutes, and
    HA's prompt and tools take thousands of tokens more, so the request
    outgrows the server's context and llama.cpp answers HTTP 400 "the request
    exceeds the available context size". The user hears "Der lokale
    Modellserver hat einen Fehler gemeldet. Bitte versuch es noch einmal." -
    and so on every later turn, since the failed turn changes nothing in the
    session: trying again never helps, for up to two hours. A request refused
    for its size should be sent again without (or with less of) the replayed
    session, so the user still gets an answer and the next turn works."""
    ada = await create_user(hass, "Ada")

    def server(body: dict[str, Any]) -> fake.Reply:
        said = [m for m in body["messages"] if m["role"] in ("user", "assistant")]
        if len(said) > 5:  # the replayed session no longer fits
            return fake.error(
                400,
                "the request exceeds the available context size, try increasing it",
                code="exceed_context_size_error",
            )
        if said[-1]["content"] == "Und wie lange muss er abkühlen?":
            return fake.text("Mindestens drei Stunden, am besten über Nacht.")
        return fake.text(dict(CAKE)[said[-1]["content"]])

    fake_server.responder = server
    for words, answer in CAKE:
        assert speech(await converse(hass, words, user_id=ada, language="de")) == answer
    result = await converse(
        hass, "Und wie lange muss er abkühlen?", user_id=ada, language="de"
    )
    assert result.response.response_type is not intent.IntentResponseType.ERROR
    assert speech(result) == "Mindestens drei Stunden, am besten über Nacht."
    # The session that no longer fit is gone: the next turn is sent once.
    sent = len(fake_server.requests)
    assert (
        speech(
            await converse(
                hass, "Umluft oder Ober- und Unterhitze?", user_id=ada, language="de"
            )
        )
        == dict(CAKE)["Umluft oder Ober- und Unterhitze?"]
    )
    assert len(fake_server.requests) == sent + 1


# ---------------------------------------------------------------------------
# 6. A chunk of an unexpected shape is a broken stream.
# ---------------------------------------------------------------------------

ODD_CHUNKS = {
    "content_not_text": sse_chunk({"content": 42}),
    "tool_calls_not_a_list": sse_chunk(
        {
            "tool_calls": {
                "index": 0,
                "id": "call_1",
                "function": {"name": "HassTurnOn", "arguments": "{}"},
            }
        }
    ),
}


@pytest.mark.parametrize("case", ODD_CHUNKS)
async def test_a_chunk_of_an_odd_shape_is_a_short_spoken_error(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    case: str,
) -> None:
    """A server or proxy sends a chunk whose fields have the wrong type
    (`"content": 42`, `"tool_calls": {...}` instead of a list). The SDK builds
    chunks without validating them (stream.py says so: "any JSON may come"),
    and transform_stream feeds them on: a TypeError/AttributeError escapes
    the agent, the conversation call raises, and the user hears no sentence of
    ours at all (HA's pipeline reports an unexpected error, in English). It
    should be the short "broken answer" sentence in Dutch, like any other
    malformed stream, and the next turn should work."""
    odd = [
        sse_chunk({"role": "assistant"}),
        ODD_CHUNKS[case],
        sse_chunk({}, "stop"),
        "data: [DONE]",
    ]
    # A stream that breaks before any text is asked for once more (entity.py,
    # as llama.cpp's unreadable tool call is); the proxy sends the same again.
    fake_server.queue(fake.malformed(odd), fake.malformed(odd))
    result = await converse(hass, "Hoe laat gaat de bakker open?", language="nl")
    assert result.response.response_type is intent.IntentResponseType.ERROR
    assert speech(result)
    fake_server.queue(fake.text("Meestal om zeven uur."))
    assert speech(await converse(hass, "En op zondag?", language="nl")) == (
        "Meestal om zeven uur."
    )
