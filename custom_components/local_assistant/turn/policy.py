"""What the model may change in a turn, and when the user hears "nothing was changed".

Three rules, the same in every language, decided from structure only (what
HA recognized, what the user's words name, what ran), never from the words
of the model's answer (only whether it is made of our own live-data lines):

1. A change the model makes runs only when the user's words name what it acts
   on: the device (its name or an alias), an area or floor together with a
   device word of HA's sentence data ("the lights in the study"), or, right
   after a change, that change's target with a setting the words spell out
   ("dim it to 10 percent", also asked: "what about 20 percent?"). Words that
   open as HA's questions do change nothing else ("Are the sprinklers on?":
   HA's reading sentences start so, its changing ones never, and no word its
   commands start with is said; turn/vocabulary.py). A call with no target
   at all (a volume, a timer) runs when each of its values was said. The
   speaker's memory likewise: a note is forgotten when the words name it
   (share a distinctive word with it, or, not asking, say its number in
   digits or words, "the second one"), remembered when half of its words were
   said; a refused one ends the turn with "nothing was changed". Reading
   tools always run.
2. A turn where a change was asked (HA recognized a command it could not
   carry out) or tried (the model's change was refused or failed) ends with
   the agent's own "nothing was changed" unless a change ran; its text is
   held until one did. A question's refused change is answered once a
   reading tool ran after it ("Are the sprinklers on?" met with HassTurnOn,
   then GetLiveContext): what was read answers it. So does an answer made
   only of lines of the live data in the turn's prompt, as written, where the
   words ask and HA read no command ("Brauche ich morgen einen Schirm?" met
   with HassTurnOn, then the "Morgen: ..." line). Where the words ask for no
   change at all (no device named, no command HA read, no change to
   continue) and ask something or say no word HA's commands start with
   ("tell me a joke", "my dog is called Bolt"; not "turn the volume down"), a
   refused change is followed by one more answer without tools instead. Any
   other answer is spoken as the model gives it, streamed.
3. A refused call is answered with a tool error, so the chat log stays a
   valid conversation; it never runs. So is a read made again before any
   change ran, and a change made again right after it ran (a small model
   repeats a change up to the tool loop's limit); such a change ends the
   model's part. Where the turn's changes ran and none was refused or failed,
   what ran answers ("Done: Fan."), also when the model then gives no answer
   or keeps calling tools; where one ran and another did not, the model
   answers from the turn's results once more without tools; where none ran,
   rule 2.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
import json
import re
from typing import Any

from ..llm.echo import echo_key
from ..llm.json_answer import JsonAnswerError, parse_json_answer
from ..wording import ALNUM, QUESTION_MARKS, shared, stems

# HA tools (2026.2 names; 2026.11 prefixes them with their domain, "intent__")
# that only read. Every other tool is treated as one that changes something.
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
        "HassGetTodoItems",
        "calendar_get_events",
        "get_events",
        "todo_get_items",
        "get_items",
    }
)
# HA intents that only answer the user ("hello", "never mind"): the model chats.
CHAT_INTENTS = frozenset({"HassRespond", "HassNevermind"})
# Arguments that say what a change acts on, and what kind of device.
TARGET_ARGS = ("name", "area", "floor")
KIND_ARGS = ("domain", "device_class")
# Targets an intent result names for where it acted, not for what it changed.
PLACE_TARGETS = frozenset({"area", "floor"})
# A letter or digit with its marks: a Hindi vowel sign is part of its word
# ("में", not "म"); an emoji's presentation selector is not.
_KEY_PART = re.compile(ALNUM)


def base_name(tool_name: str) -> str:
    """A tool's name without 2026.11's domain prefix ("intent__HassTurnOn")."""
    return tool_name.rpartition("__")[2]


def intent_of_tool(tool_name: str) -> str | None:
    """The HA intent a tool runs: HassTurnOn (2026.2) or intent__HassTurnOn (2026.11)."""
    base = base_name(tool_name)
    return base if base.startswith("Hass") else None


def is_read_only(tool_name: str, live_tools: Collection[str]) -> bool:
    """Whether a tool only reads (our live-data tools all do)."""
    return tool_name in live_tools or base_name(tool_name) in READ_ONLY_TOOLS


def name_key(text: str) -> str:
    """A name compared loosely: no case, spaces or punctuation ("porch_light")."""
    return "".join(_KEY_PART.findall(text.casefold()))


@dataclass(frozen=True, slots=True)
class Named:
    """What the user's words name in this home."""

    # Exposed devices (their names), areas and floors (their names) named.
    devices: tuple[str, ...] = ()
    places: tuple[str, ...] = ()
    # The spellings the words used (names and aliases), as said.
    spellings: tuple[str, ...] = ()
    # What the device words mean (domains, cover classes): {"light", "blind"}.
    device_kinds: frozenset[str] = frozenset()
    # The numbers written in the words, and those spelled out ("the second"):
    # apart, since only a note's number is read from words; a device setting
    # counts as said in digits only, as before.
    numbers: frozenset[float] = frozenset()
    spelled_numbers: frozenset[float] = frozenset()
    text: str = ""
    # The words open as HA's questions do ("Are the sprinklers on?", "Ist die
    # Tür zu?"): they ask for no change, whatever they name.
    question: bool = False
    # The words ask something (a question mark, or a question's opening) and
    # say no word HA's commands start with: "Will it rain tomorrow?".
    asks: bool = False
    # A clause of the words starts as HA's commands do, after words they
    # may leave out ("Can you turn ...", "Ach nee, mach sie aus").
    commands: bool = False
    # Every exposed name and alias, area and floor of the home (for follow-ups).
    home_names: tuple[str, ...] = ()
    # Area and floor names and aliases, compared loosely.
    place_keys: frozenset[str] = frozenset()
    # Exposed entities by object id (a script's tool is named by it).
    scripts: Mapping[str, str] = field(default_factory=dict)

    @property
    def only_name(self) -> str | None:
        """The one name the words give, as said (the longest, when it holds the others).

        "The living room light" names the area and the light: one name.
        """
        if not self.spellings:
            return None
        longest = max(self.spellings, key=lambda name: len(name_key(name)))
        if all(name_key(name) in name_key(longest) for name in self.spellings):
            return longest
        return None

    def names(self, value: Any) -> bool:
        """Whether the words name ``value`` (a device, area or floor, loosely)."""
        if not isinstance(value, str) or not value.strip():
            return False
        key = name_key(value)
        return any(
            key == name_key(name)
            for name in (*self.devices, *self.places, *self.spellings)
        )

    def names_beyond(self, targets: Iterable[str]) -> bool:
        """Whether the words name a device or place not among ``targets``."""
        keys = {name_key(target) for target in targets}
        return any(name_key(name) not in keys for name in (*self.devices, *self.places))

    def says(self, value: Any) -> bool:
        """Whether the words say ``value`` (a number, or a text in them)."""
        if isinstance(value, bool):
            return False
        if isinstance(value, int | float):
            return float(value) in self.numbers
        if isinstance(value, str) and value.strip():
            return name_key(value) in name_key(self.text)
        return False


