"""Who is speaking, and what is kept between turns: defects found by an
independent hunt (2026-12-06, a helper session that read no benchmark set).
Each test failed before its fix; its docstring says what happened then.

Left (docs/benchmarks.md, twenty-ninth pass): a conversation id HA answered
for one user and continued by another (HA's chat log holds no user, so its
exchanges join whoever speaks next).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
import json
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er, llm
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import (
    CONF_EXTRACTION,
    CONF_EXTRACTION_API_KEY,
    CONF_EXTRACTION_BASE_URL,
    CONF_EXTRACTION_MODEL,
    CONF_SESSION_IDLE_MINUTES,
    EXTRACTION_HOSTED,
    EXTRACTION_LOCAL,
)
from custom_components.local_assistant.memory.voice import FORGET_TOOL_NAME
from tests.helpers import fake_openai as fake
from tests.helpers.ha import AGENT_ID, converse, speech, system_text
from tests.helpers.memory import (
    ada_with_kitchen_satellite,
    create_user,
    extraction_requests,
    fact_requests,
    facts_answer,
    memory_of,
    responder,
    said,
    start_with_facts,
)


def non_system(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] != "system"]


async def test_a_clock_set_back_does_not_keep_a_buffer_alive_for_ever(
    hass: HomeAssistant,
    freezer: FrozenDateTimeFactory,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """HA's clock ran a year ahead (a bad NTP answer, a Pi's RTC) while Ada
    talked; it is corrected. Three hours of silence later (default idle gap
    120 min) her buffer must be gone, on read and by the sweep. Its last
    activity lay in the future, so it was never idle: the sentence said
    three hours before was replayed, and the sweep never freed it (for a year)."""
    ada = await create_user(hass, "Ada")
    memory = memory_of(loaded_entry)
    real_now = dt_util.utcnow()
    freezer.move_to(real_now + timedelta(days=365))
    fake_server.queue(fake.text("Noted."))
    await converse(hass, "My secret plan is to move to Oslo.", user_id=ada)
    # The clock is corrected, and nobody talks for three hours.
    freezer.move_to(real_now + timedelta(hours=3))
    fake_server.queue(fake.text("Hi."))
    await converse(hass, "hello", user_id=ada)
    assert non_system(fake_server.last_request) == [
        {"role": "user", "content": "hello"}
    ]
    # Bob's satellite talked while the clock was wrong too, and never again:
    # the periodic sweep must free it once it idled for the idle gap.
    freezer.move_to(real_now + timedelta(days=365))
    fake_server.queue(fake.text("OK."))
    await converse(hass, "hello", device_id="bedroom-satellite")
    freezer.move_to(real_now + timedelta(hours=6))
    memory.sessions.sweep(dt_util.utcnow().timestamp())
    assert [
        key for key in memory.sessions.speakers() if "bedroom-satellite" in key
    ] == [], "the sweep keeps an idle buffer"


@pytest.mark.parametrize("entry_options", [{CONF_EXTRACTION: EXTRACTION_LOCAL}])
async def test_a_reload_keeps_the_exchanges_waiting_for_the_extractor(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """README: while the extractor is down "the last 6 exchanges per speaker are
    kept and distilled once it is back". A reload in between (an option
    changed, an agent added, a reauth with a new key) must not drop them, as
    it does not drop the session buffer. The new extractor started empty:
    "Mi perro se llama Bolt." was never distilled."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    fake_server.responder = responder(lambda _b: fake.error(503, "overloaded"))
    await converse(hass, "Mi perro se llama Bolt.", user_id=ada, language="es")
    extractor = memory_of(loaded_entry).extractor
    assert extractor is not None
    await extractor.async_wait_idle()
    assert extractor.pending(speaker) == 1

    # An option changes: the entry reloads (its update listener).
    hass.config_entries.async_update_entry(
        loaded_entry,
        options={**loaded_entry.options, CONF_SESSION_IDLE_MINUTES: 90},
    )
    await hass.async_block_till_done()
    new_memory = memory_of(loaded_entry)
    assert new_memory.extractor is not extractor

    before = len(fact_requests(fake_server))
    fake_server.responder = responder(lambda body: facts_answer([said(body)]))
    await converse(hass, "Mi gata se llama Luna.", user_id=ada, language="es")
    assert new_memory.extractor is not None
    await new_memory.extractor.async_wait_idle()
    distilled = [said(body) for body in fact_requests(fake_server)[before:]]
    assert "Mi perro se llama Bolt." in distilled, distilled


