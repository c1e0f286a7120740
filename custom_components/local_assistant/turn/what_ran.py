"""What the turn's changes did, said as Home Assistant says it.

After the model's calls carried out HA intents, the answer is what ran, not
another model call: HA's own response for the intent in the user's language
(its default agent says the same after a sentence it read: "Licht
ausgeschaltet", "Uitgezet", "Fermeture en cours"), rendered with what the
call acted on. A small model asked to answer after a change says it in
English, or names another device; what ran is never in doubt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import TemplateError
from homeassistant.helpers import template

from ..compat import tool_result_data
from ..llm.sentences import async_spoken_message
from .policy import (
    Named,
    action_targets,
    intent_of_tool,
    is_read_only,
    result_succeeded,
    success_targets,
)
from .reading import async_vocabulary

# What Jinja writes for a value the template does not have (HA's English
# "Turned on {{ translations.get(state.domain) }}" for a domain it does not
# list): such a response is not said.
_MISSING = "None"


@dataclass(frozen=True, slots=True)
class Change:
    """One change of the turn that ran: the call and HA's result."""

    tool_name: str
    args: Mapping[str, Any]
    result: Any


def turn_calls(
    chat_log: conversation.ChatLog, live_tools: frozenset[str]
) -> tuple[bool, list[Change]]:
    """Whether this turn called a tool, and its changes that ran, in order."""
    start = next(
        (
            index + 1
            for index in range(len(chat_log.content) - 1, -1, -1)
            if isinstance(chat_log.content[index], conversation.UserContent)
        ),
        0,
    )
    calls: dict[str, Mapping[str, Any]] = {}
    changes: list[Change] = []
    for content in chat_log.content[start:]:
        if isinstance(content, conversation.AssistantContent):
            calls.update((call.id, call.tool_args) for call in content.tool_calls or ())
        elif isinstance(content, conversation.ToolResultContent):
            args = calls.get(content.tool_call_id, {})
            data = tool_result_data(content)
            if not is_read_only(content.tool_name, live_tools) and result_succeeded(
                data
            ):
                changes.append(Change(content.tool_name, args, data))
    return bool(calls), changes


def targets_of(changes: Sequence[Change]) -> tuple[str, ...]:
    """What the changes acted on, by name, each once."""
    return tuple(
        dict.fromkeys(
            target
            for change in changes
            for target in action_targets(
                change.tool_name, change.args, change.result, ()
            )
        )
    )


async def async_what_ran(
    hass: HomeAssistant,
    changes: Sequence[Change],
    named: Named,
    language: str,
    *,
    cleanly: bool,
) -> str:
    """The answer to a turn whose changes ran.

    HA's response where one change ran, none was refused or failed
    (``cleanly``), and it acted on one device the words name, and on
    nothing else they name ("Turn off the kitchen light":
    "Turned off the light", as HA's default agent says it), or on no device
    ("Timer set for 5 minutes"); else what ran by name ("Done: Kitchen,
    Porch."): the model chose it, or it is not all the words named.
    """
    targets = targets_of(changes)
    if (
        cleanly
        and len(changes) == 1
        and (
            # A timer, a list item: nothing the words could name.
            not targets
            or ((named.devices or named.places) and not named.names_beyond(targets))
        )
    ):
        vocabulary = await async_vocabulary(hass, language)
        if vocabulary and (text := _response(hass, vocabulary.responses, changes[0])):
            return text
    if not targets:
        return await async_spoken_message(hass, "done", language)
    return await async_spoken_message(
        hass, "done_targets", language, {"targets": ", ".join(targets)}
    )


def _response(
    hass: HomeAssistant,
    responses: Mapping[str, Mapping[str, str]],
    change: Change,
) -> str | None:
    """HA's response to one change that ran, rendered as its default agent does.

    The response named after one of the call's values ("brightness"), else
    after the domain of what changed ("cover": "Closing"), else its default,
    else its only one ("item_added"). None where it acted on more than one
    device or renders a value it lacks.
    """
    result = _intent_result(change.result)
    if said := str(result.get("speech", {}).get("plain", {}).get("speech") or ""):
        # The handler said it itself: HA's agent speaks that, no template.
        return said
    intent_name = intent_of_tool(change.tool_name)
    templates = responses.get(intent_name or "", {})
    entities = [
        state
        for target in success_targets(change.result)
        if target.get("type") == "entity"
        and (state := hass.states.get(str(target.get("id")))) is not None
    ]
    if len(entities) > 1 or (not entities and success_targets(change.result)):
        # "Turned off the light" for a room's lights would hide which: none
        # of HA's responses is chosen by how many (its sentences choose).
        return None
    state = entities[0] if entities else None
    keys = [*change.args, state.domain if state else None, "default"]
    key = next((key for key in keys if key in templates), None)
    if key is None and len(templates) == 1:
        key = next(iter(templates))
    if key is None:
        return None
    # HA's slots are the words as said: text ("1", compared as such).
    slots: dict[str, Any] = {
        name: _slot_text(
            value[0] if isinstance(value, list) and len(value) == 1 else value
        )
        for name, value in change.args.items()
    }
    # What the handler found ("media" of a search that played), as HA adds it.
    slots.update(result.get("speech_slots") or {})
    if state is not None:
        slots["name"] = state.name
    try:
        text = template.Template(templates[key], hass).async_render(
            {
                "slots": slots,
                "state": template.TemplateState(hass, state) if state else None,
                "query": {
                    "matched": [template.TemplateState(hass, s) for s in entities],
                    "unmatched": [],
                },
            },
            parse_result=False,
        )
    except TemplateError:
        return None
    text = " ".join(str(text).split())
    return text if text and _MISSING not in text.split() else None


def _intent_result(data: Any) -> Mapping[str, Any]:
    """An intent tool's result as HA's IntentResponse gives it (either version)."""
    inner = data.get("data") if isinstance(data, Mapping) and "error" in data else data
    return inner if isinstance(inner, Mapping) else {}


def _slot_text(value: Any) -> Any:
    """A number as HA's slots hold it, as text; anything else as it is."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    return str(int(value)) if float(value).is_integer() else str(value)
