"""Tests for the per-speaker fact records and their merge rules (pure, no Home Assistant)."""

from __future__ import annotations

import contextlib
import json
import math
from typing import Any

from hypothesis import given, settings, strategies as st
import pytest

from custom_components.local_assistant.memory.facts import (
    Edit,
    ExtractionChange,
    Fact,
    FactBook,
    HistoryEntry,
    clean_text,
    new_fact_id,
)
from custom_components.local_assistant.wording import (
    comparable,
    distinctive_words,
    words,
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


def _extract(book: FactBook, texts: list[str], now: float) -> ExtractionChange:
    """Add what an extractor found, one text after the other."""
    change = ExtractionChange()
    for text in texts:
        change.merge(book.add_extracted(text, now))
    return change


def _use(book: FactBook, now: float, facts: list[Fact] | None = None) -> None:
    """Count a use of the given facts (all by default), as a relevant reply would."""
    for fact in book.facts if facts is None else facts:
        fact.use_count += 1
        fact.last_used = now


# --- helpers ------------------------------------------------------------------


def test_new_fact_id_is_short_hex() -> None:
    ids = {new_fact_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(len(i) == 12 and int(i, 16) >= 0 for i in ids)


def test_clean_text_and_key() -> None:
    assert clean_text("  The user\n likes\ttea. ") == "The user likes tea."
    assert comparable("The USER likes  tea.") == comparable("the user likes tea.")


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("The user likes tea.", "  the user likes TEA ", True),
        ("Mi hija se llama Lucía.", "mi hija se llama lucia!", True),
        ("Ich esse Schweinefleisch.", "Ich esse kein Schweinefleisch.", False),
        ("The user likes tea.", "The user likes tea a lot.", False),
        ("Je n'aime pas le café.", "Je n'aime pas le café", True),
    ],
)
def test_comparable(first: str, second: str, same: bool) -> None:
    """The same words in the same order, whatever the case, accents and punctuation."""
    assert (comparable(first) == comparable(second)) is same


@pytest.mark.parametrize(
    ("text", "common", "words"),
    [
        ("My dog is called Bolt.", set(), {"called", "bolt"}),
        ("Der Benutzer ist Diabetiker.", {"benutzer"}, {"diabetiker"}),
        ("Mijn man heet Tom.", set(), {"mijn", "heet", "tom"}),
        ("Tom heet Mijn.", set(), {"heet", "mijn"}),
        ("I run every morning at 7.", set(), {"every", "morning", "7"}),
        ("Mi hija se llama Lucía.", set(), {"hija", "llama", "lucia"}),
        ("Die Katze ist alt.", set(), {"katze"}),
        ("Tom", set(), set()),
        ("Kate gave up.", set(), {"kate", "gave"}),
    ],
)
def test_distinctive_words(text: str, common: set[str], words: set[str]) -> None:
    """Long words, numbers and names; short function words and common words never."""
    assert distinctive_words(text, frozenset(common)) == words


def test_words_keep_the_vowel_signs_of_their_script() -> None:
    """Python's word class has no combining marks: Hindi "बारिश" (rain) was
    three words, so a Hindi fact had no distinctive word."""
    assert words("मुझे बारिश पसंद है।") == ["मुझे", "बारिश", "पसंद", "है"]
    assert distinctive_words("मुझे बारिश पसंद है।", frozenset()) == {
        "मुझे",
        "बारिश",
        "पसंद",
    }
    assert len(words("আমার মেয়ের নাম মিয়া।")) == 4
    assert comparable("मुझे बारिश पसंद है।") != comparable("मुझे बारिश पसंद नहीं है।")
    # A mark counts only on a letter: an emoji's selector is no word.
    assert words("I ❤️ tea") == ["i", "tea"]
    assert comparable("I ❤️ tea") == comparable("I ❤ tea")


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
    _extract(book, ["The user likes tea."], T0)
    with pytest.raises(ValueError, match="identical"):
        book.add_manual("the USER likes   tea.", T0)
    book.add_manual("The user is vegetarian.", T0)
    with pytest.raises(ValueError, match="identical"):
        book.add_manual("THE USER IS VEGETARIAN.", T0)


