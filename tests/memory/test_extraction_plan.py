"""How an exchange becomes edits (pure, no Home Assistant): a scripted model answers."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from custom_components.local_assistant.memory.extraction_plan import (
    MAX_UPDATE_CANDIDATES,
    Plan,
    async_plan_hosted,
    async_plan_small,
    related_facts,
)
from custom_components.local_assistant.memory.extraction_prompt import (
    MESSAGE_LABEL,
    NOTE_LABEL,
    NOTES_LABEL,
    ExtractionParseError,
)
from custom_components.local_assistant.memory.facts import Edit, Fact
from custom_components.local_assistant.wording import says_no_more, shared, stems

T0 = 1_700_000_000.0


@pytest.fixture(autouse=True)
def setup_ha() -> None:
    """Override the suite's autouse fixture: these pure tests need no hass."""


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations() -> None:
    """Override the suite's autouse fixture: these pure tests need no hass."""


def facts(*texts: str, pinned: int = 0) -> list[Fact]:
    """Facts with ids f0, f1, ...; the first ``pinned`` of them protected."""
    return [
        Fact(
            f"f{index}",
            text,
            T0,
            T0,
            source="manual" if index < pinned else "extracted",
        )
        for index, text in enumerate(texts)
    ]


class Model:
    """Answers the fact task with ``found``, update tasks by the note they quote."""

    def __init__(self, found: str, updates: dict[str, str] | None = None) -> None:
        self.found = found
        self.updates = updates or {}
        self.asked: list[str] = []

    async def __call__(self, messages: list[dict[str, str]]) -> str:
        last = messages[-1]["content"]
        self.asked.append(last)
        if last.startswith(NOTE_LABEL):
            quoted = last.splitlines()[0].removeprefix(NOTE_LABEL)
            note = quoted.strip('"')
            return self.updates.get(note, note)  # unchanged by default
        assert last.startswith(MESSAGE_LABEL)
        return self.found

    @property
    def notes_asked(self) -> list[str]:
        return [
            text.splitlines()[0].removeprefix(NOTE_LABEL).strip('"')
            for text in self.asked
            if text.startswith(NOTE_LABEL)
        ]


async def small(
    model: Callable[..., object], known: list[Fact], said: str, **kwargs: int
) -> Plan:
    return await async_plan_small(
        model, known, said, max_adds=kwargs.pop("max_adds", 6), **kwargs
    )  # type: ignore[arg-type]


# --- stems ---------------------------------------------------------------------------


def test_stems_meet_across_inflections() -> None:
    assert (
        shared(
            stems(["Ich wohne in Altona."]), stems(["Wir wohnen jetzt in Eimsbüttel."])
        )
        == 1
    )
    assert shared(stems(["I collect jokes."]), stems(["Tell me a joke."])) == 1
    assert (
        shared(stems(["My sister is a pharmacist."]), stems(["She left the pharmacy."]))
        == 1
    )
    assert shared(stems(["I have a cat."]), stems(["I have a car."])) == 1  # "have"
    assert not says_no_more(stems(["Mia is seven."]), stems(["My daughter Mia swims."]))
    assert says_no_more(
        stems(["I work as a nurse."]), stems(["I work as a nurse at night."])
    )
    assert not says_no_more(frozenset(), stems(["anything at all"]))


def test_related_facts_ignore_words_most_facts_share() -> None:
    """German notes all saying "Der Benutzer ...": that relates nothing."""
    known = facts(
        "Der Benutzer wohnt in Freiburg.",
        "Der Benutzer hat einen Hund namens Bello.",
        "Der Benutzer ist Diabetiker.",
    )
    assert related_facts(known, ["Der Benutzer mag Jazz."], 5) == []
    assert related_facts(known, ["Bello ist krank."], 5) == [known[1]]


def test_related_facts_most_shared_first_never_protected() -> None:
    known = facts(
        "I drive a red Volvo.",
        "The Volvo is parked in the garage.",
        "My red Volvo is from 2010.",
        "I run.",
        pinned=1,
    )
    assert related_facts(known, ["I sold my red Volvo from 2010."], 5) == [
        known[2],
        known[1],
    ]


# --- the small model's plan ------------------------------------------------------------


async def test_new_facts_with_nothing_related_cost_one_call() -> None:
    model = Model("Mein Hund heißt Bello.\nIch wohne in Ulm.")
    plan = await small(
        model, facts("I play chess."), "Mein Hund heißt Bello und ich wohne in Ulm."
    )
    assert plan.calls == 1
    assert plan.edits == [
        Edit("add", "Mein Hund heißt Bello."),
        Edit("add", "Ich wohne in Ulm."),
    ]


