"""What HA's own sentence data says about a language's words (turn/vocabulary.py)."""

from __future__ import annotations

import pytest

from custom_components.local_assistant.turn.vocabulary import (
    Vocabulary,
    intents_language,
    load_vocabulary,
    words,
)

LANGUAGES = ("en", "de", "fr", "nl", "es")
# Negations of each language: never a word HA's sentences leave out, so a
# follow-up never loses one on its way to HA ("don't turn it off").
NEGATIONS = {
    "en": ("not", "don't", "never", "no"),
    "de": ("nicht", "kein", "keine", "nie"),
    "fr": ("ne", "pas", "jamais", "n'éteins"),
    "nl": ("niet", "geen", "nooit"),
    "es": ("no", "nunca", "ni"),
}


def _vocabulary(language: str) -> Vocabulary:
    """HA's words of a language it has sentences for."""
    vocabulary = load_vocabulary(language)
    assert vocabulary is not None
    return vocabulary


@pytest.mark.parametrize("language", LANGUAGES)
def test_negations_are_never_optional(language: str) -> None:
    vocabulary = _vocabulary(language)
    assert vocabulary.optional  # the data is read, not empty
    assert not set(NEGATIONS[language]) & vocabulary.optional


@pytest.mark.parametrize(
    ("language", "word"),
    [
        ("en", "again"),
        ("en", "please"),
        ("es", "el"),
        ("nl", "weer"),
        ("de", "bitte"),
    ],
)
def test_words_ha_leaves_out(language: str, word: str) -> None:
    """Optional in HA's commands, a skip phrase's or a stop word."""
    vocabulary = _vocabulary(language)
    assert vocabulary.leaves_out(word) or vocabulary.skips(word)


@pytest.mark.parametrize(
    ("language", "word"),
    [
        ("en", "is"),  # "what [is] the temperature": a question's
        ("fr", "encore"),  # "[il reste] [encore] combien": a question's
        ("vi", "không"),  # a question's particle, a negation elsewhere
        ("fr", "non"),  # "[non] rien": never mind
        ("sl", "ne"),  # "kakš[na|ne|en]": a glued ending
        ("de", "ich"),  # of the skip phrase "ich möchte" only
    ],
)
def test_words_commands_do_not_leave_out(language: str, word: str) -> None:
    """Found by review: optional words of HA's questions, chat intents and
    glued endings, and the words of skip phrases one by one, were taken for
    words any command may leave out; "Ne ugasni ..." (don't switch off) and
    "Is the living room on?" after a command then changed a device."""
    vocabulary = _vocabulary(language)
    assert not vocabulary.leaves_out(word)


@pytest.mark.parametrize(
    ("language", "text", "kinds"),
    [
        ("en", "kill the lights in the study", {"light"}),
        ("en", "get the blinds down a bit", {"blind", "cover"}),
        ("de", "mach mal das Licht im Flur an", {"light"}),
        ("de", "die Rollläden runter", {"shutter", "cover"}),
        ("fr", "ferme les volets de la chambre", {"shutter", "cover"}),
        ("nl", "doe de gordijnen dicht", {"curtain", "cover"}),
        ("es", "apaga las luces del salón", {"light"}),
        # Words that name no device.
        ("en", "what could I cook in the kitchen tonight?", set()),
        ("de", "Was kann ich heute in der Küche kochen?", set()),
    ],
)
def test_device_words(language: str, text: str, kinds: set[str]) -> None:
    vocabulary = _vocabulary(language)
    assert vocabulary.device_words_in(text) == kinds


def test_language_variants_and_unknown_languages() -> None:
    assert intents_language("de-CH") == "de-CH"
    assert intents_language("en-GB") == "en"
    assert intents_language("pt_BR") in ("pt-BR", "pt")
    assert intents_language("zh-Hant") in ("zh-HK", "zh-TW")
    # Found by review: HA reads zh-TW with its own (Mandarin) sentences.
    assert intents_language("zh-TW") == "zh-TW"
    assert intents_language("zh-HK") == "zh-HK"
    assert intents_language("no") == "nb"
    assert intents_language("xx") is None
    assert load_vocabulary("xx") is None


