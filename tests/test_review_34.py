"""Review of the value check (llm/values.py, commits 18744c3 and 793dda8).

Each test is an answer users would hear wrongly where live lines are shown;
each failed on 793dda8. Fixed since: a sentence is checked only where the
user's words name the line too, and a label is named by its own word, not a
word it starts; a number with both marks reads as written; a full-width mark
ends a sentence and digits after CJK letters are numbers; labels after a
full-width colon count; the sentence held at a tool call goes the way words
before a call go (since pass 39, after a change, that is dropped by design).
Real HA (the `hass` fixture) and the fake OpenAI-compatible server where the
defect is end to end; the pure module otherwise.
"""

from __future__ import annotations

from typing import Any

from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.llm.values import ValueCheck, shown_numbers
from custom_components.local_assistant.tools.sea import SEA_TOOL_NAME
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse_streaming
from tests.helpers.live import LIVE_OPTIONS, async_setup_live_entities
from tests.llm.test_values import live_lines


@pytest.fixture
def agent_options() -> dict[str, Any]:
    # The model answers every turn (HA's own intents off).
    return {**LIVE_OPTIONS, "local_intents": False}


def _said(lines: list[str], shown: list[str], *texts: str) -> str:
    values = ValueCheck(shown_numbers([*lines, *shown]), lines)
    return "".join(values.feed(text) for text in texts) + values.flush()


# A recipe step: knowledge, no live data; each uses the everyday word for
# "now" that is (part of) a live line's label in its language.
RECIPES_WITH_NOW = {
    "en": (
        "How do I bake a lemon cake?",
        "Now bake the cake for 40 minutes at 180 °C.",
    ),
    "de": (
        "Wie backe ich einen Zitronenkuchen?",
        "Jetzt den Kuchen 40 Minuten bei 180 Grad backen.",
    ),
    "es": (
        "¿Cómo hago un bizcocho de limón?",
        "Ahora hornea el bizcocho 40 minutos a 180 grados.",
    ),
    "fr": (
        "Comment faire un gâteau au citron ?",
        "Maintenant, faites cuire le gâteau 40 minutes à 180 degrés.",
    ),
    "nl": (
        "Hoe bak ik een citroencake?",
        "Bak de cake nu 40 minuten op 180 graden.",
    ),
}


@pytest.mark.parametrize("language", sorted(RECIPES_WITH_NOW))
async def test_a_recipe_saying_now_is_said_as_given(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
) -> None:
    """Heard: "Now: Partly cloudy, 12.5 °C." (en, nl), "Kitesurfen jetzt: ja,
    16,5 kn ..." (de, fr), both lines (es), instead of the recipe step. Should
    hear: the recipe step, as the module promises ("a recipe is not
    checked"). Cause: llm/echo.py:178-195 (named_lines, reused by
    llm/values.py:129) takes a label's everyday word as naming the line: the
    label "Now"/"Nu" as a whole word, and the stems "jetzt", "ahora",
    "maintenant" of "Kitesurfen jetzt", "Kitesurf ahora", "Kitesurf
    maintenant"; the recipe's 40 and 180 then count as made-up live values."""
    question, answer = RECIPES_WITH_NOW[language]
    await async_setup_live_entities(hass)
    fake_server.queue(fake.text(answer))
    turn = await converse_streaming(hass, question, language=language)
    assert turn.speech == answer


@pytest.mark.parametrize(
    ("language", "answer"),
    [
        # "window" starts with "wind": the Wind line.
        ("en", "Open the window for 15 minutes after cooking."),
        # "aguacate" starts with "agua": the Agua (water) line.
        ("es", "Un aguacate mediano tiene unas 240 calorías."),
    ],
)
async def test_a_word_that_only_starts_with_a_label_names_no_line(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    answer: str,
) -> None:
    """Heard: "Wind: 8.5 m/s (16.5 kn) from the north-west, gusts ..." for
    airing advice, "Agua: 16,4 °C." for an avocado's calories. Should hear:
    the answer. Cause: llm/echo.py:179 (shared stems, wording.py:114
    _meets) lets a label of four letters ("Wind", "Agua") match any longer
    word it starts ("window", "aguacate"), so llm/values.py:129-130 checks a sentence about no live
    line and replaces it."""
    await async_setup_live_entities(hass)
    fake_server.queue(fake.text(answer))
    turn = await converse_streaming(hass, "Tell me something.", language=language)
    assert turn.speech == answer


