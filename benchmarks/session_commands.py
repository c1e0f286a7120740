"""Device commands in a growing session on the bundled model (the claimed-actions issue).

    .venv/bin/python -m benchmarks.session_commands [--runs 1] [--baseline db9e897]

A scripted session of 34 turns of the Dev user in the dev home (benchmarks/_real_home.py):
22 commands on lights, switches and a script (on/off, brightness, follow-ups such as
"turn it off again" and "and the living room?" that need the session), state
questions, small talk and personal statements, in English and Spanish. Before each
command the devices it names are set to the opposite state, so only the turn can
make the check pass.

For each mode it reports: commands carried out (final states as asked), false claims
(a command not carried out whose answer was not an error and says it was done),
follow-ups resolved, and device changes in turns that were not commands. Modes:
  - buffer: the speaker's session kept (the real use);
  - no buffer: `forget_session` before every turn;
  - prefer local: HA's own intents first, as the pipeline option does;
  - model only: the session kept, the agent's own use of HA's intents off, so
    every command goes through the model (with the turn guard and tool repair).
`--baseline REF` runs the same modes on REF's code in a subprocess, same server.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
import statistics
import sys
from typing import Any
import uuid

from benchmarks._real_home import add_common_arguments, code_path

CODE = code_path(sys.argv)

from benchmarks._real_home import (  # noqa: E402
    RealHome,
    Turn,
    real_home,
    run_and_report,
)

KITCHEN = "light.kitchen_light"
LIVING = "light.living_room_light"
BEDROOM = "light.bedroom_light"
PORCH = "light.porch_light"
FAN = "switch.fan"
COFFEE = "switch.coffee_machine"


@dataclass(frozen=True)
class Step:
    """One turn: what the user says, what must hold after it."""

    text: str
    kind: str  # command, question, chat, statement
    # Devices to set first: entity -> on (True) / off (False).
    before: dict[str, bool] = field(default_factory=dict)
    # What a command must leave: entity -> "on", "off" or a brightness 0-255.
    after: dict[str, str | int] = field(default_factory=dict)
    follow_up: bool = False
    language: str = "en"


SESSION: tuple[Step, ...] = (
    Step("Turn on the kitchen light", "command", {KITCHEN: False}, {KITCHEN: "on"}),
    Step("Turn it off again", "command", {KITCHEN: True}, {KITCHEN: "off"}, True),
    Step("Hi, how are you today?", "chat"),
    Step("Turn off the bedroom light", "command", {BEDROOM: True}, {BEDROOM: "off"}),
    Step("And the living room?", "command", {LIVING: True}, {LIVING: "off"}, True),
    Step("Is the porch light on?", "question", {PORCH: True}),
    Step("My dog is called Bolt.", "statement"),
    Step(
        "Set the bedroom light to 30 percent",
        "command",
        {BEDROOM: False},
        {BEDROOM: 77},
    ),
    Step("Turn on the fan", "command", {FAN: False}, {FAN: "on"}),
    Step("Tell me a joke", "chat"),
    Step("Turn off the fan", "command", {FAN: True}, {FAN: "off"}),
    Step(
        "Start movie time",
        "command",
        {LIVING: True, FAN: True},
        {LIVING: 38, FAN: "off"},
    ),
    Step("What is the capital of Italy?", "chat"),
    Step("Turn on the coffee machine", "command", {COFFEE: False}, {COFFEE: "on"}),
    Step("Turn it off", "command", {COFFEE: True}, {COFFEE: "off"}, True),
    Step("I work as a nurse at the hospital.", "statement"),
    Step("Turn on the porch light", "command", {PORCH: False}, {PORCH: "on"}),
    Step("Is the kitchen light on?", "question", {KITCHEN: False}),
    Step(
        "Turn off the lights in the living room",
        "command",
        {LIVING: True},
        {LIVING: "off"},
    ),
    Step("Thanks!", "chat"),
    Step("Switch on the bedroom light", "command", {BEDROOM: False}, {BEDROOM: "on"}),
    Step("Dim it to 10 percent", "command", {BEDROOM: True}, {BEDROOM: 26}, True),
    Step("I prefer warm light in the evening.", "statement"),
    Step("Turn off the porch light", "command", {PORCH: True}, {PORCH: "off"}),
    Step("Turn on the living room light", "command", {LIVING: False}, {LIVING: "on"}),
    Step("Is the fan on?", "question", {FAN: False}),
    Step("Turn the kitchen light on", "command", {KITCHEN: False}, {KITCHEN: "on"}),
    Step("Enciende el Fan", "command", {FAN: False}, {FAN: "on"}, language="es"),
    Step(
        "Apaga la Kitchen Light",
        "command",
        {KITCHEN: True},
        {KITCHEN: "off"},
        language="es",
    ),
    Step("What did I ask you to do just now?", "chat"),
    Step("Turn off the coffee machine", "command", {COFFEE: True}, {COFFEE: "off"}),
    Step("And turn off the fan too", "command", {FAN: True}, {FAN: "off"}, True),
    Step("Good night", "chat"),
    Step("Turn off the bedroom light", "command", {BEDROOM: True}, {BEDROOM: "off"}),
)
# Phrases of an answer that says a command was done (en, es). Plain " on" or
# " off" would count "I can't turn off a light that is off" as a claim.
CLAIM_WORDS = (
    "turned on",
    "turned off",
    "turned it",
    "switched",
    "is now",
    "are now",
    "set to",
    "dimmed",
    "started",
    " done",
    "encendid",
    "apagad",
    "activad",
    "listo",
    "hecho",
)
MODES = ("buffer", "no buffer", "prefer local", "model only")
# Agent settings per mode ("model only": HA's own intents off, so every
# command goes through the model, the turn guard and the tool repair).
MODE_AGENT: dict[str, dict[str, Any]] = {"model only": {"local_intents": False}}


def carried_out(turn: Turn, step: Step, states: dict[str, str]) -> bool:
    """Whether every device the step names ends as asked."""
    for entity_id, want in step.after.items():
        state = states.get(entity_id, "")
        if isinstance(want, int):
            on, _, brightness = state.partition("@")
            if on != "on" or not brightness or abs(int(brightness) - want) > 3:
                return False
        elif state.partition("@")[0] != want:
            return False
    return True


def claims_done(turn: Turn) -> bool:
    """An answer that says it did something (and is not our spoken error)."""
    if turn.response_type == "error":
        return False
    speech = f" {turn.speech.casefold()}"
    return any(word in speech for word in CLAIM_WORDS)


async def run_session(home: RealHome, mode: str) -> dict[str, Any]:
    """One pass over SESSION; counts and the turns that went wrong."""
    await home.forget_session()
    counts: dict[str, float] = {
        "commands": 0,
        "carried_out": 0,
        "false_claims": 0,
        "wrong_actions": 0,
        "follow_ups": 0,
        "follow_ups_done": 0,
        "non_command_changes": 0,
    }
    problems: list[str] = []
    seconds: list[float] = []
    # One conversation for the session, as a satellite keeps it between turns
    # (HA keeps ids it did not make; "no buffer" starts a new one each turn).
    conversation_id = f"session-commands-{uuid.uuid4().hex}"
    for step in SESSION:
        for entity_id, on in step.before.items():
            await home.set_state(entity_id, on)
        print(f"  [{mode}] {step.text}", file=sys.stderr, flush=True)
        if mode == "no buffer":
            await home.forget_session()
        turn = await home.converse(
            step.text,
            language=step.language,
            prefer_local=mode == "prefer local",
            conversation_id=None if mode == "no buffer" else conversation_id,
        )
        seconds.append(turn.seconds)
        states = home.exposed_states()
        if step.kind == "command":
            counts["commands"] += 1
            done = carried_out(turn, step, states)
            counts["carried_out"] += done
            if step.follow_up:
                counts["follow_ups"] += 1
                counts["follow_ups_done"] += done
            if not done:
                # A claim is false when nothing changed; a change other than
                # the one asked for is a wrong action, reported on its own.
                wrong = bool(turn.changed)
                claim = not wrong and claims_done(turn)
                counts["false_claims"] += claim
                counts["wrong_actions"] += wrong
                label = (
                    "WRONG ACTION" if wrong else "FALSE CLAIM" if claim else "not done"
                )
                problems.append(
                    f"{label}: {step.text!r} -> {turn.speech!r} "
                    f"calls={turn.tool_calls} changed={turn.changed}"
                )
        elif turn.changed:
            counts["non_command_changes"] += 1
            problems.append(f"CHANGED by {step.text!r}: {turn.changed}")
    counts["median_seconds"] = round(statistics.median(seconds), 2)
    return {"counts": counts, "problems": problems}


async def main(args: argparse.Namespace, base_url: str) -> dict[str, Any]:
    """Every mode, `args.runs` times, on this checkout's code."""
    results: dict[str, Any] = {"code": str(CODE), "modes": {}}
    for mode in args.modes.split(","):
        runs = []
        for _ in range(args.runs):
            async with real_home(base_url, agent=MODE_AGENT.get(mode)) as home:
                runs.append(await run_session(home, mode))
        results["modes"][mode] = runs
    return results


