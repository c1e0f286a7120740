"""Device commands keep working as a session grows, on the real model.

Eight alternating commands for the kitchen light in one session of the Dev user,
the light set to the opposite state before each: the buffer must not teach the
model to confirm without acting, and an answer that claims a change nobody made
is never spoken. Before the fix, this model carried out 1 of 6 such commands.

HA's own intents would carry these out without the model (the default); they are
off here so that every command goes through the model, the turn policy and the
tool repair.
"""

from __future__ import annotations

from typing import Any

from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
import pytest

from .conftest import DevHome, converse

KITCHEN = "light.kitchen_light"


@pytest.fixture
def dev_agent_options() -> dict[str, Any]:
    """Every command to the model."""
    return {"local_intents": False}


COMMANDS = [
    ("Turn on the kitchen light", STATE_ON),
    ("Turn off the kitchen light", STATE_OFF),
] * 4
# Of 8 commands. With the turn guard (before issue 20) 8/8 in every run; with the
# redesign and the required tool call for a recognized command (e3ec622) 4, 6, 8 and
# 8 in four runs: the model at temperature 0.6 often calls HassTurnOn for "turn off",
# which is refused, and its required correction is not always right. What must
# always hold is that no claim is made for a command not carried out (above).
AT_LEAST = 3


async def test_alternating_commands_in_one_session(
    hass: HomeAssistant, dev_home: DevHome
) -> None:
    done = 0
    false_claims: list[str] = []
    for text, want in COMMANDS:
        await hass.services.async_call(
            "light",
            "turn_off" if want == STATE_ON else "turn_on",
            {"entity_id": KITCHEN},
            blocking=True,
        )
        turn = await converse(hass, text, user_id=dev_home.user_id)
        if hass.states.get(KITCHEN).state == want:
            done += 1
        elif turn.result.response.response_type is not intent.IntentResponseType.ERROR:
            false_claims.append(f"{text!r} -> {turn.speech!r}")
    print(f"commands carried out: {done} of {len(COMMANDS)}")
    assert not false_claims, false_claims
    assert done >= AT_LEAST, f"{done} of {len(COMMANDS)} commands carried out"