# What a memory tool does (memory/voice.py): the argument that says what.
FORGET = "forget"
REMEMBER = "remember"

REFUSED = "NotNamedByTheUser"
OTHER_INTENT = "NotWhatTheUserAsked"
NO_TOOLS = "NoToolsAvailable"
ALREADY_RAN = "AlreadyRan"
# A call whose arguments could not be read (llm/stream.py): it never ran.
INVALID_ARGUMENTS = "InvalidToolArguments"
# Errors that answer a call we never handed to HA.
NOT_RUN = frozenset({REFUSED, OTHER_INTENT, NO_TOOLS, ALREADY_RAN})


def tool_error(error: str, text: str) -> dict[str, str]:
    """The result that answers a call we do not hand to HA: the model reads ``text``."""
    return {"error": error, "error_text": text}


def refusal(tool_name: str, *, question: bool = False) -> dict[str, str]:
    """The tool error for a change the user's words do not ask for."""
    if question:
        why = "the user asked a question, not for a change"
        then = "Read what the question asks with a tool that reads, then answer it."
    else:
        why = "the user's words do not name what it would change"
        then = "Answer the user without changing anything."
    return tool_error(
        REFUSED, f"{tool_name} was not run: {why}. Nothing was changed. {then}"
    )


def call_key(tool_name: str, args: Mapping[str, Any]) -> str:
    """One call's tool and arguments, the same however the model orders them."""
    return json.dumps([tool_name, args], sort_keys=True, default=str)