async def test_a_new_version_replaces_the_fact_and_the_same_news_is_not_added() -> None:
    known = facts("Ich wohne in Altona.", "Ich spiele Handball.")
    model = Model(
        "Wir wohnen jetzt in Eimsbüttel.",
        {"Ich wohne in Altona.": "Ich wohne in Eimsbüttel."},
    )
    plan = await small(
        model, known, "Wir sind umgezogen, wir wohnen jetzt in Eimsbüttel."
    )
    assert model.notes_asked == ["Ich wohne in Altona."]
    assert plan.edits == [Edit("replace", "Ich wohne in Eimsbüttel.", "f0")]
    assert plan.repeats == 1


async def test_news_sharing_one_word_with_a_removed_fact_is_added_beside_it() -> None:
    """ "Shelly died last winter." is not "We have a tortoise called Shelly." as it
    is now (one word of four shared): nothing is dropped, the news is added."""
    known = facts("We have a tortoise called Shelly.", "I cycle to work.")
    model = Model(
        "Shelly died last winter.", {"We have a tortoise called Shelly.": "REMOVE"}
    )
    plan = await small(model, known, "Shelly died last winter.")
    assert plan.edits == [Edit("add", "Shelly died last winter.")]
    assert plan.removals_not_taken == 1


@pytest.mark.parametrize(
    ("known", "found", "said"),
    [
        (
            "I have two cats.",
            "I have a meeting tomorrow at nine.",
            "I have a meeting tomorrow at nine.",
        ),
        (
            "Mi hermana vive en Madrid.",
            "Mi hermano vive en Sevilla.",
            "Mi hermano vive en Sevilla.",
        ),
        (
            "Ich habe eine Katze.",
            "Ich habe morgen eine Prüfung.",
            "Ich habe morgen eine Prüfung.",
        ),
    ],
)
async def test_a_remove_never_replaces_a_fact_with_other_news(
    known: str, found: str, said: str
) -> None:
    """Found by review: one shared long word ("have", "habe", "vive") was enough."""
    model = Model(found, {known: "REMOVE"})
    plan = await small(model, facts(known), said)
    assert all(edit.kind == "add" for edit in plan.edits)


async def test_a_new_version_that_copies_other_news_weighs_as_remove() -> None:
    """The 0.5B answers the new fact as the dog note's new version: a copy
    of a fact found in the words is taken only as a REMOVE is."""
    cat = "Tengo una gata que se llama Luna."
    known = facts("Mi perro se llama Bolt.")
    model = Model(cat, {"Mi perro se llama Bolt.": cat})
    plan = await small(model, known, "Tengo una gata nueva, se llama Luna.")
    assert plan.edits == [Edit("add", cat)]
    assert plan.removals_not_taken == 1


async def test_a_shorter_restatement_answered_remove_keeps_the_whole_fact() -> None:
    known = facts("My sister Ana lives in Madrid with her two kids.")
    model = Model(
        "My sister lives in Madrid.",
        {"My sister Ana lives in Madrid with her two kids.": "REMOVE"},
    )
    plan = await small(model, known, "As I said, my sister lives in Madrid.")
    assert plan.edits == []


async def test_a_restated_fact_answered_remove_is_kept() -> None:
    """Seen on the bundled model (held-out memory set): the update task read
    the restated negation as an end, and the fact was gone."""
    known = facts("Ich esse kein Schweinefleisch.", "Ich wohne in Leipzig.")
    model = Model(
        "Ich esse kein Schweinefleisch.",
        {"Ich esse kein Schweinefleisch.": "REMOVE"},
    )
    plan = await small(model, known, "Wie gesagt, Schweinefleisch esse ich nicht.")
    assert plan.edits == []
    assert plan.repeats == 1


async def test_a_contradiction_answered_remove_takes_the_new_version() -> None:
    known = facts("I don't eat pork.")
    model = Model("I eat pork again.", {"I don't eat pork.": "REMOVE"})
    plan = await small(model, known, "I eat pork again these days.")
    assert plan.edits == [Edit("replace", "I eat pork again.", "f0")]


async def test_a_name_said_without_its_accent_is_the_same_name() -> None:
    """Speech-to-text writes "Lucia" for "Lucía": the news still replaces it."""
    known = facts("Mi hija Lucía estudia en Madrid.")
    model = Model(
        "Mi hija Lucia trabaja en Madrid.",
        {"Mi hija Lucía estudia en Madrid.": "REMOVE"},
    )
    plan = await small(model, known, "mi hija lucia ya no estudia, trabaja en madrid")
    assert plan.edits == [Edit("replace", "Mi hija Lucia trabaja en Madrid.", "f0")]


