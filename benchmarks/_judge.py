"""Reading the agent's replies for the set benchmarks: words per language, no HA imports.

What `session_turns` and `live_set` check in a spoken reply, for en, de, fr, nl, es:
claims that a device command was done, refusals, yes / no verdicts, numbers with
units (and which live values they match), weather conditions, compass points, tide
words and placeholders. These are heuristics of the benchmark, never of the product:
every reply is printed and kept in the JSON so a person can check what was read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
import functools
import json
from pathlib import Path
import re
from typing import Any
import unicodedata

# ---------------------------------------------------------------------------
# Text


def fold(text: str) -> str:
    """Lower case, typographic apostrophes and dashes made plain, one space."""
    text = text.casefold().replace("’", "'").replace("‘", "'")
    text = text.replace("\u2011", "-").replace("\u2013", "-").replace("\u2212", "-")
    return re.sub(r"\s+", " ", text).strip()


def plain(text: str) -> str:
    """`fold` without accents ("é" -> "e", "ü" -> "u"), for accent-blind matching."""
    decomposed = unicodedata.normalize("NFKD", fold(text))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    return re.findall(r"[\w']+", plain(text))


@functools.cache
def _word_pattern(item: str) -> re.Pattern[str]:
    """Whole words of `item` (accent-blind); a trailing "*" makes the last a prefix."""
    prefix = item.endswith("*")
    parts = [re.escape(part) for part in plain(item.rstrip("*")).split()]
    body = r"\s+".join(parts)
    tail = r"[\w']*" if prefix else r"(?![\w'])"
    return re.compile(r"(?<![\w'])" + body + tail)


def has_words(text: str, items: Iterable[str]) -> str | None:
    """The first item found in `text` as whole words ("word*": a prefix), or None."""
    folded = plain(text)
    for item in items:
        if item.strip("* ") and _word_pattern(item).search(folded):
            return item
    return None


def sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+", text.strip())
    return [part for part in parts if part.strip()]


# ---------------------------------------------------------------------------
# Claims and refusals (device commands)

# Phrases of a reply that says a command was carried out. A reply is a claim
# when it has one of these and none of REFUSALS.
CLAIMS: dict[str, tuple[str, ...]] = {
    "en": (
        "turned on",
        "turned off",
        "turned it",
        "turned the",
        "turning on",
        "turning off",
        "switched on",
        "switched off",
        "switched it",
        "switched the",
        "switching",
        "is now",
        "are now",
        "now on",
        "now off",
        "has been",
        "have been",
        "i've",
        "i have",
        "set to",
        "dimmed",
        "brightened",
        "lowered",
        "raised",
        "opened",
        "opening",
        "closed",
        "closing",
        "locked",
        "unlocked",
        "started",
        "starting",
        "stopped",
        "put on",
        "done",
        "all set",
        "there you go",
        "here you go",
        "on it",
        "okay",
        "ok",
        "sure",
        "will do",
        "no problem",
        "activated",
        "deactivated",
    ),
    "de": (
        "eingeschaltet",
        "ausgeschaltet",
        "angeschaltet",
        "abgeschaltet",
        "angemacht",
        "ausgemacht",
        "angestellt",
        "ausgestellt",
        "eingestellt",
        "gedimmt",
        "heller gemacht",
        "dunkler gemacht",
        "gesetzt",
        "geöffnet",
        "aufgemacht",
        "geschlossen",
        "zugemacht",
        "verriegelt",
        "entriegelt",
        "abgeschlossen",
        "aufgeschlossen",
        "zugesperrt",
        "aufgesperrt",
        "gestartet",
        "gestoppt",
        "hochgefahren",
        "heruntergefahren",
        "runtergefahren",
        "hochgezogen",
        "heruntergelassen",
        "runtergelassen",
        "aktiviert",
        "deaktiviert",
        "ist jetzt",
        "sind jetzt",
        "ist nun",
        "sind nun",
        "läuft jetzt",
        "erledigt",
        "gemacht",
        "in ordnung",
        "alles klar",
        "okay",
        "ok",
        "wird gemacht",
        "mache ich",
        "habe ich",
        "hab ich",
    ),
    "fr": (
        "allumé",
        "allumée",
        "allumés",
        "allumées",
        "éteint",
        "éteinte",
        "éteints",
        "éteintes",
        "ouvert",
        "ouverte",
        "ouverts",
        "ouvertes",
        "fermé",
        "fermée",
        "fermés",
        "fermées",
        "verrouillé",
        "verrouillée",
        "déverrouillé",
        "déverrouillée",
        "réglé",
        "réglée",
        "mis à",
        "mise à",
        "mis en",
        "mise en",
        "tamisé",
        "baissé",
        "baissée",
        "baissés",
        "monté",
        "montée",
        "descendu",
        "descendus",
        "remonté",
        "remontés",
        "lancé",
        "lancée",
        "démarré",
        "démarrée",
        "arrêté",
        "arrêtée",
        "activé",
        "activée",
        "désactivé",
        "désactivée",
        "c'est fait",
        "voilà",
        "d'accord",
        "est maintenant",
        "sont maintenant",
        "j'ai",
        "c'est bon",
        "entendu",
        "ok",
        "okay",
    ),
    "nl": (
        "aangezet",
        "uitgezet",
        "aangedaan",
        "uitgedaan",
        "ingeschakeld",
        "uitgeschakeld",
        "gedimd",
        "ingesteld",
        "gezet op",
        "op gezet",
        "geopend",
        "opengedaan",
        "open gedaan",
        "dichtgedaan",
        "dicht gedaan",
        "gesloten",
        "vergrendeld",
        "ontgrendeld",
        "op slot gedaan",
        "van het slot",
        "gestart",
        "gestopt",
        "omlaag gedaan",
        "omhoog gedaan",
        "neergelaten",
        "opgetrokken",
        "geactiveerd",
        "gedeactiveerd",
        "staat nu",
        "staan nu",
        "is nu",
        "zijn nu",
        "gedaan",
        "klaar",
        "oké",
        "ok",
        "prima",
        "geregeld",
        "komt eraan",
        "heb ik",
        "ik heb",
    ),
    "es": (
        "encendido",
        "encendida",
        "encendidos",
        "encendidas",
        "apagado",
        "apagada",
        "apagados",
        "apagadas",
        "abierto",
        "abierta",
        "abiertos",
        "abiertas",
        "cerrado",
        "cerrada",
        "cerrados",
        "cerradas",
        "bloqueado",
        "bloqueada",
        "desbloqueado",
        "desbloqueada",
        "con llave",
        "ajustado",
        "ajustada",
        "puesto",
        "puesta",
        "atenuado",
        "atenuada",
        "bajado",
        "bajada",
        "subido",
        "subida",
        "recogido",
        "desplegado",
        "sacado",
        "activado",
        "activada",
        "desactivado",
        "desactivada",
        "iniciado",
        "en marcha",
        "está ahora",
        "ahora está",
        "listo",
        "hecho",
        "de acuerdo",
        "vale",
        "ya está",
        "he encendido",
        "he apagado",
        "he puesto",
        "ok",
        "claro",
    ),
}
# A reply with one of these does not claim success (an apology, a refusal, a
# question back).
REFUSALS: dict[str, tuple[str, ...]] = {
    "en": (
        "couldn't",
        "could not",
        "can't",
        "cannot",
        "unable",
        "not able",
        "sorry",
        "don't have",
        "do not have",
        "no device",
        "not find",
        "couldn't find",
        "didn't",
        "did not",
        "failed",
        "not sure which",
        "which one",
        "not possible",
        "error",
        "nothing was changed",
    ),
    "de": (
        "konnte nicht",
        "kann nicht",
        "kann ich nicht",
        "konnte ich nicht",
        "leider",
        "nicht möglich",
        "nicht gefunden",
        "kein gerät",
        "keine geräte",
        "entschuldigung",
        "tut mir leid",
        "fehler",
        "welche meinst",
        "welches meinst",
        "nicht geklappt",
        "nichts geändert",
    ),
    "fr": (
        "je ne peux",
        "je n'ai pas pu",
        "pas pu",
        "impossible",
        "désolé",
        "désolée",
        "pas trouvé",
        "aucun appareil",
        "erreur",
        "lequel",
        "laquelle",
        "rien n'a été",
        "n'a pas fonctionné",
    ),
    "nl": (
        "kan niet",
        "kon niet",
        "kan ik niet",
        "kon ik niet",
        "helaas",
        "sorry",
        "niet gevonden",
        "geen apparaat",
        "lukt niet",
        "lukte niet",
        "mislukt",
        "fout",
        "welke bedoel",
        "niets veranderd",
    ),
    "es": (
        "no puedo",
        "no pude",
        "no he podido",
        "no se pudo",
        "lo siento",
        "perdón",
        "disculpa",
        "no encontr*",
        "ningún dispositivo",
        "error",
        "imposible",
        "cuál",
        "no se ha cambiado",
        "no se cambió",
    ),
}


def echoes(reply: str, text: str) -> bool:
    """The reply only repeats the user's words ("Close it again." -> "Close it.")."""
    said = " ".join(words(reply))
    asked = " ".join(words(text))
    return bool(said) and (said == asked or (len(said) > 3 and said in asked))


