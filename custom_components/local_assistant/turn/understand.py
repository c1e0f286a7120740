"""What the user's sentence asks for, as Home Assistant itself understands it.

HA's default agent recognizes commands and questions in every language it
has sentences for ("Enciende la luz de la cocina" is HassTurnOn), and knows
every exposed name, alias, area and floor. That is structure the model's
words cannot fake; the turn guard (guard.py) decides with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from homeassistant.components import conversation
from homeassistant.components.conversation.agent_manager import get_agent_manager
from homeassistant.components.homeassistant.exposed_entities import (
    async_should_expose,
)
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import (
    area_registry as ar,
    entity_registry as er,
    floor_registry as fr,
)

from ..const import LOGGER
from .guard import TurnKind, kind_of, mentioned


@dataclass(frozen=True, slots=True)
class Understanding:
    """HA's reading of one user sentence."""

    intent: str | None
    kind: TurnKind
    # Exposed devices, areas and floors the sentence names; for a follow-up,
    # what the session's last action acted on.
    targets: tuple[str, ...]


async def async_understand(
    hass: HomeAssistant,
    user_input: conversation.ConversationInput,
    last_action: tuple[str, ...] = (),
) -> Understanding:
    """Recognize the sentence with HA's own intents and exposed names."""
    intent = await async_recognize_intent(hass, user_input)
    named = tuple(mentioned(user_input.text, exposed_names(hass)))
    kind = kind_of(intent, named, bool(last_action))
    return Understanding(
        intent=intent,
        kind=kind,
        targets=named or (last_action if kind is TurnKind.FOLLOW_UP else ()),
    )


async def async_recognize_intent(
    hass: HomeAssistant, user_input: conversation.ConversationInput
) -> str | None:
    """The name of the intent HA's default agent recognizes, or None.

    Recognition only: nothing runs. Strict matching (HA's sentences with
    exposed names), the same HA uses to handle commands locally: its lenient
    stage matches unknown names too, and takes "Remember: I kitesurf at
    Tarifa" for HassTurnOn. A command in other words still names a device,
    which ``kind_of`` counts.
    """
    agent = get_agent_manager(hass).default_agent
    if agent is None:
        return None
    try:
        result = await agent.async_recognize_intent(
            user_input, strict_intents_only=True
        )
    except HomeAssistantError as err:
        LOGGER.debug("HA's intent recognition failed: %s", err)
        return None
    intent = getattr(result, "intent", None)
    name = getattr(intent, "name", None)
    return name if isinstance(name, str) else None


@callback
def exposed_names(hass: HomeAssistant) -> Iterator[str]:
    """Names and aliases of exposed entities, and of every area and floor."""
    entities = er.async_get(hass)
    for state in hass.states.async_all():
        if not async_should_expose(hass, conversation.DOMAIN, state.entity_id):
            continue
        yield state.name
        if (entry := entities.async_get(state.entity_id)) is not None:
            yield from entry.aliases
    for area in ar.async_get(hass).async_list_areas():
        yield area.name
        yield from area.aliases
    for floor in fr.async_get(hass).async_list_floors():
        yield floor.name
        yield from floor.aliases