def test_pin_text_makes_the_same_extracted_fact_the_users() -> None:
    """ "Remember that I like tea" when the extractor already has it (by voice)."""
    book = _book()
    _extract(book, ["The user likes tea.", "The user sails."], T0)
    fact = book.pin_text("the USER likes   tea.", T0 + 5)
    assert fact is not None
    assert (fact.text, fact.source, fact.pinned, fact.updated) == (
        "The user likes tea.",
        "manual",
        True,
        T0 + 5,
    )
    assert book.pin_text("The user likes coffee.", T0) is None
    assert [fact.protected for fact in book.facts] == [True, False]


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


def test_add_manual_pushes_out_the_least_useful_extracted_fact() -> None:
    book = _book(max_facts=3)
    _extract(book, ["Alpha is used."], T0)
    _extract(book, ["Beta is old and unused."], T0)
    _extract(book, ["Gamma is new."], T0 + DAY)
    _use(book, T0 + 1, book.facts[:1])
    book.add_manual("The user's name is Sam.", T0 + 2 * DAY)
    assert _texts(book.active()) == [
        "The user's name is Sam.",
        "Alpha is used.",
        "Gamma is new.",
    ]
    assert _reasons(book) == [("Beta is old and unused.", "over_limit")]


# --- what extraction adds -----------------------------------------------------------


def test_extracted_facts_are_added_unpinned() -> None:
    book = _book()
    change = _extract(book, ["The user likes tea.", "The user has a cat."], T0)
    assert _texts(change.added) == ["The user likes tea.", "The user has a cat."]
    assert change.changed
    assert all(f.source == "extracted" and not f.pinned for f in book.facts)
    assert all((f.created, f.updated, f.use_count) == (T0, T0, 0) for f in book.facts)


@pytest.mark.parametrize(
    "again", ["  the user likes TEA a lot ", "The user likes tea a lot!"]
)
def test_a_repeat_word_for_word_is_not_added(again: str) -> None:
    book = _book()
    _extract(book, ["The user likes tea a lot."], T0)
    before = list(book.facts)
    change = book.add_extracted(again, T0 + 1)
    assert not change.changed
    assert change.duplicates == 1
    assert book.facts == before


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The user eats pork.", "The user doesn't eat pork."),
        ("Ich esse Schweinefleisch.", "Ich esse kein Schweinefleisch."),
        ("The user likes tea.", "The user likes tea with milk."),
    ],
)
def test_other_words_are_never_taken_for_a_repeat(old: str, new: str) -> None:
    """Whether two wordings say the same is the extractor's call, not a word count."""
    book = _book()
    _extract(book, [old], T0)
    change = book.add_extracted(new, T0 + 1)
    assert _texts(change.added) == [new]


def test_supersede_replaces_an_extracted_fact() -> None:
    book = _book()
    _extract(book, ["The user lives in Berlin.", "The user has a cat."], T0)
    old = book.facts[0]
    for _ in range(3):
        _use(book, T0 + 1, [old])
    change = book.supersede(old.id, "The user lives in Munich.", T0 + DAY)
    ((gone, new),) = change.rewritten
    assert gone is old
    assert new.id != old.id
    assert (new.text, new.use_count, new.created, new.updated) == (
        "The user lives in Munich.",
        3,
        T0,
        T0 + DAY,
    )
    assert _texts(book.facts) == ["The user lives in Munich.", "The user has a cat."]
    entry = book.history[-1]
    assert (entry.fact.id, entry.reason, entry.replaced_by, entry.at) == (
        old.id,
        "rewritten",
        new.id,
        T0 + DAY,
    )


