"""Which tool calls a turn may run, and whether its answer may be spoken.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
import re
from typing import Any, Literal

from ..llm.json_answer import JsonAnswerError, parse_json_answer

# HA tools (2026.2 names; 2026.11 prefixes them with their domain, "intent__")
# that only read. Every other HA tool is treated as one that changes something.
READ_ONLY_TOOLS = frozenset(
    {
        "GetLiveContext",
        "GetDateTime",
        "HassGetState",
        "HassGetWeather",
        "HassGetCurrentDate",
        "HassGetCurrentTime",
        "HassTimerStatus",
        "HassClimateGetTemperature",
        "calendar_get_events",
        "get_events",
        "todo_get_items",
        "get_items",
    }
)
# HA intents that ask rather than act (recognized from the user's sentence).
QUESTION_INTENTS = frozenset(
    {
        "HassGetState",
        "HassGetWeather",
        "HassGetCurrentDate",
        "HassGetCurrentTime",
        "HassTimerStatus",
        "HassClimateGetTemperature",
        "HassGetTodoItems",
    }
)
# Intents that neither act on a device nor need live data.
CHAT_INTENTS = frozenset({"HassNevermind", "HassRespond"})


class TurnKind(StrEnum):
    """What the user's sentence asks for, as HA's intents and names tell."""

    # HA recognized a command (turn on, set, start a timer, run a script).
    ACTION = "action"
    # HA recognized a question about the home or the weather.
    QUESTION = "question"
    # No intent, but the words name an exposed device, area or floor.
    DEVICE = "device"
    # No intent and no name, right after a device action ("turn it off again").
    FOLLOW_UP = "follow_up"
    # Anything else: chat, knowledge, personal statements. May not change devices.
    OTHER = "other"


# Kinds whose tool calls may change devices.
_MAY_ACT = frozenset({TurnKind.ACTION, TurnKind.DEVICE, TurnKind.FOLLOW_UP})
_NOT_WORD = re.compile(r"[\W_]+")


def base_name(tool_name: str) -> str:
    """A tool's name without 2026.11's domain prefix ("intent__HassTurnOn")."""
    return tool_name.rpartition("__")[2]


def is_read_only(tool_name: str, live_tools: Collection[str]) -> bool:
    """Whether a tool only reads (ours all do)."""
    return tool_name in live_tools or base_name(tool_name) in READ_ONLY_TOOLS


def kind_of(intent: str | None, named: Collection[str], follow_up: bool) -> TurnKind:
    """The turn's kind from HA's intent, the names it mentions, the last action.

    HA's recognition wins when it has an answer. Without one, a sentence that
    names an exposed device, area or floor may be a command HA's sentences do
    not cover; one that names nothing right after a device action may be a
    follow-up ("turn it off again"). Anything else is not a command.
    """
    if intent is not None:
        if intent in QUESTION_INTENTS:
            return TurnKind.QUESTION
        if intent in CHAT_INTENTS:
            return TurnKind.OTHER
        return TurnKind.ACTION
    if named:
        return TurnKind.DEVICE
    if follow_up:
        return TurnKind.FOLLOW_UP
    return TurnKind.OTHER


def name_key(text: str) -> str:
    """A name compared loosely: no case, spaces or punctuation ("porch_light")."""
    return _NOT_WORD.sub("", text.casefold())


def normalize(text: str) -> str:
    """Lower case, punctuation as spaces, one space between words."""
    return " ".join(_NOT_WORD.sub(" ", text.casefold()).split())


def mentioned(text: str, names: Iterable[str]) -> list[str]:
    """The names (devices, areas, floors) that ``text`` contains as whole words."""
    padded = f" {normalize(text)} "
    return [name for name in names if (key := normalize(name)) and f" {key} " in padded]


def result_succeeded(data: Any) -> bool:
    """Whether a tool result reports success.

    HA's errors come as {"error": ...} (2026.11 adds "error": true beside
    "data"); an intent result fails with response_type "error" or when it
    names failed targets and no successful one.
    """
    if not isinstance(data, Mapping):
        return data is not None
    if data.get("error"):
        return False
    inner = _unwrap(data)
    if not isinstance(inner, Mapping):
        return True
    if inner.get("error") or inner.get("response_type") == "error":
        return False
    outcome = inner.get("data")
    failed_only = (
        isinstance(outcome, Mapping)
        and bool(outcome.get("failed"))
        and not outcome.get("success")
    )
    return not failed_only


def _unwrap(data: Mapping[str, Any]) -> Any:
    """The tool's own data: 2026.11 wraps it as {"data": ..., "error": false}."""
    return data.get("data") if "error" in data else data