def test_words() -> None:
    assert words("¿Y el salón? l'eau, don't 12") == [
        "y",
        "el",
        "salón",
        "l'eau",
        "don't",
    ]


@pytest.mark.parametrize("language", ["en", "de", "fr", "nl", "es"])
def test_domains_ha_changes(language: str) -> None:
    """HA's sentences change vacuums and to-do lists, and only read the weather."""
    vocabulary = _vocabulary(language)
    assert {"vacuum", "todo", "lock", "cover"} <= vocabulary.changed_domains
    assert not {"weather", "sensor", "binary_sensor"} & vocabulary.changed_domains


QUESTIONS_AND_COMMANDS = {
    "en": (
        ["Are the sprinklers on?", "Please tell me, is the garage open?"],
        ["Turn on the sprinklers", "Can you turn on the light?", "Pop the kettle on"],
    ),
    "de": (
        ["Ist die Balkontür zu?", "Wie warm ist es im Bad?"],
        ["Schalte die Sprinkler an", "Kannst du das Licht anmachen?"],
    ),
    "fr": (
        ["Combien de lumières sont allumées ?", "Quelle est la température ?"],
        ["Allume les arroseurs", "Tu peux allumer la lumière ?"],
    ),
    "nl": (
        ["Staat de kachel aan?", "Hoe warm is het in de woonkamer?"],
        ["Zet de sproeiers aan", "Kun je de lamp aanzetten?"],
    ),
    "es": (
        ["¿Está abierta la ventana?", "¿Hay luces encendidas?"],
        ["Enciende los aspersores", "¿Puedes encender la luz?"],
    ),
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_words_that_open_a_question(language: str) -> None:
    """HA's reading sentences start with them and its changing ones never do;
    a polite command opens otherwise."""
    vocabulary = _vocabulary(language)
    questions, commands = QUESTIONS_AND_COMMANDS[language]
    assert all(vocabulary.opens_a_question(text) for text in questions)
    assert not any(vocabulary.opens_a_question(text) for text in commands)


@pytest.mark.parametrize(
    ("language", "whole", "cut"), [("nl", "staat", "staa"), ("es", "qué", "qu")]
)
def test_a_word_a_template_cuts_is_no_opener(
    language: str, whole: str, cut: str
) -> None:
    """ "(staa|zit)[t|n]", "qu(é|e)": only the whole words open a question."""
    vocabulary = _vocabulary(language)
    assert whole in vocabulary.question_openers
    assert cut not in vocabulary.question_openers


@pytest.mark.parametrize(
    ("language", "text", "asks"),
    [
        ("fr", "Il fait beau.", False),  # "il" opens HA's "il fait combien ?"
        ("fr", "Il fait combien dans le salon", True),  # speech-to-text, no mark
        ("en", "What a day!", False),
        ("en", 'Is the bedroom light on? Please answer "yes" or "no".', True),
        ("en", "Is it 21.5 degrees in here?", True),
        ("de", "Wie schön.", False),
        # A clause that starts as HA's commands makes it a command (review);
        # one said inside a question does not ("... cuando se abre").
        ("en", "Is it possible to turn on the kitchen?", True),
        ("en", "It is dark, turn on the kitchen", False),
        ("de", "Es ist dunkel, mach das Licht an", False),
        ("fr", "Il fait sombre, allume la cuisine", False),
        ("nl", "Staat de lamp aan? Zet hem uit", False),
        # Device words and states are no command words.
        ("en", "Are the lights on?", True),
        ("en", "Is the garage door open?", True),
    ],
)
def test_how_a_question_opens(language: str, text: str, asks: bool) -> None:
    vocabulary = _vocabulary(language)
    assert vocabulary.opens_a_question(text) is asks


@pytest.mark.parametrize(
    ("language", "text", "asks"),
    [
        ("en", "Will it rain tomorrow?", True),
        ("en", "Tell me a joke", True),
        ("en", "Can you turn the volume down?", False),
        ("en", "Turn the volume down to 50%", False),
        ("de", "Regnet es morgen?", True),
        ("fr", "Tu peux baisser le volume ?", False),
        ("nl", "Gaat het morgen regenen?", True),
        ("es", "¿Va a llover mañana?", True),
    ],
)
def test_words_that_ask(language: str, text: str, asks: bool) -> None:
    """A question mark or a question's opening, and no word HA's commands start with."""
    vocabulary = _vocabulary(language)
    assert vocabulary.asks(text) is asks


@pytest.mark.parametrize(
    ("language", "text", "commands"),
    [
        ("en", "Turn the volume down to 50%", True),
        ("en", "My dog is called Bolt.", False),
        ("de", "Schalte das Radio leiser", True),
        ("fr", "Mon chien s'appelle Bolt.", False),
        # A clause must start with the word, after words HA may leave out.
        ("en", "Close the garage.", True),
        ("en", "Is the garage open?", False),  # a state, not a command word
        ("en", "It was 21.5 next to the window.", False),  # "next" is one
        ("fr", "Bon, ouvre-moi le garage.", True),
        ("es", "La puerta del garaje chirría cada vez que se abre.", False),
    ],
)
def test_words_that_command(language: str, text: str, commands: bool) -> None:
    vocabulary = _vocabulary(language)
    assert vocabulary.says_a_command_word(text) is commands


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # HA writes these verbs glued from parts: "apag(a|ue|ar|á)",
        # "enc[i]end(a|e|er|é)", "schalt[e|et]", "accend(i|ere)".
        ("es", "Apaga la tele del salón."),
        ("es", "Enciende el ventilador"),
        ("es", "Sube las persianas"),
        ("de", "Schalte den Fernseher aus."),
        ("it", "Accendi la luce"),
        ("en", "Set the oven to 200 degrees."),
    ],
)
def test_glued_command_words(language: str, text: str) -> None:
    assert _vocabulary(language).says_a_command_word(text)


