"""Long-term facts on disk: one HA Store per config entry, all speakers in it.

Writes are debounced (HA flushes delayed saves on shutdown). A file that cannot
be read is moved aside, never deleted, and the integration starts with what
could be read, so a bad file costs neither the start-up nor the old data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util

from ..const import (
    DOMAIN,
    FACTS_SAVE_DELAY_SECONDS,
    FACTS_STORAGE_MINOR_VERSION,
    FACTS_STORAGE_VERSION,
    LOGGER,
)
from .facts import FactBook

type StoredFacts = dict[str, Any]


def storage_key(entry_id: str) -> str:
    """The `.storage` file name of an entry's facts."""
    return f"{DOMAIN}.facts.{entry_id}"


class _FactsStore(Store[StoredFacts]):
    """Store with the migration hook for future schema versions."""

    async def _async_migrate_func(
        self, old_major_version: int, old_minor_version: int, old_data: StoredFacts
    ) -> StoredFacts:
        # Version 1 is the first schema; minor bumps only add optional keys,
        # which FactBook.from_dict tolerates.
        if old_major_version > FACTS_STORAGE_VERSION:
            raise NotImplementedError(
                f"Facts stored by a newer version ({old_major_version})"
            )
        return old_data


class FactStore:
    """All speakers' fact books of one config entry."""

    def __init__(self, hass: HomeAssistant, entry_id: str, *, max_facts: int) -> None:
        """Create an empty store; call async_load next."""
        self._hass = hass
        self._key = storage_key(entry_id)
        self._max_facts = max_facts
        self._books: dict[str, FactBook] = {}
        self._store = self._new_store()
        self._dirty = False

    def _new_store(self) -> _FactsStore:
        return _FactsStore(
            self._hass,
            FACTS_STORAGE_VERSION,
            self._key,
            minor_version=FACTS_STORAGE_MINOR_VERSION,
            atomic_writes=True,
        )

    async def async_load(self) -> None:
        """Read the file; keep a bad file aside and start with what is readable."""
        try:
            raw = await self._store.async_load()
        except (HomeAssistantError, NotImplementedError, ValueError) as err:
            await self._async_set_aside(f"unreadable: {type(err).__name__}")
            return
        if raw is None:
            return
        speakers = raw.get("speakers") if isinstance(raw, dict) else None
        if not isinstance(speakers, dict):
            await self._async_set_aside("unexpected layout")
            return
        bad = 0
        for speaker, data in speakers.items():
            try:
                self._books[speaker] = FactBook.from_dict(
                    data, max_facts=self._max_facts
                )
            except (KeyError, TypeError, ValueError):
                bad += 1
        if bad:
            await self._async_set_aside(f"{bad} speaker record(s) invalid")
            # Write back what was readable; the original stays in the copy.
            self.async_schedule_save()

    async def _async_set_aside(self, reason: str) -> None:
        path = Path(self._hass.config.path(".storage", self._key))
        target = path.with_name(f"{path.name}.corrupt-{dt_util.utcnow():%Y%m%dT%H%M%S}")
        moved = await self._hass.async_add_executor_job(_move_aside, path, target)
        LOGGER.error(
            "Stored facts %s were %s; %s. Starting with the facts that could be read",
            self._key,
            reason,
            f"a copy is kept at {target}" if moved else "no file to keep",
        )
        # A fresh Store: the failed one may hold a half-finished load.
        self._store = self._new_store()

    def book(self, speaker: str) -> FactBook:
        """The speaker's facts, created empty on first use."""
        if (book := self._books.get(speaker)) is None:
            book = self._books[speaker] = FactBook(max_facts=self._max_facts)
        return book

    def get(self, speaker: str) -> FactBook | None:
        """The speaker's facts if any were ever stored."""
        return self._books.get(speaker)

    def speakers(self) -> list[str]:
        """Speakers with a fact book."""
        return list(self._books)

    @callback
    def async_schedule_save(self) -> None:
        """Save soon; several changes in a row become one write."""
        self._dirty = True
        self._store.async_delay_save(self._data_to_save, FACTS_SAVE_DELAY_SECONDS)

    def _data_to_save(self) -> StoredFacts:
        self._dirty = False
        return {
            "speakers": {
                speaker: book.to_dict()
                for speaker, book in self._books.items()
                if book.facts or book.history
            }
        }

    async def async_flush(self) -> None:
        """Write pending changes now (unload, tests)."""
        if self._dirty:
            await self._store.async_save(self._data_to_save())

    async def async_remove(self) -> None:
        """Delete the file (entry removed)."""
        await self._store.async_remove()

    def stats(self) -> dict[str, int]:
        """Counts for diagnostics; never fact text."""
        return {
            "speakers": len(self._books),
            "facts": sum(len(book.facts) for book in self._books.values()),
            "history": sum(len(book.history) for book in self._books.values()),
        }


def _move_aside(path: Path, target: Path) -> bool:
    """Move the bad file out of the way (runs in the executor)."""
    if not path.exists():
        return False
    path.replace(target)
    return True


async def async_remove_store(hass: HomeAssistant, entry_id: str) -> None:
    """Delete an entry's facts file without loading it."""
    await Store[StoredFacts](
        hass, FACTS_STORAGE_VERSION, storage_key(entry_id)
    ).async_remove()
