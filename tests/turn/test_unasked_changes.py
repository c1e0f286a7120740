"""Sentences that must change no device: questions, statements, negations,
reports, wishes and chit-chat, alone or right after a command.

HA's own strict reading of the user's words is HA's business; every case here
is one HA does NOT read as said, and that our rewriting once turned into a
command HA then carried out (turn/reading.py ``_trimmed``, ``_with_target``,
``_async_ellipsis``; turn/targets.py ``named_readings``), with no model call.
Found by an independent review, in eleven languages.
"""

from __future__ import annotations

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import area_registry as ar
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.turn.reading import async_recognize_intent
from custom_components.local_assistant.turn.vocabulary import load_vocabulary
from tests.helpers import fake_openai as fake
from tests.helpers.dev_home import async_setup_dev_home
from tests.helpers.ha import converse_streaming
from tests.helpers.memory import create_user
from tests.turn.test_follow_ups import agent_options  # noqa: F401  (HA's intents on)

KITCHEN = "light.kitchen_light"
LIVING = "light.living_room_light"
BEDROOM = "light.bedroom_light"
FAN = "switch.fan"
DEVICES = (KITCHEN, LIVING, BEDROOM, FAN)
# The dev home's areas as each language names them.
ALIASES = {
    "Living Room": ("salón", "Wohnzimmer", "salon", "woonkamer", "soggiorno", "sala"),
    "Bedroom": (
        "dormitorio",
        "Schlafzimmer",
        "chambre",
        "slaapkamer",
        "camera",
        "quarto",
    ),
    "Kitchen": ("cocina", "Küche", "cuisine", "keuken", "cucina", "cozinha"),
}


@pytest.fixture
async def home(hass: HomeAssistant) -> None:
    await async_setup_dev_home(hass)
    await hass.async_block_till_done()
    areas = ar.async_get(hass)
    for name, aliases in ALIASES.items():
        area = areas.async_get_area_by_name(name)
        assert area is not None
        areas.async_update(area.id, aliases=set(aliases))


async def _set_all(hass: HomeAssistant, service: str) -> None:
    for entity_id in DEVICES:
        await hass.services.async_call(
            entity_id.partition(".")[0],
            service,
            {"entity_id": entity_id},
            blocking=True,
        )
    await hass.async_block_till_done()


def _states(hass: HomeAssistant) -> dict[str, str]:
    return {entity_id: hass.states.get(entity_id).state for entity_id in DEVICES}


async def _ha_reads(hass: HomeAssistant, text: str, language: str) -> str | None:
    """What HA's own strict recognition reads in the words as said."""
    return await async_recognize_intent(
        hass,
        conversation.ConversationInput(
            text=text,
            context=Context(),
            conversation_id=None,
            device_id=None,
            satellite_id=None,
            language=language,
            agent_id=None,
        ),
    )


async def _nothing_changes(
    hass: HomeAssistant, language: str, before: list[str], sentence: str, *, on: bool
) -> None:
    """Everything on (or off), the session's commands, then ``sentence``:
    no device may change, and HA alone never reads the sentence as a command."""
    await _set_all(hass, "turn_on" if on else "turn_off")
    ada = await create_user(hass, "Ada")
    for command in before:
        await converse_streaming(hass, command, user_id=ada, language=language)
    assert await _ha_reads(hass, sentence, language) is None  # not HA's doing
    states = _states(hass)
    await converse_streaming(hass, sentence, user_id=ada, language=language)
    assert _states(hass) == states


TURN_OFF_THE_BEDROOM = {
    "en": "turn off the bedroom light",
    "de": "Schalte das Licht im Schlafzimmer aus",
    "nl": "zet het licht in de slaapkamer uit",
    "fr": "éteins la lumière de la chambre",
    "es": "apaga la luz del dormitorio",
    "it": "spegni la luce in camera",
}