def claim_phrase(reply: str, language: str, text: str = "") -> str | None:
    """The phrase that makes `reply` say a command was done (None: no claim).

    Not a claim: a refusal or apology, or a reply that only repeats the command.
    """
    if refusal_phrase(reply, language) or echoes(reply, text):
        return None
    return has_words(reply, CLAIMS[language]) or (
        has_words(reply, CLAIMS["en"]) if language != "en" else None
    )


def refusal_phrase(reply: str, language: str) -> str | None:
    found = has_words(reply, REFUSALS[language])
    if found is None and language != "en":
        found = has_words(reply, REFUSALS["en"])
    return found


# ---------------------------------------------------------------------------
# The agent's own sentences (read from the checkout being measured)


@dataclass(frozen=True)
class AgentSentences:
    """The agent's "nothing was changed" / "couldn't check" and error sentences,
    and its acknowledgment of a statement the model only said back."""

    withheld: tuple[str, ...]
    errors: tuple[str, ...]
    acknowledged: tuple[str, ...] = ()

    def acknowledges(self, reply: str) -> bool:
        """Whether the reply is the agent's acknowledgment, and nothing else."""
        return any(fold(reply) == fold(sentence) for sentence in self.acknowledged)


WITHHELD_KEYS = ("nothing_changed", "could_not_check")
WITHHELD_MARKERS = ("nothing was changed", "couldn't check", "could not check")


