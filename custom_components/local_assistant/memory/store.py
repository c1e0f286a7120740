"""Long-term facts on disk: one HA Store per config entry, all speakers in it.

Writes are debounced (HA flushes delayed saves on shutdown), and only real
changes of the facts are written soon: use counts, which change with replies,
wait for the next real change, the unload or shutdown, or a day. A file that cannot
be read is moved aside, never deleted, and the integration starts with what
could be read, so a bad file costs neither the start-up nor the old data. A
write the disk refuses leaves the facts unsaved, to be written again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from homeassistant.core import DOMAIN as HOMEASSISTANT_DOMAIN, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util
from homeassistant.util.file import WriteError
from homeassistant.util.json import SerializationError

from ..const import (
    DOMAIN,
    FACTS_MAX_RETRY_SAVE_DELAY_SECONDS,
    FACTS_RETRY_SAVE_DELAY_SECONDS,
    FACTS_SAVE_DELAY_SECONDS,
    FACTS_STORAGE_MINOR_VERSION,
    FACTS_STORAGE_VERSION,
    FACTS_USAGE_SAVE_DELAY_SECONDS,
    LOGGER,
)
from .facts import FactBook

type StoredFacts = dict[str, Any]

# HA's own repair issue for a store file it could not parse (its Store's).
_KEPT_COPY_ISSUE = "storage_corruption"


def storage_key(entry_id: str) -> str:
    """The `.storage` file name of an entry's facts."""
    return f"{DOMAIN}.facts.{entry_id}"