async def test_the_small_models_remove_alone_keeps_the_fact() -> None:
    """ "Hugo et moi, c'est fini": NONE from the fact task, REMOVE from the
    update task. The small model answers so to restatements and unrelated
    words as well, so alone it never drops a fact (the person can)."""
    known = facts("Mon compagnon s'appelle Hugo.")
    model = Model("NONE", {"Mon compagnon s'appelle Hugo.": "REMOVE"})
    plan = await small(model, known, "Hugo et moi, c'est fini.")
    assert model.notes_asked == ["Mon compagnon s'appelle Hugo."]
    assert plan.edits == []
    assert plan.removals_not_taken == 1


async def test_a_repeat_in_other_words_is_not_added() -> None:
    known = facts("I work as a nurse at the hospital.")
    model = Model("I work as a nurse.")
    plan = await small(model, known, "As I said, I'm a nurse.")
    assert plan.edits == []
    assert plan.repeats == 1


async def test_another_ending_is_another_word_for_a_repeat() -> None:
    """ "hermana" is not "hermano", though their stems meet: no repeat."""
    known = facts("Mi hermano vive en Sevilla.")
    model = Model("Mi hermana vive en Sevilla.")
    plan = await small(model, known, "Mi hermana también vive en Sevilla.")
    assert plan.edits == [Edit("add", "Mi hermana vive en Sevilla.")]
    assert plan.repeats == 0


async def test_more_about_a_remembered_person_is_added() -> None:
    known = facts("My daughter Mia swims on Tuesdays.")
    model = Model("Mia is seven years old.")
    plan = await small(model, known, "Mia is seven years old.")
    assert plan.edits == [Edit("add", "Mia is seven years old.")]


async def test_at_most_max_candidates_are_asked_about() -> None:
    known = facts(
        *(f"My garden roses number {n} are white." for n in range(5)),
        *(f"My sister number {n} lives abroad." for n in range(5)),
    )
    model = Model("My garden roses are red now.")
    await small(model, known, "My garden roses are red now.")
    assert len(model.notes_asked) == MAX_UPDATE_CANDIDATES


@pytest.mark.parametrize("answer", ['{"note": 1}', "A b.\nC d.", "", "<b>x</b>"])
async def test_an_unusable_update_keeps_the_fact(answer: str) -> None:
    known = facts("I drive a red Volvo.")
    model = Model("I wash the Volvo on Sundays.", {"I drive a red Volvo.": answer})
    plan = await small(model, known, "I wash the Volvo on Sundays.")
    assert plan.edits == [Edit("add", "I wash the Volvo on Sundays.")]
    assert plan.unusable_updates == 1


async def test_examples_of_the_prompt_are_never_edits() -> None:
    known = facts("I drive a red Volvo.")
    model = Model(
        "I have two cats, Luna and Sol.\nI like tea.",
        {"I drive a red Volvo.": "Mi oficina está arriba."},
    )
    plan = await small(model, known, "I like tea and my Volvo is clean.")
    assert plan.edits == [Edit("add", "I like tea.")]
    assert plan.copied == 1


async def test_a_small_models_additions_stop_at_max_adds() -> None:
    model = Model("\n".join(f"I like colour number {n}." for n in range(9)))
    plan = await small(model, [], "I like many colours.", max_adds=4)
    assert [edit.text for edit in plan.edits] == [
        f"I like colour number {n}." for n in range(4)
    ]
    assert plan.over_limit == 5


async def test_a_junk_first_answer_raises() -> None:
    with pytest.raises(ExtractionParseError):
        await small(Model("NONE\nI like tea."), [], "I like tea.")


# --- the hosted model's plan -------------------------------------------------------------


async def test_hosted_numbers_become_ids() -> None:
    known = facts("I live in Berlin.", "I play tennis.", "I have a cat.")
    asked: list[str] = []

    async def model(messages: list[dict[str, str]]) -> str:
        asked.append(messages[-1]["content"])
        return (
            "REPLACE 1: I live in Munich.\nREMOVE 2\nADD: I work as a nurse.\n"
            "ADD: I have two cats, Luna and Sol."
        )

    plan = await async_plan_hosted(model, known, "I moved to Munich...", max_adds=16)
    assert asked[0].startswith(NOTES_LABEL)
    assert plan.calls == 1
    assert plan.edits == [
        Edit("replace", "I live in Munich.", "f0"),
        Edit("remove", fact_id="f1"),
        Edit("add", "I work as a nurse."),
    ]
    assert plan.copied == 1
