"""Memory commands read by our sentences (memory/commands.py): pure reading.

What the sentence files read in each of our languages, what they leave to
the model, and which notes the words of "forget that ..." name.
"""

from __future__ import annotations

import pytest

from custom_components.local_assistant.llm.sentences import (
    SPOKEN_LANGUAGES,
    best_language,
)
from custom_components.local_assistant.memory.commands import (
    COMMAND_LANGUAGES,
    SENTENCES,
    MemoryAction,
    MemoryCommand,
    load_command_sentences,
    notes_about,
    notes_named,
    notes_touched,
    read_command,
)

READ = MemoryAction.READ
TOPIC = MemoryAction.READ_TOPIC
FORGET = MemoryAction.FORGET
ABOUT = MemoryAction.FORGET_ABOUT
REMEMBER = MemoryAction.REMEMBER


def read(text: str, language: str) -> MemoryCommand | None:
    sentences = load_command_sentences(language)
    assert sentences is not None
    return read_command(text, sentences)


def test_every_language_we_speak_has_every_command() -> None:
    files = sorted(path.stem for path in SENTENCES.glob("*.yaml"))
    assert sorted(COMMAND_LANGUAGES) == files
    # Every language with commands is one we speak; a regional variant we
    # translate (pt-BR) reads its language's commands.
    assert set(COMMAND_LANGUAGES) <= set(SPOKEN_LANGUAGES)
    assert best_language("pt-BR", COMMAND_LANGUAGES) == "pt"
    for language in COMMAND_LANGUAGES:
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
            "Jean-Marc est végétarien",
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
        (
            "en",
            "Forget about my yoga class, I stopped.",
            ABOUT,
            "my yoga class",
        ),
        ("es", "Olvídate del gimnasio", ABOUT, "gimnasio"),
        ("de", "Vergiss bitte alles über meinen Chor", ABOUT, "meinen Chor"),
        ("fr", "Oublie ce que tu sais sur mon club de foot", ABOUT, "mon club de foot"),
        ("nl", "Vergeet alles over de tennisclub", ABOUT, "de tennisclub"),
        ("en", "Forget number three.", MemoryAction.FORGET_NUMBER, "3"),
        ("es", "Olvida el número 2", MemoryAction.FORGET_NUMBER, "2"),
        ("de", "Vergiss Nummer zwei", MemoryAction.FORGET_NUMBER, "2"),
        ("fr", "Oublie le numéro deux", MemoryAction.FORGET_NUMBER, "2"),
        ("nl", "Vergeet nummer 4", MemoryAction.FORGET_NUMBER, "4"),
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
        # A pause, a question, or a one-word "fact": no command.
        ("en", "Forget that, turn on the kitchen light."),
        ("en", "Note that down."),
        ("en", "Remember that song?"),
        ("en", "Remember that time we went to Paris?"),
        ("nl", "Vergeet dat maar."),
        ("nl", "Onthoud dat goed."),
        ("de", "Merk dir das."),
        # Only politeness where the fact would be (HA's skip words).
        ("en", "Remember that for me."),
        ("nl", "Onthoud dat voor mij."),
        ("nl", "Onthoud dat voor me, alsjeblieft."),
        # A second sentence in the "fact", and a sentence end inside it.
        ("en", "Remember that I like jazz. Also turn off the lights."),
        ("en", "Remember that my doctor is Dr. Smith"),
        # A year or a code ends a sentence (an ordinal "4." does not).
        ("en", "Remember that I was born in 1990. Turn off the light."),
        ("es", "Recuerda que nací en 1990. Apaga la luz."),
        ("en", "Forget that my code is 4411. Turn on the light."),
    ],
)
def test_look_alikes_are_left_to_the_model(language: str, text: str) -> None:
    assert read(text, language) is None


NUMBER = MemoryAction.FORGET_NUMBER