class _FactsStore(Store[StoredFacts]):
    """Store with the migration hook for future schema versions, and word of
    each write (HA logs a failed one and drops the data it took)."""

    def __init__(
        self,
        *args: Any,
        on_written: Callable[[BaseException | None], None],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._on_written = on_written

    async def _async_write_data(self, *args: Any, **kwargs: Any) -> None:
        try:
            await super()._async_write_data(*args, **kwargs)
        except (SerializationError, WriteError) as err:
            self._on_written(err)
            raise
        self._on_written(None)

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
        # Bumped by every change a person makes (not by extraction or use).
        self._revisions: dict[str, int] = {}
        self._store = self._new_store()
        self._dirty = False
        self._closing = False
        # A delayed write is asked for and has not taken the facts yet.
        self._write_pending = False
        self._retry_delay = FACTS_RETRY_SAVE_DELAY_SECONDS

    def _new_store(self, *, read_only: bool = False) -> _FactsStore:
        return _FactsStore(
            self._hass,
            FACTS_STORAGE_VERSION,
            self._key,
            minor_version=FACTS_STORAGE_MINOR_VERSION,
            atomic_writes=True,
            read_only=read_only,
            on_written=self._written,
        )

    @callback
    def _written(self, err: BaseException | None) -> None:
        """A write ended; a refused one (disk full, read-only) left the facts unsaved.

        Unsaved facts are written again, a minute later and then less often
        (up to hourly: a full disk is logged by HA each time), and by the
        unload's flush; never taken for saved. Facts that cannot be
        serialized wait for the next write. A change made meanwhile has its
        own, sooner write. On unload and shutdown no retry is left behind: a
        store writing after its entry would overwrite the next one's.
        """
        if err is None:
            self._retry_delay = FACTS_RETRY_SAVE_DELAY_SECONDS
            return
        self._dirty = True
        if (
            self._write_pending  # a change came meanwhile: its write is the retry
            or self._closing
            or isinstance(err, SerializationError)
            or not self._hass.is_running
        ):
            return
        self._delay_save(self._retry_delay)
        self._retry_delay = min(
            2 * self._retry_delay, FACTS_MAX_RETRY_SAVE_DELAY_SECONDS
        )

    async def async_load(self) -> None:
        """Read the file; keep a bad file aside and start with what is readable."""
        try:
            raw = await self._store.async_load()
        except NotImplementedError:
            # Written by a newer version of the integration (after a downgrade).
            await self._async_set_aside("written by a newer version")
            return
        except (HomeAssistantError, OSError, ValueError, KeyError, TypeError) as err:
            # Valid JSON but not a store file ({} without "version", a bare list),
            # or a file that cannot be read at all. (A file that is not JSON at
            # all is renamed to `<file>.corrupt.<time>` by HA's Store itself,
            # with a repair issue, and loads as None.)
            await self._async_set_aside(f"unreadable ({type(err).__name__})")
            return
        if raw is None:
            return
        speakers = raw.get("speakers") if isinstance(raw, dict) else None
        if not isinstance(speakers, dict):
            await self._async_set_aside("unexpected layout")
            return
        bad = 0
        trimmed = False
        now = dt_util.utcnow().timestamp()
        for speaker, data in speakers.items():
            # What can be read of a bad record is kept; the file goes aside.
            book, unread = FactBook.salvage(data, max_facts=self._max_facts)
            if unread:
                bad += 1
            # max_facts may have been lowered: extra facts move to the history.
            trimmed |= bool(book.enforce_limits(now))
            self._books[speaker] = book
        if trimmed:
            self.async_schedule_save()
        if bad:
            await self._async_set_aside(f"{bad} speaker record(s) invalid")
            # Write back what was readable; the original stays in the copy.
            self.async_schedule_save()

    async def _async_set_aside(self, reason: str) -> None:
        path = Path(self._hass.config.path(".storage", self._key))
        target = path.with_name(f"{path.name}.corrupt-{dt_util.utcnow():%Y%m%dT%H%M%S}")
        try:
            moved = await self._hass.async_add_executor_job(_move_aside, path, target)
        except OSError as err:
            # Never overwrite a file we could not keep: run without saving.
            LOGGER.error(
                "Stored facts %s were %s and could not be moved aside (%s); "
                "facts will not be saved until the file is fixed or removed",
                self._key,
                reason,
                err,
            )
            self._store = self._new_store(read_only=True)
            return
        LOGGER.error(
            "Stored facts %s were %s; %s. Starting with the facts that could be read",
            self._key,
            reason,
            f"a copy is kept at {moved}" if moved else "no file to keep",
        )
        if moved:
            _async_raise_kept_copy_issue(self._hass, self._key, path, moved, reason)
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
        """Speakers with facts or fact history."""
        return [
            speaker
            for speaker, book in self._books.items()
            if book.facts or book.history
        ]

    def revision(self, speaker: str) -> int:
        """How many times a person changed the speaker's facts."""
        return self._revisions.get(speaker, 0)

    @callback
    def async_user_changed(self, speaker: str) -> None:
        """A person edited the facts: extractor answers in flight are stale; save."""
        self._revisions[speaker] = self.revision(speaker) + 1
        self.async_schedule_save()

    @callback
    def async_schedule_save(self) -> None:
        """The facts changed: save soon; several changes in a row become one write."""
        self._dirty = True
        self._delay_save(FACTS_SAVE_DELAY_SECONDS)

    @callback
    def async_usage_changed(self) -> None:
        """Only use counts changed: write them with the next change, or late.

        HA writes a pending delayed save on shutdown, and unload flushes; a
        write already due soon for a real change is not postponed.
        """
        self._dirty = True
        # A pending write takes the counts too; asked for again, HA's Store
        # would put that write off until the later deadline.
        if not self._write_pending:
            self._delay_save(FACTS_USAGE_SAVE_DELAY_SECONDS)

    @callback
    def _delay_save(self, delay: float) -> None:
        self._write_pending = True
        self._store.async_delay_save(self._data_to_save, delay)

    def _data_to_save(self) -> StoredFacts:
        self._dirty = self._write_pending = False
        return {
            "speakers": {
                speaker: book.to_dict()
                for speaker, book in self._books.items()
                if book.facts or book.history
            }
        }

    async def async_flush(self) -> None:
        """Write pending changes now (tests, and the unload's close)."""
        if self._dirty:
            await self._store.async_save(self._data_to_save())

    async def async_close(self) -> None:
        """Write pending changes now, for the last time (unload)."""
        self._closing = True
        await self.async_flush()

    async def async_remove(self) -> None:
        """Delete the file (entry removed)."""
        await self._store.async_remove()

    def stats(self) -> dict[str, int]:
        """Counts for diagnostics; never fact text."""
        return {
            "speakers": len(self.speakers()),
            "facts": sum(len(book.facts) for book in self._books.values()),
            "history": sum(len(book.history) for book in self._books.values()),
        }


def _move_aside(path: Path, target: Path) -> Path | None:
    """Move the bad file out of the way (runs in the executor); never overwrite."""
    if not path.exists():
        return None
    candidate, number = target, 1
    while candidate.exists():
        number += 1
        candidate = target.with_name(f"{target.name}-{number}")
    path.rename(candidate)
    return candidate


@callback
def _async_raise_kept_copy_issue(
    hass: HomeAssistant, key: str, path: Path, copy: Path, reason: str
) -> None:
    """The repair issue HA's own Store raises for a facts file it cannot parse
    (HA's text, in every language HA speaks), for one we moved aside: the
    person learns where the facts went without reading the log."""
    ir.async_create_issue(
        hass,
        HOMEASSISTANT_DOMAIN,
        f"{_KEPT_COPY_ISSUE}_{key}_{copy.name.rpartition('corrupt-')[2]}",
        is_fixable=True,
        is_persistent=True,
        issue_domain=DOMAIN,
        severity=ir.IssueSeverity.ERROR,
        translation_key=_KEPT_COPY_ISSUE,
        translation_placeholders={
            "storage_key": key,
            "original_path": str(path),
            "corrupt_path": str(copy),
            "error": reason,
        },
    )


async def async_remove_store(hass: HomeAssistant, entry_id: str) -> None:
    """Delete an entry's facts file without loading it, and every copy of it
    moved aside (ours `…corrupt-<time>`, HA's `…corrupt.<time>`): facts are
    personal data, and nothing reads a copy once the entry is gone. A copy
    that cannot be deleted is logged and keeps its repair issue."""
    key = storage_key(entry_id)
    await Store[StoredFacts](hass, FACTS_STORAGE_VERSION, key).async_remove()
    left = await hass.async_add_executor_job(
        _remove_copies, Path(hass.config.path(".storage", key))
    )
    # Their repair issues (ours and HA's Store's) would name deleted files.
    issues = ir.async_get(hass)
    for (domain, issue_id), issue in list(issues.issues.items()):
        if (
            domain == HOMEASSISTANT_DOMAIN
            and issue_id.startswith(f"{_KEPT_COPY_ISSUE}_{key}_")
            and (issue.translation_placeholders or {}).get("corrupt_path") not in left
        ):
            ir.async_delete_issue(hass, domain, issue_id)


def _remove_copies(path: Path) -> set[str]:
    """Delete the copies moved aside next to ``path`` (runs in the executor);
    the paths of those that could not be deleted."""
    left: set[str] = set()
    for copy in path.parent.glob(f"{path.name}.corrupt*"):
        try:
            copy.unlink(missing_ok=True)
        except OSError as err:
            LOGGER.error(
                "A kept copy of stored facts, %s, was not deleted: %s", copy, err
            )
            left.add(str(copy))
    return left