def test_supersede_onto_an_existing_fact_retires_the_old_one() -> None:
    book = _book()
    _extract(book, ["The user drives a red Volvo.", "The user sold the Volvo."], T0)
    volvo, sold = book.facts
    change = book.supersede(volvo.id, "The user sold the Volvo.", T0 + 1)
    assert change.rewritten == [(volvo, sold)]
    assert book.facts == [sold]
    assert book.history[-1].replaced_by == sold.id


def test_supersede_and_drop_edge_cases() -> None:
    book = _book()
    manual = book.add_manual("The user's name is Sam.", T0)
    _extract(book, ["The user likes tea."], T0)
    tea = book.facts[1]
    with pytest.raises(ValueError, match="protected"):
        book.supersede(manual.id, "The user's name is Max.", T0)
    with pytest.raises(ValueError, match="protected"):
        book.drop(manual.id, T0)
    with pytest.raises(KeyError):
        book.supersede("unknown", "x", T0)
    with pytest.raises(KeyError):
        book.drop("unknown", T0)
    assert not book.supersede(tea.id, " the user likes TEA! ", T0).changed
    assert book.facts[1] is tea


def test_apply_edits_by_id() -> None:
    """Replacements and removals first (they make room), then additions."""
    book = _book(max_facts=3)
    _extract(book, ["I live in Berlin.", "I play tennis.", "I have a cat."], T0)
    berlin, tennis, cat = book.facts
    change = book.apply_edits(
        [
            Edit("add", "I work as a nurse."),
            Edit("replace", "I live in Munich.", berlin.id),
            Edit("remove", fact_id=tennis.id),
        ],
        T0 + 1,
    )
    assert _texts(book.facts) == [
        "I live in Munich.",
        "I have a cat.",
        "I work as a nurse.",
    ]
    assert _texts(change.added) == ["I work as a nurse."]
    assert [(old.text, new.text) for old, new in change.rewritten] == [
        ("I live in Berlin.", "I live in Munich.")
    ]
    assert change.dropped == [tennis]
    assert change.over_limit == []
    assert _reasons(book) == [
        ("I live in Berlin.", "rewritten"),
        ("I play tennis.", "dropped"),
    ]
    assert book.facts[1] is cat


def test_apply_edits_never_touches_protected_facts() -> None:
    """A replacement of a person's fact is added beside it; a removal is refused."""
    book = _book()
    manual = book.add_manual("I drive a red Volvo.", T0)
    restored_source = book.add_manual("I have a cat.", T0)
    change = book.apply_edits(
        [
            Edit("replace", "I sold the Volvo.", manual.id),
            Edit("remove", fact_id=restored_source.id),
            Edit("remove", fact_id="gone"),
        ],
        T0 + 1,
    )
    assert _texts(book.facts) == [
        "I drive a red Volvo.",
        "I have a cat.",
        "I sold the Volvo.",
    ]
    assert change.rejected == 2
    assert book.history == []


def test_extraction_never_touches_manual_facts() -> None:
    book = _book()
    manual = book.add_manual("The user works as a nurse.", T0)
    assert book.add_extracted("the user works as a NURSE.", T0 + 1).duplicates == 1
    change = book.add_extracted("The user works as a nurse at the hospital.", T0 + 1)
    assert len(change.added) == 1
    assert book.facts[0] is manual
    assert (manual.text, manual.updated) == ("The user works as a nurse.", T0)


def test_a_full_book_makes_room_by_usefulness() -> None:
    book = _book(max_facts=2)
    _extract(book, ["Alpha one."], T0)
    _extract(book, ["Beta two."], T0 + 1)
    _use(book, T0 + 2, book.facts[:1])
    change = book.add_extracted("Gamma three.", T0 + 3)
    assert _texts(change.over_limit) == ["Beta two."]
    assert _texts(book.facts) == ["Alpha one.", "Gamma three."]
    assert _reasons(book) == [("Beta two.", "over_limit")]


def test_a_book_full_of_pinned_facts_rejects_extracted_ones() -> None:
    book = _book(max_facts=1)
    book.add_manual("The user's name is Sam.", T0)
    change = book.add_extracted("The user likes tea.", T0)
    assert change.rejected == 1
    assert not change.changed
    assert _book(max_facts=0).add_extracted("The user likes tea.", T0).rejected == 1


