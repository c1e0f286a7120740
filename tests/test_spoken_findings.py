"""What the user hears or sees of a model's streamed answer: bugs found by a
hunt (helper session, read no benchmark set). Every test here failed on the
code as it was found (45d66a6), for the reason its docstring gives.

Real HA, the real openai client, real SSE from the fake server on
127.0.0.1 where the bug shows end to end; the pure filters where that is
enough.
"""

from __future__ import annotations

from collections.abc import Iterable
import random

from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, entity_registry as er
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.llm.spoken import SpokenFilter, speakable
from tests.helpers import fake_openai as fake
from tests.helpers.ha import (
    StreamedTurn,
    async_setup_exposed_lights,
    converse_streaming,
    spoken_sentence,
    sse_chunk,
)


def text_reply(pieces: Iterable[str], finish: str = "stop") -> fake.Reply:
    """A completion streamed exactly as these content pieces."""
    return fake.malformed(
        [
            sse_chunk({"role": "assistant"}),
            *(sse_chunk({"content": piece}) for piece in pieces),
            sse_chunk({}, finish),
            "data: [DONE]",
        ]
    )


def splits(text: str, rng: random.Random, most: int = 10) -> list[str]:
    """``text`` cut at random places (any place: inside tags, words, URLs)."""
    count = rng.randint(0, min(most, len(text) - 1))
    cuts = sorted(rng.sample(range(1, len(text)), count))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def everything_shown(turn: StreamedTurn) -> list[str]:
    """What TTS speaks, the final speech, and what the chat UI shows."""
    return [
        turn.speech,
        turn.streamed_text,
        *(content.content or "" for content in turn.assistant_contents),
    ]


EMPTY_THINK = "<think>\n\n</think>\n\n"


# ---------------------------------------------------------------------------
# 1. A tool call the model wrote as text is read out.
# ---------------------------------------------------------------------------

WRITTEN_CALLS = {
    # Qwen3's own (Hermes) format, when the server does not parse it.
    "hermes_tags": '<tool_call>\n{"name": "GetLiveContext", "arguments": {}}\n</tool_call>',
    "bare_json": '{"name": "GetLiveContext", "arguments": {}}',
}


@pytest.mark.parametrize("form", WRITTEN_CALLS)
async def test_a_tool_call_written_as_text_is_not_read_out(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    form: str,
) -> None:
    """Qwen3 writes its call as `<tool_call>{"name": ...}</tool_call>` text
    when the server does not turn it into `tool_calls` (or as bare JSON).
    The satellite read it out: "tool call, open brace, name, GetLiveContext,
    arguments ...", and the chat dialog showed the JSON as the answer. A
    written call is no answer in any form: it is never said."""
    written = WRITTEN_CALLS[form]
    rng = random.Random(form)
    fake_server.queue(
        *(text_reply([EMPTY_THINK, *splits(written, rng)]) for _ in range(4))
    )
    turn = await converse_streaming(hass, "What is the weather like?", language="en")
    for shown in everything_shown(turn):
        for needle in ("{", "}", '"name"', "arguments", "tool_call", "GetLiveContext"):
            assert needle not in shown, f"{needle!r} was said in {shown!r}"


# ---------------------------------------------------------------------------
# 2. A true answer from the prompt's static device list is dropped.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "answer", "said"),
    [
        ("In which room is the desk lamp?", "In the office.", "office"),
        ("Which room is the desk lamp in?", "Office.", "Office"),
        ("What kind of device is the desk lamp?", "A light.", "light"),
    ],
)
async def test_an_answer_from_the_static_device_list_is_said(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    question: str,
    answer: str,
    said: str,
) -> None:
    """HA's prompt lists the devices as YAML ("- names: Desk Lamp" /
    "  domain: light" / "  areas: Office") and tells the model to answer
    device questions "from the static context below". The indented lines
    were taken for instruction lines (conversation.py `_instruction_lines`
    skips only lines starting "- "), so "In the office." counted as an
    instruction said back (llm/echo.py) and was never shown: the user heard
    "Sorry, the local model gave no answer." for a true answer."""
    (lamp,) = await async_setup_exposed_lights(hass, "Desk Lamp")
    office = ar.async_get(hass).async_create("Office")
    er.async_get(hass).async_update_entity(lamp, area_id=office.id)
    fake_server.queue(*(text_reply([EMPTY_THINK, answer]) for _ in range(3)))
    turn = await converse_streaming(hass, question, language="en")
    assert said in turn.speech
    assert turn.speech == answer