@pytest.mark.parametrize(
    ("shown", "answer"),
    [
        # German: thousands point and decimal comma.
        ("Luftdruck: 1013,2 hPa.", "Morgen liegt der Luftdruck bei 1.013,2 hPa."),
        # English: thousands comma and decimal point.
        ("Pressure: 1013.2 hPa.", "Tomorrow the pressure is 1,013.2 hPa."),
        # The very number the prompt shows, written the same way.
        ("Pressure: 1,013.2 hPa.", "Tomorrow the pressure is 1,013.2 hPa."),
    ],
)
def test_a_number_with_thousands_and_decimals_is_the_value_it_writes(
    shown: str, answer: str
) -> None:
    """Heard: the Tomorrow line in place of a true pressure. Should hear the
    answer: 1.013,2 (de) and 1,013.2 (en) are 1013.2, shown to the model.
    Cause: llm/values.py:36-45 (readings) gives a number of three parts or
    more with a decimal part no value at all, so it is never shown, not even
    where the prompt holds the same string."""
    language = "de" if "Luftdruck" in shown else "en"
    lines = live_lines(language)
    assert _said(lines, [shown], answer) == answer


@pytest.mark.parametrize("language", ["zh-Hans", "ja"])
def test_a_sentence_without_spaces_after_it_is_given_when_it_ends(
    language: str,
) -> None:
    """Chinese and Japanese write no space after "。": every answer in a
    home with live lines is held whole until the completion ends, so TTS
    starts only then (before this change it streamed past 60 characters).
    Should: each sentence given once it ends, as the module says. Cause:
    llm/values.py:33 (_SENTENCE_END) ends a sentence only at a mark followed
    by whitespace (or a line break)."""
    lines = live_lines(language)
    values = ValueCheck(shown_numbers(lines), lines)
    first = (
        "这个周末我们可以去公园散步。"
        if language == "zh-Hans"
        else "週末は公園を散歩しましょう。"
    )
    second = "带上水。" if language == "zh-Hans" else "水を持って行きましょう。"
    assert values.feed(first) + values.feed(second[:1]) == first


@pytest.mark.parametrize(
    ("language", "answer"),
    [("zh-Hans", "浪高5.5米。"), ("ja", "波の高さは5.5メートルです。")],
)
def test_a_made_up_wave_height_is_replaced_in_chinese_and_japanese(
    language: str, answer: str
) -> None:
    """Heard: the made-up 5.5 m (the waves are 2.1 m) in Chinese and
    Japanese, while every answer is held for the check. Should hear: the
    waves line. Cause: llm/echo.py:195 counts only lines with an ASCII ":"
    (these labels end in a full-width colon), the labels are no space-separated words
    (llm/echo.py:179-184), and llm/values.py:29 (_NUMBER) finds no number
    right after a letter ("浪高5.5"), in the answer or in the lines."""
    lines = live_lines(language)
    assert _said(lines, [], answer) == lines[1]


async def test_words_before_a_call_after_a_change_are_dropped(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """The light was turned on; the model says so, then reads the sea.

    Words before a call after a change are dropped by design since pass 39:
    the model's words in a round after a change are held, and held words
    before a call are dropped; what ran, or (as here) the model's answer
    after a read, answers. Heard: only "The waves are 1.2 m.", and the sea
    was read with the light on. (Review 34 found "The kitchen light is on."
    lost at the call while such words were still streamed.)"""
    await async_setup_live_entities(hass)
    assert await async_setup_component(
        hass,
        "input_boolean",
        {"input_boolean": {"kitchen_light": {"name": "Kitchen light"}}},
    )
    await hass.async_block_till_done()
    light = "input_boolean.kitchen_light"
    async_expose_entity(hass, "conversation", light, True)
    fake_server.queue(
        fake.tool_calls([("HassTurnOn", {"name": "Kitchen light"})], think="On."),
        fake.tool_calls(
            [(SEA_TOOL_NAME, {})], content="The kitchen light is on.", chunk_size=3
        ),
        fake.text("The waves are 1.2 m."),
    )
    turn = await converse_streaming(
        hass, "Turn on the kitchen light and tell me how the waves are."
    )
    assert hass.states.get(light).state == "on"
    sea = [
        content
        for content in turn.chat_log.content
        if isinstance(content, conversation.ToolResultContent)
        and content.tool_name == SEA_TOOL_NAME
    ]
    assert len(sea) == 1
    assert "error" not in sea[0].tool_result
    assert len(fake_server.requests) == 3
    assert turn.speech == "The waves are 1.2 m."
    assert turn.streamed_text == "The waves are 1.2 m."
