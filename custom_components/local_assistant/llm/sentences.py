"""Sentences the agent says itself, in the conversation language.

When a turn cannot finish, the agent speaks one short sentence of its own ("The
local model took too long to answer."), and an AI task fails with the same
sentence as its error. Each sentence is an exception translation, so it is
translated like every other string of the integration and the UI shows the
same words: ``exceptions.<key>.message`` in ``strings.json``,
``translations/en.json`` and ``translations/es.json``.

Spoken, a sentence follows the conversation's language, not Home Assistant's
(as the tool filler does in ``llm/spoken.py``): "es", "es-ES" and "es-419"
all get the Spanish text; a language we have no translation for gets English.

To add a sentence:

1. add its key to :data:`SpokenKey` (mypy then checks every use of it);
2. add ``"<key>": {"message": "..."}`` under ``exceptions`` in
   ``strings.json`` and ``translations/en.json`` (the same text) and in
   ``translations/es.json`` (``tests/test_translations.py`` checks that every
   key has a text in every language);
3. inside the tool loop ``raise ModelError("<key>")`` (``entity.py``);
   anywhere else ``await async_spoken_message(hass, "<key>", language)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

from homeassistant.core import HomeAssistant
from homeassistant.helpers import translation
from homeassistant.util import language as language_util

from ..const import DOMAIN

__all__ = [
    "SPOKEN_LANGUAGES",
    "SpokenKey",
    "async_spoken_message",
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
    # A turn whose answer claimed what no tool did (turn/guard.py, honest_key).
    "nothing_changed",
    "could_not_check",
]

# The languages of translations/*.json (a test keeps this true).
SPOKEN_LANGUAGES: Final = ("en", "es")
FALLBACK_LANGUAGE: Final = "en"


def spoken_language(language: str | None) -> str:
    """Our closest language to a conversation language ("es-ES" → "es")."""
    if language and (found := language_util.matches(language, SPOKEN_LANGUAGES)):
        return found[0]
    return FALLBACK_LANGUAGE


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