@pytest.mark.parametrize(
    ("language", "text", "action", "words"),
    [
        ("it", "Cosa ricordi di me?", READ, ""),
        ("it", "Cosa sai di mia sorella?", TOPIC, "sorella"),
        ("it", "Dimenticati che mi piace il jazz", FORGET, "mi piace il jazz"),
        ("it", "Dimenticati della maratona, ho rinunciato", ABOUT, "maratona"),
        ("it", "Cancella la nota numero tre", NUMBER, "3"),
        (
            "it",
            "Per favore, ricorda che ho un cane di nome Fido",
            REMEMBER,
            "ho un cane di nome Fido",
        ),
        ("pt", "O que sabes sobre mim?", READ, ""),
        ("pt", "O que você lembra sobre minha mãe?", TOPIC, "mãe"),
        ("pt", "Esquece que eu gosto de jazz", FORGET, "eu gosto de jazz"),
        ("pt", "Apaga a nota número três", NUMBER, "3"),
        (
            "pt",
            "Guarda que a minha bicicleta é azul, por favor",
            REMEMBER,
            "a minha bicicleta é azul",
        ),
        ("ca", "Què saps de mi?", READ, ""),
        ("ca", "Què saps de la meva germana?", TOPIC, "germana"),
        ("ca", "Oblida que m'agrada el jazz", FORGET, "m'agrada el jazz"),
        ("ca", "Oblida't de la marató, ho he deixat", ABOUT, "marató"),
        ("ca", "Recorda't que m'agrada el jazz", REMEMBER, "m'agrada el jazz"),
        ("pl", "Co o mnie wiesz?", READ, ""),
        ("pl", "Co wiesz o mojej siostrze?", TOPIC, "siostrze"),
        ("pl", "Zapomnij, że nie jem oliwek.", FORGET, "nie jem oliwek"),
        ("pl", "Zapomnij numer dwa", NUMBER, "2"),
        (
            "pl",
            "Pamiętaj, że mam alergię na orzechy",
            REMEMBER,
            "mam alergię na orzechy",
        ),
        ("cs", "Co o mně víš?", READ, ""),
        ("cs", "Zapomeň, že nejím olivy.", FORGET, "nejím olivy"),
        ("cs", "Smaž všechno o maratonu", ABOUT, "maratonu"),
        (
            "cs",
            "Zapamatuj si, že můj bratr Tomáš bydlí v Brně",
            REMEMBER,
            "můj bratr Tomáš bydlí v Brně",
        ),
        ("ru", "Что ты знаешь обо мне?", READ, ""),
        ("ru", "Что ты знаешь о моей сестре?", TOPIC, "сестре"),
        ("ru", "Забудь, что я люблю джаз.", FORGET, "я люблю джаз"),
        ("ru", "Забудь всё про марафон, я передумал.", ABOUT, "марафон"),
        # A possessive is no word of the topic ("minha" would name other notes).
        ("pt", "Esquece tudo sobre a minha irmã", ABOUT, "irmã"),
        ("ca", "Oblida't de la meva germana", ABOUT, "germana"),
        ("ru", "Забудь о моей сестре", ABOUT, "сестре"),
        ("ru", "Забудь номер три.", NUMBER, "3"),
        ("ru", "Пожалуйста, запомни, что я не ем мясо.", REMEMBER, "я не ем мясо"),
        ("sv", "Vad vet du om mig?", READ, ""),
        ("sv", "Vad vet du om min fru?", TOPIC, "fru"),
        ("sv", "Glöm att jag gillar jazz", FORGET, "jag gillar jazz"),
        ("sv", "Glöm nummer tre", NUMBER, "3"),
        (
            "sv",
            "Glöm inte att vi har en katt som heter Måns",
            REMEMBER,
            "vi har en katt som heter Måns",
        ),
        ("da", "Hvad ved du om mig?", READ, ""),
        ("da", "Du kan godt glemme, at jeg har en hund", FORGET, "jeg har en hund"),
        ("da", "Slet note nummer 2", NUMBER, "2"),
        ("da", "Husk, at jeg kan lide jazz.", REMEMBER, "jeg kan lide jazz"),
        ("nb", "Hva husker du om meg?", READ, ""),
        ("nb", "Hva vet du om kona mi?", TOPIC, "kona"),
        ("nb", "Glem hva jeg sa om bilen min", ABOUT, "bilen min"),
        ("nb", "Glem nummer tre", NUMBER, "3"),
        ("nb", "Husk at jeg liker jazz", REMEMBER, "jeg liker jazz"),
        # "You no longer need to remember that ...": a forget in every language.
        ("it", "Non devi più ricordare che fumo la pipa", FORGET, "fumo la pipa"),
        (
            "pt",
            "Você não precisa mais lembrar que eu fumo charuto",
            FORGET,
            "eu fumo charuto",
        ),
        ("ca", "Ja no cal que recordis que tinc una moto", FORGET, "tinc una moto"),
        ("pl", "Już nie musisz pamiętać, że gram w tenisa", FORGET, "gram w tenisa"),
        ("cs", "Už si nemusíš pamatovat, že hraju tenis", FORGET, "hraju tenis"),
        ("ru", "Тебе больше не нужно помнить, что я курю", FORGET, "я курю"),
        ("uk", "Можеш більше не пам'ятати, що я курю", FORGET, "я курю"),
        ("uk", "Що ти знаєш про мене?", READ, ""),
        ("uk", "Забудь, що я люблю джаз.", FORGET, "я люблю джаз"),
        ("uk", "Видали нотатку номер 2.", NUMBER, "2"),
        # HA's number words write U+02BC; speech to text U+0027 or U+2019.
        ("uk", "Видали нотатку номер п'ять", NUMBER, "5"),
        ("uk", "Забудь номер дев’ять", NUMBER, "9"),
        (
            "uk",
            "Не забудь, що в Марійки в п'ятницю концерт.",
            REMEMBER,
            "в Марійки в п'ятницю концерт",
        ),
    ],
)
def test_commands_in_more_languages(
    language: str, text: str, action: MemoryAction, words: str
) -> None:
    """The sentence files beyond the first five languages read the same commands."""
    assert read(text, language) == MemoryCommand(action, words)


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("it", "Non dimenticare di svegliarmi alle sei"),
        ("it", "Ricordami che domani ho il dentista"),
        ("it", "Lascia perdere"),
        ("it", "Ti ricordi l'attore di Titanic?"),
        ("pt", "Não te esqueças de me acordar às seis"),
        ("pt", "Esquece isso"),
        ("ca", "Oblida-ho"),
        ("ca", "No t'oblidis de despertar-me a les sis"),
        ("pl", "Zapomnij o tym"),
        ("pl", "Pamiętaj, żeby kupić mleko"),
        ("cs", "Nezapomeň mě vzbudit v šest"),
        ("cs", "Zapomeň na to"),
        ("ru", "Не забудь разбудить меня в шесть."),
        ("ru", "Забудь об этом."),
        # "att"/"at" is also the infinitive's marker: an errand is no note.
        ("sv", "Kom ihåg att köpa mjölk"),
        ("sv", "Glöm inte att väcka mig klockan sex"),
        ("sv", "Glöm det"),
        ("da", "Husk at købe mælk"),
        ("da", "Glem ikke at vække mig klokken seks"),
        ("nb", "Ikke glem å vekke meg klokka seks"),
        ("nb", "Bare glem det"),
        ("uk", "Нагадай купити молоко."),
        ("ru", "Больше не нужно помнить"),
        # Found by review: a list or device command, "never mind what I said",
        # "do you remember which ...", an errand whose verb no list could hold.
        ("pt", "Apaga tudo da cozinha"),
        ("it", "Cancella tutto della lista della spesa"),
        ("ru", "Забудь, о чём я говорил"),
        ("uk", "Забудь, про що я говорив"),
        ("it", "Ricordi che siamo andati a Roma l'anno scorso"),
        ("pt", "Lembra que filme vimos ontem"),
        ("sv", "Kom ihåg att posta brevet"),
        ("sv", "Glöm inte att aktivera larmet"),
        ("da", "Glem ikke at aktivere alarmen"),
        ("da", "Husk at børste tænder"),
        # A second review: "can you remember which film ...?", "sulla" is "on".
        ("pt", "Consegues lembrar que filme vimos ontem?"),
        ("pt", "Podes lembrar que horas são?"),
        ("it", "Ti puoi ricordare che film abbiamo visto ieri?"),
        ("it", "Cancella tutto sulla lista della spesa"),
        ("it", "Elimina tutto sul calendario"),
        ("pl", "Usuń to"),
        ("uk", "Ти пам'ятаєш актора з «Титаніка»?"),
    ],
)
def test_look_alikes_in_more_languages(language: str, text: str) -> None:
    assert read(text, language) is None


