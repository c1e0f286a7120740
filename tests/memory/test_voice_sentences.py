"""Memory commands our sentences read, through real HA: no model call.

"What do you know about me?", "forget that ...", "remember that ..." in each
of our languages are carried out by code (memory/commands.py,
memory/voice.py: async_run_command); what they did is read from the stored
facts, what was said from the translations. The fake server counts the
model requests: a command our sentences read makes none.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import (
    CONF_EXTRACTION,
    EXTRACTION_LOCAL,
)
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse, speech, spoken_sentence
from tests.helpers.memory import (
    ada_with_facts,
    ada_with_kitchen_satellite,
    chat_requests,
    create_user,
    extraction_requests,
    fact_texts,
    memory_of,
    start_with_facts,
)

# Per language: facts, a read, a forget of fact 1, a remember and its note.
CASES: dict[str, dict[str, Any]] = {
    "en": {
        "facts": ["I play the violin.", "I don't eat olives."],
        "read": "What do you remember about me?",
        "forget": "Please forget that I don't eat olives.",
        "remember": "Remember that my brother Tim lives in Cork",
        "note": "My brother Tim lives in Cork.",
    },
    "es": {
        "facts": ["Toco el violín.", "No como aceitunas."],
        "read": "¿Qué sabes de mí?",
        "forget": "Olvida que no como aceitunas",
        "remember": "Recuerda que mi hermano Tomás vive en Cádiz",
        "note": "Mi hermano Tomás vive en Cádiz.",
    },
    "de": {
        "facts": ["Ich spiele Geige.", "Ich esse keine Oliven."],
        "read": "Was weißt du über mich?",
        "forget": "Vergiss, dass ich keine Oliven esse.",
        "remember": "Merk dir, dass mein Bruder Tim in Köln wohnt",
        "note": "Mein Bruder Tim in Köln wohnt.",
    },
    "fr": {
        "facts": ["Je joue du violon.", "Je ne mange pas d'olives."],
        "read": "Qu'est-ce que tu sais sur moi ?",
        "forget": "Oublie que je ne mange pas d'olives",
        "remember": "Souviens-toi que mon frère Tom habite à Lyon",
        "note": "Mon frère Tom habite à Lyon.",
    },
    "nl": {
        "facts": ["Ik speel viool.", "Ik eet geen olijven."],
        "read": "Wat weet je over mij?",
        "forget": "Vergeet dat ik geen olijven eet",
        "remember": "Onthoud dat mijn broer Tim in Gent woont",
        "note": "Mijn broer Tim in Gent woont.",
    },
}


# The languages after the first five: the same commands, their own words.
CASES.update(
    {
        "it": {
            "facts": ["Suono il violino.", "Non mangio le olive."],
            "read": "Cosa ricordi di me?",
            "forget": "Dimenticati che non mangio le olive",
            "remember": "Ricorda che mio fratello Tommaso vive a Bari",
            "note": "Mio fratello Tommaso vive a Bari.",
        },
        "pt": {
            "facts": ["Toco violino.", "Não como azeitonas."],
            "read": "O que sabes sobre mim?",
            "forget": "Esquece que não como azeitonas",
            "remember": "Lembra-te de que o meu irmão Tomás mora em Braga",
            "note": "O meu irmão Tomás mora em Braga.",
        },
        "ca": {
            "facts": ["Toco el violí.", "No menjo olives."],
            "read": "Què saps de mi?",
            "forget": "Oblida que no menjo olives",
            "remember": "Recorda que el meu germà Tomàs viu a Reus",
            "note": "El meu germà Tomàs viu a Reus.",
        },
        "pl": {
            "facts": ["Gram na skrzypcach.", "Nie jem oliwek."],
            "read": "Co o mnie wiesz?",
            "forget": "Zapomnij, że nie jem oliwek.",
            "remember": "Zapamiętaj, że mój brat Tomek mieszka w Krakowie",
            "note": "Mój brat Tomek mieszka w Krakowie.",
        },
        "cs": {
            "facts": ["Hraju na housle.", "Nejím olivy."],
            "read": "Co o mně víš?",
            "forget": "Zapomeň, že nejím olivy.",
            "remember": "Zapamatuj si, že můj bratr Tomáš bydlí v Brně",
            "note": "Můj bratr Tomáš bydlí v Brně.",
        },
        "sv": {
            "facts": ["Jag spelar fiol.", "Jag äter inte oliver."],
            "read": "Vad vet du om mig?",
            "forget": "Glöm att jag inte äter oliver",
            "remember": "Kom ihåg att min bror Tim bor i Lund",
            "note": "Min bror Tim bor i Lund.",
        },
        "da": {
            "facts": ["Jeg spiller violin.", "Jeg spiser ikke oliven."],
            "read": "Hvad ved du om mig?",
            "forget": "Glem, at jeg ikke spiser oliven",
            "remember": "Husk, at min bror Tim bor i Odense",
            "note": "Min bror Tim bor i Odense.",
        },
        "nb": {
            "facts": ["Jeg spiller fiolin.", "Jeg spiser ikke oliven."],
            "read": "Hva husker du om meg?",
            "forget": "Glem at jeg ikke spiser oliven",
            "remember": "Husk at broren min Tim bor i Tromsø",
            "note": "Broren min Tim bor i Tromsø.",
        },
        "ru": {
            "facts": ["Я играю на скрипке.", "Я не ем оливки."],
            "read": "Что ты знаешь обо мне?",
            "forget": "Забудь, что я не ем оливки.",
            "remember": "Запомни, что мой брат Тимур живёт в Казани",
            "note": "Мой брат Тимур живёт в Казани.",
        },
        "uk": {
            "facts": ["Я граю на скрипці.", "Я не їм оливки."],
            "read": "Що ти знаєш про мене?",
            "forget": "Забудь, що я не їм оливки.",
            "remember": "Запам'ятай, що мій брат Тарас живе у Львові",
            "note": "Мій брат Тарас живе у Львові.",
        },
    }
)


@pytest.mark.parametrize("entry_options", [{CONF_EXTRACTION: EXTRACTION_LOCAL}])
@pytest.mark.parametrize("language", sorted(CASES))
async def test_read_forget_and_remember_by_voice_in_each_language(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
) -> None:
    """Each command carried out and said in the language; no model request."""
    case = CASES[language]
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    await start_with_facts(hass, hass_storage, config_entry, {speaker: case["facts"]})
    memory = memory_of(config_entry)

    result = await converse(hass, case["read"], user_id=ada, language=language)
    assert speech(result) == spoken_sentence("memory_read", language).format(
        facts=" ".join(case["facts"])
    )

    result = await converse(hass, case["forget"], user_id=ada, language=language)
    assert speech(result) == spoken_sentence("memory_forgotten", language).format(
        fact=case["facts"][1]
    )
    assert fact_texts(memory, speaker) == [case["facts"][0]]
    (entry,) = memory.fact_history(speaker)
    assert (entry.fact.text, entry.reason) == (case["facts"][1], "removed")

    result = await converse(hass, case["remember"], user_id=ada, language=language)
    assert speech(result) == spoken_sentence("memory_remembered", language).format(
        fact=case["note"]
    )
    (note,) = [fact for fact in memory.list_facts(speaker) if fact.pinned]
    assert (note.text, note.source) == (case["note"], "manual")

    # Restorable from the history, as the options UI does it.
    await memory.async_restore_fact(speaker, entry.fact.id)
    assert case["facts"][1] in fact_texts(memory, speaker)
    extractor = memory.extractor
    assert extractor is not None
    await extractor.async_wait_idle()
    assert chat_requests(fake_server) == []
    assert extraction_requests(fake_server) == []
    assert await hass.config_entries.async_unload(config_entry.entry_id)


@pytest.mark.parametrize("entry_options", [{CONF_EXTRACTION: EXTRACTION_LOCAL}])
async def test_a_regional_variant_reads_its_languages_commands(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Brazilian Portuguese has its own translation and no sentence file: the
    Portuguese sentences read the command, the answer is the Brazilian one."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    await start_with_facts(
        hass, hass_storage, config_entry, {speaker: ["Toco violão."]}
    )
    result = await converse(
        hass,
        "Lembre que meu irmão Tomás mora em Recife",
        user_id=ada,
        language="pt-BR",
    )
    note = "Meu irmão Tomás mora em Recife."
    assert speech(result) == spoken_sentence("memory_remembered", "pt-BR").format(
        fact=note
    )
    assert spoken_sentence("memory_remembered", "pt-BR") != spoken_sentence(
        "memory_remembered", "en"
    )
    assert note in fact_texts(memory_of(config_entry), speaker)
    assert chat_requests(fake_server) == []


async def test_a_speaker_reads_and_changes_only_their_own_notes(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Whose notes comes from the request, never from the words."""
    ada = await create_user(hass, "Ada")
    kai = await create_user(hass, "Kai")
    await start_with_facts(
        hass,
        hass_storage,
        config_entry,
        {f"user:{ada}": ["I like jazz."], f"user:{kai}": ["I like chess."]},
    )
    memory = memory_of(config_entry)
    read = await converse(hass, "What do you know about me?", user_id=kai)
    assert speech(read) == spoken_sentence("memory_read").format(facts="I like chess.")
    result = await converse(hass, "Forget that I like jazz.", user_id=kai)
    assert speech(result) == spoken_sentence("memory_not_found")
    assert fact_texts(memory, f"user:{ada}") == ["I like jazz."]
    assert memory.fact_history(f"user:{ada}") == []
    await converse(hass, "Remember that I like jazz too.", user_id=kai)
    assert fact_texts(memory, f"user:{ada}") == ["I like jazz."]
    assert sorted(fact_texts(memory, f"user:{kai}")) == [
        "I like chess.",
        "I like jazz too.",
    ]
    assert chat_requests(fake_server) == []
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_unclear_and_empty_answers_change_nothing(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Two notes fit: both are read back numbered, none goes; the number then
    names one. A topic of no note: the model."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    facts = ["My sister Ana lives in Rome.", "My sister Ana is a pilot."]
    await start_with_facts(hass, hass_storage, config_entry, {speaker: facts})
    memory = memory_of(config_entry)
    result = await converse(hass, "Forget that my sister Ana", user_id=ada)
    numbered = " ".join(
        spoken_sentence("memory_numbered_note").format(number=number, fact=fact)
        for number, fact in enumerate(facts, start=1)
    )
    assert speech(result) == spoken_sentence("memory_which").format(facts=numbered)
    assert fact_texts(memory, speaker) == facts
    result = await converse(hass, "What do you know about my sister?", user_id=ada)
    assert speech(result) == spoken_sentence("memory_read").format(
        facts=" ".join(facts)
    )
    result = await converse(hass, "Forget that my sister Eva", user_id=ada)
    assert speech(result) == spoken_sentence("memory_not_found")
    assert fact_texts(memory, speaker) == facts
    # The number the read-back gave, in words or digits.
    result = await converse(hass, "Forget number two.", user_id=ada)
    assert speech(result) == spoken_sentence("memory_forgotten").format(fact=facts[1])
    assert fact_texts(memory, speaker) == facts[:1]
    result = await converse(hass, "Forget number 7.", user_id=ada)
    assert speech(result) == spoken_sentence("memory_not_found")
    assert fact_texts(memory, speaker) == facts[:1]
    kai = await create_user(hass, "Kai")
    result = await converse(hass, "What do you know about me?", user_id=kai)
    assert speech(result) == spoken_sentence("memory_read_empty")
    assert chat_requests(fake_server) == []
    # A topic no note is about ("my kitchen light") is the model's.
    fake_server.queue(fake.text("It is on."))
    result = await converse(
        hass, "What do you know about my kitchen light?", user_id=ada
    )
    assert speech(result) == "It is on."
    assert len(chat_requests(fake_server)) == 1
    assert fact_texts(memory, speaker) == facts[:1]
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_without_a_lasting_speaker_nothing_is_kept(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """No user, no satellite: no notes to keep, and said so."""
    result = await converse(hass, "Remember that I like jazz.")
    assert speech(result) == spoken_sentence("memory_unavailable")
    assert memory_of(loaded_entry).facts.speakers() == []
    assert chat_requests(fake_server) == []


async def test_forget_about_a_note_or_leave_it_to_the_model(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """ "Forget about X": the note X touches goes; touching none, the model answers."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    facts = ["Ich lerne Spanisch.", "Ich wohne in Ulm."]
    await start_with_facts(hass, hass_storage, config_entry, {speaker: facts})
    memory = memory_of(config_entry)
    result = await converse(
        hass,
        "Vergiss das mit dem Spanisch, das habe ich aufgegeben.",
        user_id=ada,
        language="de",
    )
    assert speech(result) == spoken_sentence("memory_forgotten", "de").format(
        fact="Ich lerne Spanisch."
    )
    assert fact_texts(memory, speaker) == ["Ich wohne in Ulm."]
    assert chat_requests(fake_server) == []
    fake_server.queue(fake.text("Gut, dann kochen wir."))
    result = await converse(
        hass, "Vergiss das mit dem Restaurant.", user_id=ada, language="de"
    )
    assert speech(result) == "Gut, dann kochen wir."
    assert fact_texts(memory, speaker) == ["Ich wohne in Ulm."]
    assert len(chat_requests(fake_server)) == 1
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_a_look_alike_goes_to_the_model(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """ "Forget it" is not a memory command: the model answers it."""
    ada = await create_user(hass, "Ada")
    fake_server.queue(fake.text("No problem."))
    result = await converse(hass, "Oh, forget it, it doesn't matter.", user_id=ada)
    assert speech(result) == "No problem."
    assert len(chat_requests(fake_server)) == 1


async def test_a_language_without_sentences_leaves_memory_to_the_model(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Hungarian has no sentence file of ours: the model and its tools answer."""
    ada = await create_user(hass, "Ada")
    fake_server.queue(fake.text("Alig ismerlek."))
    result = await converse(hass, "Mit tudsz rólam?", user_id=ada, language="hu")
    assert speech(result) == "Alig ismerlek."
    assert len(chat_requests(fake_server)) == 1


async def test_the_answer_is_replayed_and_reading_is_no_use(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The next model turn sees what was said; reading counts no use of a note."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    await start_with_facts(
        hass, hass_storage, config_entry, {speaker: ["I like jazz."]}
    )
    memory = memory_of(config_entry)
    read = await converse(hass, "What do you know about me?", user_id=ada)
    assert [fact.use_count for fact in memory.list_facts(speaker)] == [0]
    fake_server.queue(fake.text("Miles Davis."))
    await converse(hass, "Who should I listen to?", user_id=ada)
    (request,) = chat_requests(fake_server)
    turns = [m for m in request["messages"] if m["role"] in ("user", "assistant")]
    assert turns[:2] == [
        {"role": "user", "content": "What do you know about me?"},
        {"role": "assistant", "content": speech(read)},
    ]
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_a_satellite_keeps_the_notes_of_the_person_it_counts_as(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Speaker resolution as for everything else: satellite -> person -> user."""
    ada = await ada_with_kitchen_satellite(hass, config_entry)
    await start_with_facts(hass, hass_storage, config_entry, {})
    await converse(
        hass, "Remember that I take my tea black.", device_id="kitchen-satellite"
    )
    memory = memory_of(config_entry)
    assert fact_texts(memory, f"user:{ada}") == ["I take my tea black."]
    assert fact_texts(memory, "device:kitchen-satellite") == []
    assert chat_requests(fake_server) == []
    assert await hass.config_entries.async_unload(config_entry.entry_id)


@pytest.mark.parametrize(
    ("language", "facts", "said", "answer"),
    [
        # The same frame with another thing: no note is named.
        (
            "de",
            ["Ich mag Jazz.", "Mein Hund heißt Bello."],
            "Vergiss, dass ich Oper mag.",
            None,
        ),
        (
            "fr",
            ["Je joue du violon.", "Je ne mange pas d'olives."],
            "Oublie que je ne mange pas de champignons.",
            None,
        ),
        # "Forget about it" meaning never mind: the model answers.
        (
            "en",
            ["My wife is called Anna.", "I play the violin."],
            "Forget about it, I'll ask my wife later.",
            "Sure.",
        ),
        (
            "es",
            ["Mi mujer se llama Ana.", "Toco el violín."],
            "Olvídate de eso, le pregunto a mi mujer luego.",
            "Vale.",
        ),
    ],
)
async def test_words_that_name_no_note_forget_nothing(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    facts: list[str],
    said: str,
    answer: str | None,
) -> None:
    """Found by review: each of these forgot one of the notes."""
    ada, speaker, memory = await ada_with_facts(hass, hass_storage, config_entry, facts)
    if answer is not None:
        fake_server.queue(fake.text(answer))
    result = await converse(hass, said, user_id=ada, language=language)
    expected = answer or spoken_sentence("memory_not_found", language)
    assert speech(result) == expected
    assert fact_texts(memory, speaker) == facts
    assert len(chat_requests(fake_server)) == (answer is not None)
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_remembering_a_note_already_kept_pins_it(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Found by review: "remember that I like jazz" said it was remembered, and
    the extractor's "I like jazz." stayed the extractor's to drop or rewrite."""
    ada, speaker, memory = await ada_with_facts(
        hass, hass_storage, config_entry, ["I like jazz.", "I cycle."]
    )
    assert not any(fact.protected for fact in memory.list_facts(speaker))
    result = await converse(hass, "Remember that I like jazz.", user_id=ada)
    assert speech(result) == spoken_sentence("memory_remembered").format(
        fact="I like jazz."
    )
    pinned = [fact.text for fact in memory.list_facts(speaker) if fact.protected]
    assert pinned == ["I like jazz."]
    assert sorted(fact_texts(memory, speaker)) == ["I cycle.", "I like jazz."]
    assert chat_requests(fake_server) == []
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_forget_number_means_the_note_read_back_with_it(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Found by review: an extraction that lands between "which one?" and
    "forget number 2" moved the notes, and another one was forgotten."""
    facts = ["My sister Ana lives in Rome.", "My sister Ana is a pilot."]
    ada, speaker, memory = await ada_with_facts(hass, hass_storage, config_entry, facts)
    result = await converse(hass, "Forget that my sister Ana", user_id=ada)
    assert spoken_sentence("memory_numbered_note").format(
        number=2, fact=facts[1]
    ) in speech(result)
    # A background extraction of an earlier exchange lands now, first in the list.
    book = memory.facts.book(speaker)
    book.add_extracted("I have a cat.", dt_util.utcnow().timestamp())
    book.facts.insert(0, book.facts.pop())
    assert fact_texts(memory, speaker)[1] != facts[1]
    result = await converse(hass, "Forget number 2.", user_id=ada)
    assert speech(result) == spoken_sentence("memory_forgotten").format(fact=facts[1])
    assert sorted(fact_texts(memory, speaker)) == ["I have a cat.", facts[0]]
    assert chat_requests(fake_server) == []
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_forget_number_after_a_read_means_the_note_read_second(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Found by review: the numbers of an earlier "which one?" outlived the
    read-out the speaker heard since, and "forget number 2" forgot the cat."""
    facts = [
        "My sister Ana lives in Rome.",
        "I have a cat.",
        "My sister Ana is a pilot.",
    ]
    ada, speaker, memory = await ada_with_facts(hass, hass_storage, config_entry, facts)
    result = await converse(hass, "Forget that my sister Ana", user_id=ada)
    assert "Number 3" in speech(result)
    await converse(hass, "Forget number 1.", user_id=ada)
    result = await converse(hass, "What do you know about me?", user_id=ada)
    assert speech(result) == spoken_sentence("memory_read").format(
        facts=" ".join(facts[1:])
    )
    result = await converse(hass, "Forget number 2.", user_id=ada)
    assert speech(result) == spoken_sentence("memory_forgotten").format(fact=facts[2])
    assert fact_texts(memory, speaker) == ["I have a cat."]
    assert chat_requests(fake_server) == []
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_remembering_a_note_kept_in_other_punctuation_pins_it(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Found by review: a phone keyboard's apostrophe (U+2019) added a second
    note beside the extractor's "I don't eat pork.", which stayed unpinned."""
    facts = ["I don't eat pork.", "I cycle."]
    ada, speaker, memory = await ada_with_facts(hass, hass_storage, config_entry, facts)
    await converse(hass, "Remember that I don’t eat pork", user_id=ada)
    assert sorted(fact_texts(memory, speaker)) == sorted(facts)
    pinned = [fact.text for fact in memory.list_facts(speaker) if fact.protected]
    assert pinned == ["I don't eat pork."]
    assert chat_requests(fake_server) == []
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_a_read_out_is_forgotten_after_the_idle_gap(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    freezer: FrozenDateTimeFactory,
) -> None:
    """ "Forget number 2" the next day means no note read out in yesterday's
    conversation: with no read-out just before, a number is the model's."""
    facts = ["I have a cat.", "My sister Ana is a pilot.", "I cycle."]
    ada, speaker, memory = await ada_with_facts(hass, hass_storage, config_entry, facts)
    result = await converse(hass, "What do you know about me?", user_id=ada)
    assert speech(result) == spoken_sentence("memory_read").format(
        facts=" ".join(facts)
    )
    book = memory.facts.book(speaker)
    book.facts.append(book.facts.pop(1))  # the pilot last now
    now = [fact.id for fact in memory.list_facts(speaker)]
    assert memory.read_back_ids(speaker) != now
    freezer.tick(timedelta(hours=3))  # past the default idle gap (120 min)
    assert memory.read_back_ids(speaker) == []
    fake_server.queue(fake.text("Which list do you mean?"))
    result = await converse(hass, "Forget number 2.", user_id=ada)
    assert speech(result) == "Which list do you mean?"
    assert len(chat_requests(fake_server)) == 1
    assert sorted(fact_texts(memory, speaker)) == sorted(facts)
    assert await hass.config_entries.async_unload(config_entry.entry_id)