def read_only_refusal(tool_name: str, live_tools: Collection[str]) -> dict[str, str]:
    """The tool error for a device change nobody asked for."""
    hint = (
        f" For live data call {' or '.join(sorted(live_tools))}."
        if live_tools
        else " To read the home's state call GetLiveContext."
    )
    return {
        "error": "NotAskedToChangeDevices",
        "error_text": (
            f"{tool_name} was not run: the user's words name no device, area or "
            "floor to change. If they want something changed, ask them which "
            f"device or area; otherwise answer without changing anything.{hint}"
        ),
    }


def other_target_refusal(tool_name: str, targets: Sequence[str]) -> dict[str, str]:
    """The tool error for a change aimed elsewhere than the user said."""
    return {
        "error": "NotWhatTheUserNamed",
        "error_text": (
            f"{tool_name} was not run: the user spoke of {', '.join(targets)}. "
            "Call it for that, or ask what they mean."
        ),
    }


def intent_of_tool(tool_name: str) -> str | None:
    """The HA intent a tool runs: HassTurnOn (2026.2) or intent__HassTurnOn (2026.11)."""
    base = tool_name.rpartition("__")[2]
    return base if base.startswith("Hass") else None


def other_intent_refusal(tool_name: str, intent: str) -> dict[str, str]:
    """The tool error for a change of another kind than the user asked."""
    return {
        "error": "NotWhatTheUserAsked",
        "error_text": (
            f"{tool_name} was not run: the user asked for {intent}. Call {intent}."
        ),
    }


def language_code(language: str) -> str:
    """The language of a tag, as our per-language tables key it ("en-US" -> "en")."""
    return language.partition("-")[0].casefold()


@dataclass(frozen=True, slots=True)
class Said:
    """The user's sentence and its language."""

    text: str
    language: str

    @property
    def numbers(self) -> set[float]:
        return {float(n.replace(",", ".")) for n in _NUMBER.findall(self.text)}


_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


