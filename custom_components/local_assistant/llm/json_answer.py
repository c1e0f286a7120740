"""Find the JSON value in a small model's answer to a structured AI task.

Local servers often ignore ``response_format``, and small models wrap JSON
the same ways they wrap the fact list (see ../memory/extraction_prompt.py):
``<think>`` reasoning, a code fence, a short preface such as "Here is the
JSON:". This module removes those and returns the JSON object or array, or
raises :class:`JsonAnswerError`. Unlike the fact parser it accepts prose
around the value: a wrong AI task answer is only returned to the automation
that asked for it, it never corrupts stored memory.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .think import split_think

__all__ = ["JsonAnswerError", "parse_json_answer"]

_CLOSE = "</think>"
_FENCE = re.compile(
    r"```[ \t]*(?:json)?[ \t]*\n?(?P<body>.*?)```", re.DOTALL | re.IGNORECASE
)
_DECODER = json.JSONDecoder()


class JsonAnswerError(ValueError):
    """The answer holds no JSON object or array.

    The message gives the reason and the answer's length, never the answer:
    it can hold personal data and ends up in logs and traces.
    """

    def __init__(self, reason: str, answer_length: int) -> None:
        """Record why and how long the answer was."""
        super().__init__(f"{reason} (answer of {answer_length} characters)")
        self.reason = reason
        self.answer_length = answer_length


def parse_json_answer(answer: str) -> Any:
    """Return the JSON object or array the answer holds.

    Tried in order: the whole text (reasoning removed), the body of the first
    code fence, then the first ``{`` or ``[`` that starts a complete value.
    """
    visible, _thinking = split_think(answer)
    # A template that prefilled `<think>` leaves only the closing tag.
    _before, close, after = visible.rpartition(_CLOSE)
    text = (after if close else visible).strip()
    if not text:
        raise JsonAnswerError("empty answer", len(answer))

    candidates = [text]
    if fence := _FENCE.search(text):
        candidates.append(fence.group("body").strip())
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except RecursionError:
            raise JsonAnswerError("JSON nested too deeply", len(answer)) from None
        except ValueError:
            continue
        if isinstance(value, dict | list):
            return value
        raise JsonAnswerError("not a JSON object or array", len(answer))

    for match in re.finditer(r"[{\[]", text):
        try:
            value, _end = _DECODER.raw_decode(text, match.start())
        except RecursionError:
            raise JsonAnswerError("JSON nested too deeply", len(answer)) from None
        except ValueError:
            continue
        return value
    raise JsonAnswerError("no valid JSON object or array", len(answer))
