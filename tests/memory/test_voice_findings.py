"""Memory managed by voice: faults found by a hunt (helper session), through real HA.

Every test drives the agent with `converse` (real HA, real hassil, the fake
OpenAI server over HTTP) and reads what happened from the stored facts and
what the user heard. Each failed on the code as it was found (45d66a6) for
the reason its docstring gives.
"""

from __future__ import annotations

from typing import Any

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.memory.voice import REMEMBER_TOOL_NAME
from tests.helpers import fake_openai as fake
from tests.helpers.ha import AGENT_ID, converse, speech, spoken_sentence
from tests.helpers.memory import ada_memory_turn, ada_with_facts, fact_texts


def _confirm(language: str, note: str) -> str:
    """What the speaker hears for a note that may not be the one meant."""
    numbered = spoken_sentence("memory_numbered_note", language).format(
        number="1", fact=note
    )
    return spoken_sentence("memory_confirm", language).format(facts=numbered)


# =====================================================================================
# 1. "Forget that ..." forgets a note that says other words: whose it is, or the opposite
# =====================================================================================


@pytest.mark.parametrize(
    ("language", "facts", "sentence"),
    [
        # The speaker's own allergy is not stored; the wife's is, and went.
        (
            "en",
            ["My wife is allergic to nuts.", "I play the violin."],
            "Forget that I'm allergic to nuts.",
        ),
        (
            "en",
            ["My wife's birthday is on 4 May.", "I play the violin."],
            "forget that my birthday is on 4 May",
        ),
        (
            "es",
            ["Mi mujer es alérgica a las nueces.", "Toco el violín."],
            "Olvida que soy alérgico a las nueces.",
        ),
        (
            "nl",
            ["Mijn vrouw is allergisch voor noten.", "Ik speel viool."],
            "Vergeet dat ik allergisch ben voor noten.",
        ),
        # The note says the opposite ("don't", "no", "pas": words not said).
        ("en", ["I don't eat pork.", "I play the violin."], "Forget that I eat pork."),
        (
            "es",
            ["No me gusta el jazz.", "Toco el violín."],
            "Olvida que me gusta el jazz.",
        ),
        (
            "fr",
            ["Je n'aime pas le jazz.", "Je joue du violon."],
            "Oublie que j'aime le jazz.",
        ),
        # The words say more than the note (the review of the fix): whose it
        # is ("my son"), the opposite ("don't", "no").
        (
            "en",
            ["I'm allergic to nuts.", "I play the violin."],
            "Forget that my son is allergic to nuts.",
        ),
        ("en", ["I eat pork.", "I play the violin."], "Forget that I don't eat pork."),
        (
            "es",
            ["Me gusta el jazz.", "Toco el violín."],
            "Olvida que no me gusta el jazz.",
        ),
    ],
)
async def test_forget_that_keeps_a_note_the_words_do_not_state(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    facts: list[str],
    sentence: str,
) -> None:
    """notes_named took a note when the words said more than half of it and
    nothing distinctive it does not, so the word that tells them apart was
    never weighed: whose fact it is ("wife", "mujer", "vrouw", "son"), or
    that it is the opposite ("don't", "no", "pas": short, and a short word
    met any word it starts). The note is read back with its number now."""
    left, _pinned, heard = await ada_memory_turn(
        hass, hass_storage, config_entry, fake_server, facts, sentence, language
    )
    assert left == facts, f"removed {facts[0]!r}; said {heard!r}"
    assert heard == _confirm(language, facts[0])


# =====================================================================================
# 2. "Please" of several words without a comma (es, fr) stays in the fact
# =====================================================================================


@pytest.mark.parametrize(
    ("language", "sentence", "note"),
    [
        ("es", "recuerda que me gusta el jazz por favor", "Me gusta el jazz."),
        (
            "fr",
            "souviens toi que ma fille s'appelle Léa s'il te plaît",
            "Ma fille s'appelle Léa.",
        ),
        # The polite form is no HA skip word: kept even after its comma.
        (
            "fr",
            "Souviens-toi que j'aime le jazz, s'il vous plaît.",
            "J'aime le jazz.",
        ),
        # Thanks are no skip word in most languages (found by the last pass).
        ("en", "Remember that I like jazz, thanks.", "I like jazz."),
        ("nl", "onthoud dat mijn zus Eva heet dank je wel", "Mijn zus Eva heet."),
        (
            "de",
            "Merk dir, dass mein Hund Bello heißt, danke schön",
            "Mein Hund Bello heißt.",
        ),
    ],
)
async def test_remember_keeps_no_please_in_the_note(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    sentence: str,
    note: str,
) -> None:
    """English "please" is cut at the end of a fact; "por favor" and "s'il
    te plaît" are HA skip words of two or more words, cut only after a
    comma (commands._cut_end), which speech to text rarely writes, and
    "s'il vous plaît" is none: the note is stored with the politeness."""
    _left, pinned, heard = await ada_memory_turn(
        hass,
        hass_storage,
        config_entry,
        fake_server,
        ["Qx unrelated note."],
        sentence,
        language,
    )
    assert pinned == [note], f"said {heard!r}"


