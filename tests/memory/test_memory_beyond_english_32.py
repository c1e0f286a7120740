"""Memory beyond English (issue 22), the thirty-second pass: forgets that take
the wrong note, questions stored as notes, and an update call the server
refuses. Each docstring says what the user does, hears, and should get.

Real HA (`hass`), the real openai client, the fake OpenAI-compatible server of
tests/helpers (real HTTP).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.local_assistant.const import CONF_EXTRACTION, EXTRACTION_LOCAL
from custom_components.local_assistant.memory.extraction import RETRY_SECONDS
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse, speech
from tests.helpers.memory import (
    ada_with_facts,
    chat_requests,
    extraction_idle,
    fact_texts,
    facts_answer,
    responder,
    said,
    update_requests,
)

LOCAL = {CONF_EXTRACTION: EXTRACTION_LOCAL}


# --- 1. "forget about my birthday" -------------------------------------------------

# (language, "forget about my birthday", my birthday, my wife's birthday)
BIRTHDAYS = [
    (
        "en",
        "Forget about my birthday.",
        "My birthday is on 4 June.",
        "My wife's birthday is in May.",
    ),
    (
        "es",
        "Olvídate de mi cumpleaños.",
        "Mi cumpleaños es el 4 de junio.",
        "El cumpleaños de mi esposa es en mayo.",
    ),
    (
        "de",
        "Vergiss alles über meinen Geburtstag.",
        "Mein Geburtstag ist am 4. Juni.",
        "Der Geburtstag meiner Frau ist im Mai.",
    ),
    (
        "fr",
        "Oublie ce que tu sais sur mon anniversaire.",
        "Mon anniversaire est le 4 juin.",
        "L'anniversaire de ma femme est en mai.",
    ),
    (
        "nl",
        "Vergeet alles over mijn verjaardag.",
        "Mijn verjaardag is op 4 juni.",
        "De verjaardag van mijn vrouw is in mei.",
    ),
]


@pytest.mark.parametrize(("language", "sentence", "mine", "wife"), BIRTHDAYS)
async def test_forget_about_my_birthday_keeps_my_wifes(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    sentence: str,
    mine: str,
    wife: str,
) -> None:
    """Ada's notes: her wife's birthday and that she likes jazz; none about
    her own birthday. She says "Forget about my birthday." Before the fix the
    wife's birthday went at once (the only note sharing "birthday"). The
    request names no note of hers: she should hear it read back with its
    number to confirm, and keep both notes."""
    jazz = "I like jazz."
    ada, speaker, memory = await ada_with_facts(
        hass, hass_storage, config_entry, [wife, jazz], LOCAL
    )
    result = await converse(hass, sentence, user_id=ada, language=language)
    left = fact_texts(memory, speaker)
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert left == [wife, jazz], speech(result)
    assert wife in speech(result)
    assert chat_requests(fake_server) == []


@pytest.mark.parametrize(("language", "sentence", "mine", "wife"), BIRTHDAYS)
async def test_forget_about_my_birthday_takes_only_mine(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    sentence: str,
    mine: str,
    wife: str,
) -> None:
    """Ada's notes: her own birthday and her wife's. "Forget about my
    birthday" asked which of the two (both share "birthday"); it says hers:
    hers should go at once, her wife's stay."""
    ada, speaker, memory = await ada_with_facts(
        hass, hass_storage, config_entry, [mine, wife], LOCAL
    )
    result = await converse(hass, sentence, user_id=ada, language=language)
    left = fact_texts(memory, speaker)
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert left == [wife], speech(result)
    assert chat_requests(fake_server) == []


# --- 2. a question about memory ----------------------------------------------------


# Withdrawn after review: reading every polite question as a question left
# "Czy możesz zapamiętać, że ...?", "Kan du komma ihåg att ...?", "Potresti
# ricordarti che ...?" to the model, and a chat-only agent has no memory tool
# (tests/test_review_32.py). English "that" opens the fact and "that song" alike.
POLITE_OPEN = pytest.mark.xfail(
    strict=True,
    reason="open: politeness cannot tell this question from a request to remember",
)