def test_extracted_texts_are_cleaned_and_capped() -> None:
    book = _book(max_fact_chars=20)
    change = _extract(book, ["  The user\n likes tea. ", "x" * 50, "   "], T0)
    # Too long is not kept cut: a fact's end (a door code) would be lost.
    assert _texts(book.facts) == ["The user likes tea."]
    assert change.rejected == 2  # the long one and the blank one
    assert all(len(f.text) <= 20 for f in book.facts)


def test_note_use_counts_relevant_facts_only() -> None:
    book = _book()
    _extract(book, ["The user is vegetarian.", "The user's dog is called Bolt."], T0)
    veg, dog = book.facts
    used = book.note_use(["What should I cook?", "A vegetarian curry, maybe."], T0 + 5)
    assert used == [veg]
    assert (veg.use_count, veg.last_used) == (1, T0 + 5)
    assert (dog.use_count, dog.last_used) == (0, None)
    assert book.note_use(["Turn on the light.", "Done."], T0 + 6) == []


def test_note_use_ignores_what_every_fact_says() -> None:
    """German facts all say "Der Benutzer ..."; "die" and "ist" are in every answer."""
    book = _book()
    _extract(
        book,
        [
            "Der Benutzer ist Diabetiker.",
            "Der Benutzer hat einen Hund namens Bello.",
            "Der Benutzer wohnt in Freiburg.",
        ],
        T0,
    )
    diabetic, dog, home = book.facts
    assert book.note_use(["Die Lampe ist an, der Benutzer ist da."], T0 + 1) == []
    assert book.note_use(["Wie geht es Bello?", "Bello geht es gut."], T0 + 2) == [dog]
    assert book.note_use(["Was soll ich als Diabetiker essen?"], T0 + 3) == [diabetic]
    assert home.use_count == 0


def test_history_is_bounded_oldest_first() -> None:
    book = _book(max_history=3)
    for i in range(5):
        _extract(book, [f"Topic{i} is great."], T0 + i)
        book.remove(book.facts[0].id, T0 + i)
    assert len(book.history) == 3
    assert _texts([entry.fact for entry in book.history]) == [
        "Topic2 is great.",
        "Topic3 is great.",
        "Topic4 is great.",
    ]


def test_zero_history_keeps_nothing() -> None:
    book = _book(max_history=0)
    _extract(book, ["The user lives in Berlin."], T0)
    book.supersede(book.facts[0].id, "The user lives in Munich.", T0 + 1)
    assert book.history == []


# --- user actions ------------------------------------------------------------------


def test_update_text_creates_a_pinned_version() -> None:
    book = _book()
    _extract(book, ["The user likes tea.", "The user has a cat."], T0)
    old = book.facts[0]
    _use(book, T0 + 1, [old])
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
    with pytest.raises(ValueError, match="protected"):
        book.supersede(new.id, "The user likes tea.", T0 + 3)
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
    _extract(book, ["The user likes tea."], T0)
    assert book.clear(T0 + 1) == 2
    assert book.facts == []
    assert {entry.reason for entry in book.history} == {"cleared"}


def test_clear_keeps_manual_facts_when_asked() -> None:
    book = _book()
    manual = book.add_manual("The user's name is Sam.", T0)
    _extract(book, ["The user likes tea."], T0)
    assert book.clear(T0 + 1, include_manual=False) == 1
    assert book.facts == [manual]


def test_clear_history() -> None:
    book = _book()
    _extract(book, ["The user likes tea."], T0)
    book.clear(T0 + 1)
    assert book.clear_history() == 1
    assert book.history == []


