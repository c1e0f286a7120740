"""A question said back is never heard, in scripts written without spaces too.

Real HA (the `hass` fixture), the real openai client, real HTTP and SSE from
the fake server of tests/helpers. The echo hold (llm/echo.py) counts the
user's words from three on, so that "Bonjour !" may answer "Bonjour !"; a
Chinese, Japanese or Thai question was one "word" to a count by spaces, so
the bundled model's answer that only said it back was heard and replayed,
and the session taught the next answers to do the same.
"""

from __future__ import annotations

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse, converse_streaming


@pytest.mark.parametrize(
    ("language", "ha_language", "question", "answer"),
    [
        ("zh-CN", "zh-Hans", "你觉得明天会下雨吗？", "我不确定，请看天气预报。"),
        ("ja", "ja", "明日は雨が降ると思いますか？", "天気予報を見てください。"),
        ("th", "th", "คุณคิดว่าพรุ่งนี้ฝนจะตกไหม", "ลองดูพยากรณ์อากาศนะครับ"),
    ],
)
async def test_a_question_said_back_is_asked_for_again_and_never_replayed(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    ha_language: str,
    question: str,
    answer: str,
) -> None:
    hass.config.language = ha_language
    fake_server.queue(fake.text(question), fake.text(answer))
    turn = await converse_streaming(hass, question, language=language)
    assert turn.speech == answer
    assert question not in turn.streamed_text
    assert len(fake_server.requests) == 2

    fake_server.queue(fake.text("好的。"))
    await converse(
        hass, "谢谢", conversation_id=turn.result.conversation_id, language=language
    )
    replayed = [
        m["content"]
        for m in fake_server.requests[-1]["messages"]
        if m["role"] == "assistant"
    ]
    assert replayed == [answer]


@pytest.mark.parametrize(
    ("language", "ha_language", "greeting"),
    [
        ("zh-CN", "zh-Hans", "你好！"),
        ("ja", "ja", "こんにちは！"),
        # From the review of b387ab9: kana and Thai words are long, and Thai
        # vowel and tone marks are no letters of their own.
        ("ja", "ja", "おはようございます！"),
        ("ja", "ja", "おやすみなさい"),
        ("th", "th", "สวัสดี"),
        ("th", "th", "สวัสดีครับ"),
    ],
)
async def test_a_greeting_may_still_be_answered_in_kind(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    language: str,
    ha_language: str,
    greeting: str,
) -> None:
    hass.config.language = ha_language
    fake_server.queue(fake.text(greeting))
    turn = await converse_streaming(hass, greeting, language=language)
    assert turn.speech == greeting
    assert len(fake_server.requests) == 1