def result_succeeded(data: Any) -> bool:
    """Whether a tool result reports success.

    HA's errors come as {"error": ...} (2026.11 adds "error": true beside
    "data"); an intent result fails with response_type "error" or when it
    names failed targets and no successful one but an area or floor.
    """
    if not isinstance(data, Mapping):
        return data is not None
    if data.get("error"):
        return False
    inner = data.get("data") if "error" in data else data
    if not isinstance(inner, Mapping):
        return True
    if inner.get("error") or inner.get("response_type") == "error":
        return False
    outcome = inner.get("data")
    if not isinstance(outcome, Mapping) or not outcome.get("failed"):
        return True
    # HA lists the area or floor it acted in as a success even when every
    # device there failed ("Smart Lock" in the Entry: the Entry "succeeded").
    return any(
        not (isinstance(target, Mapping) and target.get("type") in PLACE_TARGETS)
        for target in outcome.get("success") or ()
    )


@dataclass(slots=True)
class TurnPolicy:
    """One model turn: which calls run, whether its answer may be spoken."""

    named: Named
    live_tools: frozenset[str] = frozenset()
    # Tools that change only the speaker's own memory (memory/voice.py), by
    # what they do (FORGET, REMEMBER), and the speaker's notes as the prompt
    # numbers them: such a change runs when the words name it (rule 1), and
    # counts as a change.
    memory_tools: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    # What the session's last change acted on (for "dim it to 10 percent").
    last_targets: tuple[str, ...] = ()
    # HA recognized a change in the words that it could not carry out: its
    # intent. A change of another intent is refused ("turn off the porch
    # light" answered with HassTurnOn would pass for done).
    asked_intent: str | None = None
    # A change of the model's that ran, one that ran and failed, one that was
    # refused. After a refusal the model may correct its call once; its words
    # are held (they would most likely claim the change), and where the words
    # ask for no change it answers without tools instead (rule 2).
    changed: bool = False
    failed: bool = False
    refused: bool = False
    # After a question's refused change a reading tool ran: its answer is
    # what was read, and is spoken (rule 2).
    read_after_refusal: bool = False
    # The live-data lines of this turn's prompt, as spoken (tools/live_now.py,
    # llm/echo.py's keys): an answer made of them reads it (rule 2).
    live_lines: frozenset[str] = frozenset()
    # A memory change was refused: its words are never asked for again.
    refused_memory: bool = False
    # The home's devices a refused change named ("Garden sprinkler"): an
    # answer asked without tools that names one most likely claims the
    # change (rule 2).
    refused_devices: set[str] = field(default_factory=set)
    # Rounds in which a change was refused (the model may correct itself
    # once), and whether this round refused one.
    refusals: int = 0
    round_refused: bool = False
    # A change was refused at some point of this turn (`refused` is cleared
    # when the model is asked again without tools).
    tried_a_change: bool = False
    without_tools: bool = False
    call_required: bool = False
    # The calls handed to HA this turn (``call_key``): reads since the last
    # change that ran, and the changes of the last earlier round that made
    # any, each apart from this round's; and whether the model made such a
    # change again (rule 3).
    earlier_reads: set[str] = field(default_factory=set)
    round_reads: set[str] = field(default_factory=set)
    earlier_changes: set[str] = field(default_factory=set)
    round_changes: set[str] = field(default_factory=set)
    repeated: bool = False
    # A read ran this turn, or a change that is no HA intent (a script, a
    # memory change): the model says what came of it.
    read: bool = False
    ran_other: bool = False

    def next_round(self) -> None:
        """The model is asked again: this round's calls are earlier calls now."""
        self.earlier_reads |= self.round_reads
        self.round_reads = set()
        if self.round_changes:
            self.earlier_changes, self.round_changes = self.round_changes, set()

    def check_call(
        self, tool_name: str, args: Mapping[str, Any]
    ) -> dict[str, str] | None:
        """None when the call may run, else the tool error to answer it with.

        The same call twice in one answer runs twice ("skip two songs"). A
        read made again before any change ran is not (what it read is in
        the chat log); a change made again right after it ran is not
        either, and ends the model's part (rule 3), while "on, off, on"
        runs each time.
        """
        key = call_key(tool_name, args)
        read = is_read_only(tool_name, self.live_tools)
        if key in (self.earlier_reads if read else self.earlier_changes):
            self.repeated = self.repeated or not read
            return tool_error(
                ALREADY_RAN,
                f"{tool_name} already ran with these arguments; not run again.",
            )
        refused = None if read else self._check_call(tool_name, args)
        if refused is None:
            (self.round_reads if read else self.round_changes).add(key)
        return refused

    def _check_call(
        self, tool_name: str, args: Mapping[str, Any]
    ) -> dict[str, str] | None:
        """Rules 1 and 2 for one change: None when it may run."""
        if (does := self.memory_tools.get(tool_name)) is not None:
            if self.names_memory_change(does, args):
                return None
            # Asked again without tools, the model would say it remembered
            # or forgot: the turn ends with "nothing was changed" (rule 2).
            self.refused_memory = True
            self._refused()
            return refusal(tool_name)
        if self.asks_a_question and not self._sets_said_value_of_last_target(
            *_targets_and_values(args)
        ):
            # "Are the sprinklers on?" met with HassTurnOn (seen on the
            # bundled model): a question changes no device it names. "What
            # about 20 percent?" right after a change still continues it.
            self._refused(args)
            return refusal(tool_name, question=True)
        called = intent_of_tool(tool_name)
        if self.asked_intent and called and called != self.asked_intent:
            self._refused(args)
            return tool_error(
                OTHER_INTENT,
                f"{tool_name} was not run: the user asked for {self.asked_intent}. "
                "Nothing was changed.",
            )
        if self.aims_at_named(tool_name, args):
            return None
        self._refused(args)
        return refusal(tool_name)

    def _refused(self, args: Mapping[str, Any] | None = None) -> None:
        """A change was refused this round; what was read before does not answer it."""
        self.refused = self.round_refused = self.tried_a_change = True
        self.read_after_refusal = False
        name = (args or {}).get("name")
        if (
            isinstance(name, str)
            and (key := name_key(name)) not in self.named.place_keys
        ):
            self.refused_devices.update(
                home for home in self.named.home_names if name_key(home) == key
            )

    @property
    def asks_a_question(self) -> bool:
        """The words open as HA's questions and HA read no command in them."""
        return self.named.question and not self.asked_change

    @property
    def stop_after_refusal(self) -> bool:
        """Whether the model is not asked again after this round's refusal.

        While its text is held (a change was asked, or the words name
        something) it may correct its call once; where the words ask for no
        change it is asked again without tools instead (rule 2).
        """
        refused, self.round_refused = self.round_refused, False
        if not refused or self.changed:
            return False
        self.refusals += 1
        return self.answers_without_tools or self.refusals > 1

    @property
    def asked_change(self) -> bool:
        """HA recognized a change in the words (rule 2)."""
        return self.asked_intent is not None

    def is_tool_name(self, name: str) -> bool:
        """Whether ``name`` is a tool the turn may offer: an HA intent, one of
        ours (live data, memory), or a script of the home, by its entity."""
        return (
            intent_of_tool(name) is not None
            or name in self.live_tools
            or name in self.memory_tools
            or name_key(base_name(name)) in self.named.scripts
        )

    def refuse(self, tool_name: str) -> None:
        """A call that cannot run at all (no tools are offered) is a refusal."""
        if not is_read_only(tool_name, self.live_tools):
            self._refused()

    def aims_at_named(self, tool_name: str, args: Mapping[str, Any]) -> bool:
        """Whether the user's words name what this change acts on (rule 1)."""
        named = self.named
        targets, values = _targets_and_values(args)
        kinds = {
            kind
            for key in KIND_ARGS
            for kind in (
                args[key] if isinstance(args.get(key), list) else [args.get(key)]
            )
            if isinstance(kind, str)
        }
        if self._sets_said_value_of_last_target(targets, values):
            return True
        if kinds and not kinds & named.device_kinds and not args.get("name"):
            # "The lights in the study" never switches the study's fan.
            return False
        if name := args.get("name"):
            return named.names(name)
        if targets:
            # An area is not a device: "what could I cook in the kitchen?"
            # names no change. With a device word, or a value the user said
            # ("the living room to 21 degrees"), it does.
            return all(named.names(target) for target in targets) and (
                bool(named.device_kinds) or any(named.says(v) for v in values)
            )
        if kinds:
            # Every such device of the home: "I hate these lights" names no
            # target (rule 1), and HA reads "turn off all the lights" itself.
            return False
        if intent_of_tool(tool_name) is None:
            # A script or another API's tool: named by its entity.
            return named.names(named.scripts.get(name_key(base_name(tool_name))))
        values = [value for value in args.values() if value not in (None, "")]
        return bool(values) and all(named.says(value) for value in values)

    def names_memory_change(self, does: str, args: Mapping[str, Any]) -> bool:
        """Whether the words name the note to forget, or say the one to remember.

        The bundled model calls the memory tools on questions that are about
        neither ("Dimanche, il va pleuvoir ?" answered with a forget). A note
        is forgotten when the words share a distinctive word with it, or,
        naming no note by its words, say its number; a note is
        remembered when at least half of its distinctive words were said
        ("The user is allergic to nuts." for "Remember that I'm allergic to
        nuts."). A number may be spelled in the language's own words ("the
        second one", "die zweite": turn/vocabulary.py).
        """
        said = stems([self.named.text])
        if does == REMEMBER:
            fact = args.get("fact")
            if not isinstance(fact, str):
                return True  # invalid arguments: the tool's own error
            written = stems([fact])
            return bool(written) and 2 * shared(written, said) >= len(written)
        number = args.get("number")
        if isinstance(number, bool):
            return False
        if isinstance(number, float) and number.is_integer():
            number = int(number)
        if isinstance(number, str) and number.strip().isdigit():
            number = int(number.strip())
        if isinstance(number, str):
            return shared(stems([number]), said) > 0  # the note's own text
        if not isinstance(number, int):
            return True  # invalid arguments: the tool's own error
        if 1 <= number <= len(self.notes) and shared(
            stems([self.notes[number - 1]]), said
        ):
            return True
        named_by_words = any(shared(stems([note]), said) for note in self.notes)
        said_numbers = self.named.numbers | self.named.spelled_numbers
        # A question forgets nothing by a number alone: many spelled numbers
        # are ordinary words too (Italian "prima", before; "sei", you are).
        return (
            float(number) in said_numbers and not named_by_words and not self.named.asks
        )

    def _sets_said_value_of_last_target(
        self, targets: list[Any], values: list[Any]
    ) -> bool:
        """ "Dim it to 10 percent": a value the words say, for the last change's target.

        Only a setting the user spelled out continues the last command; an
        on or off carries no value, so a statement after a command ("I live
        by the sea.") never switches the last device again.
        """
        if (
            not targets
            or self.named.devices
            or self.named.places
            or not self.last_targets
        ):
            return False
        last = {name_key(target) for target in self.last_targets}
        return all(isinstance(t, str) and name_key(t) in last for t in targets) and any(
            self.named.says(value) for value in values
        )

    def record_result(self, tool_name: str, data: Any) -> None:
        """Note a tool's result: a change that ran, or one that failed."""
        if is_read_only(tool_name, self.live_tools):
            self.read = True
            if self.refused and self.asks_a_question and result_succeeded(data):
                self.read_after_refusal = True
            return
        error = data.get("error") if isinstance(data, Mapping) else None
        if error in NOT_RUN:
            return  # our own refusal (check_call, refuse), not a result
        if error == INVALID_ARGUMENTS:
            # Never ran, so it is refused as an unnamed change is: "Are the
            # sprinklers on?" met with a broken HassTurnOn is asked again
            # without tools, not answered "nothing was changed".
            self._refused()
            return
        if result_succeeded(data):
            self.changed = True
            self.ran_other = self.ran_other or intent_of_tool(tool_name) is None
            # What a read reads changed: it may read again.
            self.earlier_reads.clear()
            self.round_reads.clear()
        else:
            self.failed = True

    @property
    def asks_no_change(self) -> bool:
        """The words name no device or device word, HA read no command in them,
        and there is no change to continue ("What could I cook tonight?")."""
        return not (self.names_a_change or self.refused_memory or self.last_targets)

    @property
    def answers_without_tools(self) -> bool:
        """After a refused change the model answers once more without tools, where
        the words ask for no change and do not command ("My dog is called Bolt.");
        "Turn the volume down to 50%" would be answered with a claim (rule 2)."""
        return self.asks_no_change and (self.named.asks or not self.named.commands)

    @property
    def names_a_change(self) -> bool:
        """HA read a command in the words, or they name a device or device word."""
        return self.asked_change or bool(self.named.devices or self.named.device_kinds)

    @property
    def acknowledges(self) -> bool:
        """A statement met with a refused change and then only said back is
        acknowledged ("Ich bin Diabetiker."): "nothing was changed" would answer
        what no one said. Untried, the words may be a request HA does not know
        ("Wake me up at 7."); a refused memory change is never acknowledged."""
        return (
            self.tried_a_change
            and self.asks_no_change
            and not (self.named.asks or self.named.commands)
        )

    @property
    def words_may_claim(self) -> bool:
        """The user's words made into an answer would claim a change (llm/echo.py):
        a change may be asked, and not in a question ("Is the light on?" - "Yes,
        the light is on." answers)."""
        return self.names_a_change and not self.asks_a_question

    def require_a_call(self) -> bool:
        """Whether the next round requires a tool call, at most once a turn.

        HA recognized a change that has not run, and the model answered it
        in words only or with a refused call (rule 2); llama.cpp honours
        `tool_choice`, Swama ignores it.
        """
        if not self.asked_change or self.changed or self.failed or self.call_required:
            return False
        self.call_required = True
        return True

    def ask_without_tools(self) -> None:
        """The model is asked once more, without tools: hold its whole answer.

        A small model asked without tools may write its tool call as text
        (``written_tool_call``), which must never be spoken.
        """
        self.without_tools = True
        self.refused = False
        self.repeated = False

    @property
    def hold_text(self) -> bool:
        """Hold the model's text: a change was asked or tried and none ran yet."""
        if self.without_tools or (self.repeated and not self.changed):
            # Made again, a change that failed is still no change.
            return True
        if self.what_ran_answers:
            return True
        if self.changed or self.read_after_refusal:
            return False
        return (
            self.asked_change
            or self.failed
            or (self.refused and not self.answers_without_tools)
        )

    def reads_live_data(self, answer: str) -> bool:
        """Whether a held answer after a refused change reads the live data.

        The words ask and HA read no command, no change ran or failed, and
        every line of the answer is a line of the live data as written (the
        "Morgen: ..." line for "Brauche ich morgen einen Schirm?"). Anything
        the model wrote itself may claim the refused change, or put a number
        of one line in another's place ("The fan is set to 18."), and is
        never spoken (rule 2).
        """
        lines = [key for line in answer.splitlines() if (key := echo_key(line))]
        return (
            self.refused
            and self.named.asks
            and not (self.asked_change or self.changed or self.failed)
            and not (self.refused_memory or self.without_tools)
            and bool(lines)
            and all(line in self.live_lines for line in lines)
        )

    @property
    def asked_or_tried(self) -> bool:
        """A change was asked, tried or failed: "nothing was changed" may answer."""
        return self.asked_change or self.tried_a_change or self.failed

    @property
    def changed_cleanly(self) -> bool:
        """A change of the model's ran, and none was refused or failed: what
        ran answers the turn when the model does not (rule 3)."""
        return self.changed and not (self.failed or self.tried_a_change)

    @property
    def what_ran_answers(self) -> bool:
        """Every change of the turn ran, each an HA intent, and nothing was
        read: what ran answers, in HA's words (rule 3, turn/what_ran.py). The
        model's words after a change most often claim it in English or name
        another device; a read's or a script's result is the model's to say.
        """
        return self.changed_cleanly and not (
            self.read or self.ran_other or self.asks_beside
        )

    @property
    def asks_beside(self) -> bool:
        """The words hold a question HA did not read as the command ("turn on
        the kitchen, and is it cold out?"): the model may answer it from its
        prompt, without a read, so its answer is said."""
        return not self.asked_change and any(
            mark in self.named.text for mark in QUESTION_MARKS
        )

    @property
    def asked_no_more(self) -> bool:
        """HA read the whole sentence as the command that ran: nothing else
        was asked, and the model is not asked again. Otherwise it goes on
        with its tools ("... and tell me how the waves are": a read), its
        words held while what ran answers."""
        return self.asked_change and self.what_ran_answers

    @property
    def answer_from_results(self) -> bool:
        """The model made a change again after changes of which one ran and
        another was refused or failed: it answers from the turn's results
        once more, without tools (rule 3)."""
        return (
            self.repeated
            and self.changed
            and not (self.changed_cleanly or self.without_tools)
        )

    @property
    def ask_again_without_tools(self) -> bool:
        """A change the words did not ask for was refused: answer without tools."""
        return (
            self.refused
            and self.answers_without_tools
            and not (self.changed or self.failed or self.without_tools)
        )


