"""The small model's plan for one exchange, given facts it already remembers.

    cd CHECKOUT && python -m benchmarks.update_step [--file SET.yaml ...] \\
        [--base-url URL] [--json OUT] [-v]

Each case holds a speaker's remembered facts (``facts``; the first is the one
the words are about) and what the speaker says next (``said``). The code of
the checkout it runs from plans the exchange as the ``local`` extractor does
(`async_plan_small`, `memory/extraction_plan.py`: the fact task, then the update
task for related facts) and makes the edits on a fact book
(`FactBook.apply_edits`). Judged with the keyword rules of
benchmarks/sets/README_memory.md (folded substrings, every group in one fact):

* ``replace``: no active fact matches ``gone``, the first fact is in the
  history, and an active fact matches ``new``;
* ``remove``: no active fact matches ``gone`` and the first fact is in the
  history;
* ``keep``: an active fact matches ``kept`` (a detail may be stored beside
  it; a repeat stored twice is counted apart, as "doubled").

Every case also counts the other facts lost (not active word for word) and, for
``replace`` and ``remove``, the details of the first fact lost with it: its names
(capitalised words after the first) and numbers that no keyword of the case names
and no active fact says any more ("Rufo" when a glued fact about a husband, a dog
and a job is rewritten to the husband alone). It
measures one component, with no Home Assistant and no session or reply:
what memory keeps over a whole conversation is `benchmarks.memory_heldout`'s.

Defaults to the held-out set (`benchmarks/sets/memory_updates_heldout.yaml`);
the tuning set is `benchmarks/memory_updates_tuning.yaml`. Starts the bundled
model (`scripts/local-model`) unless `--base-url`; temperature 0.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
import re
from typing import Any

from openai import AsyncOpenAI
import yaml

from benchmarks._component import print_tallies, run
from benchmarks.memory_heldout import fold, group_matches, matches
from custom_components.local_assistant.const import EXTRACTION_MAX_TOKENS
from custom_components.local_assistant.memory.extraction_plan import async_plan_small
from custom_components.local_assistant.memory.extraction_prompt import (
    LOCAL_MAX_ADDS,
    ExtractionParseError,
)
from custom_components.local_assistant.memory.facts import FactBook

REPO = Path(__file__).resolve().parent.parent
HELD_OUT = REPO / "benchmarks" / "sets" / "memory_updates_heldout.yaml"
KINDS = ("replace", "remove", "keep")
# The table's columns: each kind, then what every case also counts.
COLUMNS = (*KINDS, "doubled", "others_lost", "details_lost")


def details_lost(case: dict[str, Any], active: list[str]) -> tuple[int, int]:
    """Of the first fact's names and numbers no keyword names: how many no
    active fact says any more, and how many there are."""
    if case["expect"] == "keep":
        return 0, 0
    groups = [*case.get("gone", ()), *case.get("new", ())]
    words = re.findall(r"\w+", case["facts"][0])
    details = {
        fold(word)
        for index, word in enumerate(words)
        if (index > 0 and word[:1].isupper()) or any(c.isdigit() for c in word)
    } - {
        detail
        for detail in {fold(word) for word in words}
        if any(group_matches(detail, group) for group in groups)
    }
    said = fold(" ".join(active))
    return sum(detail not in said for detail in details), len(details)


def judge(
    case: dict[str, Any], active: list[str], book: FactBook, first_id: str
) -> bool:
    """Whether the facts after the exchange (``active``) are what the case expects."""
    if case["expect"] == "keep":
        return any(matches(text, case["kept"]) for text in active)
    gone = not any(matches(text, case["gone"]) for text in active)
    in_history = any(entry.fact.id == first_id for entry in book.history)
    if case["expect"] == "remove":
        return gone and in_history
    return gone and in_history and any(matches(text, case["new"]) for text in active)


async def run_case(client: AsyncOpenAI, case: dict[str, Any]) -> dict[str, Any]:
    """Plan one exchange on the case's facts and judge the result."""
    book = FactBook(max_facts=30)
    facts = [book.add_extracted(text, 0.0).added[0] for text in case["facts"]]
    answers: list[str] = []

    async def ask(messages: list[dict[str, str]]) -> str:
        response = await client.chat.completions.create(
            model="local",
            messages=messages,  # type: ignore[arg-type]
            temperature=0,
            max_tokens=EXTRACTION_MAX_TOKENS,
        )
        answers.append((response.choices[0].message.content or "").strip())
        return answers[-1]

    try:
        plan = await async_plan_small(
            ask, book.active(), case["said"], max_adds=LOCAL_MAX_ADDS
        )
    except ExtractionParseError:
        edits = []
    else:
        edits = plan.edits
    book.apply_edits(edits, 1.0)
    active = [fact.text for fact in book.active()]
    return {
        "id": case["id"],
        "lang": case["lang"],
        "expect": case["expect"],
        "ok": judge(case, active, book, facts[0].id),
        "others_lost": sum(text not in active for text in case["facts"][1:]),
        "details_lost": details_lost(case, active),
        "doubled": case["expect"] == "keep"
        and sum(matches(text, case["kept"]) for text in active) > 1,
        "answers": answers,
        "facts_after": active,
    }


async def measure(base_url: str, paths: list[Path], verbose: bool) -> dict[str, Any]:
    """Every case of the sets; tallies per language and kind, and every result."""
    client = AsyncOpenAI(base_url=base_url, api_key="not-needed")
    tallies: dict[str, dict[str, list[int]]] = defaultdict(
        lambda: {column: [0, 0] for column in COLUMNS}
    )
    rows = []
    for path in paths:
        for case in yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]:
            row = await run_case(client, case)
            rows.append(row)
            if verbose:
                mark = "ok  " if row["ok"] else "MISS"
                print(f"{mark} {row['id']:6} {case['said']!r}")
                print(f"       answers {row['answers']!r}")
                print(f"       after   {row['facts_after']!r}")
            for group in (case["lang"], "all"):
                tally = tallies[group]
                tally[case["expect"]][0] += row["ok"]
                tally[case["expect"]][1] += 1
                tally["doubled"][0] += row["doubled"]
                tally["doubled"][1] += case["expect"] == "keep"
                tally["others_lost"][0] += row["others_lost"]
                tally["others_lost"][1] += len(case["facts"]) - 1
                tally["details_lost"][0] += row["details_lost"][0]
                tally["details_lost"][1] += row["details_lost"][1]
    return {"tallies": dict(tallies), "cases": rows}


def main() -> None:
    """Run the sets given (default: the held-out one) and print the tallies."""
    paths, result = run(__doc__ or "", HELD_OUT, measure)
    print_tallies(
        paths, result["tallies"], [(key, key.replace("_", " "), 14) for key in COLUMNS]
    )


if __name__ == "__main__":
    main()
