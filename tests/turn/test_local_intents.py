"""By default HA's own intents carry out and answer what HA recognizes exactly.

The same as the pipeline's "prefer handling commands locally", inside the agent:
no model call, HA's answer, and the session still remembers the command.
"""

from __future__ import annotations

from typing import Any

from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, intent
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.helpers import fake_openai as fake
from tests.helpers.dev_home import async_setup_dev_home
from tests.helpers.ha import NOTHING_CHANGED, converse_streaming
from tests.helpers.memory import create_user


@pytest.fixture
def agent_options(agent_options: dict[str, Any]) -> dict[str, Any]:
    """The agent as a user gets it: HA's intents on (the default)."""
    options = dict(agent_options)
    del options["local_intents"]
    return options


@pytest.mark.parametrize(
    ("language", "sentence", "speech"),
    [
        ("en", "turn on the kitchen", "Turned on the switch"),
        ("es", "enciende Kitchen", "Se ha activado el interruptor"),
    ],
)
async def test_recognized_command_needs_no_model(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
    language: str,
    sentence: str,
    speech: str,
) -> None:
    turn = await converse_streaming(hass, sentence, language=language)
    assert hass.states.get(kitchen).state == STATE_ON
    assert turn.result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert turn.speech.startswith(speech)
    assert turn.streamed_text == turn.speech
    assert fake_server.requests == []