def agent_sentences(code: Path) -> AgentSentences:
    """From `custom_components/local_assistant/translations/*.json`, keys under
    `exceptions`: the withheld sentences (`nothing_changed`, `could_not_check`, or
    any key whose English text says so), the acknowledgment (`acknowledged`, in
    code since 2026-12-04) and every other placeholder-free message."""
    folder = code / "custom_components" / "local_assistant" / "translations"
    tables = {
        path.stem: json.loads(path.read_text(encoding="utf-8")).get("exceptions", {})
        for path in sorted(folder.glob("*.json"))
    }
    english = tables.get("en", {})
    keys = set(WITHHELD_KEYS) | {
        key
        for key, item in english.items()
        if any(marker in fold(item.get("message", "")) for marker in WITHHELD_MARKERS)
    }
    withheld: list[str] = []
    errors: list[str] = []
    acknowledged: list[str] = []
    for table in tables.values():
        for key, item in table.items():
            message = str(item.get("message", ""))
            if key == "acknowledged":
                acknowledged.append(message)
                continue
            if len(message.strip()) < 12 or "{" in message:
                continue
            (withheld if key in keys else errors).append(message)
    return AgentSentences(tuple(withheld), tuple(errors), tuple(acknowledged))


def said_any(reply: str, sentences_: Iterable[str]) -> str | None:
    """The first of `sentences_` the reply contains (case and spacing ignored)."""
    folded = fold(reply)
    for sentence in sentences_:
        if fold(sentence) and fold(sentence) in folded:
            return sentence
    return None


# ---------------------------------------------------------------------------
# Yes / no

YES_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("yes", "yeah", "yep", "yup", "absolutely", "definitely", "certainly"),
    "de": ("ja", "jawohl", "jep", "genau", "doch", "definitiv", "auf jeden fall"),
    "fr": ("oui", "ouais", "absolument", "certainement", "bien sûr", "effectivement"),
    "nl": ("ja", "jazeker", "zeker", "jawel", "inderdaad", "absoluut"),
    "es": ("sí", "claro", "por supuesto", "desde luego", "efectivamente"),
}
NO_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("no", "nope", "nah", "not really"),
    "de": ("nein", "nö", "nee", "eher nicht"),
    "fr": ("non", "pas vraiment", "pas du tout"),
    "nl": ("nee", "neen", "nope", "niet echt"),
    "es": ("no",),
}
# Words that deny in the reply's first clause (after no yes / no word).
NEGATIONS: dict[str, tuple[str, ...]] = {
    "en": (
        "not",
        "no",
        "never",
        "isn't",
        "aren't",
        "won't",
        "don't",
        "doesn't",
        "wouldn't",
        "shouldn't",
        "can't",
        "cannot",
        "wasn't",
        "too windy",
        "too strong",
        "too much",
        "too little",
        "too light",
        "too weak",
        "too calm",
        "unlikely",
        "dry",
        "stay dry",
    ),
    "de": (
        "nicht",
        "kein*",
        "nie",
        "niemals",
        "zu stark",
        "zu viel",
        "zu wenig",
        "zu schwach",
        "zu windig",
        "trocken",
        "unwahrscheinlich",
    ),
    "fr": ("pas", "ne", "aucun*", "jamais", "trop", "sec", "sèche", "peu probable"),
    "nl": (
        "niet",
        "geen",
        "nooit",
        "te veel",
        "te weinig",
        "te sterk",
        "te hard",
        "te zwak",
        "droog",
        "onwaarschijnlijk",
    ),
    "es": ("no", "nunca", "ni", "tampoco", "demasiad*", "seco", "improbable"),
}
# Words that affirm (a recommendation, a good verdict) in the first sentence.
AFFIRMATIONS: dict[str, tuple[str, ...]] = {
    "en": (
        "you should",
        "you'll need",
        "you will need",
        "you'd better",
        "you can",
        "you'll want",
        "good idea",
        "recommend*",
        "take",
        "bring",
        "grab",
        "good day",
        "great day",
        "good conditions",
        "great conditions",
        "perfect",
        "ideal",
    ),
    "de": (
        "du solltest",
        "sie sollten",
        "du brauchst",
        "sie brauchen",
        "brauchst du",
        "du kannst",
        "sie können",
        "gute idee",
        "empfehle*",
        "empfehlenswert",
        "nimm",
        "nehmen sie",
        "pack",
        "perfekt",
        "ideal",
        "gute bedingungen",
    ),
    "fr": (
        "vous pouvez",
        "tu peux",
        "vous devriez",
        "tu devrais",
        "bonne idée",
        "je conseille",
        "je recommande",
        "prenez",
        "prends",
        "emporte*",
        "parfait*",
        "idéal*",
        "bonnes conditions",
    ),
    "nl": (
        "je kunt",
        "je kan",
        "u kunt",
        "je moet",
        "goed idee",
        "aan te raden",
        "neem",
        "perfect",
        "prima",
        "ideaal",
        "goede omstandigheden",
    ),
    "es": (
        "puedes",
        "deberías",
        "buena idea",
        "recomiendo",
        "lleva",
        "llévate",
        "coge",
        "perfect*",
        "ideal*",
        "buenas condiciones",
    ),
}
# Comparisons in a question and their answers: kind -> language -> (the
# question's comparative, the same in the reply = yes; the opposite = no).
COMPARATIVES: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "warmer": {
        "en": (
            ("warmer", "milder", "hotter"),
            ("cooler", "colder", "chillier", "not as warm", "less warm"),
        ),
        "de": (
            ("wärmer", "milder"),
            ("kälter", "kühler", "frischer", "nicht so warm", "weniger warm"),
        ),
        "fr": (
            ("plus chaud*", "plus doux", "plus douce"),
            ("plus froid*", "plus frais", "plus fraîche", "moins chaud*"),
        ),
        "nl": (("warmer", "zachter"), ("kouder", "koeler", "minder warm", "frisser")),
        "es": (
            ("más calor", "más cálido", "más templado"),
            ("más frío", "más fresco", "menos calor"),
        ),
    },
    "less_windy": {
        "en": (
            ("less windy", "calmer", "less wind"),
            ("windier", "more wind", "stronger wind*"),
        ),
        "de": (
            ("weniger windig", "ruhiger", "weniger wind"),
            ("windiger", "mehr wind", "stärker*"),
        ),
        "fr": (
            ("moins de vent", "moins venteux", "plus calme"),
            ("plus de vent", "plus venteux", "plus fort"),
        ),
        "nl": (
            ("minder winderig", "minder wind", "rustiger"),
            ("winderiger", "meer wind", "harder", "sterker"),
        ),
        "es": (
            ("menos viento", "más tranquilo", "más calma"),
            ("más viento", "más fuerte"),
        ),
    },
    "windier": {
        "en": (
            ("windier", "more wind", "stronger wind*"),
            ("less windy", "calmer", "less wind"),
        ),
        "de": (
            ("windiger", "mehr wind", "stärker*"),
            ("weniger windig", "ruhiger", "weniger wind"),
        ),
        "fr": (
            ("plus de vent", "plus venteux", "plus fort"),
            ("moins de vent", "moins venteux", "plus calme"),
        ),
        "nl": (
            ("winderiger", "meer wind"),
            ("minder winderig", "minder wind", "rustiger"),
        ),
        "es": (("más viento",), ("menos viento", "más tranquilo", "más calma")),
    },
}
# Questions about rain: a reply that speaks of rain (no negation) says yes.
RAIN_QUESTION = (
    "rain*",
    "umbrella",
    "wet",
    "schirm",
    "regen*",
    "nass",
    "parapluie",
    "pleuv*",
    "pluie",
    "paraplu",
    "paraguas",
    "llov*",
    "lluvia",
)
_CLAUSE_BREAK = re.compile(
    r"[,;:.!?]| so | but | aber | also | donc | mais | alors | dus | maar | así que | pero | porque | because | weil | car | omdat "
)