@dataclass(slots=True)
class TurnGuard:
    """Tracks one turn: refuses calls it may not run, knows if the answer is honest.

    * Only ACTION, DEVICE and FOLLOW_UP turns may change devices, a
      FOLLOW_UP only when HA read it with the last target (``intent``);
      elsewhere such a call is answered with a tool error and not run.
    * An ACTION turn is honest once a tool that changes something succeeded,
      a QUESTION turn once any tool succeeded. A DEVICE or FOLLOW_UP turn
      without a successful tool is honest only if its answer does not talk
      about the devices it named (``targets``).
    * After a refused change, and none that ran, no answer is spoken until
      the turn is asked again (``retrying``).
    * Until a turn is honest its text is held back (``hold_text``): a small
      model that skipped the tool still says "The light is on."
    """

    kind: TurnKind
    live_tools: frozenset[str] = frozenset()
    # The devices, areas and floors the user's words (or the last action) named.
    targets: tuple[str, ...] = ()
    # What a change may aim at: the targets and the devices inside those areas
    # (default: the targets themselves).
    scope: tuple[str, ...] = ()
    # Every exposed name of the home: a device turn that did nothing may not
    # talk about any device ("Turn off the coffee machine." parroted back).
    home_names: tuple[str, ...] = ()
    # The user's sentence, for the light settings they asked (tool repair).
    said: Said | None = None
    # The intent HA recognized in the user's words (or the resolved follow-up).
    intent: str | None = None
    refused: list[str] = field(default_factory=list)
    acted: bool = False
    read: bool = False
    # Asked again without tools (``retry_tool_choice`` "none"): the bundled
    # model then writes its tool call as text, which must not be spoken.
    tools_off: bool = False

    def check_call(
        self, tool_name: str, args: Mapping[str, Any] | None = None
    ) -> dict[str, str] | None:
        """None when the call may run, else the tool error to answer it with.

        A change is refused in a turn that may not act, and in a turn that
        named its devices when the call targets none of them ("and the living
        room?" must not set the bedroom light).
        """
        refusal = self._refusal(tool_name, args)
        if refusal is not None:
            self.refused.append(tool_name)
        return refusal

    def _refusal(
        self, tool_name: str, args: Mapping[str, Any] | None
    ) -> dict[str, str] | None:
        if is_read_only(tool_name, self.live_tools):
            return None
        if not self.may_act:
            return read_only_refusal(tool_name, self.live_tools)
        if self.targets and args is not None and not self._aims_inside(args):
            return other_target_refusal(tool_name, self.targets)
        called = intent_of_tool(tool_name)
        if self.intent and called and called != self.intent:
            # "Turn off the kitchen light" answered with HassTurnOn: the light
            # stays on and "was turned on" would pass for done.
            return other_intent_refusal(tool_name, self.intent)
        return None

    @property
    def may_act(self) -> bool:
        """Whether a device change may run in this turn at all."""
        # A sentence that names nothing and that HA cannot read with the last
        # target in it is no command: the bundled model turned the kitchen
        # light on again for "I live in Tarifa, by the sea."
        return self.kind in _MAY_ACT and not (
            self.kind is TurnKind.FOLLOW_UP and self.intent is None
        )

    def _aims_inside(self, args: Mapping[str, Any]) -> bool:
        wanted = {name_key(target) for target in (*self.targets, *self.scope)}
        aimed = [args.get(key) for key in ("name", "area", "floor")]
        named = [name_key(value) for value in aimed if isinstance(value, str)]
        # A call without a target of its own is given the turn's (tool repair).
        return not named or any(value in wanted for value in named)

    def record_result(self, tool_name: str, data: Any) -> None:
        """Note a tool's result for this turn."""
        if not result_succeeded(data):
            return
        if is_read_only(tool_name, self.live_tools):
            self.read = True
        else:
            self.acted = True

    @property
    def hold_text(self) -> bool:
        """Hold the next completion's text: the turn has not yet done its part."""
        if (self.refused or self.tools_off) and not self.acted:
            return True
        if self.kind is TurnKind.ACTION:
            return not self.acted
        if self.kind is TurnKind.OTHER:
            return False
        return not (self.acted or self.read)

    def answer_ok(self, answer: str) -> bool:
        """Whether ``answer`` may be spoken, given what the turn's tools did."""
        if not self.hold_text:
            return True
        if self.refused and not self.acted:
            # The model tried a change that did not run: what it says next is
            # most likely that it ran ("The device was turned off."), in words
            # no name check catches. The retry starts without the refusal.
            return False
        if written_tool_call(answer):
            return False
        if self.kind in (TurnKind.DEVICE, TurnKind.FOLLOW_UP):
            return not mentioned(answer, (*self.targets, *self.home_names))
        return self.tools_off

    def retrying(self) -> None:
        """The turn is asked once more: an answer that tries no change may stand."""
        self.tools_off = self.retry_tool_choice == "none"
        self.refused.clear()

    @property
    def retry_keeps_history(self) -> bool:
        """A follow-up needs the history to know what "it" is; others do not."""
        return self.kind is TurnKind.FOLLOW_UP

    @property
    def retry_tool_choice(self) -> str | None:
        """Force a tool call on the retry only when HA recognized the request.

        A sentence that merely names a device ("my kitchen light is broken")
        must never be pushed into changing it. A turn that may not act and
        whose change was refused is asked without tools ("none": llama.cpp
        honours it, Swama ignores it and the guard still refuses): the bundled
        model answered "My dog is called Bolt." with a device call twice.
        """
        if self.kind in (TurnKind.ACTION, TurnKind.QUESTION):
            return "required"
        if self.refused and not self.may_act:
            return "none"
        return None


def written_tool_call(answer: str) -> bool:
    """Whether ``answer`` is a tool call written out as JSON text.

    A small model asked without tools writes ``{"name": "HassTurnOff",
    "arguments": {...}}`` instead; spoken, it is noise, and it did nothing.
    """
    try:
        data = parse_json_answer(answer)
    except JsonAnswerError:
        return False
    return (
        isinstance(data, dict)
        and isinstance(data.get("name"), str)
        and ("arguments" in data or "parameters" in data)
    )


# What the user hears when a turn could not do its part: a spoken sentence of
# llm/sentences.py (translated in strings.json and translations/*.json).
HonestKey = Literal["nothing_changed", "could_not_check"]


def honest_key(kind: TurnKind) -> HonestKey:
    """The sentence for a turn whose answer was withheld."""
    return "could_not_check" if kind is TurnKind.QUESTION else "nothing_changed"


def action_targets(
    tool_name: str, args: Mapping[str, Any], data: Any, live_tools: Collection[str]
) -> tuple[str, ...]:
    """What a successful device action acted on, for follow-ups.

    HA's intent results list the targets that succeeded by name; otherwise
    the call's own name, area and floor arguments.
    """
    if is_read_only(tool_name, live_tools) or not result_succeeded(data):
        return ()
    inner = _unwrap(data) if isinstance(data, Mapping) else None
    outcome = inner.get("data") if isinstance(inner, Mapping) else None
    success = outcome.get("success") if isinstance(outcome, Mapping) else None
    names = [
        str(target["name"])
        for target in success or ()
        if isinstance(target, Mapping) and target.get("name")
    ]
    if not names:
        names = [
            str(args[key])
            for key in ("name", "area", "floor")
            if isinstance(args.get(key), str) and args[key]
        ]
    return tuple(dict.fromkeys(names))