# Was: reading.py _async_ellipsis. Every word but the name was "optional",
# and HA's optional words include on/off, an/aan, is/ist/staat/está, ya,
# I/like/want/my, and the negations "no" (it) and "non" (fr).
@pytest.mark.usefixtures("home")
@pytest.mark.parametrize(
    ("language", "sentence"),
    [
        # A request for the opposite: the living room light goes OFF.
        ("en", "Living room on"),
        ("en", "The living room on, please"),
        ("de", "Wohnzimmer an"),
        ("nl", "Woonkamer aan"),
        # Negations.
        ("it", "Il soggiorno no."),
        ("fr", "Le salon, non."),
        # Questions.
        ("en", "Is the living room on?"),
        ("en", "How is the living room?"),
        ("de", "Ist das Wohnzimmer an?"),
        ("nl", "Staat de woonkamer aan?"),
        # Statements, reports, chit-chat.
        ("en", "The living room is on."),
        ("en", "I turned on the living room"),
        ("en", "I like the living room."),
        ("en", "the fan is on"),
        ("de", "Das Wohnzimmer ist an."),
        ("nl", "De woonkamer is aan."),
        ("es", "El salón ya está."),
    ],
)
async def test_only_a_real_ellipsis_continues_the_last_command(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    sentence: str,
) -> None:
    await _nothing_changes(
        hass, language, [TURN_OFF_THE_BEDROOM[language]], sentence, on=True
    )


# Was: reading.py _with_target. "it" became the last target and "is",
# "turned", "switched", "I", "now" are dropped as optional: HA reads
# "Kitchen Light on" (its "[turn] {name} on").
@pytest.mark.usefixtures("home")
@pytest.mark.parametrize(
    ("before", "sentence"),
    [
        ("turn off the kitchen light", "is it on?"),
        ("turn off the kitchen light", "is it on now?"),
        ("turn off the kitchen light", "Now it is on."),
        ("turn off the kitchen light", "I turned it on"),
        ("turn on the kitchen light", "is it off?"),
        ("turn on the kitchen light", "I switched it off"),
    ],
)
async def test_a_question_or_report_about_it_is_no_follow_up(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    before: str,
    sentence: str,
) -> None:
    await _nothing_changes(
        hass, "en", [before], sentence, on=before.startswith("turn on")
    )


# Was: reading.py _trimmed, with no session at all. Up to two "optional"
# words go at each end: pronouns, auxiliaries, modals, question words, "if"
# (pt "se"), and a closing "No"/"Non".
@pytest.mark.usefixtures("home")
@pytest.mark.parametrize(
    ("language", "sentence"),
    [
        ("en", "Do I turn off the fan?"),
        ("en", "Can I turn off the fan?"),
        ("en", "How to turn off the fan?"),
        ("en", "I would turn off the fan"),
        ("en", "I'd turn off the fan."),
        ("de", "Soll ich das Licht in der Küche ausschalten?"),
        ("de", "Ich würde das Licht in der Küche ausschalten"),
        ("de", "Er schaltet das Licht in der Küche aus."),
        ("nl", "Wil ik het licht in de keuken uitzetten?"),
        ("fr", "Il éteint la lumière de la cuisine."),
        ("fr", "Éteins la lumière de la cuisine ? Non."),
        ("it", "Spegni la luce in cucina? No."),
        ("es", "Se apaga la luz de la cocina."),
        ("pt", "Se desligar a luz da cozinha"),
        # Plain negations: "ne" (sl), "không" (vi), "no" (ca) are "optional"
        # (glued template fragments "kakš[na|ne|en]", a question's "[không]",
        # HassNevermind's "[no|res] res").
        ("sl", "Ne ugasni Kitchen Light"),
        ("sl", "Ne izklopi Kitchen Light"),
        ("vi", "Không tắt Kitchen Light"),
        ("vi", "Tắt Kitchen Light không?"),
        ("ca", "No apaga Kitchen Light"),
    ],
)
async def test_words_around_a_command_that_change_its_meaning_stay(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    sentence: str,
) -> None:
    await _nothing_changes(hass, language, [], sentence, on=True)


# Was: targets.py named_readings. A phrase could join "kitchen" and "light"
# across a comma and the optional words "I turned the": the report becomes
# HA's "The Kitchen Light off."
@pytest.mark.usefixtures("home")
async def test_a_phrase_does_not_swallow_a_report(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    await _nothing_changes(
        hass, "en", [], "The kitchen, I turned the light off.", on=True
    )


# The invariant turn/vocabulary.py and turn/reading.py rely on ("A negation is
# never optional in HA's sentences"), and what breaks it: load_vocabulary
# unions every bracketed piece of every template, glued fragments included.
@pytest.mark.parametrize(
    ("language", "negation"),
    [("sl", "ne"), ("vi", "không"), ("ca", "no"), ("fr", "non"), ("it", "no")],
)
def test_a_negation_is_never_an_optional_word(language: str, negation: str) -> None:
    vocabulary = load_vocabulary(language)
    assert vocabulary is not None
    assert negation not in vocabulary.optional
