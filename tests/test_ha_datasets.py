"""The leaderboard benchmark's pure parts: its eval rules and its counting.

`benchmarks/ha_datasets` judges outputs as the Home LLM Leaderboard's
`test_eval.py` does (`python -m benchmarks.ha_datasets.verify` checks that against
every published run); these pin the rules a change could break without a network.
"""

from __future__ import annotations

from typing import Any

from benchmarks.ha_datasets.judge import judge
from benchmarks.ha_datasets.report import summary

CHANGE = {"expect_changes": {"light.kitchen": {"state": "on"}}}
QUESTION = {"expect_response": ["no", "off"]}


def verdicts(task: dict[str, Any], answer: str, unexpected: Any = None) -> list[bool]:
    return [rule.passed for rule in judge(task, answer, unexpected, [])]


def test_state_change_rules() -> None:
    assert verdicts(CHANGE, "Turned on the light") == [True]
    assert verdicts(CHANGE, "Done", {"light.kitchen": "off"}) == [False]
    # The leaderboard's "Sorry" check is case-sensitive.
    assert verdicts(CHANGE, "Sorry, I could not do that") == [False]
    assert verdicts(CHANGE, "sorry, done anyway") == [True]


def test_question_rules() -> None:
    # Any expected string, lower-cased, anywhere in the answer: "no" is in "not".
    assert verdicts(QUESTION, "It is OFF.") == [True]
    assert verdicts(QUESTION, "I am not aware of that device") == [True]
    assert verdicts(QUESTION, "It is on.") == [False]
    assert verdicts({"expect_response": "42"}, "It is 42 degrees") == [True]
    # A question that changed states fails on top of its answer rule.
    assert verdicts(QUESTION, "It is off.", {"switch.a": "on"}) == [False, True]


def test_tool_call_rules_read_the_first_model_call() -> None:
    task = {"expect_tool_call": {"tool_name": "HassTurnOn", "tool_args": {"name": "A"}}}
    model = [{"name": "HassTurnOn", "args": {"name": "A"}}]
    intent = [{"name": "HassTurnOn", "args": {"name": "A"}, "intent": True}]
    assert [r.passed for r in judge(task, "", None, model)] == [True, True]
    assert [r.passed for r in judge(task, "", None, intent)] == [False, False]
    assert [r.passed for r in judge(task, "", None, [])] == [False, False]


def case(categories: list[str], passed: bool | None, seconds: float) -> dict[str, Any]:
    rules = [] if passed is None else [{"name": "r", "passed": passed}]
    return {
        "dataset": "questions",
        "categories": categories,
        "rules": rules,
        "seconds": seconds,
        "error": "Boom" if passed is None else None,
    }


def test_counting_by_category() -> None:
    figures = summary(
        [
            case(["light", "question"], True, 1.0),
            case(["light", "question"], False, 3.0),
            case(["fan", "question"], True, 2.0),
            case(["fan", "question"], None, 99.0),  # a broken collect: not counted
        ]
    )["questions"]
    assert figures["all"] == {
        "passed": 2,
        "total": 3,
        "cases": 4,
        "errors": 1,
        "timeouts": 0,
        "median_seconds": 2.0,
    }
    categories = figures["categories"]
    assert (categories["light"]["passed"], categories["light"]["total"]) == (1, 2)
    assert (categories["fan"]["passed"], categories["fan"]["total"]) == (1, 1)
    assert (categories["question"]["passed"], categories["question"]["total"]) == (2, 3)