@pytest.mark.parametrize(
    ("language", "text", "words"),
    [
        ("en", "I want you to remember that my code is 4411", "my code is 4411"),
        ("en", "Can you remember that I'm vegan?", "I'm vegan"),
        ("es", "¿Podrías recordar que soy vegano?", "soy vegano"),
        ("de", "Kannst du dir merken, dass ich Vegetarier bin?", "ich Vegetarier bin"),
        ("nl", "Kun je onthouden dat ik vegetariër ben?", "ik vegetariër ben"),
        ("de", "Merk dir, dass ich Jazz mag bitte", "ich Jazz mag"),
        ("en", "REMEMBER THAT I LIKE JAZZ", "i like jazz"),
        (
            "en",
            "Remember that my sister-in-law is Ann-Marie, please",
            "my sister-in-law is Ann-Marie",
        ),
    ],
)
def test_requests_and_the_fact_as_written(language: str, text: str, words: str) -> None:
    """Asked as a question, still a request; hyphens and case as meant."""
    assert read(text, language) == MemoryCommand(REMEMBER, words)


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
    "The garage code is 4411.",
    "I love country music.",
]


@pytest.mark.parametrize(
    ("said", "named"),
    [
        ("I like jazz", [0]),
        ("I really like jazz music", []),  # "really", "music": not the note's
        ("my sister is Grace", [2]),  # half of the note, nothing else
        ("my sister lives in York", []),  # "York" is not the note's
        ("I like opera", []),  # half of a note is not enough
        ("I have a dog", []),
        ("I have a cat", [3]),
        ("I have to go", []),  # one word of two is not half of the note
        ("I love country music", [6]),
        # "like" for "love": a word the note does not say ("Forget that my
        # mother's birthday ..." names no "My father's birthday ...").
        ("I like country music", []),
        # After a pause the words say why: only the first clause names.
        ("I like jazz, I don't listen to it any more", [0]),
        ("I like opera, I don't listen to jazz", []),
        ("the garage code is 9999", []),  # another number
        ("it does not matter", None),  # about no note at all
    ],
)
def test_the_notes_the_words_name(said: str, named: list[int] | None) -> None:
    assert notes_named(NOTES, said) == named


