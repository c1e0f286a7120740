"""Review of b387ab9 (words counted in scripts without spaces) and a5f79d1
(an answer asked without tools never names a refused device).

Real HA (the `hass` fixture), the real openai client, real HTTP and SSE from
the fake server of tests/helpers. The first two findings (Japanese and Thai
greetings and short answers counted as too many words) are fixed: Han
ideographs count two to a word, other letters four, marks none (the greetings
are cases of tests/test_said_back_without_spaces.py). The other
three are the limits of deciding from the refused device's name, strict
xfails: a name tells no claim from an ordinary mention, so matching more
forms of it would hold more true answers, and fewer would hear more claims.
"""

from __future__ import annotations

from homeassistant.const import STATE_OFF
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, entity_registry as er
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.helpers import fake_openai as fake
from tests.helpers.ha import (
    async_setup_exposed_lights,
    converse_streaming,
    spoken_sentence,
)

# --- b387ab9: word_count in scripts without spaces ---------------------------


async def test_a_short_thai_answer_said_again_is_heard(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """Two yes/no questions both answered "เปิดอยู่ครับ" ("It's on.").

    Heard on b387ab9 on the second: "ขออภัย โมเดลภายในเครื่องไม่ได้ให้คำตอบ ..."
    ("the local model gave no answer"), after three requests. Should hear:
    "เปิดอยู่ครับ", as English "It's on." is heard again (the restatement
    rule only takes earlier answers of six words on: "The light is on." may
    be said again). Why: the three Thai words เปิด/อยู่/ครับ are 12 code
    points (vowel and tone marks included), counted as six words, so the
    short answer is a "restatement" of a long one. Heard before b387ab9, and
    after the fix (marks count no letter).
    """
    hass.config.language = "th"
    answer = "เปิดอยู่ครับ"
    fake_server.queue(fake.text(answer))
    turn = await converse_streaming(hass, "ไฟในครัวเปิดอยู่ไหม", language="th")
    assert turn.speech == answer
    fake_server.queue(fake.text(answer), fake.text(answer))
    turn = await converse_streaming(
        hass,
        "พัดลมเปิดอยู่ไหม",
        conversation_id=turn.result.conversation_id,
        language="th",
    )
    assert turn.speech == answer


# --- a5f79d1: the refused device named by the answer asked without tools -----

WATER = {
    "en": "Could the garden be watered today?",
    "de": "Könnte der Garten heute gegossen werden?",
    "es": "¿Se podría regar el jardín hoy?",
    "fr": "Le jardin pourrait-il être arrosé aujourd'hui ?",
    "nl": "Kan de tuin vandaag water krijgen?",
}


@pytest.mark.xfail(
    strict=True,
    reason="open: only the name the refused call used, said whole, holds an "
    "answer; a part of it ('the sprinkler') is in many true answers too",
)
@pytest.mark.parametrize(
    ("language", "device", "claim"),
    [
        ("en", "Garden sprinkler", "The sprinkler is on now."),
        ("de", "Gartensprenger", "Der Sprenger läuft jetzt."),
        ("es", "Aspersor del jardín", "El aspersor ya está regando."),
        ("fr", "Arroseur du jardin", "L'arroseur fonctionne maintenant."),
        ("nl", "Tuinsproeier", "De sproeier staat nu aan."),
    ],
)
async def test_a_claim_naming_the_refused_device_by_its_short_name_is_not_heard(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    device: str,
    claim: str,
) -> None:
    """The refused device called by its full name, the claim by its head noun.

    Heard now: "The sprinkler is on now." (a claim; the sprinkler stays
    off). Should hear: "Sorry, I couldn't do that, so nothing was changed.",
    as for "The garden sprinkler is on now." Why: refused_devices holds only
    the home name equal to the call's name, and said_names wants every word
    of it; people and models shorten "Garden sprinkler" to "the sprinkler"
    (and "Tuinsproeier" to "de sproeier"), so the fix misses the commonest
    form of the very claim it is for.
    """
    (entity_id,) = await async_setup_exposed_lights(hass, device)
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": device})]), fake.text(claim)
    )
    turn = await converse_streaming(hass, WATER[language], language=language)
    assert hass.states.get(entity_id).state == STATE_OFF
    assert "tools" not in fake_server.requests[1]
    assert turn.speech == spoken_sentence("nothing_changed", language)


@pytest.mark.xfail(
    strict=True,
    reason="kept: after a refused change, an answer without tools naming its "
    "device is held ('nothing was changed', true: a change was tried); the "
    "name cannot tell this true answer from 'The garden sprinkler is on now.'",
)
@pytest.mark.parametrize(
    ("language", "device", "answer"),
    [
        (
            "en",
            "Garden sprinkler",
            "Rain is expected this afternoon, so the garden sprinkler can stay off.",
        ),
        (
            "de",
            "Rasensprenger",
            "Heute Nachmittag regnet es, der Rasensprenger kann also aus bleiben.",
        ),
        (
            "es",
            "Aspersor",
            "Esta tarde va a llover, así que el aspersor puede quedarse apagado.",
        ),
        (
            "fr",
            "Arroseur",
            "Il va pleuvoir cet après-midi, l'arroseur peut donc rester éteint.",
        ),
        (
            "nl",
            "Sproeier",
            "Vanmiddag gaat het regenen, dus de sproeier kan uit blijven.",
        ),
    ],
)
async def test_an_ordinary_answer_naming_the_refused_device_is_heard(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    device: str,
    answer: str,
) -> None:
    """A true answer that names the device (and says it stays off).

    Heard now: "Sorry, I couldn't do that, so nothing was changed." Should
    hear: the answer (it claims nothing; the sprinkler is off). Why: the hold
    is decided by the device's name alone; having just tried the sprinkler,
    the model naturally speaks of it, and every such answer, however true, is
    replaced by an apology for a change the user never asked for.
    """
    (entity_id,) = await async_setup_exposed_lights(hass, device)
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": device})]), fake.text(answer)
    )
    turn = await converse_streaming(hass, WATER[language], language=language)
    assert hass.states.get(entity_id).state == STATE_OFF
    assert "tools" not in fake_server.requests[1]
    assert turn.speech == answer


@pytest.mark.xfail(
    strict=True,
    reason="open: a refused call on an area names no device; the devices it "
    "would have switched are not counted as refused",
)
async def test_a_claim_after_a_refused_area_call_is_not_heard(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The refused call names the area ("Garden"), the claim its one device.

    Heard now: "The sprinkler is on now." (nothing ran). Should hear:
    "Sorry, I couldn't do that, so nothing was changed." Why: a refused call
    by area adds nothing to refused_devices (an area is never one), though
    the devices it would have switched are known; the claim names one.
    """
    area = ar.async_get(hass).async_create("Garden")
    (entity_id,) = await async_setup_exposed_lights(hass, "Sprinkler")
    er.async_get(hass).async_update_entity(entity_id, area_id=area.id)
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"area": "Garden", "domain": "light"})]),
        fake.text("The sprinkler is on now."),
    )
    turn = await converse_streaming(hass, "Could the lawn get some water today?")
    assert hass.states.get(entity_id).state == STATE_OFF
    assert "tools" not in fake_server.requests[1]
    assert turn.speech == spoken_sentence("nothing_changed", "en")
