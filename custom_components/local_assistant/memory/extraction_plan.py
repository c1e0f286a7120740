"""How one exchange becomes edits of a speaker's facts: what is asked, what code decides.

The extractor (``extraction.py``) hands this module a way to ask the model
(``ask``: messages in, the answer's text out) and the speaker's facts in
prompt order; it gets back :class:`~.facts.Edit` s by fact id, which
``FactBook.apply_edits`` makes. Two shapes, one result:

* :func:`async_plan_hosted`, for a capable (hosted) model: one question, the
  facts numbered and the user's words; the answer's numbers become ids.
* :func:`async_plan_small`, for the small model on the agent's own server, which
  copies a numbered list back instead of editing it (docs/benchmarks.md,
  "Memory beyond English (issue 22)"): the facts in the user's words (never shown
  the list), then, for at most :data:`MAX_UPDATE_CANDIDATES` remembered
  facts the words may be about, that fact as it is true now or REMOVE.
  Which facts those are is told from the facts' distinctive words
  (:func:`~..wording.distinctive_words`, compared by their first
  :data:`STEM_LENGTH` letters, a shorter word by all of it, so "wohne"
  meets "wohnen", "joke" meets "jokes" and "pharmacist" meets "pharmacy");
  whether a new fact only repeats one, from the same words whole or with
  an ending added ("working" repeats "work"; "Großvater" is no repeat of
  "Großmutter"): decided by length, case and
  frequency in the speaker's own facts, the same in every language, with no
  list of words of any language. Whether a fact changed is the model's answer,
  never a word count.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
import re

from ..wording import (
    STEM_LENGTH,
    comparable,
    distinctive_words,
    says_no_more,
    shared,
    stems,
    words,
)
from .extraction_prompt import (
    ExtractionParseError,
    copied_example,
    fact_task,
    memory_task,
    parse_fact_answer,
    parse_operations,
    parse_update_answer,
    standalone,
    update_task,
)
from .facts import Edit, Fact, common_to

__all__ = [
    "MAX_UPDATE_CANDIDATES",
    "Ask",
    "AskUpdate",
    "Plan",
    "async_plan_hosted",
    "async_plan_small",
    "related_facts",
]

type Ask = Callable[[list[dict[str, str]]], Awaitable[str]]
# An update call that may come back refused: None when the server refused it.
type AskUpdate = Callable[[list[dict[str, str]]], Awaitable[str | None]]

# Remembered facts per exchange the small model is asked to bring up to date.
MAX_UPDATE_CANDIDATES = 2
_TOKEN = re.compile(r"\w+")


@dataclass(slots=True)
class Plan:
    """The edits for one exchange, and what was left out (counts, no text)."""

    edits: list[Edit] = field(default_factory=list)
    calls: int = 0
    over_limit: int = 0  # additions beyond max_adds
    skipped: int = 0  # lines that were no plain sentence, edits that could not be
    copied: int = 0  # the prompt's own examples
    repeats: int = 0  # new facts that say no more than a remembered one
    unusable_updates: int = 0  # update answers in no format asked for
    removals_not_taken: int = 0  # REMOVE with no new version found in the words


def common_stems(facts: Sequence[Fact]) -> frozenset[str]:
    """Stems nearly every fact shares ("Benutzer", "usuario"): they tell nothing."""
    return common_to(
        [[word[:STEM_LENGTH] for word in words(fact.text)] for fact in facts]
    )


def related_facts(
    facts: Sequence[Fact], texts: Iterable[str], limit: int
) -> list[Fact]:
    """Up to ``limit`` extracted facts sharing distinctive words with ``texts``.

    Most shared first, ties in the given order. Protected facts are never
    offered: extraction cannot change them.
    """
    common = common_stems(facts)
    said = stems(texts, common)
    scored = [
        (shared(stems([fact.text], common), said), index, fact)
        for index, fact in enumerate(facts)
        if not fact.protected
    ]
    ranked = sorted(
        (entry for entry in scored if entry[0]), key=lambda e: (-e[0], e[1])
    )
    return [fact for _, _, fact in ranked[:limit]]


async def async_plan_hosted(
    ask: Ask, facts: Sequence[Fact], user_text: str, *, max_adds: int
) -> Plan:
    """One question; the edits by number, the numbers made ids of ``facts``.

    Raises ExtractionParseError for an answer in no format asked for.
    """
    plan = Plan(calls=1)
    answer = await ask(
        standalone(memory_task([fact.text for fact in facts], user_text))
    )
    parsed = parse_operations(answer, notes=len(facts), max_adds=max_adds)
    plan.over_limit, plan.skipped = parsed.over_limit, parsed.skipped
    for operation in parsed.operations:
        old = facts[operation.number - 1] if operation.number else None
        if operation.kind != "remove" and copied_example(
            operation.text, user_text, old.text if old is not None else ""
        ):
            plan.copied += 1
        elif old is None:
            plan.edits.append(Edit("add", operation.text))
        else:
            plan.edits.append(Edit(operation.kind, operation.text, old.id))
    return plan


async def async_plan_small(
    ask: Ask,
    facts: Sequence[Fact],
    user_text: str,
    *,
    max_adds: int,
    max_candidates: int = MAX_UPDATE_CANDIDATES,
    ask_update: AskUpdate | None = None,
) -> Plan:
    """The facts in the words, then each related fact as it is now.

    Raises ExtractionParseError when the first answer is in no format asked
    for; an unusable update answer leaves that one fact as it is.
    ``ask_update`` asks the update calls when given (the exchange's last
    try): one the server refuses again leaves that fact as it is, and the
    new facts that may be its news (sharing a distinctive word with it) are
    left out: never a contradiction beside it.

    * A new version of a related fact replaces it; the same words mean
      unchanged. REMOVE is taken only as a fact found in the words that is
      that fact as it is now (``_restated``): that one replaces it. The small
      model never drops a fact on its own. A new version that copies a fact
      found in the words (other news, as often as not) is weighed as REMOVE.
    * A new fact that shares no distinctive word with the words is about
      the task, not the speaker ("No new facts."), and is left out.
    * A new fact is left out when it is the same news as an edit (it shares
      a distinctive word with a fact just removed or replaced, or with its
      new version: "Shelly died" when the tortoise Shelly is dropped, "I sold
      the Volvo last week" next to "I sold the red Volvo"), or says no more
      than a remembered fact (a repeat: each of its distinctive words is one
      of the fact's, whole or with an ending added). One word for word the same as a
      remembered fact is not stored twice either (``FactBook.apply_edits``).
    """
    plan = Plan(calls=1)
    parsed = parse_fact_answer(
        await ask(standalone(fact_task(user_text))), max_adds=max_adds
    )
    plan.over_limit, plan.skipped = parsed.over_limit, parsed.skipped
    found = []
    said = stems([user_text])
    for text in parsed.facts:
        if copied_example(text, user_text):
            plan.copied += 1
        elif (written := stems([text])) and not shared(written, said):
            # "No new facts.", "Nothing to remember.": the small model's
            # NONE in words, about the task; a fact of these words shares a
            # distinctive word with them.
            plan.skipped += 1
        else:
            found.append(text)
    common = common_stems(facts)
    edited: list[frozenset[str]] = []
    for fact in related_facts(facts, [user_text, *found], max_candidates):
        plan.calls += 1
        task = standalone(update_task(fact.text, user_text))
        answer = await (ask_update or ask)(task)
        if answer is None:
            # Refused again (llama.cpp's 500 for broken output, the same at
            # temperature 0): whether the words change this fact is unknown.
            plan.unusable_updates += 1
            edited.append(stems([fact.text], common))
            continue
        try:
            now = parse_update_answer(answer)
        except ExtractionParseError:
            plan.unusable_updates += 1
            continue
        if (
            now is not None
            and (version := comparable(now)) != comparable(fact.text)
            and any(version == comparable(text) for text in found)
        ):
            # A fact found in the words, copied, is no version written for
            # this one ("Tengo una gata que se llama Luna." for "Mi perro se
            # llama Bolt."): it weighs as much as REMOVE does.
            now = None
        if now is None:
            # A fact found in these words about the same thing is the fact as
            # it is now: it supersedes the old one. Without one, the small
            # model's REMOVE is not taken: it answers so to restatements
            # ("Wie gesagt, Schweinefleisch esse ich nicht.") and to words
            # about something else (tuning set: 2 of 2 such removals wrong).
            # The person removes a fact by voice or in the options.
            now = _restated(fact, found, common)
            if now is None:
                plan.removals_not_taken += 1
                continue
        if not shared(stems([now]), stems([fact.text, user_text])):
            # "No change.", "The note is still true.": a word about the task,
            # none of the fact's nor the words', is no version of the fact.
            plan.unusable_updates += 1
            continue
        if comparable(now) != comparable(fact.text) and not copied_example(
            now, user_text, fact.text
        ):
            plan.edits.append(Edit("replace", now, fact.id))
            edited.append(stems([fact.text, now], common))
    # A repeat says the same words, each whole or with an ending added
    # ("work", "working"): "Großvater" is not "Großmutter", "hermana" not
    # "hermano", though their stems meet.
    common_words = common_to([words(fact.text) for fact in facts])
    known = [distinctive_words(fact.text, common_words) for fact in facts]
    for text in found:
        new = stems([text], common)
        whole = distinctive_words(text, common_words)
        if new and (
            any(shared(new, news) for news in edited)
            or any(whole and _says_no_other(whole, said) for said in known)
        ):
            plan.repeats += 1
            continue
        plan.edits.append(Edit("add", text))
    return plan


def _restated(fact: Fact, found: Sequence[str], common: frozenset[str]) -> str | None:
    """The fact found in the words that is ``fact`` as it is now, if one is.

    It shares more than half of the old fact's distinctive words (one shared
    "have" does not make "I have a meeting" the news of "I have two cats"),
    keeps its names and numbers ("Mi hermano vive en Sevilla." is not "Mi
    hermana vive en Madrid." now), and says something the old one did not
    ("My sister lives in Madrid." is no news of "My sister Ana lives in
    Madrid with her two kids.").
    """
    about = stems([fact.text], common)
    names = _names(fact.text)
    best: tuple[int, str] = (0, "")
    for text in found:
        new = stems([text], common)
        count = shared(about, new)
        if (
            2 * count > len(about)
            and shared(names, new) == len(names)
            and not says_no_more(new, about)
            and count > best[0]
        ):
            best = (count, text)
    return best[1] or None


def _names(text: str) -> frozenset[str]:
    """Capitalised words after the first, and numbers: who, where, how many."""
    found = _TOKEN.findall(text)
    return frozenset(
        comparable(word)[:STEM_LENGTH]  # folded as stems are: "Zürich", "zurich"
        for index, word in enumerate(found)
        if (index > 0 and word[:1].isupper()) or any(c.isdigit() for c in word)
    )


def _says_no_other(new: frozenset[str], known: frozenset[str]) -> bool:
    """Each word of ``new`` is one of ``known``, or one with an ending added."""
    return all(
        any(word.startswith(other) or other.startswith(word) for other in known)
        for word in new
    )
