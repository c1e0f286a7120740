"""Long-term memory: a short list of distilled fact records per speaker.

Long-term memory is not chat logs: it is a handful of stable facts
(preferences, people, pets, places, devices, recurring activities) that a
background extractor keeps up to date after each exchange. A :class:`FactBook`
holds one speaker's facts and merges what the extractor found into them,
deterministically:

* facts are records, not bare strings, so an unchanged fact keeps its id,
  times and use count across extractor runs;
* the extractor edits the facts by id (:class:`Edit`: add, replace, remove);
  code checks each edit structurally (the fact exists, it is not protected,
  the text is not one already remembered) and never by words of a language.
  A replaced fact goes to the history, and its new version inherits its
  creation time and use count;
* "used" means relevant: a fact counts as used in an exchange when one of its
  distinctive words (:func:`~..wording.distinctive_words`: not a word most of the
  speaker's facts share, such as "user" or "Benutzer", and not a short
  function word) occurs in what the user said or in the answer; the facts are
  ranked by that use and by recency;
* manual facts (and anything the user pinned, edited or restored) are
  *protected*: the extractor can never remove or rewrite them;
* nothing is silently destroyed: a fact that is dropped, rewritten, removed,
  cleared or pushed out by the limit moves to a bounded history (an audit
  trail with reason and time) from which it can be restored;
* the number of active facts is capped (protected facts count first) so the
  prompt of a small model stays small.

Times are floats of epoch seconds supplied by the caller.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
import math
from typing import Any, Literal, cast, get_args
import uuid

from ..wording import comparable, distinctive_words, words

__all__ = [
    "Edit",
    "ExtractionChange",
    "Fact",
    "FactBook",
    "FactRefusal",
    "FactRefused",
    "HistoryEntry",
    "Reason",
    "Source",
    "clean_text",
    "common_to",
    "is_common",
    "new_fact_id",
    "usefulness",
]

Source = Literal["extracted", "manual"]
Reason = Literal["dropped", "rewritten", "removed", "cleared", "over_limit"]
_SOURCES: frozenset[str] = frozenset(get_args(Source))
_REASONS: frozenset[str] = frozenset(get_args(Reason))
# Why a person's change was refused; also the translation key that says so.
FactRefusal = Literal[
    "fact_empty", "fact_too_long", "fact_duplicate", "fact_limit", "fact_active"
]


class FactRefused(ValueError):
    """A person's change to the facts was refused; `reason` says why.

    `limit` is the number the reason names (characters or facts), if any.
    """

    def __init__(self, reason: FactRefusal, message: str, limit: int = 0) -> None:
        """Keep the reason and the limit for the translated message."""
        super().__init__(message)
        self.reason: FactRefusal = reason
        self.limit = limit


# Ranking: doubling a fact's use count is worth as much as one week of
# recency. Only differences matter, so absolute epoch values are fine.
_RECENCY_UNIT_SECONDS = 7 * 24 * 3600.0

# A word in this many facts and this share of them says nothing about one.
_COMMON_MIN_FACTS = 3
_COMMON_SHARE = 0.8

# The most facts a speaker's list can be set to hold (the options form).
MAX_FACTS_LIMIT = 200
# A book's default limits: history entries kept, characters of one fact. The
# history holds a whole list: lowering the limit from its most to its least
# moves every extra fact there, restorable, and drops none.
MAX_HISTORY = MAX_FACTS_LIMIT
MAX_FACT_CHARS = 200


def new_fact_id() -> str:
    """Return a short random id for a fact record."""
    return uuid.uuid4().hex[:12]


def clean_text(text: str) -> str:
    """Trim and collapse whitespace: a fact is one line of prompt text."""
    return " ".join(text.split())


def is_common(count: int, facts: int) -> bool:
    """Whether a word in ``count`` of ``facts`` facts is one nearly all share.

    At least three facts and four in five of them: "Der Benutzer ..." in
    every German fact, not a topic three of four facts are about.
    """
    return count >= _COMMON_MIN_FACTS and count >= _COMMON_SHARE * facts


def common_to(groups: Sequence[Iterable[str]]) -> frozenset[str]:
    """The items (words, stems) nearly every group holds (:func:`is_common`).

    One group per fact: its words or stems, each counted once.
    """
    counts = Counter(item for group in groups for item in set(group))
    return frozenset(
        item for item, count in counts.items() if is_common(count, len(groups))
    )


# --- record (de)serialization helpers -------------------------------------------
# from_dict raises ValueError for every kind of bad data, wrong types included
# (hence the TRY004 waivers): to the caller a corrupt store is one kind of error.


def _number(value: object, key: str) -> float:
    # bool is an int subclass; a JSON true is never a valid time or count.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key} must be a number")  # noqa: TRY004
    if not math.isfinite(value):
        raise ValueError(f"{key} must be finite")
    return float(value)


def _required(data: Mapping[str, object], key: str) -> object:
    if key not in data:
        raise ValueError(f"missing {key}")
    return data[key]


def _non_empty_str(value: object, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key} must be a non-empty string")
    return value


def _mapping(value: object, what: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be an object")  # noqa: TRY004
    return cast(Mapping[str, object], value)


@dataclass(slots=True)
class Fact:
    """One remembered fact and the bookkeeping used to rank and audit it.

    ``created`` is when the fact's lineage was first learned (a rewrite
    inherits it), ``updated`` when its text last changed or was confirmed by
    the user, ``last_used``/``use_count`` when and how often it went into a
    prompt.
    """

    id: str
    text: str
    created: float
    updated: float
    last_used: float | None = None
    use_count: int = 0
    source: Source = "extracted"
    pinned: bool = False

    @property
    def protected(self) -> bool:
        """Return True if the extractor may neither remove nor rewrite this fact."""
        return self.pinned or self.source == "manual"

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict."""
        return {
            "id": self.id,
            "text": self.text,
            "created": self.created,
            "updated": self.updated,
            "last_used": self.last_used,
            "use_count": self.use_count,
            "source": self.source,
            "pinned": self.pinned,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Fact:
        """Build a fact from :meth:`to_dict` output.

        ``id``, ``text`` and ``created`` are required; the rest default
        (``pinned`` defaults to True for manual facts). Raises ValueError on
        missing or malformed values; messages name the key, never the text.
        """
        data = _mapping(data, "fact")
        created = _number(_required(data, "created"), "created")
        last_used = data.get("last_used")
        use_count = data.get("use_count", 0)
        if (
            isinstance(use_count, bool)
            or not isinstance(use_count, int)
            or use_count < 0
        ):
            raise ValueError("use_count must be a non-negative integer")
        source = data.get("source", "extracted")
        if source not in _SOURCES:
            raise ValueError("source must be 'extracted' or 'manual'")
        pinned = data.get("pinned", source == "manual")
        if not isinstance(pinned, bool):
            raise ValueError("pinned must be a boolean")  # noqa: TRY004
        return cls(
            id=_non_empty_str(_required(data, "id"), "id"),
            text=clean_text(_non_empty_str(_required(data, "text"), "text")),
            created=created,
            updated=_number(data.get("updated", created), "updated"),
            last_used=None if last_used is None else _number(last_used, "last_used"),
            use_count=use_count,
            source=cast(Source, source),
            pinned=pinned,
        )


def usefulness(fact: Fact) -> float:
    """Return the ranking score of an unpinned fact (higher is more useful)."""
    last_touch = (
        fact.updated if fact.last_used is None else max(fact.updated, fact.last_used)
    )
    return math.log2(1 + fact.use_count) + last_touch / _RECENCY_UNIT_SECONDS


@dataclass(slots=True)
class HistoryEntry:
    """A fact that left the active list, why and when."""

    fact: Fact
    reason: Reason
    at: float
    replaced_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict."""
        return {
            "fact": self.fact.to_dict(),
            "reason": self.reason,
            "at": self.at,
            "replaced_by": self.replaced_by,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> HistoryEntry:
        """Build an entry from :meth:`to_dict` output; ValueError when malformed."""
        data = _mapping(data, "history entry")
        reason = _required(data, "reason")
        if reason not in _REASONS:
            raise ValueError("unknown history reason")
        replaced_by = data.get("replaced_by")
        if replaced_by is not None and not isinstance(replaced_by, str):
            raise ValueError("replaced_by must be a string or null")
        return cls(
            fact=Fact.from_dict(_mapping(_required(data, "fact"), "fact")),
            reason=cast(Reason, reason),
            at=_number(_required(data, "at"), "at"),
            replaced_by=replaced_by,
        )


@dataclass(frozen=True, slots=True)
class Edit:
    """One change the extractor proposes to a speaker's facts, by fact id.

    ``add`` a new fact (``text``), ``replace`` fact ``fact_id`` by its new
    version ``text``, or ``remove`` fact ``fact_id`` (no longer true).
    """

    kind: Literal["add", "replace", "remove"]
    text: str = ""
    fact_id: str | None = None


@dataclass(slots=True)
class ExtractionChange:
    """What merging one exchange's extractor edits did, for logging and saving.

    ``added`` are new facts; ``rewritten`` pairs (old, new) where a new
    version superseded an old fact; ``dropped`` facts the extractor removed;
    ``over_limit`` are facts moved out to make room; ``duplicates`` counts
    texts that repeated an active fact or left a fact as it was, and
    ``rejected`` edits that could not be made (a fact gone or protected, no
    room, a blank text).
    """

    added: list[Fact] = field(default_factory=list)
    rewritten: list[tuple[Fact, Fact]] = field(default_factory=list)
    dropped: list[Fact] = field(default_factory=list)
    over_limit: list[Fact] = field(default_factory=list)
    duplicates: int = 0
    rejected: int = 0

    @property
    def changed(self) -> bool:
        """Return True if the active facts or the history changed (save needed)."""
        return bool(self.added or self.rewritten or self.dropped or self.over_limit)

    def merge(self, other: ExtractionChange) -> None:
        """Add another change's findings to this one."""
        self.added += other.added
        self.rewritten += other.rewritten
        self.dropped += other.dropped
        self.over_limit += other.over_limit
        self.duplicates += other.duplicates
        self.rejected += other.rejected


class FactBook:
    """The facts of one speaker, their history, and the rules that change them.

    ``facts`` is in storage order: the extractor's importance order for
    extracted facts, insertion order otherwise. Use :meth:`active` for the
    ranked view that goes into a prompt.
    """

    __slots__ = ("facts", "history", "max_fact_chars", "max_facts", "max_history")

    def __init__(
        self,
        *,
        max_facts: int,
        max_history: int = MAX_HISTORY,
        max_fact_chars: int = MAX_FACT_CHARS,
    ) -> None:
        """Create an empty book with the given limits."""
        if max_facts < 0 or max_history < 0:
            raise ValueError("limits must not be negative")
        if max_fact_chars < 2:
            raise ValueError("max_fact_chars must be at least 2")
        self.max_facts = max_facts
        self.max_history = max_history
        self.max_fact_chars = max_fact_chars
        self.facts: list[Fact] = []
        self.history: list[HistoryEntry] = []

    # --- reading --------------------------------------------------------------

    def active(self) -> list[Fact]:
        """Return the active facts, most useful first.

        Protected (pinned/manual) facts come first; the rest by
        :func:`usefulness`. The sort is stable, so ties keep storage order
        (the extractor's importance order).
        """
        return sorted(
            self.facts, key=lambda fact: (not fact.protected, -usefulness(fact))
        )

    def get(self, fact_id: str) -> Fact:
        """Return the active fact with this id; KeyError if there is none."""
        return self.facts[self._index(fact_id)]

    # --- user actions ---------------------------------------------------------

    def add_manual(self, text: str, now: float) -> Fact:
        """Add a pinned fact the user asked to remember.

        Raises ValueError when the text is blank, longer than
        ``max_fact_chars``, duplicates an active fact, or protected facts
        already fill ``max_facts``. A user's fact beats the extractor's
        guesses: when the book is full, the least important extracted fact
        moves to history as "over_limit" to make room.
        """
        cleaned = self._user_text(text)
        self._check_unique(cleaned)
        self._check_room_for_protected()
        self._evict_for_room(now)
        fact = Fact(self._new_id(), cleaned, now, now, None, 0, "manual", True)
        self.facts.append(fact)
        return fact

    def pin_text(self, text: str, now: float) -> Fact | None:
        """Pin the active fact that says ``text`` already (:meth:`duplicate_of`).

        "Remember that I like jazz" when the extractor already wrote "I like
        jazz.": the user asked to keep it, so from now on it is theirs, and
        the extractor may neither drop nor rewrite it. None when no fact
        reads so. The book holds no more facts than before, so no limit is
        passed.
        """
        fact = self.duplicate_of(text)
        if fact is not None and not fact.protected:
            fact.source, fact.pinned, fact.updated = "manual", True, now
        return fact

    def update_text(self, fact_id: str, text: str, now: float) -> Fact:
        """Replace a fact's text on the user's behalf and return the new record.

        The new record gets a new id (so every version in history stays
        restorable by its own id), inherits creation time and usage, and
        becomes manual and pinned: the user took ownership, so the extractor
        must not undo the correction. The old version goes to history as
        "rewritten". KeyError if unknown; ValueError as for :meth:`add_manual`.
        """
        index = self._index(fact_id)
        old = self.facts[index]
        cleaned = self._user_text(text)
        if cleaned == old.text:
            return old
        self._check_unique(cleaned, ignore=old)
        new = replace(
            old,
            id=self._new_id(),
            text=cleaned,
            updated=now,
            source="manual",
            pinned=True,
        )
        self.facts[index] = new
        self._push_history(old, "rewritten", now, replaced_by=new.id)
        return new

    def remove(self, fact_id: str, now: float) -> Fact:
        """Move one fact to history as "removed"; KeyError if unknown."""
        fact = self.facts.pop(self._index(fact_id))
        self._push_history(fact, "removed", now)
        return fact

    def clear(self, now: float, *, include_manual: bool = True) -> int:
        """Move facts to history as "cleared" and return how many.

        With ``include_manual=False`` protected facts (manual, pinned) stay.
        Note the history bound: clearing many facts evicts old history.
        """
        gone = [fact for fact in self.facts if include_manual or not fact.protected]
        self.facts = [
            fact for fact in self.facts if fact.protected and not include_manual
        ]
        for fact in gone:
            self._push_history(fact, "cleared", now)
        return len(gone)

    def clear_history(self) -> int:
        """Erase the audit trail (for a real "forget me") and return its size."""
        count = len(self.history)
        self.history.clear()
        return count

    def restore(self, fact_id: str, now: float) -> Fact:
        """Bring a fact back from history (its latest entry) and pin it.

        It is pinned because the user explicitly wanted it back: otherwise the
        next extractor run could drop it again. A version that was rewritten
        retires the active fact that replaced it (following later rewrites):
        two versions of one fact must not both be told to the model. That one
        goes to the history as "rewritten" by the restored fact, restorable in
        turn. KeyError if the id is not in history; ValueError when it
        duplicates an active fact or protected facts already fill
        ``max_facts`` (extracted facts make room as for :meth:`add_manual`).
        """
        position = self._history_position(fact_id)
        fact = self.history[position].fact
        if any(active.id == fact.id for active in self.facts):
            raise FactRefused("fact_active", "a fact with this id is active")
        self._check_unique(fact.text)
        replacement = self._replacement(self.history[position])
        if replacement is None or not replacement.protected:
            self._check_room_for_protected()
        # Take the entry out before evicting: eviction appends to history and
        # may shift positions through the history bound.
        del self.history[position]
        if replacement is not None:
            self.facts.remove(replacement)
            self._push_history(replacement, "rewritten", now, replaced_by=fact.id)
        self._evict_for_room(now)
        restored = replace(fact, pinned=True, updated=now)
        self.facts.append(restored)
        return restored

    # --- prompt and extractor -----------------------------------------------------

    def duplicate_of(self, text: str) -> Fact | None:
        """Return the active fact that says ``text`` already, word for word, if any.

        Case, accents, punctuation and spacing aside (:func:`comparable`):
        whether two differently worded texts say the same thing is the
        extractor's to tell (it sees the facts and answers NONE), never a
        guess from shared words, which takes "isst kein Schweinefleisch" for
        "isst Schweinefleisch".
        """
        wanted = comparable(text)
        return next(
            (fact for fact in self.facts if comparable(fact.text) == wanted), None
        )

    def apply_edits(
        self, edits: Iterable[Edit], now: float, *, said_at: float | None = None
    ) -> ExtractionChange:
        """Make the extractor's edits: replacements and removals first, then additions.

        Checked structurally: an edit of a fact that is no longer active is
        rejected; a protected fact (manual, pinned) is never removed or
        rewritten: its replacement is added as a new fact beside it, so the
        news is kept and the person's own fact stays; an addition that
        repeats an active fact word for word is not added twice, nor one the
        person removed after the words were said (``said_at``).
        """
        change = ExtractionChange()
        ordered = sorted(edits, key=lambda edit: edit.kind == "add")
        for edit in ordered:
            if edit.kind == "add":
                if said_at is not None and self._removed_since(edit.text, said_at):
                    change.rejected += 1
                    continue
                change.merge(self.add_extracted(edit.text, now))
                continue
            try:
                fact = self.get(edit.fact_id or "")
            except KeyError:
                change.rejected += 1
                continue
            if fact.protected:
                if edit.kind == "replace":
                    change.merge(self.add_extracted(edit.text, now))
                else:
                    change.rejected += 1
            elif edit.kind == "replace":
                change.merge(self.supersede(fact.id, edit.text, now))
            else:
                change.dropped.append(self.drop(fact.id, now))
        return change

    def _removed_since(self, text: str, since: float) -> bool:
        """Whether the person removed a fact saying ``text`` at ``since`` or later."""
        wanted = comparable(text)
        return any(
            entry.reason in ("removed", "cleared")
            and entry.at >= since
            and comparable(entry.fact.text) == wanted
            for entry in self.history
        )

    def add_extracted(self, text: str, now: float) -> ExtractionChange:
        """Add one fact the extractor found, unless an active fact says it already.

        When the book is full, the least useful extracted fact moves to the
        history as "over_limit" to make room (a new fact is worth more than
        one nobody used); when protected facts fill it, the text is rejected.
        """
        change = ExtractionChange()
        cleaned = clean_text(text)
        if not cleaned or len(cleaned) > self.max_fact_chars:
            # Cut, a fact loses what it ends with (a door code): not kept.
            change.rejected += 1
        elif self.duplicate_of(cleaned) is not None:
            change.duplicates += 1
        elif self._protected_count() >= self.max_facts:
            change.rejected += 1
        else:
            change.over_limit = self._evict_for_room(now)
            fact = Fact(self._new_id(), cleaned, now, now, None, 0, "extracted", False)
            self.facts.append(fact)
            change.added.append(fact)
        return change

    def supersede(self, fact_id: str, text: str, now: float) -> ExtractionChange:
        """Replace an extracted fact by its new version (the extractor's rewrite).

        The new record gets a new id and inherits creation time and usage; the
        old one goes to the history as "rewritten" with ``replaced_by`` set. If
        the new text repeats another active fact, the old one is still retired
        and points at that fact, which keeps the larger use count. A text that
        says the old one word for word changes nothing.
        KeyError if the id is not active; ValueError for a protected fact.
        """
        change = ExtractionChange()
        index = self._index(fact_id)
        old = self.facts[index]
        if old.protected:
            raise ValueError("the fact is protected")
        cleaned = clean_text(text)
        if len(cleaned) > self.max_fact_chars:
            change.rejected += 1  # the old version stays, whole
            return change
        if not cleaned or comparable(cleaned) == comparable(old.text):
            change.duplicates += 1
            return change
        same = self.duplicate_of(cleaned)
        if same is not None and same is not old:
            # The two merge: the survivor keeps the larger use and the later use.
            same.use_count = max(same.use_count, old.use_count)
            if old.last_used is not None:
                same.last_used = max(same.last_used or old.last_used, old.last_used)
            del self.facts[index]
            self._push_history(old, "rewritten", now, replaced_by=same.id)
            change.rewritten.append((old, same))
            return change
        new = replace(old, id=self._new_id(), text=cleaned, updated=now)
        self.facts[index] = new
        self._push_history(old, "rewritten", now, replaced_by=new.id)
        change.rewritten.append((old, new))
        return change

    def drop(self, fact_id: str, now: float) -> Fact:
        """Move an extracted fact the extractor found no longer true to the history.

        KeyError if the id is not active; ValueError for a protected fact.
        """
        index = self._index(fact_id)
        if self.facts[index].protected:
            raise ValueError("the fact is protected")
        fact = self.facts.pop(index)
        self._push_history(fact, "dropped", now)
        return fact

    def note_use(self, texts: Iterable[str], now: float) -> list[Fact]:
        """Count a use of every active fact relevant to ``texts``; return them.

        Relevant means one of the fact's distinctive words
        (:func:`distinctive_words`) occurs in what the user said or in the
        answer ("what should I cook?" / "Since you are vegetarian, ..." uses
        "The user is vegetarian."). Words most of the speaker's facts share
        ("user", "Benutzer") tell nothing and do not count. Every fact is in
        every prompt, so being in the prompt proves nothing. Only counts and
        times change: the caller need not save at once.
        """
        said = frozenset(word for text in texts for word in words(text))
        common = self._common_words()
        used = [
            fact for fact in self.facts if distinctive_words(fact.text, common) & said
        ]
        for fact in used:
            fact.use_count += 1
            fact.last_used = now
        return used

    def _common_words(self) -> frozenset[str]:
        """Words nearly every fact shares (:func:`common_to`)."""
        return common_to([words(fact.text) for fact in self.facts])

    def enforce_limits(self, now: float) -> list[Fact]:
        """Apply (possibly lowered) limits; return the facts moved out.

        Extracted facts beyond the free slots move to history as
        "over_limit", least useful (:func:`usefulness`) first.
        Protected facts are never moved: if they alone exceed ``max_facts``
        they all stay, and the prompt builder must cope. Call after loading a
        book or changing the options.
        """
        free = max(self.max_facts - self._protected_count(), 0)
        extracted = sorted(
            (fact for fact in self.facts if not fact.protected),
            key=lambda fact: -usefulness(fact),
        )
        extra = extracted[free:]
        if extra:
            extra_ids = {fact.id for fact in extra}
            self.facts = [fact for fact in self.facts if fact.id not in extra_ids]
            for fact in extra:
                self._push_history(fact, "over_limit", now)
        self._trim_history()
        return extra

    # --- persistence ----------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict (the caller versions the store)."""
        return {
            "facts": [fact.to_dict() for fact in self.facts],
            "history": [entry.to_dict() for entry in self.history],
        }

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, object],
        *,
        max_facts: int,
        max_history: int = MAX_HISTORY,
        max_fact_chars: int = MAX_FACT_CHARS,
    ) -> FactBook:
        """Build a book from :meth:`to_dict` output.

        Raises ValueError on malformed data (messages give the position and
        key, never fact text). History beyond ``max_history`` is trimmed,
        oldest first; facts beyond ``max_facts`` are kept until
        :meth:`enforce_limits` is called, which needs the current time.
        """
        book, unread = cls._read(data, max_facts, max_history, max_fact_chars)
        if unread:
            raise ValueError(unread[0])
        return book

    @classmethod
    def salvage(cls, data: object, *, max_facts: int) -> tuple[FactBook, int]:
        """The records of a book that can be read, and how many could not:
        one bad record (a reason a newer version wrote, a broken time) must
        not take the speaker's other facts with it. The other limits are
        the defaults, as the store keeps them."""
        try:
            book, unread = cls._read(data, max_facts, MAX_HISTORY, MAX_FACT_CHARS)
        except ValueError:  # no object, or no lists of facts and history
            return cls(max_facts=max_facts), 1
        return book, len(unread)

    @classmethod
    def _read(
        cls,
        data: object,
        max_facts: int,
        max_history: int,
        max_fact_chars: int,
    ) -> tuple[FactBook, list[str]]:
        """The book of the records that parse, and why each other did not."""
        data = _mapping(data, "fact book")
        raw_facts = _required(data, "facts")
        raw_history = data.get("history", [])
        if not isinstance(raw_facts, list) or not isinstance(raw_history, list):
            raise ValueError("facts and history must be lists")  # noqa: TRY004
        book = cls(
            max_facts=max_facts, max_history=max_history, max_fact_chars=max_fact_chars
        )
        unread: list[str] = []
        for index, raw in enumerate(raw_facts):
            try:
                fact = Fact.from_dict(raw)
            except (KeyError, TypeError, ValueError) as err:
                unread.append(f"facts[{index}]: {err}")
                continue
            if any(known.id == fact.id for known in book.facts):
                unread.append("duplicate fact ids")
                continue
            book.facts.append(fact)
        for index, raw in enumerate(raw_history):
            try:
                book.history.append(HistoryEntry.from_dict(raw))
            except (KeyError, TypeError, ValueError) as err:
                unread.append(f"history[{index}]: {err}")
        book._trim_history()
        return book, unread

    # --- internals ------------------------------------------------------------

    def _index(self, fact_id: str) -> int:
        for index, fact in enumerate(self.facts):
            if fact.id == fact_id:
                return index
        raise KeyError(fact_id)

    def _history_position(self, fact_id: str) -> int:
        for position in range(len(self.history) - 1, -1, -1):
            if self.history[position].fact.id == fact_id:
                return position
        raise KeyError(fact_id)

    def _replacement(self, entry: HistoryEntry) -> Fact | None:
        """The active fact that replaced ``entry``'s, through later rewrites."""
        active = {fact.id: fact for fact in self.facts}
        seen: set[str] = set()
        fact_id = entry.replaced_by
        while fact_id is not None and fact_id not in seen:
            seen.add(fact_id)
            if fact_id in active:
                return active[fact_id]
            fact_id = next(
                (
                    later.replaced_by
                    for later in reversed(self.history)
                    if later.fact.id == fact_id
                ),
                None,
            )
        return None

    def _new_id(self) -> str:
        taken = {fact.id for fact in self.facts} | {
            entry.fact.id for entry in self.history
        }
        while (fact_id := new_fact_id()) in taken:
            pass  # 48 random bits: a collision is rare, but ids must stay unique
        return fact_id

    def _protected_count(self) -> int:
        return sum(1 for fact in self.facts if fact.protected)

    def _user_text(self, text: str) -> str:
        # A user's words are never silently cut: refuse instead.
        cleaned = clean_text(text)
        if not cleaned:
            raise FactRefused("fact_empty", "fact text is empty")
        if len(cleaned) > self.max_fact_chars:
            raise FactRefused(
                "fact_too_long",
                f"fact text is longer than {self.max_fact_chars} characters",
                self.max_fact_chars,
            )
        return cleaned

    def _check_unique(self, text: str, *, ignore: Fact | None = None) -> None:
        # The same test as the extractor's additions (duplicate_of): a
        # person's fact and the extractor's are one text by one measure.
        same = self.duplicate_of(text)
        if same is not None and same is not ignore:
            raise FactRefused(
                "fact_duplicate", "an identical fact is already remembered"
            )

    def _check_room_for_protected(self) -> None:
        if self._protected_count() >= self.max_facts:
            raise FactRefused(
                "fact_limit",
                f"the limit of {self.max_facts} facts is reached",
                self.max_facts,
            )

    def _evict_for_room(self, now: float) -> list[Fact]:
        """Move the least useful extracted facts out until one more fact fits."""
        moved: list[Fact] = []
        while len(self.facts) >= self.max_facts:
            extracted = [fact for fact in self.facts if not fact.protected]
            # min() keeps the first of equals: the oldest in storage order.
            fact = min(extracted, key=usefulness)
            self.facts.remove(fact)
            self._push_history(fact, "over_limit", now)
            moved.append(fact)
        return moved

    def _push_history(
        self, fact: Fact, reason: Reason, now: float, *, replaced_by: str | None = None
    ) -> None:
        self.history.append(HistoryEntry(fact, reason, now, replaced_by))
        self._trim_history()

    def _trim_history(self) -> None:
        excess = len(self.history) - self.max_history
        if excess > 0:
            del self.history[:excess]