@pytest.mark.parametrize(
    ("language", "question"),
    [
        pytest.param("en", "Can you remember that song we heard?", marks=POLITE_OPEN),
        pytest.param(
            "en", "Could you remember that film we saw last week?", marks=POLITE_OPEN
        ),
        ("es", "¿Puedes recordar la canción que escuchamos?"),
        ("de", "Kannst du dir merken, welches Lied wir gehört haben?"),
        ("fr", "Peux-tu te souvenir de la chanson qu'on a entendue ?"),
        ("nl", "Kun je onthouden welk liedje we hoorden?"),
    ],
)
async def test_a_question_about_memory_stores_nothing(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    question: str,
) -> None:
    """Ada asks "Can you remember that song we heard?". Before the fix "can
    you" (HA's skip words) made the question a polite "remember that ..."
    and "Song we heard." became a pinned note. A question is the model's to
    answer: she should hear the model and have no new note (the extractor,
    should it be asked, would find one: it must not be)."""
    ada, speaker, memory = await ada_with_facts(
        hass, hass_storage, config_entry, ["I like jazz."], LOCAL
    )
    fake_server.responder = responder(
        lambda _b: facts_answer(["Ada heard a song."]),
        chat=lambda _b: fake.text("I don't know which song you mean."),
    )
    result = await converse(hass, question, user_id=ada, language=language)
    await extraction_idle(memory)
    left = fact_texts(memory, speaker)
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert speech(result) == "I don't know which song you mean."
    assert left == ["I like jazz."]


@pytest.mark.parametrize(
    ("language", "sentence", "note"),
    [
        ("de", "Kannst du dir merken, dass ich Vegetarier bin?", "Ich Vegetarier bin."),
        ("es", "¿Podrías recordar que soy vegano?", "Soy vegano."),
        ("fr", "Peux-tu retenir que je suis végétarien ?", "Je suis végétarien."),
        ("nl", "Kun je onthouden dat ik vegetariër ben?", "Ik vegetariër ben."),
    ],
)
async def test_a_request_form_the_language_marks_is_still_a_request(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    sentence: str,
    note: str,
) -> None:
    """A polite question that states the note ("Kannst du dir merken, dass
    ...?") is a request: Ada's note is taken at once, with no model call."""
    ada, speaker, memory = await ada_with_facts(
        hass, hass_storage, config_entry, ["I like jazz."], LOCAL
    )
    await converse(hass, sentence, user_id=ada, language=language)
    left = fact_texts(memory, speaker)
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert note in left
    assert chat_requests(fake_server) == []


# --- 4. an update call the server refuses -------------------------------------------


async def test_a_refused_update_call_keeps_the_note_and_no_contradiction(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Ada's note: "Mi hermana vive en Sevilla." She says "Mi hermana se ha
    mudado a Valencia y empecé a tocar el piano."; the fact task answers
    both facts, the update call for the Sevilla note gets HTTP 500 every
    time (llama.cpp's answer to broken output, the same at temperature 0).
    Before the fix the exchange was tried again RETRY_SECONDS later, refused
    again and given up whole: the piano was lost with it. She should keep
    her note (never dropped), never have Valencia beside Sevilla (a
    contradiction in every prompt), the exchange kept whole for the later
    retry, and on that retry what the refusal cannot spoil (the piano)
    stored; what she says next is read as usual."""
    sevilla = "Mi hermana vive en Sevilla."
    ada, speaker, memory = await ada_with_facts(
        hass, hass_storage, config_entry, [sevilla], LOCAL
    )
    extractor = memory.extractor
    assert extractor is not None

    def facts(body: dict[str, Any]) -> fake.Reply:
        words = said(body)
        found = ["Mi hermana vive en Valencia.", "Toco el piano."]
        if "Valencia" in words:
            return facts_answer(found)
        return facts_answer(["Me gusta el jazz."] if "jazz" in words else [])

    fake_server.responder = responder(
        facts, update=lambda _b: fake.error(500, "failed to parse the output")
    )
    await converse(
        hass,
        "Mi hermana se ha mudado a Valencia y empecé a tocar el piano.",
        user_id=ada,
        language="es",
    )
    await extraction_idle(memory)
    assert fact_texts(memory, speaker) == [sevilla]
    assert extractor.pending(speaker) == 1  # kept whole for the later retry
    assert len(update_requests(fake_server)) == 1

    freezer.tick(timedelta(seconds=RETRY_SECONDS))
    async_fire_time_changed(hass)
    await hass.async_block_till_done()
    await extraction_idle(memory)
    assert len(update_requests(fake_server)) == 2  # tried again
    assert fact_texts(memory, speaker) == [sevilla, "Toco el piano."]
    assert extractor.pending(speaker) == 0

    await converse(hass, "Me gusta mucho el jazz.", user_id=ada, language="es")
    await extraction_idle(memory)
    left = fact_texts(memory, speaker)
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert left == [sevilla, "Toco el piano.", "Me gusta el jazz."]
