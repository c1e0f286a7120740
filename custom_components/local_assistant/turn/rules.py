"""Which expansion rules of Home Assistant's sentence templates (hassil) are used.

Templates name rules ("<name>", "<my>") that may use others: HA's reading of
a language (``vocabulary``) and our memory sentences (``memory/commands.py``)
both need the rules a set of templates reaches.

Pure module: hassil only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hassil.expression import Expression, Group, RuleReference, Sentence


def used_rules(
    expressions: Iterable[Expression], rules: Mapping[str, Sentence]
) -> set[str]:
    """The names of the rules ``expressions`` use, and those these use."""
    used: set[str] = set()
    waiting = list(expressions)
    while waiting:
        expression = waiting.pop()
        if isinstance(expression, RuleReference):
            name = expression.rule_name
            if name not in used and name in rules:
                used.add(name)
                waiting.append(rules[name].expression)
        elif isinstance(expression, Group):
            waiting.extend(expression.items)
    return used