def report(label: str, results: dict[str, Any]) -> None:
    """Print one code's figures, per mode, summed over its runs."""
    print(f"\n== {label} ({results['code']})")
    for mode, runs in results["modes"].items():
        total = {
            key: sum(one["counts"][key] for one in runs)
            for key in runs[0]["counts"]
            if key != "median_seconds"
        }
        median = statistics.median(one["counts"]["median_seconds"] for one in runs)
        commands = total["commands"]
        plain = commands - total["follow_ups"]
        plain_done = total["carried_out"] - total["follow_ups_done"]
        print(
            f"{mode:>12}: commands carried out {total['carried_out']}/{commands} "
            f"({100 * total['carried_out'] / commands:.0f} %), without follow-ups "
            f"{plain_done}/{plain} ({100 * plain_done / plain:.0f} %); follow-ups "
            f"{total['follow_ups_done']}/{total['follow_ups']}; false claims "
            f"{total['false_claims']}; wrong actions {total['wrong_actions']}; "
            f"device changes by non-commands "
            f"{total['non_command_changes']}; median turn {median} s"
        )
        for one in runs:
            for problem in one["problems"]:
                print(f"{'':>14}{problem}")


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_arguments(parser)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--modes", default=",".join(MODES), help=f"comma-separated, of {MODES}"
    )
    args = parser.parse_args()
    run_and_report(
        "benchmarks.session_commands",
        args,
        ["--runs", str(args.runs), "--modes", args.modes],
        lambda base_url: main(args, base_url),
        report,
        f"{len(SESSION)} turns per session",
    )


if __name__ == "__main__":
    cli()
