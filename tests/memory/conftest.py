"""Fixtures of the memory tests."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest

from tests.helpers import fake_openai as fake
from tests.helpers.memory import HOSTED_KEY, HOSTED_MODEL


@pytest.fixture
async def hosted_server(socket_enabled: None) -> AsyncGenerator[fake.FakeOpenAIServer]:
    """A second server standing in for a hosted OpenAI-compatible endpoint."""
    async with fake.FakeOpenAIServer(
        models=[HOSTED_MODEL], api_key=HOSTED_KEY
    ) as server:
        yield server