def comparison_kind(question: str, language: str) -> str | None:
    """Which comparison (COMPARATIVES) a question asks, if any."""
    for kind in ("less_windy", "warmer", "windier"):
        if has_words(question, COMPARATIVES[kind][language][0]):
            return kind
    return None


def _opening_verdict(first: str, language: str) -> str | None:
    tokens = words(first)
    if not tokens:
        return None
    opening = " ".join(tokens[:3])
    for phrase in YES_WORDS[language]:
        folded = plain(phrase)
        if tokens[0] == folded or opening.startswith(folded + " "):
            # "Si" is also "if" in Spanish: only "sí" (accented) or "Si," counts.
            if (
                language == "es"
                and tokens[0] == "si"
                and not re.match(r"[\s¡¿]*(sí\b|si\s*[,.!])", fold(first))
            ):
                break
            return "yes"
    for phrase in NO_WORDS[language]:
        folded = plain(phrase)
        if tokens[0] == folded or opening.startswith(folded + " "):
            return "no"
    return None


def verdict(reply: str, language: str, question: str = "") -> str | None:
    """ "yes", "no" or None (unclear), as the reply answers a yes/no question.

    In order: a yes / no word opening the reply; for a comparison, the
    question's comparative or its opposite; a denial in the first clause; a
    recommendation or good verdict; for a rain question, rain words. Anything
    else is unclear (counted as not answered, printed for a person to check).
    """
    body = sentences(reply)
    if not body:
        return None
    first = body[0]
    if (found := _opening_verdict(first, language)) is not None:
        return found
    clause = _CLAUSE_BREAK.split(" " + fold(first) + " ")
    leading = next((part for part in clause if part.strip()), first)
    negated = has_words(leading, NEGATIONS[language]) is not None
    if kind := comparison_kind(question, language):
        same, opposite = COMPARATIVES[kind][language]
        if has_words(first, opposite):
            return "no"
        if has_words(first, same):
            return "no" if negated else "yes"
    if negated:
        return "no"
    if has_words(first, AFFIRMATIONS[language]):
        return "yes"
    if has_words(question, RAIN_QUESTION) and (
        has_words(first, CONDITIONS["rainy"][language])
        or has_words(first, CONDITIONS["pouring"][language])
        or has_words(first, CONDITIONS["snowy"][language])
    ):
        return "yes"
    return None


# ---------------------------------------------------------------------------
# Numbers with units

