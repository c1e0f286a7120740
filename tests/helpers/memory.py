"""Shared helpers for the memory tests (HA level): requests, facts, storage."""

from __future__ import annotations

from collections.abc import Callable
import json
from pathlib import Path
from typing import Any

from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.memory.manager import Memory
from custom_components.local_assistant.memory.store import storage_key
from tests.helpers import fake_openai as fake

FACTS_LINE = "Current facts: "
PINNED_LINE = "Pinned facts, already remembered (do not repeat them): "
EXCHANGE_LINE = "Latest exchange: "


def is_extraction(body: dict[str, Any]) -> bool:
    """Replies stream; the extractor asks for one non-streamed answer."""
    return not body.get("stream")


def chat_requests(server: fake.FakeOpenAIServer) -> list[dict[str, Any]]:
    """The reply requests the server got, in order."""
    return [body for body in server.requests if not is_extraction(body)]


def extraction_requests(server: fake.FakeOpenAIServer) -> list[dict[str, Any]]:
    """The extractor requests the server got, in order."""
    return [body for body in server.requests if is_extraction(body)]


def responder(
    extract: Callable[[dict[str, Any]], Any],
    chat: Callable[[dict[str, Any]], Any] | None = None,
) -> Callable[[dict[str, Any]], Any]:
    """Answer extractor requests with `extract`, replies with `chat` (default "OK")."""

    def answer(body: dict[str, Any]) -> Any:
        if is_extraction(body):
            return extract(body)
        return chat(body) if chat is not None else fake.text("OK")

    return answer


def _line(body: dict[str, Any], prefix: str) -> str | None:
    content = body["messages"][1]["content"]
    for line in content.splitlines():
        if line.startswith(prefix):
            return line.removeprefix(prefix)
    return None


def current_facts(body: dict[str, Any]) -> list[str]:
    """The facts an extractor request says the speaker has (unpinned)."""
    line = _line(body, FACTS_LINE)
    assert line is not None
    return list(json.loads(line))


def pinned_facts(body: dict[str, Any]) -> list[str]:
    """The pinned facts an extractor request shows (may be absent)."""
    line = _line(body, PINNED_LINE)
    return [] if line is None else list(json.loads(line))


def latest_exchange(body: dict[str, Any]) -> dict[str, str]:
    """The quoted exchange of an extractor request: {"user": ..., "assistant": ...}."""
    line = _line(body, EXCHANGE_LINE)
    assert line is not None
    return dict(json.loads(line))


def facts_answer(texts: list[str], **kwargs: Any) -> fake.Reply:
    """An extractor answer: exactly a JSON array of strings."""
    return fake.text(json.dumps(texts), **kwargs)


def memory_of(entry: Any) -> Memory:
    """The loaded entry's memory."""
    memory: Memory = entry.runtime_data.memory
    return memory


def fact_texts(memory: Memory, speaker: str) -> list[str]:
    """Active fact texts of a speaker, in prompt order."""
    return [fact.text for fact in memory.list_facts(speaker)]


def stored(hass_storage: dict[str, Any], entry_id: str) -> dict[str, Any] | None:
    """The facts file of an entry as the (mocked) Store last wrote it."""
    return hass_storage.get(storage_key(entry_id))


def stored_book(
    hass_storage: dict[str, Any], entry_id: str, speaker: str
) -> dict[str, Any]:
    """One speaker's record in the stored file."""
    data = stored(hass_storage, entry_id)
    assert data is not None
    book: dict[str, Any] = data["data"]["speakers"][speaker]
    return book


def stored_fact_texts(
    hass_storage: dict[str, Any], entry_id: str, speaker: str
) -> list[str]:
    """Fact texts of one speaker in the stored file."""
    data = stored(hass_storage, entry_id)
    assert data is not None
    book = data["data"]["speakers"].get(speaker, {"facts": []})
    return [fact["text"] for fact in book["facts"]]


def storage_entry(speakers: dict[str, list[str]]) -> dict[str, Any]:
    """A facts file as a previous run would have written it."""
    return {
        "version": 1,
        "minor_version": 1,
        "key": "ignored",
        "data": {
            "speakers": {
                speaker: {
                    "facts": [
                        {
                            "id": f"s{number}f{index}",
                            "text": text,
                            "created": 1_700_000_000.0,
                            "updated": 1_700_000_000.0,
                            "last_used": None,
                            "use_count": 0,
                            "source": "extracted",
                            "pinned": False,
                        }
                        for index, text in enumerate(texts)
                    ],
                    "history": [],
                }
                for number, (speaker, texts) in enumerate(speakers.items())
            }
        },
    }


async def create_user(hass: HomeAssistant, name: str) -> str:
    """A real HA user; returns its id."""
    user = await hass.auth.async_create_user(name)
    return user.id


# --- the facts file on disk (with the `storage_dir` fixture) -------------------------

GOOD = storage_entry({"user:ada": ["The user has a cat.", "The user likes tea."]})


def facts_file(storage_dir: Path, entry: MockConfigEntry) -> Path:
    return storage_dir / storage_key(entry.entry_id)


def write(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")


def kept_copies(path: Path) -> list[Path]:
    """Files moved aside next to the facts file (by HA or by us)."""
    return sorted(path.parent.glob(f"{path.name}.corrupt*"))
