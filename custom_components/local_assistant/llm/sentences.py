"""Sentences the agent says itself, in the conversation language.

When a turn cannot finish, the agent speaks one short sentence of its own ("The
local model took too long to answer."), and an AI task fails with the same
sentence as its error. Each sentence is an exception translation, so it is
translated like every other string of the integration and the UI shows the
same words: ``exceptions.<key>.message`` in ``strings.json`` and
``translations/*.json`` (:data:`SPOKEN_LANGUAGES`).

Spoken, a sentence follows the conversation's language, not Home Assistant's
(as the tool filler does in ``llm/spoken.py``): "es", "es-ES" and "es-419"
all get the Spanish text; a language we have no translation for gets English.
Language tags are read here only: :func:`spoken_language` for ours,
:func:`ha_language` for HA's own translations.

To add a sentence:

1. add its key to :data:`SpokenKey` (mypy then checks every use of it);
2. add ``"<key>": {"message": "..."}`` under ``exceptions`` in
   ``strings.json`` and ``translations/en.json`` (the same text) and in every
   other ``translations/*.json`` (``tests/test_translations.py`` checks that
   every key has a text in every language);
3. inside the tool loop ``raise ModelError("<key>")`` (``entity.py``);
   anywhere else ``await async_spoken_message(hass, "<key>", language)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, Literal

from homeassistant.components.weather.const import DOMAIN as WEATHER_DOMAIN
from homeassistant.const import MATCH_ALL
from homeassistant.core import HomeAssistant
from homeassistant.generated.languages import LANGUAGES
from homeassistant.helpers import translation
from homeassistant.util import language as language_util

from ..const import DOMAIN
from ..tools.phrases import PHRASE_PREFIX, Phrases
from .spoken import VoiceStyle

__all__ = [
    "SPOKEN_LANGUAGES",
    "SpokenKey",
    "async_answer_language",
    "async_phrases",
    "async_spoken_message",
    "async_voice_style",
    "best_language",
    "spoken_language",
]

SpokenKey = Literal[
    # The server: why a request failed (server/client.py, error_key).
    "model_timeout",
    "model_unreachable",
    "model_auth",
    "model_not_found",
    "model_busy",
    "model_error",
    "model_broken_answer",
    "model_failed",
    # The tool loop (entity.py).
    "no_answer",
    "tool_loop",
    # A turn where a change was asked or tried and none ran (turn/policy.py).
    "nothing_changed",
    # A change of the model's ran and it gave no answer of its own: what ran
    # answers, naming what it acted on where the results do (conversation.py).
    "done",
    "done_targets",
    # A statement whose answer showed nothing (only the user's words said back).
    "acknowledged",
    # An answer that repeats a placeholder of the prompt ("[value from tool]").
    "could_not_check",
    # What a memory tool did, for the model to say (memory/voice.py).
    "memory_remembered",
    "memory_forgotten",
    # A memory command read by our sentences (memory/voice.py: async_run_command).
    "memory_read",
    "memory_read_empty",
    "memory_not_found",
    "memory_which",
    "memory_confirm",
    "memory_numbered_note",
    "memory_too_long",
    "memory_full",
    "memory_unavailable",
    # Said before a tool runs when the model has said nothing yet (tool filler),
    # and what a bare URL is read as (llm/spoken.py).
    "filler",
    "link_text",
    # The last line of the prompt for a language we speak (llm/prompt.py).
    "answer_language",
]

# The languages of translations/*.json (a test keeps this true): every
# language HA's UI or its intents speak but regional variants our language
# serves ("en-GB", "es-419", "de-CH"). Spoken memory commands are read in
# fewer (memory/commands.py: COMMAND_LANGUAGES).
SPOKEN_LANGUAGES: Final = (
    "af",
    "ar",
    "bg",
    "bn",
    "bs",
    "ca",
    "cs",
    "cy",
    "da",
    "de",
    "el",
    "en",
    "eo",
    "es",
    "et",
    "eu",
    "fa",
    "fi",
    "fr",
    "fy",
    "ga",
    "gl",
    "gsw",
    "he",
    "hi",
    "hr",
    "hu",
    "hy",
    "id",
    "is",
    "it",
    "ja",
    "ka",
    "ko",
    "kw",
    "lb",
    "lt",
    "lv",
    "mk",
    "ml",
    "mn",
    "ms",
    "nb",
    "ne",
    "nl",
    "nn",
    "pl",
    "pt",
    "pt-BR",
    "ro",
    "ru",
    "sk",
    "sl",
    "sq",
    "sr",
    "sr-Latn",
    "sv",
    "sw",
    "ta",
    "te",
    "th",
    "tr",
    "uk",
    "ur",
    "vi",
    "zh-Hans",
    "zh-Hant",
)
FALLBACK_LANGUAGE: Final = "en"
# Region tags whose script is traditional (the likely script of CLDR).
_TRADITIONAL_REGIONS: Final = frozenset({"tw", "hk", "mo"})


def spoken_language(language: str | None) -> str:
    """Our closest language to a conversation language ("es-ES" → "es").

    Read with HA's own matcher, which knows regions and scripts ("de-CH",
    "zh-Hant"); HA's sentence data has its own tags (turn/vocabulary.py).
    """
    return best_language(_written(language), SPOKEN_LANGUAGES) or FALLBACK_LANGUAGE


def ha_language(language: str | None) -> str:
    """HA's closest translation language ("de-DE" → "de"; "en-GB" stays).

    HA reads a tag it has no file for as English: its weather words and
    domain names for "de-DE" would be English ones.
    """
    return best_language(_written(language), LANGUAGES) or FALLBACK_LANGUAGE


def _written(language: str | None) -> str | None:
    """A tag as language and script, where the script decides the words.

    HA's matcher reads neither "zh-Hant-TW" nor "sr-Latn-RS" (it splits a
    tag once) and takes "zh-TW" for simplified Chinese; its translations are
    by script ("zh-Hant", "sr-Latn"). HA's sentence data is by region
    ("zh-TW", "zh-HK"): this is for translations only.
    """
    if not language:
        return language
    parts = language.replace("_", "-").split("-")
    if len(parts) > 2 and len(parts[1]) == 4:
        return f"{parts[0]}-{parts[1]}"
    if (
        len(parts) == 2
        and parts[0].casefold() == "zh"
        and parts[1].casefold() in _TRADITIONAL_REGIONS
    ):
        return "zh-Hant"
    return language


def best_language(language: str | None, available: Iterable[str]) -> str | None:
    """The best of ``available`` for a conversation language, or None.

    On a tie, a language before its regions: HA's matcher ranks "es" and
    "es-419" alike for "es-MX" and keeps their order, and a set's order
    changes with each start (no weather words exist for "es-419").
    """
    if not language or language == MATCH_ALL:
        return None
    ordered = sorted(available, key=lambda tag: (len(tag), tag))
    if found := language_util.matches(language, ordered):
        return found[0]
    return None


async def async_spoken_message(
    hass: HomeAssistant,
    key: SpokenKey,
    language: str | None,
    placeholders: Mapping[str, str] | None = None,
) -> str:
    """The sentence for `key` in the conversation's language.

    Home Assistant loads the translation files once and falls back to
    English for a key a language lacks.
    """
    texts = await translation.async_get_translations(
        hass, spoken_language(language), "exceptions", {DOMAIN}
    )
    message = texts.get(f"component.{DOMAIN}.exceptions.{key}.message", key)
    return message.format(**placeholders) if placeholders else message


async def async_answer_language(hass: HomeAssistant, language: str | None) -> str:
    """ "Answer in German." in German, for a language of ours; else nothing.

    Small models drift into English; a language we have no sentence for is
    left to the tool bias's "answer in the user's language".
    """
    if best_language(language, SPOKEN_LANGUAGES) is None:
        return ""
    return await async_spoken_message(hass, "answer_language", language)


async def async_voice_style(
    hass: HomeAssistant, language: str | None, *, filler: bool
) -> VoiceStyle:
    """How text is made speakable in the conversation's language."""
    link_text = await async_spoken_message(hass, "link_text", language)
    if not filler:
        return VoiceStyle(link_text=link_text)
    filler_text = await async_spoken_message(hass, "filler", language)
    return VoiceStyle(link_text=link_text, filler=f"{filler_text} ")


