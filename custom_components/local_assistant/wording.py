"""How texts are compared word by word, in any language, with no word lists.

Facts, the user's words and the model's answers are compared by their
distinctive words (:func:`distinctive_words`: by length, case, position and
digits), cut to their first :data:`STEM_LENGTH` letters so inflections meet
("wohne" and "wohnen", "joke" and "jokes"). Memory decides repeats and
related facts with it, the turn policy which note the words name, the echo
check whether an answer only repeats the user.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Iterable
import re
import unicodedata


def _mark_ranges() -> str:
    r"""The combining marks of the Basic Multilingual Plane, as the body of a
    character class.

    Python's ``\w`` has no marks: the vowel signs of Hindi, Bengali, Tamil or
    Thai would cut "बारिश" (rain) into three words.
    """
    codes = [c for c in range(0x10000) if unicodedata.category(chr(c))[0] == "M"]
    runs: list[tuple[int, int]] = []
    for code in codes:
        if runs and runs[-1][1] == code - 1:
            runs[-1] = (runs[-1][0], code)
        else:
            runs.append((code, code))
    return "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in runs)


_MARK_RANGES = _mark_ranges()
# A letter of any script with the marks written on it, and a letter or digit
# so. A mark counts only after one: an emoji's presentation selector (U+FE0F)
# is no word.
LETTER = rf"(?:[^\W\d_][{_MARK_RANGES}]*)"
ALNUM = rf"(?:[^\W_][{_MARK_RANGES}]*)"
_WORD = re.compile(rf"(?:\w[{_MARK_RANGES}]*)+")
# Marks that end a clause: a command may start after any of them ("It is
# dark, turn on the kitchen"), and a phrase never runs across one.
CLAUSE_MARK = re.compile(r"[,;:!?¿¡。！？؟、，；：]|\.(?=\s|$)")
# The mark that ends a first sentence ("21.5" is no end), and those that ask.
_SENTENCE_END = re.compile(r"[.!?。！？؟](?=\s|$)")
QUESTION_MARKS = frozenset("?？؟")
# Scripts written without spaces between words: the Han ideographs, and
# Thai, Lao, Myanmar, Khmer and Japanese kana.
_HAN_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN = re.compile(f"[{_HAN_RANGES}]")
UNSPACED = re.compile(
    f"[{_HAN_RANGES}\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\uff66-\uff9f]"
)
# Characters of such a script to a word: Han ideographs two (most Chinese
# words), any other letter four (kana, Thai: "おはようございます" and
# "สวัสดีครับ" are greetings); vowel and tone marks are no letters.
_HAN_PER_WORD = 2
_LETTERS_PER_WORD = 4
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
# A word this short is a function word in most languages ("der", "ist",
# "les", "een", "the"), unless it is a number or a name.
_MIN_DISTINCTIVE_LENGTH = 4
# Words are compared by their first letters: inflections meet, in any language.
STEM_LENGTH = 5


def _fold(text: str) -> str:
    """Casefold and drop accents, so "Lucía" and "lucia" are one word."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def words(text: str) -> list[str]:
    """The text's words, folded (no case, no accents), in order."""
    return _WORD.findall(_fold(text))


def word_count(text: str) -> int:
    """About how many words ``text`` says, in any script.

    What stands between spaces is a word, as ``len(text.split())`` counts;
    one in a script written without spaces is a word per two Han ideographs
    and per four of its other letters (at least one), and each run of other
    letters or digits in it: "明天会下雨吗" is three, "Will it rain
    tomorrow" four, "你好" and "おはようございます" one and two.
    """
    count = 0
    for part in text.split():
        unspaced = UNSPACED.findall(part)
        if not unspaced:
            count += 1
            continue
        han = sum(1 for char in unspaced if _HAN.match(char))
        letters = sum(
            1
            for char in unspaced
            if not _HAN.match(char) and not unicodedata.category(char).startswith("M")
        )
        others = UNSPACED.sub(" ", part).split()
        count += max(1, int(han / _HAN_PER_WORD + letters / _LETTERS_PER_WORD)) + sum(
            any(char.isalnum() for char in other) for other in others
        )
    return count


def comparable(text: str) -> str:
    """Return what two texts must share to say the same: their words, in order.

    Case, accents, punctuation and spacing aside, "The user likes tea." and
    "the user likes tea" are one text; "isst kein Schweinefleisch" and "isst
    Schweinefleisch" are two. Any language, no word lists.
    """
    return " ".join(words(text))


def distinctive_words(
    text: str, common: frozenset[str] = frozenset()
) -> frozenset[str]:
    """The words that tell what a fact is about, folded.

    A word of at least four letters, a number, or a capitalised word after
    the first (a name such as "Tom", not the capital every sentence starts
    with), unless it is in ``common``: the words most of the speaker's facts
    share ("user", "Benutzer", "usuario"), which :meth:`FactBook.note_use`
    works out from the facts themselves. Decided by length, case, position
    and frequency, so it holds in every language with words and needs no
    list of them; short words ("der", "ist", "les", "een") never count.
    """
    found: set[str] = set()
    for index, word in enumerate(_WORD.findall(text)):
        folded = _fold(word)
        if (
            len(folded) >= _MIN_DISTINCTIVE_LENGTH
            or (index > 0 and word[:1].isupper())
            or any(char.isdigit() for char in word)
        ):
            found.add(folded)
    return frozenset(found - common)


def stems(texts: Iterable[str], common: frozenset[str] = frozenset()) -> frozenset[str]:
    """The distinctive words of the texts, cut to STEM_LENGTH, minus ``common``."""
    return frozenset(
        word[:STEM_LENGTH]
        for text in texts
        for word in distinctive_words(text)
        if word[:STEM_LENGTH] not in common
    )


def _meets(stem: str, other: str) -> bool:
    """The same stem, or a word shorter than a stem starting the other."""
    return stem == other or (
        min(len(stem), len(other)) < STEM_LENGTH
        and (stem.startswith(other) or other.startswith(stem))
    )


def shared(first: frozenset[str], second: frozenset[str]) -> int:
    """How many stems of ``first`` meet one of ``second``."""
    return sum(any(_meets(stem, other) for other in second) for stem in first)


def says_no_more(text_stems: frozenset[str], than: frozenset[str]) -> bool:
    """Every stem of a text meets one of ``than`` (and it has some)."""
    return bool(text_stems) and shared(text_stems, than) == len(text_stems)


def numbers_in(text: str) -> list[float]:
    """The numbers written in ``text`` ("30", "21,5")."""
    return [float(found.replace(",", ".")) for found in _NUMBER.findall(text)]


def first_sentence_mark(text: str) -> str | None:
    """The mark that ends ``text``'s first sentence, if one does."""
    end = _SENTENCE_END.search(text)
    return end.group() if end else None


def ends_asking(text: str) -> bool:
    """Whether ``text``'s first sentence ends with a question mark."""
    return first_sentence_mark(text) in QUESTION_MARKS
