"""Review of the thirty-second pass (d87fecf..7ce528c), by an independent helper.

Each test failed on 7ce528c. Fixed since: the resend without the session
keeps the last system message (entity.py); a polite question is a request
again (memory/commands.py); the sea-option migration these tests found
wrong (guesses said as kinds, decided before the sensors existed, a
persistent issue outliving its agent) is gone: an old list is read at
request time and a non-persistent issue asks to sort it (old_options.py).
The Dutch forget-about case stays a strict xfail: see its reason.
Real HA (the `hass` fixture), the real openai client, real HTTP and SSE
from the fake server of tests/helpers.
"""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_API_KEY, CONF_LLM_HASS_API, CONF_MODEL, CONF_PROMPT
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent, issue_registry as ir, llm
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import (
    CONF_BASE_URL,
    CONF_EXTRACTION,
    DOMAIN,
    EXTRACTION_OFF,
    SUBENTRY_CONVERSATION,
)
from custom_components.local_assistant.llm.sentences import async_phrases
from custom_components.local_assistant.memory.store import storage_key
from custom_components.local_assistant.old_options import sea_issue_id
from custom_components.local_assistant.tools.kite import KiteSpot
from custom_components.local_assistant.tools.phrases import waves_line
from custom_components.local_assistant.tools.sea import SeaConditionsTool
from tests.helpers import fake_openai as fake
from tests.helpers.ha import MODEL, converse, speech
from tests.helpers.live import (
    BASE_OPTIONS,
    GERMAN_DINNER_CHAT,
    WIND,
    WIND_ONLY_OPTIONS,
    set_sensor,
)
from tests.helpers.memory import create_user, fact_texts, memory_of, storage_entry