async def test_a_satellite_answering_a_users_start_conversation_is_not_that_user(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Ada, on her phone, calls assist_satellite.start_conversation on the kids'
    room satellite ("Habt ihr die Hausaufgaben gemacht?"). HA's entity service
    call sets the satellite entity's context to Ada's (helpers/service.py
    async_set_context), and the satellite's next pipeline run within 5 s uses
    that context (assist_satellite/entity.py: self._context). So the request
    from the satellite carries Context(user_id=ada), device_id and satellite_id.
    Whoever answers in the kids' room is not Ada: the satellite (not mapped
    to any person) must count as its own speaker. The context user won: the
    child heard Ada's notes and wrote into them."""
    ada = await create_user(hass, "Ada")
    await start_with_facts(
        hass,
        hass_storage,
        config_entry,
        {f"user:{ada}": ["Mein Bankberater heißt Herr Weber."]},
    )
    memory = memory_of(config_entry)
    result = await conversation.async_converse(
        hass,
        "Was weißt du über mich?",
        None,
        Context(user_id=ada),  # the satellite entity's context, set by Ada's call
        language="de",
        agent_id=AGENT_ID,
        device_id="kids-room-satellite",
        satellite_id="assist_satellite.kids_room",
    )
    assert "Weber" not in speech(result), speech(result)
    await conversation.async_converse(
        hass,
        "Merk dir, dass ich Brokkoli hasse.",
        None,
        Context(user_id=ada),
        language="de",
        agent_id=AGENT_ID,
        device_id="kids-room-satellite",
        satellite_id="assist_satellite.kids_room",
    )
    assert [fact.text for fact in memory.list_facts(f"user:{ada}")] == [
        "Mein Bankberater heißt Herr Weber."
    ]
    assert await hass.config_entries.async_unload(config_entry.entry_id)


async def test_a_satellites_tool_call_is_never_the_context_users(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
) -> None:
    """The model's memory tools read the speaker from the request's LLM context,
    which has the device but no satellite id: a device with an Assist satellite
    entity is the satellite's speaker there too, whatever user the context
    carries (the same rule as the turn's own reading)."""
    ada = await create_user(hass, "Ada")
    device = dr.async_get(hass).async_get_or_create(
        config_entry_id=loaded_entry.entry_id, identifiers={("test", "kids-room")}
    )
    er.async_get(hass).async_get_or_create(
        "assist_satellite", "test", "kids-room", device_id=device.id
    )
    context = llm.LLMContext(
        platform="local_assistant",
        context=Context(user_id=ada),
        language="de",
        assistant="conversation",
        device_id=device.id,
    )
    memory = memory_of(loaded_entry)
    assert memory.context_speaker(context) == f"device:{device.id}"
    # The same user in the chat dialog (no device) is herself.
    assert (
        memory.context_speaker(
            llm.LLMContext("local_assistant", Context(user_id=ada), "de", None, None)
        )
        == f"user:{ada}"
    )


