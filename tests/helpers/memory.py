"""Shared helpers for the memory tests (HA level): requests, facts, storage."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
import inspect
import json
from pathlib import Path
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.const import (
    CONF_DEVICE_PEOPLE,
    CONF_EXTRACTION,
    DOMAIN,
    EXTRACTION_OFF,
)
from custom_components.local_assistant.memory.extraction_prompt import (
    MESSAGE_LABEL,
    NO_NOTES,
    NOTE_LABEL,
    NOTES_LABEL,
)
from custom_components.local_assistant.memory.manager import Memory
from custom_components.local_assistant.memory.store import storage_key
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse, speech

# A second server standing in for a hosted extractor (tests/memory/conftest.py).
HOSTED_MODEL = "hosted-extractor"
HOSTED_KEY = "sk-hosted-secret"


def is_extraction(body: dict[str, Any]) -> bool:
    """Replies stream; the extractor asks for non-streamed answers."""
    return not body.get("stream")


def _task(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def is_edit_task(body: dict[str, Any]) -> bool:
    """A hosted extractor's one task: the facts numbered, then the user's words."""
    return _task(body).startswith((NOTES_LABEL, NO_NOTES))


def is_update_task(body: dict[str, Any]) -> bool:
    """The small model's second task: one remembered fact as it is now."""
    return _task(body).startswith(NOTE_LABEL)


def is_fact_task(body: dict[str, Any]) -> bool:
    """The small model's first task: the facts in the user's words."""
    return _task(body).startswith(MESSAGE_LABEL)


def update_requests(server: fake.FakeOpenAIServer) -> list[dict[str, Any]]:
    """The small model's update tasks the server got, in order."""
    return [body for body in extraction_requests(server) if is_update_task(body)]


def fact_requests(server: fake.FakeOpenAIServer) -> list[dict[str, Any]]:
    """The extractor's first request per exchange (a fact task or a hosted edit task)."""
    return [body for body in extraction_requests(server) if not is_update_task(body)]


def note(body: dict[str, Any]) -> str:
    """The remembered fact an update task quotes."""
    first = _task(body).splitlines()[0]
    return str(json.loads(first.removeprefix(NOTE_LABEL)))


def chat_requests(server: fake.FakeOpenAIServer) -> list[dict[str, Any]]:
    """The reply requests the server got, in order."""
    return [body for body in server.requests if not is_extraction(body)]


def extraction_requests(server: fake.FakeOpenAIServer) -> list[dict[str, Any]]:
    """All extractor requests the server got, in order."""
    return [body for body in server.requests if is_extraction(body)]


def said(body: dict[str, Any]) -> str:
    """What the user said, as an extractor request quotes it."""
    content = str(body["messages"][-1]["content"])
    for line in content.splitlines():
        if line.startswith(MESSAGE_LABEL):
            return str(json.loads(line.removeprefix(MESSAGE_LABEL)))
    raise AssertionError("no message quoted")


def shown(body: dict[str, Any]) -> list[str]:
    """The facts an extractor request shows, in their numbered order."""
    content = str(body["messages"][-1]["content"])
    if content.startswith(NO_NOTES):
        return []
    assert content.startswith(NOTES_LABEL), content
    notes: list[str] = []
    for line in content.splitlines()[1:]:
        if line.startswith(MESSAGE_LABEL):
            break
        number, _, quoted = line.partition(". ")
        assert int(number) == len(notes) + 1
        notes.append(str(json.loads(quoted)))
    return notes


def number_of(body: dict[str, Any], text: str) -> int:
    """The number an extractor request gives a fact."""
    return shown(body).index(text) + 1


def edits_answer(lines: list[str], **kwargs: Any) -> fake.Reply:
    """An extractor answer of edit lines ("ADD: ...", "REPLACE 2: ...", "REMOVE 1"), or NONE."""
    return fake.text("\n".join(lines) if lines else "NONE", **kwargs)


def facts_answer(texts: list[str], **kwargs: Any) -> fake.Reply:
    """An answer with these facts, one per line (NONE for none).

    The small model's fact task answers so; `responder` makes it `ADD:` lines
    for a hosted model's edit task.
    """
    return fake.text("\n".join(texts) if texts else "NONE", **kwargs)