def test_restore_brings_a_fact_back_pinned() -> None:
    book = _book()
    _extract(book, ["The user lives in Berlin."], T0)
    old = book.facts[0]
    book.supersede(old.id, "The user lives in Munich.", T0 + 1)
    munich = book.facts[0]
    restored = book.restore(old.id, T0 + 2)
    assert restored.id == old.id
    assert (restored.text, restored.pinned, restored.updated) == (
        "The user lives in Berlin.",
        True,
        T0 + 2,
    )
    # The rewrite it had become retires, restorable in turn.
    assert book.facts == [restored]
    assert [(e.fact, e.reason, e.replaced_by) for e in book.history] == [
        (munich, "rewritten", old.id)
    ]
    # Pinned: extraction can no longer rewrite it.
    with pytest.raises(ValueError, match="protected"):
        book.supersede(restored.id, "The user lives in Paris.", T0 + 3)


def test_restoring_a_version_retires_the_latest_rewrite_of_it() -> None:
    """Berlin -> Munich -> Paris; Berlin restored: Paris, the active end, retires."""
    book = _book()
    _extract(book, ["The user lives in Berlin.", "The user likes tea."], T0)
    berlin = book.facts[0]
    book.supersede(berlin.id, "The user lives in Munich.", T0 + 1)
    book.supersede(book.facts[0].id, "The user lives in Paris.", T0 + 2)
    paris = book.facts[0]
    book.restore(berlin.id, T0 + 3)
    assert _texts(book.facts) == ["The user likes tea.", "The user lives in Berlin."]
    assert (book.history[-1].fact, book.history[-1].replaced_by) == (paris, berlin.id)


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
    _extract(book, ["The user likes tea."], T0)
    dropped = book.remove(book.facts[0].id, T0 + 1)
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
    _extract(book, ["The user likes tea."], T0)
    _extract(book, ["The user has a cat."], T0 + 1)
    change = _extract(book, ["The user plays chess.", "The user cycles daily."], T0 + 2)
    assert _texts(change.over_limit) == ["The user likes tea.", "The user has a cat."]
    restored = book.restore(change.over_limit[0].id, T0 + 3)
    assert len(book.facts) == 2
    assert restored in book.facts
    assert book.history[-1].reason == "over_limit"
    assert book.history[-1].fact.text == "The user plays chess."


def test_restore_of_an_id_that_is_active_again_fails() -> None:
    book = _book()
    _extract(book, ["The user likes tea."], T0)
    fact = book.remove(book.facts[0].id, T0 + 1)
    book.restore(fact.id, T0 + 2)
    # A hand-built history entry reusing an active id must not create twins.
    book.history.append(HistoryEntry(fact, "removed", T0 + 3))
    with pytest.raises(ValueError, match="id"):
        book.restore(fact.id, T0 + 4)


# --- ranking --------------------------------------------------------------------


def test_active_ranks_pinned_first_then_used_then_new() -> None:
    book = _book()
    _extract(book, ["Older fact one.", "Older fact two."], T0)
    for day in range(1, 4):
        _use(book, T0 + day * DAY)
    _extract(book, ["Brand new fact."], T0 + 4 * DAY)
    manual = book.add_manual("The user's name is Sam.", T0 + 5 * DAY)
    ranked = book.active()
    assert ranked[0] is manual
    assert _texts(ranked[1:]) == [
        "Older fact one.",
        "Older fact two.",
        "Brand new fact.",
    ]
    assert [f.use_count for f in ranked] == [0, 3, 3, 0]


def test_use_ranks_a_fact_up() -> None:
    book = _book()
    _extract(book, ["The user likes tea.", "The user has a kitten."], T0)
    book.note_use(["Do you want a kitten picture?"], T0 + 10)
    book.note_use(["My kitten is asleep."], T0 + 20)
    tea, cat = book.facts
    assert (tea.use_count, tea.last_used) == (0, None)
    assert (cat.use_count, cat.last_used) == (2, T0 + 20)
    assert book.active() == [cat, tea]