async def test_state_question_answered_by_ha(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    turn = await converse_streaming(hass, "is the kitchen on?")
    assert turn.result.response.response_type is intent.IntentResponseType.QUERY_ANSWER
    assert "off" in turn.speech.lower() or turn.speech.lower().startswith("no")
    assert fake_server.requests == []


async def test_the_model_gets_the_follow_up_with_the_command_in_history(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """HA did the command; "now the other way" goes to the model with it.

    HA cannot read the sentence with the kitchen in it, and the words name
    nothing: the model's change is refused, what it says after it is held,
    and the user hears that nothing changed (a statement right after a
    command must never act).
    """
    ada = await create_user(hass, "Ada")
    await converse_streaming(hass, "turn on the kitchen", user_id=ada)
    fake_server.queue(
        fake.tool_calls([("HassTurnOff", {"name": "Kitchen"})]),
        fake.text("It is off."),
    )
    turn = await converse_streaming(hass, "now the other way round", user_id=ada)
    assert turn.speech == NOTHING_CHANGED
    assert "It is off" not in turn.streamed_text
    assert hass.states.get(kitchen).state == STATE_ON
    request = fake_server.requests[0]
    history = [m for m in request["messages"] if m["role"] != "system"]
    assert history == [
        {"role": "user", "content": "turn on the kitchen"},
        {"role": "user", "content": "now the other way round"},
    ]


async def test_unrecognized_sentences_go_to_the_model(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    fake_server.queue(fake.text("Hello!"))
    turn = await converse_streaming(hass, "good morning to you")
    assert turn.speech == "Hello!"
    assert len(fake_server.requests) == 1


async def test_a_follow_up_is_read_with_the_last_target(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """ "Turn it off again" is HA's "turn Kitchen off again": no model, no guess."""
    ada = await create_user(hass, "Ada")
    await converse_streaming(hass, "turn on the kitchen", user_id=ada)
    turn = await converse_streaming(hass, "turn it off", user_id=ada)
    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert fake_server.requests == []
    # The session keeps the user's own words.
    fake_server.queue(fake.text("You switched the kitchen on and off."))
    await converse_streaming(hass, "what did I do?", user_id=ada)
    history = [m for m in fake_server.requests[0]["messages"] if m["role"] != "system"]
    assert history == [
        {"role": "user", "content": "turn on the kitchen"},
        {"role": "user", "content": "turn it off"},
        {"role": "user", "content": "what did I do?"},
    ]


async def test_a_negated_follow_up_is_not_turned_into_a_command(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """A word is only ever swapped for a name, never dropped."""
    ada = await create_user(hass, "Ada")
    await converse_streaming(hass, "turn on the kitchen", user_id=ada)
    fake_server.queue(fake.text("All right, I'll leave it on."))
    turn = await converse_streaming(hass, "please don't turn it off", user_id=ada)
    assert turn.speech == "All right, I'll leave it on."
    assert hass.states.get(kitchen).state == STATE_ON


async def test_trailing_words_of_a_follow_up_may_go(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """ "Turn it off again please" is HA's "turn Kitchen off"."""
    ada = await create_user(hass, "Ada")
    await converse_streaming(hass, "turn on the kitchen", user_id=ada)
    turn = await converse_streaming(hass, "turn it off again please", user_id=ada)
    assert hass.states.get(kitchen).state == STATE_OFF
    assert turn.result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert fake_server.requests == []


async def test_only_filler_words_of_a_follow_up_may_go(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> None:
    """Seen on the bundled model's dev home: "What is my dog called?" minus
    "dog called" was HA's "What is Kitchen", answered "Kitchen is on"."""
    ada = await create_user(hass, "Ada")
    await converse_streaming(hass, "turn on the kitchen", user_id=ada)
    fake_server.queue(fake.text("Your dog is called Bolt."))
    turn = await converse_streaming(hass, "What is my dog called?", user_id=ada)
    assert turn.speech == "Your dog is called Bolt."
    assert len(fake_server.requests) == 1


@pytest.fixture
async def dev_home(hass: HomeAssistant) -> None:
    """The dev home's template lights (they take a brightness)."""
    await async_setup_dev_home(hass)
    await hass.async_block_till_done()


@pytest.mark.usefixtures("dev_home")
async def test_a_follow_up_may_set_what_its_words_spell_out(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """ "Dim it to 10 percent": HA has no "dim" sentence, so the model sets the
    last change's target to the value the words spell out; asked again after
    it, the model only writes words ("Dimmed to 10 percent."), held, and what
    ran answers by name (the words name no device: "it"); "was it on?" never
    becomes "Bedroom Light on"."""
    ada = await create_user(hass, "Ada")
    await converse_streaming(hass, "turn on the bedroom light", user_id=ada)
    fake_server.queue(
        fake.tool_calls([("HassLightSet", {"brightness": 10})]),
        fake.text("Dimmed to 10 percent."),
    )
    turn = await converse_streaming(hass, "Dim it to 10 percent", user_id=ada)
    assert turn.speech == "Done: Bedroom Light."
    assert len(fake_server.requests) == 2
    state = hass.states.get("light.bedroom_light")
    assert state.state == STATE_ON
    assert state.attributes["brightness"] == round(255 * 10 / 100)

    await converse_streaming(hass, "turn off the bedroom light", user_id=ada)
    fake_server.queue(fake.text("It was on before you turned it off."))
    turn = await converse_streaming(hass, "was it on?", user_id=ada)
    assert turn.speech == "It was on before you turned it off."
    assert hass.states.get("light.bedroom_light").state == STATE_OFF


@pytest.mark.usefixtures("dev_home")
async def test_a_statement_after_a_command_never_switches_its_device(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Seen on the bundled model: "I live in Tarifa, by the sea." right after a
    command turned the kitchen light on again. A change of the last target runs
    only with a setting the words spell out."""
    ada = await create_user(hass, "Ada")
    await converse_streaming(hass, "turn on the kitchen light", user_id=ada)
    await converse_streaming(hass, "turn off the kitchen light", user_id=ada)
    fake_server.queue(fake.tool_calls([("HassTurnOn", {})]))
    turn = await converse_streaming(hass, "I live in Tarifa, by the sea.", user_id=ada)
    assert hass.states.get("light.kitchen_light").state == STATE_OFF
    assert turn.speech == NOTHING_CHANGED


LIVING = "light.living_room_light"
BEDROOM = "light.bedroom_light"
FAN = "switch.fan"


async def _turn_on(hass: HomeAssistant, *entity_ids: str) -> None:
    for entity_id in entity_ids:
        domain = entity_id.partition(".")[0]
        await hass.services.async_call(
            domain, "turn_on", {"entity_id": entity_id}, blocking=True
        )
    await hass.async_block_till_done()


TURN_OFF_THE_BEDROOM = {
    "en": "Turn off the bedroom light",
    "es": "Apaga la luz del dormitorio",
}


async def _after_the_bedroom_went_off(hass: HomeAssistant, language: str) -> str:
    """Everything on, then HA's own "turn off the bedroom light"; Ada's user id."""
    ada = await create_user(hass, "Ada")
    await _turn_on(hass, BEDROOM, LIVING, FAN)
    command = TURN_OFF_THE_BEDROOM[language]
    await converse_streaming(hass, command, user_id=ada, language=language)
    assert hass.states.get(BEDROOM).state == STATE_OFF
    return ada


@pytest.fixture
async def spanish_areas(hass: HomeAssistant, dev_home: None) -> None:
    """The dev home's areas as a Spanish speaker names them."""
    areas = ar.async_get(hass)
    for name, alias in (("Living Room", "salón"), ("Bedroom", "dormitorio")):
        area = areas.async_get_area_by_name(name)
        assert area is not None
        areas.async_update(area.id, aliases={alias})


@pytest.mark.usefixtures("spanish_areas")
@pytest.mark.parametrize(
    ("language", "ellipsis"),
    [
        ("en", "And the living room?"),
        ("es", "¿Y el salón?"),
    ],
)
async def test_an_elliptical_follow_up_is_the_last_command_with_its_name(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    ellipsis: str,
) -> None:
    """ "And the living room?" is HA's "Turn off the living room light": the area
    takes the bedroom's place in the last command, and only the light goes off
    (the fan is in the living room too)."""
    ada = await _after_the_bedroom_went_off(hass, language)
    turn = await converse_streaming(hass, ellipsis, user_id=ada, language=language)
    assert turn.result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert hass.states.get(LIVING).state == STATE_OFF
    assert hass.states.get(FAN).state == STATE_ON
    assert fake_server.requests == []

    # Read as HA read it, the next one follows on: "And the bedroom?" after it.
    await _turn_on(hass, BEDROOM)
    again = "¿Y el dormitorio?" if language == "es" else "And the bedroom?"
    await converse_streaming(hass, again, user_id=ada, language=language)
    assert hass.states.get(BEDROOM).state == STATE_OFF
    assert fake_server.requests == []


@pytest.mark.usefixtures("spanish_areas")
@pytest.mark.parametrize(
    ("language", "sentence"),
    [
        ("en", "Not the living room"),
        # Words HA's sentences never leave out ("about"): not read as the command.
        ("en", "What about the living room?"),
        ("en", "No, not the living room"),
        ("en", "Is the living room warm?"),
        ("en", "What about the living room temperature?"),
        ("en", "Why the living room?"),
        ("en", "And the living room and the kitchen?"),
        ("es", "Ni el salón"),
        ("es", "¿Y el salón tampoco?"),
        ("es", "No, el salón no"),
        ("es", "¿Hace calor en el salón?"),
        # HA recognizes the sentence: a question, answered as such.
        ("en", "Is the living room light on?"),
    ],
)
async def test_a_negation_or_a_question_never_becomes_the_last_command(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    sentence: str,
) -> None:
    """Only the few words of an ellipsis may go with the name; anything else is
    the model's turn, which may not say it did what it did not."""
    ada = await _after_the_bedroom_went_off(hass, language)
    fake_server.queue(fake.text("All right."))
    await converse_streaming(hass, sentence, user_id=ada, language=language)
    assert hass.states.get(LIVING).state == STATE_ON
    assert hass.states.get(FAN).state == STATE_ON
    assert hass.states.get(BEDROOM).state == STATE_OFF


@pytest.mark.usefixtures("dev_home")
async def test_an_ellipsis_reads_the_command_right_before_it(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The same intent with the same settings ("to 30 percent"), for the new
    name; after a question there is no command to read "and the living room?"
    against, and the model has the turn."""
    ada = await create_user(hass, "Ada")
    await _turn_on(hass, BEDROOM, LIVING)
    await converse_streaming(hass, "Set the bedroom light to 30 percent", user_id=ada)
    await converse_streaming(hass, "And the living room?", user_id=ada)
    state = hass.states.get(LIVING)
    assert state.state == STATE_ON
    assert state.attributes["brightness"] == round(255 * 30 / 100)
    assert fake_server.requests == []

    await converse_streaming(hass, "Turn off the bedroom light", user_id=ada)
    await converse_streaming(hass, "Is the bedroom light on?", user_id=ada)
    fake_server.queue(fake.text("Which one do you mean?"))
    turn = await converse_streaming(hass, "And the living room?", user_id=ada)
    assert turn.speech == "Which one do you mean?"
    assert hass.states.get(LIVING).state == STATE_ON


@pytest.mark.usefixtures("dev_home")
@pytest.mark.parametrize(
    "sentence", ["And turn off the fan", "And turn off the fan too"]
)
async def test_optional_words_around_a_command_may_go(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    sentence: str,
) -> None:
    """ "And turn off the fan too" is HA's "turn off the fan": "and" is optional in
    HA's English sentences, "too" a stop word of its fuzzy matcher (a miss of the
    session benchmark, where the model aimed at the living room)."""
    await _turn_on(hass, FAN, LIVING)
    turn = await converse_streaming(hass, sentence)
    assert turn.result.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert hass.states.get(FAN).state == STATE_OFF
    assert hass.states.get(LIVING).state == STATE_ON
    assert fake_server.requests == []


@pytest.mark.usefixtures("dev_home")
async def test_a_bare_name_with_nothing_to_continue_changes_nothing(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Seen on the bundled model without the session: "And the living room?"
    became HassTurnOn for the whole area, and the fan went on. An area is not
    a device: the change is refused, and the model answers once more without
    tools."""
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"area": "Living Room"})]),
        fake.text("What would you like in the living room?"),
    )
    turn = await converse_streaming(hass, "And the living room?")
    assert hass.states.get(FAN).state == STATE_OFF
    assert hass.states.get(LIVING).state == STATE_OFF
    assert "tools" not in fake_server.requests[1]
    assert turn.speech == "What would you like in the living room?"


async def test_a_failed_intent_leaves_the_model_a_valid_conversation(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """HA recognizes "turn on the smart lock" strictly, writes its tool call into
    the chat log, then cannot carry it out (two devices have the name) and
    leaves the call without a result. The model still gets a conversation a
    server accepts: llama.cpp answers a trailing tool call with HTTP 400."""
    assert await async_setup_component(
        hass,
        "input_boolean",
        {
            "input_boolean": {
                "front_lock": {"name": "Smart Lock"},
                "back_lock": {"name": "Smart Lock"},
            }
        },
    )
    await hass.async_block_till_done()
    for entity_id in ("input_boolean.front_lock", "input_boolean.back_lock"):
        async_expose_entity(hass, "conversation", entity_id, True)
    fake_server.queue(fake.text("Which smart lock do you mean, front or back?"))

    turn = await converse_streaming(hass, "turn on the smart lock")

    assert (
        "server" not in turn.speech
    )  # not "The local model server reported an error."
    request = fake_server.requests[0]
    assert request["messages"][-1] == {
        "role": "user",
        "content": "turn on the smart lock",
    }
    assert not any(m.get("tool_calls") for m in request["messages"])
    assert hass.states.get("input_boolean.front_lock").state == STATE_OFF
    assert hass.states.get("input_boolean.back_lock").state == STATE_OFF


@pytest.mark.usefixtures("dev_home")
@pytest.mark.parametrize(
    ("language", "sentence"),
    [
        ("en", "Turn off the fan, if it gets cold."),
        ("en", "If it gets cold, turn off the fan."),
        ("en", "Turn off the fan, actually no, never mind."),
        ("en", "Tomorrow, turn off the fan, I'm going out."),
        ("de", "Schalte Fan aus, wenn es kalt wird."),
        ("es", "Apaga Fan, si hace frío."),
    ],
)
async def test_a_command_inside_a_longer_sentence_is_not_carried_out_by_ha(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    sentence: str,
) -> None:
    """A part of the words that HA reads is no command when the rest may put
    it off, take it back or make it conditional: no structure tells "the
    plumber's here" from "if it gets cold" (a first-part reading was tried
    and reverted for this). The model has the turn; its words name the fan,
    so only a change it makes could run, and here it makes none."""
    await _turn_on(hass, FAN)
    fake_server.queue(fake.text("All right."))
    turn = await converse_streaming(hass, sentence, language=language)
    assert hass.states.get(FAN).state == STATE_ON
    assert len(fake_server.requests) == 1
    assert turn.speech == "All right."