# ---------------------------------------------------------------------------
# 1. The session outgrows the context: the request sent again without it
#    loses the last system message (live data, time, answer language).
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("agent_options", [WIND_ONLY_OPTIONS])
async def test_a_request_sent_again_without_the_session_keeps_the_live_data(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The README's kitesurf set-up in German on llama.cpp (-c 8192): a long
    chat outgrows the server's context, llama.cpp answers HTTP 400, and the
    turn is sent again without the replayed session (entity.py). The user
    then asks "Wie windig ist es am Strand?". The request sent again has no
    live data and no "Antworte auf Deutsch." any more: _without_session keeps
    the system messages BEFORE the history only, and the live data, the time
    and the answer-language line now stand in a system message AFTER it. The
    model answers the wind question with no wind value (or in English). The
    request sent again should keep every system message of the prompt."""
    ada = await create_user(hass, "Ada")
    set_sensor(hass, WIND, 14, "kn", "wind_speed", "Beach wind")

    def server(body: dict[str, Any]) -> fake.Reply:
        said = [m for m in body["messages"] if m["role"] in ("user", "assistant")]
        if len(said) > 5:  # the replayed session no longer fits
            return fake.error(
                400,
                "the request exceeds the available context size, try increasing it",
                code="exceed_context_size_error",
            )
        if said[-1]["content"] == "Wie windig ist es am Strand?":
            return fake.text("Am Strand weht es mit 14 Knoten.")
        return fake.text(dict(GERMAN_DINNER_CHAT)[said[-1]["content"]])

    fake_server.responder = server
    for words, answer in GERMAN_DINNER_CHAT:
        assert speech(await converse(hass, words, user_id=ada, language="de")) == answer
    result = await converse(
        hass, "Wie windig ist es am Strand?", user_id=ada, language="de"
    )
    assert result.response.response_type is not intent.IntentResponseType.ERROR
    refused, resent = fake_server.requests[-2:]
    assert len([m for m in refused["messages"] if m["role"] == "user"]) > 2
    assert [m["role"] for m in resent["messages"]][-1] == "user"
    before = "\n".join(
        m["content"] for m in refused["messages"] if m["role"] == "system"
    )
    after = "\n".join(m["content"] for m in resent["messages"] if m["role"] == "system")
    assert "Antworte auf Deutsch." in before
    assert "14" in before
    # What the model reads of the wind and of the language is still sent.
    assert "Antworte auf Deutsch." in after
    assert "14" in after


# ---------------------------------------------------------------------------
# 2. A request asked as a question, in languages whose sentence file has no
#    `request: true` form, no longer changes the notes.
# ---------------------------------------------------------------------------

CHAT_ONLY = {
    CONF_MODEL: MODEL,
    CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
    CONF_LLM_HASS_API: [],
    "tool_bias": True,
    "local_intents": False,
    "temperature": 0.6,
    "max_tokens": 512,
}

# (language, a request asked as a question, the model's reply, the note)
POLITE_REMEMBER = [
    (
        "pl",
        "Czy możesz zapamiętać, że jestem weganinem?",
        "Jasne, zapamiętam.",
        "weganinem",
    ),
    (
        "sv",
        "Kan du komma ihåg att jag är vegan?",
        "Absolut, det ska jag komma ihåg.",
        "vegan",
    ),
    ("nb", "Kan du huske at jeg er veganer?", "Ja, det skal jeg huske.", "veganer"),
    ("cs", "Můžeš si zapamatovat, že jsem vegan?", "Jasně, zapamatuji si to.", "vegan"),
    (
        "it",
        "Potresti ricordarti che sono allergico alle noci?",
        "Certo, me lo ricorderò.",
        "noci",
    ),
]


@pytest.mark.parametrize("agent_options", [CHAT_ONLY])
@pytest.mark.parametrize(("language", "words", "reply", "word"), POLITE_REMEMBER)
async def test_a_polite_request_to_remember_is_still_remembered(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    words: str,
    reply: str,
    word: str,
) -> None:
    """A Polish (Swedish, Norwegian, Czech, Italian) user asks her chat
    agent, politely, as people do: "Czy możesz zapamiętać, że jestem
    weganinem?" ("Can you remember that I'm vegan?"). Before e577163 HA's
    skip words made the question a polite request and the note was stored
    and confirmed at once, as in German and French. Now a question is a
    request only in a form the sentence file marks `request: true`, and only
    de and fr got such forms for remembering: in these languages the words go
    to the model, which (a chat-only agent) has no remember tool at all. She
    hears "Jasne, zapamiętam." ("Sure, I'll remember") and nothing is stored.
    The complementiser (że, att, at, že, che) opens the fact exactly as
    German "dass" does: the note should be stored, as before."""
    ada = await create_user(hass, "Ada")
    fake_server.queue(fake.text(reply))
    await converse(hass, words, user_id=ada, language=language)
    memory = memory_of(loaded_entry)
    notes = fact_texts(memory, f"user:{ada}")
    assert any(word in note for note in notes), (notes, fake_server.requests)


@pytest.mark.parametrize("agent_options", [CHAT_ONLY])
async def test_a_polite_request_to_forget_is_still_carried_out_in_russian(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """A Russian user asks "Можешь забыть, что я веган?" ("Can you forget
    that I'm vegan?"): her note "Я веган." was forgotten at once before
    e577163 (ru.yaml marks only the remember question as a request). Now
    the words go to the chat-only model, which has no forget tool: she hears
    "Хорошо, забуду." and the note stays in every prompt."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    hass_storage[storage_key(config_entry.entry_id)] = storage_entry(
        {speaker: ["Я веган."]}
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    fake_server.queue(fake.text("Хорошо, забуду."))
    await converse(hass, "Можешь забыть, что я веган?", user_id=ada, language="ru")
    left = fact_texts(memory_of(config_entry), speaker)
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert left == [], left


# ---------------------------------------------------------------------------
# 3. The sea repair issue outlives the agent it is about.
# ---------------------------------------------------------------------------


def _old_entry(hass: HomeAssistant, base_url: str, sea: list[str]) -> MockConfigEntry:
    """An entry of version 1.1 with two agents; the first lists sea sensors."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Local Assistant",
        version=1,
        minor_version=1,
        data={CONF_BASE_URL: base_url, CONF_API_KEY: ""},
        options={CONF_EXTRACTION: EXTRACTION_OFF},
        subentries_data=[
            {
                "subentry_type": SUBENTRY_CONVERSATION,
                "data": {**BASE_OPTIONS, "sea_entities": sea},
                "title": "Playa",
                "unique_id": None,
            },
            {
                "subentry_type": SUBENTRY_CONVERSATION,
                "data": dict(BASE_OPTIONS),
                "title": "Casa",
                "unique_id": None,
            },
        ],
    )
    entry.add_to_hass(hass)
    return entry


@pytest.mark.parametrize("removed", ["agent", "entry"])
async def test_the_sea_repair_goes_with_the_agent(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer, removed: str
) -> None:
    """A user updates; the migration could only guess the kind of her old
    beach agent's tide sensor (a length) and raises the persistent repair
    "Check the sea sensors of Playa ... open the agent's settings and save".
    She no longer needs that agent and deletes it (or deletes the whole
    server entry). The repair stays in Settings > Repairs for good (it is
    persistent, not fixable, and only the agent's reconfigure form deletes
    it): it asks her to open the settings of an agent that no longer exists.
    The issue should go with the agent."""
    set_sensor(hass, "sensor.tide", 1.8, "m", "distance", "Beach tide")
    entry = _old_entry(hass, fake_server.base_url, ["sensor.tide"])
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    playa = next(s for s in entry.subentries.values() if s.title == "Playa")
    issue_id = sea_issue_id(playa.subentry_id)
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is not None
    if removed == "agent":
        assert hass.config_entries.async_remove_subentry(entry, playa.subentry_id)
    else:
        await hass.config_entries.async_remove(entry.entry_id)
    await hass.async_block_till_done()
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is None
    if entry.state is ConfigEntryState.LOADED:
        await hass.config_entries.async_unload(entry.entry_id)


# ---------------------------------------------------------------------------
# 4. The migration says a guessed sensor as a kind it may not be.
# ---------------------------------------------------------------------------


async def test_an_old_tide_sensor_is_not_said_as_the_waves_after_the_update(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer
) -> None:
    """An English beach agent set up before the fields: its list holds the
    wind and "Beach tide" (1.8 m, a distance). Before the update it was said
    as the tide. The migration puts every length in the wave-height field (a
    guess, it says so in a repair issue), and until the user opens the form
    the agent tells her "Waves: 1.8 m" on a flat day: false. sea.py's own rule
    is that a sensor whose kind is not known is said by its own name, never
    as something it may not be; a guessed sensor should stay with its name
    (or where it was read before), not be said as the waves."""
    set_sensor(hass, "sensor.beach_wind", 12, "kn", "wind_speed", "Beach wind")
    set_sensor(hass, "sensor.beach_tide", 1.8, "m", "distance", "Beach tide")
    entry = _old_entry(
        hass, fake_server.base_url, ["sensor.beach_wind", "sensor.beach_tide"]
    )
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    playa = next(s for s in entry.subentries.values() if s.title == "Playa")
    tool = SeaConditionsTool(dict(playa.data), KiteSpot())
    phrases = await async_phrases(hass, "en")
    lines = tool.lines(hass, phrases)
    await hass.config_entries.async_unload(entry.entry_id)
    assert waves_line(phrases, 1.8, "m", None) not in lines, lines
    assert not any(line.startswith("Waves") for line in lines), lines


async def test_an_old_swell_direction_is_not_said_as_the_winds_after_the_update(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer
) -> None:
    """An old beach agent lists the wind speed (12 kn) and the buoy's
    "Swell direction" (270 °, no device class). Before the update the swell
    direction was said by its own name, never as the wind's. The migration
    puts any bare angle in the wind-direction field (a guess), so until the
    user opens the form she hears "Wind: 12 kn from the west." - the swell's
    direction as the wind's, which also turns the kitesurf verdict. A guessed
    sensor should be said by its own name, not as the wind's direction."""
    set_sensor(hass, "sensor.beach_wind", 12, "kn", "wind_speed", "Beach wind")
    set_sensor(hass, "sensor.swell_direction", 270, "°", None, "Swell direction")
    entry = _old_entry(
        hass, fake_server.base_url, ["sensor.beach_wind", "sensor.swell_direction"]
    )
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    playa = next(s for s in entry.subentries.values() if s.title == "Playa")
    tool = SeaConditionsTool(dict(playa.data), KiteSpot())
    lines = tool.lines(hass, await async_phrases(hass, "en"))
    await hass.config_entries.async_unload(entry.entry_id)
    assert "Wind: 12 kn." in lines, lines


# ---------------------------------------------------------------------------
# 5. "Forget about my dog" in Dutch no longer forgets the only dog note.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "words", "note"),
    [
        pytest.param(
            "nl",
            "Vergeet alles over mijn hond.",
            "Ik heb een hond die Max heet.",
            marks=pytest.mark.xfail(
                strict=True,
                reason="kept: a topic word the note lacks and HA's sentences do "
                "not leave out asks for the number first (the price of never "
                "forgetting 'My wife's birthday' for 'my birthday')",
            ),
        ),
    ],
)
async def test_forget_about_my_dog_forgets_the_dog_note_in_every_language(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    config_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    words: str,
    note: str,
) -> None:
    """Ada's one note about her dog: "Ik heb een hond die Max heet." She says
    "Vergeet alles over mijn hond." In Swedish ("Glöm allt om min hund." for
    "Jag har en hund som heter Max."), Danish, German, Spanish the note goes at once: the possessive the note does not say is one of HA's
    left-out words for those languages. In Dutch "mijn" is not among the
    words HA's Dutch sentences leave out, so says_the_topic finds that "Ik
    heb een hond die Max heet." does not say "mijn hond": she is read the
    note back and asked to say its number (memory_confirm), where before
    e577163 the only note touched went at once, as it still does in English.
    Whether a possessive counts should not depend on HA's sentence files."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    hass_storage[storage_key(config_entry.entry_id)] = storage_entry(
        {speaker: [note, "I like jazz."]}
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    result = await converse(hass, words, user_id=ada, language=language)
    left = fact_texts(memory_of(config_entry), speaker)
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert left == ["I like jazz."], (left, speech(result))


# ---------------------------------------------------------------------------
# 6. The migration runs before the sensors it reads exist.
# ---------------------------------------------------------------------------


async def test_sea_sensors_that_load_after_the_agent_keep_their_kind(
    hass: HomeAssistant, fake_server: fake.FakeOpenAIServer
) -> None:
    """A kitesurfer's beach sensors are YAML template sensors (no unique_id,
    so not in the entity registry): wind 18 kn (wind_speed), its direction
    270° (wind_direction). HA starts; the agent's entry (1.1) is migrated
    when it is set up, before the template integration has written those
    states. With neither a state nor a registry entry, every sensor is put
    in "other": once the sensors are up the wind is said by its name only,
    never as the wind, and there is no kitesurf verdict, until the user
    re-enters each sensor by hand, though their device classes tell exactly
    what they are (before the update the tool read them at request time).
    The migration should not decide from sensors that do not exist yet."""
    entry = _old_entry(
        hass,
        fake_server.base_url,
        ["sensor.beach_wind_speed", "sensor.beach_wind_direction"],
    )
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    # The template sensors come up after the agent.
    set_sensor(hass, "sensor.beach_wind_speed", 18, "kn", "wind_speed", "Beach A")
    set_sensor(
        hass, "sensor.beach_wind_direction", 270, "°", "wind_direction", "Beach B"
    )
    playa = next(s for s in entry.subentries.values() if s.title == "Playa")
    tool = SeaConditionsTool(dict(playa.data), KiteSpot())
    lines = tool.lines(hass, await async_phrases(hass, "en"))
    await hass.config_entries.async_unload(entry.entry_id)
    assert lines == ["Wind: 18 kn from the west."], (lines, dict(playa.data))