def test_ties_keep_storage_order() -> None:
    book = _book()
    texts = [
        "Zeta is last alphabetically.",
        "Alpha is first alphabetically.",
        "Mid is here.",
    ]
    _extract(book, texts, T0)
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
    for day, text in enumerate(["One one.", "Two two.", "Three three.", "Four four."]):
        _extract(book, [text], T0 + day * DAY)
    _use(book, T0 + 5 * DAY, book.facts[1:2])
    lowered = FactBook.from_dict(book.to_dict(), max_facts=3)
    assert len(lowered.facts) == 5  # loading alone changes nothing
    moved = lowered.enforce_limits(T0 + 6 * DAY)
    # Least useful first: used or recent facts stay.
    assert _texts(moved) == ["Three three.", "Two two."]
    assert _texts(lowered.facts) == [manual.text, "One one.", "Four four."]
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
    _extract(
        book, ["The user lives in Berlin.", "The user has a cat.", "Ünïcödé fact."], T0
    )
    _use(book, T0 + 1)
    book.supersede(book.facts[1].id, "The user lives in Munich.", T0 + 2)
    book.remove(book.facts[2].id, T0 + 2)
    return book


def test_round_trip_through_json() -> None:
    book = _populated_book()
    data = json.loads(json.dumps(book.to_dict()))
    again = FactBook.from_dict(data, max_facts=30)
    assert again.facts == book.facts
    assert again.history == book.history
    assert again.to_dict() == book.to_dict()
    assert {entry.reason for entry in again.history} == {"rewritten", "removed"}


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
    runs=st.lists(
        st.tuples(
            _FACT_LISTS,
            st.lists(st.integers(0, 9), max_size=2),
            st.lists(st.integers(0, 9), max_size=2),
            st.booleans(),
        ),
        min_size=1,
        max_size=6,
    ),
)
def test_extraction_never_loses_facts(
    max_facts: int,
    max_history: int,
    manual_texts: list[str],
    runs: list[tuple[list[str], list[int], list[int], bool]],
) -> None:
    """Any edits by id, of any facts (protected ones too): nothing is ever lost."""
    book = _book(max_facts=max_facts, max_history=max_history, max_fact_chars=40)
    manual: list[Fact] = []
    for text in manual_texts:
        # Blank, duplicate, too long or book full: the rules say no.
        with contextlib.suppress(ValueError):
            manual.append(book.add_manual(text, T0))
    now = T0
    for texts, rewrites, removals, use in runs:
        now += 60
        olds = [fact for fact in book.facts if not fact.protected]
        history_before = len(book.history)
        shown = list(book.facts)
        edits = [
            Edit("replace", text, shown[pick % len(shown)].id)
            for pick, text in zip(rewrites, texts, strict=False)
            if shown
        ]
        edits += [
            Edit("remove", fact_id=shown[pick % len(shown)].id)
            for pick in removals
            if shown
        ]
        edits += [Edit("add", text) for text in texts]
        change = book.apply_edits(edits, now)
        active_ids = {fact.id for fact in book.facts}
        history_ids = {entry.fact.id for entry in book.history}

        # Manual facts are never lost or changed, and the cap holds.
        assert [f for f in book.facts if f.protected] == manual
        assert len(book.facts) <= max_facts
        assert len({comparable(f.text) for f in book.facts}) == len(book.facts)
        assert all(len(f.text) <= 40 for f in book.facts)

        # Every old extracted fact is still active, or archived exactly once.
        gone = change.over_limit + change.dropped + [old for old, _ in change.rewritten]
        assert len({f.id for f in gone}) == len(gone)
        for fact in olds:
            assert (fact.id in active_ids) != (fact in gone)
        archived = len(gone)
        evicted = max(0, history_before + archived - max_history)
        lost = [f for f in gone if f.id not in history_ids]
        assert len(lost) <= evicted
        assert len(book.history) <= max_history

        # Rewrites carry their usage over.
        for old, new in change.rewritten:
            assert new.use_count >= old.use_count
        if use:
            _use(book, now)

    again = FactBook.from_dict(
        json.loads(json.dumps(book.to_dict())),
        max_facts=max_facts,
        max_history=max_history,
    )
    assert again.facts == book.facts
    assert again.history == book.history
