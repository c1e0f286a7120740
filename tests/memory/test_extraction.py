"""Background fact extraction in a running HA, against real HTTP.

The extractor's requests are non-streamed; replies stream. A `responder` on
the fake server tells them apart. The extractor's one task shows the
speaker's facts, numbered, and quotes what the user said; the answer edits
the facts by number (`ADD: ...`, `REPLACE 2: ...`, `REMOVE 1`) or is NONE.
Tests wait for extraction through the extractor's own handle
(`async_wait_idle`), never by sleeping.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from typing import Any

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import (
    CONF_EXTRACTION,
    CONF_EXTRACTION_API_KEY,
    CONF_EXTRACTION_BASE_URL,
    CONF_EXTRACTION_MODEL,
    CONF_MAX_FACTS,
    EXTRACTION_HOSTED,
    EXTRACTION_LOCAL,
    EXTRACTION_MAX_TOKENS,
    LOGGER,
)
from custom_components.local_assistant.llm.prompt import FACTS_HEADING
from custom_components.local_assistant.memory.extraction import (
    MAX_ATTEMPTS,
    MAX_PENDING_EXCHANGES,
    FactExtractor,
)
from custom_components.local_assistant.memory.extraction_prompt import (
    HOSTED_MAX_ADDS,
    LOCAL_MAX_ADDS,
    STANDALONE_SYSTEM_PROMPT,
    fact_task,
    update_task,
)
from custom_components.local_assistant.memory.store import storage_key
from tests.helpers import fake_openai as fake
from tests.helpers.ha import MODEL, converse, speech, system_text
from tests.helpers.memory import (
    HOSTED_KEY,
    HOSTED_MODEL,
    chat_requests,
    create_user,
    edits_answer,
    extraction_requests,
    fact_requests,
    fact_texts,
    facts_answer,
    memory_of,
    note,
    responder,
    said,
    shown,
    start_with_facts,
    storage_entry,
    stored_fact_texts,
    update_requests,
)

LOCAL = {CONF_EXTRACTION: EXTRACTION_LOCAL}
_TOKEN = re.compile(r"\s*\S+|\s+")


@pytest.fixture
def entry_options() -> dict[str, Any]:
    """Extraction on the agent's own server."""
    return dict(LOCAL)


def extractor_of(entry: MockConfigEntry) -> FactExtractor:
    extractor = memory_of(entry).extractor
    assert extractor is not None
    return extractor


def slow_answer(texts: list[str], seconds: float) -> fake.Reply:
    """An answer with `texts` that takes `seconds` in total (the fake delays per token)."""
    content = "\n".join(texts)
    return fake.text(content, delay=seconds / len(_TOKEN.findall(content)))


def stored_order(entry: MockConfigEntry, speaker: str) -> list[str]:
    """A speaker's fact texts in storage order."""
    book = memory_of(entry).facts.get(speaker)
    return [] if book is None else [fact.text for fact in book.facts]


def warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        record
        for record in caplog.records
        if record.name == LOGGER.name and record.levelno >= logging.WARNING
    ]


async def ada_knows(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    entry: MockConfigEntry,
    facts: list[str],
) -> tuple[str, str]:
    """The user Ada, her speaker key, and the entry started with her stored facts."""
    ada = await create_user(hass, "Ada")
    await start_with_facts(hass, hass_storage, entry, {f"user:{ada}": facts})
    return ada, f"user:{ada}"


def echo(body: dict[str, Any]) -> fake.Reply:
    """An answer that takes what the user said as the fact, in their words."""
    return facts_answer([said(body)])


# --- the normal path ---------------------------------------------------------------


