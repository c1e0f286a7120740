"""The leaderboard's eval, rule for rule (`home_assistant_datasets/tool/assist/eval/test_eval.py`).

Its eval is deterministic: no LLM judge. Each collected output goes through four
pytest tests; a test that does not apply is skipped and not counted, and the
leaderboard's score is passed / counted over all outputs:

- `expected_states` (when the task has `expect_changes`): passes when the state diff
  found no unexpected state (every entity of the synthetic home, all attributes, is as
  the setup left it plus the expected changes, minus `ignore_changes` and the derived
  cover attributes) AND the answer does not contain "Sorry" (case-sensitive);
- `expect_response` (when the task has one): passes when the answer, lower-cased,
  contains any of the expected strings, lower-cased;
- `tool_call_name` / `tool_call_args` (when the task has `expect_tool_call`; neither
  assist-mini nor questions has one): the first tool call in the conversation trace
  has that name / exactly those arguments.

(Without `expect_changes` the states test fails only when the output holds unexpected
states, which the collect records only for tasks with `expect_changes`: it never
counts.) Neither assist-mini nor questions has a task with more than one applicable
rule, so there one case is one counted result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Rule:
    """One eval test's outcome for one output."""

    name: str
    passed: bool
    detail: str = ""


def judge(
    task: dict[str, Any],
    answer: str,
    unexpected_states: Any,
    tool_calls: list[dict[str, Any]],
) -> list[Rule]:
    """The counted (not skipped) rules for one output, in the leaderboard's order."""
    rules: list[Rule] = []
    if task.get("expect_changes"):
        if unexpected_states:
            rules.append(
                Rule(
                    "expected_states", False, f"unexpected states: {unexpected_states}"
                )
            )
        elif "Sorry" in answer:
            rules.append(Rule("expected_states", False, 'the answer says "Sorry"'))
        else:
            rules.append(Rule("expected_states", True))
    elif unexpected_states:
        rules.append(Rule("expected_states", False, "state changed in a question"))
    if expected := task.get("expect_response"):
        words = [expected] if isinstance(expected, str) else [str(w) for w in expected]
        text = answer.lower()
        ok = any(word.lower() in text for word in words)
        rules.append(
            Rule("expect_response", ok, "" if ok else f"none of {words} in the answer")
        )
    if call := task.get("expect_tool_call"):
        # The first tool call event of the trace; HA's own intent match has no
        # tool_name there (it records intent_name), so it never matches.
        first = tool_calls[0] if tool_calls else {}
        name = None if first.get("intent") else first.get("name")
        args = None if first.get("intent") else first.get("args")
        name_ok = name == call["tool_name"]
        rules.append(Rule("tool_call_name", name_ok, "" if name_ok else f"{first}"))
        if call.get("tool_args"):
            args_ok = args == call["tool_args"]
            rules.append(Rule("tool_call_args", args_ok, "" if args_ok else f"{first}"))
    return rules
