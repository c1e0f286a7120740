"""Statements about the speaker are answered, never with "nothing was changed".

On the bundled model a statement ("Ich bin Diabetiker.") is often met with a
device call, which the turn policy refuses, and then said back word for word,
which is never spoken. Before the acknowledgment (2026-12-04) such turns ended
"Sorry, I couldn't do that, so nothing was changed." (memory tuning set: 7 of
its 25 statements, in all five languages); now the model's own answer is
spoken, or, where it only said the words back, the acknowledgment
(`acknowledged`). Statements from benchmarks/memory_tuning_multilingual.yaml,
at temperature 0, each in a new session of the dev home; nothing may change.
"""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
import pytest

from custom_components.local_assistant.const import CONF_TEMPERATURE
from tests.helpers.ha import spoken_sentence

from .conftest import DevHome, converse, devices

STATEMENTS = [
    ("en", "I'm so tired today."),
    ("en", "I can't stand mushrooms."),
    ("es", "Trabajo de enfermera en el hospital Virgen del Rocío."),
    ("es", "Los jueves voy a clase de cerámica."),
    ("de", "Ich bin Diabetiker."),
    ("de", "Samstags spiele ich Handball im Verein."),
    ("fr", "Je suis allergique aux fruits à coque."),
    ("fr", "Ma mère s'appelle Odile et elle vit à Annecy."),
    ("nl", "Ik drink geen alcohol."),
    ("nl", "Onze koelkast is van Bosch."),
]


@pytest.fixture
def dev_agent_options() -> dict[str, Any]:
    """Temperature 0: the same answers in every run."""
    return {CONF_TEMPERATURE: 0.0}


async def test_statements_are_answered_not_apologised_for(
    hass: HomeAssistant, dev_home: DevHome
) -> None:
    before = devices(hass)
    replaced: list[str] = []
    for language, statement in STATEMENTS:
        turn = await converse(
            hass, statement, user_id=dev_home.user_id, language=language
        )
        if (
            turn.speech == spoken_sentence("nothing_changed", language)
            or turn.result.response.response_type is intent.IntentResponseType.ERROR
        ):
            replaced.append(f"{statement!r} -> {turn.speech!r}")
        assert statement not in turn.speech
    assert devices(hass) == before
    assert not replaced, replaced
