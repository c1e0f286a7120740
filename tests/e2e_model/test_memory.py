"""Long-term memory on the real small model: a fixed subset of the benchmark's set.

Through real HA and the agent, with `local` extraction on the bundled
Qwen2.5-Coder-0.5B at temperature 0: personal statements, two corrections and
small talk, from benchmarks/memory_set.yaml. With issue 12's extractor the
model reached 7/7, 2/2 and no false fact in each of three runs in a row
(docs/benchmarks.md, "Memory quality (issue 12)"), and the thresholds left a
margin of two statements and one correction. With issue 22's two small tasks
(`memory/extraction_plan.py`) it reached 6/7, 1/2 and no false fact in each of
three runs (docs/benchmarks.md, "Memory beyond English (issue 22)"): a margin
of one statement, none for corrections (the correction of the Volvo, a
removal, is missed every time). The full set and the figures are the
benchmark's (`benchmarks/memory_eval.py`).
"""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from benchmarks.memory_eval import Turn, load_set, matches, negated
from custom_components.local_assistant.const import (
    CONF_EXTRACTION,
    CONF_TIMEOUT,
    EXTRACTION_LOCAL,
)
from tests.helpers.ha import converse

# (speaker in the set, the turns of it to say, by their text), in the set's order.
SUBSET = {
    "anna": [
        "My dog is called Bolt.",
        "I'm vegetarian.",
        "I work as a nurse at the hospital.",
        "Thanks, that's great!",
        "Our robot vacuum is called Dusty.",
        "Actually the dog is called Max now.",
        "Tell me a joke.",
        "I drive a red Volvo.",
        "My mother lives in Seville.",
        "I sold the Volvo last week.",
    ],
    "carla": [
        "Soy alérgica a los cacahuetes.",
        "Mi hija se llama Lucía.",
        "Gracias, muy amable.",
        "I grow tomatoes on the balcony.",
    ],
}
MIN_RECALL = 5  # of the 7 statements kept to the end
MIN_CORRECTIONS = 1  # of 2
MAX_FALSE_FACTS = 1  # over the 3 non-facts


@pytest.fixture
def real_entry_options() -> dict[str, Any]:
    """Default local extraction (the other e2e tests have it off)."""
    return {CONF_EXTRACTION: EXTRACTION_LOCAL, CONF_TIMEOUT: 600}


def _subset() -> dict[str, list[Turn]]:
    full = load_set()
    return {
        name: [turn for turn in full[name] if turn.text in texts]
        for name, texts in SUBSET.items()
    }


async def test_a_small_local_model_remembers_what_it_is_told(
    hass: HomeAssistant, real_entry: MockConfigEntry
) -> None:
    memory = real_entry.runtime_data.memory
    extractor = memory.extractor
    assert extractor is not None
    kept = recalled = corrections = applied = false_facts = 0
    report: list[str] = []
    for name, turns in _subset().items():
        assert [turn.text for turn in turns] == SUBSET[name]
        user = await hass.auth.async_create_user(name.capitalize())
        speaker = f"user:{user.id}"
        by_id = {turn.id: turn for turn in turns if turn.id}
        corrected = {turn.replaces for turn in turns if turn.kind == "correction"}
        for turn in turns:
            before = {fact.id for fact in memory.list_facts(speaker)}
            await converse(hass, turn.text, user_id=user.id)
            await extractor.async_wait_idle()
            added = [f.text for f in memory.list_facts(speaker) if f.id not in before]
            if turn.kind == "non_fact":
                false_facts += len(added)
            report.append(f"{turn.text!r} -> {added}")
        active = [fact.text for fact in memory.list_facts(speaker)]
        history = [entry.fact.text for entry in memory.fact_history(speaker)]
        report.append(f"{name}: {active}")
        for turn in turns:
            if turn.kind == "fact" and turn.id not in corrected:
                kept += 1
                recalled += any(matches(fact, turn.keywords) for fact in active)
            elif turn.kind == "correction":
                old = by_id[turn.replaces or ""].keywords
                corrections += 1
                applied += (
                    any(matches(f, old) for f in history)
                    and any(matches(f, turn.keywords) for f in active)
                    and not any(
                        matches(f, old)
                        and not matches(f, turn.keywords)
                        and not negated(f)
                        for f in active
                    )
                )
    summary = (
        f"recall {recalled}/{kept}, corrections {applied}/{corrections}, "
        f"false facts {false_facts}; " + "; ".join(report)
    )
    print(f"\nmemory e2e: {summary}")
    assert kept == 7, summary
    assert recalled >= MIN_RECALL, summary
    assert applied >= MIN_CORRECTIONS, summary
    assert false_facts <= MAX_FALSE_FACTS, summary