def test_words_every_note_shares_name_nothing() -> None:
    notes = [
        "Der Benutzer mag Jazz.",
        "Der Benutzer wohnt in Ulm.",
        "Der Benutzer hat einen Hund.",
    ]
    assert notes_named(notes, "der Benutzer") is None
    assert notes_named(notes, "der Benutzer wohnt in Ulm") == [1]


def test_a_topic_of_a_short_word_finds_its_notes() -> None:
    notes = ["Our dog Rex is five.", "I work as a nurse.", "The dog sleeps upstairs."]
    assert notes_about(notes, "dog") == [0, 2]
    assert notes_about(notes, "job") == []
    # Whole short words: "son" is not "song".
    assert notes_about(["I like that song.", "My son is nine."], "son") == [1]


def test_forget_about_touches_the_notes_sharing_most_words() -> None:
    """One distinctive word is enough; none means no note; ties are all kept."""
    notes = [
        "I'm training for a marathon.",
        "I run with my sister Grace.",
        "My sister Grace lives in Leeds.",
    ]
    assert notes_touched(notes, "the marathon, I gave up") == [0]
    assert notes_touched(notes, "the weather") == []
    assert notes_touched(notes, "it") == []
    assert notes_touched(notes, "Grace") == [1, 2]
    assert notes_touched(notes, "Grace in Leeds") == [2]
    assert notes_touched([], "Grace") == []


@pytest.mark.parametrize(
    ("notes", "said"),
    [
        (["Ich mag Jazz.", "Mein Hund heißt Bello."], "ich Oper mag"),
        (["Ik hou van jazz.", "Mijn hond heet Max."], "ik van opera hou"),
        (["I play the violin.", "I don't eat olives."], "I don't eat mushrooms"),
        (
            ["Je joue du violon.", "Je ne mange pas d'olives."],
            "je ne mange pas de champignons",
        ),
        (["I play the violin.", "My son plays the piano."], "my son plays the guitar"),
    ],
)
def test_the_same_frame_with_another_thing_names_no_note(
    notes: list[str], said: str
) -> None:
    """Found by review: short words ("ich", "mag", "don") made more than half
    of a note, and "forget that I like opera" forgot "I like jazz."."""
    assert notes_named(notes, said) == []


@pytest.mark.parametrize(
    ("notes", "said", "named"),
    [
        (["Ich mag Jazz.", "Mein Hund heißt Bello."], "ich Jazz mag", [0]),
        (["Ik hou van jazz.", "Mijn hond heet Max."], "ik van jazz hou", [0]),
        (["I play the violin.", "I don't eat olives."], "I don't eat olives", [1]),
        # A short name said in lower case, or first (found by review).
        (["My dog is Max.", "I play the violin."], "my dog is max", [0]),
        (["Ich mag Tee.", "Mein Hund heißt Bello."], "ich mag tee", [0]),
        (["My son is Tom.", "I play the violin."], "Tom is my son", [0]),
        (["Mi hijo se llama Leo.", "Toco el violín."], "Leo es mi hijo", [0]),
    ],
)
def test_a_note_said_in_its_frame_is_named(
    notes: list[str], said: str, named: list[int]
) -> None:
    assert notes_named(notes, said) == named


