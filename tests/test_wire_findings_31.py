"""The model server's wire behaviour and failures, and what the user hears.

Found by the thirty-first hunt. Real HA (the `hass` fixture), the real
openai client, real HTTP and SSE from the fake server of tests/helpers.
"""

from __future__ import annotations

from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.helpers import fake_openai as fake
from tests.helpers.ha import (
    converse,
    speech,
    sse_chunk,
)

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
