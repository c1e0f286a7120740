"""A turn whose change ran is never answered with an error, on the real model.

On the bundled model a change that ran was often followed by the same call
again, up to the tool loop's ten rounds ("Der Fan ist echt laut heute.":
HassTurnOff six times; the dev home's "Schalte den Fan aus, mir ist kalt.":
ten times, then "I couldn't finish that request"), or by words that showed
nothing, twice ("De Fan maakt veel lawaai.": HassTurnOn ran, then "the local
model gave no answer"). The same call again is not run, and after a change
that ran, what ran answers ("done", in translations: turn/policy.py, rule 3).

Commands with an aside and statements that name a device, in five languages,
written for this test (not from a benchmark set), at temperature 0, in one
session of the dev home. Whether a statement should change a device is issue
20's open question, not this test's: it checks that each turn whose change
ran is answered without an error, and that the model did change something in
at least MIN_CHANGES turns (else it checked nothing). On the commit before
the fix (ddfead4) one turn broke it ("De Fan maakt veel lawaai.": HassTurnOff
ran, then "no answer"; "Der Fan ist echt laut heute." made six calls); on the
fix none did in three runs (11, 12 and 11 turns ran a change; "Erledigt:
Fan." after two calls, "Is gebeurd: Fan." after one).
"""

from __future__ import annotations

from typing import Any

from homeassistant.components import conversation
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
import pytest

from custom_components.local_assistant.compat import tool_result_data
from custom_components.local_assistant.const import CONF_TEMPERATURE
from custom_components.local_assistant.turn.policy import (
    is_read_only,
    result_succeeded,
)

from .conftest import DevHome, Turn, converse

TURNS = [
    ("en", "Turn the Coffee Machine on, I need a brew."),
    ("de", "Schalte den Fan aus, mir ist kalt."),
    ("de", "Mach die Coffee Machine an, ich brauche einen Kaffee."),
    ("en", "The Fan is really noisy tonight."),
    ("de", "Der Fan ist echt laut heute."),
    ("es", "El Fan hace mucho ruido."),
    ("fr", "Le Fan fait trop de bruit."),
    ("nl", "De Fan maakt veel lawaai."),
    ("en", "Could you maybe get the Fan going for me"),
    ("de", "Kannst du mal den Fan anwerfen"),
    ("fr", "Tu peux lancer le Fan stp"),
    ("nl", "Wil je de Coffee Machine even aanzetten"),
    ("es", "¿Me pones la Coffee Machine en marcha?"),
]
MIN_CHANGES = 3


@pytest.fixture
def dev_agent_options() -> dict[str, Any]:
    """Temperature 0: the same answers in every run."""
    return {CONF_TEMPERATURE: 0.0}


def _ran_a_change(turn: Turn) -> bool:
    return any(
        isinstance(content, conversation.ToolResultContent)
        and not is_read_only(content.tool_name, ())
        and result_succeeded(tool_result_data(content))
        for content in turn.chat_log.content
    )


async def test_a_change_that_ran_is_never_answered_with_an_error(
    hass: HomeAssistant, dev_home: DevHome
) -> None:
    replies: list[str] = []
    changes = 0
    broken: list[str] = []
    for language, text in TURNS:
        turn = await converse(hass, text, user_id=dev_home.user_id, language=language)
        ran = _ran_a_change(turn)
        changes += ran
        reply = f"{text!r} -> {turn.speech!r} calls={len(turn.tool_calls)} ran={ran}"
        replies.append(reply)
        if (
            ran
            and turn.result.response.response_type is intent.IntentResponseType.ERROR
        ):
            broken.append(reply)
    print("\n".join(replies))  # the figures of a run, with -s
    assert changes >= MIN_CHANGES, replies
    assert broken == [], replies