@pytest.mark.parametrize(
    ("language", "text", "word"),
    [
        # HA's sentences say these inside far more often than they start a
        # command with them: words of any sentence.
        ("es", "Compré un regalo para mi madre.", "para"),
        ("de", "Ich habe einen Hund.", "einen"),
        ("de", "Alle meine Freunde wohnen hier.", "alle"),
        ("nl", "Elke ochtend fiets ik naar mijn werk.", "elke"),
        ("fr", "Ma chanson préférée est triste.", "chanson"),
        ("en", "The volume of this book is small.", "volume"),
    ],
)
def test_words_said_inside_sentences_are_no_command_words(
    language: str, text: str, word: str
) -> None:
    vocabulary = _vocabulary(language)
    assert word not in vocabulary.command_words
    assert not vocabulary.says_a_command_word(text)


@pytest.mark.parametrize(
    ("language", "misheard", "meant"),
    [
        ("fr", ("et", "mais", "état", "été", "faire"), ("éteins", "mets")),
        ("de", ("macht", "setzt", "fahrt"), ("mach", "setze", "fahr")),
    ],
)
def test_words_speech_to_text_mishears_are_no_command_words(
    language: str, misheard: tuple[str, ...], meant: tuple[str, ...]
) -> None:
    """HA's rules of misheard words ("mets_dirty": "mais") stand for another
    word: they open HA's commands only in its place."""
    vocabulary = _vocabulary(language)
    assert not set(misheard) & vocabulary.command_words
    assert set(meant) <= vocabulary.command_words


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("fr", "Et demain, il va pleuvoir ?"),
        ("fr", "Dans quel état est la porte du garage ?"),
        ("fr", "Mais qu'est-ce que je peux faire ce soir ?"),
        ("de", "Was macht das Wetter morgen?"),
    ],
)
def test_questions_with_a_misheard_word_still_ask(language: str, text: str) -> None:
    """ "et", "état", "faire", "macht" are ordinary words of a question."""
    assert _vocabulary(language).asks(text)