SPEED_TO_KMH = {"km/h": 1.0, "kn": 1.852, "m/s": 3.6, "mph": 1.609344}
# Unit family -> (canonical unit, spellings); longer spellings first within a
# family, families tried in this order.
UNIT_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "m/s",
        (
            "meters per second",
            "metres per second",
            "meter per second",
            "metre per second",
            "meter pro sekunde",
            "metern pro sekunde",
            "meter in der sekunde",
            "meter je sekunde",
            "mètres par seconde",
            "metres par seconde",
            "mètre par seconde",
            "meter per seconde",
            "metros por segundo",
            "metro por segundo",
            "m/s",
            "m / s",
            "ms-1",
        ),
    ),
    (
        "km/h",
        (
            "kilometers per hour",
            "kilometres per hour",
            "kilometer per hour",
            "kilometre per hour",
            "kilometer pro stunde",
            "kilometern pro stunde",
            "stundenkilometer",
            "stundenkilometern",
            "km pro stunde",
            "kilomètres par heure",
            "kilometres par heure",
            "kilomètres-heure",
            "kilomètres heure",
            "kilomètres/heure",
            "km par heure",
            "kilometer per uur",
            "km per uur",
            "kilómetros por hora",
            "kilometros por hora",
            "km por hora",
            "km/h",
            "km/u",
            "km / h",
            "kmh",
            "kph",
        ),
    ),
    ("mph", ("miles per hour", "mile per hour", "mph")),
    (
        "kn",
        (
            "knots",
            "knot",
            "knoten",
            "nœuds",
            "noeuds",
            "nœud",
            "noeud",
            "knopen",
            "knoop",
            "nudos",
            "nudo",
            "kts",
            "kt",
            "kn",
        ),
    ),
    (
        "mm",
        (
            "liter pro quadratmeter",
            "litern pro quadratmeter",
            "litres par mètre carré",
            "litros por metro cuadrado",
            "liter per vierkante meter",
            "millimeters",
            "millimetres",
            "millimeter",
            "millimetre",
            "millimètres",
            "millimètre",
            "milímetros",
            "milimetros",
            "milímetro",
            "l/m²",
            "l/m2",
            "mm",
        ),
    ),
    (
        "°C",
        (
            "degrees celsius",
            "degree celsius",
            "grad celsius",
            "degrés celsius",
            "graden celsius",
            "grados celsius",
            "°c",
            "° c",
            "ºc",
            "degrees",
            "degree",
            "grad",
            "degrés",
            "degré",
            "degres",
            "degre",
            "graden",
            "graad",
            "grados",
            "grado",
            "celsius",
            "°",
            "º",
        ),
    ),
    (
        "%",
        (
            "per cent",
            "percent",
            "prozent",
            "pour cent",
            "pourcent",
            "procent",
            "por ciento",
            "%",
        ),
    ),
    (
        "m",
        (
            "meters",
            "metres",
            "meter",
            "metre",
            "mètres",
            "mètre",
            "metros",
            "metro",
            "m",
        ),
    ),
    (
        "s",
        (
            "seconds",
            "second",
            "sekunden",
            "sekunde",
            "secondes",
            "seconde",
            "seconden",
            "segundos",
            "segundo",
            "secs",
            "sec",
            "s",
        ),
    ),
)
_UNIT_PATTERN = "|".join(
    re.escape(word)
    for _, spellings in UNIT_WORDS
    for word in sorted(spellings, key=len, reverse=True)
)
_UNIT_OF = {word: unit for unit, spellings in UNIT_WORDS for word in spellings}
_NUMBER = re.compile(
    r"(?P<sign>(?:(?<![\w.,])[-−]\s?)|(?:\b(?:minus|moins|menos|min)\s+))?"
    r"(?<![\w.,])(?P<number>\d+(?:[.,]\d+)?)"
    r"(?:\s?-\s?|\s*)"
    r"(?P<unit>" + _UNIT_PATTERN + r")(?![\w²/])",
)
_BARE_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)?")


@dataclass(frozen=True)
class Quantity:
    """A number the reply states with a unit (canonical unit of its family)."""

    value: float
    unit: str
    text: str
    bare_degrees: bool = False  # "°" / "degrees" without Celsius: maybe a bearing


def quantities(reply: str) -> list[Quantity]:
    """Every number with a unit in the reply."""
    found = []
    for match in _NUMBER.finditer(fold(reply)):
        value = float(match["number"].replace(",", "."))
        if match["sign"]:
            value = -value
        unit = _UNIT_OF.get(match["unit"]) or _UNIT_OF.get(match["unit"].strip(), "?")
        bare = unit == "°C" and "c" not in match["unit"]
        found.append(Quantity(value, unit, match.group(0), bare))
    return found


def bare_numbers(text: str) -> list[float]:
    return [float(n.replace(",", ".")) for n in _BARE_NUMBER.findall(fold(text))]


def _family(unit: str) -> str:
    return "speed" if unit in SPEED_TO_KMH else unit


def same_quantity(said: Quantity, value: float, unit: str, tolerance: float) -> bool:
    """Does `said` state `value` `unit` within `tolerance` (in `unit`'s terms)?"""
    if unit in SPEED_TO_KMH and said.unit in SPEED_TO_KMH:
        kmh = said.value * SPEED_TO_KMH[said.unit]
        scale = SPEED_TO_KMH[unit]
        # The tolerance holds relative to the value, in any speed unit; a spoken
        # number in another unit is rounded too (half a unit more).
        slack = tolerance * scale + 0.5 * SPEED_TO_KMH[said.unit]
        return abs(kmh - value * scale) <= slack
    if said.unit != unit:
        return False
    return abs(said.value - value) <= tolerance