# ---------------------------------------------------------------------------
# 3. "Who are you?" answered with the prompt's first line is dropped.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Who are you?", "I am a voice assistant for Home Assistant."),
        ("What can you do for me?", "I answer questions about the world truthfully."),
    ],
)
async def test_an_answer_about_the_assistant_itself_is_said(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    question: str,
    answer: str,
) -> None:
    """The true answer to "Who are you?" says what the prompt's first line
    says ("You are a voice assistant for Home Assistant."): its distinctive
    words all come from that line, so llm/echo.py took it for an
    instruction said back and showed nothing; asked again it answered the
    same, and the user heard "Sorry, the local model gave no answer.\" """
    fake_server.queue(*(text_reply([EMPTY_THINK, answer]) for _ in range(3)))
    turn = await converse_streaming(hass, question, language="en")
    assert turn.speech == answer
    # Said, never replayed: the session would teach a restating loop.
    fake_server.queue(text_reply([EMPTY_THINK, "Fine, thanks."]))
    await converse_streaming(
        hass, "How are you?", turn.result.conversation_id, language="en"
    )
    replayed = [m.get("content") for m in fake_server.last_request["messages"]]
    assert answer not in replayed
    assert question not in replayed


# ---------------------------------------------------------------------------
# 4. A URL with a non-ASCII letter is cut there: "the linkünchen".
# ---------------------------------------------------------------------------

URLS = [
    ("de", "Mehr unter https://de.wikipedia.org/wiki/München.", "Mehr unter den Link."),
    (
        "fr",
        "Voir https://fr.wikipedia.org/wiki/Élysée pour plus.",
        "Voir ce lien pour plus.",
    ),
    ("es", "Más en https://es.wikipedia.org/wiki/España.", "Más en este enlace."),
    ("de", "Siehe www.wetter.de/köln heute.", "Siehe den Link heute."),
]


@pytest.mark.parametrize(("language", "text", "expected"), URLS)
def test_a_url_with_an_accented_letter_is_replaced_whole(
    language: str, text: str, expected: str
) -> None:
    """spoken.py `_url` ends a bare URL at the first non-ASCII character (meant
    for "。" after a Chinese URL), so the rest of a German, French or
    Spanish Wikipedia address was said, glued to the link phrase: "Mehr
    unter den Linkünchen.", "Voir ce lienÉlysée pour plus."."""
    link_text = {"de": "den Link", "fr": "ce lien", "es": "este enlace"}[language]
    assert speakable(text, link_text=link_text) == expected
    one_by_one = SpokenFilter(link_text=link_text)
    said = "".join(one_by_one.feed(char) for char in text) + one_by_one.flush()
    assert said == expected