def _targets_and_values(args: Mapping[str, Any]) -> tuple[list[Any], list[Any]]:
    """A call's targets (name, area, floor) and its other values, kinds aside."""
    targets = [args[key] for key in TARGET_ARGS if args.get(key)]
    values = [v for k, v in args.items() if k not in (*TARGET_ARGS, *KIND_ARGS)]
    return targets, values


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


# HA names every intent "Hass..." (HassTurnOn); the bundled model invents more
# ("HassModeSiesta").
_INTENT_NAME = re.compile(r"\bHass[A-Z]\w*")
# A name written as code: words joined by "_", or a capital inside a word.
_IDENTIFIER = re.compile(r"\w+_\w+|\w*[a-z][A-Z]\w*")


def names_a_tool(answer: str, tool_names: Collection[str]) -> bool:
    """Whether ``answer`` names a tool: an HA intent, or an offered tool whose
    name is written as code (``local_weather_forecast``, ``GetLiveContext``;
    a script's "bedtime" is a word people say).

    Replayed, such an answer teaches the next ones to describe a tool instead
    of answering (Spanish tuning session: "Para ..., puedes usar la función
    HassLightSet ..." in 9 of its 19 turns).
    """
    if _INTENT_NAME.search(answer):
        return True
    said = set(re.findall(r"\w+", answer))
    return any(
        name in said
        for tool_name in tool_names
        for name in {tool_name, base_name(tool_name)}
        if _IDENTIFIER.fullmatch(name)
    )


def success_targets(data: Any) -> list[Mapping[str, Any]]:
    """The targets an intent result lists as done (entities, areas, floors)."""
    inner = data.get("data") if isinstance(data, Mapping) and "error" in data else data
    outcome = inner.get("data") if isinstance(inner, Mapping) else None
    success = outcome.get("success") if isinstance(outcome, Mapping) else None
    return [target for target in success or () if isinstance(target, Mapping)]


def action_targets(
    tool_name: str, args: Mapping[str, Any], data: Any, live_tools: Collection[str]
) -> tuple[str, ...]:
    """What a successful change acted on, for follow-ups ("turn it off again").

    HA's intent results list the targets that succeeded by name; otherwise
    the call's own name, area and floor arguments.
    """
    if is_read_only(tool_name, live_tools) or not result_succeeded(data):
        return ()
    names = [
        str(target["name"]) for target in success_targets(data) if target.get("name")
    ]
    if not names:
        names = [
            str(args[key])
            for key in TARGET_ARGS
            if isinstance(args.get(key), str) and args[key]
        ]
    return tuple(dict.fromkeys(names))
