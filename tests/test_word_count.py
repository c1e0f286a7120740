"""How many words a text says, in any script (wording.word_count)."""

from __future__ import annotations

import pytest

from custom_components.local_assistant.wording import word_count


@pytest.mark.parametrize(
    "text",
    [
        "Open the garage.",
        "Plus fort !",
        "Il va pleuvoir demain ?",
        "Schalte die Flurlampe ein",
        "¿Va a llover mañana?",
        "Zet de lamp — nu — aan",
        "",
        "   ",
        "هل ستمطر غدا؟",
        "Будет ли завтра дождь?",
    ],
)
def test_a_script_with_spaces_counts_as_split_at_spaces(text: str) -> None:
    assert word_count(text) == len(text.split())


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("明天会下雨吗？", 3),
        ("你好", 1),
        ("好", 1),
        ("明日は雨が降りますか？", 3),
        ("おはようございます！", 2),
        ("こんにちは", 1),
        ("浪高5.5米", 2),
        ("ok 明天 rain", 3),
        # Thai vowel and tone marks are no letters of their own.
        ("สวัสดีครับ", 1),
        ("เปิดอยู่ครับ", 2),
        ("พรุ่งนี้ฝนจะตกไหม", 3),
    ],
)
def test_a_script_without_spaces_counts_words_by_its_letters(
    text: str, count: int
) -> None:
    assert word_count(text) == count