async def test_a_url_with_an_umlaut_is_not_garbled_end_to_end(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The same through the agent: the user heard "den Linkünchen"."""
    answer = "München hat 1,5 Millionen Einwohner, siehe https://de.wikipedia.org/wiki/München."
    fake_server.queue(text_reply(splits(EMPTY_THINK + answer, random.Random(4))))
    turn = await converse_streaming(hass, "Wie groß ist München?", language="de")
    for shown in everything_shown(turn):
        assert "Linkü" not in shown
        assert shown.endswith("siehe den Link.")


# ---------------------------------------------------------------------------
# 5. Dates on consecutive lines lose their day ("Mai ist Feiertag").
# ---------------------------------------------------------------------------

DATES = [
    # German: 1 and 2 May, said in sentences.
    "1. Mai ist Feiertag.\n2. Mai ist Brückentag.",
    # With the year after the month.
    "1. Dezember 2024: Adventsmarkt\n2. Dezember 2024: Konzert",
    # With a time after the month.
    "1. Dezember um 18 Uhr: Markt\n2. Dezember um 20 Uhr: Konzert",
    # Danish and Polish write dates the same way.
    "1. juni er det sol.\n2. juni regner det.",
    "1. maja będzie słonecznie.\n2. maja będzie padać.",
]


@pytest.mark.parametrize("text", DATES)
def test_ordinal_dates_on_consecutive_lines_keep_their_day(text: str) -> None:
    """spoken.py `_list_item` takes "1." over "2." for a numbered list unless
    both lines start with the same LONE word (`_lone_word`: "Dezember:"). A
    month followed by more words ("Mai ist", "Dezember 2024", "juni er")
    is no lone word, so the days were dropped: the user heard "Mai ist
    Feiertag. Mai ist Brückentag." - which day is which is lost."""
    assert speakable(text) == text
    one_by_one = SpokenFilter()
    said = "".join(one_by_one.feed(char) for char in text) + one_by_one.flush()
    assert said == text


async def test_dates_keep_their_day_end_to_end(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The same through the agent, in German."""
    answer = "1. Mai ist Feiertag.\n2. Mai ist Brückentag."
    fake_server.queue(text_reply(splits(EMPTY_THINK + answer, random.Random(5))))
    turn = await converse_streaming(
        hass, "Welche Tage sind Anfang Mai frei?", language="de"
    )
    assert turn.speech == answer


# ---------------------------------------------------------------------------
# 6. "Say that again": the same true answer a second time is dropped.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "question", "again", "answer"),
    [
        (
            "en",
            "How long do eggs need to boil?",
            "Sorry, say that again?",
            "Soft boiled eggs need about six minutes in boiling water.",
        ),
        (
            "de",
            "Wie heißt die Hauptstadt von Australien?",
            "Wie bitte, nochmal?",
            "Die Hauptstadt von Australien ist Canberra, nicht Sydney.",
        ),
    ],
)
async def test_an_answer_asked_for_again_is_said_again(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    question: str,
    again: str,
    answer: str,
) -> None:
    """A voice user who did not catch the answer asks for it again, and the
    model says it again. llm/echo.py counts an earlier answer of six words
    or more as a repeat never to be shown (`echo_keys`, earlier_answers), so
    the answer was held, asked for again, dropped again, and the user heard
    "Sorry, the local model gave no answer." instead of the answer."""
    fake_server.queue(text_reply([EMPTY_THINK, answer]))
    first = await converse_streaming(hass, question, language=language)
    assert first.speech == answer
    fake_server.queue(*(text_reply([EMPTY_THINK, answer]) for _ in range(3)))
    turn = await converse_streaming(
        hass, again, first.result.conversation_id, language=language
    )
    assert turn.speech == answer


async def test_an_earlier_answer_restated_to_a_statement_is_not_said(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Only a question is answered by what was said before: an earlier
    answer restated to a statement ("¡De nada! Si tienes alguna otra
    pregunta..." for a remark about the guest room, seen on the bundled
    model) answers nothing, and the user hears that no answer came."""
    answer = "Soft boiled eggs need about six minutes in boiling water."
    fake_server.queue(text_reply([EMPTY_THINK, answer]))
    first = await converse_streaming(
        hass, "How long do eggs need to boil?", language="en"
    )
    assert first.speech == answer
    fake_server.queue(*(text_reply([EMPTY_THINK, answer]) for _ in range(3)))
    turn = await converse_streaming(
        hass,
        "My mother-in-law always sleeps in the guest room.",
        first.result.conversation_id,
        language="en",
    )
    assert turn.speech == spoken_sentence("no_answer", "en")