@pytest.mark.parametrize(
    ("language", "text", "words"),
    [
        ("en", "Forget about it, I'll ask my wife later.", "it"),
        ("es", "Olvídate de eso, le pregunto a mi mujer luego.", "eso"),
        ("en", "Forget about the marathon, I gave up.", "the marathon"),
    ],
)
def test_forget_about_names_what_comes_before_a_pause(
    language: str, text: str, words: str
) -> None:
    """Found by review: "forget about it, I'll ask my wife later" (never mind)
    forgot "My wife is called Anna." by the words after the comma."""
    assert read(text, language) == MemoryCommand(ABOUT, words)


@pytest.mark.parametrize(
    ("language", "text", "action", "words"),
    [
        (
            "de",
            "Merk dir, dass meine Mutter am 4. Mai Geburtstag hat",
            REMEMBER,
            "meine Mutter am 4. Mai Geburtstag hat",
        ),
        (
            "de",
            "Vergiss, dass ich am 3. Mai Geburtstag habe",
            FORGET,
            "ich am 3. Mai Geburtstag habe",
        ),
        (
            "en",
            'Remember that I like the song "Hey Jude"',
            REMEMBER,
            'I like the song "Hey Jude"',
        ),
        (
            "fr",
            "Souviens-toi que j'aime « Le Petit Prince »",
            REMEMBER,
            "j'aime « Le Petit Prince »",
        ),
    ],
)
def test_ordinal_dates_and_closing_quotes_stay_in_the_fact(
    language: str, text: str, action: MemoryAction, words: str
) -> None:
    """Found by review: "am 4. Mai" read as a sentence end left the command to
    the model, and a fact lost its closing quote ("Hey Jude)."""
    assert read(text, language) == MemoryCommand(action, words)


@pytest.mark.parametrize(
    ("language", "remember", "forget"),
    [
        ("sv", "Kom ihåg att {} bor i Lund", "Glöm att {} bor i Lund"),
        ("da", "Husk at {} bor i Odense", "Glem at {} bor i Odense"),
    ],
)
def test_every_subject_starts_a_fact(language: str, remember: str, forget: str) -> None:
    """Found by review: "det är min tur" was split as "de" + "t är min tur" and
    lost; every subject of the file, as said, starts the fact."""
    sentences = load_command_sentences(language)
    assert sentences is not None
    subjects = sentences.intents.slot_lists["subject"]
    assert len(subjects.values) > 20  # type: ignore[attr-defined]
    for value in subjects.values:  # type: ignore[attr-defined]
        word = value.text_in.text
        fact = f"{word} bor i {'Lund' if language == 'sv' else 'Odense'}"
        assert read(remember.format(word), language) == MemoryCommand(REMEMBER, fact)
        assert read(forget.format(word), language) == MemoryCommand(FORGET, fact)


@pytest.mark.parametrize(
    ("language", "text", "action", "words"),
    [
        ("en", "What do you know about me so far?", READ, ""),
        ("en", "Do you remember anything about me?", READ, ""),
        ("en", "What did I tell you about myself?", READ, ""),
        ("en", "Which facts do you have about me?", READ, ""),
        ("en", "List everything you know about me.", READ, ""),
        ("es", "¿Qué te he contado de mí?", READ, ""),
        (
            "es",
            "Ya no tienes que recordar que soy vegetariano.",
            FORGET,
            "soy vegetariano",
        ),
        ("de", "Was weißt du von mir?", READ, ""),
        (
            "de",
            "Du musst dir nicht mehr merken, dass ich Vegetarier bin.",
            FORGET,
            "ich Vegetarier bin",
        ),
        (
            "fr",
            "Tu n'as plus besoin de te souvenir que je suis végétarien.",
            FORGET,
            "je suis végétarien",
        ),
        ("nl", "Wat herinner je je over mij?", READ, ""),
        (
            "nl",
            "Onthoud alsjeblieft dat ik allergisch ben voor pinda's.",
            REMEMBER,
            "ik allergisch ben voor pinda's",
        ),
        (
            "nl",
            "Hou in gedachten dat ik geen koffie drink.",
            REMEMBER,
            "ik geen koffie drink",
        ),
        ("nl", "Vergeet wat ik over mijn oude auto zei.", ABOUT, "mijn oude auto"),
        (
            "nl",
            "Je hoeft niet meer te onthouden dat ik vegetariër ben.",
            FORGET,
            "ik vegetariër ben",
        ),
    ],
)
def test_more_everyday_forms_are_read(
    language: str, text: str, action: MemoryAction, words: str
) -> None:
    """Forms a first try at everyday phrasings found unread (2026-12-06)."""
    assert read(text, language) == MemoryCommand(action, words)