async def test_extraction_after_a_turn(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """After a reply, the local model gets the user's words as quoted data, standalone."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(
        lambda _body: facts_answer(["The user has a dog called Rex."]),
        lambda _body: fake.text("Rex is a fine name."),
    )
    result = await converse(hass, "My dog is called Rex", user_id=ada)
    assert speech(result) == "Rex is a fine name."
    await extractor_of(loaded_entry).async_wait_idle()

    (request,) = extraction_requests(fake_server)
    assert request["model"] == MODEL
    assert request["stream"] is False
    assert request["temperature"] == 0
    assert request["max_tokens"] == EXTRACTION_MAX_TOKENS
    assert "tools" not in request
    assert request["messages"] == [
        {"role": "system", "content": STANDALONE_SYSTEM_PROMPT},
        *fact_task("My dog is called Rex"),
    ]
    # Only the user's words: the assistant's answer is not a source of facts.
    assert "Rex is a fine name" not in str(request["messages"])
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == [
        "The user has a dog called Rex."
    ]

    # The next reply carries the fact in its prompt.
    await converse(hass, "what is my dog called?", user_id=ada)
    await extractor_of(loaded_entry).async_wait_idle()
    system = system_text(chat_requests(fake_server)[-1])
    assert FACTS_HEADING in system
    assert '1. "The user has a dog called Rex."' in system
    # A question states nothing: no extraction for it.
    assert len(extraction_requests(fake_server)) == 1


async def test_extracted_facts_are_saved_debounced(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """An update is written by the debounced save, and at the latest on unload."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(lambda _b: facts_answer(["The user sails."]))
    await converse(hass, "I sail", user_id=ada)
    await extractor_of(loaded_entry).async_wait_idle()
    assert storage_key(loaded_entry.entry_id) not in hass_storage
    assert await hass.config_entries.async_unload(loaded_entry.entry_id)
    assert stored_fact_texts(hass_storage, loaded_entry.entry_id, f"user:{ada}") == [
        "The user sails."
    ]


async def test_no_extraction_for_a_speaker_known_only_by_conversation(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Facts about a conversation id could never be used again: none are extracted."""
    fake_server.responder = responder(lambda _b: facts_answer(["Never stored."]))
    await converse(hass, "I like tea")
    await extractor_of(loaded_entry).async_wait_idle()
    assert extraction_requests(fake_server) == []
    assert memory_of(loaded_entry).facts.speakers() == []


async def test_satellite_speaker_gets_facts(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A satellite without a person mapping still has long-term facts of its own."""
    fake_server.responder = responder(
        lambda _b: facts_answer(["The kitchen has a Moka pot."])
    )
    await converse(hass, "we use a Moka pot", device_id="kitchen-satellite")
    await extractor_of(loaded_entry).async_wait_idle()
    assert fact_texts(memory_of(loaded_entry), "device:kitchen-satellite") == [
        "The kitchen has a Moka pot."
    ]


# --- exchanges that cannot hold a fact ---------------------------------------------


@pytest.mark.parametrize(
    ("text", "kwargs"),
    [
        ("Turn on the kitchen light.", {"used_tools": True}),
        ("Turn on the kitchen light.", {"intent": "HassTurnOn"}),
        ("Is the front door locked?", {"used_tools": True, "intent": "HassGetState"}),
        ("What's the capital of France?", {}),
        ("¿Va a llover mañana?", {}),
        ("My dog is called Bolt.", {"used_tools": True}),  # structure wins
    ],
)
async def test_commands_and_questions_cost_no_call(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    text: str,
    kwargs: dict[str, Any],
) -> None:
    """A turn that ran a tool, matched an HA intent or only asked is not sent."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(
        lambda _b: facts_answer(["The user's kitchen light is on."])
    )
    memory = memory_of(loaded_entry)
    agent = next(iter(loaded_entry.subentries))
    memory.record_exchange(f"user:{ada}", text, "Done.", agent=agent, **kwargs)
    extractor = extractor_of(loaded_entry)
    await extractor.async_wait_idle()
    assert extraction_requests(fake_server) == []
    assert extractor.stats.skipped == 1
    assert extractor.stats.runs == 0
    assert memory.list_facts(f"user:{ada}") == []
    # The exchange is still in the session buffer for the next reply (a tool
    # turn as the user's words only).
    replayed = [text] if kwargs.get("used_tools") else [text, "Done."]
    assert [turn.text for turn in memory.history(agent, f"user:{ada}")] == replayed


async def test_a_statement_without_tools_or_intent_is_sent(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """used_tools=False and no intent (the defaults) mean: ask the extractor."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(lambda _b: facts_answer(["The user is vegan."]))
    memory_of(loaded_entry).record_exchange(
        f"user:{ada}",
        "I'm vegan.",
        "Noted.",
        agent=next(iter(loaded_entry.subentries)),
        used_tools=False,
        intent=None,
    )
    await extractor_of(loaded_entry).async_wait_idle()
    assert [said(body) for body in extraction_requests(fake_server)] == ["I'm vegan."]
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == ["The user is vegan."]


async def test_none_adds_nothing(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """NONE (small talk the structure could not rule out): no change.

    The remembered fact the words are about is still asked about (a removal
    can come without a new fact), and stays as the model writes it.
    """
    ada, speaker = await ada_knows(
        hass, hass_storage, config_entry, ["I collect jokes."]
    )
    fake_server.responder = responder(lambda _b: facts_answer([]))
    await converse(hass, "Tell me a joke.", user_id=ada)
    extractor = extractor_of(config_entry)
    await extractor.async_wait_idle()
    asked, update = extraction_requests(fake_server)
    assert said(asked) == "Tell me a joke."
    assert note(update) == "I collect jokes."
    assert fact_texts(memory_of(config_entry), speaker) == ["I collect jokes."]
    assert extractor.stats.updated == 0
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_an_example_of_the_prompt_is_not_a_fact(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A small model that answers with a prompt example: that line is left out."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(
        lambda _b: facts_answer(["I have two cats, Luna and Sol.", "I'm vegetarian."])
    )
    await converse(hass, "I'm vegetarian.", user_id=ada)
    extractor = extractor_of(loaded_entry)
    await extractor.async_wait_idle()
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == ["I'm vegetarian."]
    assert extractor.stats.copied_examples == 1


async def test_a_person_who_says_an_example_is_remembered(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The same words from a user who did say them are a fact like any other."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(
        lambda _b: facts_answer(["I have two cats, Luna and Sol."])
    )
    await converse(hass, "I have two cats, Luna and Sol.", user_id=ada)
    await extractor_of(loaded_entry).async_wait_idle()
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == [
        "I have two cats, Luna and Sol."
    ]


async def test_a_rich_statement_keeps_every_fact(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Five facts in one sentence, in the language it was said: all five are kept.

    The local extractor may add LOCAL_MAX_ADDS at once (a small model that
    keeps writing ADD lines is looping), which five are under.
    """
    ada = await create_user(hass, "Ada")
    facts = [
        "Mijn man heet Tom.",
        "Onze dochter heet Mia.",
        "Onze hond heet Rex.",
        "We wonen in Leiden.",
        "Ik werk als verpleegkundige.",
    ]
    assert len(facts) <= LOCAL_MAX_ADDS
    fake_server.responder = responder(lambda _b: facts_answer(facts))
    await converse(
        hass,
        "Mijn man heet Tom, onze dochter Mia, de hond Rex, we wonen in Leiden "
        "en ik werk als verpleegkundige.",
        user_id=ada,
    )
    await extractor_of(loaded_entry).async_wait_idle()
    assert sorted(fact_texts(memory_of(loaded_entry), f"user:{ada}")) == sorted(facts)


async def test_a_runaway_local_answer_stops_at_the_limit(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A small local model that keeps adding: the first LOCAL_MAX_ADDS stand."""
    ada = await create_user(hass, "Ada")
    facts = [f"I like colour number {number}." for number in range(1, 11)]
    fake_server.responder = responder(lambda _b: facts_answer(facts))
    await converse(hass, "I like many colours.", user_id=ada)
    extractor = extractor_of(loaded_entry)
    await extractor.async_wait_idle()
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == facts[:LOCAL_MAX_ADDS]
    assert extractor.stats.over_limit == len(facts) - LOCAL_MAX_ADDS


# --- repeats and corrections (the small model's two tasks) -------------------------


async def test_a_repeat_is_not_stored_twice(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Word for word (case, punctuation aside), or saying no more than a fact."""
    ada = await create_user(hass, "Ada")
    answers = iter(
        [
            ["I work as a nurse at the hospital."],
            ["i work as a NURSE at the hospital"],
            ["I work as a nurse."],
        ]
    )
    fake_server.responder = responder(lambda _b: facts_answer(next(answers)))
    extractor = extractor_of(loaded_entry)
    for text in ("I'm a nurse at the hospital.", "As I said, a nurse.", "Nurse, yes."):
        await converse(hass, text, user_id=ada)
        await extractor.async_wait_idle()
    memory = memory_of(loaded_entry)
    assert fact_texts(memory, f"user:{ada}") == ["I work as a nurse at the hospital."]
    assert memory.fact_history(f"user:{ada}") == []
    assert extractor.stats.updated == 1
    # The remembered fact was asked about each time and came back unchanged.
    assert [note(body) for body in update_requests(fake_server)] == [
        "I work as a nurse at the hospital."
    ] * 2


async def test_a_negation_is_never_a_repeat(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """ "isst kein Schweinefleisch" after "isst Schweinefleisch": the new version."""
    ada, speaker = await ada_knows(
        hass, hass_storage, config_entry, ["Ich esse Schweinefleisch."]
    )
    fake_server.responder = responder(
        lambda _b: facts_answer(["Ich esse kein Schweinefleisch mehr."]),
        update=lambda _b: fake.text("Ich esse kein Schweinefleisch mehr."),
    )
    await converse(hass, "Ich esse kein Schweinefleisch mehr.", user_id=ada)
    await extractor_of(config_entry).async_wait_idle()
    memory = memory_of(config_entry)
    # The new fact says no more than the new version: stored once.
    assert fact_texts(memory, speaker) == ["Ich esse kein Schweinefleisch mehr."]
    assert [(e.fact.text, e.reason) for e in memory.fact_history(speaker)] == [
        ("Ich esse Schweinefleisch.", "rewritten")
    ]
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_a_correction_supersedes_the_old_fact(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """'I sold the Volvo': the related fact is asked about; its new version replaces it."""
    ada, speaker = await ada_knows(
        hass,
        hass_storage,
        config_entry,
        ["I drive a red Volvo.", "I have a cat."],
    )
    memory = memory_of(config_entry)
    old = memory.list_facts(speaker)[0]
    fake_server.responder = responder(
        lambda _b: facts_answer(["I sold the Volvo last week."]),
        update=lambda _b: fake.text("I sold the red Volvo."),
    )
    await converse(hass, "I sold the Volvo last week.", user_id=ada)
    await extractor_of(config_entry).async_wait_idle()

    (asked,) = update_requests(fake_server)
    assert asked["messages"] == [
        {"role": "system", "content": STANDALONE_SYSTEM_PROMPT},
        *update_task("I drive a red Volvo.", "I sold the Volvo last week."),
    ]
    # The new version replaces the old fact; the new fact says no more and
    # is not added next to it.
    assert sorted(fact_texts(memory, speaker)) == [
        "I have a cat.",
        "I sold the red Volvo.",
    ]
    (entry,) = memory.fact_history(speaker)
    new = next(f for f in memory.list_facts(speaker) if "sold" in f.text)
    assert (entry.fact.id, entry.reason, entry.replaced_by) == (
        old.id,
        "rewritten",
        new.id,
    )
    assert new.created == old.created
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert "I sold the red Volvo." in stored_fact_texts(
        hass_storage, config_entry.entry_id, speaker
    )


async def test_the_small_models_remove_alone_keeps_the_fact(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The bundled model answers REMOVE to restatements and to words about
    something else; with no new version in the words, nothing is dropped."""
    ada, speaker = await ada_knows(
        hass, hass_storage, config_entry, ["My partner is Sven.", "I have a cat."]
    )
    fake_server.responder = responder(
        lambda _b: facts_answer([]),
        update=lambda _b: fake.text("REMOVE"),
    )
    await converse(hass, "Sven and I are over.", user_id=ada)
    extractor = extractor_of(config_entry)
    await extractor.async_wait_idle()
    memory = memory_of(config_entry)
    assert sorted(fact_texts(memory, speaker)) == [
        "I have a cat.",
        "My partner is Sven.",
    ]
    assert memory.fact_history(speaker) == []
    assert extractor.stats.removals_not_taken == 1
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_a_removal_moves_the_fact_to_the_history(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    hosted_server: fake.FakeOpenAIServer,
) -> None:
    """A hosted model's REMOVE: the fact goes to the history, restorable."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    hass_storage[storage_key(config_entry.entry_id)] = storage_entry(
        {speaker: ["My partner is Sven.", "I have a cat."]}
    )
    await _setup_hosted(hass, config_entry, hosted_server.base_url, HOSTED_KEY)
    hosted_server.responder = responder(lambda _b: edits_answer(["REMOVE 1"]))
    memory = memory_of(config_entry)
    shown = memory.active_fact_texts(speaker)
    await converse(hass, "Sven and I are over.", user_id=ada)
    await extractor_of(config_entry).async_wait_idle()
    assert fact_texts(memory, speaker) == shown[1:]
    (entry,) = memory.fact_history(speaker)
    assert (entry.fact.text, entry.reason) == (shown[0], "dropped")
    restored = await memory.async_restore_fact(speaker, entry.fact.id)
    assert restored.text == shown[0]
    assert await hass.config_entries.async_unload(config_entry.entry_id)


@pytest.mark.parametrize(
    "update",
    [
        pytest.param(lambda body: fake.text(note(body)), id="unchanged-copy"),
        pytest.param(lambda _b: fake.text('{"note": 1}'), id="junk"),
        pytest.param(lambda _b: fake.text("A b.\nC d."), id="two-lines"),
        pytest.param(
            lambda _b: fake.text("I have two cats, Luna and Sol."), id="an-example"
        ),
        pytest.param(lambda _b: fake.text("i drive a RED volvo"), id="same-words"),
    ],
)
async def test_an_unchanged_or_unusable_update_keeps_the_fact(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    update: Any,
) -> None:
    """Only a new version replaces a fact; the new facts are still added."""
    ada, speaker = await ada_knows(
        hass, hass_storage, config_entry, ["I drive a red Volvo."]
    )
    fake_server.responder = responder(
        lambda _b: facts_answer(["I wash the Volvo on Sundays."]), update=update
    )
    await converse(hass, "I wash the Volvo on Sundays.", user_id=ada)
    await extractor_of(config_entry).async_wait_idle()
    assert len(update_requests(fake_server)) == 1
    assert sorted(fact_texts(memory_of(config_entry), speaker)) == [
        "I drive a red Volvo.",
        "I wash the Volvo on Sundays.",
    ]
    assert memory_of(config_entry).fact_history(speaker) == []
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_at_most_two_related_facts_are_asked_about(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The facts sharing the most distinctive words with the words, never a
    protected one; words most facts share do not relate anything."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    await start_with_facts(
        hass,
        hass_storage,
        config_entry,
        {
            speaker: [
                "Meine Rosen im Garten sind weiß.",
                "Meine Gartenpumpe ist grün.",
                "Meine Katze heißt Mimi.",
                "Meine Schwester wohnt in Bonn.",
            ]
        },
    )
    memory = memory_of(config_entry)
    await memory.async_add_fact(speaker, "Meine Rosen blühen im Juni.")
    fake_server.responder = responder(
        lambda _b: facts_answer(["Meine Rosen sind rot."])
    )
    await converse(hass, "Die Rosen in meinem Garten sind jetzt rot.", user_id=ada)
    await extractor_of(config_entry).async_wait_idle()
    assert [note(body) for body in update_requests(fake_server)] == [
        "Meine Rosen im Garten sind weiß.",
        "Meine Gartenpumpe ist grün.",
    ]
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_protected_facts_are_never_asked_about(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A fact a person added is not offered for rewriting; news is added beside it."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    memory = memory_of(loaded_entry)
    manual = await memory.async_add_fact(speaker, "I drive a red Volvo.")
    fake_server.responder = responder(lambda _b: facts_answer(["I sold the Volvo."]))
    await converse(hass, "I sold the Volvo.", user_id=ada)
    await extractor_of(loaded_entry).async_wait_idle()
    assert update_requests(fake_server) == []
    assert memory.list_facts(speaker)[0].id == manual.id
    assert fact_texts(memory, speaker) == [manual.text, "I sold the Volvo."]


@pytest.mark.parametrize("entry_options", [{**LOCAL, CONF_MAX_FACTS: 3}])
async def test_a_full_book_makes_room_for_new_facts(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The least useful fact goes to the history as over the limit."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    fake_server.responder = responder(echo)
    extractor = extractor_of(loaded_entry)
    for text in ("alpha", "beta", "gamma"):
        await converse(hass, text, user_id=ada)
        await extractor.async_wait_idle()
    # A reply that mentions beta makes it useful; alpha is the least useful.
    fake_server.responder = responder(echo, lambda _b: fake.text("About beta: yes."))
    await converse(hass, "delta", user_id=ada)
    await extractor.async_wait_idle()
    memory = memory_of(loaded_entry)
    assert sorted(fact_texts(memory, speaker)) == ["beta", "delta", "gamma"]
    assert [(e.fact.text, e.reason) for e in memory.fact_history(speaker)] == [
        ("alpha", "over_limit")
    ]


# --- answer formats ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "facts"),
    [
        pytest.param(fake.text("I play chess."), ["I play chess."], id="line"),
        pytest.param(
            fake.text("- I play chess.\n- I play on Sundays."),
            ["I play chess.", "I play on Sundays."],
            id="bullets",
        ),
        pytest.param(
            fake.text('```json\n["I play chess."]\n```', think="chess"),
            ["I play chess."],
            id="think-and-json-fence",
        ),
        pytest.param(fake.text('["I play chess."]'), ["I play chess."], id="json"),
        pytest.param(fake.text("NONE", think="nothing personal"), [], id="none"),
        pytest.param(
            fake.text("Facts:\nI play chess."), ["I play chess."], id="preface"
        ),
        pytest.param(
            fake.text("I play chess.\nI like <b>bold</b> moves."),
            ["I play chess."],
            id="one-line-left-out",
        ),
    ],
)
async def test_fact_task_answer_formats(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    answer: fake.Reply,
    facts: list[str],
) -> None:
    """Lines, bullets, NONE, a JSON array; a line that is no sentence is left out."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(lambda _b: answer)
    await converse(hass, "I play chess every Sunday", user_id=ada)
    await extractor_of(loaded_entry).async_wait_idle()
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == facts


BAD_ANSWERS = {
    "none and a fact": fake.text("NONE\nI like tea."),
    "only markup": fake.text('{"facts": ["I like tea."]}'),
    "non-strings": fake.text('["I like tea.", 42, null]'),
    "truncated array": fake.text('["I like tea.", "I'),
    "only thinking": fake.text("", think="the user likes tea"),
    "empty": fake.text(""),
    "a tool call": fake.tool_calls([("HassTurnOn", {"name": "tea"})]),
    "http 500": fake.error(500),
    "http 404": fake.error(404, "model not found", "model_not_found"),
    "not json": fake.malformed(["<html>Bad Gateway</html>"]),
    "json without choices": fake.malformed(
        ['{"id": "x", "object": "chat.completion"}']
    ),
    "disconnect": fake.disconnect(0),
    "timeout": fake.text("I like tea.", delay=30),
    "hang": fake.hang(),
}


@pytest.fixture
def short_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The extractor gives up after 0.3 s (set before the entry loads)."""
    monkeypatch.setattr(
        "custom_components.local_assistant.memory.manager.EXTRACTION_TIMEOUT", 0.3
    )


@pytest.mark.parametrize("answer", BAD_ANSWERS.values(), ids=BAD_ANSWERS.keys())
async def test_bad_answers_leave_facts_untouched(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
    short_timeout: None,
    answer: fake.Reply,
) -> None:
    """Junk, HTTP errors, timeouts and hangs change nothing and log one warning."""
    ada, speaker = await ada_knows(
        hass, hass_storage, config_entry, ["The user has a cat."]
    )
    memory = memory_of(config_entry)
    before = [(fact.id, fact.text, fact.source) for fact in memory.list_facts(speaker)]
    fake_server.responder = responder(lambda _b: answer)
    caplog.clear()

    result = await converse(hass, "I like tea", user_id=ada)
    assert speech(result) == "OK"
    await extractor_of(config_entry).async_wait_idle()

    assert len(extraction_requests(fake_server)) == 1
    after = [(fact.id, fact.text, fact.source) for fact in memory.list_facts(speaker)]
    assert after == before
    assert memory.fact_history(speaker) == []
    (warning,) = warnings(caplog)
    assert "facts unchanged" in warning.getMessage()
    # The log never quotes what was said or answered.
    assert "tea" not in warning.getMessage()
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert stored_fact_texts(hass_storage, config_entry.entry_id, speaker) == [
        "The user has a cat."
    ]


# --- off the reply path ------------------------------------------------------------


async def test_slow_extractor_does_not_delay_the_reply(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A 3-second extractor: the reply is back long before the extractor answers."""
    ada = await create_user(hass, "Ada")
    extractor = extractor_of(loaded_entry)
    fake_server.responder = responder(lambda _b: facts_answer(["The user likes tea."]))

    # Baseline: an instant extractor.
    started = time.perf_counter()
    await converse(hass, "I like tea", user_id=ada)
    baseline = time.perf_counter() - started
    await extractor.async_wait_idle()

    fake_server.responder = responder(lambda _b: slow_answer(["The user sails."], 3.0))
    started = time.perf_counter()
    result = await converse(hass, "I sail too", user_id=ada)
    reply_time = time.perf_counter() - started
    assert speech(result) == "OK"

    # The extractor's request is on the wire but not answered yet.
    await fake_server.wait_for_requests(4)
    assert extractor.stats.runs == 2
    assert extractor.stats.updated == 1
    assert fact_texts(memory_of(loaded_entry), f"user:{ada}") == ["The user likes tea."]

    await extractor.async_wait_idle()
    extraction_time = time.perf_counter() - started
    assert sorted(fact_texts(memory_of(loaded_entry), f"user:{ada}")) == [
        "The user likes tea.",
        "The user sails.",
    ]
    assert extraction_time >= 3.0
    assert reply_time < 1.0
    assert reply_time < baseline + 0.5
    # The measurement is part of the report (run with -s to see it).
    print(
        f"\nreply latency: {reply_time * 1000:.0f} ms with a 3 s extractor, "
        f"{baseline * 1000:.0f} ms with an instant one; "
        f"extraction finished after {extraction_time:.2f} s"
    )


async def test_extraction_waits_while_a_reply_runs(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """On the local server, extraction starts only once no reply is running."""
    ada = await create_user(hass, "Ada")
    kai = await create_user(hass, "Kai")
    release = asyncio.Event()

    async def chat(body: dict[str, Any]) -> fake.Reply:
        if body["messages"][-1]["content"] == "slow statement":
            await release.wait()
            return fake.text("Slow answer.")
        return fake.text("Fast answer.")

    fake_server.responder = responder(lambda _b: facts_answer(["A fact."]), chat)
    slow = asyncio.create_task(converse(hass, "slow statement", user_id=kai))
    await fake_server.wait_for_requests(1)
    await converse(hass, "fast statement", user_id=ada)
    for _ in range(10):
        await asyncio.sleep(0)
    # Ada's extraction waits behind Kai's reply, still running.
    assert not slow.done()
    assert extraction_requests(fake_server) == []
    assert extractor_of(loaded_entry).stats.calls == 0

    release.set()
    await slow
    await extractor_of(loaded_entry).async_wait_idle()
    requests = fake_server.requests
    assert [body["stream"] for body in requests[:2]] == [True, True]
    assert len(extraction_requests(fake_server)) == 2


async def test_runs_are_serialized_per_speaker_in_order(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Exchanges arriving during a run wait, then go one after the other."""
    ada = await create_user(hass, "Ada")
    release = asyncio.Event()
    in_flight = 0
    most_in_flight = 0

    async def extract(body: dict[str, Any]) -> fake.Reply:
        nonlocal in_flight, most_in_flight
        in_flight += 1
        most_in_flight = max(most_in_flight, in_flight)
        await release.wait()
        in_flight -= 1
        return echo(body)

    fake_server.responder = responder(extract)
    await converse(hass, "one", user_id=ada)
    await fake_server.wait_for_requests(2)
    for text in ("two", "three", "four"):
        await converse(hass, text, user_id=ada)
    extractor = extractor_of(loaded_entry)
    assert extractor.pending(f"user:{ada}") == 4  # the one in flight and three more
    assert len(extraction_requests(fake_server)) == 1

    release.set()
    await extractor.async_wait_idle()
    assert [said(body) for body in extraction_requests(fake_server)] == [
        "one",
        "two",
        "three",
        "four",
    ]
    assert most_in_flight == 1
    assert stored_order(loaded_entry, f"user:{ada}") == [
        "one",
        "two",
        "three",
        "four",
    ]
    assert extractor.pending(f"user:{ada}") == 0


async def test_fifty_concurrent_speakers_lose_no_update(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """50 speakers talking at once, two exchanges each: every fact lands on its speaker."""
    users = [await create_user(hass, f"Person {number}") for number in range(50)]
    fake_server.responder = responder(echo)

    async def talk(number: int, user_id: str) -> None:
        await converse(hass, f"p{number} first", user_id=user_id)
        await converse(hass, f"p{number} second", user_id=user_id)

    await asyncio.gather(*(talk(number, user) for number, user in enumerate(users)))
    extractor = extractor_of(loaded_entry)
    await extractor.async_wait_idle()

    for number, user in enumerate(users):
        assert stored_order(loaded_entry, f"user:{user}") == [
            f"p{number} first",
            f"p{number} second",
        ]
    assert extractor.stats.failed == 0
    assert extractor.pending_total() == 0
    assert await hass.config_entries.async_unload(loaded_entry.entry_id)
    for number, user in enumerate(users):
        assert stored_fact_texts(
            hass_storage, loaded_entry.entry_id, f"user:{user}"
        ) == [
            f"p{number} first",
            f"p{number} second",
        ]


async def test_local_extraction_runs_one_at_a_time(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Several speakers' extractions never queue up on the one-inference local server."""
    users = [await create_user(hass, f"Person {number}") for number in range(5)]
    in_flight = 0
    most_in_flight = 0

    async def extract(body: dict[str, Any]) -> fake.Reply:
        nonlocal in_flight, most_in_flight
        in_flight += 1
        most_in_flight = max(most_in_flight, in_flight)
        await asyncio.sleep(0)  # let any other extraction request arrive
        in_flight -= 1
        return echo(body)

    fake_server.responder = responder(extract)
    await asyncio.gather(*(converse(hass, "hi there", user_id=user) for user in users))
    await extractor_of(loaded_entry).async_wait_idle()
    assert len(extraction_requests(fake_server)) == 5
    assert most_in_flight == 1


# --- failure and shutdown ----------------------------------------------------------


async def test_extractor_down_for_many_exchanges_then_back(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """While down: facts intact, queue bounded. Back: the recent exchanges are distilled."""
    ada, speaker = await ada_knows(
        hass, hass_storage, config_entry, ["The user has a cat."]
    )
    extractor = extractor_of(config_entry)
    memory = memory_of(config_entry)
    fake_server.responder = responder(lambda _b: fake.error(503, "overloaded"))
    caplog.clear()

    for number in range(1, 16):
        await converse(hass, f"message {number}", user_id=ada)
        await extractor.async_wait_idle()
        assert extractor.pending(speaker) == min(number, MAX_PENDING_EXCHANGES)
        assert fact_texts(memory, speaker) == ["The user has a cat."]
    # One line for the whole outage, not one per exchange.
    assert len(warnings(caplog)) == 1
    assert extractor.stats.failed == 15
    # An overloaded server is not the exchange's fault: nothing given up.
    assert extractor.stats.given_up == 0

    fake_server.responder = responder(echo)
    await converse(hass, "message 16", user_id=ada)
    await extractor.async_wait_idle()
    assert [said(body) for body in fact_requests(fake_server)[-6:]] == [
        f"message {number}" for number in range(11, 17)
    ]
    assert stored_order(config_entry, speaker) == [
        "The user has a cat.",
        *(f"message {number}" for number in range(11, 17)),
    ]
    assert extractor.pending(speaker) == 0
    assert extractor.pending_total() == 0
    assert "The fact extractor answers again" in caplog.text
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_an_exchange_the_server_keeps_refusing_is_given_up(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A request the server rejects (HTTP 400/500) does not block the ones after it."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    extractor = extractor_of(loaded_entry)

    def extract(body: dict[str, Any]) -> fake.Reply:
        if said(body) == "poison":
            return fake.error(500, "failed to parse tool call")
        return echo(body)

    fake_server.responder = responder(extract)
    await converse(hass, "poison", user_id=ada)
    await extractor.async_wait_idle()
    assert extractor.pending(speaker) == 1
    await converse(hass, "fine", user_id=ada)
    await extractor.async_wait_idle()
    assert [said(body) for body in extraction_requests(fake_server)] == [
        "poison",
        "poison",
        "fine",
    ]
    assert MAX_ATTEMPTS == 2
    assert extractor.stats.given_up == 1
    assert extractor.pending(speaker) == 0
    assert fact_texts(memory_of(loaded_entry), speaker) == ["fine"]


async def test_unload_cancels_a_hanging_extraction(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Unload does not wait for a hung extractor and keeps the facts."""
    ada, speaker = await ada_knows(
        hass, hass_storage, config_entry, ["The user has a cat."]
    )
    fake_server.responder = responder(lambda _b: fake.hang())
    extractor = extractor_of(config_entry)
    memory = memory_of(config_entry)
    await converse(hass, "I like tea", user_id=ada)
    await fake_server.wait_for_requests(2)
    assert extractor.stats.runs == 1

    assert await hass.config_entries.async_unload(config_entry.entry_id)
    await extractor.async_wait_idle()  # nothing left to wait for
    assert stored_fact_texts(hass_storage, config_entry.entry_id, speaker) == [
        "The user has a cat."
    ]
    # A reply finishing during unload schedules nothing any more.
    memory.record_exchange(
        speaker, "late", "late answer", agent=next(iter(config_entry.subentries))
    )
    await extractor.async_wait_idle()
    assert len(extraction_requests(fake_server)) == 1


async def test_ha_stop_during_extraction_keeps_the_facts(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """HA stopping cancels the run; stored facts are intact and pending saves written."""
    ada, speaker = await ada_knows(
        hass, hass_storage, config_entry, ["The user has a cat."]
    )
    memory = memory_of(config_entry)
    added = await memory.async_add_fact(speaker, "The user is left-handed.")
    fake_server.responder = responder(lambda _b: slow_answer(["Replaced."], 3.0))
    await converse(hass, "I like tea", user_id=ada)
    await fake_server.wait_for_requests(2)

    await hass.async_stop()
    extractor = extractor_of(config_entry)
    assert extractor.stats.runs == 1
    assert extractor.stats.updated == 0
    # The debounced save (the manual fact) was written at the final-write
    # stage; the extractor's answer never arrived.
    assert stored_fact_texts(hass_storage, config_entry.entry_id, speaker) == [
        "The user has a cat.",
        added.text,
    ]


# --- hosted extractor --------------------------------------------------------------


async def _setup_hosted(
    hass: HomeAssistant, entry: MockConfigEntry, url: str, key: str
) -> None:
    hass.config_entries.async_update_entry(
        entry,
        options={
            CONF_EXTRACTION: EXTRACTION_HOSTED,
            CONF_EXTRACTION_BASE_URL: url,
            CONF_EXTRACTION_API_KEY: key,
            CONF_EXTRACTION_MODEL: HOSTED_MODEL,
        },
    )
    assert await hass.config_entries.async_setup(entry.entry_id)


async def test_hosted_extractor_gets_the_task_not_the_local_server(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    hosted_server: fake.FakeOpenAIServer,
) -> None:
    """With `hosted`, the task goes to the hosted model with its key, standalone."""
    await _setup_hosted(hass, config_entry, hosted_server.base_url, HOSTED_KEY)
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    extractor = extractor_of(config_entry)
    memory_of(config_entry).facts.book(speaker).add_extracted(
        "I windsurf at Tarifa.", 0
    )
    # A hosted model may answer in JSON; both formats are the same to us.
    hosted_server.responder = responder(
        lambda _b: fake.text('["REPLACE 1: I kitesurf at Tarifa now."]')
    )
    await converse(hass, "I kitesurf at Tarifa now, no more windsurfing", user_id=ada)
    await extractor.async_wait_idle()

    assert extraction_requests(fake_server) == []
    assert len(chat_requests(fake_server)) == 1
    (request,) = hosted_server.requests
    assert request["model"] == HOSTED_MODEL
    assert hosted_server.request_headers[0]["Authorization"] == f"Bearer {HOSTED_KEY}"
    assert request["messages"][0]["content"] == STANDALONE_SYSTEM_PROMPT
    assert "tools" not in request
    assert shown(request) == ["I windsurf at Tarifa."]
    assert fact_texts(memory_of(config_entry), speaker) == ["I kitesurf at Tarifa now."]
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_hosted_extractor_keeps_every_fact_of_a_rich_statement(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    hosted_server: fake.FakeOpenAIServer,
) -> None:
    """A hosted model may add more at once than a small local one: nothing is thrown away."""
    await _setup_hosted(hass, config_entry, hosted_server.base_url, HOSTED_KEY)
    ada = await create_user(hass, "Ada")
    facts = [
        "My husband is Tom.",
        "My daughter is Mia.",
        "Our dog is called Rex.",
        "We live in Leiden.",
        "I work as a nurse.",
        "Tom is a carpenter.",
        "Mia is seven.",
        "Rex is a beagle.",
    ]
    assert LOCAL_MAX_ADDS < len(facts) <= HOSTED_MAX_ADDS
    hosted_server.responder = responder(lambda _b: facts_answer(facts))
    await converse(
        hass,
        "My husband Tom is a carpenter, my daughter Mia is seven, our dog Rex is "
        "a beagle, we live in Leiden and I work as a nurse.",
        user_id=ada,
    )
    await extractor_of(config_entry).async_wait_idle()
    assert sorted(fact_texts(memory_of(config_entry), f"user:{ada}")) == sorted(facts)
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_one_unusable_hosted_edit_loses_nothing_else(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    hosted_server: fake.FakeOpenAIServer,
) -> None:
    """Edits are checked one by one: markup, a removal of a fact not shown, a
    second edit of one fact are left out, the rest is made."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    hass_storage[storage_key(config_entry.entry_id)] = storage_entry(
        {speaker: ["The user has a cat."]}
    )
    await _setup_hosted(hass, config_entry, hosted_server.base_url, HOSTED_KEY)
    hosted_server.responder = responder(
        lambda _b: edits_answer(
            [
                "ADD: I like <b>tea</b>.",
                "ADD: I like green tea.",
                "REMOVE 2",
                "REPLACE 1: I have two cats.",
                "REMOVE 1",
                "REPLACE 5: I live in Leiden.",
            ]
        )
    )
    await converse(
        hass, "I like green tea, I have two cats, I live in Leiden.", user_id=ada
    )
    extractor = extractor_of(config_entry)
    await extractor.async_wait_idle()
    assert sorted(fact_texts(memory_of(config_entry), speaker)) == [
        "I have two cats.",
        "I like green tea.",
        "I live in Leiden.",
    ]
    assert extractor.stats.refused_edits == 3
    assert extractor.stats.rejected_answers == 0
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_hosted_extractor_down_does_not_touch_replies(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    hosted_server: fake.FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A refused key at the hosted service: replies work, one warning per run."""
    await _setup_hosted(hass, config_entry, hosted_server.base_url, "wrong")
    ada = await create_user(hass, "Ada")
    caplog.clear()
    result = await converse(hass, "I kitesurf", user_id=ada)
    assert speech(result) == "OK"
    await extractor_of(config_entry).async_wait_idle()
    (warning,) = warnings(caplog)
    assert "HTTP 401" in warning.getMessage()
    assert "wrong" not in caplog.text
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_hosted_without_url_means_no_extraction(
    hass: HomeAssistant, config_entry: MockConfigEntry, caplog: pytest.LogCaptureFixture
) -> None:
    """A half-configured hosted extractor is off, and says so."""
    hass.config_entries.async_update_entry(
        config_entry, options={CONF_EXTRACTION: EXTRACTION_HOSTED}
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    assert memory_of(config_entry).extractor is None
    assert "no server URL" in caplog.text
    assert await hass.config_entries.async_unload(config_entry.entry_id)


# --- people editing facts while the extractor works --------------------------------


async def test_an_edit_during_extraction_is_not_undone(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A fact removed while the model works is not brought back: it asks again."""
    ada, speaker = await ada_knows(
        hass,
        hass_storage,
        config_entry,
        ["The user has a cat.", "The user has a parrot."],
    )
    memory = memory_of(config_entry)
    release = asyncio.Event()

    async def extract(body: dict[str, Any]) -> fake.Reply:
        if len(extraction_requests(fake_server)) == 1:
            await release.wait()
        return echo(body)

    fake_server.responder = responder(extract)
    await converse(hass, "I like tea", user_id=ada)
    await fake_server.wait_for_requests(2)
    parrot = next(f for f in memory.list_facts(speaker) if "parrot" in f.text)
    await memory.async_remove_fact(speaker, parrot.id)

    release.set()
    await extractor_of(config_entry).async_wait_idle()
    assert [said(body) for body in extraction_requests(fake_server)] == [
        "I like tea",
        "I like tea",
    ]
    assert stored_order(config_entry, speaker) == [
        "The user has a cat.",
        "I like tea",
    ]
    assert [(e.fact.text, e.reason) for e in memory.fact_history(speaker)] == [
        ("The user has a parrot.", "removed")
    ]
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_forget_completely_stops_extraction_in_flight(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Clearing with the history also drops the buffer and the pending exchanges."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    memory = memory_of(loaded_entry)
    extractor = extractor_of(loaded_entry)
    await memory.async_add_fact(speaker, "The user's PIN hint is blue.")
    release = asyncio.Event()

    async def extract(body: dict[str, Any]) -> fake.Reply:
        await release.wait()
        return echo(body)

    fake_server.responder = responder(extract)
    await converse(hass, "my secret is X", user_id=ada)
    await fake_server.wait_for_requests(2)
    await converse(hass, "and another one", user_id=ada)
    assert extractor.pending(speaker) == 2

    cleared = await memory.async_clear_facts(speaker, include_history=True)
    assert cleared == 1
    await extractor.async_wait_idle()
    release.set()
    assert memory.list_facts(speaker) == []
    assert memory.fact_history(speaker) == []
    assert memory.history(next(iter(loaded_entry.subentries)), speaker) == []
    assert extractor.pending(speaker) == 0
    assert len(extraction_requests(fake_server)) == 1
    assert memory.facts.speakers() == []