@pytest.mark.parametrize(
    ("language", "facts", "sentence"),
    [
        (
            "es",
            ["Me gusta el jazz.", "Toco el violín."],
            "olvida que me gusta el jazz por favor",
        ),
        (
            "fr",
            ["J'aime le jazz.", "Je joue du violon."],
            "oublie que j'aime le jazz s'il te plaît",
        ),
    ],
)
async def test_forget_with_please_forgets_the_note(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    facts: list[str],
    sentence: str,
) -> None:
    """ "favor", "plaît" are distinctive words the note does not say, so
    notes_named names nothing and the user hears "I have no note about
    that" while the note is there."""
    left, _pinned, heard = await ada_memory_turn(
        hass, hass_storage, config_entry, fake_server, facts, sentence, language
    )
    assert left == facts[1:], f"said {heard!r}"
    assert heard == spoken_sentence("memory_forgotten", language).format(fact=facts[0])


# =====================================================================================
# 3. "Can you remind me that ..." (es) is stored as a note
# =====================================================================================


@pytest.mark.parametrize(
    "sentence",
    [
        "¿Me puedes recordar que mañana tengo que llamar a mi madre?",
        "me podrías recordar que tengo que sacar la basura",
    ],
)
async def test_a_reminder_request_stores_no_note(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    sentence: str,
) -> None:
    """ "Me puedes recordar que ..." asks for a reminder ("remind me"); HA's
    skip word "me puedes" is cut whole, object pronoun and all, and the rest
    matches "recordar que {fact}": an errand is pinned as a fact about the
    speaker, and no reminder is set ("Recuérdame que ..." is left alone)."""
    facts = ["Qx unrelated note."]
    left, _pinned, heard = await ada_memory_turn(
        hass, hass_storage, config_entry, fake_server, facts, sentence, "es"
    )
    assert left == facts, f"said {heard!r}"


# =====================================================================================
# 4. A satellite without a device: the model's tool writes the context user's notes
# =====================================================================================


async def test_a_satellite_without_a_device_never_changes_the_context_users_notes(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Ada's start_conversation gives the satellite's next run her context.
    The turn reads the satellite as its speaker (Memory.resolve_speaker drops
    the user for a satellite; without a device that is the conversation,
    which keeps no notes), but the tool reads the LLM context, which has no
    satellite id: with no device to recognise, Memory.context_speaker takes
    the context user, and whoever answers in that room writes Ada's notes."""
    ada, speaker, memory = await ada_with_facts(
        hass, hass_storage, config_entry, ["I like jazz."]
    )
    fake_server.queue(
        fake.tool_calls([(REMEMBER_TOOL_NAME, {"fact": "I hate broccoli."})]),
        fake.text("Noted."),
        fake.text("Noted."),
    )
    await conversation.async_converse(
        hass,
        "Save this for me: I hate broccoli.",
        None,
        Context(user_id=ada),  # the satellite entity's context, set by Ada's call
        language="en",
        agent_id=AGENT_ID,
        device_id=None,
        satellite_id="assist_satellite.kids_room",
    )
    left = fact_texts(memory, speaker)
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert left == ["I like jazz."]


async def test_the_note_read_back_is_forgotten_by_its_number(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The read-back is a question, not a dead end: "forget number 1" then
    removes the note it named, and a note said whole goes at once."""
    facts = ["My wife is allergic to nuts.", "I play the violin."]
    ada, speaker, memory = await ada_with_facts(hass, hass_storage, config_entry, facts)
    asked = await converse(
        hass, "Forget that I'm allergic to nuts.", user_id=ada, language="en"
    )
    assert speech(asked) == _confirm("en", facts[0])
    done = await converse(hass, "forget number 1", user_id=ada, language="en")
    assert speech(done) == spoken_sentence("memory_forgotten", "en").format(
        fact=facts[0]
    )
    whole = await converse(
        hass, "forget that I play the violin", user_id=ada, language="en"
    )
    assert speech(whole) == spoken_sentence("memory_forgotten", "en").format(
        fact=facts[1]
    )
    assert fact_texts(memory, speaker) == []
    assert await hass.config_entries.async_unload(config_entry.entry_id)
