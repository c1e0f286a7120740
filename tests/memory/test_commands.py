"""Memory commands read by our sentences (memory/commands.py): pure reading.

What the sentence files read in each of our languages, what they leave to
the model, and which notes the words of "forget that ..." name.
"""

from __future__ import annotations

import pytest

from custom_components.local_assistant.llm.sentences import SPOKEN_LANGUAGES
from custom_components.local_assistant.memory.commands import (
    MemoryAction,
    MemoryCommand,
    load_command_sentences,
    notes_about,
    notes_named,
    read_command,
)

READ = MemoryAction.READ
TOPIC = MemoryAction.READ_TOPIC
FORGET = MemoryAction.FORGET
REMEMBER = MemoryAction.REMEMBER


def read(text: str, language: str) -> MemoryCommand | None:
    sentences = load_command_sentences(language)
    assert sentences is not None
    return read_command(text, sentences)


def test_every_language_we_speak_has_the_four_commands() -> None:
    for language in SPOKEN_LANGUAGES:
        sentences = load_command_sentences(language)
        assert sentences is not None, language
        assert set(sentences.intents.intents) == {
            action.value for action in MemoryAction
        }
        # HA's skip words for the language ("please", "bitte").
        assert sentences.skip_words, language
    assert load_command_sentences("xx") is None


@pytest.mark.parametrize(
    ("language", "text", "action", "words"),
    [
        ("en", "What do you remember about me?", READ, ""),
        ("en", "what have you learned about me", READ, ""),
        ("en", "What do you know about my brother?", TOPIC, "brother"),
        ("en", "Please forget that I hate olives.", FORGET, "I hate olives"),
        (
            "en",
            "Could you remember that my car is a red Fiat",
            REMEMBER,
            "my car is a red Fiat",
        ),
        ("en", "Don't forget that Sam is vegan, please.", REMEMBER, "Sam is vegan"),
        ("es", "¿Qué recuerdas de mí?", READ, ""),
        ("es", "¿Qué sabes de mi trabajo?", TOPIC, "trabajo"),
        ("es", "Olvida que odio las aceitunas", FORGET, "odio las aceitunas"),
        (
            "es",
            "Acuérdate de que mi coche es un Seat rojo",
            REMEMBER,
            "mi coche es un Seat rojo",
        ),
        ("de", "Was hast du über mich gespeichert?", READ, ""),
        ("de", "Was weißt du über meine Schwester?", TOPIC, "Schwester"),
        ("de", "Vergiss, dass ich Oliven hasse.", FORGET, "ich Oliven hasse"),
        (
            "de",
            "Merk dir bitte, dass ich noch gerne Jazz mag",
            REMEMBER,
            "ich noch gerne Jazz mag",
        ),
        ("fr", "Qu'est-ce que tu as retenu sur moi ?", READ, ""),
        ("fr", "Que sais-tu de ma voiture ?", TOPIC, "voiture"),
        ("fr", "Oublie que je déteste les olives", FORGET, "je déteste les olives"),
        (
            "fr",
            "N'oublie pas que Jean-Marc est végétarien",
            REMEMBER,
            "Jean Marc est végétarien",
        ),
        ("nl", "Wat heb je over mij onthouden?", READ, ""),
        ("nl", "Wat weet je over mijn zus?", TOPIC, "zus"),
        ("nl", "Vergeet dat ik olijven haat", FORGET, "ik olijven haat"),
        (
            "nl",
            "Onthoud even dat mijn auto een rode Fiat is",
            REMEMBER,
            "mijn auto een rode Fiat is",
        ),
    ],
)
def test_commands_are_read_with_their_words(
    language: str, text: str, action: MemoryAction, words: str
) -> None:
    """Skip words go only at the ends ("noch" stays in the fact)."""
    assert read(text, language) == MemoryCommand(action, words)


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "Never mind, forget it."),
        ("en", "Remind me to water the plants."),
        ("en", "Do you remember that song from the radio?"),
        ("en", "What do you know about Paris?"),
        ("es", "Olvídalo."),
        ("es", "Recuérdame llamar a mamá."),
        ("de", "Vergiss nicht, mich um sechs zu wecken."),
        ("de", "Ach, vergiss es."),
        ("fr", "Laisse tomber, oublie ça."),
        ("fr", "Rappelle-moi d'appeler le plombier."),
        ("nl", "Laat maar, vergeet het."),
        ("nl", "Herinner me aan de vuilnis."),
    ],
)
def test_look_alikes_are_left_to_the_model(language: str, text: str) -> None:
    assert read(text, language) is None


def test_a_politeness_word_ending_a_fact_stays_without_a_comma() -> None:
    """ "for me" is an English skip word; at the end it is cut after a comma only."""
    assert read("Remember that the blue mug is for me", "en") == MemoryCommand(
        REMEMBER, "the blue mug is for me"
    )
    assert read("Remember that the blue mug is mine, please", "en") == MemoryCommand(
        REMEMBER, "the blue mug is mine"
    )


NOTES = [
    "I like jazz.",
    "I like hiking.",
    "My sister Grace lives in Leeds.",
    "I have a cat.",
    "I have two kids.",
]


@pytest.mark.parametrize(
    ("said", "named"),
    [
        ("I like jazz", [0]),
        ("I really like jazz music", [0]),
        ("my sister is Grace", [2]),
        ("my sister lives in York", []),  # two of four, and "York" is not the note's
        ("I like opera", []),  # half a note is not enough
        ("I have a cat", [3]),  # "have" fits two notes; "cat" tells them apart
        ("it does not matter", []),
    ],
)
def test_the_notes_the_words_name(said: str, named: list[int]) -> None:
    assert notes_named(NOTES, said) == named


def test_words_every_note_shares_name_nothing() -> None:
    notes = [
        "Der Benutzer mag Jazz.",
        "Der Benutzer wohnt in Ulm.",
        "Der Benutzer hat einen Hund.",
    ]
    assert notes_named(notes, "der Benutzer") == []
    assert notes_named(notes, "der Benutzer wohnt in Ulm") == [1]


def test_a_topic_of_a_short_word_finds_its_notes() -> None:
    notes = ["Our dog Rex is five.", "I work as a nurse.", "The dog sleeps upstairs."]
    assert notes_about(notes, "dog") == [0, 2]
    assert notes_about(notes, "job") == []
