"""The agent's own sentences (llm/sentences.py), in the conversation's language."""

from __future__ import annotations

from homeassistant.core import HomeAssistant
import pytest

from custom_components.local_assistant.llm.sentences import (
    async_answer_language,
    async_phrases,
    async_spoken_message,
    ha_language,
    spoken_language,
)


@pytest.mark.parametrize(
    ("language", "ours"),
    [
        ("en", "en"),
        ("en-GB", "en"),
        ("es", "es"),
        ("es-ES", "es"),
        ("es-419", "es"),
        ("ES", "es"),
        ("de", "de"),
        ("de-CH", "de"),
        ("fr-BE", "fr"),
        ("nl", "nl"),
        ("it", "it"),
        ("pt-BR", "pt-BR"),
        ("pt-PT", "pt"),
        ("pt", "pt"),
        ("nb-NO", "nb"),
        ("no", "nb"),
        ("uk-UA", "uk"),
        ("hu", "hu"),
        ("zh-Hans", "zh-Hans"),
        ("zh-CN", "zh-Hans"),
        ("zh-TW", "zh-Hant"),
        ("zh-HK", "zh-Hant"),
        ("zh_TW", "zh-Hant"),
        ("zh-Hant-TW", "zh-Hant"),
        ("zh-Hans-SG", "zh-Hans"),
        ("sr-Latn-RS", "sr-Latn"),
        ("sr-RS", "sr"),
        ("sr-Latn", "sr-Latn"),
        ("hi-IN", "hi"),
        ("gsw", "gsw"),
        ("xx", "en"),
        ("*", "en"),
        (None, "en"),
        ("", "en"),
    ],
)
def test_spoken_language(language: str | None, ours: str) -> None:
    assert spoken_language(language) == ours


@pytest.mark.parametrize(
    ("key", "language", "said"),
    [
        (
            "nothing_changed",
            "en",
            "Sorry, I couldn't do that, so nothing was changed.",
        ),
        (
            "nothing_changed",
            "es-ES",
            "Lo siento, no he podido hacerlo, así que no se ha cambiado nada.",
        ),
        ("could_not_check", "es", "Lo siento, ahora mismo no he podido comprobarlo."),
        ("could_not_check", "xx", "Sorry, I couldn't check that right now."),
        (
            "model_timeout",
            "es",
            "El modelo local ha tardado demasiado en responder. Inténtalo de nuevo.",
        ),
    ],
)
async def test_sentences_follow_the_language(
    hass: HomeAssistant, key: str, language: str, said: str
) -> None:
    assert await async_spoken_message(hass, key, language) == said  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("regional", "language"),
    [("de-DE", "de"), ("fr-CA", "fr"), ("nl-BE", "nl"), ("es-MX", "es")],
)
async def test_weather_words_of_a_regional_tag_are_its_languages(
    hass: HomeAssistant, regional: str, language: str
) -> None:
    """Found by review: HA has no translation file for "de-DE", so the
    weather conditions of a German live line were English words."""
    english = await async_phrases(hass, "en")
    ours = await async_phrases(hass, regional)
    assert ours.conditions == (await async_phrases(hass, language)).conditions
    assert ours.conditions["rainy"] != english.conditions["rainy"]
    assert ha_language(regional) == language
    assert ha_language("en-GB") == "en-GB"
    # Found by review: HA's matcher ranks both Chinese scripts alike.
    assert ha_language("zh-TW") == ha_language("zh-HK") == "zh-Hant"
    assert ha_language("zh-CN") == "zh-Hans"


@pytest.mark.parametrize("language", ["ca", "pl", "nl", "pt-BR"])
async def test_a_condition_ha_lacks_is_said_in_the_language(
    hass: HomeAssistant, language: str
) -> None:
    """Found by review: HA fills Catalan's missing "windy-variant" with English
    "Windy, cloudy"; our translation's word is said instead."""
    english = await async_phrases(hass, "en")
    phrases = await async_phrases(hass, language)
    said = phrases.condition("windy-variant")
    assert said != english.condition("windy-variant")
    assert said == phrases.texts["condition_windy_variant"]
    assert phrases.condition("rainy") != english.condition("rainy")


@pytest.mark.parametrize("language", ["hi", "sw", "th", "ar-SA"])
async def test_a_language_ha_has_no_weather_words_for_says_ours(
    hass: HomeAssistant, language: str
) -> None:
    """HA has no weather translation for Hindi, Swahili, Thai or Arabic (it
    gives its English words): the conditions, like every line, are ours."""
    english = await async_phrases(hass, "en")
    phrases = await async_phrases(hass, language)
    for condition in ("rainy", "pouring", "partlycloudy", "windy-variant"):
        said = phrases.condition(condition)
        assert said == phrases.texts[f"condition_{condition.replace('-', '_')}"]
        assert said != english.condition(condition)
    assert phrases.texts["now"] != english.texts["now"]
    answer = await async_answer_language(hass, language)
    assert answer
    assert answer != await async_answer_language(hass, "en")
