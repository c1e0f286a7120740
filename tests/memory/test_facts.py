"""Tests for the per-speaker fact records and their merge rules (pure, no Home Assistant)."""

from __future__ import annotations

import contextlib
import json
import math
from typing import Any

from hypothesis import given, settings, strategies as st
import pytest

from custom_components.local_assistant.memory.facts import (
    REWRITE_SIMILARITY,
    Fact,
    FactBook,
    HistoryEntry,
    clean_text,
    fact_key,
    new_fact_id,
    text_similarity,
)

T0 = 1_700_000_000.0
DAY = 86_400.0


@pytest.fixture(autouse=True)
def setup_ha() -> None:
    """Override the suite's autouse fixture: these pure tests need no hass."""


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations() -> None:
    """Override the suite's autouse fixture: these pure tests need no hass."""


def _book(
    max_facts: int = 30, max_history: int = 50, max_fact_chars: int = 200
) -> FactBook:
    return FactBook(
        max_facts=max_facts, max_history=max_history, max_fact_chars=max_fact_chars
    )


def _texts(facts: list[Fact]) -> list[str]:
    return [fact.text for fact in facts]


def _reasons(book: FactBook) -> list[tuple[str, str]]:
    return [(entry.fact.text, entry.reason) for entry in book.history]


# --- helpers ------------------------------------------------------------------