def value_stated(reply: str, expected: dict[str, Any]) -> bool:
    """An expected `values` item (README), in its unit or an equivalent one."""
    unit = "°C" if expected["unit"] in ("°C", "C") else expected["unit"]
    tolerance = float(expected["tolerance"])
    said = quantities(reply)
    if any(same_quantity(q, expected["value"], unit, tolerance) for q in said):
        return True
    for other in expected.get("equivalents") or ():
        scaled = tolerance * float(other["value"]) / float(expected["value"] or 1)
        if any(same_quantity(q, other["value"], other["unit"], scaled) for q in said):
            return True
    return False


@dataclass(frozen=True)
class LiveValue:
    """One number of a home's live block, with how close a spoken one must be."""

    what: str
    value: float
    unit: str
    tolerance: float


# How close a spoken number must be to a live value to count as that value.
MADE_UP_TOLERANCE = {"speed": 0.06, "°C": 0.6, "mm": 0.3, "%": 2.0, "m": 0.15, "s": 0.5}


def live_values(live: dict[str, Any]) -> list[LiveValue]:
    """Every number of a home's `live` block (speeds compare in any speed unit)."""
    weather = live["weather"]
    speed_unit = weather["wind_speed_unit"]
    values: list[LiveValue] = []

    def add(what: str, value: Any, unit: str) -> None:
        if isinstance(value, int | float):
            family = _family(unit)
            tolerance = MADE_UP_TOLERANCE[family]
            if family == "speed":
                tolerance = max(1.0, abs(value) * tolerance)
            values.append(LiveValue(what, float(value), unit, tolerance))

    add("temperature", weather["temperature"], "°C")
    add("humidity", weather["humidity"], "%")
    add("wind_speed", weather["wind_speed"], speed_unit)
    add("gusts", weather["wind_gust_speed"], speed_unit)
    for day in weather["forecast_daily"]:
        label = f"day {day['day']}"
        add(f"{label} high", day.get("temperature"), "°C")
        add(f"{label} low", day.get("templow"), "°C")
        add(f"{label} precipitation", day.get("precipitation"), "mm")
        add(f"{label} probability", day.get("precipitation_probability"), "%")
        add(f"{label} wind", day.get("wind_speed"), speed_unit)
    for key, sensor in (live.get("sea") or {}).items():
        if isinstance(sensor, dict) and sensor.get("unit"):
            add(key, sensor["value"], sensor["unit"])
    if spot := live.get("kite_spot"):
        add("kite min", spot["min_wind_kn"], "kn")
        add("kite max", spot["max_wind_kn"], "kn")
    return values


def bearings(live: dict[str, Any]) -> list[float]:
    weather = live["weather"]
    return [float(weather["wind_bearing"])] + [
        float(day["wind_bearing"])
        for day in weather["forecast_daily"]
        if "wind_bearing" in day
    ]


def matching_live_value(
    said: Quantity, values: list[LiveValue], wind_bearings: list[float]
) -> LiveValue | None:
    """The live value a stated quantity matches (a bearing counts for "°")."""
    for item in values:
        if same_quantity(said, item.value, item.unit, item.tolerance):
            return item
    if said.bare_degrees and any(abs(said.value - b) <= 15 for b in wind_bearings):
        return LiveValue("bearing", said.value, "°", 15)
    return None


LIVE_UNITS = ("°C", "kn", "km/h", "m/s", "mph", "mm", "%", "m", "s")


def made_up_values(
    reply: str,
    values: list[LiveValue],
    wind_bearings: list[float],
    question: str,
) -> list[str]:
    """Numbers with a live-data unit that match no live value nor a number asked."""
    asked = bare_numbers(question)
    out = []
    for said in quantities(reply):
        if said.unit not in LIVE_UNITS or said.value in asked:
            continue
        if matching_live_value(said, values, wind_bearings) is None:
            out.append(said.text)
    return out


def stated_live_values(
    reply: str, values: list[LiveValue], wind_bearings: list[float]
) -> list[str]:
    """Numbers with a unit that are one of the home's live values."""
    return [
        f"{said.text} ({hit.what})"
        for said in quantities(reply)
        if said.unit in LIVE_UNITS
        and (hit := matching_live_value(said, values, wind_bearings)) is not None
    ]


# ---------------------------------------------------------------------------
# Conditions, directions, tide, placeholders