@pytest.mark.parametrize("entry_options", [{CONF_EXTRACTION: EXTRACTION_LOCAL}])
async def test_switching_to_a_hosted_extractor_sends_what_was_said_while_local(
    hass: HomeAssistant,
    loaded_entry: Any,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Ada speaks while extraction is local (the LAN server is busy: the
    exchange waits). The admin then switches extraction to a hosted endpoint
    (README: "your utterances are sent there"). Before 04892d1 the reload
    dropped what waited; now the exchange said under "local only" is sent to
    the hosted endpoint once Ada speaks again: an utterance leaves the house
    that was said when nothing did."""
    ada = await create_user(hass, "Ada")
    fake_server.responder = responder(lambda _b: fake.error(503, "overloaded"))
    await converse(
        hass, "Mi médico es el doctor Ruiz, tengo diabetes.", user_id=ada, language="es"
    )
    extractor = memory_of(loaded_entry).extractor
    assert extractor is not None
    await extractor.async_wait_idle()
    assert extractor.pending(f"user:{ada}") == 1
    fake_server.responder = responder(lambda body: facts_answer([said(body)]))

    async with fake.FakeOpenAIServer(models=["hosted-model"]) as hosted:
        hosted.responder = responder(lambda body: facts_answer([said(body)]))
        hass.config_entries.async_update_entry(
            loaded_entry,
            options={
                **loaded_entry.options,
                CONF_EXTRACTION: EXTRACTION_HOSTED,
                CONF_EXTRACTION_BASE_URL: hosted.base_url,
                CONF_EXTRACTION_API_KEY: "k",
                CONF_EXTRACTION_MODEL: "hosted-model",
            },
        )
        await hass.async_block_till_done()
        await converse(hass, "Mi gata se llama Luna.", user_id=ada, language="es")
        new = memory_of(loaded_entry).extractor
        assert new is not None
        await new.async_wait_idle()
        sent = [said(body) for body in extraction_requests(hosted)]
        await hass.config_entries.async_unload(loaded_entry.entry_id)
        await hass.async_block_till_done()
    assert not any("Ruiz" in text for text in sent), sent


async def test_a_satellite_without_a_device_is_not_its_context_user(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """Found by review: a satellite entity with no device kept the context's
    user as its speaker."""
    ada = await create_user(hass, "Ada")
    request = conversation.ConversationInput(
        text="Was weißt du über mich?",
        context=Context(user_id=ada),
        conversation_id=None,
        device_id=None,
        satellite_id="assist_satellite.kids_room",
        language="de",
        agent_id=AGENT_ID,
    )
    assert memory_of(loaded_entry).resolve_speaker(request, "c1") != f"user:{ada}"


def numbered_facts(body: dict[str, Any]) -> list[str]:
    """The facts a reply request shows, in their numbered order."""
    facts = []
    for line in system_text(body).splitlines():
        number, dot, quoted = line.partition(". ")
        if dot and number.isdigit() and quoted.startswith('"'):
            facts.append(json.loads(quoted))
    return facts


async def test_a_second_device_of_the_same_person_does_not_renumber_a_turn_in_flight(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Ada, in the chat dialog: "Streich das mit dem Jazz." Her prompt numbers
    1 = "Ich mag Jazz.". While the model works, the kitchen satellite (counted
    as Ada) hears "Merk dir, dass meine Schwester Eva heißt." (added at once,
    pinned: it ranks first) and then "Hallo", whose prompt numbers the notes
    anew. The tool read the numbers of the speaker's last prompt, and the
    sister note just remembered was deleted instead; a turn's numbers are its
    own now."""
    ada = await ada_with_kitchen_satellite(hass, config_entry)
    speaker = f"user:{ada}"
    await start_with_facts(
        hass,
        hass_storage,
        config_entry,
        {speaker: ["Ich mag Jazz.", "Ich wohne in Ulm."]},
    )
    memory = memory_of(config_entry)
    reached, gate = asyncio.Event(), asyncio.Event()
    chat_shown: list[str] = []

    async def answer(body: dict[str, Any]) -> fake.Reply:
        last = body["messages"][-1]
        if last["role"] == "tool":
            return fake.text("Erledigt.")
        if last["content"] == "Streich das mit dem Jazz.":
            chat_shown.extend(numbered_facts(body))
            reached.set()
            await gate.wait()
            number = chat_shown.index("Ich mag Jazz.") + 1
            return fake.tool_calls([(FORGET_TOOL_NAME, {"number": number})])
        return fake.text("Hallo!")

    fake_server.responder = answer
    chat_turn = asyncio.ensure_future(
        converse(hass, "Streich das mit dem Jazz.", user_id=ada, language="de")
    )
    await reached.wait()
    remembered = await converse(
        hass,
        "Merk dir, dass meine Schwester Eva heißt.",
        device_id="kitchen-satellite",
        language="de",
    )
    assert "Eva" in speech(remembered)
    await converse(hass, "Hallo", device_id="kitchen-satellite", language="de")
    gate.set()
    await chat_turn
    texts = [fact.text for fact in memory.list_facts(speaker)]
    assert "Meine Schwester Eva heißt." in texts, texts
    assert "Ich mag Jazz." not in texts, texts
    assert await hass.config_entries.async_unload(config_entry.entry_id)