def test_new_fact_id_is_short_hex() -> None:
    ids = {new_fact_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(len(i) == 12 and int(i, 16) >= 0 for i in ids)


def test_clean_text_and_key() -> None:
    assert clean_text("  The user\n likes\ttea. ") == "The user likes tea."
    assert fact_key("The USER likes  tea.") == fact_key("the user likes tea.")


@pytest.mark.parametrize(
    ("old", "new", "rewrite"),
    [
        ("The user lives in Berlin.", "The user lives in Munich.", True),
        (
            "The user has a dog named Rex.",
            "The user has two dogs, Rex and Bella.",
            True,
        ),
        (
            "The user works as a nurse.",
            "The user works as a nurse on night shifts.",
            True,
        ),
        ("The user has a dog named Rex.", "The user works as a nurse.", False),
        ("The user's wife is Anna.", "The user's son is Tom.", False),
        ("The user likes jazz.", "The user prefers the bedroom at 18 °C.", False),
        ("The user", "The user", False),  # only stop words: nothing to compare
    ],
)
def test_text_similarity_examples(old: str, new: str, rewrite: bool) -> None:
    assert (text_similarity(old, new) >= REWRITE_SIMILARITY) is rewrite


# --- manual facts ---------------------------------------------------------------


def test_add_manual_is_pinned() -> None:
    book = _book()
    fact = book.add_manual("  The user's   name is Sam. ", T0)
    assert fact.text == "The user's name is Sam."
    assert (fact.source, fact.pinned, fact.protected) == ("manual", True, True)
    assert (fact.created, fact.updated, fact.last_used, fact.use_count) == (
        T0,
        T0,
        None,
        0,
    )
    assert book.facts == [fact]


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_add_manual_rejects_empty(text: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        _book().add_manual(text, T0)


def test_add_manual_rejects_duplicates_case_insensitively() -> None:
    book = _book()
    book.apply_extraction(["The user likes tea."], T0)
    with pytest.raises(ValueError, match="identical"):
        book.add_manual("the USER likes   tea.", T0)
    book.add_manual("The user is vegetarian.", T0)
    with pytest.raises(ValueError, match="identical"):
        book.add_manual("THE USER IS VEGETARIAN.", T0)


def test_add_manual_rejects_too_long_text() -> None:
    with pytest.raises(ValueError, match="longer than 20"):
        _book(max_fact_chars=20).add_manual("x" * 21, T0)


def test_add_manual_fails_when_pinned_facts_fill_the_book() -> None:
    book = _book(max_facts=2)
    book.add_manual("A is one.", T0)
    book.add_manual("B is two.", T0)
    with pytest.raises(ValueError, match="limit of 2"):
        book.add_manual("C is three.", T0)
    assert len(book.facts) == 2


def test_add_manual_pushes_out_the_least_important_extracted_fact() -> None:
    book = _book(max_facts=3)
    book.apply_extraction(["Most important.", "Middle.", "Least important."], T0)
    book.add_manual("The user's name is Sam.", T0 + 1)
    assert _texts(book.active()) == [
        "The user's name is Sam.",
        "Most important.",
        "Middle.",
    ]
    assert _reasons(book) == [("Least important.", "over_limit")]


# --- extraction merge -------------------------------------------------------------


def test_first_extraction_adds_facts() -> None:
    book = _book()
    change = book.apply_extraction(["The user likes tea.", "The user has a cat."], T0)
    assert _texts(change.added) == ["The user likes tea.", "The user has a cat."]
    assert change.changed
    assert all(f.source == "extracted" and not f.pinned for f in book.facts)
    assert all((f.created, f.updated, f.use_count) == (T0, T0, 0) for f in book.facts)


def test_manual_facts_survive_an_empty_extraction() -> None:
    book = _book()
    manual = book.add_manual("The user's name is Sam.", T0)
    book.apply_extraction(["The user likes tea."], T0)
    change = book.apply_extraction([], T0 + 10)
    assert book.facts == [manual]
    assert _texts(change.dropped) == ["The user likes tea."]
    assert _reasons(book) == [("The user likes tea.", "dropped")]


def test_unchanged_texts_keep_their_record() -> None:
    book = _book()
    book.apply_extraction(["The user likes tea.", "The user has a cat."], T0)
    before = {f.text: (f.id, f.created, f.updated) for f in book.facts}
    book.mark_used(T0 + 5)
    change = book.apply_extraction(
        ["  the user has a CAT. ", "The user likes  tea."], T0 + 10
    )
    assert not change.changed
    assert change.added == change.dropped == []
    assert change.rewritten == []
    assert len(change.kept) == 2
    for fact in book.facts:
        assert (fact.id, fact.created, fact.updated) == before[fact.text]
        assert (fact.use_count, fact.last_used) == (1, T0 + 5)
    # Storage order follows the extractor's new importance order.
    assert _texts(book.facts) == ["The user has a cat.", "The user likes tea."]
    assert book.history == []


def test_close_rewrite_supersedes_the_old_fact() -> None:
    book = _book()
    book.apply_extraction(["The user lives in Berlin.", "The user has a cat."], T0)
    old = book.facts[0]
    for _ in range(3):
        book.mark_used(T0 + 1)
    change = book.apply_extraction(
        ["The user lives in Munich.", "The user has a cat."], T0 + DAY
    )
    assert len(change.rewritten) == 1
    gone, new = change.rewritten[0]
    assert gone is old
    assert new.text == "The user lives in Munich."
    assert new.id != old.id
    assert (new.use_count, new.created, new.updated) == (3, T0, T0 + DAY)
    assert change.added == change.dropped == []
    entry = book.history[-1]
    assert (entry.fact.id, entry.reason, entry.replaced_by, entry.at) == (
        old.id,
        "rewritten",
        new.id,
        T0 + DAY,
    )


def test_unrelated_replacement_is_a_drop_and_an_add() -> None:
    book = _book()
    book.apply_extraction(["The user has a dog named Rex."], T0)
    change = book.apply_extraction(["The user works as a nurse."], T0 + 1)
    assert _texts(change.dropped) == ["The user has a dog named Rex."]
    assert _texts(change.added) == ["The user works as a nurse."]
    assert change.rewritten == []
    assert book.history[-1].reason == "dropped"
    assert book.history[-1].replaced_by is None


def test_rewrite_pairs_each_old_fact_once() -> None:
    book = _book()
    book.apply_extraction(["The user lives in Berlin."], T0)
    change = book.apply_extraction(
        ["The user lives in Munich.", "The user lives in Hamburg."], T0 + 1
    )
    assert len(change.rewritten) == 1
    assert _texts(change.added) == ["The user lives in Hamburg."]


def test_extraction_cap_keeps_the_first_texts() -> None:
    book = _book(max_facts=30)
    texts = [f"Fact number {i} about topic{i}." for i in range(45)]
    change = book.apply_extraction(texts, T0)
    assert _texts(book.facts) == texts[:30]
    assert len(change.added) == 30
    assert change.rejected == 15


def test_extraction_cap_counts_pinned_facts_first() -> None:
    book = _book(max_facts=30)
    book.add_manual("The user's name is Sam.", T0)
    book.add_manual("The user is vegetarian.", T0)
    texts = [f"Fact number {i} about topic{i}." for i in range(45)]
    change = book.apply_extraction(texts, T0 + 1)
    assert len(book.facts) == 30
    assert len(change.added) == 28
    assert change.rejected == 17
    assert _texts(book.facts[2:]) == texts[:28]


def test_old_fact_listed_beyond_the_cap_goes_over_limit() -> None:
    book = _book(max_facts=2)
    book.apply_extraction(["Alpha one.", "Beta two."], T0)
    change = book.apply_extraction(["Gamma three.", "Delta four.", "Beta two."], T0 + 1)
    assert _texts(change.over_limit) == ["Beta two."]
    assert _texts(change.dropped) == ["Alpha one."]
    assert change.rejected == 1
    assert sorted(_reasons(book)) == [
        ("Alpha one.", "dropped"),
        ("Beta two.", "over_limit"),
    ]


def test_extraction_never_duplicates_or_touches_manual_facts() -> None:
    book = _book()
    manual = book.add_manual("The user likes tea.", T0)
    change = book.apply_extraction(
        ["the user likes TEA.", "The user has a cat."], T0 + 1
    )
    assert _texts(change.added) == ["The user has a cat."]
    assert book.facts[0] is manual
    assert (manual.text, manual.updated) == ("The user likes tea.", T0)


def test_extraction_texts_are_cleaned_deduplicated_and_capped() -> None:
    book = _book(max_fact_chars=20)
    change = book.apply_extraction(
        ["  The user\n likes tea. ", "the user likes tea.", "x" * 50, "   "], T0
    )
    assert _texts(book.facts) == ["The user likes tea.", "x" * 19 + "…"]
    assert change.rejected == 1  # the blank one
    assert all(len(f.text) <= 20 for f in book.facts)


def test_history_is_bounded_oldest_first() -> None:
    book = _book(max_history=3)
    for i in range(5):
        book.apply_extraction([f"Topic{i} is great."], T0 + i)
    book.apply_extraction([], T0 + 10)
    assert len(book.history) == 3
    assert _texts([entry.fact for entry in book.history]) == [
        "Topic2 is great.",
        "Topic3 is great.",
        "Topic4 is great.",
    ]


def test_zero_history_keeps_nothing() -> None:
    book = _book(max_history=0)
    book.apply_extraction(["The user likes tea."], T0)
    book.apply_extraction([], T0 + 1)
    assert book.history == []


# --- user actions ------------------------------------------------------------------


def test_update_text_creates_a_pinned_version() -> None:
    book = _book()
    book.apply_extraction(["The user likes tea.", "The user has a cat."], T0)
    old = book.facts[0]
    book.mark_used(T0 + 1)
    new = book.update_text(old.id, "The user likes green tea.", T0 + 2)
    assert new.id != old.id
    assert (new.text, new.source, new.pinned) == (
        "The user likes green tea.",
        "manual",
        True,
    )
    assert (new.created, new.updated, new.use_count) == (T0, T0 + 2, 1)
    assert book.facts[0] is new  # same position
    entry = book.history[-1]
    assert (entry.fact, entry.reason, entry.replaced_by) == (old, "rewritten", new.id)
    # The extractor can no longer undo the user's correction.
    book.apply_extraction(["The user likes tea."], T0 + 3)
    assert new in book.facts


def test_update_text_same_text_is_a_no_op() -> None:
    book = _book()
    fact = book.add_manual("The user likes tea.", T0)
    assert book.update_text(fact.id, "  The user likes tea. ", T0 + 1) is fact
    assert book.history == []


def test_update_text_errors() -> None:
    book = _book(max_fact_chars=30)
    tea = book.add_manual("The user likes tea.", T0)
    book.add_manual("The user has a cat.", T0)
    with pytest.raises(KeyError):
        book.update_text("unknown", "x", T0)
    with pytest.raises(ValueError, match="identical"):
        book.update_text(tea.id, "the user has a cat.", T0)
    with pytest.raises(ValueError, match="empty"):
        book.update_text(tea.id, " ", T0)
    with pytest.raises(ValueError, match="longer"):
        book.update_text(tea.id, "y" * 31, T0)
    assert book.facts[0] is tea


def test_remove() -> None:
    book = _book()
    fact = book.add_manual("The user likes tea.", T0)
    assert book.remove(fact.id, T0 + 1) is fact
    assert book.facts == []
    assert _reasons(book) == [("The user likes tea.", "removed")]
    with pytest.raises(KeyError):
        book.remove(fact.id, T0 + 2)


def test_get() -> None:
    book = _book()
    fact = book.add_manual("The user likes tea.", T0)
    assert book.get(fact.id) is fact
    with pytest.raises(KeyError):
        book.get("nope")


def test_clear_everything() -> None:
    book = _book()
    book.add_manual("The user's name is Sam.", T0)
    book.apply_extraction(["The user likes tea."], T0)
    assert book.clear(T0 + 1) == 2
    assert book.facts == []
    assert {entry.reason for entry in book.history} == {"cleared"}


def test_clear_keeps_manual_facts_when_asked() -> None:
    book = _book()
    manual = book.add_manual("The user's name is Sam.", T0)
    book.apply_extraction(["The user likes tea."], T0)
    assert book.clear(T0 + 1, include_manual=False) == 1
    assert book.facts == [manual]


def test_clear_history() -> None:
    book = _book()
    book.apply_extraction(["The user likes tea."], T0)
    book.clear(T0 + 1)
    assert book.clear_history() == 1
    assert book.history == []


def test_restore_brings_a_fact_back_pinned() -> None:
    book = _book()
    book.apply_extraction(["The user likes tea."], T0)
    dropped = book.apply_extraction([], T0 + 1).dropped[0]
    restored = book.restore(dropped.id, T0 + 2)
    assert restored.id == dropped.id
    assert (restored.text, restored.pinned, restored.updated) == (
        "The user likes tea.",
        True,
        T0 + 2,
    )
    assert book.facts == [restored]
    assert book.history == []
    # Pinned: the next extraction cannot drop it again.
    book.apply_extraction([], T0 + 3)
    assert book.facts == [restored]


def test_restore_latest_entry_of_an_id() -> None:
    book = _book()
    fact = book.add_manual("The user likes tea.", T0)
    book.remove(fact.id, T0 + 1)
    assert book.restore(fact.id, T0 + 2).text == "The user likes tea."
    book.remove(fact.id, T0 + 3)
    assert len(book.history) == 1  # the first entry went back on restore
    book.restore(fact.id, T0 + 4)
    assert book.history == []


def test_restore_unknown_id() -> None:
    with pytest.raises(KeyError):
        _book().restore("missing", T0)


def test_restore_fails_on_duplicate_text() -> None:
    book = _book()
    book.apply_extraction(["The user likes tea."], T0)
    dropped = book.apply_extraction([], T0 + 1).dropped[0]
    book.add_manual("THE USER LIKES TEA.", T0 + 2)
    with pytest.raises(ValueError, match="identical"):
        book.restore(dropped.id, T0 + 3)
    assert len(book.history) == 1  # still restorable later


def test_restore_fails_when_pinned_facts_fill_the_book() -> None:
    book = _book(max_facts=1)
    fact = book.add_manual("The user likes tea.", T0)
    book.remove(fact.id, T0 + 1)
    book.add_manual("The user has a cat.", T0 + 2)
    with pytest.raises(ValueError, match="limit of 1"):
        book.restore(fact.id, T0 + 3)
    assert [entry.fact.id for entry in book.history] == [fact.id]


def test_restore_into_a_full_book_pushes_out_an_extracted_fact() -> None:
    book = _book(max_facts=2)
    book.apply_extraction(["The user likes tea.", "The user has a cat."], T0)
    change = book.apply_extraction(
        ["The user plays chess.", "The user cycles daily."], T0 + 1
    )
    assert len(change.dropped) == 2
    restored = book.restore(change.dropped[0].id, T0 + 2)
    assert len(book.facts) == 2
    assert restored in book.facts
    assert book.history[-1].reason == "over_limit"
    assert book.history[-1].fact.text == "The user cycles daily."


def test_restore_of_an_id_that_is_active_again_fails() -> None:
    book = _book()
    book.apply_extraction(["The user likes tea."], T0)
    fact = book.facts[0]
    book.apply_extraction([], T0 + 1)
    book.restore(fact.id, T0 + 2)
    # A hand-built history entry reusing an active id must not create twins.
    book.history.append(HistoryEntry(fact, "removed", T0 + 3))
    with pytest.raises(ValueError, match="id"):
        book.restore(fact.id, T0 + 4)


# --- ranking --------------------------------------------------------------------


def test_active_ranks_pinned_first_then_used_then_new() -> None:
    book = _book()
    book.apply_extraction(["Older fact one.", "Older fact two."], T0)
    for day in range(1, 4):
        book.mark_used(T0 + day * DAY)
    book.apply_extraction(
        ["Older fact one.", "Older fact two.", "Brand new fact."], T0 + 4 * DAY
    )
    manual = book.add_manual("The user's name is Sam.", T0 + 5 * DAY)
    ranked = book.active()
    assert ranked[0] is manual
    assert _texts(ranked[1:]) == [
        "Older fact one.",
        "Older fact two.",
        "Brand new fact.",
    ]
    assert [f.use_count for f in ranked] == [0, 3, 3, 0]


def test_mark_used_bumps_counts_and_times() -> None:
    book = _book()
    book.apply_extraction(["A is one.", "B is two."], T0)
    book.mark_used(T0 + 10)
    book.mark_used(T0 + 20, [book.facts[1].id])
    a, b = book.facts
    assert (a.use_count, a.last_used) == (1, T0 + 10)
    assert (b.use_count, b.last_used) == (2, T0 + 20)
    assert _texts(book.active()) == ["B is two.", "A is one."]


def test_ties_keep_the_extractor_order() -> None:
    book = _book()
    texts = [
        "Zeta is last alphabetically.",
        "Alpha is first alphabetically.",
        "Mid is here.",
    ]
    book.apply_extraction(texts, T0)
    assert _texts(book.active()) == texts


def test_recently_touched_fact_can_outrank_a_stale_used_one() -> None:
    stale = Fact("a", "Stale.", T0, T0, T0, 1, "extracted", False)
    fresh = Fact("b", "Fresh.", T0, T0 + 30 * DAY, None, 0, "extracted", False)
    book = _book()
    book.facts = [stale, fresh]
    assert book.active() == [fresh, stale]


# --- limits after load ------------------------------------------------------------


def test_enforce_limits_after_lowering_max_facts() -> None:
    book = _book(max_facts=5)
    manual = book.add_manual("The user's name is Sam.", T0)
    book.apply_extraction(["One one.", "Two two.", "Three three.", "Four four."], T0)
    lowered = FactBook.from_dict(book.to_dict(), max_facts=3)
    assert len(lowered.facts) == 5  # loading alone changes nothing
    moved = lowered.enforce_limits(T0 + 1)
    assert _texts(moved) == ["Three three.", "Four four."]
    assert _texts(lowered.facts) == [manual.text, "One one.", "Two two."]
    assert {entry.reason for entry in lowered.history} == {"over_limit"}
    assert lowered.enforce_limits(T0 + 2) == []


def test_enforce_limits_never_moves_pinned_facts() -> None:
    book = _book(max_facts=3)
    for text in ("A is one.", "B is two.", "C is three."):
        book.add_manual(text, T0)
    lowered = FactBook.from_dict(book.to_dict(), max_facts=1)
    assert lowered.enforce_limits(T0 + 1) == []
    assert len(lowered.facts) == 3


# --- persistence ------------------------------------------------------------------


def _populated_book() -> FactBook:
    book = _book()
    book.add_manual("The user's name is Sam.", T0)
    book.apply_extraction(
        ["The user lives in Berlin.", "The user has a cat.", "Ünïcödé fact."], T0
    )
    book.mark_used(T0 + 1)
    book.apply_extraction(["The user lives in Munich.", "Ünïcödé fact."], T0 + 2)
    return book


def test_round_trip_through_json() -> None:
    book = _populated_book()
    data = json.loads(json.dumps(book.to_dict()))
    again = FactBook.from_dict(data, max_facts=30)
    assert again.facts == book.facts
    assert again.history == book.history
    assert again.to_dict() == book.to_dict()
    assert {entry.reason for entry in again.history} == {"rewritten", "dropped"}


def test_from_dict_trims_history_to_the_new_bound() -> None:
    book = _populated_book()
    again = FactBook.from_dict(book.to_dict(), max_facts=30, max_history=1)
    assert again.history == book.history[-1:]


def test_fact_from_dict_fills_optional_keys() -> None:
    fact = Fact.from_dict({"id": "abc", "text": " The user  likes tea. ", "created": 5})
    assert fact == Fact(
        "abc", "The user likes tea.", 5.0, 5.0, None, 0, "extracted", False
    )
    manual = Fact.from_dict({"id": "m", "text": "x", "created": 1, "source": "manual"})
    assert manual.pinned is True


def test_from_dict_ignores_unknown_keys() -> None:
    data: dict[str, Any] = _populated_book().to_dict()
    data["future"] = 1
    data["facts"][0]["future_field"] = "x"
    assert len(FactBook.from_dict(data, max_facts=30).facts) == 3


def test_book_without_history_key_loads() -> None:
    assert FactBook.from_dict({"facts": []}, max_facts=30).history == []


_GOOD_FACT: dict[str, Any] = {"id": "abc", "text": "The user likes tea.", "created": T0}


def _with(**changes: Any) -> dict[str, Any]:
    fact = {**_GOOD_FACT, **changes}
    return {key: value for key, value in fact.items() if value is not _MISSING}


_MISSING = object()


@pytest.mark.parametrize(
    "data",
    [
        pytest.param([], id="not-a-mapping"),
        pytest.param({}, id="no-facts"),
        pytest.param({"facts": {}}, id="facts-not-list"),
        pytest.param({"facts": [], "history": {}}, id="history-not-list"),
        pytest.param({"facts": ["text"]}, id="fact-not-object"),
        pytest.param({"facts": [_with(id=_MISSING)]}, id="missing-id"),
        pytest.param({"facts": [_with(id="")]}, id="empty-id"),
        pytest.param({"facts": [_with(text=_MISSING)]}, id="missing-text"),
        pytest.param({"facts": [_with(text="  ")]}, id="blank-text"),
        pytest.param({"facts": [_with(text=3)]}, id="text-not-str"),
        pytest.param({"facts": [_with(created=_MISSING)]}, id="missing-created"),
        pytest.param({"facts": [_with(created="yesterday")]}, id="created-str"),
        pytest.param({"facts": [_with(created=True)]}, id="created-bool"),
        pytest.param({"facts": [_with(created=math.nan)]}, id="created-nan"),
        pytest.param({"facts": [_with(updated=None)]}, id="updated-null"),
        pytest.param({"facts": [_with(last_used="x")]}, id="last-used-str"),
        pytest.param({"facts": [_with(use_count=-1)]}, id="negative-use-count"),
        pytest.param({"facts": [_with(use_count=1.5)]}, id="float-use-count"),
        pytest.param({"facts": [_with(use_count=True)]}, id="bool-use-count"),
        pytest.param({"facts": [_with(source="guessed")]}, id="bad-source"),
        pytest.param({"facts": [_with(pinned="yes")]}, id="pinned-str"),
        pytest.param({"facts": [_GOOD_FACT, _GOOD_FACT]}, id="duplicate-ids"),
        pytest.param(
            {
                "facts": [],
                "history": [{"fact": _GOOD_FACT, "reason": "lost", "at": T0}],
            },
            id="bad-reason",
        ),
        pytest.param(
            {"facts": [], "history": [{"fact": _GOOD_FACT, "reason": "dropped"}]},
            id="history-missing-at",
        ),
        pytest.param(
            {"facts": [], "history": [{"reason": "dropped", "at": T0}]},
            id="history-missing-fact",
        ),
        pytest.param(
            {
                "facts": [],
                "history": [
                    {
                        "fact": _GOOD_FACT,
                        "reason": "dropped",
                        "at": T0,
                        "replaced_by": 5,
                    }
                ],
            },
            id="bad-replaced-by",
        ),
    ],
)
def test_from_dict_rejects_bad_data(data: Any) -> None:
    with pytest.raises(ValueError) as err:
        FactBook.from_dict(data, max_facts=30)
    # Error messages name keys and positions, never fact text (personal data).
    assert "likes tea" not in str(err.value)


def test_book_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="negative"):
        FactBook(max_facts=-1)
    with pytest.raises(ValueError, match="max_fact_chars"):
        FactBook(max_facts=3, max_fact_chars=1)


# --- properties -------------------------------------------------------------------

# A small vocabulary so that generated lists collide: unchanged facts, case and
# whitespace variants, near rewrites and unrelated texts all occur.
_SUBJECTS = ["likes", "owns", "lives in", "works at", "visits"]
_OBJECTS = ["tea", "jazz", "Berlin", "Munich", "a cat", "a dog named Rex", "the gym"]
_FACT_TEXT = st.one_of(
    st.builds(
        lambda subject, obj, shout, pad: (" " * pad)
        + (
            f"The user {subject} {obj}.".upper()
            if shout
            else f"The user {subject} {obj}."
        ),
        st.sampled_from(_SUBJECTS),
        st.sampled_from(_OBJECTS),
        st.booleans(),
        st.integers(0, 2),
    ),
    st.text(min_size=0, max_size=30),
)
_FACT_LISTS = st.lists(_FACT_TEXT, max_size=12)


@settings(max_examples=300, deadline=None)
@given(
    max_facts=st.integers(1, 8),
    max_history=st.integers(0, 10),
    manual_texts=st.lists(_FACT_TEXT, max_size=4),
    runs=st.lists(st.tuples(_FACT_LISTS, st.booleans()), min_size=1, max_size=6),
)
def test_extraction_never_loses_facts(
    max_facts: int,
    max_history: int,
    manual_texts: list[str],
    runs: list[tuple[list[str], bool]],
) -> None:
    book = _book(max_facts=max_facts, max_history=max_history, max_fact_chars=40)
    manual: list[Fact] = []
    for text in manual_texts:
        # Blank, duplicate, too long or book full: the rules say no.
        with contextlib.suppress(ValueError):
            manual.append(book.add_manual(text, T0))
    now = T0
    for texts, use in runs:
        now += 60
        olds = [fact for fact in book.facts if not fact.protected]
        history_before = len(book.history)
        change = book.apply_extraction(texts, now)
        active_ids = {fact.id for fact in book.facts}
        history_ids = {entry.fact.id for entry in book.history}

        # Manual facts are never lost or changed, and the cap holds.
        assert [f for f in book.facts if f.protected] == manual
        assert len(book.facts) <= max_facts
        assert len({fact_key(f.text) for f in book.facts}) == len(book.facts)
        assert all(len(f.text) <= 40 for f in book.facts)

        # Every old extracted fact is kept, or archived, exactly once.
        gone = change.dropped + change.over_limit + [old for old, _ in change.rewritten]
        assert sorted(f.id for f in change.kept + gone) == sorted(f.id for f in olds)
        assert all(f.id in active_ids for f in change.kept)
        archived = len(gone)
        evicted = max(0, history_before + archived - max_history)
        lost = [f for f in gone if f.id not in history_ids]
        assert len(lost) <= evicted
        assert len(book.history) <= max_history

        # Rewrites carry their usage over.
        for old, new in change.rewritten:
            assert new.use_count == old.use_count
            assert new.id in active_ids
        if use:
            book.mark_used(now)

    again = FactBook.from_dict(
        json.loads(json.dumps(book.to_dict())),
        max_facts=max_facts,
        max_history=max_history,
    )
    assert again.facts == book.facts
    assert again.history == book.history
