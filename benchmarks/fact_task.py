"""The small model's fact task alone, over a memory set's statements.

    cd CHECKOUT && python -m benchmarks.fact_task [--file SET.yaml ...] \\
        [--base-url URL] [--json OUT] [-v]

For every turn of the sets that the extractor would look at
(`worth_extracting`: no questions), the code of the checkout it runs from
asks the model its fact task (`fact_task`, `memory/extraction_prompt.py`) and
parses the answer as the extractor does. Counted per language: statements
labelled `fact` for which it finds at least one fact, and statements labelled
`non_fact` for which it finds one (a false fact, before any later check).
It measures one component, with no Home Assistant and no session: a change to
the task's instructions or examples, run from two checkouts against one
server (`--base-url`), differs in these figures only. What memory keeps at
the end of a conversation is `benchmarks.memory_heldout`'s.

Defaults to the held-out set (`benchmarks/sets/memory_set_multilingual.yaml`);
the tuning sets are `benchmarks/memory_tuning_multilingual.yaml` and
`benchmarks/memory_set.yaml` (English, a list of turns per speaker). Starts
the bundled model (`scripts/local-model`) unless `--base-url`; temperature 0.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from openai import AsyncOpenAI
import yaml

from benchmarks._component import print_tallies, run
from benchmarks.memory_eval import load_set
from benchmarks.memory_heldout import load_extraction_set
from custom_components.local_assistant.memory.extraction_prompt import (
    LOCAL_MAX_ADDS,
    ExtractionParseError,
    fact_task,
    parse_fact_answer,
    standalone,
    worth_extracting,
)

REPO = Path(__file__).resolve().parent.parent
HELD_OUT = REPO / "benchmarks" / "sets" / "memory_set_multilingual.yaml"
MAX_TOKENS = 200


@dataclass(frozen=True, slots=True)
class Statement:
    """One turn of a set: its language, its label and what was said."""

    lang: str
    kind: str
    text: str


def statements(path: Path) -> list[Statement]:
    """The turns of a memory set, read by the loader of its layout.

    The multilingual sets (a language and turns per speaker) are
    `memory_heldout`'s, the English tuning set (a list of turns per speaker)
    is `memory_eval`'s.
    """
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if all(isinstance(speaker, dict) for speaker in data["speakers"].values()):
        return [
            Statement(speaker.lang, turn.kind, turn.text)
            for speaker in load_extraction_set(path)
            for turn in speaker.turns
        ]
    return [
        Statement(turn.lang, turn.kind, turn.text)
        for turns in load_set(path).values()
        for turn in turns
    ]


async def ask(client: AsyncOpenAI, text: str) -> tuple[str, list[str] | None]:
    """The model's answer to the fact task, and the facts parsed from it (None: refused)."""
    response = await client.chat.completions.create(
        model="local",
        messages=standalone(fact_task(text)),  # type: ignore[arg-type]
        temperature=0,
        max_tokens=MAX_TOKENS,
    )
    answer = (response.choices[0].message.content or "").strip()
    try:
        return answer, list(parse_fact_answer(answer, max_adds=LOCAL_MAX_ADDS).facts)
    except ExtractionParseError:
        return answer, None


async def measure(base_url: str, paths: list[Path], verbose: bool) -> dict[str, Any]:
    """Ask every statement; the tallies per language and all, and every answer."""
    client = AsyncOpenAI(base_url=base_url, api_key="not-needed")
    tallies: dict[str, dict[str, list[int]]] = defaultdict(
        lambda: {"facts_found": [0, 0], "non_facts_stored": [0, 0]}
    )
    rows = []
    for path in paths:
        for said in statements(path):
            if not worth_extracting(said.text):
                continue
            answer, facts = await ask(client, said.text)
            rows.append({**asdict(said), "answer": answer, "facts": facts})
            key = {"fact": "facts_found", "non_fact": "non_facts_stored"}.get(said.kind)
            if verbose:
                print(f"[{said.lang}] {said.kind:10} {said.text!r} -> {answer!r}")
            if key is None:
                continue
            for group in (said.lang, "all"):
                tallies[group][key][0] += bool(facts)
                tallies[group][key][1] += 1
    return {"tallies": dict(tallies), "answers": rows}


def main() -> None:
    """Run the sets given (default: the held-out one) and print the tallies."""
    paths, result = run(__doc__ or "", HELD_OUT, measure)
    print_tallies(
        paths,
        result["tallies"],
        [
            ("facts_found", "facts found", 16),
            ("non_facts_stored", "non-facts stored", 20),
        ],
    )


if __name__ == "__main__":
    main()
