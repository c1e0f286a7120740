"""Realistic conversation text, without Home Assistant imports (memory_bound uses it)."""

from __future__ import annotations

import random

__all__ = ["conversation_turn"]

_USER_LINES = (
    "What's the weather like at the beach?",
    "Turn on the kitchen lights please.",
    "Is the front door locked?",
    "How warm is it outside right now?",
    "Remind me what we talked about before.",
    "Should I go kitesurfing this afternoon or is the wind too strong?",
    "Dim the living room to forty percent.",
    "What's on my calendar tomorrow morning?",
    "Tell me a short joke about cats.",
    "Is the garage door open? I think I left it open when I left.",
    "Set the thermostat to twenty one degrees.",
    "Which lights are still on downstairs?",
)
_ANSWER_LINES = (
    "The wind at the beach is twenty two knots from the west.",
    "Done, the kitchen lights are on.",
    "Yes, the front door is locked.",
    "It is twelve and a half degrees outside.",
    "We talked about the wind at the beach and your kitchen lights.",
    "With twenty two knots from the west it is a good afternoon for kitesurfing, "
    "but take the smaller kite because gusts may pick up after four.",
    "The living room is now at forty percent.",
    "You have a dentist appointment at nine and a call with Sam at eleven.",
    "Why did the cat sit on the computer? To keep an eye on the mouse.",
    "The garage door is closed, so you did not leave it open.",
    "The thermostat is set to twenty one degrees; it is nineteen now.",
    "The living room and hallway lights are on; everything else is off.",
)


def conversation_turn(index: int) -> tuple[str, str]:
    """A deterministic, realistic (user text, answer) pair for turn ``index``."""
    rng = random.Random(index)
    user = rng.choice(_USER_LINES)
    answer = rng.choice(_ANSWER_LINES)
    # Vary lengths a little and keep every text unique, like a real transcript.
    return f"{user} ({index})", f"{answer} ({index})"