def unchanged(body: dict[str, Any]) -> fake.Reply:
    """An update-task answer that copies the fact: nothing changed."""
    return fake.text(note(body))


_EDIT_WORDS = ("ADD", "REPLACE", "REMOVE", "NONE")


def _as_edits(reply: Any) -> Any:
    """Plain fact lines as a hosted model's additions (`ADD:` lines)."""
    if not isinstance(reply, fake.Reply) or reply.kind != "text":
        return reply
    lines = reply.content.splitlines()
    if (
        reply.content.startswith(("[", "```"))
        or not lines
        or any(line.lstrip("-* ").upper().startswith(_EDIT_WORDS) for line in lines)
    ):
        return reply
    return replace(reply, content="\n".join(f"ADD: {line}" for line in lines))


def responder(
    extract: Callable[[dict[str, Any]], Any],
    chat: Callable[[dict[str, Any]], Any] | None = None,
    update: Callable[[dict[str, Any]], Any] = unchanged,
) -> Callable[[dict[str, Any]], Any]:
    """Answer the fact task (or a hosted edit task) with `extract`, update tasks
    with `update` (default: the fact unchanged), replies with `chat` (default "OK")."""

    async def answer(body: dict[str, Any]) -> Any:
        if not is_extraction(body):
            return (
                await _maybe_await(chat(body)) if chat is not None else fake.text("OK")
            )
        if is_update_task(body):
            return await _maybe_await(update(body))
        reply = await _maybe_await(extract(body))
        return _as_edits(reply) if is_edit_task(body) else reply

    return answer


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


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


async def start_with_facts(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    entry: MockConfigEntry,
    speakers: dict[str, list[str]],
) -> None:
    """Start the entry with facts a previous run stored."""
    hass_storage[storage_key(entry.entry_id)] = storage_entry(speakers)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()


async def ada_with_facts(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    entry: MockConfigEntry,
    facts: list[str],
    options: dict[str, Any] | None = None,
) -> tuple[str, str, Memory]:
    """A user Ada whose facts a previous run stored: her id, speaker key, the
    memory; the entry's ``options`` set first when given."""
    ada = await create_user(hass, "Ada")
    speaker = f"user:{ada}"
    if options is not None:
        hass.config_entries.async_update_entry(entry, options=options)
    await start_with_facts(hass, hass_storage, entry, {speaker: facts})
    return ada, speaker, memory_of(entry)


async def extraction_idle(memory: Memory) -> None:
    """Wait until the speaker's background extraction is done."""
    assert memory.extractor is not None
    await memory.extractor.async_wait_idle()


async def ada_memory_turn(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    facts: list[str],
    sentence: str,
    language: str,
) -> tuple[list[str], list[str], str]:
    """Ada with ``facts`` says ``sentence``: her active notes, her pinned notes
    and what she heard. Should the words go to the model, it answers in text."""
    ada, speaker, memory = await ada_with_facts(hass, hass_storage, entry, facts)
    fake_server.queue(fake.text("Model answer."), fake.text("Model answer."))
    result = await converse(hass, sentence, user_id=ada, language=language)
    left = fact_texts(memory, speaker)
    pinned = [fact.text for fact in memory.list_facts(speaker) if fact.pinned]
    assert await hass.config_entries.async_unload(entry.entry_id)
    return left, pinned, speech(result)


async def ada_with_kitchen_satellite(
    hass: HomeAssistant, entry: MockConfigEntry, **options: Any
) -> str:
    """Ada, an HA user whose person the kitchen satellite counts as; her id."""
    ada = await create_user(hass, "Ada")
    hass.states.async_set(
        "person.ada", "home", {"user_id": ada, "friendly_name": "Ada"}
    )
    hass.config_entries.async_update_entry(
        entry,
        options={
            CONF_EXTRACTION: EXTRACTION_OFF,
            CONF_DEVICE_PEOPLE: {"kitchen-satellite": "person.ada"},
            **options,
        },
    )
    return ada


def our_repair_issues(hass: HomeAssistant) -> list[ir.IssueEntry]:
    """The repair issues about this integration (its files, its options)."""
    return [
        issue
        for issue in ir.async_get(hass).issues.values()
        if DOMAIN in (issue.domain, issue.issue_domain)
    ]