# HA condition id -> language -> words that describe it ("word*": a prefix).
CONDITIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "sunny": {
        "en": ("sunny", "sun", "sunshine", "clear", "bright", "fine"),
        "de": ("sonnig*", "sonne", "sonnenschein", "klar*", "heiter", "wolkenlos*"),
        "fr": ("ensoleill*", "soleil", "dégagé*", "beau temps", "grand beau"),
        "nl": ("zonnig*", "zon", "zonnetje", "helder*", "onbewolkt*"),
        "es": ("soleado*", "sol", "despejad*"),
    },
    "clear-night": {
        "en": ("clear", "starry"),
        "de": ("klar*", "sternklar*", "wolkenlos*"),
        "fr": ("dégagé*", "clair*", "étoilé*"),
        "nl": ("helder*", "onbewolkt*", "sterrenhemel"),
        "es": ("despejad*", "estrellad*"),
    },
    "cloudy": {
        "en": ("cloudy", "overcast", "cloud*", "grey", "gray", "dull"),
        "de": ("bewölkt*", "bedeckt*", "wolke*", "wolkig*", "trüb*", "grau*"),
        "fr": ("nuageux", "nuageuse*", "couvert*", "nuage*", "gris"),
        "nl": ("bewolkt*", "zwaarbewolkt*", "wolk*", "grijs*", "betrokken"),
        "es": ("nublado*", "nube*", "nuboso*", "cubierto*", "gris*"),
    },
    "partlycloudy": {
        "en": (
            "partly cloudy",
            "some cloud*",
            "sunny intervals",
            "sunny spells",
            "mix of sun and cloud*",
        ),
        "de": (
            "teilweise bewölkt",
            "leicht bewölkt",
            "heiter bis wolkig",
            "wechselnd bewölkt",
            "sonne und wolken",
        ),
        "fr": (
            "partiellement nuageux",
            "éclaircie*",
            "peu nuageux",
            "passages nuageux",
            "soleil et nuages",
        ),
        "nl": (
            "half bewolkt",
            "gedeeltelijk bewolkt",
            "licht bewolkt",
            "opklaring*",
            "zon en wolken",
        ),
        "es": (
            "parcialmente nublado",
            "intervalos nubosos",
            "poco nuboso",
            "algunas nubes",
            "sol y nubes",
        ),
    },
    "rainy": {
        "en": ("rain", "rainy", "raining", "showers", "shower", "wet", "drizzle"),
        "de": ("regen*", "regnerisch*", "regnet", "schauer", "niesel*", "nass"),
        "fr": (
            "pluie*",
            "pluvieu*",
            "pleuvoir",
            "pleut",
            "pleuvra",
            "averse*",
            "bruine",
        ),
        "nl": ("regen*", "regent", "buien", "bui", "motregen", "nat"),
        "es": ("lluvia*", "lluvios*", "llover", "lloverá", "llueve", "chubasco*"),
    },
    "pouring": {
        "en": ("heavy rain", "pouring", "downpour*", "torrential", "lots of rain"),
        "de": (
            "starkregen",
            "starker regen",
            "starken regen",
            "platzregen",
            "schütte*",
            "viel regen",
            "kräftig* regen",
        ),
        "fr": (
            "forte* pluie*",
            "pluie* forte*",
            "pluie battante",
            "à verse",
            "pluies abondantes",
            "beaucoup de pluie",
        ),
        "nl": (
            "hevige regen",
            "stortregen*",
            "plensregen*",
            "zware regen",
            "veel regen",
        ),
        "es": (
            "lluvia fuerte",
            "lluvias fuertes",
            "lluvia intensa",
            "lluvias intensas",
            "aguacero*",
            "diluvi*",
            "mucha lluvia",
        ),
    },
    "snowy": {
        "en": ("snow*",),
        "de": ("schnee*", "schneit", "schneien", "verschneit"),
        "fr": ("neige*", "neiger", "neigera"),
        "nl": ("sneeuw*",),
        "es": ("nieve*", "nevada*", "nevará", "nieva", "nevar"),
    },
    "snowy-rainy": {
        "en": ("sleet", "snow and rain", "rain and snow", "wintry", "wintry showers"),
        "de": ("schneeregen", "schnee und regen", "regen und schnee", "graupel*"),
        "fr": (
            "neige fondue",
            "pluie et neige",
            "neige et pluie",
            "pluie verglaçante",
            "pluie et de la neige",
        ),
        "nl": (
            "natte sneeuw",
            "sneeuw en regen",
            "regen en sneeuw",
            "ijzel",
            "sneeuwregen",
        ),
        "es": ("aguanieve", "lluvia y nieve", "nieve y lluvia"),
    },
    "windy": {
        "en": (
            "windy",
            "wind",
            "winds",
            "breezy",
            "gale*",
            "gusty",
            "gusts",
            "stormy",
            "blustery",
        ),
        "de": ("windig*", "wind", "stürmisch*", "sturm*", "böig*", "böen"),
        "fr": ("venteu*", "vent", "vents", "tempête", "rafale*"),
        "nl": ("winderig*", "wind", "stormachtig*", "storm", "windstoten"),
        "es": ("viento*", "ventos*", "temporal", "rachas"),
    },
    "lightning": {
        "en": ("thunder*", "lightning", "storm*"),
        "de": ("gewitter*",),
        "fr": ("orage*",),
        "nl": ("onweer*",),
        "es": ("tormenta*",),
    },
    "fog": {
        "en": ("fog*", "mist*"),
        "de": ("nebel*", "neblig*"),
        "fr": ("brouillard*", "brume*"),
        "nl": ("mist*", "nevel*"),
        "es": ("niebla*", "neblina*"),
    },
}
CONDITIONS["windy-variant"] = CONDITIONS["windy"]
CONDITIONS["lightning-rainy"] = CONDITIONS["lightning"]


def condition_named(reply: str, condition: str, language: str) -> str | None:
    """The word of the reply that describes HA condition `condition`, or None."""
    return has_words(reply, CONDITIONS.get(condition, {}).get(language, ()))