async def async_phrases(hass: HomeAssistant, language: str | None) -> Phrases:
    """The live-data phrases of the conversation's language (tools/phrases.py).

    Our templates from the translations (``exceptions.live_*``), and the
    weather conditions in HA's own words for that language where it has them
    (ours, ``live_condition_*``, where it has none).
    """
    ours = spoken_language(language)
    texts = await translation.async_get_translations(hass, ours, "exceptions", {DOMAIN})
    prefix = f"component.{DOMAIN}.exceptions.{PHRASE_PREFIX}"
    templates = {
        key.removeprefix(prefix).removesuffix(".message"): text
        for key, text in texts.items()
        if key.startswith(prefix)
    }
    conditions = await _async_conditions(hass, ha_language(language))
    if ours != FALLBACK_LANGUAGE:
        # HA fills a word its translation lacks with the English one (Catalan
        # has no "windy-variant", Hindi no weather words, Swahili no
        # translations): left out, Phrases.condition says ours.
        english = await _async_conditions(hass, FALLBACK_LANGUAGE)
        conditions = {
            condition: word
            for condition, word in conditions.items()
            if word != english.get(condition)
        }
    return Phrases(templates, conditions)


async def _async_conditions(hass: HomeAssistant, language: str) -> dict[str, str]:
    """HA's weather condition words for one of its translation languages."""
    weather = await translation.async_get_translations(
        hass, language, "entity_component", {WEATHER_DOMAIN}
    )
    state_prefix = f"component.{WEATHER_DOMAIN}.entity_component._.state."
    return {
        key.removeprefix(state_prefix): text
        for key, text in weather.items()
        if key.startswith(state_prefix)
    }
