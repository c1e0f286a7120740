"""Statements about the speaker are never answered "nothing was changed".

On the bundled model a statement ("Ich bin Diabetiker.") is often met with a
device call, which the turn policy refuses, and then said back word for word,
which is never spoken. Before the acknowledgment (1ef3e93) such turns ended
"Sorry, I couldn't do that, so nothing was changed." (memory tuning set: 8 of
its 48 turns that ask for no change, in all five languages); now the model's own
answer is spoken, or, where it only said the words back after a refused
change, the acknowledgment (`acknowledged`). Where it said them back with no
change tried, the words may be a request HA's data does not know ("Wake me up
at 7."), and the turn is "no answer", which this test allows. Statements from
benchmarks/memory_tuning_multilingual.yaml, at temperature 0, in the dev home;
nothing may change. On a6fa671 (before) 5 of the 10 ended "nothing was
changed"; on 1ef3e93 none did, in each of three runs (5 acknowledged; the
rest the model's answers, or "the server sent a broken answer" for Dutch,
where llama.cpp could not read the model's tool call).
"""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
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


async def test_statements_are_never_answered_nothing_was_changed(
    hass: HomeAssistant, dev_home: DevHome
) -> None:
    before = devices(hass)
    replies: list[str] = []
    nothing_changed = 0
    for language, statement in STATEMENTS:
        turn = await converse(
            hass, statement, user_id=dev_home.user_id, language=language
        )
        replies.append(f"{statement!r} -> {turn.speech!r}")
        nothing_changed += turn.speech == spoken_sentence("nothing_changed", language)
        assert statement not in turn.speech
    print("\n".join(replies))  # the figures of a run, with -s
    assert devices(hass) == before
    assert nothing_changed == 0, replies