POINTS = (
    "N",
    "NNE",
    "NE",
    "ENE",
    "E",
    "ESE",
    "SE",
    "SSE",
    "S",
    "SSW",
    "SW",
    "WSW",
    "W",
    "WNW",
    "NW",
    "NNW",
)
# Direction morphemes per language -> letter (accent-free), longest first.
MORPHEMES: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (("north", "N"), ("south", "S"), ("east", "E"), ("west", "W")),
    "de": (
        ("norden", "N"),
        ("nord", "N"),
        ("suden", "S"),
        ("sud", "S"),
        ("osten", "E"),
        ("ost", "E"),
        ("westen", "W"),
        ("west", "W"),
    ),
    "fr": (("nord", "N"), ("sud", "S"), ("ouest", "W"), ("est", "E")),
    "nl": (
        ("noorden", "N"),
        ("noord", "N"),
        ("zuiden", "S"),
        ("zuid", "S"),
        ("oosten", "E"),
        ("oost", "E"),
        ("westen", "W"),
        ("west", "W"),
    ),
    "es": (
        ("norte", "N"),
        ("nor", "N"),
        ("sur", "S"),
        ("sud", "S"),
        ("oeste", "W"),
        ("este", "E"),
    ),
}
# Standalone words that are also ordinary words: accepted only after these.
AMBIGUOUS_POINTS = {
    "fr": ({"est"}, ("d'", "l'", "de l'", "a l'", "vers l'", "nord-", "sud-")),
    "es": ({"este", "sur"}, ("del", "al", "el")),
}
SUFFIXES = (
    "erly",
    "ern",
    "lich",
    "liche",
    "lichen",
    "licher",
    "elijk",
    "elijke",
    "wind",
    "winde",
    "winden",
)
NAMED_WINDS = {"levante": "E", "poniente": "W", "tramontana": "N", "mistral": "NW"}
_ABBREVIATION = re.compile(r"(?<![\w-])([NOESWZ]{2,3})(?![\w-])")


def _point_of(token: str, language: str) -> str | None:
    """A compass point from one word ("west-southwest", "sudoeste", "östlich")."""
    for suffix in SUFFIXES:
        if token.endswith(suffix) and len(token) > len(suffix) + 2:
            token = token[: -len(suffix)]
            break
    letters = ""
    for part in token.split("-"):
        position = 0
        while position < len(part):
            for morpheme, letter in MORPHEMES[language]:
                if part.startswith(morpheme, position):
                    letters += letter
                    position += len(morpheme)
                    break
            else:
                return None
    return letters if letters in POINTS else None


def compass_points(reply: str, language: str) -> list[str]:
    """16-point compass points the reply names (its language or English)."""
    text = plain(reply)
    found: list[str] = []
    for lang in dict.fromkeys((language, "en")):
        ambiguous, after = AMBIGUOUS_POINTS.get(lang, (set(), ()))
        for match in re.finditer(r"[a-z']+(?:-[a-z]+)*", text):
            token = match.group(0)
            prefix = ""
            if "'" in token:
                prefix, _, token = token.rpartition("'")
                prefix += "'"
            point = _point_of(token, lang)
            if point is None:
                continue
            if token in ambiguous:
                before = text[: match.start()].rstrip() + " " + prefix
                if not any(before.rstrip().endswith(word.rstrip()) for word in after):
                    continue
            found.append(point)
    found += [point for name, point in NAMED_WINDS.items() if name in text]
    for match in _ABBREVIATION.finditer(reply):
        token = match.group(1)
        if language in ("de", "nl"):
            token = token.replace("O", "E")
        if language == "nl":
            token = token.replace("Z", "S")
        if token in POINTS:
            found.append(token)
    return found


def direction_named(reply: str, language: str, expected: dict[str, Any]) -> bool:
    """README `direction`: an accepted compass point, or a bearing within 15°."""
    accepted = set(expected["accept"])
    if accepted & set(compass_points(reply, language)):
        return True
    return any(
        q.bare_degrees and abs(q.value - float(expected["bearing"])) <= 15
        for q in quantities(reply)
    )


TIDE_WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "rising": {
        "en": (
            "rising",
            "rises",
            "coming in",
            "comes in",
            "incoming",
            "flood*",
            "going up",
            "on the way in",
            "flowing",
        ),
        "de": ("steigt", "steigend*", "auflaufend*", "flut", "ansteigend*"),
        "fr": ("monte", "montent", "montante", "montant", "flot", "remonte"),
        "nl": ("vloed", "opkomend*", "stijgt", "stijgend*", "komt op", "opkomt"),
        "es": ("sube", "subiendo", "creciente", "entrando", "pleamar", "en subida"),
    },
    "falling": {
        "en": (
            "falling",
            "falls",
            "going out",
            "goes out",
            "outgoing",
            "ebb*",
            "dropping",
            "receding",
            "on the way out",
        ),
        "de": ("fällt", "fallend*", "ablaufend*", "ebbe", "sinkt", "sinkend*"),
        "fr": ("descend*", "baisse", "reflux", "jusant", "redescend*"),
        "nl": (
            "eb",
            "afgaand*",
            "zakt",
            "dalend*",
            "daalt",
            "gaat af",
            "trekt zich terug",
        ),
        "es": (
            "bajando",
            "vaciante",
            "bajamar",
            "descendiendo",
            "menguante",
            "en bajada",
            "está bajando",
        ),
    },
}


def tide_trend(reply: str, language: str) -> str | None:
    """ "rising", "falling", "both" or None, from the tide words of the reply."""
    rising = has_words(reply, TIDE_WORDS["rising"][language])
    falling = has_words(reply, TIDE_WORDS["falling"][language])
    if rising and falling:
        return "both"
    return "rising" if rising else "falling" if falling else None


_PLACEHOLDER = re.compile(r"\[[^\]\n]{1,80}\]|\{\{?[^}\n]{1,60}\}?\}|<[a-z_ ]{2,40}>")


def placeholders(reply: str) -> list[str]:
    """Template text spoken as is: "[value from tool]", "{temperature}", "<value>"."""
    return _PLACEHOLDER.findall(reply)
